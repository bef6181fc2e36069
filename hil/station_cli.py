"""`hil sim STATION` and `hil run STATION`: a station file (drivers.station, docs/station.md) as the
simulated arms in their own process and as one control loop for all of them, over its LCM."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from drivers.core.schema import ConfigError
from drivers.core.signals import stop_on_signals


def load(path: str, lcm_url: str | None, log: str | None = None, viz: bool = True):
    """The validated station of the file, with --lcm-url applied (and the viewer off: `viz` False);
    every arm's law found."""
    from drivers.station import load_station

    from .controllers import check_controller
    from .process import check_cpus
    overrides = {**({"lcm": {"url": lcm_url}} if lcm_url else {}), **({} if viz else {"viz": False}),
                 **({"telemetry": {"log": log}} if log else {})}
    station = load_station(path, overrides or None)
    for cfg in station.arms.values():
        check_controller(cfg)
    check_cpus(station.first.loop.cpus)
    return station


def cmd_sim(args) -> int:
    """`hil sim STATION`: every arm simulated on one wall clock, drawn as one scene (viz; --no-viz: not);
    0, or the exit status of an arm's driver model that ended."""
    from drivers.sim.station import run_station_sim
    station = load(args.config, args.lcm_url, viz=not getattr(args, "no_viz", False))
    summary = run_station_sim(station, duration=args.duration)
    return summary["exit"]["status"] if "exit" in summary else 0


def cmd_demo(args) -> int:
    """`hil demo --config STATION`: `hil sim` of the station in its own process (drawing the scene) and
    the loop against it; the loop stops when the simulator ends (exit 2 before every arm's first status)."""
    from .cli import _Processes
    station = load(args.config, args.lcm_url, args.log)
    limit = str(args.duration + station.first.loop.start_timeout + 5.0)
    sim = subprocess.Popen([sys.executable, "-m", "hil", "sim", str(args.config), "--duration", limit]
                           + (["--lcm-url", args.lcm_url] if args.lcm_url else []),
                           stdout=subprocess.PIPE if args.json else None)
    try:
        if not args.json:
            print(f"hil demo: the simulated station (pid {sim.pid}) and the control loop on "
                  f"{', '.join(station.buses)}; {args.duration:g} s. Watch it in Meldis: "
                  "python -m pydrake.visualization.meldis", flush=True)
        return cmd_run(args, ended=_Processes([sim]))
    finally:
        with stop_on_signals():         # a second Ctrl-C does not cut short the simulator's stop
            sim.terminate()
            try:
                sim.wait(timeout=5)
            except subprocess.TimeoutExpired:
                sim.kill()


def cmd_run(args, ended=None) -> int:
    """`hil run STATION`: one loop for every arm in real time; the summary per arm and the station's
    line (--json: the summary as JSON); exit 0, 3 when an arm ended in a fault (the worst arm's state is
    the station's), 2 when an arm's status never came. `ended()`: the demo's simulator is gone (the loop
    stops)."""
    from drivers.core.config import open_lcm

    from .lifecycle import Mode
    from .station import StationLoop, format_station_summary
    from .telemetry import exit_status
    if getattr(args, "check_alloc", False):
        raise ConfigError("--check-alloc", "measures one arm's law: run it on that arm's own config", args.config)
    if getattr(args, "identify", False):
        raise ConfigError("--identify", "identifies one arm: run it on that arm's own config", args.config)
    station = load(args.config, args.lcm_url, args.log)
    first = station.first
    loop = StationLoop(station, {url: open_lcm(url) for url in station.buses}, Mode.REALTIME).configure()
    spec = station.spec
    where = f"kuka_driver --num_robots {len(loop.arms)}'s {7 * len(loop.arms)}-joint status on {spec.status}" \
        if spec.layout == "num_robots" else \
        f"statuses on {', '.join(arm.channels.status for arm in loop.arms.values())}"
    print(f"hil run: station of {len(loop.arms)} arms ({', '.join(loop.arms)}), {where} "
          f"({', '.join(station.buses)}), up to "
          f"{first.loop.start_timeout:g} s", file=sys.stderr, flush=True)
    with stop_on_signals() as stop:
        try:
            summary = loop.run(args.duration, stop=lambda: stop.is_set() or (ended is not None and ended()))
        except (TimeoutError, RuntimeError) as e:
            print(f"\nhil: {e}", file=sys.stderr)
            return 2
        finally:
            loop.close()
    if args.plot:                      # one PNG per arm: FILE_<arm>.png, named in the summary
        from .telemetry import plot
        path, summary["plot"] = Path(args.plot), {}
        for name, arm in loop.arms.items():
            summary["plot"][name] = out = str(path.with_name(f"{path.stem}_{name}{path.suffix}"))
            plot(arm.recorder, out, title=f"{args.config}, arm {name}: {arm.controller.name}, final state "
                                          f"{summary['arms'][name]['final_state']}")
    print(json.dumps(summary) if args.json else format_station_summary(summary))
    return exit_status(summary)
