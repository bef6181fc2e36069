"""The `hil` command line: run the loop, the simulated robot, or both (the demo)."""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import subprocess
import sys
import time
from pathlib import Path

from core.paths import CONFIGS
from core.schema import ConfigError, LogError

from . import campaign_cli

DEMO_CONFIG = CONFIGS / "demo.yaml"

EPILOG = """\
commands:
  hil run CONFIG        the control loop against whatever robot driver publishes on the config's channels
                        (robot.protocol floating_base: whole-body control of a legged robot, docs/wbc.md)
  hil sim CONFIG        the simulated robot, as its own process, paced to the wall clock
  hil demo              both: the simulated iiwa14 in a separate process over UDP multicast LCM (ttl=0)
                        and the loop following the default trajectory, with a live status line
  hil viz CONFIG        a robot status channel (real robot or sim) turned into drake_visualizer / Meldis
                        messages
  hil serial CONFIG     the serial driver: a motor-controller board on a serial port made to look like a
                        Drake-protocol robot on LCM (docs/serial_protocol.md)
  hil serial-device CONFIG
                        a simulated motor board on a pseudo-terminal, moving the simulated plant
  hil servo-bus CONFIG  the servo-bus driver: Dynamixel (Protocol 2.0) or Feetech servos on one bus made
                        to look like a Drake-protocol robot on LCM (docs/servo_bus.md)
  hil servo-bus-device CONFIG
                        simulated Dynamixel / Feetech servos on a pseudo-terminal, moving the plant
  hil regress [DIR]     every scenario in DIR (default configs/scenarios) in lockstep, checked against
                        its pass criteria and golden results; a table, a JSON report, exit 1 on a failure
  hil replay LOG        a recorded run's statuses through the controller again, its commands compared
                        with the recorded ones
  hil report LOG        a run's summary and plots from its log alone
  hil campaign FILE     thousands of variations of a scenario on Ray or a process pool; pass rates, worst
                        seeds, a table and plots (docs/campaign.md)
  hil export LOG --mcap OUT.mcap
                        a run log as MCAP for Foxglove Studio and PlotJuggler

`hil run`, `hil demo` and `hil regress` record their LCM traffic with --log (lcm-logplayer, lcm-spy
and the two commands above read the logs).

Configs are YAML (docs/hil.md lists every key); `configs/demo.yaml` is the default robot's.
"""


