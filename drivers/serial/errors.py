"""Typed errors of the serial protocol; each names the frame type and sequence number involved."""

from dynamics_cy.errors import HilstackError


class ProtocolError(HilstackError, ValueError):
    """A frame the receiver rejects. `msg_type` and `seq` are None where the header is unusable."""

    def __init__(self, message: str, msg_type=None, seq=None):
        super().__init__(message)
        self.msg_type = msg_type
        self.seq = seq


class HeaderError(ProtocolError):
    """Bad sync, version, message type or payload length: framing is lost, the parser resyncs."""


class CrcError(ProtocolError):
    """The CRC does not match: the bytes were corrupted, the parser resyncs."""

    def __init__(self, msg_type, seq: int, got: int, computed: int):
        super().__init__(
            f"CRC mismatch in frame type {msg_type.name} seq {seq}: "
            f"got 0x{got:08x}, computed 0x{computed:08x}",
            msg_type,
            seq,
        )
        self.got = got
        self.computed = computed


class PayloadError(ProtocolError):
    """An intact frame (CRC good) whose content is invalid, e.g. an unknown mode."""


class JointCountError(PayloadError):
    """An intact frame whose joint count differs from the configured one."""

    def __init__(self, msg_type, seq: int, got: int, expected: int):
        super().__init__(
            f"{msg_type.name} seq {seq} carries {got} joints, but the link is configured "
            f"for {expected}",
            msg_type,
            seq,
        )
        self.got = got
        self.expected = expected
