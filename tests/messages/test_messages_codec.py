"""The allocation-free codec: same bytes as lcm-gen, every validation error, no allocations."""
import itertools
import math
import tracemalloc

import numpy as np
import pytest

from messages import (
    codec,
    errors,
    lcmt_iiwa_command,
    lcmt_iiwa_status,
    lcmt_panda_command,
    lcmt_panda_status,
    lcmt_robot_state,
)
from messages.testing import random_message

N = 7
NAMES = [f"iiwa_joint_{i + 1}" for i in range(N)]

# codec array name -> lcm field, per status type.
STATUS_FIELDS = {
    "iiwa": {"position_measured": "joint_position_measured",
             "velocity_estimated": "joint_velocity_estimated",
             "position_commanded": "joint_position_commanded",
             "position_ipo": "joint_position_ipo",
             "torque_measured": "joint_torque_measured",
             "torque_commanded": "joint_torque_commanded",
             "torque_external": "joint_torque_external"},
    "panda": {"position_measured": "joint_position",
              "position_commanded": "joint_position_desired",
              "velocity_estimated": "joint_velocity",
              "velocity_commanded": "joint_velocity_desired",
              "acceleration_commanded": "joint_acceleration_desired",
              "torque_measured": "joint_torque",
              "torque_commanded": "joint_torque_desired",
              "torque_external": "joint_torque_external"},
}
PANDA_SCALARS = ("control_command_success_rate", "robot_mode", "robot_utime", "control_mode")
STATUS_TYPES = {"iiwa": lcmt_iiwa_status, "panda": lcmt_panda_status}
COMMAND_TYPES = {"iiwa": lcmt_iiwa_command, "panda": lcmt_panda_command}
# codec array name -> (count field, lcm field), per command type.
COMMAND_FIELDS = {
    "iiwa": {"position": ("num_joints", "joint_position"),
             "torque": ("num_torques", "joint_torque")},
    "panda": {"position": ("num_joint_position", "joint_position"),
              "velocity": ("num_joint_velocity", "joint_velocity"),
              "torque": ("num_joint_torque", "joint_torque")},
}
COMMAND_MODES = [("iiwa", ("position",)), ("iiwa", ("torque",)), ("iiwa", ("position", "torque"))] + [
    ("panda", fields) for r in (1, 2, 3)
    for fields in itertools.combinations(("position", "velocity", "torque"), r)]
MODE_BITS = {"position": 1, "velocity": 2, "torque": 4}


def status_message(kind, rng, num_joints=N):
    return random_message(STATUS_TYPES[kind], rng, counts={"num_joints": num_joints})


def command_message(kind, fields, rng, num_joints=N):
    counts = {count: num_joints if name in fields else 0
              for name, (count, _) in COMMAND_FIELDS[kind].items()}
    message = random_message(COMMAND_TYPES[kind], rng, counts=counts)
    if kind == "panda":
        message.control_mode_expected = sum(MODE_BITS[name] for name in fields)
    return message


def robot_state_message(rng, names=NAMES):
    message = random_message(lcmt_robot_state, rng, counts={"num_joints": len(names)})
    message.joint_name = list(names)
    return message


# ---------------------------------------------------------------- same bytes as lcm-gen

@pytest.mark.parametrize("kind", ["iiwa", "panda"])
def test_status_encoder_writes_lcm_gen_bytes(kind, rng):
    encoder = codec.StatusEncoder(kind, N, channel="STATUS")
    for _ in range(50):
        message = status_message(kind, rng)
        arrays = {name: np.array(getattr(message, field))
                  for name, field in STATUS_FIELDS[kind].items()}
        scalars = {name: getattr(message, name) for name in PANDA_SCALARS} if kind == "panda" else {}
        assert bytes(encoder.encode(message.utime, **arrays, **scalars)) == message.encode()
    assert encoder.ok_count == 50


def test_status_encoder_sends_zeros_for_missing_arrays():
    encoder = codec.StatusEncoder("iiwa", N)
    q = np.arange(1.0, N + 1)
    message = lcmt_iiwa_status.decode(bytes(encoder.encode(5, position_measured=q)))
    assert message.joint_position_measured == tuple(q)
    assert message.joint_torque_external == (0.0,) * N


