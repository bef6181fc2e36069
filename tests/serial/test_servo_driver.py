"""The servo-bus driver against the simulated bus over a real pty, on memq:// LCM: status in joint
units, torque -> goal current / goal position (per servo on a mixed bus), torque off on command
timeout, hardware error and exit, reconnect after the bus drops or falls silent, bad bytes counted."""
import logging
import sys
import time

import lcm
import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.serial import dynamixel as dxl
from drivers.serial import feetech as ft
from drivers.serial.servo_bus import SimulatedServoBus
from drivers.serial.servo_config import load_servo_config
from drivers.serial.servo_driver import ServoDriver
from drivers.serial.servo_sim import SimulatedServo
from messages.channels import Channels
from messages.codec import CommandEncoder, StatusDecoder
from tests.conftest import REPO


def _config(tmp_path, protocol, models, joint_keys=None, **extra):
    """Joint k: ID k + 1, direction -1 for j1, gear ratio 2 for j2, offset 0.1 k; joint_keys {k: keys}."""
    joints = [{"joint": f"j{k}", "id": k + 1, "model": m, "direction": -1 if k == 1 else 1, "offset": 0.1 * k,
               "gear_ratio": 2.0 if k == 2 else 1.0, **(joint_keys or {}).get(k, {})} for k, m in enumerate(models)]
    # Timeouts for a loaded 2-core machine (a stall of 100 ms must not look like a lost bus).
    data = {"port": str(tmp_path / "bus"), "protocol": protocol, "joints": joints, "read_timeout": 0.1,
            "link_timeout": 1.0, "command_timeout": 0.2, "reconnect": {"initial": 0.05, "max": 0.2}, **extra}
    return load_servo_config(data)


class Rig:
    def __init__(self, cfg):
        self.cfg = cfg
        self.servos = [SimulatedServo(j.servo_model, j.id) for j in cfg.joints]
        for s in self.servos:
            s.set("return_delay_time", 0)
        self.bus = SimulatedServoBus(cfg.protocol, self.servos, cfg.port).start()
        self.lc = lcm.LCM("memq://")
        self.channels = Channels(status="PANDA_STATUS", command="PANDA_COMMAND")
        n = len(cfg.joints)
        self.driver = ServoDriver(cfg, [f"j{k}" for k in range(n)], "panda", self.channels, self.lc)
        self.status, self.statuses = StatusDecoder("panda", n), 0
        self.commands = CommandEncoder("panda", n, fields=("torque",), channel="PANDA_COMMAND")
        self.lc.subscribe("PANDA_STATUS", self._on_status)
        self.tau = None

    def _on_status(self, channel, data):
        assert self.status.decode(data)
        self.statuses += 1
        if self.tau is not None:
            self.commands.encode(0, torque=np.asarray(self.tau, float))
            self.commands.publish(self.lc)

    def spin(self, seconds):
        self.driver.spin(seconds)

    def close(self):
        self.driver.shutdown()
        self.bus.stop()


@pytest.fixture
def rig(tmp_path):
    rigs = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)

    def make(protocol, models, **extra):
        rigs.append(Rig(_config(tmp_path, protocol, models, **extra)))
        return rigs[-1]

    yield make
    for r in rigs:
        r.close()
    sys.setswitchinterval(interval)


