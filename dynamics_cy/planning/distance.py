"""Signed distance between collision primitives, with witness points and normal (Drake's
SignedDistancePair semantics): distance φ > 0 when apart, < 0 in penetration, and

    p_WCa - p_WCb = φ n̂_BA_W,

with Ca on A's surface, Cb on B's surface and n̂_BA_W pointing from B to A (moving A along n̂ increases
φ). For bodies moving with the configuration, ∂φ/∂q = n̂ᵀ(Jv_WCa - Jv_WCb) with Ca, Cb held fixed to
their bodies (Drake's formula).

Each shape is a core grown by a radius: Sphere = point + r, Capsule = segment + r, Box = box + 0, and
Cylinder ≈ its circumscribed 16-sided prism + 0, which contains it. Pairs of point and segment cores
are solved in closed form; pairs with a box or a prism exactly on the hull of the Minkowski
difference of the cores. Which pairs are exact:

    sphere, capsule with sphere, capsule      exact while the cores are apart (φ > -(rA + rB));
                                              once the cores touch, φ = -(rA + rB) and n̂ is a
                                              fallback direction
    box with sphere, capsule, box             exact (distance or penetration depth)
    cylinder with sphere, capsule, box,       conservative: the prism's φ, which is never larger
      cylinder                                than the cylinder's and at most r (sec(π/16) - 1)
                                              ≈ 0.02 r smaller (1.3 mm for r = 6.5 cm)
    anything with HalfSpace                   exact, cylinders included (support point)
    Mesh, or HalfSpace with HalfSpace         not supported (ValueError)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull

from dynamics_cy import Box, Capsule, Cylinder, HalfSpace, Sphere
from dynamics_cy.spatial_math import matrix4

_BOX_SIGNS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
_PRISM_SIDES = 16
_PRISM = np.array([[np.cos(a) / np.cos(np.pi / _PRISM_SIDES), np.sin(a) / np.cos(np.pi / _PRISM_SIDES), z]
                   for a in 2 * np.pi * np.arange(_PRISM_SIDES) / _PRISM_SIDES for z in (-1.0, 1.0)])


@dataclass
class SignedDistance:
    """φ, the witness points Ca on A and Cb on B (in W) and n̂_BA_W."""

    distance: float
    p_WCa: np.ndarray
    p_WCb: np.ndarray
    nhat_BA_W: np.ndarray


def _pose(X) -> np.ndarray:
    return matrix4(X)


def core_radius(shape) -> float:
    """The radius the shape's core is grown by (0 for a box, cylinder or half space): witness points
    lie at core ± radius·n̂, so p_WCa + r_A n̂_BA and p_WCb - r_B n̂_BA are core points."""
    return shape.radius() if isinstance(shape, (Sphere, Capsule)) else 0.0


def _core(shape, X_WG: np.ndarray) -> tuple[np.ndarray, float]:
    """The core's vertices in W (1, 2, 8 or 32 rows) and the radius; a cylinder's core is its
    circumscribed prism."""
    R, p = X_WG[:3, :3], X_WG[:3, 3]
    if isinstance(shape, Sphere):
        return p[None, :], shape.radius()
    if isinstance(shape, Capsule):
        h = 0.5 * shape.length() * R[:, 2]
        return np.vstack([p - h, p + h]), shape.radius()
    if isinstance(shape, Box):
        return p + (_BOX_SIGNS * (0.5 * shape.size())) @ R.T, 0.0
    if isinstance(shape, Cylinder):
        return p + (_PRISM * [shape.radius(), shape.radius(), 0.5 * shape.length()]) @ R.T, 0.0
    raise ValueError(f"signed distance: unsupported shape {shape!r} (sphere, box, capsule, cylinder and "
                     "half space are supported)")


def _support(shape, X_WG: np.ndarray, u: np.ndarray) -> np.ndarray:
    """A point of the shape farthest along u (exact for cylinders)."""
    R, p = X_WG[:3, :3], X_WG[:3, 3]
    if isinstance(shape, Cylinder):
        z = R[:, 2]
        radial = u - (u @ z) * z
        nr = np.linalg.norm(radial)
        rim = shape.radius() * radial / nr if nr > 1e-12 else np.zeros(3)
        return p + np.copysign(0.5 * shape.length(), u @ z) * z + rim
    V, r = _core(shape, X_WG)
    return V[np.argmax(V @ u)] + r * u / np.linalg.norm(u)


def _halfspace(shape, X_WS: np.ndarray, X_WH: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """φ, witness on the shape, witness on the half space, n̂ from the half space to the shape."""
    n = X_WH[:3, 2]
    c = _support(shape, X_WS, -n)
    d = float(n @ (c - X_WH[:3, 3]))
    return d, c, c - d * n, n.copy()


def _segments(a0, a1, b0, b1) -> tuple[np.ndarray, np.ndarray]:
    """Closest points of segments [a0, a1] and [b0, b1] (either may be a point)."""
    d1, d2, r = a1 - a0, b1 - b0, a0 - b0
    a, e, f = d1 @ d1, d2 @ d2, d2 @ r
    eps = 1e-24
    if a <= eps and e <= eps:
        return a0.copy(), b0.copy()
    if a <= eps:
        return a0.copy(), b0 + d2 * min(max(f / e, 0.0), 1.0)
    c = d1 @ r
    if e <= eps:
        return a0 + d1 * min(max(-c / a, 0.0), 1.0), b0.copy()
    b = d1 @ d2
    denom = a * e - b * b
    s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > eps * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t, s = 0.0, min(max(-c / a, 0.0), 1.0)
    elif t > 1.0:
        t, s = 1.0, min(max((b - c) / a, 0.0), 1.0)
    return a0 + d1 * s, b0 + d2 * t


def _barycentric(p: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Barycentric coordinates (..., 3) of points p (..., 3) in triangles T (..., 3, 3)."""
    v0, v1, w = T[..., 1, :] - T[..., 0, :], T[..., 2, :] - T[..., 0, :], p - T[..., 0, :]
    d00, d01, d11 = (v0 * v0).sum(-1), (v0 * v1).sum(-1), (v1 * v1).sum(-1)
    d20, d21 = (w * v0).sum(-1), (w * v1).sum(-1)
    den = d00 * d11 - d01 * d01
    v, u = (d11 * d20 - d01 * d21) / den, (d00 * d21 - d01 * d20) / den
    return np.stack([1.0 - v - u, v, u], axis=-1)


