"""Kinematic constraints on q, with the names and semantics of pydrake.multibody.inverse_kinematics.

Each is a Constraint on the nq generalized positions, evaluated on a plant context (written with q on
every evaluation, as in Drake) with gradients from dynamics_cy's kernels.
"""
from __future__ import annotations

import numpy as np

from dynamics_cy import JointIndex, RigidTransform, RotationMatrix

from .kinematics import check_frame, frame_kinematics, left_jacobian_inverse, point_jacobian, rotation_log
from .program import Constraint, MathematicalProgram, _as_vector

__all__ = ["AddUnitQuaternionConstraintOnPlant", "AngleBetweenVectorsConstraint", "GazeTargetConstraint",
           "OrientationConstraint", "PointToLineDistanceConstraint", "PointToPointDistanceConstraint",
           "PolyhedronConstraint", "PositionConstraint", "UnitQuaternionConstraint"]    # what planning re-exports

def _unit(v, what: str) -> np.ndarray:
    a = _as_vector(v, 3, what)
    n = np.linalg.norm(a)
    if not n > 1e-10:
        raise ValueError(f"{what} is close to zero: {a}")
    return a / n


def _rotation(R) -> np.ndarray:
    return RotationMatrix(R).matrix()


class _KinematicConstraint(Constraint):
    """A Constraint on q evaluated on (plant, plant_context)."""

    def __init__(self, plant, plant_context, frames, n: int, lb, ub):
        if plant is None:
            raise ValueError(f"{type(self).__name__}: plant is None")
        self._kin = frame_kinematics(plant, plant_context)
        for f in frames:
            check_frame(plant, f, type(self).__name__)
        super().__init__(n, plant.num_positions(), lb, ub)

    def _eval(self, x, with_gradient):
        self._kin.update(x)
        return self._eval_at(with_gradient)


class PositionConstraint(_KinematicConstraint):
    """p_AQ_lower ≤ p_AQ ≤ p_AQ_upper for a point Q fixed to frame B, measured and expressed in a frame A
    fixed to Ā at X_ĀA (A = Ā when X_ĀA is not given): p_AQ = R_AĀ (p_ĀQ − p_ĀA). Both of Drake's
    overloads: (plant, frameA, p_AQ_lower, p_AQ_upper, frameB, p_BQ, plant_context) and
    (plant, frameAbar, X_AbarA, p_AQ_lower, p_AQ_upper, frameB, p_BQ, plant_context)."""

    def __init__(self, plant, *args, **kwargs):
        if len(args) + len(kwargs) == 7 or "X_AbarA" in kwargs:
            names = ("frameAbar", "X_AbarA", "p_AQ_lower", "p_AQ_upper", "frameB", "p_BQ", "plant_context")
        else:
            names = ("frameA", "p_AQ_lower", "p_AQ_upper", "frameB", "p_BQ", "plant_context")
        a = dict(zip(names, args), **kwargs)
        missing = [n for n in names if n not in a]
        if missing or len(a) != len(names):
            raise TypeError(f"PositionConstraint: expected the arguments {names}, got {sorted(a)}")
        frameA = a.get("frameA", a.get("frameAbar"))
        super().__init__(plant, a["plant_context"], (frameA, a["frameB"]), 3,
                         _as_vector(a["p_AQ_lower"], 3, "p_AQ_lower"), _as_vector(a["p_AQ_upper"], 3, "p_AQ_upper"))
        self._A, self._B, self._p_BQ = frameA, a["frameB"], _as_vector(a["p_BQ"], 3, "p_BQ")
        X = a.get("X_AbarA")
        X = np.eye(4) if X is None else RigidTransform(X).GetAsMatrix4()
        self._R_AAbar, self._p_AbarA = X[:3, :3].T.copy(), X[:3, 3].copy()

    def _eval_at(self, with_gradient):
        p_AbarQ, J = self._kin.position(self._A, self._B, self._p_BQ, with_gradient)
        p_AQ = self._R_AAbar @ (p_AbarQ - self._p_AbarA)
        return p_AQ, None if J is None else self._R_AAbar @ J


