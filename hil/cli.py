"""The `hil` command line: run the loop, the simulated robot, or both (the demo)."""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import subprocess
import sys
import time
import warnings
from pathlib import Path

from drivers.core.paths import CONFIGS
from drivers.core.schema import ConfigError, LogError
from drivers.core.signals import stop_on_signals
from dynamics_cy.errors import HilstackError

from . import __version__, campaign_cli, identify_cli
from .cli_table import Arg, Command, add_commands, arg, command_list
from .progress import StatusLine

DEMO_CONFIG = CONFIGS / "demo.yaml"

EPILOG_NOTES = """
`hil run`, `hil demo` and `hil regress` record their LCM traffic with --log (lcm-logplayer, lcm-spy
and `hil replay` / `hil report` read the logs).

Configs are YAML (the docs site's config reference lists every key; docs/gen/config_reference.py makes it);
`configs/demo.yaml` is the default robot's."""


def _load(path: str, lcm_url: str | None, log: str | None = None):
    """The run config, every section checked and its controller found (import path, params)."""
    from drivers.run_config import load_config

    from .controllers import check_controller
    from .process import check_cpus
    overrides = {}
    if lcm_url:
        overrides["lcm"] = {"url": lcm_url}
    if log:
        overrides["telemetry"] = {"log": str(Path(log).resolve())}
    cfg = load_config(path, overrides)
    check_controller(cfg)
    check_cpus(cfg.loop.cpus)
    return cfg


def _station(path: str) -> bool:
    """Whether the config file is a station's (a `station:` section: drivers.station)."""
    from drivers.station import is_station
    return Path(path).is_file() and is_station(path)


def _finish(loop, summary: dict, args) -> int:
    from .telemetry import exit_status, format_summary, plot
    if args.plot:
        plot(loop.recorder, args.plot, title=f"{args.config}: {summary['controller']}, final state "
                                             f"{summary['final_state']}")
        summary["plot"] = args.plot
    print(json.dumps(summary) if args.json else format_summary(summary))
    return exit_status(summary)


class _Processes:
    """The robot's processes `hil demo` started, as a stop condition of the loop: true once one has
    ended (polled every 50 ms), which `ended` then holds."""

    def __init__(self, processes=()):
        self.processes, self.ended, self._next = list(processes), None, 0.0

    def __call__(self) -> bool:
        now = time.monotonic()
        if self.ended is None and self.processes and now >= self._next:
            self._next = now + 0.05
            self.ended = next((p for p in self.processes if p.poll() is not None), None)
        return self.ended is not None