def test_current_mode_status_and_torque(rig):
    r = rig("dynamixel", ["XM430-W350", "XM430-W350", "XL330-M288"], rate=200)
    assert r.driver.controls == ["current"] * 3
    r.spin(0.3)
    assert r.statuses > 10 and r.driver.full_reads >= r.driver.cycles - 2       # (almost) no read missed
    assert r.status.position_measured == pytest.approx([0.0, 0.1, 0.2], abs=2e-3)   # center ticks -> offsets
    # No command yet: the driver holds the arm, every servo in position mode at its present position
    assert all(s.get("operating_mode") == 3 and s.get("torque_enable") for s in r.servos)
    assert all(abs(s.get("goal_position") - s.get("present_position")) <= 2 for s in r.servos)
    r.tau = [0.2, 0.2, 0.05]
    r.spin(0.4)
    assert all(s.get("torque_enable") and s.get("operating_mode") == 0 for s in r.servos)   # handed over
    currents = [s.get("goal_current") for s in r.servos]
    assert currents[0] == round(0.2 / (4.1 / 2.3) / 2.69e-3)
    assert currents[1] == -currents[0]                                           # direction -1
    assert currents[2] == round(0.05 / 2.0 / (0.52 / 1.47) / 1e-3)              # gear ratio 2
    v = r.status.velocity_estimated
    assert v[0] > 0.5 and v[1] > 0.5 and v[2] > 0.2                              # every joint turns forward
    assert r.status.torque_measured == pytest.approx([0.2, 0.2, 0.05], rel=0.05)
    r.tau = None                                                                 # the loop stops commanding
    r.spin(0.6)
    assert not any(s.get("torque_enable") for s in r.servos)


def test_position_mode_feetech_goal_from_torque(rig):
    r = rig("feetech", ["STS3215", "STS3215", "STS3215"], rate=200)
    assert r.driver.controls == ["position"] * 3
    r.tau = [0.3, 0.0, 0.0]
    r.spin(0.5)
    s0 = r.servos[0]
    assert s0.get("torque_enable") == 1 and s0.get("operating_mode") == 0
    assert s0.get("goal_position") > s0.get("present_position")                 # pushes forward with 0.3 N·m
    assert r.servos[1].get("goal_position") == pytest.approx(r.servos[1].get("present_position"), abs=2)


def test_mixed_bus_runs_each_servo_in_its_own_mode(rig):
    """A Koch-like bus (XL430-W250 shoulders, XL330-M288 elbow and wrist), control auto, the wrist
    forced to position: the XL330 elbow takes goal currents, the others goal positions that their
    P loops turn into the commanded torque; held by a load, each servo's torque is the command."""
    r = rig("dynamixel", ["XL430-W250", "XL430-W250", "XL330-M288", "XL330-M288"], rate=200,
            joint_keys={3: {"control": "position"}})
    d, s = r.driver, r.servos
    assert d.controls == ["position", "position", "current", "position"]
    r.spin(0.3)
    assert [x.get("operating_mode") for x in s] == [3, 3, 3, 3]                # held until a command
    tau, dg = np.array([0.2, 0.2, 0.05, 0.05]), np.array([1.0, -1.0, 2.0, 1.0])   # direction · gear ratio
    for x, t in zip(s, tau / dg):
        x.external_torque = -t                                                   # a load holding each joint
    r.tau = tau
    r.spin(0.6)
    time.sleep(0.05)                                                              # the last SYNC WRITEs land
    assert all(x.get("torque_enable") for x in s)
    assert [x.get("operating_mode") for x in s] == [3, 3, 0, 3]                # each in its joint's mode
    assert s[2].get("goal_current") == round(0.05 / 2.0 / (0.52 / 1.47) / 1e-3)  # i = τ / (d g k_t)
    for k, (stall, kp) in {0: (1.5, 640), 1: (1.5, 640), 3: (0.52, 400)}.items():
        stiffness = stall * kp / 128 / 885                                        # N·m per tick of error
        assert s[k].get("goal_position") == pytest.approx(d.state.pos[k] + tau[k] / dg[k] / stiffness, abs=1), k
    assert r.status.torque_measured == pytest.approx(tau, abs=0.012)             # load 0.1 % / current 1 mA
    assert np.abs(r.status.velocity_estimated).max() < 0.1                        # held: no motion


def test_hardware_error_latches_torque_off(rig):
    r = rig("dynamixel", ["XM430-W350", "XL330-M288"], rate=200)
    r.tau = [0.1, 0.1]
    r.spin(0.3)
    assert all(s.get("torque_enable") for s in r.servos)
    r.servos[1].fault(0x04)                                                       # overheating
    r.servos[0].set("torque_enable", 1)
    r.spin(0.3)
    assert "ID 2" in r.driver.fault
    assert not r.servos[0].get("torque_enable")                                  # the driver turned all off


