"""The gripper in the loop (the `gripper` section, hil.gripper): the WSG's status in State.gripper (SI units,
refreshed in place, checked against the driver's own messages decoded by lcm-gen's class), Command.gripper
sent once per change and only once the driver has reported, the trajectory's gripper track, a lost status
as a DRIVER_LINK fault during which no gripper command goes out (the WSG keeps holding), recovery, and the
config's checks. In lockstep against the simulated iiwa with the WSG on its flange (sim.gripper)."""
import json

import lcm
import numpy as np
import pytest

import hil
from drivers.core.schema import ConfigError
from hil.gripper import GripperLink
from hil.lockstep import make_lockstep
from hil.running import load
from hil.telemetry import format_summary
from messages.codec import WsgStatusEncoder
from messages.drake import lcmt_schunk_wsg_command, lcmt_schunk_wsg_status

BASE = {"robot": {"model": "robots/iiwa14.urdf", "protocol": "iiwa", "end_effector": "iiwa_link_ee"},
        "lcm": {"url": "memq://"}, "loop": {"duration": None}, "viz": False, "trajectory": {"type": "hold"},
        "controller": {"type": "gravity_compensation", "robot_compensates_gravity": True},
        "gripper": {"type": "wsg50"},
        "sim": {"gravity_compensation": "internal", "gripper": {"type": "wsg50"}}}


def config(**sections):
    data = {**BASE, **sections}
    return load(data)


class Grip(hil.Controller):
    """Holds still (τ = −τ_g, which the loop takes out again as the robot compensates gravity itself) and
    writes command.gripper from `plan` [(t from s, width m, force N)]; records state.gripper."""

    def __init__(self, plan):
        super().__init__()
        self.plan = plan

    def on_configure(self):
        self.seen, self.arrays = np.full(3, np.nan), set()

    def update(self, state, command):
        self.kernels.gravity(state.q, command.tau)
        np.negative(command.tau, out=command.tau)
        for t, width, force in self.plan:
            if state.t >= t:
                command.gripper[0], command.gripper[1] = width, force
        np.copyto(self.seen, state.gripper)
        self.arrays.add(id(state.gripper))


def run(cfg, law=None, seconds=1.0, on_tick=None):
    """(loop, sim, commands [(sim time s, width mm, force N)], statuses [(t s, message)]) after `seconds`."""
    lc = lcm.LCM("memq://")
    loop, sim = make_lockstep(cfg, lc, controller=law)
    commands, statuses = [], []
    lc.subscribe("SCHUNK_WSG_COMMAND", lambda c, d: commands.append(
        (sim.physics.time_ns * 1e-9, *(lambda m: (m.target_position_mm, m.force))(lcmt_schunk_wsg_command.decode(d)))))
    lc.subscribe("SCHUNK_WSG_STATUS", lambda c, d: statuses.append(
        (sim.physics.time_ns * 1e-9, lcmt_schunk_wsg_status.decode(d))))
    sim.publish_status()
    try:
        summary = loop.run(seconds, on_tick=on_tick)
    finally:
        loop.close()
        sim.close()
    return loop, sim, commands, statuses, summary


def test_the_state_holds_the_wsgs_status_in_si_units_refreshed_in_place():
    law = Grip([(0.0, 0.05, 40.0)])
    loop, sim, commands, statuses, summary = run(config(), law, 1.0)
    last = statuses[-1][1]
    assert law.arrays == {id(loop.state.gripper)} and not loop.state.gripper.flags.writeable
    assert loop.state.has_gripper and 0 <= loop.state.gripper_age < 0.05
    np.testing.assert_allclose(law.seen, [last.actual_position_mm * 1e-3, last.actual_speed_mm_per_s * 1e-3,
                                          abs(last.actual_force)], rtol=0, atol=1e-12)
    assert law.seen[0] == pytest.approx(0.05, abs=1e-4)          # at its target, at rest, free: no force
    assert summary["gripper"]["received"] == len(statuses) and summary["faults"] == []


