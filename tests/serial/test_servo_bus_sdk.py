"""The official SDKs (dynamixel_sdk, scservo_sdk) as clients of the simulated servo bus over a real
pty: ping, read/write of each model's key registers, the firmware's refusals, group sync read /
write, fast sync read, bulk read, reboot, the status return level, the return delay, the Bus
Watchdog, Feetech's error bits and its EEPROM lock."""
import statistics
import time

import pytest

from drivers.serial.servo_bus import SimulatedServoBus
from drivers.serial.servo_models import STS3215, XL330_M288, XL430_W250, XM430_W350
from drivers.serial.servo_sim import SimulatedServo

dxl_sdk = pytest.importorskip("dynamixel_sdk", reason="dynamixel-sdk (make test installs it) is the peer")
scs = pytest.importorskip("scservo_sdk", reason="feetech-servo-sdk (make test installs it) is the peer")

DXL_MODELS = {1: XM430_W350, 2: XL330_M288, 3: XL430_W250}


@pytest.fixture(autouse=True)
def slow_adapter(monkeypatch):
    """The SDKs wait 2 x LATENCY_TIMER (a USB adapter's, 16 ms) + 2 ms for an answer; on a loaded
    2-core machine the simulated bus's thread can miss that, so the tests give it 100 ms."""
    monkeypatch.setattr(dxl_sdk.port_handler, "LATENCY_TIMER", 100)
    monkeypatch.setattr(scs.port_handler, "LATENCY_TIMER", 100)


@pytest.fixture
def dxl_bus(tmp_path):
    servos = [SimulatedServo(m, i) for i, m in DXL_MODELS.items()]
    for s in servos:
        s.set("return_delay_time", 0)
    bus = SimulatedServoBus("dynamixel", servos, tmp_path / "dxl").start()
    port = dxl_sdk.PortHandler(str(tmp_path / "dxl"))
    assert port.openPort()
    yield bus, port, dxl_sdk.PacketHandler(2.0)
    port.closePort()
    bus.stop()


@pytest.fixture
def ft_bus(tmp_path):
    bus = SimulatedServoBus("feetech", [SimulatedServo(STS3215, i) for i in (1, 2, 3)], tmp_path / "ft").start()
    port = scs.PortHandler(str(tmp_path / "ft"))
    assert port.openPort()
    yield bus, port, scs.PacketHandler(0)
    port.closePort()
    bus.stop()


def _read(ph, port, i, reg):
    fn = {1: ph.read1ByteTxRx, 2: ph.read2ByteTxRx, 4: ph.read4ByteTxRx}[reg.size]
    return fn(port, i, reg.address)


def test_dynamixel_ping_and_every_register_default(dxl_bus):
    bus, port, ph = dxl_bus
    for i, m in DXL_MODELS.items():
        assert ph.ping(port, i) == (m.model_number, dxl_sdk.COMM_SUCCESS, 0)
        for reg in m.registers.values():
            value, result, error = _read(ph, port, i, reg)
            assert (result, error) == (dxl_sdk.COMM_SUCCESS, 0), reg.name
            expected = bus.servo(i).get(reg.name) if reg.name != "return_delay_time" else 0
            assert m.decode(reg.name, value) == expected, (m.name, reg.name)
    assert ph.ping(port, 9)[1] == dxl_sdk.COMM_RX_TIMEOUT
    assert "goal_current" not in XL430_W250.registers and "present_load" in XL430_W250.registers