def _add_run_options(p: argparse.ArgumentParser, default_duration: float | None = None) -> None:
    p.add_argument("--duration", type=float, default=default_duration,
                   help=f"seconds to run (default: {default_duration:g})" if default_duration else
                   "seconds to run (default: loop.duration, or until Ctrl-C)")
    p.add_argument("--lcm-url", help="override lcm.url, e.g. 'udpm://239.255.76.67:7667?ttl=0'")
    p.add_argument("--json", action="store_true", help="print the end-of-run summary as one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="write tracking and timing plots to this PNG")
    p.add_argument("--log", metavar="FILE.lcmlog",
                   help="record the run's LCM traffic, config and summary to this log (overrides telemetry.log)")
    p.add_argument("--quiet", action="store_true", help="no live status line")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="hil", description="Hardware-in-the-loop robot control stack.",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="run the control loop against a robot driver",
                         description="Run the control loop: read the robot's status on LCM, command torques.")
    run.add_argument("config", help="run config (YAML)")
    _add_run_options(run)
    sim = sub.add_parser("sim", help="run the simulated robot in real time",
                         description="Run the simulated robot as its own process: it speaks the robot's LCM "
                                     "protocol on the config's channels, paced to the wall clock.")
    sim.add_argument("config", help="run config (YAML) with a sim section")
    _add_service_options(sim)
    sim.add_argument("--no-viz", action="store_true", help="publish no viewer messages, even with viz enabled")
    demo = sub.add_parser("demo", help="simulated iiwa14 + control loop, with a live status line",
                          description="Start the simulated robot in its own process (UDP multicast LCM, ttl=0) "
                                      "and run the control loop against it; prints a live status line and the "
                                      "summary. Start Meldis (python -m pydrake.visualization.meldis) to watch.")
    demo.add_argument("--config", default=str(DEMO_CONFIG), help=f"run config (default: {DEMO_CONFIG}), or a legged "
                      "scenario (configs/legged/go2_demo.yaml: whole-body control in one process, docs/wbc.md)")
    _add_run_options(demo, default_duration=10.0)
    viz = sub.add_parser("viz", help="viewer messages from a robot status channel",
                         description="Subscribe to the robot's status channel and publish drake_visualizer / "
                                     "Meldis messages (lcmt_viewer_load_robot, lcmt_viewer_draw) for it.")
    viz.add_argument("config", help="run config (YAML): robot, lcm, channels and viz sections are used")
    _add_service_options(viz)
    serial = sub.add_parser("serial", help="the serial driver: board on a serial port <-> robot LCM channels",
                            description="Open the board's serial port (any pyserial URL), publish its joint state as "
                                        "the robot's status, send the loop's commands, apply command expiry and "
                                        "publish link health (serial section; docs/serial_protocol.md).")
    serial.add_argument("config", help="run config (YAML) with a serial section")
    _add_service_options(serial)
    device = sub.add_parser("serial-device", help="a simulated motor board on a pseudo-terminal",
                            description="Create a pseudo-terminal, speak the board protocol on it and move the "
                                        "simulated plant (sim section); prints the port for the driver.")
    device.add_argument("config", help="run config (YAML) with serial and sim sections")
    _add_service_options(device, lcm_url=False)
    device.add_argument("--port", help="where to put the pty's symlink (default: serial.device.link or serial.port)")
    servo = sub.add_parser("servo-bus", help="the servo-bus driver: Dynamixel / Feetech servos <-> robot LCM channels",
                           description="Open the servo bus (servo_bus section), set the servos up, and each cycle "
                                       "publish one SYNC READ as the robot's status and send the loop's torques as "
                                       "one SYNC WRITE; torque off on timeouts, faults and exit (docs/servo_bus.md).")
    servo.add_argument("config", help="run config (YAML) with a servo_bus section")
    _add_service_options(servo)
    servo_device = sub.add_parser("servo-bus-device", help="simulated Dynamixel / Feetech servos on a pseudo-terminal",
                                  description="Create a pseudo-terminal and answer Protocol 2.0 or Feetech "
                                              "instructions as the configured servos, driving the simulated plant.")
    servo_device.add_argument("config", help="run config (YAML) with servo_bus and sim sections")
    _add_service_options(servo_device, lcm_url=False)
    servo_device.add_argument("--port", help="where to put the pty's symlink (default: servo_bus.device.link or "
                                             "servo_bus.port)")
    regress = sub.add_parser("regress", help="run the regression scenarios in lockstep and check them",
                             description="Run every scenario (a run config with a scenario section) in lockstep "
                                         "against the simulated robot or the serial chain, check its pass "
                                         "criteria and golden outcome, print a table and write a JSON report. "
                                         "Exit 0 when all pass, 1 when one fails, 2 for a bad scenario file. "
                                         "docs/regress.md describes the scenario files.")
    regress.add_argument("target", nargs="?", default=None,
                         help="a folder of scenario files or one file (default: configs/scenarios)")
    regress.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="run N scenarios at once")
    regress.add_argument("-k", dest="pattern", metavar="TEXT", help="only the scenarios whose name contains TEXT")
    regress.add_argument("--report", default="regress-report.json", metavar="FILE.json",
                         help="where to write the JSON report (default: regress-report.json)")
    regress.add_argument("--plots", metavar="DIR", help="write one PNG of tracking and timing per scenario here")
    regress.add_argument("--logs", metavar="DIR", help="record each scenario's LCM traffic to DIR/NAME.lcmlog")
    regress.add_argument("--update-golden", action="store_true",
                         help="write this run's outcomes to the scenarios' golden files instead of comparing")
    replay = sub.add_parser("replay", help="replay a log's statuses through the controller and compare commands",
                            description="Feed the robot statuses recorded in LOG to the controller again, offline "
                                        "(lockstep, one tick per recorded command), and compare its commands and "
                                        "safety transitions with the recorded ones. Exit 0 when they match within "
                                        "the tolerance, 1 when not.")
    replay.add_argument("log", help="an LCM log recorded with --log (or lcm-logger, with --config)")
    replay.add_argument("--config", help="run config to replay with (default: the one stored in the log)")
    replay.add_argument("--tolerance", type=float, default=1e-9, metavar="NM",
                        help="largest torque difference that counts as equal, N·m (default 1e-9)")
    replay.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    replay.add_argument("--skip-corrupt", action="store_true",
                        help="read past corrupt events (counted in the result) instead of exiting 2")
    replay.add_argument("--viz", metavar="LCM_URL", nargs="?", const="udpm://239.255.76.67:7667?ttl=0",
                        help="a legged (floating_base) log: draw the replay for Meldis on this LCM URL "
                             "(default udpm://239.255.76.67:7667?ttl=0), paced to the log's clock")
    report = sub.add_parser("report", help="a run's summary and plots from its log",
                            description="Read an LCM log of a run and print its summary: status and command "
                                        "rates and gaps, torques, timing and tracking from the telemetry, safety "
                                        "transitions, and the loop's own summary when the log has it.")
    report.add_argument("log", help="an LCM log (recorded with --log, or by lcm-logger)")
    report.add_argument("--plot", metavar="FILE.png", help="write tracking and timing plots to this PNG")
    report.add_argument("--json", action="store_true", help="print the report as one JSON object")
    report.add_argument("--skip-corrupt", action="store_true",
                        help="read past corrupt events (counted in the report) instead of exiting 2")
    campaign_cli.add_parsers(sub)
    return ap


