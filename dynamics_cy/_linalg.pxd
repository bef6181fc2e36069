# Small dense linear algebra, inline and allocation-free (hand-written: it runs inside GIL-free
# kernels on matrices of at most a few dozen rows): the Cholesky factorization of a symmetric positive
# definite matrix, its solve and its inverse. Shared by dynamics_cy's articulated-body algorithm, the
# Kernels' mass-matrix factor and inverse, the public dynamics_cy.linalg and the simulator's contact
# solver (drivers.sim._physics).
from libc.math cimport sqrt
from libc.string cimport memcpy


cdef inline int cholesky(double* A, int n) noexcept nogil:
    """A (n×n, row-major, SPD) = L Lᵀ in place (L in the lower triangle, the upper one left as it
    was); 0, or 1 + the index of the first non-positive pivot when A is not positive definite."""
    cdef int i, j, k
    cdef double s
    for j in range(n):
        s = A[j * n + j]
        for k in range(j):
            s -= A[j * n + k] * A[j * n + k]
        if not s > 0.0:
            return j + 1
        A[j * n + j] = sqrt(s)
        for i in range(j + 1, n):
            s = A[i * n + j]
            for k in range(j):
                s -= A[i * n + k] * A[j * n + k]
            A[i * n + j] = s / A[j * n + j]
    return 0


cdef inline void cholesky_solve(const double* L, int n, double* x) noexcept nogil:
    """x ← (L Lᵀ)⁻¹ x for the factor L of cholesky()."""
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


cdef inline void cholesky_inverse_in_place(double* A, int n) noexcept nogil:
    """A ← (L Lᵀ)⁻¹ for the factor L of cholesky() in A's lower triangle: L⁻¹ in place (column by
    column), then (L Lᵀ)⁻¹ = L⁻ᵀ L⁻¹, whose (i, j) = Σ_{k ≥ max(i, j)} L⁻¹_ki L⁻¹_kj reads only the
    lower triangle: the strict upper triangle first, then the diagonal, then mirrored."""
    cdef int i, j, k
    cdef double s
    for i in range(n):
        A[i * n + i] = 1.0 / A[i * n + i]
    for j in range(n):                  # column j of L⁻¹ from the columns k > j of L, still in place
        for i in range(j + 1, n):
            s = 0.0
            for k in range(j, i):
                s += A[i * n + k] * A[k * n + j]
            A[i * n + j] = -s * A[i * n + i]
    for i in range(n):
        for j in range(i + 1, n):
            s = 0.0
            for k in range(j, n):
                s += A[k * n + i] * A[k * n + j]
            A[i * n + j] = s
    for i in range(n):
        s = 0.0
        for k in range(i, n):
            s += A[k * n + i] * A[k * n + i]
        A[i * n + i] = s
    for i in range(n):
        for j in range(i):
            A[i * n + j] = A[j * n + i]


cdef inline int cholesky_inverse(double* D, int n, double* Dinv) noexcept nogil:
    """Dinv = D⁻¹ for a symmetric positive definite n×n D (row-major); D is overwritten by its factor
    L. Returns 0, or 1 when D is not positive definite."""
    if cholesky(D, n):
        return 1
    memcpy(Dinv, D, n * n * sizeof(double))
    cholesky_inverse_in_place(Dinv, n)
    return 0
