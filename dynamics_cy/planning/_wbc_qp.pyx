# cython: language_level=3
"""The whole-body QP's assembly products and DAQP's C solver, without temporaries (nogil).

Hand-written because the tick must allocate nothing: numpy's products make a temporary each, and
DAQP's Python ``Model`` converts and copies its arrays on every ``update``/``solve`` (about 30 µs).
``DaqpQP`` calls DAQP's C functions (``setup_daqp_main``, ``daqp_update_ldp``, ``daqp_solve``) in the
installed ``daqp`` extension, found by name with ctypes once; the structures below are DAQP's
``DAQPProblem`` and ``DAQPResult`` as its types.h and api.h define them (0.9–0.11). The workspace
stays opaque (DAQP fills it), so its layout is not assumed.
"""
import ctypes

import daqp
import numpy as np
from libc.math cimport atan2, sqrt
from libc.stdint cimport uintptr_t
from libc.stdlib cimport calloc, free

cdef extern from *:
    """
    typedef struct { int n; int m; int ms; double *H; double *f; double *A; double *bupper;
                     double *blower; int *sense; int *break_points; int nh; int problem_type; } WbcDaqpProblem;
    typedef struct { double *x; double *lam; double fval; double soft_slack; int exitflag; int iter;
                     int nodes; double solve_time; double setup_time; } WbcDaqpResult;
    """
    ctypedef struct WbcDaqpProblem:
        int n, m, ms
        double *H
        double *f
        double *A
        double *bupper
        double *blower
        int *sense
        int *break_points
        int nh, problem_type
    ctypedef struct WbcDaqpResult:
        double *x
        double *lam
        double fval, soft_slack
        int exitflag, iter, nodes
        double solve_time, setup_time

ctypedef int (*setup_fn)(WbcDaqpProblem *, void *, double *, int) noexcept nogil
ctypedef int (*update_fn)(int, void *, WbcDaqpProblem *) noexcept nogil
ctypedef void (*solve_fn)(WbcDaqpResult *, void *) noexcept nogil
ctypedef void (*work_fn)(void *) noexcept nogil

# DAQP's update masks (constants.h): Rinv (H), M (A), v (f), d (bounds), sense
cdef int UPDATE_ALL = 1 | 2 | 4 | 8 | 16 | 128
cdef size_t WORKSPACE_BYTES = 1 << 16     # more than DAQP's DAQPWorkspace: its layout is not assumed

cdef uintptr_t _address(lib, str name) except 0:
    return <uintptr_t> ctypes.cast(getattr(lib, name), ctypes.c_void_p).value


