"""Programmatic model building and the MultibodyPlant/Joint API, with Drake's semantics."""
import numpy as np
import pytest

from dynamics_cy import (
    BallRpyJoint,
    BodyIndex,
    FixedOffsetFrame,
    FrameIndex,
    JointIndex,
    ModelError,
    MultibodyPlant,
    PrismaticJoint,
    Quaternion,
    RevoluteJoint,
    RigidTransform,
    RollPitchYaw,
    RotationMatrix,
    SpatialInertia,
    SpatialVelocity,
    UnitInertia,
    WeldJoint,
    default_model_instance,
)

Z = [0.0, 0.0, 1.0]
M1 = SpatialInertia(1.0, [0.0, 0.0, -0.1], UnitInertia(0.02, 0.02, 0.01))


def chain(n=3, time_step=0.0):
    plant = MultibodyPlant(time_step)
    parent = plant.world_frame()
    for i in range(n):
        b = plant.AddRigidBody(f"link{i}", M1)
        j = plant.AddJoint(RevoluteJoint(f"joint{i}", parent, b.body_frame(), Z, -1.0 - i, 1.0 + i, 0.1 * i))
        plant.AddJointActuator(f"motor{i}", j, 10.0 * (i + 1))
        parent = b.body_frame()
    return plant


def test_construction_sizes_and_lookup():
    plant = chain(3)
    assert not plant.is_finalized()
    plant.Finalize()
    assert plant.is_finalized()
    assert (plant.num_positions(), plant.num_velocities(), plant.num_actuators()) == (3, 3, 3)
    assert (plant.num_bodies(), plant.num_joints(), plant.num_frames(), plant.num_model_instances()) == (4, 3, 4, 2)
    assert plant.world_body().name() == "world" and plant.world_frame().body() is plant.world_body()
    b = plant.GetBodyByName("link1")
    assert plant.get_body(BodyIndex(2)) is b and b.index() == BodyIndex(2)
    assert plant.GetFrameByName("link1") is b.body_frame() and plant.get_frame(FrameIndex(2)) is b.body_frame()
    j = plant.GetJointByName("joint2")
    assert plant.get_joint(JointIndex(2)) is j
    assert plant.HasBodyNamed("link0") and not plant.HasBodyNamed("nope")
    assert plant.HasJointNamed("joint0") and not plant.HasJointNamed("nope")
    assert plant.GetModelInstanceByName("DefaultModelInstance") == default_model_instance()
    assert plant.time_step() == 0.0 and not plant.is_discrete()


def test_joint_api_follows_drake():
    plant = chain(3)
    plant.Finalize()
    j = plant.GetJointByName("joint1")
    assert j.name() == "joint1" and j.type_name() == "revolute"
    assert (j.position_start(), j.velocity_start(), j.num_positions(), j.num_velocities()) == (1, 1, 1, 1)
    assert j.position_lower_limits().tolist() == [-2.0] and j.position_upper_limits().tolist() == [2.0]
    assert j.velocity_lower_limits().tolist() == [-np.inf] and j.acceleration_upper_limits().tolist() == [np.inf]
    assert j.default_positions().tolist() == [0.0] and j.default_damping_vector().tolist() == [0.1]
    assert j.parent_body().name() == "link0" and j.child_body().name() == "link1"
    assert j.frame_on_parent() is plant.GetFrameByName("link0") and j.frame_on_child() is plant.GetFrameByName("link1")
    assert j.revolute_axis().tolist() == Z
    ctx = plant.CreateDefaultContext()
    j.set_angle(ctx, 0.4)
    j.set_angular_rate(ctx, -0.2)
    assert plant.GetPositions(ctx).tolist() == [0, 0.4, 0] and j.get_angular_rate(ctx) == -0.2
    np.testing.assert_array_equal(plant.GetPositionLowerLimits(), [-1, -2, -3])
    np.testing.assert_array_equal(plant.GetEffortUpperLimits(), [10, 20, 30])
    np.testing.assert_array_equal(plant.GetDampingVector(), [0, 0.1, 0.2])
    np.testing.assert_array_equal(plant.MakeActuationMatrix(), np.eye(3))


def test_pre_and_post_finalize_calls_raise_like_drake():
    plant = chain(1)
    for call in (plant.num_positions, plant.num_velocities, plant.CreateDefaultContext, plant.MakeActuationMatrix,
                 plant.GetPositionLowerLimits, plant.kernels):
        with pytest.raises(RuntimeError, match="Pre-finalize calls|until after MultibodyPlant::Finalize"):
            call()
    plant.Finalize()
    with pytest.raises(RuntimeError, match=r"Post-finalize calls to 'AddRigidBody\(\)' are not allowed"):
        plant.AddRigidBody("late", M1)
    with pytest.raises(RuntimeError, match="Post-finalize calls to 'AddJoint"):
        plant.AddJoint(RevoluteJoint("late", plant.world_frame(), plant.GetFrameByName("link0"), Z))
    with pytest.raises(RuntimeError, match="repeated calls not allowed"):
        plant.Finalize()
    with pytest.raises(RuntimeError, match="Post-finalize"):
        plant.mutable_gravity_field()


