"""Whole-body inverse dynamics of a floating-base robot on rigid point contacts, as one QP per tick.

Decision variables x = [v̇ (nv); λ (3 n_c)], λᵢ the force on contact point Cᵢ in W. With
h(q, v) = C(q, v) v − τ_g(q), the floating base's rows u (the first six velocities) and the
actuated rows a of the equations of motion M v̇ + h = Sᵀτ + Σ Jᵢᵀ λᵢ give

    minimise    ½ Σₖ wₖ ‖Aₖ x − bₖ‖² + ½ w_τ ‖τ‖² + ½ ε_a ‖v̇‖² + ½ ε_f ‖λ‖²   (tasks)
    subject to  M_u v̇ − J_uᵀ λ = −h_u                                       (base EoM, 6 rows)
                Jᵢ v̇ = −J̇ᵢ v        for a point Cᵢ in contact               (rigid contact, 3 rows)
                J_F v̇ = −J̇_F v      for a flat foot F in contact           (6 rows: α_WF = 0, a_WFo = 0)
                λᵢ = 0              for Cᵢ not in contact
                |λᵢ·t̂| ≤ μ λᵢ·n̂ for t̂ = x̂, ŷ; f_min ≤ λᵢ·n̂ ≤ f_max (n̂ = ẑ: flat ground)
                τ_min − h_a ≤ M_a v̇ − J_aᵀ λ ≤ τ_max − h_a                 (torque limits)

and then τ = M_a v̇ + h_a − J_aᵀ λ. The tasks are accelerations of a PD law with feed-forward:
CoM (J_com v̇ = a* − J̇_com v), base orientation (the free joint's v̇[0:3] = α_WB), base position
(v̇[3:6] = a_WBo), posture of the actuated joints and swing points (Jᵢ v̇ = a* − J̇ᵢ v).

Contact points are grouped by frame: three or more points on one frame are a flat foot, held by the
frame's 6-D acceleration (the corners' own rows would be inconsistent as soon as the foot turns),
with a force at each corner; fewer are point feet. A group is in contact or not (``active``).

Every matrix of the QP is allocated once and filled each tick by the compiled kernels
(points_jacobian_bias, center_of_mass, frame_jacobian_bias, mass_matrix, inverse_dynamics); the
assembly is numpy (its products still make temporaries: moving it to Cython is the next step). The
QP is solved by DAQP (a dual active-set solver for small dense QPs) in one workspace, hot-started
from the previous tick's active set (docs/wbc.md has the measurements behind that choice).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import daqp
import numpy as np

_EQUALITY = 5              # DAQP's sense flags: active + immutable
_INF = 1e30                 # DAQP's infinity: a bound this large is no bound


@dataclass
class WholeBodyWeights:
    """Task weights w and PD gains (kp, kd) of the desired accelerations, the weight of ‖τ‖²
    (``torque``: the minimum-torque force distribution) and the regularisation of v̇ and λ."""

    com: float = 1.0
    com_kp: float = 100.0
    com_kd: float = 20.0
    base_orientation: float = 1.0
    base_orientation_kp: float = 100.0
    base_orientation_kd: float = 20.0
    base_position: float = 0.0
    base_position_kp: float = 100.0
    base_position_kd: float = 20.0
    posture: float = 1e-2
    posture_kp: float = 100.0
    posture_kd: float = 20.0
    swing: float = 1.0
    swing_kp: float = 400.0
    swing_kd: float = 40.0
    torque: float = 0.0
    vdot_regularization: float = 1e-6
    force_regularization: float = 1e-6


@dataclass
class ContactPoint:
    """A point C fixed in a frame F (p_FC in F) that may touch the flat ground z = const."""

    frame: object
    p_FC: np.ndarray = field(default_factory=lambda: np.zeros(3))


def _rotation_log(R: np.ndarray, out: np.ndarray) -> None:
    """out = the rotation vector θ k̂ of R (0 ≤ θ ≤ π): sin θ k̂ is R's skew part, cos θ = (tr R − 1)/2;
    at θ = π (no skew part) k̂ comes from R + I = 2 k̂ k̂ᵀ."""
    s = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    c = 0.5 * (np.trace(R) - 1.0)
    sn = np.linalg.norm(s)
    if sn > 1e-12:
        out[:] = s * (np.arctan2(sn, c) / sn)
    elif c > 0:
        out[:] = s
    else:
        i = int(np.argmax(np.diag(R)))
        k = (R[:, i] + np.eye(3)[i]) / np.sqrt(2.0 * (1.0 + R[i, i]))
        out[:] = np.pi * k


@dataclass
class ContactGroup:
    """The contact points on one frame: a flat foot (3 or more points, 6 constraint rows on the
    frame) or a point foot (3 rows); ``points`` index ContactPoints, ``rows`` the equality rows."""

    name: str
    frame: object
    points: list
    rows: slice
    flat: bool


class WholeBodyController:
    """The QP above for one plant (a single free body at the root, velocities v[0:6] = [w_WB; v_WB])
    and a fixed list of contact points; ``solve(q, v)`` fills ``vdot``, ``forces`` and ``tau``."""

    def __init__(self, plant, contacts: list[ContactPoint], *, mu: float = 0.6, f_min: float = 0.0,
                 f_max: float = _INF, effort_limits=None, weights: WholeBodyWeights | None = None,
                 ):
        nv = plant.num_velocities()
        floating = [j for j in plant._joints if j.type_name() == "quaternion_floating"]
        if len(floating) != 1 or floating[0].velocity_start() != 0:
            raise ValueError("WholeBodyController: the plant needs exactly one free (floating) joint, at "
                             "velocity 0; got " + (", ".join(j.name() for j in floating) or "none"))
        if plant.num_positions() != nv + 1:
            raise ValueError("WholeBodyController: every joint but the free one must have one degree of freedom")
        if not contacts:
            raise ValueError("WholeBodyController: at least one contact point is needed")
        if not mu > 0:
            raise ValueError(f"WholeBodyController: friction coefficient mu must be positive, got {mu}")
        self.plant, self.k = plant, plant.kernels()
        self.base_frame = floating[0].child_body().body_frame()
        self.w = weights or WholeBodyWeights()
        self.mu, self.f_min, self.f_max = float(mu), float(f_min), float(f_max)
        self.nv, self.na, self.nc = nv, nv - 6, len(contacts)
        self.frames = [c.frame for c in contacts]
        self.p_FC = np.ascontiguousarray([np.asarray(c.p_FC, float).reshape(3) for c in contacts])
        self.groups = self._group(contacts)
        lim = np.full(self.na, np.inf) if effort_limits is None else np.broadcast_to(
            np.asarray(effort_limits, float), (self.na,)).copy()
        if np.any(~(lim > 0)):
            raise ValueError("WholeBodyController: effort limits must be positive")
        self.effort_limits = np.minimum(lim, _INF)
        nc3 = 3 * self.nc
        self.n, self.n_eq, self.n_in = nv + nc3, 6 + self.groups[-1].rows.stop, 5 * self.nc + self.na
        # kinematics and dynamics (filled by the kernels)
        self.M = np.zeros((nv, nv))
        self.h = np.zeros(nv)
        self.Jc = np.zeros((nc3, nv))
        self.Jc_dot_v = np.zeros(nc3)
        self.J6, self.J6_dot_v = np.zeros((6, nv)), np.zeros(6)
        self.p_com, self.J_com, self.J_com_dot_v = np.zeros(3), np.zeros((3, nv)), np.zeros(3)
        self.X = np.zeros((4, 4))
        self._zero_v = np.zeros(nv)
        # the QP
        self.H, self.g = np.zeros((self.n, self.n)), np.zeros(self.n)
        self._diag = self.H.reshape(-1)[::self.n + 1]            # a view of H's diagonal
        m = self.n_eq + self.n_in                     # DAQP's rows: bl ≤ [A; C] x ≤ bu, equalities first
        self.AC, self.bl, self.bu = np.zeros((m, self.n)), np.zeros(m), np.zeros(m)
        self.sense = np.zeros(m, dtype=np.int32)
        self.A, self.b = self.AC[:self.n_eq], np.zeros(self.n_eq)
        self.C, self.l, self.u = self.AC[self.n_eq:], self.bl[self.n_eq:], self.bu[self.n_eq:]
        self._friction_rows()
        # targets (hold() sets them from a configuration; the first solve() holds its q)
        self.active = np.ones(len(self.groups), dtype=bool)
        self.com_target, self.com_velocity_target, self.com_acceleration_ff = None, np.zeros(3), np.zeros(3)
        self.R_WB_target, self.p_WB_target = None, None
        self.q_posture = None
        self.swing_targets = np.zeros((len(self.groups), 3))          # p_WFo (flat) or p_WC (point)
        self.swing_R_targets = np.zeros((len(self.groups), 3, 3))
        # the solution
        self.vdot, self.forces, self.tau = np.zeros(nv), np.zeros((self.nc, 3)), np.zeros(self.na)
        self._rot = np.zeros(3)
        self.qp = daqp.Model()
        self.x = np.zeros(self.n)
        self.status = 0                                         # DAQP's exit flag of the last solve
        self._initialized = False

    def _group(self, contacts) -> list[ContactGroup]:
        by_frame: dict = {}
        for i, c in enumerate(contacts):
            by_frame.setdefault(int(c.frame.index()), []).append(i)
        groups, row = [], 0
        for idx in by_frame.values():
            frame = contacts[idx[0]].frame
            if len(idx) >= 3:
                groups.append(ContactGroup(frame.name(), frame, idx, slice(row, row + 6), True))
                row += 6
            else:
                for i in idx:
                    groups.append(ContactGroup(frame.name(), frame, [i], slice(row, row + 3), False))
                    row += 3
        return groups

    def _friction_rows(self) -> None:
        """The constant pyramid rows of C: ±λ_t − μ λ_n ≤ 0 (four rows) and the normal bound row."""
        nv, mu = self.nv, self.mu
        for i in range(self.nc):
            r, c = 5 * i, nv + 3 * i
            for k, (t, s) in enumerate([(0, 1.0), (0, -1.0), (1, 1.0), (1, -1.0)]):
                self.C[r + k, c + t], self.C[r + k, c + 2] = s, -mu
                self.l[r + k], self.u[r + k] = -_INF, 0.0
            self.C[r + 4, c + 2] = 1.0

    def hold(self, q: np.ndarray) -> None:
        """Targets that hold configuration q: CoM, base pose, posture and every foot where it is."""
        self.k.center_of_mass(q, self._zero_v, self.p_com, self.J_com, self.J_com_dot_v)
        self.k.frame_pose(q, self.base_frame, self.X)
        self.com_target = self.p_com.copy()
        self.R_WB_target, self.p_WB_target = self.X[:3, :3].copy(), self.X[:3, 3].copy()
        self.q_posture = np.array(q, float)
        for gi, grp in enumerate(self.groups):
            self.k.frame_pose(q, grp.frame, self.X)
            self.swing_R_targets[gi] = self.X[:3, :3]
            p = self.p_FC[grp.points[0]] if not grp.flat else np.zeros(3)
            self.swing_targets[gi] = self.X[:3, :3] @ p + self.X[:3, 3]

    # ------------------------------------------------------------------------------------------
    def setup(self, q: np.ndarray, v: np.ndarray) -> None:
        """Fill H, g, A, b, C, l, u for the state (q, v) and the current targets and contact flags."""
        if self.q_posture is None:
            self.hold(q)
        k, w, nv, d = self.k, self.w, self.nv, self._diag
        k.mass_matrix(q, self.M)
        k.inverse_dynamics(q, v, self._zero_v, self.h)                 # h = C v − τ_g
        k.points_jacobian_bias(q, v, self.frames, self.p_FC, self.Jc, self.Jc_dot_v)
        H, g, A, b = self.H, self.g, self.A, self.b
        H.fill(0.0)
        g.fill(0.0)
        Hvv = H[:nv, :nv]
        if w.com > 0:
            k.center_of_mass(q, v, self.p_com, self.J_com, self.J_com_dot_v)
            a = (w.com_kp * (self.com_target - self.p_com) + w.com_kd * (self.com_velocity_target - self.J_com @ v)
                 + self.com_acceleration_ff - self.J_com_dot_v)
            Hvv += w.com * (self.J_com.T @ self.J_com)
            g[:nv] -= w.com * (self.J_com.T @ a)
        # base pose: v̇[0:3] = α_WB, v̇[3:6] = a_WBo for the free joint
        if w.base_orientation > 0 or w.base_position > 0:
            k.frame_pose(q, self.base_frame, self.X)
        if w.base_orientation > 0:
            _rotation_log(self.R_WB_target @ self.X[:3, :3].T, self._rot)
            d[:3] += w.base_orientation
            g[:3] -= w.base_orientation * (w.base_orientation_kp * self._rot - w.base_orientation_kd * v[:3])
        if w.base_position > 0:
            a = w.base_position_kp * (self.p_WB_target - self.X[:3, 3]) - w.base_position_kd * v[3:6]
            d[3:6] += w.base_position
            g[3:6] -= w.base_position * a
        # posture of the one-degree-of-freedom joints: q[7:] pairs with v[6:]
        if w.posture > 0:
            d[6:nv] += w.posture
            g[6:nv] -= w.posture * (w.posture_kp * (self.q_posture[7:] - q[7:]) - w.posture_kd * v[6:])
        # contacts (equality rows) and swing feet (tasks)
        A[6:].fill(0.0)
        b[6:] = 0.0
        self.sense[:6] = _EQUALITY
        for gi, grp in enumerate(self.groups):
            r = slice(6 + grp.rows.start, 6 + grp.rows.stop)
            if grp.flat:
                k.frame_jacobian_bias(q, v, grp.frame, self.J6, self.J6_dot_v)
                J, Jdv = self.J6, self.J6_dot_v
            else:
                i = grp.points[0]
                J, Jdv = self.Jc[3 * i:3 * i + 3], self.Jc_dot_v[3 * i:3 * i + 3]
            self.sense[r] = _EQUALITY if self.active[gi] else 0    # an inactive group's rows: free
            if self.active[gi]:
                A[r, :nv] = J
                b[r] = -Jdv
            elif w.swing > 0:
                k.frame_pose(q, grp.frame, self.X)
                if grp.flat:
                    p = self.X[:3, 3]
                    _rotation_log(self.swing_R_targets[gi] @ self.X[:3, :3].T, self._rot)
                    a_ang = w.swing_kp * self._rot - w.swing_kd * (J[:3] @ v) - Jdv[:3]
                    Hvv += w.swing * (J[:3].T @ J[:3])
                    g[:nv] -= w.swing * (J[:3].T @ a_ang)
                    J, Jdv = J[3:], Jdv[3:]
                else:
                    p = self.X[:3, :3] @ self.p_FC[grp.points[0]] + self.X[:3, 3]
                a = w.swing_kp * (self.swing_targets[gi] - p) - w.swing_kd * (J @ v) - Jdv
                Hvv += w.swing * (J.T @ J)
                g[:nv] -= w.swing * (J.T @ a)
            for i in grp.points:                                   # normal force bounds; 0 in the air
                self.l[5 * i + 4] = self.f_min if self.active[gi] else 0.0
                self.u[5 * i + 4] = self.f_max if self.active[gi] else 0.0
        d[:nv] += w.vdot_regularization
        d[nv:] += w.force_regularization
        # base equations of motion and torque limits
        A[:6, :nv] = self.M[:6]
        A[:6, nv:] = -self.Jc[:, :6].T
        b[:6] = -self.h[:6]
        rt = 5 * self.nc
        self.C[rt:, :nv] = self.M[6:]
        self.C[rt:, nv:] = -self.Jc[:, 6:].T
        self.l[rt:] = -self.effort_limits - self.h[6:]
        self.u[rt:] = self.effort_limits - self.h[6:]
        if w.torque > 0:                                   # τ = C_τ x + h_a
            Ct = self.C[rt:]
            H += w.torque * (Ct.T @ Ct)
            g += w.torque * (Ct.T @ self.h[6:])
        ne = self.n_eq
        self.bu[:ne] = b
        self.bl[:ne] = b
        inactive = self.sense[:ne] == 0
        self.bu[:ne][inactive] = _INF
        self.bl[:ne][inactive] = -_INF

    def solve(self, q: np.ndarray, v: np.ndarray) -> bool:
        """setup(q, v), solve hot-started, and fill vdot, forces and tau. False when the QP is not
        solved (infeasible, or out of iterations): the caller goes to its safe state."""
        self.setup(q, v)
        qp = self.qp
        if not self._initialized:
            qp.setup(self.H, self.g, self.AC, self.bu, self.bl, self.sense)
            self._initialized = True
        else:
            qp.update(H=self.H, f=self.g, A=self.AC, bupper=self.bu, blower=self.bl, sense=self.sense)
        x, _, self.status, _ = qp.solve()
        if self.status != 1:
            return False
        nv = self.nv
        self.x[:] = x
        self.vdot[:] = self.x[:nv]
        self.forces[:] = self.x[nv:].reshape(self.nc, 3)
        self.tau[:] = self.M[6:] @ self.vdot + self.h[6:] - self.Jc[:, 6:].T @ self.x[nv:]
        return True

    def eom_residual(self) -> np.ndarray:
        """M v̇ + h − Sᵀτ − Σ Jᵢᵀ λᵢ for the last solution (zero up to the solver's tolerance)."""
        r = self.M @ self.vdot + self.h - self.Jc.T @ self.forces.reshape(-1)
        r[6:] -= self.tau
        return r
