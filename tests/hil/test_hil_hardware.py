"""hil.hardware on its own, over memq:// LCM: each protocol's status in MultibodyPlant's signs, timed and
stamped with the tick; robot.driver auto told from the first status and the start guard it gives; the
command's stamp per driver; robot.command's fields, the position step limit, the hold and the exit
command; our own commands told from a second commander's."""
import lcm
import numpy as np
import pytest

from drivers.core.clock import LockstepClock
from drivers.core.config import channels_for
from drivers.core.robot import load_robot
from drivers.core.schema import ConfigError
from drivers.run_config import load_config
from hil.hardware import IiwaHardware, PandaHardware, hardware_for
from messages.codec import CommandDecoder, CommandEncoder, StatusEncoder
from messages.drake import lcmt_iiwa_status

Q = np.array([0.1, 0.5, -0.1, -1.0, 0.2, 0.6, 0.3])
STEP = 0.01                     # rad per command: the position step limit given


def interface(path="configs/demo.yaml", **robot):
    """(hardware, lc, clock, channels) for the config at `path` with robot keys replaced."""
    cfg = load_config(path, {"viz": False, "robot": robot} if robot else {"viz": False})
    lc, clock = lcm.LCM("memq://"), LockstepClock(1_000_000)
    clock.start()
    channels = channels_for(cfg)
    return hardware_for(cfg, load_robot(cfg.robot), lc, channels, clock, np.full(7, STEP)), lc, clock, channels


def publish_status(hw, lc, utime, nan_ipo=False, **arrays):
    """A status of q = Q (or `q`) and `arrays`; nan_ipo: kuka_driver's NaN joint_position_ipo outside
    FRI's COMMANDING states (which the encoder refuses), through lcm-gen's class."""
    if nan_ipo:
        m = lcmt_iiwa_status()
        m.utime, m.num_joints, m.joint_position_measured = utime, 7, list(Q)
        m.joint_velocity_estimated = m.joint_position_commanded = m.joint_torque_measured = [0.0] * 7
        m.joint_torque_commanded = m.joint_torque_external = [0.0] * 7
        m.joint_position_ipo = [float("nan")] * 7
        lc.publish(hw.channels.status, m.encode())
        return
    status = StatusEncoder(hw.protocol, 7)
    assert status.encode(utime, position_measured=arrays.pop("q", Q), **arrays) is not None
    lc.publish(hw.channels.status, status.tobytes())


@pytest.mark.parametrize("path, kind, signs", [("configs/demo.yaml", IiwaHardware, (-1, -1, 1)),
                                               ("configs/real/franka_velocity.yaml", PandaHardware, (1, 1, -1))])
def test_each_protocol_reads_its_status_in_multibodyplants_signs(path, kind, signs):
    hw, lc, clock, _ = interface(path)
    assert type(hw) is kind
    measured, commanded, external = np.arange(7.0), np.arange(7.0) + 10, np.arange(7.0) + 20
    clock.wait()
    publish_status(hw, lc, 5000, velocity_estimated=-Q, torque_measured=measured, torque_commanded=commanded,
                   torque_external=external)
    hw.read(7)
    np.testing.assert_array_equal(hw.q, Q)
    np.testing.assert_array_equal(hw.v, -Q)
    np.testing.assert_array_equal(hw.tau_measured, signs[0] * measured)
    np.testing.assert_array_equal(hw.tau_commanded, signs[1] * commanded)
    np.testing.assert_array_equal(hw.tau_external, signs[2] * external)
    t = hw.timing
    assert (t.last_tick, t.received, t.rejected, t.first_ns, t.arrived_ns, t.robot_ns) == (7, 1, 0, 0, 0, 5_000_000)
    lc.publish(hw.channels.status, b"not a status")     # rejected: counted, the arrays keep the last good one
    hw.read(8)
    assert (t.last_tick, t.received, t.rejected) == (7, 1, 1)
    np.testing.assert_array_equal(hw.tau_external, signs[2] * external)


def test_robot_driver_auto_tells_kuka_driver_from_its_first_status():
    for first, driver, guard_ns in [({"utime": -1}, "kuka_driver", 300_000_000),
                                    ({"utime": 7, "nan_ipo": True}, "kuka_driver", 300_000_000),
                                    ({"utime": 7}, "drake_sim", 0)]:
        hw, lc, clock, _ = interface()
        assert hw.driver.name == "drake_sim" and hw.guard_ns == 0 and not hw.guard_active(0)
        publish_status(hw, lc, **first)
        hw.read(0)
        assert (hw.driver.name, hw.guard_ns) == (driver, guard_ns)
        assert hw.guard_active(guard_ns - 1) == (guard_ns > 0) and not hw.guard_active(guard_ns)
    hw, lc, _, _ = interface(path="configs/real/franka_velocity.yaml", driver="auto")    # the Panda: drake_sim
    publish_status(hw, lc, -1)
    hw.read(0)
    assert (hw.driver.name, hw.guard_ns) == ("drake_sim", 0)
    cfg = load_config("configs/demo.yaml", {"viz": False, "robot": {"kuka_driver": {"start_guard": 0.1}}})   # its own
    hw = hardware_for(cfg, load_robot(cfg.robot), lc, channels_for(cfg), LockstepClock(1_000_000), np.zeros(7))
    publish_status(hw, lc, -1)
    hw.read(0)
    assert (hw.driver.name, hw.guard_ns) == ("kuka_driver", 100_000_000)