def cmd_run(args, live: StatusLine | None = None, robot_processes=()) -> int:
    """Run the control loop against whatever robot driver publishes on the config's channels.

    Reads the robot's status on LCM and commands torques at loop.rate_hz until --duration or Ctrl-C,
    then prints the summary (exit 0, 3 when the run faulted: it ended in a fault, or recovered from
    faults, which the summary lists; 2 for a config error, gains unstable at the loop's rate, or no
    status at start). robot.protocol floating_base: a legged robot (whole_body control, docs/wbc.md);
    a station file (a `station:` section) runs one loop for all its arms (docs/station.md).
    controller.type names a built-in law or yours by import path (docs/controllers.md); with
    --check-alloc the config runs in lockstep against the simulated robot instead, and prints what the
    law's update() allocates per tick (exit 0: nothing, 1: it allocates on more than 1% of the ticks or keeps
    memory, 3: the run faulted, so the law was measured on fewer ticks or none)."""
    from drivers.core.config import open_lcm

    from .hardware import robot_for
    from .lifecycle import Mode
    from .loop import ControlLoop
    if getattr(args, "check_alloc", False) and getattr(args, "identify", False):
        raise ConfigError("--identify", "runs its own lockstep run; it does not combine with --check-alloc")
    if _station(args.config):                  # several arms in one loop (docs/station.md)
        from .station_cli import cmd_run as run_station
        return run_station(args)
    cfg = _load(args.config, args.lcm_url, args.log)
    if getattr(args, "check_alloc", False):
        return _check_alloc(cfg, args)
    if getattr(args, "identify", False):
        return identify_cli.run_and_identify(cfg, args)
    robot = robot_for(cfg)
    lc = open_lcm(cfg.lcm.url)
    # (a legged robot's and a cell's viewer is the simulated plant's: it draws the ground, the gripper, the
    # objects and the contact forces too)
    bridge = None if robot.protocol == "floating_base" or _sim_draws(cfg) else _viewer(cfg, robot.plant, lc)
    loop = ControlLoop(cfg, robot, lc, Mode.REALTIME, viz=bridge).configure()
    robot_ended = _Processes(robot_processes)
    live = live or StatusLine(not args.quiet and not args.json)
    print(f"hil run: waiting for the status on {loop.channels.status} ({cfg.lcm.url}), up to "
          f"{cfg.loop.start_timeout:g} s", file=sys.stderr, flush=True)
    said = []

    def on_tick(lp):            # the start-up line (status period, timeout, guard), once, then the live line
        if lp.startup.text and not said:
            live.break_line()
            said.append(print(f"hil run: {lp.startup.text}", file=sys.stderr, flush=True))
        live(lp)
    handlers = logging.getLogger().handlers
    for h in handlers:                  # a log record ends the live line first
        h.addFilter(live)
    with stop_on_signals() as stop:     # to the summary's end: a second Ctrl-C cuts neither it nor the plot
        try:
            summary = loop.run(args.duration, stop=lambda: stop.is_set() or robot_ended(), on_tick=on_tick)
        except (TimeoutError, RuntimeError) as e:       # no robot; the log recorder failed
            print(f"\nhil: {e}", file=sys.stderr)
            return 2
        finally:
            live.close()
            for h in handlers:
                h.removeFilter(live)
            if bridge is not None:
                bridge.close()
        if robot_ended.ended is None or stop.is_set():
            return _finish(loop, summary, args)
        p, started = robot_ended.ended, loop.hardware.timing.received > 0     # the demo's robot is gone
        if started:
            _finish(loop, summary, args)
        print(f"hil demo: `hil {p.args[3]}` ended (exit status {p.returncode}) "
              f"{'during the run' if started else 'before the first status'}; the loop stopped", file=sys.stderr)
        return 3 if started else 2


def _check_alloc(cfg, args) -> int:
    """`hil run --check-alloc`: the law in lockstep with tracemalloc around its update."""
    from .running import check_allocations, format_allocations
    report = check_allocations(cfg, duration=args.duration or 2.0)
    print(json.dumps(report) if args.json else format_allocations(report, cfg.controller.type))
    return 1 if report["allocates"] else 3 if report["faults"] or not report["ticks"] else 0


def _sim_draws(cfg) -> bool:
    """Whether the simulated plant is the viewer's publisher: a cell with a gripper or objects, which the
    loop's plant (the robot's alone) does not have."""
    return bool(cfg.sim.objects) or cfg.sim.gripper.type is not None


def _viewer(cfg, plant, lc):
    """The viewer bridge of the config's `viz:` section, or None when it is off."""
    from drivers.core.config import channels_for
    from drivers.viz import ViewerBridge
    return ViewerBridge(plant, lc, channels_for(cfg), cfg.viz) if cfg.viz.enabled else None


def _meldis_command(cfg, plant=None) -> str:
    """The Meldis command line whose camera frames the config's robot at its initial positions
    (drivers.viz.camera), the parameters written to a temporary file."""
    from drivers.core.robot import build_plant
    from drivers.viz.camera import write_meshcat_params
    plant = plant or build_plant(cfg.robot)
    q = cfg.sim.initial_positions
    q = q if q is not None and len(q) == plant.num_positions() else None
    params = write_meshcat_params(plant, Path(cfg.robot.model).stem, q)
    from messages.channels import DEFAULT_LCM_URL
    env = "" if cfg.lcm.url == DEFAULT_LCM_URL else f"LCM_DEFAULT_URL='{cfg.lcm.url}' "   # Drake's LCM reads it
    return f"{env}python -m pydrake.visualization.meldis --meshcat-params {params}"


