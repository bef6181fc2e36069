"""Byte kernels of the servo-bus protocols (Dynamixel Protocol 2.0, Feetech SCS/STS), GIL-free.

Hand-written because they run per packet on the driver's hot path and must allocate nothing:
the CRC-16 of Protocol 2.0 (polynomial 0x8005, initial value 0, not reflected, no final xor:
CRC-16/UMTS, check value crc16(b"123456789") == 0xFEE8), its byte stuffing (an extra 0xFD after
every FF FF FD in the instruction and parameters), the Feetech checksum (the complement of the
byte sum), and read(2) straight into a receive buffer (`read_into`: no bytes object per read).
"""
import os

from libc.errno cimport EAGAIN, EINTR, errno
from posix.unistd cimport read

cdef unsigned short CRC_TABLE[256]


cdef void _make_table():
    cdef unsigned int byte, bit, crc
    for byte in range(256):
        crc = byte << 8
        for bit in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else (crc << 1)
        CRC_TABLE[byte] = crc & 0xFFFF


_make_table()


cdef inline unsigned short _crc16(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef unsigned short crc = 0
    cdef Py_ssize_t i
    for i in range(n):
        crc = ((crc << 8) ^ CRC_TABLE[((crc >> 8) ^ p[i]) & 0xFF]) & 0xFFFF
    return crc


cdef unsigned short _crc16_range(const unsigned char[::1] data, Py_ssize_t start, Py_ssize_t stop) except? 0xFFFF:
    if not 0 <= start <= stop <= data.shape[0]:
        raise IndexError(f"bad range [{start}:{stop}] of {data.shape[0]} bytes")
    cdef unsigned short crc = 0
    if stop > start:
        with nogil:
            crc = _crc16(&data[start], stop - start)
    return crc


def crc16(const unsigned char[::1] data, Py_ssize_t start=0, Py_ssize_t stop=-1) -> int:
    """CRC-16/UMTS of data[start:stop] (stop -1: to the end)."""
    return _crc16_range(data, start, data.shape[0] if stop < 0 else stop)


def dxl_finish(const unsigned char[::1] raw, Py_ssize_t body_end, unsigned char[::1] out) -> int:
    """Stuffs and seals a Protocol 2.0 packet; returns its size in `out`.

    raw[0:7] is the header (FF FF FD 00, ID, two length bytes, ignored), raw[7:body_end] the
    instruction and parameters. out receives the header, the stuffed body, the length field
    (stuffed body + 2) and the CRC-16 of everything before it, as the SDK's txPacket does.
    """
    return _dxl_finish(raw, body_end, out)


cdef Py_ssize_t _dxl_finish(const unsigned char[::1] raw, Py_ssize_t body_end, unsigned char[::1] out) except -1:
    cdef Py_ssize_t i, j, n_out = out.shape[0]
    cdef bint overflow = False
    cdef unsigned short crc
    if body_end < 8 or body_end > raw.shape[0]:
        raise IndexError(f"packet body ends at {body_end}, outside 8..{raw.shape[0]}")
    with nogil:
        for i in range(7):
            out[i] = raw[i]
        j = 7
        for i in range(7, body_end):
            if j + 4 > n_out:
                overflow = True
                break
            out[j] = raw[i]
            j += 1
            if raw[i] == 0xFD and raw[i - 1] == 0xFF and raw[i - 2] == 0xFF:
                out[j] = 0xFD
                j += 1
    if overflow:
        raise IndexError(f"output buffer of {n_out} bytes too small for the stuffed packet")
    out[5] = (j - 7 + 2) & 0xFF
    out[6] = (j - 7 + 2) >> 8
    with nogil:
        crc = _crc16(&out[0], j)
    out[j] = crc & 0xFF
    out[j + 1] = crc >> 8
    return j + 2


def dxl_unstuff(unsigned char[::1] buf, Py_ssize_t start, Py_ssize_t stop) -> int:
    """Removes stuffing from buf[start:stop] in place (FF FF FD FD -> FF FF FD); returns the new stop.

    The two bytes before `start` take part in the pattern, as in the packet (start >= 2)."""
    cdef Py_ssize_t i, j
    if start < 2 or stop > buf.shape[0] or stop < start:
        raise IndexError(f"bad range [{start}:{stop}] of {buf.shape[0]} bytes")
    j = start
    with nogil:
        i = start
        while i < stop:
            buf[j] = buf[i]
            if buf[i] == 0xFD and i + 1 < stop and buf[i + 1] == 0xFD and j >= 2 \
                    and buf[j - 1] == 0xFF and buf[j - 2] == 0xFF:
                i += 1          # skip the stuffed 0xFD
            i += 1
            j += 1
    return j


def scs_checksum(const unsigned char[::1] data, Py_ssize_t start, Py_ssize_t stop) -> int:
    """Feetech checksum: ~(sum of data[start:stop]) & 0xFF."""
    return _scs_checksum(data, start, stop)


cdef int _scs_checksum(const unsigned char[::1] data, Py_ssize_t start, Py_ssize_t stop) except -1:
    cdef Py_ssize_t i
    cdef unsigned int total = 0
    if not 0 <= start <= stop <= data.shape[0]:
        raise IndexError(f"bad range [{start}:{stop}] of {data.shape[0]} bytes")
    with nogil:
        for i in range(start, stop):
            total += data[i]
    return (~total) & 0xFF


cdef class BufferKernels:
    """crc16, scs_checksum and dxl_finish bound to one buffer `buf` (and `out`, dxl_finish's output),
    so that a call acquires no buffer and allocates nothing: for the buffers a packet writer or a
    parser keeps for its lifetime."""

    cdef const unsigned char[::1] buf
    cdef unsigned char[::1] out

    def __init__(self, const unsigned char[::1] buf, unsigned char[::1] out=None):
        self.buf = buf
        if out is not None:
            self.out = out

    def crc16(self, Py_ssize_t start, Py_ssize_t stop) -> int:
        return _crc16_range(self.buf, start, stop)

    def scs_checksum(self, Py_ssize_t start, Py_ssize_t stop) -> int:
        return _scs_checksum(self.buf, start, stop)

    def dxl_finish(self, Py_ssize_t body_end) -> int:
        if self.out is None:
            raise ValueError("BufferKernels.dxl_finish needs an output buffer")
        return _dxl_finish(self.buf, body_end, self.out)


cdef class SyncReadTaker:
    """Takes the Protocol 2.0 status packets that answer a SYNC READ of rows.shape[1] bytes from
    the receive buffer `buf`, one after the other, into the consumer's arrays. The arrays are bound
    here once, so that a take() acquires no buffer and allocates nothing.

    A packet is taken when it is whole, its header is FF FF FD 00, its length 4 + rows.shape[1],
    its instruction STATUS, its ID k = slot[ID] >= 0, its CRC-16 right and its parameters hold no
    stuffing (FF FF FD) and servo k has not answered this read yet (received[k] == 0); then
    rows[k] = data, errors[k] = error byte, received[k] = 1. The first packet that is not (or is not
    whole yet) ends the run: the caller's general scanner takes it from there.
    """
    cdef const unsigned char[::1] buf
    cdef const Py_ssize_t[::1] slot
    cdef unsigned char[:, ::1] rows
    cdef unsigned char[::1] errors, received
    cdef public Py_ssize_t packets      # packets (servos answered) the last take() took

    def __init__(self, const unsigned char[::1] buf, const Py_ssize_t[::1] slot, unsigned char[:, ::1] rows,
                 unsigned char[::1] errors, unsigned char[::1] received):
        if slot.shape[0] < 256 or errors.shape[0] < rows.shape[0] or received.shape[0] < rows.shape[0]:
            raise IndexError("SyncReadTaker: a slot table of 256 IDs and errors, received for every row")
        for k in range(256):
            if slot[k] >= rows.shape[0]:
                raise IndexError(f"SyncReadTaker: slot[{k}] = {slot[k]} beyond the {rows.shape[0]} rows")
        self.buf, self.slot, self.rows, self.errors, self.received = buf, slot, rows, errors, received
        self.packets = 0

    def take(self, Py_ssize_t head, Py_ssize_t tail) -> int:
        """Takes the answers at buf[head:tail]; returns the bytes taken (whole packets)."""
        cdef Py_ssize_t width = self.rows.shape[1], size = 11 + width, p = head, i, k, taken = 0
        cdef unsigned short crc
        cdef const unsigned char[::1] buf = self.buf
        if head < 0 or tail > buf.shape[0] or head > tail:
            raise IndexError(f"SyncReadTaker.take: bad range [{head}:{tail}] of {buf.shape[0]} bytes")
        with nogil:
            while tail - p >= size:
                if (buf[p] != 0xFF or buf[p + 1] != 0xFF or buf[p + 2] != 0xFD or buf[p + 3] != 0
                        or buf[p + 5] != ((size - 7) & 0xFF) or buf[p + 6] != ((size - 7) >> 8)
                        or buf[p + 7] != 0x55):
                    break
                k = self.slot[buf[p + 4]]
                if k < 0 or self.received[k]:     # a repeat: the scanner and its consumer's rules
                    break
                crc = _crc16(&buf[p], size - 2)
                if buf[p + size - 2] != (crc & 0xFF) or buf[p + size - 1] != (crc >> 8):
                    break
                for i in range(p + 7, p + size - 4):
                    if buf[i] == 0xFF and buf[i + 1] == 0xFF and buf[i + 2] == 0xFD:
                        break
                else:
                    self.errors[k] = buf[p + 8]
                    for i in range(width):
                        self.rows[k, i] = buf[p + 9 + i]
                    self.received[k] = 1
                    taken += 1
                    p += size
                    continue
                break
        self.packets = taken
        return p - head


def read_into(int fd, size_t address, Py_ssize_t count) -> int:
    """read(2) of up to `count` bytes from `fd` into the memory at `address`, without the GIL: the
    bytes read (0: end of file), -1 when none are there (EAGAIN, EINTR); other errors raise OSError.

    `address` must be that of a buffer of at least `count` bytes that cannot move (an exported
    bytearray, as rx_buffer.ReceiveBuffer pins its own): the caller owns that check.
    """
    cdef ssize_t n
    cdef int err
    if count < 0:
        raise ValueError(f"read_into: count {count} < 0")
    with nogil:
        n = read(fd, <void*>address, <size_t>count)
    if n >= 0:
        return n
    err = errno
    if err == EAGAIN or err == EINTR:                # EWOULDBLOCK is EAGAIN on Linux
        return -1
    raise OSError(err, os.strerror(err))
