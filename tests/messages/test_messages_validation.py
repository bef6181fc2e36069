"""Validated decoding of any type through the lcm-gen classes (messages.validation)."""
import math

import pytest

import messages
from messages import errors
from messages.testing import random_message
from messages.validation import MessageDecoder, check_message, decode_message


@pytest.mark.parametrize("message_type", messages.MESSAGE_TYPES, ids=lambda cls: cls.__name__)
def test_valid_messages_decode(message_type, rng):
    for _ in range(10):
        data = random_message(message_type, rng).encode()
        assert decode_message(message_type, data).encode() == data


def _estop():
    message = messages.lcmt_hil_estop()
    message.latched, message.source, message.reason = True, "pendant", "operator pressed"
    return message


def _raises(error_type, texts, function, *args, **kwargs):
    with pytest.raises(error_type) as info:
        function(*args, **kwargs)
    for text in texts:
        assert text in str(info.value)
    return info.value


def test_each_error_is_typed_and_explained():
    data = _estop().encode()
    _raises(errors.FingerprintError, ["HIL_ESTOP (lcmt_hil_estop)", "holds lcmt_iiwa_status"],
            decode_message, messages.lcmt_hil_estop, messages.lcmt_iiwa_status().encode(), "HIL_ESTOP")
    _raises(errors.TruncatedError, ["buffer of 3 bytes", "fingerprint"],
            decode_message, messages.lcmt_hil_estop, data[:3])
    # lcm-gen alone would accept a message cut inside its last string.
    _raises(errors.TruncatedError, [f"buffer of {len(data) - 4} bytes", f"at least {len(data)}"],
            decode_message, messages.lcmt_hil_estop, data[:-4])
    _raises(errors.OversizedError, ["2 extra"], decode_message, messages.lcmt_hil_estop, data + b"\0\0")

    status = messages.lcmt_iiwa_status()
    status.num_joints = 6
    for name in status.__slots__[2:]:
        setattr(status, name, [0.0] * 6)
    _raises(errors.JointCountError, ["num_joints has 6 joints but the model has 7"],
            decode_message, messages.lcmt_iiwa_status, status.encode(), num_joints=7)
    status.joint_torque_external = [0.0] * 5 + [math.nan]
    _raises(errors.NonFiniteError, ["joint_torque_external[5] is nan"],
            decode_message, messages.lcmt_iiwa_status, status.encode())

    raw = messages.lcmt_viewer_draw().encode()
    raw = raw[:16] + (-1).to_bytes(4, "big", signed=True) + raw[20:]  # num_links = -1
    _raises(errors.MalformedError, ["negative length"], decode_message, messages.lcmt_viewer_draw, raw)


def test_check_message_catches_what_lcm_gen_encode_silently_drops(rng):
    status = random_message(messages.lcmt_iiwa_status, rng, counts={"num_joints": 3})
    status.joint_position_measured = list(status.joint_position_measured) + [1.0]
    assert status.encode()  # lcm-gen drops the 4th entry without a word
    _raises(errors.LengthMismatchError, ["num_joints=3", "implies 4"], check_message, status, "IIWA_STATUS")

    geometry = messages.lcmt_viewer_geometry_data()
    geometry.num_float_data, geometry.float_data = 1, [math.inf]
    link = messages.lcmt_viewer_link_data()
    link.num_geom, link.geom = 1, [geometry]
    load = messages.lcmt_viewer_load_robot()
    load.num_links, load.link = 1, [link]
    _raises(errors.NonFiniteError, ["link[0].geom[0].float_data[0] is inf"], check_message, load)
    geometry.float_data = [1.0]
    geometry.position = [0.0, 0.0]
    _raises(errors.LengthMismatchError, ["len(link[0].geom[0].position)=3", "implies 2"],
            check_message, load)

    plan = random_message(messages.lcmt_hil_joint_plan, rng, counts={"num_joints": 2, "num_knots": 2})
    plan.velocity = [[0.0, 0.0], [0.0]]
    _raises(errors.LengthMismatchError, ["num_joints=2", "implies 1"], check_message, plan)


def test_message_decoder_never_raises_and_counts():
    decoder = MessageDecoder(messages.lcmt_hil_estop, channel="HIL_ESTOP")
    assert decoder.decode(_estop().encode()).reason == "operator pressed"
    assert decoder.decode(b"\x01\x02") is None
    assert decoder.decode(messages.lcmt_iiwa_status().encode()) is None
    assert isinstance(decoder.last_error, errors.FingerprintError)
    assert decoder.ok_count == 1
    assert decoder.counters == {cls.counter: int(cls.counter in ("truncated", "fingerprint"))
                                for cls in errors.ERROR_TYPES}
    with pytest.raises(errors.TruncatedError):
        decoder.decode_or_raise(b"")