def cmd_viz(args) -> int:
    """Viewer messages for drake_visualizer / Meldis from a robot's status channel (real robot or sim).

    Subscribes to the robot's status channel and publishes lcmt_viewer_load_robot and
    lcmt_viewer_draw for it (robot, lcm, channels and viz sections; docs/viz.md)."""
    from drivers.core.config import channels_for, open_lcm
    from drivers.core.robot import build_plant
    from drivers.viz.standalone import run
    cfg = _load(args.config, args.lcm_url)
    channels = channels_for(cfg)
    plant = build_plant(cfg.robot)
    with stop_on_signals() as stop:
        print(f"hil viz: {cfg.robot.model} ({cfg.robot.protocol}) from {channels.status} to "
              f"{channels.viewer_load_robot} / {channels.viewer_draw} on {cfg.lcm.url}. Watch it in Meldis: "
              f"{_meldis_command(cfg, plant)}", flush=True)
        viewer = run(plant, open_lcm(cfg.lcm.url), cfg.robot.protocol, channels,
                     cfg.viz, duration_s=args.duration, stop=stop.is_set)
        bridge = viewer.bridge
        print(f"statuses {viewer.status.ok_count} (rejected: {dict(viewer.status.counters)}), draws {bridge.draws}, "
              f"loads {bridge.loads}, viewer requests {bridge.requests}, send errors {bridge.errors}")
    return 0


def cmd_demo(args) -> int:
    """The simulated robot in its own process (UDP multicast LCM, ttl=0) and the loop against it.

    The loop follows the config's trajectory with a live status line, then prints the summary. Start
    Meldis (python -m pydrake.visualization.meldis) to watch. A config with a servo_bus section starts
    `hil servo-bus-device` and `hil servo-bus` instead of `hil sim`; a legged scenario file
    (configs/legged/go2_demo.yaml) runs whole-body control in one process (docs/wbc.md). A cell with a
    gripper or objects (configs/station/iiwa_wsg.yaml) is drawn by `hil sim`, the loop drawing nothing. When one of
    the robot's processes ends early the demo stops with it: exit 2 before the first status, 3 after. A
    station file (configs/station/two_iiwas_wsg.yaml) runs `hil sim` of every arm, drawn as one scene,
    and one loop for all (docs/station.md). An arm's demo runs on a free LCM port of its own (ttl=0), not
    the host's shared default, unless --lcm-url or the config names one: Meldis is told it (LCM_DEFAULT_URL)."""
    from .legged_scenario import is_legged_scenario, run_legged_demo
    if Path(args.config).is_file() and is_legged_scenario(args.config):      # a legged robot (docs/wbc.md)
        from messages.channels import DEFAULT_LCM_URL
        return run_legged_demo(args.config, args.duration, args.lcm_url or DEFAULT_LCM_URL)
    if _station(args.config):                  # every arm of a station (docs/station.md)
        from .station_cli import cmd_demo as demo_station
        return demo_station(args)
    from drivers.core.robot import load_robot
    cfg = _load(args.config, args.lcm_url)
    from messages.channels import DEFAULT_LCM_URL, private_lcm_url
    if args.lcm_url is None and cfg.lcm.url == DEFAULT_LCM_URL:
        cfg.lcm.url = args.lcm_url = private_lcm_url()   # not the host's shared group: no other session's traffic
    legged = cfg.robot.protocol == "floating_base"       # the simulated legged robot draws itself
    if not legged:                      # a bad model is reported once, before the simulator starts,
        model = load_robot(cfg.robot)
        if cfg.servo_bus is not None:   # and so is a servo mapping that does not fit its joints
            from drivers.serial.servo_config import check_joints
            check_joints(cfg.servo_bus, model.joint_names)
    limit = str(args.duration + cfg.loop.start_timeout + 5.0)
    out = subprocess.PIPE if args.json else None
    if cfg.servo_bus is None:
        robot = [subprocess.Popen([sys.executable, "-m", "hil", "sim", args.config, "--lcm-url", cfg.lcm.url,
                                   "--duration", limit] + ([] if legged or _sim_draws(cfg) else ["--no-viz"]),
                                  stdout=out)]
    else:           # the simulated servos, then the servo-bus driver (docs/servo_bus.md)
        robot = [subprocess.Popen([sys.executable, "-m", "hil", "servo-bus-device", args.config, "--duration", limit],
                                  stdout=out)]
        robot.append(subprocess.Popen([sys.executable, "-m", "hil", "servo-bus", args.config, "--lcm-url",
                                       cfg.lcm.url, "--duration", limit], stdout=out))
    try:
        if not args.json:
            meldis = "python -m pydrake.visualization.meldis" if legged else _meldis_command(cfg, model.plant)
            print(f"hil demo: simulated {cfg.robot.protocol} (pids {', '.join(str(p.pid) for p in robot)}) and the "
                  f"control loop on {cfg.lcm.url}; {args.duration:g} s. Watch it in Meldis: {meldis}", flush=True)
        args.config = str(args.config)
        return cmd_run(args, robot_processes=robot)
    finally:
        with stop_on_signals():         # a second Ctrl-C does not cut short the stop of the robot's processes
            for p in reversed(robot):
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()


