"""Force elements (dynamics_cy.force_elements) and the external-force records: each element's force
against its closed form and against pydrake on the same model, energy consistent with the forces (finite
differences, power balance), context parameters, and the small plant methods that came with them."""
import copy

import numpy as np
import pytest

import dynamics_cy as dc
from tests.force_models import context_at, element_forces, namespace, random_state, three_bodies

OURS = namespace("ours")


def free_body_plant(element_of):
    """A free body c (1 kg) and the force element element_of(plant, c), gravity off; finalized."""
    plant = dc.MultibodyPlant(0.0)
    c = plant.AddRigidBody("c", dc.SpatialInertia(1.0, [0, 0, 0], dc.UnitInertia(0.1, 0.1, 0.1)))
    plant.mutable_gravity_field().set_gravity_vector([0, 0, 0])
    element = plant.AddForceElement(element_of(plant, c))
    plant.Finalize()
    return plant, c, element


def set_free(plant, body, X_WB, V_WB):
    ctx = plant.CreateDefaultContext()
    plant.SetFreeBodyPose(ctx, body, X_WB)
    plant.SetFreeBodySpatialVelocity(body, dc.SpatialVelocity(V_WB), ctx)
    return ctx


# --- closed forms ------------------------------------------------------------------------------------
def test_linear_spring_damper_force_is_along_the_spring():
    k, c, l0 = 30.0, 2.5, 0.8
    p_WP, p_BQ = np.array([0.1, -0.2, 0.3]), np.array([0.05, 0.1, -0.1])
    plant, body, spring = free_body_plant(lambda p, b: dc.LinearSpringDamper(p.world_body(), p_WP, b, p_BQ, l0, k, c))
    X_WB = dc.RigidTransform(dc.RollPitchYaw(0.3, -0.2, 0.5), [1.0, 0.4, 0.9])
    V_WB = np.array([0.2, -0.1, 0.3, 0.5, -0.4, 0.2])
    ctx = set_free(plant, body, X_WB, V_WB)
    p_BoQ_W = X_WB.rotation() @ p_BQ
    d = X_WB.translation() + p_BoQ_W - p_WP
    length, r = np.linalg.norm(d), d / np.linalg.norm(d)
    rate = (V_WB[3:] + np.cross(V_WB[:3], p_BoQ_W)) @ r
    f_Q = -(k * (length - l0) + c * rate) * r                       # on B at Q: pulls Q back toward P
    forces = dc.MultibodyForces(plant)
    spring.CalcAndAddForceContribution(ctx, forces)
    np.testing.assert_allclose(forces.body_forces()[1].get_coeffs(), np.r_[np.cross(p_BoQ_W, f_Q), f_Q], atol=1e-13)
    np.testing.assert_allclose(forces.body_forces()[0].get_coeffs()[3:], -f_Q, atol=1e-13)
    assert spring.CalcPotentialEnergy(ctx) == pytest.approx(0.5 * k * (length - l0) ** 2, rel=1e-14)
    assert spring.CalcConservativePower(ctx) == pytest.approx(-k * (length - l0) * rate, rel=1e-12)
    assert spring.CalcNonConservativePower(ctx) == pytest.approx(-c * rate ** 2, rel=1e-12)
    assert (spring.bodyA(), spring.bodyB(), spring.free_length(), spring.stiffness(), spring.damping()) == \
        (plant.world_body(), body, l0, k, c)
    np.testing.assert_array_equal(spring.p_BQ(), p_BQ)


def test_linear_spring_damper_rejects_bad_parameters_and_a_zero_length():
    plant = dc.MultibodyPlant(0.0)
    b = plant.AddRigidBody("b", dc.SpatialInertia(1.0, [0, 0, 0], dc.UnitInertia(0.1, 0.1, 0.1)))
    W = plant.world_body()
    for bad in ((0.0, 1.0, 1.0), (1.0, -1.0, 1.0), (1.0, 1.0, -0.1)):
        with pytest.raises(ValueError):
            dc.LinearSpringDamper(W, [0, 0, 0], b, [0, 0, 0], *bad)
    spring = plant.AddForceElement(dc.LinearSpringDamper(W, [0, 0, 0], b, [0, 0, 0], 1.0, 1.0, 1.0))
    plant.Finalize()
    with pytest.raises(RuntimeError, match="nearly zero"):
        spring.CalcPotentialEnergy(plant.CreateDefaultContext())     # the body sits on P: zero length


