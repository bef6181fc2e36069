"""dynamics_cy: compiled multibody dynamics with pydrake's MultibodyPlant API.

    from dynamics_cy import MultibodyPlant, Parser
    plant = MultibodyPlant(time_step=0.0)
    Parser(plant).AddModels("configs/robots/iiwa14.urdf")
    plant.Finalize()
    k = plant.kernels()          # allocation-free kernels for the control loop
"""
from .contact_results import ContactResults, PenetrationAsPointPair, PointPairContactInfo
from .context import Context, MultibodyForces
from .errors import DynamicsError, GimbalLockError, ModelError, ParseError, SingularInertiaError
from .geometry import (
                       Box,
                       CalcContactFrictionFromSurfaceProperties,
                       Capsule,
                       CoulombFriction,
                       Cylinder,
                       GeometryInstance,
                       HalfSpace,
                       Mesh,
                       Shape,
                       Sphere,
)
from .inertia import RotationalInertia, SpatialInertia, UnitInertia
from .joints import BallRpyJoint, Joint, PlanarJoint, PrismaticJoint, QuaternionFloatingJoint, RevoluteJoint, WeldJoint
from .parsing import PackageMap, Parser
from .plant import JacobianWrtVariable, MultibodyPlant
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
from .tree import (
                       BodyIndex,
                       FixedOffsetFrame,
                       Frame,
                       FrameIndex,
                       JointActuator,
                       JointActuatorIndex,
                       JointIndex,
                       ModelInstanceIndex,
                       RigidBody,
                       RigidBodyFrame,
                       UniformGravityFieldElement,
                       default_model_instance,
                       world_index,
                       world_model_instance,
)

__all__ = [name for name in dir() if not name.startswith("_")]
