"""Forces from outside the tree, with Drake's names: ExternallyAppliedSpatialForce (a spatial force on a
point of a body) and the force density fields (ForceDensityFieldBase, ForceDensityField, subclassable
in Python with DoEvaluateAt and DoClone, and GravityForceField). Drake applies density fields to
deformable bodies only; a plant here has none, so a field is never owned by one (has_parent_system()
is False) and is evaluated directly.
"""
from __future__ import annotations

import copy

import numpy as np

from .enums import DrakeIntEnum
from .spatial_math import SpatialForce
from .tree import BodyIndex

__all__ = ["ExternallyAppliedSpatialForce", "ForceDensityField", "ForceDensityFieldBase", "ForceDensityType",
           "GravityForceField"]

_INVALID_INDEX = -1234567       # what pydrake shows for a default-constructed (invalid) index


class ForceDensityType(DrakeIntEnum):
    """Whether a force density is per unit of current (deformed) or of reference volume."""

    kPerCurrentVolume = 0
    kPerReferenceVolume = 1


class ForceDensityFieldBase:
    """A force density field f(p_WQ) [N/m³]: EvaluateAt(context, p_WQ) calls the subclass's DoEvaluateAt,
    Clone() its DoClone; copy.copy and copy.deepcopy clone."""

    def __init__(self, density_type: ForceDensityType = ForceDensityType.kPerCurrentVolume):
        self._density_type = ForceDensityType(int(density_type))

    def density_type(self) -> ForceDensityType:
        return self._density_type

    def EvaluateAt(self, context, p_WQ) -> np.ndarray:
        """The force density at the point Q (p_WQ, in W) [N/m³]."""
        value = np.array(self.DoEvaluateAt(context, np.array(p_WQ, dtype=float).reshape(3)), dtype=float).reshape(-1)
        if value.shape != (3,):
            raise TypeError(f"{type(self).__name__}.DoEvaluateAt() must return 3 numbers, got shape {value.shape}")
        return value

    def DoEvaluateAt(self, context, p_WQ):
        raise NotImplementedError(f"{type(self).__name__} derived from ForceDensityField must implement "
                                  "DoEvaluateAt(context, p_WQ)")

    def Clone(self) -> "ForceDensityFieldBase":
        clone = self.DoClone()
        if clone is None:
            raise TypeError(f"{type(self).__name__}.DoClone() returned None; return a new instance of the class")
        if clone is self:
            raise TypeError(f"{type(self).__name__}.DoClone() returned itself; return a new instance of the class")
        if not isinstance(clone, ForceDensityFieldBase):
            raise TypeError(f"{type(self).__name__}.DoClone() must return a ForceDensityField, got "
                            f"{type(clone).__name__}")
        return clone

    def DoClone(self) -> "ForceDensityFieldBase":
        raise NotImplementedError(f"{type(self).__name__} derived from ForceDensityField must implement DoClone()")

    def __copy__(self):
        return self.Clone()

    def __deepcopy__(self, memo):
        return self.Clone()


class ForceDensityField(ForceDensityFieldBase):
    """The base of force density fields; subclass it with DoEvaluateAt(context, p_WQ) and DoClone()."""

    def has_parent_system(self) -> bool:
        """False: fields act on deformable bodies, which a plant here does not have."""
        return False

    def parent_system_or_throw(self):
        raise RuntimeError(f"this {type(self).__name__} is not owned by a MultibodyPlant (dynamics_cy's plants "
                           "have no deformable bodies to apply it to)")


class GravityForceField(ForceDensityField):
    """The uniform force density ρ g [N/m³] of gravity g [m/s²] on a material of mass density ρ [kg/m³],
    per unit of reference volume."""

    def __init__(self, gravity_vector, mass_density: float):
        super().__init__(ForceDensityType.kPerReferenceVolume)
        g = np.array(gravity_vector, dtype=float).reshape(-1)
        if g.shape != (3,):
            raise ValueError(f"GravityForceField: gravity_vector must have 3 elements, got {np.shape(gravity_vector)}")
        self._density = float(mass_density) * g

    def DoEvaluateAt(self, context, p_WQ) -> np.ndarray:
        return self._density.copy()

    def DoClone(self) -> "GravityForceField":
        clone = GravityForceField.__new__(GravityForceField)
        clone._density_type, clone._density = self._density_type, self._density.copy()
        return clone


class ExternallyAppliedSpatialForce:
    """A spatial force F_Bq_W (expressed in W) applied at the point Bq of body B (body_index), with
    p_BoBq_B its position from Bo, in B. Defaults: an invalid body index, Bq = Bo, zero force."""

    def __init__(self):
        self.body_index = BodyIndex(_INVALID_INDEX)
        self.p_BoBq_B = np.zeros(3)
        self.F_Bq_W = SpatialForce()

    def __copy__(self) -> "ExternallyAppliedSpatialForce":
        out = ExternallyAppliedSpatialForce()
        out.body_index, out.p_BoBq_B, out.F_Bq_W = self.body_index, np.array(self.p_BoBq_B, dtype=float), \
            copy.deepcopy(self.F_Bq_W)
        return out

    def __deepcopy__(self, memo) -> "ExternallyAppliedSpatialForce":
        return self.__copy__()

    def __repr__(self) -> str:
        return f"ExternallyAppliedSpatialForce(body_index={self.body_index!r}, p_BoBq_B={self.p_BoBq_B.tolist()}, " \
               f"F_Bq_W={self.F_Bq_W!r})"
