"""Bad bytes on a live servo bus, at the driver: the simulated servos answer on a real pty, the driver
cycles on memq:// LCM (one cycle per call, as a loop of its own would run it), and when the next
SYNC READ reaches the bus, bytes are written into the pty from the bus side ahead of its answers,
as a glitch on the wire or a stray servo would. Each kind is counted exactly
(every counter of driver.stats, the bytes included), the cycle it lands in completes with the
servos' own state (or, where a length field swallows the answers, exactly that cycle is lost), and
the next cycle is clean: no byte of it is left over. Dynamixel (SYNC READ and FAST SYNC READ) and
Feetech."""
import dataclasses
import select
import sys
import time

import lcm
import numpy as np
import pytest
from drivers.serial._servo_wire import crc16, scs_checksum

from drivers.serial import dynamixel as dxl
from drivers.serial import feetech as ft
from drivers.serial.servo_bus import SimulatedServoBus
from drivers.serial.servo_config import load_servo_config
from drivers.serial.servo_driver import ServoDriver
from drivers.serial.servo_sim import SimulatedServo
from messages.channels import Channels
from messages.codec import CommandEncoder, StatusDecoder

N = 3
AWAY = 2048 + 700            # ticks: a position none of the servos is at (1.07 rad from center)
SYNC_READS = (dxl.Instruction.SYNC_READ, dxl.Instruction.FAST_SYNC_READ, ft.Instruction.SYNC_READ)
BUSES = {"dynamixel": ("dynamixel", {}), "dynamixel-fast": ("dynamixel", {"fast_read": True}),
         "feetech": ("feetech", {})}


class Bench:
    """N servos on the simulated bus, the driver connected and cycling with torque on (zero torque:
    the servos rest at their center ticks, so every status reads 0 rad)."""

    def __init__(self, tmp_path, protocol: str, read_timeout: float = 0.5, hook=None, baud=None, **extra):
        self.dynamixel = protocol == "dynamixel"
        model = "XM430-W350" if self.dynamixel else "STS3215"
        joints = [{"joint": f"j{k}", "id": k + 1, "model": model} for k in range(N)]
        # read_timeout: answers come in about a millisecond; half a second is no stall of this machine.
        self.cfg = load_servo_config({"port": str(tmp_path / "bus"), "protocol": protocol, "joints": joints,
                                      "rate": 100, "read_timeout": read_timeout, "link_timeout": 30.0,
                                      "command_timeout": 30.0, **extra})
        self.servos = [SimulatedServo(j.servo_model, j.id) for j in self.cfg.joints]
        for s in self.servos:
            s.set("return_delay_time", 0)
        self.bus = SimulatedServoBus(protocol, self.servos, self.cfg.port, baud=baud)
        self.writer = dxl.PacketWriter() if self.dynamixel else ft.PacketWriter()
        self.queued = b""                   # written by the bus ahead of its answers to the next SYNC READ
        taken = self.bus.parser.on_packet

        def on_packet(servo_id, inst, buf, start, stop):
            if hook is not None:            # hook(bench, instruction), in the bus's thread, ahead of its answer
                hook(self, inst)
            if inst in SYNC_READS and self.queued:
                data, self.queued = self.queued, b""
                self.inject(data)
            taken(servo_id, inst, buf, start, stop)
        self.bus.parser.on_packet = on_packet
        self.bus.start()
        self.lc = lcm.LCM("memq://")
        self.driver = ServoDriver(self.cfg, [j.joint for j in self.cfg.joints], "panda",
                                  Channels(status="PANDA_STATUS", command="PANDA_COMMAND"), self.lc)
        self.status, self.statuses = StatusDecoder("panda", N), 0
        self.lc.subscribe("PANDA_STATUS", self._on_status)
        self.commands = CommandEncoder("panda", N, fields=("torque",), channel="PANDA_COMMAND")
        self.block = 10 if self.dynamixel else 15            # bytes of the state block per servo
        end = time.monotonic() + 20
        while not self.driver.connected and time.monotonic() < end:
            self.driver.cycle()
            time.sleep(0.01)
        assert self.driver.connected, self.driver.summary()
        for _ in range(5):
            assert self.cycle()
        assert all(s.get("torque_enable") for s in self.servos)
        before = self.counters()
        assert self.cycle()
        self.answer_bytes = self.counters()["bytes_received"] - before["bytes_received"]     # one cycle's answers

    def _on_status(self, channel, data):
        assert self.status.decode(data)
        self.statuses += 1

    def _drain(self):
        while self.lc.handle_timeout(0) > 0:
            pass

    def cycle(self) -> bool:
        """A command (zero torque), one driver cycle, its status handed to this bench."""
        self.commands.encode(0, torque=np.zeros(N))
        self.commands.publish(self.lc)
        self._drain()
        full = self.driver.cycle()
        self._drain()
        return full

    def inject(self, data: bytes) -> None:
        """Writes `data` into the pty from the bus's side now."""
        view, done = memoryview(bytes(data)), 0
        while done < len(view):
            done += self.bus.link.write(view[done:])

    def counters(self) -> dict:
        return {**dataclasses.asdict(self.driver.stats), "full_reads": self.driver.full_reads,
                "statuses": self.statuses}

    def after(self, data: bytes) -> dict:
        """The counters that one cycle with `data` ahead of its answers changes, and how much."""
        self.queued = data
        before = self.counters()
        self.cycle()
        now = self.counters()
        return {k: now[k] - before[k] for k in now if now[k] != before[k]}

    def clean(self) -> dict:
        """What the next cycle changes: only its own answers, when nothing was left over."""
        return self.after(b"")

    def answers(self) -> dict:
        """What one cycle's answers change: their bytes and packets (FAST SYNC READ: one packet)."""
        return {"bytes_received": self.answer_bytes, "packets_ok": 1 if self.driver.fast else N}

    def packet(self, servo_id: int, data: bytes, error: int = 0) -> bytes:
        return bytes(self.writer.status(servo_id, error, data))

    def state(self, position: int = AWAY, size: int | None = None) -> bytes:
        """A state block (size bytes, default the driver's) with `position` ticks in it."""
        row = bytearray(self.block if size is None else size)
        at = 6 if self.dynamixel else 0
        row[at:at + 2] = position.to_bytes(2, "little")
        return bytes(row)

    def close(self):
        self.driver.shutdown()
        self.bus.stop()


