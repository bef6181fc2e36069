"""The grippers' and the force/torque sensor's messages: Drake's definitions, the allocation-free
codec against lcm-gen's and Drake's classes (bytes and over LCM), validated decoding."""
import math
import random

import pytest

from messages import channels, codec, errors, lcmt_force_torque, lcmt_schunk_wsg_command, lcmt_schunk_wsg_status
from messages.registry import fingerprint
from messages.validation import MessageDecoder, decode_message
from tests.alloc import net_and_peak

drake = pytest.importorskip("drake", reason="pydrake (pip install drake) is not installed")

# (lcm type, its encoder, its decoder)
CODECS = [(lcmt_schunk_wsg_command, codec.WsgCommandEncoder, codec.WsgCommandDecoder),
          (lcmt_schunk_wsg_status, codec.WsgStatusEncoder, codec.WsgStatusDecoder),
          (lcmt_force_torque, codec.ForceTorqueEncoder, codec.ForceTorqueDecoder)]
IDS = [c[0].__name__ for c in CODECS]
# Drake's lcmtypes/*.lcm: each type's fields in order, with their LCM types.
DRAKE_FIELDS = {
    "lcmt_schunk_wsg_command": [("utime", "int64_t"), ("target_position_mm", "double"), ("force", "double")],
    "lcmt_schunk_wsg_status": [("utime", "int64_t"), ("actual_position_mm", "double"), ("actual_force", "double"),
                               ("actual_speed_mm_per_s", "double")],
    "lcmt_force_torque": [("timestamp", "int64_t")] + [(name, "double") for name in
                                                        ("fx", "fy", "fz", "tx", "ty", "tz")],
}


def _random(message_type, rng):
    message = message_type()
    names = message_type.__slots__
    setattr(message, names[0], rng.randrange(-2**63, 2**63))
    for name in names[1:]:
        setattr(message, name, rng.uniform(-1e3, 1e3))
    return message


def _values(message):
    return [getattr(message, name) for name in type(message).__slots__[1:]]


@pytest.mark.parametrize("message_type", [c[0] for c in CODECS], ids=IDS)
def test_definition_and_fingerprint_are_drakes(message_type):
    theirs = getattr(drake, message_type.__name__)
    assert list(zip(message_type.__slots__, message_type.__typenames__)) == DRAKE_FIELDS[message_type.__name__]
    assert list(zip(theirs.__slots__, theirs.__typenames__)) == DRAKE_FIELDS[message_type.__name__]
    assert fingerprint(message_type) == fingerprint(theirs)


@pytest.mark.parametrize("message_type, encoder_type, decoder_type", CODECS, ids=IDS)
def test_codec_bytes_equal_lcm_gen_and_drake(message_type, encoder_type, decoder_type):
    rng = random.Random(7)
    encoder, decoder = encoder_type(), decoder_type()
    theirs_type = getattr(drake, message_type.__name__)
    for _ in range(50):
        message = _random(message_type, rng)
        time, values = getattr(message, message_type.__slots__[0]), _values(message)
        ours = bytes(encoder.encode_or_raise(time, *values))
        assert ours == message.encode()
        theirs = theirs_type.decode(ours)                     # Drake's class reads ours
        assert theirs.encode() == ours and _values(theirs) == values
        decoder.decode_or_raise(theirs.encode())              # ours reads Drake's
        assert decoder.utime == time and list(decoder.values) == values


def test_named_fields_of_the_wsg_decoders():
    status = codec.WsgStatusDecoder()
    status.decode_or_raise(codec.WsgStatusEncoder().encode_or_raise(3, 55.0, -12.5, 7.0))
    assert (status.utime, status.actual_position_mm, status.actual_force, status.actual_speed_mm_per_s) == \
        (3, 55.0, -12.5, 7.0)
    command = codec.WsgCommandDecoder()
    command.decode_or_raise(codec.WsgCommandEncoder().encode_or_raise(4, 20.0, 40.0))
    assert (command.utime, command.target_position_mm, command.force) == (4, 20.0, 40.0)


