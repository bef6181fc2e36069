# 3-vectors and row-major 3×3 matrices, inline: shared by dynamics_cy's algorithms (_spatial.pxd builds on
# them) and the simulator (drivers.sim._contact, _shapes.pxd).

cdef inline double dot3(const double* a, const double* b) noexcept nogil:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


cdef inline void cross3(const double* a, const double* b, double* out) noexcept nogil:
    """out = a × b (out may alias a or b)."""
    cdef double x = a[1] * b[2] - a[2] * b[1]
    cdef double y = a[2] * b[0] - a[0] * b[2]
    cdef double z = a[0] * b[1] - a[1] * b[0]
    out[0], out[1], out[2] = x, y, z


cdef inline void matvec(const double* R, const double* v, double* out) noexcept nogil:
    """out = R v (out may not alias v)."""
    out[0] = R[0] * v[0] + R[1] * v[1] + R[2] * v[2]
    out[1] = R[3] * v[0] + R[4] * v[1] + R[5] * v[2]
    out[2] = R[6] * v[0] + R[7] * v[1] + R[8] * v[2]


cdef inline void matTvec(const double* R, const double* v, double* out) noexcept nogil:
    """out = Rᵀ v (out may not alias v)."""
    out[0] = R[0] * v[0] + R[3] * v[1] + R[6] * v[2]
    out[1] = R[1] * v[0] + R[4] * v[1] + R[7] * v[2]
    out[2] = R[2] * v[0] + R[5] * v[1] + R[8] * v[2]
