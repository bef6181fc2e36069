# cython: language_level=3
"""The simulator's compiled inner loop: point contact (PointContact) and the fixed-step integrator
(Stepper). Both work on arrays preallocated at construction and allocate nothing per step; the
dynamics come from dynamics_cy's kernels (plant.kernels()). Set up from drivers.sim.physics and
drivers.sim.contact, which document the models; docs/sim.md has the equations.
"""
cimport numpy as cnp

from dynamics_cy._vec3 cimport cross3, dot3, matTvec, matvec
from libc.math cimport INFINITY, fabs, sqrt
from libc.string cimport memcpy, memset

import numpy as np

cnp.import_array()

cdef enum:
    SPHERE = 0
    BOX = 1
    CAPSULE = 2
    CYLINDER = 3

SHAPE_CODES = {"Sphere": SPHERE, "Box": BOX, "Capsule": CAPSULE, "Cylinder": CYLINDER}
GROUND_POINTS = {SPHERE: 1, BOX: 8, CAPSULE: 2, CYLINDER: 4}
"""The most contact points a shape can have with the ground: deepest point(s) per feature."""

cdef double COS120 = -0.5
cdef double SIN120 = 0.8660254037844386


# ---------------------------------------------------------------------------------------------
# Arrays
# ---------------------------------------------------------------------------------------------
cdef double* _f64(object a, Py_ssize_t n, str name) except? NULL:
    """The data of a C-contiguous writable float64 array holding n values (any shape)."""
    if not cnp.PyArray_Check(a):
        raise ValueError(f"{name} must be a numpy float64 array, got {type(a).__name__}")
    cdef cnp.ndarray arr = <cnp.ndarray>a
    if cnp.PyArray_TYPE(arr) != cnp.NPY_DOUBLE or cnp.PyArray_SIZE(arr) != n \
            or not cnp.PyArray_IS_C_CONTIGUOUS(arr) or not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{name} must be a writable C-contiguous float64 array of {n} values, "
                         f"got {a.dtype} {a.shape}")
    return <double*>cnp.PyArray_DATA(arr)


cdef const double* _in(object a, Py_ssize_t n, str name) except? NULL:
    """The data of a C-contiguous float64 array of shape (n,), for reading."""
    if not cnp.PyArray_Check(a):
        raise ValueError(f"{name} must be a numpy float64 array of shape ({n},), got {type(a).__name__}")
    cdef cnp.ndarray arr = <cnp.ndarray>a
    if cnp.PyArray_TYPE(arr) != cnp.NPY_DOUBLE or cnp.PyArray_NDIM(arr) != 1 or cnp.PyArray_DIM(arr, 0) != n \
            or not cnp.PyArray_IS_C_CONTIGUOUS(arr):
        raise ValueError(f"{name} must be a C-contiguous float64 array of shape ({n},), got {a.dtype} {a.shape}")
    return <const double*>cnp.PyArray_DATA(arr)


cdef int* _i32(object a) noexcept:
    return <int*>cnp.PyArray_DATA(<cnp.ndarray>a)


def _owned_f64(values, shape):
    return np.ascontiguousarray(np.array(values, dtype=np.float64).reshape(shape))


def _owned_i32(values, shape):
    return np.ascontiguousarray(np.array(values, dtype=np.int32).reshape(shape))


# ---------------------------------------------------------------------------------------------
# scalars (3-vectors: dynamics_cy/_vec3.pxd)
# ---------------------------------------------------------------------------------------------
cdef inline double clamp(double x, double lo, double hi) noexcept nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef inline double step5(double x) noexcept nogil:
    """The quintic smooth step on [0, 1]: 10x³ − 15x⁴ + 6x⁵."""
    return x * x * x * (10.0 + x * (6.0 * x - 15.0))


cdef inline double stribeck(double s, double mu_s, double mu_d) noexcept nogil:
    """Regularized Coulomb friction coefficient at slip speed s in units of the stiction tolerance:
    μs·s(2 − s) below 1 (as Drake's TAMSI: μ/s stays finite at s = 0, so the linearly implicit
    friction converges monotonically), then Drake's Stribeck blend to μd by s = 3 (C¹ throughout)."""
    if s >= 3.0:
        return mu_d
    if s >= 1.0:
        return mu_s - (mu_s - mu_d) * step5((s - 1.0) / 2.0)
    return mu_s * s * (2.0 - s)


cdef void segments_closest(const double* p0, const double* p1, const double* q0, const double* q1,
                           double* pc, double* qc) noexcept nogil:
    """Closest points pc on segment p0p1 and qc on q0q1 (either may have zero length).

    Minimizes |p0 + s d1 − q0 − t d2|² over s, t in [0, 1]: the stationary s of the unconstrained
    problem is clamped, t follows from s, and s is recomputed when t had to be clamped.
    """
    cdef double d1[3]
    cdef double d2[3]
    cdef double r[3]
    cdef int i
    for i in range(3):
        d1[i], d2[i], r[i] = p1[i] - p0[i], q1[i] - q0[i], p0[i] - q0[i]
    cdef double a = dot3(d1, d1), e = dot3(d2, d2), f = dot3(d2, r)
    cdef double s = 0.0, t = 0.0, b, c, den
    cdef double eps = 1e-24
    if a <= eps and e <= eps:
        s = t = 0.0
    elif a <= eps:
        t = clamp(f / e, 0.0, 1.0)
    else:
        c = dot3(d1, r)
        if e <= eps:
            s = clamp(-c / a, 0.0, 1.0)
        else:
            b = dot3(d1, d2)
            den = a * e - b * b
            s = clamp((b * f - c * e) / den, 0.0, 1.0) if den > 1e-12 * a * e else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t, s = 0.0, clamp(-c / a, 0.0, 1.0)
            elif t > 1.0:
                t, s = 1.0, clamp((b - c) / a, 0.0, 1.0)
    for i in range(3):
        pc[i] = p0[i] + s * d1[i]
        qc[i] = q0[i] + t * d2[i]


cdef double point_box(const double* c, const double* h, double* q, double* n) noexcept nogil:
    """Signed distance φ from point c to the box |x_i| <= h_i (all in the box frame), its closest
    surface point q and the outward unit normal n there; φ < 0 inside (nearest face)."""
    cdef int i, k = 0
    cdef double d2 = 0.0, phi, best, gap
    cdef bint inside = True
    for i in range(3):
        q[i] = clamp(c[i], -h[i], h[i])
        if q[i] != c[i]:
            inside = False
        d2 += (c[i] - q[i]) * (c[i] - q[i])
    if not inside:
        phi = sqrt(d2)
        for i in range(3):
            n[i] = (c[i] - q[i]) / phi
        return phi
    best = h[0] - fabs(c[0])
    for i in range(1, 3):
        gap = h[i] - fabs(c[i])
        if gap < best:
            best, k = gap, i
    n[0] = n[1] = n[2] = 0.0
    n[k] = -1.0 if c[k] < 0.0 else 1.0
    q[k] = n[k] * h[k]
    return -best


cdef double point_cylinder(const double* c, double R, double L, double* q, double* n) noexcept nogil:
    """As point_box for the cylinder x² + y² <= R², |z| <= L (in its frame)."""
    cdef double rho = sqrt(c[0] * c[0] + c[1] * c[1])
    cdef double ux = 1.0, uy = 0.0, rq, d2, phi
    if rho > 0.0:
        ux, uy = c[0] / rho, c[1] / rho
    if rho > R or fabs(c[2]) > L:
        rq = rho if rho < R else R
        q[0], q[1], q[2] = rq * ux, rq * uy, clamp(c[2], -L, L)
        d2 = (c[0] - q[0]) ** 2 + (c[1] - q[1]) ** 2 + (c[2] - q[2]) ** 2
        phi = sqrt(d2)
        n[0], n[1], n[2] = (c[0] - q[0]) / phi, (c[1] - q[1]) / phi, (c[2] - q[2]) / phi
        return phi
    if R - rho < L - fabs(c[2]):
        q[0], q[1], q[2] = R * ux, R * uy, c[2]
        n[0], n[1], n[2] = ux, uy, 0.0
        return rho - R
    n[0], n[1] = 0.0, 0.0
    n[2] = -1.0 if c[2] < 0.0 else 1.0
    q[0], q[1], q[2] = c[0], c[1], n[2] * L
    return fabs(c[2]) - L