@pytest.fixture
def bench(tmp_path):
    made = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)

    def make(name: str, **extra):
        protocol, options = BUSES[name]
        made.append(Bench(tmp_path, protocol, **options, **extra))
        return made[-1]

    yield make
    for b in made:
        b.close()
    sys.setswitchinterval(interval)


def _stray_on_ping(b: Bench, instruction: int) -> None:
    """A servo nobody asked (ID 9) answers every PING first: its status without parameters goes onto
    the pty 20 ms ahead of the asked servo's answer (so that the driver reads it on its own)."""
    if instruction == dxl.Instruction.PING:              # 0x01 in both protocols
        b.inject(b.packet(9, b""))
        time.sleep(0.02)


def _rests(b: Bench) -> None:
    """The last status holds the servos' own positions, none of the injected ones."""
    assert b.status.position_measured == pytest.approx(np.zeros(N), abs=1e-2)


@pytest.mark.parametrize("name", BUSES)
def test_a_stray_servo_and_a_wrong_length_are_counted_and_the_cycle_completes(bench, name):
    b = bench(name)
    stray = b.packet(9, b.state())                        # intact, from an ID the driver did not ask
    assert b.after(stray) == {"unexpected_ids": 1, "packets_ok": b.answers()["packets_ok"] + 1,
                              "bytes_received": len(stray) + b.answer_bytes, "full_reads": 1, "statuses": 1}
    _rests(b)
    assert b.clean() == {**b.answers(), "full_reads": 1, "statuses": 1}
    short = b.packet(1, b.state(size=b.block - 2))        # intact, from servo 1, two bytes short
    long = b.packet(2, b.state(size=b.block + 3))         # and three too many from servo 2
    assert b.after(short + long) == {"length_errors": 2, "packets_ok": b.answers()["packets_ok"] + 2,
                                     "bytes_received": len(short) + len(long) + b.answer_bytes,
                                     "full_reads": 1, "statuses": 1}
    _rests(b)
    assert b.clean() == {**b.answers(), "full_reads": 1, "statuses": 1}


@pytest.mark.parametrize("name", BUSES)
def test_a_stray_servo_during_setup_is_counted_and_the_setup_completes(bench, name):
    """Each setup transaction takes the answer of the servo it asked: the stray answers ahead of the
    N PINGs are counted, not taken for a model number (or its absence for a crash)."""
    b = bench(name, hook=_stray_on_ping)
    assert b.driver.stats.unexpected_ids == N and b.driver.reconnects == b.driver.links_lost == 0, b.driver.summary()
    assert b.clean() == {**b.answers(), "full_reads": 1, "statuses": 1}
    _rests(b)


