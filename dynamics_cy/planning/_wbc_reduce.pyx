# cython: language_level=3
"""The whole-body QP without its equality rows: a nullspace basis by Gauss–Jordan elimination, nogil.

The QP min ½ xᵀH x + gᵀx s.t. A x = b, l ≤ C x ≤ u (n variables, m equalities of full row rank) is
reduced to one over z (n − m variables) with inequality rows only. Gauss–Jordan elimination with
column pivoting (the row's largest entry among the columns not yet basic) brings [A b] to [I T d] on
basic columns B and free columns N: x_B = d − T z, x_N = z, i.e. x = x_p + Z z with
x_p = [d; 0], Z = [−T; I]. Then

    H_r = Zᵀ H Z,   g_r = Zᵀ (g + H x_p),   C_r = C Z,   l − C x_p ≤ C_r z ≤ u − C x_p.

Rows whose first ``n_first`` entries are not all zero pivot among those columns (the controller's
v̇), so the other variables (the contact forces) stay free and last in z. The reduced QP is then
handed over as a least-distance problem: with H_r = RᵀR (Cholesky), y = R z,

    minimise ½ ‖y‖² + fᵀy,  l_r ≤ M y ≤ u_r,   f = R⁻ᵀ g_r,  M = C_r R⁻¹,

which DAQP (seeing an identity Hessian) solves without factorising; a row of C_r that is zero up
to column j (a foot's cone, on the forces at the end of z) costs a triangular solve over the
trailing n − m − j columns only. ``expand()`` recovers z = R⁻¹ y and x.

Hand-written because the tick allocates nothing and the products skip the zeros of H, C and E
(contact rows touch a limb, the friction rows a foot's force); DAQP's own elimination works on
its factor of the full H (a Cholesky factorisation of all n variables each tick).
"""
import numpy as np
from libc.math cimport fabs, sqrt


