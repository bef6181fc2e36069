"""The simulated robot as its own process, paced to the wall clock: `hil sim CONFIG [--duration S]
[--lcm-url URL] [--no-viz]` (hil.cli, the one command line).

run_sim() takes the run config (drivers.core.config.RunConfig: robot, lcm, channels, viz and sim are used),
builds the plant, prints one line on start, runs SimulatedRobot.run_realtime until the duration,
SIGINT or SIGTERM, prints a summary and returns it. With the config's viz section enabled, the
plant publishes its own viewer messages (docs/sim.md, Viewer); a process that runs next to a loop
which publishes them already (`hil demo`) turns that off (viz=False, --no-viz).
"""
from __future__ import annotations

import dataclasses
import sys

from drivers.core.config import RunConfig, channels_for, open_lcm
from drivers.core.robot import build_plant
from drivers.run_config import load_config

from .commanders import CommanderWatch
from .robot import SimulatedRobot


def format_summary(summary: dict) -> str:
    lines = [f"hil sim: {summary['steps']} steps, {summary['sim_time_s']:.3f} s simulated in "
             f"{summary['wall_time_s']:.3f} s (real-time factor {summary['real_time_factor']:.3f}); "
             f"late steps {summary['late_steps']}, max lateness {summary['max_lateness_us']:.0f} µs, "
             f"resyncs {summary['resyncs']}",
             f"  commands received {summary['commands_received']}, rejected {summary['commands_rejected']}"
             + (f" {summary['rejected_by']}" if summary['rejected_by'] else "")
             + f"; statuses published {summary['statuses_published']}, contact results "
               f"{summary['contact_results_published']}"]
    if "viz" in summary:
        from drivers.viz import format_counters
        lines.append(f"  viewer: {format_counters(summary['viz'])}")
    if "driver" in summary:
        driver = dict(summary["driver"])
        lines.append(f"  driver {driver.pop('driver')}: " + ", ".join(f"{k} {v}" for k, v in driver.items()))
    if "exit" in summary:
        lines.append(f"  the driver ended (exit status {summary['exit']['status']}): "
                     f"{summary['exit']['message'].splitlines()[0]}")
    lines += [f"  fault {f['type']} [{f['start']:g}, {'end' if f['stop'] is None else format(f['stop'], 'g')}) s: "
              f"applied {f['applied']}" for f in summary["faults"]]
    return "\n".join(lines)


def run_sim(cfg: RunConfig, duration: float | None = None, stop_event=None, out=sys.stdout,
            viz: bool | None = None) -> dict:
    """Runs the simulated robot of the run config `cfg` in real time on cfg.lcm.url; returns
    SimulatedRobot.run_realtime's summary. viz: None publishes the viewer messages of the plant's
    state when the config's viz section is enabled; False never; True always (with the section's
    settings, or the defaults)."""
    sim, channels, viz_cfg = cfg.sim, channels_for(cfg), cfg.viz
    if viz is not None:
        viz_cfg = dataclasses.replace(viz_cfg, enabled=viz)
    plant = build_plant(cfg.robot, sim.payload, simulated=True, gripper=sim.gripper, objects=sim.objects)
    robot = SimulatedRobot(plant, sim, cfg.robot.protocol, channels, open_lcm(cfg.lcm.url), viz=viz_cfg)
    robot.commanders = CommanderWatch.open(cfg.lcm.url, channels.command, round(sim.command_timeout * 1e9))
    print(f"hil sim: {cfg.robot.model.rsplit('/', 1)[-1]} ({robot.n} joints), protocol {cfg.robot.protocol}, "
          f"status {channels.status}, command {channels.command}"
          + (f", contact {channels.contact_results}" if robot.physics.contact is not None else "")
          + (f", viewer {channels.viewer_load_robot} / {channels.viewer_draw} at {viz_cfg.draw_rate_hz:g} Hz"
             if robot.viewer is not None else "")
          + f", LCM {cfg.lcm.url}, step {sim.time_step * 1e3:g} ms "
          + sim.stepper()
          + (f", driver {sim.driver}" if sim.driver != "drake_sim" else "")
          + (f", {len(sim.faults)} faults" if sim.faults else "")
          + (f", {len(sim.pushes)} pushes" if sim.pushes else ""), file=out, flush=True)
    try:
        summary = robot.run_realtime(duration, stop_event)
    finally:
        robot.close()
    print(format_summary(summary), file=out, flush=True)
    return summary


def run_from_config(path, duration: float | None = None, lcm_url: str | None = None,
                    viz: bool | None = None) -> int:
    """`hil sim CONFIG`: run_sim on the config file at `path`; exit status 0, or the real driver's when
    its model ended the process (kuka_driver: 134 as after std::terminate; franka_driver: 0). viz: as
    run_sim's."""
    summary = run_sim(load_config(path, {"lcm": {"url": lcm_url}} if lcm_url else None), duration, viz=viz)
    return summary["exit"]["status"] if "exit" in summary else 0
