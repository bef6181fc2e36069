# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The model's force elements in the simulated plant (ForceElements): the springs, dampers, door hinges
and bushings of dynamics_cy.force_elements, compiled at setup into tables and evaluated GIL-free and
allocation-free from (q, v) and the body poses and velocities, with the force laws of the facade's
elements (their defaults: a context's parameters are the facade's). The stepper (drivers.sim._physics)
adds them to its forces; MuJoCo's physics applies `generalized`. docs/sim.md has the equations.
"""
from dynamics_cy._arrays cimport f64, f64_data, i32_data, owned_f64, owned_i32
from dynamics_cy._spatial cimport matmul, matrix_quaternion, quat_matrix
from dynamics_cy._vec3 cimport cross3, dot3, matTvec, matvec
from libc.float cimport DBL_EPSILON
from libc.math cimport atan2, cos, fabs, hypot, sin, sqrt, tan, tanh
from libc.string cimport memset

import numpy as np

from dynamics_cy.errors import GimbalLockError
from dynamics_cy.force_elements import (DoorHinge, LinearBushingRollPitchYaw, LinearSpringDamper, PrismaticSpring,
                                        RevoluteSpring)

cdef enum:               # the joint elements' kinds
    SPRING = 0          # τ = k (x₀ − x) on a revolute or prismatic joint
    HINGE = 1           # Drake's DoorHinge

cdef enum:               # body_forces' statuses besides 0
    SHORT_SPRING = 1
    GIMBAL_LOCK = 2

cdef double COS_PITCH_TOLERANCE = 0.008        # Drake's gimbal-lock tolerance on |cos(pitch)|


cdef inline double hinge_torque(const double* c, double q, double qd) noexcept nogil:
    """DoorHinge.CalcHingeTorque with c = [qs₀, k_ts, k_df, k_sf, k_vf, qc₀, k_c, k_q̇₀]."""
    cdef double s, t, center
    if c[7] == 0.0:
        t = c[4] * qd
    else:
        s = tanh(qd / c[7])
        t = -(c[2] * s + c[3] * 2.0 * s * (1.0 - s * s) + c[4] * qd)
    t -= c[1] * (q - c[0])
    if c[5] != 0.0:
        center = 0.5 * c[5]
        s = tanh((q - center) / center)
        t += c[6] * 2.0 * s * (1.0 - s * s)
    return t


cdef inline void pose(const double* X, int b, double* R, double* p) noexcept nogil:
    """R_WB (row-major) and p_WBo of body b from the bodies' 4×4 poses X."""
    cdef int r, k
    for r in range(3):
        for k in range(3):
            R[3 * r + k] = X[16 * b + 4 * r + k]
        p[r] = X[16 * b + 4 * r + 3]


cdef inline void add_wrench(double* F, double sign, const double* r, const double* f, const double* t) noexcept nogil:
    """F += sign [t + r × f; f]: the force f at the point r from the body's origin (t: a torque, or NULL)."""
    cdef double m[3]
    cross3(r, f, m)
    cdef int i
    for i in range(3):
        F[i] += sign * (m[i] + (t[i] if t != NULL else 0.0))
        F[3 + i] += sign * f[i]


cdef inline void _matTmul(const double* A, const double* B, double* out) noexcept nogil:
    """out = Aᵀ B (3×3 row-major)."""
    cdef int r, k
    for r in range(3):
        for k in range(3):
            out[3 * r + k] = A[r] * B[k] + A[3 + r] * B[3 + k] + A[6 + r] * B[6 + k]


