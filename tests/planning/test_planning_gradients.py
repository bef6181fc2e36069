"""Every evaluator's analytic gradient against central differences, on the iiwa (q̇ = v) and on free
bodies (unit quaternions, v in world)."""
import numpy as np
import pytest

from dynamics_cy import RollPitchYaw, RotationMatrix
from dynamics_cy.planning import (
    AngleBetweenVectorsConstraint,
    CentroidalMomentumConstraint,
    CollisionCandidates,
    ContactWrenchFromForceInWorldFrameEvaluator,
    DistanceConstraint,
    ExponentiallySmoothedHingeLoss,
    GazeTargetConstraint,
    MinimumDistanceConstraint,
    OrientationConstraint,
    PointToPointDistanceConstraint,
    PositionConstraint,
    QuaternionEulerIntegrationConstraint,
    SpatialVelocityConstraint,
    StaticEquilibriumProblem,
    UnitQuaternionConstraint,
)

R1 = RotationMatrix(RollPitchYaw(0.3, -0.2, 0.5))
R2 = RotationMatrix(RollPitchYaw(-0.1, 0.4, 1.2))


def kinematic_constraints(plant, ctx, fA, fB):
    return [
        PositionConstraint(plant, fA, [-1, -1, -1], [1, 1, 1], fB, [0.1, -0.05, 0.2], ctx),
        OrientationConstraint(plant, fA, R1, fB, R2, 0.1, ctx),
        GazeTargetConstraint(plant, fA, [0.1, 0.0, 0.2], [0.3, -0.2, 1.0], fB, [0.0, 0.1, 0.05], 0.4, ctx),
        AngleBetweenVectorsConstraint(plant, fA, [1.0, 0.2, 0.0], fB, [0.0, 0.3, 1.0], 0.1, 1.0, ctx),
        PointToPointDistanceConstraint(plant, fA, [0.1, 0.2, 0.0], fB, [0.0, 0.0, 0.1], 0.0, 1.0, ctx),
    ]


@pytest.mark.parametrize("frames", [("world", "iiwa_link_ee"), ("iiwa_link_2", "iiwa_link_7")])
def test_kinematic_constraints_iiwa(iiwa, check_gradient, frames):
    ctx = iiwa.CreateDefaultContext()
    fA, fB = (iiwa.GetFrameByName(n) for n in frames)
    rng = np.random.default_rng(3)
    for c in kinematic_constraints(iiwa, ctx, fA, fB):
        for _ in range(3):
            check_gradient(c, rng.uniform(-2, 2, 7))


def test_kinematic_constraints_free_bodies(free_bodies, free_bodies_q, check_gradient):
    ctx = free_bodies.CreateDefaultContext()
    fA, fB = free_bodies.GetFrameByName("a"), free_bodies.GetFrameByName("b")
    rng = np.random.default_rng(4)
    for c in kinematic_constraints(free_bodies, ctx, fA, fB):
        for _ in range(3):
            check_gradient(c, free_bodies_q(rng) * rng.uniform(0.8, 1.2))  # not unit: q is normalized inside


def test_orientation_feasibility_residual(iiwa, fd_gradient):
    """The residual the solver's feasibility phase uses: r = (θ - θ_bound) â, zero inside the bound."""
    ctx = iiwa.CreateDefaultContext()
    W, E = iiwa.world_frame(), iiwa.GetFrameByName("iiwa_link_ee")
    rng = np.random.default_rng(5)
    for bound in (0.0, 0.2):
        c = OrientationConstraint(iiwa, W, R1, E, R2, bound, ctx)
        for _ in range(4):
            q = rng.uniform(-2, 2, 7)
            r, dr = c.feasibility_residual(q)
            theta = np.arccos(np.clip((c.Eval(q)[0] - 1) / 2, -1, 1))
            assert np.linalg.norm(r) == pytest.approx(max(theta - bound, 0.0), abs=1e-9)
            np.testing.assert_allclose(dr, fd_gradient(lambda x: c.feasibility_residual(x)[0], q), atol=1e-6)


