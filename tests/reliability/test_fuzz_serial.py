"""Fuzzing the serial protocol: a stream of every frame type, mutated and fed in random chunks to the
resynchronising parser, and single mutated frames to the decoder. Property: the parser never raises
(strict mode: only a ProtocolError), every byte is accounted for, and no corrupted frame is accepted
(each accepted JOINT_STATE is one that was sent)."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from drivers.serial import FrameEncoder, JointState, StreamParser
from drivers.serial.codec import FrameDecoder, read_header
from drivers.serial.errors import ProtocolError
from drivers.serial.messages import Command, Config, ConfigRequest, FaultReport, Heartbeat
from drivers.serial.protocol import CommandMode, FaultCode
from tests.reliability.inputs import fuzz_settings, mutations

JOINTS = 7


def _frames() -> list[bytes]:
    encoder, frames = FrameEncoder(JOINTS), []
    for i in range(6):
        state = JointState(JOINTS)
        state.time_us, state.values[:] = 1000 * (i + 1), np.arange(3 * JOINTS).reshape(3, JOINTS) * 0.01 * (i + 1)
        frames.append(bytes(encoder.encode(state)))
    command = Command(JOINTS)
    command.mode, command.values[:] = CommandMode.TORQUE, 0.5
    fault = FaultReport()
    fault.code, fault.text = FaultCode.OVER_CURRENT, "joint 3 over current"
    config = Config(JOINTS)
    config.limits[:] = 1.0
    for msg in (command, Heartbeat(), fault, config, ConfigRequest()):
        frames.insert(2, bytes(encoder.encode(msg)))
    return frames


FRAMES = _frames()
STREAM = b"".join(FRAMES)
SENT_STATES = {1000 * (i + 1) for i in range(6)}
SIZES = {type(FrameDecoder(JOINTS).decode(f)): len(f) for f in FRAMES}     # bytes of each type's frame


def _parse(data: bytes, chunks: list[int]):
    """(parser, accepted JOINT_STATE times, bytes of accepted frames) after feeding `data` in `chunks`."""
    accepted, accepted_bytes = [], [0]

    def on_message(m):
        accepted_bytes[0] += SIZES[type(m)]
        if isinstance(m, JointState):
            accepted.append(m.time_us)

    parser, start, k = StreamParser(JOINTS, on_message=on_message), 0, 0
    while start < len(data):
        parser.feed(data[start:start + chunks[k % len(chunks)]])
        start += chunks[k % len(chunks)]
        k += 1
    return parser, accepted, accepted_bytes[0]


def test_the_unmutated_stream_is_accepted_whole():
    parser, accepted, accepted_bytes = _parse(STREAM, [37])
    assert sorted(accepted) == sorted(SENT_STATES) and parser.stats.frames_ok == len(FRAMES) == len(SIZES) + 5
    assert accepted_bytes == len(STREAM) and parser.stats.bytes_dropped == 0


@fuzz_settings(200)
@given(mutate=mutations(), chunks=st.lists(st.integers(1, 200), min_size=1, max_size=20))
def test_the_parser_survives_any_corruption_and_accepts_only_what_was_sent(mutate, chunks):
    data = mutate(STREAM)
    parser, accepted, accepted_bytes = _parse(data, chunks)
    assert set(accepted) <= SENT_STATES
    stats = parser.stats
    assert stats.bytes_received == len(data) == accepted_bytes + stats.bytes_dropped + parser.buffered


@fuzz_settings(100)
@given(mutate=mutations())
def test_strict_mode_raises_only_protocol_errors(mutate):
    parser = StreamParser(JOINTS, strict=True)
    try:
        parser.feed(mutate(STREAM))
    except ProtocolError:
        pass


@fuzz_settings(200)
@given(index=st.integers(0, len(FRAMES) - 1), mutate=mutations())
def test_the_frame_decoder_raises_only_protocol_errors(index, mutate):
    frame = mutate(FRAMES[index])
    try:
        FrameDecoder(JOINTS).decode(frame)
    except ProtocolError:
        return


@fuzz_settings(200)
@given(data=st.binary(max_size=24), offset=st.integers(-2, 24))
def test_read_header_raises_only_header_errors(data, offset):
    try:
        read_header(data, offset)
    except ProtocolError:
        pass
