"""The loop against the simulated robot in one process: deterministic, faster than real time.

Both share one memq:// LCM, and one scheduler alternates them: each ControlLoop.update() is the
loop's tick (it reads the newest status and sends its command), then the simulator's step
(`sim.step_lockstep()`: it takes the command and advances once, command or not, as the robot's
clock runs on) which publishes the status the next tick uses. Nothing else steps the simulator
(`scheduled`: its own command callback only stores the command). The loop period must equal the
simulator's time step (a driver's status period, behind kuka_driver).

Viewer messages: with the config's viz section enabled, the simulated robot publishes them from
the plant's own state at the draw rate of simulated time (drivers.sim.SimulatedRobot, viz), so the
run can be watched in Meldis on a udpm:// LCM, or counted on memq://. A ViewerBridge passed as `viz`
goes to the loop instead (it draws the measured q at the loop's clock), and the simulator then
publishes none: one publisher per robot.
"""
from __future__ import annotations

import lcm

from drivers.core.config import RunConfig, channels_for
from drivers.core.robot import build_plant
from drivers.core.schema import ConfigError
from drivers.sim.robot import SimulatedRobot

from .hardware import robot_for
from .lifecycle import Mode
from .loop import ControlLoop


def make_lockstep(cfg: RunConfig, lc=None, viz=None, trace_every: int = 1, plant=None, robot=None,
                  **loop_options):
    """(loop, simulated robot) sharing `lc` (default: a new memq:// LCM), the loop CONFIGURED with the
    simulator, ready to run. `viz`: a ViewerBridge for the loop, or None: then the simulated robot
    publishes the viewer messages if the config's viz section is enabled (its `viewer`). `plant` (the
    simulated robot's, with its payload) and `robot` (the loop's drivers.core.robot.Robot): already loaded ones
    to reuse (default: loaded from cfg.robot). `loop_options`: ControlLoop's (controller, check_alloc,
    fault_on_overrun)."""
    lc = lc or lcm.LCM("memq://")
    sim_cfg = cfg.sim
    period_ns = int(round(1e9 / cfg.loop.rate_hz))
    # One command, one status: the loop's period is the driver's status period (kuka_driver: its
    # time_step; the plant steps through it), else the plant's step.
    key, step = ("sim.kuka_driver.time_step", sim_cfg.kuka_driver.time_step) if sim_cfg.driver == "kuka_driver" \
        else ("sim.time_step", sim_cfg.time_step)
    if round(step * 1e9) != period_ns:
        raise ConfigError(key, f"{step} s must equal the loop period 1/loop.rate_hz = {period_ns * 1e-9:g} s "
                               f"in lockstep")
    robot = robot or robot_for(cfg)
    sim = _simulated_robot(cfg, lc, viz, plant, robot)
    loop = ControlLoop(cfg, robot, lc, Mode.LOCKSTEP, viz=viz, trace_every=trace_every,
                       sim=sim, **loop_options).configure()
    return loop, sim


def _simulated_robot(cfg: RunConfig, lc, viz, plant=None, robot=None):
    """The simulated robot of the config: an arm (drivers.sim.SimulatedRobot) or, for a floating base,
    the legged robot on the loop's plant (hil.floating_base.make_legged_sim)."""
    viewer = cfg.viz if viz is None and cfg.viz.enabled else None
    if cfg.robot.protocol == "floating_base":
        from .floating_base import make_legged_sim
        return make_legged_sim(cfg, robot or robot_for(cfg), lc, viz=viewer)
    plant = plant or build_plant(cfg.robot, cfg.sim.payload, simulated=True, gripper=cfg.sim.gripper,
                                 objects=cfg.sim.objects)
    sim = SimulatedRobot(plant, cfg.sim, cfg.robot.protocol, channels_for(cfg), lc,
                         viz=cfg.viz if viz is None else None)
    sim.scheduled = True                  # the loop's update steps it (ControlLoop.update), nothing else
    return sim


def start_lockstep(cfg: RunConfig, order: str = "together", lead_s: float = 1.0, lc=None, viz=None,
                   trace_every: int = 1):
    """(loop, simulated robot) ready for loop.run(), started in `order`: "together" (the robot's first
    status, then the loop), "driver_first" (the robot runs lead_s alone, its statuses unheard, then
    the loop starts and hears the next) or "loop_first" (the loop ticks lead_s with no status, then
    the robot's first status)."""
    if order == "together":
        loop, sim = make_lockstep(cfg, lc, viz, trace_every)
        sim.publish_status()
        return loop, sim
    lc = lc or lcm.LCM("memq://")
    sim = _simulated_robot(cfg, lc, viz)
    if order == "driver_first":
        sim.publish_status()
        for _ in range(round(lead_s * 1e9 / sim.config.time_step_ns)):
            sim.tick()
        while lc.handle_timeout(0) > 0:       # published before anyone listened
            pass
    loop = ControlLoop(cfg, robot_for(cfg), lc, Mode.LOCKSTEP, viz=viz, trace_every=trace_every,
                       sim=sim).configure()
    if order == "loop_first":
        loop.activate()
        for _ in range(round(lead_s * cfg.loop.rate_hz)):
            loop.update()
        sim.publish_status()
    else:
        sim.advance()                         # its next status, as the loop starts listening
    return loop, sim


def run_lockstep(cfg: RunConfig, duration_s: float, lc=None, viz=None, on_tick=None, trace_every: int = 1):
    """Runs the loop against the simulator for `duration_s` of simulated time; returns (summary, loop, sim)."""
    loop, sim = make_lockstep(cfg, lc, viz, trace_every)
    sim.publish_status()
    return loop.run(duration_s, on_tick=on_tick), loop, sim


def run_closed(loop, sim, duration_s: float, on_tick=None, stop=None) -> dict:
    """The simulator's first status, then loop.run(duration_s, stop, on_tick) (a ControlLoop or a
    hil.station.StationLoop), both closed on every exit path; returns the summary."""
    try:
        sim.publish_status()
        return loop.run(duration_s, stop=stop, on_tick=on_tick)
    finally:
        loop.close()
        sim.close()
