"""Byte kernels of the servo-bus protocols (Dynamixel Protocol 2.0, Feetech SCS/STS), GIL-free.

Hand-written because they run per packet on the driver's hot path and must allocate nothing:
the CRC-16 of Protocol 2.0 (polynomial 0x8005, initial value 0, not reflected, no final xor:
CRC-16/UMTS, check value crc16(b"123456789") == 0xFEE8), its byte stuffing (an extra 0xFD after
every FF FF FD in the instruction and parameters) and the Feetech checksum (the complement of the
byte sum).
"""

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


def crc16(const unsigned char[::1] data, Py_ssize_t start=0, Py_ssize_t stop=-1) -> int:
    """CRC-16/UMTS of data[start:stop] (stop -1: to the end)."""
    if stop < 0:
        stop = data.shape[0]
    if not 0 <= start <= stop <= data.shape[0]:
        raise IndexError(f"bad range [{start}:{stop}] of {data.shape[0]} bytes")
    cdef unsigned short crc = 0
    if stop > start:
        with nogil:
            crc = _crc16(&data[start], stop - start)
    return crc


def dxl_finish(const unsigned char[::1] raw, Py_ssize_t body_end, unsigned char[::1] out) -> int:
    """Stuffs and seals a Protocol 2.0 packet; returns its size in `out`.

    raw[0:7] is the header (FF FF FD 00, ID, two length bytes, ignored), raw[7:body_end] the
    instruction and parameters. out receives the header, the stuffed body, the length field
    (stuffed body + 2) and the CRC-16 of everything before it, as the SDK's txPacket does.
    """
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
    cdef Py_ssize_t i
    cdef unsigned int total = 0
    if not 0 <= start <= stop <= data.shape[0]:
        raise IndexError(f"bad range [{start}:{stop}] of {data.shape[0]} bytes")
    with nogil:
        for i in range(start, stop):
            total += data[i]
    return (~total) & 0xFF
