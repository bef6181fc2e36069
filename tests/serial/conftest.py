"""Fixtures of the serial-protocol tests: filled messages, frame streams, a real pty link."""
import os
import tty

import numpy as np
import pytest
import serial

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
from drivers.serial.protocol import CRC

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
