# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The real-time kernel API: ``Kernels`` is (the plant's shared Model, its own Data) with one method per
query, each checking its numpy arguments and then running the algorithms GIL-free and allocation-free."""
cimport numpy as cnp

from dynamics_cy._aba cimport aba
from dynamics_cy._arrays cimport alloc_i32, f64, f64_3d, f64_or_null
from dynamics_cy._com cimport center_of_mass
from dynamics_cy._crba cimport crba_q
from dynamics_cy._jacobians cimport bias_spatial_accelerations, point_jacobian, point_translational
from dynamics_cy._linalg cimport cholesky, cholesky_inverse_in_place
from dynamics_cy._kinematics cimport (body_pose, body_velocity, frame_pose, positions, positions_to, velocities,
                                     velocity_to_qdot)
from dynamics_cy._model cimport Data, Model
from dynamics_cy._reaction cimport reaction_forces
from dynamics_cy._regressor cimport frame_regressor, friction_regressor, torque_regressor
from dynamics_cy._rnea cimport gravity, load_body_forces, rnea
from dynamics_cy._spatial cimport matrix_quaternion
from dynamics_cy._vec3 cimport matvec
from dynamics_cy._facade import singular_message
from dynamics_cy.errors import GimbalLockError, SingularInertiaError
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

cnp.import_array()


cdef inline void _load_state(Model m, Data d, const double* q, const double* v, const double* F_W) noexcept nogil:
    """positions(q), velocities(v) and, unless F_W is NULL, the body forces F_W."""
    positions(m, d, q)
    velocities(m, d, q, v)
    if F_W != NULL:
        load_body_forces(m, d, F_W)


cdef inline int _ltdl_factor(double* M, const int* lam, int n) noexcept nogil:
    """M (n×n, row-major) = Lᵀ D L in place over the tree λ (RBDA Table 6.3): D on the diagonal, L
    (unit diagonal) at (k, i) for i on k's path; 0, or 1 + the first velocity whose pivot is not positive."""
    cdef int k, i, j
    cdef double a
    for k in range(n - 1, -1, -1):
        if not M[k * n + k] > 0.0:
            return k + 1
        i = lam[k]
        while i != -1:
            a = M[k * n + i] / M[k * n + k]
            j = i
            while j != -1:
                M[i * n + j] -= a * M[k * n + j]
                j = lam[j]
            M[k * n + i] = a
            i = lam[i]
    return 0


cdef inline void _ltdl_solve(const double* F, const int* lam, int n, double* x) noexcept nogil:
    """x ← M⁻¹ x for M = Lᵀ D L (_ltdl_factor's F): Lᵀ y = x (leaves first), y / D, then L x = y."""
    cdef int i, j
    for i in range(n - 1, -1, -1):
        j = lam[i]
        while j != -1:
            x[j] -= F[i * n + j] * x[i]
            j = lam[j]
    for i in range(n):
        x[i] /= F[i * n + i]
    for i in range(n):
        j = lam[i]
        while j != -1:
            x[i] -= F[i * n + j] * x[j]
            j = lam[j]


