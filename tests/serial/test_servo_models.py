"""Control tables and unit conversions of the servo models, and our parser on a FAST SYNC READ answer."""
import math

import pytest
from drivers.serial._servo_wire import crc16

from drivers.serial import dynamixel as dxl
from drivers.serial.servo_models import MODELS, STS3215, XL330_M288, XL430_W250, XM430_W350, model


def test_tables_have_no_overlaps_and_the_key_registers():
    for m in MODELS.values():
        regs = sorted(m.registers.values(), key=lambda r: r.address)
        for a, b in zip(regs, regs[1:]):
            assert a.address + a.size <= b.address, (m.name, a.name, b.name)
        for name in ("model_number", "id", "baud_rate", "return_delay_time", "operating_mode", "torque_enable",
                     "goal_position", "present_position", "present_velocity", "present_temperature",
                     "present_input_voltage", "hardware_error_status", "min_position_limit", "max_position_limit",
                     "status_return_level"):
            assert name in m.registers, (m.name, name)
    assert [m.reg("goal_current").address for m in (XL330_M288, XM430_W350)] == [102, 102]
    assert "goal_current" not in XL430_W250.registers and not XL430_W250.has_current_control
    assert XM430_W350.reg("operating_mode").eeprom and not XM430_W350.reg("torque_enable").eeprom
    for m in (XL330_M288, XL430_W250, XM430_W350):                                     # e-manual: Bus Watchdog
        wd = m.reg("bus_watchdog")
        assert (wd.address, wd.size, wd.eeprom, wd.low, wd.high) == (98, 1, False, 0, 127)
    assert "bus_watchdog" not in STS3215.registers                                     # the STS has none
    assert not XM430_W350.reg("present_position").writable
    assert model("xm430-w350") is XM430_W350
    with pytest.raises(KeyError, match="unknown servo model 'XM540'"):
        model("XM540")


def test_conversions():
    assert XM430_W350.ticks_to_rad(2048 + 1024) == pytest.approx(math.pi / 2)
    assert XM430_W350.rad_to_ticks(-math.pi) == pytest.approx(0.0)
    assert XM430_W350.velocity_unit == pytest.approx(0.229 * 2 * math.pi / 60)
    assert XM430_W350.current_unit * 1193 == pytest.approx(3.209, abs=1e-3)              # the default current limit
    assert XM430_W350.torque_constant * 2.3 == pytest.approx(4.1)                        # stall torque at stall current
    assert STS3215.velocity_unit * 4096 == pytest.approx(2 * math.pi)                    # 1 step/s


def test_sign_encodings():
    for value in (-2047, -1, 0, 1, 2047):                                                # Feetech sign-magnitude
        raw = STS3215.encode("homing_offset", value)
        assert raw >> 11 == (value < 0) and STS3215.decode("homing_offset", raw) == value
    assert STS3215.encode("present_velocity", -5) == 0x8005
    assert XM430_W350.encode("goal_current", -3) == 0xFFFD                               # two's complement
    assert XM430_W350.decode("present_position", 0xFFFFFFFF) == -1
    assert XM430_W350.decode("goal_position", 4095) == 4095
    assert XM430_W350.decode("bus_watchdog", 0xFF) == -1 and XM430_W350.encode("bus_watchdog", -1) == 0xFF


def test_parser_hands_on_a_fast_sync_read_answer_as_sent():
    # error, ID, data, running CRC per servo; the last CRC closes the packet (docs/servo_bus.md)
    pkt = bytearray(b"\xff\xff\xfd\x00\xfe\x00\x00\x55")
    rows = [(0, 1, b"\x00\x08\x00\x00"), (0x80, 2, b"\xff\xff\xfd\x00")]              # the 2nd needs no stuffing
    for error, i, data in rows:
        pkt += bytes((error, i)) + data
        pkt += crc16(bytes(pkt)).to_bytes(2, "little")
    pkt[5:7] = (len(pkt) - 7).to_bytes(2, "little")
    # the length field changed: the running CRCs were computed with 00 00, so recompute them in order
    q = 8
    for error, i, data in rows:
        q += 2 + len(data)
        pkt[q:q + 2] = crc16(bytes(pkt[:q])).to_bytes(2, "little")
        q += 2
    got = []
    parser = dxl.PacketParser(lambda i, e, buf, a, b: got.append((i, e, bytes(buf[a - 1:b]))), status=True)
    parser.feed(bytes(pkt))
    assert got and got[0][0] == dxl.BROADCAST_ID
    body = got[0][2]
    assert body[:6] == bytes((0, 1)) + rows[0][2] and body[8:14] == bytes((0x80, 2)) + rows[1][2]
