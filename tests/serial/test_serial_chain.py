"""The full chain on one machine, in three processes: the HIL loop (this process) ⇄ UDP multicast LCM
(ttl=0) ⇄ the serial driver (`drivers.serial.driver.run_from_config`) ⇄ a pty ⇄ the simulated board
(`drivers.serial.device.run_from_config`) ⇄ the plant. Faults come from the board's config; the
loop's view is its safety transitions and summary, the driver's is DRIVER_HEALTH.
"""
import select
import subprocess
import sys
import time
from pathlib import Path

import lcm
import numpy as np
import pytest

from drivers.core.robot import load_robot
from hil.loop import ControlLoop, channels_for
from messages.hilmsg import lcmt_hil_driver_health

REPO = Path(__file__).resolve().parents[2]
Q0 = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
class Chain:
    """The board and driver processes of a run config; the loop runs in the test."""

    def __init__(self, cfg, duration: float = 20.0):
        self.cfg, self.processes = cfg, {}
        self.start("device", duration)
        line = self.readline("device", "device ready:")
        assert line, self.output("device")
        self.start("driver", duration)
        self.health = []

    def start(self, module: str, duration: float):
        command = {"device": "serial-device", "driver": "serial"}[module]
        self.processes[module] = subprocess.Popen(
            [sys.executable, "-m", "hil", command, self.cfg.source, "--duration", str(duration)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def readline(self, module: str, prefix: str, timeout: float = 20.0) -> str | None:
        out = self.processes[module].stdout
        end = time.monotonic() + timeout
        while time.monotonic() < end and select.select([out], [], [], end - time.monotonic())[0]:
            line = out.readline()
            if not line:
                return None
            if line.startswith(prefix):
                return line
        return None

    def loop(self):
        """The HIL loop on the config, recording DRIVER_HEALTH as it handles LCM."""
        lc = lcm.LCM(self.cfg.lcm.url)
        loop = ControlLoop(self.cfg, load_robot(self.cfg.robot), lc, mode="realtime").configure()
        lc.subscribe(channels_for(self.cfg).driver_health,
                     lambda channel, data: self.health.append(lcmt_hil_driver_health.decode(data)))
        return loop

    def output(self, module: str) -> str:
        p = self.processes[module]
        if p.poll() is None:
            p.terminate()
        try:
            return p.communicate(timeout=10)[0]
        except subprocess.TimeoutExpired:
            p.kill()
            return p.communicate()[0]

    def close(self):
        for module in self.processes:
            self.output(module)


@pytest.fixture
def chain(run_config, multicast_url):
    """chain(**sections) -> a Chain on configs/serial/iiwa.yaml with `sections` merged in."""
    chains = []

    def make(**sections):
        cfg = run_config(lcm={"url": multicast_url}, **sections)
        chains.append(Chain(cfg))
        return chains[-1]

    yield make
    for c in chains:
        c.close()


# The machines the suite runs on are shared VMs whose processes stall for up to ~15 ms now and then
# (CPU steal): with three processes in the chain, a 3-period status timeout trips every few hundred
# ticks. A dedicated real-time host runs the chain with the default of 3.
SAFETY = {"status_timeout_periods": 20, "recover": True, "recover_after_periods": 20}


class Watch:
    """on_tick hook: the safety transitions (tick, state, status utime) and the ticks at which the
    loop's status was older than its timeout (tick, utime of the newest status, age in ticks)."""

    def __init__(self):
        self.transitions, self.timed_out, self.state = [], [], "INIT"

    def __call__(self, loop):
        if loop.safety.state.name != self.state:
            self.state = loop.safety.state.name
            self.transitions.append((loop.tick_index, self.state, loop.hardware.status.utime))
        age = loop.tick_index - 1 - loop.hardware.timing.last_tick        # as the tick that just ran saw it
        if age >= loop.cfg.safety.status_timeout_periods:
            self.timed_out.append((loop.tick_index, loop.hardware.status.utime, age))


def test_full_chain_tracks_a_move(chain):
    goal = [0.3, 0.8, -0.2, -1.0, 0.2, 0.6, 0.3]
    c = chain(trajectory={"type": "quintic", "goal": goal, "duration": 1.5}, safety=SAFETY)
    loop = c.loop()
    summary = loop.run(2.5)
    assert summary["final_state"] == "RUNNING" and summary["faults"] == [], summary["transitions"]
    rms, worst = np.array(summary["tracking_error_rad"]["rms"]), np.array(summary["tracking_error_rad"]["max"])
    # Real time in three processes on a shared VM: a stalled status now and then costs the wrist a few
    # mrad (the deterministic version of this chain, scenario serial_chain, tracks to 0.07 mrad RMS).
    assert np.all(rms < 1e-2) and np.all(worst < 5e-2), (rms, worst)
    np.testing.assert_allclose(loop.q, goal, atol=5e-3)
    assert summary["status"]["received"] >= 0.9 * summary["ticks"] and summary["status"]["rejected"] == 0
    h = c.health[-1]
    assert h.connected and h.crc_errors == 0 and h.sequence_gaps == 0 and 800 < h.rx_rate_hz < 1200
    driver = c.output("driver")
    assert "hil serial:" in driver and "frames rx" in driver


FAULTS = {
    "silent": {"type": "silent", "start": 3.0, "stop": 3.3},
    "board_fault": {"type": "board_fault", "start": 3.0, "stop": 3.4, "code": "OVER_TEMPERATURE", "joint": 3,
                    "text": "winding 120 C"},
    "unplug": {"type": "unplug", "start": 3.0, "stop": 3.5},
}


@pytest.mark.parametrize("fault", FAULTS)
def test_fault_trips_the_loop_watchdog_and_it_recovers(chain, fault):
    """At 3.0 s of board time the board goes silent, latches a fault, or is unplugged: the driver
    stops the status, the loop's STATUS_TIMEOUT trips after status_timeout_periods ticks, and with
    safety.recover the loop runs again once the board is back (holding where the brakes kept it)."""
    c = chain(trajectory={"type": "hold"}, safety=SAFETY,
              serial={"device": {"faults": [FAULTS[fault]]}})
    loop = c.loop()
    watch = Watch()
    summary = loop.run(4.5, on_tick=watch)
    timeouts = [f for f in summary["faults"] if f["fault"] == "STATUS_TIMEOUT"]
    assert timeouts, (summary["transitions"], c.output("driver"))
    assert all("no valid status for 20 periods" in f["reason"] for f in timeouts)
    # The status stopped at the board's 3.0 s (status utime is board time) and the loop was timed out
    # from the 20th tick on, for about the length of the fault (300 to 500 ms).
    outage = [(tick, age) for tick, utime, age in watch.timed_out if abs(utime - 3_000_000) <= 3_000]
    assert outage and outage[0][1] == 20, (watch.timed_out[:5], summary["transitions"])
    assert max(age for _, age in outage) >= 150, outage[-1]          # ticks (a late loop skips some)
    assert (outage[0][0], "FAULT") in [t[:2] for t in watch.transitions], watch.transitions   # tripped right then
    recovered = [t for t in watch.transitions if t[1] == "RUNNING" and t[2] > 3_000_000]
    assert recovered and summary["final_state"] == "RUNNING", summary["transitions"]
    np.testing.assert_allclose(loop.q, Q0, atol=0.05)          # the brakes held it meanwhile
    down = [h for h in c.health if not h.connected and h.frames_rx > 0]
    if fault == "board_fault":                  # the link is fine: the board says why it stopped
        faulted = [h for h in c.health if h.board_fault_code]
        assert faulted and faulted[0].board_fault_text == "OVER_TEMPERATURE (0x0002) on joint 3: winding 120 C"
        assert faulted[0].connected and c.health[-1].board_fault_code == 0
    else:
        assert down, "the driver did not report the link down"
    if fault == "unplug":
        assert c.health[-1].reconnects == 1 and c.health[-1].connected


def test_wrong_joint_count_stops_the_driver_with_a_clear_error(chain):
    c = chain(sim={"joints": [f"iiwa_joint_{i}" for i in range(1, 7)]}, loop={"start_timeout": 1.5})
    loop = c.loop()
    with pytest.raises(TimeoutError, match="no valid status on IIWA_STATUS within 1.5 s"):
        loop.run(1.0)
    p = c.processes["driver"]
    p.wait(10)
    out = c.output("driver")
    assert p.returncode != 0
    assert f"serial.joint_count: the board on {c.cfg.serial.port} sends 6 joints (" in out
    assert "but the robot has 7" in out
