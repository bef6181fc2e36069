"""Our evaluators give the values and gradients of pydrake's on the same model and arguments."""
import re

import numpy as np
import pytest

from dynamics_cy import RollPitchYaw, RotationMatrix, planning

ARGS_R1, ARGS_R2 = RollPitchYaw(0.3, -0.2, 0.5), RollPitchYaw(-0.1, 0.4, 1.2)


def drake_eval(pydrake, constraint, x):
    """(value, gradient) of a pydrake evaluator by AutoDiff."""
    y = constraint.Eval(pydrake.InitializeAutoDiff(np.asarray(x, float)))
    return np.array([v.value() for v in y.reshape(-1)]), pydrake.ExtractGradient(y)


def assert_same(pydrake, ours, theirs, x):
    y, dy = ours.EvalWithGradient(x)
    y_d, dy_d = drake_eval(pydrake, theirs, x)
    np.testing.assert_allclose(y, y_d, rtol=1e-9, atol=1e-10, err_msg=type(ours).__name__)
    np.testing.assert_allclose(dy, dy_d, rtol=1e-8, atol=1e-9, err_msg=type(ours).__name__)
    np.testing.assert_allclose(ours.lower_bound(), theirs.lower_bound(), rtol=1e-12, err_msg=type(ours).__name__)
    np.testing.assert_allclose(ours.upper_bound(), theirs.upper_bound(), rtol=1e-12, err_msg=type(ours).__name__)


def kinematic_pairs(pydrake, ours, theirs, frame_names):
    """The same five kinematic constraints built with our plant and with Drake's."""
    out = {}
    for lib, plant in (("ours", ours), ("drake", theirs)):
        m = planning if lib == "ours" else pydrake
        rot = (lambda r: RotationMatrix(r)) if lib == "ours" else (lambda r: pydrake.RotationMatrix(
            pydrake.RollPitchYaw(r.vector())))
        ctx = plant.CreateDefaultContext()
        A, B = (plant.GetFrameByName(n) for n in frame_names)
        out[lib] = [
            m.PositionConstraint(plant, A, [-1, -1, -1], [1, 1, 2], B, [0.1, -0.05, 0.2], ctx),
            m.OrientationConstraint(plant, A, rot(ARGS_R1), B, rot(ARGS_R2), 0.1, ctx),
            m.GazeTargetConstraint(plant, A, [0.1, 0.0, 0.2], [0.3, -0.2, 1.0], B, [0.0, 0.1, 0.05], 0.4, ctx),
            m.AngleBetweenVectorsConstraint(plant, A, [1.0, 0.2, 0.0], B, [0.0, 0.3, 1.0], 0.1, 1.0, ctx),
            m.PointToPointDistanceConstraint(plant, A, [0.1, 0.2, 0.0], B, [0.0, 0.0, 0.1], 0.2, 1.0, ctx),
        ]
    return zip(out["ours"], out["drake"])


@pytest.mark.parametrize("frames", [("world", "iiwa_link_ee"), ("iiwa_link_3", "iiwa_link_7")])
def test_kinematic_constraints_match_drake(pydrake, iiwa, drake_iiwa, frames):
    rng = np.random.default_rng(20)
    for ours, theirs in kinematic_pairs(pydrake, iiwa, drake_iiwa, frames):
        for _ in range(3):
            assert_same(pydrake, ours, theirs, rng.uniform(-2, 2, 7))


