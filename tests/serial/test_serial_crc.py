"""CRC-32/ISO-HDLC: published check value, table, and zlib against the table-driven loop."""
import binascii

from drivers.serial.crc import CRC32_CHECK, CRC32_TABLE, crc32, crc32_reference


def test_check_value_of_standard_string():
    assert CRC32_CHECK == 0xCBF43926
    assert crc32(b"123456789") == CRC32_CHECK
    assert crc32_reference(b"123456789") == CRC32_CHECK


def test_table_matches_published_entries():
    assert len(CRC32_TABLE) == 256
    assert CRC32_TABLE[0] == 0
    assert CRC32_TABLE[1] == 0x77073096
    assert CRC32_TABLE[128] == 0xEDB88320
    assert CRC32_TABLE[255] == 0x2D02EF8D


def test_zlib_equals_table_loop_on_random_data(rng):
    for length in (0, 1, 2, 7, 12, 52, 112, 688):
        data = rng.integers(0, 256, length, dtype="u1").tobytes()
        assert crc32(memoryview(data)) == crc32_reference(data)


def test_binascii_crc_hqx_variants_named_in_the_spec():
    # docs/serial_protocol.md explains why CRC-16 was not chosen; these are the variants it names.
    assert binascii.crc_hqx(b"123456789", 0xFFFF) == 0x29B1  # CRC-16/CCITT-FALSE
    assert binascii.crc_hqx(b"123456789", 0x0000) == 0x31C3  # CRC-16/XMODEM
