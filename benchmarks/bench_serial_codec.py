"""Serial protocol benchmark (7 joints): CRC, encode/decode, parser throughput, pty round trip.

Prints one table. Per-frame costs are the median over batches (time.perf_counter_ns); the
"allocating" rows are a plain struct.pack/unpack codec that builds new objects per frame, for
comparison. The round trip runs the board in a forked process on the pty master: the host
writes a COMMAND through pyserial, the board parses it and answers a JOINT_STATE, the host
parses that. A pty does not pace bytes at the baud rate, so the round trip is the software
and kernel cost only; add the wire time (52 + 112 bytes = 0.82 ms at 2 Mbaud).

    python benchmarks/bench_serial_codec.py [--json PATH]
"""
import binascii
import os
import struct
import time
import tty
import zlib

import numpy as np
import record
import serial
import timing

from drivers.serial import (
    Command,
    CommandMode,
    FrameDecoder,
    FrameEncoder,
    JointState,
    StreamParser,
)
from drivers.serial.crc import crc32_reference

JOINTS = 7
BATCH = 1000
BATCHES = 25
ROUND_TRIPS = 2000


def per_call_us(fn, batch=BATCH, batches=BATCHES):
    """Median over batches of the time of one call, in microseconds."""
    return timing.median_us(fn, batch, batches)


def filled_messages():
    state = JointState(JOINTS)
    state.time_us, state.mode = 123_456_789, CommandMode.TORQUE
    state.values[:] = np.linspace(-1.0, 1.0, 3 * JOINTS).reshape(3, JOINTS)
    command = Command(JOINTS)
    command.time_us, command.mode = 123_456_789, CommandMode.TORQUE
    command.values[:] = np.linspace(-5.0, 5.0, JOINTS)
    return state, command


ALLOCATING_STATE = struct.Struct(f"<BBBBHHQIHBB{3 * JOINTS}f")


def allocating_encode(state, seq=0):
    body = ALLOCATING_STATE.pack(0xAA, 0x55, 1, 1, ALLOCATING_STATE.size - 8, seq, state.time_us,
                                 state.status, state.command_seq, state.mode, JOINTS,
                                 *state.values.ravel().tolist())
    return body + struct.pack("<I", zlib.crc32(body))


def allocating_decode(frame):
    fields = ALLOCATING_STATE.unpack_from(frame)
    if struct.unpack_from("<I", frame, ALLOCATING_STATE.size)[0] != zlib.crc32(frame[:-4]):
        raise ValueError("CRC")
    return fields[6], np.array(fields[11:]).reshape(3, JOINTS)


def codec_rows():
    state, command = filled_messages()
    encoder, decoder = FrameEncoder(JOINTS), FrameDecoder(JOINTS)
    state_frame = bytes(encoder.encode(state))
    command_frame = bytes(encoder.encode(command))
    covered = state_frame[:-4]
    return [
        ("CRC-32 zlib.crc32, 108 B", per_call_us(lambda: zlib.crc32(covered)), "µs"),
        ("CRC-16 binascii.crc_hqx, 108 B (peer)",
         per_call_us(lambda: binascii.crc_hqx(covered, 0xFFFF)), "µs"),
        ("CRC-32 pure-Python table loop, 108 B (peer)",
         per_call_us(lambda: crc32_reference(covered), batch=100), "µs"),
        ("encode JOINT_STATE (112 B)", per_call_us(lambda: encoder.encode(state)), "µs"),
        ("decode JOINT_STATE", per_call_us(lambda: decoder.decode(state_frame)), "µs"),
        ("encode COMMAND (52 B)", per_call_us(lambda: encoder.encode(command)), "µs"),
        ("decode COMMAND", per_call_us(lambda: decoder.decode(command_frame)), "µs"),
        ("encode JOINT_STATE, allocating struct.pack (peer)",
         per_call_us(lambda: allocating_encode(state)), "µs"),
        ("decode JOINT_STATE, allocating struct.unpack (peer)",
         per_call_us(lambda: allocating_decode(state_frame)), "µs"),
    ]