# ---------------------------------------------------------------------------------------------
# Point contact
# ---------------------------------------------------------------------------------------------
cdef int cholesky(double* A, int n) noexcept nogil:
    """A (n×n, row-major, SPD) = L Lᵀ in place (L in the lower triangle); 1 if not positive definite."""
    cdef int i, j, k
    cdef double s
    for j in range(n):
        s = A[j * n + j]
        for k in range(j):
            s -= A[j * n + k] * A[j * n + k]
        if s <= 0.0:
            return 1
        A[j * n + j] = sqrt(s)
        for i in range(j + 1, n):
            s = A[i * n + j]
            for k in range(j):
                s -= A[i * n + k] * A[j * n + k]
            A[i * n + j] = s / A[j * n + j]
    return 0


cdef void cholesky_solve(const double* L, int n, double* x) noexcept nogil:
    """x ← (L Lᵀ)⁻¹ x."""
    cdef int i, k
    cdef double s
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= L[i * n + k] * x[k]
        x[i] = s / L[i * n + i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k * n + i] * x[k]
        x[i] = s / L[i * n + i]


cdef class PointContact:
    """Compliant point contact of collision geometries with a ground half space and each other.

    Geometry g (shape code, body, X_BG, size) is sphere (r), box (half extents), capsule (r, half
    length) or cylinder (r, half length), axes along Gz. `ground` lists the geometries checked
    against the half space z <= ground_height (with their combined friction μs, μd), `pairs` the
    geometry pairs (A, B) checked against each other: sphere or capsule A with sphere or capsule B,
    or sphere A with box or cylinder B. Each penetrating point gets the Hunt–Crossley normal force
    and regularized Coulomb friction (docs/sim.md); the spatial forces F_Bo_W go to the bodies.

    With body Jacobians and the mass matrix, each contact's damping coefficients (friction μ(s) fₙ/s
    and Hunt–Crossley k x d) are capped at 1/(h Σ_j ‖W_ji‖_F), W_ji = J_j M⁻¹ J_iᵀ the Delassus
    blocks (J_i: the Jacobian of contact i's relative velocity): the explicit step's linearized
    damping I − h W C then has its eigenvalues in [0, 1], so light bodies do not chatter.

    A recording evaluation fills the per-contact arrays (`num_contacts` rows valid).
    """

    cdef readonly int num_geometries, num_ground, num_pairs, max_contacts, num_bodies, num_velocities
    cdef readonly int num_contacts
    cdef readonly double ground_height, stiffness, dissipation, stiction_tolerance, time_step
    cdef int* g_shape
    cdef int* g_body
    cdef double* g_R
    cdef double* g_p
    cdef double* g_size
    cdef int* ground_g
    cdef double* ground_mu
    cdef int* pair_g
    cdef double* pair_mu
    cdef double* X_WG
    cdef object _tables
    # Detected contacts of the current evaluation.
    cdef int* d_g
    cdef int* d_b
    cdef double* d_pa
    cdef double* d_pb
    cdef double* d_n
    cdef double* d_depth
    cdef double* d_mu
    cdef double* d_cap
    cdef double* d_f
    cdef double* d_C
    cdef double* d_vn
    cdef double* d_slip
    cdef double* d_A
    cdef double* d_u
    cdef double* d_J
    cdef double* d_Y
    cdef double* d_L
    cdef int* d_marked
    # Recorded contacts.
    cdef readonly object geometry_A, geometry_B, body_A, body_B
    cdef readonly object p_WCa, p_WCb, p_WC, nhat_BA_W, f_Bc_W, depth, separation_speed, slip_speed
    cdef int* r_gA
    cdef int* r_gB
    cdef int* r_bA
    cdef int* r_bB
    cdef double* r_pa
    cdef double* r_pb
    cdef double* r_pc
    cdef double* r_n
    cdef double* r_f
    cdef double* r_depth
    cdef double* r_vn
    cdef double* r_vt

    def __init__(self, shapes, bodies, R_BG, p_BG, sizes, ground, ground_mu, pairs, pair_mu,
                 double ground_height, double stiffness, double dissipation, double stiction_tolerance,
                 int num_bodies, int num_velocities, double time_step):
        cdef int ng = len(shapes), i, nv = num_velocities
        self.num_geometries, self.num_bodies, self.num_velocities = ng, num_bodies, nv
        self.num_ground, self.num_pairs = len(ground), len(pairs)
        self.ground_height, self.stiffness, self.dissipation = ground_height, stiffness, dissipation
        self.stiction_tolerance, self.time_step = stiction_tolerance, time_step
        tables = [_owned_i32(shapes, (ng,)), _owned_i32(bodies, (ng,)), _owned_f64(R_BG, (ng, 9)),
                  _owned_f64(p_BG, (ng, 3)), _owned_f64(sizes, (ng, 3)),
                  _owned_i32(ground, (self.num_ground,)), _owned_f64(ground_mu, (self.num_ground, 2)),
                  _owned_i32(pairs, (self.num_pairs, 2)), _owned_f64(pair_mu, (self.num_pairs, 2)),
                  np.zeros((ng, 12))]
        for i in range(ng):
            if tables[0][i] not in GROUND_POINTS or not 0 <= tables[1][i] < num_bodies:
                raise ValueError(f"geometry {i}: bad shape code {tables[0][i]} or body {tables[1][i]}")
        self.g_shape, self.g_body = _i32(tables[0]), _i32(tables[1])
        self.g_R, self.g_p, self.g_size = _f64(tables[2], 9 * ng, "R_BG"), _f64(tables[3], 3 * ng, "p_BG"), \
            _f64(tables[4], 3 * ng, "sizes")
        self.ground_g, self.ground_mu = _i32(tables[5]), _f64(tables[6], 2 * self.num_ground, "ground_mu")
        self.pair_g, self.pair_mu = _i32(tables[7]), _f64(tables[8], 2 * self.num_pairs, "pair_mu")
        self.X_WG = _f64(tables[9], 12 * ng, "X_WG")
        for i in range(self.num_pairs):
            if not (self.g_shape[self.pair_g[2 * i]] == SPHERE or
                    self.g_shape[self.pair_g[2 * i]] == CAPSULE and self.g_shape[self.pair_g[2 * i + 1]] in
                    (SPHERE, CAPSULE)):
                raise ValueError(f"pair {i}: unsupported shape pair (A must be a sphere, or a capsule with a "
                                 f"sphere or capsule B)")
        m = sum(GROUND_POINTS[tables[0][g]] for g in tables[5]) + self.num_pairs
        self.max_contacts = m
        work = [np.zeros((m, 2), np.int32), np.zeros((m, 2), np.int32), np.zeros((m, 3)), np.zeros((m, 3)),
                np.zeros((m, 3)), np.zeros(m), np.zeros((m, 2)), np.zeros(m), np.zeros((m, 3, nv)),
                np.zeros((m, nv, 3)), np.zeros((nv, nv)), np.zeros(num_bodies, np.int32), np.zeros((m, 3)),
                np.zeros((m, 3, 3)), np.zeros(m), np.zeros(m), np.zeros((3 * m, 3 * m)), np.zeros(3 * m)]
        self.d_g, self.d_b = _i32(work[0]), _i32(work[1])
        self.d_pa, self.d_pb, self.d_n = _f64(work[2], 3 * m, ""), _f64(work[3], 3 * m, ""), _f64(work[4], 3 * m, "")
        self.d_depth, self.d_mu, self.d_cap = _f64(work[5], m, ""), _f64(work[6], 2 * m, ""), _f64(work[7], m, "")
        self.d_J, self.d_Y = _f64(work[8], 3 * m * nv, ""), _f64(work[9], 3 * m * nv, "")
        self.d_L, self.d_marked = _f64(work[10], nv * nv, ""), _i32(work[11])
        self.d_f, self.d_C = _f64(work[12], 3 * m, ""), _f64(work[13], 9 * m, "")
        self.d_vn, self.d_slip = _f64(work[14], m, ""), _f64(work[15], m, "")
        self.d_A, self.d_u = _f64(work[16], 9 * m * m, ""), _f64(work[17], 3 * m, "")
        self._tables = tables + work
        self.geometry_A, self.geometry_B = np.zeros(m, np.int32), np.zeros(m, np.int32)
        self.body_A, self.body_B = np.zeros(m, np.int32), np.zeros(m, np.int32)
        self.p_WCa, self.p_WCb, self.p_WC = np.zeros((m, 3)), np.zeros((m, 3)), np.zeros((m, 3))
        self.nhat_BA_W, self.f_Bc_W = np.zeros((m, 3)), np.zeros((m, 3))
        self.depth, self.separation_speed, self.slip_speed = np.zeros(m), np.zeros(m), np.zeros(m)
        self.r_gA, self.r_gB, self.r_bA, self.r_bB = (_i32(self.geometry_A), _i32(self.geometry_B),
                                                      _i32(self.body_A), _i32(self.body_B))
        self.r_pa, self.r_pb, self.r_pc = _f64(self.p_WCa, 3 * m, ""), _f64(self.p_WCb, 3 * m, ""), \
            _f64(self.p_WC, 3 * m, "")
        self.r_n, self.r_f = _f64(self.nhat_BA_W, 3 * m, ""), _f64(self.f_Bc_W, 3 * m, "")
        self.r_depth, self.r_vn, self.r_vt = _f64(self.depth, m, ""), _f64(self.separation_speed, m, ""), \
            _f64(self.slip_speed, m, "")
        self.num_contacts = 0

    def evaluate(self, body_poses, body_velocities, body_forces, body_jacobians=None, mass_matrix=None):
        """Records the contacts of the bodies at X_WB (num_bodies, 4, 4) moving with V_WB (num_bodies, 6)
        and writes their spatial forces into body_forces (num_bodies, 6); with body_jacobians
        (num_bodies, 6, nv: V_WB = J v) and the mass matrix (nv, nv), the damping is bounded.
        Returns num_contacts."""
        cdef int nb = self.num_bodies, nv = self.num_velocities, n
        cdef const double* X = _f64(body_poses, 16 * nb, "body_poses")
        cdef const double* V = _f64(body_velocities, 6 * nb, "body_velocities")
        cdef double* F = _f64(body_forces, 6 * nb, "body_forces")
        cdef const double* J = NULL
        cdef const double* M = NULL
        if body_jacobians is not None:
            J, M = _f64(body_jacobians, 6 * nb * nv, "body_jacobians"), _f64(mass_matrix, nv * nv, "mass_matrix")
        with nogil:
            n = self.detect(X)
            if J != NULL and n and not self.jacobians(n, X, J, M):
                self.bound(n)
            self.apply(n, X, V, F, True)
        return n

    cdef void _geometry_poses(self, const double* X) noexcept nogil:
        """X_WG = X_WB X_BG of every geometry into X_WG rows [R_WG (9), p_WG (3)]."""
        cdef int g, b, r, c
        cdef const double* Xb
        cdef double* out
        for g in range(self.num_geometries):
            b = self.g_body[g]
            Xb = X + 16 * b
            out = self.X_WG + 12 * g
            for r in range(3):
                for c in range(3):
                    out[3 * r + c] = (Xb[4 * r] * self.g_R[9 * g + c] + Xb[4 * r + 1] * self.g_R[9 * g + 3 + c]
                                      + Xb[4 * r + 2] * self.g_R[9 * g + 6 + c])
                out[9 + r] = (Xb[4 * r + 3] + Xb[4 * r] * self.g_p[3 * g] + Xb[4 * r + 1] * self.g_p[3 * g + 1]
                              + Xb[4 * r + 2] * self.g_p[3 * g + 2])

    cdef inline void _add(self, int n, int gA, int gB, const double* pa, const double* pb, const double* nhat,
                          double depth, const double* mu) noexcept nogil:
        """Detected contact n: geometries, witness points, normal n̂ (B into A), depth, friction (μs, μd)."""
        cdef int s
        self.d_g[2 * n], self.d_g[2 * n + 1] = gA, gB
        self.d_b[2 * n], self.d_b[2 * n + 1] = self.g_body[gA], (0 if gB < 0 else self.g_body[gB])
        for s in range(3):
            self.d_pa[3 * n + s], self.d_pb[3 * n + s], self.d_n[3 * n + s] = pa[s], pb[s], nhat[s]
        self.d_depth[n], self.d_mu[2 * n], self.d_mu[2 * n + 1] = depth, mu[0], mu[1]
        self.d_cap[n] = INFINITY

    cdef int detect(self, const double* X) noexcept nogil:
        """The penetrating points of the bodies at X (num_bodies × 4 × 4); returns how many."""
        cdef int i, g, k, s, n = 0, nk
        cdef double pts[8][3]
        cdef double sx, sy, sz, ulen, x
        cdef const double* Rg
        cdef const double* pg
        cdef const double* size
        cdef double a[3]
        cdef double u[3]
        cdef double w[3]
        cdef double e_lo[3]
        cdef double e_hi[3]
        cdef double up[3]
        up[0], up[1], up[2] = 0.0, 0.0, 1.0
        self._geometry_poses(X)
        for i in range(self.num_ground):
            g = self.ground_g[i]
            Rg, pg, size = self.X_WG + 12 * g, self.X_WG + 12 * g + 9, self.g_size + 3 * g
            a[0], a[1], a[2] = Rg[2], Rg[5], Rg[8]           # Gz in W
            if self.g_shape[g] == SPHERE:
                pts[0][0], pts[0][1], pts[0][2] = pg[0], pg[1], pg[2] - size[0]
                nk = 1
            elif self.g_shape[g] == CAPSULE:
                for k in range(2):
                    sz = size[1] if k == 0 else -size[1]
                    pts[k][0], pts[k][1], pts[k][2] = pg[0] + sz * a[0], pg[1] + sz * a[1], pg[2] + sz * a[2] - size[0]
                nk = 2
            elif self.g_shape[g] == BOX:
                for k in range(8):
                    sx = size[0] if k & 1 else -size[0]
                    sy = size[1] if k & 2 else -size[1]
                    sz = size[2] if k & 4 else -size[2]
                    for s in range(3):
                        pts[k][s] = pg[s] + Rg[3 * s] * sx + Rg[3 * s + 1] * sy + Rg[3 * s + 2] * sz
                nk = 8
            else:
                # Cylinder: the rim point of each end disk deepest along −z, plus two more points at
                # ±120° on the lower disk's rim (a support triangle when it lies on a face).
                u[0], u[1], u[2] = a[2] * a[0], a[2] * a[1], a[2] * a[2] - 1.0     # −z ⊥ a
                ulen = sqrt(dot3(u, u))
                if ulen < 1e-9:
                    u[0], u[1], u[2] = Rg[0], Rg[3], Rg[6]                    # upright: Gx
                else:
                    u[0], u[1], u[2] = u[0] / ulen, u[1] / ulen, u[2] / ulen
                cross3(a, u, w)
                sz = size[1] if a[2] <= 0.0 else -size[1]                        # the lower disk's side
                for s in range(3):
                    e_lo[s] = pg[s] + sz * a[s]
                    e_hi[s] = pg[s] - sz * a[s]
                    pts[0][s] = e_lo[s] + size[0] * u[s]
                    pts[1][s] = e_hi[s] + size[0] * u[s]
                    pts[2][s] = e_lo[s] + size[0] * (COS120 * u[s] + SIN120 * w[s])
                    pts[3][s] = e_lo[s] + size[0] * (COS120 * u[s] - SIN120 * w[s])
                nk = 4
            for k in range(nk):
                x = self.ground_height - pts[k][2]
                if x > 0.0:
                    e_hi[0], e_hi[1], e_hi[2] = pts[k][0], pts[k][1], self.ground_height
                    self._add(n, g, -1, pts[k], e_hi, up, x, self.ground_mu + 2 * i)
                    n += 1
        for i in range(self.num_pairs):
            n += self._pair(n, i)
        return n

    cdef int _pair(self, int n, int i) noexcept nogil:
        """Contact of pair i (0 or 1 points): A is swept (a point or segment with radius rA)."""
        cdef int gA = self.pair_g[2 * i], gB = self.pair_g[2 * i + 1], s
        cdef const double* RA = self.X_WG + 12 * gA
        cdef const double* RB = self.X_WG + 12 * gB
        cdef const double* sA = self.g_size + 3 * gA
        cdef const double* sB = self.g_size + 3 * gB
        cdef double a0[3]
        cdef double a1[3]
        cdef double b0[3]
        cdef double b1[3]
        cdef double ca[3]
        cdef double cb[3]
        cdef double c_G[3]
        cdef double q_G[3]
        cdef double n_G[3]
        cdef double nhat[3]
        cdef double pa[3]
        cdef double pb[3]
        cdef double la = sA[1] if self.g_shape[gA] == CAPSULE else 0.0
        cdef double lb, dist, phi, depth
        for s in range(3):
            a0[s], a1[s] = RA[9 + s] + la * RA[3 * s + 2], RA[9 + s] - la * RA[3 * s + 2]
        if self.g_shape[gB] == SPHERE or self.g_shape[gB] == CAPSULE:
            lb = sB[1] if self.g_shape[gB] == CAPSULE else 0.0
            for s in range(3):
                b0[s], b1[s] = RB[9 + s] + lb * RB[3 * s + 2], RB[9 + s] - lb * RB[3 * s + 2]
            segments_closest(a0, a1, b0, b1, ca, cb)
            for s in range(3):
                nhat[s] = ca[s] - cb[s]
            dist = sqrt(dot3(nhat, nhat))
            depth = sA[0] + sB[0] - dist
            if depth <= 0.0:
                return 0
            if dist > 0.0:
                for s in range(3):
                    nhat[s] /= dist
            else:
                nhat[0], nhat[1], nhat[2] = 0.0, 0.0, 1.0
            for s in range(3):
                pa[s] = ca[s] - sA[0] * nhat[s]
                pb[s] = cb[s] + sB[0] * nhat[s]
        else:
            # Sphere A (centre a0) against the solid B: its signed distance φ, closest point and normal.
            for s in range(3):
                ca[s] = a0[s] - RB[9 + s]
            matTvec(RB, ca, c_G)
            if self.g_shape[gB] == BOX:
                phi = point_box(c_G, sB, q_G, n_G)
            else:
                phi = point_cylinder(c_G, sB[0], sB[1], q_G, n_G)
            depth = sA[0] - phi
            if depth <= 0.0:
                return 0
            matvec(RB, n_G, nhat)
            matvec(RB, q_G, pb)
            for s in range(3):
                pb[s] += RB[9 + s]
                pa[s] = a0[s] - sA[0] * nhat[s]
        self._add(n, gA, gB, pa, pb, nhat, depth, self.pair_mu + 2 * i)
        return 1

    cdef int mark_bodies(self, int n) noexcept nogil:
        """The distinct moving bodies of the first n detected contacts into d_marked; returns how many."""
        cdef int i, j, k, b, m = 0
        cdef bint seen
        for i in range(2 * n):
            b = self.d_b[i]
            if b == 0:
                continue
            seen = False
            for k in range(m):
                if self.d_marked[k] == b:
                    seen = True
                    break
            if not seen:
                self.d_marked[m] = b
                m += 1
        return m

    cdef int jacobians(self, int n, const double* X, const double* J, const double* M) noexcept nogil:
        """J_i (3 × nv: v_rel,i = J_i v at C_i) and Y_i = M⁻¹ J_iᵀ of the n detected contacts, from the
        body Jacobians J (num_bodies × 6 × nv, rows [w; v_Bo]) of the bodies mark_bodies() lists and
        the mass matrix M (nv × nv). Returns 1 if M is not positive definite."""
        cdef int nv = self.num_velocities, i, k, s, side, b, col
        cdef double r[3]
        cdef double wk[3]
        cdef double rxw[3]
        cdef double sign
        cdef double* Ji
        cdef const double* Jb
        memcpy(self.d_L, M, nv * nv * sizeof(double))
        if cholesky(self.d_L, nv):
            return 1
        for i in range(n):
            Ji = self.d_J + 3 * nv * i
            memset(Ji, 0, 3 * nv * sizeof(double))
            for side in range(2):
                b = self.d_b[2 * i + side]
                if b == 0:
                    continue
                sign = 1.0 if side == 0 else -1.0
                Jb = J + 6 * nv * b
                for s in range(3):
                    r[s] = 0.5 * (self.d_pa[3 * i + s] + self.d_pb[3 * i + s]) - X[16 * b + 4 * s + 3]
                for k in range(nv):              # v_C = v_Bo − r × w
                    wk[0], wk[1], wk[2] = Jb[k], Jb[nv + k], Jb[2 * nv + k]
                    cross3(r, wk, rxw)
                    for s in range(3):
                        Ji[s * nv + k] += sign * (Jb[(3 + s) * nv + k] - rxw[s])
            for col in range(3):                 # Y_i = M⁻¹ J_iᵀ, stored column by column
                for k in range(nv):
                    self.d_Y[3 * nv * i + col * nv + k] = Ji[col * nv + k]
                cholesky_solve(self.d_L, nv, self.d_Y + 3 * nv * i + col * nv)
        return 0

    cdef inline void _delassus(self, int i, int j, double* W) noexcept nogil:
        """W (3 × 3, row-major) = J_i M⁻¹ J_jᵀ = J_i Y_j."""
        cdef int nv = self.num_velocities, r, c, k
        cdef double e
        for r in range(3):
            for c in range(3):
                e = 0.0
                for k in range(nv):
                    e += self.d_J[3 * nv * i + r * nv + k] * self.d_Y[3 * nv * j + c * nv + k]
                W[3 * r + c] = e

    cdef void bound(self, int n) noexcept nogil:
        """Damping caps 1/(h Σ_j ‖W_ji‖_F) of the n contacts (after jacobians())."""
        cdef int i, j, k
        cdef double W[9]
        cdef double total, block
        for i in range(n):
            total = 0.0
            for j in range(n):
                self._delassus(j, i, W)
                block = 0.0
                for k in range(9):
                    block += W[k] * W[k]
                total += sqrt(block)
            self.d_cap[i] = 1.0 / (self.time_step * total) if total > 0.0 else INFINITY

    cdef inline double _kinematics(self, int i, const double* X, const double* V, double* c, double* rA, double* rB,
                                   double* vt) noexcept nogil:
        """Contact point c, its offsets from Ao and Bo, and the tangential relative velocity v_t; returns vₙ."""
        cdef double vA[3]
        cdef double vB[3]
        cdef int s, bA = self.d_b[2 * i], bB = self.d_b[2 * i + 1]
        cdef const double* nhat = self.d_n + 3 * i
        cdef double vn
        for s in range(3):
            c[s] = 0.5 * (self.d_pa[3 * i + s] + self.d_pb[3 * i + s])
            rA[s] = c[s] - X[16 * bA + 4 * s + 3]
            rB[s] = c[s] - X[16 * bB + 4 * s + 3]
        cross3(V + 6 * bA, rA, vA)
        cross3(V + 6 * bB, rB, vB)
        for s in range(3):
            vt[s] = vA[s] + V[6 * bA + 3 + s] - vB[s] - V[6 * bB + 3 + s]
        vn = dot3(vt, nhat)
        for s in range(3):
            vt[s] -= vn * nhat[s]
        return vn

    cdef inline void _push(self, int i, const double* rA, const double* rB, const double* f, double* F) noexcept nogil:
        """[r × f; f] on body A, the opposite on body B."""
        cdef double tq[3]
        cdef int s, bA = self.d_b[2 * i], bB = self.d_b[2 * i + 1]
        cross3(rA, f, tq)
        for s in range(3):
            F[6 * bA + s] += tq[s]
            F[6 * bA + 3 + s] += f[s]
        cross3(rB, f, tq)
        for s in range(3):
            F[6 * bB + s] -= tq[s]
            F[6 * bB + 3 + s] -= f[s]

    cdef inline void _record(self, int i, const double* c, const double* f, double vn, double slip) noexcept nogil:
        cdef int s
        self.r_gA[i], self.r_gB[i] = self.d_g[2 * i], self.d_g[2 * i + 1]
        self.r_bA[i], self.r_bB[i] = self.d_b[2 * i], self.d_b[2 * i + 1]
        for s in range(3):
            self.r_pa[3 * i + s], self.r_pb[3 * i + s], self.r_pc[3 * i + s] = \
                self.d_pa[3 * i + s], self.d_pb[3 * i + s], c[s]
            self.r_n[3 * i + s], self.r_f[3 * i + s] = self.d_n[3 * i + s], -f[s]
        self.r_depth[i], self.r_vn[i], self.r_vt[i] = self.d_depth[i], vn, slip

    cdef void apply(self, int n, const double* X, const double* V, double* F, bint record) noexcept nogil:
        """Zeroes F and adds the explicit forces of the n detected contacts, at C = (Ca + Cb)/2 with
        normal n̂ (from B into A) and depth x: f_A = fₙ n̂ − c_t v_t, fₙ = (k x − c_n vₙ)₊,
        c_n = min(k x d, cap), c_t = min(μ(s) fₙ/s, cap), vₙ = v_rel·n̂, v_t = v_rel − vₙ n̂, s = |v_t|,
        v_rel = v_ACo − v_BCo; [p_AoC × f; f] on A and the opposite on B. d_f keeps each f_A."""
        cdef double c[3]
        cdef double rA[3]
        cdef double rB[3]
        cdef double vt[3]
        cdef double vn, slip, fn, cn, ct, x, cap
        cdef const double* nhat
        cdef double* f
        cdef int i, s
        memset(F, 0, 6 * self.num_bodies * sizeof(double))
        for i in range(n):
            nhat, x, cap, f = self.d_n + 3 * i, self.d_depth[i], self.d_cap[i], self.d_f + 3 * i
            vn = self._kinematics(i, X, V, c, rA, rB, vt)
            slip = sqrt(dot3(vt, vt))
            cn = min(self.stiffness * x * self.dissipation, cap)
            fn = max(0.0, self.stiffness * x - cn * vn)
            ct = stribeck(slip / self.stiction_tolerance, self.d_mu[2 * i], self.d_mu[2 * i + 1]) * fn / slip \
                if slip > 0.0 else 0.0
            ct = min(ct, cap)
            for s in range(3):
                f[s] = fn * nhat[s] - ct * vt[s]
            self._push(i, rA, rB, f, F)
            if record:
                self._record(i, c, f, vn, slip)
        if record:
            self.num_contacts = n

    cdef int spring(self, int n, const double* X, const double* V, double* F) noexcept nogil:
        """Semi-implicit Euler, part 1: F = the contact springs k x n̂ only, and each contact's damping
        matrix C_i = c_n n̂n̂ᵀ + c_t (I − n̂n̂ᵀ) with c_n = k x d and c_t = μ(s) fₙ/s at the current slip,
        fₙ = (k x (1 − d vₙ))₊ (after jacobians())."""
        cdef double c[3]
        cdef double rA[3]
        cdef double rB[3]
        cdef double vt[3]
        cdef double f[3]
        cdef double vn, slip, fn, cn, ct, x
        cdef const double* nhat
        cdef double* C
        cdef int i, r, col
        memset(F, 0, 6 * self.num_bodies * sizeof(double))
        for i in range(n):
            nhat, x, C = self.d_n + 3 * i, self.d_depth[i], self.d_C + 9 * i
            vn = self._kinematics(i, X, V, c, rA, rB, vt)
            slip = sqrt(dot3(vt, vt))
            self.d_vn[i], self.d_slip[i] = vn, slip
            cn = self.stiffness * x * self.dissipation
            fn = max(0.0, self.stiffness * x * (1.0 - self.dissipation * vn))
            ct = stribeck(slip / self.stiction_tolerance, self.d_mu[2 * i], self.d_mu[2 * i + 1]) * fn / slip \
                if slip > 0.0 else 0.0
            for r in range(3):
                for col in range(3):
                    C[3 * r + col] = (cn - ct) * nhat[r] * nhat[col] + (ct if r == col else 0.0)
                f[r] = self.stiffness * x * nhat[r]
            self._push(i, rA, rB, f, F)
        return n

    cdef int damp(self, int n, const double* X, const double* v_star, double* dv, bint record) noexcept nogil:
        """Semi-implicit Euler, part 2: with u* = J v* the contact velocities after a step under the
        springs, the damping forces f_d = −C u⁺ where (I + h W C) u⁺ = u* (W = J M⁻¹ Jᵀ), clamped to
        keep fₙ >= 0 and |f_t| <= max(μs, μd) fₙ; dv = h M⁻¹ Σ J_iᵀ f_d,i. 1 if the solve failed."""
        cdef int nv = self.num_velocities, m = 3 * n, i, j, r, col, k, p
        cdef double W[9]
        cdef double* A = self.d_A
        cdef double* u = self.d_u
        cdef double h = self.time_step, e, pivot, fn, ft, limit, x
        cdef double c[3]
        cdef double fd[3]
        cdef double* f
        cdef const double* nhat
        for i in range(n):                       # A = I + h W C (row block i, column block j), u = J v*
            for j in range(n):
                self._delassus(i, j, W)
                for r in range(3):
                    for col in range(3):
                        e = 0.0
                        for k in range(3):
                            e += W[3 * r + k] * self.d_C[9 * j + 3 * k + col]
                        A[(3 * i + r) * m + 3 * j + col] = h * e + (1.0 if i == j and r == col else 0.0)
            for r in range(3):
                e = 0.0
                for k in range(nv):
                    e += self.d_J[3 * nv * i + r * nv + k] * v_star[k]
                u[3 * i + r] = e
        for col in range(m):                     # Gaussian elimination with partial pivoting
            p = col
            for r in range(col + 1, m):
                if fabs(A[r * m + col]) > fabs(A[p * m + col]):
                    p = r
            if A[p * m + col] == 0.0:
                return 1
            if p != col:
                for k in range(m):
                    A[col * m + k], A[p * m + k] = A[p * m + k], A[col * m + k]
                u[col], u[p] = u[p], u[col]
            for r in range(col + 1, m):
                e = A[r * m + col] / A[col * m + col]
                for k in range(col, m):
                    A[r * m + k] -= e * A[col * m + k]
                u[r] -= e * u[col]
        for r in range(m - 1, -1, -1):
            e = u[r]
            for k in range(r + 1, m):
                e -= A[r * m + k] * u[k]
            u[r] = e / A[r * m + r]
        memset(dv, 0, nv * sizeof(double))
        for i in range(n):
            nhat, x, f = self.d_n + 3 * i, self.d_depth[i], self.d_f + 3 * i
            for r in range(3):
                fd[r] = -(self.d_C[9 * i + 3 * r] * u[3 * i] + self.d_C[9 * i + 3 * r + 1] * u[3 * i + 1]
                          + self.d_C[9 * i + 3 * r + 2] * u[3 * i + 2])
            fn = self.stiffness * x + dot3(fd, nhat)
            if fn < 0.0:                         # no adhesion
                for r in range(3):
                    fd[r] -= fn * nhat[r]
                fn = 0.0
            e = dot3(fd, nhat)
            ft = 0.0
            for r in range(3):
                fd[r] -= e * nhat[r]             # fd: the tangential part, for now
                ft += fd[r] * fd[r]
            ft = sqrt(ft)
            limit = max(self.d_mu[2 * i], self.d_mu[2 * i + 1]) * fn
            for r in range(3):
                if ft > limit:
                    fd[r] *= limit / ft
                f[r] = fn * nhat[r] + fd[r]
                fd[r] = f[r] - self.stiffness * x * nhat[r]
            for col in range(3):
                for k in range(nv):
                    dv[k] += h * self.d_Y[3 * nv * i + col * nv + k] * fd[col]
            if record:
                for r in range(3):
                    c[r] = 0.5 * (self.d_pa[3 * i + r] + self.d_pb[3 * i + r])
                self._record(i, c, f, self.d_vn[i], self.d_slip[i])
        if record:
            self.num_contacts = n
        return 0

    cdef void generalized(self, int n, double* tau) noexcept nogil:
        """tau = Σ_i J_iᵀ f_i: the generalized force of the n contacts' last forces (after jacobians())."""
        cdef int nv = self.num_velocities, i, r, k
        memset(tau, 0, nv * sizeof(double))
        for i in range(n):
            for r in range(3):
                for k in range(nv):
                    tau[k] += self.d_J[3 * nv * i + r * nv + k] * self.d_f[3 * i + r]


