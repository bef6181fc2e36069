# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The mass matrix M(q) on (Model, Data) by the composite-rigid-body algorithm in local (node) frames,
and the motion subspaces at the world origin that the articulated-body algorithm works with.

One backward sweep t = nb-1 … 1, each node in its own frame B about Bo (Featherstone's CRBA, the
local convention of Pinocchio's crba):

    F_c   = Ic_t S_c                 for the node's own columns c (Ic_t: the subtree's inertia)
    M_rc  = S_r · F_c                for the node's rows r and every column c of its subtree
    F_c  ← X_PBᵀ F_c                 the subtree's columns moved to the parent: f ← R f, n ← R n + p × f
    Ic_P += X_PB Ic_t                (m, h = m p_BoBcm, I about Bo) moved to P about Po

A node's subtree is contiguous in v (depth-first order), so F is one 6 × nv block whose columns are
always in the frame of the node being swept, and each row of M is written once, left to right from its
diagonal, then mirrored. Only X_PB(q_t) enters, never X_WB: `crba_q` computes it from q_t as the
sweep reaches the node (no forward pass), the cos and sin of an axis joint's angle one node ahead, so
that they overlap the node before it instead of waiting on its path. A revolute joint about ±e_a (axis_code) has S = ±e_a, so
F_c = ±Ic e_a is a column of Ic and M_rc = ±F_c[a]; when its X_PF has no rotation, R_PB = R_a(θ) turns
one plane and the moves cost about half; a root joint about e_a reads only I_aa and row a of the
forces its subtree sends, so only those are moved into it.
"""
from dynamics_cy._joints cimport joint_X_FM
from dynamics_cy._spatial cimport inertia_mul, matmul, motion_to_child, motion_to_world
from dynamics_cy._vec3 cimport matvec
from libc.math cimport cos, sin
from libc.string cimport memcpy, memset

cdef extern from *:
    ctypedef double* row_ptr "double* __restrict__"    # the rows of F, which never overlap


cdef void world_subspaces(Model m, Data d) noexcept nogil:
    """Sw: the motion subspaces at the world origin in W. Needs positions()."""
    cdef int t, k
    for t in range(1, m.nb):
        for k in range(m.nvj[t]):
            motion_to_world(d.R_WB + 9 * t, d.p_WB + 3 * t, d.S + 36 * t + 6 * k, d.Sw + 36 * t + 6 * k)


cdef void crba(Model m, Data d, double* M) noexcept nogil:
    """M(q) (nv × nv, row-major) from the X_PB and S of the last positions()."""
    _sweep(m, d, NULL, M)


cdef void crba_q(Model m, Data d, const double* q, double* M) noexcept nogil:
    """M(q) (nv × nv, row-major) from q alone: each node's X_PB(q_t) is computed in the sweep; Data's
    kinematics (X_PB, X_WB, S) are left as they were."""
    _sweep(m, d, q, M)


cdef inline void _local_transform(Model m, int t, const double* q, double* R, double* p, double* S) noexcept nogil:
    """X_PB(q_t) = X_PF X_FM(q_t) X_MB and S in B of node t (what positions() computes, without X_WB)."""
    cdef double R_FM[9]
    cdef double p_FM[3]
    cdef double tmp[9]
    cdef double Sm[36]
    cdef int k
    joint_X_FM(m.jtype[t], m.axis + 4 * t, q + m.qs[t], R_FM, p_FM, Sm)
    if m.mb_identity[t]:
        matmul(m.R_PF + 9 * t, R_FM, R)
        matvec(m.R_PF + 9 * t, p_FM, p)
        memcpy(S, Sm, 6 * m.nvj[t] * sizeof(double))
    else:
        matmul(R_FM, m.R_MB + 9 * t, tmp)
        matmul(m.R_PF + 9 * t, tmp, R)
        matvec(R_FM, m.p_MB + 3 * t, tmp)
        tmp[0] += p_FM[0]
        tmp[1] += p_FM[1]
        tmp[2] += p_FM[2]
        matvec(m.R_PF + 9 * t, tmp, p)
        for k in range(m.nvj[t]):
            motion_to_child(m.R_MB + 9 * t, m.p_MB + 3 * t, Sm + 6 * k, S + 6 * k)
    p[0] += m.p_PF[3 * t]
    p[1] += m.p_PF[3 * t + 1]
    p[2] += m.p_PF[3 * t + 2]


cdef inline void _axis_rotation(const double* R_PF, int code, double cs, double sn, double* R) noexcept nogil:
    """R_PB = R_PF R_e(θ) about e = ±e_a (code = ±(a+1)), cs = cos θ, sn = sin θ: columns i, j = a+1, a+2
    (mod 3) rotate."""
    cdef int ax = (code if code > 0 else -code) - 1, k
    cdef int ci = ax + 1 if ax < 2 else 0
    cdef int cj = ci + 1 if ci < 2 else 0
    if code < 0:
        sn = -sn
    for k in range(3):
        R[3 * k + ci] = R_PF[3 * k + ci] * cs + R_PF[3 * k + cj] * sn
        R[3 * k + cj] = R_PF[3 * k + cj] * cs - R_PF[3 * k + ci] * sn
        R[3 * k + ax] = R_PF[3 * k + ax]


cdef inline void _forces_to_parent(const double* R, const double* p, double* F, int ld, int c0, int n) noexcept nogil:
    """Columns c0 … c0+n-1 of the 6 × ld force block F (rows n; f) moved from B to P, in place:
    f ← R f, n ← R n + p × f."""
    _move(R, p, F, F + ld, F + 2 * ld, F + 3 * ld, F + 4 * ld, F + 5 * ld, c0, c0 + n)


cdef inline void _move(const double* R, const double* p, row_ptr n0, row_ptr n1, row_ptr n2, row_ptr f0, row_ptr f1,
                       row_ptr f2, int c0, int c1) noexcept nogil:
    cdef double r0 = R[0], r1 = R[1], r2 = R[2], r3 = R[3], r4 = R[4], r5 = R[5], r6 = R[6], r7 = R[7], r8 = R[8]
    cdef double px = p[0], py = p[1], pz = p[2]
    cdef double a0, a1, a2, b0, b1, b2, g0, g1, g2
    cdef int c
    for c in range(c0, c1):
        a0, a1, a2 = n0[c], n1[c], n2[c]
        b0, b1, b2 = f0[c], f1[c], f2[c]
        g0 = r0 * b0 + r1 * b1 + r2 * b2
        g1 = r3 * b0 + r4 * b1 + r5 * b2
        g2 = r6 * b0 + r7 * b1 + r8 * b2
        n0[c] = r0 * a0 + r1 * a1 + r2 * a2 + py * g2 - pz * g1
        n1[c] = r3 * a0 + r4 * a1 + r5 * a2 + pz * g0 - px * g2
        n2[c] = r6 * a0 + r7 * a1 + r8 * a2 + px * g1 - py * g0
        f0[c], f1[c], f2[c] = g0, g1, g2


cdef inline void _forces_to_parent_axis(double cs, double sn, int u, int v, int w, const double* p, double* F,
                                        int ld, int c0, int n) noexcept nogil:
    """_forces_to_parent for R = R_w(θ), a rotation about e_w ((u, v, w) a cyclic order of (x, y, z)):
    g_u = c f_u - s f_v, g_v = s f_u + c f_v, g_w = f_w, the same for n, then n += p × g."""
    _move_axis(cs, sn, p[u], p[v], p[w], F + u * ld, F + v * ld, F + w * ld, F + (3 + u) * ld, F + (3 + v) * ld,
               F + (3 + w) * ld, c0, c0 + n)


cdef inline void _move_axis(double cs, double sn, double pu, double pv, double pw, row_ptr nu, row_ptr nv,
                            row_ptr nw, row_ptr fu, row_ptr fv, row_ptr fw, int c0, int c1) noexcept nogil:
    cdef double gu, gv, gw, au, av
    cdef int c
    for c in range(c0, c1):
        gu = cs * fu[c] - sn * fv[c]
        gv = sn * fu[c] + cs * fv[c]
        gw = fw[c]
        au = cs * nu[c] - sn * nv[c]
        av = sn * nu[c] + cs * nv[c]
        nu[c] = au + pv * gw - pw * gv
        nv[c] = av + pw * gu - pu * gw
        nw[c] = nw[c] + pu * gv - pv * gu
        fu[c], fv[c] = gu, gv


cdef inline void _forces_row_to_parent(const double* R, const double* p, double* F, int ld, int c0, int n,
                                       int a) noexcept nogil:
    """Only row a (n_a) of _forces_to_parent: what a root node turning about e_a reads of its subtree."""
    cdef double* na = F + a * ld
    cdef const double* Ra = R + 3 * a
    cdef int b = a + 1 if a < 2 else 0
    cdef int e = b + 1 if b < 2 else 0
    cdef const double* Rb = R + 3 * b
    cdef const double* Re = R + 3 * e
    cdef double pb = p[b], pe = p[e], f0, f1, f2
    cdef int c
    for c in range(c0, c0 + n):     # n_a = R_a· n + p_b g_e - p_e g_b, with g = R f
        f0, f1, f2 = F[3 * ld + c], F[4 * ld + c], F[5 * ld + c]
        na[c] = (Ra[0] * F[c] + Ra[1] * F[ld + c] + Ra[2] * F[2 * ld + c]
                 + pb * (Re[0] * f0 + Re[1] * f1 + Re[2] * f2) - pe * (Rb[0] * f0 + Rb[1] * f1 + Rb[2] * f2))


cdef inline void _rotate_inertia(const double* R, const double* h, const double* I, double* y, double* J) noexcept nogil:
    """y = R h, J = R I Rᵀ (I symmetric; J's six distinct entries written, row-major)."""
    cdef double A[9]
    cdef int r
    for r in range(3):      # A = R I
        A[3 * r] = R[3 * r] * I[0] + R[3 * r + 1] * I[3] + R[3 * r + 2] * I[6]
        A[3 * r + 1] = R[3 * r] * I[1] + R[3 * r + 1] * I[4] + R[3 * r + 2] * I[7]
        A[3 * r + 2] = R[3 * r] * I[2] + R[3 * r + 1] * I[5] + R[3 * r + 2] * I[8]
    y[0] = R[0] * h[0] + R[1] * h[1] + R[2] * h[2]
    y[1] = R[3] * h[0] + R[4] * h[1] + R[5] * h[2]
    y[2] = R[6] * h[0] + R[7] * h[1] + R[8] * h[2]
    J[0] = A[0] * R[0] + A[1] * R[1] + A[2] * R[2]
    J[4] = A[3] * R[3] + A[4] * R[4] + A[5] * R[5]
    J[8] = A[6] * R[6] + A[7] * R[7] + A[8] * R[8]
    J[1] = A[0] * R[3] + A[1] * R[4] + A[2] * R[5]
    J[2] = A[0] * R[6] + A[1] * R[7] + A[2] * R[8]
    J[5] = A[3] * R[6] + A[4] * R[7] + A[5] * R[8]


cdef inline void _rotate_inertia_axis(double cs, double sn, int u, int v, int w, const double* h, const double* I,
                                      double* y, double* J) noexcept nogil:
    """_rotate_inertia for R = R_w(θ): only the (u, v) plane turns."""
    cdef double Iuu = I[4 * u], Ivv = I[4 * v], Iuv = I[3 * u + v], Iuw = I[3 * u + w], Ivw = I[3 * v + w]
    cdef double cc = cs * cs, ss = sn * sn, cs2 = cs * sn
    y[u] = cs * h[u] - sn * h[v]
    y[v] = sn * h[u] + cs * h[v]
    y[w] = h[w]
    J[4 * u] = cc * Iuu - 2.0 * cs2 * Iuv + ss * Ivv
    J[4 * v] = ss * Iuu + 2.0 * cs2 * Iuv + cc * Ivv
    J[4 * w] = I[4 * w]
    J[3 * u + v] = J[3 * v + u] = cs2 * (Iuu - Ivv) + (cc - ss) * Iuv
    J[3 * u + w] = J[3 * w + u] = cs * Iuw - sn * Ivw
    J[3 * v + w] = J[3 * w + v] = sn * Iuw + cs * Ivw


cdef inline void _shift_add(double m, const double* y, const double* J, const double* p,
                            double* m_P, double* h_P, double* I_P) noexcept nogil:
    """(m, y, J) (rotated into P, about Bo) added into (m, h, I) about Po:
    h_P += y + m p;  I_P += J - (y pᵀ + p yᵀ) - m p pᵀ + (2 p·y + m p·p) 1."""
    cdef double px = p[0], py = p[1], pz = p[2], y0 = y[0], y1 = y[1], y2 = y[2]
    cdef double s = 2.0 * (px * y0 + py * y1 + pz * y2) + m * (px * px + py * py + pz * pz)
    cdef double i01 = J[1] - (px * y1 + py * y0) - m * px * py
    cdef double i02 = J[2] - (px * y2 + pz * y0) - m * px * pz
    cdef double i12 = J[5] - (py * y2 + pz * y1) - m * py * pz
    I_P[0] += J[0] - 2.0 * px * y0 - m * px * px + s
    I_P[4] += J[4] - 2.0 * py * y1 - m * py * py + s
    I_P[8] += J[8] - 2.0 * pz * y2 - m * pz * pz + s
    I_P[1] += i01
    I_P[3] += i01
    I_P[2] += i02
    I_P[6] += i02
    I_P[5] += i12
    I_P[7] += i12
    m_P[0] += m
    h_P[0] += y0 + m * px
    h_P[1] += y1 + m * py
    h_P[2] += y2 + m * pz


cdef inline void _shift_add_aa(double m, const double* R, const double* h, const double* I, const double* p, int a,
                               double* I_aa) noexcept nogil:
    """Only I_P[a][a] of rotate-then-_shift_add: what a root node turning about e_a reads of its subtree."""
    cdef const double* Ra = R + 3 * a
    cdef double y0 = R[0] * h[0] + R[1] * h[1] + R[2] * h[2]
    cdef double y1 = R[3] * h[0] + R[4] * h[1] + R[5] * h[2]
    cdef double y2 = R[6] * h[0] + R[7] * h[1] + R[8] * h[2]
    cdef double Jaa = (Ra[0] * (I[0] * Ra[0] + I[1] * Ra[1] + I[2] * Ra[2])
                       + Ra[1] * (I[3] * Ra[0] + I[4] * Ra[1] + I[5] * Ra[2])
                       + Ra[2] * (I[6] * Ra[0] + I[7] * Ra[1] + I[8] * Ra[2]))
    cdef double ya = y0 if a == 0 else (y1 if a == 1 else y2)
    I_aa[0] += (Jaa - 2.0 * p[a] * ya - m * p[a] * p[a] + 2.0 * (p[0] * y0 + p[1] * y1 + p[2] * y2)
                + m * (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]))


