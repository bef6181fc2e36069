# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The model/data split, as Pinocchio and MuJoCo make it.

``Model`` holds the topology and parameters in flat C arrays, built once by ``MultibodyPlant.Finalize()``
(from topology.compile_arrays) and shared by every user of the plant: the facade, the control loop,
controllers, the simulator, viewers and planners all read the same instance, so a parameter changed
through it (``set_body_inertia``) is seen by all. The algorithms never write it.

``Data`` is one user's workspace: every per-node quantity an algorithm computes, preallocated for its
model. Each kernels object owns one; use one per thread. Algorithms are functions of ``(Model, Data)``
in their own modules (_kinematics, _rnea, _crba, _aba, _jacobians, _com).

Node quantities are in the node's body frame B about Bo (Featherstone's body coordinates); rotation
matrices are row-major 3×3; the motion subspace S of node t is nvj[t] columns of 6 doubles.
"""
from dynamics_cy._arrays cimport alloc_f64, alloc_i32, copy_f64, new_f64, new_i32
from dynamics_cy._joints cimport REVOLUTE
from dynamics_cy._spatial cimport rigid_inertia_to_parent_add
from libc.math cimport fabs
from libc.stdlib cimport free
from libc.string cimport memset


cdef class Model:
    """The read-only compiled model; ``Model(arrays)`` with arrays from topology.compile_arrays()."""

    def __cinit__(self):
        self.nb = 0

    def __init__(self, arrays):
        a = arrays
        cdef int nb = a.nb, nf = a.nf, nbodies = a.nbodies, t, k
        self.nb, self.nq, self.nv, self.nf, self.nbodies = nb, a.nq, a.nv, nf, nbodies
        self.node_joint = list(a.node_joint)
        self.parent = new_i32(a.parent, nb, "parent")
        self.jtype = new_i32(a.jtype, nb, "jtype")
        self.qs = new_i32(a.qs, nb, "qs")
        self.vs = new_i32(a.vs, nb, "vs")
        self.nvj = new_i32(a.nvj, nb, "nvj")
        self.frame_node = new_i32(a.frame_node, nf, "frame_node")
        self.body_node = new_i32(a.body_node, nbodies, "body_node")
        self.axis_code = alloc_i32(nb)
        self.mb_identity = alloc_i32(nb)
        self.R_PF = new_f64(a.R_PF, 9 * nb)
        self.p_PF = new_f64(a.p_PF, 3 * nb)
        self.R_MB = new_f64(a.R_MB, 9 * nb)
        self.p_MB = new_f64(a.p_MB, 3 * nb)
        self.axis = new_f64(a.axis, 4 * nb)
        self.armature = new_f64(a.armature, self.nv)
        self.R_NF = new_f64(a.R_NF, 9 * nf)
        self.p_NF = new_f64(a.p_NF, 3 * nf)
        self.R_NB = new_f64(a.R_NB, 9 * nbodies)
        self.p_NB = new_f64(a.p_NB, 3 * nbodies)
        self.body_mass = new_f64(a.body_mass, nbodies)
        self.body_mcom = new_f64(a.body_mcom, 3 * nbodies)
        self.body_I = new_f64(a.body_I, 9 * nbodies)
        self.nj = a.nj
        self.body_parent = new_i32(a.body_parent, nbodies, "body_parent")
        self.body_order = new_i32(a.body_order, nbodies, "body_order")
        self.joint_child = new_i32(a.joint_child, a.nj, "joint_child")
        self.R_CJ = new_f64(a.R_CJ, 9 * a.nj)
        self.p_CJ = new_f64(a.p_CJ, 3 * a.nj)
        self.mass = alloc_f64(nb)
        self.mcom = alloc_f64(3 * nb)
        self.Io = alloc_f64(9 * nb)
        copy_f64(self.g, a.gravity, 3)
        for t in range(nb):
            self._merge_node_inertia(t)
            self.mb_identity[t] = 1
            for k in range(9):
                if self.R_MB[9 * t + k] != (1.0 if k % 4 == 0 else 0.0):
                    self.mb_identity[t] = 0
            for k in range(3):
                if self.p_MB[3 * t + k] != 0.0:
                    self.mb_identity[t] = 0
            if self.mb_identity[t] and self.jtype[t] == REVOLUTE:
                for k in range(3):
                    if fabs(self.axis[4 * t + k]) == 1.0:
                        self.axis_code[t] = (k + 1) if self.axis[4 * t + k] > 0 else -(k + 1)

    cdef void _merge_node_inertia(self, int n) noexcept nogil:
        """Node n's (m, mc, I) about No: the sum of its bodies' inertias placed at X_NB."""
        cdef int b
        self.mass[n] = 0.0
        memset(self.mcom + 3 * n, 0, 3 * sizeof(double))
        memset(self.Io + 9 * n, 0, 9 * sizeof(double))
        for b in range(self.nbodies):
            if self.body_node[b] == n:
                rigid_inertia_to_parent_add(self.R_NB + 9 * b, self.p_NB + 3 * b, self.body_mass[b],
                                            self.body_mcom + 3 * b, self.body_I + 9 * b,
                                            self.mass + n, self.mcom + 3 * n, self.Io + 9 * n)

    def set_body_inertia(self, int body, double mass, p_BoBcm_B, I_BBo_B):
        """Sets body ``body``'s (BodyIndex) mass, centre of mass p_BoBcm_B (3) and rotational inertia
        I_BBo_B (3×3, about Bo in B), e.g. a payload: every kernels object of the plant sees it at its
        next call. Call it between kernel calls, not while another thread computes."""
        cdef double mc[3]
        cdef double I[9]
        cdef int k
        if not 0 <= body < self.nbodies:
            raise ValueError(f"body index {body} is out of range [0, {self.nbodies})")
        if not mass >= 0.0:
            raise ValueError(f"mass must be >= 0, got {mass}")
        copy_f64(mc, p_BoBcm_B, 3)
        copy_f64(I, I_BBo_B, 9)
        self.body_mass[body] = mass
        for k in range(3):
            self.body_mcom[3 * body + k] = mass * mc[k]
        for k in range(9):
            self.body_I[9 * body + k] = I[k]
        self._merge_node_inertia(self.body_node[body])

    def body_mass_of(self, int body):
        """The mass of body ``body`` (BodyIndex) as the kernels use it."""
        if not 0 <= body < self.nbodies:
            raise ValueError(f"body index {body} is out of range [0, {self.nbodies})")
        return self.body_mass[body]

    def __dealloc__(self):
        if self.nb == 0:
            return
        free(self.parent); free(self.jtype); free(self.qs); free(self.vs); free(self.nvj); free(self.axis_code)
        free(self.mb_identity); free(self.frame_node); free(self.body_node)
        free(self.R_PF); free(self.p_PF); free(self.R_MB); free(self.p_MB); free(self.axis)
        free(self.mass); free(self.mcom); free(self.Io); free(self.armature)
        free(self.R_NF); free(self.p_NF); free(self.R_NB); free(self.p_NB)
        free(self.body_mass); free(self.body_mcom); free(self.body_I)
        free(self.body_parent); free(self.body_order); free(self.joint_child); free(self.R_CJ); free(self.p_CJ)


cdef class Data:
    """One user's workspace for ``model``: everything the algorithms compute, allocated here once."""

    def __cinit__(self):
        self.R_PB = NULL

    def __init__(self, Model model not None):
        cdef int nb = model.nb, k
        self.model = model
        self.R_PB = alloc_f64(9 * nb)
        self.p_PB = alloc_f64(3 * nb)
        self.R_WB = alloc_f64(9 * nb)
        self.p_WB = alloc_f64(3 * nb)
        self.S = alloc_f64(36 * nb)
        self.Sw = alloc_f64(36 * nb)
        self.V = alloc_f64(6 * nb)
        self.c = alloc_f64(6 * nb)
        self.cw = alloc_f64(6 * nb)
        self.A = alloc_f64(6 * nb)
        self.F = alloc_f64(6 * nb)
        self.fext = alloc_f64(6 * nb)
        self.Ic_m = alloc_f64(nb)
        self.Ic_mcom = alloc_f64(3 * nb)
        self.Ic_I = alloc_f64(9 * nb)
        self.IA = alloc_f64(36 * nb)
        self.pA = alloc_f64(6 * nb)
        self.U = alloc_f64(36 * nb)
        self.Dinv = alloc_f64(36 * nb)
        self.u = alloc_f64(6 * nb)
        self.path = alloc_i32(nb)
        self.Fb = alloc_f64(6 * model.nbodies)
        for k in range(3):
            self.R_WB[4 * k] = 1.0
            self.R_PB[4 * k] = 1.0

    def __dealloc__(self):
        if self.R_PB == NULL:
            return
        free(self.R_PB); free(self.p_PB); free(self.R_WB); free(self.p_WB); free(self.S); free(self.Sw)
        free(self.V); free(self.c); free(self.cw); free(self.A); free(self.F); free(self.fext)
        free(self.Ic_m); free(self.Ic_mcom); free(self.Ic_I); free(self.IA); free(self.pA)
        free(self.U); free(self.Dinv); free(self.u); free(self.path); free(self.Fb)
