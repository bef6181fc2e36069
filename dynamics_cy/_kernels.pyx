# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled multibody algorithms on a flat, topologically ordered tree.

The algorithms run over nodes: the world (t = 0) and every body with a moving inboard joint, in
depth-first order (parent[t] < t). A body welded to its parent is folded into the nearest moving
ancestor N (its node): its mass is added to N's and its pose is the constant X_NB. Outputs are
given per BodyIndex. All per-node quantities are expressed in the body frame B about its origin Bo (Featherstone's
body coordinates): V_B = [w_WB_B; v_WBo_B], spatial accelerations are Featherstone's spatial
accelerations, spatial forces are [torque about Bo; force]. Joint j of body t connects frame F on
the parent (X_PF constant) to frame M on the child (X_MB constant) with X_FM(q).

Rotation matrices are 3x3 row-major. The motion subspace S of body t is stored as nv_t columns of
6 doubles; cJ is S̊ v, the joint's bias acceleration (apparent derivative of S in B times v).
"""
cimport numpy as cnp

from dynamics_cy._vec3 cimport cross3, matTvec, matvec
from dynamics_cy.errors import GimbalLockError, SingularInertiaError
from libc.math cimport sin, cos, sqrt, fabs, isfinite
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy

cnp.import_array()

cdef enum:
    WELD = 0
    REVOLUTE = 1
    PRISMATIC = 2
    BALL_RPY = 3
    QUATERNION_FLOATING = 4
    PLANAR = 5


# ---------------------------------------------------------------------------------------------
# 3x3 row-major matrices (3-vectors: _vec3.pxd)
# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
# Spatial algebra in body coordinates
# ---------------------------------------------------------------------------------------------
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


cdef inline void inertia_mul(double m, const double* h, const double* I, const double* V, double* out) noexcept nogil:
    """out = M V for the rigid-body inertia (m, h = m p_BoBcm, I about Bo): [I w + h x v; m v - h x w]."""
    cdef double a[3]
    cdef double b[3]
    matvec(I, V, out)
    cross3(h, V + 3, a)
    cross3(h, V, b)
    out[0] += a[0]
    out[1] += a[1]
    out[2] += a[2]
    out[3] = m * V[3] - b[0]
    out[4] = m * V[4] - b[1]
    out[5] = m * V[5] - b[2]


cdef inline void rigid_inertia_to_parent_add(const double* R, const double* p, double m, const double* h,
                                             const double* I, double* m_out, double* h_out, double* I_out) noexcept nogil:
    """(m, h, I) of a rigid body in B about Bo, added into (m, h, I) in P about Po.

    h_P = R h + m p;  I_P = R I Rᵀ - [p]x[Rh]x - [Rh]x[p]x - m [p]x[p]x.
    """
    cdef double Rh[3]
    cdef double tmp[9]
    cdef double RI[9]
    cdef int r, c
    matvec(R, h, Rh)
    matmul(R, I, tmp)
    matmulT(tmp, R, RI)
    # [a]x[b]x = b aᵀ - (a·b) 1
    cdef double pRh = p[0] * Rh[0] + p[1] * Rh[1] + p[2] * Rh[2]
    cdef double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2]
    for r in range(3):
        for c in range(3):
            I_out[3 * r + c] += RI[3 * r + c] - (Rh[r] * p[c] + p[r] * Rh[c]) - m * p[r] * p[c]
        I_out[4 * r] += 2.0 * pRh + m * pp
    m_out[0] += m
    h_out[0] += Rh[0] + m * p[0]
    h_out[1] += Rh[1] + m * p[1]
    h_out[2] += Rh[2] + m * p[2]


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


cdef inline void inertia6(double m, const double* h, const double* I, double* out) noexcept nogil:
    """The 6x6 [[I, [h]x], [[h]xᵀ, m 1]] of the rigid-body inertia (m, h, I)."""
    cdef double hx[9]
    cdef int r, k
    skew3(h, hx)
    for r in range(3):
        for k in range(3):
            out[6 * r + k] = I[3 * r + k]
            out[6 * r + 3 + k] = hx[3 * r + k]
            out[6 * (3 + r) + k] = hx[3 * k + r]
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


cdef int cholesky_inverse(double* D, int n, double* Dinv) noexcept nogil:
    """Dinv = D⁻¹ for a symmetric positive definite n x n D (n <= 6, row-major). D is overwritten.

    Returns 0, or -1 when D is not positive definite.
    """
    cdef int i, j, k
    cdef double s
    cdef double L[36]
    cdef double Li[36]
    memset(L, 0, 36 * sizeof(double))
    for j in range(n):
        s = D[n * j + j]
        for k in range(j):
            s -= L[6 * j + k] * L[6 * j + k]
        if not s > 0.0:
            return -1
        L[6 * j + j] = sqrt(s)
        for i in range(j + 1, n):
            s = D[n * i + j]
            for k in range(j):
                s -= L[6 * i + k] * L[6 * j + k]
            L[6 * i + j] = s / L[6 * j + j]
    # Li = L⁻¹ (lower triangular)
    memset(Li, 0, 36 * sizeof(double))
    for i in range(n):
        Li[6 * i + i] = 1.0 / L[6 * i + i]
        for j in range(i):
            s = 0.0
            for k in range(j, i):
                s -= L[6 * i + k] * Li[6 * k + j]
            Li[6 * i + j] = s / L[6 * i + i]
    # D⁻¹ = Liᵀ Li
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(i if i > j else j, n):
                s += Li[6 * k + i] * Li[6 * k + j]
            Dinv[n * i + j] = s
    return 0


# ---------------------------------------------------------------------------------------------
# Argument checks (the only Python-level work a kernel call does)
# ---------------------------------------------------------------------------------------------
cdef double* _arr(object a, Py_ssize_t n0, Py_ssize_t n1, bint writable, str name) except NULL:
    """The data pointer of a C-contiguous float64 array of shape (n0,) when n1 < 0, else (n0, n1)."""
    cdef cnp.ndarray arr
    cdef int nd = 1 if n1 < 0 else 2
    if not cnp.PyArray_Check(a):
        raise ValueError(f"{name} must be a numpy float64 array, got {type(a).__name__}")
    arr = <cnp.ndarray>a
    if cnp.PyArray_TYPE(arr) != cnp.NPY_DOUBLE:
        raise ValueError(f"{name} must have dtype float64, got {a.dtype}")
    if cnp.PyArray_NDIM(arr) != nd or cnp.PyArray_DIM(arr, 0) != n0 or (nd == 2 and cnp.PyArray_DIM(arr, 1) != n1):
        want = f"({n0},)" if nd == 1 else f"({n0}, {n1})"
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(arr) or not cnp.PyArray_ISALIGNED(arr):
        raise ValueError(f"{name} must be C-contiguous and aligned")
    if writable and not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{name} must be writable")
    return <double*>cnp.PyArray_DATA(arr)


cdef double* _alloc(Py_ssize_t n) except NULL:
    cdef double* p = <double*>malloc((n if n > 0 else 1) * sizeof(double))
    if p == NULL:
        raise MemoryError()
    memset(p, 0, (n if n > 0 else 1) * sizeof(double))
    return p


cdef int* _alloci(Py_ssize_t n) except NULL:
    cdef int* p = <int*>malloc((n if n > 0 else 1) * sizeof(int))
    if p == NULL:
        raise MemoryError()
    memset(p, 0, (n if n > 0 else 1) * sizeof(int))
    return p


cdef void _copy_d(double* dst, object src, Py_ssize_t n):
    cdef cnp.ndarray a = cnp.PyArray_FROMANY(src, cnp.NPY_DOUBLE, 0, 0, cnp.NPY_ARRAY_C_CONTIGUOUS)
    if cnp.PyArray_SIZE(a) != n:
        raise ValueError(f"expected {n} values, got {cnp.PyArray_SIZE(a)}")
    memcpy(dst, cnp.PyArray_DATA(a), n * sizeof(double))


cdef double* _load_d(dict m, str key, Py_ssize_t n) except NULL:
    """A new C array holding the n doubles of m[key]."""
    cdef double* p = _alloc(n)
    _copy_d(p, m[key], n)
    return p


cdef int* _load_i(dict m, str key, Py_ssize_t n) except NULL:
    """A new C array holding the n integers of m[key]."""
    cdef int* p = _alloci(n)
    cdef Py_ssize_t k
    src = m[key]
    if len(src) != n:
        raise ValueError(f"{key}: expected {n} integers, got {len(src)}")
    for k in range(n):
        p[k] = int(src[k])
    return p


# ---------------------------------------------------------------------------------------------
# The compiled tree: model (constant after Finalize) and one workspace
# ---------------------------------------------------------------------------------------------
cdef double* _arr3(object a, Py_ssize_t n0, Py_ssize_t n1, Py_ssize_t n2, str name) except NULL:
    """The data pointer of a writable C-contiguous float64 array of shape (n0, n1, n2)."""
    cdef cnp.ndarray arr
    if not cnp.PyArray_Check(a):
        raise ValueError(f"{name} must be a numpy float64 array, got {type(a).__name__}")
    arr = <cnp.ndarray>a
    if cnp.PyArray_TYPE(arr) != cnp.NPY_DOUBLE:
        raise ValueError(f"{name} must have dtype float64, got {a.dtype}")
    if cnp.PyArray_NDIM(arr) != 3 or cnp.PyArray_DIM(arr, 0) != n0 or cnp.PyArray_DIM(arr, 1) != n1 \
            or cnp.PyArray_DIM(arr, 2) != n2:
        raise ValueError(f"{name} must have shape ({n0}, {n1}, {n2}), got {a.shape}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(arr) or not cnp.PyArray_ISALIGNED(arr) or not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{name} must be writable, C-contiguous and aligned")
    return <double*>cnp.PyArray_DATA(arr)


# ---------------------------------------------------------------------------------------------
# The compiled tree: model (constant after Finalize) and one workspace
# ---------------------------------------------------------------------------------------------
cdef class CompiledTree:
    """Topology and parameters in flat C arrays, plus the workspace the algorithms use.

    Built by MultibodyPlant.Finalize() from topology.compile_arrays(); every buffer is allocated
    here and nothing is allocated by the algorithms. Not thread-safe: one instance per thread.
    """
    cdef readonly int nb, nq, nv, nf, nbodies
    cdef readonly list node_joint    # the name of each node's joint, for messages
    # model: nodes
    cdef int* parent
    cdef int* jtype
    cdef int* qs
    cdef int* vs
    cdef int* nvj
    cdef int* axis_code      # ±(k+1) for a revolute joint about ±e_k with X_MB = identity (the fast path), else 0
    cdef int* mb_identity
    cdef double* R_PF
    cdef double* p_PF
    cdef double* R_MB
    cdef double* p_MB
    cdef double* axis
    cdef double* mass
    cdef double* h
    cdef double* Io
    cdef double* armature           # per velocity: actuators' reflected inertia ρ² I_r, on M's diagonal
    cdef double g[3]
    # model: frames and bodies placed on nodes
    cdef int* frame_node
    cdef double* R_NF
    cdef double* p_NF
    cdef int* body_node
    cdef double* R_NB
    cdef double* p_NB
    # workspace
    cdef double* R_PB
    cdef double* p_PB
    cdef double* R_WB
    cdef double* p_WB
    cdef double* S
    cdef double* Sw
    cdef double* V
    cdef double* c
    cdef double* cw
    cdef double* A
    cdef double* F
    cdef double* fext
    cdef double* Ic_m
    cdef double* Ic_h
    cdef double* Ic_I
    cdef double* IA
    cdef double* pA
    cdef double* U
    cdef double* Dinv
    cdef double* u
    cdef int* path

    def __cinit__(self):
        self.nb = 0

    def __init__(self, dict m):
        cdef int nb = m["nb"], nf = m["nf"], nbodies = m["nbodies"], t, k
        self.nb, self.nq, self.nv, self.nf, self.nbodies = nb, m["nq"], m["nv"], nf, nbodies
        self.node_joint = list(m["node_joint"])
        self.parent = _load_i(m, "parent", nb)
        self.jtype = _load_i(m, "jtype", nb)
        self.qs = _load_i(m, "qs", nb)
        self.vs = _load_i(m, "vs", nb)
        self.nvj = _load_i(m, "nvj", nb)
        self.frame_node = _load_i(m, "frame_node", nf)
        self.body_node = _load_i(m, "body_node", nbodies)
        self.axis_code = _alloci(nb)
        self.mb_identity = _alloci(nb)
        self.R_PF = _load_d(m, "R_PF", 9 * nb)
        self.p_PF = _load_d(m, "p_PF", 3 * nb)
        self.R_MB = _load_d(m, "R_MB", 9 * nb)
        self.p_MB = _load_d(m, "p_MB", 3 * nb)
        self.axis = _load_d(m, "axis", 3 * nb)
        self.mass = _load_d(m, "mass", nb)
        self.h = _load_d(m, "h", 3 * nb)
        self.Io = _load_d(m, "Io", 9 * nb)
        self.armature = _load_d(m, "armature", self.nv)
        self.R_NF = _load_d(m, "R_NF", 9 * nf)
        self.p_NF = _load_d(m, "p_NF", 3 * nf)
        self.R_NB = _load_d(m, "R_NB", 9 * nbodies)
        self.p_NB = _load_d(m, "p_NB", 3 * nbodies)
        _copy_d(self.g, m["gravity"], 3)
        for t in range(nb):
            self.mb_identity[t] = 1
            for k in range(9):
                if self.R_MB[9 * t + k] != (1.0 if k % 4 == 0 else 0.0):
                    self.mb_identity[t] = 0
            for k in range(3):
                if self.p_MB[3 * t + k] != 0.0:
                    self.mb_identity[t] = 0
            if self.mb_identity[t] and self.jtype[t] == REVOLUTE:
                for k in range(3):
                    if fabs(self.axis[3 * t + k]) == 1.0:
                        self.axis_code[t] = (k + 1) if self.axis[3 * t + k] > 0 else -(k + 1)
        self.R_PB = _alloc(9 * nb)
        self.p_PB = _alloc(3 * nb)
        self.R_WB = _alloc(9 * nb)
        self.p_WB = _alloc(3 * nb)
        self.S = _alloc(36 * nb)
        self.Sw = _alloc(36 * nb)
        self.V = _alloc(6 * nb)
        self.c = _alloc(6 * nb)
        self.cw = _alloc(6 * nb)
        self.A = _alloc(6 * nb)
        self.F = _alloc(6 * nb)
        self.fext = _alloc(6 * nb)
        self.Ic_m = _alloc(nb)
        self.Ic_h = _alloc(3 * nb)
        self.Ic_I = _alloc(9 * nb)
        self.IA = _alloc(36 * nb)
        self.pA = _alloc(6 * nb)
        self.U = _alloc(36 * nb)
        self.Dinv = _alloc(36 * nb)
        self.u = _alloc(6 * nb)
        self.path = _alloci(nb)
        for k in range(3):
            self.R_WB[4 * k] = 1.0
            self.R_PB[4 * k] = 1.0

    def __dealloc__(self):
        if self.nb == 0:
            return
        free(self.parent); free(self.jtype); free(self.qs); free(self.vs); free(self.nvj); free(self.axis_code)
        free(self.mb_identity); free(self.frame_node); free(self.body_node)
        free(self.R_PF); free(self.p_PF); free(self.R_MB); free(self.p_MB); free(self.axis)
        free(self.mass); free(self.h); free(self.Io)
        free(self.armature)
        free(self.R_NF); free(self.p_NF); free(self.R_NB); free(self.p_NB)
        free(self.R_PB); free(self.p_PB); free(self.R_WB); free(self.p_WB); free(self.S); free(self.Sw)
        free(self.V); free(self.c); free(self.cw); free(self.A); free(self.F); free(self.fext)
        free(self.Ic_m); free(self.Ic_h); free(self.Ic_I); free(self.IA); free(self.pA)
        free(self.U); free(self.Dinv); free(self.u); free(self.path)

    # -----------------------------------------------------------------------------------------
    # Kinematics
    # -----------------------------------------------------------------------------------------
    cdef void positions(self, const double* q) noexcept nogil:
        """X_PB, X_WB and the motion subspaces S of every node from q."""
        cdef int t
        for t in range(1, self.nb):
            self.position_node(t, q)

    cdef void positions_to(self, int n, const double* q) noexcept nogil:
        """positions() for node n and its ancestors only (what a frame on n needs)."""
        cdef int depth = 0, t = n
        while t > 0:
            self.path[depth] = t
            depth += 1
            t = self.parent[t]
        while depth > 0:
            depth -= 1
            self.position_node(self.path[depth], q)

    cdef void position_node(self, int t, const double* q) noexcept nogil:
        """X_PB, X_WB and S of node t; its parent's X_WB must be current."""
        cdef int k, p, nv, code, ax, ci, cj
        cdef double R_FM[9]
        cdef double p_FM[3]
        cdef double tmp[9]
        cdef double tmp3[3]
        cdef double Sm[36]
        cdef double cs, sn
        cdef double* R_PB = self.R_PB + 9 * t
        cdef double* p_PB = self.p_PB + 3 * t
        cdef double* S = self.S + 36 * t
        cdef const double* R_PF = self.R_PF + 9 * t
        cdef const double* qj = q + self.qs[t]
        code = self.axis_code[t]
        if code != 0:
            # R_PB = R_PF R_e(θ) about e = ±e_a: columns i, j = a+1, a+2 (mod 3) rotate, column a stays
            ax = (code if code > 0 else -code) - 1
            ci, cj = (ax + 1) % 3, (ax + 2) % 3
            cs, sn = cos(qj[0]), sin(qj[0]) if code > 0 else -sin(qj[0])
            for k in range(3):
                R_PB[3 * k + ci] = R_PF[3 * k + ci] * cs + R_PF[3 * k + cj] * sn
                R_PB[3 * k + cj] = R_PF[3 * k + cj] * cs - R_PF[3 * k + ci] * sn
                R_PB[3 * k + ax] = R_PF[3 * k + ax]
            p_PB[0], p_PB[1], p_PB[2] = self.p_PF[3 * t], self.p_PF[3 * t + 1], self.p_PF[3 * t + 2]
            S[0], S[1], S[2], S[3], S[4], S[5] = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            S[ax] = 1.0 if code > 0 else -1.0
        else:
            self.joint_transform(t, qj, R_FM, p_FM, Sm)
            nv = self.nvj[t]
            if self.mb_identity[t]:
                matmul(R_PF, R_FM, R_PB)
                matvec(R_PF, p_FM, p_PB)
                memcpy(S, Sm, 6 * nv * sizeof(double))
            else:
                matmul(R_FM, self.R_MB + 9 * t, tmp)
                matmul(R_PF, tmp, R_PB)
                matvec(R_FM, self.p_MB + 3 * t, tmp3)
                tmp3[0] += p_FM[0]
                tmp3[1] += p_FM[1]
                tmp3[2] += p_FM[2]
                matvec(R_PF, tmp3, p_PB)
                for k in range(nv):
                    motion_to_child(self.R_MB + 9 * t, self.p_MB + 3 * t, Sm + 6 * k, S + 6 * k)
            p_PB[0] += self.p_PF[3 * t]
            p_PB[1] += self.p_PF[3 * t + 1]
            p_PB[2] += self.p_PF[3 * t + 2]
        p = self.parent[t]
        matmul(self.R_WB + 9 * p, R_PB, self.R_WB + 9 * t)
        matvec(self.R_WB + 9 * p, p_PB, tmp3)
        self.p_WB[3 * t] = self.p_WB[3 * p] + tmp3[0]
        self.p_WB[3 * t + 1] = self.p_WB[3 * p + 1] + tmp3[1]
        self.p_WB[3 * t + 2] = self.p_WB[3 * p + 2] + tmp3[2]

    cdef void joint_transform(self, int t, const double* qj, double* R_FM, double* p_FM, double* Sm) noexcept nogil:
        """X_FM(q) and the motion subspace S_M (columns at Mo in M) of node t's joint."""
        cdef int k
        cdef const double* a = self.axis + 3 * t
        cdef int jt = self.jtype[t]
        memset(Sm, 0, 36 * sizeof(double))
        memset(R_FM, 0, 9 * sizeof(double))
        p_FM[0] = 0.0
        p_FM[1] = 0.0
        p_FM[2] = 0.0
        if jt == REVOLUTE:
            axis_angle(a, qj[0], R_FM)
            Sm[0], Sm[1], Sm[2] = a[0], a[1], a[2]
        elif jt == PRISMATIC:
            R_FM[0], R_FM[4], R_FM[8] = 1.0, 1.0, 1.0
            p_FM[0], p_FM[1], p_FM[2] = a[0] * qj[0], a[1] * qj[0], a[2] * qj[0]
            Sm[3], Sm[4], Sm[5] = a[0], a[1], a[2]
        elif jt == BALL_RPY:
            rpy_matrix(qj[0], qj[1], qj[2], R_FM)
            for k in range(3):   # column k: [R_MF e_k; 0] = [row k of R_FM; 0]
                Sm[6 * k], Sm[6 * k + 1], Sm[6 * k + 2] = R_FM[3 * k], R_FM[3 * k + 1], R_FM[3 * k + 2]
        elif jt == QUATERNION_FLOATING:
            quat_matrix(qj, R_FM)
            p_FM[0], p_FM[1], p_FM[2] = qj[4], qj[5], qj[6]
            for k in range(3):
                Sm[6 * k], Sm[6 * k + 1], Sm[6 * k + 2] = R_FM[3 * k], R_FM[3 * k + 1], R_FM[3 * k + 2]
                Sm[6 * (k + 3) + 3], Sm[6 * (k + 3) + 4], Sm[6 * (k + 3) + 5] = \
                    R_FM[3 * k], R_FM[3 * k + 1], R_FM[3 * k + 2]
        elif jt == PLANAR:  # q = [x, y, θ]
            R_FM[0], R_FM[1], R_FM[3], R_FM[4], R_FM[8] = cos(qj[2]), -sin(qj[2]), sin(qj[2]), cos(qj[2]), 1.0
            p_FM[0], p_FM[1] = qj[0], qj[1]
            for k in range(2):  # [0; R_MF e_k]
                Sm[6 * k + 3], Sm[6 * k + 4], Sm[6 * k + 5] = R_FM[3 * k], R_FM[3 * k + 1], R_FM[3 * k + 2]
            Sm[14] = 1.0
        else:  # a weld folded at compile time never reaches here; a root weld keeps identity
            R_FM[0], R_FM[4], R_FM[8] = 1.0, 1.0, 1.0

    cdef void velocities(self, const double* v) noexcept nogil:
        """V of every node and c = cJ + V x (S v), the velocity-product acceleration. Needs positions()."""
        cdef int t, k, nv, jt
        cdef double vJ[6]
        cdef double wv[3]
        cdef double* V
        cdef double* S
        cdef double* c
        cdef const double* vj
        for t in range(1, self.nb):
            V = self.V + 6 * t
            S = self.S + 36 * t
            c = self.c + 6 * t
            nv = self.nvj[t]
            vj = v + self.vs[t]
            motion_to_child(self.R_PB + 9 * t, self.p_PB + 3 * t, self.V + 6 * self.parent[t], V)
            memset(vJ, 0, 6 * sizeof(double))
            for k in range(nv):
                vJ[0] += S[6 * k] * vj[k]
                vJ[1] += S[6 * k + 1] * vj[k]
                vJ[2] += S[6 * k + 2] * vj[k]
                vJ[3] += S[6 * k + 3] * vj[k]
                vJ[4] += S[6 * k + 4] * vj[k]
                vJ[5] += S[6 * k + 5] * vj[k]
            for k in range(6):
                V[k] += vJ[k]
            cross_motion(V, vJ, c)
            jt = self.jtype[t]
            if jt == QUATERNION_FLOATING or jt == PLANAR:
                # cJ_M = [0; -R_MF (w_F x v_F)], moved to B: [0; -R_BF (w_F x v_F)]
                if jt == QUATERNION_FLOATING:
                    cross3(vj, vj + 3, wv)
                else:
                    wv[0] = -vj[2] * vj[1]
                    wv[1] = vj[2] * vj[0]
                    wv[2] = 0.0
                self.rotate_F_to_B(t, wv, vJ)
                c[3] -= vJ[0]
                c[4] -= vJ[1]
                c[5] -= vJ[2]

    cdef void rotate_F_to_B(self, int t, const double* x_F, double* x_B) noexcept nogil:
        """x_B = R_BF x_F for the joint of node t (needs positions())."""
        cdef double x_P[3]
        matvec(self.R_PF + 9 * t, x_F, x_P)
        matTvec(self.R_PB + 9 * t, x_P, x_B)

    cdef int velocity_to_qdot(self, const double* q, const double* v, double* qdot) noexcept nogil:
        """q̇ = N(q) v joint by joint. Returns 1 at an rpy gimbal lock, else 0."""
        cdef int t, jt, k
        cdef const double* qj
        cdef const double* vj
        cdef double* qd
        cdef double cy, sy, cp, sp, rd
        for t in range(1, self.nb):
            jt = self.jtype[t]
            qj = q + self.qs[t]
            vj = v + self.vs[t]
            qd = qdot + self.qs[t]
            if jt == REVOLUTE or jt == PRISMATIC:
                qd[0] = vj[0]
            elif jt == PLANAR:
                qd[0], qd[1], qd[2] = vj[0], vj[1], vj[2]
            elif jt == BALL_RPY:
                cp = cos(qj[1])
                if fabs(cp) < 1e-10:
                    return 1
                sp, cy, sy = sin(qj[1]), cos(qj[2]), sin(qj[2])
                rd = (cy * vj[0] + sy * vj[1]) / cp
                qd[0] = rd
                qd[1] = -sy * vj[0] + cy * vj[1]
                qd[2] = vj[2] + sp * rd
            elif jt == QUATERNION_FLOATING:
                # q̇ = ½ [0; w] ⊗ q  (w expressed in F)
                qd[0] = -0.5 * (vj[0] * qj[1] + vj[1] * qj[2] + vj[2] * qj[3])
                qd[1] = 0.5 * (qj[0] * vj[0] + vj[1] * qj[3] - vj[2] * qj[2])
                qd[2] = 0.5 * (qj[0] * vj[1] + vj[2] * qj[1] - vj[0] * qj[3])
                qd[3] = 0.5 * (qj[0] * vj[2] + vj[0] * qj[2] - vj[1] * qj[1])
                for k in range(3):
                    qd[4 + k] = vj[3 + k]
        return 0

    # -----------------------------------------------------------------------------------------
    # Body-level views (bodies sit on nodes at X_NB)
    # -----------------------------------------------------------------------------------------
    cdef void body_pose(self, int b, double* R, double* p) noexcept nogil:
        """R_WB (row-major 3x3) and p_WBo of body b. Needs positions()."""
        cdef int n = self.body_node[b]
        cdef double tmp[3]
        matmul(self.R_WB + 9 * n, self.R_NB + 9 * b, R)
        matvec(self.R_WB + 9 * n, self.p_NB + 3 * b, tmp)
        p[0] = self.p_WB[3 * n] + tmp[0]
        p[1] = self.p_WB[3 * n + 1] + tmp[1]
        p[2] = self.p_WB[3 * n + 2] + tmp[2]

    cdef void body_velocity(self, int b, double* V_W) noexcept nogil:
        """V_WB_W = [w_WB; v_WBo] in W of body b. Needs velocities()."""
        cdef int n = self.body_node[b]
        cdef double Vo[6]
        cdef double wxp[3]
        cross3(self.V + 6 * n, self.p_NB + 3 * b, wxp)
        Vo[0], Vo[1], Vo[2] = self.V[6 * n], self.V[6 * n + 1], self.V[6 * n + 2]
        Vo[3] = self.V[6 * n + 3] + wxp[0]
        Vo[4] = self.V[6 * n + 4] + wxp[1]
        Vo[5] = self.V[6 * n + 5] + wxp[2]
        matvec(self.R_WB + 9 * n, Vo, V_W)
        matvec(self.R_WB + 9 * n, Vo + 3, V_W + 3)

    cdef void load_body_forces(self, const double* F_W) noexcept nogil:
        """fext of every node from F_Bo_W given per body (rows of F_W): shifted to the node's origin
        and expressed in the node frame."""
        cdef int b, n
        cdef double pW[3]
        cdef double m[3]
        cdef double tau[3]
        cdef const double* F
        memset(self.fext, 0, 6 * self.nb * sizeof(double))
        for b in range(self.nbodies):
            n = self.body_node[b]
            F = F_W + 6 * b
            matvec(self.R_WB + 9 * n, self.p_NB + 3 * b, pW)      # p_NoBo in W
            cross3(pW, F + 3, m)
            tau[0], tau[1], tau[2] = F[0] + m[0], F[1] + m[1], F[2] + m[2]
            matTvec(self.R_WB + 9 * n, tau, m)
            self.fext[6 * n] += m[0]
            self.fext[6 * n + 1] += m[1]
            self.fext[6 * n + 2] += m[2]
            matTvec(self.R_WB + 9 * n, F + 3, m)
            self.fext[6 * n + 3] += m[0]
            self.fext[6 * n + 4] += m[1]
            self.fext[6 * n + 5] += m[2]

    # -----------------------------------------------------------------------------------------
    # Dynamics
    # -----------------------------------------------------------------------------------------
    cdef void rnea(self, const double* vdot, bint use_velocity, bint use_gravity, bint use_fext,
                   double* tau) noexcept nogil:
        """tau = M v̇ + [C v] - [τ_g] - [Σ Jᵀ F_ext]; vdot may be NULL (v̇ = 0).

        Needs positions(), velocities() when use_velocity, load_body_forces() when use_fext.
        """
        cdef int t, k, p, nv
        cdef double hV[6]
        cdef double* a
        cdef double* f
        cdef double* S
        cdef double s
        memset(self.A, 0, 6 * sizeof(double))
        if use_gravity:
            self.A[3], self.A[4], self.A[5] = -self.g[0], -self.g[1], -self.g[2]
        for t in range(1, self.nb):
            a = self.A + 6 * t
            f = self.F + 6 * t
            S = self.S + 36 * t
            nv = self.nvj[t]
            motion_to_child(self.R_PB + 9 * t, self.p_PB + 3 * t, self.A + 6 * self.parent[t], a)
            if vdot != NULL:
                for k in range(nv):
                    s = vdot[self.vs[t] + k]
                    a[0] += S[6 * k] * s
                    a[1] += S[6 * k + 1] * s
                    a[2] += S[6 * k + 2] * s
                    a[3] += S[6 * k + 3] * s
                    a[4] += S[6 * k + 4] * s
                    a[5] += S[6 * k + 5] * s
            if use_velocity:
                for k in range(6):
                    a[k] += self.c[6 * t + k]
            inertia_mul(self.mass[t], self.h + 3 * t, self.Io + 9 * t, a, f)
            if use_velocity:
                inertia_mul(self.mass[t], self.h + 3 * t, self.Io + 9 * t, self.V + 6 * t, hV)
                cross_force_add(self.V + 6 * t, hV, f)
            if use_fext:
                for k in range(6):
                    f[k] -= self.fext[6 * t + k]
        for t in range(self.nb - 1, 0, -1):
            f = self.F + 6 * t
            S = self.S + 36 * t
            for k in range(self.nvj[t]):
                tau[self.vs[t] + k] = dot6(S + 6 * k, f)
                if vdot != NULL:            # reflected inertia: + ρ² I_r v̇ (Drake's inverse dynamics)
                    tau[self.vs[t] + k] += self.armature[self.vs[t] + k] * vdot[self.vs[t] + k]
            p = self.parent[t]
            if p > 0:
                force_to_parent_add(self.R_PB + 9 * t, self.p_PB + 3 * t, f, self.F + 6 * p)

    cdef void gravity(self, double* tau) noexcept nogil:
        """τ_g(q), the generalized force of gravity (Drake's sign). Needs positions()."""
        cdef int t, k, p
        cdef double gB[3]
        cdef double* f
        cdef double m
        for t in range(1, self.nb):
            f = self.F + 6 * t
            m = self.mass[t]
            matTvec(self.R_WB + 9 * t, self.g, gB)      # g in B
            cross3(self.h + 3 * t, gB, f)              # moment about Bo of m g at the com
            f[3], f[4], f[5] = m * gB[0], m * gB[1], m * gB[2]
        for t in range(self.nb - 1, 0, -1):
            f = self.F + 6 * t
            for k in range(self.nvj[t]):
                tau[self.vs[t] + k] = dot6(self.S + 36 * t + 6 * k, f)
            p = self.parent[t]
            if p > 0:
                force_to_parent_add(self.R_PB + 9 * t, self.p_PB + 3 * t, f, self.F + 6 * p)

    cdef void crba(self, double* M) noexcept nogil:
        """M(q) (nv x nv, row-major) by the composite-rigid-body algorithm in world coordinates: motion
        subspaces and composite inertias about the world origin, so M_ji = S_jᵀ (Ic_i S_i) needs no
        transforms up the tree. Needs positions()."""
        cdef int t, k, kk, j, p, nv = self.nv, row, col
        cdef double Fc[6]
        cdef double* Sw
        memset(M, 0, nv * nv * sizeof(double))
        memset(self.Ic_m, 0, self.nb * sizeof(double))
        memset(self.Ic_h, 0, 3 * self.nb * sizeof(double))
        memset(self.Ic_I, 0, 9 * self.nb * sizeof(double))
        self.world_subspaces()
        for t in range(1, self.nb):
            rigid_inertia_to_parent_add(self.R_WB + 9 * t, self.p_WB + 3 * t, self.mass[t], self.h + 3 * t,
                                        self.Io + 9 * t, self.Ic_m + t, self.Ic_h + 3 * t, self.Ic_I + 9 * t)
        for t in range(self.nb - 1, 0, -1):
            p = self.parent[t]
            if p > 0:
                self.Ic_m[p] += self.Ic_m[t]
                for k in range(3):
                    self.Ic_h[3 * p + k] += self.Ic_h[3 * t + k]
                for k in range(9):
                    self.Ic_I[9 * p + k] += self.Ic_I[9 * t + k]
        for t in range(1, self.nb):
            Sw = self.Sw + 36 * t
            for k in range(self.nvj[t]):
                col = self.vs[t] + k
                inertia_mul(self.Ic_m[t], self.Ic_h + 3 * t, self.Ic_I + 9 * t, Sw + 6 * k, Fc)
                for kk in range(self.nvj[t]):
                    M[nv * (self.vs[t] + kk) + col] = dot6(Sw + 6 * kk, Fc)
                j = self.parent[t]
                while j > 0:
                    for kk in range(self.nvj[j]):
                        row = self.vs[j] + kk
                        M[nv * row + col] = dot6(self.Sw + 36 * j + 6 * kk, Fc)
                        M[nv * col + row] = M[nv * row + col]
                    j = self.parent[j]
        for k in range(nv):                 # reflected inertia ρ² I_r on the diagonal, as in Drake
            M[nv * k + k] += self.armature[k]

    cdef void world_subspaces(self) noexcept nogil:
        """Sw: the motion subspaces at the world origin in W. Needs positions()."""
        cdef int t, k
        for t in range(1, self.nb):
            for k in range(self.nvj[t]):
                motion_to_world(self.R_WB + 9 * t, self.p_WB + 3 * t, self.S + 36 * t + 6 * k,
                                self.Sw + 36 * t + 6 * k)

    cdef int aba(self, const double* tau, bint use_gravity, bint use_fext, double* vdot) noexcept nogil:
        """v̇ = M⁻¹ (τ + τ_g + Σ Jᵀ F_ext - C v) by the articulated-body algorithm in world coordinates
        (spatial quantities about the world origin, so articulated inertias add without transforms).

        Needs positions(), velocities() and, with use_fext, load_body_forces(). Returns 0, or the
        node whose articulated inertia is singular.
        """
        cdef int t, k, kk, r, p, nv
        cdef double hV[6]
        cdef double Vw[6]
        cdef double Ia[36]
        cdef double pa[6]
        cdef double Dm[36]
        cdef double tmp[6]
        cdef double DinvU[36]
        cdef double fw[6]
        cdef double mw, s, d
        cdef double hw[3]
        cdef double Iw[9]
        cdef double* IA
        cdef double* pA
        cdef double* U
        cdef double* S
        cdef double* Di
        cdef double* u
        cdef double* a
        cdef double* c
        self.world_subspaces()
        for t in range(1, self.nb):
            mw = 0.0
            memset(hw, 0, 3 * sizeof(double))
            memset(Iw, 0, 9 * sizeof(double))
            rigid_inertia_to_parent_add(self.R_WB + 9 * t, self.p_WB + 3 * t, self.mass[t], self.h + 3 * t,
                                        self.Io + 9 * t, &mw, hw, Iw)
            inertia6(mw, hw, Iw, self.IA + 36 * t)
            motion_to_world(self.R_WB + 9 * t, self.p_WB + 3 * t, self.V + 6 * t, Vw)
            motion_to_world(self.R_WB + 9 * t, self.p_WB + 3 * t, self.c + 6 * t, self.cw + 6 * t)
            pA = self.pA + 6 * t
            inertia_mul(mw, hw, Iw, Vw, hV)
            memset(pA, 0, 6 * sizeof(double))
            cross_force_add(Vw, hV, pA)
            if use_fext:
                force_to_world(self.R_WB + 9 * t, self.p_WB + 3 * t, self.fext + 6 * t, fw)
                for k in range(6):
                    pA[k] -= fw[k]
        for t in range(self.nb - 1, 0, -1):
            IA = self.IA + 36 * t
            pA = self.pA + 6 * t
            U = self.U + 36 * t
            Di = self.Dinv + 36 * t
            u = self.u + 6 * t
            S = self.Sw + 36 * t
            c = self.cw + 6 * t
            nv = self.nvj[t]
            p = self.parent[t]
            if nv == 1:
                mat6_vec(IA, S, U)
                d = dot6(S, U) + self.armature[self.vs[t]]     # + reflected inertia (1-dof joints only)
                if not d > 0.0:
                    return t
                Di[0] = 1.0 / d
                u[0] = tau[self.vs[t]] - dot6(S, pA)
                if p == 0:
                    continue
                for r in range(6):           # Ia = IA - U Uᵀ / d ;  pa = pA + Ia c + U u / d
                    s = U[r] * Di[0]
                    for kk in range(6):
                        Ia[6 * r + kk] = IA[6 * r + kk] - s * U[kk]
                mat6_vec(Ia, c, pa)
                s = u[0] * Di[0]
                for r in range(6):
                    pa[r] += pA[r] + U[r] * s
            else:
                for k in range(nv):
                    mat6_vec(IA, S + 6 * k, U + 6 * k)
                    u[k] = tau[self.vs[t] + k] - dot6(S + 6 * k, pA)
                for k in range(nv):
                    for kk in range(nv):
                        Dm[nv * k + kk] = dot6(S + 6 * k, U + 6 * kk)
                if nv > 0 and cholesky_inverse(Dm, nv, Di) != 0:
                    return t
                if p == 0:
                    continue
                for k in range(nv):          # (U D⁻¹)[:, k]
                    for r in range(6):
                        s = 0.0
                        for kk in range(nv):
                            s += U[6 * kk + r] * Di[nv * kk + k]
                        DinvU[6 * k + r] = s
                memcpy(Ia, IA, 36 * sizeof(double))
                for r in range(6):
                    for kk in range(6):
                        s = 0.0
                        for k in range(nv):
                            s += DinvU[6 * k + r] * U[6 * k + kk]
                        Ia[6 * r + kk] -= s
                mat6_vec(Ia, c, pa)
                for r in range(6):
                    pa[r] += pA[r]
                    for k in range(nv):
                        pa[r] += DinvU[6 * k + r] * u[k]
            for k in range(36):
                self.IA[36 * p + k] += Ia[k]
            for k in range(6):
                self.pA[6 * p + k] += pa[k]
        memset(self.A, 0, 6 * sizeof(double))
        if use_gravity:
            self.A[3], self.A[4], self.A[5] = -self.g[0], -self.g[1], -self.g[2]
        for t in range(1, self.nb):
            a = self.A + 6 * t
            U = self.U + 36 * t
            Di = self.Dinv + 36 * t
            u = self.u + 6 * t
            S = self.Sw + 36 * t
            nv = self.nvj[t]
            for k in range(6):
                a[k] = self.A[6 * self.parent[t] + k] + self.cw[6 * t + k]
            for k in range(nv):
                tmp[k] = u[k] - dot6(U + 6 * k, a)
            for k in range(nv):
                s = 0.0
                for kk in range(nv):
                    s += Di[nv * k + kk] * tmp[kk]
                vdot[self.vs[t] + k] = s
                for r in range(6):
                    a[r] += S[6 * k + r] * s
        return 0

    cdef void frame_pose(self, int f, double* X) noexcept nogil:
        """X_WF as a row-major 4x4. Needs positions()."""
        cdef int n = self.frame_node[f], r, k
        cdef double R[9]
        cdef double p[3]
        matmul(self.R_WB + 9 * n, self.R_NF + 9 * f, R)
        matvec(self.R_WB + 9 * n, self.p_NF + 3 * f, p)
        for r in range(3):
            for k in range(3):
                X[4 * r + k] = R[3 * r + k]
            X[4 * r + 3] = p[r] + self.p_WB[3 * n + r]
        X[12], X[13], X[14], X[15] = 0.0, 0.0, 0.0, 1.0

    cdef void point_jacobian(self, int n, const double* p_WQ, double* J, int ld) noexcept nogil:
        """Writes the columns of the joints from node n to the world of J_WQ (6 x nv, row stride ld):
        the spatial velocity Jacobian of the point Q (given in W) fixed to node n, expressed in W."""
        cdef int j = n, k, col
        cdef double w[3]
        cdef double vo[3]
        cdef double d[3]
        cdef double wd[3]
        cdef double* s
        while j > 0:
            for k in range(self.nvj[j]):
                s = self.S + 36 * j + 6 * k
                matvec(self.R_WB + 9 * j, s, w)
                matvec(self.R_WB + 9 * j, s + 3, vo)
                d[0] = p_WQ[0] - self.p_WB[3 * j]
                d[1] = p_WQ[1] - self.p_WB[3 * j + 1]
                d[2] = p_WQ[2] - self.p_WB[3 * j + 2]
                cross3(w, d, wd)
                col = self.vs[j] + k
                J[col], J[ld + col], J[2 * ld + col] = w[0], w[1], w[2]
                J[3 * ld + col], J[4 * ld + col], J[5 * ld + col] = vo[0] + wd[0], vo[1] + wd[1], vo[2] + wd[2]
            j = self.parent[j]

    # -----------------------------------------------------------------------------------------
    # Python access for the MultibodyPlant facade (allocates; not for the control loop)
    # -----------------------------------------------------------------------------------------
    def update(self, q, v=None):
        """positions(q) and, given v, velocities(v) on this workspace."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = NULL
        if v is not None:
            vp = _arr(v, self.nv, -1, False, "v")
        with nogil:
            self.positions(qp)
            if vp != NULL:
                self.velocities(vp)

    def body_poses(self):
        """(R_WB (nbodies, 3, 3), p_WB (nbodies, 3)) by BodyIndex, from the last update()."""
        R = cnp.PyArray_ZEROS(3, [self.nbodies, 3, 3], cnp.NPY_DOUBLE, 0)
        p = cnp.PyArray_ZEROS(2, [self.nbodies, 3], cnp.NPY_DOUBLE, 0)
        cdef double* rp = <double*>cnp.PyArray_DATA(R)
        cdef double* pp = <double*>cnp.PyArray_DATA(p)
        cdef int b
        for b in range(self.nbodies):
            self.body_pose(b, rp + 9 * b, pp + 3 * b)
        return R, p

    def body_velocities(self):
        """V_WB_W (nbodies, 6) by BodyIndex, from the last update() with v."""
        V = cnp.PyArray_ZEROS(2, [self.nbodies, 6], cnp.NPY_DOUBLE, 0)
        cdef double* vp = <double*>cnp.PyArray_DATA(V)
        cdef int b
        for b in range(self.nbodies):
            self.body_velocity(b, vp + 6 * b)
        return V

    def body_accelerations(self, vdot):
        """A_WB_W = [α_WB; a_WBo] (nbodies, 6) by BodyIndex for v̇, without gravity. Needs update(q, v)."""
        cdef double* vd = _arr(vdot, self.nv, -1, False, "known_vdot")
        cdef double* tmp = <double*>malloc(self.nv * sizeof(double) + 1)
        with nogil:
            self.rnea(vd, True, False, False, tmp)
        free(tmp)
        A = cnp.PyArray_ZEROS(2, [self.nbodies, 6], cnp.NPY_DOUBLE, 0)
        cdef double* ap = <double*>cnp.PyArray_DATA(A)
        cdef double a[6]
        cdef double ax[3]
        cdef double V_W[6]
        cdef double wv[3]
        cdef int b, n
        for b in range(self.nbodies):
            n = self.body_node[b]
            # Featherstone's acceleration moved from No to Bo (a motion vector), then made classical
            cross3(self.A + 6 * n, self.p_NB + 3 * b, ax)
            a[0], a[1], a[2] = self.A[6 * n], self.A[6 * n + 1], self.A[6 * n + 2]
            a[3], a[4], a[5] = self.A[6 * n + 3] + ax[0], self.A[6 * n + 4] + ax[1], self.A[6 * n + 5] + ax[2]
            matvec(self.R_WB + 9 * n, a, ap + 6 * b)
            matvec(self.R_WB + 9 * n, a + 3, ap + 6 * b + 3)
            self.body_velocity(b, V_W)
            cross3(V_W, V_W + 3, wv)
            ap[6 * b + 3] += wv[0]
            ap[6 * b + 4] += wv[1]
            ap[6 * b + 5] += wv[2]
        return A

    def inverse_dynamics(self, vdot, bint use_velocity, bint use_gravity, F_W=None):
        """M v̇ + [C v] - [τ_g] - Σ Jᵀ F_W for the last update(); F_W (nbodies, 6) by BodyIndex."""
        cdef double* vd = NULL
        cdef double* fw = NULL
        if vdot is not None:
            vd = _arr(vdot, self.nv, -1, False, "known_vdot")
        if F_W is not None:
            fw = _arr(F_W, self.nbodies, 6, False, "body forces")
        tau = cnp.PyArray_ZEROS(1, [self.nv], cnp.NPY_DOUBLE, 0)
        cdef double* tp = <double*>cnp.PyArray_DATA(tau)
        with nogil:
            if fw != NULL:
                self.load_body_forces(fw)
            self.rnea(vd, use_velocity, use_gravity, fw != NULL, tp)
        return tau

    def mass_matrix(self):
        M = cnp.PyArray_ZEROS(2, [self.nv, self.nv], cnp.NPY_DOUBLE, 0)
        cdef double* mp = <double*>cnp.PyArray_DATA(M)
        with nogil:
            self.crba(mp)
        return M

    def forward_dynamics(self, tau, bint use_gravity, F_W=None):
        """v̇ for the last update(q, v)."""
        cdef double* tp = _arr(tau, self.nv, -1, False, "tau")
        cdef double* fw = NULL
        cdef int bad
        if F_W is not None:
            fw = _arr(F_W, self.nbodies, 6, False, "body forces")
        vdot = cnp.PyArray_ZEROS(1, [self.nv], cnp.NPY_DOUBLE, 0)
        cdef double* vp = <double*>cnp.PyArray_DATA(vdot)
        with nogil:
            if fw != NULL:
                self.load_body_forces(fw)
            bad = self.aba(tp, use_gravity, fw != NULL, vp)
        if bad:
            raise SingularInertiaError(self.singular_message(bad))
        return vdot

    def singular_message(self, int node):
        return (f"forward dynamics: the articulated inertia seen by joint '{self.node_joint[node]}' is singular: "
                "the bodies it moves have no mass or inertia about its axis")

    def gravity_forces(self):
        tau = cnp.PyArray_ZEROS(1, [self.nv], cnp.NPY_DOUBLE, 0)
        cdef double* tp = <double*>cnp.PyArray_DATA(tau)
        with nogil:
            self.gravity(tp)
        return tau

    def frame_pose_world(self, int f):
        """X_WF (4, 4) of frame index f, from the last update()."""
        X = cnp.PyArray_ZEROS(2, [4, 4], cnp.NPY_DOUBLE, 0)
        self.frame_pose(f, <double*>cnp.PyArray_DATA(X))
        return X

    def point_jacobian_world(self, int body, p_WQ):
        """6 x nv J_WQ for the point Q (world coordinates) fixed to body `body`, from the last update()."""
        cdef double pq[3]
        _copy_d(pq, p_WQ, 3)
        J = cnp.PyArray_ZEROS(2, [6, self.nv], cnp.NPY_DOUBLE, 0)
        cdef double* jp = <double*>cnp.PyArray_DATA(J)
        cdef int n = self.body_node[body]
        with nogil:
            self.point_jacobian(n, pq, jp, self.nv)
        return J

    def map_velocity_to_qdot(self, q, v):
        """N(q) v (allocating)."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = _arr(v, self.nv, -1, False, "v")
        out = cnp.PyArray_ZEROS(1, [self.nq], cnp.NPY_DOUBLE, 0)
        if self.velocity_to_qdot(qp, vp, <double*>cnp.PyArray_DATA(out)):
            raise GimbalLockError("MapVelocityToQDot: a BallRpyJoint is at gimbal lock (|pitch| = pi/2)")
        return out


