"""Real-time mode: `hil sim CONFIG` as its own process over ttl=0 multicast LCM, and
run_realtime / run_sim in a thread. Pacing is checked as behaviour (never ahead of the wall clock),
not as performance."""
import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import lcm
import numpy as np
import pytest

from drivers.run_config import load_config
from drivers.sim import SimulatedRobot, load_sim_config, run_sim
from messages import lcmt_viewer_draw, lcmt_viewer_load_robot
from messages.codec import CommandEncoder, StatusDecoder

REPO = Path(__file__).resolve().parents[2]
IIWA = REPO / "configs" / "robots" / "iiwa14.urdf"
Q0 = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]


def config_file(tmp_path, url, sim="{}", extra=""):
    path = tmp_path / "sim.yaml"
    path.write_text(f"robot: {{model: {IIWA}, protocol: iiwa}}\nlcm: {{url: \"{url}\"}}\nsim: {sim}\n{extra}")
    return path


def start(path, *args):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "hil", "sim", str(path), *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class Client:
    """The controller's side over UDP multicast: decodes statuses, answers each with a torque command."""

    def __init__(self, url, torque):
        self.lc = lcm.LCM(url)
        self.status = StatusDecoder("iiwa", 7)
        self.command = CommandEncoder("iiwa", 7, fields=("torque",), channel="IIWA_COMMAND")
        self.torque, self.utimes, self.commanded = torque, [], []
        self.lc.subscribe("IIWA_STATUS", self._on_status)

    def _on_status(self, channel, data):
        assert self.status.decode(data), self.status.last_error
        self.utimes.append(self.status.utime)
        self.commanded.append(self.status.torque_commanded.copy())
        tau = self.torque(self.status)
        if tau is not None:
            self.command.encode_or_raise(self.status.utime, torque=tau)
            self.command.publish(self.lc)

    def run_until(self, done, timeout=30.0):
        end = time.monotonic() + timeout
        while not done() and time.monotonic() < end:
            self.lc.handle_timeout(10)
        assert done(), "timed out"


def gravity_compensation(plant):
    k, tau = plant.kernels(), np.zeros(7)

    def torque(status):
        k.gravity(status.position_measured, tau)
        return -tau
    return torque


def test_sim_process_speaks_the_protocol_in_real_time(tmp_path, multicast_url, iiwa):
    path = config_file(tmp_path, multicast_url, f"{{initial_positions: {Q0}}}")
    proc = start(path, "--duration", "1.0")
    try:
        client = Client(multicast_url, gravity_compensation(iiwa))
        client.run_until(lambda: proc.poll() is not None)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[0] == (f"hil sim: iiwa14.urdf (7 joints), protocol iiwa, status IIWA_STATUS, command IIWA_COMMAND, "
                        f"LCM {multicast_url}, step 1 ms semi_implicit_euler")
    summary = re.match(r"hil sim: (\d+) steps, ([\d.]+) s simulated in ([\d.]+) s \(real-time factor ([\d.]+)\)",
                       lines[1])
    assert summary and int(summary[1]) == 1000
    assert float(summary[4]) <= 1.01                         # paced: never ahead of the wall clock
    received = int(re.search(r"commands received (\d+), rejected 0", lines[2])[1])
    assert received > 300                        # UDP on a loaded host loses some statuses and commands
    utimes = np.array(client.utimes)
    assert len(utimes) > 500 and np.all(np.diff(utimes) > 0) and np.all(utimes % 1000 == 0)
    np.testing.assert_allclose(client.status.position_measured, Q0, atol=0.05)   # held by the controller


