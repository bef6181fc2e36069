"""Evaluators of pydrake.multibody.optimization with analytic gradients: CentroidalMomentumConstraint,
SpatialVelocityConstraint, QuaternionEulerIntegrationConstraint and
ContactWrenchFromForceInWorldFrameEvaluator. (Drake builds the first two on MultibodyPlant<AutoDiffXd>;
here they take the double plant and give gradients from dynamics_cy.planning.tree_derivatives.)
"""
from __future__ import annotations

import numpy as np

from dynamics_cy.spatial_math import skew

from .kinematics import check_frame, frame_kinematics
from .program import Constraint, EvaluatorBase, _as_vector
from .tree_derivatives import TreeMotion


class _MultibodyState:
    """q, v of an evaluator's variables written into the context, with kinematics and motion at q."""

    def __init__(self, plant, plant_context):
        self.plant = plant
        self.kin = frame_kinematics(plant, plant_context)
        self.tree = TreeMotion(plant)
        self.nq, self.nv = plant.num_positions(), plant.num_velocities()

    def update(self, q: np.ndarray, v: np.ndarray) -> None:
        self.kin.update(q)
        self.plant.SetVelocities(self.kin.context, v)
        self.tree.update(self.kin)

    def to_q(self, d_dtheta: np.ndarray) -> np.ndarray:
        """∂/∂q = ∂/∂θ N⁺(q)."""
        Np = self.kin.qdot_to_v()
        return d_dtheta if Np is None else d_dtheta @ Np


class CentroidalMomentumConstraint(Constraint):
    """h_WC(q, v) - h = 0 on [q; v; h], h_WC = [k_WC; l_WC] the spatial momentum about the centre of mass C
    expressed in W (of the bodies of model_instances, all but the world's when None); with angular_only,
    k_WC(q, v) - k = 0 on [q; v; k]."""

    def __init__(self, plant, model_instances, plant_context, angular_only: bool):
        self._s = _MultibodyState(plant, plant_context)
        chosen = None if model_instances is None else {int(m) for m in model_instances}
        self._bodies = []
        for b in range(1, plant.num_bodies()):
            body = plant.get_body(b)
            if body.default_mass() > 0 and (chosen is None or int(body.model_instance()) in chosen):
                I_cm = body.default_rotational_inertia().ShiftToCenterOfMass(body.default_mass(), body.default_com())
                self._bodies.append((b, body.body_frame(), body.default_mass(), body.default_com(),
                                     I_cm.CopyToFullMatrix3()))
        if not self._bodies:
            raise ValueError("CentroidalMomentumConstraint: the selected bodies have no mass")
        self._angular_only = bool(angular_only)
        n_h = 3 if angular_only else 6
        super().__init__(n_h, self._s.nq + self._s.nv + n_h, np.zeros(n_h), np.zeros(n_h))

    def _eval(self, x, with_gradient):
        s = self._s
        q, v, h = x[:s.nq], x[s.nq:s.nq + s.nv], x[s.nq + s.nv:]
        s.update(q, v)
        tree, nv = s.tree, s.nv
        M, mc, l, k = 0.0, np.zeros(3), np.zeros(3), np.zeros(3)
        dmc, dl, dk = np.zeros((3, nv)), np.zeros((3, nv)), np.zeros((3, nv))
        Jl, Jk = np.zeros((3, nv)), np.zeros((3, nv))
        for b, frame, m, com_B, I_B in self._bodies:
            X = s.kin.pose(frame)
            R, c = X[:3, :3], X[:3, :3] @ com_B + X[:3, 3]
            I_c = R @ I_B @ R.T
            V, dV = tree.twist(b, v)
            w = V[:3]
            l_b = m * (V[3:] + np.cross(w, c))
            Iw = I_c @ w
            M, mc, l, k = M + m, mc + m * c, l + l_b, k + Iw + np.cross(c, l_b)
            if with_gradient:
                dc = tree.point_jacobian(b, c)
                Wb = tree.S[:3] * tree.anc[b]
                dl_b = m * (dV[3:] - skew(c) @ dV[:3] + skew(w) @ dc)
                dIw = -skew(Iw) @ Wb + I_c @ skew(w) @ Wb  # (∂I_c/∂θⱼ) w = wⱼ × I_c w - I_c (wⱼ × w)
                dmc += m * dc
                dl += dl_b
                dk += dIw + I_c @ dV[:3] - skew(l_b) @ dc + skew(c) @ dl_b
                Jl += m * dc
                Jk += I_c @ Wb + m * skew(c) @ dc
        C = mc / M
        kC = k - np.cross(C, l)
        y = (kC if self._angular_only else np.r_[kC, l]) - h
        if not with_gradient:
            return y, None
        dC = dmc / M
        dkC = dk + skew(l) @ dC - skew(C) @ dl
        JkC = Jk - skew(C) @ Jl
        dq, dv = (dkC, JkC) if self._angular_only else (np.vstack([dkC, dl]), np.vstack([JkC, Jl]))
        return y, np.hstack([s.to_q(dq), dv, -np.eye(y.shape[0])])


