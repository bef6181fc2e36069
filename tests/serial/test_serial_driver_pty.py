"""The driver against a board played by the test on the master end of a pty: exact byte streams, no
threads: allocation in the steady state (tracemalloc), random bytes, a board fault report, CONFIGs
that are not the robot's."""
import os
import select
import time
import tracemalloc
import tty

import lcm
import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.serial import (
    CommandMode,
    Config,
    EffortKind,
    FaultReport,
    FrameEncoder,
    JointKind,
    JointState,
    StatusFlag,
    StreamParser,
)
from drivers.serial.config import load_serial_config
from drivers.serial.driver import SerialDriver
from messages.channels import Channels
from messages.codec import CommandEncoder, StatusDecoder
from messages.hilmsg import lcmt_hil_driver_health


class PtyBoard:
    """The test as the board: frames written into the pty master, the driver's frames parsed."""

    def __init__(self, fd_io=True, **section):
        self.fd, slave = os.openpty()
        tty.setraw(self.fd)
        tty.setraw(slave)
        self._slave = slave
        self.lc = lcm.LCM("memq://")
        self.channels = Channels.for_robot("iiwa")
        # long timeouts: the test paces the frames itself
        config = load_serial_config({"port": os.ttyname(slave), "stale_timeout": 10, "link_timeout": 20,
                                     "command_timeout": 10, "board_watchdog": 20, **section})
        self.driver = SerialDriver(config, [f"joint_{i}" for i in range(7)], [0] * 7, "iiwa", self.channels,
                                   self.lc, fd_io=fd_io)
        self.encoder, self.received = FrameEncoder(7), StreamParser(7)
        self.state = JointState(7)
        self.state.status, self.state.mode = StatusFlag.ENABLED, CommandMode.TORQUE
        self.status = StatusDecoder("iiwa", 7)
        self.lc.subscribe(self.channels.status, lambda channel, data: self.status.decode(data))
        command = CommandEncoder("iiwa", 7, fields=("torque",), channel=self.channels.command)
        command.encode(0, torque=np.linspace(-1.0, 1.0, 7))
        self.command = command.tobytes()

    def connect(self, config=None):
        for _ in range(20):
            self.driver.spin_once(0.002)                  # opens the port, asks for CONFIG
            self.drain()
            if self.received.latest.config_request.rx_count:
                break
        os.write(self.fd, self.encoder.encode(config or Config(7)))
        for _ in range(100):
            self.driver.spin_once(0.002)
            if self.driver.connected:
                return
        raise AssertionError(self.driver.link_events)

    def frame(self, i: int):
        """One period: a JOINT_STATE from the board and a command from the loop."""
        self.state.time_us, self.state.command_seq = i, i & 0xFFFF
        self.state.q[0] = i
        os.write(self.fd, self.encoder.encode(self.state))
        self.lc.publish(self.channels.command, self.command)

    def drain(self):
        while select.select([self.fd], [], [], 0)[0]:
            self.received.feed(os.read(self.fd, 65536))

    def close(self):
        self.driver.close()
        os.close(self._slave)
        os.close(self.fd)


@pytest.fixture
def pty_board():
    boards = []

    def make(fd_io=True, **section):
        boards.append(PtyBoard(fd_io, **section))
        return boards[-1]

    yield make
    for board in boards:
        board.close()


def transient_peaks(board, fn, count, frame=True):
    """Bytes allocated at the peak of fn(i) (after board.frame(i) if `frame`), above what was live
    before it, for `count` calls."""
    peaks = []
    for i in range(count):
        if frame:
            board.frame(i)
            time.sleep(0.0003)                                # the pty delivers asynchronously
        live = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn(i)
        peaks.append(tracemalloc.get_traced_memory()[1] - live)
        board.drain()
    return np.median(peaks)


def ours(snapshot):
    return snapshot.filter_traces([tracemalloc.Filter(True, "*/drivers/serial/*"),
                                   tracemalloc.Filter(True, "*/messages/*")])


class NullPort:
    """Takes frames and drops them, allocating nothing: stands in for pyserial (whose write copies
    the frame) where the driver's own allocation is measured."""

    def write(self, frame):
        return len(frame)


