# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Signed distances of capsules on bodies against each other, world boxes and world planes, for the
1 kHz collision guard (hil.collision_guard) and the capsule model of planning (dynamics_cy.planning.capsules).

A capsule is a segment [P0, P1] fixed in a body B (p_BP0, p_BP1) grown by a radius r. For each checked
pair (A a capsule, B a capsule, box or plane) ``CapsuleDistances.compute`` writes Drake's SignedDistancePair
quantities: φ (> 0 apart, < 0 in penetration), the witness points Ca on ∂A and Cb on ∂B in W and the unit
normal n̂_BA_W with p_WCa − p_WCb = φ n̂_BA_W (moving A along n̂ increases φ). All exact:

    capsule–capsule   the segments' closest points, φ = |a − b| − r_A − r_B (once the segments cross,
                      φ = −(r_A + r_B) along the common normal of the axes)
    capsule–box       apart: the segment's distance to the box, minimising the convex piecewise-quadratic
                      |p(t) − clamp(p(t))|² over its breakpoints; overlapping: the penetration depth over
                      the facet normals of box ⊖ segment (the box's axes and axis × e_i), minus r
    capsule–plane     the lower endpoint's height over the plane n̂·x = o, minus r

Everything is GIL-free and allocation-free after construction.
"""
from libc.math cimport fabs, sqrt
from libc.string cimport memcpy

from dynamics_cy._arrays cimport f64, f64_3d, f64_data, i32_data, owned_f64, owned_i32
from dynamics_cy._segments cimport clamp, segments_closest
from dynamics_cy._vec3 cimport cross3, dot3, matTvec, matvec

cdef enum:
    _CAPSULE = 0
    _BOX = 1
    _PLANE = 2

KIND_CAPSULE, KIND_BOX, KIND_PLANE = _CAPSULE, _BOX, _PLANE
DEF _EPS = 1e-24


cdef inline void _unit_normal_to(const double* u, double* out) noexcept nogil:
    """A unit vector perpendicular to u (any, if u = 0)."""
    cdef double e[3]
    e[0], e[1], e[2] = 1.0, 0.0, 0.0
    if fabs(u[0]) > 0.9 * sqrt(dot3(u, u)):
        e[0], e[1] = 0.0, 1.0
    cross3(u, e, out)
    cdef double n = sqrt(dot3(out, out))
    if n < 1e-300:
        out[0], out[1], out[2] = 0.0, 0.0, 1.0
        return
    out[0] /= n
    out[1] /= n
    out[2] /= n


cdef double capsule_capsule(const double* a0, const double* a1, double ra, const double* b0, const double* b1,
                            double rb, double* p_WCa, double* p_WCb, double* nhat) noexcept nogil:
    """φ, witnesses and n̂_BA of capsules A and B (segments in W)."""
    cdef double a[3]
    cdef double b[3]
    cdef double ua[3]
    cdef double ub[3]
    cdef int i
    segments_closest(a0, a1, b0, b1, a, b)
    for i in range(3):
        nhat[i] = a[i] - b[i]
    cdef double d = sqrt(dot3(nhat, nhat)), m
    if d > 1e-12:
        for i in range(3):
            nhat[i] /= d
    else:                                    # the segments cross: the common normal of the axes
        d = 0.0
        for i in range(3):
            ua[i], ub[i] = a1[i] - a0[i], b1[i] - b0[i]
        cross3(ua, ub, nhat)
        m = sqrt(dot3(nhat, nhat))
        if m > 1e-12 * sqrt(dot3(ua, ua) * dot3(ub, ub)) and m > 0.0:
            for i in range(3):
                nhat[i] /= m
        else:
            if dot3(ua, ua) > 0.0:
                _unit_normal_to(ua, nhat)
            else:
                _unit_normal_to(ub, nhat)
    for i in range(3):
        p_WCa[i] = a[i] - ra * nhat[i]
        p_WCb[i] = b[i] + rb * nhat[i]
    return d - ra - rb


cdef inline double _box_gap2(const double* a0, const double* u, double t, const double* h) noexcept nogil:
    """|p(t) − clamp(p(t))|² for p(t) = a0 + t u against the box [−h, h]."""
    cdef double g = 0.0, x, e
    cdef int i
    for i in range(3):
        x = a0[i] + t * u[i]
        e = fabs(x) - h[i]
        if e > 0.0:
            g += e * e
    return g


cdef double segment_box_local(const double* a0, const double* a1, const double* h, double r,
                              double* ca, double* cb, double* n) noexcept nogil:
    """φ of the capsule [a0, a1] + r against the box [−h, h], in the box's frame; writes the witnesses
    ca, cb and n̂ (box to capsule) in that frame."""
    cdef double u[3]
    cdef double t[8]
    cdef double x, tl, tr, tm, qa, qb, qc, c, ts, g, best = 1e300, tbest = 0.0, tmp
    cdef int i, j, k, nt = 2
    for i in range(3):
        u[i] = a1[i] - a0[i]
    t[0], t[1] = 0.0, 1.0
    for i in range(3):                        # the breakpoints where a coordinate crosses ±h_i
        if u[i] != 0.0:
            for j in range(2):
                x = ((h[i] if j == 0 else -h[i]) - a0[i]) / u[i]
                if 0.0 < x < 1.0:
                    t[nt] = x
                    nt += 1
    for i in range(1, nt):                    # insertion sort
        tmp = t[i]
        j = i - 1
        while j >= 0 and t[j] > tmp:
            t[j + 1] = t[j]
            j -= 1
        t[j + 1] = tmp
    for k in range(nt - 1):                   # each piece: a quadratic qa t² + qb t + ..., minimised
        tl, tr = t[k], t[k + 1]
        tm = 0.5 * (tl + tr)
        qa, qb, qc = 0.0, 0.0, 0.0
        for i in range(3):
            x = a0[i] + tm * u[i]
            if x > h[i]:
                c = a0[i] - h[i]
            elif x < -h[i]:
                c = a0[i] + h[i]
            else:
                continue
            qa += u[i] * u[i]
            qb += 2.0 * c * u[i]
            qc += c * c
        if qa > 0.0:
            ts = clamp(-qb / (2.0 * qa), tl, tr)
            g = _box_gap2(a0, u, ts, h)
        else:                                 # constant on the piece (0: the piece is inside the box)
            ts, g = tm, qc
        if g < best:
            best, tbest = g, ts
    cdef double d
    if best > 0.0:                            # apart: the closest point of the segment and its clamp
        for i in range(3):
            x = a0[i] + tbest * u[i]
            cb[i] = clamp(x, -h[i], h[i])
            n[i] = x - cb[i]
        d = sqrt(dot3(n, n))
        for i in range(3):
            n[i] /= d
            ca[i] = cb[i] + (d - r) * n[i]
        return d - r
    # Overlapping: the least push out over the facet normals of box ⊖ segment.
    cdef double axis[3]
    cdef double e[3]
    cdef double depth = 1e300, rho, s0, s1, m, dp, dm, sgn = 1.0
    cdef int a
    n[0], n[1], n[2] = 0.0, 0.0, 1.0
    for a in range(6):
        if a < 3:
            axis[0], axis[1], axis[2] = 0.0, 0.0, 0.0
            axis[a] = 1.0
        else:
            e[0], e[1], e[2] = 0.0, 0.0, 0.0
            e[a - 3] = 1.0
            cross3(u, e, axis)
            m = sqrt(dot3(axis, axis))
            if m <= 1e-12 * sqrt(dot3(u, u)) or m == 0.0:
                continue
            for i in range(3):
                axis[i] /= m
        rho = h[0] * fabs(axis[0]) + h[1] * fabs(axis[1]) + h[2] * fabs(axis[2])
        s0, s1 = dot3(axis, a0), dot3(axis, a1)
        dp = rho - (s0 if s0 < s1 else s1)    # push along +axis
        dm = (s0 if s0 > s1 else s1) + rho    # push along −axis
        if dp < depth:
            depth, sgn = dp, 1.0
            memcpy(n, axis, 3 * sizeof(double))
        if dm < depth:
            depth, sgn = dm, -1.0
            memcpy(n, axis, 3 * sizeof(double))
    for i in range(3):
        n[i] *= sgn
    s0, s1 = dot3(n, a0), dot3(n, a1)         # the segment's deepest point along −n̂ (the middle on a tie)
    for i in range(3):
        x = a0[i] if s0 < s1 else (a1[i] if s1 < s0 else 0.5 * (a0[i] + a1[i]))
        ca[i] = x - r * n[i]
        cb[i] = ca[i] + (depth + r) * n[i]
    return -depth - r


cdef double capsule_box(const double* a0, const double* a1, double r, const double* box,
                        double* p_WCa, double* p_WCb, double* nhat) noexcept nogil:
    """φ of capsule [a0, a1] + r (in W) against box = [R_WB (9), p_WB (3), half sizes (3)]."""
    cdef double l0[3]
    cdef double l1[3]
    cdef double w[3]
    cdef double ca[3]
    cdef double cb[3]
    cdef double n[3]
    cdef int i
    for i in range(3):
        w[i] = a0[i] - box[9 + i]
    matTvec(box, w, l0)
    for i in range(3):
        w[i] = a1[i] - box[9 + i]
    matTvec(box, w, l1)
    cdef double phi = segment_box_local(l0, l1, box + 12, r, ca, cb, n)
    matvec(box, ca, p_WCa)
    matvec(box, cb, p_WCb)
    matvec(box, n, nhat)
    for i in range(3):
        p_WCa[i] += box[9 + i]
        p_WCb[i] += box[9 + i]
    return phi


cdef double capsule_plane(const double* a0, const double* a1, double r, const double* plane,
                          double* p_WCa, double* p_WCb, double* nhat) noexcept nogil:
    """φ of capsule [a0, a1] + r (in W) against the half space below plane = [n̂ (3), o]: n̂·x ≤ o."""
    cdef double h0 = dot3(plane, a0) - plane[3], h1 = dot3(plane, a1) - plane[3], h
    cdef int i
    for i in range(3):
        nhat[i] = plane[i]
        p_WCa[i] = a0[i] if h0 < h1 else (a1[i] if h1 < h0 else 0.5 * (a0[i] + a1[i]))
    h = h0 if h0 < h1 else h1
    for i in range(3):
        p_WCa[i] -= r * plane[i]
        p_WCb[i] = p_WCa[i] - (h - r) * plane[i]
    return h - r


cdef class CapsuleDistances:
    """Capsules on bodies, world boxes and planes, and the pairs to check (see the module docstring).

    CapsuleDistances(body (nc) int, p_BP0 (nc, 3), p_BP1 (nc, 3), radius (nc), boxes (nbox, 15) =
    [R_WB row-major, p_WB, half sizes], planes (nplane, 4) = [n̂, o] (the free side n̂·x > o),
    pairs (npairs, 3) int = [kind (KIND_CAPSULE, KIND_BOX, KIND_PLANE), capsule index, other index]).
    """
    cdef readonly int num_capsules, num_boxes, num_planes, num_pairs
    cdef object _body, _seg, _radius, _boxes, _planes, _pairs, _world
    cdef int* body
    cdef double* seg
    cdef double* radius
    cdef double* boxes
    cdef double* planes
    cdef int* pairs
    cdef double* world                        # the segments in W, (nc, 6)

    def __init__(self, body, p_BP0, p_BP1, radius, boxes, planes, pairs):
        import numpy as np
        nc = len(body)
        p0 = np.asarray(p_BP0, dtype=float).reshape(nc, 3)
        p1 = np.asarray(p_BP1, dtype=float).reshape(nc, 3)
        self._body = owned_i32(body, (nc,))
        self._seg = owned_f64(np.hstack([p0, p1]), (nc, 6))
        self._radius = owned_f64(radius, (nc,))
        self._boxes = owned_f64(boxes, (-1, 15)) if len(boxes) else owned_f64(np.zeros(15), (1, 15))
        self._planes = owned_f64(planes, (-1, 4)) if len(planes) else owned_f64(np.zeros(4), (1, 4))
        self._pairs = owned_i32(pairs, (-1, 3)) if len(pairs) else owned_i32([0, 0, 0], (1, 3))
        self._world = owned_f64(np.zeros(6 * max(nc, 1)), (max(nc, 1), 6))
        self.num_capsules, self.num_boxes, self.num_planes, self.num_pairs = nc, len(boxes), len(planes), len(pairs)
        for k, (kind, a, b) in enumerate(np.asarray(self._pairs)[:self.num_pairs]):
            limit = {KIND_CAPSULE: nc, KIND_BOX: self.num_boxes, KIND_PLANE: self.num_planes}.get(int(kind))
            if limit is None or not (0 <= a < nc and 0 <= b < limit):
                raise ValueError(f"CapsuleDistances: pair {k} = ({kind}, {a}, {b}) names no capsule, box or plane")
        if (self._radius < 0).any():
            raise ValueError("CapsuleDistances: a radius is negative")
        self.body, self.seg, self.radius = i32_data(self._body), f64_data(self._seg), f64_data(self._radius)
        self.boxes, self.planes, self.pairs = f64_data(self._boxes), f64_data(self._planes), i32_data(self._pairs)
        self.world = f64_data(self._world)

    def compute(self, X_WB, distance, p_WCa, p_WCb, nhat):
        """Every pair's φ (npairs), witnesses p_WCa, p_WCb and n̂_BA_W (npairs, 3) from the bodies' poses
        X_WB (num_bodies, 4, 4) (Kernels.body_poses). Returns the index of the nearest pair (−1: none)."""
        cdef int nb = len(X_WB), best
        cdef double* X = f64_3d(X_WB, nb, 4, 4, "X_WB")
        cdef double* d = f64(distance, self.num_pairs, -1, True, "distance")
        cdef double* ca = f64(p_WCa, self.num_pairs, 3, True, "p_WCa")
        cdef double* cb = f64(p_WCb, self.num_pairs, 3, True, "p_WCb")
        cdef double* nh = f64(nhat, self.num_pairs, 3, True, "nhat")
        cdef int i
        for i in range(self.num_capsules):
            if self.body[i] < 0 or self.body[i] >= nb:
                raise ValueError(f"capsule {i} is on body {self.body[i]}, not one of the {nb} bodies of X_WB")
        with nogil:
            best = self._compute(X, d, ca, cb, nh)
        return best

    cdef int _compute(self, const double* X, double* d, double* ca, double* cb, double* nh) noexcept nogil:
        cdef int i, j, k, kind, a, b
        cdef double R[9]
        cdef const double* T
        cdef int best = -1
        for i in range(self.num_capsules):    # the segments in W: p_WP = R_WB p_BP + p_WB
            T = X + 16 * self.body[i]
            for j in range(3):
                R[3 * j], R[3 * j + 1], R[3 * j + 2] = T[4 * j], T[4 * j + 1], T[4 * j + 2]
            matvec(R, self.seg + 6 * i, self.world + 6 * i)
            matvec(R, self.seg + 6 * i + 3, self.world + 6 * i + 3)
            for j in range(3):
                self.world[6 * i + j] += T[4 * j + 3]
                self.world[6 * i + 3 + j] += T[4 * j + 3]
        for k in range(self.num_pairs):
            kind, a, b = self.pairs[3 * k], self.pairs[3 * k + 1], self.pairs[3 * k + 2]
            if kind == _CAPSULE:
                d[k] = capsule_capsule(self.world + 6 * a, self.world + 6 * a + 3, self.radius[a],
                                       self.world + 6 * b, self.world + 6 * b + 3, self.radius[b],
                                       ca + 3 * k, cb + 3 * k, nh + 3 * k)
            elif kind == _BOX:
                d[k] = capsule_box(self.world + 6 * a, self.world + 6 * a + 3, self.radius[a], self.boxes + 15 * b,
                                   ca + 3 * k, cb + 3 * k, nh + 3 * k)
            else:
                d[k] = capsule_plane(self.world + 6 * a, self.world + 6 * a + 3, self.radius[a],
                                     self.planes + 4 * b, ca + 3 * k, cb + 3 * k, nh + 3 * k)
            if best < 0 or d[k] < d[best]:
                best = k
        return best

    def nearest(self, distance, offset):
        """The index of the pair with the least distance[k] − offset[k] (−1 with no pairs)."""
        cdef double* d = f64(distance, self.num_pairs, -1, False, "distance")
        cdef double* o = f64(offset, self.num_pairs, -1, False, "offset")
        cdef int k, best = -1
        with nogil:
            for k in range(self.num_pairs):
                if best < 0 or d[k] - o[k] < d[best] - o[best]:
                    best = k
        return best

    def segments_W(self):
        """The capsules' segments in W from the last compute, (nc, 6) = [p_WP0, p_WP1] (a view)."""
        return self._world[:self.num_capsules]


cdef inline void _normal_row(const double* Jp, Py_ssize_t nv, const double* X, const double* pc, const double* n,
                             double sign, double* o) noexcept nogil:
    """o (nv) += sign · n̂ᵀ Jv_WC for C fixed in body B: J_V_WB_W at Bo (6, nv) and X_WB (4x4, row-major)."""
    cdef double p[3]
    cdef double m[3]
    cdef Py_ssize_t c
    cdef int i
    for i in range(3):
        p[i] = pc[i] - X[4 * i + 3]
    cross3(p, n, m)
    for c in range(nv):
        o[c] += sign * (m[0] * Jp[c] + m[1] * Jp[nv + c] + m[2] * Jp[2 * nv + c]
                        + n[0] * Jp[3 * nv + c] + n[1] * Jp[4 * nv + c] + n[2] * Jp[5 * nv + c])


def normal_row(J, X_WB, int body, p_WC, nhat, double sign, out):
    """out (nv) += sign · n̂ᵀ Jv_WC: the rate of φ along n̂ due to point C fixed in body B, from B's
    J_V_WB_W (6, nv) at Bo (Kernels.jacobian of B's body frame) and X_WB (num_bodies, 4, 4) (Kernels.body_poses):
    Jv_WC = Jv_WBo − [p_BoC]× Jw_WB, so n̂ᵀ Jv_WC = n̂ᵀ Jv_WBo + (p_BoC × n̂)ᵀ Jw_WB."""
    cdef Py_ssize_t nv = out.shape[0]
    cdef int nb = len(X_WB)
    if body < 0 or body >= nb:
        raise ValueError(f"body {body} is not one of the {nb} bodies of X_WB")
    cdef double* Jp = f64(J, 6, nv, False, "J")
    cdef double* X = f64_3d(X_WB, nb, 4, 4, "X_WB") + 16 * body
    cdef double* pc = f64(p_WC, 3, -1, False, "p_WC")
    cdef double* n = f64(nhat, 3, -1, False, "nhat")
    cdef double* o = f64(out, nv, -1, True, "out")
    with nogil:
        _normal_row(Jp, nv, X, pc, n, sign, o)


cdef class WarningPolicy:
    """The collision guard's warning-zone policy on every pair inside its zone (hil.collision_guard), on
    the guard's own buffers, which it keeps: pair k's bodies (npairs, 2) = [A, B] (B = −1: the world), φ_k,
    warn_k, stop_k, the witnesses and n̂_BA_W (npairs, 3), X_WB (nb, 4, 4) and the bodies' J_V_WB_W
    (nb, 6, nv). For each pair with φ_k < warn_k, ∂φ_k/∂q = n̂ᵀ(Jv_WCa − Jv_WCb) (row k of `gradients`),
    ḋ_k = ∂φ_k/∂q v, s_k = min((warn_k − φ_k)/(warn_k − stop_k), 1) (1 when warn_k = stop_k) and

        f_k = min(damping s_k max(0, −ḋ_k) [+ stiffness (warn_k − φ_k) if repulsive], max_force)

    (row k of `force`); apply() adds τ += Σ_k f_k (∂φ_k/∂q)ᵀ. Allocation-free after construction."""
    cdef readonly int num_pairs, num_bodies, nv, entered
    cdef object _keep, _inside, _need, _gradients, _force
    cdef int* bodies
    cdef int* inside_p
    cdef int* need_p
    cdef double* d
    cdef double* warn
    cdef double* stop
    cdef double* ca
    cdef double* cb
    cdef double* nh
    cdef double* X
    cdef double* J
    cdef double* G
    cdef double* f
    cdef double damping, stiffness, max_force
    cdef bint repulsive

    def __init__(self, pair_bodies, distance, warn, stop, p_WCa, p_WCb, nhat, X_WB, J, double damping,
                 double stiffness, double max_force, bint repulsive):
        import numpy as np
        cdef int n = len(distance), nb = len(X_WB), nv = J.shape[2] if J.ndim == 3 else -1
        bodies = owned_i32(pair_bodies, (n, 2))
        if n and ((bodies[:, 0] < 0).any() or (bodies >= nb).any() or (bodies < -1).any()):
            raise ValueError(f"WarningPolicy: pair_bodies names a body outside 0..{nb - 1} (B may be −1: the world)")
        self.d, self.warn = f64(distance, n, -1, False, "distance"), f64(warn, n, -1, False, "warn")
        self.stop = f64(stop, n, -1, False, "stop")
        self.ca, self.cb = f64(p_WCa, n, 3, False, "p_WCa"), f64(p_WCb, n, 3, False, "p_WCb")
        self.nh = f64(nhat, n, 3, False, "nhat")
        self.X, self.J = f64_3d(X_WB, nb, 4, 4, "X_WB"), f64_3d(J, nb, 6, nv, "J")
        self._inside, self._need = owned_i32(np.zeros(max(n, 1)), (max(n, 1),)), owned_i32(np.zeros(nb), (nb,))
        self._gradients = owned_f64(np.zeros(max(n, 1) * nv), (max(n, 1), nv))
        self._force = owned_f64(np.zeros(max(n, 1)), (max(n, 1),))
        self._keep = (bodies, distance, warn, stop, p_WCa, p_WCb, nhat, X_WB, J)
        self.bodies, self.inside_p, self.need_p = i32_data(bodies), i32_data(self._inside), i32_data(self._need)
        self.G, self.f = f64_data(self._gradients), f64_data(self._force)
        self.num_pairs, self.num_bodies, self.nv, self.entered = n, nb, nv, 0
        self.damping, self.stiffness, self.max_force, self.repulsive = damping, stiffness, max_force, repulsive

    @property
    def inside(self):
        """(npairs) 1 for the pairs inside their warning zone at the last zone(), 2 for those that entered
        it there (outside at the call before), else 0."""
        return self._inside[:self.num_pairs]

    @property
    def need(self):
        """(nb) 1 for the bodies of the pairs inside their zone: apply() reads their rows of J."""
        return self._need

    @property
    def gradients(self):
        """(npairs, nv) ∂φ_k/∂q of the pairs apply() acted on."""
        return self._gradients[:self.num_pairs]

    @property
    def force(self):
        """(npairs) f_k of the pairs apply() acted on (0 for the others)."""
        return self._force[:self.num_pairs]

    def zone(self):
        """The pairs with φ_k < warn_k (inside, need, entered); returns how many."""
        cdef int k, a, b, count = 0, entered = 0
        with nogil:
            for b in range(self.num_bodies):
                self.need_p[b] = 0
            for k in range(self.num_pairs):
                if self.d[k] < self.warn[k]:
                    count += 1
                    if self.inside_p[k] == 0:
                        entered += 1
                        self.inside_p[k] = 2
                    else:
                        self.inside_p[k] = 1
                    a, b = self.bodies[2 * k], self.bodies[2 * k + 1]
                    self.need_p[a] = 1
                    if b >= 0:
                        self.need_p[b] = 1
                else:
                    self.inside_p[k] = 0
        self.entered = entered
        return count

    def apply(self, v, tau):
        """τ += Σ_k f_k (∂φ_k/∂q)ᵀ over the pairs inside their zone at the last zone() (the J rows of their
        bodies current)."""
        cdef Py_ssize_t nv = self.nv, c
        cdef double* vp = f64(v, nv, -1, False, "v")
        cdef double* tp = f64(tau, nv, -1, True, "tau")
        cdef int k, a, b
        cdef double rate, s, f
        cdef double* g
        with nogil:
            for k in range(self.num_pairs):
                self.f[k] = 0.0
                if self.inside_p[k] == 0:
                    continue
                g = self.G + k * nv
                for c in range(nv):
                    g[c] = 0.0
                a, b = self.bodies[2 * k], self.bodies[2 * k + 1]
                _normal_row(self.J + 6 * nv * a, nv, self.X + 16 * a, self.ca + 3 * k, self.nh + 3 * k, 1.0, g)
                if b >= 0:
                    _normal_row(self.J + 6 * nv * b, nv, self.X + 16 * b, self.cb + 3 * k, self.nh + 3 * k, -1.0, g)
                rate = 0.0
                for c in range(nv):
                    rate += g[c] * vp[c]
                s = 1.0
                if self.warn[k] > self.stop[k]:
                    s = (self.warn[k] - self.d[k]) / (self.warn[k] - self.stop[k])
                    if s > 1.0:
                        s = 1.0
                f = self.damping * s * (-rate if rate < 0.0 else 0.0)
                if self.repulsive:
                    f += self.stiffness * (self.warn[k] - self.d[k])
                if f > self.max_force:
                    f = self.max_force
                self.f[k] = f
                for c in range(nv):
                    tp[c] += f * g[c]