class OrientationConstraint(_KinematicConstraint):
    """The angle θ between frames A (fixed to Ā, R_ĀA) and B (fixed to B̄, R_B̄B) is at most θ_bound,
    imposed as 2 cos θ_bound + 1 ≤ trace(R_AB) ≤ 3."""

    def __init__(self, plant, frameAbar, R_AbarA, frameBbar, R_BbarB, theta_bound: float, plant_context):
        if not theta_bound >= 0:
            raise ValueError(f"OrientationConstraint: theta_bound must be >= 0, got {theta_bound}")
        super().__init__(plant, plant_context, (frameAbar, frameBbar), 1, 2 * np.cos(theta_bound) + 1, 3.0)
        self._Abar, self._Bbar, self._theta_bound = frameAbar, frameBbar, float(theta_bound)
        self._R_AbarA, self._R_BbarB = _rotation(R_AbarA), _rotation(R_BbarB)

    def _eval_at(self, with_gradient):
        R_AbarBbar, Jw = self._kin.rotation(self._Abar, self._Bbar, with_gradient)
        R = self._R_AbarA.T @ R_AbarBbar @ self._R_BbarB
        y = np.array([np.trace(R)])
        if not with_gradient:
            return y, None
        # d tr(R_AB)/dt = sᵀ w_AB_A with s = (R₁₂ - R₂₁, R₂₀ - R₀₂, R₀₁ - R₁₀) and w_AB_A = R_ĀAᵀ w_ĀB̄_Ā.
        s = np.array([R[1, 2] - R[2, 1], R[2, 0] - R[0, 2], R[0, 1] - R[1, 0]])
        return y, (s @ self._R_AbarA.T @ Jw)[None, :]

    def feasibility_residual(self, x):
        """r = (θ - θ_bound) â for θ > θ_bound (φ = θ â = log R_AB), else 0; always φ when θ_bound = 0.
        The trace's gradient vanishes as θ → 0, so this residual converges far faster."""
        self._kin.update(x)
        R_AbarBbar, Jw = self._kin.rotation(self._Abar, self._Bbar, True)
        phi = np.empty(3)
        theta = rotation_log(self._R_AbarA.T @ R_AbarBbar @ self._R_BbarB, phi)
        bound = self._theta_bound
        if theta <= bound and bound > 0:
            return np.zeros(3), np.zeros((3, x.shape[0]))
        dphi = left_jacobian_inverse(phi, np.empty((3, 3))) @ self._R_AbarA.T @ Jw
        if bound == 0:
            return phi, dphi
        a = phi / theta
        return (theta - bound) * a, ((1 - bound / theta) * np.eye(3) + (bound / theta) * np.outer(a, a)) @ dphi


class GazeTargetConstraint(_KinematicConstraint):
    """A point T fixed to B lies in the cone of half angle θ about n (fixed to A) from S (fixed to A):
    p_STᵀn̂ ≥ 0 and (p_STᵀn̂)² - cos²θ p_STᵀp_ST ≥ 0, with p_ST expressed in A."""

    def __init__(self, plant, frameA, p_AS, n_A, frameB, p_BT, cone_half_angle: float, plant_context):
        if not 0 <= cone_half_angle <= np.pi / 2:
            raise ValueError(f"GazeTargetConstraint: cone_half_angle must be in [0, pi/2], got {cone_half_angle}")
        super().__init__(plant, plant_context, (frameA, frameB), 2, [0.0, 0.0], [np.inf, np.inf])
        self._A, self._B = frameA, frameB
        self._p_AS, self._n = _as_vector(p_AS, 3, "p_AS"), _unit(n_A, "n_A")
        self._p_BT, self._c2 = _as_vector(p_BT, 3, "p_BT"), np.cos(cone_half_angle) ** 2

    def _eval_at(self, with_gradient):
        p_AT, J = self._kin.position(self._A, self._B, self._p_BT, with_gradient)
        p = p_AT - self._p_AS
        pn = p @ self._n
        y = np.array([pn, pn * pn - self._c2 * (p @ p)])
        if not with_gradient:
            return y, None
        return y, np.vstack([self._n @ J, (2 * pn * self._n - 2 * self._c2 * p) @ J])