class AngularVelocityBounds:
    """Bounds on w_AC: magnitude_lower ≤ |w| ≤ magnitude_upper and angle(w, reference_direction) ≤ θ_bound."""

    def __init__(self, magnitude_lower: float = 0.0, magnitude_upper: float = np.inf,
                 reference_direction=(0.0, 0.0, 1.0), theta_bound: float = np.pi):
        self.magnitude_lower, self.magnitude_upper = magnitude_lower, magnitude_upper
        self.reference_direction, self.theta_bound = np.asarray(reference_direction, float), theta_bound


class SpatialVelocityConstraint(Constraint):
    """v_AC_lower ≤ v_AC_A ≤ v_AC_upper on [q; v], for the point Co fixed to frame B at p_BCo (R_BC = I),
    measured and expressed in A. With w_AC_bounds, two more rows: |w_AC|² in
    [magnitude_lower², magnitude_upper²] and w_AC·r̂ / √(|w_AC|² + 100ε²) in [cos θ_bound, 1]."""

    AngularVelocityBounds = AngularVelocityBounds

    def __init__(self, plant, frameA, v_AC_lower, v_AC_upper, frameB, p_BCo, plant_context, w_AC_bounds=None):
        for f in (frameA, frameB):
            check_frame(plant, f, "SpatialVelocityConstraint")
        self._s = _MultibodyState(plant, plant_context)
        lb, ub = list(_as_vector(v_AC_lower, 3, "v_AC_lower")), list(_as_vector(v_AC_upper, 3, "v_AC_upper"))
        self._r = None
        if w_AC_bounds is not None:
            wb = w_AC_bounds
            if not 0 <= wb.magnitude_lower <= wb.magnitude_upper:
                raise RuntimeError("SpatialVelocityConstraint: need 0 <= magnitude_lower <= magnitude_upper")
            if not wb.theta_bound >= 0:
                raise RuntimeError("SpatialVelocityConstraint: theta_bound must be >= 0")
            self._r = _as_vector(wb.reference_direction, 3, "reference_direction")
            self._r = self._r / np.linalg.norm(self._r)
            lb += [wb.magnitude_lower ** 2, np.cos(wb.theta_bound)]
            ub += [wb.magnitude_upper ** 2, 1.0]
        self._A, self._B, self._p_BC = frameA, frameB, _as_vector(p_BCo, 3, "p_BCo")
        self._a, self._b = int(frameA.body().index()), int(frameB.body().index())
        super().__init__(len(lb), self._s.nq + self._s.nv, lb, ub)

    def _eval(self, x, with_gradient):
        s = self._s
        q, v = x[:s.nq], x[s.nq:]
        s.update(q, v)
        tree = s.tree
        R_AW = s.kin.pose(self._A)[:3, :3].T
        XB = s.kin.pose(self._B)
        p = XB[:3, :3] @ self._p_BC + XB[:3, 3]
        VA, dVA = tree.twist(self._a, v)
        VB, dVB = tree.twist(self._b, v)
        wr, vr = VB[:3] - VA[:3], VB[3:] - VA[3:] + np.cross(VB[:3] - VA[:3], p)
        w_A, v_A = R_AW @ wr, R_AW @ vr
        y = v_A
        if self._r is not None:
            ww = w_A @ w_A
            den = np.sqrt(ww + 100 * np.finfo(float).eps ** 2)
            y = np.r_[v_A, ww, w_A @ self._r / den]
        if not with_gradient:
            return y, None
        WA = tree.S[:3] * tree.anc[self._a]  # d(R_AW x)/dθⱼ = R_AW (x × wⱼ) for the dofs that move A
        dwr = dVB[:3] - dVA[:3]
        dvr = dVB[3:] - dVA[3:] - skew(p) @ dwr + skew(wr) @ tree.point_jacobian(self._b, p)
        dv_dq = R_AW @ (dvr + skew(vr) @ WA)
        dv_dv = R_AW @ (tree.point_jacobian(self._b, p) - tree.point_jacobian(self._a, p))
        rows_q, rows_v = [s.to_q(dv_dq)], [dv_dv]
        if self._r is not None:
            dw_dq = R_AW @ (dwr + skew(wr) @ WA)
            dw_dv = R_AW @ (tree.S[:3] * (tree.anc[self._b].astype(float) - tree.anc[self._a]))
            g_mag = 2 * w_A
            g_cos = self._r / den - (w_A @ self._r) / den ** 3 * w_A
            rows_q += [s.to_q(np.vstack([g_mag @ dw_dq, g_cos @ dw_dq]))]
            rows_v += [np.vstack([g_mag @ dw_dv, g_cos @ dw_dv])]
        return y, np.hstack([np.vstack(rows_q), np.vstack(rows_v)])


