"""The grippers' models: our WSG 50 (configs/robots/schunk_wsg_50.urdf) read by dynamics_cy's parser
and by pydrake's give the same bodies, joints, inertias, actuators and finger kinematics, its mimic
becomes Drake's coupler; the Panda hand of example-robot-data loads in both."""
import numpy as np
import pytest

from drivers.core.paths import CONFIGS
from drivers.grippers import WsgLimits
from dynamics_cy import MultibodyPlant
from dynamics_cy.parsing import Parser
from dynamics_cy.planning.legged_models import example_robot_data_root

WSG = CONFIGS / "robots" / "schunk_wsg_50.urdf"
FINGERS = ("left_finger_sliding_joint", "right_finger_sliding_joint")
BODIES = ("body", "left_finger", "right_finger")


def _ours(path, package=None):
    plant = MultibodyPlant(0.001)
    parser = Parser(plant)
    if package:
        parser.package_map().Add(*package)
    parser.AddModels(str(path))
    plant.Finalize()
    return plant


def _drakes(path, package=None):
    from pydrake.multibody.parsing import Parser as DrakeParser
    from pydrake.multibody.plant import DiscreteContactApproximation
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    plant = DrakePlant(0.001)
    plant.set_discrete_contact_approximation(DiscreteContactApproximation.kSap)   # mimic needs SAP
    parser = DrakeParser(plant)
    if package:
        parser.package_map().Add(*package)
    parser.AddModels(str(path))
    plant.Finalize()
    return plant


def test_wsg_50_is_the_published_gripper_in_drakes_layout():
    plant = _ours(WSG)
    masses = [plant.GetBodyByName(name).default_mass() for name in BODIES]
    assert sum(masses) == pytest.approx(1.2)
    left, right = (plant.GetJointByName(name) for name in FINGERS)
    assert right.position_upper_limits()[0] - left.position_lower_limits()[0] == pytest.approx(
        WsgLimits().stroke_mm / 1000)
    assert left.position_upper_limits()[0] == 0 == right.position_lower_limits()[0]   # closed: touching
    assert plant.num_actuators() == 2
    (coupler,) = plant.get_coupler_constraint_specs().values()          # the <mimic>: Drake's coupler
    assert (plant.get_joint(coupler.joint0_index).name(), plant.get_joint(coupler.joint1_index).name(),
            coupler.gear_ratio, coupler.offset) == (FINGERS[0], FINGERS[1], -1.0, 0.0)


def test_wsg_50_reads_the_same_in_pydrake():
    pytest.importorskip("pydrake")
    ours, theirs = _ours(WSG), _drakes(WSG)
    assert (ours.num_bodies(), ours.num_joints(), ours.num_actuators(), ours.num_positions()) == \
        (theirs.num_bodies(), theirs.num_joints(), theirs.num_actuators(), theirs.num_positions())
    assert ours.num_constraints() == theirs.num_constraints() == 1    # the mimic is Drake's coupler constraint
    for name in BODIES:
        a, b = ours.GetBodyByName(name), theirs.GetBodyByName(name)
        assert a.default_mass() == b.default_mass()
        np.testing.assert_allclose(a.default_com(), b.default_com())
        np.testing.assert_allclose(a.default_rotational_inertia().CopyToFullMatrix3(),
                                   b.default_rotational_inertia().CopyToFullMatrix3())
    for name in FINGERS:
        a, b = ours.GetJointByName(name), theirs.GetJointByName(name)
        assert a.type_name() == b.type_name() == "prismatic"
        np.testing.assert_allclose(a.position_lower_limits(), b.position_lower_limits())
        np.testing.assert_allclose(a.position_upper_limits(), b.position_upper_limits())
        np.testing.assert_allclose(a.translation_axis(), b.translation_axis())
    # Open 80 mm: the pads' inner faces (finger frame origins) sit ±40 mm along the body's x.
    poses = []
    for plant in (ours, theirs):
        context = plant.CreateDefaultContext()
        plant.GetJointByName(FINGERS[0]).set_translation(context, -0.04)
        plant.GetJointByName(FINGERS[1]).set_translation(context, 0.04)
        poses.append([plant.EvalBodyPoseInWorld(context, plant.GetBodyByName(name)).translation()
                      for name in BODIES[1:]])
    np.testing.assert_allclose(poses[0], poses[1], atol=1e-15)
    np.testing.assert_allclose(poses[0], [[-0.04, 0.03625, 0.0], [0.04, 0.03625, 0.0]], atol=1e-15)


def test_panda_hand_of_example_robot_data_loads_in_both():
    root = example_robot_data_root()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    urdf = root / "robots" / "panda_description" / "urdf" / "panda.urdf"
    package = ("example-robot-data", str(root))
    ours = _ours(urdf, package)
    joints = [ours.GetJointByName(f"panda_finger_joint{i}") for i in (1, 2)]
    assert [j.position_upper_limits()[0] for j in joints] == [0.04, 0.04]      # width 0–80 mm
    (coupler,) = ours.get_coupler_constraint_specs().values()
    assert ours.get_joint(coupler.joint0_index).name() == "panda_finger_joint2"
    pytest.importorskip("pydrake")
    theirs = _drakes(urdf, package)
    assert (ours.num_bodies(), ours.num_positions()) == (theirs.num_bodies(), theirs.num_positions())
    assert ours.num_constraints() == theirs.num_constraints() == 1
    for name in ("panda_hand", "panda_leftfinger", "panda_rightfinger"):
        assert ours.GetBodyByName(name).default_mass() == theirs.GetBodyByName(name).default_mass()
