"""The transmit side shared by the servo-bus protocols: instruction packets built in one
preallocated buffer, and the SYNC WRITE of one register rebuilt in place each cycle.

A protocol (dynamixel, feetech) gives where the parameters start (PARAMS), how it writes a
register address and length (`_put_address`), how it seals a packet (`seal`: length, checksum or
CRC, stuffing) and its Instruction codes; the instructions both protocols have are built here.
"""
from __future__ import annotations

import numpy as np

from .bus_stream import slot_values


class BusPacketWriter:
    """Builds packets in `raw`; each method returns a memoryview of the sealed packet, valid until
    the next call. Parameters go into `raw` from PARAMS."""

    PARAMS = 0              # offset of the parameters in raw
    ADDRESS_SIZE = 0        # bytes of a register address and length
    BROADCAST_ID = 0xFE
    Instruction = None
    _view = None            # the buffer sealed packets are views of
    _sealed = None          # the view of the last size sealed: reused, no memoryview made per packet

    def _packet(self, size: int) -> memoryview:
        """The first `size` bytes of _view (the same view object while the size repeats)."""
        if self._sealed is None or len(self._sealed) != size:
            self._sealed = self._view[:size]
        return self._sealed

    def seal(self, servo_id: int, code: int, n_params: int) -> memoryview:
        raise NotImplementedError

    def _put_address(self, p: int, address: int, length: int | None = None) -> int:
        """Writes a register address (and a length) at raw[p:]; returns the bytes written."""
        raise NotImplementedError

    def ping(self, servo_id: int) -> memoryview:
        return self.seal(servo_id, self.Instruction.PING, 0)

    def read(self, servo_id: int, address: int, length: int) -> memoryview:
        return self.seal(servo_id, self.Instruction.READ, self._put_address(self.PARAMS, address, length))

    def write(self, servo_id: int, address: int, data, instruction: int | None = None) -> memoryview:
        """WRITE (or `instruction`, e.g. REG_WRITE) of `data` from `address`."""
        p = self.PARAMS + self._put_address(self.PARAMS, address)
        self.raw[p:p + len(data)] = data
        return self.seal(servo_id, self.Instruction.WRITE if instruction is None else instruction,
                         p + len(data) - self.PARAMS)

    def sync_read(self, address: int, length: int, ids, instruction: int | None = None) -> memoryview:
        p = self.PARAMS + self._put_address(self.PARAMS, address, length)
        self.raw[p:p + len(ids)] = bytes(ids)
        return self.seal(self.BROADCAST_ID, self.Instruction.SYNC_READ if instruction is None else instruction,
                         p + len(ids) - self.PARAMS)

    def sync_write(self, address: int, length: int, rows) -> memoryview:
        """rows: (id, data bytes of `length`) pairs."""
        p = self.PARAMS + self._put_address(self.PARAMS, address, length)
        for servo_id, data in rows:
            if len(data) != length:
                raise ValueError(f"SYNC WRITE data of ID {servo_id} has {len(data)} bytes, expected {length}")
            self.raw[p] = servo_id
            self.raw[p + 1:p + 1 + length] = data
            p += 1 + length
        return self.seal(self.BROADCAST_ID, self.Instruction.SYNC_WRITE, p - self.PARAMS)


class BusSyncWrite:
    """A SYNC WRITE of one register for fixed IDs, rebuilt in place every cycle without allocating.

    `values` is a numpy view of the register field of each ID's slot (dtype e.g. '<i4');
    assign it (``np.copyto(p.values, ticks, casting='unsafe')``) and send `seal()`. Subclasses
    name the protocol's Writer and its packet size beyond the parameters (OVERHEAD)."""

    Writer = BusPacketWriter
    OVERHEAD = 0

    def __init__(self, address: int, dtype, ids):
        dtype = np.dtype(dtype)
        start = self.Writer.PARAMS
        self._n_params = self.Writer.ADDRESS_SIZE + len(ids) * (1 + dtype.itemsize)
        self.writer = self.Writer(start + self._n_params + self.OVERHEAD)
        head = self.writer._put_address(start, address, dtype.itemsize)
        self.values = slot_values(self.writer.raw, start + head, dtype, ids)

    def seal(self) -> memoryview:
        return self.writer.seal(self.Writer.BROADCAST_ID, self.Writer.Instruction.SYNC_WRITE, self._n_params)
