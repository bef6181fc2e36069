"""Servo-bus benchmark: 6 Dynamixel XM430-W350 on one bus at 1 and 4 Mbps, over a pty.

    python benchmarks/bench_servo.py [--seconds 3] [--repeats 3] [--json PATH]

Per cycle: one SYNC READ of addresses 126..135 (present current, velocity, position: 10 bytes from
each servo) and one SYNC WRITE of goal current (2 bytes each), as `hil servo-bus` does in current
mode. The simulated bus runs in its own process and paces the pty as a wire of that bit rate would
(SimulatedServoBus(baud=...): 10 bits a byte, instructions and answers take turns, return delay 0),
so the rate a client reaches is bounded by the wire time of the cycle's bytes:

    bytes/cycle = SYNC READ (14 + 6) + 6 status packets (11 + 10) + SYNC WRITE (14 + 6 * 3)
    bound       = baud / (10 * bytes/cycle)   cycles/s

Clients, in this process, alternating runs of `--seconds` each:
- ours: drivers.serial.servo_driver.ServoDriver.cycle(prefetch=True) (SYNC READ, decode to joint
  units, publish the status on memq:// LCM, SYNC WRITE of the newest command, and the next SYNC READ
  right behind it, as `hil servo-bus` does when its rate exceeds the bus's) with the command
  published each cycle and handled (lc.handle_timeout(0)) inside the timed work; and the same with
  cycle(prefetch=False) (each SYNC READ sent when its cycle starts), and with `fast_read` (one
  FAST SYNC READ answer instead of six status packets: 144 bytes a cycle, its own bound);
- dynamixel_sdk: GroupSyncRead.txRxPacket() + getData() of the three registers per servo and
  GroupSyncWrite.changeParam() for every servo + txPacket(), the SDK's documented pattern.
- the floor: a bare client that writes the same precomputed SYNC WRITE + SYNC READ bytes in one
  write and waits in select() until the answers' byte count is in, decoding nothing: the highest
  rate any client reaches on this simulated bus and pty, the servo-bus analogue of the bare wait
  loop beside the control loop. Beside it, the pty's own round trip (a process echoing 20 bytes
  back, nothing else): the latency the pty adds to every cycle on top of the wire time.
CPU per cycle is the client thread's CPU time (time.thread_time_ns) over the run / cycles: the
SDK's receive loop polls the port (timeout 0 reads) while it waits, ours sleeps in select().
Medians over the repeats.
"""
import multiprocessing as mp
import os
import pty
import select
import statistics
import sys
import tempfile
import time
import tty
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lcm  # noqa: E402
import numpy as np  # noqa: E402
import record  # noqa: E402

from drivers.serial.servo_bus import SimulatedServoBus  # noqa: E402
from drivers.serial.servo_config import load_servo_config  # noqa: E402
from drivers.serial.servo_driver import ServoDriver  # noqa: E402
from drivers.serial.servo_models import XM430_W350  # noqa: E402
from drivers.serial.servo_sim import SimulatedServo  # noqa: E402
from messages.channels import Channels  # noqa: E402
from messages.codec import CommandEncoder  # noqa: E402

IDS = [1, 2, 3, 4, 5, 6]
ANSWER_BYTES = len(IDS) * (11 + 10)               # six status packets of 10 data bytes
READ_BYTES = 14 + len(IDS) + ANSWER_BYTES
WRITE_BYTES = 14 + len(IDS) * 3
FAST_READ_BYTES = 14 + len(IDS) + 8 + len(IDS) * (4 + 10)   # one answer: per servo error, ID, data, CRC


def serve(link: str, baud: int) -> None:
    servos = [SimulatedServo(XM430_W350, i) for i in IDS]
    for s in servos:
        s.set("return_delay_time", 0)
        s.set("operating_mode", 0)
    # Motors stepped at 50 Hz: the wire is what is measured.
    SimulatedServoBus("dynamixel", servos, link, baud=baud, step=0.02).serve()