def cmd_sim(args) -> int:
    """The simulated robot as its own process, paced to the wall clock.

    Speaks the robot's LCM protocol on the config's channels (sim section; docs/sim.md); the
    simulated legged robot for a floating_base config, every arm of a station file (docs/station.md).
    Our integrator steps the plant, or MuJoCo's with sim.engine: mujoco (pip install 'hilstack[mujoco]')."""
    from drivers.sim.realtime import run_sim
    if _station(args.config):                  # every arm of a station (docs/station.md)
        from .station_cli import cmd_sim as sim_station
        return sim_station(args)
    cfg = _load(args.config, args.lcm_url)
    if cfg.robot.protocol == "floating_base":            # the simulated legged robot (docs/wbc.md)
        from .floating_base import run_legged_sim
        with stop_on_signals() as stop:
            summary = run_legged_sim(cfg, args.duration, stop=stop.is_set, viz=False if args.no_viz else None)
        return 1 if summary["diverged"] else 0
    summary = run_sim(cfg, duration=args.duration, viz=False if args.no_viz else None)
    return summary["exit"]["status"] if "exit" in summary else 0     # a real driver's model ended (docs/sim.md)


def cmd_serial(args) -> int:
    """The serial driver: a motor board on a serial port made to look like a Drake-protocol robot.

    Opens the board's serial port (any pyserial URL), publishes its joint state as the robot's
    status, sends the loop's commands, applies command expiry and publishes link health (serial
    section; docs/serial_protocol.md)."""
    from drivers.serial.driver import run_from_config
    return run_from_config(_load(args.config, args.lcm_url), args.duration)


def cmd_serial_device(args) -> int:
    """A simulated motor board on a pseudo-terminal, moving the simulated plant.

    Creates a pseudo-terminal, speaks the board protocol on it and moves the simulated plant (sim
    section); prints the port for the driver (docs/serial_protocol.md)."""
    from drivers.serial.device import run_from_config
    return run_from_config(_load(args.config, None), args.duration, args.port)


def cmd_servo_bus(args) -> int:
    """The servo-bus driver: Dynamixel (Protocol 2.0) or Feetech servos on one bus as a Drake-protocol robot.

    Opens the bus (servo_bus section), sets the servos up, and each cycle publishes one SYNC READ as
    the robot's status and sends the loop's torques as one SYNC WRITE; torque off on timeouts,
    faults and every exit: SIGINT, SIGTERM and SIGHUP stop it with torque off, exit 0; a config error
    (a servo mapping that misses the robot's joints included) exits 2 before the port is opened
    (docs/servo_bus.md)."""
    from drivers.serial.servo_driver import run_from_config
    return run_from_config(_load(args.config, args.lcm_url), args.duration)


def cmd_servo_bus_device(args) -> int:
    """Simulated Dynamixel / Feetech servos on a pseudo-terminal, moving the simulated plant.

    Creates a pseudo-terminal and answers Protocol 2.0 or Feetech instructions as the configured
    servos (servo_bus and sim sections; docs/servo_bus.md)."""
    from drivers.serial.servo_plant import run_from_config
    return run_from_config(_load(args.config, None), args.duration, args.port)


