# Box–box contact points for drivers.sim._contact: the separating-axis test picks the axis of least
# overlap; a face axis gives the incident face clipped against the reference face (up to 8 points, so a
# flat-on-flat contact, a finger pad on an object, is carried by its polygon's corners), an edge axis
# the closest points of the two edges (1 point). docs/sim.md, "Contact".
from dynamics_cy._segments cimport segments_closest
from dynamics_cy._vec3 cimport cross3, dot3
from libc.math cimport fabs, sqrt


cdef inline void _axis(const double* R, int k, double* out) noexcept nogil:
    """Column k of the row-major rotation R: the geometry's axis k in W."""
    out[0], out[1], out[2] = R[k], R[3 + k], R[6 + k]


cdef inline double _radius(const double* R, const double* half, const double* L) noexcept nogil:
    """The half width Σ_k h_k |L·e_k| of the box (R, half) projected on L."""
    cdef double e[3]
    cdef double r = 0.0
    cdef int k
    for k in range(3):
        _axis(R, k, e)
        r += half[k] * fabs(dot3(e, L))
    return r


cdef inline int _clip(double (*poly)[3], int count, const double* e, double offset,
                      double (*out)[3]) noexcept nogil:
    """Sutherland–Hodgman: the polygon's part with e·x <= offset into out; returns its vertex count."""
    cdef int i, s, m = 0
    cdef double da, db, t
    cdef const double* a
    cdef const double* b
    for i in range(count):
        a, b = poly[i], poly[(i + 1) % count]
        da, db = dot3(e, a) - offset, dot3(e, b) - offset
        if da <= 0.0:
            out[m][0], out[m][1], out[m][2] = a[0], a[1], a[2]
            m += 1
        if (da < 0.0 < db) or (db < 0.0 < da):
            t = da / (da - db)
            for s in range(3):
                out[m][s] = a[s] + t * (b[s] - a[s])
            m += 1
    return m


cdef inline void _incident(const double* Ri, const double* pi, const double* hi, const double* nr,
                           double (*pts)[3]) noexcept nogil:
    """The 4 corners (in order round it) of the box (Ri, pi, hi)'s face most opposed to the normal nr."""
    cdef double e[3]
    cdef double c[3]
    cdef double u[3]
    cdef double v[3]
    cdef double best = -1.0, x, side
    cdef int k, s, f = 0, a1, a2
    for k in range(3):
        _axis(Ri, k, e)
        x = fabs(dot3(e, nr))
        if x > best:
            best, f = x, k
    _axis(Ri, f, e)
    side = -1.0 if dot3(e, nr) > 0.0 else 1.0
    a1, a2 = (f + 1) % 3, (f + 2) % 3
    _axis(Ri, a1, u)
    _axis(Ri, a2, v)
    for s in range(3):
        c[s] = pi[s] + side * hi[f] * e[s]
        u[s] *= hi[a1]
        v[s] *= hi[a2]
        pts[0][s] = c[s] + u[s] + v[s]
        pts[1][s] = c[s] - u[s] + v[s]
        pts[2][s] = c[s] - u[s] - v[s]
        pts[3][s] = c[s] + u[s] - v[s]


cdef inline bint _least(double overlap, const double* L, const double* d, bint edge, int axis, double* best,
                        int* kind, double* best_L) noexcept nogil:
    """One axis L of a separating-axis test with overlap along it (d: between the centres, A's minus
    B's): True if it separates; else the least overlap so far in best, its axis in kind and L signed
    from B towards A in best_L (an edge axis wins only by 5 %: face contact where it is a near tie)."""
    cdef double sgn
    cdef int s
    if overlap < 0.0:
        return True
    if edge:
        overlap *= 1.05
    if overlap < best[0]:
        best[0], kind[0] = overlap, axis
        sgn = 1.0 if dot3(L, d) >= 0.0 else -1.0
        for s in range(3):
            best_L[s] = sgn * L[s]
    return False


cdef inline bint _unit_cross(const double* a, const double* b, double* out) noexcept nogil:
    """out = a × b normalized; False (out unusable) if a and b are parallel."""
    cdef double norm
    cdef int s
    cross3(a, b, out)
    norm = sqrt(dot3(out, out))
    if norm < 1e-6:
        return False
    for s in range(3):
        out[s] /= norm
    return True


cdef inline int _clip_to_face(double (*pts)[3], int count, const double* Rr, const double* pr,
                              const double* hr, int j, double (*buf)[3]) noexcept nogil:
    """The polygon pts clipped in place to the sides of the box (Rr, pr, hr)'s face j (the slabs
    |e_k·(x − pr)| <= hr_k, k ≠ j; buf: as large as pts); returns its vertex count."""
    cdef double e[3]
    cdef int k, s
    for k in range(3):
        if k == j:
            continue
        _axis(Rr, k, e)
        count = _clip(pts, count, e, dot3(e, pr) + hr[k], buf)
        for s in range(3):
            e[s] = -e[s]
        count = _clip(buf, count, e, dot3(e, pr) + hr[k], pts)
    return count


