"""Frame poses X_WF(q) and Jacobians at one configuration q, from dynamics_cy's allocation-free
kernels, shared by every constraint that evaluates on the same plant context (one forward
kinematics per q, however many constraints).

Jacobians here are of frame origins, J_WF = [Jw_WF; Jv_WFo] (6 x nq) with V_WFo_W = J_WF q̇, i.e.
JacobianWrtVariable.kQDot: J_v N⁺(q) with N⁺ = plant.MakeQDotToVelocityMap (identity unless the plant
has quaternion or roll-pitch-yaw joints).
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from dynamics_cy import JointIndex
from dynamics_cy.spatial_math import skew

_QDOT_IS_V = {"revolute", "prismatic", "weld"}


def qdot_is_v(plant) -> bool:
    """True when q̇ = v for every joint of the plant (no quaternion or roll-pitch-yaw joints)."""
    return all(plant.get_joint(JointIndex(i)).type_name() in _QDOT_IS_V for i in range(plant.num_joints()))


def check_frame(plant, frame, what: str) -> None:
    if frame is None or frame.GetParentPlant() is not plant:
        raise RuntimeError(f"{what}: frame {frame!r} does not belong to the plant")


def rotation_log(R: np.ndarray, out: np.ndarray) -> float:
    """Writes the rotation vector φ = θ â of R = exp([φ]×) into out (3,) without allocating arrays and
    returns θ ∈ [0, π]."""
    c = min(max(0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0), -1.0), 1.0)
    vx, vy, vz = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]  # 2 sin θ â
    s = 0.5 * math.sqrt(vx * vx + vy * vy + vz * vz)
    theta = math.atan2(s, c)
    if s > 1e-6 or c > 0.0:
        k = 0.5 * theta / s if s > 1e-12 else 0.5
        out[0], out[1], out[2] = k * vx, k * vy, k * vz
    else:  # θ near π: â from the symmetric part R + Rᵀ = 2(c I + (1 - c) â âᵀ)
        a = [math.sqrt(max((R[i, i] - c) / (1.0 - c), 0.0)) for i in range(3)]
        i = max(range(3), key=lambda m: a[m])
        for j in range(3):
            if j != i:
                a[j] = (R[i, j] + R[j, i]) / (2.0 * (1.0 - c) * a[i])
        k = -theta if (vx, vy, vz)[i] < 0.0 else theta
        out[0], out[1], out[2] = k * a[0], k * a[1], k * a[2]
    return theta


def rotation_exp(phi: np.ndarray) -> np.ndarray:
    """exp([φ]×) by Rodrigues' formula."""
    theta = float(np.linalg.norm(phi))
    if theta < 1e-12:
        return np.eye(3) + skew(phi)
    K = skew(np.asarray(phi) / theta)
    return np.eye(3) + math.sin(theta) * K + (1.0 - math.cos(theta)) * K @ K