@pytest.mark.parametrize("kind", ["iiwa", "panda"])
def test_status_decoder_reads_lcm_gen_bytes(kind, rng):
    decoder = codec.StatusDecoder(kind, N, channel="STATUS")
    for _ in range(50):
        message = status_message(kind, rng)
        assert decoder.decode(message.encode()) is True
        assert decoder.utime == message.utime
        for name, field in STATUS_FIELDS[kind].items():
            np.testing.assert_array_equal(getattr(decoder, name), getattr(message, field))
        if kind == "panda":
            for name in PANDA_SCALARS:
                assert getattr(decoder, name) == getattr(message, name)
    other = "velocity_commanded" if kind == "iiwa" else "position_ipo"
    assert getattr(decoder, other) is None
    assert decoder.ok_count == 50 and decoder.last_error is None


@pytest.mark.parametrize("kind, fields", COMMAND_MODES)
def test_command_encoder_writes_lcm_gen_bytes(kind, fields, rng):
    encoder = codec.CommandEncoder(kind, N, fields=fields)
    for _ in range(30):
        message = command_message(kind, fields, rng)
        arrays = {name: np.array(getattr(message, COMMAND_FIELDS[kind][name][1])) for name in fields}
        assert bytes(encoder.encode(message.utime, **arrays)) == message.encode()


@pytest.mark.parametrize("kind, fields", COMMAND_MODES)
def test_command_decoder_reads_lcm_gen_bytes(kind, fields, rng):
    decoder = codec.CommandDecoder(kind, N)
    for _ in range(30):
        message = command_message(kind, fields, rng)
        assert decoder.decode(message.encode()) is True
        assert decoder.utime == message.utime
        assert decoder.control_mode == sum(MODE_BITS[name] for name in fields)
        for name, (_, field) in COMMAND_FIELDS[kind].items():
            assert getattr(decoder, f"has_{name}") == (name in fields)
            expected = getattr(message, field) if name in fields else [0.0] * N
            np.testing.assert_array_equal(getattr(decoder, name), expected)


def test_robot_state_codec_matches_lcm_gen(rng):
    encoder, decoder = codec.RobotStateEncoder(NAMES), codec.RobotStateDecoder(NAMES)
    for _ in range(30):
        message = robot_state_message(rng)
        position = np.array(message.joint_position)
        assert bytes(encoder.encode(message.utime, position)) == message.encode()
        assert decoder.decode(message.encode()) is True
        np.testing.assert_array_equal(decoder.position, position)
        assert decoder.utime == message.utime
    unnamed = codec.RobotStateDecoder(num_joints=N)
    assert unnamed.decode(robot_state_message(rng, names=list("abcdefg")).encode())


@pytest.mark.parametrize("kind", ["iiwa", "panda"])
def test_drake_classes_read_the_codec(kind, rng):
    drake = pytest.importorskip("drake", reason="pydrake (pip install drake) is not installed")
    message = status_message(kind, rng)
    arrays = {name: np.array(getattr(message, field)) for name, field in STATUS_FIELDS[kind].items()}
    data = bytes(codec.StatusEncoder(kind, N).encode(message.utime, **arrays))
    assert getattr(drake, STATUS_TYPES[kind].__name__).decode(data).encode() == data
    command = command_message(kind, ("torque",), rng)
    data = bytes(codec.CommandEncoder(kind, N, fields=("torque",)).encode(
        command.utime, torque=np.array(command.joint_torque)))
    assert getattr(drake, COMMAND_TYPES[kind].__name__).decode(data).encode() == data


# ---------------------------------------------------------------- decode validation

def _patch_i32(data, offset, value):
    return data[:offset] + int(value).to_bytes(4, "big", signed=True) + data[offset + 4:]


def _iiwa_status(rng, num_joints=N, **values):
    message = status_message("iiwa", rng, num_joints)
    for field, (index, value) in values.items():
        array = list(getattr(message, field))
        array[index] = value
        setattr(message, field, array)
    return message.encode()


def _iiwa_command(rng, num_joints=N, num_torques=N):
    message = random_message(lcmt_iiwa_command, rng,
                             counts={"num_joints": num_joints, "num_torques": num_torques})
    return message.encode()


def _panda_command(rng, mode, counts):
    message = random_message(lcmt_panda_command, rng, counts=dict(zip(
        ("num_joint_position", "num_joint_velocity", "num_joint_torque"), counts)))
    message.control_mode_expected = mode
    return message.encode()