def cmd_regress(args) -> int:
    """The regression scenarios in lockstep, checked against their criteria and golden outcomes.

    Runs every scenario of configs/scenarios (or DIR, or FILE): a run config with a scenario
    section, against the simulated robot (scenario.link: sim), the serial chain (link: serial:
    `hil serial` and the simulated board on a pty; serial_chain.yaml, fault_serial_link.yaml) or a
    servo chain (link: servo: `hil servo-bus` and simulated Dynamixel or Feetech servos on a pty;
    servo_dxl_arm_impedance.yaml and servo_dxl_arm_gravity_hold.yaml, a Dynamixel arm in current
    mode, servo_so101_position.yaml, the SO-101 in position mode, and servo_koch_mixed.yaml, a
    Koch-like bus of XL430s in position mode and XL330s in current mode), and the legged scenarios
    (legged_*.yaml) in whole-body control.
    Prints a table and writes a JSON report. Exit 0 when all pass, 1 when one fails, 2 for a bad
    scenario file. A scenario whose robot model is not installed is skipped with a line saying what to
    install. docs/regress.md describes the scenario files."""
    from drivers.core.paths import CONFIGS, INSTALLED
    from drivers.core.robot import build_plant

    from .regress import DEFAULT_DIR, find_scenarios, format_table, missing_model, run_all, skipped_result, write_report
    from .scenario import load_scenario
    target = Path(args.target) if args.target else DEFAULT_DIR
    if not target.exists():
        raise ConfigError("", "no such scenario folder or file", str(target))
    paths = find_scenarios(target, args.pattern)
    if not paths:
        print(f"hil regress: no scenarios in {target}" + (f" matching '{args.pattern}'" if args.pattern else ""),
              file=sys.stderr)
        return 2
    from .legged_scenario import is_legged_scenario, load_legged_scenario
    skipped = {p: why for p in paths if (why := missing_model(p))}
    for p, why in skipped.items():
        print(f"hil regress: skipping {p.stem}: {why}", file=sys.stderr)
    run = [p for p in paths if p not in skipped]
    if args.update_golden and args.golden_dir is None and INSTALLED and \
            any(p.resolve().is_relative_to(CONFIGS.resolve()) for p in run):
        raise ConfigError("--update-golden", f"the shipped scenarios' golden files are part of the installed "
                                             f"package ({CONFIGS}): write them elsewhere with --golden-dir DIR")
    models = {}
    for p in run:                       # every file and its model are checked before anything runs
        if is_legged_scenario(p):
            load_legged_scenario(p)
            continue
        from .station_scenario import is_station_scenario, load_station_scenario
        robots = [cfg.robot for cfg in load_station_scenario(p).station.arms.values()] \
            if is_station_scenario(p) else [load_scenario(p).cfg.robot]
        for robot in robots:
            if (robot.model, robot.weld) not in models:
                try:
                    models[robot.model, robot.weld] = build_plant(robot)
                except ConfigError as e:
                    raise ConfigError(e.key, str(e).split(": ", 1)[-1], str(p)) from None
    if args.jobs < 1:
        raise ConfigError("", f"-j must be at least 1, got {args.jobs}")
    done = dict(zip(run, run_all(run, args.jobs, args.plots, args.logs, args.update_golden, verbose=args.verbose,
                                  golden_dir=args.golden_dir)))
    results = [done[p] if p in done else skipped_result(p, skipped[p]) for p in paths]
    write_report(results, args.report)
    print(format_table(results))
    print(f"report: {args.report}")
    return 0 if all(r["passed"] for r in results) else 1


def cmd_replay(args) -> int:
    """A recorded run's statuses through the controller again, its commands compared with the recorded ones.

    Offline (lockstep, one tick per recorded command); the safety transitions are compared too. Exit
    0 when they match within the tolerance, 1 when not (docs/regress.md)."""
    from .replay import format_replay, replay
    if not args.verbose:
        logging.getLogger("hil").setLevel(logging.ERROR)      # the replayed transitions are in the result
    cfg = _load(args.config, None) if args.config else None
    with _reading(args.log):
        result = replay(_log(args.log), cfg, args.tolerance, args.skip_corrupt, args.viz)
    print(json.dumps(result) if args.json else format_replay(result))
    return 0 if result["passed"] else 1


