"""The servo-bus driver's steady state allocates nothing (tracemalloc), against the simulated bus in
another process over a real pty: SYNC READ into the parser's own buffer, status published, both
goal SYNC WRITEs of a mixed bus (goal current and goal position) and the next SYNC READ."""
import subprocess
import sys
import time
import tracemalloc

import lcm
import numpy as np
import pytest

from drivers.serial.servo_config import load_servo_config
from drivers.serial.servo_driver import ServoDriver
from messages.channels import Channels
from messages.codec import CommandEncoder
from tests.conftest import REPO

BUS = """
import sys
from drivers.serial.servo_bus import SimulatedServoBus
from drivers.serial.servo_models import model
from drivers.serial.servo_sim import SimulatedServo
servos = [SimulatedServo(model(name), k + 1) for k, name in enumerate(sys.argv[2:])]
for s in servos:
    s.set("return_delay_time", 0)
SimulatedServoBus("dynamixel", servos, sys.argv[1], step=0.005).serve()
"""
MODELS = ["XL430-W250", "XL430-W250", "XL330-M288", "XL330-M288"]      # Koch-like: two goal registers


@pytest.fixture
def bus_process(tmp_path):
    link = tmp_path / "bus"
    proc = subprocess.Popen([sys.executable, "-c", BUS, str(link), *MODELS], cwd=REPO)
    try:
        deadline = time.monotonic() + 30
        while not link.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the simulated bus did not start"
            time.sleep(0.02)
        yield link
    finally:
        proc.terminate()
        proc.wait(10)


def ours(snapshot):
    return snapshot.filter_traces([tracemalloc.Filter(True, "*/drivers/serial/*"),
                                   tracemalloc.Filter(True, "*/messages/*")])


def test_steady_state_allocation(bus_process):
    """Cycle after cycle nothing stays allocated, and a cycle's transient peak is a few small
    objects (the packets' memoryviews, select's lists): no bytes object per read (os.read of 4096
    bytes alone would exceed the bound), no numpy temporary of the joint vectors."""
    cfg = load_servo_config({"port": str(bus_process), "read_timeout": 0.2, "link_timeout": 5.0,
                             "command_timeout": 5.0, "joints": [{"joint": f"j{k}", "id": k + 1, "model": m}
                                                                for k, m in enumerate(MODELS)]})
    lc = lcm.LCM("memq://")
    channels = Channels(status="PANDA_STATUS", command="PANDA_COMMAND")
    driver = ServoDriver(cfg, [f"j{k}" for k in range(4)], "panda", channels, lc)
    assert driver.controls == ["position", "position", "current", "current"]
    commands = CommandEncoder("panda", 4, fields=("torque",), channel=channels.command)
    commands.encode(0, torque=np.array([0.05, -0.05, 0.02, -0.02]))
    command = commands.tobytes()
    deadline = time.monotonic() + 10
    while not driver.connect():
        assert time.monotonic() < deadline, driver.summary()
        time.sleep(0.05)

    def step(i):
        lc.publish(channels.command, command)
        lc.handle_timeout(0)
        driver.cycle(prefetch=i % 2 == 1)            # both: the SYNC READ alone, and behind the SYNC WRITEs

    for i in range(300):                              # warm up
        step(i)
    peaks = []
    tracemalloc.start(1)
    try:
        for i in range(100):
            step(i)
        before = ours(tracemalloc.take_snapshot())
        for i in range(1000):
            live = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            step(i)
            peaks.append(tracemalloc.get_traced_memory()[1] - live)
        after = ours(tracemalloc.take_snapshot())
    finally:
        tracemalloc.stop()
        driver.shutdown()
    assert driver.full_reads >= driver.cycles - 2 and driver.stats.timeouts == 0, driver.summary()
    assert driver.torque_on is False and driver.torque_offs == 1              # shutdown turned it off
    grown = sum(stat.size_diff for stat in after.compare_to(before, "lineno"))
    assert abs(grown) < 1024, after.compare_to(before, "lineno")[:5]          # 1000 cycles: a leak shows in kB
    assert np.median(peaks) <= 1024, (np.median(peaks), max(peaks))