cdef class ForceElements:
    """The force elements of a plant (all but gravity, element 0), compiled from their defaults:
    RevoluteSpring, PrismaticSpring and DoorHinge as joint torques; LinearSpringDamper and
    LinearBushingRollPitchYaw as body forces F_Bo_W. Another ForceElement subclass raises
    NotImplementedError at construction."""

    def __init__(self, plant, kernels):
        joint, springs, bushings = [], [], []
        for i in range(1, plant.num_force_elements()):
            e = plant.get_force_element(i)
            if isinstance(e, (RevoluteSpring, PrismaticSpring, DoorHinge)):
                j = e.joint()
                if isinstance(e, DoorHinge):
                    c = e.config()
                    par = [HINGE, c.spring_zero_angle_rad, c.spring_constant, c.dynamic_friction_torque,
                           c.static_friction_torque, c.viscous_friction, c.catch_width, c.catch_torque,
                           c.motion_threshold]
                elif isinstance(e, RevoluteSpring):
                    par = [SPRING, e.default_stiffness(), e.default_nominal_angle()] + [0.0] * 6
                else:
                    par = [SPRING, e.stiffness(), e.nominal_position()] + [0.0] * 6
                joint.append(([j.position_start(), j.velocity_start()], par))
            elif isinstance(e, LinearSpringDamper):
                springs.append(([int(e.bodyA().index()), int(e.bodyB().index())],
                                [*e.p_AP(), *e.p_BQ(), e.free_length(), e.stiffness(), e.damping()]))
            elif isinstance(e, LinearBushingRollPitchYaw):
                X_L0A, X_L1C = e.frameA().GetFixedPoseInBodyFrame(), e.frameC().GetFixedPoseInBodyFrame()
                bushings.append(([int(e.link0().index()), int(e.link1().index())],
                                 [*X_L0A.rotation().matrix().ravel(), *X_L0A.translation(),
                                  *X_L1C.rotation().matrix().ravel(), *X_L1C.translation(),
                                  *e.torque_stiffness_constants(), *e.torque_damping_constants(),
                                  *e.force_stiffness_constants(), *e.force_damping_constants()]))
            else:
                raise NotImplementedError(f"the simulated plant does not apply {type(e).__name__} (force element "
                                          f"{i}); it applies RevoluteSpring, PrismaticSpring, DoorHinge, "
                                          "LinearSpringDamper and LinearBushingRollPitchYaw")
        self.num_joint, self.num_springs, self.num_bushings = len(joint), len(springs), len(bushings)
        self.num_bodies, self.nq, self.nv = kernels.num_bodies, kernels.nq, kernels.nv
        self.acts_on_bodies = bool(springs or bushings)

        def table(rows, k, width, own):
            return own([r[k] for r in rows] if rows else np.zeros((0, width)), (len(rows), width))

        own = self._arrays = dict(
            j_idx=table(joint, 0, 2, owned_i32), j_par=table(joint, 1, 9, owned_f64),
            s_idx=table(springs, 0, 2, owned_i32), s_par=table(springs, 1, 9, owned_f64),
            b_idx=table(bushings, 0, 2, owned_i32), b_par=table(bushings, 1, 36, owned_f64))
        self.j_idx, self.j_par = i32_data(own["j_idx"]), f64_data(own["j_par"])
        self.s_idx, self.s_par = i32_data(own["s_idx"]), f64_data(own["s_par"])
        self.b_idx, self.b_par = i32_data(own["b_idx"]), f64_data(own["b_par"])
        nb, nv = self.num_bodies, self.nv
        self._body_poses, self._body_velocities = np.zeros((nb, 4, 4)), np.zeros((nb, 6))
        self._body_forces, self._id_free, self._id_loaded, self._zero_v = np.zeros((nb, 6)), np.zeros(nv), \
            np.zeros(nv), np.zeros(nv)
        self._calc_body_poses, self._calc_body_velocities = kernels.body_poses, kernels.body_spatial_velocities
        self._inverse_dynamics = kernels.inverse_dynamics

    cdef void joint_torques(self, const double* q, const double* v, double* tau) noexcept nogil:
        """tau += the joint elements' torques at (q, v)."""
        cdef int i
        cdef const double* c
        for i in range(self.num_joint):
            c = self.j_par + 9 * i
            if <int>c[0] == SPRING:
                tau[self.j_idx[2 * i + 1]] += c[1] * (c[2] - q[self.j_idx[2 * i]])
            else:
                tau[self.j_idx[2 * i + 1]] += hinge_torque(c + 1, q[self.j_idx[2 * i]], v[self.j_idx[2 * i + 1]])

    cdef int body_forces(self, const double* X, const double* V, double* F) noexcept nogil:
        """F (num_bodies × 6) += the spring-dampers' and bushings' F_Bo_W, from the bodies' 4×4 poses X and
        spatial velocities V = [w_WB; v_WBo]; 0, or SHORT_SPRING / GIMBAL_LOCK (see check)."""
        cdef int i, A, B, k
        cdef double RA[9]
        cdef double RB[9]
        cdef double pA[3]
        cdef double pB[3]
        cdef double rA[3]
        cdef double rB[3]
        cdef double d[3]
        cdef double u[3]
        cdef double f[3]
        cdef double x2, eps2, length, rate, scale
        cdef const double* s
        for i in range(self.num_springs):
            A, B, s = self.s_idx[2 * i], self.s_idx[2 * i + 1], self.s_par + 9 * i
            pose(X, A, RA, pA)
            pose(X, B, RB, pB)
            matvec(RA, s, rA)                       # p_AoP_W
            matvec(RB, s + 3, rB)                   # p_BoQ_W
            for k in range(3):
                d[k] = pB[k] + rB[k] - pA[k] - rA[k]
            x2, eps2 = dot3(d, d), (DBL_EPSILON * s[6]) ** 2
            if x2 < eps2:
                return SHORT_SPRING
            length = sqrt(x2 + eps2)
            cross3(V + 6 * A, rA, u)                # v_WQ − v_WP
            cross3(V + 6 * B, rB, f)
            for k in range(3):
                d[k] /= length
                u[k] = V[6 * B + 3 + k] + f[k] - V[6 * A + 3 + k] - u[k]
            rate = dot3(u, d)
            scale = s[7] * (length - s[6]) + s[8] * rate
            for k in range(3):
                f[k] = scale * d[k]
            add_wrench(F + 6 * A, 1.0, rA, f, NULL)
            add_wrench(F + 6 * B, -1.0, rB, f, NULL)
        for i in range(self.num_bushings):
            if self._bushing(i, X, V, F):
                return GIMBAL_LOCK
        return 0

    cdef int _bushing(self, int i, const double* X, const double* V, double* F) noexcept nogil:
        """Adds bushing i's wrenches to links L0 and L1; 1 at gimbal lock (nothing added)."""
        cdef int L0 = self.b_idx[2 * i], L1 = self.b_idx[2 * i + 1], k
        cdef const double* c = self.b_par + 36 * i
        cdef double R0[9]
        cdef double R1[9]
        cdef double RA[9]
        cdef double RC[9]
        cdef double R_AC[9]
        cdef double R_AB[9]
        cdef double N[9]
        cdef double p0[3]
        cdef double p1[3]
        cdef double rA[3]
        cdef double rC[3]
        cdef double dW[3]
        cdef double a[3]
        cdef double b[3]
        cdef double p_AC[3]
        cdef double w_AC[3]
        cdef double v_AC[3]
        cdef double rpy[3]
        cdef double tau[3]
        cdef double t[3]
        cdef double fB[3]
        cdef double f[3]
        cdef double tW[3]
        cdef double fW[3]
        cdef double q[4]
        cdef double e0, cp, sy, cy, tp
        pose(X, L0, R0, p0)
        pose(X, L1, R1, p1)
        matmul(R0, c, RA)                           # R_WA = R_WL0 R_L0A
        matmul(R1, c + 12, RC)
        matvec(R0, c + 9, rA)                       # p_L0Ao_W
        matvec(R1, c + 21, rC)
        cross3(V + 6 * L0, rA, a)                   # v_WAo − v_WL0
        cross3(V + 6 * L1, rC, b)
        for k in range(3):
            dW[k] = p1[k] + rC[k] - p0[k] - rA[k]   # p_AoCo_W
            w_AC[k] = V[6 * L1 + k] - V[6 * L0 + k]
            v_AC[k] = V[6 * L1 + 3 + k] + b[k] - V[6 * L0 + 3 + k] - a[k]
        cross3(V + 6 * L0, dW, a)
        for k in range(3):
            v_AC[k] -= a[k]                         # v_ACo measured in A, in W
        matTvec(RA, dW, p_AC)
        matTvec(RA, w_AC, a)
        w_AC[0], w_AC[1], w_AC[2] = a[0], a[1], a[2]
        matTvec(RA, v_AC, a)
        v_AC[0], v_AC[1], v_AC[2] = a[0], a[1], a[2]
        _matTmul(RA, RC, R_AC)
        rpy[1] = atan2(-R_AC[6], hypot(R_AC[0], R_AC[3]))
        cp = cos(rpy[1])
        if fabs(cp) < COS_PITCH_TOLERANCE:
            return 1
        rpy[0], rpy[2] = atan2(R_AC[7], R_AC[8]), atan2(R_AC[3], R_AC[0])
        sy, cy, tp = sin(rpy[2]), cos(rpy[2]), tan(rpy[1])
        N[0], N[1], N[2] = cy / cp, sy / cp, 0.0
        N[3], N[4], N[5] = -sy, cy, 0.0
        N[6], N[7], N[8] = cy * tp, sy * tp, 1.0
        matvec(N, w_AC, a)                          # the roll-pitch-yaw rates
        for k in range(3):
            tau[k] = -(c[24 + k] * rpy[k] + c[27 + k] * a[k])
        matTvec(N, tau, t)                          # t_C_A = Nᵀ τ
        matrix_quaternion(R_AC, q)                  # q_AB: half of q_AC's rotation
        e0 = sqrt(0.5 * (q[0] + 1.0))
        q[0], q[1], q[2], q[3] = e0, q[1] / (2.0 * e0), q[2] / (2.0 * e0), q[3] / (2.0 * e0)
        quat_matrix(q, R_AB)
        cross3(w_AC, p_AC, b)
        for k in range(3):
            b[k] = v_AC[k] - 0.5 * b[k]             # the derivative of p_AoCo in B, in A
        matTvec(R_AB, p_AC, a)                      # [x y z]
        matTvec(R_AB, b, rpy)                       # [ẋ ẏ ż] (rpy reused)
        for k in range(3):
            fB[k] = -(c[30 + k] * a[k] + c[33 + k] * rpy[k])
        matvec(R_AB, fB, f)                         # f_C_A
        for k in range(3):                          # on A about Ao: −t − (½ p_AoCo) × f
            t[k], f[k], b[k] = -t[k], -f[k], 0.5 * p_AC[k]
        cross3(b, f, a)
        for k in range(3):
            t[k] += a[k]
        matvec(RA, t, tW)
        matvec(RA, f, fW)
        add_wrench(F + 6 * L0, 1.0, rA, fW, tW)     # on L0, about L0o
        for k in range(3):
            b[k] = p0[k] + rA[k] - p1[k]            # p_L1oAo_W
        add_wrench(F + 6 * L1, -1.0, b, fW, tW)     # its opposite on L1, about L1o
        return 0

    cdef int check(self, int status) except -1:
        """Raises for a status of body_forces: RuntimeError (a spring of nearly zero length) or
        GimbalLockError (a bushing's pitch within Drake's tolerance of ±π/2)."""
        if status == SHORT_SPRING:
            raise RuntimeError("LinearSpringDamper: the spring's length became nearly zero in the simulation")
        if status == GIMBAL_LOCK:
            raise GimbalLockError("LinearBushingRollPitchYaw: the bushing's pitch came within Drake's gimbal-lock "
                                  "tolerance of ±π/2 in the simulation")
        return 0

    def generalized(self, q, v, out):
        """out (nv) = the elements' generalized forces at (q, v): the joint torques + Σ J_Bᵀ F_Bo_W (the
        latter as ID(q, v, 0) − ID(q, v, 0; F), two inverse dynamics). Allocation-free."""
        cdef const double* cq = f64(q, self.nq, -1, False, "q")
        cdef const double* cv = f64(v, self.nv, -1, False, "v")
        cdef double* co = f64(out, self.nv, -1, True, "out")
        cdef int i
        memset(co, 0, self.nv * sizeof(double))
        self.joint_torques(cq, cv, co)
        if not self.acts_on_bodies:
            return
        self._calc_body_poses(q, self._body_poses)
        self._calc_body_velocities(q, v, self._body_velocities)
        cdef double* F = f64_data(self._body_forces)
        memset(F, 0, 6 * self.num_bodies * sizeof(double))
        self.check(self.body_forces(f64_data(self._body_poses), f64_data(self._body_velocities), F))
        self._inverse_dynamics(q, v, self._zero_v, self._id_free)
        self._inverse_dynamics(q, v, self._zero_v, self._id_loaded, self._body_forces)
        cdef const double* free = f64_data(self._id_free)
        cdef const double* loaded = f64_data(self._id_loaded)
        for i in range(self.nv):
            co[i] += free[i] - loaded[i]