def _polytopes(VA: np.ndarray, VB: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Signed distance of conv(VA) and conv(VB) from the hull of their Minkowski difference D = A ⊖ B:
    φ is the signed distance of the origin to ∂D (outside: the nearest point of a facet or an edge;
    inside: the nearest facet plane). Returns φ, witness on A, witness on B, n̂_BA."""
    D = (VA[:, None, :] - VB[None, :, :]).reshape(-1, 3)
    hull = ConvexHull(D)
    N, c = hull.equations[:, :3], hull.equations[:, 3]  # n·x + c ≤ 0 inside, |n| = 1
    S = hull.simplices
    f = int(np.argmax(c))
    if c[f] <= 1e-12:  # inside or on the boundary
        p = -c[f] * N[f]
        idx, lam, d, nhat = S[f], _barycentric(p, D[S[f]]), float(c[f]), -N[f]
    else:
        P = -c[:, None] * N
        L = _barycentric(P, D[S])
        inside = (c > 0) & np.all(L >= 0, axis=1)
        E = np.concatenate([S[:, [0, 1]], S[:, [1, 2]], S[:, [2, 0]]])
        e0, e1 = D[E[:, 0]], D[E[:, 1]]
        de = e1 - e0
        t = np.clip(-(e0 * de).sum(1) / np.maximum((de * de).sum(1), 1e-300), 0.0, 1.0)
        Q = e0 + t[:, None] * de
        dist_e = np.linalg.norm(Q, axis=1)
        k = int(np.argmin(dist_e))
        dist_f = np.where(inside, c, np.inf)
        g = int(np.argmin(dist_f))
        if dist_f[g] < dist_e[k]:
            idx, lam, d, nhat = S[g], L[g], float(c[g]), -N[g]
        else:
            idx, lam, d = E[k], np.array([1.0 - t[k], t[k]]), float(dist_e[k])
            nhat = Q[k] / d
    ia, ib = np.divmod(idx, VB.shape[0])
    return d, lam @ VA[ia], lam @ VB[ib], nhat


def _fallback_normal(VA: np.ndarray, VB: np.ndarray) -> np.ndarray:
    """A separating direction for cores that touch: across two crossing segments, else normal to one."""
    axes = [V[1] - V[0] for V in (VA, VB) if V.shape[0] == 2]
    if len(axes) == 2 and np.linalg.norm(np.cross(*axes)) > 1e-12:
        n = np.cross(*axes)
    elif axes:
        n = np.cross(axes[0], [1.0, 0.0, 0.0] if abs(axes[0][0]) < 0.9 * np.linalg.norm(axes[0]) else [0.0, 1.0, 0.0])
    else:
        n = np.array([0.0, 0.0, 1.0])
    return n / np.linalg.norm(n)


def signed_distance(shape_A, X_WA: np.ndarray, shape_B, X_WB: np.ndarray) -> SignedDistance:
    """φ between shape_A at X_WA and shape_B at X_WB (4x4 arrays)."""
    if isinstance(shape_A, HalfSpace) and isinstance(shape_B, HalfSpace):
        raise ValueError("signed distance between two half spaces is not supported")
    if isinstance(shape_B, HalfSpace):
        d, a, b, n = _halfspace(shape_A, X_WA, X_WB)
        return SignedDistance(d, a, b, n)
    if isinstance(shape_A, HalfSpace):
        d, b, a, n = _halfspace(shape_B, X_WB, X_WA)
        return SignedDistance(d, a, b, -n)
    VA, rA = _core(shape_A, X_WA)
    VB, rB = _core(shape_B, X_WB)
    if VA.shape[0] > 2 or VB.shape[0] > 2:  # a box or a prism
        d, a, b, n = _polytopes(VA, VB)
    else:
        a, b = _segments(VA[0], VA[-1], VB[0], VB[-1])
        d = float(np.linalg.norm(a - b))
        n = (a - b) / d if d > 1e-12 else _fallback_normal(VA, VB)
    return SignedDistance(d - rA - rB, a - rA * n, b + rB * n, n)


def CalcSignedDistance(shape_A, X_WA, shape_B, X_WB) -> SignedDistance:
    """φ between shape_A at pose X_WA and shape_B at X_WB (RigidTransform or 4x4 arrays)."""
    return signed_distance(shape_A, _pose(X_WA), shape_B, _pose(X_WB))
