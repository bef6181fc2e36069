"""sim.gripper: a gripper welded to the simulated arm's flange, its driver model run each step over LCM."""
from itertools import combinations

import lcm
import numpy as np
import pytest

from drivers.core.config import RobotConfig
from drivers.core.paths import DEFAULT_ROBOT
from drivers.core.robot import add_gripper, build_plant, parse_model
from drivers.core.schema import ConfigError
from drivers.sim import SimulatedRobot, load_sim_config
from dynamics_cy import Box, CoulombFriction, RigidTransform, SpatialInertia, UnitInertia
from messages.codec import WsgCommandEncoder
from messages.drake import lcmt_schunk_wsg_status

IIWA = RobotConfig(str(DEFAULT_ROBOT), end_effector="iiwa_link_ee")
LINKS = [f"iiwa_link_{i}" for i in range(8)]
# contact only between the pads and the part: the arm's and the gripper's bodies never touch each other
EXCLUDE = [list(pair) for pair in combinations(LINKS + ["body", "left_finger", "right_finger"], 2)] + \
    [[link, "part"] for link in LINKS]
PART = 0.05                     # m: the part's width between the pads
SIM = {"gravity_compensation": "internal", "gripper": {"type": "wsg50"}}


def _drain(lc):
    while lc.handle_timeout(0) > 0:
        pass


def _run(robot, lc, seconds):
    for _ in range(round(seconds / robot.config.time_step)):
        _drain(lc)
        robot.tick()
    _drain(lc)


def _wsg(lc, sim=None, part=False):
    """The iiwa with the WSG on its flange (and a part welded between the pads), its statuses collected."""
    cfg = load_sim_config(sim or SIM)
    if part:
        plant = parse_model(IIWA, simulated=True)
        add_gripper(plant, cfg.gripper, IIWA.end_effector)
        body = plant.GetBodyByName("body")
        box = plant.AddRigidBody("part", body.model_instance(), SpatialInertia(0.1, np.zeros(3),
                                 UnitInertia.SolidBox(PART, 0.03, 0.03)))
        plant.RegisterCollisionGeometry(box, RigidTransform(), Box(PART, 0.03, 0.03), "part", CoulombFriction(1, 1))
        plant.WeldFrames(body.body_frame(), box.body_frame(), RigidTransform([0.0, 0.08625, 0.0]))
        plant.Finalize()
    else:
        plant = build_plant(IIWA, simulated=True, gripper=cfg.gripper)
    robot = SimulatedRobot(plant, cfg, "iiwa", lcm=lc)
    statuses = []
    lc.subscribe("SCHUNK_WSG_STATUS", lambda c, d: statuses.append(lcmt_schunk_wsg_status.decode(d)))
    return robot, statuses


def _command(lc, width_mm, force):
    encoder = WsgCommandEncoder(channel="SCHUNK_WSG_COMMAND")
    encoder.encode_or_raise(0, width_mm, force)
    encoder.publish(lc)


def test_the_arm_protocol_keeps_its_seven_joints_and_the_wsg_starts_open():
    lc = lcm.LCM("memq://")
    robot, statuses = _wsg(lc)
    assert robot.joint_names == [f"iiwa_joint_{i}" for i in range(1, 8)]
    assert robot.gripper.width() == pytest.approx(0.110)
    _run(robot, lc, 0.2)
    assert [s.utime for s in statuses] == [0, 50_000, 100_000, 150_000]      # every 50 ms, the steps that start then
    assert all(s.actual_position_mm == pytest.approx(110.0, abs=0.5) for s in statuses)


def test_closes_to_the_commanded_width_in_free_space():
    lc = lcm.LCM("memq://")
    robot, statuses = _wsg(lc)
    _command(lc, 20.0, 40.0)
    _run(robot, lc, 1.0)
    assert robot.gripper.width() == pytest.approx(0.020, abs=5e-4)
    moving = [s for s in statuses if s.actual_position_mm > 21.0 and abs(s.actual_speed_mm_per_s) > 1.0]
    assert [round(s.actual_speed_mm_per_s) for s in moving[2:4]] == [-420] * 2              # the WSG's top speed
    assert moving and all(s.actual_speed_mm_per_s < 0 for s in moving)            # closing
    last = statuses[-1]
    assert last.actual_position_mm == pytest.approx(20.0, abs=0.5) and abs(last.actual_force) < 5.0
    assert len(statuses) == 20


