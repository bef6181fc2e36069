"""Serial driver benchmark, 7 joints (iiwa14): the command -> state round trip through the driver
over a pty at 1 kHz, frames per second, and the driver's CPU per frame; next to the same round trip
against the simulated robot without the serial hop, and the driver doing its I/O through pyserial.

    python benchmarks/bench_serial.py [--seconds 5] [--repeats 1] [--json PATH]

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
  trips per second complete. "Every 1 ms" is every 0.999 ms, so that the commands' phase to the
  board's period (or the simulated robot's) sweeps over the whole period once a second, as two
  independent 1 kHz clocks drift; at exactly 1 ms the phase, and so the wait, would be whatever
  the start made it for the whole run;
- board in lockstep (serial.device.lockstep: it answers each COMMAND with one period at once): the
  transport alone, LCM -> driver -> pty -> board -> pty -> driver -> LCM;
- lockstep, closed loop: the next command as soon as the status came back: the rate the chain
  sustains.

Peers, measured in the same run and the same way:

- no serial hop: the simulated robot of drivers/sim on the same LCM URL, the same plant and
  sim section, stands where driver and board stand (LCM -> robot -> LCM; its torque_commanded
  echoes the command too). Against the board at 1 kHz it is `hil sim` (paced to the wall clock,
  the newest command each 1 ms step); against the lockstep board, the simulated robot in lockstep
  (one step per command, answered at once) in a subprocess. The difference is the serial hop:
  the driver process and the pty both ways.
- pyserial I/O: the driver reading and writing the pty through pyserial's Serial.read() and
  write() (SerialDriver(fd_io=False)) instead of the file descriptor itself: what the fast path
  saves.

Frames per second are the driver's (DRIVER_HEALTH frames_rx, frames_tx over the window; sent
frames include those the driver counted incomplete after pyserial's write timeout); its CPU is
utime + stime from /proc/<pid>/stat over the same window (10 ms ticks), per frame received and sent.
"Robot side CPU" is the same for every process standing where the robot stands: board + driver,
or the simulated robot alone. With --repeats N every row runs N times, the rows interleaved (the
machine's slow moments spread over all rows); round trips are pooled, the other columns are means,
and the spread of the per-run medians is printed. A pty does not pace bytes at the baud rate: add
the wire time of a real link (52 + 112 bytes at 2 Mbaud = 0.82 ms).

Last, the I/O calls alone, in this process on a pty of its own (no LCM, no parsing): one read of a
waiting JOINT_STATE and one write of a COMMAND, as the driver does them per frame pair, through the
file descriptor and through pyserial (opened as the driver opens it: timeout 0, write_timeout one
frame's wire time x 10), in alternating batches; the median per pair, and how often pyserial's
write() raised its write timeout (it checks the clock after a frame went out whole).
"""
import argparse
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import tty
from pathlib import Path

import lcm
import numpy as np
import record
import serial
import yaml

from drivers.core.robot import load_robot
from drivers.core.schema import read_yaml
from drivers.run_config import load_config
from drivers.serial.protocol import MsgType, frame_size
from messages.channels import private_lcm_url
from messages.codec import CommandEncoder, StatusDecoder
from messages.hilmsg import lcmt_hil_driver_health

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "serial" / "iiwa.yaml"
MARK = 1e-7  # N*m of joint 7's torque per command number
HERE = str(Path(__file__).resolve())
PERIOD_NS = 999_000  # "every 1 ms": the phase to the robot side's 1 kHz sweeps once a second (module doc)