cdef class Kernels:
    """Allocation-free dynamics for the control loop; get one with ``plant.kernels()``.

    Every method takes C-contiguous float64 numpy arrays, writes its result into ``out``, releases
    the GIL while computing and allocates nothing. Wrong shapes or dtypes raise ValueError. Each
    Kernels object shares the plant's one Model and owns its Data (workspace): use one per thread.

    ``mass_matrix_cholesky`` and ``mass_matrix_inverse`` give M = L Lᵀ and M⁻¹; dynamics_cy.linalg
    solves with L (M⁻¹ b, Λ = (J M⁻¹ Jᵀ)⁻¹) and writes rotation and pose errors, as allocation-free.
    ``mass_matrix_ldlt`` and ``ldlt_solve`` factor and solve M along the tree (no fill-in: a humanoid).

    Conventions (Drake's): ``gravity`` writes τ_g, the generalized force of gravity, so gravity
    compensation is -τ_g; ``inverse_dynamics`` writes M v̇ + C v - τ_g, the torque that produces
    v̇; ``forward_dynamics`` is its inverse. Joint damping is in neither.
    """
    cdef readonly Model model
    cdef readonly Data data
    cdef readonly int nq, nv, num_bodies, num_frames
    cdef dict _frame_ids
    cdef int* _lam                   # per velocity i: λ(i), the velocity before it in the tree (-1: none)
    cdef bint _tree_ordered          # λ(i) < i for every i: M's LᵀDL factor has no fill-in

    def __init__(self, Model model not None, dict frame_ids):
        """Kernels over the shared ``model`` with a new workspace; frame_ids maps a Frame to its index."""
        cdef int t, k, i, p
        self.model = model
        self.data = Data(model)
        self.nq, self.nv, self.num_bodies, self.num_frames = model.nq, model.nv, model.nbodies, model.nf
        self._frame_ids = frame_ids
        self._lam = alloc_i32(model.nv)
        self._tree_ordered = True
        for t in range(1, model.nb):
            p = model.parent[t]
            for k in range(model.nvj[t]):
                i = model.vs[t] + k
                self._lam[i] = i - 1 if k > 0 else (model.vs[p] + model.nvj[p] - 1 if p > 0 else -1)
                self._tree_ordered = self._tree_ordered and self._lam[i] < i

    def __dealloc__(self):
        free(self._lam)

    cdef int _frame(self, object frame) except -1:
        cdef object f = frame
        if not isinstance(frame, int):
            try:
                f = self._frame_ids.get(frame)
            except TypeError:
                f = None
            if f is None:
                raise ValueError(f"{frame!r} is not a frame of this plant (pass a Frame or FrameIndex)")
        if f < 0 or f >= self.num_frames:
            raise ValueError(f"frame index {f} is out of range [0, {self.num_frames})")
        return f

    def gravity(self, q, out):
        """out = τ_g(q) (nv); gravity compensation is -out."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* op = f64(out, self.nv, -1, True, "out")
        with nogil:
            positions(m, d, qp)
            gravity(m, d, op)

    def inverse_dynamics(self, q, v, vdot, out, body_forces=None):
        """out = M(q) v̇ + C(q, v) v - τ_g(q) [- Σ J_Bᵀ F_Bo_W for body_forces (num_bodies, 6)]."""
        self._dynamics(q, v, vdot, "vdot", out, body_forces, False)

    def forward_dynamics(self, q, v, tau, out, body_forces=None):
        """out = v̇ with M v̇ + C v - τ_g = tau [+ Σ J_Bᵀ F_Bo_W], by the articulated-body algorithm."""
        self._dynamics(q, v, tau, "tau", out, body_forces, True)

    cdef int _motion(self, q, v, vdot) except -1:
        """The bodies' velocities and accelerations for (q, v, v̇) under gravity in the workspace (the
        forward pass of the inverse dynamics, which the reaction forces and the regressors read)."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* vp = f64(v, self.nv, -1, False, "v")
        cdef double* ap = f64(vdot, self.nv, -1, False, "vdot")
        with nogil:
            _load_state(m, d, qp, vp, NULL)
            rnea(m, d, ap, True, True, False, NULL)
        return 0

    cdef int _dynamics(self, q, v, x, str x_name, out, body_forces, bint forward) except -1:
        """Inverse (x = v̇, RNEA) or forward (x = τ, ABA) dynamics at (q, v) with optional body forces."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* vp = f64(v, self.nv, -1, False, "v")
        cdef double* xp = f64(x, self.nv, -1, False, x_name)
        cdef double* op = f64(out, self.nv, -1, True, "out")
        cdef double* fp = f64_or_null(body_forces, self.num_bodies, 6, "body_forces")
        cdef int bad = 0
        with nogil:
            _load_state(m, d, qp, vp, fp)
            if forward:
                bad = aba(m, d, xp, True, fp != NULL, op)
            else:
                rnea(m, d, xp, True, True, fp != NULL, op)
        if bad:
            raise SingularInertiaError(singular_message(m, bad))
        return 0

    def reaction_forces(self, q, v, vdot, out, body_forces=None):
        """out (num_joints, 6) = F_CJc_Jc = [τ; f] per JointIndex: the spatial force each joint applies
        on its child body C at its child frame's origin Jc, expressed in Jc (Drake's reaction_forces
        port), for the accelerations vdot under gravity [and the applied F_Bo_W of body_forces
        (num_bodies, 6)]. Welds included: a wrist force/torque sensor's reading."""
        cdef Model m = self.model
        cdef Data d = self.data
        self._motion(q, v, vdot)
        cdef double* op = f64(out, m.nj, 6, True, "out")
        cdef double* fp = f64_or_null(body_forces, self.num_bodies, 6, "body_forces")
        with nogil:
            reaction_forces(m, d, fp, op)

    def torque_regressor(self, q, v, vdot, out):
        """out (nv, 10 num_bodies) = Y(q, v, v̇) with M v̇ + C v − τ_g = Y π (reflected inertia aside),
        π stacking per BodyIndex B the 10 parameters [m, m p_BoBcm_B, I_xx, I_xy, I_yy, I_xz, I_yz,
        I_zz] of I_BBo_B (Pinocchio's order); the world's block is zero."""
        cdef Model m = self.model
        cdef Data d = self.data
        self._motion(q, v, vdot)
        cdef double* op = f64(out, self.nv, 10 * self.num_bodies, True, "out")
        with nogil:
            torque_regressor(m, d, op)

    def payload_regressor(self, q, v, vdot, frame, out):
        """out (nv, 10) = Y_F: a payload rigidly attached at frame F with parameters π_F (the same
        order, about Fo in F) adds Y_F π_F to the inverse dynamics."""
        cdef Model m = self.model
        cdef Data d = self.data
        self._motion(q, v, vdot)
        cdef double* op = f64(out, self.nv, 10, True, "out")
        cdef int f = self._frame(frame)
        with nogil:
            memset(op, 0, 10 * m.nv * sizeof(double))
            frame_regressor(m, d, m.frame_node[f], m.R_NF + 9 * f, m.p_NF + 3 * f, op, 10)

    def friction_regressor(self, v, out, double epsilon=1e-2):
        """out (nv, 2 nv) = [diag(v), diag(tanh(v/ε))]: the joint friction τ_f = out @ [b_v; b_c]
        (viscous b_v, Coulomb b_c with a smooth sign of width ε > 0, per velocity)."""
        cdef double* vp = f64(v, self.nv, -1, False, "v")
        cdef double* op = f64(out, self.nv, 2 * self.nv, True, "out")
        if not epsilon > 0.0:
            raise ValueError(f"friction_regressor: epsilon must be positive, got {epsilon}")
        with nogil:
            friction_regressor(self.nv, vp, epsilon, op)

    def bias(self, q, v, out):
        """out = C(q, v) v, the Coriolis, centrifugal and gyroscopic terms (no gravity)."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* vp = f64(v, self.nv, -1, False, "v")
        cdef double* op = f64(out, self.nv, -1, True, "out")
        with nogil:
            _load_state(m, d, qp, vp, NULL)
            rnea(m, d, NULL, True, False, False, op)

    def mass_matrix(self, q, out):
        """out = M(q) (nv, nv) by the composite-rigid-body algorithm."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* op = f64(out, self.nv, self.nv, True, "out")
        with nogil:
            crba_q(m, d, qp, op)

    cdef double* _factor_mass(self, q, out, str what) except NULL:
        """out = M(q) factored in place (the lower triangle L, M = L Lᵀ); SingularInertiaError if not SPD."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* op = f64(out, self.nv, self.nv, True, "out")
        cdef int bad
        with nogil:
            crba_q(m, d, qp, op)
            bad = cholesky(op, m.nv)
        if bad:
            raise SingularInertiaError(f"{what}: M(q) is not positive definite at velocity {bad - 1} "
                                       "(a joint that moves no mass or inertia)")
        return op

    def mass_matrix_cholesky(self, q, out):
        """out (nv, nv) = L, lower triangular with M(q) = L Lᵀ (CRBA, then Cholesky; the upper triangle
        zero): the factor dynamics_cy.linalg's cholesky_solve (M⁻¹ b), cholesky_inverse and
        operational_space_inertia (Λ = (J M⁻¹ Jᵀ)⁻¹) take. Factor once per tick, solve many times."""
        cdef double* op = self._factor_mass(q, out, "mass_matrix_cholesky")
        cdef int i, n = self.nv
        with nogil:
            for i in range(n - 1):
                memset(op + i * n + i + 1, 0, (n - 1 - i) * sizeof(double))

    def mass_matrix_inverse(self, q, out):
        """out (nv, nv) = M(q)⁻¹ (Pinocchio's computeMinverse), by the Cholesky factor: M⁻¹ = L⁻ᵀ L⁻¹
        (faster than from the LᵀDL factor column by column, even on a humanoid)."""
        cdef double* op = self._factor_mass(q, out, "mass_matrix_inverse")
        with nogil:
            cholesky_inverse_in_place(op, self.nv)

    cdef int _ltdl(self, q, double* op, str what) except -1:
        """op (nv × nv) = M(q) = Lᵀ D L factored in place (Featherstone's LTDL): D on the diagonal, L below."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef int bad
        if not self._tree_ordered:
            raise ValueError(f"{what}: this model's velocities are not in tree order (a velocity before its "
                             "parent's); use mass_matrix_cholesky")
        with nogil:
            crba_q(m, d, qp, op)
            bad = _ltdl_factor(op, self._lam, m.nv)
        if bad:
            raise SingularInertiaError(f"{what}: M(q) is not positive definite at velocity {bad - 1} "
                                       "(a joint that moves no mass or inertia)")
        return 0

    def mass_matrix_ldlt(self, q, out):
        """out (nv, nv) = M(q)'s tree-sparse factor M = Lᵀ D L (Featherstone's LTDL, RBDA §6.5): D on the
        diagonal, the unit lower-triangular L below it, nonzero only at (i, j) with j a velocity on
        i's path to the root, so it has no fill-in: O(nv d²) for a tree of depth d (a humanoid's
        limbs stay apart). ldlt_solve takes it. ValueError for a model whose velocities are not in
        tree order (every one after its parent's)."""
        cdef double* op = f64(out, self.nv, self.nv, True, "out")
        cdef int i, n = self.nv
        self._ltdl(q, op, "mass_matrix_ldlt")
        with nogil:
            for i in range(n - 1):
                memset(op + i * n + i + 1, 0, (n - 1 - i) * sizeof(double))

    def ldlt_solve(self, factor, B, out):
        """out = M⁻¹ b for mass_matrix_ldlt's factor, by two sparse substitutions along the tree. B is a
        vector b (nv,) or a (k, nv) array whose rows are solved each (out = B M⁻¹: J M⁻¹ from J's
        rows), as dynamics_cy.linalg.cholesky_solve. out may be B."""
        cdef int n = self.nv
        cdef double* F = f64(factor, n, n, False, "factor")
        cdef int nd = cnp.PyArray_NDIM(<cnp.ndarray>B) if cnp.PyArray_Check(B) else 0
        cdef bint vector = nd == 1
        cdef Py_ssize_t k = 1 if vector else (cnp.PyArray_DIM(<cnp.ndarray>B, 0) if nd == 2 else 0), i
        cdef double* b = f64(B, n, -1, False, "B") if vector else f64(B, k, n, False, "B")
        cdef double* o = f64(out, n, -1, True, "out") if vector else f64(out, k, n, True, "out")
        if not self._tree_ordered:
            raise ValueError("ldlt_solve: this model's velocities are not in tree order; use mass_matrix_cholesky")
        with nogil:
            if o != b:
                memcpy(o, b, k * n * sizeof(double))
            for i in range(k):
                _ltdl_solve(F, self._lam, n, o + i * n)

    def frame_pose(self, q, frame, out):
        """out (4, 4) = X_WF(q) for a Frame or FrameIndex."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* op = f64(out, 4, 4, True, "out")
        cdef int f = self._frame(frame)
        with nogil:
            positions_to(m, d, m.frame_node[f], qp)
            frame_pose(m, d, f, op)

    def jacobian(self, q, frame, out):
        """out (6, nv) = J_V_WF_W: V_WF = [w_WF; v_WFo] expressed in W equals out @ v."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* op = f64(out, 6, self.nv, True, "out")
        cdef int f = self._frame(frame)
        cdef double X[16]
        cdef double p[3]
        with nogil:
            positions_to(m, d, m.frame_node[f], qp)
            frame_pose(m, d, f, X)
            p[0], p[1], p[2] = X[3], X[7], X[11]
            memset(op, 0, 6 * m.nv * sizeof(double))
            point_jacobian(m, d, m.frame_node[f], p, op, m.nv)

    def body_poses(self, q, out):
        """out (num_bodies, 4, 4) = X_WB(q) of every body, by BodyIndex (for viewers and contact)."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* op = f64_3d(out, self.num_bodies, 4, 4, "out")
        cdef int b, r, k
        cdef double R[9]
        cdef double p[3]
        with nogil:
            positions(m, d, qp)
            for b in range(m.nbodies):
                body_pose(m, d, b, R, p)
                for r in range(3):
                    for k in range(3):
                        op[16 * b + 4 * r + k] = R[3 * r + k]
                    op[16 * b + 4 * r + 3] = p[r]
                op[16 * b + 12], op[16 * b + 13], op[16 * b + 14], op[16 * b + 15] = 0.0, 0.0, 0.0, 1.0

    def body_positions_quaternions(self, q, out):
        """out (num_bodies, 7) = [p_WBo; q_WB] of every body, by BodyIndex: the position and the
        orientation as a quaternion [w x y z] with w >= 0 (what viewers draw)."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* op = f64(out, self.num_bodies, 7, True, "out")
        cdef int b
        cdef double R[9]
        with nogil:
            positions(m, d, qp)
            for b in range(m.nbodies):
                body_pose(m, d, b, R, op + 7 * b)
                matrix_quaternion(R, op + 7 * b + 3)

    def body_spatial_velocities(self, q, v, out):
        """out (num_bodies, 6) = V_WB_W = [w_WB; v_WBo] in W of every body, by BodyIndex."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* vp = f64(v, self.nv, -1, False, "v")
        cdef double* op = f64(out, self.num_bodies, 6, True, "out")
        cdef int b
        with nogil:
            _load_state(m, d, qp, vp, NULL)
            for b in range(m.nbodies):
                body_velocity(m, d, b, op + 6 * b)

    def map_velocity_to_qdot(self, q, v, out):
        """out (nq) = q̇ = N(q) v."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* vp = f64(v, self.nv, -1, False, "v")
        cdef double* op = f64(out, self.nq, -1, True, "out")
        cdef int bad
        with nogil:
            bad = velocity_to_qdot(m, qp, vp, op)
        if bad:
            raise GimbalLockError("map_velocity_to_qdot: a roll-pitch-yaw joint is at gimbal lock (|pitch| = pi/2)")

    # -----------------------------------------------------------------------------------------
    # Contact points and the centre of mass, for whole-body control (hil.wbc)
    # -----------------------------------------------------------------------------------------
    def points_jacobian_bias(self, q, v, frames, p_FQ, J, Jdot_v):
        """Translational kinematics of k points Qi fixed in frames Fi, in one pass:
        J (3k, nv) stacks Jv_WQi_W (v_WQi = Jv_WQi v) and Jdot_v (3k) stacks aBias_WQi_W = J̇v_WQi v
        (Drake's CalcBiasTranslationalAcceleration, A = E = W); p_FQ (k, 3) is p_FoQi_F."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef Py_ssize_t k = len(frames), i
        cdef int f
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* vp = f64(v, self.nv, -1, False, "v")
        cdef double* pp = f64(p_FQ, k, 3, False, "p_FQ")
        cdef double* Jp = f64(J, 3 * k, self.nv, True, "J")
        cdef double* ap = f64(Jdot_v, 3 * k, -1, True, "Jdot_v")
        with nogil:
            _load_state(m, d, qp, vp, NULL)
            bias_spatial_accelerations(m, d)
            memset(Jp, 0, 3 * k * m.nv * sizeof(double))
        for i in range(k):
            f = self._frame(frames[i])
            with nogil:
                point_translational(m, d, f, pp + 3 * i, Jp + 3 * i * m.nv, ap + 3 * i)

    def frame_jacobian_bias(self, q, v, frame, J, Jdot_v):
        """The spatial kinematics of frame F in one pass: J (6, nv) = J_V_WF_W (V_WF = [w_WF; v_WFo]
        in W = J v, as ``jacobian``) and Jdot_v (6) = J̇ v = AsBias_WF_W = [α; a_WFo] for v̇ = 0
        (Drake's CalcBiasSpatialAcceleration, A = E = W, at Fo)."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* vp = f64(v, self.nv, -1, False, "v")
        cdef double* Jp = f64(J, 6, self.nv, True, "J")
        cdef double* ap = f64(Jdot_v, 6, -1, True, "Jdot_v")
        cdef int f = self._frame(frame), n = m.frame_node[f]
        cdef double zero[3]
        cdef double X[16]
        cdef double p[3]
        zero[0], zero[1], zero[2] = 0.0, 0.0, 0.0
        with nogil:
            _load_state(m, d, qp, vp, NULL)
            bias_spatial_accelerations(m, d)
            memset(Jp, 0, 6 * m.nv * sizeof(double))
            frame_pose(m, d, f, X)
            p[0], p[1], p[2] = X[3], X[7], X[11]
            point_jacobian(m, d, n, p, Jp, m.nv)
            matvec(d.R_WB + 9 * n, d.A + 6 * n, ap)
            point_translational(m, d, f, zero, NULL, ap + 3)

    def center_of_mass(self, q, v, p_WCcm, J, Jdot_v):
        """The centre of mass Ccm of all bodies: p_WCcm (3), its Jacobian J (3, nv) with
        v_WCcm = J v (CalcJacobianCenterOfMassTranslationalVelocity, kV, A = E = W) and Jdot_v (3)
        = J̇ v (CalcBiasCenterOfMassTranslationalAcceleration), by subtree masses and first moments:
        column (node j, axis s) = [m_j⁺ v_s + w_s × (Σ⁺ m_i p_WCi − m_j⁺ p_WJo)] / m over j's subtree ⁺."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, self.nq, -1, False, "q")
        cdef double* vp = f64(v, self.nv, -1, False, "v")
        cdef double* cp = f64(p_WCcm, 3, -1, True, "p_WCcm")
        cdef double* Jp = f64(J, 3, self.nv, True, "J")
        cdef double* ap = f64(Jdot_v, 3, -1, True, "Jdot_v")
        cdef int bad
        with nogil:
            _load_state(m, d, qp, vp, NULL)
            bias_spatial_accelerations(m, d)
            bad = center_of_mass(m, d, cp, Jp, ap)
        if bad:
            raise RuntimeError("center_of_mass(): the system's total mass must be greater than zero")
