"""Validated decoding of any of this package's LCM types, through the lcm-gen classes.

For what is not on the 1 kHz path (e-stops, plans, telemetry, viewer
messages, logs); the hot path uses messages.codec. lcm-gen's own decode()
ignores trailing bytes, can miss a truncated final string and accepts NaN;
its encode() silently drops array entries beyond num_*; it reads any byte as a
boolean, drops a string's last byte without checking it is the NUL, and
replaces invalid UTF-8 (lcm-gen's C/C++ decoders are no stricter). These
helpers close those gaps with the typed errors of messages.errors (the
lenient encodings are MalformedError, counted as "malformed"):

    decode_message(message_type, data, channel="", num_joints=None, check_values=True)
                                                                     -> message   (raises)
    check_message(message, channel="", num_joints=None)                          (raises)
    MessageDecoder(message_type, channel=None, num_joints=None).decode(data) -> message | None
"""
import io
import math

from messages import errors
from messages.registry import fingerprint


class _ShortRead(Exception):
    def __init__(self, needed):
        super().__init__(needed)
        self.needed = needed


class _StrictReader(io.BytesIO):
    """A BytesIO on which a short or negative read raises instead of returning less."""

    def read(self, size=-1):
        if size is None or size < 0:
            raise ValueError(f"negative length {size}")
        start = self.tell()
        data = super().read(size)
        if len(data) != size:
            raise _ShortRead(start + size)
        return data


def decode_message(message_type, data, channel="", num_joints=None, check_values=True):
    """Decode `data` as `message_type` and check it; raises a MessageError if invalid.

    The fingerprint and the buffer's length are always checked; with
    check_values, so are the values (check_message), and num_joints, if given,
    must equal the message's num_joints field.
    """
    data = bytes(data)
    where = {"channel": channel, "type_name": message_type.__name__}
    expected = fingerprint(message_type)
    if len(data) < 8:
        raise errors.TruncatedError(field="fingerprint", expected=8, actual=len(data), **where)
    actual = int.from_bytes(data[:8], "big")
    if actual != expected:
        raise errors.FingerprintError(expected=expected, actual=actual, **where)
    reader = _StrictReader(data)
    reader.seek(8)
    try:
        message = message_type._decode_one(reader)
    except _ShortRead as short:
        raise errors.TruncatedError(expected=short.needed, actual=len(data), **where) from None
    except Exception as error:  # lcm-gen raises struct.error/ValueError on garbage
        raise errors.MalformedError(actual=str(error), expected="lcm-gen could not decode it",
                                    **where) from None
    if reader.tell() != len(data):
        raise errors.OversizedError(expected=reader.tell(), actual=len(data), **where)
    _check_encoding(message, data, 8, "", where)
    if check_values:
        check_message(message, channel, num_joints)
    return message


_SIZES = {"int8_t": 1, "byte": 1, "boolean": 1, "int16_t": 2, "int32_t": 4, "float": 4, "int64_t": 8, "double": 8}


