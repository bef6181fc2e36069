"""ROBOTIS Dynamixel Protocol 2.0: packet writer and stream parser over preallocated buffers.

Packet: ``FF FF FD 00 | ID | LEN_L LEN_H | INST | params | CRC_L CRC_H``; LEN counts INST..CRC,
the CRC-16 (_servo_wire.crc16) covers every byte before it, and the instruction and parameters
are byte-stuffed (an extra FD after each FF FF FD), all little-endian. A status packet has INST
0x55 followed by the error byte (bit 7: hardware alert; bits 0..6: an ErrorCode). SYNC READ is
answered by one status packet per listed ID, in the listed order; FAST SYNC READ by one packet
from ID 0xFE carrying ``error, ID, data, CRC`` per servo (not stuffed; each device's CRC is the
running CRC of the packet so far, the last one closes the packet). docs/servo_bus.md.
"""
from __future__ import annotations

from enum import IntEnum
from struct import Struct

from ._servo_wire import BufferKernels, SyncReadTaker, dxl_unstuff
from .bus_packets import BusPacketWriter, BusSyncWrite
from .bus_stream import PacketStream

HEADER = b"\xff\xff\xfd\x00"
BROADCAST_ID = 0xFE
MAX_ID = 0xFC
HEADER_SIZE = 7            # FF FF FD 00 ID LEN_L LEN_H
MAX_PACKET = 1024          # the SDK's TXPACKET_MAX_LEN / RXPACKET_MAX_LEN
ALERT = 0x80               # error-byte bit: the servo has a hardware error (Hardware Error Status)

_U16 = Struct("<H")
_READ = Struct("<HH")      # address, length


class Instruction(IntEnum):
    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    REG_WRITE = 0x04
    ACTION = 0x05
    FACTORY_RESET = 0x06
    REBOOT = 0x08
    CLEAR = 0x10
    STATUS = 0x55
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83
    FAST_SYNC_READ = 0x8A
    BULK_READ = 0x92
    BULK_WRITE = 0x93
    FAST_BULK_READ = 0x9A


class ErrorCode(IntEnum):
    """Bits 0..6 of a status packet's error byte."""

    NONE = 0
    RESULT_FAIL = 1
    INSTRUCTION = 2
    CRC = 3
    DATA_RANGE = 4
    DATA_LENGTH = 5
    DATA_LIMIT = 6
    ACCESS = 7


def describe_error(error: int) -> str:
    """The error byte in words, e.g. 'ACCESS, hardware alert'."""
    parts = []
    code = error & 0x7F
    if code:
        parts.append(ErrorCode(code).name if code in ErrorCode._value2member_map_ else f"error {code}")
    if error & ALERT:
        parts.append("hardware alert")
    return ", ".join(parts) or "no error"


