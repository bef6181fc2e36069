"""Frame encoder and decoder over preallocated buffers (no per-frame buffers or arrays).

Both own one frame-sized bytearray with numpy float32 views at the fixed offsets of the
configured joint count; encoding packs into it and returns a memoryview of the frame (valid
until the next encode), decoding copies the frame into it, checks it and fills the
preallocated containers of `messages`.
"""
from ctypes import addressof, c_char, memmove
from struct import Struct

import numpy as np

from .crc import crc32
from .errors import CrcError, HeaderError, JointCountError, PayloadError
from .messages import LatestMessages, Message
from .protocol import (
    COMMAND_PREFIX,
    CONFIG_ARRAYS,
    CONFIG_PREFIX,
    CRC,
    CRC_SIZE,
    FAULT_PREFIX,
    FLOAT,
    HEADER,
    HEADER_SIZE,
    HEARTBEAT_PAYLOAD,
    MAX_FRAME_SIZE,
    MAX_JOINTS,
    NO_JOINT,
    PAYLOAD_RULES,
    PROTOCOL_VERSION,
    STATE_ARRAYS,
    STATE_PREFIX,
    SYNC,
    CommandMode,
    EffortKind,
    FaultCode,
    JointKind,
    MsgType,
    NodeState,
)

_MSG_TYPES = {t.value: t for t in MsgType}


def _by_type(coder) -> dict:
    """{message type: the coder's method for it}: FrameEncoder's and FrameDecoder's are named after
    the type (JOINT_STATE: _joint_state, ...)."""
    return {t: getattr(coder, f"_{t.name.lower()}") for t in MsgType}
_MODES = {m.value: m for m in CommandMode}
_NODE_STATES = {s.value: s for s in NodeState}
_EFFORT_KINDS = {k.value: k for k in EffortKind}
_FAULT_CODES = {c.value: c for c in FaultCode}
_MAX_JOINT_KIND = max(JointKind)


_TYPE_LENGTH_SEQ = Struct("<BHH")  # header bytes 3..7; the encoder writes bytes 0..2 once
# Every (type byte, payload length) a valid header can carry.
_FRAME_KINDS = {
    (msg_type.value, rule.length(count)): msg_type
    for msg_type, rule in PAYLOAD_RULES.items()
    for count in range(rule.min_count, rule.max_count + 1)
}


def read_header(buf, offset: int = 0):
    """Checks the 8-byte header at `offset`; returns (msg_type, payload length, seq).

    Raises HeaderError for bad sync bytes, an unsupported version, an unknown type, a payload
    length no message of that type has, or fewer than 8 bytes from `offset`.
    """
    if offset < 0 or len(buf) - offset < HEADER_SIZE:
        raise HeaderError(f"short header: {max(0, len(buf) - max(offset, 0))} bytes at offset {offset}, "
                          f"a frame header is {HEADER_SIZE}")
    sync0, sync1, version, type_byte, length, seq = HEADER.unpack_from(buf, offset)
    msg_type = _FRAME_KINDS.get((type_byte, length))
    if msg_type is None or version != PROTOCOL_VERSION or sync0 != SYNC[0] or sync1 != SYNC[1]:
        raise _header_error(sync0, sync1, version, type_byte, length, seq)
    return msg_type, length, seq


def _header_error(sync0, sync1, version, type_byte, length, seq) -> HeaderError:
    if sync0 != SYNC[0] or sync1 != SYNC[1]:
        return HeaderError(f"no sync: got {sync0:02x} {sync1:02x}, expected {SYNC.hex(' ')}")
    if version != PROTOCOL_VERSION:
        return HeaderError(
            f"unsupported protocol version {version} in frame seq {seq}; "
            f"this end speaks version {PROTOCOL_VERSION}",
            seq=seq,
        )
    if type_byte not in _MSG_TYPES:
        return HeaderError(f"unknown message type 0x{type_byte:02x} in frame seq {seq}", seq=seq)
    msg_type = _MSG_TYPES[type_byte]
    return HeaderError(
        f"payload length {length} is invalid for {msg_type.name} seq {seq} "
        f"(expected {PAYLOAD_RULES[msg_type].describe()})",
        msg_type,
        seq,
    )


