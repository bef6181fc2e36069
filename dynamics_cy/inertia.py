"""Mass properties with Drake's names: RotationalInertia, UnitInertia, SpatialInertia.

``I_BP_E`` is the rotational inertia of body B about point P, expressed in frame E.
``G_BP_E = I_BP_E / m`` is the unit inertia. ``M_BP_E`` is the spatial inertia of B about P,
holding the mass m, ``p_PBcm_E`` and ``G_BP_E``.
"""
from __future__ import annotations

import numpy as np

from .spatial_math import matrix3, skew


def _as_sym3(args, what: str) -> np.ndarray:
    if len(args) == 1:
        I = np.array(args[0], dtype=float)
        if I.shape != (3, 3):
            raise ValueError(f"{what} as a matrix must be 3x3, got {I.shape}")
        if not np.allclose(I, I.T, rtol=0, atol=1e-14 * max(1.0, np.abs(I).max())):
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


class RotationalInertia:
    """I_BP_E: a symmetric 3x3 inertia matrix."""

    def __init__(self, *args):
        self._I = np.zeros((3, 3)) if not args else _as_sym3(args, type(self).__name__)

    def CopyToFullMatrix3(self) -> np.ndarray:
        return self._I.copy()

    def get_moments(self) -> np.ndarray:
        return np.diag(self._I).copy()

    def get_products(self) -> np.ndarray:
        return np.array([self._I[0, 1], self._I[0, 2], self._I[1, 2]])

    def Trace(self) -> float:
        return float(np.trace(self._I))

    def CalcPrincipalMomentsOfInertia(self) -> np.ndarray:
        return principal_moments(self._I)

    def CouldBePhysicallyValid(self) -> bool:
        return inertia_problem(self._I) is None

    def ReExpress(self, R_AE) -> "RotationalInertia":
        R = matrix3(R_AE)
        return type(self)(R @ self._I @ R.T)

    def ShiftFromCenterOfMass(self, mass: float, p_BcmQ_E) -> "RotationalInertia":
        """I_BQ = I_Bcm + m (|p|^2 1 - p p^T)."""
        p = np.asarray(p_BcmQ_E, float)
        return RotationalInertia(self._I + mass * (p @ p * np.eye(3) - np.outer(p, p)))

    def ShiftToCenterOfMass(self, mass: float, p_QBcm_E) -> "RotationalInertia":
        p = np.asarray(p_QBcm_E, float)
        return RotationalInertia(self._I - mass * (p @ p * np.eye(3) - np.outer(p, p)))

    def __mul__(self, s: float):
        return RotationalInertia(self._I * s)

    __rmul__ = __mul__

    def __add__(self, other: "RotationalInertia") -> "RotationalInertia":
        return RotationalInertia(self._I + other._I)

    def __getstate__(self) -> np.ndarray:
        return self._I.copy()                          # Drake's pickled state: the 3x3 matrix

    def __setstate__(self, state) -> None:
        self._I = _as_sym3([state], type(self).__name__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._I.tolist()!r})"