def test_unit_quaternion_and_quaternion_integration(check_gradient):
    rng = np.random.default_rng(6)
    check_gradient(UnitQuaternionConstraint(), rng.normal(size=4))
    for negation in (False, True):
        c = QuaternionEulerIntegrationConstraint(negation)
        assert c.allow_quaternion_negation() == negation
        for w_scale in (1.0, 1e-9):
            x = c.ComposeVariable(rng.normal(size=4), rng.normal(size=4), w_scale * rng.normal(size=3), 0.1)
            check_gradient(c, x)


def test_quaternion_integration_value():
    """z₂ = Δz ⊗ z₁ for a constant-rate rotation satisfies the constraint exactly."""
    z1 = np.array([np.cos(0.2), np.sin(0.2), 0.0, 0.0])
    w, h = np.array([0.0, 0.0, 2.0]), 0.3
    dz = np.r_[np.cos(0.3), 0.0, 0.0, np.sin(0.3)]
    z2 = np.r_[dz[0] * z1[0] - dz[1:] @ z1[1:], dz[0] * z1[1:] + z1[0] * dz[1:] + np.cross(dz[1:], z1[1:])]
    c = QuaternionEulerIntegrationConstraint(False)
    assert c.Eval(c.ComposeVariable(z1, z2, w, h))[0] == pytest.approx(1.0, abs=1e-14)
    assert QuaternionEulerIntegrationConstraint(True).Eval(c.ComposeVariable(z1, -z2, w, h))[0] == pytest.approx(1.0)


def test_distance_constraints(iiwa, free_bodies, free_bodies_q, check_gradient):
    rng = np.random.default_rng(7)
    ctx = iiwa.CreateDefaultContext()
    for penalty in (None, ExponentiallySmoothedHingeLoss):
        c = MinimumDistanceConstraint(iiwa, 0.01, ctx, penalty, influence_distance_offset=0.3)
        assert (c.minimum_distance(), c.influence_distance()) == (0.01, pytest.approx(0.31))
        for _ in range(3):
            q = rng.uniform(-1.5, 1.5, 7)
            assert c.Eval(q)[0] > 0  # some pairs are within the influence distance
            check_gradient(c, q)
    ctx = free_bodies.CreateDefaultContext()
    pairs = CollisionCandidates(free_bodies)
    names = {frozenset((a.name, b.name)) for a, b in pairs}
    assert len(names) == len(pairs) == 12  # 2 x 2 between the bodies, 4 x 2 with the world
    assert {frozenset(p) for p in (("a_box", "b_capsule"), ("a_sphere", "ground"), ("b_cylinder", "obstacle"))} <= names
    for pair in pairs:
        c = DistanceConstraint(free_bodies, pair, ctx, 0.0, 1.0)
        for _ in range(3):
            check_gradient(c, free_bodies_q(rng), rtol=1e-4, atol=1e-6)


def test_centroidal_momentum(iiwa, free_bodies, free_bodies_q, check_gradient):
    rng = np.random.default_rng(8)
    for plant, q_of in ((iiwa, lambda: rng.uniform(-2, 2, 7)), (free_bodies, lambda: free_bodies_q(rng))):
        ctx = plant.CreateDefaultContext()
        nv = plant.num_velocities()
        for angular_only in (False, True):
            c = CentroidalMomentumConstraint(plant, None, ctx, angular_only)
            n_h = 3 if angular_only else 6
            for _ in range(2):
                check_gradient(c, np.r_[q_of(), rng.normal(size=nv), rng.normal(size=n_h)])


