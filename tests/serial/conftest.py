"""Fixtures of the serial tests: filled messages, frame streams, a real pty link, run configs with a
serial section, and a rig of the simulated board and the driver."""
import os
import sys
import threading
import time
import tty
from pathlib import Path

import lcm
import numpy as np
import pytest
import serial
import yaml

from drivers.core.config import channels_for
from drivers.core.robot import build_plant, load_robot
from drivers.core.schema import read_yaml
from drivers.run_config import load_config
from drivers.serial import (
    Command,
    CommandMode,
    Config,
    EffortKind,
    FaultCode,
    FaultReport,
    FrameEncoder,
    Heartbeat,
    JointKind,
    JointState,
    NodeState,
    StatusFlag,
)
from drivers.serial.crc import crc32
from drivers.serial.device import SimulatedBoard
from drivers.serial.driver import SerialDriver, robot_joint_kinds
from drivers.serial.protocol import CRC
from messages.codec import CommandEncoder, StatusDecoder
from messages.hilmsg import lcmt_hil_driver_health

JOINTS = 7


@pytest.fixture
def joints():
    return JOINTS


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def fill_state(state: JointState, i: int) -> JointState:
    """Frame i of a test stream: values exact in float32, so they decode bit-exactly."""
    n = state.joint_count
    state.time_us = 1_000 * i
    state.status = StatusFlag.ENABLED
    state.command_seq = i & 0xFFFF
    state.mode = CommandMode.TORQUE
    state.q[:] = i + 0.25 * np.arange(n)
    state.v[:] = -0.5 * i
    state.effort[:] = 0.125 * np.arange(n) - 1.0
    return state


@pytest.fixture
def sample_messages():
    """One filled message of each type for JOINTS joints."""
    state = fill_state(JointState(JOINTS), 42)
    command = Command(JOINTS)
    command.time_us = 987_654_321
    command.mode = CommandMode.CURRENT
    command.watchdog_ms = 20
    command.values[:] = np.linspace(-2.0, 2.0, JOINTS)
    heartbeat = Heartbeat()
    heartbeat.time_us = 2**40 + 5
    heartbeat.node_state = NodeState.ACTIVE
    heartbeat.rx_errors = 3
    fault = FaultReport()
    fault.time_us = 77
    fault.code = FaultCode.OVER_TEMPERATURE
    fault.joint_index = 3
    fault.text = "winding 95 °C"
    config = Config(JOINTS)
    config.effort_kind = EffortKind.CURRENT
    config.firmware_version = 0x0102
    config.joint_kind[:] = JointKind.REVOLUTE
    config.joint_kind[-1] = JointKind.PRISMATIC
    config.position_lower[:] = -2.5
    config.position_upper[:] = 2.5
    config.velocity_limit[:] = 1.5
    config.effort_limit[:] = 80.0
    config.torque_constant[:] = 0.75
    return {"state": state, "command": command, "heartbeat": heartbeat, "fault": fault,
            "config": config}


@pytest.fixture
def state_frames():
    """state_frames(count, joint_count=7, first_seq=0) -> list of JOINT_STATE frames (bytes)."""

    def make(count, joint_count=JOINTS, first_seq=0):
        encoder = FrameEncoder(joint_count, seq=first_seq)
        state = JointState(joint_count)
        return [bytes(encoder.encode(fill_state(state, i))) for i in range(count)]

    return make


@pytest.fixture
def with_crc():
    """with_crc(frame) -> the frame with its CRC recomputed (to forge intact bad frames)."""

    def fix(frame):
        frame = bytearray(frame)
        CRC.pack_into(frame, len(frame) - CRC.size, crc32(frame[: -CRC.size]))
        return bytes(frame)

    return fix


@pytest.fixture
def pty_port():
    """(board_fd, host_port): the pty master fd (board end) and pyserial on the slave (host)."""
    board_fd, slave_fd = os.openpty()
    tty.setraw(board_fd)
    tty.setraw(slave_fd)
    port = serial.Serial(os.ttyname(slave_fd), baudrate=2_000_000, timeout=0.05)
    yield board_fd, port
    port.close()
    os.close(slave_fd)
    os.close(board_fd)


# --- the driver and the simulated board --------------------------------------------------------------
SERIAL_IIWA = Path(__file__).resolve().parents[2] / "configs" / "serial" / "iiwa.yaml"


