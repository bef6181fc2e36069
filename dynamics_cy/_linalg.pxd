# Small dense linear algebra, inline and allocation-free (hand-written: it runs inside GIL-free
# kernels on matrices of at most a few dozen rows): the Cholesky factorization of a symmetric positive
# definite matrix, its solve and, for n <= 6, its inverse. Shared by dynamics_cy's articulated-body
# algorithm and the simulator's contact solver (drivers.sim._physics).
from libc.math cimport sqrt


cdef inline int cholesky(double* A, int n) noexcept nogil:
    """A (n×n, row-major, SPD) = L Lᵀ in place (L in the lower triangle); 1 if not positive definite."""
    cdef int i, j, k
    cdef double s
    for j in range(n):
        s = A[j * n + j]
        for k in range(j):
            s -= A[j * n + k] * A[j * n + k]
        if not s > 0.0:
            return 1
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


cdef inline int cholesky_inverse(double* D, int n, double* Dinv) noexcept nogil:
    """Dinv = D⁻¹ = L⁻ᵀ L⁻¹ for a symmetric positive definite n×n D (n <= 6, row-major); D is
    overwritten by its factor L. Returns 0, or 1 when D is not positive definite."""
    cdef int i, j, k
    cdef double s
    cdef double Li[36]
    if cholesky(D, n):
        return 1
    for i in range(n):                  # Li = L⁻¹ (lower triangular, row stride n)
        Li[n * i + i] = 1.0 / D[n * i + i]
        for j in range(i):
            s = 0.0
            for k in range(j, i):
                s -= D[n * i + k] * Li[n * k + j]
            Li[n * i + j] = s / D[n * i + i]
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(i if i > j else j, n):
                s += Li[n * k + i] * Li[n * k + j]
            Dinv[n * i + j] = s
    return 0
