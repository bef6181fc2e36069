"""The simulated board on its own: the test is the host, over pyserial on the board's pty link.

The board is ticked by hand (board.tick(), board.poll()), so every period is deterministic.
"""
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import serial

from drivers.core.robot import build_plant
from drivers.run_config import load_config
from drivers.serial import (
    Command,
    CommandMode,
    ConfigRequest,
    EffortKind,
    FrameEncoder,
    JointKind,
    MsgType,
    NodeState,
    StatusFlag,
    StreamParser,
)
from drivers.serial.config import load_serial_config
from drivers.serial.device import SimulatedBoard
from drivers.sim.config import load_sim_config
from drivers.sim.physics import joint_inertias

Q0 = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]


class Host:
    """The host end: pyserial on the link, an encoder, a parser that logs what arrives."""

    def __init__(self, path, n=7):
        self.port = serial.Serial(str(path), baudrate=2_000_000, timeout=0)
        self.encoder, self.parser = FrameEncoder(n), StreamParser(n, on_message=self._log)
        self.counts = {t: 0 for t in MsgType}
        self.faults, self.modes, self.node_states, self.states = [], [], [], []

    def _log(self, msg):
        self.counts[msg.MSG_TYPE] += 1
        if msg.MSG_TYPE == MsgType.FAULT_REPORT:
            self.faults.append(str(msg))
        elif msg.MSG_TYPE == MsgType.JOINT_STATE:
            self.modes.append(msg.mode)
            self.states.append(msg.values.copy())
        elif msg.MSG_TYPE == MsgType.HEARTBEAT:
            self.node_states.append(msg.node_state)

    @property
    def state(self):
        return self.parser.latest.joint_state

    def send(self, msg):
        self.port.write(self.encoder.encode(msg))

    def wait(self, done, timeout=2.0):
        """Reads until done() holds (pty delivery is asynchronous)."""
        end = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < end, "the board did not answer"
            self.parser.feed(self.port.read(4096))
            time.sleep(0.0005)

    def states_after(self, count):
        target = self.counts[MsgType.JOINT_STATE] + count
        return lambda: self.counts[MsgType.JOINT_STATE] >= target


def ticks(board, host, count):
    """`count` control periods, the host reading as it goes (the pty holds about 20 kB)."""
    for start in range(0, count, 100):
        k = min(100, count - start)
        target = host.counts[MsgType.JOINT_STATE] + k
        for _ in range(k):
            board.tick()
        host.wait(lambda: host.counts[MsgType.JOINT_STATE] >= target)


def command(mode, values=0.0, watchdog_ms=0, n=7):
    c = Command(n)
    c.mode, c.watchdog_ms = mode, watchdog_ms
    c.values[:] = values
    return c


@pytest.fixture
def bench(tmp_path):
    """bench(**device) -> (board, host): a board (plant from configs/demo.yaml at Q0) ticked by hand."""
    made = []

    def make(sim=None, **device):
        cfg = load_config("configs/demo.yaml", {"viz": False})
        board = SimulatedBoard(build_plant(cfg.robot),
                               load_sim_config({"initial_positions": Q0, **(sim or {})}),
                               load_serial_config({"port": "x", "device": device}).device, tmp_path / "board")
        host = Host(tmp_path / "board", board.n)
        made.append((board, host))
        return board, host

    yield make
    for board, host in made:
        host.port.close()
        board.close()


def handle(board, host, msg):
    """Host sends msg, the board reads it."""
    host.send(msg)
    received = board.parser.stats.frames_ok
    end = time.monotonic() + 2
    while board.parser.stats.frames_ok == received and time.monotonic() < end:
        board.poll(0.05)


def gravity_compensation(board):
    tau_g = np.zeros(7)
    board.physics.plant.kernels().gravity(board.physics.q, tau_g)
    return -tau_g


def test_config_comes_from_the_model(bench):
    board, host = bench(firmware_version=0x0203)
    handle(board, host, ConfigRequest())
    host.wait(lambda: host.counts[MsgType.CONFIG] == 1)
    config, plant = host.parser.latest.config, board.physics.plant
    joints = [plant.GetJointByName(f"iiwa_joint_{i}") for i in range(1, 8)]
    assert config.effort_kind == EffortKind.TORQUE and config.firmware_version == 0x0203
    assert list(config.joint_kind) == [JointKind.REVOLUTE] * 7
    f32 = lambda x: np.float32(x).astype(float)  # noqa: E731
    np.testing.assert_array_equal(config.position_lower, f32([j.position_lower_limits()[0] for j in joints]))
    np.testing.assert_array_equal(config.position_upper, f32([j.position_upper_limits()[0] for j in joints]))
    np.testing.assert_array_equal(config.velocity_limit, f32([j.velocity_upper_limits()[0] for j in joints]))
    np.testing.assert_array_equal(config.effort_limit, f32(plant.GetEffortUpperLimits()))
    np.testing.assert_array_equal(config.torque_constant, 0.0)