def test_over_lcm_both_ways(memq):
    """Ours published on the gripper channels reaches Drake's classes, and Drake's reaches ours."""
    got = {}
    memq.subscribe(channels.SCHUNK_WSG_COMMAND, lambda c, d: got.update({c: drake.lcmt_schunk_wsg_command.decode(d)}))
    memq.subscribe(channels.PANDA_HAND_STATUS, lambda c, d: got.update({c: d}))
    encoder = codec.WsgCommandEncoder(channel=channels.SCHUNK_WSG_COMMAND)
    encoder.encode_or_raise(1000, 25.0, 40.0)
    assert encoder.publish(memq)
    status = drake.lcmt_schunk_wsg_status()
    status.utime, status.actual_position_mm, status.actual_force, status.actual_speed_mm_per_s = 2000, 80.0, 0.0, 5.0
    memq.publish(channels.PANDA_HAND_STATUS, status.encode())
    memq.handle_timeout(0)
    memq.handle_timeout(0)
    command = got[channels.SCHUNK_WSG_COMMAND]
    assert (command.utime, command.target_position_mm, command.force) == (1000, 25.0, 40.0)
    decoder = codec.WsgStatusDecoder(channel=channels.PANDA_HAND_STATUS)
    decoder.decode_or_raise(got[channels.PANDA_HAND_STATUS])
    assert list(decoder.values) == [80.0, 0.0, 5.0] and decoder.utime == 2000
    assert channels.GRIPPER_CHANNELS == {"wsg": ("SCHUNK_WSG_STATUS", "SCHUNK_WSG_COMMAND"),
                                         "panda_hand": ("PANDA_HAND_STATUS", "PANDA_HAND_COMMAND")}


@pytest.mark.parametrize("message_type, encoder_type, decoder_type", CODECS, ids=IDS)
def test_malformed_packets_are_refused_with_the_field_named(message_type, encoder_type, decoder_type):
    good = _random(message_type, random.Random(3)).encode()
    names = message_type.__slots__
    decoder, checked = decoder_type(channel="CH"), MessageDecoder(message_type, channel="CH")
    for size in range(len(good)):                 # every truncation
        for decode in (decoder.decode_or_raise, checked.decode_or_raise):
            with pytest.raises(errors.TruncatedError) as raised:
                decode(good[:size])
            assert "truncated" in str(raised.value) and "CH" in str(raised.value)
        field = decoder.last_error.field
        assert field == ("fingerprint" if size < 8 else names[0] if size < 16 else names[1 + (size - 16) // 8])
    with pytest.raises(errors.OversizedError, match="oversized"):
        decoder.decode_or_raise(good + b"\0")
    with pytest.raises(errors.OversizedError):
        decode_message(message_type, good + b"\0")
    other = lcmt_schunk_wsg_status if message_type is not lcmt_schunk_wsg_status else lcmt_schunk_wsg_command
    with pytest.raises(errors.FingerprintError, match=f"holds {other.__name__}"):
        decoder.decode_or_raise(_random(other, random.Random(4)).encode())
    for i, name in enumerate(names[1:]):          # a NaN or an infinity in each field
        for bad in (math.nan, math.inf):
            message = message_type.decode(good)
            setattr(message, name, bad)
            for decode in (decoder.decode_or_raise, lambda d: decode_message(message_type, d)):
                with pytest.raises(errors.NonFiniteError, match=f"{name} is {bad}") as raised:
                    decode(message.encode())
                assert raised.value.field == name
    assert decoder.counters["truncated"] == len(good) and decoder.counters["non_finite"] == 2 * (len(names) - 1)
    assert list(decoder.values) == [0.0] * (len(names) - 1)      # nothing bad was ever written


@pytest.mark.parametrize("message_type, encoder_type, decoder_type", CODECS, ids=IDS)
def test_encoder_refuses_non_finite_values(message_type, encoder_type, decoder_type):
    encoder = encoder_type()
    n = len(message_type.__slots__) - 1
    assert encoder.encode(1, *[1.0] * n) is not None
    values = [1.0] * n
    values[-1] = math.nan
    assert encoder.encode(2, *values) is None and encoder.tobytes() is None
    assert encoder.publish(None) is False
    with pytest.raises(errors.NonFiniteError, match=message_type.__slots__[-1]):
        encoder.encode_or_raise(2, *values)


def test_codec_allocates_nothing():
    status_out, status_in = codec.WsgStatusEncoder(), codec.WsgStatusDecoder()
    command_out, command_in = codec.WsgCommandEncoder(), codec.WsgCommandDecoder()
    ft_out, ft_in = codec.ForceTorqueEncoder(), codec.ForceTorqueDecoder()
    status = status_out.encode_or_raise(1, 50.0, 2.0, 0.0).tobytes()
    command = command_out.encode_or_raise(1, 50.0, 40.0).tobytes()
    ft = ft_out.encode_or_raise(1, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0).tobytes()
    x = 0.5

    def tick():
        status_out.encode(7, x, x, x)
        command_out.encode(7, x, x)
        ft_out.encode(7, x, x, x, x, x, x)
        status_in.decode(status)
        command_in.decode(command)
        ft_in.decode(ft)

    measured, frame = net_and_peak(tick)
    assert measured == frame
