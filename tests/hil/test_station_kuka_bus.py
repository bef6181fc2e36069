"""kuka_driver --num_robots N in front of a station's iiwas (station.layout num_robots): one status of
7·N joints and one command of 7·N on the driver's channels, as kuka_driver.cc lays them out; the
driver's process-wide failures end every arm at once; the loop's side allocation-free."""
import lcm
import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.sim.real_drivers import ABORT_STATUS
from drivers.station import load_station
from hil.station import make_station_lockstep
from messages.codec import StatusEncoder
from messages.drake import lcmt_iiwa_command, lcmt_iiwa_status
from messages.enums import SafetyState
from tests.hil.test_hil_alloc import SCALARS_PEAK, transient_peaks

SCENARIO = "configs/scenarios/station_kuka_num_robots.yaml"


def station(**station_keys):
    s = load_station(SCENARIO, {"station": station_keys} if station_keys else None)
    return s


def test_one_status_and_one_command_of_fourteen_joints():
    """Every status on IIWA_STATUS carries both arms (the left's joints 0..6, the right's 7..13) with
    robot 0's utime (−1 until the driver's clock synchronised); every command on IIWA_COMMAND carries
    14 positions and 14 torques; no arm's own status or command is on the bus (its telemetry is)."""
    lc = lcm.LCM("memq://")
    seen = {"IIWA_STATUS": [], "IIWA_COMMAND": [], "other": []}
    lc.subscribe("IIWA_STATUS", lambda c, d: seen[c].append(lcmt_iiwa_status.decode(d)))
    lc.subscribe("IIWA_COMMAND", lambda c, d: seen[c].append(lcmt_iiwa_command.decode(d)))
    lc.subscribe("(LEFT|RIGHT)_IIWA_.*", lambda c, d: seen["other"].append(c))
    loop, sim = make_station_lockstep(station(), lc)
    left, right = loop.arms["left"], loop.arms["right"]
    try:
        sim.publish_status()
        loop.activate()
        for _ in range(400):
            loop.update()
            s = seen["IIWA_STATUS"][-1]
            if left.hardware.timing.last_tick == loop.tick_index - 1:
                assert np.array_equal(left.q, s.joint_position_measured[:7])
                assert np.array_equal(right.q, s.joint_position_measured[7:])
    finally:
        loop.close()
        sim.close()
    while lc.handle_timeout(0) > 0:          # the last status and the exit command
        pass
    statuses, commands = seen["IIWA_STATUS"], seen["IIWA_COMMAND"]
    assert len(statuses) == 401 and {s.num_joints for s in statuses} == {14}
    assert [s.utime for s in statuses[:199]] == [-1] * 199 and statuses[250].utime > 0
    assert np.isnan(statuses[0].joint_position_ipo).all()            # FRI monitoring: no ipo yet
    np.testing.assert_array_equal(statuses[-1].joint_position_measured[:7], sim.robots["left"].physics.q)
    # (the right arm's joint 1 reading is frozen from 1 s: sim.faults freeze_sensor)
    np.testing.assert_array_equal(statuses[-1].joint_position_measured[8:], sim.robots["right"].physics.q[1:])
    assert statuses[-1].joint_position_measured[7] != sim.robots["right"].physics.q[0]
    assert commands and {(c.num_joints, c.num_torques) for c in commands} == {(14, 14)}
    # the first command after the 0.3 s start guard (60 statuses at 200 Hz), then one per tick
    assert len(commands) == 400 - 60 + 1 and seen["other"] == []
    assert loop.bus.summary()["commands_sent"] == len(commands)


def test_a_short_command_ends_the_driver_for_every_arm():
    """A command of 7 joints for --num_robots 2: kuka_driver copies 14 out of it unchecked; the model
    stops the process, so neither arm gets another status and both loops time out."""
    lc = lcm.LCM("memq://")
    loop, sim = make_station_lockstep(station(on_fault="continue_others"), lc)
    try:
        sim.publish_status()
        loop.activate()
        for _ in range(100):
            loop.update()
        bad = lcmt_iiwa_command()
        bad.utime, bad.num_joints, bad.joint_position = 1, 7, [0.0] * 7
        lc.publish("IIWA_COMMAND", bad.encode())
        for _ in range(10):
            loop.update()
    finally:
        loop.close()
        sim.close()
    for name, robot in sim.robots.items():
        assert robot.exited is not None and robot.exited.status == ABORT_STATUS, name
        assert "for --num_robots 2: kuka_driver copies 14" in robot.exited.message
    assert all(a.safety.fault.name == "STATUS_TIMEOUT" for a in loop.arms.values())


