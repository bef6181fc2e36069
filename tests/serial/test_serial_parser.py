"""StreamParser: chunking, injected faults, sequence gaps, strict mode, allocation."""
import tracemalloc

import numpy as np
import pytest

from drivers.serial import (
    CrcError,
    FaultCode,
    FaultReport,
    FrameEncoder,
    JointCountError,
    JointState,
    StreamParser,
)

N_FRAMES = 200
SIZE = 112  # bytes of a 7-joint JOINT_STATE frame


def received(parser):
    """Records the index (time_us / 1000) of every JOINT_STATE the parser accepts."""
    indices = []

    def on_message(msg):
        if isinstance(msg, JointState):
            assert msg.q[0] == msg.time_us // 1000  # values belong to the frame's own index
            indices.append(msg.time_us // 1000)

    parser.on_message = on_message
    return indices


def feed_in_chunks(parser, data, rng, max_chunk):
    start = 0
    while start < len(data):
        stop = start + int(rng.integers(1, max_chunk + 1))
        parser.feed(data[start:stop])
        start = stop


@pytest.mark.parametrize("max_chunk", [1, 7, 113, 5000])
def test_frames_split_across_reads_in_any_chunking(state_frames, rng, max_chunk):
    parser = StreamParser(7)
    indices = received(parser)
    feed_in_chunks(parser, b"".join(state_frames(N_FRAMES)), rng, max_chunk)
    assert indices == list(range(N_FRAMES))
    s = parser.stats
    assert (s.frames_ok, s.resyncs, s.bytes_dropped, s.seq_gaps, parser.buffered) == (
        N_FRAMES, 0, 0, 0, 0)
    assert s.bytes_received == N_FRAMES * SIZE and not parser.errors


def test_frame_split_at_every_offset(state_frames):
    frame = state_frames(1)[0]
    parser = StreamParser(7)
    for cut in range(1, len(frame)):
        assert parser.feed(frame[:cut]) == 0 and parser.buffered == cut
        assert parser.feed(frame[cut:]) == 1 and parser.buffered == 0
    assert parser.stats.frames_ok == len(frame) - 1 and parser.stats.resyncs == 0


CORRUPTED = list(range(5, N_FRAMES, 10))  # 20 frames, never adjacent


def corrupt(frames, damage):
    return b"".join(damage(bytearray(f)) if i in CORRUPTED else f for i, f in enumerate(frames))


def parse_damaged(state_frames, rng, damage):
    """N_FRAMES state frames, those in CORRUPTED passed through `damage`, fed in random chunks: every
    intact frame, and only those, comes out. Returns the parser."""
    parser = StreamParser(7)
    indices = received(parser)
    feed_in_chunks(parser, corrupt(state_frames(N_FRAMES), damage), rng, 300)
    assert indices == [i for i in range(N_FRAMES) if i not in CORRUPTED]
    return parser


def test_bit_flips_in_payload_are_crc_errors_and_the_rest_is_recovered(state_frames, rng):
    def flip(frame):
        bit = int(rng.integers(8 * 8, 8 * (SIZE - 4)))
        frame[bit // 8] ^= 1 << (bit % 8)
        return frame

    parser = parse_damaged(state_frames, rng, flip)
    s = parser.stats
    assert (s.crc_errors, s.resyncs, s.seq_gaps, s.frames_missed) == (20, 20, 20, 20)
    assert s.bytes_dropped == 20 * SIZE and parser.buffered == 0
    assert all(isinstance(e, CrcError) for e in parser.errors)


def test_bit_flips_anywhere_never_pass_and_never_lose_a_good_frame(state_frames, rng):
    def flip(frame):
        for bit in rng.choice(8 * SIZE, size=int(rng.integers(1, 4)), replace=False):
            frame[bit // 8] ^= 1 << (bit % 8)
        return frame

    parser = parse_damaged(state_frames, rng, flip)
    s = parser.stats
    assert s.resyncs == 20 and s.bytes_dropped == 20 * SIZE and s.frames_missed == 20
    assert 0 < s.crc_errors + s.header_errors == len(parser.errors)


def test_dropped_bytes_reject_only_the_damaged_frames(state_frames, rng):
    def drop(frame):
        del frame[int(rng.integers(0, SIZE))]
        return frame

    parser = parse_damaged(state_frames, rng, drop)
    s = parser.stats
    assert s.resyncs == 20 and s.bytes_dropped == 20 * (SIZE - 1)
    assert (s.seq_gaps, s.frames_missed) == (20, 20)


def test_garbage_between_frames_is_dropped(state_frames, rng):
    frames = state_frames(N_FRAMES)
    fake_header = bytes.fromhex("aa 55 01 05 a4 02 00 00")  # plausible 676-byte CONFIG
    pieces, garbage_bytes, runs = [], 0, 0
    for i, frame in enumerate(frames):
        garbage = rng.integers(0, 256, int(rng.integers(0, 40)), dtype="u1").tobytes()
        if i % 7 == 0:
            garbage += b"\xaa\x55\xaa"  # sync patterns in the garbage
        if i == 50:
            garbage += fake_header  # makes the parser wait for 688 bytes, then resync
        pieces += [garbage, frame]
        garbage_bytes += len(garbage)
        runs += bool(garbage)
    parser = StreamParser(7)
    indices = received(parser)
    feed_in_chunks(parser, b"".join(pieces), rng, 200)
    assert indices == list(range(N_FRAMES))
    s = parser.stats
    assert s.bytes_dropped == garbage_bytes and s.resyncs == runs
    assert (s.seq_gaps, s.frames_missed, parser.buffered) == (0, 0, 0)
    assert s.crc_errors >= 1  # the fake CONFIG header


def test_sequence_gaps_across_the_u16_wrap(state_frames):
    frames = state_frames(12, first_seq=65530)  # seqs 65530..65535, 0..5
    parser = StreamParser(7)
    parser.feed(b"".join(frames[:8]))  # through seq 1: no gap at the wrap
    assert (parser.stats.seq_gaps, parser.stats.frames_missed) == (0, 0)
    parser.feed(frames[10] + frames[11])  # seqs 2, 3 missing
    assert (parser.stats.seq_gaps, parser.stats.frames_missed) == (1, 2)
    gap = state_frames(3, first_seq=65534)
    parser = StreamParser(7)
    parser.feed(gap[0] + gap[2])  # 65534 -> 0 misses 65535
    assert (parser.stats.seq_gaps, parser.stats.frames_missed) == (1, 1)


def test_sender_restart_is_a_gap_without_missed_frames(state_frames):
    parser = StreamParser(7)
    parser.feed(b"".join(state_frames(50)) + b"".join(state_frames(3)))
    assert (parser.stats.seq_gaps, parser.stats.frames_missed, parser.stats.frames_ok) == (1, 0, 53)


def test_wrong_joint_count_frame_is_rejected_and_named(state_frames):
    good = state_frames(6)
    bad = state_frames(4, joint_count=6, first_seq=100)[3]  # seq 103
    parser = StreamParser(7)
    indices = received(parser)
    parser.feed(b"".join(good[:3]) + bad + b"".join(good[3:]))
    assert indices == list(range(6))
    s = parser.stats
    assert (s.joint_count_errors, s.resyncs, s.crc_errors, s.bytes_dropped) == (1, 0, 0, len(bad))
    (error,) = parser.errors
    assert isinstance(error, JointCountError)
    assert str(error) == "JOINT_STATE seq 103 carries 6 joints, but the link is configured for 7"


def test_strict_mode_raises_after_consuming_the_whole_read(state_frames, with_crc):
    frames = state_frames(6)
    bad = bytearray(frames[2])
    bad[30] ^= 0xFF
    parser = StreamParser(7, strict=True)
    with pytest.raises(CrcError, match=r"^CRC mismatch in frame type JOINT_STATE seq 2: got 0x"
                                       r"[0-9a-f]{8}, computed 0x[0-9a-f]{8}$"):
        parser.feed(b"".join(frames[:2]) + bad + b"".join(frames[3:]))
    assert parser.stats.frames_ok == 5 and parser.buffered == 0
    assert parser.feed(b"") == 0  # the error was raised once
    wrong = state_frames(1, joint_count=3)[0]
    with pytest.raises(JointCountError, match="carries 3 joints"):
        parser.feed(wrong)


def test_fault_report_in_the_stream_reaches_the_callback(state_frames):
    encoder = FrameEncoder(7, seq=3)
    fault = FaultReport()
    fault.code, fault.joint_index, fault.text = FaultCode.ENCODER, 5, "index pulse missing"
    got = []
    parser = StreamParser(7, on_message=lambda m: got.append(str(m)) if m.seq == 3 else None)
    frames = state_frames(3)
    parser.feed(b"".join(frames) + bytes(encoder.encode(fault)))
    assert got == ["ENCODER (0x0003) on joint 5: index pulse missing"]
    assert parser.latest.fault_report.code is FaultCode.ENCODER


def test_receive_time_and_staleness_use_the_given_clock(state_frames):
    now = [1_000]
    parser = StreamParser(7, clock=lambda: now[0])
    parser.feed(state_frames(1)[0])
    assert parser.latest.joint_state.rx_time_ns == parser.stats.last_frame_ns == 1_000
    assert parser.stats.age_ns(4_500) == 3_500


def test_error_log_is_bounded(state_frames):
    parser = StreamParser(7)
    frame = bytearray(state_frames(1)[0])
    frame[50] ^= 1
    parser.feed(bytes(frame) * 100)
    assert parser.stats.crc_errors == 100 and len(parser.errors) == 64


def test_random_noise_never_raises_and_every_byte_is_accounted(state_frames, rng):
    frames = state_frames(500)
    noise = rng.integers(0, 256, 50_000, dtype="u1")
    noise[rng.integers(0, noise.size, 500)] = 0xAA  # plenty of sync candidates
    noise[rng.integers(0, noise.size, 500)] = 0x55
    cuts = np.sort(rng.integers(0, noise.size, len(frames)))
    pieces = np.split(noise, cuts)
    data = b"".join(p.tobytes() + f for p, f in zip(pieces, frames)) + pieces[-1].tobytes()
    parser = StreamParser(7)
    indices = received(parser)
    feed_in_chunks(parser, data, rng, 500)
    s = parser.stats
    assert indices == list(range(500))
    assert s.bytes_received == s.frames_ok * SIZE + s.bytes_dropped + parser.buffered
    assert s.bytes_dropped + parser.buffered == noise.size


def test_a_delivered_frame_is_not_delivered_again_after_the_callback_raises(state_frames):
    calls = []

    def on_message(msg):
        calls.append(msg.seq)
        raise RuntimeError("driver bug")

    parser = StreamParser(7, on_message=on_message)
    frames = state_frames(2)
    with pytest.raises(RuntimeError):
        parser.feed(frames[0])
    with pytest.raises(RuntimeError):
        parser.feed(frames[1])
    assert calls == [0, 1]


def test_steady_state_allocates_no_buffers(state_frames, sample_messages):
    """tracemalloc: 4000 frames through encoder and parser leave no memory behind."""
    encoder = FrameEncoder(7)
    state = sample_messages["state"]
    parser = StreamParser(7)
    frames = state_frames(2000)
    batch = b"".join(frames)
    for frame in frames[:100]:  # warm-up
        parser.feed(frame)
        encoder.encode(state)
    parser.feed(batch)
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        for frame in frames:  # one frame per read, as in the 1 kHz loop
            parser.feed(frame)
            encoder.encode(state)
        parser.feed(batch)  # 2000 frames in 4 KiB pieces
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert parser.stats.frames_ok == 6100
    assert current - base < 1024  # nothing kept per frame (4000 frames are 448 KB)
    assert peak - base < 2048  # no frame-sized temporaries pile up


def test_buffer_must_hold_a_whole_frame():
    with pytest.raises(ValueError, match="buffer_size must be at least 688"):
        StreamParser(7, buffer_size=100)