cdef class DaqpQP:
    """bl ≤ AC x ≤ bu (rows with sense 5 are equalities), minimise ½ xᵀ H x + gᵀ x, on the caller's
    arrays (kept, filled in place between solves); ``solve()`` writes the solution into ``x`` and
    returns DAQP's exit flag (1: optimal). The first solve sets the workspace up, later ones update
    it and start from the previous active set."""

    cdef WbcDaqpProblem qp
    cdef WbcDaqpResult res
    cdef void *work
    cdef setup_fn setup
    cdef update_fn update
    cdef solve_fn c_solve
    cdef work_fn free_work, free_ldp, alloc_settings
    cdef bint ready
    cdef object arrays
    cdef double[::1] lam

    def __cinit__(self):
        self.work = calloc(1, WORKSPACE_BYTES)
        if self.work == NULL:
            raise MemoryError("DaqpQP: no memory for DAQP's workspace")

    def __init__(self, double[:, ::1] H, double[::1] g, double[:, ::1] AC, double[::1] bu,
                 double[::1] bl, int[::1] sense, double[::1] x):
        n, m = H.shape[0], AC.shape[0]
        if H.shape[1] != n or g.shape[0] != n or AC.shape[1] != n or x.shape[0] != n or not (
                bu.shape[0] == bl.shape[0] == sense.shape[0] == m):
            raise ValueError("DaqpQP: H (n, n), g (n), AC (m, n), bu, bl, sense (m) and x (n) disagree")
        lib = ctypes.CDLL(daqp.__file__)
        self.setup = <setup_fn> _address(lib, "setup_daqp_main")
        self.update = <update_fn> _address(lib, "daqp_update_ldp")
        self.c_solve = <solve_fn> _address(lib, "daqp_solve")
        self.free_work = <work_fn> _address(lib, "free_daqp_workspace")
        self.free_ldp = <work_fn> _address(lib, "free_daqp_ldp")
        self.alloc_settings = <work_fn> _address(lib, "allocate_daqp_settings")
        self.alloc_settings(self.work)
        self.lam = np.zeros(m)
        self.arrays = (H, g, AC, bu, bl, sense, x, lib)          # keep the buffers alive
        self.qp.n, self.qp.m, self.qp.ms = n, m, 0
        self.qp.H, self.qp.f, self.qp.A = &H[0, 0], &g[0], &AC[0, 0]
        self.qp.bupper, self.qp.blower, self.qp.sense = &bu[0], &bl[0], &sense[0]
        self.qp.break_points, self.qp.nh, self.qp.problem_type = NULL, 0, 0
        self.res.x, self.res.lam = &x[0], &self.lam[0]

    def solve(self):
        cdef double t = 0.0
        cdef int flag
        with nogil:
            if not self.ready:
                flag = self.setup(&self.qp, self.work, &t, 0)
                self.ready = flag >= 0
                if not self.ready:      # a failed setup frees the settings: the next one needs them
                    self.alloc_settings(self.work)
            else:
                flag = self.update(UPDATE_ALL, self.work, &self.qp)
            if flag >= 0:
                self.c_solve(&self.res, self.work)
                flag = self.res.exitflag
        return flag

    def __dealloc__(self):
        if self.work != NULL:
            if self.ready:
                self.free_work(self.work)
                self.free_ldp(self.work)
            free(self.work)
            self.work = NULL


cdef void _task(double[:, ::1] H, double[::1] g, double[:, ::1] J, double[::1] Jdot_v, double[::1] v,
                double[::1] target, double[::1] p, double[::1] v_target, double[::1] a_ff,
                double kp, double kd, double w) noexcept nogil:
    """The task J v̇ = a* − J̇ v (at most 6 rows) with a* = kp (target − p) + kd (v_target − J v) + a_ff,
    weight w: H[:nv, :nv] += w JᵀJ, g[:nv] −= w Jᵀ (a* − J̇ v); columns J does not touch are skipped."""
    cdef Py_ssize_t r = J.shape[0], nv = J.shape[1], i, j, k
    cdef double a[6]
    cdef double s, f
    for i in range(r):
        s = 0.0
        for j in range(nv):
            s = s + J[i, j] * v[j]
        a[i] = kp * (target[i] - p[i]) + kd * (v_target[i] - s) + a_ff[i] - Jdot_v[i]
    for j in range(nv):
        s = 0.0
        f = 0.0
        for i in range(r):
            s = s + J[i, j] * a[i]
            f = f + J[i, j] * J[i, j]
        if f == 0.0:
            continue
        g[j] -= w * s
        for k in range(nv):
            s = 0.0
            for i in range(r):
                s = s + J[i, j] * J[i, k]
            H[j, k] += w * s


