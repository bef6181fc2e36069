"""The servos' own safety against a lost host, and the driver's against their faults, over a real
pty: the Dynamixel Bus Watchdog stops the servos when the host goes silent (a pulled USB adapter:
the driver's torque-off never arrives) and the driver clears and re-arms it on reconnecting;
Feetech hardware faults latch the driver's fault and turn every torque off."""
import logging
import time

import pytest

from drivers.core.schema import ConfigError
from drivers.serial.servo_bus import SimulatedServoBus
from drivers.serial.servo_models import STS3215, XM430_W350
from drivers.serial.servo_sim import SimulatedServo
from tests.serial.test_servo_driver import Rig, _config


@pytest.fixture
def rigs(tmp_path):
    made = []

    def make(protocol, models, **extra):
        made.append(Rig(_config(tmp_path, protocol, models, **extra)))
        return made[-1]

    yield make
    for r in made:
        r.close()


def _tripped_within(servos, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if all(s.get("bus_watchdog") == -1 for s in servos):
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("watchdog", [0.1, 0.0])
def test_silent_host_the_servos_stop_by_themselves(rigs, watchdog):
    """The host stops sending with the torque on: armed (0.1 s) the servos trip no sooner than 0.1 s
    after the last packet, zero their goal currents and coast to rest; disarmed (0) they keep
    turning at the last goal current, the hazard the watchdog is for. Reconnecting clears it."""
    r = rigs("dynamixel", ["XM430-W350", "XL330-M288"], rate=200, bus_watchdog=watchdog)
    for s in r.servos:
        s.damping = 0.1                                    # τ/b: the commanded torque turns it at ≤ 3 rad/s
    r.tau = [0.3, 0.05]
    r.spin(0.5)
    armed = round(watchdog / 0.02)
    currents = [s.get("goal_current") for s in r.servos]
    assert all(currents) and all(s.get("bus_watchdog") == armed for s in r.servos)
    speeds = [abs(s.v) for s in r.servos]
    assert min(speeds) > 0.2
    silent_since = time.monotonic()                        # the driver sends nothing from here on
    if not armed:
        time.sleep(0.6)
        assert [s.get("goal_current") for s in r.servos] == currents
        assert all(abs(s.v) > 0.5 * v for s, v in zip(r.servos, speeds))
        return
    assert _tripped_within(r.servos, 3.0), [s.silence for s in r.servos]
    assert time.monotonic() - silent_since >= 0.08         # not before its time (the bus clock never runs ahead)
    assert all(s.get("goal_current") == 0 and s.get("torque_enable") == 1 for s in r.servos)
    time.sleep(0.5)                                        # 10 time constants J/b
    assert all(abs(s.v) < 0.05 * v for s, v in zip(r.servos, speeds)), [s.v for s in r.servos]
    r.driver.close()                                       # the adapter is back: the driver reconnects
    r.spin(0.5)
    assert r.driver.connected and all(s.get("bus_watchdog") == armed for s in r.servos)
    assert [s.get("goal_current") for s in r.servos] == currents


def test_a_host_stall_beyond_the_watchdog_is_cleared_and_control_resumes(rigs, caplog):
    """The driver itself stalls (0.3 s without a cycle, the port open) past a 0.1 s Bus Watchdog:
    the servos stop and refuse goal writes; its next cycle sees the silence, clears and re-arms the
    watchdog (with a warning) and the goal currents follow the commands again, with no reconnect."""
    r = rigs("dynamixel", ["XM430-W350", "XL330-M288"], rate=200, bus_watchdog=0.1)
    r.tau = [0.3, 0.05]
    r.spin(0.5)
    currents = [s.get("goal_current") for s in r.servos]
    assert all(currents) and all(s.get("bus_watchdog") == 5 for s in r.servos)
    assert _tripped_within(r.servos, 3.0)                  # the stall: nothing sent meanwhile
    assert all(s.get("goal_current") == 0 for s in r.servos)
    with caplog.at_level(logging.WARNING, logger="drivers.serial.servo_driver"):
        r.spin(0.5)
    assert r.driver.watchdog_rearms == 1 and r.driver.links_lost == 0 and r.driver.connected
    assert "re-arming their Bus Watchdog" in caplog.text
    assert all(s.get("bus_watchdog") == 5 for s in r.servos)
    assert [s.get("goal_current") for s in r.servos] == currents


def test_bus_watchdog_counts_simulated_time_in_lockstep(tmp_path):
    """In lockstep the bus's clock is the simulated one: a host that is merely slow (a loaded
    machine, a debugger) never trips the watchdog, as simulated time stands still between its
    SYNC READs."""
    s = SimulatedServo(XM430_W350, 1)
    s.set("bus_watchdog", 1)
    s.set("torque_enable", 1)
    bus = SimulatedServoBus("dynamixel", [s], tmp_path / "bus", lockstep_period=0.002).start()
    try:
        time.sleep(0.3)
        assert s.get("bus_watchdog") == 1 and s.silence == 0.0
        bus.advance(0.03)                                   # 30 ms of simulated silence > 20 ms
        assert s.get("bus_watchdog") == -1
    finally:
        bus.stop()


@pytest.mark.parametrize("mode, goal, held", [("current", "goal_current", 0), ("position", "goal_position", None),
                                              ("velocity", "goal_velocity", 0)])
def test_bus_watchdog_stops_each_operating_mode(mode, goal, held):
    """Tripping sets the mode's goal to a stop (position modes: the present position), only with
    the torque on, and only after more than n · 20 ms."""
    s = SimulatedServo(XM430_W350, 1)
    s.set("operating_mode", XM430_W350.modes[mode])
    s.set("bus_watchdog", 2)
    s.set("goal_position", 3000)
    s.set("goal_current", 200)
    s.set("goal_velocity", 50)
    s.watch(1.0)
    assert s.get("bus_watchdog") == 2                       # torque off: not monitored
    s.set("torque_enable", 1)
    s.silence = 0.0
    s.set_motion(0.5, 0.0, 0.0)
    s.watch(0.04)
    assert s.get("bus_watchdog") == 2                       # 40 ms is not more than 2 · 20 ms
    s.watch(0.001)
    assert s.get("bus_watchdog") == -1
    assert s.get(goal) == (s.get("present_position") if held is None else held)
    assert s.write(XM430_W350.reg(goal).address, bytes(XM430_W350.reg(goal).size)) == 4     # DATA_RANGE
    assert s.write(98, b"\x00") == 0 and s.get("bus_watchdog") == 0


def test_watchdog_config(tmp_path):
    assert _config(tmp_path, "dynamixel", ["XM430-W350"]).bus_watchdog_units == 5        # default 0.1 s
    assert _config(tmp_path, "dynamixel", ["XM430-W350"], bus_watchdog=0.15).bus_watchdog_units == 8   # rounded up
    assert _config(tmp_path, "dynamixel", ["XM430-W350"], bus_watchdog=0).bus_watchdog_units == 0
    assert _config(tmp_path, "feetech", ["STS3215"]).bus_watchdog_units == 0              # Feetech: none
    with pytest.raises(ConfigError, match="bus_watchdog: Feetech servos have no bus watchdog"):
        _config(tmp_path, "feetech", ["STS3215"], bus_watchdog=0.1)
    with pytest.raises(ConfigError, match=r"bus_watchdog: must be 0 \(off\) or between two cycles"):
        _config(tmp_path, "dynamixel", ["XM430-W350"], bus_watchdog=3.0)
    with pytest.raises(ConfigError, match=r"2/rate = 0.2 s"):
        _config(tmp_path, "dynamixel", ["XM430-W350"], bus_watchdog=0.1, rate=10, command_timeout=0.5)


def test_firmware_without_the_watchdog_is_refused_unless_it_is_off(rigs, caplog):
    """A servo older than firmware v38 has no Bus Watchdog: the driver will not drive it with one
    configured, and says why; with bus_watchdog 0 it does."""
    caplog.set_level(logging.WARNING, logger="drivers.serial.servo_driver")   # (hil regress quiets "drivers")
    for watchdog, connects in ((0.1, False), (0.0, True)):
        r = rigs("dynamixel", ["XM430-W350"], rate=200, bus_watchdog=watchdog)
        r.servos[0].set("firmware_version", 37)
        r.spin(0.3)
        assert r.driver.connected == connects
        r.close()
    assert "firmware v37 has no Bus Watchdog (v38+)" in caplog.text


@pytest.mark.parametrize("bits", [0x20, 0x01])
def test_feetech_hardware_fault_latches_torque_off(rigs, bits):
    """Overload (the servo unloads itself) or input voltage (it does not): either way the driver
    latches the fault, naming the servo, and turns every torque off for good."""
    r = rigs("feetech", ["STS3215", "STS3215"], rate=200)
    r.tau = [0.1, 0.1]
    r.spin(0.3)
    assert all(s.get("torque_enable") for s in r.servos)
    r.servos[1].fault(bits)
    assert r.servos[1].get("torque_enable") == (0 if bits & STS3215.reg("unloading_condition").default else 1)
    r.spin(0.3)
    assert "servo ID 2 (j1)" in r.driver.fault and f"0x{bits:02x}" in r.driver.fault
    r.spin(0.3)                                            # commands keep coming: the fault holds
    assert not any(s.get("torque_enable") for s in r.servos)
