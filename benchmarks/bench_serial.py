"""Serial driver benchmark, 7 joints (iiwa14): the command -> state round trip through the driver
over a pty at 1 kHz, frames per second, and the driver's CPU per frame.

    python benchmarks/bench_serial.py [--seconds 5]

Three processes, as `hil serial-device` + `hil serial` + the HIL loop run: the simulated board and
the driver are subprocesses (drivers.serial.device / driver.run_from_config on
configs/serial/iiwa.yaml), on a UDP multicast LCM URL (ttl=0, random port); this process stands
where the loop does. Every 1 ms it publishes a torque command (gravity compensation at the start
pose; joint 7's torque carries the command's number, 1e-7 N*m per count) and times the status whose
torque_commanded echoes it (the driver fills it from the command the board reports applied):
round trip = command published -> that status decoded (time.perf_counter_ns).

- board at 1 kHz: the board applies a command at its next control period, so the round trip
  includes 0..1 ms of waiting for it (0.5 ms on average) on top of the transport; of two commands
  that reach the board within one period only the newer is applied, so fewer than 1000 round
  trips per second complete;
- board in lockstep (serial.device.lockstep: it answers each COMMAND with one period at once): the
  transport alone, LCM -> driver -> pty -> board -> pty -> driver -> LCM;
- lockstep, closed loop: the next command as soon as the status came back: the rate the chain
  sustains.

Frames per second are the driver's (DRIVER_HEALTH frames_rx, frames_tx over the window); its CPU is
utime + stime from /proc/<pid>/stat over the same window (10 ms ticks), per frame received and sent.
A pty does not pace bytes at the baud rate: add the wire time of a real link (52 + 112 bytes at
2 Mbaud = 0.82 ms).
"""
import argparse
import os
import platform
import random
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lcm
import numpy as np
import yaml

from hil.config import load_config
from hil.robot import load_robot
from hil.schema import read_yaml
from messages.codec import CommandEncoder, StatusDecoder
from messages.hilmsg import lcmt_hil_driver_health

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "serial" / "iiwa.yaml"
MARK = 1e-7  # N*m of joint 7's torque per command number



