"""One simulated serial servo: its control table with the firmware's rules, and its motor.

Control-table semantics (the vendors' manuals): registers hold their defaults at power-on and
after REBOOT, the EEPROM ones their saved values; a host's write is all or nothing, and refused
when it touches a read-only register (ACCESS), covers part of a register (DATA_LENGTH), holds a
value outside the register's range (DATA_RANGE) or a goal beyond its limit (DATA_LIMIT).
Dynamixel (X-series e-manual) also refuses an EEPROM register while torque is on (ACCESS) and a
goal register while its Bus Watchdog has tripped (DATA_RANGE), says why in the status packet's
error byte, and saves every EEPROM write it takes. Feetech STS servos take EEPROM writes with
torque on: their Lock register (55) decides only whether the value is saved (0) or lasts until
power-off (1, its power-on value); their status packets carry no instruction error, so a refused
write is dropped silently. A hardware error (`fault`) is latched in Hardware Error Status (Feetech:
the status register, 65), shows in every status packet (Dynamixel: the ALERT bit; Feetech: the
error byte is those bits) and turns the torque off where the Shutdown register (Dynamixel, 63;
default overload, electrical shock, overheating) or Unloading Condition (Feetech, 19; default
overload, over-current, overheating) selects it.

Bus Watchdog (X-series, RAM 98; e-manual): with torque on and a value n in 1..127, a silence s
(time since the last instruction packet addressed to the servo, its ID or broadcast) with
s > n · 20 ms trips it: the register reads -1, the servo stops (goal position = present position
in the position modes, goal velocity 0, goal current 0 in current mode, goal PWM 0 in PWM mode)
and refuses goal writes with DATA_RANGE until 0 is written to it.

Motor model (per servo, output shaft, semi-implicit Euler): J v̇ = τ_motor − b v + τ_ext, with
τ_motor from the operating mode: current mode τ = k_t i (i = goal current, clipped to the current
limit); position mode a P loop on ticks into PWM, u = K_P e / u_max clipped to ±1, and
τ = τ_stall u − c v with the velocity feedback c = τ_stall (K_D' + 1 / v_no_load) of the D gain and
the back-EMF (e = goal − present position; K_P = P / 128, K_D = D / 16 per ms of tick rate for
Dynamixel; K_P = P / 32 / 128 · u_max for Feetech's coefficients); torque off τ = −c_b v, the
friction of the back-driven gear train (an unpowered arm sags, it does not swing).
"""
from __future__ import annotations

import math
from struct import Struct

import numpy as np

from .dynamixel import ErrorCode
from .servo_models import BUS_WATCHDOG_UNIT, PWM_MAX, ServoModel

_FORMATS = {1: "B", 2: "H", 4: "I"}
GOALS = ("goal_pwm", "goal_current", "goal_velocity", "goal_position")   # refused once the watchdog trips