cdef inline void _row(const double* s, const double* F, int ld, int c0, int n, double* out) noexcept nogil:
    """out[c] = s · F[:, c] for c in c0 … c0+n-1 (the zero half of a purely angular or linear s skipped)."""
    cdef int c
    cdef double s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4], s5 = s[5]
    cdef const double* F3 = F + 3 * ld
    if s3 == 0.0 and s4 == 0.0 and s5 == 0.0:
        for c in range(c0, c0 + n):
            out[c] = s0 * F[c] + s1 * F[ld + c] + s2 * F[2 * ld + c]
    elif s0 == 0.0 and s1 == 0.0 and s2 == 0.0:
        for c in range(c0, c0 + n):
            out[c] = s3 * F3[c] + s4 * F3[ld + c] + s5 * F3[2 * ld + c]
    else:
        for c in range(c0, c0 + n):
            out[c] = (s0 * F[c] + s1 * F[ld + c] + s2 * F[2 * ld + c]
                      + s3 * F3[c] + s4 * F3[ld + c] + s5 * F3[2 * ld + c])


cdef void _sweep(Model m, Data d, const double* q, double* M) noexcept nogil:
    """The backward sweep (module docstring). q NULL: X_PB and S from Data (positions()); else from q.
    Scratch: d.Ic_* (composite inertias), d.U (F, 6 × nv), d.path (each node's subtree width in v)."""
    cdef int nb = m.nb, nv = m.nv, t, k, c, r, par, c0, n, nvt, code, pcode, ax, u, v, w
    cdef double Rl[9]
    cdef double y[3]
    cdef double J[9]
    cdef double cs, sn, th, cs_next = 1.0, sn_next = 0.0
    cdef double pl[3]
    cdef double Sl[36]
    cdef double col[6]
    cdef double sg
    cdef const double* R
    cdef const double* p
    cdef const double* S
    cdef const double* I
    cdef const double* h
    cdef double* F = d.U
    cdef double* row
    cdef int* width = d.path
    memset(M, 0, nv * nv * sizeof(double))
    memcpy(d.Ic_m, m.mass, nb * sizeof(double))
    memcpy(d.Ic_mcom, m.mcom, 3 * nb * sizeof(double))
    memcpy(d.Ic_I, m.Io, 9 * nb * sizeof(double))
    memcpy(width, m.nvj, nb * sizeof(int))
    if q != NULL and nb > 1 and m.axis_code[nb - 1] != 0:
        th = q[m.qs[nb - 1]]
        cs_next, sn_next = cos(th), sin(th)
    for t in range(nb - 1, 0, -1):
        nvt, c0, n, par, code = m.nvj[t], m.vs[t], width[t], m.parent[t], m.axis_code[t]
        cs, sn = cs_next, sn_next
        if q != NULL and t > 1 and m.axis_code[t - 1] != 0:
            # the next node's cos and sin now, off this node's path (they overlap its work)
            th = q[m.qs[t - 1]]
            cs_next, sn_next = cos(th), sin(th)
        I = d.Ic_I + 9 * t
        h = d.Ic_mcom + 3 * t
        if q == NULL:
            R, p, S = d.R_PB + 9 * t, d.p_PB + 3 * t, d.S + 36 * t
        elif code != 0:
            _axis_rotation(m.R_PF + 9 * t, code, cs, sn, Rl)
            R, p, S = Rl, m.p_PF + 3 * t, NULL
        else:
            _local_transform(m, t, q, Rl, pl, Sl)
            R, p, S = Rl, pl, Sl
        if code != 0:
            # S = ±e_a: F = ±[I e_a; e_a × h], the row is ±F[a]
            ax = (code if code > 0 else -code) - 1
            sg = 1.0 if code > 0 else -1.0
            F[c0], F[nv + c0], F[2 * nv + c0] = sg * I[ax], sg * I[3 + ax], sg * I[6 + ax]
            if ax == 0:
                F[3 * nv + c0], F[4 * nv + c0], F[5 * nv + c0] = 0.0, -sg * h[2], sg * h[1]
            elif ax == 1:
                F[3 * nv + c0], F[4 * nv + c0], F[5 * nv + c0] = sg * h[2], 0.0, -sg * h[0]
            else:
                F[3 * nv + c0], F[4 * nv + c0], F[5 * nv + c0] = -sg * h[1], sg * h[0], 0.0
            row = M + nv * c0
            for c in range(c0, c0 + n):
                row[c] = sg * F[ax * nv + c]
        else:
            for k in range(nvt):      # F = Ic S: [I w + h × v; m v - h × w]
                inertia_mul(d.Ic_m[t], h, I, S + 6 * k, col)
                for r in range(6):
                    F[r * nv + c0 + k] = col[r]
            for k in range(nvt):
                _row(S + 6 * k, F, nv, c0, n, M + nv * (c0 + k))
        row = M + nv * c0               # mirror the rows below the diagonal
        if nvt == 1:
            for c in range(c0 + 1, c0 + n):
                M[nv * c + c0] = row[c]
        else:
            for c in range(c0 + 1, c0 + n):
                for k in range(min(nvt, c - c0)):
                    M[nv * c + c0 + k] = row[nv * k + c]
        if par > 0:
            pcode = m.axis_code[par]
            if m.parent[par] == 0 and pcode != 0:
                # the parent is a root turning about e_b: it reads row b of F and its I[b][b] only
                ax = (pcode if pcode > 0 else -pcode) - 1
                _forces_row_to_parent(R, p, F, nv, c0, n, ax)
                _shift_add_aa(d.Ic_m[t], R, h, I, p, ax, d.Ic_I + 9 * par + 4 * ax)
            elif code != 0 and m.R_PF[9 * t] == 1.0 and m.R_PF[9 * t + 4] == 1.0 and m.R_PF[9 * t + 8] == 1.0:
                # R_PF = 1: R = R_w(θ) about the joint's axis e_w, turning the (u, v) plane only
                w = (code if code > 0 else -code) - 1
                u = w + 1 if w < 2 else 0
                v = u + 1 if u < 2 else 0
                cs, sn = R[4 * u], R[3 * v + u]
                _forces_to_parent_axis(cs, sn, u, v, w, p, F, nv, c0, n)
                _rotate_inertia_axis(cs, sn, u, v, w, h, I, y, J)
                _shift_add(d.Ic_m[t], y, J, p, d.Ic_m + par, d.Ic_mcom + 3 * par, d.Ic_I + 9 * par)
            else:
                _forces_to_parent(R, p, F, nv, c0, n)
                _rotate_inertia(R, h, I, y, J)
                _shift_add(d.Ic_m[t], y, J, p, d.Ic_m + par, d.Ic_mcom + 3 * par, d.Ic_I + 9 * par)
            width[par] += n
    for k in range(nv):                 # reflected inertia ρ² I_r on the diagonal, as in Drake
        M[nv * k + k] += m.armature[k]