def revolute_plant(*elements):
    """A pendulum (1 kg at 0.5 m) on a revolute joint about y with the given elements(joint); gravity on."""
    plant = dc.MultibodyPlant(0.0)
    b = plant.AddRigidBody("b", dc.SpatialInertia.PointMass(1.0, [0, 0, -0.5]))
    j = plant.AddJoint(dc.RevoluteJoint("j", plant.world_frame(), b.body_frame(), [0, 1, 0]))
    added = [plant.AddForceElement(e(j)) for e in elements]
    plant.Finalize()
    return plant, j, added


def test_revolute_spring_torque_and_its_context_parameters():
    plant, j, (spring,) = revolute_plant(lambda j: dc.RevoluteSpring(j, 0.1, 100.0))
    ctx = plant.CreateDefaultContext()
    j.set_angle(ctx, 0.4)
    j.set_angular_rate(ctx, -0.7)
    tau_g = plant.CalcGravityGeneralizedForces(ctx)
    np.testing.assert_allclose(element_forces(OURS, plant, ctx), tau_g + 100.0 * (0.1 - 0.4), atol=1e-13)
    assert spring.CalcPotentialEnergy(ctx) == pytest.approx(0.5 * 100.0 * 0.3 ** 2)
    assert spring.CalcConservativePower(ctx) == pytest.approx(100.0 * (0.1 - 0.4) * -0.7)
    clone = ctx.Clone()
    spring.SetStiffness(ctx, 50.0)
    spring.SetNominalAngle(ctx, -0.2)
    assert (spring.GetStiffness(ctx), spring.GetNominalAngle(ctx)) == (50.0, -0.2)
    assert spring.GetStiffness(clone) == spring.default_stiffness() == 100.0
    assert spring.default_nominal_angle() == 0.1
    np.testing.assert_allclose(element_forces(OURS, plant, ctx), tau_g + 50.0 * (-0.2 - 0.4), atol=1e-13)
    assert spring.GetStiffness(ctx.Clone()) == 50.0
    with pytest.raises(ValueError):
        spring.SetStiffness(ctx, -1.0)
    with pytest.raises(TypeError):
        dc.RevoluteSpring(dc.PrismaticJoint("p", plant.world_frame(), plant.GetFrameByName("b"), [1, 0, 0]), 0, 1)


def test_prismatic_spring_force():
    plant = dc.MultibodyPlant(0.0)
    b = plant.AddRigidBody("b", dc.SpatialInertia.PointMass(2.0, [0, 0, 0]))
    j = plant.AddJoint(dc.PrismaticJoint("j", plant.world_frame(), b.body_frame(), [1, 0, 0]))
    spring = plant.AddForceElement(dc.PrismaticSpring(j, 0.25, 80.0))
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    j.set_translation(ctx, -0.05)
    np.testing.assert_allclose(element_forces(OURS, plant, ctx), [80.0 * 0.3], atol=1e-13)
    assert (spring.joint(), spring.nominal_position(), spring.stiffness()) == (j, 0.25, 80.0)
    np.testing.assert_allclose(plant.CalcForwardDynamics(ctx, [0.0]), [80.0 * 0.3 / 2.0], rtol=1e-14)


