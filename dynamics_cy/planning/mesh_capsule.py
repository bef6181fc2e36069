"""A capsule fitted to a mesh (capsules.fit_capsule's Mesh case): the mesh's vertices (STL, binary or
ASCII, and OBJ, scaled), the capsule of least volume about their principal axis that contains them all
(hence their convex hull), and its margin: the largest distance from the capsule's surface to the hull,
over a sampling of the surface, each distance an upper bound within the hull's surface sampling
(about a millimetre on a robot link).
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.spatial import ConvexHull, cKDTree


def mesh_vertices(mesh) -> np.ndarray:
    """The vertices (n, 3) of a Mesh's file in its frame, scaled (STL, OBJ); ValueError naming the file otherwise."""
    return _read(mesh.filename()) * np.asarray(mesh.scale3(), dtype=float)


def fit_mesh(mesh) -> tuple[np.ndarray, np.ndarray, float, float]:
    """fit_points of the mesh's vertices, once per file and scale in a process."""
    return _fit(mesh.filename(), tuple(float(s) for s in mesh.scale3()))


@functools.lru_cache(maxsize=256)
def _fit(filename: str, scale: tuple) -> tuple[np.ndarray, np.ndarray, float, float]:
    return fit_points(_read(filename) * np.asarray(scale))


def _read(filename: str) -> np.ndarray:
    path = Path(filename)
    suffix = path.suffix.lower()
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ValueError(f"mesh '{path}': {e.strerror}") from None
    if suffix == ".obj":
        rows = [line.split()[1:4] for line in data.decode("utf-8", "replace").splitlines() if line.startswith("v ")]
        V = np.array(rows, dtype=float)
    elif suffix == ".stl":
        count = int(np.frombuffer(data, "<u4", 1, 80)[0]) if len(data) >= 84 else -1
        if len(data) == 84 + 50 * count:          # binary: 80-byte header, count, 50 bytes a triangle
            record = np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attribute", "<u2")])
            V = np.frombuffer(data, record, count, 84)["v"].reshape(-1, 3).astype(float)
        else:
            words = data.decode("ascii", "replace").split()
            V = np.array([words[i + 1:i + 4] for i, w in enumerate(words) if w == "vertex"], dtype=float)
    else:
        raise ValueError(f"mesh '{path}': only STL and OBJ meshes are fitted with capsules")
    if V.ndim != 2 or V.shape[0] < 4:
        raise ValueError(f"mesh '{path}': no vertices read")
    return V


def _enclosing(P: np.ndarray, axis: np.ndarray, c: np.ndarray, r: float) -> tuple[float, float]:
    """The segment [a, b] (along `axis` from c) of the shortest capsule of radius r containing P."""
    t = (P - c) @ axis
    rho2 = np.maximum(((P - c) ** 2).sum(1) - t * t, 0.0)
    reach = np.sqrt(np.maximum(r * r - rho2, 0.0))
    a, b = float((t + reach).min()), float((t - reach).max())
    return (a, b) if a <= b else (0.5 * (a + b), 0.5 * (a + b))


def hull_reach(X: np.ndarray, hull: ConvexHull, points: int = 20000) -> np.ndarray:
    """An upper bound on each point X (m, 3) outside the convex hull of its distance to it: the distance
    to the nearest of `points` samples of the hull's surface (area-weighted, plus its vertices), above the
    exact one by at most the sampling's spacing (about √(area / points))."""
    T = hull.points[hull.simplices]
    area = 0.5 * np.linalg.norm(np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0]), axis=1)
    rng = np.random.default_rng(0)
    face = rng.choice(len(T), points, p=area / area.sum())
    u, v = rng.uniform(size=(2, points))
    flip = u + v > 1
    u[flip], v[flip] = 1 - u[flip], 1 - v[flip]
    S = T[face, 0] + u[:, None] * (T[face, 1] - T[face, 0]) + v[:, None] * (T[face, 2] - T[face, 0])
    return cKDTree(np.vstack([S, hull.points[hull.vertices]])).query(X)[0]


def fit_points(P: np.ndarray, samples: int = 2500) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(p0, p1, radius, margin) of the least-volume capsule about P's principal axis containing P."""
    hull = ConvexHull(P)
    P = P[hull.vertices]                             # a capsule contains P once it contains its hull
    c = P.mean(0)
    axis = np.linalg.svd(P - c, full_matrices=False)[2][0]
    t = (P - c) @ axis
    rho_max = float(np.sqrt(np.maximum(((P - c) ** 2).sum(1) - t * t, 0.0)).max())
    half = 0.5 * float(t.max() - t.min())

    def volume(r):
        a, b = _enclosing(P, axis, c, r)
        return np.pi * r * r * (b - a) + 4.0 / 3.0 * np.pi * r ** 3

    top = max(rho_max, np.hypot(rho_max, half)) + 1e-12
    r = float(minimize_scalar(volume, bounds=(rho_max, top), method="bounded", options={"xatol": 1e-9}).x) \
        if top > rho_max else rho_max
    a, b = _enclosing(P, axis, c, r)
    p0, p1 = c + a * axis, c + b * axis
    margin = float(hull_reach(capsule_surface(p0, p1, r, samples), hull).max())
    return p0, p1, r, margin


def capsule_surface(p0: np.ndarray, p1: np.ndarray, r: float, samples: int) -> np.ndarray:
    """About `samples` points on the surface of the capsule [p0, p1] + r: its side and its two caps."""
    d = p1 - p0
    length = float(np.linalg.norm(d))
    z = d / length if length > 0 else np.array([0.0, 0.0, 1.0])
    x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    n = int(np.sqrt(samples))
    phi, s = np.meshgrid(np.linspace(0, 2 * np.pi, n, endpoint=False), np.linspace(0, 1, n))
    side = p0 + s.reshape(-1, 1) * d + r * (np.cos(phi).reshape(-1, 1) * x + np.sin(phi).reshape(-1, 1) * y)
    theta, phi = np.meshgrid(np.linspace(0, 0.5 * np.pi, n // 2), np.linspace(0, 2 * np.pi, n, endpoint=False))
    u = (np.sin(theta) * np.cos(phi)).reshape(-1, 1) * x + (np.sin(theta) * np.sin(phi)).reshape(-1, 1) * y
    w = np.cos(theta).reshape(-1, 1) * z
    return np.vstack([side, p1 + r * (u + w), p0 + r * (u - w)])