def test_a_command_goes_out_once_per_change_and_only_after_the_drivers_first_status():
    law = Grip([(0.0, 0.08, 40.0), (0.3, 0.08, 40.0), (0.5, 0.02, 30.0)])      # written every tick
    _, _, commands, statuses, summary = run(config(), law, 1.0)
    assert [(w, f) for _, w, f in commands] == [(80.0, 40.0), (20.0, 30.0)]
    assert commands[0][0] >= statuses[0][0]                 # held back until the driver reported
    assert commands[1][0] == pytest.approx(0.5, abs=2e-3)
    assert summary["gripper"]["commands_sent"] == 2
    assert summary["gripper"]["last_command"] == {"width_m": 0.02, "force_n": 30.0}
    # `hil run`'s printed summary says so too
    line, = [x for x in format_summary(summary).splitlines() if x.startswith("gripper: ")]
    assert json.loads(line[len("gripper: "):]) == json.loads(json.dumps(summary["gripper"]))


def test_without_a_gripper_the_state_says_so():
    cfg = config(gripper={"type": None}, sim={"gravity_compensation": "internal"})
    law = Grip([])
    loop, _, commands, _, summary = run(cfg, law, 0.1)
    assert not loop.state.has_gripper and np.isnan(law.seen).all() and loop.state.gripper_age == np.inf
    assert commands == [] and "gripper" not in summary


def test_the_waypoints_gripper_track_commands_the_wsg_as_each_segment_begins():
    q0 = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    cfg = config(controller={"type": "joint_pd", "kp": [200], "kd": [20, 20, 20, 20, 10, 10, 1],
                                                 "robot_compensates_gravity": True},
                 trajectory={"type": "waypoints", "waypoints": [
                     {"q": q0, "duration": 0.4, "gripper": {"width": 0.09}},
                     {"q": q0, "duration": 0.4},
                     {"q": q0, "duration": 0.4, "gripper": {"width": 0.03, "force": 25.0}}]},
                 gripper={"type": "wsg50", "force": 35.0})
    _, _, commands, statuses, _ = run(cfg, None, 1.5)
    assert [(w, f) for _, w, f in commands] == [(90.0, 35.0), (30.0, 25.0)]
    assert commands[1][0] == pytest.approx(0.8, abs=2e-3)    # the third segment's start
    assert statuses[-1][1].actual_position_mm == pytest.approx(30.0, abs=0.1)


def test_a_lost_status_faults_the_loop_and_no_gripper_command_goes_out_until_it_is_back():
    """The WSG clamps a part's worth (20 mm target on nothing: it closes); at 1.0 s the loop stops hearing the
    gripper: DRIVER_LINK after gripper.timeout (4 statuses, 0.2 s), the law's open command (from 1.2 s) is not
    sent and the WSG's driver keeps executing the last command; at 1.6 s the statuses are heard again and,
    with safety.recover, the loop is RUNNING again and the open command goes out."""
    cfg = config(safety={"recover": True, "recover_after_periods": 50})
    law = Grip([(0.0, 0.02, 40.0), (1.2, 0.1, 40.0)])
    state = {}

    def on_tick(loop):
        t = loop.sim.physics.time_ns * 1e-9
        link = loop.gripper
        if t >= 1.0 and "cut" not in state:
            state["cut"] = True
            loop.lc.unsubscribe(link._subscription)
        if t >= 1.6 and "back" not in state:
            state["back"] = True
            link._subscription = loop.lc.subscribe(link.status_channel, link._on_message)
        if 1.3 <= t < 1.6:
            state.setdefault("target", loop.sim.gripper.driver.target[0])
    loop, sim, commands, _, summary = run(cfg, law, 2.5, on_tick)
    fault = summary["faults"][0]
    assert fault["fault"] == "DRIVER_LINK" and "gripper: no status on SCHUNK_WSG_STATUS for 0.2" in fault["reason"]
    assert 1.15 <= fault["tick"] * 1e-3 <= 1.153          # the last status heard (0.95 s) + 0.2 s, next tick
    assert state["target"] == pytest.approx(0.02)               # still the last command's width: holding
    assert [(w, f) for _, w, f in commands] == [(20.0, 40.0), (100.0, 40.0)]
    assert commands[1][0] > 1.6                                 # the open waited for the recovery
    assert summary["final_state"] == "RUNNING" and summary["gripper"]["link_lost"] == 1


