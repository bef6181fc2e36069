"""Whole-body inverse dynamics of a floating-base robot on rigid contacts, as one QP per tick.

Decision variables x = [v̇ (nv); λ], λ the contact forces: per point foot C the force f_C in W (3),
per flat foot F the wrench [τ; f] (6) at the centre S of its sole, in F's axes (a rectangle of
half-sides X along F's x, Y along F's y, normal F's z). With h(q, v) = C(q, v) v − τ_g(q), J_λ the
stacked Jacobians the contact forces act through (Jv_WC for a point, [R_WFᵀ J_ω; R_WFᵀ Jv_WS] for
a sole) and u / a the base's six and the actuated rows of M v̇ + h = Sᵀτ + J_λᵀ λ:

    minimise    ½ Σₖ wₖ ‖Aₖ x − bₖ‖² + ½ w_τ ‖τ‖² + ½ ε_a ‖v̇‖² + ½ ε_f ‖f‖² + ½ ε_m ‖τ_S‖²   (tasks)
    subject to  M_u v̇ − J_λ,uᵀ λ = −h_u                                     (base EoM, 6 rows)
                Jᵢ v̇ = −J̇ᵢ v        for a point Cᵢ in contact              (rigid contact, 3 rows)
                J_F v̇ = −J̇_F v      for a flat foot F in contact          (6 rows: α_WF = 0, a_WFo = 0)
                λ_g = 0             for a foot g not in contact
                (cos φₖ t̂₁ + sin φₖ t̂₂)·f ≤ μ cos(π/N) n̂·f, φₖ = 2πk/N  (a point: the friction cone's
                f_min ≤ n̂·f ≤ f_max                                       inscribed N-sided pyramid)
                |τ_x| ≤ Y f_z, |τ_y| ≤ X f_z, τ_min(f, τ) ≤ τ_z ≤ τ_max(f, τ)  (a sole: its contact wrench cone)
                τ_min − h_a ≤ M_a v̇ − J_λ,aᵀ λ ≤ τ_max − h_a              (torque limits)

and then τ = M_a v̇ + h_a − J_λ,aᵀ λ. A point foot's pyramid is in its contact frame C (n̂ the
ground's normal, t̂₁ W's x projected on the ground, t̂₂ = n̂ × t̂₁): its N faces touch the cone
‖f_t‖ ≤ μ f_n along their bisectors, so no force it admits exceeds μ f_n (N = 4: the inner
pyramid). The sole's rows are the linearised contact wrench cone of a rectangle (Caron, Pham and
Nakamura, RSS 2015): the wrenches that four corner forces in their inner friction pyramids
(|f_x|, |f_y| ≤ μ f_z/√2 in F's axes) can make (the CoP inside the sole and the yaw torque
bound, 16 rows), so the sole's net force stays in its cone too. The torque limits are the
model's (its actuators' effort limits), tightened by ``effort_limits``. The tasks are accelerations of a PD law
with feed-forward: CoM (J_com v̇ = a* − J̇_com v), base orientation (the free joint's v̇[0:3] = α_WB),
base position (v̇[3:6] = a_WBo), posture of the actuated joints and swing feet (J v̇ = a* − J̇ v).

Each tick the compiled kernels fill M, h and the Jacobians, dynamics_cy.planning._wbc_qp.Assembly fills the QP
in place, and dynamics_cy.planning._wbc_reduce.Reduction eliminates its equality rows (a nullspace basis by
Gauss–Jordan elimination: n − m_eq = nv − 6 free variables whatever the contacts), so DAQP (a dual
active-set solver for small dense QPs, through its C functions, hot-started from the previous
tick's active set) solves an inequality-only QP over nv − 6 variables; docs/wbc.md has the
measurements behind those choices. A tick allocates no array.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynamics_cy.planning._wbc_qp import Assembly, DaqpQP
from dynamics_cy.planning._wbc_reduce import Reduction

_INF = 1e30                 # DAQP's infinity: a bound this large is no bound
DEGENERATE = -100           # status: the contact constraints are linearly dependent (no reduction)
NOT_CONVEX = -101           # status: the reduced Hessian is not positive definite


def qp_status_text(status: int) -> str:
    """What a WholeBodyController.status says, for a fault message."""
    if status == DEGENERATE:
        return "the contact constraints are linearly dependent"
    if status == NOT_CONVEX:
        return "the reduced Hessian is not positive definite"
    return f"DAQP exit flag {status}"


@dataclass
class WholeBodyWeights:
    """Task weights w and PD gains (kp, kd) of the desired accelerations, the weight of ‖τ‖²
    (``torque``: the minimum-torque force distribution) and the regularisation of v̇, of the contact
    forces and of a sole's moments."""

    com: float = 1.0                      # the centre of mass's task weight
    com_kp: float = 100.0                 # 1/s²: its desired acceleration's stiffness
    com_kd: float = 20.0                  # 1/s: and damping
    base_orientation: float = 1.0         # the base's orientation task weight
    base_orientation_kp: float = 100.0    # 1/s²
    base_orientation_kd: float = 20.0     # 1/s
    base_position: float = 0.0            # the base's position task weight (0: the CoM task places it)
    base_position_kp: float = 100.0       # 1/s²
    base_position_kd: float = 20.0        # 1/s
    posture: float | list[float] = 1e-2   # one weight, or one per actuated joint (v[6:])
    posture_kp: float = 100.0             # 1/s²: toward the standing pose
    posture_kd: float = 20.0              # 1/s
    swing: float = 1.0                    # a foot out of contact: its task weight
    swing_kp: float = 400.0               # 1/s²
    swing_kd: float = 40.0                # 1/s
    torque: float = 0.0                   # the weight of ‖τ‖² (> 0: the minimum-torque force distribution)
    vdot_regularization: float = 1e-6     # of ‖v̇‖²
    force_regularization: float = 1e-6    # of the contact forces' ‖λ‖²
    moment_regularization: float = 1e-4   # a sole's moments: keeps its CoP off the edges (docs/wbc.md)


