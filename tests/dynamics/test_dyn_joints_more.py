"""RpyFloatingJoint, ScrewJoint and UniversalJoint against pydrake on the same chain, and the joints'
per-context API (lock flag, damping, actuator parameters)."""
import numpy as np
import pytest

import dynamics_cy as dc

pydrake = pytest.importorskip("pydrake")
from pydrake.math import RigidTransform as PdRigidTransform  # noqa: E402
from pydrake.math import RollPitchYaw as PdRollPitchYaw  # noqa: E402
from pydrake.multibody import plant as pd_plant  # noqa: E402
from pydrake.multibody import tree as pd_tree  # noqa: E402

OURS = dict(MultibodyPlant=dc.MultibodyPlant, SpatialInertia=dc.SpatialInertia, UnitInertia=dc.UnitInertia,
            RigidTransform=dc.RigidTransform, RollPitchYaw=dc.RollPitchYaw, RevoluteJoint=dc.RevoluteJoint,
            FixedOffsetFrame=dc.FixedOffsetFrame, RpyFloatingJoint=dc.RpyFloatingJoint, ScrewJoint=dc.ScrewJoint,
            UniversalJoint=dc.UniversalJoint, MultibodyForces=dc.MultibodyForces,
            JacobianWrtVariable=dc.JacobianWrtVariable)
DRAKE = dict(MultibodyPlant=pd_plant.MultibodyPlant, SpatialInertia=pd_tree.SpatialInertia,
             UnitInertia=pd_tree.UnitInertia, RigidTransform=PdRigidTransform, RollPitchYaw=PdRollPitchYaw,
             RevoluteJoint=pd_tree.RevoluteJoint, FixedOffsetFrame=pd_tree.FixedOffsetFrame,
             RpyFloatingJoint=pd_tree.RpyFloatingJoint, ScrewJoint=pd_tree.ScrewJoint,
             UniversalJoint=pd_tree.UniversalJoint, MultibodyForces=pd_tree.MultibodyForces,
             JacobianWrtVariable=pd_tree.JacobianWrtVariable)
KINDS = ("rpy_floating", "screw", "screw_z", "universal")


def build(ns, kind):
    """world -revolute-> A -<kind>-> B -revolute-> C, the joint's frames offset on both sides."""
    plant = ns["MultibodyPlant"](0.0)
    rng = np.random.default_rng(7)

    def body(name):
        com = rng.uniform(-0.2, 0.2, 3)
        G = ns["UnitInertia"](0.3, 0.4, 0.5, 0.02, -0.01, 0.03)
        return plant.AddRigidBody(name, ns["SpatialInertia"](1.0 + rng.uniform(), com, G.ShiftFromCenterOfMass(-com)))

    A, B, C = body("A"), body("B"), body("C")
    plant.AddJoint(ns["RevoluteJoint"]("root", plant.world_frame(), A.body_frame(), [0.3, -0.5, 0.8]))
    X_AF = ns["RigidTransform"](ns["RollPitchYaw"](0.2, -0.4, 0.7), [0.1, 0.3, -0.2])
    X_BM = ns["RigidTransform"](ns["RollPitchYaw"](-0.5, 0.1, 0.3), [-0.2, 0.05, 0.15])
    F = plant.AddFrame(ns["FixedOffsetFrame"]("F", A.body_frame(), X_AF))
    M = plant.AddFrame(ns["FixedOffsetFrame"]("M", B.body_frame(), X_BM))
    if kind == "rpy_floating":
        joint = ns["RpyFloatingJoint"]("j", F, M, 0.0, 0.0)
    elif kind == "screw":
        joint = ns["ScrewJoint"]("j", F, M, [0.6, 0.0, -0.8], 0.37, 0.0)
    elif kind == "screw_z":
        joint = ns["ScrewJoint"]("j", F, M, 0.25, 0.0)
    else:
        joint = ns["UniversalJoint"]("j", F, M, 0.0)
    plant.AddJoint(joint)
    plant.AddJoint(ns["RevoluteJoint"]("tip", B.body_frame(), C.body_frame(), [0.0, 1.0, 0.0]))
    plant.Finalize()
    return plant, plant.GetJointByName("j")


@pytest.fixture(params=KINDS)
def pair(request):
    return build(OURS, request.param), build(DRAKE, request.param)


def states(plant, n=4):
    rng = np.random.default_rng(3)
    for _ in range(n):
        yield rng.uniform(-1.2, 1.2, plant.num_positions()), rng.uniform(-2, 2, plant.num_velocities())


def contexts(ours, drake):
    return both_at_states(ours[0], drake[0])


