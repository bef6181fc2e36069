"""A simulated servo bus on a pseudo-terminal: Dynamixel Protocol 2.0 or Feetech servos that
answer the host's instructions as the real ones do (docs/servo_bus.md).

    bus = SimulatedServoBus("dynamixel", [SimulatedServo(XM430_W350, 1), ...], "/tmp/hil-servo/arm")
    bus.path                     # the pty the host (the SDK, our driver) opens
    bus.start(); ...; bus.stop() # served from a thread, the motors stepped on the wall clock
                                 # from the first torque on (at rest until then)

Answers follow each servo's status_return_level (Dynamixel 0: PING only, 1: + READ, 2: all;
Feetech 0: PING and READ, 1: all) and wait its return_delay_time (2 µs units) first. SYNC READ and
BULK READ are answered by each listed servo in the listed order, FAST SYNC READ by one packet from
ID 0xFE. Broadcast WRITE / SYNC WRITE are applied without answers. REBOOT answers, then restores
the RAM defaults (torque off, hardware errors cleared). Every instruction packet addressed to a
servo (its ID, or broadcast: SYNC READ / WRITE, BULK READ) resets its Bus Watchdog's silence, which
grows with the bus's clock: the wall clock, or in lockstep the simulated time.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from struct import Struct

from . import dynamixel as dxl
from . import feetech as ft
from ._servo_wire import crc16
from .device import PtyLink
from .servo_sim import SimulatedServo

_U16 = Struct("<H")
_U16X2 = Struct("<HH")

_SPIN = 3e-4                       # s: the busy-waited end of an answer's wire time

class SimulatedServoBus:
    """`servos` (SimulatedServo, unique IDs) speaking `protocol` ("dynamixel" or "feetech") on a
    pty linked at `link`. `step` [s] is the motor-model period; `plant` (servo_plant.PlantLoad):
    the servos drive a simulated robot instead of their own inertias. `baud`: pace the bus as a wire
    of that bit rate would (10 bits a byte; instructions and answers take turns on it): an answer is
    written when its last byte would have arrived; None: as fast as the pty goes. `lockstep_period`
    [s]: time does not follow the wall clock but moves by this much before each SYNC READ is
    answered (deterministic runs: one period per driver cycle)."""

    def __init__(self, protocol: str, servos, link: str | Path, *, step: float = 0.001, plant=None,
                 baud: int | None = None, lockstep_period: float | None = None):
        if protocol not in ("dynamixel", "feetech"):
            raise ValueError(f"protocol must be 'dynamixel' or 'feetech', got {protocol!r}")
        self.protocol = protocol
        self.dynamixel = protocol == "dynamixel"
        self.servos = list(servos)
        ids = [s.servo_id for s in self.servos]
        if len(set(ids)) != len(ids):
            raise ValueError(f"servo IDs must be unique, got {ids}")
        for s in self.servos:
            if s.model.protocol != protocol:
                raise ValueError(f"{s.model.name} (ID {s.servo_id}) speaks {s.model.protocol}, not {protocol}")
        mod = dxl if self.dynamixel else ft
        self.writer = mod.PacketWriter()
        self.parser = mod.PacketParser(self._on_packet, status=False)
        self.step_s = step
        self.plant = plant
        self.lockstep_period = lockstep_period
        self.byte_time = 10.0 / baud if baud else 0.0
        self._wire_free = 0.0              # time.perf_counter() when the simulated wire is idle again
        self._due = 0.0                    # when the last queued answer's last byte is through
        self._rx_time = 0.0                # when poll() read the host's last bytes
        self._pending = bytearray()
        self.link = PtyLink(link, "servo_bus.link")
        self.link.plug()
        self.instructions = 0          # accepted instruction packets
        self.answers = 0               # status packets sent
        self._lock = threading.Lock()
        self._thread = None
        self._running = False
        self._time = 0.0
        self._live = False                 # the wall clock runs (serve), from the first torque on
        self._by_id = {}

    @property
    def path(self) -> str:
        return self.link.path

    def servo(self, servo_id: int) -> SimulatedServo | None:
        s = self._by_id.get(servo_id)
        if s is None or s.servo_id != servo_id:      # an ID written since: look again
            self._by_id = {s.servo_id: s for s in self.servos}
            s = self._by_id.get(servo_id)
        return s

    # --- serving -----------------------------------------------------------------------------------
    def poll(self, timeout_s: float = 0.0) -> None:
        """Reads and answers what the host sent, waiting up to timeout_s for it."""
        if not self.link.wait_readable(timeout_s):
            return
        try:
            data = os.read(self.link.fd, 4096)
        except (BlockingIOError, OSError):
            return
        self._rx_time = time.perf_counter()
        with self._lock:
            self.parser.feed(data)
            self._flush()

    def advance(self, dt: float) -> None:
        """Steps every motor by dt (whole `step` periods)."""
        with self._lock:
            self._advance(dt)

    def _advance(self, dt: float) -> None:
        self._time += dt
        while self._time >= self.step_s - 1e-12:
            self._time -= self.step_s
            for s in self.servos:
                s.watch(self.step_s)
            if self.plant is not None:
                self.plant.step()
            else:
                for s in self.servos:
                    s.step(self.step_s)

    def power_cycle(self) -> None:
        """The servos' power goes and comes back: RAM registers to their defaults, EEPROM registers
        to their saved values (a Feetech value written while Lock was 1 is lost)."""
        with self._lock:
            for s in self.servos:
                s.power_on()

    def serve(self, duration: float | None = None) -> None:
        """Answers the host and steps the motors on the wall clock until stop() or `duration`, from the
        first torque on: until then the servos (and a plant) rest where they are, as a real arm is powered
        on where it was left, at rest, however late (or however many PINGs later) its driver sets it up."""
        self._running = True
        t0 = last = time.monotonic()
        while self._running and (duration is None or last - t0 < duration):
            self.poll(self.step_s)
            now = time.monotonic()
            if self.lockstep_period is None and (self._live or self._torqued()):
                self.advance(min(now - last, 0.05))
            last = now

    def _torqued(self) -> bool:
        """Whether a servo's torque is on (once it was, the clock runs on: _live)."""
        self._live = any(s.get("torque_enable") for s in self.servos)
        return self._live

    def start(self) -> SimulatedServoBus:
        self._thread = threading.Thread(target=self.serve, name="servo-bus", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._running = False
        if self._thread is not None:
            self._thread.join(2.0)
        self.link.unplug()

    # --- instructions ------------------------------------------------------------------------------
    def _occupy(self, nbytes: int, delay: float = 0.0) -> float:
        """Books the wire for nbytes after `delay` [s] from the arrival of what poll() read (the
        simulated servos' own processing takes no wire time, as a real servo's takes µs); returns
        when their last byte is through."""
        start = max(self._rx_time, self._wire_free) + delay
        self._wire_free = start + nbytes * self.byte_time
        return self._wire_free

    def _send(self, servo: SimulatedServo, packet) -> None:
        """Queues a status packet; poll() writes the answers to what it read in one go, as a USB
        bus adapter hands on the bytes of one burst."""
        delay = servo.get("return_delay_time") * 2e-6
        if self.byte_time:
            self._due = self._occupy(len(packet), delay)
        elif delay:
            time.sleep(delay)
        self._pending += packet
        self.answers += 1

    def _flush(self) -> None:
        if not self._pending:
            return
        left = self._due - time.perf_counter()
        if left > 2 * _SPIN:                             # sleep most of the wire time, leaving the CPU
            time.sleep(left - _SPIN)                     # to the host (they share the cores) ...
        while time.perf_counter() < self._due:          # ... and busy-wait the rest: sleep() wakes late
            pass
        view, written = memoryview(self._pending), 0
        while written < len(view):
            n = self.link.write(view[written:])
            if n == 0:
                if not self.link.plugged:
                    break
                time.sleep(1e-4)
            written += n
        view.release()
        self._pending.clear()

    def _answer(self, servo: SimulatedServo, error: int, data=b"", kind: str = "write", level=None) -> None:
        """A status packet if the servo's status return level (at the instruction's arrival) asks."""
        level = servo.get("status_return_level") if level is None else level
        if self.dynamixel:
            needed = {"ping": 0, "read": 1, "write": 2}[kind]
        else:
            needed = {"ping": 0, "read": 0, "write": 1}[kind]
        if level < needed:
            return
        if not self.dynamixel:
            error = servo.error_byte
        else:
            error |= servo.error_byte
        self._send(servo, self.writer.status(servo.servo_id, error, data))

    def _on_packet(self, servo_id: int, inst: int, buf, start: int, stop: int) -> None:
        self.instructions += 1
        if servo_id == dxl.BROADCAST_ID:                # (Feetech's broadcast ID is 0xFE too)
            for s in self.servos:
                s.silence = 0.0
        elif (s := self.servo(servo_id)) is not None:
            s.silence = 0.0
        n = stop - start
        if self.byte_time:
            self._occupy(n + (10 if self.dynamixel else 6))
        if self.dynamixel:
            self._dynamixel(servo_id, inst, buf, start, n)
        else:
            self._feetech(servo_id, inst, buf, start, n)

    def _targets(self, servo_id: int):
        if servo_id == dxl.BROADCAST_ID:
            return sorted(self.servos, key=lambda s: s.servo_id)
        s = self.servo(servo_id)
        return [] if s is None else [s]

    def _dynamixel(self, servo_id, inst, buf, p, n) -> None:
        I, E = dxl.Instruction, dxl.ErrorCode
        broadcast = servo_id == dxl.BROADCAST_ID
        if inst == I.PING:
            for s in self._targets(servo_id):
                number = s.model.model_number
                self._answer(s, 0, bytes((number & 0xFF, number >> 8, s.get("firmware_version"))), "ping")
        elif inst == I.READ:
            s = self.servo(servo_id)
            if s is None:
                return
            if n != 4:
                return self._answer(s, E.DATA_LENGTH, b"", "read")
            address, length = _U16X2.unpack_from(buf, p)
            data = s.read(address, length)
            self._answer(s, E.ACCESS if data is None else 0, b"" if data is None else data, "read")
        elif inst in (I.WRITE, I.REG_WRITE):
            if n < 3:
                for s in self._targets(servo_id):
                    if not broadcast:
                        self._answer(s, E.DATA_LENGTH)
                return
            address = _U16.unpack_from(buf, p)[0]
            data = bytes(buf[p + 2:p + n])
            for s in self._targets(servo_id):
                level = s.get("status_return_level")
                error = s.write(address, data)
                if not broadcast:
                    self._answer(s, error, level=level)
        elif inst == I.REBOOT:
            for s in self._targets(servo_id):
                if not broadcast:
                    self._answer(s, 0)
                s.power_on()
        elif inst in (I.SYNC_READ, I.FAST_SYNC_READ):
            if n < 5:
                return
            if self.lockstep_period:
                self._advance(self.lockstep_period)
            address, length = _U16X2.unpack_from(buf, p)
            ids = bytes(buf[p + 4:p + n])
            if inst == I.SYNC_READ:
                for i in ids:
                    s = self.servo(i)
                    if s is not None:
                        data = s.read(address, length)
                        self._answer(s, E.ACCESS if data is None else 0, data or b"", "read")
            else:
                self._fast_sync_read(address, length, ids)
        elif inst == I.SYNC_WRITE:
            if n < 4:
                return
            address, length = _U16X2.unpack_from(buf, p)
            self._sync_write(address, length, buf, p + 4, p + n)
        elif inst == I.BULK_READ:
            for q in range(p, p + n - 4, 5):
                s = self.servo(buf[q])
                if s is not None:
                    address, length = _U16X2.unpack_from(buf, q + 1)
                    data = s.read(address, length)
                    self._answer(s, E.ACCESS if data is None else 0, data or b"", "read")
        elif not broadcast and (s := self.servo(servo_id)) is not None:
            self._answer(s, E.INSTRUCTION)

    def _sync_write(self, address: int, length: int, buf, q: int, end: int) -> None:
        """Applies the (ID, data) slots in buf[q:end] of a SYNC WRITE to the servos that are here."""
        while q + 1 + length <= end:
            s = self.servo(buf[q])
            if s is not None:
                s.write(address, bytes(buf[q + 1:q + 1 + length]))
            q += 1 + length

    def _fast_sync_read(self, address: int, length: int, ids: bytes) -> None:
        """One packet from ID 0xFE that the listed servos send in turn (e-manual, Fast Sync Read):
        the first sends the header, whose length counts every listed servo, and each its error, ID,
        data and the CRC of the packet so far (the last is the packet's). A servo that is absent or
        cannot answer (status return level 0, a range beyond its table) sends no part, and those
        after it, which follow their predecessor's part on the wire, send none either: the packet
        ends early, short of its length, and the host's read of it times out."""
        size = 7 + 1 + len(ids) * (length + 4)
        pkt = bytearray(size)
        pkt[0:4] = dxl.HEADER
        pkt[4] = dxl.BROADCAST_ID
        _U16.pack_into(pkt, 5, size - 7)
        pkt[7] = dxl.Instruction.STATUS
        q, first = 8, None
        for i in ids:
            s = self.servo(i)
            data = None if s is None or s.get("status_return_level") < 1 else s.read(address, length)
            if data is None:
                break
            first = first or s
            pkt[q] = s.error_byte
            pkt[q + 1] = i
            pkt[q + 2:q + 2 + length] = data
            q += 2 + length
            _U16.pack_into(pkt, q, crc16(pkt, 0, q))
            q += 2
        if first is not None:
            self._send(first, pkt[:q])

    def _feetech(self, servo_id, inst, buf, p, n) -> None:
        I = ft.Instruction
        broadcast = servo_id == ft.BROADCAST_ID
        if inst == I.PING:
            for s in self._targets(servo_id):
                self._answer(s, 0, b"", "ping")
        elif inst == I.READ and n == 2:
            s = self.servo(servo_id)
            if s is not None:
                data = s.read(buf[p], buf[p + 1])
                if data is not None:
                    self._answer(s, 0, data, "read")
        elif inst in (I.WRITE, I.REG_WRITE) and n >= 2:
            data = bytes(buf[p + 1:p + n])
            for s in self._targets(servo_id):
                level = s.get("status_return_level")
                s.write(buf[p], data)
                if not broadcast:
                    self._answer(s, 0, level=level)
        elif inst == I.SYNC_READ and n >= 3:
            if self.lockstep_period:
                self._advance(self.lockstep_period)
            for i in bytes(buf[p + 2:p + n]):
                s = self.servo(i)
                if s is not None and (data := s.read(buf[p], buf[p + 1])) is not None:
                    self._answer(s, 0, data, "read")
        elif inst == I.SYNC_WRITE and n >= 2:
            self._sync_write(buf[p], buf[p + 1], buf, p + 2, p + n)