def test_a_gripper_that_never_reports_faults_after_the_start_timeout():
    cfg = config(sim={"gravity_compensation": "internal"}, gripper={"type": "wsg50", "start_timeout": 0.3})
    _, _, _, _, summary = run(cfg, Grip([(0.0, 0.05, 40.0)]), 0.5)
    assert summary["faults"][0]["fault"] == "DRIVER_LINK"
    assert "within gripper.start_timeout 0.3 s" in summary["faults"][0]["reason"]


def test_the_franka_hands_link_has_its_drivers_channels_and_period():
    """franka_hand_driver: PANDA_HAND_*, one status per 100 ms cycle: the default timeout is 0.4 s; the width
    is what it reports × 1e-3 and its force (always 0) and speed (5 mm/s while moving) are read as sent."""
    lc = lcm.LCM("memq://")
    link = GripperLink(lc, load({**BASE, "gripper": {"type": "franka_hand"}, "sim": {}}).gripper)
    assert (link.status_channel, link.command_channel, link.timeout_ns) == \
        ("PANDA_HAND_STATUS", "PANDA_HAND_COMMAND", 400_000_000)
    encoder = WsgStatusEncoder("PANDA_HAND_STATUS")
    encoder.encode_or_raise(0, 61.5, 0.0, 5.0)
    encoder.publish(lc)
    lc.handle_timeout(0)
    link.update(0)
    np.testing.assert_allclose(link.status, [0.0615, 0.005, 0.0])
    link.update(400_000_001)
    assert np.isnan(link.status).all() and link.fault[1].startswith("gripper: no status on PANDA_HAND_STATUS")
    link.close()


@pytest.mark.parametrize("sections, key", [
    ({"gripper": {"type": None}, "trajectory": {"type": "waypoints", "waypoints": [
        {"q": [0.0] * 7, "gripper": {"width": 0.05}}]}}, "trajectory.waypoints[0].gripper"),
    ({"gripper": {"type": "wsg50", "status_channel": "WSG_B_STATUS"}}, "gripper.status_channel"),
    ({"gripper": {"type": "franka_hand"}}, "gripper.type"),
    ({"gripper": {"type": "wsg50", "timeout": 0.0005}}, "gripper.timeout"),
    # a device on the arm's own channel, or on another device's (the one line says whose)
    ({"gripper": {"type": "wsg50", "command_channel": "IIWA_COMMAND"},
      "sim": {"gripper": {"type": "wsg50", "command_channel": "IIWA_COMMAND"}}},
     "gripper.command_channel: the gripper command channel IIWA_COMMAND is the arm's command channel"),
    ({"gripper": {"type": None}, "sim": {"gripper": {"type": "wsg50", "status_channel": "IIWA_STATUS"}}},
     "sim.gripper.status_channel: the simulated gripper's status channel IIWA_STATUS is the arm's status"),
    ({"sensors": {"ft": {"enabled": True, "channel": "SCHUNK_WSG_STATUS"}}},
     "sensors.ft.channel: the F/T sensor channel SCHUNK_WSG_STATUS is the gripper status channel"),
])
def test_a_bad_gripper_config_names_its_key(sections, key):
    with pytest.raises(ConfigError, match=key.replace("[", r"\[").replace("]", r"\]")):
        config(**sections)


def test_a_run_with_a_gripper_replays_bit_for_bit(tmp_path):
    """hil replay feeds the logged gripper statuses to the loop again (with the arm's statuses): the
    pick-and-place scenario's log replays with the same commands and safety transitions."""
    from hil.regress import run_scenario
    from hil.replay import replay
    result = run_scenario("configs/scenarios/pick_place_iiwa_wsg.yaml", logs=str(tmp_path))
    assert result["passed"], result.get("error")
    again = replay(result["log"])
    assert again["passed"] and again["commands"] == 11000 and again["mismatched_commands"] == 0
