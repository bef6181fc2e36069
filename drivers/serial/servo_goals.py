"""The command side of the servo-bus driver: joint torques τ turned into each servo's goal register
for its control mode, sent as one SYNC WRITE per goal register present on the bus.

Per joint (d direction, g gear ratio, k_t torque constant [N·m/A], c the model's current unit [A],
K the servo's position stiffness [N·m per tick of error] from its P gain, `servo_stiffness`):

    current mode    u = τ / (d g k_t c)             goal current, clipped to ±current_limit
    position mode   u = ticks + τ / (d g K)         goal position, clipped to the position limits

so that in position mode the servo's own P loop applies τ at the present position `ticks`. A mixed
bus (servo_config.ServoBusConfig.joint_control) gets two SYNC WRITEs a cycle, goal current for the
current-mode IDs and goal position for the position-mode IDs. Hand-written over preallocated numpy
arrays (ufuncs with out=, ndarray.take into scratch; tracemalloc-checked in
tests/serial/test_servo_driver_alloc.py): no array is allocated per command or per cycle.
"""
from __future__ import annotations

import numpy as np

from . import dynamixel as dxl
from . import feetech as ft
from .servo_models import PWM_MAX


def servo_stiffness(model, kp: int) -> float:
    """N·m per tick of position error that a servo's position loop applies (below saturation)."""
    if model.protocol == "dynamixel":
        return model.stall_torque * kp / 128.0 / PWM_MAX
    return model.stall_torque * kp / 32.0 / 128.0


def _register(models, index, name: str) -> int:
    """The address of register `name`, the same in models[k] for every k in index (one SYNC WRITE)."""
    places = {(models[k].reg(name).address, models[k].reg(name).size) for k in index}
    if len(places) != 1:
        raise ValueError(f"{name} differs between the models {sorted({models[k].name for k in index})}: "
                         f"one SYNC WRITE cannot set it")
    return places.pop()[0]


class GoalWrite:
    """The SYNC WRITE of one goal register (`packet`, a prebuilt SyncWritePacket of servos `ids`) for
    the joints at `index` of the driver's joint order, with the register's limits per joint `low`, `high`."""

    def __init__(self, packet, ids, index, low, high):
        self.packet, self.ids, self.index = packet, list(ids), np.asarray(index, np.intp)
        self.low, self.high = np.asarray(low, float), np.asarray(high, float)
        self._u = np.zeros(len(self.index))

    def set(self, u) -> None:
        """The register values of these joints from u (every joint, register units): rounded, clipped."""
        u.take(self.index, 0, self._u, "clip")     # the method, mode clip: no temporaries (np.take, np.clip
        np.maximum(self._u, self.low, out=self._u)  # and mode raise make some)
        np.minimum(self._u, self.high, out=self._u)
        np.rint(self._u, out=self._u)
        np.copyto(self.packet.values, self._u, casting="unsafe")


class ServoGoals:
    """The goal SYNC WRITEs of servos `ids` for `joints` (ServoJoint, the driver's order), each in its
    control mode `controls[k]` ("current" or "position") with position P gain `kp[k]`.

    command(τ) when an LCM command arrives (goal currents are final then), track(ticks) each cycle
    (goal positions from the present ones), hold(ticks) before the torque goes on, packets() to send."""

    def __init__(self, joints, controls, ids, kp, dynamixel: bool):
        models = [j.servo_model for j in joints]
        n = len(joints)
        self.current = np.array([c == "current" for c in controls])
        self.scale = np.empty(n)              # u = τ · scale (+ present ticks in position mode)
        for k, (j, m) in enumerate(zip(joints, models)):
            dg = j.direction * j.gear_ratio
            self.scale[k] = (1.0 / (dg * (j.torque_constant or m.torque_constant) * m.current_unit)
                             if self.current[k] else 1.0 / (dg * servo_stiffness(m, kp[k])))
        cur, pos = np.flatnonzero(self.current), np.flatnonzero(~self.current)
        sub = [ids[k] for k in cur], [ids[k] for k in pos]
        self.currents = self.positions = None
        if cur.size:                          # goal current (Dynamixel X-series only), ±current_limit
            limit = [models[k].reg("current_limit").default for k in cur]
            self.currents = GoalWrite(dxl.SyncWritePacket(_register(models, cur, "goal_current"), "<i2", sub[0]),
                                      sub[0], cur, np.negative(limit), limit)
        if pos.size:
            address = _register(models, pos, "goal_position")
            packet = (dxl.SyncWritePacket(address, "<i4", sub[1]) if dynamixel
                      else ft.SyncWritePacket(address, "<u2", sub[1]))
            self.positions = GoalWrite(packet, sub[1], pos, [models[k].reg("min_position_limit").default for k in pos],
                                       [models[k].reg("max_position_limit").default for k in pos])
        self.writes = tuple(w for w in (self.currents, self.positions) if w is not None)
        self._u_cmd, self._u = np.zeros(n), np.zeros(n)

    def command(self, torque) -> None:
        """A new joint-torque command (every joint, the driver's order and sign)."""
        np.multiply(torque, self.scale, out=self._u_cmd)
        if self.currents is not None:
            self.currents.set(self._u_cmd)

    def track(self, ticks) -> None:
        """Goal positions for the present positions `ticks` (every joint's, e.g. a strided view)."""
        if self.positions is not None:
            np.copyto(self._u, ticks, casting="unsafe")       # then add: a mixed-type add buffers
            self._u += self._u_cmd
            self.positions.set(self._u)

    def hold(self, ticks) -> None:
        """Goal positions = the present ones (before the torque goes on: no jump)."""
        if self.positions is not None:
            np.copyto(self._u, ticks, casting="unsafe")
            self.positions.set(self._u)

    def packets(self) -> tuple:
        """The sealed SYNC WRITEs (memoryviews, valid until the next call)."""
        if self.positions is None or self.currents is None:
            return (self.writes[0].packet.seal(),)
        return self.currents.packet.seal(), self.positions.packet.seal()

    def describe(self) -> str:
        """E.g. '2 current (IDs 3, 4), 2 position (IDs 1, 2)'."""
        return ", ".join(f"{len(w.ids)} {name} (IDs {', '.join(map(str, w.ids))})"
                         for name, w in (("current", self.currents), ("position", self.positions)) if w is not None)