def cmd_report(args) -> int:
    """A run's summary and plots from its log alone.

    Status and command rates and gaps, torques, timing and tracking from the telemetry, safety
    transitions, and the loop's own summary when the log has it (docs/regress.md)."""
    from .report import format_report, plot_log, read_log
    with _reading(args.log):
        report, traces = read_log(_log(args.log), args.skip_corrupt)
    if args.plot:
        plot_log(traces, args.plot, report["deadline_budget_us"], title=f"{args.log} (hil report)")
        report["plot"] = args.plot
    print(json.dumps(report) if args.json else format_report(report))
    return 0


def cmd_export(args) -> int:
    """A run log as MCAP for Foxglove Studio and PlotJuggler.

    One MCAP channel per LCM channel, each message as JSON with a JSON schema of its type (logs of
    hil run/demo/regress --log; docs/campaign.md)."""
    with _reading(args.log):
        return campaign_cli.cmd_export(args) if _log(args.log) else 2


@contextlib.contextmanager
def _reading(path: str):
    """A log whose content cannot be read (a corrupt event, run-info or message: ValueError, of which
    messages.errors.MessageError) becomes a LogError naming the file."""
    try:
        yield
    except (ConfigError, LogError):
        raise
    except ValueError as e:
        raise LogError(str(e) if str(e).startswith(path) else f"{path}: {e}") from None


def _log(path: str) -> str:
    if not Path(path).is_file():
        raise LogError(f"{path}: no such log file")
    from messages.logs import check_log
    try:
        check_log(path)
    except ValueError as e:
        raise LogError(str(e)) from None
    return path


# --- the commands' options (their help: the handlers' docstrings) --------------------------------------
def _config(what: str = "") -> Arg:
    return arg("config", help=f"run config (YAML){what}")


def _service(lcm_url: bool = True) -> tuple[Arg, ...]:
    """The options of the commands that run until stopped."""
    duration = arg("--duration", type=float, help="seconds to run (default: until Ctrl-C)")
    return (duration, arg("--lcm-url", help="override lcm.url")) if lcm_url else (duration,)


def _run_options(default_duration: float | None = None, url: str = "") -> tuple[Arg, ...]:
    """The options of the commands that run the loop (run, demo)."""
    return (arg("--duration", type=float, default=default_duration,
                help=f"seconds to run (default: {default_duration:g})" if default_duration else
                "seconds to run (default: loop.duration, or until Ctrl-C)"),
            arg("--lcm-url", help="override lcm.url, e.g. 'udpm://239.255.76.67:7667?ttl=0'" + url),
            _json("the end-of-run summary"), PLOT,
            arg("--log", metavar="FILE.lcmlog",
                help="record the run's LCM traffic, config and summary to this log (overrides telemetry.log)"),
            arg("--quiet", action="store_true", help="no live status line"))


def _port(section: str) -> Arg:
    return arg("--port", help=f"where to put the pty's symlink (default: {section}.device.link or {section}.port)")


def _json(what: str) -> Arg:
    return arg("--json", action="store_true", help=f"print {what} as one JSON object")


def _skip_corrupt(what: str) -> Arg:
    return arg("--skip-corrupt", action="store_true",
               help=f"read past corrupt events (counted in {what}) instead of exiting 2")


PLOT = arg("--plot", metavar="FILE.png", help="write tracking and timing plots to this PNG")
LOG = "an LCM log (recorded with --log, or by lcm-logger)"

