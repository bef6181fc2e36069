# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Allocation-free linear algebra and rotation errors for control laws, compiled: what the built-in laws
and the kernels use, for a user's law to write Λ = (J M⁻¹ Jᵀ)⁻¹, M⁻¹ b or a pose error in a few calls.

Every function takes C-contiguous float64 numpy arrays, checks their shapes once (ValueError naming
the argument), writes its result into the caller's `out` arrays, releases the GIL and allocates
nothing. A matrix that must be positive definite and is not raises DynamicsError (a singular
configuration: pass ``damping`` > 0 where there is one). With ``k = plant.kernels()``:

    k.mass_matrix_cholesky(q, L)                         # M(q) = L Lᵀ
    cholesky_solve(L, b, x)                              # x = M⁻¹ b (k.ldlt_solve: along a branched tree)
    operational_space_inertia(L, J, JMinv, Lambda)       # J M⁻¹ and Λ = (J M⁻¹ Jᵀ)⁻¹
    pose_error(X_WE, X_WG, e)                            # e = [log(R_WG R_WEᵀ); p_WG − p_WE]

docs/controllers.md ("Allocation-free helpers") has the operational-space law they make short.
"""
cimport numpy as cnp
from libc.string cimport memcpy, memset

from dynamics_cy._arrays cimport f64
from dynamics_cy._linalg cimport cholesky as _cholesky
from dynamics_cy._linalg cimport cholesky_inverse_in_place
from dynamics_cy._linalg cimport cholesky_solve as _solve
from dynamics_cy._spatial cimport pose_error as _pose_error
from dynamics_cy._spatial cimport rotation_error as _rotation_error
from dynamics_cy._spatial cimport rotation_log

from dynamics_cy.errors import DynamicsError

cnp.import_array()

cdef enum:
    MAX_SMALL = 32                       # damped_pseudo_inverse's min(k, n): its work matrix on the stack
cdef double RANK_TOL = 1e-12             # a task's Gram matrix J M⁻¹ Jᵀ or J Jᵀ: its smallest pivot² / largest diagonal


cdef Py_ssize_t _dim(object a, int axis, int ndim, str name) except -1:
    """a's size along `axis`, requiring a numpy array of `ndim` dimensions (f64 checks the rest)."""
    if not cnp.PyArray_Check(a) or cnp.PyArray_NDIM(<cnp.ndarray>a) != ndim:
        got = a.shape if cnp.PyArray_Check(a) else type(a).__name__
        raise ValueError(f"{name} must be a {ndim}-d numpy float64 array, got {got}")
    return cnp.PyArray_DIM(<cnp.ndarray>a, axis)


cdef double* _rotation(object a, str name, int* stride) except NULL:
    """The data of a rotation matrix R (3, 3) or of a pose X (4, 4), whose upper-left 3×3 is used."""
    shape = a.shape if cnp.PyArray_Check(a) else None
    if shape == (4, 4):
        stride[0] = 4
        return f64(a, 4, 4, False, name)
    if shape == (3, 3):
        stride[0] = 3
        return f64(a, 3, 3, False, name)
    raise ValueError(f"{name} must be a rotation matrix (3, 3) or a pose (4, 4), got "
                     f"{shape if shape is not None else type(a).__name__}")


cdef inline int _factor_task(double* A, int m) noexcept nogil:
    """chol(A) in place for a task's Gram matrix A (m × m): 0, or 1 + the first pivot that is not
    positive or, squared, below RANK_TOL times A's largest diagonal entry (J has lost rank there)."""
    cdef int j, bad
    cdef double big = 0.0
    for j in range(m):
        if A[j * m + j] > big:
            big = A[j * m + j]
    bad = _cholesky(A, m)
    if bad:
        return bad
    for j in range(m):
        if A[j * m + j] * A[j * m + j] <= RANK_TOL * big:
            return j + 1
    return 0


cdef inline void _zero_upper(double* L, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n - 1):
        memset(L + i * n + i + 1, 0, (n - 1 - i) * sizeof(double))


cdef int _factor(double* L, Py_ssize_t n, str what) except -1:
    """L = chol(L) in place, its upper triangle zeroed; DynamicsError naming `what` if not SPD."""
    cdef int bad
    with nogil:
        bad = _cholesky(L, <int>n)
        if not bad:
            _zero_upper(L, n)
    if bad:
        raise DynamicsError(f"{what} is not positive definite (pivot {bad - 1})")
    return 0