def _load(path: str, lcm_url: str | None, log: str | None = None):
    from drivers.run_config import load_config
    overrides = {}
    if lcm_url:
        overrides["lcm"] = {"url": lcm_url}
    if log:
        overrides["telemetry"] = {"log": str(Path(log).resolve())}
    return load_config(path, overrides)


def _stop_on_signals() -> list[bool]:
    flag = [False]

    def handler(signum, frame):
        flag[0] = True

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    return flag


class StatusLine:
    """A one-line live status, rewritten in place about five times a second."""

    def __init__(self, enabled: bool):
        self.enabled, self.next = enabled and sys.stdout.isatty() or enabled == "always", 0.0
        self.last_ticks = 0
        self.last_time = time.monotonic()

    def __call__(self, loop) -> None:
        now = time.monotonic()
        if not self.enabled or now < self.next:
            return
        self.next = now + 0.2
        rec = loop.recorder
        rate = (rec.ticks - self.last_ticks) / max(1e-9, now - self.last_time)
        self.last_ticks, self.last_time = rec.ticks, now
        sys.stdout.write(f"\r t {(rec.last_ns - rec.first_ns) * 1e-9:6.2f} s  {loop.safety.state.name:9s} "
                         f"rate {rate:7.1f} Hz  compute {rec.last_compute_ns / 1e3:6.1f} µs  late "
                         f"{rec.last_lateness_ns / 1e3:6.1f} µs  misses {rec.deadline_misses}  "
                         f"max err {float(rec.maxabs.max()) * 1e3:6.2f} mrad ")
        sys.stdout.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stdout.write("\n")


def _finish(loop, summary: dict, args) -> int:
    from .telemetry import format_summary, plot
    if args.plot:
        plot(loop.recorder, args.plot)
        summary["plot"] = args.plot
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0 if summary["final_state"] in ("RUNNING", "INIT") or not summary["faults"] else 3


def cmd_run(args, live: StatusLine | None = None) -> int:
    from core.config import open_lcm
    from core.robot import load_robot

    from .loop import ControlLoop
    cfg = _load(args.config, args.lcm_url, args.log)
    if cfg.robot.protocol == "floating_base":            # a legged robot: whole-body control (docs/wbc.md)
        return _run_legged(cfg, args)
    robot = load_robot(cfg.robot)
    lc = open_lcm(cfg.lcm.url)
    bridge = _viewer(cfg, robot.plant, lc)
    loop = ControlLoop(cfg, robot, lc, mode="realtime", viz=bridge)
    stop = _stop_on_signals()
    live = live or StatusLine(not args.quiet and not args.json)
    print(f"hil run: waiting for the status on {loop.channels.status} ({cfg.lcm.url}), up to "
          f"{cfg.loop.start_timeout:g} s", file=sys.stderr, flush=True)
    said = []

    def on_tick(lp):            # the start-up line (status period, timeout, guard), once, then the live line
        if lp.startup and not said:
            said.append(print(f"hil run: {lp.startup}", file=sys.stderr, flush=True))
        live(lp)
    try:
        summary = loop.run(args.duration, stop=lambda: stop[0], on_tick=on_tick)
    except (TimeoutError, RuntimeError) as e:       # no robot; the log recorder failed
        print(f"\nhil: {e}", file=sys.stderr)
        return 2
    finally:
        live.close()
        if bridge is not None:
            bridge.close()
    return _finish(loop, summary, args)


