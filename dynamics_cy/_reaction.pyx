# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Joint reaction forces on (Model, Data): the backward pass of the recursive Newton–Euler algorithm
per body, so that a weld (merged into its node for the other algorithms) transmits its own force.

For each body B, with A_WB and V_WB from the forward pass (gravity as the base's −g acceleration):
F_B = M_B A_B + V_B ×* M_B V_B − F_app_B, summed at the world origin over B's outboard subtree; joint j
with child body C then carries F_CJc_Jc, the spatial force on C at Jc expressed in Jc (Drake's
reaction_forces convention): the total the joint applies to the subtree outboard of it.
"""
from dynamics_cy._spatial cimport cross_force_add, force_to_world, inertia_mul, matmul, motion_to_child
from dynamics_cy._vec3 cimport cross3, matTvec, matvec


cdef void body_frame_pose(Model m, Data d, int b, double* R_WB, double* p_WB) noexcept nogil:
    """X_WB of body b from its node's pose. Needs positions()."""
    cdef int n = m.body_node[b]
    matmul(d.R_WB + 9 * n, m.R_NB + 9 * b, R_WB)
    matvec(d.R_WB + 9 * n, m.p_NB + 3 * b, p_WB)
    p_WB[0] += d.p_WB[3 * n]
    p_WB[1] += d.p_WB[3 * n + 1]
    p_WB[2] += d.p_WB[3 * n + 2]


cdef void reaction_forces(Model m, Data d, const double* F_W, double* out) noexcept nogil:
    """out (nj × 6) = F_CJc_Jc = [τ; f] of every joint, by JointIndex, for the accelerations of the last
    rnea() forward pass (d.A, with gravity) and the applied body forces F_Bo_W (rows of F_W, or NULL).
    Needs positions(), velocities() and rnea(..., tau=NULL)."""
    cdef int i, b, n, j, k
    cdef double R[9]
    cdef double RJ[9]
    cdef double p[3]
    cdef double pJ[3]
    cdef double a[6]
    cdef double V[6]
    cdef double f[6]
    cdef double hV[6]
    cdef double x[3]
    cdef double* F
    cdef double* o
    for b in range(m.nbodies):
        n = m.body_node[b]
        F = d.Fb + 6 * b
        motion_to_child(m.R_NB + 9 * b, m.p_NB + 3 * b, d.A + 6 * n, a)      # A_WB and V_WB in B at Bo
        motion_to_child(m.R_NB + 9 * b, m.p_NB + 3 * b, d.V + 6 * n, V)
        inertia_mul(m.body_mass[b], m.body_mcom + 3 * b, m.body_I + 9 * b, a, f)
        inertia_mul(m.body_mass[b], m.body_mcom + 3 * b, m.body_I + 9 * b, V, hV)
        cross_force_add(V, hV, f)
        body_frame_pose(m, d, b, R, p)
        force_to_world(R, p, f, F)
        if F_W != NULL:                                                      # − F_app_Bo_W, shifted to Wo
            cross3(p, F_W + 6 * b + 3, x)
            for k in range(3):
                F[k] -= F_W[6 * b + k] + x[k]
                F[3 + k] -= F_W[6 * b + 3 + k]
    for i in range(m.nbodies - 1, 0, -1):                                   # outboard subtrees, at Wo
        b = m.body_order[i]
        if m.body_parent[b] >= 0:
            for k in range(6):
                d.Fb[6 * m.body_parent[b] + k] += d.Fb[6 * b + k]
    for j in range(m.nj):
        b = m.joint_child[j]
        F = d.Fb + 6 * b
        o = out + 6 * j
        body_frame_pose(m, d, b, R, p)
        matmul(R, m.R_CJ + 9 * j, RJ)                                        # X_WJc = X_WC X_CJc
        matvec(R, m.p_CJ + 3 * j, pJ)
        pJ[0] += p[0]
        pJ[1] += p[1]
        pJ[2] += p[2]
        cross3(pJ, F + 3, x)                                                 # τ at Jc = τ at Wo − p_WoJc × f
        x[0], x[1], x[2] = F[0] - x[0], F[1] - x[1], F[2] - x[2]
        matTvec(RJ, x, o)
        matTvec(RJ, F + 3, o + 3)
