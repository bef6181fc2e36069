# cython: language_level=3
"""The whole-body QP without its equality rows: a nullspace basis by Gauss–Jordan elimination, nogil.

The QP min ½ xᵀH x + gᵀx s.t. A x = b, l ≤ C x ≤ u (n variables, m equalities of full row rank) is
reduced to one over z (n − m variables) with inequality rows only. Gauss–Jordan elimination with
column pivoting (the row's largest entry among the columns not yet basic) brings [A b] to [I T d] on
basic columns B and free columns N: x_B = d − T z, x_N = z, i.e. x = x_p + Z z with
x_p = [d; 0], Z = [−T; I]. Then

    H_r = Zᵀ H Z,   g_r = Zᵀ (g + H x_p),   C_r = C Z,   l − C x_p ≤ C_r z ≤ u − C x_p.

Hand-written because the tick allocates nothing and the products skip the zeros of H, C and E
(contact rows touch a limb, the friction rows a foot's force); DAQP's own elimination works on
its factor of the full H (a Cholesky factorisation of all n variables each tick).
"""
import numpy as np
from libc.math cimport fabs


cdef class Reduction:
    """The reduced QP of (H, g, A x = b, C, l, u) in arrays bound once: ``reduce()`` eliminates on a
    copy [E e] of [A b] and fills H_r, g_r, C_r, l_r, u_r; after the
    reduced QP is solved for z, ``expand()`` writes x. ``reduce()`` returns False when E has a row
    that is (numerically) a combination of the others: no pivot above ``tol`` times its row's norm."""

    cdef double[:, ::1] H, A, E, C, T, Y, H_r, C_r
    cdef double[::1] g, b, e, l, u, g_r, l_r, u_r, z, x, gp, row_norm
    cdef long[::1] basic, free, pos
    cdef Py_ssize_t n, m, nr, nc
    cdef double tol

    def __init__(self, double[:, ::1] H, double[::1] g, double[:, ::1] A, double[::1] b, double[:, ::1] C,
                 double[::1] l, double[::1] u, double[:, ::1] H_r, double[::1] g_r, double[:, ::1] C_r,
                 double[::1] l_r, double[::1] u_r, double[::1] z, double[::1] x, double tol=1e-10):
        n, m, nc = H.shape[0], A.shape[0], C.shape[0]
        nr = n - m
        if (H.shape[1] != n or g.shape[0] != n or A.shape[1] != n or b.shape[0] != m or C.shape[1] != n
                or l.shape[0] != nc or u.shape[0] != nc or H_r.shape[0] != nr or H_r.shape[1] != nr
                or g_r.shape[0] != nr or C_r.shape[0] != nc or C_r.shape[1] != nr or l_r.shape[0] != nc
                or u_r.shape[0] != nc or z.shape[0] != nr or x.shape[0] != n or nr < 1):
            raise ValueError("Reduction: the shapes of H (n, n), g (n), A (m, n), b (m), C (k, n), l, u (k), "
                             "H_r (n − m, n − m), g_r, z (n − m), C_r (k, n − m), l_r, u_r (k), x (n) disagree")
        self.H, self.g, self.A, self.b, self.C, self.l, self.u = H, g, A, b, C, l, u
        self.E, self.e = np.zeros((m, n)), np.zeros(m)
        self.H_r, self.g_r, self.C_r, self.l_r, self.u_r, self.z, self.x = H_r, g_r, C_r, l_r, u_r, z, x
        self.n, self.m, self.nr, self.nc, self.tol = n, m, nr, nc, tol
        self.T, self.Y = np.zeros((m, nr)), np.zeros((n, nr))
        self.gp, self.row_norm = np.zeros(n), np.zeros(m)
        self.basic, self.free = np.zeros(m, dtype=np.int_), np.zeros(nr, dtype=np.int_)
        self.pos = np.zeros(n, dtype=np.int_)     # column j: k ≥ 0 basic in row k, −1 − a free at a

    def reduce(self):
        cdef bint ok
        with nogil:
            ok = self._eliminate()
            if ok:
                self._project()
        return ok

    cdef bint _eliminate(self) noexcept nogil:
        """Gauss–Jordan on [E e] = [A b]: row k pivots on its largest entry among non-basic columns."""
        cdef Py_ssize_t n = self.n, m = self.m, k, r, j, p, a
        cdef double s, best, f, piv
        for k in range(m):
            s = 0.0
            for j in range(n):
                self.E[k, j] = self.A[k, j]
                s = s + fabs(self.A[k, j])
            self.row_norm[k] = s
            self.e[k] = self.b[k]
        for j in range(n):
            self.pos[j] = -1
        for k in range(m):
            p, best = -1, 0.0
            for j in range(n):
                if self.pos[j] < 0 and fabs(self.E[k, j]) > best:
                    p, best = j, fabs(self.E[k, j])
            if p < 0 or best <= self.tol * self.row_norm[k]:
                return False
            self.basic[k] = p
            self.pos[p] = k
            piv = 1.0 / self.E[k, p]
            for j in range(n):
                self.E[k, j] = self.E[k, j] * piv
            self.e[k] = self.e[k] * piv
            for r in range(m):
                f = self.E[r, p]
                if r == k or f == 0.0:
                    continue
                for j in range(n):
                    self.E[r, j] = self.E[r, j] - f * self.E[k, j]
                self.e[r] = self.e[r] - f * self.e[k]
        a = 0
        for j in range(n):
            if self.pos[j] < 0:
                self.free[a] = j
                self.pos[j] = -1 - a
                a = a + 1
        for k in range(m):
            for a in range(self.nr):
                self.T[k, a] = self.E[k, self.free[a]]
        return True

    cdef void _project(self) noexcept nogil:
        """H_r = Zᵀ(H Z), g_r = Zᵀ(g + H x_p), C_r = C Z and the shifted bounds, skipping zeros."""
        cdef Py_ssize_t n = self.n, m = self.m, nr = self.nr, i, j, k, a, b, c
        cdef double h, s, cx
        for i in range(n):               # Y = H Z (n, nr): the free columns of H minus H_B T
            for a in range(nr):
                self.Y[i, a] = self.H[i, self.free[a]]
            s = self.g[i]
            for k in range(m):
                h = self.H[i, self.basic[k]]
                if h == 0.0:
                    continue
                s = s + h * self.e[k]
                for a in range(nr):
                    self.Y[i, a] = self.Y[i, a] - h * self.T[k, a]
            self.gp[i] = s               # g + H x_p
        for a in range(nr):              # H_r = Zᵀ Y (symmetric), g_r = Zᵀ gp
            for b in range(a, nr):
                s = self.Y[self.free[a], b]
                for k in range(m):
                    s = s - self.T[k, a] * self.Y[self.basic[k], b]
                self.H_r[a, b] = s
                self.H_r[b, a] = s
            s = self.gp[self.free[a]]
            for k in range(m):
                s = s - self.T[k, a] * self.gp[self.basic[k]]
            self.g_r[a] = s
        for i in range(self.nc):         # C Z and C x_p over the nonzeros of C's row
            for a in range(nr):
                self.C_r[i, a] = 0.0
            cx = 0.0
            for j in range(n):
                h = self.C[i, j]
                if h == 0.0:
                    continue
                c = self.pos[j]
                if c < 0:
                    self.C_r[i, -1 - c] += h
                else:
                    cx = cx + h * self.e[c]
                    for a in range(nr):
                        self.C_r[i, a] = self.C_r[i, a] - h * self.T[c, a]
            self.l_r[i] = self.l[i] - cx if self.l[i] > -1e30 else self.l[i]
            self.u_r[i] = self.u[i] - cx if self.u[i] < 1e30 else self.u[i]

    def expand(self):
        """x = x_p + Z z for the reduced solution z."""
        cdef Py_ssize_t k, a
        cdef double s
        with nogil:
            for a in range(self.nr):
                self.x[self.free[a]] = self.z[a]
            for k in range(self.m):
                s = self.e[k]
                for a in range(self.nr):
                    s = s - self.T[k, a] * self.z[a]
                self.x[self.basic[k]] = s