def both_at_states(plant, pd):
    """Contexts (c, cd) of plant and pd set to the same random states in turn."""
    c, cd = plant.CreateDefaultContext(), pd.CreateDefaultContext()
    for q, v in states(plant):
        for p, ctx in ((plant, c), (pd, cd)):
            p.SetPositions(ctx, q)
            p.SetVelocities(ctx, v)
        yield c, cd


def test_layout_matches_drake(pair):
    (plant, j), (pd, jd) = pair
    assert (plant.num_positions(), plant.num_velocities()) == (pd.num_positions(), pd.num_velocities())
    assert j.type_name() == jd.type_name() == type(j).kTypeName
    assert (j.position_start(), j.velocity_start()) == (jd.position_start(), jd.velocity_start())
    assert [j.position_suffix(i) for i in range(j.num_positions())] == \
        [jd.position_suffix(i) for i in range(jd.num_positions())]
    assert [j.velocity_suffix(i) for i in range(j.num_velocities())] == \
        [jd.velocity_suffix(i) for i in range(jd.num_velocities())]
    np.testing.assert_array_equal(j.position_lower_limits(), jd.position_lower_limits())
    np.testing.assert_array_equal(j.default_positions(), jd.default_positions())
    assert (j.can_rotate(), j.can_translate()) == (jd.can_rotate(), jd.can_translate())


def test_kinematics_and_dynamics_match_drake(pair):
    (plant, j), (pd, jd) = pair
    tol = dict(rtol=1e-11, atol=1e-11)
    for c, cd in contexts(*pair):
        X = plant.CalcRelativeTransform(c, j.frame_on_parent(), j.frame_on_child())
        Xd = pd.CalcRelativeTransform(cd, jd.frame_on_parent(), jd.frame_on_child())
        np.testing.assert_allclose(X.GetAsMatrix4(), Xd.GetAsMatrix4(), **tol)
        np.testing.assert_allclose(plant.CalcMassMatrix(c), pd.CalcMassMatrix(cd), **tol)
        np.testing.assert_allclose(plant.CalcBiasTerm(c), pd.CalcBiasTerm(cd), **tol)
        np.testing.assert_allclose(plant.CalcGravityGeneralizedForces(c), pd.CalcGravityGeneralizedForces(cd),
                                   **tol)
        vdot = np.linspace(-1, 1, plant.num_velocities())
        np.testing.assert_allclose(plant.CalcInverseDynamics(c, vdot, dc.MultibodyForces(plant)),
                                   pd.CalcInverseDynamics(cd, vdot, pd_tree.MultibodyForces(pd)), **tol)
        tau = np.linspace(0.5, -0.5, plant.num_velocities())
        M, Cv, tg = pd.CalcMassMatrix(cd), pd.CalcBiasTerm(cd), pd.CalcGravityGeneralizedForces(cd)
        np.testing.assert_allclose(plant.CalcForwardDynamics(c, tau), np.linalg.solve(M, tau + tg - Cv),
                                   rtol=1e-10, atol=1e-10)
        for frame in ("C", "M"):
            J = plant.CalcJacobianSpatialVelocity(c, dc.JacobianWrtVariable.kV, plant.GetFrameByName(frame),
                                                  [0.1, -0.2, 0.3], plant.world_frame(), plant.world_frame())
            Jd = pd.CalcJacobianSpatialVelocity(cd, pd_tree.JacobianWrtVariable.kV, pd.GetFrameByName(frame),
                                                [0.1, -0.2, 0.3], pd.world_frame(), pd.world_frame())
            np.testing.assert_allclose(J, Jd, **tol)
        v = plant.GetVelocities(c)
        np.testing.assert_allclose(plant.MapVelocityToQDot(c, v), pd.MapVelocityToQDot(cd, v), **tol)
        qdot = plant.MapVelocityToQDot(c, v)
        np.testing.assert_allclose(plant.MapQDotToVelocity(c, qdot), pd.MapQDotToVelocity(cd, qdot), **tol)
        np.testing.assert_allclose(plant.MapQDotToVelocity(c, qdot), v, **tol)
        np.testing.assert_allclose(plant.MakeVelocityToQDotMap(c), pd.MakeVelocityToQDotMap(cd).toarray(), **tol)


