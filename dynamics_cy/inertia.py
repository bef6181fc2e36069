"""Mass properties with Drake's names: RotationalInertia, UnitInertia, SpatialInertia.

``I_BP_E`` is the rotational inertia of body B about point P, expressed in frame E.
``G_BP_E = I_BP_E / m`` is the unit inertia. ``M_BP_E`` is the spatial inertia of B about P,
holding the mass m, ``p_PBcm_E`` and ``G_BP_E``.
"""
from __future__ import annotations

import numpy as np

from .spatial_math import RigidTransform, RotationMatrix, SpatialForce, SpatialMomentum, matrix3, skew


def _as_sym3(args, what: str) -> np.ndarray:
    if len(args) == 1:
        full = getattr(args[0], "CopyToFullMatrix3", None)              # an inertia, ours or pydrake's
        I = np.array(full() if callable(full) else args[0], dtype=float)
        if I.shape != (3, 3):
            raise ValueError(f"{what} as a matrix must be 3x3, got {I.shape}")
        if not np.allclose(I, I.T, rtol=0, atol=1e-14 * max(1.0, np.nanmax(np.abs(I), initial=0.0)), equal_nan=True):
            raise ValueError(f"{what} must be symmetric:\n{I}")
        return 0.5 * (I + I.T)
    if len(args) in (3, 6):
        Ixx, Iyy, Izz = args[:3]
        Ixy, Ixz, Iyz = args[3:] if len(args) == 6 else (0.0, 0.0, 0.0)
        return np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]], dtype=float)
    raise TypeError(f"{what}(Ixx, Iyy, Izz[, Ixy, Ixz, Iyz]) or {what}(I_3x3)")


def principal_moments(I: np.ndarray) -> np.ndarray:
    """The principal moments of I in ascending order, as Drake computes them: the sorted diagonal when
    every product is within 4ε·½|tr I| of zero, else the eigenvalues."""
    tol = 4 * np.finfo(float).eps * 0.5 * abs(np.trace(I))
    if abs(I[1, 0]) <= tol and abs(I[2, 0]) <= tol and abs(I[2, 1]) <= tol:
        return np.sort(np.diag(I)).astype(float)
    return np.linalg.eigvalsh(I)


def inertia_problem(I: np.ndarray) -> str | None:
    """Why the 3x3 matrix I cannot be a rotational inertia about a centre of mass, or None.

    Drake's RotationalInertia::CouldBePhysicallyValid, tolerance included: with principal moments
    I₁ ≤ I₂ ≤ I₃ and ε = 16ε_mach·max(1, ½|tr I|), valid iff every Iᵢ ≥ −ε and I₁ + I₂ + ε ≥ I₃.
    The text ends as Drake's does ("are invalid since at least one is negative" / "do not satisfy
    the triangle inequality")."""
    if not np.all(np.isfinite(I)):
        return "has a non-finite moment or product of inertia"
    eps = 16 * np.finfo(float).eps * max(1.0, 0.5 * abs(np.trace(I)))
    p = principal_moments(I)
    if np.all(p >= -eps) and p[0] + p[1] + eps >= p[2]:
        return None
    why = "are invalid since at least one is negative" if np.any(p < 0) else "do not satisfy the triangle inequality"
    return f"has principal moments {p[0]:.10g}  {p[1]:.10g}  {p[2]:.10g}, which {why}"


_MOMENT_NAMES = ("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz")


def _point_mass_matrix(mass: float, p) -> np.ndarray:
    """m (|p|² 1 − p pᵀ): the rotational inertia about P of a particle of mass m at p_PQ."""
    p = np.asarray(p, float).reshape(3)
    return float(mass) * (p @ p * np.eye(3) - np.outer(p, p))


def _unit_vector(u, what: str) -> np.ndarray:
    """u as a unit 3-vector; like Drake, |u| must be 1 within 1e-14 (ValueError otherwise)."""
    u = np.asarray(u, float).reshape(3)
    n = float(np.linalg.norm(u))
    if not abs(n - 1.0) <= 1e-14:
        raise ValueError(f"{what}(): The unit_vector argument {u} is not a unit vector (|unit_vector| = {n:g}).")
    return u


