# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The simulator's compliant point contact (PointContact): detection of the collision shapes against the
ground and each other, Hunt–Crossley normal forces and regularized Coulomb friction, the damping bound
and the linearly implicit damping solve the stepper (drivers.sim._physics) uses. Preallocated at
construction; allocates nothing per evaluation. Set up from drivers.sim.contact; docs/sim.md has the
equations.
"""
from drivers.sim._box_box cimport box_box
from drivers.sim._cylinder_box cimport CYLINDER_BOX_POINTS, cylinder_box
from drivers.sim._shapes cimport point_box, point_cylinder, stribeck
from dynamics_cy._arrays cimport f64_data, f64_flat, i32_data, owned_f64, owned_i32
from dynamics_cy._linalg cimport cholesky, cholesky_solve
from dynamics_cy._segments cimport clamp, segments_closest
from dynamics_cy._vec3 cimport cross3, dot3, matTvec, matvec
from libc.math cimport INFINITY, fabs, sqrt
from libc.string cimport memcpy, memset

import numpy as np

cdef enum:
    SPHERE = 0
    BOX = 1
    CAPSULE = 2
    CYLINDER = 3

SHAPE_CODES = {"Sphere": SPHERE, "Box": BOX, "Capsule": CAPSULE, "Cylinder": CYLINDER}
GROUND_POINTS = {SPHERE: 1, BOX: 8, CAPSULE: 2, CYLINDER: 4}
"""The most contact points a shape can have with the ground: deepest point(s) per feature."""
BOX_BOX_POINTS = 8
"""The most contact points of a box–box pair: the incident face clipped to the reference face."""
PAIR_POINTS = {BOX: BOX_BOX_POINTS, CYLINDER: CYLINDER_BOX_POINTS}
"""The most contact points of a pair by A's shape (box–box, cylinder–box; 1 for the others)."""

cdef double COS120 = -0.5
cdef double SIN120 = 0.8660254037844386