def _run_legged(cfg, args) -> int:
    """`hil run` of a floating_base config: hil.legged_loop in real time; exit 0, 3 on a fault, 2
    without a robot."""
    from core.config import open_lcm

    from .legged_loop import LeggedLoop, format_legged_summary
    loop = LeggedLoop(cfg, open_lcm(cfg.lcm.url))
    stop = _stop_on_signals()
    print(f"hil run: {cfg.robot.model} whole_body, waiting for the status on {loop.channels.status} "
          f"({cfg.lcm.url}), up to {cfg.loop.start_timeout:g} s", file=sys.stderr, flush=True)
    try:
        summary = loop.run(args.duration, stop=lambda: stop[0])
    except (TimeoutError, RuntimeError) as e:
        print(f"hil: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary) if args.json else format_legged_summary(summary))
    return 0 if summary["fault"] is None else 3


def _viewer(cfg, plant, lc):
    """The viewer bridge of the config's `viz:` section, or None when it is off."""
    from core.config import channels_for
    from viz import ViewerBridge, viz_config
    viz = viz_config(cfg)
    return ViewerBridge(plant, lc, channels_for(cfg), viz) if viz.enabled else None


def _meldis_command(cfg, plant=None) -> str:
    """The Meldis command line whose camera frames the config's robot at its initial positions
    (viz.camera), the parameters written to a temporary file."""
    from core.robot import build_plant
    from viz.camera import write_meshcat_params
    plant = plant or build_plant(cfg.robot)
    q = (cfg.sim or {}).get("initial_positions") if isinstance(cfg.sim, dict) else None
    q = q if q is not None and len(q) == plant.num_positions() else None
    params = write_meshcat_params(plant, Path(cfg.robot.model).stem, q)
    return f"python -m pydrake.visualization.meldis --meshcat-params {params}"


def cmd_viz(args) -> int:
    from core.config import channels_for, open_lcm
    from core.robot import build_plant
    from viz import viz_config
    from viz.standalone import run
    cfg = _load(args.config, args.lcm_url)
    channels = channels_for(cfg)
    plant = build_plant(cfg.robot)
    print(f"hil viz: {cfg.robot.model} ({cfg.robot.protocol}) from {channels.status} to "
          f"{channels.viewer_load_robot} / {channels.viewer_draw} on {cfg.lcm.url}. Watch it in Meldis: "
          f"{_meldis_command(cfg, plant)}", flush=True)
    stop = _stop_on_signals()
    viewer = run(plant, open_lcm(cfg.lcm.url), cfg.robot.protocol, channels,
                 viz_config(cfg), duration_s=args.duration, stop=lambda: stop[0])
    bridge = viewer.bridge
    print(f"statuses {viewer.status.ok_count} (rejected: {dict(viewer.status.counters)}), draws {bridge.draws}, "
          f"loads {bridge.loads}, viewer requests {bridge.requests}, send errors {bridge.errors}")
    return 0


def cmd_demo(args) -> int:
    from .legged_scenario import is_legged_scenario, run_legged_demo
    if Path(args.config).is_file() and is_legged_scenario(args.config):      # a legged robot (docs/wbc.md)
        from messages.channels import DEFAULT_LCM_URL
        return run_legged_demo(args.config, args.duration, args.lcm_url or DEFAULT_LCM_URL)
    from core.robot import build_plant
    cfg = _load(args.config, args.lcm_url)
    legged = cfg.robot.protocol == "floating_base"       # the simulated legged robot draws itself
    if not legged:
        build_plant(cfg.robot)          # a bad model is reported once, before the simulator starts
    limit = str(args.duration + cfg.loop.start_timeout + 5.0)
    out = subprocess.PIPE if args.json else None
    if cfg.servo_bus is None:
        robot = [subprocess.Popen([sys.executable, "-m", "hil", "sim", args.config, "--lcm-url", cfg.lcm.url,
                                   "--duration", limit] + ([] if legged else ["--no-viz"]), stdout=out)]
    else:           # the simulated servos, then the servo-bus driver (docs/servo_bus.md)
        robot = [subprocess.Popen([sys.executable, "-m", "hil", "servo-bus-device", args.config, "--duration", limit],
                                  stdout=out)]
        robot.append(subprocess.Popen([sys.executable, "-m", "hil", "servo-bus", args.config, "--lcm-url",
                                       cfg.lcm.url, "--duration", limit], stdout=out))
    try:
        if not args.json:
            print(f"hil demo: simulated {cfg.robot.protocol} (pids {', '.join(str(p.pid) for p in robot)}) and the "
                  f"control loop on {cfg.lcm.url}; {args.duration:g} s. Watch it in Meldis: "
                  f"{'python -m pydrake.visualization.meldis' if legged else _meldis_command(cfg)}", flush=True)
        args.config = str(args.config)
        return cmd_run(args)
    finally:
        for p in reversed(robot):
            p.terminate()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()


def cmd_sim(args) -> int:
    from drivers.sim.realtime import run_sim
    cfg = _load(args.config, args.lcm_url)
    if cfg.robot.protocol == "floating_base":            # the simulated legged robot (docs/wbc.md)
        from .legged_loop import run_legged_sim
        stop = _stop_on_signals()
        summary = run_legged_sim(cfg, args.duration, stop=lambda: stop[0], viz=False if args.no_viz else None)
        return 1 if summary["diverged"] else 0
    summary = run_sim(cfg, duration=args.duration, viz=False if args.no_viz else None)
    return summary["exit"]["status"] if "exit" in summary else 0     # a real driver's model ended (docs/sim.md)


def cmd_serial(args) -> int:
    from drivers.serial.driver import run_from_config
    return run_from_config(_load(args.config, args.lcm_url), args.duration)


def cmd_serial_device(args) -> int:
    from drivers.serial.device import run_from_config
    return run_from_config(_load(args.config, None), args.duration, args.port)


def cmd_servo_bus(args) -> int:
    from drivers.serial.servo_driver import run_from_config
    return run_from_config(_load(args.config, args.lcm_url), args.duration)


def cmd_servo_bus_device(args) -> int:
    from drivers.serial.servo_plant import run_from_config
    return run_from_config(_load(args.config, None), args.duration, args.port)


def cmd_regress(args) -> int:
    from core.robot import build_plant

    from .regress import DEFAULT_DIR, find_scenarios, format_table, run_all, write_report
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
    models = {}
    for p in paths:                     # every file and its model are checked before anything runs
        if is_legged_scenario(p):
            load_legged_scenario(p)
            continue
        robot = load_scenario(p).cfg.robot
        if (robot.model, robot.weld) not in models:
            try:
                models[robot.model, robot.weld] = build_plant(robot)
            except ConfigError as e:
                raise ConfigError(e.key, str(e).split(": ", 1)[-1], str(p)) from None
    if args.jobs < 1:
        raise ConfigError("", f"-j must be at least 1, got {args.jobs}")
    results = run_all(paths, args.jobs, args.plots, args.logs, args.update_golden, verbose=args.verbose)
    write_report(results, args.report)
    print(format_table(results))
    print(f"report: {args.report}")
    return 0 if all(r["passed"] for r in results) else 1


def cmd_replay(args) -> int:
    from .replay import format_replay, replay
    if not args.verbose:
        logging.getLogger("hil").setLevel(logging.ERROR)      # the replayed transitions are in the result
    cfg = _load(args.config, None) if args.config else None
    with _reading(args.log):
        result = replay(_log(args.log), cfg, args.tolerance, args.skip_corrupt, args.viz)
    print(json.dumps(result) if args.json else format_replay(result))
    return 0 if result["passed"] else 1


def cmd_report(args) -> int:
    from .report import format_report, plot_log, read_log
    with _reading(args.log):
        report, traces = read_log(_log(args.log), args.skip_corrupt)
    if args.plot:
        plot_log(traces, args.plot, report["deadline_budget_us"])
        report["plot"] = args.plot
    print(json.dumps(report) if args.json else format_report(report))
    return 0


def cmd_export(args) -> int:
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


def _add_service_options(p: argparse.ArgumentParser, lcm_url: bool = True) -> None:
    """The options of the commands that run until stopped (sim, viz, serial, serial-device)."""
    p.add_argument("--duration", type=float, help="seconds to run (default: until Ctrl-C)")
    if lcm_url:
        p.add_argument("--lcm-url", help="override lcm.url")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        commands = {"run": cmd_run, "sim": cmd_sim, "demo": cmd_demo, "viz": cmd_viz, "serial": cmd_serial,
                    "serial-device": cmd_serial_device, "servo-bus": cmd_servo_bus,
                    "servo-bus-device": cmd_servo_bus_device, "replay": cmd_replay, "report": cmd_report,
                    "regress": cmd_regress, "campaign": campaign_cli.cmd_campaign,
                    "export": cmd_export}
        return commands[args.command](args)
    except ConfigError as e:      # errors found after loading (they need the model) name the file here
        where = "" if e.source or not getattr(args, "config", None) else f"{args.config}: "
        print(f"hil: config error: {where}{e}", file=sys.stderr)
        return 2
    except LogError as e:
        print(f"hil: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
