"""plan_cartesian_move: an end-effector pose goal to a timed joint trajectory for the HIL loop."""
import numpy as np
import pytest

from dynamics_cy import RigidTransform, RollPitchYaw, RotationMatrix
from dynamics_cy.planning import plan_cartesian_move

Q_START = np.array([0.2, 0.5, -0.1, -1.4, 0.2, 0.9, 0.3])


def ee_pose(plant, q):
    X = np.empty((4, 4))
    plant.kernels().frame_pose(np.asarray(q, float).reshape(-1), plant.GetFrameByName("iiwa_link_ee"), X)
    return X


def goal(plant):
    X0 = ee_pose(plant, Q_START)
    R = RotationMatrix(RollPitchYaw(0.3, -0.2, 0.4)).matrix() @ X0[:3, :3]
    return RigidTransform(RotationMatrix(R), X0[:3, 3] + [0.1, -0.15, 0.08])


def test_reaches_the_goal_along_a_straight_line_within_the_limits(iiwa):
    E = iiwa.GetFrameByName("iiwa_link_ee")
    X_goal = goal(iiwa)
    traj = plan_cartesian_move(iiwa, Q_START, E, X_goal, num_waypoints=12)
    T = traj.end_time()
    assert traj.start_time() == 0.0 and 0.2 < T < 10.0
    np.testing.assert_allclose(traj.value(0.0)[:, 0], Q_START, atol=1e-12)
    X_end = ee_pose(iiwa, traj.value(T))
    np.testing.assert_allclose(X_end, X_goal.GetAsMatrix4(), atol=1e-9)
    for t in (0.0, T):
        assert np.abs(traj.EvalDerivative(t, 1)).max() < 1e-6  # at rest at both ends
    p0, p1 = ee_pose(iiwa, Q_START)[:3, 3], X_goal.translation()
    direction = (p1 - p0) / np.linalg.norm(p1 - p0)
    ts = np.linspace(0.0, T, 300)
    deviation = []
    for t in ts:
        p = ee_pose(iiwa, traj.value(t))[:3, 3] - p0
        deviation.append(np.linalg.norm(p - (p @ direction) * direction))
        v, a = traj.EvalDerivative(t, 1)[:, 0], traj.EvalDerivative(t, 2)[:, 0]
        # the limits are imposed at the gridpoints; between them they hold to the discretization error
        assert np.all(np.abs(v) <= 1.005 * iiwa.GetVelocityUpperLimits())
        assert np.all(np.abs(a) <= 1.005 * iiwa.GetAccelerationUpperLimits())
    assert max(deviation) < 2e-3  # the spline through the IK waypoints stays near the Cartesian line


def test_scaling_and_torque_limits_slow_it_down(iiwa):
    E = iiwa.GetFrameByName("iiwa_link_ee")
    T = plan_cartesian_move(iiwa, Q_START, E, goal(iiwa)).end_time()
    assert plan_cartesian_move(iiwa, Q_START, E, goal(iiwa), velocity_scale=0.5, acceleration_scale=0.5).end_time() > T
    assert plan_cartesian_move(iiwa, Q_START, E, goal(iiwa), effort_scale=1.0).end_time() >= T - 1e-9
    slow = plan_cartesian_move(iiwa, Q_START, E, goal(iiwa), effort_scale=0.21)
    assert slow.end_time() > T
    k, tau = iiwa.kernels(), np.empty(7)
    for t in np.linspace(0.0, slow.end_time(), 200):
        k.inverse_dynamics(slow.value(t)[:, 0], slow.EvalDerivative(t, 1)[:, 0], slow.EvalDerivative(t, 2)[:, 0], tau)
        assert np.all(np.abs(tau) <= 0.21 * 1.02 * iiwa.GetEffortUpperLimits())   # between gridpoints: ~1 %


def test_errors(iiwa):
    E = iiwa.GetFrameByName("iiwa_link_ee")
    with pytest.raises(RuntimeError, match="no IK solution"):
        plan_cartesian_move(iiwa, Q_START, E, RigidTransform([2.0, 0.0, 0.5]))
    with pytest.raises(ValueError, match="the goal is the start"):
        plan_cartesian_move(iiwa, Q_START, E, RigidTransform(ee_pose(iiwa, Q_START)))
    with pytest.raises(ValueError, match="velocity_scale"):
        plan_cartesian_move(iiwa, Q_START, E, goal(iiwa), velocity_scale=0.0)
