# The compiled model (read-only after Finalize, shared by every user) and the per-user workspace.

cdef class Model:
    cdef readonly int nb, nq, nv, nf, nbodies
    cdef readonly list node_joint    # the name of each node's joint, for messages
    # nodes: the world (0) and each body with a moving inboard joint, depth-first (parent[t] < t)
    cdef int* parent
    cdef int* jtype                  # JointType (_joints.pxd)
    cdef int* qs                     # first position of the node's joint in q
    cdef int* vs                     # first velocity in v
    cdef int* nvj                    # the joint's number of velocities
    cdef int* axis_code              # ±(k+1): revolute about ±e_k with X_MB = identity (the fast path), else 0
    cdef int* mb_identity            # 1 when X_MB is exactly the identity
    cdef double* R_PF                # X_PF: the joint's frame F on the parent node P
    cdef double* p_PF
    cdef double* R_MB                # X_MB: the node's frame B on the joint's frame M
    cdef double* p_MB
    cdef double* axis                # the joint's parameters (_joints.pxd): unit axis â and screw lead ℓ
    cdef double* mass                # node inertia (merged welded bodies) about Bo in B: m,
    cdef double* mcom                # the first moment of mass m p_BoBcm,
    cdef double* Io                  # and the rotational inertia
    cdef double* armature            # per velocity: actuators' reflected inertia ρ² I_r, on M's diagonal
    cdef double g[3]
    # frames and bodies placed on nodes
    cdef int* frame_node
    cdef double* R_NF
    cdef double* p_NF
    cdef int* body_node
    cdef double* R_NB
    cdef double* p_NB
    cdef double* body_mass           # each body's own inertia about Bo in B (what the nodes sum)
    cdef double* body_mcom
    cdef double* body_I
    # bodies and joints, for the joint reaction forces (_reaction.pyx)
    cdef readonly int nj
    cdef int* body_parent            # the inboard body (-1 for the world)
    cdef int* body_order             # depth-first: every body after its inboard body
    cdef int* joint_child            # per joint: its child body C
    cdef double* R_CJ                # X_CJc: the joint's frame on the child
    cdef double* p_CJ

    cdef void _merge_node_inertia(self, int n) noexcept nogil


cdef class Data:
    cdef readonly Model model
    cdef double* R_PB                # X_PB(q) of each node on its parent
    cdef double* p_PB
    cdef double* R_WB                # X_WB(q)
    cdef double* p_WB
    cdef double* S                   # motion subspace in B, nvj columns of 6
    cdef double* Sw                  # ... at the world origin in W
    cdef double* V                   # spatial velocity in B
    cdef double* c                   # velocity-product acceleration cJ + V × S v, in B
    cdef double* cw                  # ... in W
    cdef double* A                   # spatial acceleration in B (or W for ABA)
    cdef double* F                   # spatial force in B
    cdef double* fext                # applied spatial force in B
    cdef double* Ic_m                # composite (subtree) inertia: mass, first moment, rotational
    cdef double* Ic_mcom
    cdef double* Ic_I
    cdef double* IA                  # articulated inertia (6×6) and bias force, in W
    cdef double* pA
    cdef double* U
    cdef double* Dinv
    cdef double* u
    cdef int* path                   # scratch: a node's ancestors
    cdef double* Fb                  # per body: the spatial force it transmits inboard, at Wo in W


cdef inline void subtree_sums(Model m, double* mass, double* mcom, double* I) noexcept nogil:
    """Composite inertias: each node's (mass, first moment, rotational inertia) rows ← their sums over
    its subtree (the moving nodes below the world; row 0 left alone). I may be NULL (not summed)."""
    cdef int t, k, p
    for t in range(m.nb - 1, 0, -1):
        p = m.parent[t]
        if p > 0:
            mass[p] += mass[t]
            for k in range(3):
                mcom[3 * p + k] += mcom[3 * t + k]
            if I != NULL:
                for k in range(9):
                    I[9 * p + k] += I[9 * t + k]
