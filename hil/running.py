"""Running a config with a given control law from Python: in lockstep against the simulated robot
(deterministic, faster than real time) or in real time against whatever driver publishes on the
config's channels (`hil sim`, a real robot's driver).

    import hil
    summary = hil.run("my_robot.yaml", MyLaw(params), duration=5.0)              # lockstep
    summary = hil.run("my_robot.yaml", MyLaw(params), duration=5.0, mode="realtime")
    report = hil.check_allocations("my_robot.yaml", MyLaw(params))            # what update() allocates
    law = hil.make_law("configs/legged/go2.yaml")       # the config's law, bound and configured, no loop
"""
from __future__ import annotations

from pathlib import Path

from drivers.core.config import RunConfig

from .lifecycle import Mode


def load(config, overrides: dict | None = None) -> RunConfig:
    """A RunConfig from a path (YAML), a mapping (relative paths from the current directory) or a
    RunConfig; `overrides` merged in (drivers.core.schema.merge: nested mappings at every depth, lists
    replaced whole). Errors are drivers.core.schema.ConfigError."""
    from drivers.run_config import load_config, parse_config
    if isinstance(config, RunConfig):
        return config if not overrides else parse_config(_as_dict(config), Path.cwd(), config.source or "config",
                                                         overrides)
    if isinstance(config, dict):
        return parse_config(config, Path.cwd(), "config", overrides)
    return load_config(config, overrides)


def _as_dict(cfg: RunConfig) -> dict:
    import yaml

    from drivers.core.config import dump_config
    return yaml.safe_load(dump_config(cfg))


def run(config, controller=None, *, duration: float | None = None, mode: Mode | str = Mode.LOCKSTEP,
        overrides: dict | None = None, on_tick=None, check_alloc: bool = False) -> dict:
    """Runs `config` (a path, a mapping or a RunConfig) with `controller` (a hil.Controller, its class,
    or a function law(state, command); None: the config's controller.type) for `duration` seconds of
    the robot's time (None: loop.duration) and returns the run's summary (a dict, as `hil run --json`).
    mode "lockstep": against the simulated robot of the config's sim section, in this process (a
    config with a serial or servo_bus section: behind that chain, hil.chain); "realtime": paced to the
    wall clock against the driver on the config's lcm.url. `on_tick(loop)`: called after every tick
    from the first status on with the hil.loop.ControlLoop (loop.state, loop.cmd, loop.tau_cmd the
    torque sent, loop.safety.state, loop.tick_index; arrays refreshed in place: copy what you keep;
    docs/controllers.md records a trajectory with it). `check_alloc`: trace what update() allocates
    (the summary's controller_timing.allocations)."""
    cfg = load(config, overrides)
    from .chain import link_of
    if Mode(mode) is Mode.LOCKSTEP and link_of(cfg) is not None:     # behind its serial or servo chain
        from .chain import run_chain
        duration = duration if duration is not None else cfg.loop.duration
        if duration is None:
            raise ValueError("a run behind a serial or servo chain needs a duration (or loop.duration)")
        return run_chain(cfg, link_of(cfg), duration, controller=controller, on_tick=on_tick,
                         check_alloc=check_alloc)[0]
    if Mode(mode) is Mode.LOCKSTEP:
        from .lockstep import make_lockstep, run_closed
        loop, sim = make_lockstep(cfg, controller=controller, check_alloc=check_alloc)
        return run_closed(loop, sim, duration, on_tick=on_tick)
    from drivers.core.config import open_lcm

    from .hardware import robot_for
    from .loop import ControlLoop
    loop = ControlLoop(cfg, robot_for(cfg), open_lcm(cfg.lcm.url), Mode.REALTIME, controller=controller,
                       check_alloc=check_alloc).configure()
    try:
        return loop.run(duration, on_tick=on_tick)
    finally:
        loop.close()


def make_law(config, controller=None, *, overrides: dict | None = None):
    """The control law of `config` (a path, a mapping or a RunConfig) as `hil run` builds it, bound
    to the config's robot and configured, outside any loop: `controller` (a hil.Controller, its
    class, or a function law(state, command); None: the config's controller.type). Drive it with
    ``law.activate()``, then ``law.update(state, command)`` on ``law.new_state(q=..., v=...)`` and
    ``law.new_command()``; a legged robot's state starts at its standing pose (``law.q0``)."""
    cfg = load(config, overrides)
    from .controllers import config_folders, make_controller
    from .hardware import robot_for
    robot = robot_for(cfg)
    law = make_controller(robot.plant, cfg.controller, robot.end_effector, period=1.0 / cfg.loop.rate_hz,
                          joint_names=robot.joint_names, controller=controller, search=config_folders(cfg),
                          contacts=robot.contacts, q0=robot.q0)
    return law


def check_allocations(config, controller=None, *, duration: float = 2.0, overrides: dict | None = None) -> dict:
    """What the law's update() allocates per tick, measured with tracemalloc over a lockstep run of
    `duration` s against the simulated robot: {"allocates", "ticks", "allocating_ticks", "median_bytes",
    "max_bytes", "allocating_lines", "kept_bytes", "kept_sites"} (hil.controller_guard.AllocationProbe;
    allocating_lines: the law's lines that allocated on the ticks traced line by line, as
    'file:line (function): bytes B: code'), and the run's "final_state" and "faults" (a law that
    faulted was measured on fewer ticks, or none)."""
    summary = run(config, controller, duration=duration, overrides=overrides, check_alloc=True)
    return {**summary["controller_timing"]["allocations"], "final_state": summary["final_state"],
            "faults": summary["faults"]}


def format_allocations(report: dict, name: str) -> str:
    """The allocation report as `hil run --check-alloc` prints it."""
    faults = report.get("faults") or []
    faulted = "; the run faulted: " + "; ".join(f"{f['fault']} at tick {f['tick']}: {f['reason']}"
                                                  for f in faults[:3]) if faults else ""
    if not report["ticks"]:
        return f"{name}: update() was not measured (the run was RUNNING for too few ticks){faulted}"
    if not report["allocates"]:
        return (f"{name}: update() allocated nothing on {report['ticks'] - report['allocating_ticks']} of "
                f"{report['ticks']} ticks{faulted}")
    lines = [f"{name}: update() allocated on {report['allocating_ticks']} of {report['ticks']} ticks: "
             f"median {report['median_bytes']:.0f} B, max {report['max_bytes']} B per tick "
             f"({report['kept_bytes']} B kept over the run)"]
    lines += [f"  allocates at {site}" for site in report.get("allocating_lines", ())]
    lines += [f"  kept: {site}" for site in report["kept_sites"]]
    lines.append("  preallocate in on_configure() and write into arrays with out= (docs/controllers.md)")
    if faulted:
        lines.append(f"  {faulted[2:]}")
    return "\n".join(lines)
