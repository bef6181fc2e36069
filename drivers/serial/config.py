"""The `serial:` section of a run config: the driver's link to the board and the simulated board.

Every key, its unit and default is in the config reference generated from these dataclasses
(docs/gen/config_reference.py). `load_serial_config(mapping)` validates the section into a SerialConfig
(a loaded run config's `cfg.serial`, drivers.run_config); errors are drivers.core.schema.ConfigError
naming the key, e.g. `serial.link_timeout: must be longer than stale_timeout (0.01 s), got 0.005`.
Per-joint values (safe_damping, torque_constant) are checked against the joint count where the driver or
board is built.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional

from annotated_types import Ge, Gt, Le

from drivers.core.schema import ConfigError, Fraction, Help, NonNegative, Period, Rate, Timeout, load

from .protocol import MAX_FAULT_TEXT, MAX_JOINTS, FaultCode

SAFE_COMMAND_PERIOD = 0.01
"""s: how often the driver repeats its safe command while it has no fresh command to forward."""

CORRUPTIONS = ("bit_flip", "drop_byte", "truncate", "split", "garbage")
BoardFaultType = Literal["silent", "unplug", "board_fault", "bit_flip", "drop_byte", "truncate", "split",
                         "garbage"]


@dataclass
class BoardFaultSpec:
    """One fault of the simulated board, active while start <= t < stop (s of board time).

    silent: sends nothing; unplug: the pty disappears (its link is removed) and comes back as a
    new pty at stop; board_fault: a latched fault (FAULT_REPORT, power stage off, brakes on),
    cleared at stop; bit_flip, drop_byte, truncate, split, garbage: corrupt every k-th (`every`)
    or a random (`probability`) frame the board sends.
    """

    type: Annotated[BoardFaultType, Help("one of " + ", ".join(BoardFaultType.__args__))]
    start: NonNegative = 0.0               # s of board time
    stop: Optional[float] = None           # None: until the end
    every: Optional[Annotated[int, Ge(1)]] = None   # a corruption: every k-th frame the board sends
    probability: Optional[Fraction] = None          # a corruption: the chance per frame
    code: Any = None                       # board_fault: a FaultCode name or a number (default INTERNAL)
    joint: Optional[int] = None            # board_fault: joint index; None: a board-level fault
    text: str = ""                         # board_fault: up to 64 bytes of UTF-8

    @property
    def fault_code(self) -> int:
        """The FAULT_REPORT code of a board_fault."""
        code = "INTERNAL" if self.code is None else self.code
        return FaultCode[code] if isinstance(code, str) else code


@dataclass
class DeviceConfig:
    """The simulated motor board (`hil serial-device`); its plant comes from the `sim:` section."""

    link: Optional[str] = None             # symlink to the board's pty, re-pointed on replug; default: port
    state_rate: Rate = 1000.0   # Hz: JOINT_STATE and control period
    lockstep: bool = False                 # answer each COMMAND with one period and one JOINT_STATE
    effort: Literal["torque", "current"] = "torque"                # what JOINT_STATE effort and CONFIG carry
    torque_constant: Any = 1.0             # Nm/A (or N/A), number or one per joint: torque = constant * current
    command_timeout: Timeout = 0.1  # s: watchdog when a COMMAND says 0
    safe_command: Literal["disable", "damping"] = "disable"         # what the board does when it expires
    safe_damping: Any = 5.0                # Nm s/rad, number or one per joint (safe_command: damping)
    firmware_version: Annotated[int, Ge(0), Le(65535)] = 1      # what its CONFIG reports
    faults: list[BoardFaultSpec] = field(default_factory=list)
    seed: int = 0                          # of the random corruptions


@dataclass
class ReconnectConfig:
    """The backoff between attempts to reopen a lost link, doubling from `initial` up to `max`."""

    initial: Timeout = 0.05       # s: first wait after losing the link
    max: Timeout = 2.0            # s: the wait doubles up to this


@dataclass
class SerialConfig:
    port: Annotated[str, Help("the board's port: a device path or any pyserial URL")]   # socket://host:port, loop://
    baudrate: Annotated[int, Gt(0)] = 2_000_000                     # ignored by ptys and sockets
    joint_count: Optional[Annotated[int, Ge(1), Le(MAX_JOINTS)]] = None  # default: robot's; if given, must equal it
    effort: Literal["auto", "torque", "current"] = "auto"           # the board's effort units; auto: its CONFIG
    command_timeout: Timeout = 0.05  # s: no fresh LCM command → safe command
    safe_command: Literal["disable", "damping"] = "disable"         # disable: power off, brakes on
    safe_damping: Any = 5.0                # Nm s/rad, number or one per joint (safe_command: damping)
    # s, sent in every COMMAND; 0: board's. Longer than command_timeout and 0.02 s, so that the board
    # goes safe by itself only when the driver is gone
    board_watchdog: NonNegative = 0.1
    heartbeat_period: Period = 0.1  # s, at least 100 µs
    stale_timeout: Timeout = 0.01    # s without JOINT_STATE → stale (no status, the safe command)
    link_timeout: Timeout = 0.5      # s without JOINT_STATE → reconnect; longer than stale_timeout
    config_timeout: Timeout = 0.5    # s to wait for CONFIG after opening, else reopen
    reconnect: ReconnectConfig = field(default_factory=ReconnectConfig)
    health_rate: Rate = 10.0      # Hz of lcmt_hil_driver_health
    device: DeviceConfig = field(default_factory=DeviceConfig)

    def validate(self, path: str = "serial") -> "SerialConfig":
        """Cross-field checks; returns self."""
        if self.link_timeout <= self.stale_timeout:
            raise ConfigError(f"{path}.link_timeout", f"must be longer than stale_timeout "
                                                      f"({self.stale_timeout:g} s), got {self.link_timeout:g}")
        if self.reconnect.max < self.reconnect.initial:
            raise ConfigError(f"{path}.reconnect.max", f"must be >= initial ({self.reconnect.initial:g} s), "
                                                       f"got {self.reconnect.max:g}")
        if self.board_watchdog and self.board_watchdog <= max(self.command_timeout, 2 * SAFE_COMMAND_PERIOD):
            raise ConfigError(f"{path}.board_watchdog",
                              f"must be 0 (the board's default) or longer than command_timeout "
                              f"({self.command_timeout:g} s) and {2 * SAFE_COMMAND_PERIOD:g} s, so that the board "
                              f"only goes safe when the driver is gone; got {self.board_watchdog:g}")
        if self.board_watchdog > 65.535:
            raise ConfigError(f"{path}.board_watchdog",
                              f"must be <= 65.535 s (a u16 of ms), got {self.board_watchdog:g}")
        for i, fault in enumerate(self.device.faults):
            _check_fault(fault, f"{path}.device.faults[{i}]")
        return self


def _check_fault(fault: BoardFaultSpec, key: str) -> None:
    corruption = fault.type in CORRUPTIONS
    if corruption and (fault.every is None) == (fault.probability is None):
        raise ConfigError(f"{key}.every", f"a {fault.type} fault needs exactly one of every or probability")
    if not corruption:
        for name in ("every", "probability"):
            if getattr(fault, name) is not None:
                raise ConfigError(f"{key}.{name}", f"is not a parameter of a {fault.type} fault")
    if fault.type != "board_fault":
        for name, unset in (("code", None), ("joint", None), ("text", "")):
            if getattr(fault, name) != unset:
                raise ConfigError(f"{key}.{name}", f"is only a parameter of a board_fault, not of {fault.type}")
    if fault.stop is not None and fault.stop <= fault.start:
        raise ConfigError(f"{key}.stop", f"must be after start ({fault.start:g} s), got {fault.stop:g}")
    code = fault.code
    if isinstance(code, str) and code not in FaultCode.__members__:
        raise ConfigError(f"{key}.code", f"unknown fault code {code!r} (one of {', '.join(FaultCode.__members__)}, "
                                         f"or a number)")
    if not isinstance(code, (str, type(None))) and (isinstance(code, bool) or not isinstance(code, int)
                                                    or not 0 < code <= 0xFFFF):
        raise ConfigError(f"{key}.code", f"must be a fault code name or a number in 1..0xFFFF, got {code!r}")
    if fault.joint is not None and not 0 <= fault.joint < MAX_JOINTS:
        raise ConfigError(f"{key}.joint", f"must be a joint index in 0..{MAX_JOINTS - 1}, got {fault.joint}")
    if len(fault.text.encode()) > MAX_FAULT_TEXT:
        raise ConfigError(f"{key}.text", f"must be at most {MAX_FAULT_TEXT} bytes of UTF-8, "
                                         f"got {len(fault.text.encode())}")


def load_serial_config(data: dict, path: str = "serial") -> SerialConfig:
    """The validated SerialConfig of the `serial:` mapping of a run config."""
    return load(SerialConfig, data, path).validate(path)
