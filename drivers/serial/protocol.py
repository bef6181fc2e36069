"""Wire constants of the serial motor-board protocol (docs/serial_protocol.md).

Frame: ``AA 55 | version u8 | type u8 | payload length u16 | seq u16 | payload | CRC-32 u32``,
all little-endian; the CRC covers every byte before it. Payload prefixes are the ``*_PREFIX``
structs below; float arrays follow them as float32, one array after another.
"""
from enum import IntEnum, IntFlag
from struct import Struct
from typing import NamedTuple

__all__ = ["MAX_FAULT_TEXT", "MAX_FRAME_SIZE", "MAX_JOINTS", "NO_JOINT", "PROTOCOL_VERSION", "CommandMode",
           "EffortKind", "FaultCode", "JointKind", "MsgType", "NodeState", "StatusFlag",
           "frame_size"]    # what drivers.serial re-exports; the wire layout is imported by name

SYNC = b"\xaa\x55"
PROTOCOL_VERSION = 1
MAX_JOINTS = 32
MAX_FAULT_TEXT = 64
NO_JOINT = 0xFF  # FAULT_REPORT joint index of a board-level fault

HEADER = Struct("<BBBBHH")  # sync0, sync1, version, type, payload length, seq
CRC = Struct("<I")
HEADER_SIZE = HEADER.size
CRC_SIZE = CRC.size
FLOAT = "<f4"

STATE_PREFIX = Struct("<QIHBB")  # board time us, status flags, command seq echo, mode, joint count
COMMAND_PREFIX = Struct("<QHBB")  # host time us, watchdog ms, mode, joint count
HEARTBEAT_PAYLOAD = Struct("<QIB")  # sender time us, frames rejected by sender, node state
FAULT_PREFIX = Struct("<QHBB")  # board time us, fault code, joint index, text length
CONFIG_PREFIX = Struct("<BBH")  # joint count, effort kind, firmware version

STATE_ARRAYS = 3  # position, velocity, effort
CONFIG_ARRAYS = 5  # position lower, position upper, velocity limit, effort limit, torque constant


class MsgType(IntEnum):
    """Message type byte; the direction is in the comment."""

    JOINT_STATE = 0x01  # board -> host
    COMMAND = 0x02  # host -> board
    HEARTBEAT = 0x03  # both
    FAULT_REPORT = 0x04  # board -> host
    CONFIG = 0x05  # board -> host, answers CONFIG_REQUEST
    CONFIG_REQUEST = 0x06  # host -> board


class CommandMode(IntEnum):
    """What COMMAND values mean; JOINT_STATE reports the mode the board is executing."""

    DISABLE = 0  # power stage off, values ignored (an all-zero command is a disable)
    TORQUE = 1  # values: joint torque [Nm] or force [N]
    CURRENT = 2  # values: motor current [A]
    DAMPING = 3  # values: damping gain d >= 0, board applies -d * v [Nm s/rad or N s/m]


class StatusFlag(IntFlag):
    """JOINT_STATE status bits (u32); bits 16..31 are board-specific."""

    ENABLED = 1 << 0  # power stage on, commands applied
    FAULT = 1 << 1  # a fault is latched (see FAULT_REPORT)
    ESTOP = 1 << 2  # emergency-stop input active
    OVER_TEMPERATURE = 1 << 3
    OVER_CURRENT = 1 << 4
    POSITION_LIMIT = 1 << 5
    VELOCITY_LIMIT = 1 << 6
    COMMAND_TIMEOUT = 1 << 7  # no valid COMMAND within the watchdog period
    BRAKE_ENGAGED = 1 << 8
    UNDER_VOLTAGE = 1 << 9
    SATURATED = 1 << 10  # the command was clipped to the effort limit
    NOT_HOMED = 1 << 11  # positions are not yet referenced


class NodeState(IntEnum):
    """HEARTBEAT state of the sender."""

    BOOTING = 0
    READY = 1  # communicating, power stage off
    ACTIVE = 2  # power stage on
    FAULT = 3
    ESTOP = 4


class FaultCode(IntEnum):
    """FAULT_REPORT codes; 0x8000..0xFFFF are board-specific and decode as plain ints."""

    OVER_CURRENT = 0x0001
    OVER_TEMPERATURE = 0x0002
    ENCODER = 0x0003
    POSITION_LIMIT = 0x0004
    VELOCITY_LIMIT = 0x0005
    COMMAND_TIMEOUT = 0x0006
    ESTOP = 0x0007
    UNDER_VOLTAGE = 0x0008
    OVER_VOLTAGE = 0x0009
    BAD_COMMAND = 0x000A  # e.g. wrong joint count or mode in a COMMAND
    INTERNAL = 0x000B


class EffortKind(IntEnum):
    """What JOINT_STATE effort holds (CONFIG)."""

    TORQUE = 0  # Nm for revolute, N for prismatic joints
    CURRENT = 1  # A; torque = torque_constant * current


class JointKind(IntEnum):
    """Joint kind (CONFIG): sets the units of position, velocity and torque."""

    REVOLUTE = 0  # rad, rad/s, Nm
    PRISMATIC = 1  # m, m/s, N


class PayloadRule(NamedTuple):
    """Payload length = fixed + unit * count, count in [min_count, max_count]."""

    fixed: int
    unit: int
    min_count: int
    max_count: int

    def length(self, count: int) -> int:
        return self.fixed + self.unit * count

    def count(self, length: int) -> int:
        """The count a payload length implies, or -1 if no count gives that length."""
        extra = length - self.fixed
        if self.unit == 0:
            return 0 if extra == 0 else -1
        count, rest = divmod(extra, self.unit)
        return count if rest == 0 and self.min_count <= count <= self.max_count else -1

    def describe(self) -> str:
        if self.unit == 0:
            return f"{self.fixed} bytes"
        return f"{self.fixed} + {self.unit}*n bytes, n = {self.min_count}..{self.max_count}"


PAYLOAD_RULES = {
    MsgType.JOINT_STATE: PayloadRule(STATE_PREFIX.size, STATE_ARRAYS * 4, 1, MAX_JOINTS),
    MsgType.COMMAND: PayloadRule(COMMAND_PREFIX.size, 4, 1, MAX_JOINTS),
    MsgType.HEARTBEAT: PayloadRule(HEARTBEAT_PAYLOAD.size, 0, 0, 0),
    MsgType.FAULT_REPORT: PayloadRule(FAULT_PREFIX.size, 1, 0, MAX_FAULT_TEXT),
    MsgType.CONFIG: PayloadRule(CONFIG_PREFIX.size, CONFIG_ARRAYS * 4 + 1, 1, MAX_JOINTS),
    MsgType.CONFIG_REQUEST: PayloadRule(0, 0, 0, 0),
}
MAX_PAYLOAD = max(rule.length(rule.max_count) for rule in PAYLOAD_RULES.values())
MAX_FRAME_SIZE = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE


def frame_size(msg_type: MsgType, count: int = 0) -> int:
    """Bytes on the wire of a frame with `count` joints (or fault-text bytes)."""
    return HEADER_SIZE + PAYLOAD_RULES[msg_type].length(count) + CRC_SIZE