cdef void _rotation_log(double[:, ::1] R_target, double[:, ::1] X, double[::1] out) noexcept nogil:
    """out = log(R* Rᵀ) as a rotation vector θ k̂ (0 ≤ θ ≤ π), R = X[:3, :3]: sin θ k̂ is the skew
    part of E = R* Rᵀ, cos θ = (tr E − 1)/2; at θ = π (no skew part) k̂ comes from E + I = 2 k̂ k̂ᵀ."""
    cdef double E[3][3]
    cdef double s0, s1, s2, c, sn, f
    cdef int i, j, k
    for i in range(3):
        for j in range(3):
            E[i][j] = R_target[i, 0] * X[j, 0] + R_target[i, 1] * X[j, 1] + R_target[i, 2] * X[j, 2]
    s0, s1, s2 = 0.5 * (E[2][1] - E[1][2]), 0.5 * (E[0][2] - E[2][0]), 0.5 * (E[1][0] - E[0][1])
    c = 0.5 * (E[0][0] + E[1][1] + E[2][2] - 1.0)
    sn = sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    if sn > 1e-12:
        f = atan2(sn, c) / sn
        out[0], out[1], out[2] = f * s0, f * s1, f * s2
    elif c > 0:
        out[0], out[1], out[2] = s0, s1, s2
    else:
        k = 0
        for i in range(1, 3):
            if E[i][i] > E[k][k]:
                k = i
        f = 3.141592653589793 / sqrt(2.0 * (1.0 + E[k][k]))
        for i in range(3):
            out[i] = f * (E[i][k] + (1.0 if i == k else 0.0))


def rotation_log(double[:, ::1] R_target, double[:, ::1] X, double[::1] out):
    """out = log(R* Rᵀ), R = X[:3, :3] (see _rotation_log)."""
    _rotation_log(R_target, X, out)