def test_door_hinge_torques_are_drakes_curves():
    config = dc.DoorHingeConfig()
    plant, j, (hinge,) = revolute_plant(lambda j: dc.DoorHinge(j, config))
    assert hinge.CalcHingeSpringTorque(angle=0.01) == -2.265       # the catch is centred at qc₀/2: spring only
    assert hinge.CalcHingeFrictionalTorque(angular_rate=0.0) == 0.0
    q, qd, c = 0.3, 0.002, config
    s = np.tanh(qd / c.motion_threshold)
    friction = -(c.dynamic_friction_torque * s + c.static_friction_torque * 2 * s * (1 - s * s)
                 + c.viscous_friction * qd)
    x = np.tanh((q - c.catch_width / 2) / (c.catch_width / 2))
    spring = c.catch_torque * 2 * x * (1 - x * x) - c.spring_constant * (q - c.spring_zero_angle_rad)
    assert hinge.CalcHingeTorque(q, qd) == pytest.approx(friction + spring, rel=1e-14)
    ctx = plant.CreateDefaultContext()
    j.set_angle(ctx, q)
    j.set_angular_rate(ctx, qd)
    np.testing.assert_allclose(element_forces(OURS, plant, ctx) - plant.CalcGravityGeneralizedForces(ctx),
                               [friction + spring], rtol=1e-13)
    assert hinge.CalcNonConservativePower(ctx) == pytest.approx(qd * friction, rel=1e-13)
    assert "spring_zero_angle_rad=-1.5" in repr(config) and copy.deepcopy(config) == config
    with pytest.raises(ValueError, match="viscous_friction"):
        dc.DoorHinge(j, dc.DoorHingeConfig(viscous_friction=-1.0))


def test_door_hinge_energy_is_the_integral_of_its_spring_torque():
    """V(q) = -∫₀^q τ_spring: V(0) = 0 and dV/dq = -τ_spring (central differences)."""
    plant, j, (hinge,) = revolute_plant(lambda j: dc.DoorHinge(j, dc.DoorHingeConfig()))
    ctx = plant.CreateDefaultContext()
    assert hinge.CalcPotentialEnergy(ctx) == 0.0
    h = 1e-6
    for q in (-0.2, 0.004, 0.01, 0.03, 0.7):
        V = []
        for x in (q - h, q + h):
            j.set_angle(ctx, x)
            V.append(hinge.CalcPotentialEnergy(ctx))
        assert (V[1] - V[0]) / (2 * h) == pytest.approx(-hinge.CalcHingeSpringTorque(q), rel=1e-7, abs=1e-7)


def bushing_plant(k012=(10.0, 11.0, 12.0), d012=(1.0, 1.1, 1.2), kxyz=(200.0, 210.0, 220.0), dxyz=(2.0, 2.1, 2.2)):
    return free_body_plant(lambda p, b: dc.LinearBushingRollPitchYaw(p.world_frame(), b.body_frame(), k012, d012,
                                                                      kxyz, dxyz))


def test_bushing_translation_and_yaw_closed_forms():
    """Frames parallel: f_C = -(k ∘ p + d ∘ ṗ) at Bo (halfway); a pure yaw ψ: t_C = -(k₂ ψ + d₂ ψ̇) about z."""
    plant, body, bushing = bushing_plant()
    p, v = np.array([0.03, -0.02, 0.01]), np.array([0.4, 0.1, -0.3])
    ctx = set_free(plant, body, dc.RigidTransform(p), np.r_[0, 0, 0, v])
    f = -(np.array([200.0, 210.0, 220.0]) * p + np.array([2.0, 2.1, 2.2]) * v)
    np.testing.assert_allclose(bushing.CalcBushingSpatialForceOnFrameC(ctx).get_coeffs(),
                               np.r_[np.cross(-0.5 * p, f), f], atol=1e-13)            # f at Bo, about Co
    np.testing.assert_allclose(bushing.CalcBushingSpatialForceOnFrameA(ctx).get_coeffs(),
                               np.r_[-np.cross(0.5 * p, f), -f], atol=1e-13)
    yaw, yaw_rate = 0.4, -0.6
    ctx = set_free(plant, body, dc.RigidTransform(dc.RollPitchYaw(0, 0, yaw), [0, 0, 0]), [0, 0, yaw_rate, 0, 0, 0])
    F_C = bushing.CalcBushingSpatialForceOnFrameC(ctx).get_coeffs()
    np.testing.assert_allclose(F_C, [0, 0, -(12.0 * yaw + 1.2 * yaw_rate), 0, 0, 0], atol=1e-13)
    forces = dc.MultibodyForces(plant)
    bushing.CalcAndAddForceContribution(ctx, forces)
    np.testing.assert_allclose(forces.body_forces()[1].get_coeffs(), F_C, atol=1e-13)  # C = the body frame