@dataclass
class ContactPoint:
    """A point C fixed in a frame F (p_FC in F) that may touch the flat ground z = const."""

    frame: object
    p_FC: np.ndarray = field(default_factory=lambda: np.zeros(3))


@dataclass
class ContactSurface:
    """A flat rectangular sole on frame F: centre S at p_FS (in F), ``length`` along F's x and
    ``width`` along F's y, its normal F's z (pointing out of the ground when the foot stands)."""

    frame: object
    p_FS: np.ndarray = field(default_factory=lambda: np.zeros(3))
    length: float = 0.0
    width: float = 0.0


@dataclass
class ContactGroup:
    """One foot: a point (3 force variables in W) or a sole (6: the wrench [τ; f] at S in F's axes).
    ``var`` is its first variable in x (also its first row of the equalities, after v̇'s nv),
    ``ineq`` its first inequality row; ``lam`` views its part of the solution."""

    name: str
    frame: object
    flat: bool
    var: int
    ineq: int
    p: np.ndarray                          # p_FC (point) or p_FS (sole) in F
    half_length: float = 0.0
    half_width: float = 0.0
    n_ineq: int = 0                        # its inequality rows (the last bounds the normal force)
    lam: np.ndarray | None = None
    J: np.ndarray | None = None            # J_F (6, nv) of a sole, the point's rows (3 of 6) otherwise
    Jdot_v: np.ndarray | None = None
    X: np.ndarray | None = None            # the frame's pose X_WF

    @property
    def size(self) -> int:
        return 6 if self.flat else 3


def _surface_from_points(frame, points: list) -> ContactSurface:
    """The sole whose corners are four contact points on one frame (an axis-aligned rectangle of F)."""
    p = np.array(points)
    xs, ys = np.unique(np.round(p[:, 0], 12)), np.unique(np.round(p[:, 1], 12))
    corners = {(x, y) for x in xs for y in ys}
    if (len(p) != 4 or len(xs) != 2 or len(ys) != 2 or np.ptp(p[:, 2]) > 1e-12
            or {(round(x, 12), round(y, 12)) for x, y in p[:, :2]} != corners):
        raise ValueError(f"WholeBodyController: {len(p)} contact points on frame {frame.name()}: three or more "
                         f"points on one frame must be the 4 corners of a rectangle in its x-y plane "
                         f"(or give a ContactSurface)")
    return ContactSurface(frame, np.array([xs.mean(), ys.mean(), p[0, 2]]), float(np.ptp(xs)), float(np.ptp(ys)))


