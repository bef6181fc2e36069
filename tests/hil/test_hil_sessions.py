"""Sessions of `hil sim` and `hil run` across processes (udpm, ttl=0, a port per test), as a user runs
them from a directory of their own with the controller tutorial's files (docs/controllers.md): the
simulated arm is left where it was between runs, a second commander is refused by the simulator, two
status streams on one channel fault the loop. Outcomes are asserted, never timings."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import lcm
import numpy as np
import pytest

from dynamics_cy.planning.legged_models import example_robot_data_root
from messages.codec import StatusDecoder

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
TUTORIAL = ("mylaws.py", "robot.yaml")


@pytest.fixture
def tutorial(tmp_path) -> Path:
    """The tutorial's mylaws.py and robot.yaml, as docs/controllers.md has them, in a directory of their own."""
    page = (REPO / "docs" / "controllers.md").read_text()
    for title, body in re.findall(r'^```\w+ title="([^"]+)"\n(.*?)^```', page, re.S | re.M):
        if title in TUTORIAL:
            (tmp_path / title).write_text(body)
    assert all((tmp_path / name).is_file() for name in TUTORIAL)
    return tmp_path


def hil(folder: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hil", *args], cwd=folder, env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc: subprocess.Popen, timeout: float = 120.0) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    finally:
        proc.kill()


def stop(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    return finish(proc, 30.0)


class Watcher:
    """The arm's measured q, from its statuses."""

    def __init__(self, url: str):
        self.lc, self.status, self.count, self.commands = lcm.LCM(url), StatusDecoder("iiwa", 7), 0, 0
        self.lc.subscribe("IIWA_STATUS", self._on_status)
        self.lc.subscribe("IIWA_COMMAND", self._on_command)

    def _on_command(self, channel, data):
        self.commands += 1

    def _on_status(self, channel, data):
        if self.status.decode(data):
            self.count += 1

    def q(self, wait: float = 0.3, timeout: float = 60.0) -> np.ndarray:
        """The newest q after `wait` seconds of statuses (at least one)."""
        seen, start = self.count, time.monotonic()
        while time.monotonic() - start < wait or self.count == seen:
            assert time.monotonic() - start < timeout, "no status"
            self.lc.handle_timeout(50)
        return self.status.position_measured.copy()

    def until_commanded(self, timeout: float = 60.0) -> None:
        """Returns once a loop commands."""
        end = time.monotonic() + timeout
        while not self.commands:
            assert time.monotonic() < end, "no command"
            self.lc.handle_timeout(50)


def run_json(folder: Path, url: str, duration: float = 1.5) -> dict:
    out, err = finish(hil(folder, "run", "robot.yaml", "--lcm-url", url, "--duration", str(duration),
                          "--json", "--quiet"))
    return json.loads(out)


def test_the_tutorial_restarts_against_one_sim_with_the_arm_left_where_it_was(tutorial, multicast_url):
    """docs/controllers.md's robot.yaml as it is (sim.gravity_compensation none, no brakes): the arm holds
    before the loop connects and after each exit, so every restart of `hil run` starts where the last
    left it (before the simulated firmware held it, the arm fell to a joint limit after the first exit
    and the next run faulted JOINT_LIMIT at INIT)."""
    sim = hil(tutorial, "sim", "robot.yaml", "--lcm-url", multicast_url)
    try:
        watcher = Watcher(multicast_url)
        q_start = np.array([0.2, 0.6, -0.1, -1.1, 0.1, 0.8, 0.0])      # the tutorial's sim.initial_positions
        q = watcher.q(wait=1.0)
        np.testing.assert_allclose(q, q_start, atol=1e-3)                # held before any loop connects
        for _ in range(3):
            summary = run_json(tutorial, multicast_url)
            limits = [f for f in summary["faults"] if f["fault"] == "JOINT_LIMIT"]
            assert summary["ticks"] > 0 and not limits, summary["faults"]
            q_exit = watcher.q(wait=0.5)
            q_later = watcher.q(wait=1.0)
            assert np.abs(q_later - q_exit).max() < 1e-3                 # held where the run left it
            assert np.abs(q_later - q_start).max() < 0.05                # the tutorial's law holds the start
    finally:
        stop(sim)


def test_the_sim_refuses_a_second_commander(tutorial, multicast_url):
    """Two `hil run` against one `hil sim`: the second loop's commands are refused while the first
    commands, and `hil sim` says so with the hint of a port of one's own."""
    sim = hil(tutorial, "sim", "robot.yaml", "--lcm-url", multicast_url)
    try:
        watcher = Watcher(multicast_url)
        watcher.q(wait=0.5)
        first = hil(tutorial, "run", "robot.yaml", "--lcm-url", multicast_url, "--duration", "8", "--quiet")
        watcher.until_commanded()                       # the first commands; the second starts meanwhile
        second = run_json(tutorial, multicast_url, duration=1.0)
        finish(first)
    finally:
        out, err = stop(sim)
    refused = re.search(r"'second_commander': (\d+)", out)
    assert refused and int(refused[1]) > 0, out
    assert re.search(r"second commander: commands on IIWA_COMMAND from [\d.]+:\d+ while [\d.]+:\d+ commands: "
                     r"refused .*give each session its own port", err), err
    assert any("second commander" in f["reason"] for f in second["faults"])   # the loop's own check, as before


def test_two_status_streams_fault_the_loop_and_are_named(tutorial, multicast_url):
    """Two `hil sim` publishing on one channel: the loop faults STATUS_INVALID naming two status streams
    (before, it learned a status period of a few µs and faulted on the mixed arms' states)."""
    sims = [hil(tutorial, "sim", "robot.yaml", "--lcm-url", multicast_url)]
    try:
        Watcher(multicast_url).q(wait=1.0)
        sims.append(hil(tutorial, "sim", "robot.yaml", "--lcm-url", multicast_url))
        Watcher(multicast_url).q(wait=1.5)              # the second is up: both publish
        summary = run_json(tutorial, multicast_url, duration=1.0)
    finally:
        for sim in sims:
            stop(sim)
    faults = [f for f in summary["faults"] if f["fault"] == "STATUS_INVALID"]
    assert faults and "two status streams on IIWA_STATUS" in faults[0]["reason"], summary["faults"]
    assert "give each session its own port" in faults[0]["reason"]


def test_the_demo_runs_on_a_private_port_and_tells_meldis(tutorial):
    """`hil demo` of a config on LCM's shared default takes a free port of its own (ttl=0), so another
    session on the host cannot mix in, and its Meldis line carries it (LCM_DEFAULT_URL)."""
    out, err = finish(hil(tutorial, "demo", "--config", "robot.yaml", "--duration", "1", "--quiet"))
    line = out.splitlines()[0]
    url = re.search(r"the control loop on (udpm://239\.255\.76\.67:(\d+)\?ttl=0);", line)
    assert url and url[2] != "7667", line
    assert f"LCM_DEFAULT_URL='{url[1]}' python -m pydrake.visualization.meldis" in line
    assert f"LCM {url[1]}" in out                  # `hil sim` on it too



@pytest.mark.parametrize("config, watched, commands", [
    ("station/two_iiwas.yaml", "LEFT_IIWA_COMMAND", ["LEFT_IIWA_COMMAND", "RIGHT_IIWA_COMMAND"]),
    ("legged/go2.yaml", "JOINT_COMMAND", ["JOINT_COMMAND"])])
def test_the_station_and_legged_sims_refuse_a_second_commander(config, watched, commands, tmp_path, multicast_url):
    """`hil sim` of a station watches each arm's command channel, and of a legged robot its JOINT_COMMAND,
    as it watches one arm's: a second `hil run` is refused while the first commands."""
    if config.startswith("legged") and example_robot_data_root() is None:
        pytest.skip("example-robot-data is not installed")
    config = REPO / "configs" / config
    sim = hil(tmp_path, "sim", str(config), "--lcm-url", multicast_url, "--no-viz")
    try:
        lc, commanded = lcm.LCM(multicast_url), []
        lc.subscribe(watched, lambda channel, data: commanded.append(channel))
        first = hil(tmp_path, "run", str(config), "--lcm-url", multicast_url, "--duration", "8", "--quiet")
        deadline = time.monotonic() + 60
        while not commanded and time.monotonic() < deadline:
            lc.handle_timeout(100)
        assert commanded, "the first loop never commanded"
        finish(hil(tmp_path, "run", str(config), "--lcm-url", multicast_url, "--duration", "1", "--quiet"))
        finish(first)
    finally:
        out, err = stop(sim)
    for channel in commands:
        assert re.search(rf"second commander: commands on {channel} from [\d.]+:\d+ while [\d.]+:\d+ commands: "
                         r"refused", err), err