def cholesky(A, L):
    """L (n, n) = the lower-triangular Cholesky factor of a symmetric positive definite A (n, n):
    A = L Lᵀ (numpy.linalg.cholesky's, its upper triangle zero). L may be A (in place); only A's lower
    triangle is read."""
    cdef Py_ssize_t n = _dim(A, 0, 2, "A")
    cdef double* a = f64(A, n, n, False, "A")
    cdef double* l = f64(L, n, n, True, "L")
    if l != a:
        memcpy(l, a, n * n * sizeof(double))
    _factor(l, n, "A")


def cholesky_solve(L, B, out):
    """out = A⁻¹ b for A = L Lᵀ (L from cholesky or Kernels.mass_matrix_cholesky), by a forward and a
    back substitution. B is a vector b (n,), or a (k, n) array whose rows are solved each, out[i] =
    A⁻¹ B[i], so out = B A⁻¹ (A is symmetric): J M⁻¹ from a Jacobian's rows. out may be B."""
    cdef Py_ssize_t n = _dim(L, 0, 2, "L")
    cdef double* l = f64(L, n, n, False, "L")
    cdef bint vector = cnp.PyArray_Check(B) and cnp.PyArray_NDIM(<cnp.ndarray>B) == 1
    cdef Py_ssize_t k = 1 if vector else _dim(B, 0, 2, "B"), i
    cdef double* b = f64(B, n, -1, False, "B") if vector else f64(B, k, n, False, "B")
    cdef double* o = f64(out, n, -1, True, "out") if vector else f64(out, k, n, True, "out")
    with nogil:
        if o != b:
            memcpy(o, b, k * n * sizeof(double))
        for i in range(k):
            _solve(l, <int>n, o + i * n)


def cholesky_inverse(L, out):
    """out (n, n) = A⁻¹ = L⁻ᵀ L⁻¹ for A = L Lᵀ (L from cholesky or Kernels.mass_matrix_cholesky).
    out may be L."""
    cdef Py_ssize_t n = _dim(L, 0, 2, "L")
    cdef double* l = f64(L, n, n, False, "L")
    cdef double* o = f64(out, n, n, True, "out")
    with nogil:
        if o != l:
            memcpy(o, l, n * n * sizeof(double))
        cholesky_inverse_in_place(o, <int>n)


def operational_space_inertia(L, J, JMinv, Lambda, double damping=0.0):
    """The operational-space (task-space) inertia of a task with Jacobian J (k, n) for a mass matrix
    M = L Lᵀ (Kernels.mass_matrix_cholesky): JMinv (k, n) = J M⁻¹ (its transpose is M⁻¹ Jᵀ) and
    Lambda (k, k) = Λ = (J M⁻¹ Jᵀ + damping² I)⁻¹, so that a task force F = Λ a* through τ = Jᵀ F
    accelerates the task as ẍ = a* + J̇ v (without damping). The dynamically consistent inverse is
    J̄ = M⁻¹ Jᵀ Λ, J̄ᵀ = Λ JMinv. DynamicsError at a singularity (J loses rank: a pivot of J M⁻¹ Jᵀ
    below 10⁻¹² of its largest diagonal entry) unless damping bounds Λ."""
    cdef Py_ssize_t n = _dim(L, 0, 2, "L"), k = _dim(J, 0, 2, "J"), i, j, c
    cdef double* l = f64(L, n, n, False, "L")
    cdef double* Jp = f64(J, k, n, False, "J")
    cdef double* X = f64(JMinv, k, n, True, "JMinv")
    cdef double* A = f64(Lambda, k, k, True, "Lambda")
    cdef double s, lam2 = damping * damping
    cdef int bad
    with nogil:
        memcpy(X, Jp, k * n * sizeof(double))
        for i in range(k):
            _solve(l, <int>n, X + i * n)
        for i in range(k):                  # J M⁻¹ Jᵀ, symmetric: the lower triangle, mirrored
            for j in range(i + 1):
                s = 0.0
                for c in range(n):
                    s += X[i * n + c] * Jp[j * n + c]
                A[i * k + j] = s
                A[j * k + i] = s
            A[i * k + i] += lam2
        bad = _factor_task(A, <int>k)
        if not bad:
            cholesky_inverse_in_place(A, <int>k)
    if bad:
        raise DynamicsError(f"operational_space_inertia: J M⁻¹ Jᵀ is singular (J {k}×{n} has lost rank at task "
                            f"row {bad - 1}: a singular configuration); pass damping > 0 (it is {damping})")