# ---------------------------------------------------------------------------------------------
# Joint dissipation: implicit viscous damping and Coulomb friction
# ---------------------------------------------------------------------------------------------
cdef int coulomb_solve(const double* A, const double* b, const double* f, double* x, int n,
                       double tol, int max_sweeps) noexcept nogil:
    """x ← argmin ½ xᵀA x − bᵀx + Σ fᵢ|xᵢ| (A SPD, f >= 0) by exact coordinate minimization from the
    given x: xᵢ = S(bᵢ − Σ_{j≠i} Aᵢⱼ xⱼ, fᵢ) / Aᵢᵢ with S(r, t) = sign(r) max(|r| − t, 0). The objective
    is strictly convex, so the sweeps converge to its unique minimizer (Luo & Tseng 1992); stops when
    no coordinate moves more than tol. Returns the sweeps taken."""
    cdef int i, j, sweep
    cdef double r, xi, change
    for sweep in range(1, max_sweeps + 1):
        change = 0.0
        for i in range(n):
            r = b[i]
            for j in range(n):
                if j != i:
                    r -= A[i * n + j] * x[j]
            xi = (r - f[i]) / A[i * n + i] if r > f[i] else ((r + f[i]) / A[i * n + i] if r < -f[i] else 0.0)
            if fabs(xi - x[i]) > change:
                change = fabs(xi - x[i])
            x[i] = xi
        if change <= tol:
            return sweep
    return max_sweeps


