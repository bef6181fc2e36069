# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The centre of mass on (Model, Data): its position, its Jacobian and J̇ v, from subtree masses and
first moments of mass."""
from dynamics_cy._model cimport subtree_sums
from dynamics_cy._vec3 cimport cross3, matvec
from libc.string cimport memset


cdef int center_of_mass(Model m, Data d, double* p_W, double* J, double* a_W) noexcept nogil:
    """p_WCcm, Jv_WCcm_W (3 x nv) and aBias_WCcm_W; uses d.Ic_m, d.Ic_mcom as subtree mass and first
    moment Σ m_i p_WCi. Needs bias_spatial_accelerations(). Returns 1 when the total mass is 0."""
    cdef int t, s, p, col, ld = m.nv
    cdef double mtot = m.mass[0], mt
    cdef double c[3]
    cdef double x[3]
    cdef double y[3]
    cdef double z[3]
    cdef double w[3]
    cdef double vo[3]
    cdef double* A
    cdef double* V
    cdef double* mc
    cdef double* S
    d.Ic_m[0] = m.mass[0]
    d.Ic_mcom[0], d.Ic_mcom[1], d.Ic_mcom[2] = m.mcom[0], m.mcom[1], m.mcom[2]      # bodies welded to the world
    a_W[0], a_W[1], a_W[2] = 0.0, 0.0, 0.0
    c[0], c[1], c[2] = m.mcom[0], m.mcom[1], m.mcom[2]
    for t in range(1, m.nb):
        mt = m.mass[t]
        mc = m.mcom + 3 * t
        mtot += mt
        d.Ic_m[t] = mt
        matvec(d.R_WB + 9 * t, mc, x)
        for s in range(3):
            d.Ic_mcom[3 * t + s] = mt * d.p_WB[3 * t + s] + x[s]
            c[s] += d.Ic_mcom[3 * t + s]
        # Σ m a_bias over the node: m a_lin + α × mc + w × (m v_Bo + w × mc), in B then W
        A = d.A + 6 * t
        V = d.V + 6 * t
        cross3(V, mc, x)
        for s in range(3):
            x[s] += mt * V[3 + s]
        cross3(V, x, y)
        cross3(A, mc, x)
        for s in range(3):
            z[s] = mt * A[3 + s] + x[s] + y[s]
        matvec(d.R_WB + 9 * t, z, x)
        for s in range(3):
            a_W[s] += x[s]
    if not mtot > 0.0:
        return 1
    for s in range(3):
        p_W[s] = c[s] / mtot
        a_W[s] /= mtot
    subtree_sums(m, d.Ic_m, d.Ic_mcom, NULL)
    memset(J, 0, 3 * ld * sizeof(double))
    for t in range(1, m.nb):
        for s in range(m.nvj[t]):
            S = d.S + 36 * t + 6 * s
            matvec(d.R_WB + 9 * t, S, w)
            matvec(d.R_WB + 9 * t, S + 3, vo)
            for p in range(3):
                x[p] = d.Ic_mcom[3 * t + p] - d.Ic_m[t] * d.p_WB[3 * t + p]
            cross3(w, x, y)
            col = m.vs[t] + s
            J[col] = (d.Ic_m[t] * vo[0] + y[0]) / mtot
            J[ld + col] = (d.Ic_m[t] * vo[1] + y[1]) / mtot
            J[2 * ld + col] = (d.Ic_m[t] * vo[2] + y[2]) / mtot
    return 0
