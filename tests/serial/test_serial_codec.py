"""Frame encoder/decoder: layouts, round trips, and the typed errors of rejected frames."""
import re
from pathlib import Path

import numpy as np
import pytest

from drivers.serial import (
    MAX_FAULT_TEXT,
    NO_JOINT,
    Command,
    CommandMode,
    ConfigRequest,
    CrcError,
    FaultCode,
    FaultReport,
    FrameDecoder,
    FrameEncoder,
    HeaderError,
    Heartbeat,
    JointCountError,
    JointState,
    MsgType,
    NodeState,
    PayloadError,
    StatusFlag,
    crc32,
    frame_size,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "serial_protocol.md"


def roundtrip(msg, joints=7):
    return FrameDecoder(joints).decode(bytes(FrameEncoder(joints).encode(msg)))


def test_joint_state_round_trip(sample_messages):
    sent = sample_messages["state"]
    got = roundtrip(sent)
    assert isinstance(got, JointState) and got.seq == 0 and got.rx_count == 1
    assert (got.time_us, got.status, got.command_seq, got.mode) == (
        sent.time_us, sent.status, sent.command_seq, CommandMode.TORQUE)
    np.testing.assert_array_equal(got.values, sent.values)


def test_command_round_trip_rounds_to_float32(sample_messages):
    sent = sample_messages["command"]
    got = roundtrip(sent)
    assert (got.time_us, got.mode, got.watchdog_ms) == (987_654_321, CommandMode.CURRENT, 20)
    np.testing.assert_array_equal(got.values, sent.values.astype(np.float32))
    assert got.values.dtype == np.float64


def test_heartbeat_round_trip(sample_messages):
    got = roundtrip(sample_messages["heartbeat"])
    assert (got.time_us, got.node_state, got.rx_errors) == (2**40 + 5, NodeState.ACTIVE, 3)


def test_fault_report_decodes_code_and_text(sample_messages):
    got = roundtrip(sample_messages["fault"])
    assert got.code is FaultCode.OVER_TEMPERATURE and got.joint_index == 3
    assert got.text == "winding 95 °C"
    assert str(got) == "OVER_TEMPERATURE (0x0002) on joint 3: winding 95 °C"


def test_fault_report_board_specific_code_and_long_text():
    fault = FaultReport()
    fault.code = 0x8001
    fault.joint_index = NO_JOINT
    fault.text = "é" * 40  # 80 bytes of UTF-8: cut to 64 at a character boundary
    assert fault.text_length == MAX_FAULT_TEXT and fault.text == "é" * 32
    got = roundtrip(fault)
    assert got.code == 0x8001 and got.text == "é" * 32
    assert str(got) == f"BOARD_SPECIFIC (0x8001) on board: {'é' * 32}"


def test_config_round_trip(sample_messages):
    sent = sample_messages["config"]
    got = roundtrip(sent)
    assert (got.effort_kind, got.firmware_version) == (sent.effort_kind, 0x0102)
    np.testing.assert_array_equal(got.joint_kind, sent.joint_kind)
    np.testing.assert_array_equal(got.limits, sent.limits.astype(np.float32))
    assert got.torque_constant[0] == 0.75


def test_config_request_is_an_empty_frame():
    frame = FrameEncoder(7).encode(ConfigRequest())
    assert bytes(frame[:8]) == bytes.fromhex("aa 55 01 06 00 00 00 00")
    assert isinstance(FrameDecoder(7).decode(frame), ConfigRequest)


def test_joint_state_byte_layout(sample_messages):
    frame = bytes(FrameEncoder(7, seq=0x1234).encode(sample_messages["state"]))
    assert len(frame) == frame_size(MsgType.JOINT_STATE, 7) == 112
    assert frame[:8] == bytes.fromhex("aa 55 01 01 64 00 34 12")  # 100-byte payload, seq 0x1234
    assert int.from_bytes(frame[8:16], "little") == 42_000  # board time us
    assert frame[20:22] == (42).to_bytes(2, "little") and frame[22:24] == bytes([1, 7])
    q = np.frombuffer(frame, "<f4", 7, 24)
    np.testing.assert_array_equal(q, sample_messages["state"].q)
    assert int.from_bytes(frame[-4:], "little") == crc32(frame[:-4])


def test_encoder_numbers_frames_and_wraps_at_u16(sample_messages):
    encoder = FrameEncoder(7, seq=0xFFFE)
    seqs = [FrameDecoder(7).decode(encoder.encode(sample_messages["heartbeat"])).seq
            for _ in range(3)]
    assert seqs == [0xFFFE, 0xFFFF, 0] and encoder.seq == 1


def test_documented_examples_match_the_encoder():
    """The hex examples in docs/serial_protocol.md are what the encoder produces."""
    text = DOC.read_text(encoding="utf-8")
    blocks = dict(re.findall(r"<!-- example: (\w+) -->\s*```text\n(.*?)```", text, re.S))
    heartbeat = Heartbeat()
    heartbeat.time_us, heartbeat.rx_errors, heartbeat.node_state = 1_000_000, 2, NodeState.READY
    command = Command(7)
    command.time_us, command.watchdog_ms, command.mode = 5_000_000, 20, CommandMode.TORQUE
    command.values[:] = [0.5, -1.25, 2.0, 0.0, 10.0, -0.125, 3.5]
    state = JointState(2)
    state.time_us, state.command_seq, state.mode = 0x0123456789, 7, CommandMode.TORQUE
    state.status = StatusFlag.ENABLED | StatusFlag.SATURATED
    state.values[:] = [[0.5, -0.5], [1.0, 0.0], [2.0, -3.0]]
    expected = {
        "heartbeat": FrameEncoder(7, seq=0x1234).encode(heartbeat),
        "command": FrameEncoder(7, seq=7).encode(command),
        "joint_state": FrameEncoder(2, seq=0xFFFF).encode(state),
    }
    assert blocks.keys() == expected.keys()
    for name, frame in expected.items():
        assert bytes.fromhex(blocks[name]) == bytes(frame), name


def test_crc_error_names_type_seq_and_both_values(sample_messages):
    frame = bytearray(FrameEncoder(7, seq=1234).encode(sample_messages["state"]))
    frame[40] ^= 0x10
    with pytest.raises(CrcError) as error:
        FrameDecoder(7).decode(frame)
    got, computed = int.from_bytes(frame[-4:], "little"), crc32(frame[:-4])
    assert str(error.value) == (
        f"CRC mismatch in frame type JOINT_STATE seq 1234: "
        f"got 0x{got:08x}, computed 0x{computed:08x}")
    assert (error.value.msg_type, error.value.seq) == (MsgType.JOINT_STATE, 1234)


def test_wrong_joint_count_is_rejected_with_both_counts(sample_messages, state_frames):
    frame = state_frames(6, joint_count=6)[5]
    decoder = FrameDecoder(7)
    with pytest.raises(JointCountError, match=r"^JOINT_STATE seq 5 carries 6 joints, but the "
                                              r"link is configured for 7$") as error:
        decoder.decode(frame)
    assert (error.value.got, error.value.expected) == (6, 7)
    assert decoder.latest.joint_state.rx_count == 0


@pytest.mark.parametrize("offset, value, message", [
    (0, 0xAB, "no sync: got ab 55, expected aa 55"),
    (2, 2, "unsupported protocol version 2 in frame seq 0; this end speaks version 1"),
    (3, 0x17, "unknown message type 0x17 in frame seq 0"),
    (4, 99, r"payload length 99 is invalid for JOINT_STATE seq 0 \(expected 16 \+ 12\*n bytes, "
            r"n = 1..32\)"),
])
def test_bad_header_is_rejected(sample_messages, offset, value, message):
    frame = bytearray(FrameEncoder(7).encode(sample_messages["state"]))
    frame[offset] = value
    with pytest.raises(HeaderError, match=message):
        FrameDecoder(7).decode(frame)


def test_truncated_frame_is_rejected(sample_messages):
    frame = bytes(FrameEncoder(7).encode(sample_messages["state"]))
    with pytest.raises(HeaderError, match="JOINT_STATE seq 0 is 111 bytes; its header says 112"):
        FrameDecoder(7).decode(frame[:-1])


@pytest.mark.parametrize("name, offset, value, message", [
    ("state", 23, 6, "JOINT_STATE seq 0: count field 6 disagrees with payload length 100 "
                     r"\(count 7\)"),
    ("state", 22, 9, "JOINT_STATE seq 0: unknown command mode 9"),
    ("command", 18, 4, "COMMAND seq 0: unknown command mode 4"),
    ("heartbeat", 20, 5, "HEARTBEAT seq 0: unknown node state 5"),
    ("fault", 18, 7, "FAULT_REPORT seq 0: joint index 7 is out of range for 7 joints"),
    ("fault", 19, 3, "FAULT_REPORT seq 0: text length 3 disagrees with payload length 26"),
    ("config", 9, 2, "CONFIG seq 0: unknown effort kind 2"),
    ("config", 12 + 5 * 28 + 2, 9, "CONFIG seq 0: unknown joint kind 9 for joint 2"),
])
def test_intact_frame_with_bad_content_is_rejected(
        sample_messages, with_crc, name, offset, value, message):
    frame = bytearray(FrameEncoder(7).encode(sample_messages[name]))
    frame[offset] = value
    decoder = FrameDecoder(7)
    with pytest.raises(PayloadError, match=message):
        decoder.decode(with_crc(frame))
    assert all(msg.rx_count == 0 for msg in vars(decoder.latest).values())


def test_encoder_refuses_a_message_for_another_joint_count(sample_messages):
    with pytest.raises(ValueError, match="JOINT_STATE has 7 joints; this encoder is "
                                         "configured for 6"):
        FrameEncoder(6).encode(sample_messages["state"])
    with pytest.raises(ValueError, match=r"joint_count must be in 1..32, got 33"):
        FrameEncoder(33)


def test_message_arrays_are_filled_in_place_not_rebound():
    state = JointState(7)
    state.q[:] = 1.0
    assert state.values[0].sum() == 7.0
    with pytest.raises(AttributeError):
        state.q = np.zeros(7)