def floor(link: str, baud: int, seconds: float) -> tuple[float, float]:
    """The bare client: precomputed bytes out, the answers' byte count in, nothing decoded."""
    from drivers.serial import dynamixel as dxl
    sync_read = bytes(dxl.PacketWriter().sync_read(126, 10, IDS))
    goal = dxl.SyncWritePacket(102, "<i2", IDS)
    out = bytes(goal.seal()) + sync_read
    fd = os.open(link, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    buf = bytearray(4096)
    os.write(fd, sync_read)
    cpu = cycles = 0
    end = time.monotonic() + seconds
    t0 = time.monotonic()
    while time.monotonic() < end:
        c0 = time.thread_time_ns()
        got = 0
        while got < ANSWER_BYTES:
            if not select.select((fd,), (), (), 0.05)[0]:
                break
            got += os.readv(fd, (buf,))
        os.write(fd, out)
        cpu += time.thread_time_ns() - c0
        cycles += 1
    wall = time.monotonic() - t0
    while select.select((fd,), (), (), 0.02)[0]:      # the last answers: not left for the next client
        os.readv(fd, (buf,))
    os.close(fd)
    return cycles / wall, cpu / cycles / 1e3


def pty_round_trip(samples: int = 20000) -> float:
    """Median round trip [s] of 20 bytes through a raw pty to a process that echoes them."""
    master, slave = pty.openpty()
    for fd in (master, slave):
        tty.setraw(fd)
    pid = os.fork()
    if pid == 0:
        for _ in range(samples):
            select.select((master,), (), ())
            os.write(master, os.read(master, 4096))
        os._exit(0)
    times, msg = [], b"x" * 20
    for _ in range(samples):
        t = time.perf_counter()
        os.write(slave, msg)
        got = 0
        while got < len(msg):
            select.select((slave,), (), ())
            got += len(os.read(slave, 4096))
        times.append(time.perf_counter() - t)
    os.waitpid(pid, 0)
    os.close(master)
    os.close(slave)
    return statistics.median(times)


def ours(link: str, baud: int, seconds: float, prefetch: bool = True, fast: bool = False) -> tuple[float, float]:
    cfg = load_servo_config({"port": link, "baudrate": baud, "control": "current", "read_timeout": 0.05,
                             "link_timeout": 1.0, "command_timeout": 1.0, "fast_read": fast,
                             "joints": [{"joint": f"j{i}", "id": i, "model": "XM430-W350"} for i in IDS]})
    lc = lcm.LCM("memq://")
    driver = ServoDriver(cfg, [f"j{i}" for i in IDS], "panda", Channels(), lc)
    commands = CommandEncoder("panda", len(IDS), fields=("torque",), channel=Channels().command)
    tau = np.zeros(len(IDS))
    while not driver.connect():
        time.sleep(0.05)
    cpu = cycles = 0
    end = time.monotonic() + seconds
    t0 = time.monotonic()
    while time.monotonic() < end:
        tau[0] = 0.01 * (cycles % 7)
        commands.encode(0, torque=tau)
        commands.publish(lc)
        c0 = time.thread_time_ns()
        lc.handle_timeout(0)
        driver.cycle(prefetch=prefetch)
        cpu += time.thread_time_ns() - c0
        cycles += 1
    wall = time.monotonic() - t0
    full = driver.full_reads
    driver.shutdown()
    time.sleep(0.02)                  # answers to a prefetched SYNC READ: in before the next client opens
    return full / wall, cpu / cycles / 1e3


def sdk(link: str, baud: int, seconds: float) -> tuple[float, float]:
    import dynamixel_sdk as d
    port = d.PortHandler(link)
    port.openPort()
    port.setBaudRate(baud)
    ph = d.PacketHandler(2.0)
    read = d.GroupSyncRead(port, ph, 126, 10)
    write = d.GroupSyncWrite(port, ph, 102, 2)
    for i in IDS:
        read.addParam(i)
        write.addParam(i, [0, 0])
    ph.write1ByteTxRx(port, 1, 64, 1)
    cpu = cycles = ok = 0
    end = time.monotonic() + seconds
    t0 = time.monotonic()
    state = np.zeros((3, len(IDS)))
    while time.monotonic() < end:
        c0 = time.thread_time_ns()
        if read.txRxPacket() == d.COMM_SUCCESS:
            ok += 1
            for k, i in enumerate(IDS):
                state[0, k] = read.getData(i, 126, 2)
                state[1, k] = read.getData(i, 128, 4)
                state[2, k] = read.getData(i, 132, 4)
        for i in IDS:
            value = (cycles % 7) & 0xFFFF
            write.changeParam(i, [d.DXL_LOBYTE(value), d.DXL_HIBYTE(value)])
        write.txPacket()
        cpu += time.thread_time_ns() - c0
        cycles += 1
    wall = time.monotonic() - t0
    ph.write1ByteTxRx(port, 1, 64, 0)
    port.closePort()
    return ok / wall, cpu / cycles / 1e3


LABELS = {"floor": "floor: bare client, nothing decoded", "ours": "hilstack ServoDriver",
          "ours, no prefetch": "hilstack ServoDriver, no prefetch",
          "ours, fast": "hilstack ServoDriver, FAST SYNC READ",
          "sdk": f"dynamixel_sdk {record.version('dynamixel-sdk') or ''} GroupSyncRead + GroupSyncWrite"}


def main(argv=None) -> None:
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--seconds", type=float, default=3.0, help="length of one run [s] (default 3)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per client and baud, medians reported (default 3)")
    args = ap.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Servo bus", peers=("dynamixel_sdk", "pyserial"))
    rows = []
    round_trip = pty_round_trip()
    for baud in (1_000_000, 4_000_000):
        link = os.path.join(tempfile.mkdtemp(prefix="bench-servo-"), "bus")
        proc = mp.get_context("fork").Process(target=serve, args=(link, baud), daemon=True)
        proc.start()
        while not os.path.exists(link):
            time.sleep(0.01)
        results = {name: [] for name in LABELS}
        for _ in range(args.repeats):
            results["floor"].append(floor(link, baud, args.seconds))
            results["ours"].append(ours(link, baud, args.seconds))
            results["ours, no prefetch"].append(ours(link, baud, args.seconds, prefetch=False))
            results["ours, fast"].append(ours(link, baud, args.seconds, fast=True))
            results["sdk"].append(sdk(link, baud, args.seconds))
        proc.terminate()
        proc.join()
        for name, runs in results.items():
            nbytes = (FAST_READ_BYTES if name == "ours, fast" else READ_BYTES) + WRITE_BYTES
            rate = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rows.append((baud, name, nbytes, rate, baud / (10 * nbytes), cpu))
    caps = []
    for baud in (1_000_000, 4_000_000):
        wire = 10 * (READ_BYTES + WRITE_BYTES) / baud        # s a cycle's bytes take on the wire
        caps.append(f"at {baud / 1e6:g} Mbps wire time + round trip allow {wire / (wire + round_trip):.0%}")
    table = rec.table(
        f"6 servos (XM430-W350), SYNC READ 126..135 + SYNC WRITE goal current; {READ_BYTES + WRITE_BYTES} bytes "
        f"per cycle; medians of {args.repeats} × {args.seconds:g} s", [
            record.Column("baud", "{mbps:g} Mbps", align="left"), record.Column("client", "{client}", align="left"),
            record.Column("bytes/cycle", "{bytes}"), record.Column("wire-time bound [Hz]", "{bound:,.0f}"),
            record.Column("rate [Hz]", "{rate:,.0f}"), record.Column("of bound", "{of_bound:.0%}"),
            record.Column("of floor", "{of_floor:.0%}", missing=""),
            record.Column("CPU/cycle [µs]", "{cpu:,.0f} ({cpu_ratio:.2f}×)", "{cpu:,.0f}")],
        [f"pty round trip (20 bytes echoed by another process, median of 20000): {round_trip * 1e6:.0f} µs; "
         f"{', '.join(caps)} of the wire-time bound", "CPU/cycle in parentheses: ours / dynamixel_sdk's"])
    sdk_cpu = {row[0]: row[-1] for row in rows if row[1] == "sdk"}
    floor_rate = {row[0]: row[3] for row in rows if row[1] == "floor"}
    for baud, name, nbytes, rate, bound, cpu in rows:
        table.add(mbps=baud / 1e6, client=LABELS[name], bytes=nbytes, bound=bound, rate=rate, of_bound=rate / bound,
                  of_floor=None if name in ("floor", "ours, fast") else rate / floor_rate[baud], cpu=cpu,
                  cpu_ratio=cpu / sdk_cpu[baud] if name.startswith("ours") else None)
    rec.data["pty_round_trip_us"] = round_trip * 1e6
    rec.show(table)
    rec.save()


if __name__ == "__main__":
    main()