@pytest.mark.parametrize("no_viz", [False, True])
def test_sim_process_publishes_the_viewer_messages_of_its_plant(tmp_path, multicast_url, iiwa, no_viz):
    """With viz enabled, `hil sim` draws the plant at viz.draw_rate_hz of simulated time,
    stamped with it; --no-viz (for a process next to a loop that publishes them: `hil demo`) turns it off."""
    path = config_file(tmp_path, multicast_url, f"{{initial_positions: {Q0}, brakes: true}}",
                       "viz: {draw_rate_hz: 30, load_period_s: 0.5}\n")
    lc = lcm.LCM(multicast_url)
    loads, draws = [], []
    lc.subscribe("DRAKE_VIEWER_LOAD_ROBOT", lambda channel, data: loads.append(lcmt_viewer_load_robot.decode(data)))
    lc.subscribe("DRAKE_VIEWER_DRAW", lambda channel, data: draws.append(lcmt_viewer_draw.decode(data)))
    proc = start(path, "--duration", "1.5", *(["--no-viz"] if no_viz else []))
    try:
        while proc.poll() is None:
            lc.handle_timeout(10)
        while lc.handle_timeout(50) > 0:
            pass
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    if no_viz:
        assert draws == [] and loads == [] and "viewer" not in out
        return
    assert ", viewer DRAKE_VIEWER_LOAD_ROBOT / DRAKE_VIEWER_DRAW at 30 Hz, LCM " in lines[0]
    counted = re.search(r"viewer: draws (\d+), loads (\d+), viewer requests 0, rejected q 0, send errors 0", out)
    assert counted, out
    # 1500 steps of 1 ms, slots every 33.3 ms of simulated time from t = 0: 46 draws; loads at 0, 0.5, 1, 1.5 s.
    assert (int(counted[1]), int(counted[2])) == (46, 4)
    assert 30 <= len(draws) <= 46 and 1 <= len(loads) <= 4            # UDP on a loaded host may lose some
    stamps = np.array([d.timestamp for d in draws])
    assert np.all(np.diff(stamps) > 0) and np.all(stamps <= 1500)
    assert set(np.diff(stamps)) <= {33, 34, 66, 67, 100, 101}        # on the 30 Hz grid of simulated ms
    context = iiwa.CreateDefaultContext()                            # on its brakes: the initial pose
    iiwa.SetPositions(context, Q0)
    X_W7 = iiwa.EvalBodyPoseInWorld(context, iiwa.GetBodyByName("iiwa_link_7"))
    np.testing.assert_allclose(draws[-1].position[7], X_W7.translation(), atol=1e-6)


def test_sim_process_ends_cleanly_on_sigterm(tmp_path, multicast_url):
    proc = start(config_file(tmp_path, multicast_url))
    try:
        client = Client(multicast_url, lambda status: None)
        client.run_until(lambda: len(client.utimes) >= 100)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert re.search(r"hil sim: \d+ steps, [\d.]+ s simulated", out)


def test_sim_process_config_error_exits_2(tmp_path):
    proc = start(config_file(tmp_path, "memq://", "{integrator: euler}"))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "hil: config error: " in err and "sim.integrator: must be one of" in err and "Traceback" not in err


def test_run_realtime_applies_the_newest_command_then_expires_it(iiwa, multicast_url):
    """In real time the driver uses the newest command each step; 20 ms after the last one it applies the
    safe command (zero torque here), as the status shows."""
    robot = SimulatedRobot(iiwa, load_sim_config({"command_timeout": 0.02, "safe_command": "zero_torque"}), "iiwa",
                           lcm=lcm.LCM(multicast_url))
    stop, result = threading.Event(), {}
    thread = threading.Thread(target=lambda: result.update(robot.run_realtime(stop_event=stop)))
    tau = np.array([2.0, -3.0, 1.0, 0.5, -0.5, 0.2, 0.1])
    client = Client(multicast_url, lambda status: tau if len(client.utimes) <= 200 else None)
    thread.start()
    try:
        client.run_until(lambda: len(client.utimes) >= 400)
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
    commanded = np.array(client.commanded)
    assert np.all(commanded[150:200] == -tau)                  # iiwa: the negated applied torque
    assert np.all(commanded[-100:] == 0.0)
    assert result["commands_received"] >= 150 and result["resyncs"] == 0
    assert result["real_time_factor"] <= 1.01 and result["steps"] >= 399


def test_run_sim_prints_and_returns_the_summary(tmp_path, multicast_url):
    run = load_config(config_file(tmp_path, multicast_url))
    out, stop = io.StringIO(), threading.Event()
    threading.Timer(0.3, stop.set).start()
    summary = run_sim(run, stop_event=stop, out=out)
    assert out.getvalue().startswith("hil sim: iiwa14.urdf (7 joints)")
    assert "commands received 0, rejected 0" in out.getvalue()
    assert summary["steps"] > 0 and summary["commands_received"] == 0 and summary["faults"] == []


def test_run_realtime_needs_lcm(iiwa):
    with pytest.raises(RuntimeError, match="needs an LCM instance"):
        SimulatedRobot(iiwa).run_realtime(0.1)
