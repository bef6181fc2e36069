"""pydrake and dynamics_cy side by side: every method that takes a pose, rotation, quaternion, spatial
vector or spatial inertia accepts pydrake's objects (one conversion layer), ours convert to pydrake's
(dynamics_cy.to_pydrake) and compare equal by value, and a mixed program (pydrake's plant beside
ours, poses handed both ways) agrees."""
import numpy as np
import pytest

import dynamics_cy as dc
from dynamics_cy.inertia import as_spatial_inertia
from dynamics_cy.planning import InverseKinematics

pm = pytest.importorskip("pydrake.math", reason="pydrake is not installed (pip install drake)")
from pydrake.common.eigen_geometry import Quaternion as PQuaternion  # noqa: E402
from pydrake.multibody import math as pmath  # noqa: E402
from pydrake.multibody import tree as ptree  # noqa: E402

RPY = (0.3, -0.2, 0.7)
P = [0.1, -0.4, 0.25]


def pd_pose():
    return pm.RigidTransform(pm.RollPitchYaw(*RPY), P)


def ours_pose():
    return dc.RigidTransform(dc.RollPitchYaw(*RPY), P)


def test_value_types_take_pydrakes_and_compare_by_value():
    X, R = pd_pose(), pd_pose().rotation()
    assert dc.RigidTransform(X).IsExactlyEqualTo(X) and ours_pose().IsNearlyEqualTo(X, 1e-15)
    assert dc.RigidTransform(R, P).IsNearlyEqualTo(X, 1e-15)
    assert dc.RigidTransform(pm.RollPitchYaw(*RPY)).rotation().IsNearlyEqualTo(R, 1e-15)
    assert dc.RotationMatrix(R).IsExactlyEqualTo(R)
    assert dc.RotationMatrix(pm.RollPitchYaw(*RPY)).IsNearlyEqualTo(R, 1e-15)
    assert dc.RotationMatrix(PQuaternion(R.matrix())).IsNearlyEqualTo(R, 1e-15)
    np.testing.assert_allclose(dc.RollPitchYaw(pm.RollPitchYaw(*RPY)).vector(), RPY, atol=1e-15)
    np.testing.assert_allclose(dc.RollPitchYaw(R).vector(), RPY, atol=1e-14)
    np.testing.assert_allclose(dc.Quaternion(PQuaternion(R.matrix())).wxyz(), PQuaternion(R.matrix()).wxyz())
    G = dc.SpatialInertia(2.0, [0.0, 0.0, 0.0], ptree.UnitInertia.SolidSphere(0.1))   # pydrake's unit inertia
    np.testing.assert_allclose(G.get_unit_inertia().CopyToFullMatrix3(), np.eye(3) * 0.004, atol=1e-15)
    V = pmath.SpatialVelocity([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert dc.SpatialVelocity(V).IsApprox(V, 0.0) and dc.SpatialForce(pmath.SpatialForce(V.get_coeffs())).IsApprox(V)
    with pytest.raises(ValueError, match="proper orthonormal"):
        dc.RotationMatrix(np.eye(3) * 2.0)         # arrays are still checked


def test_to_pydrake_round_trips_every_value_type():
    M = dc.SpatialInertia.MakeFromCentralInertia(2.0, [0.1, 0.0, -0.2], dc.RotationalInertia(0.1, 0.2, 0.25))
    values = [ours_pose(), ours_pose().rotation(), dc.RollPitchYaw(*RPY), ours_pose().rotation().ToQuaternion(),
              dc.SpatialVelocity([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), dc.SpatialForce([0.0, 1.0, 0.0], [2.0, 0.0, 0.0]),
              dc.SpatialAcceleration([1.0, 0.0, 0.0], [0.0, 0.0, 9.81]),
              dc.SpatialMomentum([1.0, 1.0, 0.0], [0.0, 2.0, 0.0]),
              dc.UnitInertia.SolidBox(0.1, 0.2, 0.3), dc.RotationalInertia(0.1, 0.2, 0.25, 0.01, 0.0, -0.02), M]
    for ours in values:
        theirs = dc.to_pydrake(ours)
        assert type(theirs).__module__.startswith("pydrake"), type(theirs)
        assert type(theirs).__name__ == type(ours).__name__
    assert pm.RigidTransform(ours_pose().GetAsMatrix4()).IsExactlyEqualTo(dc.to_pydrake(ours_pose()))
    np.testing.assert_allclose(dc.to_pydrake(M).CopyToFullMatrix6(), M.CopyToFullMatrix6(), atol=1e-15)
    np.testing.assert_allclose(dc.to_pydrake(values[3]).wxyz(), values[3].wxyz())
    back = as_spatial_inertia(dc.to_pydrake(M))
    np.testing.assert_allclose(back.CopyToFullMatrix6(), M.CopyToFullMatrix6(), atol=1e-15)
    with pytest.raises(TypeError, match="not one of our value types"):
        dc.to_pydrake(np.eye(4))


def test_the_plant_takes_pydrakes_poses_and_inertias_everywhere():
    """AddRigidBody with pydrake's SpatialInertia, FixedOffsetFrame, WeldJoint, SetDefaultFloatingBaseBodyPose,
    SetFreeBodyPose, RegisterCollisionGeometry and WeldFrames with pydrake's RigidTransform; IK's position
    and orientation constraints with pydrake's RotationMatrix: the same model and results as with ours."""
    def build(X, M, weld):
        plant = dc.MultibodyPlant(0.0)
        free = plant.AddRigidBody("free", M)
        welded = plant.AddRigidBody("welded", M)
        plant.AddFrame(dc.FixedOffsetFrame("F", plant.world_frame(), X))
        plant.AddJoint(dc.WeldJoint("weld", plant.world_frame(), welded.body_frame(), X))
        plant.RegisterCollisionGeometry(free, X, dc.Sphere(0.05), "ball", dc.CoulombFriction(0.8, 0.7))
        plant.SetDefaultFloatingBaseBodyPose(free, weld)
        plant.Finalize()
        return plant
    pd_M = ptree.SpatialInertia.SolidBoxWithMass(2.0, 0.1, 0.2, 0.3)
    ours_M = dc.SpatialInertia.SolidBoxWithMass(2.0, 0.1, 0.2, 0.3)
    theirs, ours = build(pd_pose(), pd_M, pd_pose()), build(ours_pose(), ours_M, ours_pose())
    for plant in (theirs, ours):
        ctx = plant.CreateDefaultContext()
        assert plant.GetFrameByName("F").GetFixedPoseInBodyFrame().IsNearlyEqualTo(pd_pose(), 1e-15)
        assert plant.GetFreeBodyPose(ctx, plant.GetBodyByName("free")).IsNearlyEqualTo(pd_pose(), 1e-12)
        plant.SetFreeBodyPose(ctx, plant.GetBodyByName("free"), pm.RigidTransform(P))
        assert plant.EvalBodyPoseInWorld(ctx, plant.GetBodyByName("free")).IsNearlyEqualTo(pm.RigidTransform(P), 1e-12)
        assert plant.EvalBodyPoseInWorld(ctx, plant.GetBodyByName("welded")).IsNearlyEqualTo(pd_pose(), 1e-12)
        np.testing.assert_allclose(plant.GetBodyByName("free").default_spatial_inertia().CopyToFullMatrix6(),
                                   pd_M.CopyToFullMatrix6(), atol=1e-15)
    ik = InverseKinematics(ours)
    ik.AddOrientationConstraint(ours.world_frame(), pm.RotationMatrix(), ours.GetBodyByName("free").body_frame(),
                                pd_pose().rotation(), 0.0)
    ik.AddPositionConstraint(ours.GetBodyByName("free").body_frame(), np.zeros(3), ours.world_frame(), P, P)


def test_a_mixed_program_pydrakes_plant_beside_ours(iiwa_urdf):
    """pydrake's plant (for what only Drake has, e.g. its visualization) and ours (in the loop) on the
    same URDF: a pose computed by one is accepted by the other, and they agree on kinematics and the
    mass matrix to 1e-12."""
    from pydrake.multibody.parsing import Parser as PParser
    from pydrake.multibody.plant import MultibodyPlant as PPlant
    theirs = PPlant(0.0)
    PParser(theirs).AddModels(str(iiwa_urdf))
    theirs.Finalize()
    ours = dc.MultibodyPlant(0.0)
    dc.Parser(ours).AddModels(str(iiwa_urdf))
    ours.Finalize()
    q = np.array([0.1, -0.4, 0.3, -1.2, 0.2, 0.8, -0.5])
    tc, oc = theirs.CreateDefaultContext(), ours.CreateDefaultContext()
    theirs.SetPositions(tc, q)
    ours.SetPositions(oc, q)
    X_theirs = theirs.EvalBodyPoseInWorld(tc, theirs.GetBodyByName("iiwa_link_7"))
    X_ours = ours.EvalBodyPoseInWorld(oc, ours.GetBodyByName("iiwa_link_7"))
    assert X_ours.IsNearlyEqualTo(X_theirs, 1e-12)                          # pydrake's compared with ours
    assert X_theirs.IsNearlyEqualTo(dc.to_pydrake(X_ours), 1e-12)           # ours handed to pydrake
    assert dc.RigidTransform(X_theirs).inverse().multiply(X_ours).IsNearlyEqualTo(dc.RigidTransform(), 1e-12)
    np.testing.assert_allclose(ours.CalcMassMatrix(oc), theirs.CalcMassMatrix(tc), atol=1e-12)
