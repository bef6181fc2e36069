# 3×3 rotations and spatial algebra in body coordinates, inline and allocation-free: the building blocks
# of every algorithm in dynamics_cy (3-vectors: _vec3.pxd). Rotation matrices are row-major 3×3; a
# rigid-body inertia is (m, mc, I): the mass, the first moment of mass mc = m p_BoBcm and the rotational
# inertia I about Bo; a motion vector is [w; v], a force [n; f] (Featherstone's body coordinates).
from dynamics_cy._vec3 cimport cross3, matTvec, matvec
from libc.math cimport atan2, cos, sin, sqrt


# 3x3 row-major matrices
cdef inline void matmul(const double* A, const double* B, double* out) noexcept nogil:
    """out = A B (out may not alias A or B)."""
    cdef int r, c
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c]


cdef inline void matmulT(const double* A, const double* B, double* out) noexcept nogil:
    """out = A Bᵀ."""
    cdef int r, c
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = A[3 * r] * B[3 * c] + A[3 * r + 1] * B[3 * c + 1] + A[3 * r + 2] * B[3 * c + 2]


cdef inline void skew3(const double* w, double* out) noexcept nogil:
    out[0] = 0.0
    out[1] = -w[2]
    out[2] = w[1]
    out[3] = w[2]
    out[4] = 0.0
    out[5] = -w[0]
    out[6] = -w[1]
    out[7] = w[0]
    out[8] = 0.0


cdef inline void axis_angle(const double* a, double th, double* R) noexcept nogil:
    """R = I + sin θ [a]x + (1 - cos θ) [a]x² for the unit axis a."""
    cdef double s = sin(th), c = cos(th), t = 1.0 - c
    cdef double x = a[0], y = a[1], z = a[2]
    R[0] = c + t * x * x
    R[1] = t * x * y - s * z
    R[2] = t * x * z + s * y
    R[3] = t * x * y + s * z
    R[4] = c + t * y * y
    R[5] = t * y * z - s * x
    R[6] = t * x * z - s * y
    R[7] = t * y * z + s * x
    R[8] = c + t * z * z


cdef inline void rpy_matrix(double r, double p, double y, double* R) noexcept nogil:
    """R = Rz(y) Ry(p) Rx(r)."""
    cdef double cr = cos(r), sr = sin(r), cp = cos(p), sp = sin(p), cy = cos(y), sy = sin(y)
    R[0] = cy * cp
    R[1] = cy * sp * sr - sy * cr
    R[2] = cy * sp * cr + sy * sr
    R[3] = sy * cp
    R[4] = sy * sp * sr + cy * cr
    R[5] = sy * sp * cr - cy * sr
    R[6] = -sp
    R[7] = cp * sr
    R[8] = cp * cr


cdef inline void quat_matrix(const double* q, double* R) noexcept nogil:
    """R(q) of q = [w x y z] normalized."""
    cdef double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    cdef double s = 2.0 / n2 if n2 > 0.0 else 0.0
    cdef double w = q[0], x = q[1], y = q[2], z = q[3]
    R[0] = 1.0 - s * (y * y + z * z)
    R[1] = s * (x * y - w * z)
    R[2] = s * (x * z + w * y)
    R[3] = s * (x * y + w * z)
    R[4] = 1.0 - s * (x * x + z * z)
    R[5] = s * (y * z - w * x)
    R[6] = s * (x * z - w * y)
    R[7] = s * (y * z + w * x)
    R[8] = 1.0 - s * (x * x + y * y)


cdef inline void matrix_quaternion(const double* R, double* q) noexcept nogil:
    """q = [w x y z] with w >= 0 of the row-major rotation matrix R (Shepperd's method)."""
    cdef double t = R[0] + R[4] + R[8], s
    if t > 0.0:
        s = 2.0 * sqrt(1.0 + t)
        q[0], q[1], q[2], q[3] = 0.25 * s, (R[7] - R[5]) / s, (R[2] - R[6]) / s, (R[3] - R[1]) / s
    elif R[0] > R[4] and R[0] > R[8]:
        s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8])
        q[0], q[1], q[2], q[3] = (R[7] - R[5]) / s, 0.25 * s, (R[1] + R[3]) / s, (R[2] + R[6]) / s
    elif R[4] > R[8]:
        s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8])
        q[0], q[1], q[2], q[3] = (R[2] - R[6]) / s, (R[1] + R[3]) / s, 0.25 * s, (R[5] + R[7]) / s
    else:
        s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4])
        q[0], q[1], q[2], q[3] = (R[3] - R[1]) / s, (R[2] + R[6]) / s, (R[5] + R[7]) / s, 0.25 * s
    if q[0] < 0.0:
        q[0], q[1], q[2], q[3] = -q[0], -q[1], -q[2], -q[3]


