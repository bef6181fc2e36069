"""Whole-body torque control of a legged robot over LCM: lcmt_hil_floating_base_status in,
lcmt_hil_joint_command out, one planning.whole_body QP per status.

    ctl = LeggedTorqueControl(plant, contacts, lc).configure()   # the QP, its buffers, the subscription
    ctl.activate()                                    # acts on each FLOATING_BASE_STATUS from now on
    ... each status: update(data): q, v from the base and joints; the QP; the torques as JOINT_COMMAND
    ctl.deactivate()                                  # stops listening; safe_command() sends the exit command

The lifecycle is hil.lifecycle's, as the arms' controllers (hil.controllers); update() is driven by
the status stream (one per status) and allocates the command message's lists (lcm-python's encode).

The first status sets the targets (hold: CoM, base orientation, posture and feet where they are);
change them on ``ctl.wbc`` (``com_target``, ``active``, ...). Faults go to the safe state, which it
keeps (latched) and reports in ``fault``: the QP has no solution, the status is invalid (wrong joint
count, non-finite values), or a foot the controller holds in contact reports no contact for
``foot_loss_ticks`` consecutive statuses after it has touched once, or (``fail``, from the loop
around it: hil.legged_loop) the status stopped coming. In the safe state every command
is pure joint damping (tau = 0, kp = 0, kd = safe_damping): the drives' PD brings the legs to rest.
"""
from __future__ import annotations

import time

import numpy as np

from messages import lcmt_hil_floating_base_status, lcmt_hil_joint_command
from messages.channels import FLOATING_BASE_STATUS, JOINT_COMMAND
from messages.validation import MessageDecoder
from planning.whole_body import WholeBodyController, qp_status_text

from .lifecycle import Lifecycle, LifecycleState


class LeggedTorqueControl(Lifecycle):
    def __init__(self, plant, contacts, lc, *, mu: float = 0.6, f_min: float = 0.0, effort_limits=None, weights=None,
                 safe_damping: float = 2.0, foot_loss_ticks: int = 5,
                 status_channel: str = FLOATING_BASE_STATUS, command_channel: str = JOINT_COMMAND):
        self.plant, self.contacts, self.lc = plant, contacts, lc
        self.status_channel, self.command_channel = status_channel, command_channel
        self.qp = dict(mu=mu, f_min=f_min, effort_limits=effort_limits, weights=weights)
        self.foot_loss_ticks = int(foot_loss_ticks)
        self.safe_damping = float(safe_damping)
        self.subscription = None

    def on_configure(self) -> None:
        plant = self.plant
        self.wbc = WholeBodyController(plant, self.contacts, **self.qp)
        self.nq, self.nv, self.na = plant.num_positions(), plant.num_velocities(), self.wbc.na
        self.q, self.v = np.zeros(self.nq), np.zeros(self.nv)
        self.decoder = MessageDecoder(lcmt_hil_floating_base_status, self.status_channel)
        self.cmd = lcmt_hil_joint_command()
        self.cmd.num_joints = self.na
        self.fault: str | None = None
        self.ticks = 0
        self.received = 0                  # statuses handled (valid or not)
        self.compute_ns = 0                # status decoded -> command published, the newest
        self.status: lcmt_hil_floating_base_status | None = None
        self._touched = np.zeros(len(self.wbc.groups), dtype=bool)
        self._lost = np.zeros(len(self.wbc.groups), dtype=int)
        self._foot_of_group: list[int] | None = None
        # Subscribed from here on: LCM drops the messages of channels nobody subscribes to, and the
        # robot's first status may come before activate(). Handled statuses are acted on once active.
        self.subscription = self.lc.subscribe(self.status_channel, self._on_status)

    def on_activate(self) -> None:
        """Each status handled from now on is an update()."""
        if self.subscription is None:
            self.subscription = self.lc.subscribe(self.status_channel, self._on_status)

    def on_deactivate(self) -> None:
        """Stops listening to the status (no command after this one but those sent by hand)."""
        if self.subscription is not None:
            self.lc.unsubscribe(self.subscription)
            self.subscription = None

    def _on_status(self, channel, data) -> None:
        if self.lifecycle is not LifecycleState.ACTIVE:
            return
        start = time.perf_counter_ns()
        self.received += 1
        self.update(data)
        self.compute_ns = time.perf_counter_ns() - start

    def update(self, data) -> None:
        """One status in, one command out: the QP's torques, or the safe command on a fault."""
        msg = self.decoder.decode(data)
        if msg is None:
            return self._safe(f"invalid status: {self.decoder.last_error}")
        if msg.num_joints != self.na:
            return self._safe(f"status has {msg.num_joints} joints, the model {self.na}")
        self.status = msg
        self.q[:4], self.q[4:7], self.q[7:] = msg.base_quaternion, msg.base_position, msg.joint_position
        self.v[:3], self.v[3:6], self.v[6:] = msg.base_angular_velocity, msg.base_linear_velocity, msg.joint_velocity
        if self.fault is None:
            self._check_feet(msg)
        if self.fault is not None:
            return self._safe(self.fault)
        if self.ticks == 0:
            self.wbc.hold(self.q)
        if not self.wbc.solve(self.q, self.v):
            return self._safe(f"whole-body QP not solved ({qp_status_text(self.wbc.status)})")
        self.ticks += 1
        self.cmd.utime = msg.utime
        self.cmd.tau = self.wbc.tau.tolist()
        self.cmd.num_pd = 0
        self.cmd.q_desired = self.cmd.v_desired = self.cmd.kp = self.cmd.kd = []
        self.lc.publish(self.command_channel, self.cmd.encode())

    def fail(self, why: str) -> None:
        """A fault found outside the controller (e.g. a status timeout): latch it, command the safe state."""
        self._safe(why)

    def _check_feet(self, msg) -> None:
        if self._foot_of_group is None:
            names = list(msg.contact_names)
            missing = [g.name for g in self.wbc.groups if g.name not in names]
            if missing:
                self.fault = f"the status reports no contact for foot {', '.join(missing)}"
                return
            self._foot_of_group = [names.index(g.name) for g in self.wbc.groups]
        for gi, fi in enumerate(self._foot_of_group):
            touching = bool(msg.contact[fi])
            self._touched[gi] |= touching
            held = self.wbc.active[gi] and self._touched[gi]
            self._lost[gi] = self._lost[gi] + 1 if held and not touching else 0
            if self._lost[gi] >= self.foot_loss_ticks:
                self.fault = f"foot {self.wbc.groups[gi].name} lost contact for {self._lost[gi]} statuses"

    def _safe(self, why: str) -> None:
        """Latch the fault and command joint damping."""
        self.fault = self.fault or why
        self.safe_command()

    def safe_command(self) -> None:
        """Publish the safe command (joint damping) without latching a fault: the exit-path command."""
        self.cmd.utime = self.status.utime if self.status is not None else 0
        self.cmd.tau = [0.0] * self.na
        self.cmd.num_pd = self.na
        self.cmd.q_desired = [0.0] * self.na
        self.cmd.v_desired = [0.0] * self.na
        self.cmd.kp = [0.0] * self.na
        self.cmd.kd = [self.safe_damping] * self.na
        self.lc.publish(self.command_channel, self.cmd.encode())