class WholeBodyController:
    """The QP above for one plant (a single free body at the root, velocities v[0:6] = [w_WB; v_WB])
    and a fixed list of contacts; ``solve(q, v)`` fills ``vdot``, ``lam`` and ``tau``.

    ``contacts``: ContactPoint and ContactSurface; four ContactPoints on one frame at the corners
    of a rectangle are that rectangle's sole, one or two on a frame are point feet.
    ``friction_facets``: N, the faces of a point foot's pyramid inscribed in its friction cone
    (at least 3; 4 is the inner pyramid); ``ground_normal``: n̂ in W (the ground is flat).
    ``effort_limits``: one limit or one per actuated joint (N·m), which can only tighten the
    model's (each joint's actuator's effort limit; a joint without one: none)."""

    def __init__(self, plant, contacts: list, *, mu: float = 0.6, f_min: float = 0.0,
                 f_max: float = _INF, effort_limits=None, weights: WholeBodyWeights | None = None,
                 friction_facets: int = 8, ground_normal=(0.0, 0.0, 1.0)):
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
        if int(friction_facets) != friction_facets or friction_facets < 3:
            raise ValueError(f"WholeBodyController: friction_facets must be a whole number of at least 3, "
                             f"got {friction_facets}")
        n_hat = np.asarray(ground_normal, float).reshape(-1)
        if n_hat.shape != (3,) or not np.linalg.norm(n_hat) > 0 or not np.all(np.isfinite(n_hat)):
            raise ValueError(f"WholeBodyController: ground_normal must be a non-zero 3-vector, got {ground_normal!r}")
        self.plant, self.k = plant, plant.kernels()
        self.base_frame = floating[0].child_body().body_frame()
        self.w = weights or WholeBodyWeights()
        self.mu, self.f_min, self.f_max = float(mu), float(f_min), float(f_max)
        self.facets = int(friction_facets)
        self.R_WC = _contact_frame(n_hat / np.linalg.norm(n_hat))    # a point foot's contact frame: [t̂₁ t̂₂ n̂]
        self.nv, self.na = nv, nv - 6
        self.groups = self._group(contacts)
        ng = len(self.groups)
        self.n_lam = sum(g.size for g in self.groups)
        points = [g for g in self.groups if not g.flat]
        self.point_frames = [g.frame for g in points]
        self.p_FC = np.ascontiguousarray([g.p for g in points]).reshape(-1, 3)
        self.model_effort_limits = model_effort_limits(plant)
        lim = self.model_effort_limits.copy()
        if effort_limits is not None:
            given = np.asarray(effort_limits, float)
            if given.ndim > 1 or (given.ndim == 1 and given.shape != (self.na,)) or np.any(~(given > 0)):
                raise ValueError(f"WholeBodyController: effort_limits must be one positive limit or {self.na} "
                                 f"(one per actuated joint), got {effort_limits!r}")
            np.minimum(lim, given, out=lim)
        self.effort_limits = np.minimum(lim, _INF)
        self.limited = bool(np.any(self.effort_limits < _INF))   # without limits, no torque rows in the QP
        n_fric = sum(g.n_ineq for g in self.groups)
        self.n, self.n_eq = nv + self.n_lam, 6 + self.n_lam
        self.n_in = n_fric + (self.na if self.limited else 0)
        # kinematics and dynamics (filled by the kernels)
        self.M = np.zeros((nv, nv))
        self.h = np.zeros(nv)
        self.Jc = np.zeros((3 * len(points), nv))          # the point feet's Jv_WC and J̇ v
        self.Jc_dot_v = np.zeros(3 * len(points))
        self.J_lam = np.zeros((self.n_lam, nv))            # generalized force of λ: J_λᵀ λ
        self.p_com, self.J_com, self.J_com_dot_v = np.zeros(3), np.zeros((3, nv)), np.zeros(3)
        self.X = np.zeros((4, 4))
        self._zero_v = np.zeros(nv)
        # the full QP: min ½ xᵀHx + gᵀx, A x = b (the groups' rows, then the base EoM), l ≤ C x ≤ u
        self.H, self.g = np.zeros((self.n, self.n)), np.zeros(self.n)
        self.A, self.b = np.zeros((self.n_eq, self.n)), np.zeros(self.n_eq)
        self.C, self.l, self.u = np.zeros((self.n_in, self.n)), np.zeros(self.n_in), np.zeros(self.n_in)
        self._l_contact, self._u_contact = np.zeros(n_fric), np.zeros(n_fric)   # the rows' bounds in contact
        self._friction_rows()
        self._C_tau, self._h_a = np.zeros((self.na, self.n)), self.h[6:]      # τ = C_τ x + h_a
        self._C_rows, self._l_tau, self._u_tau = self.C[n_fric:], self.l[n_fric:], self.u[n_fric:]
        # the reduced QP: nv − 6 variables z, x = x_p + Z z; DAQP solves it as the least-distance
        # problem min ½‖y‖² + fᵀy, l_r ≤ M y ≤ u_r (y = R z, H_r = RᵀR)
        nr, m = self.n - self.n_eq, self.n_in
        self.H_r, self.g_r, self.z = np.zeros((nr, nr)), np.zeros(nr), np.zeros(nr)
        self.C_r, self.l_r, self.u_r = np.zeros((m, nr)), np.zeros(m), np.zeros(m)
        self._M_ldp, self._f_ldp, self._y = np.zeros((m, nr)), np.zeros(nr), np.zeros(nr)
        self._sense, self._identity = np.zeros(m, dtype=np.int32), np.eye(nr)
        pw = np.asarray(self.w.posture, float)
        if pw.ndim > 1 or (pw.ndim == 1 and pw.shape != (self.na,)) or np.any(~(pw >= 0)):
            raise ValueError(f"WholeBodyController: weights.posture must be one non-negative weight or "
                             f"{self.na} (one per actuated joint), got {self.w.posture!r}")
        self.posture_weights = np.broadcast_to(pw, (self.na,)).copy()   # per joint, v[6:]
        # the base tasks select v̇[0:3] and v̇[3:6]
        self._I_rot, self._I_pos = np.zeros((3, nv)), np.zeros((3, nv))
        self._I_rot[:, :3], self._I_pos[:, 3:6] = np.eye(3), np.eye(3)
        # targets (hold() sets them from a configuration; the first solve() holds its q); the
        # properties below copy into these arrays, which the compiled assembly holds
        self._held = False
        self.active = np.ones(ng, dtype=bool)
        self._com_target, self._com_velocity_target, self._com_acceleration_ff = np.zeros((3, 3))
        self._R_WB_target, self._p_WB_target = np.eye(3), np.zeros(3)
        self._q_posture = np.zeros(nv + 1)
        self.swing_targets = np.zeros((ng, 3))          # p_WFo (sole) or p_WC (point)
        self.swing_R_targets = np.zeros((ng, 3, 3))
        # the groups' Jacobians and poses
        self._J_grp, self._Jdot_v_grp, self._X_grp = np.zeros((ng, 6, nv)), np.zeros((ng, 6)), np.zeros((ng, 4, 4))
        # the solution
        self.vdot, self.lam, self.tau = np.zeros(nv), np.zeros(self.n_lam), np.zeros(self.na)
        self.N_lam = np.zeros((ng, self.n_lam))          # row gi · lam: foot gi's normal force
        for gi, grp in enumerate(self.groups):
            if grp.flat:
                self.N_lam[gi, grp.var - nv + 5] = 1.0
            else:
                self.N_lam[gi, grp.var - nv:grp.var - nv + 3] = self.R_WC[:, 2]
        self.x = np.zeros(self.n)
        self._x_v, self._x_f = self.x[:nv], self.x[nv:]
        for gi, grp in enumerate(self.groups):
            grp.J, grp.Jdot_v, grp.X = self._J_grp[gi], self._Jdot_v_grp[gi], self._X_grp[gi]
            grp.lam = self.lam[grp.var - nv:grp.var - nv + grp.size]
        self._q, self._v = np.zeros(nv + 1), np.zeros(nv)
        self._asm = Assembly(self)
        self._red = Reduction(self.H, self.g, self.A, self.b, self.C, self.l, self.u, self.H_r, self.g_r,
                              self.C_r, self.l_r, self.u_r, self._M_ldp, self._f_ldp, self._y, self.z, self.x, nv)
        self.qp = DaqpQP(self._identity, self._f_ldp, self._M_ldp, self.u_r, self.l_r, self._sense, self._y)
        self.status = 0      # DAQP's exit flag of the last solve, or DEGENERATE / NOT_CONVEX (no reduction)

    # targets: set by copying into the arrays the assembly reads; read as copies (a saved target does
    # not move with the controller's)
    com_target = property(lambda self: self._com_target.copy() if self._held else None,
                          lambda self, p: np.copyto(self._com_target, p))
    com_velocity_target = property(lambda self: self._com_velocity_target.copy(),
                                   lambda self, v: np.copyto(self._com_velocity_target, v))
    com_acceleration_ff = property(lambda self: self._com_acceleration_ff.copy(),
                                   lambda self, a: np.copyto(self._com_acceleration_ff, a))
    R_WB_target = property(lambda self: self._R_WB_target.copy() if self._held else None,
                           lambda self, R: np.copyto(self._R_WB_target, R))
    p_WB_target = property(lambda self: self._p_WB_target.copy() if self._held else None,
                           lambda self, p: np.copyto(self._p_WB_target, p))
    q_posture = property(lambda self: self._q_posture.copy() if self._held else None,
                         lambda self, q: np.copyto(self._q_posture, q))

    def _group(self, contacts) -> list[ContactGroup]:
        by_frame: dict = {}
        for c in contacts:
            by_frame.setdefault(int(c.frame.index()), []).append(c)
        groups, var, ineq = [], self.nv, 0
        for cs in by_frame.values():
            frame = cs[0].frame
            surfaces = [c for c in cs if isinstance(c, ContactSurface)]
            if surfaces and len(cs) > 1:
                raise ValueError(f"WholeBodyController: frame {frame.name()} has a ContactSurface and other "
                                 f"contacts; give one surface per frame")
            if len(cs) >= 3:
                surfaces = [_surface_from_points(frame, [np.asarray(c.p_FC, float).reshape(3) for c in cs])]
            for s in surfaces:
                if not (s.length > 0 and s.width > 0):
                    raise ValueError(f"WholeBodyController: the sole on frame {frame.name()} needs a positive "
                                     f"length and width, got {s.length} x {s.width}")
                groups.append(ContactGroup(frame.name(), frame, True, var, ineq,
                                           np.asarray(s.p_FS, float).reshape(3).copy(), s.length / 2, s.width / 2,
                                           n_ineq=17))
                var, ineq = var + 6, ineq + 17
            if not surfaces:
                for c in cs:
                    groups.append(ContactGroup(frame.name(), frame, False, var, ineq,
                                               np.asarray(c.p_FC, float).reshape(3).copy(), n_ineq=self.facets + 1))
                    var, ineq = var + 3, ineq + self.facets + 1
        return groups

    def _friction_rows(self) -> None:
        """The constant rows of C for a foot in contact (bounds in _l_contact, _u_contact): a point's
        inscribed pyramid (cos φₖ t̂₁ + sin φₖ t̂₂ − μ cos(π/N) n̂)·f ≤ 0 and f_min ≤ n̂·f ≤ f_max; a
        sole's wrench cone with the corners' inner pyramids (μ/√2 per axis)."""
        t1, t2, n_hat = self.R_WC.T
        for grp in self.groups:
            r, c = grp.ineq, grp.var
            rows = []
            if not grp.flat:
                mu = self.mu * np.cos(np.pi / self.facets)
                for k in range(self.facets):
                    phi = 2 * np.pi * k / self.facets
                    a = np.cos(phi) * t1 + np.sin(phi) * t2 - mu * n_hat
                    rows.append({c + i: a[i] for i in range(3)})
            else:
                mu = self.mu / np.sqrt(2.0)
                tx, ty, tz, fx, fy, fz = range(c, c + 6)
                X, Y = grp.half_length, grp.half_width
                rows = ([{fx: s, fz: -mu} for s in (1.0, -1.0)] + [{fy: s, fz: -mu} for s in (1.0, -1.0)]
                        + [{tx: s, fz: -Y} for s in (1.0, -1.0)] + [{ty: s, fz: -X} for s in (1.0, -1.0)])
                for sz in (1.0, -1.0):      # τ_z ≤ μ(X+Y) f_z − |Y f_x + μ τ_x| − |X f_y + μ τ_y|, and τ_min
                    for s1 in (1.0, -1.0):
                        for s2 in (1.0, -1.0):
                            rows.append({tz: sz, fx: s1 * Y, tx: s1 * sz * mu, fy: s2 * X, ty: s2 * sz * mu,
                                         fz: -mu * (X + Y)})
            for k, row in enumerate(rows):
                for col, val in row.items():
                    self.C[r + k, col] = val
                self._l_contact[r + k], self._u_contact[r + k] = -_INF, 0.0
            r_n = r + len(rows)                       # the normal force's bounds
            if grp.flat:
                self.C[r_n, c + 5] = 1.0
            else:
                self.C[r_n, c:c + 3] = n_hat
            self._l_contact[r_n], self._u_contact[r_n] = self.f_min, self.f_max

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
            p = grp.p if not grp.flat else np.zeros(3)
            self.swing_targets[gi] = self.X[:3, :3] @ p + self.X[:3, 3]
        self._held = True

    # ------------------------------------------------------------------------------------------
    def setup(self, q: np.ndarray, v: np.ndarray) -> None:
        """Fill H, g, A, b, C, l, u for the state (q, v) and the current targets and contact flags,
        in place: the kernels, then dynamics_cy.planning._wbc_qp.Assembly (no temporaries)."""
        if not self._held:
            self.hold(q)
        k, w = self.k, self.w
        k.mass_matrix(q, self.M)
        k.inverse_dynamics(q, v, self._zero_v, self.h)                 # h = C v − τ_g
        if self.point_frames:
            k.points_jacobian_bias(q, v, self.point_frames, self.p_FC, self.Jc, self.Jc_dot_v)
        if w.com > 0:
            k.center_of_mass(q, v, self.p_com, self.J_com, self.J_com_dot_v)
        if w.base_orientation > 0 or w.base_position > 0:
            k.frame_pose(q, self.base_frame, self.X)
        self._asm.feet(q, v, w.swing > 0)
        np.copyto(self._q, q)
        np.copyto(self._v, v)
        self._asm.fill(self.f_min, self.f_max)

    def solve(self, q: np.ndarray, v: np.ndarray) -> bool:
        """setup(q, v), eliminate the equalities, solve hot-started, and fill vdot, lam and tau.
        False when the QP is not solved (degenerate contacts, infeasible, or out of iterations):
        the caller goes to its safe state."""
        self.setup(q, v)
        flag = self._red.reduce()
        if flag != 0:
            self.status = DEGENERATE if flag == -1 else NOT_CONVEX
            return False
        self.status = self.qp.solve()
        if self.status != 1:
            return False
        self._red.expand()
        np.copyto(self.vdot, self._x_v)
        np.copyto(self.lam, self._x_f)
        self._asm.torques()
        return True

    def eom_residual(self) -> np.ndarray:
        """M v̇ + h − Sᵀτ − J_λᵀ λ for the last solution (zero up to round-off)."""
        r = self.M @ self.vdot + self.h - self.J_lam.T @ self.lam
        r[6:] -= self.tau
        return r

    def friction_excess(self) -> float:
        """max over the feet in contact of ‖f_t‖ − μ f_n (N) in the last solution (a point's f in its
        contact frame, a sole's net force in F): ≤ 0 (up to the solver's tolerance) when no foot is
        asked for more tangential force than μ f_n."""
        worst = -np.inf
        for gi, grp in enumerate(self.groups):
            if self.active[gi]:
                f = grp.lam[3:] if grp.flat else self.R_WC.T @ grp.lam      # [f_t; f_n]
                worst = max(worst, float(np.hypot(f[0], f[1]) - self.mu * f[2]))
        return worst

    def normal_forces(self, out: np.ndarray) -> np.ndarray:
        """Each foot's normal force in the last solution (N) into `out` (one per group): a point's
        n̂·f, a sole's f_z. Allocates nothing."""
        return np.dot(self.N_lam, self.lam, out=out)

    def force_W(self, gi: int) -> np.ndarray:
        """The force of foot gi on the robot in W (a sole's f rotated by R_WF of the last setup)."""
        grp = self.groups[gi]
        return grp.X[:3, :3] @ grp.lam[3:] if grp.flat else grp.lam.copy()


def model_effort_limits(plant) -> np.ndarray:
    """Each actuated joint's (v[6:]) effort limit from the plant's actuators; inf without one."""
    nv = plant.num_velocities()
    limits = np.full(nv - 6, np.inf)
    for i in plant.GetJointActuatorIndices():
        a = plant.get_joint_actuator(i)
        if a.joint().velocity_start() >= 6:
            limits[a.joint().velocity_start() - 6] = a.effort_limit()
    return limits


def _contact_frame(n_hat: np.ndarray) -> np.ndarray:
    """R_WC = [t̂₁ t̂₂ n̂]: t̂₁ W's x projected on the plane normal to n̂ (W's y if n̂ is along x)."""
    axis = np.array([1.0, 0.0, 0.0]) if abs(n_hat[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = axis - (axis @ n_hat) * n_hat
    t1 /= np.linalg.norm(t1)
    return np.column_stack([t1, np.cross(n_hat, t1), n_hat])