def test_dynamixel_firmware_rules(dxl_bus):
    bus, port, ph = dxl_bus
    mode, torque, goal_current = (XM430_W350.reg(n).address for n in ("operating_mode", "torque_enable",
                                                                      "goal_current"))
    assert ph.write1ByteTxRx(port, 1, mode, 0) == (0, 0)                  # current mode, torque off: fine
    assert ph.write1ByteTxRx(port, 1, mode, 2)[1] == 4                    # no mode 2: DATA_RANGE
    assert ph.write1ByteTxRx(port, 1, torque, 1) == (0, 0)
    assert ph.write1ByteTxRx(port, 1, mode, 3)[1] == 7                    # EEPROM with torque on: ACCESS
    assert ph.read1ByteTxRx(port, 1, mode)[0] == 0
    assert ph.write2ByteTxRx(port, 1, goal_current, 2000)[1] == 6         # beyond current_limit: DATA_LIMIT
    assert ph.write1ByteTxRx(port, 1, 132, 5)[1] == 7                     # read-only: ACCESS
    assert ph.write1ByteTxRx(port, 1, 116, 5)[1] == 5                     # part of goal_position: DATA_LENGTH
    assert ph.write2ByteTxRx(port, 1, goal_current, (-200) & 0xFFFF) == (0, 0)
    time.sleep(0.2)
    velocity = XM430_W350.decode("present_velocity", ph.read4ByteTxRx(port, 1, 128)[0])
    assert velocity < 0                                                   # the current loop turns it
    bus.servo(1).fault(0x20)                                              # overload
    value, result, error = ph.read1ByteTxRx(port, 1, 70)
    assert (value, error & 0x80) == (0x20, 0x80) and ph.read1ByteTxRx(port, 1, torque)[0] == 0
    assert ph.reboot(port, 1) == (0, 0x80)
    assert ph.read1ByteTxRx(port, 1, 70) == (0, 0, 0)                     # reboot cleared it
    assert ph.read1ByteTxRx(port, 1, mode)[0] == 0                        # EEPROM kept


def test_dynamixel_status_return_level(dxl_bus):
    bus, port, ph = dxl_bus
    assert ph.write1ByteTxRx(port, 2, 68, 1) == (0, 0)                    # answered before it applies
    assert ph.write1ByteTxRx(port, 2, 65, 1)[0] == dxl_sdk.COMM_RX_TIMEOUT
    assert ph.read1ByteTxRx(port, 2, 65) == (1, 0, 0)                     # level 1 still answers reads
    assert bus.servo(2).get("led") == 1


def test_dynamixel_group_sync_read_write_fast_and_bulk(dxl_bus):
    bus, port, ph = dxl_bus
    ids = list(DXL_MODELS)
    for i in ids:
        assert ph.write1ByteTxRx(port, i, 64, 1) == (0, 0)
    write = dxl_sdk.GroupSyncWrite(port, ph, 116, 4)
    for k, i in enumerate(ids):
        write.addParam(i, list((2048 + 300 * (k + 1)).to_bytes(4, "little")))
    assert write.txPacket() == dxl_sdk.COMM_SUCCESS
    time.sleep(1.0)
    read = dxl_sdk.GroupSyncRead(port, ph, 126, 10)
    for i in ids:
        read.addParam(i)
    assert read.txRxPacket() == dxl_sdk.COMM_SUCCESS
    positions = [read.getData(i, 132, 4) for i in ids]
    for k, i in enumerate(ids):
        assert abs(positions[k] - (2048 + 300 * (k + 1))) < 60, positions
        assert positions[k] == pytest.approx(bus.servo(i).get("present_position"), abs=30)
    assert read.fastSyncRead() == dxl_sdk.COMM_SUCCESS
    assert [read.getData(i, 132, 4) for i in ids] == pytest.approx(positions, abs=30)
    bulk = dxl_sdk.GroupBulkRead(port, ph)
    assert bulk.addParam(1, 132, 4) and bulk.addParam(3, 146, 1)
    assert bulk.txRxPacket() == dxl_sdk.COMM_SUCCESS
    assert bulk.getData(3, 146, 1) == 25
    assert bulk.getData(1, 132, 4) == pytest.approx(positions[0], abs=30)


def test_feetech_sdk_ping_registers_sync_read_write(ft_bus):
    bus, port, ph = ft_bus
    for i in (1, 2, 3):
        assert ph.ping(port, i) == (777, scs.COMM_SUCCESS, 0)
    for reg in STS3215.registers.values():
        value, result, _ = _read(ph, port, 1, reg)
        assert result == scs.COMM_SUCCESS and STS3215.decode(reg.name, value) == bus.servo(1).get(reg.name), reg.name
    assert ph.write1ByteTxRx(port, 2, 40, 1) == (0, 0)
    write = scs.GroupSyncWrite(port, ph, 42, 2)
    for i, goal in ((1, 2048), (2, 2600), (3, 2048)):
        write.addParam(i, [scs.SCS_LOBYTE(goal), scs.SCS_HIBYTE(goal)])
    assert write.txPacket() == scs.COMM_SUCCESS
    read = scs.GroupSyncRead(port, ph, 56, 4)
    for i in (1, 2, 3):
        read.addParam(i)
    time.sleep(0.3)
    assert read.txRxPacket() == scs.COMM_SUCCESS
    moving = STS3215.decode("present_velocity", read.getData(2, 58, 2))
    assert moving > 0 and read.getData(2, 56, 2) > 2100                   # sign-magnitude velocity, toward 2600
    time.sleep(1.2)
    assert read.txRxPacket() == scs.COMM_SUCCESS
    assert abs(read.getData(2, 56, 2) - 2600) < 40 and read.getData(1, 56, 2) == 2048
    assert bus.servo(2).error_byte == 0


