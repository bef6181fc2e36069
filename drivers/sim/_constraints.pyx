# cython: language_level=3
"""The simulator's holonomic constraints (MultibodyPlant's coupler, distance, ball and weld constraints),
enforced as Drake's SAP solver enforces them: one impulse per step from the constraint functions g(q), their
Jacobian G (vc = G v) and the dynamics matrix A, solved exactly (the constraints are bilateral, so SAP's
convex problem is one linear system). Set up by drivers.sim.constraints (from the plant), called by the
Stepper (drivers.sim._physics) after the velocity update; allocation-free per step. docs/sim.md, Constraints,
has the math.
"""
cimport numpy as cnp

from dynamics_cy._arrays cimport f64_data, i32_data, owned_f64, owned_i32
from dynamics_cy._linalg cimport cholesky, cholesky_solve
from dynamics_cy._spatial cimport matmul, matrix_quaternion
from dynamics_cy._vec3 cimport cross3, dot3, matvec
from libc.math cimport INFINITY, M_PI, atan2, sqrt
from libc.string cimport memset

import numpy as np

from dynamics_cy.errors import DynamicsError

cnp.import_array()

cdef enum:
    COUPLER = 0
    DISTANCE = 1
    BALL = 2
    WELD = 3

KINDS = {"coupler": COUPLER, "distance": DISTANCE, "ball": BALL, "weld": WELD}
BETA = 0.1
"""SAP's near-rigid parameter β for these constraints (Drake's kBeta): R ≥ β²/(4π²) w."""


cdef inline int rows_of(int kind) noexcept nogil:
    """The constraint equations of a kind: a coupler and a distance constraint 1, a ball 3, a weld 6."""
    return 1 if kind == COUPLER or kind == DISTANCE else (3 if kind == BALL else 6)


cdef void point_rows(const double* J, const double* r, const double* U, int n, int nv, double sign,
                     double* out) noexcept nogil:
    """out[j, :] += sign · U_j · Jv_Q for j < n (U: n × 3), with Jv_Q = Jv_B − [r]× Jω_B the Jacobian of the
    point Q of body B at r = p_BoQ_W, from J (6 × nv) = J_V_WB_W at Bo."""
    cdef int j, k, i
    cdef double w[3]
    cdef double rw[3]
    cdef double s
    for k in range(nv):
        w[0], w[1], w[2] = J[k], J[nv + k], J[2 * nv + k]
        cross3(r, w, rw)
        for j in range(n):
            s = 0.0
            for i in range(3):
                s += U[3 * j + i] * (J[(3 + i) * nv + k] - rw[i])
            out[j * nv + k] += sign * s


cdef void pose_of(const double* X_WB, const double* R_BP, const double* p_BP, double* R_WP, double* p_WP) noexcept nogil:
    """X_WP = X_WB X_BP (X_WB a row-major 4×4; R_WP may be NULL)."""
    cdef double R[9]
    cdef int i
    for i in range(3):
        R[3 * i], R[3 * i + 1], R[3 * i + 2] = X_WB[4 * i], X_WB[4 * i + 1], X_WB[4 * i + 2]
    matvec(R, p_BP, p_WP)
    for i in range(3):
        p_WP[i] += X_WB[4 * i + 3]
    if R_WP != NULL:
        matmul(R, R_BP, R_WP)


cdef void axis_angle_vector(const double* R, double* a) noexcept nogil:
    """a = θ k of the rotation R (row-major), θ in [0, π]: from its quaternion [w; u] (w >= 0),
    θ = 2 atan2(|u|, w), k = u / |u| (a = 2 u / w near θ = 0)."""
    cdef double q[4]
    cdef double n, f
    matrix_quaternion(R, q)
    n = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    f = 2.0 * atan2(n, q[0]) / n if n > 1e-12 else 2.0 / q[0]
    a[0], a[1], a[2] = f * q[1], f * q[2], f * q[3]


