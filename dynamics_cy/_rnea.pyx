# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Inverse dynamics on (Model, Data) in body coordinates: the recursive Newton-Euler algorithm
τ = M v̇ + C v − τ_g − Σ Jᵀ F_ext, the generalized force of gravity τ_g alone, and the loading of
applied body forces onto the nodes."""
from dynamics_cy._spatial cimport cross_force_add, dot6, force_to_parent_add, inertia_mul, motion_to_child
from dynamics_cy._vec3 cimport cross3, matTvec, matvec
from libc.string cimport memset


cdef void load_body_forces(Model m, Data d, const double* F_W) noexcept nogil:
    """fext of every node from F_Bo_W given per body (rows of F_W): shifted to the node's origin
    and expressed in the node frame. Needs positions()."""
    cdef int b, n
    cdef double pW[3]
    cdef double x[3]
    cdef double tau[3]
    cdef const double* F
    memset(d.fext, 0, 6 * m.nb * sizeof(double))
    for b in range(m.nbodies):
        n = m.body_node[b]
        F = F_W + 6 * b
        matvec(d.R_WB + 9 * n, m.p_NB + 3 * b, pW)      # p_NoBo in W
        cross3(pW, F + 3, x)
        tau[0], tau[1], tau[2] = F[0] + x[0], F[1] + x[1], F[2] + x[2]
        matTvec(d.R_WB + 9 * n, tau, x)
        d.fext[6 * n] += x[0]
        d.fext[6 * n + 1] += x[1]
        d.fext[6 * n + 2] += x[2]
        matTvec(d.R_WB + 9 * n, F + 3, x)
        d.fext[6 * n + 3] += x[0]
        d.fext[6 * n + 4] += x[1]
        d.fext[6 * n + 5] += x[2]


cdef void world_acceleration(Model m, Data d, bint use_gravity) noexcept nogil:
    """d.A[0], the world's spatial acceleration the recursions start from: −g (gravity as a fictitious
    upward acceleration of the base, Featherstone's trick) or 0."""
    memset(d.A, 0, 6 * sizeof(double))
    if use_gravity:
        d.A[3], d.A[4], d.A[5] = -m.g[0], -m.g[1], -m.g[2]


cdef void rnea(Model m, Data d, const double* vdot, bint use_velocity, bint use_gravity, bint use_fext,
               double* tau) noexcept nogil:
    """tau = M v̇ + [C v] - [τ_g] - [Σ Jᵀ F_ext]; vdot may be NULL (v̇ = 0); tau NULL: the forward
    pass only (the nodes' accelerations d.A and the world's).

    Needs positions(), velocities() when use_velocity, load_body_forces() when use_fext.
    """
    cdef int t, k, p, nv
    cdef double hV[6]
    cdef double* a
    cdef double* f
    cdef double* S
    cdef double s
    world_acceleration(m, d, use_gravity)
    for t in range(1, m.nb):
        a = d.A + 6 * t
        f = d.F + 6 * t
        S = d.S + 36 * t
        nv = m.nvj[t]
        motion_to_child(d.R_PB + 9 * t, d.p_PB + 3 * t, d.A + 6 * m.parent[t], a)
        if vdot != NULL:
            for k in range(nv):
                s = vdot[m.vs[t] + k]
                a[0] += S[6 * k] * s
                a[1] += S[6 * k + 1] * s
                a[2] += S[6 * k + 2] * s
                a[3] += S[6 * k + 3] * s
                a[4] += S[6 * k + 4] * s
                a[5] += S[6 * k + 5] * s
        if use_velocity:
            for k in range(6):
                a[k] += d.c[6 * t + k]
        inertia_mul(m.mass[t], m.mcom + 3 * t, m.Io + 9 * t, a, f)
        if use_velocity:
            inertia_mul(m.mass[t], m.mcom + 3 * t, m.Io + 9 * t, d.V + 6 * t, hV)
            cross_force_add(d.V + 6 * t, hV, f)
        if use_fext:
            for k in range(6):
                f[k] -= d.fext[6 * t + k]
    if tau == NULL:
        return
    for t in range(m.nb - 1, 0, -1):
        f = d.F + 6 * t
        S = d.S + 36 * t
        for k in range(m.nvj[t]):
            tau[m.vs[t] + k] = dot6(S + 6 * k, f)
            if vdot != NULL:            # reflected inertia: + ρ² I_r v̇ (Drake's inverse dynamics)
                tau[m.vs[t] + k] += m.armature[m.vs[t] + k] * vdot[m.vs[t] + k]
        p = m.parent[t]
        if p > 0:
            force_to_parent_add(d.R_PB + 9 * t, d.p_PB + 3 * t, f, d.F + 6 * p)


cdef void gravity(Model m, Data d, double* tau) noexcept nogil:
    """τ_g(q), the generalized force of gravity (Drake's sign). Needs positions()."""
    cdef int t, k, p
    cdef double gB[3]
    cdef double* f
    cdef double mt
    for t in range(1, m.nb):
        f = d.F + 6 * t
        mt = m.mass[t]
        matTvec(d.R_WB + 9 * t, m.g, gB)          # g in B
        cross3(m.mcom + 3 * t, gB, f)             # moment about Bo of m g at the com
        f[3], f[4], f[5] = mt * gB[0], mt * gB[1], mt * gB[2]
    for t in range(m.nb - 1, 0, -1):
        f = d.F + 6 * t
        for k in range(m.nvj[t]):
            tau[m.vs[t] + k] = dot6(d.S + 36 * t + 6 * k, f)
        p = m.parent[t]
        if p > 0:
            force_to_parent_add(d.R_PB + 9 * t, d.p_PB + 3 * t, f, d.F + 6 * p)