def _positive(what: str, method: str, value: float) -> float:
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{method}(): {what} is not positive and finite: {value:g}.")
    return v


class RotationalInertia:
    """I_BP_E: a symmetric 3x3 inertia matrix.

    RotationalInertia(), (Ixx, Iyy, Izz), (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) (positional or keyword),
    (mass, p_PQ_E) (a particle of mass m at Q, about P), or (I_3x3). Without arguments it is zero
    (Drake's is NaN)."""

    def __init__(self, *args, **kwargs):
        if not args and not kwargs:
            self._I = np.zeros((3, 3))
        elif "mass" in kwargs or "p_PQ_E" in kwargs or (len(args) == 2 and not kwargs):
            given = dict(zip(("mass", "p_PQ_E"), args)) | kwargs
            if set(given) != {"mass", "p_PQ_E"}:
                raise TypeError(f"{type(self).__name__}(mass, p_PQ_E): got {sorted(given)}")
            self._I = _point_mass_matrix(given["mass"], given["p_PQ_E"])
        elif kwargs:
            given = dict(zip(_MOMENT_NAMES, args)) | kwargs
            unknown = set(given) - set(_MOMENT_NAMES)
            if unknown or not {"Ixx", "Iyy", "Izz"} <= set(given):
                raise TypeError(f"{type(self).__name__}(Ixx, Iyy, Izz[, Ixy, Ixz, Iyz]): got {sorted(given)}")
            self._I = _as_sym3([given.get(n, 0.0) for n in _MOMENT_NAMES], type(self).__name__)
        else:
            self._I = _as_sym3(args, type(self).__name__)

    @classmethod
    def TriaxiallySymmetric(cls, I_triaxial: float):
        return cls(I_triaxial, I_triaxial, I_triaxial)

    def rows(self) -> int:
        return 3

    def cols(self) -> int:
        return 3

    def __getitem__(self, ij) -> float:
        """I[i, j], as pydrake indexes it (a 2-tuple of integers)."""
        if not isinstance(ij, tuple):
            raise TypeError("__getitem__(): incompatible function arguments: index with [i, j]")
        if len(ij) != 2:
            raise IndexError("Expected [i,j] for __getitem__.")
        if not all(isinstance(k, (int, np.integer)) for k in ij):
            raise TypeError(f"Unable to cast {[type(k).__name__ for k in ij]} to an integer index [i, j]")
        i, j = ij
        if not (0 <= i < 3 and 0 <= j < 3):
            raise IndexError(f"[{i}, {j}] is out of the 3x3 inertia matrix")
        return float(self._I[i, j])

    def CopyToFullMatrix3(self) -> np.ndarray:
        return self._I.copy()

    def get_moments(self) -> np.ndarray:
        return np.diag(self._I).copy()

    def get_products(self) -> np.ndarray:
        return np.array([self._I[0, 1], self._I[0, 2], self._I[1, 2]])

    def Trace(self) -> float:
        return float(np.trace(self._I))

    def CalcMaximumPossibleMomentOfInertia(self) -> float:
        """½ trace: no moment about any axis can exceed it (Drake's bound)."""
        return 0.5 * self.Trace()

    def CalcPrincipalMomentsOfInertia(self) -> np.ndarray:
        return principal_moments(self._I)

    def CalcPrincipalMomentsAndAxesOfInertia(self):
        """(moments ascending, R_EA): R_EA's columns are the principal axes, expressed in E (a proper
        rotation; each axis is determined up to sign)."""
        moments, axes = np.linalg.eigh(self._I)
        if np.linalg.det(axes) < 0:
            axes[:, 2] = -axes[:, 2]
        return moments, RotationMatrix(axes)

    def CouldBePhysicallyValid(self) -> bool:
        return inertia_problem(self._I) is None

    def IsNearlyEqualTo(self, other, precision: float) -> bool:
        """Every moment and product within precision · (the larger maximum possible moment), as Drake."""
        O = np.asarray(other.CopyToFullMatrix3(), float)
        scale = max(self.CalcMaximumPossibleMomentOfInertia(), 0.5 * float(np.trace(O)))
        return bool(np.max(np.abs(self._I - O)) <= precision * scale)

    def SetToNaN(self) -> None:
        self._I = np.full((3, 3), np.nan)

    def IsNaN(self) -> bool:
        return bool(np.isnan(self._I).any())

    def SetZero(self) -> None:
        self._I = np.zeros((3, 3))

    def IsZero(self) -> bool:
        return not self._I.any()

    def ReExpress(self, R_AE) -> "RotationalInertia":
        R = matrix3(R_AE)
        return type(self)(R @ self._I @ R.T)

    def ShiftFromCenterOfMass(self, mass: float, p_BcmQ_E) -> "RotationalInertia":
        """I_BQ = I_Bcm + m (|p|² 1 - p pᵀ)."""
        return RotationalInertia(self._I + _point_mass_matrix(mass, p_BcmQ_E))

    def ShiftToCenterOfMass(self, mass: float, p_QBcm_E) -> "RotationalInertia":
        return RotationalInertia(self._I - _point_mass_matrix(mass, p_QBcm_E))

    def ShiftToThenAwayFromCenterOfMass(self, mass: float, p_PBcm_E, p_QBcm_E) -> "RotationalInertia":
        """I_BQ from I_BP: to the centre of mass, then away from it to Q."""
        return RotationalInertia(self._I - _point_mass_matrix(mass, p_PBcm_E) + _point_mass_matrix(mass, p_QBcm_E))

    # pydrake's operators; like Drake's they give a RotationalInertia (also for a UnitInertia).
    def __add__(self, other: "RotationalInertia") -> "RotationalInertia":
        return RotationalInertia(self._I + np.asarray(other.CopyToFullMatrix3(), float))

    def __sub__(self, other: "RotationalInertia") -> "RotationalInertia":
        return RotationalInertia(self._I - np.asarray(other.CopyToFullMatrix3(), float))

    def __mul__(self, other):
        """I * s (a RotationalInertia) or I * w (the 3-vector I w)."""
        if np.ndim(other) == 0:
            return RotationalInertia(self._I * float(other))
        return self._I @ np.asarray(other, float).reshape(3)

    def __rmul__(self, s: float) -> "RotationalInertia":
        return RotationalInertia(self._I * float(s))

    def __truediv__(self, s: float) -> "RotationalInertia":
        return RotationalInertia(self._I / float(s))

    # In place, as pydrake's (an alias sees the change).
    def __iadd__(self, other):
        self._I = self._I + np.asarray(other.CopyToFullMatrix3(), float)
        return self

    def __isub__(self, other):
        self._I = self._I - np.asarray(other.CopyToFullMatrix3(), float)
        return self

    def __imul__(self, s: float):
        self._I = self._I * float(s)
        return self

    def __itruediv__(self, s: float):
        self._I = self._I / float(s)
        return self

    def __getstate__(self) -> np.ndarray:
        return self._I.copy()                          # Drake's pickled state: the 3x3 matrix

    def __setstate__(self, state) -> None:
        self._I = _as_sym3([state], type(self).__name__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._I.tolist()!r})"


