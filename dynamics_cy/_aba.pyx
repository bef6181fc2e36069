# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Forward dynamics on (Model, Data): v̇ by the articulated-body algorithm in world coordinates."""
from dynamics_cy._crba cimport world_subspaces
from dynamics_cy._linalg cimport cholesky_inverse
from dynamics_cy._rnea cimport world_acceleration
from dynamics_cy._spatial cimport (cross_force_add, dot6, force_to_world, inertia6, inertia_mul, mat6_vec,
                                   motion_to_world, rigid_inertia_to_parent_add)
from libc.string cimport memcpy, memset


cdef int aba(Model m, Data d, const double* tau, bint use_gravity, bint use_fext, double* vdot) noexcept nogil:
    """v̇ = M⁻¹ (τ + τ_g + Σ Jᵀ F_ext - C v) by the articulated-body algorithm in world coordinates
    (spatial quantities about the world origin, so articulated inertias add without transforms).

    Needs positions(), velocities() and, with use_fext, load_body_forces(). Returns 0, or the
    node whose articulated inertia is singular.
    """
    cdef int t, k, kk, r, p, nv
    cdef double hV[6]
    cdef double Vw[6]
    cdef double Ia[36]
    cdef double pa[6]
    cdef double Dm[36]
    cdef double tmp[6]
    cdef double DinvU[36]
    cdef double fw[6]
    cdef double mw, s, D
    cdef double mcw[3]
    cdef double Iw[9]
    cdef double* IA
    cdef double* pA
    cdef double* U
    cdef double* S
    cdef double* Di
    cdef double* u
    cdef double* a
    cdef double* c
    world_subspaces(m, d)
    for t in range(1, m.nb):
        mw = 0.0
        memset(mcw, 0, 3 * sizeof(double))
        memset(Iw, 0, 9 * sizeof(double))
        rigid_inertia_to_parent_add(d.R_WB + 9 * t, d.p_WB + 3 * t, m.mass[t], m.mcom + 3 * t,
                                    m.Io + 9 * t, &mw, mcw, Iw)
        inertia6(mw, mcw, Iw, d.IA + 36 * t)
        motion_to_world(d.R_WB + 9 * t, d.p_WB + 3 * t, d.V + 6 * t, Vw)
        motion_to_world(d.R_WB + 9 * t, d.p_WB + 3 * t, d.c + 6 * t, d.cw + 6 * t)
        pA = d.pA + 6 * t
        inertia_mul(mw, mcw, Iw, Vw, hV)
        memset(pA, 0, 6 * sizeof(double))
        cross_force_add(Vw, hV, pA)
        if use_fext:
            force_to_world(d.R_WB + 9 * t, d.p_WB + 3 * t, d.fext + 6 * t, fw)
            for k in range(6):
                pA[k] -= fw[k]
    for t in range(m.nb - 1, 0, -1):
        IA = d.IA + 36 * t
        pA = d.pA + 6 * t
        U = d.U + 36 * t
        Di = d.Dinv + 36 * t
        u = d.u + 6 * t
        S = d.Sw + 36 * t
        c = d.cw + 6 * t
        nv = m.nvj[t]
        p = m.parent[t]
        if nv == 1:
            mat6_vec(IA, S, U)
            D = dot6(S, U) + m.armature[m.vs[t]]     # + reflected inertia (1-dof joints only)
            if not D > 0.0:
                return t
            Di[0] = 1.0 / D
            u[0] = tau[m.vs[t]] - dot6(S, pA)
            if p == 0:
                continue
            for r in range(6):           # Ia = IA - U Uᵀ / D ;  pa = pA + Ia c + U u / D
                s = U[r] * Di[0]
                for kk in range(6):
                    Ia[6 * r + kk] = IA[6 * r + kk] - s * U[kk]
            mat6_vec(Ia, c, pa)
            s = u[0] * Di[0]
            for r in range(6):
                pa[r] += pA[r] + U[r] * s
        else:
            for k in range(nv):
                mat6_vec(IA, S + 6 * k, U + 6 * k)
                u[k] = tau[m.vs[t] + k] - dot6(S + 6 * k, pA)
            for k in range(nv):
                for kk in range(nv):
                    Dm[nv * k + kk] = dot6(S + 6 * k, U + 6 * kk)
            if nv > 0 and cholesky_inverse(Dm, nv, Di):
                return t
            if p == 0:
                continue
            for k in range(nv):          # (U D⁻¹)[:, k]
                for r in range(6):
                    s = 0.0
                    for kk in range(nv):
                        s += U[6 * kk + r] * Di[nv * kk + k]
                    DinvU[6 * k + r] = s
            memcpy(Ia, IA, 36 * sizeof(double))
            for r in range(6):
                for kk in range(6):
                    s = 0.0
                    for k in range(nv):
                        s += DinvU[6 * k + r] * U[6 * k + kk]
                    Ia[6 * r + kk] -= s
            mat6_vec(Ia, c, pa)
            for r in range(6):
                pa[r] += pA[r]
                for k in range(nv):
                    pa[r] += DinvU[6 * k + r] * u[k]
        for k in range(36):
            d.IA[36 * p + k] += Ia[k]
        for k in range(6):
            d.pA[6 * p + k] += pa[k]
    world_acceleration(m, d, use_gravity)
    for t in range(1, m.nb):
        a = d.A + 6 * t
        U = d.U + 36 * t
        Di = d.Dinv + 36 * t
        u = d.u + 6 * t
        S = d.Sw + 36 * t
        nv = m.nvj[t]
        for k in range(6):
            a[k] = d.A[6 * m.parent[t] + k] + d.cw[6 * t + k]
        for k in range(nv):
            tmp[k] = u[k] - dot6(U + 6 * k, a)
        for k in range(nv):
            s = 0.0
            for kk in range(nv):
                s += Di[nv * k + kk] * tmp[kk]
            vdot[m.vs[t] + k] = s
            for r in range(6):
                a[r] += S[6 * k + r] * s
    return 0
