"""The driver against the simulated board (a thread) on a real pty, over memq:// LCM in one process.

`rig(...)` (conftest) runs the board in a thread and the driver in the test's thread; its stand-in
loop answers every status with gravity compensation. The faults are the board's own
(serial.device.faults), so the driver sees them on the wire as it would from hardware.
"""
import socket
import threading
import time

import numpy as np
import pytest
import serial

from drivers.core.schema import ConfigError
from drivers.serial import CommandMode, StatusFlag
from messages.drake import lcmt_iiwa_command

Q0 = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0])


def up(r, timeout=5.0):
    assert r.spin(timeout, lambda: r.driver.connected and r.statuses > 0), r.driver.link_events


def last_state(r):
    """Stops the board and lets its last JOINT_STATE through: status and board state then agree."""
    r.stop_board()
    assert r.spin(0.5, lambda: r.status.utime == r.board.state.time_us)


def test_status_mirrors_the_board(rig):
    r = rig()
    up(r)
    r.spin(0.5)
    s, state = r.status, r.board.state
    assert s.utime <= state.time_us and state.time_us - s.utime <= 20_000     # the board's clock
    np.testing.assert_allclose(s.position_measured, Q0, atol=2e-3)           # gravity compensation holds
    h = r.health[-1]
    assert h.connected and h.driver_name == f"serial:{r.serial.port}" and h.reconnects == 0
    assert 600 < h.rx_rate_hz < 1300 and 600 < h.tx_rate_hz < 1400                # 1 kHz (over 0.1 s)
    assert (h.crc_errors, h.resyncs, h.sequence_gaps, h.dropped_bytes, h.board_fault_code) == (0, 0, 0, 0, 0)
    assert h.staleness_us < 50_000
    assert 4 <= len(r.health) <= 9                                                # 10 Hz (plus link up)
    last_state(r)
    assert r.statuses > 400 and r.driver.statuses_published == r.statuses
    # iiwa sign convention (as Drake's driver and drivers/sim): torques are negated joint torques
    f32 = lambda x: x.astype(np.float32)  # noqa: E731 (the wire's precision)
    np.testing.assert_array_equal(s.position_measured, f32(state.q))
    np.testing.assert_array_equal(s.velocity_estimated, f32(state.v))
    np.testing.assert_array_equal(s.torque_measured, -f32(state.effort))
    np.testing.assert_allclose(s.torque_commanded, s.torque_measured, rtol=1e-6, atol=1e-9)  # the echoed command
    np.testing.assert_array_equal(s.position_commanded, s.position_measured)


def test_panda_protocol_signs(rig):
    r = rig(robot={"protocol": "panda"})
    up(r)
    r.spin(0.1)
    last_state(r)
    s = r.status
    np.testing.assert_array_equal(s.torque_measured, r.board.state.effort.astype(np.float32))  # not negated
    assert (s.robot_mode, s.control_mode, s.robot_utime) == (2, 4, r.board.state.time_us)


@pytest.mark.parametrize("safe", ["disable", "damping"])
def test_command_expiry_sends_the_safe_command(rig, safe):
    r = rig(serial={"safe_command": safe, "safe_damping": [4, 4, 4, 4, 2, 2, 1]})
    up(r)
    r.spin(0.2)
    assert r.board.mode == CommandMode.TORQUE
    r.hold = False
    stopped = time.monotonic()
    assert r.spin(1.0, lambda: r.board.mode != CommandMode.TORQUE)
    assert time.monotonic() - stopped < 0.09            # command_timeout (0.05 s), not the board's watchdog (0.1 s)
    r.spin(0.3)
    board = r.board
    expected = CommandMode.DISABLE if safe == "disable" else CommandMode.DAMPING
    assert board.mode == expected and not board.timed_out and board.fault_reports == 0   # fed, not expired
    if safe == "damping":
        np.testing.assert_array_equal(board.values, [4, 4, 4, 4, 2, 2, 1])
    else:
        assert board.state.status & StatusFlag.BRAKE_ENGAGED
    assert 10 <= r.driver.safe_commands <= 45        # every 10 ms over ~0.35 s (fewer when the machine stalls)
    r.hold = True                                                        # commands again: forwarded
    r.spin(0.5, lambda: r.board.mode == CommandMode.TORQUE)
    assert r.board.mode == CommandMode.TORQUE


def test_bad_lcm_commands_are_counted_not_forwarded(rig):
    r = rig(hold=False)
    up(r)
    six, nan, positions = lcmt_iiwa_command(), lcmt_iiwa_command(), lcmt_iiwa_command()
    six.num_torques, six.joint_torque = 6, [0.0] * 6
    nan.num_torques, nan.joint_torque = 7, [0.0] * 6 + [float("nan")]
    positions.num_joints, positions.joint_position = 7, list(Q0)
    for data in (b"\x00" * 12, six.encode(), nan.encode(), positions.encode()):
        r.lc.publish(r.channels.command, data)
    r.spin(0.1)
    d = r.driver
    assert (d.commands_rejected, d.commands_received, d.commands_forwarded) == (4, 0, 0)
    assert r.board.mode == CommandMode.DISABLE and r.board.bad_commands == 0


