"""The codec and parser over real pyserial: a kernel pseudo-terminal and pyserial's loop://."""
import os
import select
import threading
import time

import numpy as np
import pytest
import serial

from drivers.serial import (
    Command,
    CommandMode,
    FaultCode,
    FaultReport,
    FrameEncoder,
    JointState,
    StreamParser,
)

SIZE = 112  # bytes of a 7-joint JOINT_STATE frame


def pieces_of(data, rng, max_chunk):
    cuts = np.cumsum(rng.integers(1, max_chunk + 1, len(data)))
    return [data[a:b] for a, b in zip(np.r_[0, cuts], cuts) if a < len(data)]


def write_slowly(fd, pieces):
    """Writes each piece separately into the pty, pausing now and then (runs in a thread)."""
    for i, piece in enumerate(pieces):
        view = memoryview(piece)
        while view:
            view = view[os.write(fd, view):]
        if i % 4 == 0:
            time.sleep(0.0002)


def read_into(port, parser, total, timeout=5.0):
    """Feeds the parser from pyserial until `total` bytes have arrived."""
    deadline = time.monotonic() + timeout
    while parser.stats.bytes_received < total:
        assert time.monotonic() < deadline, f"{parser.stats.bytes_received} of {total} bytes"
        parser.feed(port.read(port.in_waiting or 1))


def board_read_into(fd, parser, done, timeout=5.0):
    """Feeds the parser from the pty master until done() holds."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the board received nothing"
        if select.select([fd], [], [], 0.05)[0]:
            parser.feed(os.read(fd, 4096))


def send_from_board(fd, pieces):
    writer = threading.Thread(target=write_slowly, args=(fd, pieces))
    writer.start()
    return writer


def test_pty_passes_every_byte_value_unchanged(pty_port):
    board_fd, port = pty_port
    data = bytes(range(256)) * 8  # CR, LF, XON/XOFF, ^C, DEL must not be translated
    os.write(board_fd, data)
    assert port.read(len(data)) == data
    port.write(data)
    got = b""
    while len(got) < len(data) and select.select([board_fd], [], [], 1.0)[0]:
        got += os.read(board_fd, 4096)
    assert got == data


def test_state_stream_over_pty_in_split_writes(pty_port, state_frames, rng):
    board_fd, port = pty_port
    data = b"".join(state_frames(300))
    parser = StreamParser(7)
    writer = send_from_board(board_fd, pieces_of(data, rng, 97))
    read_into(port, parser, len(data))
    writer.join()
    s = parser.stats
    assert (s.frames_ok, s.crc_errors, s.resyncs, s.seq_gaps, parser.buffered) == (300, 0, 0, 0, 0)
    assert parser.latest.joint_state.q[0] == 299


def test_faults_injected_into_the_pty_stream(pty_port, state_frames, rng):
    """Bit flips, dropped bytes, garbage, a 6-joint frame and a fault report, in split writes."""
    board_fd, port = pty_port
    encoder = FrameEncoder(7)
    state = JointState(7)
    fault = FaultReport()
    fault.code, fault.joint_index, fault.text = FaultCode.OVER_CURRENT, 2, "phase B 31.5 A"
    wrong_count = state_frames(1, joint_count=6)[0]
    stream, expected, garbage_bytes = [], [], 0
    flips, drops, garbage_runs = range(10, 300, 30), range(25, 300, 30), range(3, 300, 30)
    for i in range(300):
        if i in garbage_runs:
            garbage = b"\xaa" + rng.integers(0, 256, 20, dtype="u1").tobytes()
            stream.append(garbage)
            garbage_bytes += len(garbage)
        state.time_us = 1000 * i
        state.q[:] = i
        frame = bytearray(encoder.encode(state))
        if i in flips:
            frame[int(rng.integers(8, SIZE - 4))] ^= 1 << int(rng.integers(0, 8))
        elif i in drops:
            del frame[int(rng.integers(8, SIZE))]
        else:
            expected.append(i)
        stream.append(bytes(frame))
        if i == 150:
            stream += [wrong_count, bytes(encoder.encode(fault))]
    data = b"".join(stream)

    reports, received = [], []
    parser = StreamParser(7, on_message=lambda m: (
        received.append(int(m.q[0])) if isinstance(m, JointState) else reports.append(str(m))))
    writer = send_from_board(board_fd, pieces_of(data, rng, 150))
    read_into(port, parser, len(data))
    writer.join()

    s = parser.stats
    assert received == expected
    assert reports == ["OVER_CURRENT (0x0001) on joint 2: phase B 31.5 A"]
    assert s.crc_errors == len(flips) + len(drops) and s.joint_count_errors == 1
    assert s.resyncs == len(flips) + len(drops) + len(garbage_runs)
    assert (s.seq_gaps, s.frames_missed) == (len(flips) + len(drops),) * 2
    assert s.bytes_dropped == (garbage_bytes + len(flips) * SIZE + len(drops) * (SIZE - 1)
                               + len(wrong_count))
    assert "carries 6 joints, but the link is configured for 7" in str(
        next(e for e in parser.errors if "joints" in str(e)))


def test_commands_over_pty_to_the_board(pty_port):
    board_fd, port = pty_port
    encoder = FrameEncoder(7)
    command = Command(7)
    command.mode = CommandMode.TORQUE
    board = StreamParser(7)
    for i in range(100):
        command.time_us = i
        command.values[:] = np.arange(7) * 0.5 + i
        port.write(encoder.encode(command))
    board_read_into(board_fd, board, lambda: board.latest.command.rx_count == 100)
    assert board.latest.command.seq == 99 and board.latest.command.values[6] == 102.0
    assert board.stats.seq_gaps == 0 and board.stats.bytes_dropped == 0


def test_command_state_round_trips_over_pty(pty_port, state_frames):
    """Host sends a command, the board answers with a state echoing its seq, 200 times."""
    board_fd, port = pty_port
    host_tx, board_tx = FrameEncoder(7), FrameEncoder(7)
    host, board = StreamParser(7), StreamParser(7)
    command, state = Command(7), JointState(7)
    command.mode = CommandMode.TORQUE
    for i in range(200):
        command.values[:] = i
        port.write(host_tx.encode(command))
        board_read_into(board_fd, board, lambda: board.latest.command.rx_count == i + 1)
        state.command_seq = board.latest.command.seq
        state.effort[:] = board.latest.command.values  # a board that applies the torque
        os.write(board_fd, board_tx.encode(state))
        read_into(port, host, (i + 1) * SIZE)
        assert host.latest.joint_state.command_seq == i
        assert host.latest.joint_state.effort[3] == i
    assert host.stats.frames_ok == board.stats.frames_ok == 200


def test_loop_url_carries_frames(state_frames, rng):
    port = serial.serial_for_url("loop://", timeout=0.05)
    try:
        parser = StreamParser(7)
        data = b"".join(state_frames(50))
        for piece in pieces_of(data, rng, 60):
            port.write(piece)
            parser.feed(port.read(port.in_waiting))
        assert parser.stats.frames_ok == 50 and parser.stats.bytes_dropped == 0
    finally:
        port.close()


@pytest.mark.parametrize("baudrate", [921_600, 2_000_000])
def test_pty_accepts_the_documented_baud_rates(pty_port, baudrate):
    _, port = pty_port
    port.baudrate = baudrate
    assert port.baudrate == baudrate