def test_brakes_until_commanded_then_applies_the_torque(bench):
    board, host = bench(command_timeout=1.0)
    for _ in range(50):
        board.tick()
    host.wait(host.states_after(50))
    s = host.state
    assert s.mode == CommandMode.DISABLE and s.status == StatusFlag.BRAKE_ENGAGED
    np.testing.assert_allclose(s.q, Q0, atol=1e-7)          # the brakes hold the arm against gravity
    assert s.time_us == 50_000 and not s.effort.any()
    assert host.node_states[0] == NodeState.READY
    tau = gravity_compensation(board)
    handle(board, host, command(CommandMode.TORQUE, tau))
    ticks(board, host, 500)
    s = host.state
    assert s.mode == CommandMode.TORQUE and s.status == StatusFlag.ENABLED and s.command_seq == 0
    np.testing.assert_allclose(s.effort, tau, rtol=1e-6)    # the applied torque, as float32
    np.testing.assert_allclose(s.q, Q0, atol=2e-3)          # gravity compensated: it stays
    assert s.time_us == 550_000 and host.node_states[-1] == NodeState.ACTIVE
    assert host.counts[MsgType.HEARTBEAT] == 6      # at 1 ms, on the change to ACTIVE (51 ms), then at 10 Hz


def test_clips_to_the_effort_limits(bench):
    board, host = bench()
    handle(board, host, command(CommandMode.TORQUE, 1e4))
    board.tick()
    host.wait(host.states_after(1))
    assert host.state.status & StatusFlag.SATURATED
    np.testing.assert_allclose(host.state.effort, board.effort_limit, rtol=1e-6)


@pytest.mark.parametrize("safe", ["disable", "damping"])
def test_watchdog_goes_safe_and_reports(bench, safe):
    board, host = bench(safe_command=safe, safe_damping=3.0, command_timeout=0.5)
    handle(board, host, command(CommandMode.TORQUE, gravity_compensation(board), watchdog_ms=20))
    for _ in range(40):
        board.tick()
    host.wait(lambda: host.faults and host.counts[MsgType.JOINT_STATE] == 40)
    assert host.faults == ["COMMAND_TIMEOUT (0x0006) on board: no valid COMMAND for 20 ms"]
    timed_out = [i for i, m in enumerate(host.modes) if m != CommandMode.TORQUE]
    assert timed_out[0] == 21                                  # period 21 starts 21 ms after the command
    s = host.state
    assert s.status & StatusFlag.COMMAND_TIMEOUT
    if safe == "disable":
        assert s.mode == CommandMode.DISABLE and s.status & StatusFlag.BRAKE_ENGAGED
    else:
        assert s.mode == CommandMode.DAMPING                    # d = 3 is below m/h but for joint 7
        m = joint_inertias(board.physics.plant, Q0)
        d = m / 1e-3 * (1 - np.exp(-3.0 * 1e-3 / m))
        assert d[6] < 1.0 and np.all(d[:6] > 2.6)
        np.testing.assert_allclose(s.effort, -d * host.states[-2][1], rtol=1e-5, atol=1e-6)
    handle(board, host, command(CommandMode.TORQUE, 0.0))   # a valid command ends the timeout
    board.tick()
    host.wait(host.states_after(1))
    assert host.state.mode == CommandMode.TORQUE and not host.state.status & StatusFlag.COMMAND_TIMEOUT


def test_bad_commands_keep_the_previous_one(bench):
    board, host = bench()
    tau = gravity_compensation(board)
    handle(board, host, command(CommandMode.TORQUE, tau))
    handle(board, host, command(CommandMode.TORQUE, np.r_[np.nan, tau[1:]]))
    handle(board, host, command(CommandMode.CURRENT, 1.0))
    handle(board, host, command(CommandMode.DAMPING, -1.0))
    six = FrameEncoder(6, seq=99)
    host.port.write(six.encode(command(CommandMode.TORQUE, 0.0, n=6)))
    end = time.monotonic() + 2
    while board.parser.stats.joint_count_errors == 0 and time.monotonic() < end:
        board.poll(0.05)
    board.tick()
    host.wait(lambda: len(host.faults) == 4 and host.counts[MsgType.JOINT_STATE] == 1)
    assert host.faults == [
        "BAD_COMMAND (0x000a) on board: COMMAND seq 1: non-finite value",
        "BAD_COMMAND (0x000a) on board: COMMAND seq 2: CURRENT mode on a torque board",
        "BAD_COMMAND (0x000a) on board: COMMAND seq 3: negative damping gain",
        "BAD_COMMAND (0x000a) on board: COMMAND seq 99 carries 6 joints, but the link is configured for "]
    assert host.state.command_seq == 0 and board.bad_commands == 4
    np.testing.assert_allclose(host.state.effort, tau, rtol=1e-6)