@pytest.mark.parametrize("faults, lost", [
    ([{"type": "bit_flip", "every": 50}], True),
    ([{"type": "drop_byte", "every": 70}], True),
    ([{"type": "truncate", "every": 40}], True),
    ([{"type": "garbage", "every": 30}], False),
    ([{"type": "split", "every": 3}], False),
], ids=["bit_flip", "drop_byte", "truncate", "garbage", "split"])
def test_damaged_frames_are_counted_and_survived(rig, faults, lost):
    r = rig(serial={"device": {"faults": faults}})
    up(r)
    before = sum(r.board.fault_counts)                             # (sent before the driver connected)
    r.spin(1.0)
    np.testing.assert_allclose(r.status.position_measured, Q0, atol=3e-3)  # held all along
    r.stop_board()
    r.spin(0.25)                                                   # health after the last frame
    hits = sum(r.board.fault_counts) - before
    h, s = r.health[-1], r.driver.parser.stats
    assert hits >= 10
    assert (h.frames_rx, h.crc_errors, h.resyncs, h.sequence_gaps, h.dropped_bytes) == \
        (s.frames_ok, s.crc_errors, s.resyncs, s.frames_missed, s.bytes_dropped)
    # (one damaged frame may be in flight when the driver connects; its first read may start inside
    # a frame: one resync on connecting)
    if lost:       # each damaged frame is lost, and framing recovers at the next one
        assert hits - 1 <= h.sequence_gaps <= hits + 1 and hits - 1 <= h.resyncs <= hits + 2
        assert h.crc_errors >= hits // 2 and h.dropped_bytes > 0
    else:          # garbage is skipped, split frames are put together: no frame lost
        assert h.sequence_gaps == 0 and h.crc_errors <= 1
        assert h.resyncs <= (1 if faults[0]["type"] == "split" else hits + 2)


def test_silent_board_goes_stale_and_comes_back(rig):
    r = rig(serial={"device": {"faults": [{"type": "silent", "start": 0.5, "stop": 0.8}]}})
    up(r)
    assert r.spin(2.0, lambda: r.board.silent)
    count, reports = r.statuses, len(r.health)
    assert r.spin(0.1, lambda: not r.driver.connected)
    r.spin(0.1)
    assert r.statuses - count <= 10                                    # the status stops (some were in flight)
    stale = [h for h in r.health[reports:] if not h.connected]
    assert stale and stale[0].staleness_us >= 10_000                   # published at once when stale
    assert r.board.mode == CommandMode.DISABLE                         # the safe command replaced the loop's
    assert r.spin(1.0, lambda: r.driver.connected and r.statuses > count + 100)
    assert r.driver.reconnects == 0 and r.health[-1].reconnects == 0   # shorter than link_timeout
    texts = [text for _, text in r.driver.link_events]
    assert texts[1].startswith("serial link stale: no JOINT_STATE for") and texts[2] == "serial link fresh again"


def test_long_silence_reconnects_with_backoff(rig):
    r = rig(serial={"link_timeout": 0.2, "config_timeout": 0.1, "reconnect": {"initial": 0.05, "max": 0.2},
                    "device": {"faults": [{"type": "silent", "start": 0.3, "stop": 1.3}]}})
    up(r)
    assert r.spin(3.0, lambda: r.driver.reconnects == 1 and r.statuses > 0 and r.driver.connected)
    texts = [text for _, text in r.driver.link_events if "stale" not in text and "fresh" not in text]
    assert "serial link lost: no JOINT_STATE for 0.2" in texts[1] and "retrying in 0.05 s" in texts[1]
    retries = [text.split("retrying in ")[1] for text in texts[2:-1]]
    assert retries[:3] == ["0.1 s", "0.2 s", "0.2 s"]                 # doubling up to reconnect.max
    assert all("serial link down: no CONFIG from the board within 0.1 s" in text for text in texts[2:-1])
    assert texts[-1].startswith("serial link up")
    r.spin(0.01)
    assert r.health[-1].reconnects == 1


