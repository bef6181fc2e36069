"""Inverse kinematics on the iiwa through the public InverseKinematics + Solve path, and the fast
damped-least-squares solver."""
import tracemalloc

import numpy as np
import pytest

from dynamics_cy import RigidTransform, RotationMatrix
from dynamics_cy.planning import DampedLeastSquaresIK, InverseKinematics, SolutionResult, Solve

N_POSES = 200


def random_goals(plant, frame, n, seed):
    """(X_WG, q_start) pairs: goals by forward kinematics of random q within the limits, random starts."""
    rng = np.random.default_rng(seed)
    lo, hi = plant.GetPositionLowerLimits(), plant.GetPositionUpperLimits()
    k, X = plant.kernels(), np.empty((4, 4))
    out = []
    for _ in range(n):
        k.frame_pose(rng.uniform(lo, hi), frame, X)
        out.append((X.copy(), rng.uniform(lo, hi)))
    return out


def pose_residuals(plant, frame, q, X_goal):
    X = np.empty((4, 4))
    plant.kernels().frame_pose(np.asarray(q, float), frame, X)
    R = X_goal[:3, :3].T @ X[:3, :3]
    angle = np.arctan2(np.linalg.norm([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2,
                       (np.trace(R) - 1) / 2)
    return np.linalg.norm(X[:3, 3] - X_goal[:3, 3]), abs(angle)


def test_ik_reaches_random_poses(iiwa, iiwa_urdf):
    """200 full-pose goals from random starts: ≥ 98% solved to 1e-6 m and 1e-6 rad, within the limits; the
    solutions also satisfy Drake's own evaluators when pydrake is installed."""
    W, E = iiwa.world_frame(), iiwa.GetFrameByName("iiwa_link_ee")
    lo, hi = iiwa.GetPositionLowerLimits(), iiwa.GetPositionUpperLimits()
    solved = []
    for X_goal, q0 in random_goals(iiwa, E, N_POSES, seed=2024):
        ik = InverseKinematics(iiwa)
        ik.AddPositionConstraint(E, [0, 0, 0], W, X_goal[:3, 3], X_goal[:3, 3])
        ik.AddOrientationConstraint(W, RotationMatrix(X_goal[:3, :3]), E, RotationMatrix(), 0.0)
        ik.prog().SetInitialGuess(ik.q(), q0)
        result = Solve(ik.prog(), solver_options={"max_restarts": 20})
        q = result.GetSolution(ik.q())
        dp, dR = pose_residuals(iiwa, E, q, X_goal)
        ok = result.is_success() and dp < 1e-6 and dR < 1e-6
        if ok:
            assert np.all(q >= lo) and np.all(q <= hi)
            solved.append((q, X_goal))
    assert len(solved) >= 0.98 * N_POSES
    try:
        import pydrake.all as pd
    except ImportError:
        return
    plant = pd.MultibodyPlant(0.0)
    pd.Parser(plant).AddModels(str(iiwa_urdf))
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    dW, dE = plant.world_frame(), plant.GetFrameByName("iiwa_link_ee")
    for q, X_goal in solved:
        position = pd.PositionConstraint(plant, dW, X_goal[:3, 3], X_goal[:3, 3], dE, [0, 0, 0], ctx)
        orientation = pd.OrientationConstraint(plant, dW, pd.RotationMatrix(X_goal[:3, :3]), dE, pd.RotationMatrix(),
                                               0.0, ctx)
        assert position.CheckSatisfied(q, 1e-9) and orientation.CheckSatisfied(q, 1e-9)


def test_nominal_cost_gives_the_closest_solution(iiwa):
    """A position-only goal with (q - q_nom)ᵀW(q - q_nom): the solution satisfies the KKT conditions
    (the cost gradient lies in the row space of the constraint Jacobian) and beats nearby feasible points."""
    W, E = iiwa.world_frame(), iiwa.GetFrameByName("iiwa_link_ee")
    q_nom = np.array([0.1, 0.4, -0.2, -1.2, 0.3, 0.8, 0.0])
    p_goal = np.array([0.45, 0.2, 0.55])
    ik = InverseKinematics(iiwa)
    position = ik.AddPositionConstraint(E, [0, 0, 0], W, p_goal, p_goal)
    cost = ik.prog().AddQuadraticErrorCost(np.eye(7), q_nom, ik.q_vars())     # q_vars() is q()
    ik.prog().SetInitialGuess(ik.q(), q_nom)
    result = Solve(ik.prog())
    assert result.is_success(), result.get_solver_details()
    q = result.GetSolution(ik.q())
    assert result.get_optimal_cost() == pytest.approx((q - q_nom) @ (q - q_nom), rel=1e-12)
    _, J = position.evaluator().EvalWithGradient(q)
    g = 2 * (q - q_nom)
    lam = np.linalg.lstsq(J.T, g, rcond=None)[0]
    assert np.linalg.norm(g - J.T @ lam) < 1e-6 * max(1.0, np.linalg.norm(g))
    assert np.abs(result.EvalBinding(position) - p_goal).max() < 1e-9
    assert result.EvalBinding(cost)[0] == pytest.approx(result.get_optimal_cost())


def test_gaze_angle_distance_and_collision_constraints(iiwa):
    """Several constraint kinds together, solved and checked with CheckSatisfied."""
    W, E, L3 = iiwa.world_frame(), iiwa.GetFrameByName("iiwa_link_ee"), iiwa.GetFrameByName("iiwa_link_3")
    ik = InverseKinematics(iiwa)
    bindings = [
        ik.AddGazeTargetConstraint(E, [0, 0, 0], [0, 0, 1], W, [0.6, 0.3, 0.2], 0.05),
        ik.AddAngleBetweenVectorsConstraint(W, [0, 0, 1], E, [0, 0, 1], 2.0, np.pi),
        ik.AddPointToPointDistanceConstraint(E, [0, 0, 0], W, [0.6, 0.3, 0.2], 0.3, 0.35),
        ik.AddPositionConstraint(L3, [0, 0, 0], W, [-1, -1, 0.3], [1, 1, 1]),
        ik.AddMinimumDistanceConstraint(0.01, 0.1),
    ]
    assert bindings[-1].evaluator().influence_distance() == pytest.approx(0.11)
    ik.prog().SetInitialGuess(ik.q(), [0.3, 0.6, 0.0, -1.3, 0.0, 0.9, 0.0])
    result = Solve(ik.prog(), solver_options={"max_restarts": 5})
    assert result.is_success(), result.GetInfeasibleConstraintNames(ik.prog())
    q = result.GetSolution(ik.q())
    for b in bindings:
        assert b.evaluator().CheckSatisfied(q, 1e-6), type(b.evaluator()).__name__
    assert ik.prog().CheckSatisfied(ik.prog().GetAllConstraints(), q)


def test_distance_constraint_between_links(iiwa):
    W, E = iiwa.world_frame(), iiwa.GetFrameByName("iiwa_link_ee")
    g2 = iiwa.GetCollisionGeometriesForBody(iiwa.GetBodyByName("iiwa_link_2"))[0]
    g6 = iiwa.GetCollisionGeometriesForBody(iiwa.GetBodyByName("iiwa_link_6"))[0]
    ik = InverseKinematics(iiwa)
    assert ik.get_mutable_context() is ik.context() and ik.get_mutable_prog() is ik.prog()
    d = ik.AddDistanceConstraint((g2, g6), 0.2, 0.25)
    ik.AddPositionConstraint(E, [0, 0, 0], W, [0.3, -0.5, 0.2], [0.8, 0.5, 0.9])
    ik.prog().SetInitialGuess(ik.q(), np.full(7, 0.3))
    result = Solve(ik.prog())
    assert result.is_success()
    assert 0.2 - 1e-9 <= result.EvalBinding(d)[0] <= 0.25 + 1e-9


def test_free_body_ik_keeps_a_unit_quaternion(free_bodies):
    """IK adds zᵀz = 1 and -1 ≤ z ≤ 1 for each free body, and the initial guess [1 0 0 0]."""
    ik = InverseKinematics(free_bodies)
    prog = ik.prog()
    np.testing.assert_array_equal(prog.GetInitialGuess(ik.q()[:4]), [1, 0, 0, 0])
    assert len(prog.generic_constraints()) == 2
    A, B = free_bodies.GetFrameByName("a"), free_bodies.GetFrameByName("b")
    W = free_bodies.world_frame()
    X_goal = RigidTransform(RotationMatrix.MakeZRotation(2.5) @ RotationMatrix.MakeXRotation(1.0), [0.3, -0.2, 0.8])
    ik.AddPositionConstraint(A, [0.1, 0, 0], W, X_goal.translation(), X_goal.translation())
    ik.AddOrientationConstraint(W, X_goal.rotation(), A, RotationMatrix(), 0.0)
    ik.AddPositionConstraint(B, [0, 0, 0], A, [0.5, -0.1, -0.1], [0.6, 0.1, 0.1])
    result = Solve(prog)
    assert result.is_success()
    q = result.GetSolution(ik.q())
    assert np.linalg.norm(q[:4]) == pytest.approx(1.0, abs=1e-9)
    assert np.linalg.norm(q[7:11]) == pytest.approx(1.0, abs=1e-9)
    ctx = free_bodies.CreateDefaultContext()
    free_bodies.SetPositions(ctx, q)
    X_WA = free_bodies.CalcRelativeTransform(ctx, W, A)
    assert X_WA.rotation().IsNearlyEqualTo(X_goal.rotation(), 1e-9)


def test_unreachable_goal_reports_the_violated_constraint(iiwa):
    W, E = iiwa.world_frame(), iiwa.GetFrameByName("iiwa_link_ee")
    ik = InverseKinematics(iiwa)
    b = ik.AddPositionConstraint(E, [0, 0, 0], W, [3.0, 0, 0.5], [3.0, 0, 0.5])
    b.evaluator().set_description("reach")
    result = Solve(ik.prog())
    assert not result.is_success()
    assert result.get_solution_result() == SolutionResult.kInfeasibleConstraints
    assert result.GetInfeasibleConstraints(ik.prog()) == [b]
    assert result.GetInfeasibleConstraintNames(ik.prog())[0].startswith("reach[0]: 3 <= ")
    assert result.get_max_constraint_violation() > 1.0


def test_damped_least_squares_solver(iiwa):
    """The real-time solver: ≥ 98% of the 200 goals with restarts, to 1e-10, within the limits."""
    E = iiwa.GetFrameByName("iiwa_link_ee")
    lo, hi = iiwa.GetPositionLowerLimits(), iiwa.GetPositionUpperLimits()
    ik = DampedLeastSquaresIK(iiwa, E)
    rng = np.random.default_rng(7)
    q = np.empty(7)
    ok = 0
    for X_goal, q0 in random_goals(iiwa, E, N_POSES, seed=2024):
        if ik.SolveWithRestarts(X_goal, q0, q, 20, rng):
            dp, dR = pose_residuals(iiwa, E, q, X_goal)
            assert dp < 1e-9 and dR < 1e-9 and np.all(q >= lo) and np.all(q <= hi)
            ok += 1
    assert ok >= 0.98 * N_POSES


def test_damped_least_squares_iterations_allocate_no_arrays(iiwa):
    """Memory traced during a solve does not grow with the number of iterations (numpy arrays are traced)."""
    E = iiwa.GetFrameByName("iiwa_link_ee")
    goals = random_goals(iiwa, E, 20, seed=3)
    q = np.empty(7)
    peaks = {}
    for max_iterations in (3, 60):
        ik = DampedLeastSquaresIK(iiwa, E, max_iterations=max_iterations)
        ik.Solve(*goals[0], q)  # warm up lazily created buffers
        tracemalloc.start()
        for X_goal, q0 in goals:
            ik.Solve(X_goal, q0, q)
        peaks[max_iterations] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks[60] < peaks[3] + 4096
