"""A legged robot behind the loop: robot.protocol floating_base, the project's floating-base protocol
(lcmt_hil_floating_base_status in, lcmt_hil_joint_command out; docs/wbc.md), on hil.hardware's seam.

    robot = legged_robot(cfg)                 # drivers.core.robot.Robot of the preset: the plant with its free
                                              # body, the actuated joints, the feet (robot.contacts)
    hw = FloatingBaseHardware(cfg, robot, lc, channels, clock)       # (hardware_for picks it)
    sim = make_legged_sim(cfg, robot, lc)                            # the simulated robot on the same plant

The status fills q = [quaternion wxyz; p_WB; joints] and v = [ω_WB; v_WB; joints] (the free body's
generalized coordinates, MultibodyPlant's), the joints' measured torque and the feet's contact
(hil.controller_api.ContactState). A command is the law's torque (num_pd 0). The safe command is
the drives' own damping, as Unitree's low-level command gives it: τ = 0, kp = 0, kd =
controller.whole_body.safe_damping on every joint, which the drives apply at their own rate, with or
without a fresh status.
"""
from __future__ import annotations

import dataclasses
import sys

import numpy as np

from drivers.core import _control
from drivers.core.config import RunConfig, channels_for
from drivers.core.robot import Robot
from drivers.legged_contacts import legged_feet
from drivers.sim.commanders import CommanderWatch
from drivers.sim.legged import SimulatedLeggedRobot
from dynamics_cy.planning.legged_models import load_legged
from messages import lcmt_hil_floating_base_status, lcmt_hil_joint_command
from messages.validation import MessageDecoder

from .controller_api import ContactState
from .hardware import Hardware

OWN_COMMANDS = 64          # the newest commands sent, to know ours when they loop back


@dataclasses.dataclass
class Commands:
    """The commands sent and whether the exit command went out."""
    sent: int = 0
    exit_sent: bool = False


def legged_robot(cfg: RunConfig) -> Robot:
    """The run config's legged preset as the loop's Robot: the plant (with the simulator's foot
    spheres and actuators, dynamics_cy.planning.legged_models.load_legged), its actuated joints in actuator order,
    the feet (controller.whole_body.contacts, else the preset's) and the standing q."""
    plant, contacts, q0 = load_legged(cfg.robot.model, simulation=True, feet=legged_feet(cfg))
    actuators = sorted((plant.get_joint_actuator(i) for i in plant.GetJointActuatorIndices()),
                       key=lambda a: a.input_start())
    return Robot(plant, "floating_base", [a.joint().name() for a in actuators], None, contacts=contacts, q0=q0)


def feet_of(contacts) -> dict:
    """{frame name: frame} of the contact points' frames, in order (the feet the status reports)."""
    feet = {}
    for c in contacts:
        feet.setdefault(c.frame.name(), c.frame)
    return feet