def test_bad_construction_raises_with_names():
    plant = MultibodyPlant(0.0)
    a = plant.AddRigidBody("a", M1)
    with pytest.raises(RuntimeError, match="already contains a body named 'a'"):
        plant.AddRigidBody("a", M1)
    with pytest.raises(ValueError, match="negative"):
        SpatialInertia(-1.0, np.zeros(3), UnitInertia(1, 1, 1))
    with pytest.raises(ValueError, match="triangle inequality"):
        SpatialInertia(1.0, np.zeros(3), UnitInertia(1, 1, 3))
    with pytest.raises(ModelError, match="'nan_body'"):
        plant.AddRigidBody("nan_body", SpatialInertia(np.nan, np.zeros(3), UnitInertia(), skip_validity_check=True))
    with pytest.raises(ValueError, match="axis"):
        RevoluteJoint("bad", plant.world_frame(), a.body_frame(), [0, 0, 0])
    with pytest.raises(ValueError, match="connects body 'a' to itself"):
        RevoluteJoint("self", a.body_frame(), a.body_frame(), Z)
    with pytest.raises(ValueError, match="lower limit"):
        RevoluteJoint("lim", plant.world_frame(), a.body_frame(), Z, 1.0, -1.0)
    plant.AddJoint(RevoluteJoint("j1", plant.world_frame(), a.body_frame(), Z))
    with pytest.raises(ModelError, match="child of two joints, 'j1' and 'j2'"):
        plant.AddJoint(PrismaticJoint("j2", plant.world_frame(), a.body_frame(), Z))


def test_kinematic_loop_is_rejected_at_finalize():
    plant = MultibodyPlant(0.0)
    a, b = plant.AddRigidBody("a", M1), plant.AddRigidBody("b", M1)
    plant.AddJoint(RevoluteJoint("ab", a.body_frame(), b.body_frame(), Z))
    plant.AddJoint(RevoluteJoint("ba", b.body_frame(), a.body_frame(), Z))
    with pytest.raises(ModelError, match="cycle"):
        plant.Finalize()


def test_unknown_names_list_the_valid_ones():
    plant = chain(2)
    plant.Finalize()
    with pytest.raises(RuntimeError, match=r"no RigidBody named 'nope'.*link0, link1"):
        plant.GetBodyByName("nope")
    with pytest.raises(RuntimeError, match="no Joint named 'nope'"):
        plant.GetJointByName("nope")
    with pytest.raises(RuntimeError, match="out of bounds"):
        plant.get_body(BodyIndex(99))


def test_unwelded_roots_become_free_bodies_with_drake_coordinates():
    plant = MultibodyPlant(0.0)
    base = plant.AddRigidBody("base", M1)
    leg = plant.AddRigidBody("leg", M1)
    plant.AddJoint(RevoluteJoint("hip", base.body_frame(), leg.body_frame(), Z))
    X = RigidTransform(RollPitchYaw(0.1, -0.2, 0.3), [1.0, 2.0, 3.0])
    plant.SetDefaultFloatingBaseBodyPose(base, X)
    plant.Finalize()
    free = plant.GetJointByName("base")
    assert free.type_name() == "quaternion_floating" and base.is_floating_base_body()
    assert (free.position_start(), free.velocity_start(), plant.GetJointByName("hip").position_start()) == (0, 0, 7)
    assert plant.GetFloatingBaseBodies() == {base.index()}
    ctx = plant.CreateDefaultContext()
    assert plant.GetFreeBodyPose(ctx, base).IsNearlyEqualTo(X, 1e-15)
    np.testing.assert_allclose(plant.GetPositions(ctx)[:4], RotationMatrix(X.rotation()).ToQuaternion().wxyz(),
                               atol=1e-15)
    X2 = RigidTransform(Quaternion(0.5, 0.5, 0.5, 0.5), [0, 0, 1])
    plant.SetFreeBodyPose(ctx, base, X2)
    assert base.EvalPoseInWorld(ctx).IsNearlyEqualTo(X2, 1e-15)
    V = SpatialVelocity([0.1, 0.2, 0.3], [1.0, 0.0, -1.0])
    plant.SetFreeBodySpatialVelocity(base, V, ctx)
    np.testing.assert_allclose(base.EvalSpatialVelocityInWorld(ctx).get_coeffs(), V.get_coeffs(), atol=1e-15)
    with pytest.raises(RuntimeError, match="not a free body"):
        plant.SetFreeBodyPose(ctx, leg, X)