# (name, robot side, lockstep, closed loop): robot side "serial" (board + driver, fd I/O), "pyserial"
# (board + driver, pyserial I/O) or "sim" (the simulated robot, no serial hop).
ROWS = (
    ("board at 1 kHz, command every 1 ms", "serial", False, False),
    ("  peer: hil sim at 1 kHz (no serial hop)", "sim", False, False),
    ("board in lockstep, command every 1 ms", "serial", True, False),
    ("  driver I/O via pyserial read()/write()", "pyserial", True, False),
    ("  peer: sim in lockstep (no serial hop)", "sim", True, False),
    ("board in lockstep, closed loop", "serial", True, True),
    ("  driver I/O via pyserial read()/write()", "pyserial", True, True),
    ("  peer: sim in lockstep (no serial hop)", "sim", True, True),
)


def child(kind: str, path: str) -> int:
    """The subprocesses that `hil` has no command for: the driver with pyserial I/O, and the
    simulated robot in lockstep on the config's LCM URL (until SIGTERM)."""
    cfg = load_config(path)
    if kind == "driver-pyserial":
        from drivers.serial.driver import run_from_config
        return run_from_config(cfg, fd_io=False)
    from drivers.core.config import channels_for
    from drivers.core.robot import build_plant
    from drivers.sim import SimulatedRobot
    lc = lcm.LCM(cfg.lcm.url)
    robot = SimulatedRobot(build_plant(cfg.robot, simulated=True), cfg.sim, cfg.robot.protocol, channels_for(cfg), lc)
    stop = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))
    print("sim lockstep ready", flush=True)
    robot.publish_status()
    while not stop:
        lc.handle_timeout(100)
    print(f"sim lockstep: {robot.summary()['steps']} steps", flush=True)
    return 0