def _panda_status_rate(rng, rate):
    message = status_message("panda", rng)
    message.control_command_success_rate = rate
    return message.encode()


def _robot_state(rng, names=NAMES, position=None):
    message = robot_state_message(rng, names)
    if position is not None:
        message.joint_position = position
    return message.encode()


def _bad_string(rng, length_value, drop_nul=False):
    """A robot state whose second name has a bad length field or no NUL terminator."""
    data = bytearray(_robot_state(rng))
    second = 18 + 4 + len(NAMES[0]) + 1
    if drop_nul:
        data[second + 4 + len(NAMES[1])] = ord("x")
    else:
        data[second:second + 4] = int(length_value).to_bytes(4, "big", signed=True)
    return bytes(data)


# name -> (decoder factory, good message factory)
DECODERS = {
    "iiwa status": (lambda: codec.StatusDecoder("iiwa", N, channel="IIWA_STATUS"),
                    lambda rng: status_message("iiwa", rng)),
    "panda status": (lambda: codec.StatusDecoder("panda", N, channel="PANDA_STATUS"),
                     lambda rng: status_message("panda", rng)),
    "iiwa command": (lambda: codec.CommandDecoder("iiwa", N, channel="IIWA_COMMAND"),
                     lambda rng: command_message("iiwa", ("position", "torque"), rng)),
    "panda command": (lambda: codec.CommandDecoder("panda", N, channel="PANDA_COMMAND"),
                      lambda rng: command_message("panda", ("torque",), rng)),
    "robot state": (lambda: codec.RobotStateDecoder(NAMES, channel="STATE"), robot_state_message),
}