def test_bus_drop_reconnects_and_exit_turns_torque_off(rig):
    r = rig("dynamixel", ["XM430-W350", "XM430-W350"], rate=200)
    r.tau = [0.05, 0.05]
    r.spin(0.3)
    d, bus = r.driver, r.bus
    assert d.connected and d.reconnects == 0 and d.links_lost == 0                # the first connect is none
    bus.link.unplug()                                                              # the adapter is pulled
    r.spin(0.3)
    assert not d.connected and d.links_lost == 1 and d.reconnects == 0             # reopening fails meanwhile
    bus.link.plug()
    r.spin(0.8)
    assert d.connected and d.reconnects == d.links_lost >= 1
    before = r.statuses
    r.spin(0.2)
    assert r.statuses > before and all(s.get("torque_enable") for s in r.servos)
    r.driver.run(0.05)                                                             # run() ends: torque off
    time.sleep(0.05)
    assert all(s.get("torque_enable") == 0 for s in r.servos)


def silence(bus):
    """The simulated servos stop answering, the pty stays open (their power is cut, the adapter is not)."""
    bus._running = False
    bus._thread.join(2.0)


def test_silent_bus_turns_torque_off_retries_and_sets_up_power_cycled_servos(rig, caplog):
    """Servos that fall silent: after link_timeout the torque-off write, the port closed, PINGs retried
    with backoff; they come back power-cycled (operating mode and gains at their defaults): the
    driver sets each up again (mode, gains) before it turns the torque back on."""
    r = rig("dynamixel", ["XL430-W250", "XL330-M288"], rate=200, joint_keys={0: {"kp": 500}, 1: {"kp": 300}})
    d, s = r.driver, r.servos
    r.tau = [0.1, 0.05]
    r.spin(0.4)
    assert all(x.get("torque_enable") for x in s) and d.reconnects == 0 and d.torque_offs == 0
    assert [x.get("operating_mode") for x in s] == [3, 0] and [x.get("position_p_gain") for x in s] == [500, 300]
    silence(r.bus)
    with caplog.at_level(logging.WARNING, logger="drivers.serial.servo_driver"):
        r.spin(2.0)                                                               # link_timeout 1 s
    assert not d.connected and d.links_lost == 1 and d.reconnects == 0 and d.torque_offs == 1
    assert d.stats.timeouts > 0 and "no complete SYNC READ for 1 s" in caplog.text
    assert caplog.text.count("servo ID 1 (j0) does not answer PING") >= 2        # retried
    for x in s:
        x.power_on(x.servo_id)
    assert [x.get("operating_mode") for x in s] == [3, 3] and [x.get("position_p_gain") for x in s] == [640, 400]
    r.bus.start()
    r.spin(2.0)
    assert d.connected and d.reconnects == d.links_lost == 1
    assert [x.get("operating_mode") for x in s] == [3, 0] and [x.get("position_p_gain") for x in s] == [500, 300]
    assert all(x.get("torque_enable") for x in s)
    assert s[1].get("goal_current") == -round(0.05 / (0.52 / 1.47) / 1e-3)       # direction -1


@pytest.mark.parametrize("protocol, model", [("dynamixel", "XM430-W350"), ("feetech", "STS3215")])
def test_a_late_answer_never_passes_for_the_next_reads(rig, protocol, model):
    """An answer that comes after its read timed out (here one claiming tick 0 for servo 1, written
    into the bus between cycles) is dropped before the next SYNC READ goes out: the next state is
    the servos' own, not a cycle old."""
    r = rig(protocol, [model, model], rate=200)
    r.spin(0.3)
    d = r.driver
    assert d.stats.late == 0 and r.status.position_measured[0] == pytest.approx(0.0, abs=2e-3)
    writer = (dxl.PacketWriter() if protocol == "dynamixel" else ft.PacketWriter())
    row = bytearray(d.state.width)                                  # every register 0: position tick 0
    r.bus.link.write(bytes(writer.status(1, 0, bytes(row))))
    time.sleep(0.05)
    before = d.full_reads
    r.spin(0.1)
    assert d.full_reads > before and d.stats.late == 1
    assert r.status.position_measured[0] == pytest.approx(0.0, abs=2e-3)        # not tick 0 (-π)


