"""sim.gripper.model: robot — the gripper inside the robot's own model (example-robot-data's Panda and its
hand) split off in the simulated plant (drivers.core.robot.split_subtree): a model instance of its own with
its fingers free and coupled by the <mimic>, where it hung (the hand's pose and the plant's mass unchanged
from the controller's plant, in which the fingers stay welded), and the arm's protocol still the 7 joints."""
import warnings

import lcm
import numpy as np
import pytest

from drivers.core.robot import build_plant
from drivers.sim import SimulatedRobot
from dynamics_cy.planning.legged_models import example_robot_data_root
from hil.running import load

pytestmark = pytest.mark.skipif(example_robot_data_root() is None, reason="example-robot-data is not installed")
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]


@pytest.fixture(scope="module")
def plants():
    warnings.simplefilter("ignore")
    cfg = load("configs/arms/panda_position.yaml", {"lcm": {"url": "memq://"}, "sim": {
        "initial_positions": READY + [0.04, 0.04], "gripper": {"type": "franka_hand", "model": "robot"},
        "contact": {"enabled": True, "between_bodies": True, "stiffness": 5e3, "ground": {"enabled": False},
                    "exclude": [[f"panda_link{i}"] for i in range(8)] + [["panda_hand"]]}}})
    return cfg, build_plant(cfg.robot), build_plant(cfg.robot, simulated=True, gripper=cfg.sim.gripper)


def test_the_hand_is_split_off_with_free_coupled_fingers(plants):
    _, arm, sim = plants
    assert arm.num_positions() == 7 and sim.num_positions() == 9
    fingers = [sim.GetJointByName(n) for n in ("panda_finger_joint1", "panda_finger_joint2")]
    hand = sim.GetBodyByName("panda_hand").model_instance()
    assert all(f.model_instance() == hand for f in fingers)
    assert hand != sim.GetBodyByName("panda_link7").model_instance()
    (spec,) = sim.get_coupler_constraint_specs().values()
    assert {spec.joint0_index, spec.joint1_index} == {f.index() for f in fingers} and spec.gear_ratio == 1.0


def test_the_hand_hangs_where_it_was_and_weighs_the_same(plants):
    _, arm, sim = plants
    a, s = arm.CreateDefaultContext(), sim.CreateDefaultContext()
    arm.SetPositions(a, READY)
    sim.SetPositions(s, np.r_[READY, 0.0, 0.0])
    for name in ("panda_hand", "panda_leftfinger", "panda_rightfinger", "panda_hand_tcp"):
        X_a = arm.GetFrameByName(name).CalcPoseInWorld(a)
        X_s = sim.GetFrameByName(name).CalcPoseInWorld(s)
        assert np.allclose(X_a.GetAsMatrix4(), X_s.GetAsMatrix4(), atol=1e-12), name
    assert sim.CalcTotalMass(s) == pytest.approx(arm.CalcTotalMass(a), rel=1e-12)


def test_the_arm_protocol_keeps_its_7_joints_and_the_hand_reports(plants):
    cfg, _, sim_plant = plants
    lc = lcm.LCM("memq://")
    robot = SimulatedRobot(sim_plant, cfg.sim, "panda", lcm=lc)
    widths = []
    lc.subscribe("PANDA_HAND_STATUS", lambda c, d: widths.append(d))
    for _ in range(3000):                               # the hand homes (close, open), then reports each 100 ms
        robot.tick()
        lc.handle_timeout(0)
    assert len(robot.plant_state()["q"]) == 9 and robot.gripper.instance == sim_plant.GetBodyByName(
        "panda_hand").model_instance()
    assert widths