def test_qdot_is_n_of_v_by_finite_differences(pair):
    """The tip's pose moved along q̇ = N(q) v changes at the rate its spatial velocity V_WC says."""
    (plant, _), _ = pair
    C = plant.GetBodyByName("C")
    h = 1e-6
    for c, _ in contexts(*pair):
        q, qdot = plant.GetPositions(c), plant.MapVelocityToQDot(c, plant.GetVelocities(c))
        V = plant.EvalBodySpatialVelocityInWorld(c, C).get_coeffs()
        poses = []
        for s in (-1, 1):
            plant.SetPositions(c, q + s * h * qdot)
            poses.append(plant.EvalBodyPoseInWorld(c, C))
        plant.SetPositions(c, q)
        R0, R1 = poses[0].rotation().matrix(), poses[1].rotation().matrix()
        W = (R1 - R0) / (2 * h) @ plant.EvalBodyPoseInWorld(c, C).rotation().matrix().T
        np.testing.assert_allclose([W[2, 1], W[0, 2], W[1, 0]], V[:3], atol=1e-7)
        np.testing.assert_allclose((poses[1].translation() - poses[0].translation()) / (2 * h), V[3:], atol=1e-7)


def test_screw_couples_translation_to_rotation():
    plant, j = build(OURS, "screw")
    c = plant.CreateDefaultContext()
    j.set_translation(c, 0.37)                       # one pitch: a full turn
    assert j.get_rotation(c) == pytest.approx(2 * np.pi)
    j.set_translational_velocity(c, 0.037)
    assert j.get_angular_velocity(c) == pytest.approx(0.2 * np.pi)
    assert j.get_translational_velocity(c) == pytest.approx(0.037)
    X = plant.CalcRelativeTransform(c, j.frame_on_parent(), j.frame_on_child())
    np.testing.assert_allclose(X.translation(), 0.37 * np.array([0.6, 0.0, -0.8]), atol=1e-14)
    np.testing.assert_allclose(X.rotation().matrix(), np.eye(3), atol=1e-14)
    zero = dc.ScrewJoint("flat", plant.world_frame(), plant.GetFrameByName("A"), 0.0, 0.0)
    with pytest.raises(RuntimeError, match="pitch"):
        zero.set_default_translation(0.1)


def test_rpy_floating_default_pose_round_trips():
    plant, j = build(OURS, "rpy_floating")
    X = dc.RigidTransform(dc.RollPitchYaw(0.3, -0.2, 1.1), [1.0, 2.0, 3.0])
    j.SetDefaultPose(X)
    np.testing.assert_allclose(j.default_positions(), [0.3, -0.2, 1.1, 1.0, 2.0, 3.0], atol=1e-14)
    np.testing.assert_allclose(j.GetDefaultPose().GetAsMatrix4(), X.GetAsMatrix4(), atol=1e-14)
    with pytest.raises(RuntimeError, match="not implemented for joint type revolute"):
        plant.GetJointByName("root").GetDefaultPose()


def test_lock_and_damping_live_in_the_context():
    plant, j = build(OURS, "universal")
    j.set_default_damping_vector([0.5, 0.7])
    c, other = plant.CreateDefaultContext(), plant.CreateDefaultContext()
    plant.SetVelocities(c, np.ones(plant.num_velocities()))
    j.Lock(c)
    assert j.is_locked(c) and not j.is_locked(other)
    np.testing.assert_array_equal(j.GetVelocities(c), [0.0, 0.0])
    assert j.is_locked(c.Clone())
    j.Unlock(c)
    assert not j.is_locked(c)
    j.SetDampingVector(c, [2.0, 3.0])
    np.testing.assert_array_equal(j.GetDampingVector(c), [2.0, 3.0])
    np.testing.assert_array_equal(j.GetDampingVector(other), [0.5, 0.7])
    with pytest.raises(ValueError, match="non-negative"):
        j.SetDampingVector(c, [-1.0, 0.0])
    # The context's damping is what its dynamics use: -d ∘ v.
    v = np.array([0.3, -0.4, 0.5, 0.6])
    plant.SetVelocities(c, v)
    forces = dc.MultibodyForces(plant)
    plant.CalcForceElementsContribution(c, forces)
    s = j.velocity_start()
    np.testing.assert_allclose(forces.generalized_forces()[s:s + 2], -np.array([2.0, 3.0]) * v[s:s + 2])
    added = dc.MultibodyForces(plant)
    j.AddInDamping(c, added)
    j.AddInOneForce(c, 1, 0.25, added)
    np.testing.assert_allclose(added.generalized_forces()[s:s + 2], [-2.0 * v[s], -3.0 * v[s + 1] + 0.25])
    tau = np.array([0.1, 0.2, -0.1, 0.3])
    M, Cv = plant.CalcMassMatrix(c), plant.CalcBiasTerm(c)
    d = plant.GetDampingVector().copy()
    d[s:s + 2] = [2.0, 3.0]
    tg = plant.CalcGravityGeneralizedForces(c)
    np.testing.assert_allclose(plant.CalcForwardDynamics(c, tau), np.linalg.solve(M, tau + tg - Cv - d * v),
                               atol=1e-12)


