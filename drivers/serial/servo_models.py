"""Control tables of real serial servos and their unit conversions.

Models: ROBOTIS XL330-M288, XL430-W250, XM430-W350 (Protocol 2.0, X-series control table) and
Feetech STS3215 (SCS/STS protocol). Register names follow one vocabulary across vendors
(`goal_position`, `present_current`, ...); addresses, sizes, access, EEPROM/RAM, defaults and
encodings are the vendors' e-manual values. Units, in SI:

    position  q_motor = (ticks - center) * 2π / ticks_per_rev          [rad]
    velocity  v = raw * velocity_unit                                    [rad/s]
    current   i = raw * current_unit                                     [A]
    torque    τ ≈ torque_constant * i                                    [N·m]

The torque constants are the datasheets' stall torque over stall current at the rated voltage
(a linear approximation; override it per joint in the joint map where a measured one exists).
XL430-W250 and STS3215 have no current control: they are driven in position mode. The X-series
have a Bus Watchdog (98, 20 ms units, from firmware v38; -1 once it has tripped); the STS3215 has
no communication watchdog (docs/servo_bus.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

RPM = 2.0 * math.pi / 60.0


@dataclass(frozen=True)
class Register:
    """One control-table entry. sign: 0 unsigned, -1 two's complement, k > 0 sign-magnitude with
    the sign in bit k (Feetech)."""

    name: str
    address: int
    size: int
    eeprom: bool = False
    writable: bool = True
    default: int = 0
    low: int = 0                 # write range (after decoding the sign)
    high: int = 0                # 0: the size's full range

    @property
    def span(self) -> range:
        return range(self.address, self.address + self.size)


@dataclass(frozen=True)
class ServoModel:
    name: str
    protocol: str                # "dynamixel" (Protocol 2.0) or "feetech"
    model_number: int
    registers: dict = field(repr=False)
    signs: dict = field(repr=False)       # register name -> sign convention (see Register)
    byte_order: str = "<"
    ticks_per_rev: int = 4096
    center: int = 2048
    velocity_unit: float = 0.229 * RPM    # rad/s per unit
    current_unit: float = 0.0             # A per unit; 0: the model measures no current
    torque_constant: float = 0.0          # N·m/A at the output shaft
    stall_torque: float = 0.0             # N·m at the rated voltage
    modes: dict = field(default_factory=dict)   # operating-mode name -> register value
    firmware: int = 0

    @property
    def has_current_control(self) -> bool:
        return "current" in self.modes

    @property
    def table_size(self) -> int:
        return max(r.address + r.size for r in self.registers.values())

    def reg(self, name: str) -> Register:
        try:
            return self.registers[name]
        except KeyError:
            raise KeyError(f"{self.name} has no register {name!r}") from None

    def ticks_to_rad(self, ticks):
        return (ticks - self.center) * (2.0 * math.pi / self.ticks_per_rev)

    def rad_to_ticks(self, q):
        return q * (self.ticks_per_rev / (2.0 * math.pi)) + self.center

    def encode(self, name: str, value: int) -> int:
        """A signed register value as the unsigned integer on the wire."""
        sign, size = self.signs.get(name, 0), self.registers[name].size
        if sign > 0:
            return ((1 << sign) | -value) if value < 0 else value
        return value & ((1 << (8 * size)) - 1)

    def decode(self, name: str, raw: int) -> int:
        sign, size = self.signs.get(name, 0), self.registers[name].size
        if sign > 0:
            return -(raw & ((1 << sign) - 1)) if raw >> sign & 1 else raw & ((1 << sign) - 1)
        if sign < 0 and raw >> (8 * size - 1):
            return raw - (1 << (8 * size))
        return raw


def _table(*rows) -> dict:
    return {r.name: r for r in rows}


def _dynamixel_x(*, current: bool, defaults: dict) -> tuple[dict, dict]:
    """The X-series table (e-manual, firmware ≥ 45); `current`: Current Limit / Goal Current exist
    and 126 is Present Current (else Present Load, 0.1 %)."""
    d = defaults.get
    eeprom = [
        Register("model_number", 0, 2, True, False, d("model_number")),
        Register("model_information", 2, 4, True, False),
        Register("firmware_version", 6, 1, True, False, d("firmware_version", 48)),
        Register("id", 7, 1, True, default=1, high=252),
        Register("baud_rate", 8, 1, True, default=1, high=7),
        Register("return_delay_time", 9, 1, True, default=250, high=254),
        Register("drive_mode", 10, 1, True, default=0, high=13),
        Register("operating_mode", 11, 1, True, default=3, high=16),
        Register("secondary_id", 12, 1, True, default=255),
        Register("protocol_type", 13, 1, True, default=2, low=1, high=2),
        Register("homing_offset", 20, 4, True, default=0, low=-1044479, high=1044479),
        Register("moving_threshold", 24, 4, True, default=10, high=1023),
        Register("temperature_limit", 31, 1, True, default=d("temperature_limit"), high=100),
        Register("max_voltage_limit", 32, 2, True, default=d("max_voltage_limit"), high=d("max_voltage_limit")),
        Register("min_voltage_limit", 34, 2, True, default=d("min_voltage_limit"), high=d("max_voltage_limit")),
        Register("pwm_limit", 36, 2, True, default=885, high=885),
        Register("velocity_limit", 44, 4, True, default=d("velocity_limit"), high=2047),
        Register("max_position_limit", 48, 4, True, default=4095, high=4095),
        Register("min_position_limit", 52, 4, True, default=0, high=4095),
        Register("startup_configuration", 60, 1, True, default=0, high=3),
        Register("shutdown", 63, 1, True, default=52),
    ]
    ram = [
        Register("torque_enable", 64, 1, default=0, high=1),
        Register("led", 65, 1, default=0, high=1),
        Register("status_return_level", 68, 1, default=2, high=2),
        Register("registered_instruction", 69, 1, writable=False),
        Register("hardware_error_status", 70, 1, writable=False),
        Register("velocity_i_gain", 76, 2, default=d("velocity_i_gain"), high=16383),
        Register("velocity_p_gain", 78, 2, default=d("velocity_p_gain"), high=16383),
        Register("position_d_gain", 80, 2, default=d("position_d_gain", 0), high=16383),
        Register("position_i_gain", 82, 2, default=0, high=16383),
        Register("position_p_gain", 84, 2, default=d("position_p_gain"), high=16383),
        Register("feedforward_2nd_gain", 88, 2, high=16383),
        Register("feedforward_1st_gain", 90, 2, high=16383),
        Register("bus_watchdog", 98, 1, high=127),
        Register("goal_pwm", 100, 2, default=885, low=-885, high=885),
        Register("goal_velocity", 104, 4, low=-2047, high=2047),
        Register("profile_acceleration", 108, 4, high=32767),
        Register("profile_velocity", 112, 4, high=32767),
        Register("goal_position", 116, 4, default=2048, low=-1048575, high=1048575),
        Register("realtime_tick", 120, 2, writable=False),
        Register("moving", 122, 1, writable=False),
        Register("moving_status", 123, 1, writable=False),
        Register("present_pwm", 124, 2, writable=False),
        Register("present_current" if current else "present_load", 126, 2, writable=False),
        Register("present_velocity", 128, 4, writable=False),
        Register("present_position", 132, 4, writable=False, default=2048),
        Register("velocity_trajectory", 136, 4, writable=False),
        Register("position_trajectory", 140, 4, writable=False),
        Register("present_input_voltage", 144, 2, writable=False, default=d("voltage")),
        Register("present_temperature", 146, 1, writable=False, default=25),
        Register("backup_ready", 147, 1, writable=False),
    ]
    if current:
        limit = d("current_limit")
        eeprom.append(Register("current_limit", 38, 2, True, default=limit, high=limit))
        ram.append(Register("goal_current", 102, 2, default=0, low=-32768, high=32767))   # ±current_limit
    signs = {n: -1 for n in ("homing_offset", "bus_watchdog", "goal_pwm", "goal_current", "goal_velocity",
                             "goal_position", "present_pwm", "present_current", "present_load", "present_velocity",
                             "present_position", "velocity_trajectory", "position_trajectory")}
    return _table(*sorted(eeprom + ram, key=lambda r: r.address)), signs


def _x_model(name, number, *, current_unit, torque_constant, stall_torque, modes, **defaults):
    registers, signs = _dynamixel_x(current=current_unit > 0, defaults={"model_number": number, **defaults})
    return ServoModel(name, "dynamixel", number, registers, signs, current_unit=current_unit,
                      torque_constant=torque_constant, stall_torque=stall_torque, modes=modes,
                      firmware=registers["firmware_version"].default)


X_CURRENT_MODES = {"current": 0, "velocity": 1, "position": 3, "extended_position": 4,
                   "current_based_position": 5, "pwm": 16}

XL330_M288 = _x_model(
    "XL330-M288", 1200, current_unit=1.0e-3, torque_constant=0.52 / 1.47, stall_torque=0.52,
    modes=X_CURRENT_MODES, temperature_limit=70, max_voltage_limit=70, min_voltage_limit=35, current_limit=1750,
    velocity_limit=445, velocity_i_gain=1600, velocity_p_gain=180, position_p_gain=400, voltage=50)
XL430_W250 = _x_model(
    "XL430-W250", 1060, current_unit=0.0, torque_constant=1.5 / 1.4, stall_torque=1.5,
    modes={"velocity": 1, "position": 3, "extended_position": 4, "pwm": 16}, temperature_limit=72,
    max_voltage_limit=140, min_voltage_limit=60, velocity_limit=265, velocity_i_gain=1000, velocity_p_gain=100,
    position_p_gain=640, position_d_gain=4000, voltage=115)
XM430_W350 = _x_model(
    "XM430-W350", 1020, current_unit=2.69e-3, torque_constant=4.1 / 2.3, stall_torque=4.1,
    modes=X_CURRENT_MODES, temperature_limit=80, max_voltage_limit=160, min_voltage_limit=95, current_limit=1193,
    velocity_limit=200, velocity_i_gain=1920, velocity_p_gain=100, position_p_gain=800, voltage=120)


def _sts3215() -> ServoModel:
    r = Register
    registers = _table(
        r("firmware_major", 0, 1, True, False, 3), r("firmware_minor", 1, 1, True, False, 9),
        r("model_number", 3, 2, True, False, 777),
        r("id", 5, 1, True, default=1, high=253), r("baud_rate", 6, 1, True, default=0, high=7),
        r("return_delay_time", 7, 1, True, default=0, high=254),
        r("status_return_level", 8, 1, True, default=1, high=1),
        r("min_position_limit", 9, 2, True, default=0, high=4095),
        r("max_position_limit", 11, 2, True, default=4095, high=4095),
        r("temperature_limit", 13, 1, True, default=70, high=100),
        r("max_voltage_limit", 14, 1, True, default=140, high=254), r("min_voltage_limit", 15, 1, True, default=40),
        r("max_torque_limit", 16, 2, True, default=1000, high=1000), r("phase", 18, 1, True, default=12),
        r("unloading_condition", 19, 1, True, default=44), r("led_alarm_condition", 20, 1, True, default=47),
        r("position_p_gain", 21, 1, True, default=32), r("position_d_gain", 22, 1, True, default=32),
        r("position_i_gain", 23, 1, True, default=0), r("minimum_startup_force", 24, 2, True, default=16),
        r("cw_dead_zone", 26, 1, True, default=1), r("ccw_dead_zone", 27, 1, True, default=1),
        r("protection_current", 28, 2, True, default=500, high=511),
        r("angular_resolution", 30, 1, True, default=1, low=1, high=100),
        r("homing_offset", 31, 2, True, default=0, low=-2047, high=2047),
        r("operating_mode", 33, 1, True, default=0, high=3), r("protective_torque", 34, 1, True, default=20),
        r("protection_time", 35, 1, True, default=200), r("overload_torque", 36, 1, True, default=80),
        r("velocity_p_gain", 37, 1, True, default=10), r("over_current_protection_time", 38, 1, True, default=200),
        r("velocity_i_gain", 39, 1, True, default=200),
        r("torque_enable", 40, 1, default=0, high=128), r("acceleration", 41, 1, default=0),
        r("goal_position", 42, 2, default=2048, high=4095), r("goal_time", 44, 2),
        r("goal_velocity", 46, 2, low=-32767, high=32767), r("torque_limit", 48, 2, default=1000, high=1000),
        r("lock", 55, 1, default=1, high=1),
        r("present_position", 56, 2, writable=False, default=2048), r("present_velocity", 58, 2, writable=False),
        r("present_load", 60, 2, writable=False), r("present_input_voltage", 62, 1, writable=False, default=74),
        r("present_temperature", 63, 1, writable=False, default=25),
        r("hardware_error_status", 65, 1, writable=False), r("moving", 66, 1, writable=False),
        r("present_current", 69, 2, writable=False),
    )
    signs = {"homing_offset": 11, "goal_velocity": 15, "present_velocity": 15, "present_load": 10,
             "present_current": 15}
    return ServoModel("STS3215", "feetech", 777, registers, signs, velocity_unit=2.0 * math.pi / 4096,
                      current_unit=6.5e-3, torque_constant=1.91 / 2.7, stall_torque=1.91,
                      modes={"position": 0, "velocity": 1, "pwm": 2, "step": 3}, firmware=3)


STS3215 = _sts3215()

MODELS = {m.name: m for m in (XL330_M288, XL430_W250, XM430_W350, STS3215)}
BAUD_RATES = {
    "dynamixel": {0: 9600, 1: 57600, 2: 115200, 3: 1_000_000, 4: 2_000_000, 5: 3_000_000, 6: 4_000_000,
                  7: 4_500_000},
    "feetech": {0: 1_000_000, 1: 500_000, 2: 250_000, 3: 128_000, 4: 115_200, 5: 76_800, 6: 57_600, 7: 38_400},
}
RETURN_DELAY_UNIT = {"dynamixel": 2e-6, "feetech": 2e-6}   # s per return_delay_time unit
PWM_MAX = 885.0                   # X-series PWM limit (goal PWM range): the position loop's full output
BUS_WATCHDOG_UNIT = 0.02          # s per X-series Bus Watchdog (98) unit; 1..127 arm it, 0 off, -1 tripped
BUS_WATCHDOG_FIRMWARE = 38        # the first X-series firmware with the Bus Watchdog


def model(name: str) -> ServoModel:
    """The model called `name` (case-insensitive), or a KeyError listing the known ones."""
    for key, m in MODELS.items():
        if key.lower() == name.lower():
            return m
    raise KeyError(f"unknown servo model {name!r}; known: {', '.join(MODELS)}")