def test_a_command_within_the_guard_ends_the_driver_for_every_arm():
    lc = lcm.LCM("memq://")
    loop, sim = make_station_lockstep(station(), lc)
    try:
        sim.publish_status()
        cmd = lcmt_iiwa_command()
        cmd.utime, cmd.num_joints, cmd.joint_position = 1, 14, [0.0] * 14
        lc.publish("IIWA_COMMAND", cmd.encode())
        sim.step_lockstep()
    finally:
        loop.close()
        sim.close()
    assert [r.exited.message for r in sim.robots.values()] == \
        ["First command received within guard time.  Aborting."] * 2


def test_an_unsafe_arm_ends_the_driver_naming_its_robot():
    """kuka_driver's CheckSafety on robot 1's external torque throws "Robot1 is in an unsafe state.":
    the process ends, so robot 0 stops with it."""
    loop, sim = make_station_lockstep(station())
    try:
        sim.robots["right"].push("iiwa_link_4", [0, 0, 0, 0, 0, 400.0], duration=0.1, start=0.5)
        sim.publish_status()
        loop.activate()
        for _ in range(200):
            loop.update()
    finally:
        loop.close()
        sim.close()
    assert sim.robots["right"].exited.message == "Robot1 is in an unsafe state."
    assert sim.robots["left"].exited.message == "Robot1 is in an unsafe state."


@pytest.mark.parametrize("edit, key, words", [
    (lambda d: d["sim"].update(driver="drake_sim"), "station.arms[0].sim.driver", "sim.driver kuka_driver"),
    (lambda d: d["robot"].update(driver="drake_sim"), "station.arms[0].robot.driver", "kuka_driver's, not drake_sim"),
    (lambda d: d["station"]["arms"][1].update(channels={"prefix": "", "command": "X"}), "station.arms[1].channels",
     "must differ from the driver's IIWA_STATUS / IIWA_COMMAND"),
    (lambda d: d["station"].update(command="IIWA_STATUS"), "station.command", "the status channel too"),
])
def test_a_num_robots_station_is_kuka_drivers(edit, key, words):
    import yaml

    from drivers.core.paths import CONFIGS
    from drivers.station import parse_station
    data = yaml.safe_load(open(SCENARIO).read())
    edit(data)
    with pytest.raises(ConfigError) as e:
        parse_station(data, CONFIGS, "s.yaml")
    assert f"s.yaml: {key}" in str(e.value) and words in str(e.value), str(e.value)


def test_the_bridge_tick_allocates_no_more_than_the_messages_it_receives():
    """A station tick with the driver's status every tick: the combined status decoded and split, each
    arm's tick, the commands joined and published: beyond lcm-python's bytes of each message received
    (the status on the bus, each arm's status and command on the private LCM), scalars only."""
    s = station()
    lc = lcm.LCM("memq://")
    from hil.station import StationLoop
    loop = StationLoop(s, lc, "lockstep").configure()
    loop.activate()
    enc = StatusEncoder("iiwa", 14, "IIWA_STATUS")
    q = np.tile([0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0], 2)
    enc.encode(1000, position_measured=q, velocity_estimated=np.zeros(14), position_commanded=q, position_ipo=q)
    data = enc.tobytes()

    def tick():
        lc.publish("IIWA_STATUS", data)
        loop.update()
    for _ in range(400):
        tick()
    assert all(a.safety.state == SafetyState.RUNNING for a in loop.arms.values())
    lc.subscribe("OTHER", lambda c, d: None)
    receive = max(transient_peaks(lambda: (lc.publish("OTHER", data), lc.handle_timeout(0)), 300))
    peaks = transient_peaks(tick, 2000)
    loop.close()
    assert loop.bus.sent >= 2000
    assert max(peaks) <= 5 * receive + 2 * SCALARS_PEAK, (max(peaks), receive)