@pytest.mark.parametrize("name", BUSES)
def test_a_truncated_packet_costs_one_checksum_and_its_bytes(bench, name):
    """A status cut short by the answers that follow: its length field takes their first bytes as
    its CRC-16 (Feetech: checksum), which fails; the scanner hunts on and finds them whole."""
    b = bench(name)
    whole = b.packet(1, b.state())
    cut = whole[:-2] if b.dynamixel else whole[:-1]       # the answers' FF FF (FF) end it
    if b.dynamixel:
        assert crc16(cut) != 0xFFFF and b"\xff\xff\xfd" not in cut[1:]
    else:
        assert scs_checksum(cut, 2, len(cut)) != 0xFF and b"\xff\xff" not in cut[1:]
    assert b.after(cut) == {"crc_errors": 1, "resyncs": 1, "bytes_dropped": len(cut),
                            "bytes_received": len(cut) + b.answer_bytes, "packets_ok": b.answers()["packets_ok"],
                            "full_reads": 1, "statuses": 1}
    _rests(b)
    assert b.clean() == {**b.answers(), "full_reads": 1, "statuses": 1}


@pytest.mark.parametrize("name", BUSES)
def test_a_packet_interleaved_into_another_is_taken_and_the_broken_one_dropped(bench, name):
    """A stray servo's whole packet lands inside another's: the outer one fails its check (counted
    once), the inner one is found whole (counted as unexpected), every byte of the outer dropped."""
    b = bench(name)
    outer, inner, k = b.packet(1, b.state()), b.packet(9, b.state(AWAY + 5)), 12
    mixed = outer[:k] + inner + outer[k:]
    size = len(outer)
    if b.dynamixel:
        assert crc16(mixed, 0, size - 2) != mixed[size - 2] | mixed[size - 1] << 8
        assert b"\xff\xff\xfd" not in outer[1:] and b"\xff" not in outer[-2:]
    else:
        assert scs_checksum(mixed, 2, size - 1) != mixed[size - 1]
        assert b"\xff\xff" not in outer[1:] and outer[-1] != 0xFF
    assert b.after(mixed) == {"crc_errors": 1, "unexpected_ids": 1, "resyncs": 2, "bytes_dropped": len(outer),
                              "bytes_received": len(mixed) + b.answer_bytes,
                              "packets_ok": b.answers()["packets_ok"] + 1, "full_reads": 1, "statuses": 1}
    _rests(b)
    assert b.clean() == {**b.answers(), "full_reads": 1, "statuses": 1}


@pytest.mark.parametrize("name", BUSES)
def test_answers_that_come_too_late_are_not_taken_for_the_next_cycle(bench, name):
    """The bus stalls once (130 ms) before answering a SYNC READ: that cycle times out (read_timeout
    0.1 s), and its late answers are dropped at the next one (which waits for a quiet line first,
    counting them as `late`), not taken for that one's. Taken, they would leave every later cycle
    one SYNC READ behind, its own answers on the port, on a bus paced as a wire is (here 1 Mbps)."""
    stall = []

    def stalls(b, instruction):
        if instruction in (dxl.Instruction.SYNC_READ, dxl.Instruction.FAST_SYNC_READ, ft.Instruction.SYNC_READ) \
                and stall:
            time.sleep(stall.pop())
    b = bench(name, read_timeout=0.1, baud=1_000_000, hook=stalls)
    stall.append(0.13)
    assert b.clean() == {"timeouts": N}
    answers = b.answers()["packets_ok"]
    assert b.clean() == {"packets_ok": 2 * answers, "late": answers, "bytes_received": 2 * b.answer_bytes,
                         "full_reads": 1, "statuses": 1}
    for _ in range(5):
        assert b.clean() == {**b.answers(), "full_reads": 1, "statuses": 1}
        time.sleep(0.03)
        assert not select.select((b.driver.fd,), (), (), 0)[0]          # nothing left behind on the port
    _rests(b)


@pytest.mark.parametrize("name", BUSES)
def test_a_length_field_that_swallows_the_answers_costs_exactly_one_cycle(bench, name):
    """A header whose length runs past every answer: the read times out (each missing answer
    counted), its bytes are dropped, nothing is published or written, and the next cycle is whole."""
    b = bench(name)
    header = b"\xff\xff\xfd\x00\x01\x58\x02\x55" if b.dynamixel else b"\xff\xff\x01\xfa\x00"   # 600, 250 bytes
    assert b.after(header) == {"timeouts": N, "bytes_dropped": len(header) + b.answer_bytes,
                               "bytes_received": len(header) + b.answer_bytes}
    assert b.clean() == {**b.answers(), "full_reads": 1, "statuses": 1}
    _rests(b)