# case -> (decoder name, bad bytes factory, error type, substrings of the error message)
DECODE_CASES = {
    "status wrong fingerprint": (
        "iiwa status",
        lambda rng: _iiwa_command(rng), errors.FingerprintError,
        ["IIWA_STATUS (lcmt_iiwa_status)", "0xddc7c7738c815334", "0xf16fb804284abca3",
         "holds lcmt_iiwa_command"]),
    "status truncated in fingerprint": (
        "iiwa status",
        lambda rng: _iiwa_status(rng)[:5], errors.TruncatedError,
        ["buffer of 5 bytes", "fingerprint", "at least 8"]),
    "status truncated in header": (
        "iiwa status",
        lambda rng: _iiwa_status(rng)[:18], errors.TruncatedError,
        ["buffer of 18 bytes", "num_joints", "at least 20"]),
    "status truncated in an array": (
        "iiwa status",
        lambda rng: _iiwa_status(rng)[:-5], errors.TruncatedError,
        ["buffer of 407 bytes", "joint_torque_external", "at least 412"]),
    "status oversized": (
        "iiwa status",
        lambda rng: _iiwa_status(rng) + b"\0\0\0", errors.OversizedError,
        ["buffer of 415 bytes", "ends at byte 412", "3 extra"]),
    "status num_joints disagrees with the arrays": (
        "iiwa status",
        lambda rng: _patch_i32(_iiwa_status(rng, num_joints=6), 16, 7),
        errors.LengthMismatchError, ["num_joints=7", "implies 6"]),
    "status negative num_joints": (
        "iiwa status",
        lambda rng: _patch_i32(_iiwa_status(rng), 16, -1),
        errors.LengthMismatchError, ["num_joints=-1"]),
    "status NaN": (
        "iiwa status",
        lambda rng: _iiwa_status(rng, joint_torque_measured=(2, math.nan)),
        errors.NonFiniteError, ["joint_torque_measured[2] is nan"]),
    "status inf": (
        "iiwa status",
        lambda rng: _iiwa_status(rng, joint_velocity_estimated=(6, -math.inf)),
        errors.NonFiniteError, ["joint_velocity_estimated[6] is -inf"]),
    "status joint count": (
        "iiwa status",
        lambda rng: _iiwa_status(rng, num_joints=6), errors.JointCountError,
        ["num_joints has 6 joints but the model has 7"]),
    "panda status NaN success rate": (
        "panda status",
        lambda rng: _panda_status_rate(rng, math.nan), errors.NonFiniteError,
        ["PANDA_STATUS (lcmt_panda_status)", "control_command_success_rate is nan"]),
    "panda status truncated in the tail": (
        "panda status",
        lambda rng: _panda_status_rate(rng, 1.0)[:-2], errors.TruncatedError,
        ["robot_utime", "at least 486"]),
    "iiwa command num_torques disagrees with num_joints": (
        "iiwa command",
        lambda rng: _iiwa_command(rng, N, 3), errors.LengthMismatchError,
        ["IIWA_COMMAND (lcmt_iiwa_command)", "num_torques=3", "implies 7"]),
    "iiwa command empty": (
        "iiwa command",
        lambda rng: _iiwa_command(rng, 0, 0), errors.LengthMismatchError,
        ["num_joints=0", "implies 7"]),
    "iiwa command joint count": (
        "iiwa command",
        lambda rng: _iiwa_command(rng, 6, 6), errors.JointCountError,
        ["num_joints has 6 joints but the model has 7"]),
    "iiwa command truncated": (
        "iiwa command",
        lambda rng: _iiwa_command(rng)[:30], errors.TruncatedError,
        ["buffer of 30 bytes", "joint_position", "at least 76"]),
    "iiwa command oversized": (
        "iiwa command",
        lambda rng: _iiwa_command(rng) + b"\0", errors.OversizedError, ["ends at byte 136"]),
    "panda command array not selected by the mode": (
        "panda command",
        lambda rng: _panda_command(rng, 1, (N, 0, N)), errors.LengthMismatchError,
        ["num_joint_torque=7", "implies 0"]),
    "panda command array missing for the mode": (
        "panda command",
        lambda rng: _panda_command(rng, 4, (0, 0, 0)), errors.LengthMismatchError,
        ["num_joint_torque=0", "implies 7"]),
    "panda command invalid mode": (
        "panda command",
        lambda rng: _panda_command(rng, 8, (0, 0, 0)), errors.MalformedError,
        ["control_mode_expected", "(8;"]),
    "robot state names": (
        "robot state",
        lambda rng: _robot_state(rng, names=NAMES[:3] + ["elbow"] + NAMES[4:]),
        errors.JointNamesError, ["STATE (lcmt_robot_state)", "joint_name[3]", "'iiwa_joint_4'"]),
    "robot state joint count": (
        "robot state",
        lambda rng: _robot_state(rng, names=NAMES[:6]), errors.JointCountError,
        ["has 6 joints but the model has 7"]),
    "robot state zero string length": (
        "robot state",
        lambda rng: _bad_string(rng, 0), errors.MalformedError, ["joint_name[1]", "(0;"]),
    "robot state string without NUL": (
        "robot state",
        lambda rng: _bad_string(rng, 0, drop_nul=True), errors.MalformedError,
        ["joint_name[1]", "NUL"]),
    "robot state truncated string": (
        "robot state",
        lambda rng: _bad_string(rng, 10_000), errors.TruncatedError, ["joint_name[1]"]),
    "robot state NaN": (
        "robot state",
        lambda rng: _robot_state(rng, position=[0.0] * 5 + [math.inf, 0.0]),
        errors.NonFiniteError, ["joint_position[5] is inf"]),
}


@pytest.mark.parametrize("case", DECODE_CASES, ids=list(DECODE_CASES))
def test_invalid_message_is_reported_never_raised(case, rng):
    decoder_name, make_bad, error_type, texts = DECODE_CASES[case]
    make_decoder, make_good = DECODERS[decoder_name]
    decoder = make_decoder()
    assert decoder.decode(make_good(rng).encode())
    before = {name: np.copy(value) for name, value in _arrays(decoder).items()}
    utime = decoder.utime

    assert decoder.decode(make_bad(rng)) is False
    error = decoder.last_error
    assert type(error) is error_type
    for text in texts:
        assert text in str(error)
    assert decoder.counters == {name: int(name == error_type.counter) for name in codec.ERROR_NAMES[1:]}
    assert decoder.ok_count == 1
    assert decoder.utime == utime  # the last good message is kept
    for name, value in _arrays(decoder).items():
        np.testing.assert_array_equal(value, before[name])
    with pytest.raises(error_type):
        decoder.decode_or_raise(make_bad(rng))
    assert decoder.counters[error_type.counter] == 2