def test_bushing_parameters_gimbal_lock_and_energy():
    plant, body, bushing = bushing_plant()
    ctx = plant.CreateDefaultContext()
    bushing.SetForceStiffnessConstants(ctx, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(bushing.GetForceStiffnessConstants(ctx), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(bushing.force_stiffness_constants(), [200.0, 210.0, 220.0])
    assert bushing.link0() is plant.world_body() and bushing.frameC() is body.body_frame()
    ctx = set_free(plant, body, dc.RigidTransform(dc.RollPitchYaw(0.1, np.pi / 2 - 1e-4, 0.2), [0, 0, 0]), np.zeros(6))
    with pytest.raises(dc.GimbalLockError, match="gimbal lock"):
        bushing.CalcBushingSpatialForceOnFrameC(ctx)
    for method in ("CalcPotentialEnergy", "CalcConservativePower", "CalcNonConservativePower"):
        with pytest.raises(RuntimeError, match="not implemented"):
            getattr(plant, method)(plant.CreateDefaultContext())        # as Drake: the bushing has no energy
    with pytest.raises(ValueError, match="non-negative"):
        dc.LinearBushingRollPitchYaw(plant.world_frame(), body.body_frame(), [-1, 0, 0], [0] * 3, [0] * 3, [0] * 3)


def test_bushing_half_rotation_is_half_the_angle():
    R_AC = dc.RotationMatrix(dc.RollPitchYaw(0.7, -0.4, 2.5)).matrix()
    R_AB = dc.LinearBushingRollPitchYaw.half_rotation(R_AC)
    np.testing.assert_allclose(R_AB @ R_AB, R_AC, atol=1e-14)
    assert np.trace(R_AB) >= -1.0 and np.allclose(R_AB.T @ R_AB, np.eye(3), atol=1e-14)


# --- the plant's energy and forces with every element ------------------------------------------------
def test_power_balance_and_potential_energy_by_finite_differences():
    """Pc = -dV/dt along q̇ = N(q) v, and τ_e · v = Pc + Pnc (no joint damping, no bushing: no energy)."""
    plant = three_bodies(OURS, bushing=False)
    for seed in range(3):
        q, v = random_state(plant, seed)
        ctx = context_at(plant, q, v)
        qdot = plant.MapVelocityToQDot(ctx, v)
        h = 1e-6
        V = [plant.CalcPotentialEnergy(context_at(plant, q + s * h * qdot, v)) for s in (-1, 1)]
        Pc, Pnc = plant.CalcConservativePower(ctx), plant.CalcNonConservativePower(ctx)
        assert Pc == pytest.approx(-(V[1] - V[0]) / (2 * h), rel=1e-6)
        assert element_forces(OURS, plant, ctx) @ v == pytest.approx(Pc + Pnc, rel=1e-12)
        assert Pnc < 0                                   # the damper and the hinge's friction dissipate


@pytest.mark.parametrize("bushing", [False, True])
def test_forces_energy_and_accelerations_equal_pydrakes(bushing):
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    drake = namespace("drake")
    ours, theirs = three_bodies(OURS, bushing), three_bodies(drake, bushing)
    assert ours.num_force_elements() == theirs.num_force_elements()
    for seed in range(4):
        q, v = random_state(theirs, seed)
        co, cd = context_at(ours, q, v), context_at(theirs, q, v)
        np.testing.assert_allclose(element_forces(OURS, ours, co), element_forces(drake, theirs, cd), atol=1e-12)
        vdot = theirs.EvalTimeDerivatives(cd).CopyToVector()[theirs.num_positions():]
        np.testing.assert_allclose(ours.CalcForwardDynamics(co, np.zeros(ours.num_velocities())), vdot, atol=1e-11)
        if not bushing:
            for method in ("CalcPotentialEnergy", "CalcConservativePower", "CalcNonConservativePower"):
                assert getattr(ours, method)(co) == pytest.approx(getattr(theirs, method)(cd), rel=1e-13, abs=1e-13)
            continue
        ob, db = ours.get_force_element(dc.ForceElementIndex(5)), theirs.get_force_element(drake.ForceElementIndex(5))
        for method in ("CalcBushingSpatialForceOnFrameA", "CalcBushingSpatialForceOnFrameC"):
            np.testing.assert_allclose(getattr(ob, method)(co).get_coeffs(), getattr(db, method)(cd).get_coeffs(),
                                       atol=1e-12)


def test_elements_check_their_plant_and_repr():
    plant = dc.MultibodyPlant(0.0)
    other = dc.MultibodyPlant(0.0)
    b = other.AddRigidBody("b", dc.SpatialInertia.PointMass(1.0, [0, 0, 0]))
    with pytest.raises(RuntimeError, match="does not belong to this plant"):
        plant.AddForceElement(dc.LinearSpringDamper(plant.world_body(), [0, 0, 0], b, [0, 0, 1], 1.0, 1.0, 0.0))
    spring = other.AddForceElement(dc.LinearSpringDamper(b, [0, 0, 0], other.world_body(), [0, 0, 1], 1.0, 1.0, 0.0))
    assert repr(spring) == "<LinearSpringDamper index=1 model_instance=1>" and not spring.is_ephemeral()  # A's
    assert dc.LinearSpringDamper_[float] is dc.LinearSpringDamper


# --- external forces and records ---------------------------------------------------------------------
def test_force_density_fields():
    class Scaled(dc.ForceDensityField):
        def __init__(self, scale):
            super().__init__()
            self.scale = scale

        def DoEvaluateAt(self, context, p_WQ):
            return self.scale * p_WQ

        def DoClone(self):
            return Scaled(self.scale)

    field = Scaled(2.0)
    assert field.density_type() == dc.ForceDensityType.kPerCurrentVolume and not field.has_parent_system()
    for f in (field, field.Clone(), copy.copy(field), copy.deepcopy(field)):
        np.testing.assert_array_equal(f.EvaluateAt(None, [1, 2, 3]), [2, 4, 6])
    gravity = dc.GravityForceField([0, 0, -9.81], 1000.0)
    assert gravity.density_type() == dc.ForceDensityType.kPerReferenceVolume
    np.testing.assert_array_equal(copy.deepcopy(gravity).EvaluateAt(None, [5, 5, 5]), [0, 0, -9810.0])

    class Broken(dc.ForceDensityField):
        def DoClone(self):
            return self

    with pytest.raises(NotImplementedError, match="DoEvaluateAt"):
        Broken().EvaluateAt(None, [0, 0, 0])
    with pytest.raises(TypeError, match="returned itself"):
        Broken().Clone()
    with pytest.raises(RuntimeError, match="not owned"):
        field.parent_system_or_throw()
    fem = pytest.importorskip("pydrake.multibody.fem")
    assert dc.ForceDensityType.kPerReferenceVolume == fem.ForceDensityType.kPerReferenceVolume
    assert dc.ForceDensityType.kPerCurrentVolume != fem.ForceDensityType.kPerReferenceVolume


def test_externally_applied_spatial_force_copies_are_independent():
    f = dc.ExternallyAppliedSpatialForce()
    assert not f.body_index.is_valid() and np.all(f.p_BoBq_B == 0) and np.all(f.F_Bq_W.get_coeffs() == 0)
    f.body_index, f.p_BoBq_B = dc.BodyIndex(2), np.array([1.0, 2.0, 3.0])
    f.F_Bq_W = dc.SpatialForce([0, 0, 1], [4, 5, 6])
    g = copy.copy(f)
    g.p_BoBq_B[0] = 9.0
    assert g.body_index == 2 and f.p_BoBq_B[0] == 1.0
    np.testing.assert_array_equal(g.F_Bq_W.get_coeffs(), [0, 0, 1, 4, 5, 6])


def test_deformable_contact_info_and_no_deformable_contacts():
    F = dc.SpatialForce([1, 2, 3], [4, 5, 6])
    info = dc.DeformableContactInfo("A", "B", "mesh", F)
    assert (info.id_A(), info.id_B(), info.contact_mesh(), info.F_Ac_W()) == ("A", "B", "mesh", F)
    assert dc.ContactResults().num_deformable_contacts() == 0


# --- the small plant methods -------------------------------------------------------------------------
def test_ephemeral_elements_are_the_ones_finalize_adds():
    plant = three_bodies(OURS)
    floating = [plant.get_joint(i) for i in range(plant.num_joints()) if plant.get_joint(i).num_positions() == 7]
    assert len(floating) == 1 and floating[0].is_ephemeral()
    assert not plant.GetJointByName("ja").is_ephemeral() and not plant.GetFrameByName("Fa").is_ephemeral()
    assert dc.RevoluteJoint.kTypeName == "revolute" == plant.GetJointByName("ja").type_name()


def test_actuation_matrix_pseudoinverse():
    plant = dc.MultibodyPlant(0.0)                       # actuators on both joints, in reverse order
    bodies = [plant.AddRigidBody(n, dc.SpatialInertia.PointMass(1.0, [0, 0, -0.3])) for n in ("a", "b")]
    ja = plant.AddJoint(dc.RevoluteJoint("ja", plant.world_frame(), bodies[0].body_frame(), [0, 1, 0]))
    jb = plant.AddJoint(dc.RevoluteJoint("jb", bodies[0].body_frame(), bodies[1].body_frame(), [0, 1, 0]))
    plant.AddJointActuator("ub", jb)
    plant.AddJointActuator("ua", ja)
    plant.Finalize()
    B, B_plus = plant.MakeActuationMatrix(), plant.MakeActuationMatrixPseudoinverse()
    assert B_plus.format == "csc" and B_plus.shape == (2, 2)
    np.testing.assert_array_equal(B_plus.toarray(), np.linalg.pinv(B))


def test_frame_pose_set_in_a_context():
    """X_PF per context: the kinematics in that context follow it, other contexts keep the default."""
    plant = dc.MultibodyPlant(0.0)
    b = plant.AddRigidBody("b", dc.SpatialInertia.PointMass(1.0, [0, 0, -0.5]))
    j = plant.AddJoint(dc.RevoluteJoint("j", plant.world_frame(), b.body_frame(), [0, 1, 0]))
    tip = plant.AddFrame(dc.FixedOffsetFrame("tip", b.body_frame(), dc.RigidTransform([0, 0, -0.5])))
    tool = plant.AddFrame(dc.FixedOffsetFrame("tool", tip, dc.RigidTransform([0.1, 0, 0])))
    plant.Finalize()
    ctx, other = plant.CreateDefaultContext(), plant.CreateDefaultContext()
    j.set_angle(ctx, 0.3)
    j.set_angle(other, 0.3)
    X_PF = dc.RigidTransform(dc.RollPitchYaw(0, 0, 0.2), [0, 0, -0.8])
    tip.SetPoseInParentFrame(ctx, X_PF)
    assert tip.GetPoseInParentFrame(ctx).IsExactlyEqualTo(X_PF)
    X_WB = plant.EvalBodyPoseInWorld(ctx, b)
    expected = X_WB @ X_PF @ dc.RigidTransform([0.1, 0, 0])
    assert tool.CalcPoseInWorld(ctx).IsNearlyEqualTo(expected, 1e-15)
    assert tool.CalcPoseInWorld(ctx.Clone()).IsNearlyEqualTo(expected, 1e-15)
    assert tool.CalcPoseInWorld(other).IsNearlyEqualTo(X_WB @ dc.RigidTransform([0.1, 0, -0.5]), 1e-15)
    J = plant.CalcJacobianTranslationalVelocity(ctx, dc.JacobianWrtVariable.kV, tool, [0, 0, 0],
                                                plant.world_frame(), plant.world_frame())
    np.testing.assert_allclose(J[:, 0], np.cross([0, 1, 0], expected.translation()), atol=1e-15)
    joints = three_bodies(OURS, bushing=False)
    with pytest.raises(RuntimeError, match="locates a joint"):       # the compiled model holds it
        joints.GetFrameByName("Fa").SetPoseInParentFrame(joints.CreateDefaultContext(), dc.RigidTransform())


def test_joint_limits_can_change_after_finalize():
    """As in Drake: the limits are the joints' (the compiled model holds none), GetPositionLowerLimits follows."""
    plant = three_bodies(OURS, bushing=False)
    ja = plant.GetJointByName("ja")
    ja.set_position_limits([-0.5], [0.7])
    ja.set_velocity_limits([-2.0], [3.0])
    i = ja.position_start()
    assert (plant.GetPositionLowerLimits()[i], plant.GetPositionUpperLimits()[i]) == (-0.5, 0.7)
    assert plant.GetVelocityUpperLimits()[ja.velocity_start()] == 3.0
    with pytest.raises(ValueError, match="exceeds"):
        ja.set_position_limits([1.0], [0.0])
