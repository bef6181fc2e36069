# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Jacobians on (Model, Data): the spatial Jacobian of a point fixed to a node, the bias spatial
accelerations (v̇ = 0) of every node and the translational Jacobian and bias acceleration J̇ v of a
point fixed in a frame, for whole-body control."""
from dynamics_cy._spatial cimport motion_to_child
from dynamics_cy._vec3 cimport cross3, matvec
from libc.string cimport memset


cdef void point_jacobian(Model m, Data d, int n, const double* p_WQ, double* J, int ld) noexcept nogil:
    """Writes the columns of the joints from node n to the world of J_WQ (6 x nv, row stride ld):
    the spatial velocity Jacobian of the point Q (given in W) fixed to node n, expressed in W."""
    _point_columns(m, d, n, p_WQ, J, J + 3 * ld, ld)


cdef inline void _point_columns(Model m, Data d, int n, const double* p_WQ, double* Jw, double* Jv,
                                int ld) noexcept nogil:
    """The columns of the joints from node n to the world: w_s into the 3 rows at Jw (NULL: none) and
    v_s + w_s × (p_WQ − p_WJo) into the 3 rows at Jv (row stride ld), for each motion subspace column
    s = [w_s; v_s] of joint J in W."""
    cdef int j = n, k, col
    cdef double w[3]
    cdef double vo[3]
    cdef double r[3]
    cdef double wr[3]
    cdef double* s
    while j > 0:
        for k in range(m.nvj[j]):
            s = d.S + 36 * j + 6 * k
            matvec(d.R_WB + 9 * j, s, w)
            matvec(d.R_WB + 9 * j, s + 3, vo)
            r[0] = p_WQ[0] - d.p_WB[3 * j]
            r[1] = p_WQ[1] - d.p_WB[3 * j + 1]
            r[2] = p_WQ[2] - d.p_WB[3 * j + 2]
            cross3(w, r, wr)
            col = m.vs[j] + k
            if Jw != NULL:
                Jw[col], Jw[ld + col], Jw[2 * ld + col] = w[0], w[1], w[2]
            Jv[col], Jv[ld + col], Jv[2 * ld + col] = vo[0] + wr[0], vo[1] + wr[1], vo[2] + wr[2]
        j = m.parent[j]


cdef void bias_spatial_accelerations(Model m, Data d) noexcept nogil:
    """d.A[t] = the spatial acceleration of node t for v̇ = 0 (body coordinates, no gravity).
    Needs positions() and velocities()."""
    cdef int t, k
    memset(d.A, 0, 6 * sizeof(double))
    for t in range(1, m.nb):
        motion_to_child(d.R_PB + 9 * t, d.p_PB + 3 * t, d.A + 6 * m.parent[t], d.A + 6 * t)
        for k in range(6):
            d.A[6 * t + k] += d.c[6 * t + k]


cdef void point_translational(Model m, Data d, int f, const double* p_FQ, double* J, double* a_W) noexcept nogil:
    """Rows 3 x nv of Jv_WQ_W into J (zeroed by the caller; NULL: none) and aBias_WQ_W into a_W for
    the point Q fixed in frame f: a_Q = a_Bo + α × r + w × (v_Bo + w × r) with r = p_BoQ (classical
    acceleration from the spatial one). Needs bias_spatial_accelerations()."""
    cdef int n = m.frame_node[f], s
    cdef double r[3]
    cdef double p_WQ[3]
    cdef double a[3]
    cdef double x[3]
    cdef double y[3]
    cdef double* A = d.A + 6 * n
    cdef double* V = d.V + 6 * n
    matvec(m.R_NF + 9 * f, p_FQ, r)
    r[0] += m.p_NF[3 * f]
    r[1] += m.p_NF[3 * f + 1]
    r[2] += m.p_NF[3 * f + 2]
    matvec(d.R_WB + 9 * n, r, p_WQ)
    for s in range(3):
        p_WQ[s] += d.p_WB[3 * n + s]
    cross3(V, r, x)                       # w × r
    x[0] += V[3]
    x[1] += V[4]
    x[2] += V[5]                          # v_Q in B
    cross3(V, x, y)                       # w × v_Q
    cross3(A, r, x)                       # α × r
    for s in range(3):
        a[s] = A[3 + s] + x[s] + y[s]
    matvec(d.R_WB + 9 * n, a, a_W)
    if J != NULL:
        _point_columns(m, d, n, p_WQ, NULL, J, m.nv)
