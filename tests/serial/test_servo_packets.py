"""Our Protocol 2.0 and Feetech packets byte for byte against the packets the official SDKs write
for the same operation (captured from a real pty), and the wire kernels against their definitions."""
import numpy as np
import pytest
from drivers.serial._servo_wire import crc16, dxl_finish, dxl_unstuff, scs_checksum

from drivers.serial import dynamixel as dxl
from drivers.serial import feetech as ft

from .servo_helpers import PtyPair

dxl_sdk = pytest.importorskip("dynamixel_sdk", reason="dynamixel-sdk (make test installs it) is the peer")
scs = pytest.importorskip("scservo_sdk", reason="feetech-servo-sdk (make test installs it) is the peer")


def restuffed(sdk_packet: bytes) -> bytes:
    """The SDK's packet with the byte stuffing Protocol 2.0 requires. dynamixel_sdk 4.1.0 sends
    packets whose stuffing would change their length unstuffed (txPacket drops addStuffing's new
    list), so a value with FF FF FD in it goes out against the spec; ours follows the spec."""
    out = bytearray(2 * len(sdk_packet))
    return bytes(out[:dxl_finish(sdk_packet[:-2], len(sdk_packet) - 2, out)])


def sdk_port(sdk, protocol):
    """(pty, the SDK's PortHandler open on it, its PacketHandler(protocol)), closed after the test."""
    pty = PtyPair()
    port = sdk.PortHandler(pty.path)
    assert port.openPort()
    yield pty, port, sdk.PacketHandler(protocol)
    port.closePort()
    pty.close()


@pytest.fixture
def dxl_port():
    yield from sdk_port(dxl_sdk, 2.0)


@pytest.fixture
def ft_port():
    yield from sdk_port(scs, 0)


def test_crc16_check_value_and_sdk_table():
    assert crc16(b"123456789") == 0xFEE8                # CRC-16/UMTS check value
    ph = dxl_sdk.PacketHandler(2.0)
    rng = np.random.default_rng(1)
    for n in (0, 1, 7, 64, 300):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert crc16(data) == ph.updateCRC(0, list(data), n)
    assert scs_checksum(b"\x01\x02\x03", 0, 3) == (~6) & 0xFF


def test_stuffing_matches_sdk_and_round_trips():
    ph = dxl_sdk.PacketHandler(2.0)
    rng = np.random.default_rng(2)
    for _ in range(200):
        body = list(rng.choice([0xFF, 0xFD, 0x00, 0x12], size=int(rng.integers(1, 40))))
        raw = bytearray(b"\xff\xff\xfd\x00\x01\x00\x00") + bytes(body)
        out = bytearray(256)
        size = dxl_finish(raw, len(raw), out)
        sdk = list(raw) + [0, 0]
        sdk[5], sdk[6] = (len(body) + 2) & 0xFF, (len(body) + 2) >> 8
        sdk = ph.addStuffing(sdk)
        n = sdk[5] | sdk[6] << 8
        assert bytes(out[:size - 2]) == bytes(sdk[:7 + n - 2])
        assert crc16(out, 0, size - 2) == out[size - 2] | out[size - 1] << 8
        stop = dxl_unstuff(out, 7, size - 2)
        assert bytes(out[7:stop]) == bytes(body)


