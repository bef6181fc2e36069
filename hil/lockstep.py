"""The loop against the simulated robot in one process: deterministic, faster than real time.

Both share one memq:// LCM; each command the loop publishes advances the simulator one step, and
the simulator's status is what the loop's next tick uses. The loop period must equal the
simulator's time step.

Viewer messages: with the config's viz section enabled, the simulated robot publishes them from
the plant's own state at the draw rate of simulated time (drivers.sim.SimulatedRobot, viz), so the
run can be watched in Meldis on a udpm:// LCM, or counted on memq://. A ViewerBridge passed as `viz`
goes to the loop instead (it draws the measured q at the loop's clock), and the simulator then
publishes none: one publisher per robot.
"""
from __future__ import annotations

import lcm

from drivers.sim.config import load_sim_config
from drivers.sim.robot import SimulatedRobot

from .config import RunConfig, channels_for, viz_config
from .loop import ControlLoop
from .robot import build_plant, load_robot
from .schema import ConfigError


def make_lockstep(cfg: RunConfig, lc=None, viz=None, trace_every: int = 1):
    """(loop, simulated robot) sharing `lc` (default: a new memq:// LCM), ready to run. `viz`: a
    ViewerBridge for the loop, or None: then the simulated robot publishes the viewer messages if
    the config's viz section is enabled (its `viewer`)."""
    lc = lc or lcm.LCM("memq://")
    sim_cfg = load_sim_config(cfg.sim or {}, "sim")
    period_ns = int(round(1e9 / cfg.loop.rate_hz))
    if sim_cfg.time_step_ns != period_ns:
        raise ConfigError("sim.time_step", f"{sim_cfg.time_step} s must equal the loop period 1/loop.rate_hz = "
                                           f"{period_ns * 1e-9:g} s in lockstep")
    sim = SimulatedRobot(build_plant(cfg.robot, simulated=True), sim_cfg, cfg.robot.protocol, channels_for(cfg), lc,
                         viz=viz_config(cfg) if viz is None else None)
    loop = ControlLoop(cfg, load_robot(cfg.robot), lc, mode="lockstep", viz=viz, trace_every=trace_every)
    loop.sim = sim
    return loop, sim


def run_lockstep(cfg: RunConfig, duration_s: float, lc=None, viz=None, on_tick=None, trace_every: int = 1):
    """Runs the loop against the simulator for `duration_s` of simulated time; returns (summary, loop, sim)."""
    loop, sim = make_lockstep(cfg, lc, viz, trace_every)
    sim.publish_status()
    return loop.run(duration_s, on_tick=on_tick), loop, sim
