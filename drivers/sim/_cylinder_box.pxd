# Cylinder–box contact points for drivers.sim._contact, in the style of _box_box.pxd: a separating-axis
# test over the box's 3 face normals, the cylinder's axis and the 3 crossings of the box's edges with
# it picks the axis of least overlap; a box face gives the cylinder's rim (8 points, clipped to the
# face) or its deepest generator (clipped to the face: 2 points for a line contact), the cylinder's
# axis gives the box's incident face clipped to the end disk, an edge axis the closest points of the
# edge and the cylinder's axis (1 point). docs/sim.md, "Contact".
from drivers.sim._box_box cimport (_axis, _below, _clip, _clip_to_face, _incident, _least, _radius, _unit_cross,
    _witnesses)
from dynamics_cy._segments cimport clamp, segments_closest
from dynamics_cy._vec3 cimport cross3, dot3
from libc.math cimport cos, fabs, sin, sqrt

cdef enum:
    RIM = 8                      # the rim polygon's vertices
    CYLINDER_BOX_POINTS = 12     # an 8-gon clipped by a rectangle, or a rectangle by the 8-gon


cdef inline double _cylinder_radius(double R, double L, const double* a, const double* n) noexcept nogil:
    """The half width R √(1 − (a·n)²) + L |a·n| of the cylinder (axis a, radius R, half length L) on n."""
    cdef double c = dot3(a, n)
    cdef double s = 1.0 - c * c
    return R * sqrt(s if s > 0.0 else 0.0) + L * fabs(c)


cdef inline void _disk_axes(const double* a, const double* d, const double* RC, double* u,
                            double* w) noexcept nogil:
    """u: the unit part of d perpendicular to a (the cylinder's Gx if d ∥ a), w = a × u."""
    cdef double c = dot3(a, d), norm
    cdef int s
    for s in range(3):
        u[s] = d[s] - c * a[s]
    norm = sqrt(dot3(u, u))
    if norm < 1e-9:
        _axis(RC, 0, u)
    else:
        for s in range(3):
            u[s] /= norm
    cross3(a, u, w)


cdef inline int _clip_segment(double (*seg)[3], const double* RB, const double* pB, const double* hB,
                              int j) noexcept nogil:
    """The segment seg[0]seg[1] clipped to the slabs |e_k·(x − pB)| <= hB_k, k ≠ j, in place; 0 if
    nothing is left, else 2."""
    cdef double e[3]
    cdef double t0 = 0.0, t1 = 1.0, x0, x1, t
    cdef double p0[3]
    cdef int k, s, side
    for k in range(3):
        if k == j:
            continue
        _axis(RB, k, e)
        for side in range(2):
            x0 = dot3(e, seg[0]) - dot3(e, pB) - hB[k]
            x1 = dot3(e, seg[1]) - dot3(e, pB) - hB[k]
            if x0 > 0.0 and x1 > 0.0:
                return 0
            if x0 > 0.0:
                t = x0 / (x0 - x1)
                t0 = t if t > t0 else t0
            elif x1 > 0.0:
                t = x0 / (x0 - x1)
                t1 = t if t < t1 else t1
            for s in range(3):
                e[s] = -e[s]
    if t0 > t1:
        return 0
    for s in range(3):
        p0[s] = seg[0][s]
        seg[0][s] = p0[s] + t0 * (seg[1][s] - p0[s])
        seg[1][s] = p0[s] + t1 * (seg[1][s] - p0[s])
    return 2


cdef inline int _on_box_face(const double* RC, const double* pC, double R, double L, const double* RB,
                             const double* pB, const double* hB, int j, const double* nr,
                             double (*pa)[3], double* depth) noexcept nogil:
    """The cylinder's points below the box's face j (outward normal nr): the rim of the end disk facing
    it (8 points clipped to the face) when |a·nr| >= cos 45°, else the deepest generator clipped to the
    face (its 2 ends). Returns how many, into pa with their depths."""
    cdef double buf[CYLINDER_BOX_POINTS][3]
    cdef double a[3]
    cdef double u[3]
    cdef double w[3]
    cdef double d[3]
    cdef double c[3]
    cdef double th, x
    cdef int k, s, count
    _axis(RC, 2, a)
    for s in range(3):
        d[s] = -nr[s]
    _disk_axes(a, d, RC, u, w)          # u: towards the face, across the axis
    x = dot3(a, nr)
    if fabs(x) >= 0.7071067811865476:    # cos 45°: the end disk faces the box's face
        for s in range(3):
            c[s] = pC[s] - (L if x > 0.0 else -L) * a[s]
        for k in range(RIM):
            th = 6.283185307179586 * k / RIM
            for s in range(3):
                pa[k][s] = c[s] + R * (cos(th) * u[s] + sin(th) * w[s])
        count = _clip_to_face(pa, RIM, RB, pB, hB, j, buf)
    else:
        for s in range(3):
            pa[0][s] = pC[s] + R * u[s] - L * a[s]
            pa[1][s] = pC[s] + R * u[s] + L * a[s]
        count = _clip_segment(pa, RB, pB, hB, j)
    return _below(pa, count, nr, dot3(nr, pB) + hB[j], depth)