cdef inline double rotation_log(const double* R, double* w) noexcept nogil:
    """w = θ n, the rotation vector of the row-major rotation matrix R = exp(θ [n]×) with θ in [0, π]
    (Pinocchio's log3, Drake's ToAngleAxis as angle·axis); returns θ. From R's quaternion [w x y z],
    w >= 0 (Shepperd's method): θ = 2 atan2(|xyz|, w), accurate at θ → 0 and at θ → π alike."""
    cdef double q[4]
    cdef double s, th
    matrix_quaternion(R, q)
    s = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    th = 2.0 * atan2(s, q[0])
    s = th / s if s > 1e-150 else 2.0 / q[0]        # θ/|xyz| → 2/w as θ → 0
    w[0], w[1], w[2] = s * q[1], s * q[2], s * q[3]
    return th


cdef inline double rotation_error(const double* A, int sa, const double* B, int sb, double* w) noexcept nogil:
    """w = log(R_B R_Aᵀ)ᵛ, the rotation vector (in the common frame W) that turns R_A = R_WA into
    R_B = R_WB; rows of R_A and R_B are sa and sb doubles apart (3 for a 3×3 matrix, 4 for the upper
    left of a 4×4 pose). Returns its angle."""
    cdef double R[9]
    cdef int r, k
    for r in range(3):
        for k in range(3):
            R[3 * r + k] = B[sb * r] * A[sa * k] + B[sb * r + 1] * A[sa * k + 1] + B[sb * r + 2] * A[sa * k + 2]
    return rotation_log(R, w)


cdef inline double pose_error(const double* X_WE, const double* X_WG, double* e) noexcept nogil:
    """e (6) = [log(R_WG R_WEᵀ)ᵛ; p_WG − p_WE] for row-major 4×4 poses: the rotation vector and the
    translation, in W, that take E to G (the Cartesian impedance's error). Returns the angle."""
    e[3], e[4], e[5] = X_WG[3] - X_WE[3], X_WG[7] - X_WE[7], X_WG[11] - X_WE[11]
    return rotation_error(X_WE, 4, X_WG, 4, e)


# Spatial algebra
cdef inline void motion_to_child(const double* R, const double* p, const double* m, double* out) noexcept nogil:
    """X_BP m: a motion vector at Po in P to Bo in B, with R = R_PB, p = p_PoBo_P."""
    cdef double t[3]
    cross3(m, p, t)              # w x p
    t[0] += m[3]
    t[1] += m[4]
    t[2] += m[5]
    matTvec(R, m, out)
    matTvec(R, t, out + 3)


cdef inline void force_to_parent_add(const double* R, const double* p, const double* f, double* out) noexcept nogil:
    """out += X_BPᵀ f: a force at Bo in B to Po in P."""
    cdef double n[3]
    cdef double fp[3]
    cdef double c[3]
    matvec(R, f + 3, fp)
    matvec(R, f, n)
    cross3(p, fp, c)
    out[0] += n[0] + c[0]
    out[1] += n[1] + c[1]
    out[2] += n[2] + c[2]
    out[3] += fp[0]
    out[4] += fp[1]
    out[5] += fp[2]


cdef inline void cross_motion(const double* V, const double* m, double* out) noexcept nogil:
    """out = V x m = [w x mw; w x mv + v x mw]."""
    cdef double a[3]
    cdef double b[3]
    cross3(V, m, out)
    cross3(V, m + 3, a)
    cross3(V + 3, m, b)
    out[3] = a[0] + b[0]
    out[4] = a[1] + b[1]
    out[5] = a[2] + b[2]