def _arrays(decoder):
    return {name: getattr(decoder, name) for name in dir(decoder)
            if isinstance(getattr(decoder, name, None), np.ndarray)}


@pytest.mark.parametrize("decoder_name", DECODERS)
def test_corrupted_bytes_never_raise(decoder_name, rng):
    """Random truncation and byte corruption: decode returns a bool, and a message it
    accepts is one lcm-gen decodes to the same bytes."""
    make_decoder, make_good = DECODERS[decoder_name]
    decoder = make_decoder()
    for _ in range(500):
        message = make_good(rng)
        data = bytearray(message.encode())
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        data = bytes(data[:rng.randint(0, len(data))] if rng.random() < 0.3 else data)
        if decoder.decode(data):
            assert type(message).decode(data).encode() == data
    assert sum(decoder.counters.values()) + decoder.ok_count == 500


def test_error_names_match_the_error_types():
    assert codec.ERROR_NAMES[0] == "ok"
    assert sorted(codec.ERROR_NAMES[1:]) == sorted(cls.counter for cls in errors.ERROR_TYPES)
    assert all(issubclass(cls, errors.MessageError) for cls in errors.ERROR_TYPES)
    assert issubclass(errors.TruncatedError, errors.SizeError)
    assert issubclass(errors.OversizedError, errors.SizeError)


# ---------------------------------------------------------------- encode validation

def test_encoder_rejects_non_finite_and_wrong_length_without_raising(memq):
    encoder = codec.CommandEncoder("iiwa", N, channel="IIWA_COMMAND")
    q, tau = np.zeros(N), np.ones(N)
    received = []
    memq.subscribe("IIWA_COMMAND", lambda channel, data: received.append(data))
    assert encoder.encode(1, q, tau) is not None and encoder.publish(memq)

    tau[4] = math.nan
    assert encoder.encode(2, q, tau) is None
    assert isinstance(encoder.last_error, errors.NonFiniteError)
    assert "IIWA_COMMAND (lcmt_iiwa_command): joint_torque[4] is nan" in str(encoder.last_error)
    assert encoder.publish(memq) is False  # nothing goes out after a failed encode
    with pytest.raises(errors.NonFiniteError):
        encoder.encode_or_raise(2, q, tau)

    assert encoder.encode(3, np.zeros(N - 1), np.ones(N)) is None
    assert isinstance(encoder.last_error, errors.JointCountError)
    assert "joint_position has 6 joints but the model has 7" in str(encoder.last_error)
    assert encoder.counters["non_finite"] == 2 and encoder.counters["joint_count"] == 1

    memq.handle_timeout(0)
    assert len(received) == 1 and lcmt_iiwa_command.decode(received[0]).utime == 1


def test_status_and_robot_state_encoders_reject_bad_values():
    status = codec.StatusEncoder("panda", N)
    assert status.encode(1, control_command_success_rate=math.inf) is None
    assert "control_command_success_rate is inf" in str(status.last_error)
    state = codec.RobotStateEncoder(NAMES)
    assert state.encode(1, np.full(N, 1e300)) is None  # beyond float32: inf on the wire
    assert "joint_position[0] is 1e+300" in str(state.last_error)


def test_encoders_raise_type_errors_for_misuse():
    q = np.zeros(N)
    iiwa = codec.CommandEncoder("iiwa", N, fields=("torque",))
    with pytest.raises(TypeError, match="position given"):
        iiwa.encode(1, q, q)
    with pytest.raises(TypeError, match="torque is required"):
        iiwa.encode(1)
    with pytest.raises(TypeError, match="float64"):
        iiwa.encode(1, None, q.astype(np.float32))
    with pytest.raises(TypeError, match="C-contiguous"):
        iiwa.encode(1, None, np.zeros(2 * N)[::2])
    with pytest.raises(TypeError, match="numpy array"):
        iiwa.encode(1, None, [0.0] * N)
    with pytest.raises(TypeError, match="panda-only"):
        codec.StatusEncoder("iiwa", N).encode(1, robot_mode=1)
    with pytest.raises(ValueError, match="fields"):
        codec.CommandEncoder("iiwa", N, fields=("velocity",))
    with pytest.raises(ValueError, match="robot kind"):
        codec.StatusDecoder("ur5", N)
    with pytest.raises(ValueError, match="num_joints"):
        codec.StatusDecoder("iiwa", 0)