class _FrameBuffer:
    """One frame-sized bytearray, numpy views of each message type's arrays in it, and the
    payload length of each type for the configured joint count."""

    def __init__(self, joint_count: int):
        if not 1 <= joint_count <= MAX_JOINTS:
            raise ValueError(f"joint_count must be in 1..{MAX_JOINTS}, got {joint_count}")
        n = joint_count
        self.data = bytearray(MAX_FRAME_SIZE)
        self.view = memoryview(self.data)
        self.address = addressof(c_char.from_buffer(self.data))  # the export pins the buffer
        self.state_values = self._floats(STATE_PREFIX.size, (STATE_ARRAYS, n))
        self.command_values = self._floats(COMMAND_PREFIX.size, (n,))
        self.config_limits = self._floats(CONFIG_PREFIX.size, (CONFIG_ARRAYS, n))
        kinds_offset = HEADER_SIZE + CONFIG_PREFIX.size + self.config_limits.nbytes
        self.config_kinds = np.frombuffer(self.data, np.uint8, n, kinds_offset)
        # payload length per type for n joints (meaningless for FAULT_REPORT)
        self.payload_length = {t: rule.length(n) for t, rule in PAYLOAD_RULES.items()}
        self._slices = {}

    def _floats(self, prefix_size: int, shape: tuple) -> np.ndarray:
        count = int(np.prod(shape))
        return np.frombuffer(self.data, FLOAT, count, HEADER_SIZE + prefix_size).reshape(shape)

    def slices(self, length: int):
        """(bytes the CRC covers, whole frame) as memoryviews, for a payload of `length`."""
        views = self._slices.get(length)
        if views is None:
            end = HEADER_SIZE + length
            views = self._slices[length] = (self.view[:end], self.view[: end + CRC_SIZE])
        return views


class FrameEncoder:
    """Encodes messages into frames numbered from `seq` (the sequence number of the next frame)."""

    def __init__(self, joint_count: int, seq: int = 0):
        self._frame = _FrameBuffer(joint_count)
        self._frame.data[:3] = SYNC + bytes([PROTOCOL_VERSION])
        self.joint_count = joint_count
        self.seq = seq
        self._encoders = _by_type(self)

    def encode(self, msg: Message) -> memoryview:
        """The frame of `msg`, a view of the encoder's buffer valid until the next encode."""
        return self._encoders[msg.MSG_TYPE](msg)

    def _finish(self, msg_type: MsgType, length: int) -> memoryview:
        """Writes the header and the CRC around the payload already in the buffer."""
        data = self._frame.data
        _TYPE_LENGTH_SEQ.pack_into(data, 3, msg_type, length, self.seq)
        self.seq = (self.seq + 1) & 0xFFFF
        covered, frame = self._frame.slices(length)
        CRC.pack_into(data, HEADER_SIZE + length, crc32(covered))
        return frame

    def _check_count(self, msg):
        if msg.joint_count != self.joint_count:
            raise ValueError(
                f"{msg.MSG_TYPE.name} has {msg.joint_count} joints; "
                f"this encoder is configured for {self.joint_count}"
            )

    def _joint_state(self, msg) -> memoryview:
        self._check_count(msg)
        frame = self._frame
        STATE_PREFIX.pack_into(
            frame.data, HEADER_SIZE,
            msg.time_us, msg.status, msg.command_seq, msg.mode, self.joint_count,
        )
        frame.state_values[...] = msg.values
        return self._finish(MsgType.JOINT_STATE, frame.payload_length[MsgType.JOINT_STATE])

    def _command(self, msg) -> memoryview:
        self._check_count(msg)
        frame = self._frame
        COMMAND_PREFIX.pack_into(
            frame.data, HEADER_SIZE, msg.time_us, msg.watchdog_ms, msg.mode, self.joint_count
        )
        frame.command_values[...] = msg.values
        return self._finish(MsgType.COMMAND, frame.payload_length[MsgType.COMMAND])

    def _heartbeat(self, msg) -> memoryview:
        HEARTBEAT_PAYLOAD.pack_into(
            self._frame.data, HEADER_SIZE, msg.time_us, msg.rx_errors, msg.node_state
        )
        return self._finish(MsgType.HEARTBEAT, HEARTBEAT_PAYLOAD.size)

    def _fault_report(self, msg) -> memoryview:
        k = msg.text_length
        FAULT_PREFIX.pack_into(
            self._frame.data, HEADER_SIZE, msg.time_us, msg.code, msg.joint_index, k
        )
        start = HEADER_SIZE + FAULT_PREFIX.size
        self._frame.data[start : start + k] = msg.text_bytes[:k]
        return self._finish(MsgType.FAULT_REPORT, FAULT_PREFIX.size + k)

    def _config(self, msg) -> memoryview:
        self._check_count(msg)
        frame = self._frame
        CONFIG_PREFIX.pack_into(
            frame.data, HEADER_SIZE, self.joint_count, msg.effort_kind, msg.firmware_version
        )
        frame.config_limits[...] = msg.limits
        frame.config_kinds[...] = msg.joint_kind
        return self._finish(MsgType.CONFIG, frame.payload_length[MsgType.CONFIG])

    def _config_request(self, msg) -> memoryview:
        return self._finish(MsgType.CONFIG_REQUEST, 0)