cdef inline int _on_disk(const double* RC, const double* pC, double R, double L, const double* RB,
                         const double* pB, const double* hB, const double* nc, double (*pb)[3],
                         double* depth) noexcept nogil:
    """The box's face most opposed to the end disk's outward normal nc, clipped to the disk (its
    inscribed 8-gon): its corners below the disk with their depths, into pb; returns how many."""
    cdef double buf[CYLINDER_BOX_POINTS][3]
    cdef double a[3]
    cdef double u[3]
    cdef double w[3]
    cdef double e[3]
    cdef double c[3]
    cdef double th, apothem = R * cos(3.141592653589793 / RIM)
    cdef int k, s, count = 4
    _incident(RB, pB, hB, nc, pb)
    _axis(RC, 2, a)
    _disk_axes(a, a, RC, u, w)
    for s in range(3):
        c[s] = pC[s] + L * nc[s]            # the disk's centre
    for k in range(RIM):                    # the 8-gon's sides, outward normals at odd multiples of π/8
        th = 3.141592653589793 * (2 * k + 1) / RIM
        for s in range(3):
            e[s] = cos(th) * u[s] + sin(th) * w[s]
        if k % 2 == 0:
            count = _clip(pb, count, e, dot3(e, c) + apothem, buf)
        else:
            count = _clip(buf, count, e, dot3(e, c) + apothem, pb)
    return _below(pb, count, nc, dot3(nc, c), depth)


cdef inline bint _rim_edge_axis(const double* c, const double* u, const double* w, double R,
                                const double* p0, const double* e, double half, double reach,
                                double* out) noexcept nogil:
    """out = e × t, t the rim's tangent at its point r(θ) = c + R (cos θ u + sin θ w) nearest the line
    p0 + s e (the nearest of 16 samples, then 3 Newton steps on the distance²),
    normalized; False if the edge (|s| <= half) is farther than R + reach from c, or e ∥ t."""
    cdef double q[3]
    cdef double r1[3]
    cdef double t[3]
    cdef double th = 0.0, x, g1, g2, qe, r1e, ct, st, best
    cdef int s, it
    for s in range(3):
        q[s] = p0[s] - c[s]
    x = clamp(-dot3(q, e), -half, half)
    for s in range(3):
        q[s] += x * e[s]                  # from c to the edge's nearest point
    if dot3(q, q) > (R + reach) * (R + reach):
        return False
    best = 1e300
    for it in range(16):
        x = 0.39269908169872414 * it
        ct, st = cos(x), sin(x)
        for s in range(3):
            q[s] = c[s] + R * (ct * u[s] + st * w[s]) - p0[s]
        qe = dot3(q, e)
        if dot3(q, q) - qe * qe < best:
            best, th = dot3(q, q) - qe * qe, x
    for it in range(3):
        ct, st = cos(th), sin(th)
        for s in range(3):
            r1[s] = R * (-st * u[s] + ct * w[s])
            t[s] = -R * (ct * u[s] + st * w[s])          # r'' = −(r − c)
            q[s] = c[s] - t[s] - p0[s]
        qe, r1e = dot3(q, e), dot3(r1, e)
        g1 = dot3(q, r1) - qe * r1e
        g2 = dot3(r1, r1) - r1e * r1e + dot3(q, t) - qe * dot3(t, e)
        if g2 <= 0.0:
            break
        th -= g1 / g2
    ct, st = cos(th), sin(th)
    for s in range(3):
        t[s] = -st * u[s] + ct * w[s]
    return _unit_cross(e, t, out)


