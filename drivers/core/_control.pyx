# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The control tick's arithmetic on small vectors, compiled: control laws, saturation, checks.

numpy spends ~0.5 µs on each operation on a 7-vector; these do a whole step in one call, allocate
nothing and take C-contiguous float64 arrays of matching lengths (checked: ValueError otherwise).
"""
cimport numpy as cnp
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from libc.math cimport fabs, isfinite, tanh
from libc.string cimport memcmp, memcpy

from dynamics_cy._spatial cimport pose_error

cnp.import_array()


cdef double* _vec(object a, Py_ssize_t n, bint writable, str name) except NULL:
    cdef cnp.ndarray arr
    if not cnp.PyArray_Check(a):
        raise ValueError(f"{name} must be a numpy float64 array, got {type(a).__name__}")
    arr = <cnp.ndarray>a
    if cnp.PyArray_TYPE(arr) != cnp.NPY_DOUBLE or not cnp.PyArray_IS_C_CONTIGUOUS(arr) \
            or cnp.PyArray_SIZE(arr) != n or (writable and not cnp.PyArray_ISWRITEABLE(arr)):
        raise ValueError(f"{name} must be a C-contiguous {'writable ' if writable else ''}float64 array of "
                         f"{n} values, got {a.dtype} {a.shape}")
    return <double*>cnp.PyArray_DATA(arr)


cdef inline Py_ssize_t _size(object a):
    """The number of values of a numpy array; -1 for anything else (which _vec then refuses)."""
    return cnp.PyArray_SIZE(<cnp.ndarray>a) if cnp.PyArray_Check(a) else -1


cdef double* _row(object a, Py_ssize_t row, Py_ssize_t n, bint writable, str name) except NULL:
    """The start of row `row` of a C-contiguous float64 (rows, n) array (_vec's checks), bounds checked."""
    cdef Py_ssize_t rows = cnp.PyArray_DIM(<cnp.ndarray>a, 0) if cnp.PyArray_Check(a) else 0
    cdef double* data = _vec(a, rows * n, writable, name)
    if not 0 <= row < rows:
        raise ValueError(f"row {row} is out of range [0, {rows})")
    return data + row * n


def pd(q, v, q_d, v_d, kp, kd, base, double sign, out):
    """out = sign·base + kp∘(q_d − q) + kd∘(v_d − v)."""
    cdef Py_ssize_t n = _size(out)
    cdef double* o = _vec(out, n, True, "out")
    cdef double* a = _vec(q, n, False, "q")
    cdef double* b = _vec(v, n, False, "v")
    cdef double* c = _vec(q_d, n, False, "q_d")
    cdef double* d = _vec(v_d, n, False, "v_d")
    cdef double* p = _vec(kp, n, False, "kp")
    cdef double* e = _vec(kd, n, False, "kd")
    cdef double* f = _vec(base, n, False, "base")
    cdef Py_ssize_t i
    for i in range(n):
        o[i] = sign * f[i] + p[i] * (c[i] - a[i]) + e[i] * (d[i] - b[i])


def damping(v, d, base, double sign, out):
    """out = sign·base − d∘v."""
    cdef Py_ssize_t n = _size(out)
    cdef double* o = _vec(out, n, True, "out")
    cdef double* a = _vec(v, n, False, "v")
    cdef double* b = _vec(d, n, False, "d")
    cdef double* c = _vec(base, n, False, "base")
    cdef Py_ssize_t i
    for i in range(n):
        o[i] = sign * c[i] - b[i] * a[i]


def friction(v, viscous, coulomb, double epsilon, out):
    """out += b_v∘v + b_c∘tanh(v/ε): joint friction compensation (viscous b_v, Coulomb b_c, smooth sign)."""
    cdef Py_ssize_t n = _size(out)
    cdef double* o = _vec(out, n, True, "out")
    cdef double* a = _vec(v, n, False, "v")
    cdef double* b = _vec(viscous, n, False, "viscous")
    cdef double* c = _vec(coulomb, n, False, "coulomb")
    cdef Py_ssize_t i
    for i in range(n):
        o[i] += b[i] * a[i] + c[i] * tanh(a[i] / epsilon)


def saturate(tau, prev, limit, double max_step, out):
    """out = clip(clip(tau, prev ± max_step), ±limit), and prev = out; returns how many entries hit the
    effort limit."""
    cdef Py_ssize_t n = _size(out)
    cdef double* o = _vec(out, n, True, "out")
    cdef double* t = _vec(tau, n, False, "tau")
    cdef double* p = _vec(prev, n, True, "prev")
    cdef double* l = _vec(limit, n, False, "limit")
    cdef Py_ssize_t i
    cdef int hit = 0
    cdef double x
    for i in range(n):
        x = t[i]
        if x > p[i] + max_step:
            x = p[i] + max_step
        elif x < p[i] - max_step:
            x = p[i] - max_step
        if x > l[i]:
            x = l[i]
            hit += 1
        elif x < -l[i]:
            x = -l[i]
            hit += 1
        o[i] = x
        p[i] = x
    return hit


def first_nonfinite(x):
    """The index of the first NaN or infinite entry, or -1."""
    cdef Py_ssize_t n = _size(x)
    cdef double* a = _vec(x, n, False, "x")
    cdef Py_ssize_t i
    for i in range(n):
        if not isfinite(a[i]):
            return i
    return -1


def first_outside(x, lo, hi):
    """The index of the first entry of x outside [lo, hi], or -1."""
    cdef Py_ssize_t n = _size(x)
    cdef double* a = _vec(x, n, False, "x")
    cdef double* l = _vec(lo, n, False, "lo")
    cdef double* h = _vec(hi, n, False, "hi")
    cdef Py_ssize_t i
    for i in range(n):
        if a[i] < l[i] or a[i] > h[i]:
            return i
    return -1


STATE_OK, Q_NONFINITE, V_NONFINITE, Q_OUTSIDE, V_OUTSIDE = 0, 1, 2, 3, 4
STATE_KINDS = 8             # check_state's result: kind + STATE_KINDS · joint


def check_state(q, v, q_lo, q_hi, v_lo, v_hi):
    """The first thing wrong with a measured state, in this order: a non-finite q, a non-finite v, q
    outside [q_lo, q_hi], v outside [v_lo, v_hi]; as kind + STATE_KINDS · joint (STATE_OK: nothing).
    One call for first_nonfinite(q), first_nonfinite(v), first_outside(q, …), first_outside(v, …)."""
    cdef Py_ssize_t n = _size(q), i
    cdef double* a = _vec(q, n, False, "q")
    cdef double* b = _vec(v, n, False, "v")
    cdef double* ql = _vec(q_lo, n, False, "q_lo")
    cdef double* qh = _vec(q_hi, n, False, "q_hi")
    cdef double* vl = _vec(v_lo, n, False, "v_lo")
    cdef double* vh = _vec(v_hi, n, False, "v_hi")
    for i in range(n):
        if not isfinite(a[i]):
            return Q_NONFINITE + STATE_KINDS * i
    for i in range(n):
        if not isfinite(b[i]):
            return V_NONFINITE + STATE_KINDS * i
    for i in range(n):
        if a[i] < ql[i] or a[i] > qh[i]:
            return Q_OUTSIDE + STATE_KINDS * i
    for i in range(n):
        if b[i] < vl[i] or b[i] > vh[i]:
            return V_OUTSIDE + STATE_KINDS * i
    return STATE_OK


def track_error(q, q_d, sumsq, maxabs):
    """sumsq += (q_d − q)², maxabs = max(maxabs, |q_d − q|); returns max_i |q_d − q|."""
    cdef Py_ssize_t n = _size(q)
    cdef double* a = _vec(q, n, False, "q")
    cdef double* b = _vec(q_d, n, False, "q_d")
    cdef double* s = _vec(sumsq, n, True, "sumsq")
    cdef double* m = _vec(maxabs, n, True, "maxabs")
    cdef Py_ssize_t i
    cdef double e, worst = 0.0
    for i in range(n):
        e = fabs(b[i] - a[i])
        s[i] += e * e
        if e > m[i]:
            m[i] = e
        if e > worst:
            worst = e
    return worst


def max_abs(x, maxabs):
    """maxabs = max(maxabs, |x|), elementwise."""
    cdef Py_ssize_t n = _size(x)
    cdef double* a = _vec(x, n, False, "x")
    cdef double* m = _vec(maxabs, n, True, "maxabs")
    cdef Py_ssize_t i
    for i in range(n):
        if fabs(a[i]) > m[i]:
            m[i] = fabs(a[i])


def cartesian_impedance(X_WE, J, v, X_WG, V_WG, K, D, tau_g, double joint_damping, out):
    """τ = Jᵀ F − τ_g − joint_damping·v with F = K∘e + D∘(V_WG − J v) and the pose error
    e = [log(R_WG R_WEᵀ); p_WG − p_WE] (a rotation vector and a translation, in W: the inline
    pose_error of dynamics_cy.linalg.pose_error). J is the (6, n) Jacobian of frame E's origin with
    V_WE = [w; v] in W. Returns |e| of the rotation (rad)."""
    cdef Py_ssize_t n = _size(out)
    cdef double* o = _vec(out, n, True, "out")
    cdef double* X = _vec(X_WE, 16, False, "X_WE")
    cdef double* G = _vec(X_WG, 16, False, "X_WG")
    cdef double* Jp = _vec(J, 6 * n, False, "J")
    cdef double* vp = _vec(v, n, False, "v")
    cdef double* Vg = _vec(V_WG, 6, False, "V_WG")
    cdef double* Kp = _vec(K, 6, False, "K")
    cdef double* Dp = _vec(D, 6, False, "D")
    cdef double* g = _vec(tau_g, n, False, "tau_g")
    cdef double e[6]
    cdef double F[6]
    cdef double V, th
    cdef int r
    cdef Py_ssize_t j
    th = pose_error(X, G, e)
    for r in range(6):
        V = 0.0
        for j in range(n):
            V += Jp[r * n + j] * vp[j]
        F[r] = Kp[r] * e[r] + Dp[r] * (Vg[r] - V)
    for j in range(n):
        V = 0.0
        for r in range(6):
            V += Jp[r * n + j] * F[r]
        o[j] = V - g[j] - joint_damping * vp[j]
    return th


def quintic(q0, dq, double t, double T, q_d, v_d, a_d):
    """q_d = q0 + s dq, v_d = ṡ dq, a_d = s̈ dq for the rest-to-rest quintic s(τ) = 10τ³ − 15τ⁴ + 6τ⁵,
    τ = t / T clamped to [0, 1]."""
    cdef Py_ssize_t n = _size(q_d)
    cdef double* a = _vec(q0, n, False, "q0")
    cdef double* d = _vec(dq, n, False, "dq")
    cdef double* p = _vec(q_d, n, True, "q_d")
    cdef double* v = _vec(v_d, n, True, "v_d")
    cdef double* w = _vec(a_d, n, True, "a_d")
    cdef double tau = t / T if T > 0 else 1.0
    cdef double s, sd, sdd
    cdef Py_ssize_t i
    if tau >= 1.0:
        s, sd, sdd = 1.0, 0.0, 0.0
    elif tau <= 0.0:
        s, sd, sdd = 0.0, 0.0, 0.0
    else:
        s = tau * tau * tau * (10.0 - 15.0 * tau + 6.0 * tau * tau)
        sd = 30.0 * tau * tau * (1.0 - tau) * (1.0 - tau) / T
        sdd = 60.0 * tau * (1.0 - tau) * (1.0 - 2.0 * tau) / (T * T)
    for i in range(n):
        p[i] = a[i] + s * d[i]
        v[i] = sd * d[i]
        w[i] = sdd * d[i]


def hermite(p0, v0, a0, p1, v1, a1, double h, double t, int order, q, qd, qdd):
    """Interpolates one segment of length h at t in [0, h]: order 1 linear in p, 3 cubic Hermite in
    (p, v), 5 quintic Hermite in (p, v, a). Writes position, velocity and acceleration."""
    cdef Py_ssize_t n = _size(q)
    cdef double* P0 = _vec(p0, n, False, "p0")
    cdef double* V0 = _vec(v0, n, False, "v0")
    cdef double* A0 = _vec(a0, n, False, "a0")
    cdef double* P1 = _vec(p1, n, False, "p1")
    cdef double* V1 = _vec(v1, n, False, "v1")
    cdef double* A1 = _vec(a1, n, False, "a1")
    cdef double* x = _vec(q, n, True, "q")
    cdef double* xd = _vec(qd, n, True, "qd")
    cdef double* xdd = _vec(qdd, n, True, "qdd")
    cdef double s = 0.0 if h <= 0 else min(max(t / h, 0.0), 1.0)
    cdef double s2 = s * s, s3 = s2 * s, s4 = s3 * s, s5 = s4 * s
    cdef double h00, h10, h20, h01, h11, h21, d00, d10, d20, d01, d11, d21, e00, e10, e20, e01, e11, e21
    cdef Py_ssize_t i
    if order == 1 or h <= 0:
        for i in range(n):
            x[i] = P0[i] + s * (P1[i] - P0[i])
            xd[i] = (P1[i] - P0[i]) / h if h > 0 else 0.0
            xdd[i] = 0.0
        return
    if order == 3:   # basis functions of s and their derivatives in s
        h00, h10, h01, h11 = 2 * s3 - 3 * s2 + 1, s3 - 2 * s2 + s, -2 * s3 + 3 * s2, s3 - s2
        d00, d10, d01, d11 = 6 * s2 - 6 * s, 3 * s2 - 4 * s + 1, -6 * s2 + 6 * s, 3 * s2 - 2 * s
        e00, e10, e01, e11 = 12 * s - 6, 6 * s - 4, -12 * s + 6, 6 * s - 2
        h20 = h21 = d20 = d21 = e20 = e21 = 0.0
    else:
        h00 = 1 - 10 * s3 + 15 * s4 - 6 * s5
        h10 = s - 6 * s3 + 8 * s4 - 3 * s5
        h20 = 0.5 * s2 - 1.5 * s3 + 1.5 * s4 - 0.5 * s5
        h01 = 10 * s3 - 15 * s4 + 6 * s5
        h11 = -4 * s3 + 7 * s4 - 3 * s5
        h21 = 0.5 * s3 - s4 + 0.5 * s5
        d00 = -30 * s2 + 60 * s3 - 30 * s4
        d10 = 1 - 18 * s2 + 32 * s3 - 15 * s4
        d20 = s - 4.5 * s2 + 6 * s3 - 2.5 * s4
        d01 = 30 * s2 - 60 * s3 + 30 * s4
        d11 = -12 * s2 + 28 * s3 - 15 * s4
        d21 = 1.5 * s2 - 4 * s3 + 2.5 * s4
        e00 = -60 * s + 180 * s2 - 120 * s3
        e10 = -36 * s + 96 * s2 - 60 * s3
        e20 = 1 - 9 * s + 18 * s2 - 10 * s3
        e01 = 60 * s - 180 * s2 + 120 * s3
        e11 = -24 * s + 84 * s2 - 60 * s3
        e21 = 3 * s - 12 * s2 + 10 * s3
    for i in range(n):
        x[i] = h00 * P0[i] + h10 * h * V0[i] + h20 * h * h * A0[i] + h01 * P1[i] + h11 * h * V1[i] \
            + h21 * h * h * A1[i]
        xd[i] = (d00 * P0[i] + d10 * h * V0[i] + d20 * h * h * A0[i] + d01 * P1[i] + d11 * h * V1[i]
                 + d21 * h * h * A1[i]) / h
        xdd[i] = (e00 * P0[i] + e10 * h * V0[i] + e20 * h * h * A0[i] + e01 * P1[i] + e11 * h * V1[i]
                  + e21 * h * h * A1[i]) / (h * h)


def copy_row(src, Py_ssize_t row, dst):
    """dst = src[row] for a C-contiguous (rows, n) array, without making a view."""
    cdef Py_ssize_t n = _size(dst)
    cdef double* d = _vec(dst, n, True, "dst")
    memcpy(d, _row(src, row, n, False, "src"), n * sizeof(double))


def set_row(dst, Py_ssize_t row, src):
    """dst[row] = src for a C-contiguous (rows, n) array, without making a view."""
    cdef Py_ssize_t n = _size(src)
    cdef double* s = _vec(src, n, False, "src")
    memcpy(_row(dst, row, n, True, "dst"), s, n * sizeof(double))


def add(x, y, double a, out):
    """out = x + a·y."""
    cdef Py_ssize_t n = _size(out)
    cdef double* o = _vec(out, n, True, "out")
    cdef double* p = _vec(x, n, False, "x")
    cdef double* q = _vec(y, n, False, "y")
    cdef Py_ssize_t i
    for i in range(n):
        o[i] = p[i] + a * q[i]


def scale3(x1, double s1, o1, x2, double s2, o2, x3, double s3, o3):
    """o_k = s_k·x_k for three vectors of one length, in one call (a status's torques into the plant's
    signs)."""
    cdef Py_ssize_t n = _size(o1), i
    cdef double* a = _vec(x1, n, False, "x1")
    cdef double* b = _vec(x2, n, False, "x2")
    cdef double* c = _vec(x3, n, False, "x3")
    cdef double* p = _vec(o1, n, True, "o1")
    cdef double* q = _vec(o2, n, True, "o2")
    cdef double* r = _vec(o3, n, True, "o3")
    for i in range(n):
        p[i] = s1 * a[i]
        q[i] = s2 * b[i]
        r[i] = s3 * c[i]


cdef class SentRing:
    """The last `rows` messages a loop sent (each up to `size` bytes), to tell its own commands, looped
    back by LCM, from another sender's: store() after each publish, seen() for each command received
    (searched newest first: an echo is usually the last or the one before). Many rows, as an echo can
    sit behind a backlog of statuses for a while. Allocation-free (buffers read through the buffer
    protocol)."""

    cdef bytearray _data
    cdef bytearray _lengths
    cdef Py_ssize_t rows, size, next_row, count

    def __init__(self, Py_ssize_t size, Py_ssize_t rows=1024):
        if rows < 1 or size < 1:
            raise ValueError(f"rows and size must be positive, got {rows}, {size}")
        self.rows, self.size = rows, size
        self._data = bytearray(rows * size)
        self._lengths = bytearray(rows * sizeof(Py_ssize_t))
        self.next_row = self.count = 0

    def store(self, data) -> None:
        cdef Py_buffer view
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            if view.len > self.size:
                raise ValueError(f"a message of {view.len} bytes in a ring of {self.size}")
            memcpy(<char*>self._data + self.next_row * self.size, view.buf, view.len)
            (<Py_ssize_t*><char*>self._lengths)[self.next_row] = view.len
            self.next_row = (self.next_row + 1) % self.rows
            if self.count < self.rows:
                self.count += 1
        finally:
            PyBuffer_Release(&view)

    def seen(self, data) -> bool:
        cdef Py_buffer view
        cdef Py_ssize_t k, i
        cdef bint found = False
        cdef Py_ssize_t* lengths = <Py_ssize_t*><char*>self._lengths
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        for k in range(1, self.count + 1):
            i = (self.next_row - k + self.rows) % self.rows
            if lengths[i] == view.len and memcmp(<char*>self._data + i * self.size, view.buf, view.len) == 0:
                found = True
                break
        PyBuffer_Release(&view)
        return found


# --- streaming tick statistics ------------------------------------------------------------------------
cdef extern from *:
    int __builtin_clzll(unsigned long long) nogil

cdef enum:
    SUB_BITS = 7                    # 128 sub-buckets per power of two: relative bin width <= 1/128
    NBINS = 128 * 35                # values 0 .. 2^41 ns (36 min); larger ones land in the last bin
HIST_BINS = NBINS


cdef inline Py_ssize_t _bin(long long v) noexcept nogil:
    cdef int e
    if v < (1 << SUB_BITS):
        return v if v > 0 else 0
    if v >= (1LL << 41):
        return NBINS - 1
    e = 63 - __builtin_clzll(<unsigned long long>v) - SUB_BITS
    return (e + 1) * (1 << SUB_BITS) + ((v >> e) - (1 << SUB_BITS))


def hist_add(counts, long long value):
    """counts[bin(value)] += 1 in a log-linear histogram of HIST_BINS float64 counts: exact below 128,
    then 128 bins per power of two, so a bin is at most 1/128 of its values wide (HdrHistogram's
    layout, hand-written because it must not allocate in the tick; the quantiles are in hil.sketch)."""
    cdef double* c = _vec(counts, NBINS, True, "counts")
    c[_bin(value)] += 1.0


def hist_bin(long long value):
    """The bin of `value` (for tests and hil.sketch)."""
    return _bin(value)


def decimate_rows(a, Py_ssize_t rows):
    """a[i] = a[2i] for i < rows // 2, in place, for a C-contiguous float64 array of `rows` or more rows."""
    cdef Py_ssize_t total = _size(a)
    cdef Py_ssize_t have = cnp.PyArray_DIM(<cnp.ndarray>a, 0) if cnp.PyArray_Check(a) else 0
    if have == 0 or rows > have:
        raise ValueError(f"rows {rows} is out of range [0, {have}]")
    cdef Py_ssize_t width = total // have
    cdef double* d = _vec(a, total, True, "a")
    cdef Py_ssize_t i, j
    for i in range(rows // 2):
        for j in range(width):
            d[i * width + j] = d[2 * i * width + j]
