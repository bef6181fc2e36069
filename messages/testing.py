"""Random instances of any LCM type, for tests (of this package or of its users).

    random_message(messages.lcmt_iiwa_status, random.Random(0), counts={"num_joints": 7})

Works for any lcm-gen class, Drake's included: num_* fields are random in
[0, max_length] unless given in `counts`; values cover each primitive type's
range (float values are exact in float32; strings include non-ASCII).
"""
import importlib
import struct

_INT_RANGES = {"int8_t": 8, "int16_t": 16, "int32_t": 32, "int64_t": 64}
_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/ .é°"


def _resolve_type(type_name):
    """The lcm-gen class of a nested type name such as "messages.drake.lcmt_point"."""
    package, name = type_name.rsplit(".", 1)
    return getattr(importlib.import_module(package), name)


def _scalar(type_name, rng):
    if type_name in _INT_RANGES:
        bits = _INT_RANGES[type_name]
        return rng.randint(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if type_name == "byte":
        return rng.randint(0, 255)
    if type_name == "boolean":
        return rng.random() < 0.5
    if type_name == "float":
        return struct.unpack("f", struct.pack("f", rng.uniform(-1e3, 1e3)))[0]
    if type_name == "double":
        return rng.uniform(-1e6, 1e6)
    if type_name == "string":
        return "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 12)))
    return random_message(_resolve_type(type_name), rng)


def _array(type_name, dims, counts, rng):
    if not dims:
        return _scalar(type_name, rng)
    length = counts[dims[0]] if isinstance(dims[0], str) else int(dims[0])
    return [_array(type_name, dims[1:], counts, rng) for _ in range(length)]


def random_message(message_type, rng, max_length=4, counts=None):
    """A random instance of the lcm-gen class `message_type`, drawn from `rng` (random.Random)."""
    count_fields = {dim for dims in message_type.__dimensions__ if dims
                    for dim in dims if isinstance(dim, str)}
    counts = dict(counts or {})
    for name in count_fields:
        counts.setdefault(name, rng.randint(0, max_length))
    message = message_type()
    for name, type_name, dims in zip(message_type.__slots__, message_type.__typenames__,
                                     message_type.__dimensions__):
        if name in count_fields:
            value = counts[name]
        else:
            value = _array(type_name, dims or [], counts, rng)
        setattr(message, name, value)
    return message