def test_actuator_parameters_live_in_the_context():
    plant = dc.MultibodyPlant(0.0)
    G = dc.UnitInertia(0.2, 0.2, 0.2).ShiftFromCenterOfMass([0.0, -0.2, -0.1])
    body = plant.AddRigidBody("b", dc.SpatialInertia(1.0, [0.0, 0.2, 0.1], G))
    joint = plant.AddJoint(dc.RevoluteJoint("j", plant.world_frame(), body.body_frame(), [1, 0, 0]))
    actuator = plant.AddJointActuator("a", joint)
    actuator.set_default_rotor_inertia(0.01)
    actuator.set_default_gear_ratio(10.0)
    plant.Finalize()
    c, other = plant.CreateDefaultContext(), plant.CreateDefaultContext()
    M0 = plant.CalcMassMatrix(c)[0, 0]
    actuator.SetRotorInertia(c, 0.02)
    actuator.SetGearRatio(c, 20.0)
    assert (actuator.rotor_inertia(c), actuator.gear_ratio(c)) == (0.02, 20.0)
    assert (actuator.rotor_inertia(other), actuator.gear_ratio(other)) == (0.01, 10.0)
    # Drake's mass matrix carries the context's reflected inertia ρ² I_r.
    assert plant.CalcMassMatrix(c)[0, 0] == pytest.approx(M0 - 1.0 + 8.0)
    assert plant.CalcMassMatrix(other)[0, 0] == pytest.approx(M0)
    joint.set_angle(c, 0.3)
    tau_g = plant.CalcGravityGeneralizedForces(c)[0]
    assert tau_g != 0
    assert plant.CalcForwardDynamics(c, [1.0])[0] == pytest.approx((1.0 + tau_g) / (M0 + 7.0))
    assert plant.CalcInverseDynamics(c, [1.0], dc.MultibodyForces(plant))[0] == pytest.approx(M0 + 7.0)


SDF = """<?xml version="1.0"?>
<sdf version="1.10"><model name="m">
  <link name="a"><pose>0 0 1 0 0 0</pose><inertial><mass>2</mass><pose>0.1 0 0 0 0 0</pose>
    <inertia><ixx>0.1</ixx><iyy>0.2</iyy><izz>0.25</izz></inertia></inertial></link>
  <link name="b"><pose>0.3 0 1 0.2 0 0</pose><inertial><mass>1</mass><pose>0 0.1 0.2 0 0 0</pose>
    <inertia><ixx>0.05</ixx><iyy>0.06</iyy><izz>0.07</izz></inertia></inertial></link>
  <joint name="u" type="universal"><parent>world</parent><child>a</child><pose>0 0 0.1 0 0 0</pose>
    <axis><xyz>0 0.6 0.8</xyz><dynamics><damping>0.3</damping></dynamics></axis>
    <axis2><xyz>1 0 0</xyz></axis2></joint>
  <joint name="s" type="screw"><parent>a</parent><child>b</child>
    <axis><xyz>0 1 1</xyz></axis><screw_thread_pitch>0.02</screw_thread_pitch></joint>
</model></sdf>
"""


def test_sdformat_screw_and_universal_load_as_drake():
    plant = dc.MultibodyPlant(0.0)
    dc.Parser(plant).AddModelsFromString(SDF, "sdf")
    plant.Finalize()
    pd = pd_plant.MultibodyPlant(0.0)
    from pydrake.multibody.parsing import Parser as PdParser
    PdParser(pd).AddModelsFromString(SDF, "sdf")
    pd.Finalize()
    assert plant.num_actuators() == pd.num_actuators() == 1
    assert plant.GetJointByName("s").screw_pitch() == pd.GetJointByName("s").screw_pitch()
    np.testing.assert_array_equal(plant.GetDampingVector(), pd.GetJointByName("u").default_damping_vector().tolist()
                                  + [0.0])
    for c, cd in both_at_states(plant, pd):
        for name in ("a", "b"):
            np.testing.assert_allclose(plant.EvalBodyPoseInWorld(c, plant.GetBodyByName(name)).GetAsMatrix4(),
                                       pd.EvalBodyPoseInWorld(cd, pd.GetBodyByName(name)).GetAsMatrix4(),
                                       atol=1e-12)
        np.testing.assert_allclose(plant.CalcMassMatrix(c), pd.CalcMassMatrix(cd), atol=1e-12)
        np.testing.assert_allclose(plant.CalcBiasTerm(c), pd.CalcBiasTerm(cd), atol=1e-12)
