"""LCM logs: recording, reading, numpy arrays; interop with lcm-logger and lcm-logplayer."""
import signal
import subprocess
import time

import lcm
import numpy as np
import pytest

from messages import errors, lcmt_hil_estop, lcmt_hil_telemetry, lcmt_iiwa_status
from messages.codec import CommandEncoder, StatusEncoder
from messages.lcm_tools import lcm_tool
from messages.logs import LogRecorder, log_to_arrays, read_events

N = 7


def _tool(name):
    path = lcm_tool(name)
    if path is None:
        pytest.skip(f"{name} is not installed (it ships with the `lcm` wheel)")
    return path


def _write_run(path, ticks=20):
    """A log of `ticks` iiwa status/command pairs plus one e-stop; returns the positions."""
    status, command = StatusEncoder("iiwa", N), CommandEncoder("iiwa", N)
    positions = np.arange(ticks * N, dtype=float).reshape(ticks, N) / 10.0
    with LogRecorder(path) as recorder:
        for k, q in enumerate(positions):
            recorder.write("IIWA_STATUS", 1_000_000 + 1000 * k, status.encode(k, q, 2 * q))
            recorder.write("IIWA_COMMAND", 1_000_000 + 1000 * k + 500, command.encode(k, q, -q))
        estop = lcmt_hil_estop()
        estop.latched, estop.source, estop.reason = True, "pendant", "test"
        recorder.write("HIL_ESTOP", 1_000_000 + 1000 * ticks, estop.encode())
    return positions


def test_log_round_trip_and_arrays(tmp_path):
    path = tmp_path / "run.lcmlog"
    positions = _write_run(path)
    events = list(read_events(path))
    assert len(events) == 41
    assert [event.channel for event in events[:2]] == ["IIWA_STATUS", "IIWA_COMMAND"]
    assert lcmt_iiwa_status.decode(events[2].data).utime == 1

    arrays = log_to_arrays(path)
    assert set(arrays) == {"IIWA_STATUS", "IIWA_COMMAND", "HIL_ESTOP"}
    status = arrays["IIWA_STATUS"]
    np.testing.assert_array_equal(status["log_utime"], 1_000_000 + 1000 * np.arange(20))
    np.testing.assert_array_equal(status["utime"], np.arange(20))
    assert status["joint_position_measured"].shape == (20, N)
    np.testing.assert_array_equal(status["joint_position_measured"], positions)
    np.testing.assert_array_equal(status["joint_velocity_estimated"], 2 * positions)
    np.testing.assert_array_equal(arrays["IIWA_COMMAND"]["joint_torque"], -positions)
    assert arrays["HIL_ESTOP"]["latched"].tolist() == [True]
    assert "source" not in arrays["HIL_ESTOP"]  # strings are left out

    only = log_to_arrays(path, channels={"IIWA_COMMAND"})
    assert list(only) == ["IIWA_COMMAND"]


def test_recorder_filters_channels_and_records_a_subscription(tmp_path, memq):
    path = tmp_path / "filtered.lcmlog"
    with LogRecorder(path, channels={"IIWA_STATUS"}) as recorder:
        assert recorder.write("IIWA_COMMAND", 1, b"ignored") is False
        recorder.subscribe(memq)
        before = time.time_ns() // 1000
        memq.publish("IIWA_STATUS", lcmt_iiwa_status().encode())
        memq.publish("OTHER", b"ignored")
        while memq.handle_timeout(0):
            pass
        assert recorder.count == 1
    (event,) = read_events(path)
    assert event.channel == "IIWA_STATUS" and event.timestamp >= before
    with pytest.raises(ValueError, match="overwrite"):
        LogRecorder(path)


def test_ragged_arrays_and_corrupt_events(tmp_path):
    path = tmp_path / "ragged.lcmlog"
    with LogRecorder(path) as recorder:
        for k, num_joints in enumerate((0, N)):
            telemetry = lcmt_hil_telemetry()
            telemetry.tick, telemetry.num_joints = k, num_joints
            telemetry.q = telemetry.v = telemetry.q_desired = telemetry.tau_commanded = [1.0] * num_joints
            recorder.write("HIL_TELEMETRY", k, telemetry.encode())
        recorder.write("HIL_TELEMETRY", 5, telemetry.encode()[:-3])
        recorder.write("UNKNOWN", 6, b"\0" * 16)
    with pytest.raises(errors.TruncatedError, match="HIL_TELEMETRY"):
        log_to_arrays(path)
    telemetry = log_to_arrays(path, on_error="skip")["HIL_TELEMETRY"]
    assert telemetry["tick"].tolist() == [0, 1]
    assert telemetry["q"].dtype == object
    assert [len(q) for q in telemetry["q"]] == [0, N]


def _stop(process):
    """Stop a tool this test started: SIGINT (lcm-logger flushes on it), then kill."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_lcm_logger_records_what_we_publish(tmp_path, multicast_url):
    path = tmp_path / "logger.lcmlog"
    logger = subprocess.Popen([_tool("lcm-logger"), f"--lcm-url={multicast_url}",
                               "--flush-interval=10", "-q", "-f", str(path)])
    try:
        publisher = lcm.LCM(multicast_url)
        deadline = time.monotonic() + 10
        while not (path.exists() and path.stat().st_size > 0):  # until it is listening
            assert time.monotonic() < deadline, "lcm-logger recorded nothing within 10 s"
            publisher.publish("PROBE", b"probe")
            time.sleep(0.05)
        encoder = StatusEncoder("iiwa", N, channel="IIWA_STATUS")
        positions = np.random.default_rng(1).normal(size=(50, N))
        for k, q in enumerate(positions):
            encoder.encode(k, q)
            encoder.publish(publisher)
            time.sleep(0.001)
        time.sleep(0.3)
    finally:
        _stop(logger)
    status = log_to_arrays(path, channels={"IIWA_STATUS"})["IIWA_STATUS"]
    np.testing.assert_array_equal(status["utime"], np.arange(50))
    np.testing.assert_array_equal(status["joint_position_measured"], positions)
    assert np.all(np.diff(status["log_utime"]) >= 0)


def test_lcm_logplayer_replays_our_log(tmp_path, multicast_url):
    source, copy = tmp_path / "source.lcmlog", tmp_path / "replayed.lcmlog"
    _write_run(source)
    expected = [(event.channel, event.data) for event in read_events(source)]
    receiver = lcm.LCM(multicast_url)
    with LogRecorder(copy) as recorder:
        recorder.subscribe(receiver)
        player = subprocess.Popen([_tool("lcm-logplayer"), f"--lcm-url={multicast_url}", str(source)],
                                  stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while recorder.count < len(expected) and time.monotonic() < deadline:
                receiver.handle_timeout(100)
        finally:
            _stop(player)
    assert [(event.channel, event.data) for event in read_events(copy)] == expected
    np.testing.assert_array_equal(log_to_arrays(copy)["IIWA_COMMAND"]["joint_position"],
                                  log_to_arrays(source)["IIWA_COMMAND"]["joint_position"])
