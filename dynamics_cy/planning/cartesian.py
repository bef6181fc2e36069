"""plan_cartesian_move: a Cartesian goal for a frame turned into a timed joint trajectory, for
trajectory sources that stream to the HIL loop.

1. waypoints X_WFₖ on the straight line from the frame's current pose to X_WGoal (positions
   interpolated linearly, orientations along the geodesic R_WF exp(σ log(R_WFᵀ R_WGoal)));
2. joint waypoints by DampedLeastSquaresIK, each solve seeded with the previous solution (so the arm
   stays on one IK branch); the last one is the goal to the IK tolerance;
3. a C² cubic spline q(s) through them, s the cumulative joint-space distance, at rest at both ends;
4. Toppra at CalcGridPoints' gridpoints plus the spline's breaks (where q‴ jumps; with them in the
   grid the limits, imposed at the gridpoints, hold between them to a fraction of a percent, without
   them accelerations overshot by up to 10%) under the plant's joint velocity and acceleration limits
   (scaled by velocity_scale and acceleration_scale) and, optionally, its effort limits;
5. the result q(t) = q(s(t)) as a PathParameterizedTrajectory.
"""
from __future__ import annotations

import numpy as np

from dynamics_cy.spatial_math import matrix4

from .fast_ik import DampedLeastSquaresIK
from .kinematics import rotation_exp, rotation_log
from .toppra import CalcGridPointsOptions, Toppra, ToppraDiscretization
from .trajectories import PathParameterizedTrajectory, PiecewisePolynomial


def plan_cartesian_move(plant, q_start, frame, X_WGoal, *, num_waypoints: int = 10, velocity_scale: float = 1.0,
                        acceleration_scale: float = 1.0, effort_scale: float | None = None,
                        grid_options: CalcGridPointsOptions | None = None,
                        position_margin: float = 0.0) -> PathParameterizedTrajectory:
    """The time-optimal trajectory of the steps above from q_start (at rest) to the pose X_WGoal of frame
    (at rest); the IK waypoints stay `position_margin` inside the joint limits. Raises RuntimeError when
    a waypoint has no IK solution near the previous one or Toppra finds no parameterization, and
    ValueError when the goal is the start."""
    if not all(0 < x <= 1 for x in (velocity_scale, acceleration_scale, effort_scale or 1.0)):
        raise ValueError("velocity_scale, acceleration_scale and effort_scale must be in (0, 1]")
    q0 = np.array(q_start, dtype=float)
    k = plant.kernels()
    X0 = np.empty((4, 4))
    k.frame_pose(q0, frame, X0)
    Xg = matrix4(X_WGoal)
    phi = np.empty(3)
    rotation_log(X0[:3, :3].T @ Xg[:3, :3], phi)
    ik = DampedLeastSquaresIK(plant, frame, plant.GetPositionLowerLimits() + position_margin,
                              plant.GetPositionUpperLimits() - position_margin)
    waypoints = [q0]
    X = np.eye(4)
    for sigma in np.linspace(0.0, 1.0, num_waypoints + 1)[1:]:
        X[:3, :3] = X0[:3, :3] @ rotation_exp(sigma * phi)
        X[:3, 3] = (1 - sigma) * X0[:3, 3] + sigma * Xg[:3, 3]
        q = np.empty_like(q0)
        if not ik.Solve(X, waypoints[-1], q):
            raise RuntimeError(f"plan_cartesian_move: no IK solution near the previous waypoint for waypoint "
                               f"{len(waypoints)} of {num_waypoints} (position error {ik.position_error:.3g} m, "
                               f"orientation error {ik.orientation_error:.3g} rad)")
        waypoints.append(q)
    Q = np.array(waypoints).T
    s = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(Q, axis=1), axis=0))]
    keep = np.r_[True, np.diff(s) > 1e-9]
    if keep.sum() < 2:
        raise ValueError("plan_cartesian_move: the goal is the start pose")
    path = PiecewisePolynomial.CubicWithContinuousSecondDerivatives(s[keep], Q[:, keep], np.zeros(Q.shape[0]),
                                                                     np.zeros(Q.shape[0]))
    grid = np.union1d(Toppra.CalcGridPoints(path, grid_options or CalcGridPointsOptions()), path.get_segment_times())
    toppra = Toppra(path, plant, grid)
    toppra.AddJointVelocityLimit(velocity_scale * plant.GetVelocityLowerLimits(),
                                 velocity_scale * plant.GetVelocityUpperLimits())
    toppra.AddJointAccelerationLimit(acceleration_scale * plant.GetAccelerationLowerLimits(),
                                     acceleration_scale * plant.GetAccelerationUpperLimits(),
                                     ToppraDiscretization.kInterpolation)
    if effort_scale is not None:
        toppra.AddJointTorqueLimit(effort_scale * plant.GetEffortLowerLimits(),
                                   effort_scale * plant.GetEffortUpperLimits(), ToppraDiscretization.kInterpolation)
    s_of_t = toppra.SolvePathParameterization()
    if s_of_t is None:
        raise RuntimeError("plan_cartesian_move: Toppra found no time parameterization within the limits")
    return PathParameterizedTrajectory(path, s_of_t)