class UnitInertia(RotationalInertia):
    """G_BP_E = I_BP_E / m. UnitInertia(), (Ixx, Iyy, Izz[, Ixy, Ixz, Iyz]), (I=rotational inertia) or
    (G_3x3)."""

    def __init__(self, *args, I=None, **kwargs):      # noqa: E741 (Drake's keyword)
        if I is not None:
            if args or kwargs:
                raise TypeError("UnitInertia(I=...) takes no other argument")
            args = (np.asarray(I.CopyToFullMatrix3(), float),)
        if "mass" in kwargs or "p_PQ_E" in kwargs:
            raise TypeError("UnitInertia has no (mass, p_PQ_E) form; use UnitInertia.PointMass(p_FQ)")
        super().__init__(*args, **kwargs)

    def SetFromRotationalInertia(self, I, mass: float) -> "UnitInertia":
        """G = I / mass (mass > 0)."""
        self._I = np.asarray(I.CopyToFullMatrix3(), float) / _positive("mass", "SetFromRotationalInertia", mass)
        return self

    def ShiftFromCenterOfMass(self, p_BcmQ_E) -> "UnitInertia":
        """G_BQ = G_Bcm + |p|² 1 - p pᵀ."""
        return UnitInertia(self._I + _point_mass_matrix(1.0, p_BcmQ_E))

    def ShiftToCenterOfMass(self, p_QBcm_E) -> "UnitInertia":
        return UnitInertia(self._I - _point_mass_matrix(1.0, p_QBcm_E))

    @staticmethod
    def PointMass(p_FQ) -> "UnitInertia":
        return UnitInertia(_point_mass_matrix(1.0, p_FQ))

    @staticmethod
    def SolidEllipsoid(a: float, b: float, c: float) -> "UnitInertia":
        """About the centre, semi-axes a, b, c along x, y, z."""
        return UnitInertia((b * b + c * c) / 5, (a * a + c * c) / 5, (a * a + b * b) / 5)

    @staticmethod
    def SolidSphere(r: float) -> "UnitInertia":
        j = 0.4 * r * r
        return UnitInertia(j, j, j)

    @staticmethod
    def HollowSphere(r: float) -> "UnitInertia":
        j = 2.0 / 3.0 * r * r
        return UnitInertia(j, j, j)

    @staticmethod
    def SolidBox(Lx: float, Ly: float, Lz: float) -> "UnitInertia":
        return UnitInertia((Ly**2 + Lz**2) / 12, (Lx**2 + Lz**2) / 12, (Lx**2 + Ly**2) / 12)

    @staticmethod
    def SolidCube(L: float) -> "UnitInertia":
        return UnitInertia.SolidBox(L, L, L)

    @staticmethod
    def AxiallySymmetric(moment_parallel: float, moment_perpendicular: float, unit_vector) -> "UnitInertia":
        """Moment J about the axis b and K about any perpendicular axis: G = K 1 + (J - K) b bᵀ."""
        b = _unit_vector(unit_vector, "AxiallySymmetric")
        J, K = float(moment_parallel), float(moment_perpendicular)
        return UnitInertia(K * np.eye(3) + (J - K) * np.outer(b, b))

    @staticmethod
    def StraightLine(moment_perpendicular: float, unit_vector) -> "UnitInertia":
        """A body along a line through the origin: no moment about the line."""
        return UnitInertia.AxiallySymmetric(0.0, moment_perpendicular, unit_vector)

    @staticmethod
    def ThinRod(length: float, unit_vector) -> "UnitInertia":
        """A thin rod about its centre."""
        return UnitInertia.StraightLine(length * length / 12, unit_vector)

    @staticmethod
    def SolidCylinder(radius: float, length: float, unit_vector=(0.0, 0.0, 1.0)) -> "UnitInertia":
        r, L = radius, length
        return UnitInertia.AxiallySymmetric(0.5 * r * r, (3 * r * r + L * L) / 12, unit_vector)

    @staticmethod
    def SolidCylinderAboutEnd(radius: float, length: float, unit_vector) -> "UnitInertia":
        """About the centre of one end face (the cylinder lies along +unit_vector from it)."""
        r, L = radius, length
        return UnitInertia.AxiallySymmetric(0.5 * r * r, (3 * r * r + L * L) / 12 + L * L / 4, unit_vector)

    @staticmethod
    def SolidCapsule(radius: float, length: float, unit_vector=(0.0, 0.0, 1.0)) -> "UnitInertia":
        """Cylinder of length L capped by two hemispheres of radius r, about its centre."""
        r, L = radius, length
        m_cyl = np.pi * r * r * L
        m_hemi = 2.0 / 3.0 * np.pi * r**3
        m = m_cyl + 2 * m_hemi
        J = (m_cyl * r * r / 2 + 2 * m_hemi * 0.4 * r * r) / m
        # Each hemisphere about its own centroid (3r/8 from the flat face), shifted to the centre.
        d = L / 2 + 3 * r / 8
        K_hemi = 0.4 * r * r - (3 * r / 8) ** 2
        K = (m_cyl * (3 * r * r + L * L) / 12 + 2 * m_hemi * (K_hemi + d * d)) / m
        return UnitInertia.AxiallySymmetric(J, K, unit_vector)