cdef class Reduction:
    """The reduced QP of (H, g, A x = b, C, l, u) in arrays bound once: ``reduce()`` eliminates on a
    copy [E e] of [A b] and fills H_r, g_r, C_r, l_r, u_r; after the
    reduced QP is solved for z, ``expand()`` writes x. ``reduce()`` returns False when E has a row
    that is (numerically) a combination of the others: no pivot above ``tol`` times its row's norm."""

    cdef double[:, ::1] H, A, E, C, T, Y, H_r, C_r, R, M
    cdef double[::1] g, b, e, l, u, g_r, l_r, u_r, z, x, gp, row_norm, f, y
    cdef long[::1] basic, free, pos
    cdef Py_ssize_t n, m, nr, nc, n_first
    cdef double tol

    def __init__(self, double[:, ::1] H, double[::1] g, double[:, ::1] A, double[::1] b, double[:, ::1] C,
                 double[::1] l, double[::1] u, double[:, ::1] H_r, double[::1] g_r, double[:, ::1] C_r,
                 double[::1] l_r, double[::1] u_r, double[:, ::1] M, double[::1] f, double[::1] y,
                 double[::1] z, double[::1] x, Py_ssize_t n_first, double tol=1e-10):
        n, m, nc = H.shape[0], A.shape[0], C.shape[0]
        nr = n - m
        if (H.shape[1] != n or g.shape[0] != n or A.shape[1] != n or b.shape[0] != m or C.shape[1] != n
                or l.shape[0] != nc or u.shape[0] != nc or H_r.shape[0] != nr or H_r.shape[1] != nr
                or g_r.shape[0] != nr or C_r.shape[0] != nc or C_r.shape[1] != nr or l_r.shape[0] != nc
                or u_r.shape[0] != nc or M.shape[0] != nc or M.shape[1] != nr or f.shape[0] != nr
                or y.shape[0] != nr or z.shape[0] != nr or x.shape[0] != n or nr < 1 or not 0 < n_first <= n):
            raise ValueError("Reduction: the shapes of H (n, n), g (n), A (m, n), b (m), C (k, n), l, u (k), "
                             "H_r (n − m, n − m), g_r, f, y, z (n − m), C_r, M (k, n − m), l_r, u_r (k), x (n) "
                             "or n_first (1..n) disagree")
        self.H, self.g, self.A, self.b, self.C, self.l, self.u = H, g, A, b, C, l, u
        self.E, self.e, self.R = np.zeros((m, n)), np.zeros(m), np.zeros((nr, nr))
        self.H_r, self.g_r, self.C_r, self.l_r, self.u_r, self.z, self.x = H_r, g_r, C_r, l_r, u_r, z, x
        self.M, self.f, self.y = M, f, y
        self.n, self.m, self.nr, self.nc, self.tol, self.n_first = n, m, nr, nc, tol, n_first
        self.T, self.Y = np.zeros((m, nr)), np.zeros((n, nr))
        self.gp, self.row_norm = np.zeros(n), np.zeros(m)
        self.basic, self.free = np.zeros(m, dtype=np.int_), np.zeros(nr, dtype=np.int_)
        self.pos = np.zeros(n, dtype=np.int_)     # column j: k ≥ 0 basic in row k, −1 − a free at a

    def reduce(self):
        """Eliminate, project and factorise: 0, or −1 when the equalities are dependent, −2 when
        H_r is not positive definite."""
        cdef int flag = 0
        with nogil:
            if not self._eliminate():
                flag = -1
            else:
                self._project()
                if not self._ldp():
                    flag = -2
        return flag

    cdef bint _ldp(self) noexcept nogil:
        """H_r = RᵀR (R upper, in R), f = R⁻ᵀ g_r, M = C_r R⁻¹ (row by row from its first nonzero)."""
        cdef Py_ssize_t nr = self.nr, i, j, k, j0
        cdef double s, r
        cdef double *R = &self.R[0, 0]
        cdef double *Hr = &self.H_r[0, 0]
        cdef double *Rk
        cdef double *Ri
        cdef double *Mi
        cdef double *Ci
        for i in range(nr):              # right-looking, on the upper triangle (contiguous rows)
            for j in range(i, nr):
                R[i * nr + j] = Hr[i * nr + j]
        for k in range(nr):
            Rk = R + k * nr
            if not Rk[k] > 0.0:
                return False
            r = sqrt(Rk[k])
            Rk[k] = r
            r = 1.0 / r
            for j in range(k + 1, nr):
                Rk[j] = Rk[j] * r
            for i in range(k + 1, nr):
                s = Rk[i]
                if s == 0.0:
                    continue
                Ri = R + i * nr
                for j in range(i, nr):
                    Ri[j] = Ri[j] - s * Rk[j]
        self._lower_solve(&self.g_r[0], &self.f[0], 0)
        for i in range(self.nc):
            Ci, Mi = &self.C_r[i, 0], &self.M[i, 0]
            j0 = 0
            while j0 < nr and Ci[j0] == 0.0:
                Mi[j0] = 0.0
                j0 = j0 + 1
            self._lower_solve(Ci, Mi, j0)
        return True

    cdef void _lower_solve(self, double *a, double *out, Py_ssize_t j0) noexcept nogil:
        """out[j0:] = (Rᵀ)⁻¹ a[j0:] (a[:j0] = 0): forward substitution, R's columns as Rᵀ's rows."""
        cdef Py_ssize_t nr = self.nr, j, k
        cdef double *R = &self.R[0, 0]
        cdef double s
        for j in range(j0, nr):
            s = a[j]
            for k in range(j0, j):
                s = s - R[k * nr + j] * out[k]
            out[j] = s / R[j * nr + j]

    cdef bint _eliminate(self) noexcept nogil:
        """Gauss–Jordan on [E e] = [A b]: row k pivots on its largest entry among non-basic columns."""
        cdef Py_ssize_t n = self.n, m = self.m, nr = self.nr, k, r, j, p, a, lo, hi
        cdef double s, best, f, piv
        cdef double *E = &self.E[0, 0]
        cdef double *A = &self.A[0, 0]
        cdef double *Ek
        cdef double *Er
        cdef long *pos = &self.pos[0]
        for k in range(m):
            s = 0.0
            for j in range(n):
                E[k * n + j] = A[k * n + j]
                s = s + fabs(A[k * n + j])
            self.row_norm[k] = s
            self.e[k] = self.b[k]
        for j in range(n):
            pos[j] = -1
        for k in range(m):
            Ek = E + k * n
            p, best = -1, 0.0
            for j in range(self.n_first):        # the leading columns first (the forces stay free)
                if pos[j] < 0 and fabs(Ek[j]) > best:
                    p, best = j, fabs(Ek[j])
            if best <= self.tol * self.row_norm[k]:
                for j in range(self.n_first, n):
                    if pos[j] < 0 and fabs(Ek[j]) > best:
                        p, best = j, fabs(Ek[j])
            if p < 0 or best <= self.tol * self.row_norm[k]:
                return False
            self.basic[k] = p
            pos[p] = k
            lo, hi = 0, n                        # the pivot row's nonzero span (a contact row: v̇ only)
            while Ek[lo] == 0.0:
                lo = lo + 1
            while Ek[hi - 1] == 0.0:
                hi = hi - 1
            piv = 1.0 / Ek[p]
            for j in range(lo, hi):
                Ek[j] = Ek[j] * piv
            self.e[k] = self.e[k] * piv
            for r in range(m):
                Er = E + r * n
                f = Er[p]
                if r == k or f == 0.0:
                    continue
                for j in range(lo, hi):
                    Er[j] = Er[j] - f * Ek[j]
                self.e[r] = self.e[r] - f * self.e[k]
        a = 0
        for j in range(n):
            if pos[j] < 0:
                self.free[a] = j
                pos[j] = -1 - a
                a = a + 1
        for k in range(m):
            for a in range(nr):
                self.T[k, a] = E[k * n + self.free[a]]
        return True

    cdef void _project(self) noexcept nogil:
        """H_r = Zᵀ H Z, g_r = Zᵀ(g + H x_p), C_r = C Z and the shifted bounds, skipping zeros. With
        W = H_BB T and P = H_BN − ½ W (m, n − m): H_r = H_NN − TᵀP − PᵀT (symmetric, the upper
        triangle), fewer products than Zᵀ(H Z); the inner loops run over contiguous rows."""
        cdef Py_ssize_t n = self.n, m = self.m, nr = self.nr, i, j, k, a, b, c
        cdef double h, s, cx, t
        cdef double *T = &self.T[0, 0]
        cdef double *P = &self.Y[0, 0]            # P (m, nr) in Y's first m rows
        cdef double *H = &self.H[0, 0]
        cdef double *Hr = &self.H_r[0, 0]
        cdef double *C = &self.C[0, 0]
        cdef double *Cr = &self.C_r[0, 0]
        cdef double *Pi
        cdef double *Tk
        cdef double *Hi
        cdef long *free = &self.free[0]
        cdef long *basic = &self.basic[0]
        for i in range(n):               # gp = g + H x_p (x_p: d on the basic columns)
            s = self.g[i]
            Hi = H + i * n
            for k in range(m):
                s = s + Hi[basic[k]] * self.e[k]
            self.gp[i] = s
        for i in range(m):               # P = H_BN − ½ H_BB T
            Pi, Hi = P + i * nr, H + basic[i] * n
            for a in range(nr):
                Pi[a] = Hi[free[a]]
            for k in range(m):
                h = Hi[basic[k]]
                if h == 0.0:
                    continue
                h = 0.5 * h
                Tk = T + k * nr
                for a in range(nr):
                    Pi[a] = Pi[a] - h * Tk[a]
        for a in range(nr):              # H_r = H_NN − TᵀP − PᵀT, g_r = Zᵀ gp
            Hi = H + free[a] * n
            for b in range(a, nr):
                Hr[a * nr + b] = Hi[free[b]]
            for k in range(m):
                h, t = T[k * nr + a], P[k * nr + a]
                Tk, Pi = T + k * nr, P + k * nr
                for b in range(a, nr):
                    Hr[a * nr + b] = Hr[a * nr + b] - h * Pi[b] - t * Tk[b]
            for b in range(a + 1, nr):
                Hr[b * nr + a] = Hr[a * nr + b]
            s = self.gp[free[a]]
            for k in range(m):
                s = s - T[k * nr + a] * self.gp[basic[k]]
            self.g_r[a] = s
        for i in range(self.nc):         # C Z and C x_p over the nonzeros of C's row
            Pi = Cr + i * nr
            for a in range(nr):
                Pi[a] = 0.0
            cx = 0.0
            for j in range(n):
                h = C[i * n + j]
                if h == 0.0:
                    continue
                c = self.pos[j]
                if c < 0:
                    Pi[-1 - c] += h
                else:
                    cx = cx + h * self.e[c]
                    Tk = T + c * nr
                    for a in range(nr):
                        Pi[a] = Pi[a] - h * Tk[a]
            self.l_r[i] = self.l[i] - cx if self.l[i] > -1e30 else self.l[i]
            self.u_r[i] = self.u[i] - cx if self.u[i] < 1e30 else self.u[i]

    def expand(self):
        """z = R⁻¹ y for the least-distance solution y, then x = x_p + Z z."""
        cdef Py_ssize_t k, a, nr = self.nr
        cdef double s
        cdef double *R = &self.R[0, 0]
        with nogil:
            for a in range(nr - 1, -1, -1):
                s = self.y[a]
                for k in range(a + 1, nr):
                    s = s - R[a * nr + k] * self.z[k]
                self.z[a] = s / R[a * nr + a]
            for a in range(self.nr):
                self.x[self.free[a]] = self.z[a]
            for k in range(self.m):
                s = self.e[k]
                for a in range(self.nr):
                    s = s - self.T[k, a] * self.z[a]
                self.x[self.basic[k]] = s