cdef inline int cylinder_box(const double* RC, const double* pC, double R, double L,
                             const double* RB, const double* pB, const double* hB,
                             double (*pa)[3], double (*pb)[3], double* nhat, double* depth) noexcept nogil:
    """Contact points of cylinder A (R_WA row-major, p_WA, radius R, half length L along Az) with box B:
    witness points pa[i] (of A, in B) and pb[i] (of B), the common normal nhat from B into A and the
    depths (pb − pa)·n̂ > 0; returns their count (0 to CYLINDER_BOX_POINTS)."""
    cdef double d[3]
    cdef double a[3]
    cdef double L_[3]
    cdef double e[3]
    cdef double best_L[3]
    cdef double a0[3]
    cdef double a1[3]
    cdef double b0[3]
    cdef double b1[3]
    cdef double u[3]
    cdef double w[3]
    cdef double c[3]
    cdef double best = 1e300, sgn, dist, x
    cdef int axis, kind = -1, i, k, s, m
    _axis(RC, 2, a)
    for s in range(3):
        d[s] = pC[s] - pB[s]
    for axis in range(7):
        if axis < 3:
            _axis(RB, axis, L_)
        elif axis == 3:
            L_[0], L_[1], L_[2] = a[0], a[1], a[2]
        else:
            _axis(RB, axis - 4, e)
            if not _unit_cross(e, a, L_):     # an edge along the axis: the face axes decide
                continue
        if _least(_cylinder_radius(R, L, a, L_) + _radius(RB, hB, L_) - fabs(dot3(L_, d)), L_, d, axis >= 4, axis,
                  &best, &kind, best_L):
            return 0
    _disk_axes(a, a, RC, u, w)
    for axis in range(7, 13):             # each end disk's rim against the box's edge along e_k nearest A
        k = (axis - 7) % 3
        for s in range(3):
            c[s] = pC[s] + (L if axis < 10 else -L) * a[s]
            b0[s] = pB[s]
        for i in range(3):
            if i != k:
                _axis(RB, i, e)
                sgn = hB[i] if dot3(e, d) > 0.0 else -hB[i]
                for s in range(3):
                    b0[s] += sgn * e[s]
        _axis(RB, k, e)
        if not _rim_edge_axis(c, u, w, R, b0, e, hB[k], best, L_):
            continue
        if _least(_cylinder_radius(R, L, a, L_) + _radius(RB, hB, L_) - fabs(dot3(L_, d)), L_, d, True, axis,
                  &best, &kind, best_L):
            return 0
    if kind < 3:                          # the box's face (outward normal n̂) against the cylinder
        nhat[0], nhat[1], nhat[2] = best_L[0], best_L[1], best_L[2]
        m = _on_box_face(RC, pC, R, L, RB, pB, hB, kind, nhat, pa, depth)
        _witnesses(pa, pb, m, depth, nhat, 1.0)
        return m
    if kind == 3:                         # the end disk facing the box (outward normal −n̂) against its face
        for s in range(3):
            e[s] = -a[s] if dot3(a, best_L) > 0.0 else a[s]
            nhat[s] = -e[s]
        m = _on_disk(RC, pC, R, L, RB, pB, hB, e, pb, depth)
        _witnesses(pb, pa, m, depth, nhat, -1.0)
        return m
    if kind >= 7:                         # a rim against an edge: A's point deepest along −n̂, one point
        for s in range(3):
            nhat[s] = best_L[s]
            L_[s] = -best_L[s]
        x = dot3(a, L_)
        _disk_axes(a, L_, RC, u, w)
        for s in range(3):
            pa[0][s] = pC[s] + (L if x > 0.0 else -L) * a[s] + R * u[s]
        depth[0] = best / 1.05
        for s in range(3):
            pb[0][s] = pa[0][s] + depth[0] * nhat[s]
        return 1
    k = kind - 4                          # the box's edge along e_k deepest towards A, against the side
    for s in range(3):
        b0[s] = pB[s]
        a0[s], a1[s] = pC[s] - L * a[s], pC[s] + L * a[s]
    for i in range(3):
        if i == k:
            continue
        _axis(RB, i, e)
        sgn = hB[i] if dot3(e, best_L) > 0.0 else -hB[i]
        for s in range(3):
            b0[s] += sgn * e[s]
    _axis(RB, k, e)
    for s in range(3):
        b1[s] = b0[s] + hB[k] * e[s]
        b0[s] -= hB[k] * e[s]
    segments_closest(a0, a1, b0, b1, pa[0], pb[0])
    for s in range(3):
        nhat[s] = pa[0][s] - pb[0][s]
    dist = sqrt(dot3(nhat, nhat))
    if dist >= R:
        return 0
    for s in range(3):
        nhat[s] = nhat[s] / dist if dist > 1e-12 else best_L[s]
        pa[0][s] -= R * nhat[s]
    depth[0] = R - dist
    return 1