def test_noise_on_the_bus_is_counted_not_fatal(rig):
    r = rig("dynamixel", ["XM430-W350", "XL430-W250"], rate=200)
    r.spin(0.2)
    garbage = b"\xff\xff\xfd\x00\x01\x07\x00\x55\x00\x12\x34\x00\x00" + bytes(range(40))
    for _ in range(5):
        r.bus.link.write(garbage)
        r.spin(0.05)
    before = r.statuses
    r.spin(0.2)
    assert r.statuses > before
    assert r.driver.stats.crc_errors + r.driver.stats.unexpected_ids + r.driver.stats.length_errors > 0


def test_config_errors_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"joints\[1\].id: 1 is already"):
        load_servo_config({"port": "x", "joints": [{"joint": "a", "id": 1, "model": "XM430-W350"},
                                                   {"joint": "b", "id": 1, "model": "XM430-W350"}]})
    with pytest.raises(ConfigError, match=r"joints\[0\].model: unknown servo model 'XM540'"):
        load_servo_config({"port": "x", "joints": [{"joint": "a", "id": 1, "model": "XM540"}]})
    with pytest.raises(ConfigError, match=r"joints\[0\].model: STS3215 speaks feetech"):
        load_servo_config({"port": "x", "joints": [{"joint": "a", "id": 1, "model": "STS3215"}]})
    with pytest.raises(ConfigError, match=r"control: is current, but joints\[0\] is a XL430-W250"):
        load_servo_config({"port": "x", "control": "current",
                           "joints": [{"joint": "a", "id": 1, "model": "XL430-W250"}]})
    with pytest.raises(ConfigError, match=r"servo_bus.joints\[1\].control: is current, but a XL430-W250 has no"):
        load_servo_config({"port": "x", "joints": [{"joint": "a", "id": 1, "model": "XM430-W350"},
                                                   {"joint": "b", "id": 2, "model": "XL430-W250",
                                                    "control": "current"}]})
    with pytest.raises(ConfigError, match=r"joints\[0\].control: must be one of 'current', 'position'"):
        load_servo_config({"port": "x", "joints": [{"joint": "a", "id": 1, "model": "XM430-W350", "control": "pwm"}]})
    with pytest.raises(ConfigError, match=r"direction: must be 1 or -1"):
        load_servo_config({"port": "x", "joints": [{"joint": "a", "id": 1, "model": "XM430-W350", "direction": 2}]})
    with pytest.raises(ConfigError, match=r"baudrate: 1234 is no dynamixel baud rate"):
        load_servo_config({"port": "x", "baudrate": 1234, "joints": [{"joint": "a", "id": 1, "model": "XM430-W350"}]})
    cfg = load_servo_config({"port": "x", "joints": [{"joint": "a", "id": 1, "model": "XL430-W250"}]})
    assert cfg.joint_control(cfg.joints[0]) == "position"                      # auto: position for an XL430
    mixed = load_servo_config({"port": "x", "control": "current", "joints": [
        {"joint": "a", "id": 1, "model": "XL330-M288"}, {"joint": "b", "id": 2, "model": "XM430-W350"},
        {"joint": "c", "id": 3, "model": "XL430-W250", "control": "position"},
        {"joint": "d", "id": 4, "model": "XM430-W350", "control": "position"}]})
    assert [mixed.joint_control(j) for j in mixed.joints] == ["current", "current", "position", "position"]
    with pytest.raises(ConfigError, match=r"no servo for the robot's joints b"):
        ServoDriver(cfg, ["a", "b"], "panda", Channels(), lcm.LCM("memq://"))


