# Closest points and signed distances of the simulator's collision shapes, and the scalar profiles of
# its contact model (docs/sim.md), inline for drivers.sim._contact.
from dynamics_cy._segments cimport clamp
from libc.math cimport fabs, sqrt


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


cdef inline double point_box(const double* c, const double* half, double* q, double* n) noexcept nogil:
    """Signed distance φ from point c to the box |x_i| <= half_i (all in the box frame), its closest
    surface point q and the outward unit normal n there; φ < 0 inside (nearest face)."""
    cdef int i, k = 0
    cdef double d2 = 0.0, phi, best, gap
    cdef bint inside = True
    for i in range(3):
        q[i] = clamp(c[i], -half[i], half[i])
        if q[i] != c[i]:
            inside = False
        d2 += (c[i] - q[i]) * (c[i] - q[i])
    if not inside:
        phi = sqrt(d2)
        for i in range(3):
            n[i] = (c[i] - q[i]) / phi
        return phi
    best = half[0] - fabs(c[0])
    for i in range(1, 3):
        gap = half[i] - fabs(c[i])
        if gap < best:
            best, k = gap, i
    n[0] = n[1] = n[2] = 0.0
    n[k] = -1.0 if c[k] < 0.0 else 1.0
    q[k] = n[k] * half[k]
    return -best


cdef inline double point_cylinder(const double* c, double R, double L, double* q, double* n) noexcept nogil:
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