def test_centroidal_momentum_value(iiwa):
    """h_WC equals dynamics_cy's spatial momentum about the centre of mass."""
    rng = np.random.default_rng(9)
    ctx = iiwa.CreateDefaultContext()
    q, v = rng.uniform(-2, 2, 7), rng.normal(size=7)
    c = CentroidalMomentumConstraint(iiwa, None, ctx, False)
    check = iiwa.CreateDefaultContext()
    iiwa.SetPositions(check, q)
    iiwa.SetVelocities(check, v)
    h = iiwa.CalcSpatialMomentumInWorldAboutPoint(check, iiwa.CalcCenterOfMassPositionInWorld(check)).get_coeffs()
    np.testing.assert_allclose(c.Eval(np.r_[q, v, np.zeros(6)]), h, atol=1e-12)


def test_spatial_velocity(iiwa, free_bodies, free_bodies_q, check_gradient):
    rng = np.random.default_rng(10)
    bounds = SpatialVelocityConstraint.AngularVelocityBounds(0.1, 2.0, [0.2, 0.3, 1.0], 0.5)
    cases = ((iiwa, ("iiwa_link_2", "iiwa_link_ee"), lambda: rng.uniform(-2, 2, 7)),
             (iiwa, ("world", "iiwa_link_5"), lambda: rng.uniform(-2, 2, 7)),
             (free_bodies, ("a", "b"), lambda: free_bodies_q(rng)))
    for plant, (nA, nB), q_of in cases:
        ctx = plant.CreateDefaultContext()
        fA, fB = plant.GetFrameByName(nA), plant.GetFrameByName(nB)
        for w_bounds in (None, bounds):
            c = SpatialVelocityConstraint(plant, fA, -np.ones(3), np.ones(3), fB, [0.1, 0.2, -0.1], ctx, w_bounds)
            for _ in range(2):
                check_gradient(c, np.r_[q_of(), rng.normal(size=plant.num_velocities())])


def test_spatial_velocity_value(iiwa):
    """v_AC_A against dynamics_cy's frame spatial velocity (Drake's CalcSpatialVelocity)."""
    rng = np.random.default_rng(11)
    ctx = iiwa.CreateDefaultContext()
    fA, fB = iiwa.GetFrameByName("iiwa_link_2"), iiwa.GetFrameByName("iiwa_link_ee")
    q, v = rng.uniform(-2, 2, 7), rng.normal(size=7)
    c = SpatialVelocityConstraint(iiwa, fA, -np.ones(3), np.ones(3), fB, np.zeros(3), ctx)
    y = c.Eval(np.r_[q, v])
    check = iiwa.CreateDefaultContext()
    iiwa.SetPositions(check, q)
    iiwa.SetVelocities(check, v)
    np.testing.assert_allclose(y, fB.CalcSpatialVelocity(check, fA, fA).translational(), atol=1e-12)


def test_contact_wrench_and_static_equilibrium_constraints(free_bodies, free_bodies_q, check_gradient):
    """The equilibrium and friction-cone constraints of the problem, on the pairs of a box, a sphere and a
    capsule with the ground (where the gradients are exact); every other pair is ignored here."""
    ctx = free_bodies.CreateDefaultContext()
    ignored = [p for p in CollisionCandidates(free_bodies)
               if "ground" not in (p[0].name, p[1].name) or "b_cylinder" in (p[0].name, p[1].name)]
    problem = StaticEquilibriumProblem(free_bodies, ctx, ignored)
    prog = problem.prog()
    assert len(problem.contact_pairs()) == 3
    rng = np.random.default_rng(12)
    for _ in range(2):
        x = rng.normal(size=prog.num_vars())
        x[prog.FindDecisionVariableIndices(problem.q_vars())] = free_bodies_q(rng)
        for b in prog.generic_constraints():
            check_gradient(b.evaluator(), prog.GetBindingVariableValues(b, x))
    ev = ContactWrenchFromForceInWorldFrameEvaluator(free_bodies, ctx, problem.contact_pairs()[0])
    assert ev.num_lambda() == 3 and ev.geometry_id_pair() == problem.contact_pairs()[0]
    check_gradient(ev, rng.normal(size=ev.num_vars()))
    np.testing.assert_array_equal(ev.Eval(np.r_[np.zeros(14), 1.0, 2.0, 3.0]), [0, 0, 0, 1, 2, 3])
