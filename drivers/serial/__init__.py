"""Serial link to a motor-controller board: protocol, codec and stream parser.

See docs/serial_protocol.md. A driver keeps one FrameEncoder for what it sends and one
StreamParser for what it receives; both are built for the robot's joint count. Not imported here
(they need hil, lcm and pyserial): `config` (the run config's `serial:` section), `driver` (the
serial driver, `hil serial`) and `device` (the simulated board, `hil serial-device`).
"""
from .codec import FrameDecoder, FrameEncoder, read_header
from .crc import CRC32_CHECK, crc32
from .errors import CrcError, HeaderError, JointCountError, PayloadError, ProtocolError
from .messages import (
    Command,
    Config,
    ConfigRequest,
    FaultReport,
    Heartbeat,
    JointState,
    LatestMessages,
    Message,
)
from .parser import LinkStats, StreamParser
from .protocol import *  # its __all__: constants, enums and frame_size

__all__ = [
    "CRC32_CHECK", "MAX_FAULT_TEXT", "MAX_FRAME_SIZE", "MAX_JOINTS", "NO_JOINT",
    "PROTOCOL_VERSION", "Command", "CommandMode", "Config", "ConfigRequest", "CrcError",
    "EffortKind", "FaultCode", "FaultReport", "FrameDecoder", "FrameEncoder", "HeaderError",
    "Heartbeat", "JointCountError", "JointKind", "JointState", "LatestMessages", "LinkStats",
    "Message", "MsgType", "NodeState", "PayloadError", "ProtocolError", "StatusFlag",
    "StreamParser", "crc32", "frame_size", "read_header",
]