def test_publish_sends_the_bytes_without_keeping_a_reference(memq):
    encoder = codec.StatusEncoder("iiwa", N, channel="IIWA_STATUS")
    received = []
    memq.subscribe("IIWA_STATUS", lambda channel, data: received.append(data))
    for utime in (10, 20):
        encoder.encode(utime, np.full(N, float(utime)))
        assert encoder.publish(memq)
    memq.handle_timeout(0)
    memq.handle_timeout(0)
    assert [lcmt_iiwa_status.decode(data).utime for data in received] == [10, 20]
    copy = encoder.tobytes()
    assert copy == received[-1]
    encoder.encode(30, np.zeros(N))
    assert lcmt_iiwa_status.decode(copy).utime == 20  # a copy, not the reused buffer
    unnamed = codec.StatusEncoder("iiwa", N)
    assert unnamed.publish(memq, "X") is False  # nothing encoded yet
    unnamed.encode(1)
    with pytest.raises(ValueError, match="channel"):
        unnamed.publish(memq)


# ---------------------------------------------------------------- allocation discipline

def test_steady_state_encode_decode_allocates_nothing():
    """tracemalloc sees no allocation, not even a transient one, across 1000 ticks
    of status decode + command encode (and the plant's side)."""
    q, tau = np.linspace(-1.0, 1.0, N), np.linspace(2.0, -2.0, N)
    status_out, status_in = codec.StatusEncoder("iiwa", N), codec.StatusDecoder("iiwa", N)
    command_out, command_in = codec.CommandEncoder("iiwa", N), codec.CommandDecoder("iiwa", N)
    panda_out, panda_in = codec.StatusEncoder("panda", N), codec.StatusDecoder("panda", N)
    state_out, state_in = codec.RobotStateEncoder(NAMES), codec.RobotStateDecoder(NAMES)
    utime = 1_700_000_000_000_000
    status = status_out.encode_or_raise(utime, q, q, q, tau, tau, tau).tobytes()
    command = command_out.encode_or_raise(utime, q, tau).tobytes()
    panda = panda_out.encode_or_raise(utime, q, q, q, tau, tau, tau).tobytes()
    state = state_out.encode_or_raise(utime, q).tobytes()

    def ticks(count):
        for _ in count:
            status_in.decode(status)
            command_out.encode(utime, q, tau)
            command_in.decode(command)
            status_out.encode(utime, q, q, q, tau, tau, tau)
            panda_out.encode(utime, q, q, q, tau, tau, tau, control_command_success_rate=1.0)
            panda_in.decode(panda)
            state_out.encode(utime, q)
            state_in.decode(state)

    def traced(count):
        """(net, peak) bytes tracemalloc sees allocated while running ticks(count)."""
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        ticks(count)
        current, peak = tracemalloc.get_traced_memory()
        return current - start, peak - start

    ticks(itertools.repeat(None, 100))  # warm up
    empty, thousand = itertools.repeat(None, 0), itertools.repeat(None, 1000)
    tracemalloc.start()
    try:
        frame = traced(empty)  # whatever calling ticks() itself costs
        work = traced(thousand)
    finally:
        tracemalloc.stop()
    assert work == frame, f"1000 ticks allocated {work} (net, peak) bytes; the call alone {frame}"
    encoders = (command_out, status_out, panda_out, state_out)
    for coder in encoders + (status_in, command_in, panda_in, state_in):
        assert coder.ok_count == 1100 + (coder in encoders)


def test_iiwa_status_may_carry_nan_ipo_positions_as_kuka_driver_sends_outside_commanding(rng):
    """kuka_driver fills joint_position_ipo with NaN outside FRI's COMMANDING states: accepted (and
    passed on as NaN); a NaN in any other array is still rejected."""
    decoder = codec.StatusDecoder("iiwa", N)
    data = _iiwa_status(rng, joint_position_ipo=(0, math.nan))
    message = lcmt_iiwa_status.decode(data)
    assert decoder.decode(data), decoder.last_error
    assert math.isnan(decoder.position_ipo[0])
    np.testing.assert_array_equal(decoder.position_measured, message.joint_position_measured)
    assert not decoder.decode(_iiwa_status(rng, joint_position_commanded=(3, math.nan)))
    assert decoder.counters["non_finite"] == 1