def test_current_board(bench):
    board, host = bench(effort="current", torque_constant=[2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 0.5])
    handle(board, host, ConfigRequest())
    host.wait(lambda: host.counts[MsgType.CONFIG] == 1)
    config = host.parser.latest.config
    k = np.array([2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 0.5])
    assert config.effort_kind == EffortKind.CURRENT
    np.testing.assert_array_equal(config.torque_constant, k)
    np.testing.assert_allclose(config.effort_limit, board.physics.plant.GetEffortUpperLimits() / k, rtol=1e-6)
    tau = gravity_compensation(board)
    handle(board, host, command(CommandMode.CURRENT, tau / k))
    board.tick()
    host.wait(host.states_after(1))
    np.testing.assert_allclose(host.state.effort, tau / k, rtol=1e-6)     # measured current
    np.testing.assert_allclose(board.physics.u_applied, tau, rtol=1e-6)    # torque = k * current
    handle(board, host, command(CommandMode.TORQUE, tau))                   # torque commands work too
    board.tick()
    host.wait(host.states_after(1))
    np.testing.assert_allclose(host.state.effort, tau / k, rtol=1e-6)


def test_lockstep_answers_each_command(bench):
    board, host = bench(lockstep=True)
    tau = gravity_compensation(board)
    for i in range(20):
        handle(board, host, command(CommandMode.TORQUE, tau))
        host.wait(lambda: host.counts[MsgType.JOINT_STATE] == i + 1)
        assert host.state.command_seq == i and host.state.time_us == 1000 * (i + 1)


def test_unplug_moves_the_link_to_a_new_pty(bench):
    board, host = bench(faults=[{"type": "unplug", "start": 0.010, "stop": 0.020}])
    link, first = board.link.link, board.path
    assert link.resolve() == Path(first).resolve()
    for _ in range(11):
        board.tick()
    assert not link.exists() and not board.link.plugged
    with pytest.raises(serial.SerialException):
        for _ in range(100):
            host.port.read(4096)
            time.sleep(0.001)
    for _ in range(10):
        board.tick()
    assert board.link.plugged and link.is_symlink() and str(link.readlink()) == board.path
    host.port.close()
    host.port = serial.Serial(str(link), timeout=0)
    board.tick()
    host.wait(host.states_after(1))
    assert host.state.time_us == 22_000 and board.fault_counts == [1]


@pytest.mark.parametrize("kind", ["bit_flip", "drop_byte", "truncate", "garbage", "split"])
def test_corruptions_on_the_wire(bench, kind):
    """Every k-th frame the board sends is damaged: the host loses exactly those frames (split and
    garbage lose none) and resynchronises after each."""
    board, host = bench(faults=[{"type": kind, "every": 7}], seed=3)
    for i in range(150):
        board.tick()
        if i % 30 == 29:                                       # read as we go: the pty holds ~20 kB
            time.sleep(0.002)
            host.parser.feed(host.port.read(65536))
    assert board.bytes_dropped == 0
    sent = board.frames_sent
    hits = board.fault_counts[0]
    assert hits == sent // 7
    lost = 0 if kind in ("garbage", "split") else hits
    if kind == "split":
        sent -= 1 if board._pending else 0                     # the last frame's tail is still held back
    host.wait(lambda: host.parser.stats.frames_ok == sent - lost)
    s = host.parser.stats
    assert s.frames_missed == lost
    assert s.resyncs == (0 if kind == "split" else hits)
    assert s.crc_errors + s.header_errors <= (0 if kind == "split" else hits)
    if kind in ("bit_flip", "drop_byte", "truncate"):
        assert s.crc_errors >= hits // 2


def test_paced_run_sends_states_and_heartbeats(bench):
    board, host = bench()
    runner = threading.Thread(target=lambda: board.run(0.3))
    runner.start()
    host.wait(lambda: not runner.is_alive() and host.counts[MsgType.JOINT_STATE] == board.frames_sent
              - host.counts[MsgType.HEARTBEAT])
    periods = round(board.physics.time_ns / board.period_ns)
    assert host.counts[MsgType.JOINT_STATE] == periods and board.bytes_dropped == 0
    assert 200 <= periods <= 310
    assert host.counts[MsgType.HEARTBEAT] == -(-periods // 100)
    assert host.parser.stats.frames_missed == 0
    assert host.faults == []                                    # no command, no watchdog
