"""Preallocated message containers: the encoder reads them, the decoder fills them in place.

Arrays are float64 numpy arrays allocated once; fill them in place (``state.q[:] = q``), they
cannot be rebound. `seq` and `rx_count` are set by the decoder, `rx_time_ns` by the stream
parser's clock when the frame was accepted.
"""
import numpy as np

from .protocol import (
    CONFIG_ARRAYS,
    MAX_FAULT_TEXT,
    NO_JOINT,
    STATE_ARRAYS,
    CommandMode,
    EffortKind,
    FaultCode,
    MsgType,
    NodeState,
)


class Message:
    """Fields every received message has: header seq, frames received, host receive time."""

    __slots__ = ("seq", "rx_count", "rx_time_ns")
    MSG_TYPE: MsgType

    def __init__(self):
        self.seq = 0
        self.rx_count = 0
        self.rx_time_ns = 0


class JointState(Message):
    """JOINT_STATE: positions [rad|m], velocities [rad/s|m/s], effort [Nm|N or A per CONFIG]."""

    __slots__ = ("joint_count", "time_us", "status", "command_seq", "mode", "values", "_rows")
    MSG_TYPE = MsgType.JOINT_STATE

    def __init__(self, joint_count: int):
        super().__init__()
        self.joint_count = joint_count
        self.time_us = 0  # board clock
        self.status = 0  # StatusFlag bits
        self.command_seq = 0  # seq of the last COMMAND the board applied
        self.mode = CommandMode.DISABLE  # mode the board is executing
        self.values = np.zeros((STATE_ARRAYS, joint_count))  # rows: q, v, effort
        self._rows = tuple(self.values)

    q = property(lambda self: self._rows[0], doc="joint positions, a row of `values`")
    v = property(lambda self: self._rows[1], doc="joint velocities, a row of `values`")
    effort = property(lambda self: self._rows[2], doc="measured torque or current")


class Command(Message):
    """COMMAND: mode and one value per joint; the board goes safe after `watchdog_ms` silence."""

    __slots__ = ("joint_count", "time_us", "mode", "watchdog_ms", "values")
    MSG_TYPE = MsgType.COMMAND

    def __init__(self, joint_count: int):
        super().__init__()
        self.joint_count = joint_count
        self.time_us = 0  # host clock
        self.mode = CommandMode.DISABLE
        self.watchdog_ms = 0  # 0: the board's default
        self.values = np.zeros(joint_count)


class Heartbeat(Message):
    """HEARTBEAT (both directions): sender time, state and count of frames it rejected."""

    __slots__ = ("time_us", "node_state", "rx_errors")
    MSG_TYPE = MsgType.HEARTBEAT

    def __init__(self):
        super().__init__()
        self.time_us = 0
        self.node_state = NodeState.BOOTING
        self.rx_errors = 0  # wraps at 2**32


class FaultReport(Message):
    """FAULT_REPORT: code, joint (NO_JOINT for the board) and up to 64 bytes of UTF-8 text."""

    __slots__ = ("time_us", "code", "joint_index", "text_bytes", "text_length")
    MSG_TYPE = MsgType.FAULT_REPORT

    def __init__(self):
        super().__init__()
        self.time_us = 0
        self.code = 0  # a FaultCode, or an int in the board-specific range
        self.joint_index = NO_JOINT
        self.text_bytes = bytearray(MAX_FAULT_TEXT)
        self.text_length = 0

    @property
    def text(self) -> str:
        return self.text_bytes[: self.text_length].decode("utf-8", "replace")

    @text.setter
    def text(self, value: str):
        """Stores `value` as UTF-8, cut to 64 bytes at a character boundary."""
        raw = value.encode()[:MAX_FAULT_TEXT].decode("utf-8", "ignore").encode()
        self.text_bytes[: len(raw)] = raw
        self.text_length = len(raw)

    def __str__(self) -> str:
        code = self.code.name if isinstance(self.code, FaultCode) else "BOARD_SPECIFIC"
        where = "board" if self.joint_index == NO_JOINT else f"joint {self.joint_index}"
        return f"{code} (0x{self.code:04x}) on {where}: {self.text}"


class Config(Message):
    """CONFIG: joint kinds, limits, effort units and torque constants [Nm/A or N/A]."""

    __slots__ = ("joint_count", "effort_kind", "firmware_version", "joint_kind", "limits", "_rows")
    MSG_TYPE = MsgType.CONFIG

    def __init__(self, joint_count: int):
        super().__init__()
        self.joint_count = joint_count
        self.effort_kind = EffortKind.TORQUE
        self.firmware_version = 0
        self.joint_kind = np.zeros(joint_count, np.uint8)  # JointKind per joint
        # rows: position lower, position upper, velocity limit, effort limit, torque constant
        self.limits = np.zeros((CONFIG_ARRAYS, joint_count))
        self._rows = tuple(self.limits)

    position_lower = property(lambda self: self._rows[0])
    position_upper = property(lambda self: self._rows[1])
    velocity_limit = property(lambda self: self._rows[2])
    effort_limit = property(lambda self: self._rows[3])
    torque_constant = property(lambda self: self._rows[4])


class ConfigRequest(Message):
    """CONFIG_REQUEST: empty; the board answers with CONFIG."""

    __slots__ = ()
    MSG_TYPE = MsgType.CONFIG_REQUEST


class LatestMessages:
    """The most recent message of each type a decoder accepted, overwritten in place."""

    def __init__(self, joint_count: int):
        self.joint_state = JointState(joint_count)
        self.command = Command(joint_count)
        self.heartbeat = Heartbeat()
        self.fault_report = FaultReport()
        self.config = Config(joint_count)
        self.config_request = ConfigRequest()
