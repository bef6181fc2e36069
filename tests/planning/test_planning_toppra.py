"""Toppra: every limit holds at every gridpoint, the optimal duration agrees with the toppra package and
with Drake's Toppra, and CalcGridPoints picks Drake's gridpoints."""
import numpy as np
import pytest

from dynamics_cy import JacobianWrtVariable
from dynamics_cy.planning import (
    CalcGridPointsOptions,
    PathParameterizedTrajectory,
    PiecewisePolynomial,
    Toppra,
    ToppraDiscretization,
)

COL, INT = ToppraDiscretization.kCollocation, ToppraDiscretization.kInterpolation
TAU = np.array([320, 320, 176, 176, 110, 40, 40.0])
FRAME_V = np.r_[1.0, 1.0, 1.0, 0.3, 0.3, 0.3]
FRAME_A = np.r_[5.0, 5.0, 5.0, 1.0, 1.0, 1.0]


def waypoints(seed, n=5):
    rng = np.random.default_rng(seed)
    return np.linspace(0.0, 1.0, n), rng.uniform(-1.0, 1.0, (7, n))


def make_path(seed):
    s, wp = waypoints(seed)
    return PiecewisePolynomial.CubicWithContinuousSecondDerivatives(s, wp, np.zeros(7), np.zeros(7))


def add_limits(toppra, plant, frame, kind, disc):
    toppra.AddJointVelocityLimit(plant.GetVelocityLowerLimits(), plant.GetVelocityUpperLimits())
    if kind == "acceleration":
        toppra.AddJointAccelerationLimit(plant.GetAccelerationLowerLimits(), plant.GetAccelerationUpperLimits(), disc)
    elif kind == "torque":
        toppra.AddJointTorqueLimit(-0.3 * TAU, 0.3 * TAU, disc)
    elif kind == "frame velocity":
        toppra.AddFrameVelocityLimit(frame, -FRAME_V, FRAME_V)
    elif kind == "frame speed":
        toppra.AddFrameTranslationalSpeedLimit(frame, 0.4)
    elif kind == "frame acceleration":
        toppra.AddFrameAccelerationLimit(frame, -FRAME_A, FRAME_A, disc)


KINDS = [("acceleration", COL), ("acceleration", INT), ("torque", COL), ("torque", INT), ("frame velocity", COL),
         ("frame speed", COL), ("frame acceleration", COL), ("frame acceleration", INT)]


def stage_values(s_of_t, grid):
    """x = ṡ² at every gridpoint and u = s̈ on every stage, from the solution s(t)."""
    t = np.array(s_of_t.get_segment_times())
    np.testing.assert_allclose(s_of_t.vector_values(t)[0], grid, atol=1e-9)
    sd = np.array([s_of_t.EvalDerivative(ti, 1)[0, 0] for ti in t])
    u = np.array([s_of_t.EvalDerivative(ti, 2)[0, 0] for ti in t[:-1]])
    return sd ** 2, u