cdef class Constraints:
    """The plant's constraints and the workspace of their per-step impulse (see the module doc).

    kinds (n): COUPLER, DISTANCE, BALL or WELD per constraint; ints (n, 4): bodies A and B (a coupler: q₀'s
    and q₁'s q index, v₀'s and v₁'s v index); reals (n, 24): a coupler's [ρ, Δq]; a distance constraint's
    [p_AP, p_BQ, d₀, k, c]; a ball's [p_AP, p_BQ]; a weld's [R_AP (row-major), p_AP, R_BQ, p_BQ];
    body_frames: each body's frame index (for the kernels' Jacobian)."""

    def __init__(self, kernels, double time_step, kinds, ints, reals, body_frames):
        self._body_poses, self._jacobian = kernels.body_poses, kernels.jacobian
        self.nv, self.nb, self.time_step = kernels.nv, kernels.num_bodies, time_step
        n = self.num_constraints = len(kinds)
        own = self._arrays = dict(kind=owned_i32(kinds, (n,)), ints=owned_i32(ints, (n, 4)),
                                  reals=owned_f64(reals, (n, 24)))
        self.max_rows = sum(rows_of(k) for k in own["kind"])
        m, nv, nb = self.max_rows, self.nv, self.nb
        own.update(active=np.ones(n), X_WB=np.zeros((nb, 4, 4)), J_WB=np.zeros((nb, 6, nv)), G=np.zeros((m, nv)),
                   Y=np.zeros((m, nv)), W=np.zeros((m, m)), g=np.zeros(m), k_eq=np.zeros(m), tau_eq=np.zeros(m),
                   gamma=np.zeros(m), generalized=np.zeros(nv))
        self.kind, self.ints, self.reals = i32_data(own["kind"]), i32_data(own["ints"]), f64_data(own["reals"])
        self.c_active, self.X_WB, self.J_WB = f64_data(own["active"]), f64_data(own["X_WB"]), f64_data(own["J_WB"])
        self.G, self.Y, self.W, self.g = f64_data(own["G"]), f64_data(own["Y"]), f64_data(own["W"]), f64_data(own["g"])
        self.k_eq, self.tau_eq = f64_data(own["k_eq"]), f64_data(own["tau_eq"])
        self.c_gamma, self.c_generalized = f64_data(own["gamma"]), f64_data(own["generalized"])
        bodies = sorted({int(b) for c in range(n) if own["kind"][c] != COUPLER for b in own["ints"][c, :2]} - {0})
        self._bodies = tuple((b, int(body_frames[b]), own["J_WB"][b]) for b in bodies)
        self.num_rows = 0

    @property
    def active(self):
        """1.0 per active constraint, 0.0 per inactive one (writable: the next step honours it)."""
        return self._arrays["active"]

    @property
    def impulses(self):
        """γ of the last step's active constraints, in their order (num_rows of them): a coupler's on q₀
        (N·s or N·m·s), a distance constraint's along p̂_PQ on B, a ball's on B at Q (W), a weld's on B at
        the midpoint of Po and Qo, [torque; force] (W)."""
        return self._arrays["gamma"][:self.num_rows]

    @property
    def generalized_force(self):
        """Gᵀ γ / h: the last step's constraint impulse as a generalized force held over the step (nv)."""
        return self._arrays["generalized"]

    cdef int _rows(self, object q, const double* cq) except -1:
        """G, g, stiffness and relaxation time of the active constraints' rows at q; returns their count."""
        cdef int c, r = 0, A, B, i, nv = self.nv
        cdef const double* p
        cdef double* row
        cdef double p_WP[3]
        cdef double p_WQ[3]
        cdef double r_A[3]
        cdef double r_B[3]
        cdef double p_hat[3]
        cdef double R_WP[9]
        cdef double R_WQ[9]
        cdef double R_PQ[9]
        cdef double a[3]
        cdef double d
        cdef double eye[9]
        memset(eye, 0, 9 * sizeof(double))
        eye[0] = eye[4] = eye[8] = 1.0
        memset(self.G, 0, self.max_rows * nv * sizeof(double))
        self._body_poses(q, self._arrays["X_WB"])
        for b, frame, J in self._bodies:
            self._jacobian(q, frame, J)
        for c in range(self.num_constraints):
            if self.c_active[c] == 0.0:
                continue
            p, A, B, row = self.reals + 24 * c, self.ints[4 * c], self.ints[4 * c + 1], self.G + r * nv
            if self.kind[c] == COUPLER:
                row[self.ints[4 * c + 2]] += 1.0
                row[self.ints[4 * c + 3]] -= p[0]
                self.g[r] = cq[A] - p[0] * cq[B] - p[1]
                self.k_eq[r], self.tau_eq[r] = INFINITY, 0.0
                r += 1
                continue
            if self.kind[c] == WELD:
                pose_of(self.X_WB + 16 * A, p, p + 9, R_WP, p_WP)
                pose_of(self.X_WB + 16 * B, p + 12, p + 21, R_WQ, p_WQ)
            else:
                pose_of(self.X_WB + 16 * A, NULL, p, NULL, p_WP)
                pose_of(self.X_WB + 16 * B, NULL, p + 3, NULL, p_WQ)
            if self.kind[c] == WELD:                      # Jacobian at the midpoint M of Po and Qo
                for i in range(3):
                    r_A[i] = 0.5 * (p_WP[i] + p_WQ[i]) - self.X_WB[16 * A + 4 * i + 3]
                    r_B[i] = 0.5 * (p_WP[i] + p_WQ[i]) - self.X_WB[16 * B + 4 * i + 3]
            else:
                for i in range(3):
                    r_A[i] = p_WP[i] - self.X_WB[16 * A + 4 * i + 3]
                    r_B[i] = p_WQ[i] - self.X_WB[16 * B + 4 * i + 3]
            if self.kind[c] == DISTANCE:
                for i in range(3):
                    p_hat[i] = p_WQ[i] - p_WP[i]
                d = sqrt(dot3(p_hat, p_hat))
                if d < 1e-7 + 1e-2 * p[6]:
                    raise DynamicsError(f"The distance is {d}. This is nonphysically small when compared to the free "
                                        f"length of the constraint, {p[6]}. ")
                for i in range(3):
                    p_hat[i] /= d
                self._point(A, r_A, p_hat, 1, -1.0, row)
                self._point(B, r_B, p_hat, 1, 1.0, row)
                self.g[r], self.k_eq[r], self.tau_eq[r] = d - p[6], p[7], p[8] / p[7]
                r += 1
            elif self.kind[c] == BALL:
                self._point(A, r_A, eye, 3, -1.0, row)
                self._point(B, r_B, eye, 3, 1.0, row)
                for i in range(3):
                    self.g[r + i], self.k_eq[r + i], self.tau_eq[r + i] = p_WQ[i] - p_WP[i], INFINITY, 0.0
                r += 3
            else:
                self._angular(A, -1.0, row)
                self._angular(B, 1.0, row)
                self._point(A, r_A, eye, 3, -1.0, row + 3 * nv)
                self._point(B, r_B, eye, 3, 1.0, row + 3 * nv)
                for i in range(9):                         # R_PQ = R_WPᵀ R_WQ
                    R_PQ[i] = R_WP[i // 3] * R_WQ[i % 3] + R_WP[3 + i // 3] * R_WQ[3 + i % 3] \
                        + R_WP[6 + i // 3] * R_WQ[6 + i % 3]
                axis_angle_vector(R_PQ, a)
                matvec(R_WP, a, self.g + r)               # a_PQ_W
                for i in range(3):
                    self.g[r + 3 + i] = p_WQ[i] - p_WP[i]
                for i in range(6):
                    self.k_eq[r + i], self.tau_eq[r + i] = INFINITY, 0.0
                r += 6
        return r

    cdef void _point(self, int b, const double* r, const double* U, int n, double sign, double* out) noexcept:
        if b != 0:
            point_rows(self.J_WB + 6 * self.nv * b, r, U, n, self.nv, sign, out)

    cdef void _angular(self, int b, double sign, double* out) noexcept:
        cdef int i
        if b != 0:
            for i in range(3 * self.nv):
                out[i] += sign * self.J_WB[6 * self.nv * b + i]

    cdef int project(self, object q, const double* q_data, const double* factor, const double* A, double* v) except -1:
        """v ← v + A⁻¹ Gᵀ γ, the SAP solution of the active constraints at q for the free velocity v, with
        `factor` the Cholesky factor of A (nv × nv) and A its matrix (its diagonal estimates the Delassus
        operator); records the impulses γ and Gᵀ γ / h."""
        cdef int m, i, j, k, c, n, e, r = 0, nv = self.nv
        cdef double s, w, R, R_rigid, tau, h = self.time_step
        memset(self.c_generalized, 0, nv * sizeof(double))
        m = self.num_rows = self._rows(q, q_data)
        if m == 0:
            return 0
        for i in range(m):                                      # Y_i = A⁻¹ G_iᵀ, W = G A⁻¹ Gᵀ
            for k in range(nv):
                self.Y[i * nv + k] = self.G[i * nv + k]
            cholesky_solve(factor, nv, self.Y + i * nv)
        for i in range(m):
            for j in range(i + 1):
                s = 0.0
                for k in range(nv):
                    s += self.G[i * nv + k] * self.Y[j * nv + k]
                self.W[i * m + j] = self.W[j * m + i] = s
        for c in range(self.num_constraints):                   # R and v̂ per row; rhs v̂ − G v in gamma
            if self.c_active[c] == 0.0:
                continue
            n = rows_of(self.kind[c])
            w = 0.0                                             # ‖G_c diag(A)⁻¹ G_cᵀ‖_F / n
            for i in range(n):
                for j in range(n):
                    s = 0.0
                    for k in range(nv):
                        s += self.G[(r + i) * nv + k] * self.G[(r + j) * nv + k] / A[k * nv + k]
                    w += s * s
            R_rigid = BETA * BETA / (4.0 * M_PI * M_PI) * sqrt(w) / n
            for e in range(r, r + n):
                R, tau = 1.0 / (h * (h + self.tau_eq[e]) * self.k_eq[e]), self.tau_eq[e]
                if R < R_rigid:                                 # near-rigid: R = β²/(4π²) w, τ = h
                    R, tau = R_rigid, h
                self.W[e * m + e] += R
                s = 0.0
                for k in range(nv):
                    s += self.G[e * nv + k] * v[k]
                self.c_gamma[e] = -self.g[e] / (h + tau) - s
            r += n
        if cholesky(self.W, m):
            raise DynamicsError("the constraints' regularized Delassus operator is not positive definite")
        cholesky_solve(self.W, m, self.c_gamma)
        for i in range(m):
            for k in range(nv):
                v[k] += self.c_gamma[i] * self.Y[i * nv + k]
                self.c_generalized[k] += self.c_gamma[i] * self.G[i * nv + k] / h
        return 0