# ---------------------------------------------------------------------------------------------
# The integrator
# ---------------------------------------------------------------------------------------------
cdef class Stepper:
    """Advances (q, v) by one fixed step h under actuation u (one entry per actuator).

    Generalized forces: τ = B clamp(u, ±u_max)∘e + τ_limits(q, v) (− d∘v with RK4), plus the contact forces as body
    forces; v̇ from the articulated-body algorithm. Semi-implicit Euler: v* = v + h v̇ with the
    contact springs at (q, v) and the contact damping and friction linearly implicit
    (PointContact.spring/damp); the joint damping d and Coulomb friction f are then fully implicit
    (`_dissipate`): v⁺ = argmin ½ (v⁺ − v*)ᵀ M (v⁺ − v*) + ½ h v⁺ᵀ D v⁺ + h Σ fᵢ |v⁺ᵢ|, i.e.
    M (v⁺ − v*) = −h D v⁺ − h τ_f with τ_f,i ∈ fᵢ ∂|v⁺ᵢ| (stick or slip, exactly), as Drake's discrete
    solvers treat joint damping ((M + hD) v⁺ = M v*); then q⁺ = q + h N(q) v⁺. RK4 on ẋ = [N(q) v; v̇(q, v)] with explicit
    contact forces, their damping capped (PointContact.bound) and the joint damping explicit (as
    Drake's continuous plant), then the implicit friction alone (a first-order split at the new q:
    its Δv on v and, as a ramp over the step, ½ h N(q) Δv on q, so a stuck joint stays exactly put).
    Quaternions are renormalized after
    the step. e is `actuator_enabled` (1 or 0 per actuator). Joint-limit springs act on 1-dof joints
    outside [lower, upper]: τ = k (lower − q) − c v, kept >= 0 (and mirrored at the upper limit).
    """

    cdef object _fd, _poses, _velocities, _qdot, _jacobian, _mass, _frames, _J, _J_rows, _M
    cdef readonly int nq, nv, nu, nb, num_limits
    cdef readonly double h
    cdef readonly bint rk4
    cdef bint qdot_is_v
    cdef readonly long long steps
    cdef readonly object q, v, u_commanded, u_applied, actuator_enabled, tau_contact, contact
    cdef PointContact _contact
    cdef object _tau, _vdot, _qdot_a, _qs, _vs, _kq, _kv, _kq_rows, _F, _P, _V, _tmp, _tables
    cdef double* pq
    cdef double* pv
    cdef double* puc
    cdef double* pua
    cdef double* pen
    cdef double* ptc
    cdef double* ptau
    cdef double* pvdot
    cdef double* pqdot
    cdef double* pqs
    cdef double* pvs
    cdef double* pkq
    cdef double* pkv
    cdef double* pF
    cdef double* pP
    cdef double* pV
    cdef double* pJ
    cdef double* pM
    cdef double* ptmp
    cdef double* damping
    cdef double* friction
    cdef double* pA
    cdef double* pb
    cdef bint dissipative
    cdef readonly int sweeps
    cdef double* effort
    cdef int* act_v
    cdef int* lim_q
    cdef int* lim_v
    cdef double* lim
    cdef int* quat_q
    cdef int num_quats

    def __init__(self, kernels, double time_step, bint rk4, damping, friction, effort_limits, actuator_dofs,
                 limit_q, limit_v, limits, quaternion_starts, bint qdot_is_v, contact=None, body_frames=None):
        """kernels: plant.kernels(); damping d (N·m·s/rad) and Coulomb friction f (N·m) (nv); effort_limits and actuator_dofs (the v index each
        actuator drives) (nu); limit_q, limit_v (q and v index of each limited 1-dof joint) and limits
        (rows [lower, upper, stiffness, damping]); quaternion_starts: q index of each free body's qw;
        qdot_is_v: N(q) = I; contact: a PointContact or None, with body_frames the frame index of each
        body's frame (for the Jacobians that bound the contact damping)."""
        self._fd, self._qdot = kernels.forward_dynamics, kernels.map_velocity_to_qdot
        self._jacobian, self._mass = kernels.jacobian, kernels.mass_matrix
        self._poses, self._velocities = kernels.body_poses, kernels.body_spatial_velocities
        self.nq, self.nv, self.nb = kernels.nq, kernels.nv, kernels.num_bodies
        self.nu = len(effort_limits)
        self.h, self.rk4, self.qdot_is_v = time_step, rk4, qdot_is_v
        self.num_limits, self.num_quats = len(limit_q), len(quaternion_starts)
        self._tables = [_owned_f64(damping, (self.nv,)), _owned_f64(effort_limits, (self.nu,)),
                        _owned_i32(actuator_dofs, (self.nu,)), _owned_i32(limit_q, (self.num_limits,)),
                        _owned_i32(limit_v, (self.num_limits,)), _owned_f64(limits, (self.num_limits, 4)),
                        _owned_i32(quaternion_starts, (self.num_quats,)), _owned_f64(friction, (self.nv,)),
                        np.zeros((self.nv, self.nv)), np.zeros(self.nv)]
        self.damping = _f64(self._tables[0], self.nv, "damping")
        self.friction = _f64(self._tables[7], self.nv, "friction")
        self.pA, self.pb = _f64(self._tables[8], self.nv * self.nv, ""), _f64(self._tables[9], self.nv, "")
        self.dissipative = bool((not rk4 and np.any(self._tables[0])) or np.any(self._tables[7]))
        self.sweeps = 0
        self.effort = _f64(self._tables[1], self.nu, "effort_limits")
        self.act_v, self.lim_q, self.lim_v = _i32(self._tables[2]), _i32(self._tables[3]), _i32(self._tables[4])
        self.lim = _f64(self._tables[5], 4 * self.num_limits, "limits")
        self.quat_q = _i32(self._tables[6])
        self.q, self.v = np.zeros(self.nq), np.zeros(self.nv)
        self.u_commanded, self.u_applied = np.zeros(self.nu), np.zeros(self.nu)
        self.actuator_enabled, self.tau_contact = np.ones(self.nu), np.zeros(self.nv)
        self._tau, self._vdot, self._qdot_a, self._tmp = np.zeros(self.nv), np.zeros(self.nv), np.zeros(self.nq), \
            np.zeros(self.nv)
        self._qs, self._vs = np.zeros(self.nq), np.zeros(self.nv)
        self._kq, self._kv = np.zeros((4, self.nq)), np.zeros((4, self.nv))
        self._kq_rows = tuple(self._kq[i] for i in range(4))
        self._F, self._P, self._V = np.zeros((self.nb, 6)), np.zeros((self.nb, 4, 4)), np.zeros((self.nb, 6))
        self._J, self._M = np.zeros((self.nb, 6, self.nv)), np.zeros((self.nv, self.nv))
        self._J_rows = tuple(self._J[b] for b in range(self.nb))
        self._frames = list(body_frames) if body_frames is not None else []
        self.pJ, self.pM = _f64(self._J, 6 * self.nb * self.nv, ""), _f64(self._M, self.nv * self.nv, "")
        self.pq, self.pv = _f64(self.q, self.nq, "q"), _f64(self.v, self.nv, "v")
        self.puc, self.pua = _f64(self.u_commanded, self.nu, ""), _f64(self.u_applied, self.nu, "")
        self.pen, self.ptc = _f64(self.actuator_enabled, self.nu, ""), _f64(self.tau_contact, self.nv, "")
        self.ptau, self.pvdot = _f64(self._tau, self.nv, ""), _f64(self._vdot, self.nv, "")
        self.pqdot, self.ptmp = _f64(self._qdot_a, self.nq, ""), _f64(self._tmp, self.nv, "")
        self.pqs, self.pvs = _f64(self._qs, self.nq, ""), _f64(self._vs, self.nv, "")
        self.pkq, self.pkv = _f64(self._kq, 4 * self.nq, ""), _f64(self._kv, 4 * self.nv, "")
        self.pF, self.pP, self.pV = _f64(self._F, 6 * self.nb, ""), _f64(self._P, 16 * self.nb, ""), \
            _f64(self._V, 6 * self.nb, "")
        if contact is not None and ((<PointContact?>contact).num_bodies != self.nb
                                    or contact.num_velocities != self.nv or len(self._frames) != self.nb):
            raise ValueError(f"contact is set up for {contact.num_bodies} bodies and {contact.num_velocities} "
                             f"velocities with {len(self._frames)} body frames; the plant has {self.nb} and {self.nv}")
        self.contact = contact
        self._contact = contact
        self.steps = 0

    def set_state(self, q, v, long long steps=0):
        """Sets q (nq), v (nv) and the step count (simulated time = steps · h)."""
        memcpy(self.pq, _in(q, self.nq, "q"), self.nq * sizeof(double))
        memcpy(self.pv, _in(v, self.nv, "v"), self.nv * sizeof(double))
        self.steps = steps

    cdef int _forces(self, const double* pq, const double* pv) except -1:
        """_tau = B u_applied + τ_limits(q, v) (− d∘v with RK4)."""
        cdef int i, j
        cdef double x, t
        memset(self.ptau, 0, self.nv * sizeof(double))
        for i in range(self.nu):
            self.ptau[self.act_v[i]] += self.pua[i]
        if self.rk4:
            for i in range(self.nv):
                self.ptau[i] -= self.damping[i] * pv[i]
        for i in range(self.num_limits):
            x, j = pq[self.lim_q[i]], self.lim_v[i]
            if x < self.lim[4 * i]:
                t = self.lim[4 * i + 2] * (self.lim[4 * i] - x) - self.lim[4 * i + 3] * pv[j]
                if t > 0.0:
                    self.ptau[j] += t
            elif x > self.lim[4 * i + 1]:
                t = self.lim[4 * i + 2] * (self.lim[4 * i + 1] - x) - self.lim[4 * i + 3] * pv[j]
                if t < 0.0:
                    self.ptau[j] += t
        return 0

    cdef int _contacts(self, object q, object v) except -1:
        """Detects the contacts at (q, v) and, if any, their Jacobians; returns how many."""
        cdef int n, j, b
        self._poses(q, self._P)
        self._velocities(q, v, self._V)
        n = self._contact.detect(self.pP)
        if n:
            for j in range(self._contact.mark_bodies(n)):
                b = self._contact.d_marked[j]
                self._jacobian(q, self._frames[b], self._J_rows[b])
            self._mass(q, self._M)
            if self._contact.jacobians(n, self.pP, self.pJ, self.pM):
                raise RuntimeError("the mass matrix is not positive definite")
        return n

    cdef int _derivative(self, object q, object v, const double* pq, const double* pv, object vdot,
                         bint record) except -1:
        """vdot = v̇(q, v) with explicit, capped contact forces (RK4); record: the step's contacts."""
        cdef int n
        self._forces(pq, pv)
        if self._contact is None:
            self._fd(q, v, self._tau, vdot)
            return 0
        n = self._contacts(q, v)
        if n:
            self._contact.bound(n)
        self._contact.apply(n, self.pP, self.pV, self.pF, record)
        self._fd(q, v, self._tau, vdot, self._F)
        if record:
            self._contact.generalized(n, self.ptc)
        return 0

    cdef int _euler_velocity(self) except -1:
        """v ← v + h v̇ with the contact springs explicit and the contact damping and friction linearly
        implicit (PointContact.spring / damp)."""
        cdef int i, n
        self._forces(self.pq, self.pv)
        if self._contact is None:
            self._fd(self.q, self.v, self._tau, self._vdot)
            for i in range(self.nv):
                self.pv[i] += self.h * self.pvdot[i]
            return 0
        n = self._contacts(self.q, self.v)
        self._contact.spring(n, self.pP, self.pV, self.pF)
        self._fd(self.q, self.v, self._tau, self._vdot, self._F)
        for i in range(self.nv):
            self.pvs[i] = self.pv[i] + self.h * self.pvdot[i]
        if n:
            if self._contact.damp(n, self.pP, self.pvs, self.ptmp, True):
                raise RuntimeError("the contact damping system is singular")
            for i in range(self.nv):
                self.pvs[i] += self.ptmp[i]
        else:
            self._contact.num_contacts = 0
        memcpy(self.pv, self.pvs, self.nv * sizeof(double))
        self._contact.generalized(n, self.ptc)
        return 0

    cdef int _dissipate(self) except -1:
        """v ← argmin ½ (v⁺ − v)ᵀ M (v⁺ − v) + ½ h v⁺ᵀ D v⁺ + h Σ fᵢ|v⁺ᵢ| with M = M(q): b = M v,
        A = M + hD; without friction v⁺ = A⁻¹ b (Cholesky), with it coordinate minimization from there
        (`coulomb_solve`, to 1e-12 of the largest speed)."""
        cdef int i, j, n = self.nv
        cdef bint coulomb = False
        cdef double s, vmax = 0.0
        self._mass(self.q, self._M)
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += self.pM[i * n + j] * self.pv[j]
            self.pb[i] = s
            if not self.rk4:
                self.pM[i * n + i] += self.h * self.damping[i]
            coulomb = coulomb or self.friction[i] > 0.0
        memcpy(self.pA, self.pM, n * n * sizeof(double))
        memcpy(self.pv, self.pb, n * sizeof(double))
        if cholesky(self.pA, n):
            raise RuntimeError("the mass matrix is not positive definite")
        cholesky_solve(self.pA, n, self.pv)
        if coulomb:
            for i in range(n):
                self.ptmp[i] = self.h * self.friction[i]
                vmax = fabs(self.pv[i]) if fabs(self.pv[i]) > vmax else vmax
            self.sweeps = coulomb_solve(self.pM, self.pb, self.ptmp, self.pv, n, 1e-12 * (1.0 + vmax), 10000)
        return 0

    cdef int _rates(self, object q, object v, const double* pv, double* qdot, object qdot_array) except -1:
        if self.qdot_is_v:
            memcpy(qdot, pv, self.nv * sizeof(double))
        else:
            self._qdot(q, v, qdot_array)
        return 0

    def step(self, u):
        """One step under actuation u (nu; None when nu = 0): q, v advance by h, steps by 1."""
        cdef const double* pu = _in(u, self.nu, "u") if self.nu else NULL
        cdef int i, s
        cdef double x, w, norm
        cdef double* kq
        cdef double* kv
        for i in range(self.nu):
            x = pu[i]
            x = self.effort[i] if x > self.effort[i] else (-self.effort[i] if x < -self.effort[i] else x)
            self.puc[i] = x
            self.pua[i] = x * self.pen[i]
        if not self.rk4:
            self._euler_velocity()
            if self.dissipative:
                self._dissipate()
            self._rates(self.q, self.v, self.pv, self.pqdot, self._qdot_a)
            for i in range(self.nq):
                self.pq[i] += self.h * self.pqdot[i]
        else:
            kq, kv = self.pkq, self.pkv
            self._derivative(self.q, self.v, self.pq, self.pv, self._vdot, True)
            memcpy(kv, self.pvdot, self.nv * sizeof(double))
            self._rates(self.q, self.v, self.pv, kq, self._kq_rows[0])
            for s in range(1, 4):
                w = self.h if s == 3 else 0.5 * self.h
                for i in range(self.nq):
                    self.pqs[i] = self.pq[i] + w * kq[(s - 1) * self.nq + i]
                for i in range(self.nv):
                    self.pvs[i] = self.pv[i] + w * kv[(s - 1) * self.nv + i]
                self._derivative(self._qs, self._vs, self.pqs, self.pvs, self._vdot, False)
                memcpy(kv + s * self.nv, self.pvdot, self.nv * sizeof(double))
                self._rates(self._qs, self._vs, self.pvs, kq + s * self.nq, self._kq_rows[s])
            w = self.h / 6.0
            for i in range(self.nq):
                self.pq[i] += w * (kq[i] + 2.0 * kq[self.nq + i] + 2.0 * kq[2 * self.nq + i] + kq[3 * self.nq + i])
            for i in range(self.nv):
                self.pv[i] += w * (kv[i] + 2.0 * kv[self.nv + i] + 2.0 * kv[2 * self.nv + i] + kv[3 * self.nv + i])
            if self.dissipative:                      # Δv = the friction's; q⁺ += ½ h N(q⁺) Δv (a ramp)
                memcpy(self.pvs, self.pv, self.nv * sizeof(double))
                self._dissipate()
                for i in range(self.nv):
                    self.pvs[i] = self.pv[i] - self.pvs[i]
                self._rates(self.q, self._vs, self.pvs, self.pqdot, self._qdot_a)
                for i in range(self.nq):
                    self.pq[i] += 0.5 * self.h * self.pqdot[i]
        for s in range(self.num_quats):
            i = self.quat_q[s]
            norm = sqrt(self.pq[i] ** 2 + self.pq[i + 1] ** 2 + self.pq[i + 2] ** 2 + self.pq[i + 3] ** 2)
            self.pq[i] /= norm
            self.pq[i + 1] /= norm
            self.pq[i + 2] /= norm
            self.pq[i + 3] /= norm
        self.steps += 1