class Chain:
    """The board and the driver as subprocesses, and this process's LCM side of the loop."""

    def __init__(self, folder: Path, lockstep: bool):
        data = read_yaml(CONFIG)
        serial = data["serial"]
        serial["port"] = str(folder / f"board-{lockstep}")
        serial["device"]["lockstep"] = lockstep
        serial["stale_timeout"] = 0.05       # a lockstep board is quiet between commands
        data["lcm"] = {"url": f"udpm://239.255.76.67:{random.randint(20000, 60000)}?ttl=0"}
        path = folder / "run.yaml"
        path.write_text(yaml.safe_dump(data))
        self.cfg = load_config(path)
        self.procs = {}
        for module in ("device", "driver"):
            command = {"device": "serial-device", "driver": "serial"}[module]
            self.procs[module] = subprocess.Popen([sys.executable, "-m", "hil", command, str(path)],
                                                  cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if module == "device":
                self.procs[module].stdout.readline()      # "device ready: ..."
        self.lc = lcm.LCM(self.cfg.lcm.url)
        self.status = StatusDecoder("iiwa", 7)
        self.command = CommandEncoder("iiwa", 7, fields=("torque",), channel="IIWA_COMMAND")
        self.health = None
        self.lc.subscribe("DRIVER_HEALTH", self._on_health)
        self.lc.subscribe("IIWA_STATUS", self._on_status)
        self.sent, self.rtt, self.last = {}, [], 0
        robot = load_robot(self.cfg.robot)
        self.tau = np.zeros(7)
        robot.plant.kernels().gravity(np.array(self.cfg.sim["initial_positions"]), self.tau)
        self.tau *= -1.0

    def _on_health(self, channel, data):
        self.health = lcmt_hil_driver_health.decode(data)

    def _on_status(self, channel, data):
        now = time.perf_counter_ns()
        if not self.status.decode(data):
            return
        i = round(-self.status.torque_commanded[6] / MARK)
        sent = self.sent.pop(i, None)
        if sent is not None:
            self.rtt.append(now - sent)
            self.last = i

    def send(self, i: int):
        self.tau[6] = i * MARK
        self.command.encode(0, torque=self.tau)
        self.sent[i] = time.perf_counter_ns()
        self.command.publish(self.lc)

    def wait_connected(self, timeout=20.0):
        end = time.monotonic() + timeout
        while not (self.health and self.health.connected):
            if time.monotonic() > end:
                raise RuntimeError(f"the driver did not connect: {self.output()}")
            self.lc.handle_timeout(100)

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.procs['driver'].pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def output(self) -> str:
        out = []
        for p in reversed(self.procs.values()):     # the driver first: the board's pty outlives it
            p.terminate()
            out.append(p.communicate(timeout=10)[0])
        return "\n".join(out)


def run(chain: Chain, seconds: float, closed_loop: bool) -> dict:
    """Commands every 1 ms (or, closed loop, one as soon as the previous came back) for `seconds`,
    after 0.5 s of the same to warm up; between sends it sleeps in select() on the LCM socket."""
    lc, fd, period = chain.lc, chain.lc.fileno(), 1_000_000
    i, deadline = 1, time.perf_counter_ns()
    start = deadline + 500_000_000
    end = start + int(seconds * 1e9)
    h0 = cpu0 = None
    while (now := time.perf_counter_ns()) < end:
        if h0 is None and now >= start:
            chain.rtt.clear()
            h0, cpu0, t0 = chain.health, chain.cpu_s(), now
        if closed_loop:
            if chain.last == i - 1 or now - chain.sent.get(i - 1, now) > 10_000_000:
                chain.send(i)
                i += 1
            wait = 0.001
        elif now >= deadline:
            chain.send(i)
            i, deadline = i + 1, deadline + period
            continue
        else:
            wait = (deadline - now) * 1e-9
        if select.select((fd,), (), (), wait)[0]:
            lc.handle_timeout(0)
    h1, cpu1, t1 = chain.health, chain.cpu_s(), time.perf_counter_ns()
    frames = (h1.frames_rx - h0.frames_rx) + (h1.frames_tx - h0.frames_tx)
    us = np.array(chain.rtt) / 1e3
    wall = (t1 - t0) * 1e-9
    return {"rtt": us, "round_trips_per_s": len(us) / wall, "rx_per_s": (h1.frames_rx - h0.frames_rx) / wall,
            "tx_per_s": (h1.frames_tx - h0.frames_tx) / wall, "cpu_per_frame_us": (cpu1 - cpu0) / frames * 1e6,
            "cpu_share": (cpu1 - cpu0) / wall}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    print(f"serial driver, 7 joints -- Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs; {args.seconds:g} s per row")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, lockstep, closed in (("board at 1 kHz, command every 1 ms", False, False),
                                       ("board in lockstep, command every 1 ms", True, False),
                                       ("board in lockstep, closed loop", True, True)):
            chain = Chain(Path(folder), lockstep)
            try:
                chain.wait_connected()
                rows.append((name, run(chain, args.seconds, closed)))
            finally:
                chain.output()
    header = ("round trip µs: median", "p99", "p99.9", "round trips/s", "driver rx frames/s", "tx frames/s",
              "driver CPU µs/frame", "driver CPU %")
    width = max(len(name) for name, _ in rows)
    print(f"| {'':<{width}} | " + " | ".join(header) + " |")
    print(f"|{'-' * (width + 2)}|" + "|".join("-" * (len(h) + 1) + ":" for h in header) + "|")
    for name, r in rows:
        values = (np.median(r["rtt"]), np.percentile(r["rtt"], 99), np.percentile(r["rtt"], 99.9),
                  r["round_trips_per_s"], r["rx_per_s"], r["tx_per_s"], r["cpu_per_frame_us"],
                  100 * r["cpu_share"])
        print(f"| {name:<{width}} | " + " | ".join(f"{v:>{len(h)},.0f}" for v, h in zip(values, header)) + " |")


if __name__ == "__main__":
    main()