def test_rate_beyond_the_bus_prefetches_and_still_takes_commands(rig):
    """At a rate the bus cannot reach, each next SYNC READ goes out behind the SYNC WRITE: every read
    completes, its answers are matched to the right servos, and LCM commands are still handled."""
    r = rig("dynamixel", ["XM430-W350", "XM430-W350", "XL330-M288"], rate=10000)  # the most a config allows
    r.tau = [0.2, 0.2, 0.05]
    r.spin(0.8)
    d = r.driver
    assert d.cycles > 100 and d.full_reads >= d.cycles - 2
    assert d.commands_received > 50 and all(s.get("torque_enable") for s in r.servos)
    assert r.servos[0].get("goal_current") == round(0.2 / (4.1 / 2.3) / 2.69e-3)
    assert d.stats.timeouts == 0 and d.stats.unexpected_ids == 0 and d.stats.length_errors == 0
    assert r.status.torque_measured == pytest.approx([0.2, 0.2, 0.05], rel=0.05)


@pytest.mark.parametrize("protocol, models, level", [
    ("dynamixel", ["XM430-W350", "XL430-W250"], 1), ("dynamixel", ["XM430-W350", "XL430-W250"], 0),
    ("feetech", ["STS3215", "STS3215"], 0)])
def test_status_return_level_below_all_sets_up_by_read_back(rig, protocol, models, level):
    """Servos that do not answer writes (Dynamixel level 1, Feetech 0) or only PING (Dynamixel 0,
    raised to 1) are set up all the same: each setup write is checked by reading it back."""
    r = rig(protocol, models, control="position", rate=200)
    r.bus.stop()                                          # the levels in place before the driver connects
    for s in r.servos:
        s.set("status_return_level", level)
    r.bus = SimulatedServoBus(protocol, r.servos, r.cfg.port).start()
    r.tau = [0.0, 0.0]
    r.spin(0.5)
    d = r.driver
    assert d.connected and d.full_reads > 10, d.summary()
    mode = r.servos[0].model.modes["position"]
    assert all(s.get("operating_mode") == mode for s in r.servos)
    assert [s.get("position_p_gain") for s in r.servos] == d.kp
    assert all(s.get("torque_enable") for s in r.servos)
    assert all(s.get("status_return_level") == max(level, 1 if protocol == "dynamixel" else 0) for s in r.servos)


def test_fast_sync_read_fills_every_joint(rig, tmp_path):
    """fast_read: one FAST SYNC READ answer (one packet from ID 0xFE) per cycle, split per servo."""
    r = rig("dynamixel", ["XM430-W350", "XM430-W350", "XL330-M288"], rate=200, fast_read=True)
    r.spin(0.3)
    d = r.driver
    assert d.full_reads >= d.cycles - 2 and r.statuses > 10
    assert r.status.position_measured == pytest.approx([0.0, 0.1, 0.2], abs=2e-3)
    r.tau = [0.2, 0.2, 0.05]
    r.spin(0.4)
    assert r.status.torque_measured == pytest.approx([0.2, 0.2, 0.05], rel=0.05)
    assert d.stats.length_errors == 0 and d.stats.unexpected_ids == 0 and d.stats.timeouts == 0
    with pytest.raises(ConfigError, match="servo_bus.fast_read: FAST SYNC READ is a Dynamixel"):
        _config(tmp_path, "feetech", ["STS3215"], fast_read=True)


def test_cli_rejects_current_mode_on_a_model_without_it(tmp_path, capsys):
    """`hil servo-bus`: a joint forced to current mode on an XL430 exits 2 with one line naming the key."""
    from hil.cli import main
    text = (REPO / "configs" / "servo" / "dxl_arm.yaml").read_text()
    bad = text.replace("- {joint: pan, id: 1, model: XM430-W350}",
                       "- {joint: pan, id: 1, model: XL430-W250, control: current}")
    assert bad != text
    (tmp_path / "robots").mkdir()
    (tmp_path / "robots" / "dxl_arm3.urdf").write_text((REPO / "configs" / "robots" / "dxl_arm3.urdf").read_text())
    (tmp_path / "servo").mkdir()
    (tmp_path / "servo" / "bad.yaml").write_text(bad)
    assert main(["servo-bus", str(tmp_path / "servo" / "bad.yaml"), "--duration", "0.1"]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == (f"hil: config error: {tmp_path / 'servo' / 'bad.yaml'}: servo_bus.joints[0].control: "
                           "is current, but a XL430-W250 has no current control (use position)"), err