cdef inline void cross_force_add(const double* V, const double* f, double* out) noexcept nogil:
    """out += V x* f = [w x fn + v x ff; w x ff]."""
    cdef double a[3]
    cdef double b[3]
    cdef double c[3]
    cross3(V, f, a)
    cross3(V + 3, f + 3, b)
    cross3(V, f + 3, c)
    out[0] += a[0] + b[0]
    out[1] += a[1] + b[1]
    out[2] += a[2] + b[2]
    out[3] += c[0]
    out[4] += c[1]
    out[5] += c[2]


cdef inline void inertia_mul(double m, const double* mc, const double* I, const double* V, double* out) noexcept nogil:
    """out = M V for the rigid-body inertia (m, mc = m p_BoBcm, I about Bo): [I w + mc x v; m v - mc x w]."""
    cdef double a[3]
    cdef double b[3]
    matvec(I, V, out)
    cross3(mc, V + 3, a)
    cross3(mc, V, b)
    out[0] += a[0]
    out[1] += a[1]
    out[2] += a[2]
    out[3] = m * V[3] - b[0]
    out[4] = m * V[4] - b[1]
    out[5] = m * V[5] - b[2]


cdef inline void rigid_inertia_to_parent_add(const double* R, const double* p, double m, const double* mc,
                                             const double* I, double* m_out, double* mc_out, double* I_out) noexcept nogil:
    """(m, mc, I) of a rigid body in B about Bo, added into (m, mc, I) in P about Po.

    mc_P = R mc + m p;  I_P = R I Rᵀ - [p]x[Rmc]x - [Rmc]x[p]x - m [p]x[p]x.
    """
    cdef double Rmc[3]
    cdef double tmp[9]
    cdef double RI[9]
    cdef int r, c
    matvec(R, mc, Rmc)
    matmul(R, I, tmp)
    matmulT(tmp, R, RI)
    # [a]x[b]x = b aᵀ - (a·b) 1
    cdef double pRmc = p[0] * Rmc[0] + p[1] * Rmc[1] + p[2] * Rmc[2]
    cdef double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2]
    for r in range(3):
        for c in range(3):
            I_out[3 * r + c] += RI[3 * r + c] - (Rmc[r] * p[c] + p[r] * Rmc[c]) - m * p[r] * p[c]
        I_out[4 * r] += 2.0 * pRmc + m * pp
    m_out[0] += m
    mc_out[0] += Rmc[0] + m * p[0]
    mc_out[1] += Rmc[1] + m * p[1]
    mc_out[2] += Rmc[2] + m * p[2]


cdef inline void motion_to_world(const double* R, const double* p, const double* m, double* out) noexcept nogil:
    """A motion vector at Bo in B to the world origin in W: w_W = R w, v_O = R v + p x (R w)."""
    cdef double c[3]
    matvec(R, m, out)
    matvec(R, m + 3, out + 3)
    cross3(p, out, c)
    out[3] += c[0]
    out[4] += c[1]
    out[5] += c[2]


cdef inline void force_to_world(const double* R, const double* p, const double* f, double* out) noexcept nogil:
    """A force at Bo in B to the world origin in W: f_W = R f, n_O = R n + p x f_W."""
    cdef double c[3]
    matvec(R, f, out)
    matvec(R, f + 3, out + 3)
    cross3(p, out + 3, c)
    out[0] += c[0]
    out[1] += c[1]
    out[2] += c[2]


cdef inline void inertia6(double m, const double* mc, const double* I, double* out) noexcept nogil:
    """The 6x6 [[I, [mc]x], [[mc]xᵀ, m 1]] of the rigid-body inertia (m, mc, I)."""
    cdef double mcx[9]
    cdef int r, k
    skew3(mc, mcx)
    for r in range(3):
        for k in range(3):
            out[6 * r + k] = I[3 * r + k]
            out[6 * r + 3 + k] = mcx[3 * r + k]
            out[6 * (3 + r) + k] = mcx[3 * k + r]
            out[6 * (3 + r) + 3 + k] = m if r == k else 0.0


cdef inline void mat6_vec(const double* A, const double* x, double* out) noexcept nogil:
    cdef int r, c
    cdef double s
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += A[6 * r + c] * x[c]
        out[r] = s


cdef inline double dot6(const double* a, const double* b) noexcept nogil:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]