def left_jacobian_inverse(phi: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Writes J_l⁻¹(φ) into out (3 x 3) without allocating arrays and returns it: φ̇ = J_l⁻¹(φ) w for
    R = exp([φ]×) and Ṙ = [w]× R. With K = [φ]×, K² = φφᵀ - θ²I:
    J_l⁻¹ = I - ½K + c K² = (1 - cθ²) I - ½K + c φφᵀ, c = 1/θ² - (1 + cos θ) / (2θ sin θ) (→ 1/12)."""
    x, y, z = float(phi[0]), float(phi[1]), float(phi[2])
    t2 = x * x + y * y + z * z
    theta = math.sqrt(t2)
    if theta < 1e-6:
        c = 1.0 / 12.0
    else:
        s = math.sin(theta)
        c = 1.0 / t2 - (1.0 + math.cos(theta)) / (2.0 * theta * s) if abs(s) > 1e-12 else 1.0 / t2
    d = 1.0 - c * t2
    out[0, 0], out[0, 1], out[0, 2] = d + c * x * x, 0.5 * z + c * x * y, -0.5 * y + c * x * z
    out[1, 0], out[1, 1], out[1, 2] = -0.5 * z + c * y * x, d + c * y * y, 0.5 * x + c * y * z
    out[2, 0], out[2, 1], out[2, 2] = 0.5 * y + c * z * x, -0.5 * x + c * z * y, d + c * z * z
    return out


def point_jacobian(J_WF: np.ndarray, p_FoP_W: np.ndarray) -> np.ndarray:
    """Jv_WP (3 x n) of a point P fixed to F: v_WP = v_WFo + w_WF × p_FoP."""
    return J_WF[3:] - skew(p_FoP_W) @ J_WF[:3]


class FrameKinematics:
    """Cached X_WF and J_WF of the plant's frames at the configuration last passed to update(q).
    update() also writes q into the context, as Drake's constraints do."""

    def __init__(self, plant, context):
        if not plant.is_finalized():
            raise RuntimeError("the plant must be finalized (call plant.Finalize()) before planning on it")
        self.plant, self.context = plant, context
        self.nq, self.nv = plant.num_positions(), plant.num_velocities()
        self._k = plant.kernels()
        self._identity_map = qdot_is_v(plant)
        self._q: np.ndarray | None = None
        self._X: dict[int, np.ndarray] = {}
        self._J: dict[int, np.ndarray] = {}
        self._Jv: dict[int, np.ndarray] = {}
        self._Nplus = None

    def update(self, q: np.ndarray) -> None:
        if self._q is not None and np.array_equal(q, self._q):
            return
        self._q = np.array(q, dtype=float)
        self.plant.SetPositions(self.context, self._q)
        self._X.clear()
        self._J.clear()
        self._Jv.clear()
        self._Nplus = None if self._identity_map else self.plant.MakeQDotToVelocityMap(self.context)

    @property
    def q(self) -> np.ndarray:
        return self._q

    def qdot_to_v(self) -> np.ndarray | None:
        """N⁺(q) (nv x nq), or None when q̇ = v."""
        return self._Nplus

    def pose(self, frame) -> np.ndarray:
        """X_WF as a 4x4 matrix."""
        f = int(frame.index())
        X = self._X.get(f)
        if X is None:
            X = self._X[f] = np.empty((4, 4))
            self._k.frame_pose(self._q, f, X)
        return X

    def jacobian_v(self, frame) -> np.ndarray:
        """J_WF (6 x nv) with respect to v."""
        f = int(frame.index())
        J = self._Jv.get(f)
        if J is None:
            J = self._Jv[f] = np.empty((6, self.nv))
            self._k.jacobian(self._q, f, J)
        return J

    def jacobian(self, frame) -> np.ndarray:
        """J_WF (6 x nq) with respect to q̇."""
        f = int(frame.index())
        J = self._J.get(f)
        if J is None:
            Jv = self.jacobian_v(frame)
            J = self._J[f] = Jv if self._Nplus is None else Jv @ self._Nplus
        return J

    def position(self, frame_A, frame_B, p_BQ: np.ndarray, with_gradient: bool):
        """p_AQ of a point Q fixed to B, and ∂p_AQ/∂q (3 x nq)."""
        XA, XB = self.pose(frame_A), self.pose(frame_B)
        R_WA = XA[:3, :3]
        p_BoQ_W = XB[:3, :3] @ p_BQ
        p_AoQ_W = XB[:3, 3] + p_BoQ_W - XA[:3, 3]
        p_AQ = R_WA.T @ p_AoQ_W
        if not with_gradient:
            return p_AQ, None
        Jv_Q = point_jacobian(self.jacobian(frame_B), p_BoQ_W)
        Jv_AQ = point_jacobian(self.jacobian(frame_A), p_AoQ_W)
        return p_AQ, R_WA.T @ (Jv_Q - Jv_AQ)

    def rotation(self, frame_A, frame_B, with_gradient: bool):
        """R_AB and Jw_AB_A (3 x nq), the Jacobian of w_AB expressed in A."""
        R_WA, R_WB = self.pose(frame_A)[:3, :3], self.pose(frame_B)[:3, :3]
        R_AB = R_WA.T @ R_WB
        if not with_gradient:
            return R_AB, None
        return R_AB, R_WA.T @ (self.jacobian(frame_B)[:3] - self.jacobian(frame_A)[:3])


_shared: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def frame_kinematics(plant, context) -> FrameKinematics:
    """The FrameKinematics shared by all evaluators that use this plant context."""
    if context is None:
        raise ValueError("plant_context is None; pass plant.CreateDefaultContext()")
    plant.GetPositions(context)  # raises unless the context belongs to the plant
    kin = _shared.get(context)
    if kin is None:
        kin = _shared[context] = FrameKinematics(plant, context)
    return kin