def damped_pseudo_inverse(J, double damping, out):
    """out (n, k) = J⁺ = Jᵀ (J Jᵀ + λ² I)⁻¹ for J (k, n) with k <= n, (Jᵀ J + λ² I)⁻¹ Jᵀ for k > n
    (the same matrix): the damped least-squares inverse, λ = damping >= 0, which stays bounded near a
    singularity (λ = 0: the Moore–Penrose inverse of a full-rank J; DynamicsError when J has lost rank,
    as operational_space_inertia decides). min(k, n) <= 32."""
    cdef Py_ssize_t k = _dim(J, 0, 2, "J"), n = _dim(J, 1, 2, "J"), m = k if k <= n else n, i, j, c
    cdef double* Jp = f64(J, k, n, False, "J")
    cdef double* o = f64(out, n, k, True, "out")
    cdef double A[MAX_SMALL * MAX_SMALL]
    cdef double x[MAX_SMALL]
    cdef double s, lam2 = damping * damping
    cdef int bad
    if not damping >= 0.0:
        raise ValueError(f"damped_pseudo_inverse: damping must be >= 0, got {damping}")
    if m > MAX_SMALL:
        raise ValueError(f"damped_pseudo_inverse: J {k}×{n} is too large (min(k, n) <= {MAX_SMALL})")
    with nogil:
        for i in range(m):                  # A = J Jᵀ (k <= n) or Jᵀ J (k > n), + λ² I
            for j in range(i + 1):
                s = 0.0
                if k <= n:
                    for c in range(n):
                        s += Jp[i * n + c] * Jp[j * n + c]
                else:
                    for c in range(k):
                        s += Jp[c * n + i] * Jp[c * n + j]
                A[i * m + j] = s
            A[i * m + i] += lam2
        bad = _factor_task(A, <int>m)
        if not bad and k <= n:              # row c of Jᵀ (J Jᵀ + λ² I)⁻¹ = A⁻¹ (column c of J)
            for c in range(n):
                for i in range(k):
                    o[c * k + i] = Jp[i * n + c]
                _solve(A, <int>m, o + c * k)
        elif not bad:                       # column c of (Jᵀ J + λ² I)⁻¹ Jᵀ = A⁻¹ (row c of J)
            for c in range(k):
                memcpy(x, Jp + c * n, n * sizeof(double))
                _solve(A, <int>m, x)
                for i in range(n):
                    o[i * k + c] = x[i]
    if bad:
        raise DynamicsError(f"damped_pseudo_inverse: J {k}×{n} has lost rank; pass damping > 0 (it is {damping})")


def rotation_vector(R, out):
    """out (3) = θ n = log(R)ᵛ, the rotation vector of a rotation matrix R (3, 3) or of a pose's
    rotation (4, 4): R = exp(θ [n]×), θ in [0, π] (Pinocchio's log3; pydrake's
    RotationMatrix.ToAngleAxis() as angle · axis). Returns θ. Exact near θ = 0 and θ = π (where the
    sign of n is either's)."""
    cdef int sa
    cdef double* a = _rotation(R, "R", &sa)
    cdef double* o = f64(out, 3, -1, True, "out")
    cdef double Rc[9]
    cdef double th
    cdef int r
    with nogil:
        for r in range(3):
            Rc[3 * r], Rc[3 * r + 1], Rc[3 * r + 2] = a[sa * r], a[sa * r + 1], a[sa * r + 2]
        th = rotation_log(Rc, o)
    return th


def rotation_error(R_WE, R_WG, out):
    """out (3) = log(R_WG R_WEᵀ)ᵛ, expressed in W: the rotation vector that turns frame E's
    orientation into G's (turning E by |out| about out/|out| in W gives G). Each argument is a rotation
    (3, 3) or a pose (4, 4). Returns the angle |out| in [0, π]."""
    cdef int sa, sb
    cdef double* a = _rotation(R_WE, "R_WE", &sa)
    cdef double* b = _rotation(R_WG, "R_WG", &sb)
    cdef double* o = f64(out, 3, -1, True, "out")
    cdef double th
    with nogil:
        th = _rotation_error(a, sa, b, sb, o)
    return th


def pose_error(X_WE, X_WG, out):
    """out (6) = [log(R_WG R_WEᵀ)ᵛ; p_WG − p_WE] for poses X_WE, X_WG (4, 4), in W: the rotation
    vector and the translation that take frame E to G, in the order of a spatial velocity [w; v] (the
    error the built-in cartesian_impedance feeds its spring K∘e). Returns the angle."""
    cdef double* a = f64(X_WE, 4, 4, False, "X_WE")
    cdef double* b = f64(X_WG, 4, 4, False, "X_WG")
    cdef double* o = f64(out, 6, -1, True, "out")
    cdef double th
    with nogil:
        th = _pose_error(a, b, o)
    return th
