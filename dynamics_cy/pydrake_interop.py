"""Our value types handed to pydrake: ``to_pydrake(x)``.

The other direction needs no call: every method that takes a pose, rotation, quaternion, spatial
vector or spatial inertia accepts pydrake's as well as ours, through one conversion layer
(``spatial_math.matrix3``/``matrix4`` and the value types' constructors; ``inertia.as_spatial_inertia``),
and ours compare by value with pydrake's (``IsNearlyEqualTo``, ``IsExactlyEqualTo``, ``IsApprox``).
pydrake is imported on first use: the stack does not need it.
"""
from __future__ import annotations

from .inertia import RotationalInertia, SpatialInertia, UnitInertia
from .spatial_math import (
    Quaternion,
    RigidTransform,
    RollPitchYaw,
    RotationMatrix,
    SpatialAcceleration,
    SpatialForce,
    SpatialMomentum,
    SpatialVelocity,
)


def to_pydrake(value):
    """The pydrake object equal to `value` (one of our value types): RigidTransform, RotationMatrix,
    RollPitchYaw, Quaternion, SpatialVelocity/Acceleration/Force/Momentum, UnitInertia,
    RotationalInertia, SpatialInertia. TypeError for anything else."""
    from pydrake.common.eigen_geometry import Quaternion as PQuaternion
    from pydrake.math import RigidTransform as PRigidTransform
    from pydrake.math import RollPitchYaw as PRollPitchYaw
    from pydrake.math import RotationMatrix as PRotationMatrix
    from pydrake.multibody import math as pmath
    from pydrake.multibody import tree as ptree
    if isinstance(value, RigidTransform):
        return PRigidTransform(value.GetAsMatrix4())
    if isinstance(value, RotationMatrix):
        return PRotationMatrix(value.matrix())
    if isinstance(value, RollPitchYaw):
        return PRollPitchYaw(value.vector())
    if isinstance(value, Quaternion):
        return PQuaternion(wxyz=value.wxyz())
    for ours in (SpatialVelocity, SpatialAcceleration, SpatialForce, SpatialMomentum):
        if isinstance(value, ours):
            return getattr(pmath, ours.__name__)(value.rotational(), value.translational())
    if isinstance(value, (UnitInertia, RotationalInertia)):
        kind = ptree.UnitInertia if isinstance(value, UnitInertia) else ptree.RotationalInertia
        (Ixx, Iyy, Izz), (Ixy, Ixz, Iyz) = value.get_moments(), value.get_products()
        return kind(Ixx, Iyy, Izz, Ixy, Ixz, Iyz)
    if isinstance(value, SpatialInertia):
        return ptree.SpatialInertia(value.get_mass(), value.get_com(), to_pydrake(value.get_unit_inertia()),
                                    skip_validity_check=True)
    raise TypeError(f"to_pydrake: {type(value).__name__} is not one of our value types")