class Chain:
    """The robot side as subprocesses (board and driver, or the simulated robot), and this
    process's LCM side of the loop."""

    def __init__(self, folder: Path, side: str, lockstep: bool):
        data = read_yaml(CONFIG)
        serial = data["serial"]
        serial["port"] = str(folder / f"board-{side}-{lockstep}")
        serial["device"]["lockstep"] = lockstep
        serial["stale_timeout"] = 0.05       # a lockstep board is quiet between commands
        data["lcm"] = {"url": private_lcm_url()}
        path = folder / "run.yaml"
        path.write_text(yaml.safe_dump(data))
        self.cfg = load_config(path)
        self.side = side
        self.procs = {}
        if side == "sim":
            command = ["-m", "hil", "sim", str(path)] if not lockstep else [HERE, "--child", "sim-lockstep", str(path)]
            self.start("sim", command)
        else:
            self.start("device", ["-m", "hil", "serial-device", str(path)])
            self.procs["device"].stdout.readline()      # "device ready: ..."
            self.start("driver", ["-m", "hil", "serial", str(path)] if side == "serial"
                       else [HERE, "--child", "driver-pyserial", str(path)])
        self.lc = lcm.LCM(self.cfg.lcm.url)
        self.status = StatusDecoder("iiwa", 7)
        self.command = CommandEncoder("iiwa", 7, fields=("torque",), channel="IIWA_COMMAND")
        self.health = None
        self.lc.subscribe("DRIVER_HEALTH", self._on_health)
        self.lc.subscribe("IIWA_STATUS", self._on_status)
        self.sent, self.rtt, self.last = {}, [], 0
        robot = load_robot(self.cfg.robot)
        self.tau = np.zeros(7)
        robot.plant.kernels().gravity(np.array(self.cfg.sim.initial_positions), self.tau)
        self.tau *= -1.0

    def start(self, name: str, args: list[str]):
        self.procs[name] = subprocess.Popen([sys.executable, *args], cwd=REPO, stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, text=True)

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

    def wait_ready(self, timeout=30.0):
        """Until the driver reports the board connected (serial) and a command comes back echoed."""
        end = time.monotonic() + timeout
        i = -1
        while not self.rtt or (self.side != "sim" and not (self.health and self.health.connected)):
            if time.monotonic() > end or any(p.poll() is not None for p in self.procs.values()):
                raise RuntimeError(f"the robot side did not answer: {self.output()}")
            if self.side == "sim" or (self.health and self.health.connected):
                self.send(i)
                i -= 1
            self.lc.handle_timeout(50)
        self.sent.clear()
        self.rtt.clear()
        self.last = 0

    def cpu_s(self, name: str) -> float:
        fields = Path(f"/proc/{self.procs[name].pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def cpu(self) -> dict:
        return {name: self.cpu_s(name) for name in self.procs}

    def output(self) -> str:
        out = []
        for p in reversed(self.procs.values()):     # the driver first: the board's pty outlives it
            if p.poll() is None:
                p.terminate()
            try:
                out.append(p.communicate(timeout=10)[0])
            except subprocess.TimeoutExpired:
                p.kill()
                out.append(p.communicate()[0])
        return "\n".join(out)


def run(chain: Chain, seconds: float, closed_loop: bool) -> dict:
    """Commands every 1 ms (or, closed loop, one as soon as the previous came back) for `seconds`,
    after 0.5 s of the same to warm up; between sends it sleeps in select() on the LCM socket."""
    lc, fd, period = chain.lc, chain.lc.fileno(), PERIOD_NS
    i, deadline = 1, time.perf_counter_ns()
    start = deadline + 500_000_000
    end = start + int(seconds * 1e9)
    h0 = cpu0 = None
    while (now := time.perf_counter_ns()) < end:
        if cpu0 is None and now >= start:
            chain.rtt.clear()
            h0, cpu0, t0 = chain.health, chain.cpu(), now
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
    h1, cpu1, t1 = chain.health, chain.cpu(), time.perf_counter_ns()
    wall = (t1 - t0) * 1e-9
    r = {"rtt": np.array(chain.rtt) / 1e3, "round_trips_per_s": len(chain.rtt) / wall,
         "side_cpu_share": sum(cpu1[k] - cpu0[k] for k in cpu1) / wall}
    if chain.side != "sim":
        r.update(wall=wall, rx=h1.frames_rx - h0.frames_rx, tx=h1.frames_tx - h0.frames_tx,
                 driver_cpu=cpu1["driver"] - cpu0["driver"])
    return r


def frames(r: dict, driver_output: str) -> None:
    """Adds the driver's frame rates and CPU per frame to a run's `r`. Frames sent include the
    COMMANDs counted incomplete (tx_incomplete, from the driver's summary of the whole run: with
    pyserial I/O, frames that went out whole but raised the write timeout; none with fd I/O)."""
    m = re.search(r"frames rx \d+ tx (\d+) \(incomplete (\d+)\)", driver_output)
    share = int(m[2]) / max(int(m[1]) + int(m[2]), 1) if m else 0.0
    tx = r["tx"] / (1 - share)
    r.update(tx_incomplete_share=share, rx_per_s=r["rx"] / r["wall"], tx_per_s=tx / r["wall"],
             cpu_per_frame_us=r["driver_cpu"] / (r["rx"] + tx) * 1e6, cpu_share=r["driver_cpu"] / r["wall"])


def io_calls(pairs: int = 20_000, batch: int = 500) -> dict:
    """µs per read + write pair, fd and pyserial; pyserial's write timeouts (see the module doc)."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    command, state = bytes(frame_size(MsgType.COMMAND, 7)), bytes(frame_size(MsgType.JOINT_STATE, 7))
    port = serial.serial_for_url(os.ttyname(slave), baudrate=2_000_000, timeout=0,
                                 write_timeout=10 * len(command) / 2_000_000)
    fd = port.fileno()
    times = {"fd": [], "pyserial": []}
    timeouts = 0
    try:
        for b in range(2 * pairs // batch):
            mode = ("fd", "pyserial")[b % 2]
            for _ in range(batch):
                os.write(master, state)                     # the board's frame, waiting to be read
                select.select((fd,), (), (), 0.1)
                if mode == "fd":
                    t0 = time.perf_counter_ns()
                    os.read(fd, 4096)
                    os.write(fd, command)
                    t1 = time.perf_counter_ns()
                else:
                    t0 = time.perf_counter_ns()
                    port.read(4096)
                    try:
                        port.write(command)
                    except serial.SerialTimeoutException:
                        timeouts += 1
                    t1 = time.perf_counter_ns()
                times[mode].append(t1 - t0)
                while select.select((master,), (), (), 0)[0]:
                    os.read(master, 4096)
    finally:
        port.close()
        os.close(master)
        os.close(slave)
    return {"fd": np.median(times["fd"]) / 1e3, "pyserial": np.median(times["pyserial"]) / 1e3,
            "timeouts": timeouts, "pairs": pairs}


def pooled(runs: list[dict]) -> dict:
    """One row of `runs` (repeats of it): round trips pooled, the rest averaged."""
    r = {"rtt": np.concatenate([x["rtt"] for x in runs]), "medians": [float(np.median(x["rtt"])) for x in runs]}
    for key in runs[0]:
        if key != "rtt":
            r[key] = float(np.mean([x[key] for x in runs]))
    return r


def main(argv=None):
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--seconds", type=float, default=5.0, help="measured seconds per row and run")
    ap.add_argument("--repeats", type=int, default=1, help="runs of every row, interleaved")
    ap.add_argument("--child", nargs=2, metavar=("KIND", "CONFIG"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        sys.exit(child(*args.child))
    rec = record.Record(__file__, __doc__, args, "Serial chain", peers=("pyserial", "lcm"))
    print(f"{args.seconds:g} s per row, {args.repeats} run(s) per row, interleaved", flush=True)
    runs = [[] for _ in ROWS]
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeats):
            for k, (name, side, lockstep, closed) in enumerate(ROWS):
                chain = Chain(Path(folder), side, lockstep)
                try:
                    chain.wait_ready()
                    runs[k].append(run(chain, args.seconds, closed))
                finally:
                    out = chain.output()
                if side != "sim":
                    frames(runs[k][-1], out)
    io = io_calls()
    rows = [(name, pooled(r)) for (name, *_), r in zip(ROWS, runs)]
    table = rec.table(f"serial driver, 7 joints: {args.seconds:g} s per row, {args.repeats} run(s) per row", [
        record.Column("", "{name}", align="left"),
        record.Column("round trip µs: median", "{rtt_p50:,.0f}"), record.Column("p99", "{rtt_p99:,.0f}"),
        record.Column("p99.9", "{rtt_p99_9:,.0f}"), record.Column("round trips/s", "{round_trips_per_s:,.0f}"),
        record.Column("driver rx frames/s", "{rx_per_s:,.0f}", missing="-"),
        record.Column("tx frames/s", "{tx_per_s:,.0f}", missing="-"),
        record.Column("driver CPU µs/frame", "{cpu_per_frame_us:,.0f}", missing="-"),
        record.Column("driver CPU %", "{cpu_pct:,.0f}", missing="-"),
        record.Column("robot side CPU %", "{side_cpu_pct:,.0f}")])
    for name, r in rows:
        table.add(name=name, rtt_p50=np.median(r["rtt"]), rtt_p99=np.percentile(r["rtt"], 99),
                  rtt_p99_9=np.percentile(r["rtt"], 99.9), round_trips_per_s=r["round_trips_per_s"],
                  rx_per_s=r.get("rx_per_s"), tx_per_s=r.get("tx_per_s"), cpu_per_frame_us=r.get("cpu_per_frame_us"),
                  cpu_pct=100 * r["cpu_share"] if "cpu_share" in r else None, side_cpu_pct=100 * r["side_cpu_share"])
    if args.repeats > 1:
        table.notes += [f"per-run round-trip medians, {name.strip()}: " + ", ".join(f"{m:,.0f}" for m in r["medians"])
                        + " µs" for name, r in rows]
    rec.show(table)

    by = {(side, lockstep, closed): r for (_, side, lockstep, closed), (_, r) in zip(ROWS, rows)}
    med = lambda r: float(np.median(r["rtt"]))  # noqa: E731
    hop = rec.table("The serial hop: the chain against the simulated robot without it (medians of the pooled "
                    "round trips)", [
                        record.Column("case", "{case}", align="left"),
                        record.Column("round trip µs, serial / no hop", "{rtt:,.0f} / {rtt_peer:,.0f}"),
                        record.Column("ratio", "×{rtt_ratio:.2f}"), record.Column("added µs", "{added:+,.0f}"),
                        record.Column("round trips/s", "×{rate_ratio:.2f}"),
                        record.Column("robot side CPU", "×{cpu_ratio:.2f}")])
    for label, key in (("board at 1 kHz, every 1 ms", (False, False)), ("lockstep, every 1 ms", (True, False)),
                       ("lockstep, closed loop", (True, True))):
        s, p = by[("serial", *key)], by[("sim", *key)]
        hop.add(case=label, rtt=med(s), rtt_peer=med(p), rtt_ratio=med(s) / med(p), added=med(s) - med(p),
                rate_ratio=s["round_trips_per_s"] / p["round_trips_per_s"],
                cpu_ratio=s["side_cpu_share"] / p["side_cpu_share"])
    rec.show(hop)
    io_path = rec.table("Driver I/O through pyserial against the file descriptor (pyserial / fd)", [
        record.Column("case", "{case}", align="left"),
        record.Column("round trip", "×{rtt_ratio:.2f} ({rtt:,.0f} vs {rtt_fd:,.0f} µs)"),
        record.Column("driver CPU per frame", "×{frame_ratio:.2f} ({frame_us:.0f} vs {frame_us_fd:.0f} µs)"),
        record.Column("driver CPU %", "×{share_ratio:.2f}"), record.Column("round trips/s", "×{rate_ratio:.2f}"),
        record.Column("COMMANDs counted incomplete", "{incomplete:.1f} % vs {incomplete_fd:.1f} %")])
    for label, key in (("lockstep, every 1 ms", (True, False)), ("lockstep, closed loop", (True, True))):
        s, p = by[("serial", *key)], by[("pyserial", *key)]
        io_path.add(case=label, rtt_ratio=med(p) / med(s), rtt=med(p), rtt_fd=med(s),
                    frame_ratio=p["cpu_per_frame_us"] / s["cpu_per_frame_us"], frame_us=p["cpu_per_frame_us"],
                    frame_us_fd=s["cpu_per_frame_us"], share_ratio=p["cpu_share"] / s["cpu_share"],
                    rate_ratio=p["round_trips_per_s"] / s["round_trips_per_s"],
                    incomplete=100 * p["tx_incomplete_share"], incomplete_fd=100 * s["tx_incomplete_share"])
    rec.show(io_path)
    calls = rec.table(f"I/O calls alone (a pty, this process; one {frame_size(MsgType.JOINT_STATE, 7)}-byte read + "
                      f"one {frame_size(MsgType.COMMAND, 7)}-byte write, median of {io['pairs']:,} pairs each)", [
                          record.Column("I/O path", "{path}", align="left"),
                          record.Column("µs per read + write", "{us:.1f}"),
                          record.Column("write timeouts on frames written whole", "{timeouts:,} of {pairs:,}",
                                        missing="")])
    calls.add(path="fd: os.read + os.write", us=io["fd"])
    calls.add(path="pyserial: Serial.read + Serial.write", us=io["pyserial"], timeouts=io["timeouts"],
              pairs=io["pairs"])
    calls.notes.append(f"pyserial / fd: ×{io['pyserial'] / io['fd']:.2f} "
                       f"(+{io['pyserial'] - io['fd']:.1f} µs per pair)")
    rec.show(calls)
    rec.save()


if __name__ == "__main__":
    main()