def test_dynamixel_return_delay_time_delays_the_answer(dxl_bus):
    """Return Delay Time 250 (2 µs units): every answer comes at least 500 µs after the instruction."""
    bus, port, ph = dxl_bus
    assert ph.write1ByteTxRx(port, 1, 9, 250) == (0, 0)                  # EEPROM, torque off

    def round_trip(i):
        t0 = time.perf_counter()
        assert ph.read1ByteTxRx(port, i, 146) == (25, 0, 0)
        return time.perf_counter() - t0

    delayed, prompt = [], []
    for _ in range(15):
        delayed.append(round_trip(1))
        prompt.append(round_trip(2))
    assert min(delayed) >= 500e-6 and bus.servo(1).get("return_delay_time") == 250
    assert statistics.median(delayed) > statistics.median(prompt)


def test_dynamixel_bus_watchdog(dxl_bus):
    """Bus Watchdog (98): armed, traffic keeps it quiet; silence beyond it stops the servo (goal
    current 0, register -1), goal writes are refused with DATA_RANGE until 0 is written."""
    bus, port, ph = dxl_bus
    wd, torque, goal_current = 98, 64, 102
    assert ph.read1ByteTxRx(port, 1, wd) == (0, 0, 0)                     # off at power-on
    assert ph.write1ByteTxRx(port, 1, wd, 0xFF)[1] == 4                   # -1 is the firmware's to write
    assert ph.write1ByteTxRx(port, 1, wd, 128)[1] == 4                    # beyond 127
    assert ph.write1ByteTxRx(port, 1, 11, 0) == (0, 0)                    # current mode
    assert ph.write1ByteTxRx(port, 1, wd, 25) == (0, 0)                   # 500 ms
    assert ph.write1ByteTxRx(port, 1, torque, 1) == (0, 0)
    assert ph.write2ByteTxRx(port, 1, goal_current, 100) == (0, 0)
    end = time.monotonic() + 0.8                                          # traffic: reads every 10 ms
    while time.monotonic() < end:
        assert ph.read1ByteTxRx(port, 1, wd) == (25, 0, 0)
        time.sleep(0.01)
    assert ph.read2ByteTxRx(port, 1, goal_current) == (100, 0, 0)
    time.sleep(1.0)                                                       # silence: 1 s > 500 ms
    assert ph.read1ByteTxRx(port, 1, wd) == (0xFF, 0, 0)                  # -1: tripped
    assert ph.read2ByteTxRx(port, 1, goal_current)[0] == 0 and ph.read1ByteTxRx(port, 1, torque)[0] == 1
    assert ph.write2ByteTxRx(port, 1, goal_current, 100)[1] == 4          # DATA_RANGE while tripped
    assert ph.write1ByteTxRx(port, 1, wd, 0) == (0, 0)                    # 0 clears it
    assert ph.write2ByteTxRx(port, 1, goal_current, 100) == (0, 0)
    assert bus.servo(1).get("goal_current") == 100
    assert ph.read1ByteTxRx(port, 2, wd) == (0, 0, 0)                     # the others were never armed