def test_steady_state_allocation(pty_board):
    """Nothing stays allocated, frame after frame (pty and LCM included). Per frame, the driver's own
    work makes a few scalars only: publishing a status from a decoded JOINT_STATE, and encoding and
    writing a COMMAND for an LCM command; a numpy temporary of the joint vector (>= 168 B) breaks
    the bound. Parsing makes struct's tuples and scalars, no memoryview (184 B each). pyserial's
    read and write copies and lcm's message bytes are what the driver cannot avoid."""
    board = pty_board()
    board.connect()
    d = board.driver
    states = []
    for i in range(600):                                      # warm up; fills the command ring
        board.frame(i)
        time.sleep(0.0003)
        d.spin_once(0.002)
        board.drain()
        states.append(bytes(board.encoder.encode(board.state)))
    tracemalloc.start(1)
    try:
        transient_peaks(board, lambda i: d.spin_once(0.002), 100)      # counters now traced too
        before = ours(tracemalloc.take_snapshot())
        transient_peaks(board, lambda i: d.spin_once(0.002), 2000)
        after = ours(tracemalloc.take_snapshot())
        parse = transient_peaks(board, lambda i: d.parser.feed(states[i]), 600, frame=False)
        status = transient_peaks(board, lambda i: d._on_state(d.parser.latest.joint_state), 600, frame=False)
        port, d.port = d.port, NullPort()
        forward = transient_peaks(board, lambda i: d._on_command("", board.command), 600, frame=False)
        d.port = port
    finally:
        tracemalloc.stop()
    assert d.statuses_published == 3900 and d.commands_forwarded == 3300
    assert board.received.latest.command.rx_count >= 2700 and board.received.stats.crc_errors == 0
    grown = sum(stat.size_diff for stat in after.compare_to(before, "lineno"))
    assert abs(grown) < 1024, after.compare_to(before, "lineno")[:5]     # 2000 frames: a leak shows in kB
    assert parse <= 384, parse                                   # e.g. 292 B
    assert status <= 176 and forward <= 176, (status, forward)    # e.g. 72 and 136 B


def test_random_bytes_never_raise(pty_board, rng):
    """100 kB of noise with valid frames mixed in: everything counted, the good frames published."""
    board = pty_board()
    board.connect()
    d = board.driver
    good = 0
    for i in range(300):
        noise = rng.integers(0, 256, int(rng.integers(0, 600)), dtype="u1").tobytes()
        if i % 3 == 0:
            noise = noise.replace(b"\xaa", b"\xaa\x55", 4)    # plausible sync patterns
        os.write(board.fd, noise)
        if i % 2:
            board.frame(1000 + i)
            good += 1
        for _ in range(3):
            d.spin_once(0.001)
        board.drain()
    for _ in range(20):
        d.spin_once(0.002)
    s = d.parser.stats
    assert d.connected and d.statuses_published >= good - 5
    assert s.bytes_dropped > 50_000 and s.resyncs > 100
    assert board.received.stats.crc_errors == 0                # the driver's own frames are intact
    assert d.summary()["frames_rx"] == s.frames_ok


def test_fault_report_text_reaches_health(pty_board):
    board = pty_board()
    health = []
    board.lc.subscribe(board.channels.driver_health,
                       lambda channel, data: health.append(lcmt_hil_driver_health.decode(data)))
    board.connect()
    report = FaultReport()
    report.code, report.joint_index, report.text = 0x8001, 2, "encoder ²"
    os.write(board.fd, board.encoder.encode(report))
    board.state.status |= StatusFlag.FAULT
    for i in range(5):
        board.frame(i)
    for _ in range(20):
        board.driver.spin_once(0.002)
    assert health[-1].board_fault_code == 0x8001
    assert health[-1].board_fault_text == "BOARD_SPECIFIC (0x8001) on joint 2: encoder ²"
    assert board.driver.statuses_withheld == 5 and board.driver.statuses_published == 0
    board.drain()
    assert board.received.latest.heartbeat.rx_count >= 1


@pytest.mark.parametrize("fd_io", [True, False])
def test_fd_io_and_pyserial_io_carry_the_same_frames(pty_board, fd_io):
    """The file-descriptor fast path and pyserial's read()/write() (the benchmark's comparison) move
    the same frames, and both notice the board's end of the pty closing. (pyserial's write() raises
    its write timeout when the clock has passed it after the frame went out whole, so there a stall
    can count a delivered frame in tx_incomplete.)"""
    board = pty_board(fd_io=fd_io)
    board.connect()
    d = board.driver
    assert d._device is fd_io
    for i in range(200):
        board.frame(i)
        time.sleep(0.0003)
        d.spin_once(0.002)
        board.drain()
    for _ in range(5):
        d.spin_once(0.002)
    board.drain()
    assert d.statuses_published == 200 and board.status.position_measured[0] == 199
    assert d.commands_forwarded == 200 and board.received.latest.command.rx_count >= 200
    assert d.parser.stats.crc_errors == 0 and board.received.stats.crc_errors == 0
    assert d.tx_incomplete == 0 or not fd_io
    os.close(board.fd)                                        # the board's end goes away: a hang-up
    board.fd = os.open("/dev/null", os.O_RDWR)                # for close()
    for _ in range(20):
        d.spin_once(0.002)
        if d.port is None:
            break
    assert d.port is None and "read failed" in d.link_events[-1][1], d.link_events


def board_config(kind):
    config = Config(7)
    if kind == "prismatic":
        config.joint_kind[6] = JointKind.PRISMATIC
    else:
        config.effort_kind = EffortKind.CURRENT
        config.torque_constant[:] = [1, 1, 1, 0, 1, 1, 1]
    return config


@pytest.mark.parametrize("kind, message", [
    ("prismatic", r"robot.model: the board on .* has a PRISMATIC joint 6; the model's joint_6 is REVOLUTE"),
    ("current", r"serial.effort: the board on .* reports CURRENT effort without a torque constant for joint 3"),
])
def test_a_config_that_is_not_the_robot_stops_the_driver(pty_board, kind, message):
    board = pty_board()
    with pytest.raises(ConfigError, match=message):
        board.connect(board_config(kind))
