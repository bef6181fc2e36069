"""DampedLeastSquaresIK: a Levenberg–Marquardt solver for the pose of one frame, for the real-time
loop. All arrays are allocated once in the constructor; an iteration calls the dynamics_cy kernels,
numpy with out= arguments and LAPACK's dposv in place, and allocates no arrays.

Iteration, for the goal X_WG = (R_WG, p_WG) of frame F:

    e = [log(R_WG R_WFᵀ); p_WG - p_WFo]       (rotation vector and position error, both in W)
    (JᵀJ + λ s I) Δq = Jᵀe,   q ← clip(q + Δq, q_lower, q_upper)

with J = -∂e/∂q = [J_l⁻¹(e_R) R_err Jw_WF; Jv_WFo] (R_err = R_WG R_WFᵀ = exp([e_R]×)), s = trace(JᵀJ)/n,
and λ decreased after a step that reduces |e| and increased (the step retried) otherwise. Joints that
the step would carry through a limit are held for that step and the rest re-solved. Requires q̇ = v
(fixed-base robots with revolute and prismatic joints).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import lapack

from dynamics_cy.spatial_math import matrix4

from .kinematics import check_frame, left_jacobian_inverse, qdot_is_v, rotation_log


class DampedLeastSquaresIK:
    """IK of frame's pose with joint limits; see the module docstring for the method."""

    def __init__(self, plant, frame, q_lower=None, q_upper=None, max_iterations: int = 100,
                 position_tolerance: float = 1e-10, orientation_tolerance: float = 1e-10):
        if not qdot_is_v(plant):
            raise ValueError("DampedLeastSquaresIK needs q̇ = v (no quaternion or roll-pitch-yaw joints)")
        check_frame(plant, frame, "DampedLeastSquaresIK")
        n = plant.num_positions()
        self._k, self._f, self._n = plant.kernels(), int(frame.index()), n
        self._lo = np.array(plant.GetPositionLowerLimits() if q_lower is None else q_lower, dtype=float)
        self._hi = np.array(plant.GetPositionUpperLimits() if q_upper is None else q_upper, dtype=float)
        self._max_iterations = int(max_iterations)
        self._tol_p, self._tol_R = float(position_tolerance), float(orientation_tolerance)
        self._R_goal, self._p_goal = np.eye(3), np.zeros(3)
        self._q, self._q_try = np.zeros(n), np.zeros(n)
        self._X, self._X_try = np.eye(4), np.eye(4)
        self._e, self._e_try = np.zeros(6), np.zeros(6)
        self._R_err, self._Jl, self._M = np.eye(3), np.eye(3), np.eye(3)
        self._Jw = np.zeros((3, n))
        self._J, self._Jf = np.zeros((6, n)), np.zeros((6, n))
        self._free = np.ones(n)
        self._out_lo, self._out_hi = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        self._H = np.zeros((n, n), order="F")
        self._diag = self._H.reshape(-1, order="A")[::n + 1]
        self._g = np.zeros(n)
        self.iterations = 0
        self.position_error = self.orientation_error = np.inf

    def _error(self, X: np.ndarray, e: np.ndarray) -> float:
        """Fills e = [log(R_goal R_WFᵀ); p_goal - p_WFo] and returns |e|²."""
        np.matmul(self._R_goal, X[:3, :3].T, out=self._R_err)
        rotation_log(self._R_err, e)
        np.subtract(self._p_goal, X[:3, 3], out=e[3:])
        return float(e @ e)

    def _converged(self) -> bool:
        e = self._e
        self.orientation_error = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
        self.position_error = math.sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5])
        return self.position_error <= self._tol_p and self.orientation_error <= self._tol_R

    def Solve(self, X_WGoal, q_start, q_out) -> bool:
        """Solves from q_start (clipped into the limits) and writes the result into q_out. Returns whether
        both tolerances were met; position_error, orientation_error and iterations tell the rest."""
        X_goal = matrix4(X_WGoal)
        self._R_goal[:] = X_goal[:3, :3]
        self._p_goal[:] = X_goal[:3, 3]
        q, q_try, H, g, J, Jf = self._q, self._q_try, self._H, self._g, self._J, self._Jf
        np.clip(q_start, self._lo, self._hi, out=q)
        self._k.frame_pose(q, self._f, self._X)
        err = self._error(self._X, self._e)
        lam, ok, stalled = 1e-3, self._converged(), 0
        self.iterations = 0
        while not ok and self.iterations < self._max_iterations and lam < 1e8 and stalled < 5:
            self.iterations += 1
            self._k.jacobian(q, self._f, J)
            # the rotation rows: J_l⁻¹(e_R) R_err Jw, with R_err at q (a rejected trial overwrote it)
            np.matmul(self._R_goal, self._X[:3, :3].T, out=self._R_err)
            left_jacobian_inverse(self._e, self._Jl)
            np.matmul(self._Jl, self._R_err, out=self._M)
            np.matmul(self._M, J[:3], out=self._Jw)
            J[:3] = self._Jw
            damping = lam * float(np.vdot(J, J)) / self._n + 1e-14
            self._free.fill(1.0)
            for _ in range(self._n):  # fix the joints the step would push through a limit, re-solve the rest
                np.multiply(J, self._free, out=Jf)
                np.matmul(Jf.T, Jf, out=H)
                np.matmul(Jf.T, self._e, out=g)
                np.add(self._diag, damping, out=self._diag)
                _, _, info = lapack.dposv(H, g, lower=0, overwrite_a=1, overwrite_b=1)
                np.add(q, g, out=q_try)
                np.less(q_try, self._lo, out=self._out_lo)
                np.greater(q_try, self._hi, out=self._out_hi)
                np.logical_or(self._out_lo, self._out_hi, out=self._out_lo)
                if info != 0 or not self._out_lo.any():
                    break
                np.copyto(self._free, 0.0, where=self._out_lo)
            if info != 0:
                lam *= 4.0
                continue
            np.clip(q_try, self._lo, self._hi, out=q_try)
            self._k.frame_pose(q_try, self._f, self._X_try)
            err_try = self._error(self._X_try, self._e_try)
            if err_try < err:
                stalled = stalled + 1 if err_try > (1.0 - 1e-3) * err else 0  # a local minimum of |e| > 0
                np.copyto(q, q_try)
                np.copyto(self._X, self._X_try)
                np.copyto(self._e, self._e_try)
                err, lam = err_try, max(lam / 3.0, 1e-12)
                ok = self._converged()
            else:
                lam *= 4.0
        np.copyto(q_out, q)
        return ok

    def SolveWithRestarts(self, X_WGoal, q_start, q_out, max_restarts: int, rng: np.random.Generator) -> bool:
        """Solve from q_start, then from up to max_restarts uniformly random configurations within the
        limits (these allocate) until one succeeds."""
        if self.Solve(X_WGoal, q_start, q_out):
            return True
        return any(self.Solve(X_WGoal, rng.uniform(self._lo, self._hi), q_out) for _ in range(max_restarts))
