"""The state side of the servo-bus driver: the rows one SYNC READ fills (one per servo: the bytes of
its state block), their typed views, and their decoding into joint units.

State block (start address, length, field offsets): Dynamixel X-series 126..135 (present current or
load, velocity, position), Feetech STS 56..70 (position, velocity, load, voltage, temperature,
status, current); little-endian, Feetech velocity and current sign-magnitude (sign in bit 15). Per
joint (d direction, g gear ratio, k_t torque constant, c current unit):

    q = offset + d · 2π (ticks − center) / (ticks_per_rev · g)      v = d · velocity_unit · raw / g
    τ = d g k_t c · raw   (present current)        τ = d g · stall torque · raw / 1000   (present load)

Hand-written over preallocated arrays (ufuncs with out=, 0-d constants, rows written by address):
storing an answer and decoding a read allocate nothing.
"""
from __future__ import annotations

import math
from ctypes import memmove

import numpy as np

from .dynamixel import ALERT

DXL_BLOCK = (126, 10, {"effort": 0, "velocity": 2, "position": 6})
FT_BLOCK = (56, 15, {"position": 0, "velocity": 2, "effort": 13, "load": 4, "error": 9})


class ServoState:
    """The state of servos `ids` for `joints` (ServoJoint, the driver's order) on a Dynamixel or a
    Feetech bus: `rows[k]` holds servo k's state block, `errors[k]` its status error byte,
    `received[k]` whether it answered this read; decode() fills q, v, tau [rad, rad/s, N·m]."""

    def __init__(self, joints, ids, dynamixel: bool):
        models = [j.servo_model for j in joints]
        n = len(joints)
        self.dynamixel = dynamixel
        self.start, self.width, offsets = DXL_BLOCK if dynamixel else FT_BLOCK
        self.rows = np.zeros((n, self.width), np.uint8)
        self.at = self.rows.ctypes.data          # answers are copied in by address: no view per packet
        pos_t, vel_t, eff_t = ("<i4", "<i4", "<i2") if dynamixel else ("<u2", "<u2", "<u2")
        self.pos = np.ndarray((n,), pos_t, self.rows, offsets["position"], (self.width,))    # ticks
        self._vel = np.ndarray((n,), vel_t, self.rows, offsets["velocity"], (self.width,))
        self._eff = np.ndarray((n,), eff_t, self.rows, offsets["effort"], (self.width,))
        self._hw = None if dynamixel else self.rows[:, offsets["error"]]
        self.slot = np.full(256, -1, np.intp)   # servo ID -> row
        self.slot[ids] = np.arange(n)
        self.slots = self.slot.tolist()          # the same as Python ints, for the per-packet callbacks
        self.received = np.zeros(n, bool)
        self.errors = np.zeros(n, np.uint8)
        self._flags = np.zeros(n, np.uint8)      # per servo: the error bits that latch a fault
        self._flag_bytes = memoryview(self._flags)
        d = np.array([j.direction for j in joints], float)
        g = np.array([j.gear_ratio for j in joints])
        kt = np.array([j.torque_constant or m.torque_constant for j, m in zip(joints, models)])
        self.center = np.array([m.center for m in models], float)
        self.q_scale = d * 2 * math.pi / np.array([m.ticks_per_rev for m in models]) / g
        self.q_off = np.array([j.offset for j in joints])
        self.v_scale = d * np.array([m.velocity_unit for m in models]) / g
        self.t_scale = np.array([d_ * g_ * (k * m.current_unit if "present_current" in m.registers
                                             else m.stall_torque / 1000.0)     # present_load: 0.1 % of stall
                                 for d_, g_, k, m in zip(d, g, kt, models)])
        self.q, self.v, self.tau = np.zeros(n), np.zeros(n), np.zeros(n)
        self._tmp_i, self._tmp_s = np.zeros(n, np.int64), np.zeros(n, np.int64)
        self._k = {c: np.array(c, np.int64) for c in (1, 2, 15, 0x7FFF)}   # a Python scalar in a ufunc
        self._alert = np.array(ALERT, np.uint8)                              # call is allocated per call

    def store(self, k: int, address: int, error: int) -> bool:
        """Row k := the `width` bytes at `address`, its error byte `error`; True when this is servo
        k's first answer of the read (received[k] was not set)."""
        memmove(self.at + k * self.width, address, self.width)
        self.errors[k] = error
        if self.received[k]:
            return False
        self.received[k] = True
        return True

    def faulty(self) -> int:
        """The first servo reporting a hardware error (Dynamixel ALERT bit; Feetech error byte or
        status register), or -1."""
        if self.dynamixel:
            np.bitwise_and(self.errors, self._alert, out=self._flags)
        else:
            np.bitwise_or(self._hw, self.errors, out=self._flags)
        return int(np.flatnonzero(self._flags)[0]) if max(self._flag_bytes) else -1

    def decode(self) -> None:
        """q, v, tau in joint units from the rows."""
        q, v, tau = self.q, self.v, self.tau
        np.subtract(self.pos, self.center, out=q)
        q *= self.q_scale
        q += self.q_off
        if self.dynamixel:
            np.copyto(v, self._vel, casting="unsafe")
            np.copyto(tau, self._eff, casting="unsafe")
        else:
            self._sign_magnitude(self._vel, v)
            self._sign_magnitude(self._eff, tau)
        v *= self.v_scale
        tau *= self.t_scale

    def _sign_magnitude(self, raw, out) -> None:
        """out = raw & 0x7FFF, negated where bit 15 is set."""
        m, s, k = self._tmp_i, self._tmp_s, self._k
        np.copyto(m, raw, casting="unsafe")
        np.right_shift(m, k[15], out=s)                   # the sign bit
        np.bitwise_and(m, k[0x7FFF], out=m)               # the magnitude
        np.multiply(s, k[2], out=s)
        np.subtract(k[1], s, out=s)                       # 1 − 2 sign
        np.multiply(m, s, out=m)
        np.copyto(out, m, casting="unsafe")