cdef inline int _below(double (*pts)[3], int count, const double* nr, double plane,
                       double* depth) noexcept nogil:
    """The points of pts below the plane nr·x = plane, compacted, with their depths; returns how many."""
    cdef int i, m = 0
    cdef double x
    for i in range(count):
        x = plane - dot3(nr, pts[i])
        if x > 0.0:
            pts[m][0], pts[m][1], pts[m][2] = pts[i][0], pts[i][1], pts[i][2]
            depth[m] = x
            m += 1
    return m


cdef inline void _witnesses(double (*src)[3], double (*dst)[3], int m, const double* depth, const double* nhat,
                            double sign) noexcept nogil:
    """dst[i] = src[i] + sign depth[i] n̂: the other body's witness points of m contacts."""
    cdef int i, s
    for i in range(m):
        for s in range(3):
            dst[i][s] = src[i][s] + sign * depth[i] * nhat[s]


cdef inline int _face(const double* Rr, const double* pr, const double* hr, int j,
                      const double* Ri, const double* pi, const double* hi, const double* nr,
                      double* depth, double (*pts)[3]) noexcept nogil:
    """The incident box (Ri, pi, hi)'s face most opposed to the outward normal nr of the reference
    box's face j, clipped to that face's sides: its points below the face with their depths; returns
    how many (<= 8)."""
    cdef double buf[8][3]
    _incident(Ri, pi, hi, nr, pts)
    return _below(pts, _clip_to_face(pts, 4, Rr, pr, hr, j, buf), nr, dot3(nr, pr) + hr[j], depth)


cdef inline int box_box(const double* RA, const double* pA, const double* hA,
                        const double* RB, const double* pB, const double* hB,
                        double (*pa)[3], double (*pb)[3], double* nhat, double* depth) noexcept nogil:
    """Contact points of box A (R_WA row-major, p_WA, half extents) with box B: witness points
    pa[i] (of A, in B) and pb[i] (of B), the common normal nhat from B into A and the depths
    (pb − pa)·n̂ > 0; returns their count (0 to 8)."""
    cdef double d[3]
    cdef double L[3]
    cdef double ea[3]
    cdef double eb[3]
    cdef double best_L[3]
    cdef double nr[3]
    cdef double a0[3]
    cdef double a1[3]
    cdef double b0[3]
    cdef double b1[3]
    cdef double best = 1e300, x
    cdef int axis, kind = -1, i, j, k, s, m
    for s in range(3):
        d[s] = pA[s] - pB[s]
    for axis in range(15):
        if axis < 3:
            _axis(RA, axis, L)
        elif axis < 6:
            _axis(RB, axis - 3, L)
        else:
            _axis(RA, (axis - 6) // 3, ea)
            _axis(RB, (axis - 6) % 3, eb)
            if not _unit_cross(ea, eb, L):    # parallel edges: the face axes decide
                continue
        if _least(_radius(RA, hA, L) + _radius(RB, hB, L) - fabs(dot3(L, d)), L, d, axis >= 6, axis, &best,
                  &kind, best_L):
            return 0
    nhat[0], nhat[1], nhat[2] = best_L[0], best_L[1], best_L[2]
    if kind < 3:                          # reference face on A (outward normal −n̂), incident face of B
        for s in range(3):
            nr[s] = -nhat[s]
        m = _face(RA, pA, hA, kind, RB, pB, hB, nr, depth, pb)
        _witnesses(pb, pa, m, depth, nhat, -1.0)
        return m
    if kind < 6:                          # reference face on B (outward normal n̂), incident face of A
        m = _face(RB, pB, hB, kind - 3, RA, pA, hA, nhat, depth, pa)
        _witnesses(pa, pb, m, depth, nhat, 1.0)
        return m
    i, j = (kind - 6) // 3, (kind - 6) % 3    # edge against edge: A's deepest edge along i, B's along j
    for s in range(3):
        a0[s], b0[s] = pA[s], pB[s]
    for k in range(3):
        _axis(RA, k, ea)
        _axis(RB, k, eb)
        x = hA[k] if k == i else (-hA[k] if dot3(ea, nhat) > 0.0 else hA[k])
        for s in range(3):
            if k == i:
                a1[s] = 2.0 * x * ea[s]
            else:
                a0[s] += x * ea[s]
        x = hB[k] if k == j else (hB[k] if dot3(eb, nhat) > 0.0 else -hB[k])
        for s in range(3):
            if k == j:
                b1[s] = 2.0 * x * eb[s]
            else:
                b0[s] += x * eb[s]
    _axis(RA, i, ea)
    _axis(RB, j, eb)
    for s in range(3):
        a0[s] -= hA[i] * ea[s]
        a1[s] += a0[s]
        b0[s] -= hB[j] * eb[s]
        b1[s] += b0[s]
    segments_closest(a0, a1, b0, b1, pa[0], pb[0])
    for s in range(3):
        L[s] = pb[0][s] - pa[0][s]
    depth[0] = dot3(L, nhat)
    return 1 if depth[0] > 0.0 else 0
