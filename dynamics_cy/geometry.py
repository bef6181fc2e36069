"""Shapes and geometry registered on bodies (visual and collision), with Drake's names.

A geometry G is attached to body B with the fixed pose X_BG. Shapes are defined in G:
Box(width, depth, height) centred at Go; Sphere(radius); Cylinder(radius, length) and
Capsule(radius, length) along Gz centred at Go; Mesh(filename, scale); HalfSpace (z <= 0 in G).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .enums import DrakeIntEnum
from .spatial_math import RigidTransform


def _positive(value: float, what: str, shape: str) -> float:
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{shape}: {what} must be positive and finite, got {value!r}")
    return v


class HydroelasticContactRepresentation(DrakeIntEnum):
    """pydrake.geometry's choice of hydroelastic contact surface mesh (stored by the plant; the simulated
    plant uses point contact)."""

    kTriangle = 0
    kPolygon = 1


class Shape:
    """Base of the geometric shapes."""

    def __repr__(self) -> str:
        args = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)


class Box(Shape):
    def __init__(self, width: float, depth: float, height: float):
        self._size = tuple(_positive(x, n, "Box") for x, n in ((width, "width"), (depth, "depth"),
                                                                 (height, "height")))

    def width(self) -> float:
        return self._size[0]

    def depth(self) -> float:
        return self._size[1]

    def height(self) -> float:
        return self._size[2]

    def size(self) -> np.ndarray:
        return np.array(self._size)


class Sphere(Shape):
    def __init__(self, radius: float):
        self._radius = _positive(radius, "radius", "Sphere")

    def radius(self) -> float:
        return self._radius


class _RadiusLength(Shape):
    """A shape given by a radius and a length along its z axis."""

    def __init__(self, radius: float, length: float):
        self._radius = _positive(radius, "radius", type(self).__name__)
        self._length = _positive(length, "length", type(self).__name__)

    def radius(self) -> float:
        return self._radius

    def length(self) -> float:
        return self._length


class Cylinder(_RadiusLength):
    pass


class Capsule(_RadiusLength):
    pass


class Mesh(Shape):
    def __init__(self, filename: str, scale=1.0):
        self._filename = str(filename)
        s = np.broadcast_to(np.asarray(scale, dtype=float), (3,))
        if not np.all(np.isfinite(s)) or np.any(s == 0):
            raise ValueError(f"Mesh '{filename}': scale must be finite and non-zero, got {scale!r}")
        self._scale3 = tuple(float(x) for x in s)

    def filename(self) -> str:
        return self._filename

    def scale(self) -> float:
        if len(set(self._scale3)) != 1:
            raise ValueError(f"Mesh '{self._filename}' has a non-uniform scale {self._scale3}; use scale3()")
        return self._scale3[0]

    def scale3(self) -> np.ndarray:
        return np.array(self._scale3)


class HalfSpace(Shape):
    """The half space z <= 0 of its frame G."""


class CoulombFriction:
    """Static and dynamic coefficients of friction, μs >= μd >= 0."""

    def __init__(self, static_friction: float = 1.0, dynamic_friction: float = 1.0):
        s, d = float(static_friction), float(dynamic_friction)
        if not (d >= 0 and s >= d and np.isfinite(s)):
            raise ValueError(f"CoulombFriction needs static >= dynamic >= 0, got static={s}, dynamic={d}")
        self._s, self._d = s, d

    def static_friction(self) -> float:
        return self._s

    def dynamic_friction(self) -> float:
        return self._d

    def __getstate__(self) -> tuple:
        return self._s, self._d                        # Drake's pickled state

    def __setstate__(self, state) -> None:
        self.__init__(*state)

    def __repr__(self) -> str:
        return f"CoulombFriction(static_friction={self._s}, dynamic_friction={self._d})"


def CalcContactFrictionFromSurfaceProperties(surface_properties1: CoulombFriction,
                                              surface_properties2: CoulombFriction) -> CoulombFriction:
    """Combined friction of two surfaces: μ = 2 μ₁ μ₂ / (μ₁ + μ₂) for static and dynamic alike."""
    def combine(a: float, b: float) -> float:
        return 0.0 if a + b == 0 else 2 * a * b / (a + b)
    return CoulombFriction(combine(surface_properties1._s, surface_properties2._s),
                           combine(surface_properties1._d, surface_properties2._d))


@dataclass(eq=False)
class GeometryInstance:
    """One geometry on a body: its pose X_BG, shape, name and role properties (hashable by identity,
    like a geometry id)."""

    body_index: int
    X_BG: RigidTransform
    shape: Shape
    name: str
    role: str                                # "visual" or "collision"
    diffuse_color: np.ndarray | None = None  # rgba, visual only
    friction: CoulombFriction | None = None  # collision only
    extra: dict = field(default_factory=dict)
