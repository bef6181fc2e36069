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
(points_jacobian_bias, center_of_mass, frame_jacobian_bias, mass_matrix, inverse_dynamics) and the
compiled products of planning._wbc_qp, in place (a tick allocates no array). The QP is solved by
DAQP (a dual active-set solver for small dense QPs) through its C functions in one workspace,
hot-started from the previous tick's active set (docs/wbc.md has the measurements behind that choice).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from planning._wbc_qp import Assembly, DaqpQP

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
    posture: float | list[float] = 1e-2   # one weight, or one per actuated joint (v[6:])
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


@dataclass
class ContactGroup:
    """The contact points on one frame: a flat foot (3 or more points, 6 constraint rows on the
    frame) or a point foot (3 rows); ``points`` index ContactPoints, ``rows`` the equality rows."""

    name: str
    frame: object
    points: list
    rows: slice
    flat: bool
    J: np.ndarray | None = None          # J_F (6, nv) of a flat foot, the point's rows (3 of 6) otherwise
    Jdot_v: np.ndarray | None = None
    X: np.ndarray | None = None          # the frame's pose X_WF (filled while the foot is in the air)


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
        self.limited = bool(np.any(self.effort_limits < _INF))   # without limits, no torque rows in the QP
        self.n, self.n_eq = nv + nc3, 6 + self.groups[-1].rows.stop
        self.n_in = 5 * self.nc + (self.na if self.limited else 0)
        # kinematics and dynamics (filled by the kernels)
        self.M = np.zeros((nv, nv))
        self.h = np.zeros(nv)
        self.Jc = np.zeros((nc3, nv))
        self.Jc_dot_v = np.zeros(nc3)
        self.p_com, self.J_com, self.J_com_dot_v = np.zeros(3), np.zeros((3, nv)), np.zeros(3)
        self.X = np.zeros((4, 4))
        self._zero_v = np.zeros(nv)
        # the QP
        self.H, self.g = np.zeros((self.n, self.n)), np.zeros(self.n)
        m = self.n_eq + self.n_in                     # DAQP's rows: bl ≤ [A; C] x ≤ bu, equalities first
        self.AC, self.bl, self.bu = np.zeros((m, self.n)), np.zeros(m), np.zeros(m)
        self.sense = np.zeros(m, dtype=np.int32)
        self.A, self.b = self.AC[:self.n_eq], np.zeros(self.n_eq)
        self.C, self.l, self.u = self.AC[self.n_eq:], self.bl[self.n_eq:], self.bu[self.n_eq:]
        self._friction_rows()
        rt = 5 * self.nc
        self._C_tau, self._h_a = np.zeros((self.na, self.n)), self.h[6:]      # τ = C_τ x + h_a
        self._C_rows, self._l_tau, self._u_tau = self.C[rt:], self.l[rt:], self.u[rt:]   # empty without limits
        pw = np.asarray(self.w.posture, float)
        if pw.ndim > 1 or (pw.ndim == 1 and pw.shape != (self.na,)) or np.any(~(pw >= 0)):
            raise ValueError(f"WholeBodyController: weights.posture must be one non-negative weight or "
                             f"{self.na} (one per actuated joint), got {self.w.posture!r}")
        self.posture_weights = np.broadcast_to(pw, (self.na,)).copy()   # per joint, v[6:]
        # the base tasks select v̇[0:3] and v̇[3:6]; zero vectors for unused task terms
        self._I_rot, self._I_pos = np.zeros((3, nv)), np.zeros((3, nv))
        self._I_rot[:, :3], self._I_pos[:, 3:6] = np.eye(3), np.eye(3)
        # targets (hold() sets them from a configuration; the first solve() holds its q); the
        # properties below copy into these arrays, which the compiled assembly holds
        ng = len(self.groups)
        self._held = False
        self.active = np.ones(ng, dtype=bool)
        self._com_target, self._com_velocity_target, self._com_acceleration_ff = np.zeros((3, 3))
        self._R_WB_target, self._p_WB_target = np.eye(3), np.zeros(3)
        self._q_posture = np.zeros(nv + 1)
        self.swing_targets = np.zeros((ng, 3))          # p_WFo (flat) or p_WC (point)
        self.swing_R_targets = np.zeros((ng, 3, 3))
        # the groups' Jacobians and poses
        self._J_grp, self._Jdot_v_grp, self._X_grp = np.zeros((ng, 6, nv)), np.zeros((ng, 6)), np.zeros((ng, 4, 4))
        for gi, grp in enumerate(self.groups):
            grp.J, grp.Jdot_v, grp.X = self._J_grp[gi], self._Jdot_v_grp[gi], self._X_grp[gi]
        # the solution
        self.vdot, self.forces, self.tau = np.zeros(nv), np.zeros((self.nc, 3)), np.zeros(self.na)
        self.x = np.zeros(self.n)
        self._x_v, self._x_f = self.x[:nv], self.x[nv:]
        self._forces_flat = self.forces.reshape(-1)
        self._q, self._v = np.zeros(nv + 1), np.zeros(nv)
        self._asm = Assembly(self)
        self.qp = DaqpQP(self.H, self.g, self.AC, self.bu, self.bl, self.sense, self.x)
        self.status = 0                                         # DAQP's exit flag of the last solve

    # targets, copied into the arrays the assembly reads
    com_target = property(lambda self: self._com_target if self._held else None,
                          lambda self, p: np.copyto(self._com_target, p))
    com_velocity_target = property(lambda self: self._com_velocity_target,
                                   lambda self, v: np.copyto(self._com_velocity_target, v))
    com_acceleration_ff = property(lambda self: self._com_acceleration_ff,
                                   lambda self, a: np.copyto(self._com_acceleration_ff, a))
    R_WB_target = property(lambda self: self._R_WB_target if self._held else None,
                           lambda self, R: np.copyto(self._R_WB_target, R))
    p_WB_target = property(lambda self: self._p_WB_target if self._held else None,
                           lambda self, p: np.copyto(self._p_WB_target, p))
    q_posture = property(lambda self: self._q_posture if self._held else None,
                         lambda self, q: np.copyto(self._q_posture, q))

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
        np.copyto(self._com_target, self.p_com)
        np.copyto(self._R_WB_target, self.X[:3, :3])
        np.copyto(self._p_WB_target, self.X[:3, 3])
        np.copyto(self._q_posture, q)
        for gi, grp in enumerate(self.groups):
            self.k.frame_pose(q, grp.frame, self.X)
            self.swing_R_targets[gi] = self.X[:3, :3]
            p = self.p_FC[grp.points[0]] if not grp.flat else np.zeros(3)
            self.swing_targets[gi] = self.X[:3, :3] @ p + self.X[:3, 3]
        self._held = True

    # ------------------------------------------------------------------------------------------
    def setup(self, q: np.ndarray, v: np.ndarray) -> None:
        """Fill H, g, A, b, C, l, u for the state (q, v) and the current targets and contact flags,
        in place: the kernels, then planning._wbc_qp.Assembly (no temporaries)."""
        if not self._held:
            self.hold(q)
        k, w = self.k, self.w
        k.mass_matrix(q, self.M)
        k.inverse_dynamics(q, v, self._zero_v, self.h)                 # h = C v − τ_g
        k.points_jacobian_bias(q, v, self.frames, self.p_FC, self.Jc, self.Jc_dot_v)
        if w.com > 0:
            k.center_of_mass(q, v, self.p_com, self.J_com, self.J_com_dot_v)
        if w.base_orientation > 0 or w.base_position > 0:
            k.frame_pose(q, self.base_frame, self.X)
        for gi, grp in enumerate(self.groups):
            if grp.flat:
                k.frame_jacobian_bias(q, v, grp.frame, grp.J, grp.Jdot_v)
            if not self.active[gi] and w.swing > 0:
                k.frame_pose(q, grp.frame, grp.X)
        np.copyto(self._q, q)
        np.copyto(self._v, v)
        self._asm.fill(self.f_min, self.f_max)

    def solve(self, q: np.ndarray, v: np.ndarray) -> bool:
        """setup(q, v), solve hot-started, and fill vdot, forces and tau. False when the QP is not
        solved (infeasible, or out of iterations): the caller goes to its safe state."""
        self.setup(q, v)
        self.status = self.qp.solve()
        if self.status != 1:
            return False
        np.copyto(self.vdot, self._x_v)
        np.copyto(self._forces_flat, self._x_f)
        self._asm.torques()
        return True

    def eom_residual(self) -> np.ndarray:
        """M v̇ + h − Sᵀτ − Σ Jᵢᵀ λᵢ for the last solution (zero up to the solver's tolerance)."""
        r = self.M @ self.vdot + self.h - self.Jc.T @ self.forces.reshape(-1)
        r[6:] -= self.tau
        return r
