"""The receive side shared by the servo-bus protocols: a preallocated byte buffer that a
protocol's scanner walks, and the counters of what it rejected.

A scanner (dynamixel.PacketParser, feetech.PacketParser) finds packets in the buffer, checks
them and hands each accepted one to `on_packet(servo_id, code, buf, start, stop)`: `code` is the
instruction (device side) or the error byte (host side), the parameters are buf[start:stop],
valid until the next feed(). Nothing is allocated per packet.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._servo_wire import BufferKernels
from .rx_buffer import ReceiveBuffer


@dataclass(slots=True)
class BusStats:
    """Counters of one receive direction (plain ints, never reset).

    bytes_received = bytes of accepted and skipped packets + bytes_dropped + buffered.
    """

    bytes_received: int = 0
    packets_ok: int = 0            # accepted and handed on
    crc_errors: int = 0            # CRC-16 (Dynamixel) or checksum (Feetech) mismatch
    header_errors: int = 0         # a header pattern with an impossible ID, length or reserved byte
    skipped: int = 0               # intact packets of the other direction (e.g. the host's own echo)
    resyncs: int = 0               # times framing was lost and the scanner hunted for a header
    bytes_dropped: int = 0         # bytes that were not part of an intact packet
    unexpected_ids: int = 0        # intact packets from a servo nobody asked (counted by the consumer)
    length_errors: int = 0         # intact packets with the wrong parameter count (consumer)
    timeouts: int = 0              # expected packets that did not arrive in time (consumer)
    late: int = 0                  # intact answers that came after their read had timed out (consumer)

    @property
    def rejected(self) -> int:
        """Everything counted as bad."""
        return (self.crc_errors + self.header_errors + self.unexpected_ids + self.length_errors
                + self.timeouts)


def slot_values(raw: bytearray, offset: int, dtype, ids) -> np.ndarray:
    """The register fields of a SYNC WRITE's (ID, value) slots laid out in `raw` from `offset`: the
    IDs are written, the returned strided view takes the values (assigning it rebuilds nothing)."""
    slots = np.frombuffer(raw, dtype=np.dtype([("id", "u1"), ("v", np.dtype(dtype))]), count=len(ids),
                          offset=offset)
    slots["id"] = ids
    return slots["v"]


class PacketStream(ReceiveBuffer):
    """Buffer, feed and resynchronisation bookkeeping; subclasses implement `_scan()`. status: the
    host side (accepts status packets) or the device side (instruction packets)."""

    MIN_BUFFER = 1100

    def __init__(self, on_packet, *, status: bool = True, buffer_size: int = 4096):
        if buffer_size < self.MIN_BUFFER:
            raise ValueError(f"buffer_size must be at least {self.MIN_BUFFER}, got {buffer_size}")
        self.on_packet = on_packet
        self.status = status
        self.stats = BusStats()
        super().__init__(buffer_size)
        self._kernels = BufferKernels(self._buffer)         # checksums of the buffer, acquired once

    def reset(self) -> None:
        """Drops the held-back bytes (counted as dropped), e.g. after a timeout or a reconnect."""
        self._clear()

    def feed(self, data) -> int:
        """Consumes `data` (bytes-like, any chunking); returns the number of packets accepted."""
        before = self.stats.packets_ok
        self._fill(data)
        return self.stats.packets_ok - before

    def _bad_header(self) -> None:
        """A header pattern with an impossible field: counted, one byte dropped, hunting on."""
        self.stats.header_errors += 1
        self._drop(1)

    def _bad_crc(self) -> None:
        """A packet whose CRC or checksum does not match: counted, one byte dropped, hunting on."""
        self.stats.crc_errors += 1
        self._drop(1)

    def _skip(self, size: int) -> None:
        """Skips an intact packet that is not for this side."""
        self._head += size
        self.stats.skipped += 1
        self.stats.bytes_dropped += size
        self._hunting = False

    def _accept(self, size: int) -> None:
        self._head += size
        self.stats.packets_ok += 1
        self._hunting = False
