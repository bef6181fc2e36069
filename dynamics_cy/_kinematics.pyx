# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Forward kinematics on (Model, Data): X_PB, X_WB and S of every node from q (joint by joint through
the joint table), spatial velocities V and velocity-product accelerations c from v, the maps between v
and q̇, and the poses and velocities of bodies and frames placed on nodes."""
from dynamics_cy._joints cimport BIAS_ANGULAR_M, BIAS_LINEAR_F, joint_bias, joint_qdot, joint_qdot_to_v, joint_X_FM
from dynamics_cy._spatial cimport cross_motion, matmul, motion_to_child
from dynamics_cy._vec3 cimport cross3, matTvec, matvec
from libc.math cimport cos, sin
from libc.string cimport memcpy, memset


cdef void positions(Model m, Data d, const double* q) noexcept nogil:
    """X_PB, X_WB and the motion subspaces S of every node from q."""
    cdef int t
    for t in range(1, m.nb):
        _position_node(m, d, t, q)


cdef void positions_to(Model m, Data d, int n, const double* q) noexcept nogil:
    """positions() for node n and its ancestors only (what a frame on n needs)."""
    cdef int depth = 0, t = n
    while t > 0:
        d.path[depth] = t
        depth += 1
        t = m.parent[t]
    while depth > 0:
        depth -= 1
        _position_node(m, d, d.path[depth], q)


cdef inline void _position_node(Model m, Data d, int t, const double* q) noexcept nogil:
    """X_PB, X_WB and S of node t; its parent's X_WB must be current."""
    cdef int k, p, nv, code, ax, ci, cj
    cdef double R_FM[9]
    cdef double p_FM[3]
    cdef double tmp[9]
    cdef double tmp3[3]
    cdef double Sm[36]
    cdef double cs, sn
    cdef double* R_PB = d.R_PB + 9 * t
    cdef double* p_PB = d.p_PB + 3 * t
    cdef double* S = d.S + 36 * t
    cdef const double* R_PF = m.R_PF + 9 * t
    cdef const double* qj = q + m.qs[t]
    code = m.axis_code[t]
    if code != 0:
        # R_PB = R_PF R_e(θ) about e = ±e_a: columns i, j = a+1, a+2 (mod 3) rotate, column a stays
        ax = (code if code > 0 else -code) - 1
        ci, cj = (ax + 1) % 3, (ax + 2) % 3
        cs, sn = cos(qj[0]), sin(qj[0]) if code > 0 else -sin(qj[0])
        for k in range(3):
            R_PB[3 * k + ci] = R_PF[3 * k + ci] * cs + R_PF[3 * k + cj] * sn
            R_PB[3 * k + cj] = R_PF[3 * k + cj] * cs - R_PF[3 * k + ci] * sn
            R_PB[3 * k + ax] = R_PF[3 * k + ax]
        p_PB[0], p_PB[1], p_PB[2] = m.p_PF[3 * t], m.p_PF[3 * t + 1], m.p_PF[3 * t + 2]
        S[0], S[1], S[2], S[3], S[4], S[5] = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        S[ax] = 1.0 if code > 0 else -1.0
    else:
        joint_X_FM(m.jtype[t], m.axis + 4 * t, qj, R_FM, p_FM, Sm)
        nv = m.nvj[t]
        if m.mb_identity[t]:
            matmul(R_PF, R_FM, R_PB)
            matvec(R_PF, p_FM, p_PB)
            memcpy(S, Sm, 6 * nv * sizeof(double))
        else:
            matmul(R_FM, m.R_MB + 9 * t, tmp)
            matmul(R_PF, tmp, R_PB)
            matvec(R_FM, m.p_MB + 3 * t, tmp3)
            tmp3[0] += p_FM[0]
            tmp3[1] += p_FM[1]
            tmp3[2] += p_FM[2]
            matvec(R_PF, tmp3, p_PB)
            for k in range(nv):
                motion_to_child(m.R_MB + 9 * t, m.p_MB + 3 * t, Sm + 6 * k, S + 6 * k)
        p_PB[0] += m.p_PF[3 * t]
        p_PB[1] += m.p_PF[3 * t + 1]
        p_PB[2] += m.p_PF[3 * t + 2]
    p = m.parent[t]
    matmul(d.R_WB + 9 * p, R_PB, d.R_WB + 9 * t)
    matvec(d.R_WB + 9 * p, p_PB, tmp3)
    d.p_WB[3 * t] = d.p_WB[3 * p] + tmp3[0]
    d.p_WB[3 * t + 1] = d.p_WB[3 * p + 1] + tmp3[1]
    d.p_WB[3 * t + 2] = d.p_WB[3 * p + 2] + tmp3[2]


