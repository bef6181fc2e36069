"""Feetech SCS/STS serial-servo protocol: packet writer and stream parser over preallocated buffers.

Packet: ``FF FF | ID | LEN | INST or ERROR | params | CHECKSUM``; LEN counts the bytes after it
(INST, params, checksum), the checksum is ~(ID + LEN + INST + params) & 0xFF. No stuffing. Multi-
byte registers are little-endian on STS/SMS servos and big-endian on SCS servos (the SDK's
`protocol_end` 0 / 1). Status packets carry an error byte (bits: 0 input voltage, 1 angle sensor,
2 overheat, 3 over-current, 5 overload). SYNC READ is answered by one status packet per listed
ID, in order. docs/servo_bus.md.
"""
from __future__ import annotations

from enum import IntEnum, IntFlag

from ._servo_wire import BufferKernels
from .bus_packets import BusPacketWriter, BusSyncWrite
from .bus_stream import PacketStream

BROADCAST_ID = 0xFE
MAX_ID = 0xFC
HEADER_SIZE = 4            # FF FF ID LEN
MAX_PACKET = 250           # the SDK's TXPACKET_MAX_LEN / RXPACKET_MAX_LEN


class Instruction(IntEnum):
    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    REG_WRITE = 0x04
    ACTION = 0x05
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83


class ErrorBit(IntFlag):
    VOLTAGE = 1
    ANGLE = 2
    OVERHEAT = 4
    OVERCURRENT = 8
    OVERLOAD = 32


def describe_error(error: int) -> str:
    names = [bit.name for bit in ErrorBit if error & bit]
    return ", ".join(names) or "no error"


class PacketWriter(BusPacketWriter):
    """Builds Feetech packets in one preallocated buffer (bus_packets.BusPacketWriter); methods
    return a memoryview of the packet, valid until the next call. Parameters go into `raw` from
    offset 5."""

    PARAMS, ADDRESS_SIZE, BROADCAST_ID, Instruction = 5, 2, BROADCAST_ID, Instruction

    def __init__(self, max_size: int = MAX_PACKET):
        self.raw = bytearray(max_size)
        self.raw[0:2] = b"\xff\xff"
        self._view = memoryview(self.raw)
        self._kernels = BufferKernels(self.raw)

    def seal(self, servo_id: int, code: int, n_params: int) -> memoryview:
        """The packet with raw[5:5 + n_params] as parameters and `code` as instruction or error."""
        raw = self.raw
        if n_params + 6 > len(raw):
            raise ValueError(f"packet of {n_params + 6} bytes exceeds {len(raw)}")
        raw[2] = servo_id
        raw[3] = n_params + 2
        raw[4] = code
        raw[5 + n_params] = self._kernels.scs_checksum(2, 5 + n_params)
        return self._packet(6 + n_params)

    def _put_address(self, p: int, address: int, length: int | None = None) -> int:
        self.raw[p] = address
        if length is None:
            return 1
        self.raw[p + 1] = length
        return 2

    def status(self, servo_id: int, error: int, data=b"") -> memoryview:
        self.raw[5:5 + len(data)] = data
        return self.seal(servo_id, error, len(data))


class SyncWritePacket(BusSyncWrite):
    """A SYNC WRITE of one register for fixed IDs, rebuilt in place each cycle (bus_packets.BusSyncWrite);
    dtype '<u2' for STS, '>u2' for SCS registers."""

    Writer, OVERHEAD = PacketWriter, 1


class PacketParser(PacketStream):
    """Finds Feetech packets in a byte stream (see bus_stream). Both directions look alike on the
    wire: status=True (host side) hands on every intact packet with its error byte as `code`
    (an error byte above 0x7F is impossible, as in the SDK); status=False (device side) with its
    instruction. A header is FF FF and an ID up to 0xFE; a bad checksum drops one byte and hunts on.
    """

    MIN_BUFFER = 512

    def _scan(self) -> None:
        buf = self._buffer
        while True:
            p, end = self._seek(b"\xff\xff"), self._tail
            if p < 0 or end - p < HEADER_SIZE + 1:
                return
            servo_id, length = buf[p + 2], buf[p + 3]
            if servo_id == 0xFF or length < 2 or (self.status and (servo_id > 0xFD or buf[p + 4] > 0x7F)):
                self._bad_header()
                continue
            size = HEADER_SIZE + length
            if end - p < size:
                return
            if self._kernels.scs_checksum(p + 2, p + size - 1) != buf[p + size - 1]:
                self._bad_crc()
                continue
            self.on_packet(servo_id, buf[p + 4], buf, p + 5, p + size - 1)
            self._accept(size)