# ---------------------------------------------------------------------------------------------
# Joint maps (the robot's protocol joints ↔ the plant's coordinates)
# ---------------------------------------------------------------------------------------------
cdef const Py_ssize_t* _index(object index, Py_ssize_t n, Py_ssize_t bound) except? NULL:
    """The data of an intp array of n entries, each in [0, bound)."""
    if not cnp.PyArray_Check(index) or cnp.PyArray_TYPE(<cnp.ndarray>index) != cnp.NPY_INTP \
            or cnp.PyArray_SIZE(<cnp.ndarray>index) != n or not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>index):
        raise ValueError(f"index must be a C-contiguous intp array of {n} entries")
    cdef const Py_ssize_t* k = <const Py_ssize_t*>cnp.PyArray_DATA(<cnp.ndarray>index)
    cdef Py_ssize_t i
    for i in range(n):
        if k[i] < 0 or k[i] >= bound:
            raise IndexError(f"index[{i}] = {k[i]} is out of range [0, {bound})")
    return k


def gather(src, index, double scale, dst):
    """dst[i] = scale · src[index[i]] (float64 vectors, index intp)."""
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray?>dst), m = cnp.PyArray_SIZE(<cnp.ndarray?>src), i
    cdef const Py_ssize_t* k = _index(index, n, m)
    cdef const double* s = _in(src, m, "src")
    cdef double* d = _f64(dst, n, "dst")
    for i in range(n):
        d[i] = scale * s[k[i]]


def scatter(src, index, dst):
    """dst[index[i]] = src[i] (float64 vectors, index intp)."""
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray?>src), m = cnp.PyArray_SIZE(<cnp.ndarray?>dst), i
    cdef const Py_ssize_t* k = _index(index, n, m)
    cdef const double* s = _in(src, n, "src")
    cdef double* d = _f64(dst, m, "dst")
    for i in range(n):
        d[k[i]] = s[i]