cdef void velocities(Model m, Data d, const double* q, const double* v) noexcept nogil:
    """V of every node and c = cJ + V x (S v), the velocity-product acceleration, at (q, v). Needs positions(q)."""
    cdef int t, k, nv, bias
    cdef double vJ[6]
    cdef double cJ[6]
    cdef double wv[3]
    cdef double x_P[3]
    cdef double* V
    cdef double* S
    cdef double* c
    cdef const double* vj
    for t in range(1, m.nb):
        V = d.V + 6 * t
        S = d.S + 36 * t
        c = d.c + 6 * t
        nv = m.nvj[t]
        vj = v + m.vs[t]
        motion_to_child(d.R_PB + 9 * t, d.p_PB + 3 * t, d.V + 6 * m.parent[t], V)
        memset(vJ, 0, 6 * sizeof(double))
        for k in range(nv):
            vJ[0] += S[6 * k] * vj[k]
            vJ[1] += S[6 * k + 1] * vj[k]
            vJ[2] += S[6 * k + 2] * vj[k]
            vJ[3] += S[6 * k + 3] * vj[k]
            vJ[4] += S[6 * k + 4] * vj[k]
            vJ[5] += S[6 * k + 5] * vj[k]
        for k in range(6):
            V[k] += vJ[k]
        cross_motion(V, vJ, c)
        bias = joint_bias(m.jtype[t], q + m.qs[t], vj, wv)
        if bias == BIAS_LINEAR_F:
            # cJ_M = [0; -R_MF (w_F x v_F)], moved to B: [0; -R_BF (w_F x v_F)], R_BF = R_PBᵀ R_PF
            matvec(m.R_PF + 9 * t, wv, x_P)
            matTvec(d.R_PB + 9 * t, x_P, vJ)
            c[3] -= vJ[0]
            c[4] -= vJ[1]
            c[5] -= vJ[2]
        elif bias == BIAS_ANGULAR_M:
            # cJ_M = [wv; 0], moved to B by X_BM
            cJ[0], cJ[1], cJ[2], cJ[3], cJ[4], cJ[5] = wv[0], wv[1], wv[2], 0.0, 0.0, 0.0
            if m.mb_identity[t]:
                memcpy(vJ, cJ, 6 * sizeof(double))
            else:
                motion_to_child(m.R_MB + 9 * t, m.p_MB + 3 * t, cJ, vJ)
            for k in range(6):
                c[k] += vJ[k]


cdef int velocity_to_qdot(Model m, const double* q, const double* v, double* qdot) noexcept nogil:
    """q̇ = N(q) v joint by joint. Returns 1 at an rpy gimbal lock, else 0."""
    cdef int t
    for t in range(1, m.nb):
        if joint_qdot(m.jtype[t], q + m.qs[t], v + m.vs[t], qdot + m.qs[t]):
            return 1
    return 0


cdef void qdot_to_velocity_map(Model m, const double* q, double* Np) noexcept nogil:
    """N⁺(q) (nv × nq, row-major) with v = N⁺ q̇, joint by joint."""
    cdef int t
    memset(Np, 0, m.nv * m.nq * sizeof(double))
    for t in range(1, m.nb):
        joint_qdot_to_v(m.jtype[t], q + m.qs[t], m.nvj[t], Np + m.nq * m.vs[t] + m.qs[t], m.nq)


cdef void body_pose(Model m, Data d, int b, double* R, double* p) noexcept nogil:
    """R_WB (row-major 3x3) and p_WBo of body b. Needs positions()."""
    cdef int n = m.body_node[b]
    cdef double tmp[3]
    matmul(d.R_WB + 9 * n, m.R_NB + 9 * b, R)
    matvec(d.R_WB + 9 * n, m.p_NB + 3 * b, tmp)
    p[0] = d.p_WB[3 * n] + tmp[0]
    p[1] = d.p_WB[3 * n + 1] + tmp[1]
    p[2] = d.p_WB[3 * n + 2] + tmp[2]


cdef void body_velocity(Model m, Data d, int b, double* V_W) noexcept nogil:
    """V_WB_W = [w_WB; v_WBo] in W of body b. Needs velocities()."""
    cdef int n = m.body_node[b]
    cdef double Vo[6]
    cdef double wxp[3]
    cross3(d.V + 6 * n, m.p_NB + 3 * b, wxp)
    Vo[0], Vo[1], Vo[2] = d.V[6 * n], d.V[6 * n + 1], d.V[6 * n + 2]
    Vo[3] = d.V[6 * n + 3] + wxp[0]
    Vo[4] = d.V[6 * n + 4] + wxp[1]
    Vo[5] = d.V[6 * n + 5] + wxp[2]
    matvec(d.R_WB + 9 * n, Vo, V_W)
    matvec(d.R_WB + 9 * n, Vo + 3, V_W + 3)


cdef void frame_pose(Model m, Data d, int f, double* X) noexcept nogil:
    """X_WF as a row-major 4x4. Needs positions()."""
    cdef int n = m.frame_node[f], r, k
    cdef double R[9]
    cdef double p[3]
    matmul(d.R_WB + 9 * n, m.R_NF + 9 * f, R)
    matvec(d.R_WB + 9 * n, m.p_NF + 3 * f, p)
    for r in range(3):
        for k in range(3):
            X[4 * r + k] = R[3 * r + k]
        X[4 * r + 3] = p[r] + d.p_WB[3 * n + r]
    X[12], X[13], X[14], X[15] = 0.0, 0.0, 0.0, 1.0
