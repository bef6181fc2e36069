"""Simulated servos driving the simulated robot (drivers.sim.physics), and `hil servo-bus-device`.

Per step h (sim.time_step), with each servo's joint mapping (direction d, gear ratio g, offset o):

    τ_servo,k = servo k's firmware loop (servo_sim.SimulatedServo.motor_torque)
    u_joint,k = d_k g_k τ_servo,k          -> one step of the plant's physics (gravity, limits, contact)
    q_servo,k = d_k g_k (q_k − o_k),  v_servo,k = d_k g_k v_k   -> the servos' present_* registers

The servos' own inertia and friction are not added to the plant (the URDF's joints carry the arm's);
their velocity feedback is applied as the damping it achieves over a step (servo_sim.motor_torque),
so that the small wrist inertias of a desk arm stay stable at the plant's step.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from drivers.sim.physics import Physics, joint_inertias

from .servo_bus import SimulatedServoBus
from .servo_config import ServoBusConfig, check_joints
from .servo_sim import SimulatedServo


class PlantLoad:
    """Couples `servos` (in config.joints order) to the actuated joints of `plant` (finalized)."""

    def __init__(self, plant, sim_config, config: ServoBusConfig, servos, joint_names: list[str]):
        check_joints(config, joint_names)
        self.physics = Physics(plant, sim_config)
        self.servos = servos
        joints = [plant.GetJointByName(j.joint) for j in config.joints]
        actuator = {plant.get_joint_actuator(i).joint().name(): plant.get_joint_actuator(i)
                    for i in plant.GetJointActuatorIndices()}
        self._qi = [j.position_start() for j in joints]
        self._vi = [j.velocity_start() for j in joints]
        self._ai = [actuator[j.joint].input_start() for j in config.joints]
        self._dg = [j.direction * j.gear_ratio for j in config.joints]
        self._off = [j.offset for j in config.joints]
        self._u = np.zeros(plant.num_actuators())
        # Each servo's load: its joint's inertia at the start, seen through the gear (m / g²).
        m = joint_inertias(plant, self.physics.q)
        self._m = [m[v] / j.gear_ratio ** 2 for v, j in zip(self._vi, config.joints)]
        self._h = self.physics.time_step_ns * 1e-9
        self._sync()

    def _sync(self) -> None:
        q, v = self.physics.q, self.physics.v
        for k, s in enumerate(self.servos):
            dg = self._dg[k]
            s.set_motion(dg * (q[self._qi[k]] - self._off[k]), dg * v[self._vi[k]], s.torque)

    def step(self) -> None:
        u = self._u
        for k, s in enumerate(self.servos):
            s.torque = s.motor_torque(self._h, self._m[k])
            u[self._ai[k]] = self._dg[k] * s.torque
        self.physics.step(u)
        self._sync()


def build_bus(cfg, link: str | None = None) -> SimulatedServoBus:
    """The simulated bus of a run config (robot, servo_bus and sim sections), its pty linked at
    `link` (default: servo_bus.device.link or servo_bus.port)."""
    from drivers.core.robot import build_plant, load_robot
    from drivers.run_config import required
    config, sim = required(cfg, "servo_bus"), cfg.sim
    robot = load_robot(cfg.robot)
    dev = config.device
    servos = [SimulatedServo(j.servo_model, j.id, inertia=dev.inertia, damping=dev.damping,
                             backdrive_damping=dev.backdrive_damping) for j in config.joints]
    for s in servos:
        s.set("return_delay_time", dev.return_delay_time)
    load = PlantLoad(build_plant(cfg.robot), sim, config, servos, robot.joint_names)
    return SimulatedServoBus(config.protocol, servos, link or config.device.link or config.port,
                             step=sim.time_step, plant=load,
                             lockstep_period=1.0 / config.rate if config.lockstep else None)


def run_from_config(cfg, duration: float | None = None, link: str | None = None, out=sys.stdout) -> int:
    """`hil servo-bus-device CONFIG`: the simulated bus until duration or Ctrl-C."""
    bus = build_bus(cfg, link)
    print(f"servo device ready: {len(bus.servos)} {bus.protocol} servos on {bus.path} "
          f"(linked at {bus.link.link}), driving {cfg.robot.model}", file=out, flush=True)
    t0 = time.monotonic()
    try:
        bus.serve(duration)
    except KeyboardInterrupt:
        pass
    finally:
        bus.link.unplug()
    print(f"servo device: {time.monotonic() - t0:.1f} s, {bus.instructions} instructions, {bus.answers} "
          f"answers, {bus.parser.stats.crc_errors} CRC errors", file=out, flush=True)
    return 0