def test_feetech_error_bits_and_unloading_condition(ft_bus):
    """A fault's bits are the error byte of every status packet and the status register (65); the
    servo unloads itself (torque off) only for the bits its Unloading Condition (19) selects."""
    bus, port, ph = ft_bus
    for i in (1, 2, 3):
        assert ph.write1ByteTxRx(port, i, 40, 1) == (0, 0)
    assert ph.read1ByteTxRx(port, 3, 65) == (0, 0, 0)
    bus.servo(1).fault(0x20)                                              # overload: unloads
    bus.servo(2).fault(0x01)                                              # input voltage: not in 44
    bus.servo(3).fault(0x04)                                              # overheat: unloads
    assert ph.ping(port, 1) == (777, scs.COMM_SUCCESS, 0x20)
    for i, bits, torque in ((1, 0x20, 0), (2, 0x01, 1), (3, 0x04, 0)):
        assert ph.read1ByteTxRx(port, i, 65) == (bits, 0, bits)
        assert ph.read1ByteTxRx(port, i, 40) == (torque, 0, bits)
    assert ph.write1ByteTxRx(port, 2, 41, 10) == (0, 0x01)
    assert [ph.getRxPacketError(b).split()[1] for b in (0x20, 0x01, 0x04)] == ["Overload", "Input", "Overheat"]


def test_feetech_status_return_level(ft_bus):
    """Level 0: PING and READ answered, writes applied without an answer."""
    bus, port, ph = ft_bus
    assert ph.write1ByteTxRx(port, 3, 8, 0) == (0, 0)                     # answered: level 1 at its arrival
    assert ph.write1ByteTxRx(port, 3, 41, 5)[0] == scs.COMM_RX_TIMEOUT
    assert bus.servo(3).get("acceleration") == 5
    assert ph.read1ByteTxRx(port, 3, 41) == (5, 0, 0)
    assert ph.ping(port, 3) == (777, scs.COMM_SUCCESS, 0)
    read = scs.GroupSyncRead(port, ph, 56, 2)
    assert read.addParam(3) and read.txRxPacket() == scs.COMM_SUCCESS and read.getData(3, 56, 2) == 2048


def test_feetech_eeprom_with_torque_on_and_the_lock(ft_bus):
    """STS EEPROM registers take writes with torque on; Lock (55, 1 at power-on) decides whether
    they survive a power cycle."""
    bus, port, ph = ft_bus
    assert ph.write1ByteTxRx(port, 1, 40, 1) == (0, 0)
    assert ph.write2ByteTxRx(port, 1, 11, 3000) == (0, 0)                 # max position limit, torque on
    assert ph.read2ByteTxRx(port, 1, 11) == (3000, 0, 0)
    bus.power_cycle()
    assert ph.read2ByteTxRx(port, 1, 11)[0] == 4095                       # locked: not saved
    assert ph.read1ByteTxRx(port, 1, 55)[0] == 1 and ph.read1ByteTxRx(port, 1, 40)[0] == 0
    assert ph.write1ByteTxRx(port, 1, 55, 0) == (0, 0)                    # unlock
    assert ph.write2ByteTxRx(port, 1, 11, 3000) == (0, 0)
    bus.power_cycle()
    assert ph.read2ByteTxRx(port, 1, 11)[0] == 3000                       # saved
    assert ph.read1ByteTxRx(port, 1, 55)[0] == 1                          # locked again after power-on


def test_dynamixel_fast_sync_read_ends_at_a_silent_servo(dxl_bus):
    """FAST SYNC READ: the listed servos send their parts of one packet in turn; an absent ID (9)
    sends none and the servos after it none either, so the packet stops short of the length its
    header announces and the SDK's read of it fails."""
    bus, port, ph = dxl_bus
    read = dxl_sdk.GroupSyncRead(port, ph, 132, 4)
    for i in (1, 9, 2):
        read.addParam(i)
    assert read.fastSyncRead() != dxl_sdk.COMM_SUCCESS
    port.clearPort()
    assert ph.syncReadTx(port, 132, 4, [1, 9, 2], 3, True) == dxl_sdk.COMM_SUCCESS
    time.sleep(0.2)
    got = bytes(port.readPort(100))
    assert len(got) == 8 + 8 and got[:8] == bytes((0xFF, 0xFF, 0xFD, 0, 0xFE, 8 + 3 * 8 - 7, 0, 0x55))
    assert got[9] == 1 and int.from_bytes(got[10:14], "little") == bus.servo(1).get("present_position")
    port.is_using = False                                                  # the SDK's Tx holds the port for its Rx
    assert ph.syncReadTx(port, 132, 4, [1, 2, 3], 3, True) == dxl_sdk.COMM_SUCCESS
    time.sleep(0.2)
    assert len(port.readPort(100)) == 8 + 3 * 8                             # all there: the whole packet