cdef class Assembly:
    """Fills the whole-body QP of dynamics_cy.planning.whole_body (H, g; A, b: the contact groups' rows, then the
    base EoM; C, l, u: friction and wrench cones, normal bounds and torque limits) and J_λ from the
    kernels' outputs, in the controller's own arrays (bound once here, so a tick converts no
    buffer). ``ctl`` is the WholeBodyController; its group table says where each foot's variables,
    rows and buffers are."""

    cdef double[:, ::1] H, M, Jc, A, C, C_tau, C_rows, J_com, I_rot, I_pos, X_base, R_WB_t, p_grp, Jdv_grp
    cdef double[:, ::1] swing_t, J_lam
    cdef double[:, :, ::1] J_grp, X_grp, R_swing
    cdef double[::1] g, h, h_a, Jc_dot_v, b, l, u, l_on, u_on, limits, posture_w, q_post, p_com, J_com_dot_v
    cdef double[::1] com_t, com_vt, com_ff, p_WB_t, rot, zero, p_WB, p_swing, l_tau, u_tau, tau, x, q, v
    cdef unsigned char[::1] active
    cdef long[::1] nz
    cdef long[:, ::1] grp            # per group: first variable, size (3 or 6), flat, first row in Jc, first inequality row, rows
                                     # (the last of which bounds the normal force)
    cdef Py_ssize_t nv, ng, n_eq, n_lam
    cdef object w, frame_jacobian_bias, frame_pose
    cdef list frames, J_views, Jdv_views, X_views

    def __init__(self, ctl):
        self.w = ctl.w
        self.H, self.g, self.M, self.h, self.Jc, self.Jc_dot_v = ctl.H, ctl.g, ctl.M, ctl.h, ctl.Jc, ctl.Jc_dot_v
        self.A, self.b, self.C, self.l, self.u = ctl.A, ctl.b, ctl.C, ctl.l, ctl.u
        self.l_on, self.u_on, self.J_lam = ctl._l_contact, ctl._u_contact, ctl.J_lam
        self.C_tau, self.l_tau, self.u_tau, self.h_a = ctl._C_tau, ctl._l_tau, ctl._u_tau, ctl._h_a
        self.C_rows = ctl._C_rows
        self.limits, self.posture_w, self.q_post = ctl.effort_limits, ctl.posture_weights, ctl._q_posture
        self.J_com, self.J_com_dot_v, self.p_com = ctl.J_com, ctl.J_com_dot_v, ctl.p_com
        self.com_t, self.com_vt, self.com_ff = ctl._com_target, ctl._com_velocity_target, ctl._com_acceleration_ff
        self.I_rot, self.I_pos, self.X_base, self.R_WB_t, self.p_WB_t = ctl._I_rot, ctl._I_pos, ctl.X, ctl._R_WB_target, ctl._p_WB_target
        self.J_grp, self.Jdv_grp, self.X_grp = ctl._J_grp, ctl._Jdot_v_grp, ctl._X_grp
        self.R_swing, self.swing_t = ctl.swing_R_targets, ctl.swing_targets
        self.p_grp = np.ascontiguousarray([g.p for g in ctl.groups])
        self.active = ctl.active.view(np.uint8)
        self.rot, self.zero, self.p_WB, self.p_swing = np.zeros(3), np.zeros(6), np.zeros(3), np.zeros(3)
        self.tau, self.x, self.q, self.v = ctl.tau, ctl.x, ctl._q, ctl._v
        rows, pt = [], 0
        for g in ctl.groups:
            rows.append([g.var, g.size, g.flat, 3 * pt, g.ineq, g.n_ineq])
            pt += 0 if g.flat else 1
        self.grp = np.array(rows, dtype=np.int_)
        self.nz = np.zeros(ctl.n, dtype=np.int_)
        self.nv, self.ng, self.n_eq, self.n_lam = ctl.nv, len(ctl.groups), ctl.n_eq, ctl.n_lam
        self.frame_jacobian_bias, self.frame_pose = ctl.k.frame_jacobian_bias, ctl.k.frame_pose
        self.frames = [g.frame for g in ctl.groups]
        self.J_views, self.Jdv_views, self.X_views = [g.J for g in ctl.groups], [g.Jdot_v for g in ctl.groups], \
            [g.X for g in ctl.groups]

    def feet(self, q, v, bint swing):
        """The groups' kinematics for fill(): per sole J_F, J̇_F v and X_WF; per point foot in the air
        (with a swing task) X_WF. A loop over C indices and bound kernel methods: no iterator or
        tuple per tick (a Python loop over the groups made 120 B of them)."""
        cdef Py_ssize_t gi
        for gi in range(self.ng):
            if self.grp[gi, 2]:
                self.frame_jacobian_bias(q, v, self.frames[gi], self.J_views[gi], self.Jdv_views[gi])
                self.frame_pose(q, self.frames[gi], self.X_views[gi])
            elif swing and not self.active[gi]:
                self.frame_pose(q, self.frames[gi], self.X_views[gi])

    cdef void _torque_cost_sym(self, double w) noexcept nogil:
        """½ w ‖τ‖², τ = C_τ x + h_a: H += w C_τᵀ C_τ, g += w C_τᵀ h_a, per row of C_τ over the pairs of
        its nonzeros only (a joint's row touches the base, its branch of M and its limb's forces),
        into H's upper triangle, which is then copied to the lower (H is symmetric)."""
        cdef Py_ssize_t r = self.C_tau.shape[0], n = self.C_tau.shape[1], i, j, k, cnt, a, b
        cdef double *Ci
        cdef double *H = &self.H[0, 0]
        cdef double *Hj
        cdef long *nz = &self.nz[0]
        cdef double c
        for i in range(r):
            Ci = &self.C_tau[i, 0]
            cnt = 0
            for j in range(n):
                if Ci[j] != 0.0:
                    nz[cnt] = j
                    cnt = cnt + 1
            for a in range(cnt):
                j = nz[a]
                c = w * Ci[j]
                self.g[j] += c * self.h_a[i]
                Hj = H + j * n
                for b in range(a, cnt):
                    k = nz[b]
                    Hj[k] += c * Ci[k]
        for j in range(n):
            for k in range(j + 1, n):
                H[k * n + j] = H[j * n + k]

    cdef void _sole_jacobian(self, Py_ssize_t gi, Py_ssize_t r0) noexcept nogil:
        """Rows r0..r0+5 of J_λ for sole gi: [R_WFᵀ J_ω; R_WFᵀ J_v − p_FS × R_WFᵀ J_ω] (at S, in F)."""
        cdef Py_ssize_t j, a, c
        cdef double wl[3]
        cdef double vl[3]
        cdef double[:, ::1] J = self.J_grp[gi]
        cdef double[:, ::1] X = self.X_grp[gi]
        cdef double px = self.p_grp[gi, 0], py = self.p_grp[gi, 1], pz = self.p_grp[gi, 2]
        for j in range(self.nv):
            if (J[0, j] == 0.0 and J[1, j] == 0.0 and J[2, j] == 0.0 and J[3, j] == 0.0 and J[4, j] == 0.0
                    and J[5, j] == 0.0):
                for a in range(6):
                    self.J_lam[r0 + a, j] = 0.0
                continue
            for a in range(3):
                wl[a] = X[0, a] * J[0, j] + X[1, a] * J[1, j] + X[2, a] * J[2, j]
                vl[a] = X[0, a] * J[3, j] + X[1, a] * J[4, j] + X[2, a] * J[5, j]
            self.J_lam[r0, j], self.J_lam[r0 + 1, j], self.J_lam[r0 + 2, j] = wl[0], wl[1], wl[2]
            self.J_lam[r0 + 3, j] = vl[0] - (py * wl[2] - pz * wl[1])
            self.J_lam[r0 + 4, j] = vl[1] - (pz * wl[0] - px * wl[2])
            self.J_lam[r0 + 5, j] = vl[2] - (px * wl[1] - py * wl[0])

    def fill(self, double f_min, double f_max):
        """The QP for the state (q, v) in the controller's _q, _v (copies: binding the caller's arrays
        here would allocate a memoryview each tick) after the kernels filled M, h, Jc, J̇c v, J_com,
        the base pose X and, per group, J_F, J̇_F v and X_WF (soles) or X_WF (points in the air).
        The normal bounds of the contact rows are f_min, f_max (the controller's _l/_u_contact)."""
        w = self.w
        cdef double w_com = w.com, w_ori = w.base_orientation, w_pos = w.base_position, w_sw = w.swing
        cdef double w_tau = w.torque, eps_a = w.vdot_regularization, eps_f = w.force_regularization
        cdef double eps_m = w.moment_regularization
        cdef double com_kp = w.com_kp, com_kd = w.com_kd, ori_kp = w.base_orientation_kp
        cdef double ori_kd = w.base_orientation_kd, pos_kp = w.base_position_kp, pos_kd = w.base_position_kd
        cdef double post_kp = w.posture_kp, post_kd = w.posture_kd, sw_kp = w.swing_kp, sw_kd = w.swing_kd
        cdef Py_ssize_t nv = self.nv, n = self.H.shape[0], i, j, gi, var, sz, jc, r_in, n_in, e0, rb
        cdef bint on, flat
        cdef double s
        cdef double[::1] q = self.q, v = self.v
        with nogil:
            self.H[:, :] = 0.0
            self.g[:] = 0.0
            if w_com > 0:
                _task(self.H, self.g, self.J_com, self.J_com_dot_v, v, self.com_t, self.p_com, self.com_vt,
                      self.com_ff, com_kp, com_kd, w_com)
            if w_ori > 0:          # v̇[0:3] = α_WB, v̇[3:6] = a_WBo for the free joint
                _rotation_log(self.R_WB_t, self.X_base, self.rot)
                _task(self.H, self.g, self.I_rot, self.zero[:3], v, self.rot, self.zero[:3], self.zero[:3],
                      self.zero[:3], ori_kp, ori_kd, w_ori)
            if w_pos > 0:
                for i in range(3):
                    self.p_WB[i] = self.X_base[i, 3]
                _task(self.H, self.g, self.I_pos, self.zero[:3], v, self.p_WB_t, self.p_WB, self.zero[:3],
                      self.zero[:3], pos_kp, pos_kd, w_pos)
            for i in range(6, nv):   # posture: q[7:] pairs with v[6:], joint i weighted w[i − 6]
                self.H[i, i] += self.posture_w[i - 6]
                self.g[i] -= self.posture_w[i - 6] * (post_kp * (self.q_post[i + 1] - q[i + 1]) - post_kd * v[i])
            for i in range(nv):
                self.H[i, i] += eps_a
            self.A[:, :] = 0.0
            for gi in range(self.ng):
                var, sz, flat, jc = self.grp[gi, 0], self.grp[gi, 1], self.grp[gi, 2], self.grp[gi, 3]
                r_in, n_in, e0 = self.grp[gi, 4], self.grp[gi, 5], self.grp[gi, 0] - nv
                on = self.active[gi] != 0
                if flat:
                    self._sole_jacobian(gi, e0)
                    for i in range(6):
                        self.H[var + i, var + i] += eps_m if i < 3 else eps_f
                else:              # a point foot's rows of Jc
                    for i in range(3):
                        for j in range(nv):
                            self.J_grp[gi, i, j] = self.Jc[jc + i, j]
                            self.J_lam[e0 + i, j] = self.Jc[jc + i, j]
                        self.Jdv_grp[gi, i] = self.Jc_dot_v[jc + i]
                        self.H[var + i, var + i] += eps_f
                for i in range(r_in, r_in + n_in):     # the cone's rows; free in the air
                    self.l[i] = self.l_on[i] if on else -1e30
                    self.u[i] = self.u_on[i] if on else 1e30
                if on:             # the last row bounds the normal force
                    self.l[r_in + n_in - 1], self.u[r_in + n_in - 1] = f_min, f_max
                for i in range(sz):
                    if on:         # the foot does not accelerate
                        for j in range(nv):
                            self.A[e0 + i, j] = self.J_grp[gi, i, j]
                        self.b[e0 + i] = -self.Jdv_grp[gi, i]
                    else:          # no force in the air
                        self.A[e0 + i, var + i] = 1.0
                        self.b[e0 + i] = 0.0
                if not on and w_sw > 0:
                    if flat:       # orientation rows, then the frame origin
                        _rotation_log(self.R_swing[gi], self.X_grp[gi], self.rot)
                        _task(self.H, self.g, self.J_grp[gi, :3], self.Jdv_grp[gi, :3], v, self.rot,
                              self.zero[:3], self.zero[:3], self.zero[:3], sw_kp, sw_kd, w_sw)
                        for i in range(3):
                            self.p_swing[i] = self.X_grp[gi, i, 3]
                        _task(self.H, self.g, self.J_grp[gi, 3:], self.Jdv_grp[gi, 3:], v, self.swing_t[gi],
                              self.p_swing, self.zero[:3], self.zero[:3], sw_kp, sw_kd, w_sw)
                    else:
                        for i in range(3):
                            s = self.X_grp[gi, i, 3]
                            for j in range(3):
                                s = s + self.X_grp[gi, i, j] * self.p_grp[gi, j]
                            self.p_swing[i] = s
                        _task(self.H, self.g, self.J_grp[gi, :3], self.Jdv_grp[gi, :3], v, self.swing_t[gi],
                              self.p_swing, self.zero[:3], self.zero[:3], sw_kp, sw_kd, w_sw)
            # base equations of motion [M_u, −J_λ,uᵀ] x = −h_u (the last six rows of A); torque rows
            # C_τ = [M_a, −J_λ,aᵀ] with bounds ∓limits − h_a
            rb = self.n_eq - 6
            for i in range(nv):
                for j in range(nv):
                    if i < 6:
                        self.A[rb + i, j] = self.M[i, j]
                    else:
                        self.C_tau[i - 6, j] = self.M[i, j]
                for j in range(self.n_lam):
                    if i < 6:
                        self.A[rb + i, nv + j] = -self.J_lam[j, i]
                    else:
                        self.C_tau[i - 6, nv + j] = -self.J_lam[j, i]
                if i < 6:
                    self.b[rb + i] = -self.h[i]
                elif self.C_rows.shape[0] > 0:      # the torque limit rows
                    self.l_tau[i - 6] = -self.limits[i - 6] - self.h[i]
                    self.u_tau[i - 6] = self.limits[i - 6] - self.h[i]
                    self.C_rows[i - 6, :] = self.C_tau[i - 6, :]
            if w_tau > 0:          # τ = C_τ x + h_a
                self._torque_cost_sym(w_tau)

    def torques(self):
        """τ = M_a v̇ + h_a − J_λ,aᵀ λ for the solution x = [v̇; λ]."""
        cdef Py_ssize_t nv = self.nv, m = self.n_lam, i, j
        cdef double s
        with nogil:
            for i in range(6, nv):
                s = self.h[i]
                for j in range(nv):
                    s = s + self.M[i, j] * self.x[j]
                for j in range(m):
                    s = s - self.J_lam[j, i] * self.x[nv + j]
                self.tau[i - 6] = s