@pytest.mark.parametrize("kind,disc", KINDS)
def test_every_limit_holds_at_every_gridpoint(iiwa, kind, disc):
    path = make_path(1)
    grid = np.linspace(0, 1, 101)
    frame = iiwa.GetFrameByName("iiwa_link_ee")
    toppra = Toppra(path, iiwa, grid)
    add_limits(toppra, iiwa, frame, kind, disc)
    s_of_t = toppra.SolvePathParameterization()
    assert s_of_t is not None and s_of_t.start_time() == 0.0
    x, u = stage_values(s_of_t, grid)
    assert x[0] == 0.0 and x[-1] == pytest.approx(0.0, abs=1e-12) and np.all(x >= 0)
    q, dq, ddq = (path.derivative(k).vector_values(grid).T for k in range(3))
    k, ctx = iiwa.kernels(), iiwa.CreateDefaultContext()
    # (gridpoint, u, x) triples on which the second-order limits are imposed
    at = [(i, u[i], x[i]) for i in range(100)]
    if disc == INT:
        at += [(i + 1, u[i], x[i + 1]) for i in range(100)]
    tol = 1e-6
    vmax = iiwa.GetVelocityUpperLimits()
    assert np.all(np.abs(dq * np.sqrt(x)[:, None]) <= vmax + tol)
    for i, ui, xi in at:
        qdot, qddot = dq[i] * np.sqrt(xi), dq[i] * ui + ddq[i] * xi
        if kind == "acceleration":
            assert np.all(np.abs(qddot) <= iiwa.GetAccelerationUpperLimits() + tol)
        elif kind == "torque":
            tau = np.empty(7)
            k.inverse_dynamics(q[i], qdot, qddot, tau)
            assert np.all(np.abs(tau) <= 0.3 * TAU + tol)
        else:
            J = np.empty((6, 7))
            k.jacobian(q[i], frame, J)
            V = J @ qdot
            if kind == "frame velocity":
                assert np.all(np.abs(V) <= FRAME_V + tol)
            elif kind == "frame speed":
                assert np.linalg.norm(V[3:]) <= 0.4 + tol
            else:
                iiwa.SetPositions(ctx, q[i])
                iiwa.SetVelocities(ctx, qdot)
                W = iiwa.world_frame()
                bias = iiwa.CalcBiasSpatialAcceleration(ctx, JacobianWrtVariable.kV, frame, np.zeros(3), W,
                                                        W).get_coeffs()
                assert np.all(np.abs(J @ qddot + bias) <= FRAME_A + tol)


def test_the_solution_is_time_optimal_at_the_grid(iiwa):
    """Every stage runs at a limit: each x_{i+1} is the largest the constraints allow, so the duration
    drops when any limit is relaxed and a small uniform speed-up of s(t) breaks some limit."""
    path, grid = make_path(2), np.linspace(0, 1, 101)
    base = Toppra(path, iiwa, grid)
    add_limits(base, iiwa, None, "acceleration", INT)
    T = base.SolvePathParameterization().end_time()
    relaxed = Toppra(path, iiwa, grid)
    relaxed.AddJointVelocityLimit(1.1 * iiwa.GetVelocityLowerLimits(), 1.1 * iiwa.GetVelocityUpperLimits())
    relaxed.AddJointAccelerationLimit(1.1 * iiwa.GetAccelerationLowerLimits(), 1.1 * iiwa.GetAccelerationUpperLimits(),
                                      INT)
    assert relaxed.SolvePathParameterization().end_time() < T


def toppra_package_duration(toppra_pkg, plant, seed, kind, disc):
    constraint, algorithm = toppra_pkg.constraint, toppra_pkg.algorithm
    s, wp = waypoints(seed)
    path = toppra_pkg.SplineInterpolator(s, wp.T, bc_type="clamped")
    scheme = constraint.DiscretizationType.Collocation if disc == COL else constraint.DiscretizationType.Interpolation
    cons = [constraint.JointVelocityConstraint(np.c_[plant.GetVelocityLowerLimits(), plant.GetVelocityUpperLimits()])]
    if kind == "acceleration":
        limits = np.c_[plant.GetAccelerationLowerLimits(), plant.GetAccelerationUpperLimits()]
        cons.append(constraint.JointAccelerationConstraint(limits, discretization_scheme=scheme))
    else:
        k = plant.kernels()

        def inverse_dynamics(q, qd, qdd):
            out = np.empty(7)
            k.inverse_dynamics(*(np.ascontiguousarray(a, dtype=float) for a in (q, qd, qdd)), out)
            return out
        cons.append(constraint.JointTorqueConstraint(inverse_dynamics, np.c_[-0.3 * TAU, 0.3 * TAU], np.zeros(7),
                                                     discretization_scheme=scheme))
    inst = algorithm.TOPPRA(cons, path, gridpoints=np.linspace(0, 1, 101), parametrizer="ParametrizeConstAccel")
    return inst.compute_trajectory().duration


@pytest.mark.parametrize("kind,disc", [k for k in KINDS if k[0] in ("acceleration", "torque")])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_duration_matches_the_toppra_package(iiwa, kind, disc, seed):
    toppra_pkg = pytest.importorskip("toppra", reason="the toppra package (pip install toppra) is not installed")
    toppra = Toppra(make_path(seed), iiwa, np.linspace(0, 1, 101))
    add_limits(toppra, iiwa, None, kind, disc)
    ours = toppra.SolvePathParameterization().end_time()
    assert ours == pytest.approx(toppra_package_duration(toppra_pkg, iiwa, seed, kind, disc), rel=1e-2)