cdef class PointContact:
    """Compliant point contact of collision geometries with a ground half space and each other.

    Geometry g (shape code, body, X_BG, size) is sphere (r), box (half extents), capsule (r, half
    length) or cylinder (r, half length), axes along Gz. `ground` lists the geometries checked
    against the half space z <= ground_height (with their combined friction μs, μd), `pairs` the
    geometry pairs (A, B) checked against each other: sphere or capsule A with sphere or capsule B,
    sphere A with box or cylinder B, box A with box B (up to 8 points) or cylinder A with box B (up to
    12: _cylinder_box.pxd). Each penetrating point gets the Hunt–Crossley normal force
    and regularized Coulomb friction (docs/sim.md); the spatial forces F_Bo_W go to the bodies.

    With body Jacobians and the mass matrix, each contact's damping coefficients (friction μ(s) fₙ/s
    and Hunt–Crossley k x d) are capped at 1/(h Σ_j ‖W_ji‖_F), W_ji = J_j M⁻¹ J_iᵀ the Delassus
    blocks (J_i: the Jacobian of contact i's relative velocity): the explicit step's linearized
    damping I − h W C then has its eigenvalues in [0, 1], so light bodies do not chatter.

    A recording evaluation fills the per-contact arrays (`num_contacts` rows valid).
    """

    def __init__(self, shapes, bodies, R_BG, p_BG, sizes, ground, ground_mu, pairs, pair_mu,
                 double ground_height, double stiffness, double dissipation, double stiction_tolerance,
                 int num_bodies, int num_velocities, double time_step):
        cdef int ng = len(shapes), i, nv = num_velocities
        self.num_geometries, self.num_bodies, self.num_velocities = ng, num_bodies, nv
        self.num_ground, self.num_pairs = len(ground), len(pairs)
        self.ground_height, self.stiffness, self.dissipation = ground_height, stiffness, dissipation
        self.stiction_tolerance, self.time_step = stiction_tolerance, time_step
        own = self._arrays = {
            "shape": owned_i32(shapes, (ng,)), "body": owned_i32(bodies, (ng,)), "R_BG": owned_f64(R_BG, (ng, 9)),
            "p_BG": owned_f64(p_BG, (ng, 3)), "size": owned_f64(sizes, (ng, 3)),
            "ground": owned_i32(ground, (self.num_ground,)), "ground_mu": owned_f64(ground_mu, (self.num_ground, 2)),
            "pairs": owned_i32(pairs, (self.num_pairs, 2)), "pair_mu": owned_f64(pair_mu, (self.num_pairs, 2)),
            "X_WG": np.zeros((ng, 12))}
        for i in range(ng):
            if own["shape"][i] not in GROUND_POINTS or not 0 <= own["body"][i] < num_bodies:
                raise ValueError(f"geometry {i}: bad shape code {own['shape'][i]} or body {own['body'][i]}")
        self.g_shape, self.g_body = i32_data(own["shape"]), i32_data(own["body"])
        self.g_R, self.g_p, self.g_size = f64_data(own["R_BG"]), f64_data(own["p_BG"]), f64_data(own["size"])
        self.ground_g, self.ground_mu = i32_data(own["ground"]), f64_data(own["ground_mu"])
        self.pair_g, self.pair_mu = i32_data(own["pairs"]), f64_data(own["pair_mu"])
        self.X_WG = f64_data(own["X_WG"])
        for i in range(self.num_pairs):
            a, b = self.g_shape[self.pair_g[2 * i]], self.g_shape[self.pair_g[2 * i + 1]]
            if not (a == SPHERE or a == CAPSULE and b in (SPHERE, CAPSULE) or a in (BOX, CYLINDER) and b == BOX):
                raise ValueError(f"pair {i}: unsupported shape pair (A must be a sphere, or a capsule with a "
                                 f"sphere or capsule B, or a box or cylinder with a box B)")
        m = sum(GROUND_POINTS[own["shape"][g]] for g in own["ground"]) + sum(
            PAIR_POINTS.get(own["shape"][a], 1) for a, _ in own["pairs"])
        self.max_contacts = m
        own.update(           # the detected contacts' workspace
            d_g=np.zeros((m, 2), np.int32), d_b=np.zeros((m, 2), np.int32), d_pa=np.zeros((m, 3)),
            d_pb=np.zeros((m, 3)), d_n=np.zeros((m, 3)), d_depth=np.zeros(m), d_mu=np.zeros((m, 2)),
            d_cap=np.zeros(m), d_J=np.zeros((m, 3, nv)), d_Y=np.zeros((m, nv, 3)), d_L=np.zeros((nv, nv)),
            d_marked=np.zeros(num_bodies, np.int32), d_f=np.zeros((m, 3)), d_C=np.zeros((m, 3, 3)),
            d_vn=np.zeros(m), d_slip=np.zeros(m), d_A=np.zeros((3 * m, 3 * m)), d_u=np.zeros(3 * m))
        self.d_g, self.d_b, self.d_marked = i32_data(own["d_g"]), i32_data(own["d_b"]), i32_data(own["d_marked"])
        self.d_pa, self.d_pb, self.d_n = f64_data(own["d_pa"]), f64_data(own["d_pb"]), f64_data(own["d_n"])
        self.d_depth, self.d_mu, self.d_cap = f64_data(own["d_depth"]), f64_data(own["d_mu"]), f64_data(own["d_cap"])
        self.d_J, self.d_Y, self.d_L = f64_data(own["d_J"]), f64_data(own["d_Y"]), f64_data(own["d_L"])
        self.d_f, self.d_C = f64_data(own["d_f"]), f64_data(own["d_C"])
        self.d_vn, self.d_slip = f64_data(own["d_vn"]), f64_data(own["d_slip"])
        self.d_A, self.d_u = f64_data(own["d_A"]), f64_data(own["d_u"])
        self.geometry_A, self.geometry_B = np.zeros(m, np.int32), np.zeros(m, np.int32)
        self.body_A, self.body_B = np.zeros(m, np.int32), np.zeros(m, np.int32)
        self.p_WCa, self.p_WCb, self.p_WC = np.zeros((m, 3)), np.zeros((m, 3)), np.zeros((m, 3))
        self.nhat_BA_W, self.f_Bc_W = np.zeros((m, 3)), np.zeros((m, 3))
        self.depth, self.separation_speed, self.slip_speed = np.zeros(m), np.zeros(m), np.zeros(m)
        self.r_gA, self.r_gB = i32_data(self.geometry_A), i32_data(self.geometry_B)
        self.r_bA, self.r_bB = i32_data(self.body_A), i32_data(self.body_B)
        self.r_pa, self.r_pb, self.r_pc = f64_data(self.p_WCa), f64_data(self.p_WCb), f64_data(self.p_WC)
        self.r_n, self.r_f = f64_data(self.nhat_BA_W), f64_data(self.f_Bc_W)
        self.r_depth, self.r_vn, self.r_vt = f64_data(self.depth), f64_data(self.separation_speed), \
            f64_data(self.slip_speed)
        self.num_contacts = 0

    def evaluate(self, body_poses, body_velocities, body_forces, body_jacobians=None, mass_matrix=None):
        """Records the contacts of the bodies at X_WB (num_bodies, 4, 4) moving with V_WB (num_bodies, 6)
        and writes their spatial forces into body_forces (num_bodies, 6); with body_jacobians
        (num_bodies, 6, nv: V_WB = J v) and the mass matrix (nv, nv), the damping is bounded.
        Returns num_contacts."""
        cdef int nb = self.num_bodies, nv = self.num_velocities, n
        cdef const double* X = f64_flat(body_poses, 16 * nb, "body_poses")
        cdef const double* V = f64_flat(body_velocities, 6 * nb, "body_velocities")
        cdef double* F = f64_flat(body_forces, 6 * nb, "body_forces")
        cdef const double* J = NULL
        cdef const double* M = NULL
        if body_jacobians is not None:
            J, M = f64_flat(body_jacobians, 6 * nb * nv, "body_jacobians"), \
                f64_flat(mass_matrix, nv * nv, "mass_matrix")
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

    cdef void _add(self, int n, int gA, int gB, const double* pa, const double* pb, const double* nhat,
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
            g = self.g_shape[self.pair_g[2 * i]]
            n += self._boxes(n, i) if g == BOX or g == CYLINDER else self._pair(n, i)
        return n

    cdef int _boxes(self, int n, int i) noexcept nogil:
        """Contacts of pair i of a box or cylinder A with a box B (0 to 8 points, _box_box.pxd; 0 to 12,
        _cylinder_box.pxd)."""
        cdef int gA = self.pair_g[2 * i], gB = self.pair_g[2 * i + 1], k, m
        cdef const double* XA = self.X_WG + 12 * gA
        cdef const double* XB = self.X_WG + 12 * gB
        cdef const double* sA = self.g_size + 3 * gA
        cdef double pa[CYLINDER_BOX_POINTS][3]
        cdef double pb[CYLINDER_BOX_POINTS][3]
        cdef double depth[CYLINDER_BOX_POINTS]
        cdef double nhat[3]
        if self.g_shape[gA] == BOX:
            m = box_box(XA, XA + 9, sA, XB, XB + 9, self.g_size + 3 * gB, pa, pb, nhat, depth)
        else:
            m = cylinder_box(XA, XA + 9, sA[0], sA[1], XB, XB + 9, self.g_size + 3 * gB, pa, pb, nhat, depth)
        for k in range(m):
            self._add(n + k, gA, gB, pa[k], pb[k], nhat, depth[k], self.pair_mu + 2 * i)
        return m

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

    cdef void _delassus(self, int i, int j, double* W) noexcept nogil:
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

    cdef double _kinematics(self, int i, const double* X, const double* V, double* c, double* rA, double* rB,
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

    cdef void _push(self, int i, const double* rA, const double* rB, const double* f, double* F) noexcept nogil:
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

    cdef void _record(self, int i, const double* c, const double* f, double vn, double slip) noexcept nogil:
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

    cdef void damping_forces(self, int n, const double* X, const double* V, double* F) noexcept nogil:
        """Adds to F the n contacts' damping and friction forces of the last damp(), f − k x n̂ (spring()
        added k x n̂), so that F holds each body's whole contact force of the step (what the wrist
        force/torque sensor's inverse dynamics needs: a part held by friction hangs from the pads)."""
        cdef double c[3]
        cdef double rA[3]
        cdef double rB[3]
        cdef double vt[3]
        cdef double fd[3]
        cdef int i, r
        for i in range(n):
            self._kinematics(i, X, V, c, rA, rB, vt)
            for r in range(3):
                fd[r] = self.d_f[3 * i + r] - self.stiffness * self.d_depth[i] * self.d_n[3 * i + r]
            self._push(i, rA, rB, fd, F)

    cdef void generalized(self, int n, double* tau) noexcept nogil:
        """tau = Σ_i J_iᵀ f_i: the generalized force of the n contacts' last forces (after jacobians())."""
        cdef int nv = self.num_velocities, i, r, k
        memset(tau, 0, nv * sizeof(double))
        for i in range(n):
            for r in range(3):
                for k in range(nv):
                    tau[k] += self.d_J[3 * nv * i + r * nv + k] * self.d_f[3 * i + r]
