"""The `servo_bus:` section of a run config: the bus, its servos and how they map to URDF joints.

Every key, its unit and default is in the config reference generated from these dataclasses
(docs/gen/config_reference.py). `load_servo_config(mapping)` validates the section into a ServoBusConfig
(a loaded run config's `cfg.servo_bus`; errors are drivers.core.schema.ConfigError naming the key, e.g.
`servo_bus.joints[2].model: unknown servo model 'XM540'; known: ...`); `check_joints(config, plant)`
checks the joint names against the robot model.

Joint mapping, per joint (direction d = ±1, gear ratio g = servo turns per joint turn, offset o
[rad] = the joint position at the servo's center tick):

    q = o + d · q_servo / g          τ_joint = d · g · τ_servo        q_servo = (ticks − center)·2π/ticks_per_rev

Control mode, per joint (`ServoBusConfig.joint_control`): the joint's own `control` if set, else
the bus's `control` unless it is `auto`, else `current` where the model has current control
(XL330-M288, XM430-W350) and `position` where it has not (XL430-W250, STS3215). So a mixed bus
(a Koch arm: XL430 shoulders, XL330 elbow and wrist) runs each servo in the best mode it has.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Literal, Optional

from annotated_types import Ge, Gt, Le

from drivers.core.schema import ConfigError, Help, NonNegative, Positive, Rate, Timeout, load

from .config import ReconnectConfig
from .servo_models import BAUD_RATES, BUS_WATCHDOG_UNIT, ServoModel, model

DEFAULT_BUS_WATCHDOG = 0.1       # s: the Dynamixel servos stop after this long without an instruction


@dataclass
class ServoJoint:
    """One URDF joint driven by one servo."""

    joint: Annotated[str, Help("the joint's name in the URDF")]
    id: Annotated[int, Ge(0), Le(252)]      # the servo's ID, unique on the bus
    # XL330-M288, XL430-W250, XM430-W350 or STS3215 (case-insensitive); one that speaks the bus's protocol
    model: Annotated[str, Help("XL330-M288, XL430-W250, XM430-W350 or STS3215")]
    direction: int = 1                     # +1 or -1: servo rotation sign relative to the joint axis
    offset: float = 0.0                    # rad: joint position at the servo's center tick (2048)
    gear_ratio: Positive = 1.0  # servo turns per joint turn
    torque_constant: Optional[Positive] = None  # N·m/A; default: the model's
    kp: Optional[Annotated[int, Ge(0)]] = None   # position P gain (register units); default: model's
    kd: Optional[Annotated[int, Ge(0)]] = None   # position D gain (register units)
    # this joint's mode, overriding the bus's `control` (current needs a model with current control)
    control: Optional[Literal["current", "position"]] = None

    @property
    def servo_model(self) -> ServoModel:
        return model(self.model)


@dataclass
class ServoDeviceConfig:
    """The simulated bus (`hil servo-bus-device`)."""

    link: Optional[str] = None             # symlink to the bus's pty; default: port
    return_delay_time: Annotated[int, Ge(0), Le(254)] = 0   # 2 µs units, every servo (a real one's default: 250)
    inertia: Positive = 5e-3       # kg m² at each servo's output (no plant)
    damping: NonNegative = 0.02     # N m s/rad at each servo's output (no plant)
    backdrive_damping: NonNegative = 0.5   # N m s/rad, torque off (its back-driven gear train), plant or not


@dataclass
class ServoBusConfig:
    port: Annotated[str, Help("the bus adapter's device path (e.g. /dev/ttyUSB0) or a pty link")]
    protocol: Literal["dynamixel", "feetech"] = "dynamixel"      # Dynamixel Protocol 2.0, or Feetech SCS/STS
    baudrate: Annotated[int, Gt(0)] = 1_000_000          # one the protocol's servos support, as they are set
    # every joint's mode unless it sets its own: current (torque → goal current), position (torque → goal
    # position through the servo's P gain), auto: per joint, current where the model has it
    control: Literal["auto", "current", "position"] = "auto"
    rate: Rate = 500.0          # Hz: one SYNC READ + one SYNC WRITE each
    read_timeout: Timeout = 0.005  # s for a SYNC READ's answers; missing ones are counted as timeouts
    command_timeout: Timeout = 0.05  # s without an LCM command → torque off; at least one cycle, 1/rate
    link_timeout: Timeout = 0.2   # s without a full SYNC READ → torque off, reconnect; > read_timeout
    reconnect: ReconnectConfig = field(default_factory=ReconnectConfig)
    # one cycle per LCM command, no command timeout, statuses stamped cycles / rate; the simulated bus
    # moves its plant one period per SYNC READ (`hil regress`, link: servo)
    lockstep: bool = False
    # Dynamixel FAST SYNC READ: one answer packet for every servo (firmware X430/X540 v45+, X330 v46+;
    # a servo without it does not answer)
    fast_read: bool = False
    # s: the Dynamixel Bus Watchdog, written at every connect: a servo with torque on that hears no
    # instruction this long stops by itself; 20 ms units, 0 off, ≤ 2.54 s, ≥ 2/rate; default 0.1 on
    # Dynamixel (firmware v38+), none on Feetech
    bus_watchdog: Optional[NonNegative] = None
    joints: list[ServoJoint] = field(default_factory=list)   # one per actuated joint of the robot, each once
    device: ServoDeviceConfig = field(default_factory=ServoDeviceConfig)

    @property
    def models(self) -> list[ServoModel]:
        return [j.servo_model for j in self.joints]

    @property
    def bus_watchdog_units(self) -> int:
        """The Bus Watchdog register value (20 ms units, rounded up; 0 off) the driver writes."""
        if self.protocol != "dynamixel":
            return 0
        seconds = DEFAULT_BUS_WATCHDOG if self.bus_watchdog is None else self.bus_watchdog
        return math.ceil(seconds / BUS_WATCHDOG_UNIT - 1e-9)

    def joint_control(self, joint: ServoJoint) -> str:
        """The control mode of `joint`'s servo, "current" (torque -> goal current) or "position"
        (torque -> goal position through its P gain): see the module's docstring."""
        if joint.control is not None:
            return joint.control
        if self.control != "auto":
            return self.control
        return "current" if joint.servo_model.has_current_control else "position"

    def validate(self, path: str = "servo_bus") -> ServoBusConfig:
        if not self.joints:
            raise ConfigError(f"{path}.joints", "needs at least one joint (joint, id, model)")
        seen_ids, seen_joints = {}, {}
        for k, j in enumerate(self.joints):
            key = f"{path}.joints[{k}]"
            try:
                m = j.servo_model
            except KeyError as e:
                raise ConfigError(f"{key}.model", e.args[0]) from None
            if m.protocol != self.protocol:
                raise ConfigError(f"{key}.model", f"{m.name} speaks {m.protocol}, but the bus is {self.protocol}")
            if j.direction not in (1, -1):
                raise ConfigError(f"{key}.direction", f"must be 1 or -1, got {j.direction}")
            if j.id in seen_ids:
                raise ConfigError(f"{key}.id", f"{j.id} is already the ID of joints[{seen_ids[j.id]}]")
            if j.joint in seen_joints:
                raise ConfigError(f"{key}.joint", f"{j.joint!r} is already joints[{seen_joints[j.joint]}]")
            seen_ids[j.id], seen_joints[j.joint] = k, j.joint
            for gain in ("kp", "kd"):
                value, reg = getattr(j, gain), m.reg("position_p_gain" if gain == "kp" else "position_d_gain")
                if value is not None and value >= 1 << (8 * reg.size):
                    raise ConfigError(f"{key}.{gain}", f"must fit the {m.name}'s {reg.size}-byte register, "
                                                       f"got {value}")
            if self.joint_control(j) == "current" and not m.has_current_control:
                if j.control is not None:
                    raise ConfigError(f"{key}.control", f"is current, but a {m.name} has no current control "
                                                        f"(use position)")
                raise ConfigError(f"{path}.control", f"is current, but joints[{k}] is a {m.name}, which has no "
                                                     f"current control (use auto, position, or joints[{k}].control: "
                                                     f"position)")
        if self.baudrate not in BAUD_RATES[self.protocol].values():
            raise ConfigError(f"{path}.baudrate", f"{self.baudrate} is no {self.protocol} baud rate; one of "
                                                  f"{sorted(BAUD_RATES[self.protocol].values())}")
        if self.fast_read and self.protocol != "dynamixel":
            raise ConfigError(f"{path}.fast_read", "FAST SYNC READ is a Dynamixel Protocol 2.0 instruction")
        if self.bus_watchdog and self.protocol != "dynamixel":
            raise ConfigError(f"{path}.bus_watchdog", "Feetech servos have no bus watchdog (docs/servo_bus.md); "
                                                      "leave it out or set 0")
        if self.bus_watchdog and not 2 / self.rate <= self.bus_watchdog <= 127 * BUS_WATCHDOG_UNIT:
            raise ConfigError(f"{path}.bus_watchdog", f"must be 0 (off) or between two cycles, 2/rate = "
                                                      f"{2 / self.rate:g} s, and {127 * BUS_WATCHDOG_UNIT:g} s "
                                                      f"(127 units of 20 ms), got {self.bus_watchdog:g}")
        if self.link_timeout <= self.read_timeout:
            raise ConfigError(f"{path}.link_timeout", f"must be longer than read_timeout ({self.read_timeout:g} s)")
        for key in ("command_timeout", "link_timeout"):      # the driver looks once a cycle
            if getattr(self, key) < 1.0 / self.rate:
                raise ConfigError(f"{path}.{key}", f"must be at least one cycle, 1/rate = {1 / self.rate:g} s (the "
                                                   f"driver checks it once a cycle), got {getattr(self, key):g}")
        return self


def load_servo_config(data: dict, path: str = "servo_bus") -> ServoBusConfig:
    """The validated ServoBusConfig of a run config's `servo_bus:` mapping."""
    return load(ServoBusConfig, data, path).validate(path)


def check_joints(config: ServoBusConfig, joint_names: list[str], path: str = "servo_bus") -> None:
    """Every actuated joint of the robot (protocol order `joint_names`) has exactly one servo."""
    mapped = [j.joint for j in config.joints]
    for k, name in enumerate(mapped):
        if name not in joint_names:
            raise ConfigError(f"{path}.joints[{k}].joint", f"{name!r} is no actuated joint of the robot; "
                                                          f"its joints: {', '.join(joint_names)}")
    missing = [n for n in joint_names if n not in mapped]
    if missing:
        raise ConfigError(f"{path}.joints", f"no servo for the robot's joints {', '.join(missing)}")