class SpatialInertia:
    """M_BP_E: mass m, centre of mass p_PBcm_E and unit inertia G_BP_E about P."""

    def __init__(self, mass: float = 0.0, p_PScm_E=(0.0, 0.0, 0.0), G_SP_E: UnitInertia | None = None,
                 skip_validity_check: bool = False):
        self._m = float(mass)
        self._p = np.array(p_PScm_E, dtype=float).reshape(3)
        G = UnitInertia() if G_SP_E is None else G_SP_E
        full = getattr(G, "CopyToFullMatrix3", None)                      # ours or pydrake's
        self._G = np.array(full(), dtype=float) if callable(full) else _as_sym3([G], "UnitInertia")
        if not skip_validity_check:
            problem = self.physical_problem()
            if problem:
                raise ValueError(f"spatial inertia is not physically valid: {problem}")

    @staticmethod
    def Zero() -> "SpatialInertia":
        return SpatialInertia()

    @staticmethod
    def NaN() -> "SpatialInertia":
        """Every entry NaN (Drake's marker of an unset inertia)."""
        M = SpatialInertia()
        M.SetNaN()
        return M

    @staticmethod
    def MakeFromCentralInertia(mass: float, p_PScm_E, I_SScm_E: RotationalInertia) -> "SpatialInertia":
        I_P = np.asarray(I_SScm_E.CopyToFullMatrix3(), float) + _point_mass_matrix(mass, p_PScm_E)
        G = UnitInertia(I_P / mass) if mass > 0 else UnitInertia()
        return SpatialInertia(mass, p_PScm_E, G)

    @staticmethod
    def SolidBoxWithMass(mass: float, lx: float, ly: float, lz: float) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.SolidBox(lx, ly, lz))

    @staticmethod
    def SolidBoxWithDensity(density: float, lx: float, ly: float, lz: float) -> "SpatialInertia":
        rho = _positive("density", "SolidBoxWithDensity", density)
        return SpatialInertia.SolidBoxWithMass(rho * lx * ly * lz, lx, ly, lz)

    @staticmethod
    def SolidCubeWithDensity(density: float, length: float) -> "SpatialInertia":
        return SpatialInertia.SolidBoxWithDensity(density, length, length, length)

    @staticmethod
    def SolidSphereWithDensity(density: float, radius: float) -> "SpatialInertia":
        """A solid sphere about its centre: m = ρ·(4/3)πr³."""
        return SpatialInertia.SolidSphereWithMass(density * 4.0 / 3.0 * np.pi * radius**3, radius)

    @staticmethod
    def SolidSphereWithMass(mass: float, radius: float) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.SolidSphere(radius))

    @staticmethod
    def HollowSphereWithDensity(area_density: float, radius: float) -> "SpatialInertia":
        """A thin spherical shell: m = σ·4πr²."""
        sigma = _positive("area_density", "HollowSphereWithDensity", area_density)
        return SpatialInertia.HollowSphereWithMass(sigma * 4.0 * np.pi * radius**2, radius)

    @staticmethod
    def HollowSphereWithMass(mass: float, radius: float) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.HollowSphere(radius))

    @staticmethod
    def SolidEllipsoidWithDensity(density: float, a: float, b: float, c: float) -> "SpatialInertia":
        rho = _positive("density", "SolidEllipsoidWithDensity", density)
        return SpatialInertia.SolidEllipsoidWithMass(rho * 4.0 / 3.0 * np.pi * a * b * c, a, b, c)

    @staticmethod
    def SolidEllipsoidWithMass(mass: float, a: float, b: float, c: float) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.SolidEllipsoid(a, b, c))

    @staticmethod
    def SolidCylinderWithMass(mass: float, radius: float, length: float, unit_vector) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.SolidCylinder(radius, length, unit_vector))

    @staticmethod
    def SolidCylinderWithDensity(density: float, radius: float, length: float, unit_vector) -> "SpatialInertia":
        rho = _positive("density", "SolidCylinderWithDensity", density)
        return SpatialInertia.SolidCylinderWithMass(rho * np.pi * radius**2 * length, radius, length, unit_vector)

    @staticmethod
    def SolidCylinderWithMassAboutEnd(mass: float, radius: float, length: float, unit_vector) -> "SpatialInertia":
        """About the centre of one end face; the cylinder lies along +unit_vector."""
        u = _unit_vector(unit_vector, "SolidCylinderWithMassAboutEnd")
        return SpatialInertia(mass, 0.5 * length * u, UnitInertia.SolidCylinderAboutEnd(radius, length, u))

    @staticmethod
    def SolidCylinderWithDensityAboutEnd(density: float, radius: float, length: float,
                                         unit_vector) -> "SpatialInertia":
        rho = _positive("density", "SolidCylinderWithDensityAboutEnd", density)
        return SpatialInertia.SolidCylinderWithMassAboutEnd(rho * np.pi * radius**2 * length, radius, length,
                                                            unit_vector)

    @staticmethod
    def SolidCapsuleWithMass(mass: float, radius: float, length: float, unit_vector) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.SolidCapsule(radius, length, unit_vector))

    @staticmethod
    def SolidCapsuleWithDensity(density: float, radius: float, length: float, unit_vector) -> "SpatialInertia":
        """m = ρ (πr²L + (4/3)πr³)."""
        rho = _positive("density", "SolidCapsuleWithDensity", density)
        volume = np.pi * radius**2 * length + 4.0 / 3.0 * np.pi * radius**3
        return SpatialInertia.SolidCapsuleWithMass(rho * volume, radius, length, unit_vector)

    @staticmethod
    def ThinRodWithMass(mass: float, length: float, unit_vector) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.ThinRod(length, unit_vector))

    @staticmethod
    def ThinRodWithMassAboutEnd(mass: float, length: float, unit_vector) -> "SpatialInertia":
        u = _unit_vector(unit_vector, "ThinRodWithMassAboutEnd")
        return SpatialInertia(mass, 0.5 * length * u, UnitInertia.StraightLine(length * length / 3, u))

    @staticmethod
    def PointMass(mass: float, p_PScm_E) -> "SpatialInertia":
        return SpatialInertia(mass, p_PScm_E, UnitInertia.PointMass(p_PScm_E))

    def get_mass(self) -> float:
        return self._m

    def get_com(self) -> np.ndarray:
        return self._p.copy()

    def get_unit_inertia(self) -> UnitInertia:
        return UnitInertia(self._G)

    def CalcComMoment(self) -> np.ndarray:
        return self._m * self._p

    def CalcRotationalInertia(self) -> RotationalInertia:
        return RotationalInertia(self._m * self._G)

    def CopyToFullMatrix6(self) -> np.ndarray:
        """[[I_P, m [p]x], [-m [p]x, m 1]] so that [h; l] = M [w; v]."""
        M = np.zeros((6, 6))
        mc = skew(self._m * self._p)
        M[:3, :3], M[:3, 3:], M[3:, :3], M[3:, 3:] = self._m * self._G, mc, -mc, self._m * np.eye(3)
        return M

    def physical_problem(self) -> str | None:
        """Why this cannot be a physical body, or None."""
        if not (np.isfinite(self._m) and np.all(np.isfinite(self._p)) and np.all(np.isfinite(self._G))):
            return "mass, centre of mass or inertia has NaN or infinite values"
        if self._m < 0:
            return f"mass {self._m} is negative"
        I_cm = self._m * self._G - _point_mass_matrix(self._m, self._p)
        problem = inertia_problem(I_cm)
        return f"rotational inertia about the centre of mass {problem}" if problem else None

    def IsPhysicallyValid(self) -> bool:
        return self.physical_problem() is None

    def IsZero(self) -> bool:
        return self._m == 0 and not self._p.any() and not self._G.any()

    def IsNaN(self) -> bool:
        return bool(np.isnan(self._m) or np.isnan(self._p).any() or np.isnan(self._G).any())

    def SetNaN(self) -> None:
        self._m, self._p, self._G = np.nan, np.full(3, np.nan), np.full((3, 3), np.nan)

    def CalcPrincipalSemiDiametersAndPoseForSolidEllipsoid(self):
        """(a ≥ b ≥ c, X_PA): the solid ellipsoid of this mass and central inertia, its semi-diameters
        along the axes of A, A at the centre of mass with its axes the principal axes (Drake's)."""
        if not self._m > 0:
            raise ValueError("CalcPrincipalSemiDiametersAndPoseForSolidEllipsoid(): the mass must be positive")
        I_cm = RotationalInertia(self._m * self._G - _point_mass_matrix(self._m, self._p))
        (I1, I2, I3), R = I_cm.CalcPrincipalMomentsAndAxesOfInertia()
        k = 2.5 / self._m
        abc = np.sqrt(np.maximum(0.0, k * np.array([I2 + I3 - I1, I1 + I3 - I2, I1 + I2 - I3])))
        return abc, RigidTransform(R, self._p)

    def Shift(self, p_PQ_E) -> "SpatialInertia":
        """M_BQ_E from M_BP_E."""
        p = np.asarray(p_PQ_E, float)
        c = self._p
        G_cm = self._G - _point_mass_matrix(1.0, c)
        d = c - p
        return SpatialInertia(self._m, d, UnitInertia(G_cm + _point_mass_matrix(1.0, d)), skip_validity_check=True)

    def ReExpress(self, R_AE) -> "SpatialInertia":
        R = matrix3(R_AE)
        return SpatialInertia(self._m, R @ self._p, UnitInertia(R @ self._G @ R.T), skip_validity_check=True)

    def __add__(self, other: "SpatialInertia") -> "SpatialInertia":
        other = as_spatial_inertia(other)
        m = self._m + other._m
        if m == 0:
            return SpatialInertia()
        p = (self._m * self._p + other._m * other._p) / m
        G = (self._m * self._G + other._m * other._G) / m
        return SpatialInertia(m, p, UnitInertia(G), skip_validity_check=True)

    def __iadd__(self, other: "SpatialInertia") -> "SpatialInertia":
        """In place, as pydrake's (an alias sees the change)."""
        total = self + other
        self._m, self._p, self._G = total._m, total._p, total._G
        return self

    def __mul__(self, other):
        """M * A (a SpatialAcceleration) is a SpatialForce; M * V (a SpatialVelocity) a SpatialMomentum."""
        kind = type(other).__name__                                  # ours or pydrake's
        if kind in ("SpatialAcceleration", "SpatialVelocity") and callable(getattr(other, "get_coeffs", None)):
            out = self.CopyToFullMatrix6() @ np.asarray(other.get_coeffs(), float)
            return SpatialForce(out) if kind == "SpatialAcceleration" else SpatialMomentum(out)
        return NotImplemented

    def __getstate__(self) -> tuple:
        return self._m, self._p.copy(), UnitInertia(self._G)    # Drake's pickled state

    def __setstate__(self, state) -> None:
        self.__init__(*state, skip_validity_check=True)

    def __repr__(self) -> str:
        if self.IsZero():
            return "SpatialInertia.Zero()"                      # as pydrake prints it
        return f"SpatialInertia(mass={self._m!r}, p_PScm_E={self._p.tolist()!r}, " \
               f"G_SP_E={self._G.tolist()!r})"


def as_spatial_inertia(M) -> SpatialInertia:
    """M as our SpatialInertia: ours as it is, pydrake's (its mass, centre of mass and unit inertia
    copied), or None as the zero inertia."""
    if M is None:
        return SpatialInertia()
    if isinstance(M, SpatialInertia):
        return M
    if callable(getattr(M, "get_unit_inertia", None)):
        return SpatialInertia(M.get_mass(), M.get_com(), UnitInertia(M.get_unit_inertia().CopyToFullMatrix3()),
                              skip_validity_check=True)
    raise TypeError(f"expected a SpatialInertia (ours or pydrake's), got {type(M).__name__}")
