"""This package's LCM types by fingerprint."""
from messages import MESSAGE_TYPES


def fingerprint(message_type):
    """The 64-bit fingerprint an encoded `message_type` starts with, as an int."""
    return int.from_bytes(message_type._get_packed_fingerprint(), "big")


_BY_FINGERPRINT = {fingerprint(cls): cls for cls in MESSAGE_TYPES}


def type_for_fingerprint(value):
    """The type whose fingerprint is `value` (an int, or a buffer's first 8 bytes), or None."""
    if not isinstance(value, int):
        value = int.from_bytes(bytes(value[:8]), "big")
    return _BY_FINGERPRINT.get(value)