COMMANDS = [
    Command("run", cmd_run, "CONFIG", (_config(), *_run_options(),
                                       arg("--check-alloc", action="store_true",
                                           help="run in lockstep against the simulated robot and report what the "
                                                "controller's update() allocates per tick (exit 1 if anything)"),
                                       arg("--identify", action="store_true",
                                           help="run the excitation (trajectory.type excitation) in lockstep "
                                                "against the simulated robot, identify the payload and friction "
                                                "from its log, and compare gravity-compensation holds without and "
                                                "with the identified payload (docs/identify.md)"),
                                       identify_cli.OUT)),
    Command("sim", cmd_sim, "CONFIG", (_config(" with a sim section"), *_service(),
                                       arg("--no-viz", action="store_true",
                                           help="publish no viewer messages, even with viz enabled"))),
    Command("demo", cmd_demo, "", (arg("--config", default=str(DEMO_CONFIG), help=f"run config (default: "
                                       f"{DEMO_CONFIG}), or a legged scenario (configs/legged/go2_demo.yaml)"),
                                   *_run_options(10.0, " (default: the config's, or a free port of "
                                                       "its own when that is the shared default)"))),
    Command("viz", cmd_viz, "CONFIG", (_config(": robot, lcm, channels and viz sections are used"), *_service())),
    Command("serial", cmd_serial, "CONFIG", (_config(" with a serial section"), *_service())),
    Command("serial-device", cmd_serial_device, "CONFIG",
            (_config(" with serial and sim sections"), *_service(lcm_url=False), _port("serial"))),
    Command("servo-bus", cmd_servo_bus, "CONFIG", (_config(" with a servo_bus section"), *_service())),
    Command("servo-bus-device", cmd_servo_bus_device, "CONFIG",
            (_config(" with servo_bus and sim sections"), *_service(lcm_url=False), _port("servo_bus"))),
    Command("regress", cmd_regress, "[DIR or FILE]", (
        arg("target", nargs="?", default=None,
            help="a folder of scenario files or one file (default: configs/scenarios)"),
        arg("-j", "--jobs", type=int, default=1, metavar="N", help="run N scenarios at once"),
        arg("-k", dest="pattern", metavar="TEXT", help="only the scenarios whose name contains TEXT"),
        arg("--report", default="regress-report.json", metavar="FILE.json",
            help="where to write the JSON report (default: regress-report.json)"),
        arg("--plots", metavar="DIR", help="write one PNG of tracking and timing per scenario here"),
        arg("--logs", metavar="DIR", help="record each scenario's LCM traffic to DIR/NAME.lcmlog"),
        arg("--update-golden", action="store_true",
            help="write this run's outcomes to the scenarios' golden files instead of comparing"),
        arg("--golden-dir", metavar="DIR",
            help="golden files: compare with DIR/NAME.json where it exists (else the scenario's own) and "
                 "write updates there (the shipped scenarios of an installed package need it for "
                 "--update-golden)"))),
    Command("replay", cmd_replay, "LOG", (
        arg("log", help=LOG),
        arg("--config", help="run config to replay with (default: the one stored in the log)"),
        arg("--tolerance", type=float, default=1e-9, metavar="NM",
            help="largest torque difference that counts as equal, N·m (default 1e-9)"),
        _json("the comparison"), _skip_corrupt("the result"),
        arg("--viz", metavar="LCM_URL", nargs="?", const="udpm://239.255.76.67:7667?ttl=0",
            help="a legged (floating_base) log: draw the replay for Meldis on this LCM URL "
                 "(default udpm://239.255.76.67:7667?ttl=0), paced to the log's clock"))),
    Command("report", cmd_report, "LOG",
            (arg("log", help=LOG), PLOT, _json("the report"), _skip_corrupt("the report"))),
    identify_cli.IDENTIFY,
    campaign_cli.CAMPAIGN,
    Command("export", cmd_export, "LOG --mcap OUT.mcap", campaign_cli.EXPORT_ARGS),
]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="hil", description="Hardware-in-the-loop robot control stack.",
                                 epilog=command_list(COMMANDS) + "\n" + EPILOG_NOTES,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    ap.add_argument("--version", action="version", version=f"hil (hilstack) {__version__}")
    add_commands(ap.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                   help="one of the commands below (`hil COMMAND --help`: its options)"), COMMANDS)
    return ap


_WARNED: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """warnings.showwarning on the command line: `hil: warning: <message>` once per message, no source line."""
    text = str(message)
    if text not in _WARNED:
        _WARNED.add(text)
        print(f"hil: warning: {text}", file=file or sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    warnings.showwarning = _show_warning
    try:
        return args.handler(args)
    except ConfigError as e:      # errors found after loading (they need the model) name the file here
        where = "" if e.source or not getattr(args, "config", None) else f"{args.config}: "
        print(f"hil: config error: {where}{e}", file=sys.stderr)
        return 2
    except LogError as e:
        print(f"hil: {e}", file=sys.stderr)
        return 2
    except HilstackError as e:    # any other error the stack raises on purpose: bad input, said in one line
        print(f"hil: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