class SimulatedServo:
    """A servo of `model` with ID `servo_id`, inertia `inertia` [kg m²] and viscous friction
    `damping` [N m s/rad] at the output; `external_torque` [N m] is the load's torque on it."""

    def __init__(self, model: ServoModel, servo_id: int, *, inertia: float = 5e-3, damping: float = 0.02,
                 no_load_speed: float = 5.0, backdrive_damping: float = 0.5):
        self.model = model
        self.table = bytearray(model.table_size + 1)
        self.owner = [None] * len(self.table)
        for reg in model.registers.values():
            for a in reg.span:
                self.owner[a] = reg
        self._structs = {name: Struct(model.byte_order + _FORMATS[r.size]) for name, r in model.registers.items()}
        self._spans = {}          # (address, end) -> the registers a write there touches
        self.dynamixel = model.protocol == "dynamixel"
        self.inertia, self.damping, self.no_load_speed = inertia, damping, no_load_speed
        self.backdrive_damping = backdrive_damping
        self.external_torque = 0.0
        self.q = self.v = self.torque = 0.0
        self.silence = 0.0            # s since the last instruction packet addressed to it (the bus's clock)
        self.saved = {}               # EEPROM register name -> the value a power cycle restores
        self._watchdog = model.registers.get("bus_watchdog")
        self._shutdown = "shutdown" if self.dynamixel else "unloading_condition"
        self.power_on(servo_id)

    def power_on(self, servo_id: int | None = None) -> None:
        """Every register to its default, or for EEPROM to its saved value when servo_id is None (a
        power cycle, or Dynamixel's REBOOT); a new servo of ID servo_id otherwise."""
        for reg in self.model.registers.values():
            self.set(reg.name, reg.default if servo_id is not None else self.saved.get(reg.name, reg.default))
        if servo_id is not None:
            self.set("id", servo_id)
        self.set("present_position", round(self.model.rad_to_ticks(self.q)))
        self.set("goal_position", self.get("present_position"))
        self.silence = 0.0

    # --- registers ---------------------------------------------------------------------------------
    @property
    def servo_id(self) -> int:
        return self.table[self.model.registers["id"].address]

    def get(self, name: str) -> int:
        """A register's value, sign decoded."""
        reg = self.model.registers[name]
        return self.model.decode(name, self._structs[name].unpack_from(self.table, reg.address)[0])

    def set(self, name: str, value: int) -> None:
        """Stores a register's value (firmware side: no access rules; an EEPROM value is saved)."""
        reg = self.model.registers[name]
        self._structs[name].pack_into(self.table, reg.address, self.model.encode(name, int(value)))
        if reg.eeprom:
            self.saved[name] = int(value)

    def read(self, address: int, length: int):
        """The bytes of a READ, or None when the range leaves the table."""
        if address + length > len(self.table) - 1:
            return None
        return self.table[address:address + length]

    def write(self, address: int, data) -> int:
        """A host's WRITE: the Dynamixel error code (0 done); all or nothing."""
        end = address + len(data)
        if end > len(self.table) - 1:
            return ErrorCode.ACCESS
        regs = self._spans.get((address, end))
        if regs is None:
            regs = self._spans[address, end] = self._registers(address, end)
        torque_on = self.get("torque_enable") != 0
        for reg in regs:
            if not reg.writable or (reg.eeprom and torque_on and self.dynamixel):
                return ErrorCode.ACCESS
        for reg in regs:
            if reg.address < address or reg.address + reg.size > end:
                return ErrorCode.DATA_LENGTH
        tripped = self.watchdog_tripped
        for reg in regs:
            value = self.model.decode(reg.name, self._structs[reg.name].unpack_from(data, reg.address - address)[0])
            high = reg.high or (1 << (8 * reg.size)) - 1
            if not reg.low <= value <= high or (tripped and reg.name in GOALS):
                return ErrorCode.DATA_RANGE
            if reg.name == "operating_mode" and value not in self.model.modes.values():
                return ErrorCode.DATA_RANGE
            if reg.name == "goal_position" and self.get("operating_mode") == self.model.modes["position"] \
                    and not self.get("min_position_limit") <= value <= self.get("max_position_limit"):
                return ErrorCode.DATA_LIMIT
            if reg.name == "goal_current" and abs(value) > self.get("current_limit"):
                return ErrorCode.DATA_LIMIT
        self.table[address:end] = data
        if any(r.name == "torque_enable" for r in regs) and self.get("torque_enable"):
            self.set("goal_position", self.get("present_position"))   # hold where it is, as on enable
        if self.dynamixel or self.get("lock") == 0:                    # Feetech: saved only when unlocked
            for reg in regs:
                if reg.eeprom:
                    self.saved[reg.name] = self.get(reg.name)
        return ErrorCode.NONE

    def _registers(self, address: int, end: int) -> list:
        regs = []
        for a in range(address, end):
            reg = self.owner[a]
            if reg is not None and (not regs or regs[-1] is not reg):
                regs.append(reg)
        return regs

    # --- status ------------------------------------------------------------------------------------
    @property
    def error_byte(self) -> int:
        """The error byte of this servo's status packets (ALERT / Feetech's error bits)."""
        hw = self.get("hardware_error_status")
        if self.dynamixel:
            return 0x80 if hw else 0
        return hw

    def fault(self, bits: int) -> None:
        """A hardware error: latched in Hardware Error Status; torque off if Shutdown (Feetech:
        Unloading Condition) selects one of its bits."""
        self.set("hardware_error_status", self.get("hardware_error_status") | bits)
        if bits & self.get(self._shutdown):
            self.set("torque_enable", 0)

    # --- bus watchdog ------------------------------------------------------------------------------
    @property
    def watchdog_tripped(self) -> bool:
        return self._watchdog is not None and self.get("bus_watchdog") < 0

    def watch(self, dt: float) -> None:
        """Advances the silence by dt [s] (the bus's clock) and trips the Bus Watchdog past its time."""
        self.silence += dt
        if self._watchdog is None:
            return
        n = self.get("bus_watchdog")
        if n > 0 and self.silence > n * BUS_WATCHDOG_UNIT and self.get("torque_enable"):
            self.set("bus_watchdog", -1)
            m, mode = self.model, self.get("operating_mode")
            if mode == m.modes.get("current"):
                self.set("goal_current", 0)
            elif mode == m.modes.get("velocity"):
                self.set("goal_velocity", 0)
            elif mode == m.modes.get("pwm"):
                self.set("goal_pwm", 0)
            else:                                  # the position modes hold where they are
                self.set("goal_position", self.get("present_position"))

    # --- motor -------------------------------------------------------------------------------------
    def motor_torque(self, h: float = 0.0, m: float = 0.0) -> float:
        """τ_motor [N m] at the output shaft that the firmware's loop applies now (0 with torque off).

        Its velocity feedback −c v (back-EMF and the D gain) is applied, given a step h [s] and the
        inertia m [kg m²] it drives, as the damping a loop much faster than h achieves over the step,
        c_eff = (m/h)(1 − exp(−c h/m)): ≈ c for c h ≪ m and stable for any c under the explicit
        treatment of a semi-implicit Euler step (h = 0: c itself). With torque off the motor is free
        and only the back-driven gear train resists: −c_b v, c_b = backdrive_damping."""
        m_ = self.model
        if not self.get("torque_enable"):
            return -self._effective(self.backdrive_damping, h, m) * self.v
        mode = self.get("operating_mode")
        if m_.has_current_control and mode == m_.modes["current"]:
            limit = self.get("current_limit")
            return m_.torque_constant * max(-limit, min(limit, self.get("goal_current"))) * m_.current_unit
        if mode != m_.modes["position"]:
            return 0.0
        err = self.get("goal_position") - self.get("present_position")
        ticks_per_rad = m_.ticks_per_rev / (2 * math.pi)
        if self.dynamixel:
            u = self.get("position_p_gain") / 128.0 * err / PWM_MAX
            c_u = self.get("position_d_gain") / 16.0 * ticks_per_rad * 1e-3 / PWM_MAX
        else:
            u = self.get("position_p_gain") / 32.0 * err / 128.0
            c_u = self.get("position_d_gain") / 32.0 * ticks_per_rad * 1e-3
        c = self._effective(m_.stall_torque * (c_u + 1.0 / self.no_load_speed), h, m)
        return m_.stall_torque * max(-1.0, min(1.0, u)) - c * self.v

    @staticmethod
    def _effective(c: float, h: float, m: float) -> float:
        """The damping c [N m s/rad] achieves over a step h on inertia m: (m/h)(1 − exp(−c h/m))."""
        return m / h * (1.0 - math.exp(-c * h / m)) if h > 0 and m > 0 else c

    def step(self, dt: float) -> None:
        """Advances the servo's own motor and load model by dt [s] (no plant)."""
        tau = self.motor_torque(dt, self.inertia)
        self.v += dt * (tau - self.damping * self.v + self.external_torque) / self.inertia
        self.q += dt * self.v
        self.set_motion(self.q, self.v, tau)

    def set_motion(self, q: float, v: float, tau: float) -> None:
        """The output shaft's state [rad, rad/s] and torque [N m], e.g. from a plant; refreshes present_*."""
        self.q, self.v, self.torque = q, v, tau
        self._publish()

    def _publish(self) -> None:
        m = self.model
        self.set("present_position", round(m.rad_to_ticks(self.q)))
        self.set("present_velocity", round(self.v / m.velocity_unit))
        if m.current_unit:
            i = self.torque / m.torque_constant / m.current_unit
            self.set("present_current", int(np.clip(round(i), -32767, 32767)))
        if "present_load" in m.registers:
            self.set("present_load", int(np.clip(round(1000 * self.torque / m.stall_torque), -1000, 1000)))
        self.set("moving", int(abs(self.v) > 0.01))
