"""The servo-bus driver's steady state allocates nothing (tracemalloc), against the simulated bus in
another process over a real pty: SYNC READ into the parser's own buffer, status published, both
goal SYNC WRITEs of a mixed Dynamixel bus (goal current and goal position) or the goal positions of
Feetech servos, and the next SYNC READ."""
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
servos = [SimulatedServo(model(name), k + 1) for k, name in enumerate(sys.argv[3:])]
for s in servos:
    s.set("return_delay_time", 0)
SimulatedServoBus(sys.argv[2], servos, sys.argv[1], step=0.005).serve()
"""
BUSES = {"dynamixel": ["XL430-W250", "XL430-W250", "XL330-M288", "XL330-M288"],   # Koch-like: two goal registers
         "feetech": ["STS3215", "STS3215", "STS3215"]}


def start_bus(link, protocol):
    """The simulated bus of BUSES[protocol] in a process of its own, its pty linked at `link`."""
    proc = subprocess.Popen([sys.executable, "-c", BUS, str(link), protocol, *BUSES[protocol]], cwd=REPO)
    deadline = time.monotonic() + 30
    while not link.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("the simulated bus did not start")
        time.sleep(0.02)
    return proc


def ours(snapshot):
    return snapshot.filter_traces([tracemalloc.Filter(True, "*/drivers/serial/*"),
                                   tracemalloc.Filter(True, "*/messages/*")])


@pytest.mark.parametrize("protocol", BUSES)
def test_steady_state_allocation(protocol, tmp_path):
    """Cycle after cycle nothing stays allocated, and a cycle's transient peak is a few small
    objects (select's lists, ints, the status encoder's arguments): no bytes object per read (os.read
    of 4096 bytes alone would exceed the bound), no buffer acquired per packet (a Cython typed
    memoryview is ~200 B), no memoryview per packet, no numpy temporary of the joint vectors."""
    models = BUSES[protocol]
    n = len(models)
    proc = start_bus(tmp_path / "bus", protocol)
    cfg = load_servo_config({"port": str(tmp_path / "bus"), "protocol": protocol, "read_timeout": 0.2,
                             "link_timeout": 5.0, "command_timeout": 5.0,
                             "joints": [{"joint": f"j{k}", "id": k + 1, "model": m} for k, m in enumerate(models)]})
    lc = lcm.LCM("memq://")
    channels = Channels(status="PANDA_STATUS", command="PANDA_COMMAND")
    driver = ServoDriver(cfg, [f"j{k}" for k in range(n)], "panda", channels, lc)
    assert driver.controls == {"dynamixel": ["position", "position", "current", "current"],
                               "feetech": ["position"] * 3}[protocol]
    commands = CommandEncoder("panda", n, fields=("torque",), channel=channels.command)
    commands.encode(0, torque=np.resize([0.05, -0.05, 0.02, -0.02], n))
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
        proc.terminate()
        proc.wait(10)
    assert driver.full_reads >= driver.cycles - 2 and driver.stats.timeouts == 0, driver.summary()
    assert driver.torque_on is False and driver.torque_offs == 1              # shutdown turned it off
    grown = sum(stat.size_diff for stat in after.compare_to(before, "lineno"))
    assert abs(grown) < 1024, after.compare_to(before, "lineno")[:5]          # 1000 cycles: a leak shows in kB
    assert np.median(peaks) <= 512, (np.median(peaks), max(peaks))     # e.g. 256 B