def test_the_command_stamp_is_the_drivers():
    hw, lc, clock, _ = interface(driver="kuka_driver")
    publish_status(hw, lc, -1)                       # kuka_driver's clock not yet synchronised
    hw.read(0)
    assert hw.guard_ns == 300_000_000 and hw.command_utime(5_000_000) == 5000    # the loop's clock, never −1
    publish_status(hw, lc, 123_456)
    hw.read(1)
    assert hw.command_utime(5_000_000) == 123_456   # the status's, however late
    hw, lc, clock, _ = interface("configs/real/franka_velocity.yaml")
    clock.wait(), clock.wait()
    publish_status(hw, lc, 123_456)
    hw.read(1)                                       # arrived at 1 ms on the loop's clock
    assert hw.command_utime(4_000_000) == 123_456 + 3000   # franka_driver: + the time since, on its wall clock


def test_write_sends_the_modes_fields_limits_the_position_step_and_holds():
    hw, lc, _, channels = interface(command="position_and_torque")
    sent = []
    lc.subscribe(channels.command, lambda channel, data: sent.append(bytes(data)))
    publish_status(hw, lc, 1000)
    hw.read(0)
    c = hw.commands
    assert (c.send_q, c.send_v, c.send_tau, hw.sends_setpoints) == (True, False, True, True)
    tau, goal = np.full(7, 2.0), Q + 1.0
    assert hw.write(0, tau, goal, None, True)       # the first command: no previous one to step from
    assert hw.write(0, tau, goal + 1.0, None, True)   # then at most STEP from the previous
    assert not hw.write(0, np.full(7, np.nan), goal, None, True) and c.sent == 2    # not finite: not sent
    hw.read(1)
    d = CommandDecoder("iiwa", 7)
    assert d.decode(sent[0]) and d.utime == 1000
    np.testing.assert_array_equal(d.position, goal)
    np.testing.assert_array_equal(d.torque, tau)
    assert d.decode(sent[1])
    np.testing.assert_allclose(d.position, goal + STEP)
    hw.write(0, tau, goal, None, False)              # not commanding: the measured q, latched
    publish_status(hw, lc, 2000, q=Q + 0.5)
    hw.read(2)
    hw.write(0, tau, goal, None, False)
    hw.release_hold()                                # commanding again; the next stop latches anew
    hw.write(0, tau, goal, None, False)
    hw.read(3)
    assert [d.decode(m) and float(d.position[0]) for m in sent[2:]] == [Q[0], Q[0], Q[0] + 0.5]
    assert hw.exit_pending and hw.write_exit(0, -tau) and not hw.exit_pending
    hw.read(4)
    assert d.decode(sent[-1])
    np.testing.assert_array_equal(d.position, Q + 0.5)
    np.testing.assert_array_equal(d.torque, -tau)
    assert c.exit_sent and c.sent == 6


def test_a_command_this_interface_did_not_send_is_a_second_commander():
    hw, lc, _, channels = interface()
    publish_status(hw, lc, 1000)
    hw.read(0)
    assert hw.write(0, np.zeros(7), None, None, True)
    hw.read(1)                                       # our own, looped back
    lc.publish(channels.command, b"garbled")         # commands nothing
    hw.read(2)
    assert hw.second_commander() is None
    other = CommandEncoder("iiwa", 7, fields=("torque",))
    other.encode(1000, torque=np.ones(7))
    lc.publish(channels.command, other.tobytes())
    lc.publish(channels.command, other.tobytes())
    hw.read(3)
    text = hw.second_commander()
    assert f"a command on {channels.command} that this loop did not send" in text and hw.foreign.seen == 2
    assert hw.second_commander() is None             # reported once
    hw.close()
    lc.publish(channels.command, other.tobytes())
    hw.read(4)
    assert hw.foreign.seen == 2                       # no longer listening


def test_a_drivers_keys_apply_behind_that_driver_only():
    """robot.kuka_driver is kuka_driver's own section: set behind another driver it is refused, naming it;
    the old loop.start_guard is an unknown key."""
    with pytest.raises(ConfigError, match="robot.kuka_driver: applies behind kuka_driver"):
        load_config("configs/real/franka_torque.yaml", {"robot": {"kuka_driver": {"start_guard": 0.5}}})
    with pytest.raises(ConfigError, match="loop.start_guard"):
        load_config("configs/demo.yaml", {"loop": {"start_guard": 0.3}})
    assert load_config("configs/real/kuka_position_torque.yaml",
                       {"robot": {"kuka_driver": {"start_guard": 0.5}}}).robot.kuka_driver.start_guard == 0.5
