"""CalcSpatialInertia (pydrake.multibody.tree): the spatial inertia of a uniform-density solid shape or
closed triangle mesh, about the shape's frame origin and expressed in it.

Shapes are ours (dynamics_cy.geometry) or pydrake.geometry's, recognised by their class name and
accessors: Box, Sphere, Cylinder and Capsule (along z), Ellipsoid, Mesh and Convex (an .obj file, its
triangles, scaled). A mesh, a file's or a triangle surface mesh (``num_triangles()``, ``element(i)``,
``vertex(i)``, as pydrake's TriangleSurfaceMesh), is integrated by the divergence theorem: one signed
tetrahedron per triangle with the frame's origin, so it must be closed and outward-wound, as in Drake.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .inertia import SpatialInertia, UnitInertia

_Z = np.array([0.0, 0.0, 1.0])


def CalcSpatialInertia(shape=None, density: float = None, *, mesh=None) -> SpatialInertia:
    """CalcSpatialInertia(shape, density) or CalcSpatialInertia(mesh=triangle_mesh, density=ρ): M_SSo_S."""
    if (shape is None) == (mesh is None):
        raise TypeError("CalcSpatialInertia(shape, density) or CalcSpatialInertia(mesh, density)")
    rho = float(density)
    if not (np.isfinite(rho) and rho > 0):
        raise ValueError(f"CalcSpatialInertia: density must be positive and finite, got {density!r}")
    if mesh is not None:
        return _mesh_inertia(*_surface_mesh_triangles(mesh), rho)
    kind = type(shape).__name__
    S = SpatialInertia
    if kind == "Box":
        return S.SolidBoxWithDensity(rho, shape.width(), shape.depth(), shape.height())
    if kind == "Sphere":
        return S.SolidSphereWithDensity(rho, shape.radius())
    if kind == "Cylinder":
        return S.SolidCylinderWithDensity(rho, shape.radius(), shape.length(), _Z)
    if kind == "Capsule":
        return S.SolidCapsuleWithDensity(rho, shape.radius(), shape.length(), _Z)
    if kind == "Ellipsoid":
        return S.SolidEllipsoidWithDensity(rho, shape.a(), shape.b(), shape.c())
    if kind in ("Mesh", "Convex"):
        return _mesh_inertia(*_obj_triangles(shape), rho)
    raise ValueError(f"CalcSpatialInertia: Cannot compute mass of a {kind}")


def _mesh_inertia(vertices: np.ndarray, triangles: np.ndarray, rho: float) -> SpatialInertia:
    """Σ over triangles (a, b, c) of the tetrahedron (origin, a, b, c): volume a·(b×c)/6, first and
    second moments in closed form."""
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    vol = np.einsum("ij,ij->i", a, np.cross(b, c)) / 6.0
    total = vol.sum()
    if not total > 0:
        raise ValueError("CalcSpatialInertia: the mesh encloses no positive volume (is it closed and "
                         "wound outward?)")
    m = rho * total
    s = a + b + c
    com = (vol[:, None] * s).sum(axis=0) / 4.0 / total
    # ∫ x xᵀ dV over a tetrahedron with a vertex at the origin: V/20 (a aᵀ + b bᵀ + c cᵀ + s sᵀ)
    C = np.einsum("t,tij->ij", vol, np.einsum("ti,tj->tij", a, a) + np.einsum("ti,tj->tij", b, b)
                  + np.einsum("ti,tj->tij", c, c) + np.einsum("ti,tj->tij", s, s)) / 20.0
    G = (np.trace(C) * np.eye(3) - C) / total
    return SpatialInertia(m, com, UnitInertia(0.5 * (G + G.T)), skip_validity_check=True)


def _surface_mesh_triangles(mesh):
    vertices = np.array([np.asarray(mesh.vertex(i), float).reshape(3) for i in range(mesh.num_vertices())])
    triangles = np.array([[mesh.element(t).vertex(k) for k in range(3)] for t in range(mesh.num_triangles())],
                         dtype=int).reshape(-1, 3)
    return vertices, triangles


def _obj_triangles(shape):
    """The vertices (scaled) and triangles (fans of each face) of a Mesh/Convex's Wavefront .obj file."""
    path = Path(shape.filename())
    if path.suffix.lower() != ".obj":
        raise ValueError(f"CalcSpatialInertia: only .obj meshes are read here, not '{path}'")
    scale = np.asarray(shape.scale3() if hasattr(shape, "scale3") else shape.scale(), float)
    vertices, triangles = [], []
    for line in path.read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "v":
            vertices.append([float(x) for x in parts[1:4]])
        elif parts[0] == "f":
            idx = [int(p.split("/")[0]) for p in parts[1:]]
            idx = [i - 1 if i > 0 else len(vertices) + i for i in idx]
            triangles += [[idx[0], idx[k], idx[k + 1]] for k in range(1, len(idx) - 1)]
    return np.array(vertices, float).reshape(-1, 3) * scale, np.array(triangles, int).reshape(-1, 3)
