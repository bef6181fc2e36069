# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The mass matrix M(q) on (Model, Data) by the composite-rigid-body algorithm in world coordinates,
and the motion subspaces at the world origin it (and the articulated-body algorithm) works with."""
from dynamics_cy._model cimport subtree_sums
from dynamics_cy._spatial cimport dot6, inertia_mul, motion_to_world, rigid_inertia_to_parent_add
from libc.string cimport memset


cdef void world_subspaces(Model m, Data d) noexcept nogil:
    """Sw: the motion subspaces at the world origin in W. Needs positions()."""
    cdef int t, k
    for t in range(1, m.nb):
        for k in range(m.nvj[t]):
            motion_to_world(d.R_WB + 9 * t, d.p_WB + 3 * t, d.S + 36 * t + 6 * k, d.Sw + 36 * t + 6 * k)


cdef void crba(Model m, Data d, double* M) noexcept nogil:
    """M(q) (nv x nv, row-major): motion subspaces and composite inertias about the world origin, so
    M_ji = S_jᵀ (Ic_i S_i) needs no transforms up the tree. Needs positions()."""
    cdef int t, k, kk, j, nv = m.nv, row, col
    cdef double Fc[6]
    cdef double* Sw
    memset(M, 0, nv * nv * sizeof(double))
    memset(d.Ic_m, 0, m.nb * sizeof(double))
    memset(d.Ic_mcom, 0, 3 * m.nb * sizeof(double))
    memset(d.Ic_I, 0, 9 * m.nb * sizeof(double))
    world_subspaces(m, d)
    for t in range(1, m.nb):
        rigid_inertia_to_parent_add(d.R_WB + 9 * t, d.p_WB + 3 * t, m.mass[t], m.mcom + 3 * t,
                                    m.Io + 9 * t, d.Ic_m + t, d.Ic_mcom + 3 * t, d.Ic_I + 9 * t)
    subtree_sums(m, d.Ic_m, d.Ic_mcom, d.Ic_I)
    cdef const int* vs = m.vs
    cdef const int* nvj = m.nvj
    cdef const int* parent = m.parent
    cdef const double* Sw_all = d.Sw
    for t in range(1, m.nb):
        Sw = d.Sw + 36 * t
        for k in range(nvj[t]):
            col = vs[t] + k
            inertia_mul(d.Ic_m[t], d.Ic_mcom + 3 * t, d.Ic_I + 9 * t, Sw + 6 * k, Fc)
            for kk in range(nvj[t]):
                M[nv * (vs[t] + kk) + col] = dot6(Sw + 6 * kk, Fc)
            j = parent[t]
            while j > 0:
                for kk in range(nvj[j]):
                    row = vs[j] + kk
                    M[nv * row + col] = dot6(Sw_all + 36 * j + 6 * kk, Fc)
                    M[nv * col + row] = M[nv * row + col]
                j = parent[j]
    for k in range(nv):                 # reflected inertia ρ² I_r on the diagonal, as in Drake
        M[nv * k + k] += m.armature[k]
