"""The `hil` command line: run the loop, the simulated robot, or both (the demo)."""
from __future__ import annotations

import argparse
import json
import logging
import signal
import subprocess
import sys
import time

from .paths import CONFIGS
from .schema import ConfigError

DEMO_CONFIG = CONFIGS / "demo.yaml"

EPILOG = """\
commands:
  hil run CONFIG        the control loop against whatever robot driver publishes on the config's channels
  hil sim CONFIG        the simulated robot, as its own process, paced to the wall clock
  hil demo              both: the simulated iiwa14 in a separate process over UDP multicast LCM (ttl=0)
                        and the loop following the default trajectory, with a live status line
  hil viz CONFIG        a robot status channel (real robot or sim) turned into drake_visualizer / Meldis
                        messages
  hil serial CONFIG     the serial driver: a motor-controller board on a serial port made to look like a
                        Drake-protocol robot on LCM (docs/serial_protocol.md)
  hil serial-device CONFIG
                        a simulated motor board on a pseudo-terminal, moving the simulated plant

Configs are YAML (docs/hil.md lists every key); `configs/demo.yaml` is the default robot's.
"""


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--duration", type=float, help="seconds to run (default: loop.duration, or until Ctrl-C)")
    p.add_argument("--lcm-url", help="override lcm.url, e.g. 'udpm://239.255.76.67:7667?ttl=0'")
    p.add_argument("--json", action="store_true", help="print the end-of-run summary as one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="write tracking and timing plots to this PNG")
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
    sim.add_argument("--duration", type=float, help="seconds to run (default: until Ctrl-C)")
    sim.add_argument("--lcm-url", help="override lcm.url")
    demo = sub.add_parser("demo", help="simulated iiwa14 + control loop, with a live status line",
                          description="Start the simulated robot in its own process (UDP multicast LCM, ttl=0) "
                                      "and run the control loop against it; prints a live status line and the "
                                      "summary. Start Meldis (python -m pydrake.visualization.meldis) to watch.")
    demo.add_argument("--config", default=str(DEMO_CONFIG), help=f"run config (default: {DEMO_CONFIG})")
    _add_run_options(demo)
    demo.set_defaults(duration=10.0)
    viz = sub.add_parser("viz", help="viewer messages from a robot status channel",
                         description="Subscribe to the robot's status channel and publish drake_visualizer / "
                                     "Meldis messages (lcmt_viewer_load_robot, lcmt_viewer_draw) for it.")
    viz.add_argument("config", help="run config (YAML): robot, lcm, channels and viz sections are used")
    viz.add_argument("--duration", type=float, help="seconds to run (default: until Ctrl-C)")
    viz.add_argument("--lcm-url", help="override lcm.url")
    serial = sub.add_parser("serial", help="the serial driver: board on a serial port <-> robot LCM channels",
                            description="Open the board's serial port (any pyserial URL), publish its joint state as "
                                        "the robot's status, send the loop's commands, apply command expiry and "
                                        "publish link health (serial section; docs/serial_protocol.md).")
    serial.add_argument("config", help="run config (YAML) with a serial section")
    serial.add_argument("--duration", type=float, help="seconds to run (default: until Ctrl-C)")
    serial.add_argument("--lcm-url", help="override lcm.url")
    device = sub.add_parser("serial-device", help="a simulated motor board on a pseudo-terminal",
                            description="Create a pseudo-terminal, speak the board protocol on it and move the "
                                        "simulated plant (sim section); prints the port for the driver.")
    device.add_argument("config", help="run config (YAML) with serial and sim sections")
    device.add_argument("--duration", type=float, help="seconds to run (default: until Ctrl-C)")
    device.add_argument("--port", help="where to put the pty's symlink (default: serial.device.link or serial.port)")
    return ap


def _load(path: str, lcm_url: str | None):
    from .config import load_config
    return load_config(path, {"lcm": {"url": lcm_url}} if lcm_url else None)


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


def _finish(loop, args) -> int:
    from .telemetry import format_summary, plot
    summary = loop.summary()
    if args.plot:
        plot(loop.recorder, args.plot)
        summary["plot"] = args.plot
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0 if summary["final_state"] in ("RUNNING", "INIT") or not summary["faults"] else 3


def cmd_run(args, live: StatusLine | None = None) -> int:
    import lcm

    from .loop import ControlLoop
    from .robot import load_robot
    cfg = _load(args.config, args.lcm_url)
    robot = load_robot(cfg.robot)
    lc = lcm.LCM(cfg.lcm.url)
    bridge = _viewer(cfg, robot.plant, lc)
    loop = ControlLoop(cfg, robot, lc, mode="realtime", viz=bridge)
    stop = _stop_on_signals()
    live = live or StatusLine(not args.quiet and not args.json)
    try:
        loop.run(args.duration, stop=lambda: stop[0], on_tick=live)
    except TimeoutError as e:
        print(f"\nhil: {e}", file=sys.stderr)
        return 2
    finally:
        live.close()
        if bridge is not None:
            bridge.close()
    return _finish(loop, args)


def _viewer(cfg, plant, lc):
    """The viewer bridge of the config's `viz:` section, or None when it is off."""
    from .config import channels_for, viz_config
    from .viz import ViewerBridge
    viz = viz_config(cfg)
    return ViewerBridge(plant, lc, channels_for(cfg), viz) if viz.enabled else None


def cmd_viz(args) -> int:
    import lcm

    from .config import channels_for, viz_config
    from .robot import build_plant
    from .viz.standalone import run
    cfg = _load(args.config, args.lcm_url)
    channels = channels_for(cfg)
    print(f"hil viz: {cfg.robot.model} ({cfg.robot.protocol}) from {channels.status} to "
          f"{channels.viewer_load_robot} / {channels.viewer_draw} on {cfg.lcm.url}", flush=True)
    stop = _stop_on_signals()
    viewer = run(build_plant(cfg.robot), lcm.LCM(cfg.lcm.url), cfg.robot.protocol, channels,
                 viz_config(cfg), duration_s=args.duration, stop=lambda: stop[0])
    bridge = viewer.bridge
    print(f"statuses {viewer.status.ok_count} (rejected: {dict(viewer.status.counters)}), draws {bridge.draws}, "
          f"loads {bridge.loads}, viewer requests {bridge.requests}, send errors {bridge.errors}")
    return 0


def cmd_demo(args) -> int:
    cfg = _load(args.config, args.lcm_url)
    sim = subprocess.Popen([sys.executable, "-m", "hil", "sim", args.config, "--lcm-url", cfg.lcm.url,
                            "--duration", str(args.duration + cfg.loop.start_timeout + 5.0)],
                           stdout=subprocess.PIPE if args.json else None)
    try:
        if not args.json:
            print(f"hil demo: simulated {cfg.robot.protocol} (pid {sim.pid}) and the control loop on {cfg.lcm.url};"
                  f" {args.duration:g} s. Watch it in Meldis: python -m pydrake.visualization.meldis")
        args.config = str(args.config)
        return cmd_run(args)
    finally:
        sim.terminate()
        try:
            sim.wait(timeout=5)
        except subprocess.TimeoutExpired:
            sim.kill()


def cmd_sim(args) -> int:
    from drivers.sim.realtime import run_sim
    run_sim(_load(args.config, args.lcm_url), duration=args.duration)
    return 0


def cmd_serial(args) -> int:
    from drivers.serial.driver import run_from_config
    return run_from_config(_load(args.config, args.lcm_url), args.duration)


def cmd_serial_device(args) -> int:
    from drivers.serial.device import run_from_config
    return run_from_config(_load(args.config, None), args.duration, args.port)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        commands = {"run": cmd_run, "sim": cmd_sim, "demo": cmd_demo, "viz": cmd_viz, "serial": cmd_serial,
                    "serial-device": cmd_serial_device}
        return commands[args.command](args)
    except ConfigError as e:      # errors found after loading (they need the model) name the file here
        where = "" if e.source or not getattr(args, "config", None) else f"{args.config}: "
        print(f"hil: config error: {where}{e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