def test_state_ordering_is_depth_first_in_joint_order():
    """Drake's forest: world-joined trees in joint order, then free trees by root index, then lone bodies."""
    plant = MultibodyPlant(0.0)
    f, a, b, c, lone, d = (plant.AddRigidBody(n, M1) for n in ("f", "a", "b", "c", "lone", "d"))
    plant.AddJoint(RevoluteJoint("f_d", f.body_frame(), d.body_frame(), Z))
    plant.AddJoint(RevoluteJoint("b_c", b.body_frame(), c.body_frame(), Z))
    plant.AddJoint(RevoluteJoint("w_b", plant.world_frame(), b.body_frame(), Z))
    plant.AddJoint(RevoluteJoint("a_x", a.body_frame(), plant.AddRigidBody("x", M1).body_frame(), Z))
    plant.AddJoint(WeldJoint("w_a", plant.world_frame(), a.body_frame(), RigidTransform()))
    plant.Finalize()
    starts = {j.name(): j.position_start() for j in plant._joints}
    assert starts["w_b"] == 0 and starts["b_c"] == 1 and starts["a_x"] == 2
    assert starts["f"] == 3 and starts["f_d"] == 10 and starts["lone"] == 11
    assert [plant.get_joint(JointIndex(i)).name() for i in range(5, 7)] == ["f", "lone"]


def test_model_instances_and_per_instance_state():
    plant = MultibodyPlant(0.0)
    arms = [plant.AddModelInstance(name) for name in ("left", "right")]
    with pytest.raises(RuntimeError, match="already contains a model instance named 'left'"):
        plant.AddModelInstance("left")
    for k, mi in enumerate(arms):
        b1, b2 = plant.AddRigidBody("upper", mi, M1), plant.AddRigidBody("lower", mi, M1)
        plant.AddJoint(RevoluteJoint("shoulder", plant.world_frame(), b1.body_frame(), Z))
        plant.AddJoint(BallRpyJoint("elbow", b1.body_frame(), b2.body_frame()))
    with pytest.raises(RuntimeError, match="explicit model instance"):
        plant.AddRigidBody("x", M1)
    plant.Finalize()
    with pytest.raises(RuntimeError, match="appears in multiple model instances"):
        plant.GetBodyByName("upper")
    right = plant.GetModelInstanceByName("right")
    assert plant.GetBodyByName("upper", right).model_instance() == right
    assert plant.num_positions(right) == 4 and plant.num_velocities(arms[0]) == 4
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, right, [1, 2, 3, 4])
    plant.SetVelocities(ctx, arms[0], [5, 6, 7, 8])
    assert plant.GetPositions(ctx).tolist() == [0, 0, 0, 0, 1, 2, 3, 4]
    assert plant.GetVelocities(ctx, arms[0]).tolist() == [5, 6, 7, 8]
    q = np.zeros(8)
    plant.SetPositionsInArray(arms[0], [9, 9, 9, 9], q)
    assert plant.GetPositionsFromArray(arms[0], q).tolist() == [9, 9, 9, 9]
    assert plant.GetJointByName("elbow", right).scoped_name() == "right::elbow"


def test_fixed_offset_frames_and_weld_frames():
    plant = MultibodyPlant(0.0)
    a = plant.AddRigidBody("a", M1)
    X_AF = RigidTransform(RollPitchYaw(0.3, 0, 0), [0, 0.1, 0])
    F = plant.AddFrame(FixedOffsetFrame("F", a.body_frame(), X_AF))
    G = plant.AddFrame(FixedOffsetFrame("G", F, RigidTransform([0.5, 0, 0])))
    weld = plant.WeldFrames(plant.world_frame(), a.body_frame(), RigidTransform([0, 0, 1.0]))
    assert weld.name() == "world_welds_to_a" and weld.type_name() == "weld"
    plant.Finalize()
    assert plant.num_positions() == 0
    ctx = plant.CreateDefaultContext()
    X_WG = plant.CalcRelativeTransform(ctx, plant.world_frame(), G)
    expected = RigidTransform([0, 0, 1.0]) @ X_AF @ RigidTransform([0.5, 0, 0])
    assert X_WG.IsNearlyEqualTo(expected, 1e-15) and G.body() is a
    np.testing.assert_allclose(plant.CalcPointsPositions(ctx, G, np.zeros((3, 1)), plant.world_frame())[:, 0],
                               expected.translation(), atol=1e-15)


def test_gravity_field_and_zero_gravity():
    plant = chain(2)
    assert plant.gravity_field().gravity_vector().tolist() == [0, 0, -9.81]
    plant.mutable_gravity_field().set_gravity_vector([0, 0, 0])
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, [0.3, 0.4])
    np.testing.assert_array_equal(plant.CalcGravityGeneralizedForces(ctx), [0, 0])


def test_context_is_checked_and_vectors_sized():
    plant, other = chain(2), chain(2)
    plant.Finalize()
    other.Finalize()
    with pytest.raises(RuntimeError, match="not created by this plant"):
        plant.GetPositions(other.CreateDefaultContext())
    with pytest.raises(ValueError, match="3 elements; expected 2"):
        plant.SetPositions(plant.CreateDefaultContext(), [1, 2, 3])
