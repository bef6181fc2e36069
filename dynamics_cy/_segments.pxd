# Closest points of two segments, inline and GIL-free: shared by the collision guard's distances
# (dynamics_cy._capsules) and the simulator's contact (drivers.sim._contact, _box_box.pxd).
from dynamics_cy._vec3 cimport dot3


cdef inline double clamp(double x, double lo, double hi) noexcept nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef inline void segments_closest(const double* p0, const double* p1, const double* q0, const double* q1,
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