def merged(base: dict, changes: dict) -> dict:
    """`base` with `changes` merged in, mappings recursively."""
    out = dict(base)
    for key, value in changes.items():
        out[key] = merged(out.get(key) or {}, value) if isinstance(value, dict) else value
    return out


@pytest.fixture
def run_config(tmp_path):
    """run_config(path=configs/serial/iiwa.yaml, **sections) -> the RunConfig of `path` with
    `sections` merged in, written to tmp_path (cfg.source) so that `hil serial` and
    `hil serial-device` can run it; the board's link is in tmp_path unless the sections say otherwise."""

    def make(path: Path = SERIAL_IIWA, **sections):
        data = merged(read_yaml(path), merged({"serial": {"port": str(tmp_path / "board")}}, sections))
        file = tmp_path / f"run-{len(list(tmp_path.glob('run-*.yaml')))}.yaml"
        file.write_text(yaml.safe_dump(data))
        return load_config(file)

    return make


class Rig:
    """The simulated board running in a thread and the driver in the caller's, on memq:// LCM.

    With `hold`, every status is answered by a gravity-compensation command (a stand-in loop).
    `statuses` counts the status messages, `status` decodes the newest; `health` keeps every
    lcmt_hil_driver_health; spin() runs the driver.
    """

    def __init__(self, cfg, board: bool = True, hold: bool = True):
        self.cfg, self.hold = cfg, hold
        self.serial = cfg.serial
        self.lc = lcm.LCM("memq://")
        self.robot = load_robot(cfg.robot)
        self.channels = channels_for(cfg)
        protocol, n = cfg.robot.protocol, self.robot.n
        self.board, self._thread = None, None
        self._stop = threading.Event()
        if board:
            self.board = SimulatedBoard(build_plant(cfg.robot), cfg.sim, self.serial.device,
                                        self.serial.device.link or self.serial.port)
            self._thread = threading.Thread(target=self.board.run, args=(None, self._stop), daemon=True)
            self._thread.start()
        self.driver = SerialDriver(self.serial, self.robot.joint_names,
                                   robot_joint_kinds(self.robot.plant, self.robot.joint_names), protocol,
                                   self.channels, self.lc)
        self.status = StatusDecoder(protocol, n)
        self.statuses = 0
        self.health = []
        self.commands = CommandEncoder(protocol, n, fields=("torque",), channel=self.channels.command)
        self.kernels = self.robot.plant.kernels()
        self.tau = np.zeros(n)
        self.lc.subscribe(self.channels.status, self._on_status)
        self.lc.subscribe(self.channels.driver_health,
                          lambda channel, data: self.health.append(lcmt_hil_driver_health.decode(data)))

    def _on_status(self, channel, data):
        assert self.status.decode(data), self.status.last_error
        self.statuses += 1
        if self.hold:
            self.kernels.gravity(self.status.position_measured, self.tau)
            self.tau *= -1.0
            self.command(self.tau)

    def command(self, tau, utime: int = 0):
        self.commands.encode(utime, torque=np.asarray(tau, dtype=float))
        self.commands.publish(self.lc)

    def spin(self, seconds: float, until=None) -> bool:
        """Runs the driver for `seconds`, or until until() holds (returns whether it did)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.driver.spin_once()
            if until is not None and until():
                return True
        return until is None

    def stop_board(self):
        """Stops the board's thread (its pty stays)."""
        self._stop.set()
        self._thread.join(5)

    def close(self):
        self.driver.close()
        if self._thread is not None:
            self.stop_board()
            self.board.close()


@pytest.fixture
def rig(run_config):
    """rig(**sections) -> a Rig on run_config(**sections); closed after the test. The GIL switch
    interval is cut to 0.5 ms meanwhile, so that the board's thread runs on time."""
    rigs = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)

    def make(board: bool = True, hold: bool = True, **sections):
        # Threads of one process stall each other now and then: a looser stale timeout than a
        # driver process needs, unless the test sets one.
        rigs.append(Rig(run_config(**merged({"serial": {"stale_timeout": 0.05}}, sections)), board, hold))
        return rigs[-1]

    yield make
    for r in rigs:
        r.close()
    sys.setswitchinterval(interval)