def test_unplug_and_replug_reconnects(rig):
    r = rig(serial={"device": {"faults": [{"type": "unplug", "start": 0.4, "stop": 0.9}]}})
    up(r)
    assert r.spin(2.0, lambda: not r.driver.ready)
    r.spin(0.01)
    assert not r.health[-1].connected
    count = r.statuses
    assert r.spin(3.0, lambda: r.driver.reconnects == 1 and r.statuses > count + 100)
    texts = [text for _, text in r.driver.link_events if "stale" not in text and "fresh" not in text]
    # the first I/O after the unplug fails: the status read or the command write, as the scheduler has it
    assert texts[1].startswith(("serial link lost: read failed", "serial link lost: write failed")), texts
    assert any("cannot open" in text and "No such file" in text for text in texts)   # the link is gone
    np.testing.assert_allclose(r.status.position_measured, Q0, atol=3e-3)  # the brakes held the arm


def test_board_fault_is_reported_and_the_status_withheld(rig):
    r = rig(serial={"device": {"faults": [{"type": "board_fault", "start": 0.4, "stop": 0.7,
                                           "code": "OVER_TEMPERATURE", "joint": 3, "text": "winding 120 C"}]}})
    up(r)
    assert r.spin(2.0, lambda: r.board.latched >= 0)
    count = r.statuses
    r.spin(0.2)
    assert r.statuses - count <= 10 and r.driver.statuses_withheld > 100
    faulted = [h for h in r.health if h.board_fault_code]
    assert faulted[0].board_fault_code == 2 and faulted[0].connected
    assert faulted[0].board_fault_text == "OVER_TEMPERATURE (0x0002) on joint 3: winding 120 C"
    assert r.spin(1.0, lambda: r.statuses > count + 100)
    r.spin(0.15)
    assert r.health[-1].board_fault_code == 0 and r.health[-1].board_fault_text == ""
    assert r.driver.board_faults[-1][1] == faulted[0].board_fault_text


def test_wrong_joint_count_is_a_clear_error(rig):
    r = rig(sim={"joints": [f"iiwa_joint_{i}" for i in range(1, 7)]})
    with pytest.raises(ConfigError) as error:
        r.driver.run(2.0)
    assert f"serial.joint_count: the board on {r.serial.port} sends 6 joints (" in str(error.value)
    assert "but the robot has 7" in str(error.value)
    while r.lc.handle_timeout(10):
        pass
    assert not r.health[-1].connected and "sends 6 joints" in r.health[-1].board_fault_text


def test_current_board_and_effort_mismatch(rig):
    k = [2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 0.5]
    r = rig(serial={"device": {"effort": "current", "torque_constant": k}})
    up(r)
    r.spin(0.3)
    last_state(r)
    assert r.board.mode == CommandMode.CURRENT
    np.testing.assert_allclose(r.status.torque_measured, -np.array(k) * r.board.state.effort, rtol=1e-6)
    np.testing.assert_allclose(r.board.physics.u_applied, -r.status.torque_commanded, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(r.status.position_measured, Q0, atol=2e-3)
    wrong = rig(serial={"port": r.serial.port + "2", "effort": "torque",
                        "device": {"effort": "current", "torque_constant": k}})
    with pytest.raises(ConfigError, match=r"serial.effort: is torque, but the board on .* reports CURRENT effort"):
        wrong.driver.run(2.0)


def test_socket_url_through_a_tcp_relay(rig, tmp_path):
    """socket://: the board's pty exposed on TCP by a relay (what ser2net does for a real port)."""
    r0 = rig(hold=False)                                   # only for its board; its driver stays idle
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    done = threading.Event()

    def relay():
        conn, _ = server.accept()
        tty = serial.Serial(r0.serial.port, timeout=0)
        conn.setblocking(False)
        while not done.is_set():
            data = tty.read(4096)
            if data:
                conn.sendall(data)
            try:
                tty.write(conn.recv(4096))
            except BlockingIOError:
                time.sleep(0.0002)
        conn.close()
        tty.close()

    thread = threading.Thread(target=relay, daemon=True)
    thread.start()
    try:
        r = rig(board=False, serial={"port": f"socket://127.0.0.1:{port}"})
        r.board = r0.board
        up(r)
        r.spin(0.3)
        assert r.health[-1].driver_name == f"serial:socket://127.0.0.1:{port}" and r.health[-1].connected
        assert r.driver.statuses_published > 200 and r.driver.parser.stats.crc_errors == 0
    finally:
        done.set()
        thread.join(2)
        server.close()


def test_loop_url_runs_without_a_board(rig):
    """loop:// echoes the driver's own frames: no CONFIG ever comes, nothing breaks, it keeps trying."""
    r = rig(board=False, serial={"port": "loop://", "config_timeout": 0.1, "reconnect": {"initial": 0.05}})
    summary = r.driver.run(0.6)
    assert summary["connections"] == 0 and summary["unexpected_frames"] >= 3   # its CONFIG_REQUESTs
    assert all("no CONFIG from the board within 0.1 s" in text for text in summary["link_events"])
    assert len(summary["link_events"]) >= 2 and not r.health[-1].connected