# ---------------------------------------------------------------------------------------------
# The real-time kernel API
# ---------------------------------------------------------------------------------------------
cdef class Kernels:
    """Allocation-free dynamics for the control loop; get one with ``plant.kernels()``.

    Every method takes C-contiguous float64 numpy arrays, writes its result into ``out``, releases
    the GIL while computing and allocates nothing. Wrong shapes or dtypes raise ValueError. Each
    Kernels object owns its workspace: use one per thread.

    Conventions (Drake's): ``gravity`` writes τ_g, the generalized force of gravity, so gravity
    compensation is -τ_g; ``inverse_dynamics`` writes M v̇ + C v - τ_g, the torque that produces
    v̇; ``forward_dynamics`` is its inverse. Joint damping is in neither.
    """
    cdef CompiledTree tree
    cdef readonly int nq, nv, num_bodies, num_frames
    cdef dict _frame_ids

    def __init__(self, CompiledTree tree, dict frame_ids):
        self.tree = tree
        self.nq, self.nv, self.num_bodies, self.num_frames = tree.nq, tree.nv, tree.nbodies, tree.nf
        self._frame_ids = frame_ids

    cdef int _frame(self, object frame) except -1:
        cdef object f = frame
        if not isinstance(frame, int):
            try:
                f = self._frame_ids.get(frame)
            except TypeError:
                f = None
            if f is None:
                raise ValueError(f"{frame!r} is not a frame of this plant (pass a Frame or FrameIndex)")
        if f < 0 or f >= self.tree.nf:
            raise ValueError(f"frame index {f} is out of range [0, {self.tree.nf})")
        return f

    def gravity(self, q, out):
        """out = τ_g(q) (nv); gravity compensation is -out."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* op = _arr(out, self.nv, -1, True, "out")
        with nogil:
            self.tree.positions(qp)
            self.tree.gravity(op)

    def inverse_dynamics(self, q, v, vdot, out, body_forces=None):
        """out = M(q) v̇ + C(q, v) v - τ_g(q) [- Σ J_Bᵀ F_Bo_W for body_forces (num_bodies, 6)]."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = _arr(v, self.nv, -1, False, "v")
        cdef double* ap = _arr(vdot, self.nv, -1, False, "vdot")
        cdef double* op = _arr(out, self.nv, -1, True, "out")
        cdef double* fp = NULL
        if body_forces is not None:
            fp = _arr(body_forces, self.num_bodies, 6, False, "body_forces")
        with nogil:
            self.tree.positions(qp)
            self.tree.velocities(vp)
            if fp != NULL:
                self.tree.load_body_forces(fp)
            self.tree.rnea(ap, True, True, fp != NULL, op)

    def bias(self, q, v, out):
        """out = C(q, v) v, the Coriolis, centrifugal and gyroscopic terms (no gravity)."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = _arr(v, self.nv, -1, False, "v")
        cdef double* op = _arr(out, self.nv, -1, True, "out")
        with nogil:
            self.tree.positions(qp)
            self.tree.velocities(vp)
            self.tree.rnea(NULL, True, False, False, op)

    def mass_matrix(self, q, out):
        """out = M(q) (nv, nv) by the composite-rigid-body algorithm."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* op = _arr(out, self.nv, self.nv, True, "out")
        with nogil:
            self.tree.positions(qp)
            self.tree.crba(op)

    def forward_dynamics(self, q, v, tau, out, body_forces=None):
        """out = v̇ with M v̇ + C v - τ_g = tau [+ Σ J_Bᵀ F_Bo_W], by the articulated-body algorithm."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = _arr(v, self.nv, -1, False, "v")
        cdef double* tp = _arr(tau, self.nv, -1, False, "tau")
        cdef double* op = _arr(out, self.nv, -1, True, "out")
        cdef double* fp = NULL
        cdef int bad
        if body_forces is not None:
            fp = _arr(body_forces, self.num_bodies, 6, False, "body_forces")
        with nogil:
            self.tree.positions(qp)
            self.tree.velocities(vp)
            if fp != NULL:
                self.tree.load_body_forces(fp)
            bad = self.tree.aba(tp, True, fp != NULL, op)
        if bad:
            raise SingularInertiaError(self.tree.singular_message(bad))

    def frame_pose(self, q, frame, out):
        """out (4, 4) = X_WF(q) for a Frame or FrameIndex."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* op = _arr(out, 4, 4, True, "out")
        cdef int f = self._frame(frame)
        with nogil:
            self.tree.positions_to(self.tree.frame_node[f], qp)
            self.tree.frame_pose(f, op)

    def jacobian(self, q, frame, out):
        """out (6, nv) = J_V_WF_W: V_WF = [w_WF; v_WFo] expressed in W equals out @ v."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* op = _arr(out, 6, self.nv, True, "out")
        cdef int f = self._frame(frame)
        cdef double X[16]
        cdef double p[3]
        with nogil:
            self.tree.positions_to(self.tree.frame_node[f], qp)
            self.tree.frame_pose(f, X)
            p[0], p[1], p[2] = X[3], X[7], X[11]
            memset(op, 0, 6 * self.tree.nv * sizeof(double))
            self.tree.point_jacobian(self.tree.frame_node[f], p, op, self.tree.nv)

    def body_poses(self, q, out):
        """out (num_bodies, 4, 4) = X_WB(q) of every body, by BodyIndex (for viewers and contact)."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* op = _arr3(out, self.num_bodies, 4, 4, "out")
        cdef int b, r, k
        cdef double R[9]
        cdef double p[3]
        with nogil:
            self.tree.positions(qp)
            for b in range(self.tree.nbodies):
                self.tree.body_pose(b, R, p)
                for r in range(3):
                    for k in range(3):
                        op[16 * b + 4 * r + k] = R[3 * r + k]
                    op[16 * b + 4 * r + 3] = p[r]
                op[16 * b + 12], op[16 * b + 13], op[16 * b + 14], op[16 * b + 15] = 0.0, 0.0, 0.0, 1.0

    def body_positions_quaternions(self, q, out):
        """out (num_bodies, 7) = [p_WBo; q_WB] of every body, by BodyIndex: the position and the
        orientation as a quaternion [w x y z] with w >= 0 (what viewers draw)."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* op = _arr(out, self.num_bodies, 7, True, "out")
        cdef int b
        cdef double R[9]
        with nogil:
            self.tree.positions(qp)
            for b in range(self.tree.nbodies):
                self.tree.body_pose(b, R, op + 7 * b)
                matrix_quaternion(R, op + 7 * b + 3)

    def body_spatial_velocities(self, q, v, out):
        """out (num_bodies, 6) = V_WB_W = [w_WB; v_WBo] in W of every body, by BodyIndex."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = _arr(v, self.nv, -1, False, "v")
        cdef double* op = _arr(out, self.num_bodies, 6, True, "out")
        cdef int b
        with nogil:
            self.tree.positions(qp)
            self.tree.velocities(vp)
            for b in range(self.tree.nbodies):
                self.tree.body_velocity(b, op + 6 * b)

    def map_velocity_to_qdot(self, q, v, out):
        """out (nq) = q̇ = N(q) v."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = _arr(v, self.nv, -1, False, "v")
        cdef double* op = _arr(out, self.nq, -1, True, "out")
        cdef int bad
        with nogil:
            bad = self.tree.velocity_to_qdot(qp, vp, op)
        if bad:
            raise GimbalLockError("map_velocity_to_qdot: a roll-pitch-yaw joint is at gimbal lock (|pitch| = pi/2)")

    # -----------------------------------------------------------------------------------------
    # Contact points and the centre of mass, for whole-body control (hil.wbc)
    # -----------------------------------------------------------------------------------------
    def points_jacobian_bias(self, q, v, frames, p_FQ, J, Jdot_v):
        """Translational kinematics of k points Qi fixed in frames Fi, in one pass:
        J (3k, nv) stacks Jv_WQi_W (v_WQi = Jv_WQi v) and Jdot_v (3k) stacks aBias_WQi_W = J̇v_WQi v
        (Drake's CalcBiasTranslationalAcceleration, A = E = W); p_FQ (k, 3) is p_FoQi_F."""
        cdef Py_ssize_t k = len(frames), i
        cdef int f
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = _arr(v, self.nv, -1, False, "v")
        cdef double* pp = _arr(p_FQ, k, 3, False, "p_FQ")
        cdef double* Jp = _arr(J, 3 * k, self.nv, True, "J")
        cdef double* ap = _arr(Jdot_v, 3 * k, -1, True, "Jdot_v")
        with nogil:
            self.tree.positions(qp)
            self.tree.velocities(vp)
            _bias_spatial_accelerations(self.tree)
            memset(Jp, 0, 3 * k * self.tree.nv * sizeof(double))
        for i in range(k):
            f = self._frame(frames[i])
            with nogil:
                _point_translational(self.tree, f, pp + 3 * i, Jp + 3 * i * self.tree.nv, ap + 3 * i)

    def frame_jacobian_bias(self, q, v, frame, J, Jdot_v):
        """The spatial kinematics of frame F in one pass: J (6, nv) = J_V_WF_W (V_WF = [w_WF; v_WFo]
        in W = J v, as ``jacobian``) and Jdot_v (6) = J̇ v = AsBias_WF_W = [α; a_WFo] for v̇ = 0
        (Drake's CalcBiasSpatialAcceleration, A = E = W, at Fo)."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = _arr(v, self.nv, -1, False, "v")
        cdef double* Jp = _arr(J, 6, self.nv, True, "J")
        cdef double* ap = _arr(Jdot_v, 6, -1, True, "Jdot_v")
        cdef int f = self._frame(frame), n = self.tree.frame_node[f]
        cdef double zero[3]
        cdef double X[16]
        cdef double p[3]
        zero[0], zero[1], zero[2] = 0.0, 0.0, 0.0
        with nogil:
            self.tree.positions(qp)
            self.tree.velocities(vp)
            _bias_spatial_accelerations(self.tree)
            memset(Jp, 0, 6 * self.tree.nv * sizeof(double))
            self.tree.frame_pose(f, X)
            p[0], p[1], p[2] = X[3], X[7], X[11]
            self.tree.point_jacobian(n, p, Jp, self.tree.nv)
            matvec(self.tree.R_WB + 9 * n, self.tree.A + 6 * n, ap)
            _point_translational(self.tree, f, zero, NULL, ap + 3)

    def center_of_mass(self, q, v, p_WCcm, J, Jdot_v):
        """The centre of mass Ccm of all bodies: p_WCcm (3), its Jacobian J (3, nv) with
        v_WCcm = J v (CalcJacobianCenterOfMassTranslationalVelocity, kV, A = E = W) and Jdot_v (3)
        = J̇ v (CalcBiasCenterOfMassTranslationalAcceleration), by subtree masses and first moments:
        column (node j, axis s) = [m_j⁺ v_s + w_s × (Σ⁺ m_i p_WCi − m_j⁺ p_WJo)] / m over j's subtree ⁺."""
        cdef double* qp = _arr(q, self.nq, -1, False, "q")
        cdef double* vp = _arr(v, self.nv, -1, False, "v")
        cdef double* cp = _arr(p_WCcm, 3, -1, True, "p_WCcm")
        cdef double* Jp = _arr(J, 3, self.nv, True, "J")
        cdef double* ap = _arr(Jdot_v, 3, -1, True, "Jdot_v")
        cdef int bad
        with nogil:
            self.tree.positions(qp)
            self.tree.velocities(vp)
            _bias_spatial_accelerations(self.tree)
            bad = _center_of_mass(self.tree, cp, Jp, ap)
        if bad:
            raise RuntimeError("center_of_mass(): the system's total mass must be greater than zero")


cdef void _bias_spatial_accelerations(CompiledTree T) noexcept nogil:
    """T.A[t] = the spatial acceleration of node t for v̇ = 0 (body coordinates, no gravity).
    Needs positions() and velocities()."""
    cdef int t, k
    memset(T.A, 0, 6 * sizeof(double))
    for t in range(1, T.nb):
        motion_to_child(T.R_PB + 9 * t, T.p_PB + 3 * t, T.A + 6 * T.parent[t], T.A + 6 * t)
        for k in range(6):
            T.A[6 * t + k] += T.c[6 * t + k]


cdef void _point_translational(CompiledTree T, int f, const double* p_FQ, double* J, double* a_W) noexcept nogil:
    """Rows 3 x nv of Jv_WQ_W into J (zeroed by the caller; NULL: none) and aBias_WQ_W into a_W for
    the point Q fixed in frame f: a_Q = a_Bo + α × r + w × (v_Bo + w × r) with r = p_BoQ (classical
    acceleration from the spatial one). Needs _bias_spatial_accelerations()."""
    cdef int n = T.frame_node[f], j, s, col, ld = T.nv
    cdef double r[3]
    cdef double p_WQ[3]
    cdef double a[3]
    cdef double x[3]
    cdef double y[3]
    cdef double w[3]
    cdef double vo[3]
    cdef double* S
    cdef double* A = T.A + 6 * n
    cdef double* V = T.V + 6 * n
    matvec(T.R_NF + 9 * f, p_FQ, r)
    r[0] += T.p_NF[3 * f]
    r[1] += T.p_NF[3 * f + 1]
    r[2] += T.p_NF[3 * f + 2]
    matvec(T.R_WB + 9 * n, r, p_WQ)
    for s in range(3):
        p_WQ[s] += T.p_WB[3 * n + s]
    cross3(V, r, x)                       # w × r
    x[0] += V[3]
    x[1] += V[4]
    x[2] += V[5]                          # v_Q in B
    cross3(V, x, y)                       # w × v_Q
    cross3(A, r, x)                       # α × r
    for s in range(3):
        a[s] = A[3 + s] + x[s] + y[s]
    matvec(T.R_WB + 9 * n, a, a_W)
    j = n if J != NULL else 0
    while j > 0:
        for s in range(T.nvj[j]):
            S = T.S + 36 * j + 6 * s
            matvec(T.R_WB + 9 * j, S, w)
            matvec(T.R_WB + 9 * j, S + 3, vo)
            x[0] = p_WQ[0] - T.p_WB[3 * j]
            x[1] = p_WQ[1] - T.p_WB[3 * j + 1]
            x[2] = p_WQ[2] - T.p_WB[3 * j + 2]
            cross3(w, x, y)
            col = T.vs[j] + s
            J[col], J[ld + col], J[2 * ld + col] = vo[0] + y[0], vo[1] + y[1], vo[2] + y[2]
        j = T.parent[j]


cdef int _center_of_mass(CompiledTree T, double* p_W, double* J, double* a_W) noexcept nogil:
    """p_WCcm, Jv_WCcm_W (3 x nv) and aBias_WCcm_W; uses T.Ic_m, T.Ic_h as subtree mass and first
    moment Σ m_i p_WCi. Needs _bias_spatial_accelerations(). Returns 1 when the total mass is 0."""
    cdef int t, s, p, col, ld = T.nv
    cdef double m = T.mass[0], mt
    cdef double c[3]
    cdef double x[3]
    cdef double y[3]
    cdef double z[3]
    cdef double w[3]
    cdef double vo[3]
    cdef double* A
    cdef double* V
    cdef double* h
    cdef double* S
    T.Ic_m[0] = T.mass[0]
    T.Ic_h[0], T.Ic_h[1], T.Ic_h[2] = T.h[0], T.h[1], T.h[2]      # bodies welded to the world
    a_W[0], a_W[1], a_W[2] = 0.0, 0.0, 0.0
    c[0], c[1], c[2] = T.h[0], T.h[1], T.h[2]
    for t in range(1, T.nb):
        mt = T.mass[t]
        h = T.h + 3 * t
        m += mt
        T.Ic_m[t] = mt
        matvec(T.R_WB + 9 * t, h, x)
        for s in range(3):
            T.Ic_h[3 * t + s] = mt * T.p_WB[3 * t + s] + x[s]
            c[s] += T.Ic_h[3 * t + s]
        # Σ m a_bias over the node: m a_lin + α × h + w × (m v_Bo + w × h), in B then W
        A = T.A + 6 * t
        V = T.V + 6 * t
        cross3(V, h, x)
        for s in range(3):
            x[s] += mt * V[3 + s]
        cross3(V, x, y)
        cross3(A, h, x)
        for s in range(3):
            z[s] = mt * A[3 + s] + x[s] + y[s]
        matvec(T.R_WB + 9 * t, z, x)
        for s in range(3):
            a_W[s] += x[s]
    if not m > 0.0:
        return 1
    for s in range(3):
        p_W[s] = c[s] / m
        a_W[s] /= m
    for t in range(T.nb - 1, 0, -1):
        p = T.parent[t]
        if p > 0:
            T.Ic_m[p] += T.Ic_m[t]
            for s in range(3):
                T.Ic_h[3 * p + s] += T.Ic_h[3 * t + s]
    memset(J, 0, 3 * ld * sizeof(double))
    for t in range(1, T.nb):
        for s in range(T.nvj[t]):
            S = T.S + 36 * t + 6 * s
            matvec(T.R_WB + 9 * t, S, w)
            matvec(T.R_WB + 9 * t, S + 3, vo)
            for p in range(3):
                x[p] = T.Ic_h[3 * t + p] - T.Ic_m[t] * T.p_WB[3 * t + p]
            cross3(w, x, y)
            col = T.vs[t] + s
            J[col] = (T.Ic_m[t] * vo[0] + y[0]) / m
            J[ld + col] = (T.Ic_m[t] * vo[1] + y[1]) / m
            J[2 * ld + col] = (T.Ic_m[t] * vo[2] + y[2]) / m
    return 0
