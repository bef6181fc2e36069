"""CRC-32/ISO-HDLC (the zlib/Ethernet CRC) used by the frame trailer.

Parameters: poly 0x04C11DB7 (reflected 0xEDB88320), init 0xFFFFFFFF, reflected in and out,
xorout 0xFFFFFFFF; check value crc32(b"123456789") == 0xCBF43926.
`crc32` is zlib's C implementation; `crc32_reference` is the table-driven loop a firmware
implements, kept as the independent check of the definition (and for porting).
"""
import zlib

CRC32_CHECK = 0xCBF43926
_POLY_REFLECTED = 0xEDB88320


def _make_table() -> tuple:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY_REFLECTED if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


CRC32_TABLE = _make_table()

crc32 = zlib.crc32  # crc32(data) -> int in [0, 2**32), accepts any contiguous buffer


def crc32_reference(data) -> int:
    """CRC-32 of `data` with the 256-entry table, one byte at a time (slow; for checks)."""
    crc = 0xFFFFFFFF
    for byte in bytes(data):
        crc = CRC32_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