def frames_per_s(stream, frames, chunk_size):
    """Median parser throughput over 5 passes of `stream` fed in `chunk_size` reads."""
    chunks = [stream[i:i + chunk_size] for i in range(0, len(stream), chunk_size)]
    parser = StreamParser(JOINTS)
    times = []
    for _ in range(5):
        start = time.perf_counter_ns()
        for chunk in chunks:
            parser.feed(chunk)
        times.append(time.perf_counter_ns() - start)
    assert parser.stats.frames_ok == 5 * frames
    return frames / (np.median(times) * 1e-9)


def parser_rows():
    state, _ = filled_messages()
    encoder = FrameEncoder(JOINTS)
    count = 20_000
    frames = [bytes(encoder.encode(state)) for _ in range(count)]
    stream = b"".join(frames)
    rng = np.random.default_rng(1)
    noisy = b"".join(rng.integers(0, 256, 16, dtype="u1").tobytes() + f for f in frames)
    size = len(frames[0])
    return [
        ("parser, one frame per feed()", frames_per_s(stream, count, size), "frames/s"),
        ("parser, 4 KiB reads", frames_per_s(stream, count, 4096), "frames/s"),
        ("parser, 4 KiB reads, 16 B garbage before each frame",
         frames_per_s(noisy, count, 4096), "frames/s"),
    ]


def run_board(board_fd, count):
    """Child process: answer every COMMAND with a JOINT_STATE echoing its seq."""
    parser, encoder, state = StreamParser(JOINTS), FrameEncoder(JOINTS), JointState(JOINTS)
    while parser.latest.command.rx_count < count:
        answered = parser.latest.command.rx_count
        parser.feed(os.read(board_fd, 4096))
        if parser.latest.command.rx_count > answered:
            state.command_seq = parser.latest.command.seq
            state.effort[:] = parser.latest.command.values
            os.write(board_fd, encoder.encode(state))


def round_trip_rows():
    board_fd, slave_fd = os.openpty()
    tty.setraw(board_fd)
    tty.setraw(slave_fd)
    warmup = 100
    child = os.fork()
    if child == 0:
        try:
            run_board(board_fd, ROUND_TRIPS + warmup)
        finally:
            os._exit(0)
    port = serial.Serial(os.ttyname(slave_fd), baudrate=2_000_000, timeout=1.0)
    encoder, parser = FrameEncoder(JOINTS), StreamParser(JOINTS)
    _, command = filled_messages()
    times = []
    for i in range(ROUND_TRIPS + warmup):
        start = time.perf_counter_ns()
        port.write(encoder.encode(command))
        while parser.latest.joint_state.rx_count <= i:
            parser.feed(port.read(port.in_waiting or 1))
        times.append(time.perf_counter_ns() - start)
        assert parser.latest.joint_state.command_seq == i
    os.waitpid(child, 0)
    port.close()
    os.close(slave_fd)
    os.close(board_fd)
    us = np.array(times[warmup:]) / 1e3
    return [
        (f"pty round trip COMMAND -> JOINT_STATE, median of {ROUND_TRIPS}", np.median(us), "µs"),
        ("pty round trip, p99", np.percentile(us, 99), "µs"),
        ("pty round trip, max", us.max(), "µs"),
    ]


def main(argv=None):
    args = record.parser(__file__, __doc__).parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Serial link codec", peers=("pyserial",))
    table = rec.table(f"serial codec, {JOINTS} joints, float32 payloads, CRC-32", [
        record.Column("measurement", "{name}", align="left"),
        record.Column("value", "{frames_per_s:,.0f}", "{us:.2f}"), record.Column("unit", "{unit}", align="left")])
    for name, value, unit in codec_rows() + parser_rows() + round_trip_rows():
        table.add(name=name, unit=unit, **{"frames_per_s" if unit == "frames/s" else "us": value})
    rec.show(table)
    rec.save()


if __name__ == "__main__":
    main()