class FloatingBaseHardware(Hardware):
    """The floating-base protocol's status and command over LCM (hil.hardware.Hardware)."""

    protocol = "floating_base"
    drive_damping = True
    has_tau_external = False

    def __init__(self, cfg: RunConfig, robot: Robot, lc, channels, clock):
        plant = robot.plant
        nq, nv, na = plant.num_positions(), plant.num_velocities(), robot.n
        self.na = na
        self.q, self.v = np.zeros(nq), np.zeros(nv)
        self.q[0] = 1.0                                   # the identity rotation until the first status
        self.q_joints, self.v_joints = self.q[nq - na:], self.v[nv - na:]
        self.tau_measured, self.tau_commanded, self.tau_external = np.zeros(na), np.zeros(na), np.zeros(na)
        self.contact = ContactState(feet_of(robot.contacts))   # the robot's feet, in its order
        self._names: tuple | None = None                  # the status's contact names, and where ours are
        self._order = np.zeros(len(self.contact.names), dtype=np.int64)
        self.status = lcmt_hil_floating_base_status()     # the newest valid status (utime 0 until one)
        self.decoder = MessageDecoder(lcmt_hil_floating_base_status, channels.status)
        self._command_decoder = MessageDecoder(lcmt_hil_joint_command, channels.command)
        self.last_error = ""
        self.safe_damping = [float(cfg.controller.whole_body.safe_damping)] * na
        self.zeros = [0.0] * na
        self.cmd = lcmt_hil_joint_command()
        self.cmd.num_joints = na
        self.commands = Commands()
        self.write(0, None, None, None, commanding=False, publish=False)     # the largest command: the ring's size
        self.sent = _control.SentRing(len(self._encoded), OWN_COMMANDS)
        self.first_base: np.ndarray | None = None
        super().__init__(cfg, lc, channels, clock)

    # --- read -----------------------------------------------------------------------------------
    def _decode(self, data: bytes) -> int | None:
        """The status into q, v, the joints' torque and the contacts; −1 (no steady clock), or None for
        an invalid one (lcm-python's decode allocates the message: this protocol's statuses are Python
        objects)."""
        msg = self.decoder.decode(data)
        if msg is None:
            self.last_error = self.decoder.last_error
            return None
        if msg.num_joints != self.na:
            self.last_error = f"the status has {msg.num_joints} joints, the model {self.na}"
            return None
        contact, names = self.contact, tuple(msg.contact_names)
        if names != self._names:                          # the first status, or its feet changed
            missing = [foot for foot in contact.names if foot not in names]
            if missing:
                self.last_error = f"the status reports no contact for foot {', '.join(missing)} (it reports " \
                                  f"{', '.join(names) or 'none'})"
                return None
            self._order[:] = [names.index(foot) for foot in contact.names]
            self._names = names
        q, v = self.q, self.v
        q[:4], q[4:7], self.q_joints[:] = msg.base_quaternion, msg.base_position, msg.joint_position
        v[:3], v[3:6], self.v_joints[:] = msg.base_angular_velocity, msg.base_linear_velocity, msg.joint_velocity
        self.tau_measured[:] = msg.joint_torque
        for i, j in enumerate(self._order):
            contact.in_contact[i] = msg.contact[j]
            contact.force[i] = msg.contact_force[j]
        self.status = msg
        return -1

    def _first_status(self) -> None:
        self.first_base = self.q[4:7].copy()

    def _valid_command(self, data: bytes) -> bool:
        return self._command_decoder.decode(data) is not None

    # --- write ----------------------------------------------------------------------------------
    def write(self, now_ns: int, tau, q, v, commanding: bool, publish: bool = True) -> bool:
        """The command: `tau` (num_pd 0) while commanding, else the safe command (the drives' damping);
        stamped with the newest status's utime. False if `tau` is not finite (nothing sent)."""
        cmd = self.cmd
        cmd.utime = self.status.utime
        if commanding:
            if _control.first_nonfinite(tau) >= 0:
                return False
            cmd.tau, cmd.num_pd = tau.tolist(), 0
            cmd.q_desired = cmd.v_desired = cmd.kp = cmd.kd = []
        else:
            cmd.tau, cmd.num_pd = self.zeros, self.na
            cmd.q_desired = cmd.v_desired = cmd.kp = self.zeros
            cmd.kd = self.safe_damping
        self._encoded = data = cmd.encode()
        if publish:
            self.lc.publish(self.channels.command, data)
            self.sent.store(data)
            self.commands.sent += 1
        return True

    def write_exit(self, now_ns: int, tau) -> bool:
        """The exit command, once, as the loop leaves: the drives' damping."""
        self.commands.exit_sent = self.write(now_ns, tau, None, None, commanding=False)
        return self.commands.exit_sent

    def summary(self) -> dict:
        """The base's position at the end and its drift from the first status, whether every foot
        touches the ground."""
        if self.first_base is None:
            return {"base_position": None, "base_drift_m": None, "feet_in_contact": None}
        base = self.q[4:7]
        return {"base_position": base.tolist(), "base_drift_m": float(np.linalg.norm(base - self.first_base)),
                "feet_in_contact": bool(self.contact.in_contact.all())}


def make_legged_sim(cfg: RunConfig, robot: Robot, lc, *, viz=None) -> SimulatedLeggedRobot:
    """The simulated legged robot of the config's sim section on `robot`'s plant (initial positions:
    the preset's standing pose unless given; contact always on), on the config's channels."""
    sim = cfg.sim                                       # a copy changes these two, the config stays as loaded
    q0 = np.asarray(robot.q0).tolist() if sim.initial_positions is None else sim.initial_positions
    sim = dataclasses.replace(sim, initial_positions=q0, contact=dataclasses.replace(sim.contact, enabled=True))
    channels = channels_for(cfg)
    return SimulatedLeggedRobot(robot.plant, feet_of(robot.contacts), sim, lc, status_channel=channels.status,
                                command_channel=channels.command, contact_channel=channels.contact_results,
                                safe_damping=cfg.controller.whole_body.safe_damping, viz=viz)


def run_legged_sim(cfg: RunConfig, duration: float | None = None, stop=None, viz: bool | None = None, out=None) -> dict:
    """`hil sim CONFIG` for protocol floating_base: the simulated legged robot paced to the wall
    clock on cfg.lcm.url; prints a start line and the summary, returns the summary."""
    from drivers.core.config import open_lcm
    out = out or sys.stdout
    viz_cfg = cfg.viz
    if viz is not None:
        viz_cfg = dataclasses.replace(viz_cfg, enabled=viz)
    ch = channels_for(cfg)
    robot = make_legged_sim(cfg, legged_robot(cfg), open_lcm(cfg.lcm.url),
                            viz=viz_cfg if viz_cfg.enabled else None)
    robot.commanders = CommanderWatch.open(cfg.lcm.url, ch.command, round(cfg.sim.command_timeout * 1e9))
    print(f"hil sim: {cfg.robot.model} ({robot.na} joints, {len(robot.feet)} feet), protocol floating_base, "
          f"status {ch.status}, command {ch.command}, contact {ch.contact_results}, LCM {cfg.lcm.url}, "
          f"step {robot.config.time_step * 1e3:g} ms {robot.config.stepper()}", file=out, flush=True)
    summary = robot.run_realtime(duration, stop)
    print(f"hil sim: {summary['steps']} steps, {summary['sim_time_s']:g} s simulated in {summary['wall_time_s']:g} s; "
          f"late steps {summary['late_steps']}, resyncs {summary['resyncs']}; commands received "
          f"{summary['commands_received']}, rejected {summary['commands_rejected']}"
          + (f" ({summary['second_commander']} from a second commander)" if summary["second_commander"] else "")
          + (f"; {summary['diverged']}" if summary["diverged"] else ""), file=out, flush=True)
    return summary