def _quat_left(p: np.ndarray) -> np.ndarray:
    """L(p) with p ⊗ q = L(p) q (Hamilton product, [w x y z])."""
    w, x, y, z = p
    return np.array([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])


def _quat_right(q: np.ndarray) -> np.ndarray:
    """R(q) with p ⊗ q = R(q) p."""
    w, x, y, z = q
    return np.array([[w, -x, -y, -z], [x, w, z, -y], [y, -z, w, x], [z, y, -x, w]])


class QuaternionEulerIntegrationConstraint(Constraint):
    """z₂ and Δz ⊗ z₁ are the same orientation, Δz = [cos(|ω|h/2), ω/|ω| sin(|ω|h/2)]: on [z₁, z₂, ω, h],
    z₂·(Δz ⊗ z₁) = 1, or (z₂·(Δz ⊗ z₁))² = 1 when allow_quaternion_negation. Smooth at ω = 0 here (Δz
    uses sin(|ω|h/2)/|ω|, which tends to h/2)."""

    def __init__(self, allow_quaternion_negation: bool):
        self._negation = bool(allow_quaternion_negation)
        super().__init__(1, 12, 1.0, 1.0)

    def allow_quaternion_negation(self) -> bool:
        return self._negation

    @staticmethod
    def ComposeVariable(quat1, quat2, angular_vel, h) -> np.ndarray:
        return np.r_[np.asarray(quat1).reshape(4), np.asarray(quat2).reshape(4), np.asarray(angular_vel).reshape(3),
                     np.asarray(h).reshape(1)]

    def _eval(self, x, with_gradient):
        z1, z2, w, h = x[:4], x[4:8], x[8:11], x[11]
        n = np.linalg.norm(w)
        th = 0.5 * n * h
        s = np.sin(th) / n if n > 1e-12 else 0.5 * h  # sin(|ω|h/2)/|ω|
        dz = np.r_[np.cos(th), s * w]
        Lz = _quat_left(dz)
        prod = Lz @ z1
        raw = z2 @ prod
        y = np.array([raw * raw if self._negation else raw])
        if not with_gradient:
            return y, None
        wh = w / n if n > 1e-12 else np.zeros(3)
        d_dz_dw = np.vstack([-0.5 * h * s * w, s * np.eye(3) + (0.5 * h * np.cos(th) - s) * np.outer(wh, wh)])
        d_dz_dh = np.r_[-0.5 * n * np.sin(th), 0.5 * np.cos(th) * w]
        g_dz = _quat_right(z1).T @ z2
        g = np.r_[Lz.T @ z2, prod, g_dz @ d_dz_dw, g_dz @ d_dz_dh]
        return y, ((2 * raw if self._negation else 1.0) * g)[None, :]


class ContactWrenchFromForceInWorldFrameEvaluator(EvaluatorBase):
    """The contact wrench F_AB_W = [τ; f] = [0; λ] on [q; λ]: λ is the force from geometry A on geometry B,
    applied at B's witness point."""

    def __init__(self, plant, context, geometry_id_pair, description: str = ""):
        frame_kinematics(plant, context)  # validates the context
        self._pair = tuple(geometry_id_pair)
        self._nq = plant.num_positions()
        super().__init__(6, self._nq + 3, description)

    def geometry_id_pair(self) -> tuple:
        return self._pair

    def num_lambda(self) -> int:
        return 3

    def _eval(self, x, with_gradient):
        y = np.r_[np.zeros(3), x[self._nq:]]
        if not with_gradient:
            return y, None
        J = np.zeros((6, self._nq + 3))
        J[3:, self._nq:] = np.eye(3)
        return y, J
