"""dynamics_cy: compiled multibody dynamics with pydrake's MultibodyPlant API.

It owns the multibody model and every dynamics computation on it: the Drake-compatible construction
API and parsers (URDF, SDFormat), the Finalize-time topology, the one read-only compiled ``Model`` per
plant with a ``Data`` workspace per user (_model), the algorithms as one module each on (Model, Data)
(_kinematics, _rnea, _crba, _aba, _jacobians, _com; spatial algebra in _spatial.pxd, the joint table
in _joints.pxd), the real-time ``Kernels`` API (_kernels) and the allocating facade (plant, _facade),
the shared compiled helpers other packages cimport (_arrays: argument checks; _linalg.pxd:
Cholesky; _vec3.pxd), and the public allocation-free helpers for control laws (linalg: M⁻¹ b, Λ, a
damped pseudo-inverse, rotation and pose errors). It imports no other package of the project.
docs/dynamics.md has the layout.

    from dynamics_cy import MultibodyPlant, Parser
    plant = MultibodyPlant(time_step=0.0)
    Parser(plant).AddModels("configs/robots/iiwa14.urdf")
    plant.Finalize()
    k = plant.kernels()          # allocation-free kernels for the control loop
"""
from .constraints import DistanceConstraintParams, MultibodyConstraintId
from .contact_results import ContactResults, DeformableContactInfo, PenetrationAsPointPair, PointPairContactInfo
from .context import Context, MultibodyForces
from .errors import DynamicsError, GimbalLockError, ModelError, ParseError, SingularInertiaError
from .external_forces import (
    ExternallyAppliedSpatialForce,
    ForceDensityField,
    ForceDensityFieldBase,
    ForceDensityType,
    GravityForceField,
)
from .force_elements import (
    DoorHinge,
    DoorHingeConfig,
    LinearBushingRollPitchYaw,
    LinearSpringDamper,
    PrismaticSpring,
    RevoluteSpring,
)
from .geometry import (
    Box,
    CalcContactFrictionFromSurfaceProperties,
    Capsule,
    CoulombFriction,
    Cylinder,
    GeometryInstance,
    HalfSpace,
    HydroelasticContactRepresentation,
    Mesh,
    Shape,
    Sphere,
)
from .inertia import RotationalInertia, SpatialInertia, UnitInertia
from .joints import Joint, PrismaticJoint, RevoluteJoint, WeldJoint
from .joints_more import (
    BallRpyJoint,
    PlanarJoint,
    QuaternionFloatingJoint,
    RpyFloatingJoint,
    ScrewJoint,
    UniversalJoint,
)
from .parsing import PackageMap, Parser
from .parsing.collision_filter_groups import CollisionFilterGroups
from .parsing.model_directives import (
    AddCollisionFilterGroup,
    AddDirectives,
    AddFrame,
    AddModel,
    AddModelInstance,
    AddWeld,
    FlattenModelDirectives,
    LoadModelDirectives,
    LoadModelDirectivesFromString,
    ModelDirective,
    ModelDirectives,
    ModelInstanceInfo,
)
from .parsing.process import ProcessModelDirectives
from .parsing.scoped_names import GetScopedFrameByName, GetScopedFrameByNameMaybe
from .plant import MultibodyPlant
from .plant_algorithms import JacobianWrtVariable
from .plant_config import ContactModel, DiscreteContactApproximation, DiscreteContactSolver, DrakeDeprecationWarning
from .pydrake_interop import to_pydrake
from .scoped_name import ScopedName
from .shape_inertia import CalcSpatialInertia
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
from .templates import make_templates as _make_templates
from .templates import resolve_instantiation_name as _resolve_instantiation_name
from .tree import *  # its __all__: indices, bodies, frames, actuators, gravity

# Drake's scalar-template names: X_[float] is X; any other scalar raises TypeError (templates.py).
_TEMPLATES = _make_templates({
    "MultibodyPlant_": MultibodyPlant, "MultibodyForces_": MultibodyForces, "ContactResults_": ContactResults,
    "PointPairContactInfo_": PointPairContactInfo, "CoulombFriction_": CoulombFriction,
    "RigidBody_": RigidBody, "Body_": RigidBody, "Frame_": Frame, "RigidBodyFrame_": RigidBodyFrame,
    "FixedOffsetFrame_": FixedOffsetFrame, "JointActuator_": JointActuator,
    "UniformGravityFieldElement_": UniformGravityFieldElement, "ForceElement_": ForceElement,
    "Joint_": Joint, "RevoluteJoint_": RevoluteJoint, "PrismaticJoint_": PrismaticJoint, "WeldJoint_": WeldJoint,
    "BallRpyJoint_": BallRpyJoint, "PlanarJoint_": PlanarJoint, "QuaternionFloatingJoint_": QuaternionFloatingJoint,
    "RpyFloatingJoint_": RpyFloatingJoint, "ScrewJoint_": ScrewJoint, "UniversalJoint_": UniversalJoint,
    "RotationalInertia_": RotationalInertia, "UnitInertia_": UnitInertia, "SpatialInertia_": SpatialInertia,
    "RigidTransform_": RigidTransform, "RotationMatrix_": RotationMatrix, "RollPitchYaw_": RollPitchYaw,
    "Quaternion_": Quaternion, "SpatialVelocity_": SpatialVelocity, "SpatialAcceleration_": SpatialAcceleration,
    "SpatialForce_": SpatialForce, "SpatialMomentum_": SpatialMomentum,
    "LinearSpringDamper_": LinearSpringDamper, "RevoluteSpring_": RevoluteSpring, "PrismaticSpring_": PrismaticSpring,
    "DoorHinge_": DoorHinge, "LinearBushingRollPitchYaw_": LinearBushingRollPitchYaw,
    "ForceDensityFieldBase_": ForceDensityFieldBase, "ForceDensityField_": ForceDensityField,
    "GravityForceField_": GravityForceField, "ExternallyAppliedSpatialForce_": ExternallyAppliedSpatialForce,
    "DeformableContactInfo_": DeformableContactInfo,
})
globals().update(_TEMPLATES)


def __getattr__(name: str):
    """Drake's pickled instantiation names (CoulombFriction_[float], RotationalInertia_𝓣float𝓤)."""
    cls = _resolve_instantiation_name(name, _TEMPLATES)
    if cls is None:
        raise AttributeError(f"module 'dynamics_cy' has no attribute {name!r}")
    return cls


__all__ = [name for name in dir() if not name.startswith("_")]