def test_centroidal_momentum_and_spatial_velocity_match_drake(pydrake, iiwa, drake_iiwa):
    from pydrake.multibody.optimization import CentroidalMomentumConstraint, SpatialVelocityConstraint
    ad = drake_iiwa.ToAutoDiffXd()
    ad_ctx, ctx = ad.CreateDefaultContext(), iiwa.CreateDefaultContext()
    rng = np.random.default_rng(21)
    bounds = planning.SpatialVelocityConstraint.AngularVelocityBounds(0.1, 2.0, [0.2, 0.3, 1.0], 0.5)
    d_bounds = SpatialVelocityConstraint.AngularVelocityBounds()
    d_bounds.magnitude_lower, d_bounds.magnitude_upper = 0.1, 2.0
    d_bounds.reference_direction, d_bounds.theta_bound = [0.2, 0.3, 1.0], 0.5
    pairs = [(planning.CentroidalMomentumConstraint(iiwa, None, ctx, a),
              CentroidalMomentumConstraint(ad, None, ad_ctx, a)) for a in (False, True)]
    A, B = "iiwa_link_2", "iiwa_link_ee"
    for ours_b, theirs_b in ((None, None), (bounds, d_bounds)):
        pairs.append((planning.SpatialVelocityConstraint(iiwa, iiwa.GetFrameByName(A), -np.ones(3), np.ones(3),
                                                         iiwa.GetFrameByName(B), [0.1, 0.2, -0.1], ctx, ours_b),
                      SpatialVelocityConstraint(ad, ad.GetFrameByName(A), -np.ones(3), np.ones(3), ad.GetFrameByName(B),
                                                [0.1, 0.2, -0.1], ad_ctx, theirs_b)))
    for ours, theirs in pairs:
        for _ in range(2):
            assert_same(pydrake, ours, theirs, rng.normal(size=ours.num_vars()))


def test_quaternion_integration_matches_drake(pydrake):
    from pydrake.multibody.optimization import QuaternionEulerIntegrationConstraint
    rng = np.random.default_rng(22)
    for negation in (False, True):
        ours = planning.QuaternionEulerIntegrationConstraint(negation)
        theirs = QuaternionEulerIntegrationConstraint(negation)
        for _ in range(3):
            assert_same(pydrake, ours, theirs, np.r_[rng.normal(size=11), 0.2])


def test_minimum_distance_matches_drake(pydrake, plants_from_urdf, iiwa_urdf):
    """On the iiwa with capsules for cylinders (pairs both libraries compute exactly): the same collision
    candidates and the same penalty value and gradient (Drake's MinimumDistanceLowerBoundConstraint)."""
    urdf = re.sub(r'<cylinder radius="([^"]+)" length="([^"]+)"/>', r'<capsule radius="\1" length="\2"/>',
                  open(iiwa_urdf).read())
    ours, theirs, scene_graph, diagram = plants_from_urdf(urdf)
    d_ctx = theirs.GetMyMutableContextFromRoot(diagram.CreateDefaultContext())
    inspector = scene_graph.model_inspector()
    body = lambda g: theirs.GetBodyFromFrameId(inspector.GetFrameId(g)).name()  # noqa: E731
    expected = {frozenset((body(a), body(b))) for a, b in inspector.GetCollisionCandidates()}
    got = {frozenset((ours.get_body(a.body_index).name(), ours.get_body(b.body_index).name()))
           for a, b in planning.CollisionCandidates(ours)}
    assert got == expected
    mine = planning.MinimumDistanceConstraint(ours, 0.02, ours.CreateDefaultContext(), influence_distance_offset=0.15)
    drake = pydrake.MinimumDistanceLowerBoundConstraint(theirs, 0.02, d_ctx, None, 0.15)
    rng = np.random.default_rng(23)
    values = []
    for _ in range(6):
        q = rng.uniform(-1.5, 1.5, 7)
        y, dy = mine.EvalWithGradient(q)
        y_d = drake.Eval(q)
        dy_d = pydrake.ExtractGradient(drake.Eval(pydrake.InitializeAutoDiff(q)))
        # Drake's capsule-capsule distances (FCL's GJK) are good to ~1e-6 m and its AutoDiff gradient differs
        # from finite differences of its own value by up to ~1.5% here; ours is exact
        # (test_planning_gradients checks it against finite differences)
        np.testing.assert_allclose(y, y_d, rtol=1e-4)
        np.testing.assert_allclose(dy, dy_d, atol=3e-2 * np.abs(dy_d).max())
        values.append(y[0])
    assert max(values) > 0.05  # the comparison exercised pairs inside the influence distance