def test_closes_on_a_part_and_holds_it_with_the_force_limit():
    lc = lcm.LCM("memq://")
    sim = {**SIM, "contact": {"enabled": True, "between_bodies": True, "stiffness": 2e4,
                              "ground": {"enabled": False},
                              "exclude": EXCLUDE}}
    robot, statuses = _wsg(lc, sim, part=True)
    _command(lc, 0.0, 40.0)
    _run(robot, lc, 1.0)
    width = robot.gripper.width()
    assert PART - 0.002 < width < PART + 1e-4                 # stopped at the part (the pads sink a little)
    held = statuses[-5:]
    for s in held:                # holding: at rest, the force limit with the speed's sign (the driver's rule)
        assert s.actual_position_mm == pytest.approx(1e3 * width, abs=0.5)
        assert abs(s.actual_speed_mm_per_s) < 1e-3
        assert s.actual_force == pytest.approx(40.0 if s.actual_speed_mm_per_s > 0 else -40.0, rel=0.02)


def test_the_panda_hand_reports_every_100_ms(tmp_path):
    hand = tmp_path / "hand.urdf"
    hand.write_text(HAND_URDF)
    lc = lcm.LCM("memq://")
    cfg = load_sim_config({"gravity_compensation": "internal",
                           "gripper": {"type": "franka_hand", "model": str(hand)}})
    plant = build_plant(IIWA, simulated=True, gripper=cfg.gripper)
    robot = SimulatedRobot(plant, cfg, "iiwa", lcm=lc)
    statuses = []
    lc.subscribe("PANDA_HAND_STATUS", lambda c, d: statuses.append(lcmt_schunk_wsg_status.decode(d)))
    _run(robot, lc, 3.0)                                      # homing (close, open), then the loop
    times = [s.utime for s in statuses]
    assert times and np.all(np.diff(times) == 100_000)
    assert statuses[-1].actual_position_mm == pytest.approx(80.0, abs=0.5)
    assert all(s.actual_force == 0.0 for s in statuses)


@pytest.mark.parametrize("gripper, key", [
    ({"model": "x.urdf"}, "sim.gripper.type"),
    ({"type": "robotiq"}, "sim.gripper.type"),
    ({"type": "franka_hand"}, "sim.gripper.model"),
    ({"type": "wsg50", "finger": ["a", "b"]}, "sim.gripper.finger"),
])
def test_a_bad_gripper_key_is_refused_by_name(gripper, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_sim_config({"gripper": gripper})


def test_a_bad_attachment_or_finger_is_refused_by_name():
    with pytest.raises(ConfigError, match=r"sim\.gripper\.attach_to"):
        build_plant(IIWA, simulated=True, gripper=load_sim_config({"gripper": {"type": "wsg50",
                                                                               "attach_to": "nope"}}).gripper)
    cfg = load_sim_config({"gripper": {"type": "wsg50", "fingers": ["nope", "right_finger_sliding_joint"]}})
    plant = build_plant(IIWA, simulated=True, gripper=cfg.gripper)
    with pytest.raises(ConfigError, match=r"sim\.gripper\.fingers\[0\]"):
        SimulatedRobot(plant, cfg, "iiwa")


HAND_URDF = """<?xml version="1.0"?>
<robot name="hand">
  <link name="panda_hand"><inertial><mass value="0.73"/><inertia ixx="0.001" iyy="0.0025" izz="0.0017"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="panda_leftfinger"><inertial><origin xyz="0 0 0.02"/><mass value="0.015"/><inertia ixx="2.4e-6"
    iyy="2.4e-6" izz="8e-7" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="panda_rightfinger"><inertial><origin xyz="0 0 0.02"/><mass value="0.015"/><inertia ixx="2.4e-6"
    iyy="2.4e-6" izz="8e-7" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="panda_finger_joint1" type="prismatic"><parent link="panda_hand"/><child link="panda_leftfinger"/>
    <origin xyz="0 0 0.0584"/><axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="100" velocity="0.2"/>
  </joint>
  <joint name="panda_finger_joint2" type="prismatic"><parent link="panda_hand"/><child link="panda_rightfinger"/>
    <origin xyz="0 0 0.0584"/><axis xyz="0 -1 0"/><limit lower="0" upper="0.04" effort="100" velocity="0.2"/>
    <mimic joint="panda_finger_joint1"/></joint>
  <transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
    <joint name="panda_finger_joint1"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
    <actuator name="a1"><mechanicalReduction>1</mechanicalReduction></actuator></transmission>
  <transmission name="t2"><type>transmission_interface/SimpleTransmission</type>
    <joint name="panda_finger_joint2"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
    <actuator name="a2"><mechanicalReduction>1</mechanicalReduction></actuator></transmission>
</robot>
"""