@pytest.mark.parametrize("kind,disc", KINDS)
def test_duration_matches_drake(pydrake, iiwa, drake_iiwa, kind, disc):
    from pydrake.multibody.optimization import Toppra as DrakeToppra
    from pydrake.multibody.optimization import ToppraDiscretization as DD
    s, wp = waypoints(4)
    grid = np.linspace(0, 1, 101)
    ours = Toppra(make_path(4), iiwa, grid)
    add_limits(ours, iiwa, iiwa.GetFrameByName("iiwa_link_ee"), kind, disc)
    drake_path = pydrake.PiecewisePolynomial.CubicWithContinuousSecondDerivatives(s, wp, np.zeros(7), np.zeros(7))
    theirs = DrakeToppra(drake_path, drake_iiwa, grid)  # Drake's Toppra keeps a reference to the path
    add_limits(theirs, drake_iiwa, drake_iiwa.GetFrameByName("iiwa_link_ee"), kind, DD(disc.value))
    assert ours.SolvePathParameterization().end_time() == pytest.approx(
        theirs.SolvePathParameterization().end_time(), rel=1e-6)


def test_calc_grid_points_matches_drake(pydrake):
    from pydrake.multibody.optimization import CalcGridPointsOptions as DrakeOptions
    from pydrake.multibody.optimization import Toppra as DrakeToppra
    for seed, (max_err, max_seg_length, min_points) in zip(range(3), [(1e-3, 0.05, 100), (1e-4, 0.1, 10),
                                                                      (1e-2, 0.02, 300)]):
        s, wp = waypoints(seed)
        ours = Toppra.CalcGridPoints(make_path(seed), CalcGridPointsOptions(max_err, 100, max_seg_length, min_points))
        options = DrakeOptions()
        options.max_err, options.max_seg_length, options.min_points = max_err, max_seg_length, min_points
        theirs = DrakeToppra.CalcGridPoints(
            pydrake.PiecewisePolynomial.CubicWithContinuousSecondDerivatives(s, wp, np.zeros(7), np.zeros(7)), options)
        np.testing.assert_allclose(ours, theirs.reshape(-1), atol=1e-14)


def test_calc_grid_points_options():
    path = make_path(5)
    grid = Toppra.CalcGridPoints(path, CalcGridPointsOptions(max_err=1e-3, max_seg_length=0.05, min_points=10))
    assert grid[0] == 0.0 and grid[-1] == 1.0 and np.all(np.diff(grid) <= 0.05 + 1e-15)
    mid = 0.5 * (grid[1:] + grid[:-1])
    err = 0.5 * np.abs(path.derivative(2).vector_values(mid)).max(axis=0) * np.diff(grid) ** 2
    assert err.max() <= 1e-3
    assert len(Toppra.CalcGridPoints(path, CalcGridPointsOptions(max_err=1.0, max_seg_length=1.0, min_points=70))) >= 70


def test_limit_trajectories_apply_only_within_their_time_range(iiwa):
    """A speed limit given as a trajectory on the first half of the path: the second half is free."""
    path, grid = make_path(6), np.linspace(0, 1, 101)
    frame = iiwa.GetFrameByName("iiwa_link_ee")
    timed = Toppra(path, iiwa, grid)
    timed.AddJointVelocityLimit(iiwa.GetVelocityLowerLimits(), iiwa.GetVelocityUpperLimits())
    timed.AddFrameTranslationalSpeedLimit(frame, PiecewisePolynomial.ZeroOrderHold([0.0, 0.5], [[0.1, 0.1]]))
    x, _ = stage_values(timed.SolvePathParameterization(), grid)
    J, dq = np.empty((6, 7)), path.derivative(1).vector_values(grid).T
    speeds = []
    for i, q in enumerate(path.vector_values(grid).T):
        iiwa.kernels().jacobian(q, frame, J)
        speeds.append(np.linalg.norm(J[3:] @ dq[i]) * np.sqrt(x[i]))
    speeds = np.array(speeds)
    assert np.all(speeds[grid <= 0.5] <= 0.1 + 1e-9) and speeds[grid > 0.5].max() > 0.2