def test_dynamixel_instructions_match_sdk(dxl_port):
    pty, port, ph = dxl_port
    w = dxl.PacketWriter()
    ph.readTx(port, 3, 132, 4)
    port.is_using = False                               # readTx leaves the port to readRx
    assert pty.read_all() == bytes(w.read(3, 132, 4))
    data = [0xFF, 0xFF, 0xFD, 0x00]                     # needs stuffing
    ph.writeTxOnly(port, 7, 116, 4, data)
    sdk = pty.read_all()
    assert sdk != bytes(w.write(7, 116, bytes(data))) and restuffed(sdk) == bytes(w.write(7, 116, bytes(data)))
    ph.writeTxOnly(port, 7, 116, 4, [0, 8, 0, 0])
    assert pty.read_all() == bytes(w.write(7, 116, bytes([0, 8, 0, 0])))
    ph.regWriteTxOnly(port, 7, 64, 1, [1])
    assert pty.read_all() == bytes(w.write(7, 64, b"\x01", dxl.Instruction.REG_WRITE))
    for fast in (False, True):
        ph.syncReadTx(port, 126, 10, [1, 2, 3, 4, 5, 6], 6, fast)
        port.is_using = False
        assert pty.read_all() == bytes(w.sync_read(126, 10, [1, 2, 3, 4, 5, 6], fast=fast))
    param = [1, 132, 0, 4, 0, 2, 126, 0, 2, 0]
    ph.bulkReadTx(port, param, len(param), False)
    port.is_using = False
    assert pty.read_all() == bytes(w.bulk_read([(1, 132, 4), (2, 126, 2)]))
    ph.ping(port, 9)                                    # times out: nobody answers
    assert pty.read_all() == bytes(w.ping(9))
    ph.reboot(port, 4)
    assert pty.read_all() == bytes(w.reboot(4))


def test_dynamixel_group_sync_write_matches_sdk(dxl_port):
    pty, port, ph = dxl_port
    ids = [1, 2, 3, 4, 5, 6]
    currents = [-3, 250, -1193, 0, 0xFF, -515]          # -3 = FD FF: stuffing across slots
    group = dxl_sdk.GroupSyncWrite(port, ph, 102, 2)
    for i, c in zip(ids, currents):
        group.addParam(i, list((c & 0xFFFF).to_bytes(2, "little")))
    group.txPacket()
    ours = dxl.SyncWritePacket(102, "<i2", ids)
    ours.values[:] = currents
    assert pty.read_all() == bytes(ours.seal())
    positions = [0, 4095, 2048, 0x00FDFFFF, 1, 2]
    group = dxl_sdk.GroupSyncWrite(port, ph, 116, 4)
    for i, p in zip(ids, positions):
        group.addParam(i, list(p.to_bytes(4, "little")))
    group.txPacket()
    ours = dxl.SyncWritePacket(116, "<i4", ids)
    ours.values[:] = positions
    assert restuffed(pty.read_all()) == bytes(ours.seal())


def test_feetech_instructions_match_sdk(ft_port):
    pty, port, ph = ft_port
    w = ft.PacketWriter()
    ph.readTx(port, 3, 56, 8)
    port.is_using = False
    assert pty.read_all() == bytes(w.read(3, 56, 8))
    ph.writeTxOnly(port, 2, 42, 2, [0x00, 0x08])
    assert pty.read_all() == bytes(w.write(2, 42, b"\x00\x08"))
    ph.syncReadTx(port, 56, 4, [1, 2, 3, 4, 5, 6], 6)
    port.is_using = False
    assert pty.read_all() == bytes(w.sync_read(56, 4, [1, 2, 3, 4, 5, 6]))
    ph.ping(port, 5)
    assert pty.read_all() == bytes(w.ping(5))
    ids = [1, 2, 3, 4, 5, 6]
    goals = [0, 4095, 2048, 1000, 3000, 77]
    group = scs.GroupSyncWrite(port, ph, 42, 2)
    for i, g in zip(ids, goals):
        group.addParam(i, [scs.SCS_LOBYTE(g), scs.SCS_HIBYTE(g)])
    group.txPacket()
    ours = ft.SyncWritePacket(42, "<u2", ids)
    ours.values[:] = goals
    assert pty.read_all() == bytes(ours.seal())


def test_sync_write_packet_allocates_nothing_per_cycle():
    ours = dxl.SyncWritePacket(102, "<i2", [1, 2, 3, 4, 5, 6])
    buf_before = ours.writer.raw
    for value in range(-50, 50):
        ours.values[:] = value
        packet = ours.seal()
    assert ours.writer.raw is buf_before and packet.obj is ours.writer._out