class AngleBetweenVectorsConstraint(_KinematicConstraint):
    """θ_lower ≤ angle(a, b) ≤ θ_upper for a fixed to A and b fixed to B, imposed as
    cos θ_upper ≤ âᵀ R_AB b̂ ≤ cos θ_lower."""

    def __init__(self, plant, frameA, a_A, frameB, b_B, angle_lower: float, angle_upper: float, plant_context):
        if not angle_lower >= 0:
            raise ValueError(f"AngleBetweenVectorsConstraint: angle_lower must be >= 0, got {angle_lower}")
        if not angle_lower <= angle_upper <= np.pi:
            raise ValueError("AngleBetweenVectorsConstraint: angle_upper must be in [angle_lower, pi], "
                             f"got {angle_upper}")
        super().__init__(plant, plant_context, (frameA, frameB), 1, np.cos(angle_upper), np.cos(angle_lower))
        self._A, self._B = frameA, frameB
        self._a, self._b = _unit(a_A, "a_A"), _unit(b_B, "b_B")

    def _eval_at(self, with_gradient):
        R_AB, Jw = self._kin.rotation(self._A, self._B, with_gradient)
        c = R_AB @ self._b
        y = np.array([self._a @ c])
        if not with_gradient:
            return y, None
        return y, (np.cross(c, self._a) @ Jw)[None, :]  # d(âᵀR b̂)/dt = âᵀ(w × c) = (c × â)ᵀ w


class PointToPointDistanceConstraint(_KinematicConstraint):
    """d_lower ≤ |p_P1P2| ≤ d_upper for P1 fixed to B1 and P2 fixed to B2, imposed (as in Drake) on the
    squared distance: d_lower² ≤ |p_P1P2|² ≤ d_upper²."""

    def __init__(self, plant, frame1, p_B1P1, frame2, p_B2P2, distance_lower: float, distance_upper: float,
                 plant_context):
        if not 0 <= distance_lower <= distance_upper:
            raise ValueError("PointToPointDistanceConstraint: need 0 <= distance_lower <= distance_upper, got "
                             f"{distance_lower} and {distance_upper}")
        super().__init__(plant, plant_context, (frame1, frame2), 1, distance_lower ** 2, distance_upper ** 2)
        self._f1, self._f2 = frame1, frame2
        self._p1, self._p2 = _as_vector(p_B1P1, 3, "p_B1P1"), _as_vector(p_B2P2, 3, "p_B2P2")

    def _eval_at(self, with_gradient):
        X1, X2 = self._kin.pose(self._f1), self._kin.pose(self._f2)
        r1, r2 = X1[:3, :3] @ self._p1, X2[:3, :3] @ self._p2
        d = X2[:3, 3] + r2 - X1[:3, 3] - r1
        y = np.array([d @ d])
        if not with_gradient:
            return y, None
        J = point_jacobian(self._kin.jacobian(self._f2), r2) - point_jacobian(self._kin.jacobian(self._f1), r1)
        return y, (2 * d @ J)[None, :]