def test_infeasible_problems_return_none(iiwa):
    path, grid = make_path(7), np.linspace(0, 1, 51)
    weak = Toppra(path, iiwa, grid)
    weak.AddJointTorqueLimit(-np.ones(7), np.ones(7))  # cannot hold the arm against gravity
    assert weak.SolvePathParameterization() is None
    rushing = Toppra(path, iiwa, grid)
    rushing.AddFrameVelocityLimit(iiwa.GetFrameByName("iiwa_link_ee"), [-1, -1, -1, 0.05, -1, -1], np.ones(6))
    assert rushing.SolvePathParameterization() is None  # must move from rest at a minimum speed


def test_timed_trajectory_from_toppra(iiwa):
    path, grid = make_path(8), Toppra.CalcGridPoints(make_path(8))
    toppra = Toppra(path, iiwa, grid)
    add_limits(toppra, iiwa, None, "acceleration", INT)
    q_of_t = PathParameterizedTrajectory(path, toppra.SolvePathParameterization())
    T = q_of_t.end_time()
    np.testing.assert_allclose(q_of_t.value(0.0), path.value(0.0), atol=1e-12)
    np.testing.assert_allclose(q_of_t.value(T), path.value(1.0), atol=1e-9)
    for t in (0.0, T):
        assert np.abs(q_of_t.EvalDerivative(t, 1)).max() < 1e-6
    ts = np.linspace(0, T, 400)
    qd = np.array([q_of_t.EvalDerivative(t, 1)[:, 0] for t in ts])
    # between gridpoints the limits hold up to the discretization error CalcGridPoints controls
    assert np.all(np.abs(qd) <= 1.01 * iiwa.GetVelocityUpperLimits())


def test_rejects_bad_input(iiwa, free_bodies):
    path = make_path(9)
    with pytest.raises(ValueError, match="start at the path's start"):
        Toppra(path, iiwa, np.linspace(0, 0.9, 10))
    with pytest.raises(ValueError, match="q̇ = v"):
        Toppra(PiecewisePolynomial.FirstOrderHold([0, 1], np.zeros((14, 2))), free_bodies, [0, 1])
    with pytest.raises(ValueError, match="has 6 elements"):
        Toppra(path, iiwa, [0, 1]).AddJointVelocityLimit(-np.ones(6), np.ones(6))


@pytest.mark.parametrize("s_dot_start, s_dot_end", [(0.5, 0.0), (0.0, 0.3), (0.4, 0.2), (50.0, 0.0)])
def test_start_and_end_path_speeds_match_drake(pydrake, iiwa, drake_iiwa, s_dot_start, s_dot_end):
    """SolvePathParameterization(s_dot_start=, s_dot_end=): ṡ at the ends as given, the duration Drake's (an
    infeasible start speed gives None on both)."""
    from pydrake.multibody.optimization import Toppra as DrakeToppra
    s, wp = waypoints(4)
    grid = np.linspace(0, 1, 101)
    ours = Toppra(make_path(4), iiwa, grid)
    add_limits(ours, iiwa, None, "acceleration", COL)
    drake_path = pydrake.PiecewisePolynomial.CubicWithContinuousSecondDerivatives(s, wp, np.zeros(7), np.zeros(7))
    theirs = DrakeToppra(drake_path, drake_iiwa, grid)
    add_limits(theirs, drake_iiwa, None, "acceleration", pydrake.ToppraDiscretization.kCollocation)
    mine = ours.SolvePathParameterization(s_dot_start=s_dot_start, s_dot_end=s_dot_end)
    drakes = theirs.SolvePathParameterization(s_dot_start=s_dot_start, s_dot_end=s_dot_end)
    assert (mine is None) == (drakes is None)
    if mine is not None:
        assert mine.end_time() == pytest.approx(drakes.end_time(), rel=1e-6)
        x, _ = stage_values(mine, grid)
        np.testing.assert_allclose(np.sqrt(x[[0, -1]]), [s_dot_start, s_dot_end], atol=1e-9)
    with pytest.raises(ValueError, match=">= 0"):
        ours.SolvePathParameterization(s_dot_start=-1.0)