class UnitInertia(RotationalInertia):
    """G_BP_E = I_BP_E / m."""

    @staticmethod
    def SolidBox(Lx: float, Ly: float, Lz: float) -> "UnitInertia":
        return UnitInertia((Ly**2 + Lz**2) / 12, (Lx**2 + Lz**2) / 12, (Lx**2 + Ly**2) / 12)

    @staticmethod
    def SolidCube(L: float) -> "UnitInertia":
        return UnitInertia.SolidBox(L, L, L)

    @staticmethod
    def SolidSphere(r: float) -> "UnitInertia":
        j = 0.4 * r * r
        return UnitInertia(j, j, j)

    @staticmethod
    def HollowSphere(r: float) -> "UnitInertia":
        j = 2.0 / 3.0 * r * r
        return UnitInertia(j, j, j)

    @staticmethod
    def AxiallySymmetric(J: float, K: float, unit_vector) -> "UnitInertia":
        """Moment J about the axis b and K about any perpendicular axis: G = K 1 + (J - K) b b^T."""
        b = np.asarray(unit_vector, float)
        b = b / np.linalg.norm(b)
        return UnitInertia(K * np.eye(3) + (J - K) * np.outer(b, b))

    @staticmethod
    def SolidCylinder(r: float, L: float, unit_vector=(0.0, 0.0, 1.0)) -> "UnitInertia":
        return UnitInertia.AxiallySymmetric(0.5 * r * r, (3 * r * r + L * L) / 12, unit_vector)

    @staticmethod
    def SolidCapsule(r: float, L: float, unit_vector=(0.0, 0.0, 1.0)) -> "UnitInertia":
        """Cylinder of length L capped by two hemispheres of radius r, about its centre."""
        m_cyl = np.pi * r * r * L
        m_hemi = 2.0 / 3.0 * np.pi * r**3
        m = m_cyl + 2 * m_hemi
        J = (m_cyl * r * r / 2 + 2 * m_hemi * 0.4 * r * r) / m
        # Each hemisphere about its own centroid (3r/8 from the flat face), shifted to the centre.
        d = L / 2 + 3 * r / 8
        K_hemi = 0.4 * r * r - (3 * r / 8) ** 2
        K = (m_cyl * (3 * r * r + L * L) / 12 + 2 * m_hemi * (K_hemi + d * d)) / m
        return UnitInertia.AxiallySymmetric(J, K, unit_vector)

    @staticmethod
    def PointMass(p_FQ) -> "UnitInertia":
        p = np.asarray(p_FQ, float)
        return UnitInertia(p @ p * np.eye(3) - np.outer(p, p))


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
    def MakeFromCentralInertia(mass: float, p_PScm_E, I_SScm_E: RotationalInertia) -> "SpatialInertia":
        I_P = I_SScm_E.ShiftFromCenterOfMass(mass, -np.asarray(p_PScm_E, float))
        G = UnitInertia(I_P._I / mass) if mass > 0 else UnitInertia()
        return SpatialInertia(mass, p_PScm_E, G)

    @staticmethod
    def SolidBoxWithMass(mass: float, lx: float, ly: float, lz: float) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.SolidBox(lx, ly, lz))

    @staticmethod
    def SolidSphereWithDensity(density: float, radius: float) -> "SpatialInertia":
        """A solid sphere about its centre: m = ρ·(4/3)πr³."""
        return SpatialInertia.SolidSphereWithMass(density * 4.0 / 3.0 * np.pi * radius**3, radius)

    @staticmethod
    def SolidSphereWithMass(mass: float, radius: float) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.SolidSphere(radius))

    @staticmethod
    def SolidCylinderWithMass(mass: float, radius: float, length: float, unit_vector) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.SolidCylinder(radius, length, unit_vector))

    @staticmethod
    def SolidCapsuleWithMass(mass: float, radius: float, length: float, unit_vector) -> "SpatialInertia":
        return SpatialInertia(mass, np.zeros(3), UnitInertia.SolidCapsule(radius, length, unit_vector))

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
        I_cm = self._m * self._G - self._m * (self._p @ self._p * np.eye(3) - np.outer(self._p, self._p))
        problem = inertia_problem(I_cm)
        return f"rotational inertia about the centre of mass {problem}" if problem else None

    def IsPhysicallyValid(self) -> bool:
        return self.physical_problem() is None

    def Shift(self, p_PQ_E) -> "SpatialInertia":
        """M_BQ_E from M_BP_E."""
        p = np.asarray(p_PQ_E, float)
        c = self._p
        G_cm = self._G - (c @ c * np.eye(3) - np.outer(c, c))
        d = c - p
        return SpatialInertia(self._m, d, UnitInertia(G_cm + d @ d * np.eye(3) - np.outer(d, d)),
                              skip_validity_check=True)

    def ReExpress(self, R_AE) -> "SpatialInertia":
        R = matrix3(R_AE)
        return SpatialInertia(self._m, R @ self._p, UnitInertia(R @ self._G @ R.T), skip_validity_check=True)

    def __add__(self, other: "SpatialInertia") -> "SpatialInertia":
        m = self._m + other._m
        if m == 0:
            return SpatialInertia()
        p = (self._m * self._p + other._m * other._p) / m
        G = (self._m * self._G + other._m * other._G) / m
        return SpatialInertia(m, p, UnitInertia(G), skip_validity_check=True)

    def __getstate__(self) -> tuple:
        return self._m, self._p.copy(), UnitInertia(self._G)    # Drake's pickled state

    def __setstate__(self, state) -> None:
        self.__init__(*state, skip_validity_check=True)

    def __repr__(self) -> str:
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