cdef class FootLoss:
    """The foot-loss count of a whole-body controller's feet (hil.legged's rule, docs/wbc.md): per
    foot held in contact (``active``, and reported in contact once), the statuses in a row it
    reports no contact while the last solution asks it for more than ``threshold`` N of normal
    force; and the statuses in a row in which no held foot reports contact. Bound at construction
    to the controller's arrays and the status's contact flags (``in_contact``, bool, the status's
    order; ``order[gi]``: group gi's index in it), so ``update()`` allocates nothing (numpy's
    ufuncs and reductions on these small arrays allocate on every call)."""

    cdef unsigned char[::1] in_contact, active, touched
    cdef long[::1] order, lost
    cdef double[:, ::1] N
    cdef double[::1] lam
    cdef double threshold
    cdef long limit, airborne
    cdef object arrays

    def __init__(self, ctl, in_contact, order, double threshold, long limit):
        self.arrays = (in_contact, ctl.active)
        self.in_contact, self.active = in_contact.view(np.uint8), ctl.active.view(np.uint8)
        self.order = np.ascontiguousarray(order, dtype=np.int_)
        ng = len(ctl.groups)
        if self.order.shape[0] != ng or (ng and not 0 <= min(order) <= max(order) < in_contact.shape[0]):
            raise ValueError(f"FootLoss: order needs {ng} indices into the {in_contact.shape[0]} contact flags")
        self.touched, self.lost = np.zeros(ng, np.uint8), np.zeros(ng, dtype=np.int_)
        self.N, self.lam = ctl.N_lam, ctl.lam
        self.threshold, self.limit, self.airborne = threshold, limit, 0

    def reset(self):
        """No foot touched yet, no count (a new activation)."""
        self.touched[:] = 0
        self.lost[:] = 0
        self.airborne = 0

    def update(self):
        """Counts this status; −1, or a foot's group index when its count reaches the limit, or the
        number of groups when the robot's is (every held foot off for `limit` statuses)."""
        cdef Py_ssize_t gi, j, ng = self.order.shape[0]
        cdef long held = 0, off = 0, found = -1
        cdef bint touching
        cdef double fn
        with nogil:
            for gi in range(ng):
                touching = self.in_contact[self.order[gi]] != 0
                if touching:
                    self.touched[gi] = 1
                if not (self.active[gi] and self.touched[gi]):
                    self.lost[gi] = 0
                    continue
                held += 1
                if touching:
                    self.lost[gi] = 0
                    continue
                off += 1
                fn = 0.0
                for j in range(self.lam.shape[0]):
                    fn += self.N[gi, j] * self.lam[j]
                self.lost[gi] = self.lost[gi] + 1 if fn > self.threshold else 0
                if self.lost[gi] >= self.limit and found < 0:
                    found = gi
            self.airborne = self.airborne + 1 if held > 0 and off == held else 0
            if found < 0 and self.airborne >= self.limit:
                found = ng
        return found

    def ticks(self, Py_ssize_t gi):
        """The count of foot gi (gi = the number of groups: the robot's, every held foot off)."""
        return self.airborne if gi == self.order.shape[0] else self.lost[gi]