def _noise(b: Bench, rng, bad_checks: int, bad_headers: int) -> bytes:
    """Filler without 0xFF (no header can form in it) around packets that fail their check and
    headers that are impossible (reserved byte, ID, length; Feetech: ID, length, error byte)."""
    def no_ff(low: int, high: int) -> bytes:         # low..high-1 bytes, each 0..0xFE
        return rng.integers(0, 0xFF, rng.integers(low, high), dtype=np.uint8).tobytes()

    def filler():
        return no_ff(1, 30)
    parts = [filler()]
    for _ in range(bad_checks):
        while True:                                          # drawn again until no 0xFF follows the header
            data = no_ff(0, 12)
            p = bytearray(b.packet(int(rng.integers(1, 0xFD)), data, error=int(rng.integers(0, 0x7F))))
            p[-1] ^= 0x01                                    # a wrong CRC or checksum
            if b"\xff" not in p[3 if b.dynamixel else 2:]:
                break
        parts += [bytes(p), filler()]
    impossible = ([b"\xff\xff\xfd\x01\x01\x05\x00", b"\xff\xff\xfd\x00\xff\x05\x00", b"\xff\xff\xfd\x00\x01\x02\x00",
                   b"\xff\xff\xfd\x00\x01\x00\x7f"] if b.dynamixel else
                  [b"\xff\xff\xfe\x04\x00", b"\xff\xff\x01\x01\x00", b"\xff\xff\x01\x04\x90"])
    for i in range(bad_headers):
        parts += [impossible[i % len(impossible)], filler()]
    return b"".join(parts)


@pytest.mark.parametrize("name", BUSES)
def test_noise_with_broken_packets_is_counted_exactly(bench, name):
    b = bench(name)
    rng = np.random.default_rng(14)
    for bad_checks, bad_headers in ((0, 0), (3, 0), (0, 4), (5, 7)):
        noise = _noise(b, rng, bad_checks, bad_headers)
        expected = {"crc_errors": bad_checks, "header_errors": bad_headers, "resyncs": 1,
                    "bytes_dropped": len(noise), "bytes_received": len(noise) + b.answer_bytes,
                    "packets_ok": b.answers()["packets_ok"], "full_reads": 1, "statuses": 1}
        assert b.after(noise) == {k: v for k, v in expected.items() if v}, (bad_checks, bad_headers)
        _rests(b)
    assert b.clean() == {**b.answers(), "full_reads": 1, "statuses": 1}


@pytest.mark.parametrize("name", BUSES)
def test_random_noise_bursts_never_crash_or_stall_the_driver(bench, name):
    """Bursts of random bytes with headers sown in (Dynamixel FF FF FD 00, Feetech FF FF, each with a
    random ID and, half of them, a length short enough to end inside the burst or the answers) ahead
    of 40 cycles: they are counted as CRC and header errors, a length field now and then swallows a
    cycle's answers (a timeout), and the driver keeps cycling: each cycle after the noise is whole."""
    b = bench(name, read_timeout=0.1)
    rng = np.random.default_rng(2014)
    before = b.counters()
    for _ in range(40):
        burst = bytearray(rng.integers(0, 256, rng.integers(20, 120), dtype=np.uint8).tobytes())
        for at in sorted(rng.integers(0, len(burst), rng.integers(1, 5)), reverse=True):
            length = int(rng.integers(3, 120)) if rng.random() < 0.5 else int(rng.integers(0, 0x10000))
            servo_id = bytes([rng.integers(0, 256)])
            burst[at:at] = (b"\xff\xff\xfd\x00" + servo_id + length.to_bytes(2, "little") if b.dynamixel
                            else b"\xff\xff" + servo_id + bytes([length & 0xFF]))
        b.queued = bytes(burst)
        assert b.cycle()                                     # connected throughout
    noisy = {k: v - before[k] for k, v in b.counters().items()}
    lost = 40 - noisy["full_reads"]
    assert noisy["crc_errors"] > 0 and noisy["header_errors"] > 0 and 0 < lost < 40, noisy
    assert lost <= noisy["timeouts"] <= N * lost and noisy["statuses"] == noisy["full_reads"], noisy
    for _ in range(10):
        assert b.clean() == {**b.answers(), "full_reads": 1, "statuses": 1}
    _rests(b)