def _check_encoding(message, data, pos, prefix, where):
    """The raw bytes behind the decoded `message` (at `pos` of `data`), checked where lcm-gen's Python
    decode() is lenient: a boolean must be 0 or 1 (lcm-gen reads any byte as bool), a string must end
    in its NUL (lcm-gen drops the last byte unseen), hold no other NUL and be valid UTF-8 (lcm-gen
    substitutes U+FFFD). A MalformedError names the field; returns the position after the message."""
    for name, type_name, dims in zip(message.__slots__, message.__typenames__, message.__dimensions__):
        value, path = getattr(message, name), prefix + name
        items = [(value, path)]
        for _ in dims or []:                      # flatten the array dimensions, row-major
            items = [(v, f"{p}[{i}]") for seq, p in items for i, v in enumerate(seq)]
        size = _SIZES.get(type_name)
        if size is not None and type_name != "boolean":
            pos += size * len(items)
        elif type_name == "boolean":
            for _, p in items:
                if data[pos] not in (0, 1):
                    raise errors.MalformedError(field=p, actual=data[pos], expected="a boolean is 0 or 1", **where)
                pos += 1
        elif type_name == "string":
            for _, p in items:
                n = int.from_bytes(data[pos:pos + 4], "big")
                raw = data[pos + 4:pos + 4 + n]
                pos += 4 + n
                if n == 0 or raw[-1] != 0:
                    raise errors.MalformedError(field=p, actual=raw[-20:],
                                                expected="a string ends in its NUL byte", **where)
                if 0 in raw[:-1]:
                    raise errors.MalformedError(field=p, actual=raw[:-1][:40],
                                                expected="a string holds no NUL before its end", **where)
                try:
                    raw[:-1].decode("utf-8")
                except UnicodeDecodeError as e:
                    raise errors.MalformedError(field=p, actual=raw[max(0, e.start - 10):e.start + 10],
                                                expected=f"a string is UTF-8 (bad byte at {e.start})",
                                                **where) from None
        else:                                     # a nested LCM type: no fingerprint inside
            for v, p in items:
                pos = _check_encoding(v, data, pos, p + ".", where)
    return pos


def check_message(message, channel="", num_joints=None):
    """Raise a MessageError if a num_* field disagrees with its arrays, a float or
    double is not finite, or (when given) num_joints differs from the message's.

    Walks nested types; the error's field is the element's path, e.g.
    "link[2].geom[0].float_data".
    """
    where = {"channel": channel, "type_name": type(message).__name__}
    _check(message, "", where)
    if num_joints is not None and "num_joints" in type(message).__slots__ \
            and message.num_joints != num_joints:
        raise errors.JointCountError(field="num_joints", expected=num_joints,
                                     actual=message.num_joints, **where)


def _check(message, prefix, where):
    for name, type_name, dims in zip(message.__slots__, message.__typenames__,
                                     message.__dimensions__):
        _check_value(message, prefix, getattr(message, name), type_name, dims or [],
                     prefix + name, where)


def _check_value(message, prefix, value, type_name, dims, path, where):
    if dims:
        dim = dims[0]
        if isinstance(dim, str):
            count, count_field = getattr(message, dim), prefix + dim
        else:
            count, count_field = dim, f"len({path})"
        if len(value) != count:
            raise errors.LengthMismatchError(field=count_field, expected=len(value), actual=count,
                                             **where)
        for i, element in enumerate(value):
            if len(dims) == 1 and type_name in ("double", "float"):
                if not math.isfinite(element):
                    raise errors.NonFiniteError(field=path, index=i, actual=element, **where)
            else:
                _check_value(message, prefix, element, type_name, dims[1:], f"{path}[{i}]", where)
    elif type_name in ("double", "float"):
        if not math.isfinite(value):
            raise errors.NonFiniteError(field=path, actual=value, **where)
    elif "." in type_name:  # a nested LCM type
        _check(value, path + ".", where)


class MessageDecoder:
    """decode(data) -> message or None for one LCM type; never raises for a bad message.

    Same bookkeeping as the messages.codec decoders: last_error, counters,
    ok_count, decode_or_raise.
    """

    def __init__(self, message_type, channel=None, num_joints=None):
        self.message_type = message_type
        self.channel = channel
        self.num_joints = num_joints
        self.last_error = None
        self.ok_count = 0
        self._counts = {cls.counter: 0 for cls in errors.ERROR_TYPES}

    @property
    def counters(self):
        """{counter name: failures} for every error type."""
        return dict(self._counts)

    def decode(self, data):
        """The decoded message, or None (and last_error set, its counter incremented)."""
        try:
            message = decode_message(self.message_type, data, self.channel or "", self.num_joints)
        except errors.MessageError as error:
            self.last_error = error
            self._counts[error.counter] += 1
            return None
        self.ok_count += 1
        return message

    def decode_or_raise(self, data):
        """decode(data), raising the typed error instead of returning None."""
        message = self.decode(data)
        if message is None:
            raise self.last_error
        return message