class PacketWriter(BusPacketWriter):
    """Builds Protocol 2.0 packets in one preallocated buffer (bus_packets.BusPacketWriter); each
    method returns a memoryview of the sealed packet, valid until the next call. Parameters are
    written into `raw` from offset 8."""

    PARAMS, ADDRESS_SIZE, BROADCAST_ID, Instruction = 8, 4, BROADCAST_ID, Instruction

    def __init__(self, max_size: int = MAX_PACKET):
        self.raw = bytearray(max_size)
        self.raw[0:4] = HEADER
        self._out = bytearray(max_size + max_size // 3 + 4)
        self._view = memoryview(self._out)
        self._kernels = BufferKernels(self.raw, self._out)

    def seal(self, servo_id: int, instruction: int, n_params: int) -> memoryview:
        """The packet with raw[8:8 + n_params] as parameters: stuffed, length and CRC set."""
        raw = self.raw
        raw[4] = servo_id
        raw[7] = instruction
        return self._packet(self._kernels.dxl_finish(8 + n_params))

    def _put_address(self, p: int, address: int, length: int | None = None) -> int:
        if length is None:
            _U16.pack_into(self.raw, p, address)
            return 2
        _READ.pack_into(self.raw, p, address, length)
        return 4

    def reboot(self, servo_id: int) -> memoryview:
        return self.seal(servo_id, Instruction.REBOOT, 0)

    def sync_read(self, address: int, length: int, ids, fast: bool = False) -> memoryview:
        return super().sync_read(address, length, ids, Instruction.FAST_SYNC_READ if fast else None)

    def bulk_read(self, entries, fast: bool = False) -> memoryview:
        """entries: (id, address, length) triples."""
        p = 8
        for servo_id, address, length in entries:
            self.raw[p] = servo_id
            _READ.pack_into(self.raw, p + 1, address, length)
            p += 5
        return self.seal(BROADCAST_ID, Instruction.FAST_BULK_READ if fast else Instruction.BULK_READ, p - 8)

    def status(self, servo_id: int, error: int, data=b"") -> memoryview:
        """A status packet (the device's answer)."""
        self.raw[8] = error
        self.raw[9:9 + len(data)] = data
        return self.seal(servo_id, Instruction.STATUS, 1 + len(data))


class SyncWritePacket(BusSyncWrite):
    """A SYNC WRITE of one register for fixed IDs, rebuilt in place every cycle without allocating
    (bus_packets.BusSyncWrite): `values` takes the register of each ID; send `seal()`."""

    Writer, OVERHEAD = PacketWriter, 4


class PacketParser(PacketStream):
    """Finds Protocol 2.0 packets in a byte stream (see bus_stream).

    status=True (host side): accepts status packets, `code` is the error byte, the parameters
    follow it; instruction packets (an echo of our own) are skipped. status=False (device side):
    accepts instruction packets, `code` is the instruction. A FAST SYNC/BULK READ answer (status
    from ID 0xFE) is handed on unstuffed-as-is: ``error, ID, data, CRC`` per servo.

    `taker` (host side, set by the consumer while it waits for a SYNC READ, from make_taker()):
    the answers that fit it are taken in one compiled pass (_servo_wire.SyncReadTaker: rows, errors
    and received filled, `on_taken(new answers)` called once) instead of one on_packet call each;
    anything else goes through the scanner below."""

    taker = None
    on_taken = None

    def make_taker(self, slot, rows, errors, received, on_taken) -> SyncReadTaker:
        """A SyncReadTaker bound to this parser's buffer and the consumer's arrays (see taker)."""
        self.on_taken = on_taken
        return SyncReadTaker(self._buffer, slot, rows, errors, received)

    def _scan(self) -> None:
        buf = self._buffer
        while True:
            if self.taker is not None:
                taken = self.taker.take(self._head, self._tail)
                if taken:
                    self._head += taken
                    self.stats.packets_ok += self.taker.packets
                    self._hunting = False
                    self.on_taken(self.taker.packets)
            p, end = self._seek(b"\xff\xff\xfd"), self._tail
            if p < 0 or end - p < HEADER_SIZE:
                return
            servo_id = buf[p + 4]
            length = buf[p + 5] | (buf[p + 6] << 8)
            if buf[p + 3] != 0 or servo_id == 0xFF or length < 3 or length > MAX_PACKET - HEADER_SIZE:
                self._bad_header()
                continue
            size = HEADER_SIZE + length
            if end - p < size:
                return
            if self._kernels.crc16(p, p + size - 2) != buf[p + size - 2] | (buf[p + size - 1] << 8):
                self._bad_crc()
                continue
            inst = buf[p + 7]
            if (inst == Instruction.STATUS) != self.status or (self.status and length < 4):
                self._skip(size)
                continue
            first, stop = (p + 9, p + size - 2) if self.status else (p + 8, p + size - 2)
            if not (self.status and servo_id == BROADCAST_ID) and buf.find(b"\xff\xff\xfd\xfd", p + 5, stop) >= 0:
                stop = dxl_unstuff(buf, p + 8, stop)
            self.on_packet(servo_id, buf[p + 8] if self.status else inst, buf, first, stop)
            self._accept(size)