class PointToLineDistanceConstraint(_KinematicConstraint):
    """d_lower ≤ distance(P, L) ≤ d_upper for P fixed to B1 and the line L through Q along n fixed to B2, imposed
    (as in Drake) on the squared distance: d_lower² ≤ uᵀ(I - n̂n̂ᵀ)u ≤ d_upper², u = p_QP expressed in B2."""

    def __init__(self, plant, frame_point, p_B1P, frame_line, p_B2Q, n_B2, distance_lower: float,
                 distance_upper: float, plant_context):
        if not 0 <= distance_lower <= distance_upper:
            raise ValueError("PointToLineDistanceConstraint: need 0 <= distance_lower <= distance_upper, got "
                             f"{distance_lower} and {distance_upper}")
        n = _as_vector(n_B2, 3, "n_B2")
        if not np.linalg.norm(n) > 100 * np.finfo(float).eps:
            raise ValueError(f"PointToLineDistanceConstraint: n_B2 is close to zero: {n}")
        super().__init__(plant, plant_context, (frame_point, frame_line), 1, distance_lower ** 2,
                         distance_upper ** 2)
        self._B1, self._B2 = frame_point, frame_line
        self._p_B1P, self._p_B2Q = _as_vector(p_B1P, 3, "p_B1P"), _as_vector(p_B2Q, 3, "p_B2Q")
        n = n / np.linalg.norm(n)
        self._project = np.eye(3) - np.outer(n, n)

    def _eval_at(self, with_gradient):
        p_B2P, J = self._kin.position(self._B2, self._B1, self._p_B1P, with_gradient)
        u = p_B2P - self._p_B2Q
        Pu = self._project @ u
        y = np.array([u @ Pu])
        return y, ((2 * Pu @ J)[None, :] if with_gradient else None)


class PolyhedronConstraint(_KinematicConstraint):
    """A [p_FP1; ...; p_FPn] ≤ b for points Pi fixed to frame G (the columns of p_GP, 3 x n), measured and
    expressed in F; one row per row of A (3n columns)."""

    def __init__(self, plant, frameF, frameG, p_GP, A, b, plant_context):
        P = np.asarray(p_GP, dtype=float)
        P = P.reshape(3, 1) if P.shape == (3,) else P
        A = np.atleast_2d(np.asarray(A, dtype=float))
        if P.ndim != 2 or P.shape[0] != 3:
            raise ValueError(f"PolyhedronConstraint: p_GP must be 3 x n (a point per column), got shape {P.shape}")
        if A.shape[1] != 3 * P.shape[1]:
            raise ValueError(f"PolyhedronConstraint: A has {A.shape[1]} columns; 3 x {P.shape[1]} points need "
                             f"{3 * P.shape[1]}")
        b = _as_vector(b, A.shape[0], "PolyhedronConstraint b")
        super().__init__(plant, plant_context, (frameF, frameG), A.shape[0], np.full(A.shape[0], -np.inf), b)
        self._F, self._G, self._P, self._A = frameF, frameG, P, A

    def _eval_at(self, with_gradient):
        parts = [self._kin.position(self._F, self._G, p, with_gradient) for p in self._P.T]
        y = self._A @ np.concatenate([p for p, _ in parts])
        return y, (self._A @ np.vstack([J for _, J in parts]) if with_gradient else None)


class UnitQuaternionConstraint(Constraint):
    """zᵀz = 1 for a quaternion z = [w x y z]."""

    def __init__(self):
        super().__init__(1, 4, 1.0, 1.0)

    def _eval(self, x, with_gradient):
        return np.array([x @ x]), (2 * x[None, :] if with_gradient else None)


def AddUnitQuaternionConstraintOnPlant(plant, q_vars, prog: MathematicalProgram) -> None:
    """For every quaternion-floating joint: zᵀz = 1 on its quaternion variables, -1 ≤ z ≤ 1, and an
    initial guess of [1 0 0 0] where the guess is unset (NaN), as Drake does."""
    q_vars = np.asarray(q_vars, dtype=object).reshape(-1)
    for i in range(plant.num_joints()):
        j = plant.get_joint(JointIndex(i))
        if j.type_name() != "quaternion_floating":
            continue
        z = q_vars[j.position_start():j.position_start() + 4]
        prog.AddConstraint(UnitQuaternionConstraint(), z)
        prog.AddBoundingBoxConstraint(-1.0, 1.0, z)
        if np.all(np.isnan(prog.GetInitialGuess(z))):
            prog.SetInitialGuess(z, [1.0, 0.0, 0.0, 0.0])
