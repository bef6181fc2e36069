# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The inverse-dynamics regressor on (Model, Data): τ = Y(q, v, v̇) π, linear in the inertial
parameters, and the joint friction regressor.

Per body B, π_B holds 10 parameters in Pinocchio's order (``Inertia.toDynamicParameters``):
[m, m p_BoBcm_x, m p_BoBcm_y, m p_BoBcm_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz], I = I_BBo_B the
rotational inertia about Bo expressed in B. With the RNEA's forward pass done (V_B, A_B of every node,
gravity as −g at the base), F_Bo_B = I_B A_B + V_B ×* I_B V_B = Φ(V_B, A_B) π_B with Φ 6×10, and the
columns of π_B in the row of velocity k of joint J (an ancestor of B, or B's own) are S_kᵀ X_JB* Φ."""
from dynamics_cy._spatial cimport cross_force_add, dot6, force_to_parent_add, inertia_mul, motion_to_child
from libc.math cimport tanh
from libc.string cimport memset


cdef inline void _unit_parameter(int c, double* mass, double* mc, double* I) noexcept nogil:
    """(m, m p_BoBcm, I_BBo) of the unit vector e_c of the 10 parameters (Pinocchio's order)."""
    memset(mc, 0, 3 * sizeof(double))
    memset(I, 0, 9 * sizeof(double))
    mass[0] = 1.0 if c == 0 else 0.0
    if 1 <= c <= 3:
        mc[c - 1] = 1.0
    elif c == 4:
        I[0] = 1.0
    elif c == 5:
        I[1] = I[3] = 1.0
    elif c == 6:
        I[4] = 1.0
    elif c == 7:
        I[2] = I[6] = 1.0
    elif c == 8:
        I[5] = I[7] = 1.0
    elif c == 9:
        I[8] = 1.0


cdef void frame_regressor(Model m, Data d, int n, const double* R_NF, const double* p_NF, double* Y,
                          int ld) noexcept nogil:
    """Adds into the nv×10 block at Y (row stride ld) the regressor of a rigid body whose frame F is
    fixed on node n at X_NF = (R_NF, p_NF) and whose parameters are about Fo in F: the generalized
    force it needs is that block times π_F. Needs the RNEA's forward pass (d.V, d.A in the node frames)."""
    cdef int c, k, t, p
    cdef double mass
    cdef double mc[3]
    cdef double I[9]
    cdef double V[6]
    cdef double A[6]
    cdef double h[6]
    cdef double f[6]
    cdef double blk[60]
    cdef double up[60]
    if n <= 0:
        return
    motion_to_child(R_NF, p_NF, d.V + 6 * n, V)
    motion_to_child(R_NF, p_NF, d.A + 6 * n, A)
    memset(blk, 0, 60 * sizeof(double))
    for c in range(10):                       # Φ(V, A) e_c, moved from Fo in F to No in N
        _unit_parameter(c, &mass, mc, I)
        inertia_mul(mass, mc, I, A, f)
        inertia_mul(mass, mc, I, V, h)
        cross_force_add(V, h, f)
        force_to_parent_add(R_NF, p_NF, f, blk + 6 * c)
    t = n
    while t > 0:
        for k in range(m.nvj[t]):
            for c in range(10):
                Y[(m.vs[t] + k) * ld + c] += dot6(d.S + 36 * t + 6 * k, blk + 6 * c)
        p = m.parent[t]
        if p > 0:
            memset(up, 0, 60 * sizeof(double))
            for c in range(10):
                force_to_parent_add(d.R_PB + 9 * t, d.p_PB + 3 * t, blk + 6 * c, up + 6 * c)
            for c in range(60):
                blk[c] = up[c]
        t = p


cdef void torque_regressor(Model m, Data d, double* Y) noexcept nogil:
    """Y (nv × 10·nbodies, row-major) with τ = Y π for π stacking π_B by BodyIndex (the world's
    columns and those of bodies welded to it are zero). Needs the RNEA's forward pass."""
    cdef int b, ld = 10 * m.nbodies
    memset(Y, 0, m.nv * ld * sizeof(double))
    for b in range(1, m.nbodies):
        frame_regressor(m, d, m.body_node[b], m.R_NB + 9 * b, m.p_NB + 3 * b, Y + 10 * b, ld)


cdef void friction_regressor(int nv, const double* v, double epsilon, double* Y) noexcept nogil:
    """Y (nv × 2nv) = [diag(v), diag(tanh(v/ε))]: τ_f = Y [b_v; b_c], viscous and Coulomb per velocity."""
    cdef int i
    memset(Y, 0, 2 * nv * nv * sizeof(double))
    for i in range(nv):
        Y[2 * nv * i + i] = v[i]
        Y[2 * nv * i + nv + i] = tanh(v[i] / epsilon)