class FrameDecoder:
    """Checks frames and decodes them into `latest` (a LatestMessages for `joint_count`)."""

    def __init__(self, joint_count: int):
        self._frame = _FrameBuffer(joint_count)
        self.joint_count = joint_count
        self.latest = LatestMessages(joint_count)
        self._decoders = _by_type(self)

    def decode(self, frame, header=None) -> Message:
        """Decodes one whole frame into its container in `latest` and returns the container.

        `header` is read_header(frame) if the caller has it already. Raises HeaderError,
        CrcError, PayloadError or JointCountError; a rejected frame leaves `latest` unchanged.
        """
        msg_type, length, seq = header or read_header(frame)
        covered, whole = self._frame.slices(length)
        if len(frame) != len(whole):
            raise HeaderError(
                f"{msg_type.name} seq {seq} is {len(frame)} bytes; its header says {len(whole)}",
                msg_type,
                seq,
            )
        whole[:] = frame
        return self._decode_loaded(msg_type, length, seq)

    def decode_from(self, address: int, msg_type: MsgType, length: int, seq: int) -> Message:
        """decode() of the frame at memory `address` whose header read_header() returned, e.g. in
        StreamParser's buffer (which must stay allocated and unresized). The frame is copied with
        ctypes.memmove, so no Python object is made for it (a memoryview slice would be)."""
        memmove(self._frame.address, address, HEADER_SIZE + length + CRC_SIZE)
        return self._decode_loaded(msg_type, length, seq)

    def _decode_loaded(self, msg_type: MsgType, length: int, seq: int) -> Message:
        """Checks and decodes the frame in the buffer."""
        covered = self._frame.slices(length)[0]
        (got,) = CRC.unpack_from(self._frame.data, len(covered))
        computed = crc32(covered)
        if got != computed:
            raise CrcError(msg_type, seq, got, computed)
        msg = self._decoders[msg_type](msg_type, seq, length)
        msg.seq = seq
        msg.rx_count += 1
        return msg

    def _check_count(self, msg_type, seq, length, count):
        """Raises unless the count field matches the payload length and the configured count."""
        if count == self.joint_count and length == self._frame.payload_length[msg_type]:
            return
        implied = PAYLOAD_RULES[msg_type].count(length)
        if count != implied:
            raise PayloadError(
                f"{msg_type.name} seq {seq}: count field {count} disagrees with "
                f"payload length {length} (count {implied})",
                msg_type,
                seq,
            )
        raise JointCountError(msg_type, seq, count, self.joint_count)

    @staticmethod
    def _lookup(table, raw, what, msg_type, seq):
        value = table.get(raw)
        if value is None:
            raise PayloadError(f"{msg_type.name} seq {seq}: unknown {what} {raw}", msg_type, seq)
        return value

    def _joint_state(self, msg_type, seq, length):
        time_us, status, command_seq, mode, count = STATE_PREFIX.unpack_from(self._frame.data, HEADER_SIZE)
        msg = self._joint_values(self.latest.joint_state, self._frame.state_values, msg_type, seq, length,
                                 count, mode)
        msg.time_us, msg.status, msg.command_seq = time_us, status, command_seq
        return msg

    def _command(self, msg_type, seq, length):
        time_us, watchdog_ms, mode, count = COMMAND_PREFIX.unpack_from(self._frame.data, HEADER_SIZE)
        msg = self._joint_values(self.latest.command, self._frame.command_values, msg_type, seq, length,
                                 count, mode)
        msg.time_us, msg.watchdog_ms = time_us, watchdog_ms
        return msg

    def _joint_values(self, msg, values, msg_type, seq, length, count, mode):
        """`msg` with the frame's per-joint `values` and command mode, once the joint count and the
        mode are checked (nothing is written before)."""
        self._check_count(msg_type, seq, length, count)
        msg.mode = self._lookup(_MODES, mode, "command mode", msg_type, seq)
        msg.values[...] = values
        return msg

    def _heartbeat(self, msg_type, seq, length):
        time_us, rx_errors, state = HEARTBEAT_PAYLOAD.unpack_from(self._frame.data, HEADER_SIZE)
        state = self._lookup(_NODE_STATES, state, "node state", msg_type, seq)
        msg = self.latest.heartbeat
        msg.time_us = time_us
        msg.rx_errors = rx_errors
        msg.node_state = state
        return msg

    def _fault_report(self, msg_type, seq, length):
        time_us, code, joint_index, text_length = FAULT_PREFIX.unpack_from(
            self._frame.data, HEADER_SIZE
        )
        if FAULT_PREFIX.size + text_length != length:
            raise PayloadError(
                f"{msg_type.name} seq {seq}: text length {text_length} disagrees with "
                f"payload length {length}",
                msg_type,
                seq,
            )
        if joint_index >= self.joint_count and joint_index != NO_JOINT:
            raise PayloadError(
                f"{msg_type.name} seq {seq}: joint index {joint_index} is out of range "
                f"for {self.joint_count} joints",
                msg_type,
                seq,
            )
        msg = self.latest.fault_report
        msg.time_us = time_us
        msg.code = _FAULT_CODES.get(code, code)
        msg.joint_index = joint_index
        start = HEADER_SIZE + FAULT_PREFIX.size
        msg.text_bytes[:text_length] = self._frame.view[start : start + text_length]
        msg.text_length = text_length
        return msg

    def _config(self, msg_type, seq, length):
        frame = self._frame
        count, effort_kind, firmware_version = CONFIG_PREFIX.unpack_from(frame.data, HEADER_SIZE)
        self._check_count(msg_type, seq, length, count)
        effort_kind = self._lookup(_EFFORT_KINDS, effort_kind, "effort kind", msg_type, seq)
        kinds = frame.config_kinds
        if kinds.max() > _MAX_JOINT_KIND:
            joint = int(np.argmax(kinds > _MAX_JOINT_KIND))
            raise PayloadError(
                f"{msg_type.name} seq {seq}: unknown joint kind {kinds[joint]} for joint {joint}",
                msg_type,
                seq,
            )
        msg = self.latest.config
        msg.effort_kind = effort_kind
        msg.firmware_version = firmware_version
        msg.limits[...] = frame.config_limits
        msg.joint_kind[...] = kinds
        return msg

    def _config_request(self, msg_type, seq, length):
        return self.latest.config_request
