# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The MultibodyPlant facade's access to the compiled algorithms: ``Evaluator`` is a (Model, Data) pair
whose methods return new numpy arrays (it allocates; the control loop uses ``Kernels`` instead)."""
cimport numpy as cnp

from dynamics_cy._aba cimport aba
from dynamics_cy._arrays cimport copy_f64, f64, f64_or_null
from dynamics_cy._crba cimport crba
from dynamics_cy._jacobians cimport point_jacobian
from dynamics_cy._kinematics cimport (body_pose, body_velocity, frame_pose, positions, qdot_to_velocity_map,
                                     velocities, velocity_to_qdot)
from dynamics_cy._model cimport Data, Model
from dynamics_cy._reaction cimport reaction_forces
from dynamics_cy._rnea cimport gravity, load_body_forces, rnea
from dynamics_cy._vec3 cimport cross3, matvec
from dynamics_cy.errors import GimbalLockError, SingularInertiaError
from libc.stdlib cimport free, malloc

cnp.import_array()


def singular_message(Model model, int node):
    """The error of a forward dynamics whose articulated inertia at ``node`` is singular."""
    return (f"forward dynamics: the articulated inertia seen by joint '{model.node_joint[node]}' is singular: "
            "the bodies it moves have no mass or inertia about its axis")


cdef object _zeros(int nd, Py_ssize_t n0, Py_ssize_t n1=0):
    cdef cnp.npy_intp dims[2]
    dims[0], dims[1] = n0, n1
    return cnp.PyArray_ZEROS(nd, dims, cnp.NPY_DOUBLE, 0)


cdef class Evaluator:
    """The facade's workspace on the plant's shared model: update(q[, v]) then query."""
    cdef readonly Model model
    cdef Data data

    def __init__(self, Model model not None):
        self.model = model
        self.data = Data(model)

    def update(self, q, v=None):
        """positions(q) and, given v, velocities(v) on this workspace."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* qp = f64(q, m.nq, -1, False, "q")
        cdef double* vp = NULL
        if v is not None:
            vp = f64(v, m.nv, -1, False, "v")
        with nogil:
            positions(m, d, qp)
            if vp != NULL:
                velocities(m, d, qp, vp)

    def body_poses(self):
        """(R_WB (nbodies, 3, 3), p_WB (nbodies, 3)) by BodyIndex, from the last update()."""
        cdef cnp.npy_intp dims[3]
        dims[0], dims[1], dims[2] = self.model.nbodies, 3, 3
        R = cnp.PyArray_ZEROS(3, dims, cnp.NPY_DOUBLE, 0)
        p = _zeros(2, self.model.nbodies, 3)
        cdef double* rp = <double*>cnp.PyArray_DATA(R)
        cdef double* pp = <double*>cnp.PyArray_DATA(p)
        cdef int b
        for b in range(self.model.nbodies):
            body_pose(self.model, self.data, b, rp + 9 * b, pp + 3 * b)
        return R, p

    def body_velocities(self):
        """V_WB_W (nbodies, 6) by BodyIndex, from the last update() with v."""
        V = _zeros(2, self.model.nbodies, 6)
        cdef double* vp = <double*>cnp.PyArray_DATA(V)
        cdef int b
        for b in range(self.model.nbodies):
            body_velocity(self.model, self.data, b, vp + 6 * b)
        return V

    def body_accelerations(self, vdot):
        """A_WB_W = [α_WB; a_WBo] (nbodies, 6) by BodyIndex for v̇, without gravity. Needs update(q, v)."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* vd = f64(vdot, m.nv, -1, False, "known_vdot")
        cdef double* tmp = <double*>malloc(m.nv * sizeof(double) + 1)
        with nogil:
            rnea(m, d, vd, True, False, False, tmp)
        free(tmp)
        A = _zeros(2, m.nbodies, 6)
        cdef double* ap = <double*>cnp.PyArray_DATA(A)
        cdef double a[6]
        cdef double ax[3]
        cdef double V_W[6]
        cdef double wv[3]
        cdef int b, n
        for b in range(m.nbodies):
            n = m.body_node[b]
            # Featherstone's acceleration moved from No to Bo (a motion vector), then made classical
            cross3(d.A + 6 * n, m.p_NB + 3 * b, ax)
            a[0], a[1], a[2] = d.A[6 * n], d.A[6 * n + 1], d.A[6 * n + 2]
            a[3], a[4], a[5] = d.A[6 * n + 3] + ax[0], d.A[6 * n + 4] + ax[1], d.A[6 * n + 5] + ax[2]
            matvec(d.R_WB + 9 * n, a, ap + 6 * b)
            matvec(d.R_WB + 9 * n, a + 3, ap + 6 * b + 3)
            body_velocity(m, d, b, V_W)
            cross3(V_W, V_W + 3, wv)
            ap[6 * b + 3] += wv[0]
            ap[6 * b + 4] += wv[1]
            ap[6 * b + 5] += wv[2]
        return A

    def inverse_dynamics(self, vdot, bint use_velocity, bint use_gravity, F_W=None):
        """M v̇ + [C v] - [τ_g] - Σ Jᵀ F_W for the last update(); F_W (nbodies, 6) by BodyIndex."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* vd = f64_or_null(vdot, m.nv, -1, "known_vdot")
        cdef double* fw = f64_or_null(F_W, m.nbodies, 6, "body forces")
        tau = _zeros(1, m.nv)
        cdef double* tp = <double*>cnp.PyArray_DATA(tau)
        with nogil:
            if fw != NULL:
                load_body_forces(m, d, fw)
            rnea(m, d, vd, use_velocity, use_gravity, fw != NULL, tp)
        return tau

    def reaction_forces(self, vdot, F_W=None):
        """(num_joints, 6): F_CJc_Jc per JointIndex for the last update(q, v), the accelerations vdot
        under gravity and the applied F_Bo_W (nbodies, 6) of F_W."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* vd = f64(vdot, m.nv, -1, False, "known_vdot")
        cdef double* fw = f64_or_null(F_W, m.nbodies, 6, "body forces")
        out = _zeros(2, m.nj, 6)
        cdef double* op = <double*>cnp.PyArray_DATA(out)
        with nogil:
            rnea(m, d, vd, True, True, False, NULL)
            reaction_forces(m, d, fw, op)
        return out

    def mass_matrix(self):
        M = _zeros(2, self.model.nv, self.model.nv)
        cdef double* mp = <double*>cnp.PyArray_DATA(M)
        with nogil:
            crba(self.model, self.data, mp)
        return M

    def forward_dynamics(self, tau, bint use_gravity, F_W=None):
        """v̇ for the last update(q, v)."""
        cdef Model m = self.model
        cdef Data d = self.data
        cdef double* tp = f64(tau, m.nv, -1, False, "tau")
        cdef double* fw = f64_or_null(F_W, m.nbodies, 6, "body forces")
        cdef int bad
        vdot = _zeros(1, m.nv)
        cdef double* vp = <double*>cnp.PyArray_DATA(vdot)
        with nogil:
            if fw != NULL:
                load_body_forces(m, d, fw)
            bad = aba(m, d, tp, use_gravity, fw != NULL, vp)
        if bad:
            raise SingularInertiaError(singular_message(m, bad))
        return vdot

    def gravity_forces(self):
        tau = _zeros(1, self.model.nv)
        cdef double* tp = <double*>cnp.PyArray_DATA(tau)
        with nogil:
            gravity(self.model, self.data, tp)
        return tau

    def frame_pose_world(self, int f):
        """X_WF (4, 4) of frame index f, from the last update()."""
        X = _zeros(2, 4, 4)
        frame_pose(self.model, self.data, f, <double*>cnp.PyArray_DATA(X))
        return X

    def point_jacobian_world(self, int body, p_WQ):
        """6 x nv J_WQ for the point Q (world coordinates) fixed to body `body`, from the last update()."""
        cdef double pq[3]
        copy_f64(pq, p_WQ, 3)
        J = _zeros(2, 6, self.model.nv)
        cdef double* jp = <double*>cnp.PyArray_DATA(J)
        cdef int n = self.model.body_node[body]
        with nogil:
            point_jacobian(self.model, self.data, n, pq, jp, self.model.nv)
        return J

    def map_velocity_to_qdot(self, q, v):
        """N(q) v (allocating)."""
        cdef double* qp = f64(q, self.model.nq, -1, False, "q")
        cdef double* vp = f64(v, self.model.nv, -1, False, "v")
        out = _zeros(1, self.model.nq)
        if velocity_to_qdot(self.model, qp, vp, <double*>cnp.PyArray_DATA(out)):
            raise GimbalLockError("MapVelocityToQDot: a BallRpyJoint is at gimbal lock (|pitch| = pi/2)")
        return out

    def qdot_to_velocity_map(self, q):
        """N⁺(q) (nv, nq) with v = N⁺ q̇ (allocating)."""
        cdef double* qp = f64(q, self.model.nq, -1, False, "q")
        out = _zeros(2, self.model.nv, self.model.nq)
        qdot_to_velocity_map(self.model, qp, <double*>cnp.PyArray_DATA(out))
        return out
