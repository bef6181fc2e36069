"""Multibody elements with Drake's names: indices, RigidBody, frames and JointActuator.

Elements belong to one MultibodyPlant (``GetParentPlant()``) once added to it. Methods that take a
context read the plant's state from it; the plant does the computing.
"""
from __future__ import annotations

import numpy as np

from .inertia import SpatialInertia, as_spatial_inertia
from .spatial_math import RigidTransform, RotationMatrix, SpatialForce

__all__ = ["BodyIndex", "FixedOffsetFrame", "ForceElement", "ForceElementIndex", "Frame", "FrameIndex", "JointActuator",
           "JointActuatorIndex", "JointIndex", "ModelInstanceIndex", "RigidBody", "RigidBodyFrame",
           "UniformGravityFieldElement", "default_model_instance", "world_frame_index", "world_index",
           "world_model_instance"]    # what dynamics_cy re-exports


class _Index(int):
    """A typed integer index, like Drake's TypeSafeIndex."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({int(self)})"

    def is_valid(self) -> bool:
        return int(self) >= 0


class BodyIndex(_Index):
    pass


class FrameIndex(_Index):
    pass


class JointIndex(_Index):
    pass


class JointActuatorIndex(_Index):
    pass


class ModelInstanceIndex(_Index):
    pass


class ForceElementIndex(_Index):
    pass


def world_model_instance() -> ModelInstanceIndex:
    return ModelInstanceIndex(0)


def default_model_instance() -> ModelInstanceIndex:
    return ModelInstanceIndex(1)


def world_index() -> BodyIndex:
    return BodyIndex(0)


def world_frame_index() -> FrameIndex:
    return FrameIndex(0)


class MultibodyElement:
    """Something that belongs to a plant: a name, an index and a model instance."""

    def __init__(self, name: str, model_instance: ModelInstanceIndex | None):
        if not isinstance(name, str) or not name:
            raise ValueError(f"an element name must be a non-empty string, got {name!r}")
        self._name = name
        self._model_instance = model_instance
        self._index = None
        self._plant = None
        self._ephemeral = False

    def name(self) -> str:
        return self._name

    def index(self):
        return self._index

    def model_instance(self) -> ModelInstanceIndex:
        return self._model_instance

    def is_ephemeral(self) -> bool:
        """True for an element the plant added at Finalize() (a floating joint, a joint's offset frame)."""
        return self._ephemeral

    def GetParentPlant(self):
        if self._plant is None:
            raise RuntimeError(f"'{self._name}' has not been added to a MultibodyPlant")
        return self._plant

    def scoped_name(self) -> str:
        return f"{self.GetParentPlant().GetModelInstanceName(self._model_instance)}::{self._name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name='{self._name}' index={self._index} " \
               f"model_instance={self._model_instance}>"


class Frame(MultibodyElement):
    """A frame F fixed to a body B with constant pose X_BF."""

    def body(self) -> "RigidBody":
        raise NotImplementedError

    def is_world_frame(self) -> bool:
        return self.body()._index == 0

    def is_body_frame(self) -> bool:
        return False

    def GetFixedPoseInBodyFrame(self) -> RigidTransform:
        raise NotImplementedError

    def CalcPoseInWorld(self, context) -> RigidTransform:
        return self.GetParentPlant().CalcRelativeTransform(context, self._plant.world_frame(), self)

    def CalcPose(self, context, frame_M: "Frame") -> RigidTransform:
        return self.GetParentPlant().CalcRelativeTransform(context, frame_M, self)

    def CalcRotationMatrixInWorld(self, context):
        return self.CalcPoseInWorld(context).rotation()

    def CalcRotationMatrix(self, context, frame_M: "Frame"):
        """R_MF."""
        return self.CalcPose(context, frame_M).rotation()

    def CalcPoseInBodyFrame(self, context) -> RigidTransform:
        """X_BF in this context (a FixedOffsetFrame's pose may be set per context)."""
        return self.GetFixedPoseInBodyFrame()

    def CalcRotationMatrixInBodyFrame(self, context):
        return self.CalcPoseInBodyFrame(context).rotation()

    def GetFixedOffsetPoseInBody(self, X_FQ) -> RigidTransform:
        """X_BQ = X_BF X_FQ."""
        return self.GetFixedPoseInBodyFrame() @ RigidTransform(X_FQ)

    def GetFixedRotationMatrixInBody(self, R_FQ):
        """R_BQ = R_BF R_FQ."""
        return self.GetFixedPoseInBodyFrame().rotation() @ RotationMatrix(R_FQ)

    def CalcOffsetPoseInBody(self, context, X_FQ) -> RigidTransform:
        """X_BQ = X_BF(context) X_FQ."""
        return self.CalcPoseInBodyFrame(context) @ RigidTransform(X_FQ)

    def CalcOffsetRotationMatrixInBody(self, context, R_FQ):
        return self.CalcPoseInBodyFrame(context).rotation() @ RotationMatrix(R_FQ)

    def EvalAngularVelocityInWorld(self, context) -> np.ndarray:
        """w_WF (= w_WB of the frame's body)."""
        return self.CalcSpatialVelocityInWorld(context).rotational()

    def CalcAngularVelocity(self, context, measured_in_frame: "Frame", expressed_in_frame: "Frame") -> np.ndarray:
        return self.CalcSpatialVelocity(context, measured_in_frame, expressed_in_frame).rotational()

    def CalcSpatialVelocityInWorld(self, context):
        return self.GetParentPlant()._frame_spatial_velocity_in_world(context, self)

    def CalcSpatialVelocity(self, context, frame_M: "Frame", frame_E: "Frame"):
        return self.GetParentPlant()._frame_spatial_velocity(context, self, frame_M, frame_E)

    def CalcRelativeSpatialVelocityInWorld(self, context, other_frame: "Frame"):
        """V_W_BC_W = V_WC_W − V_WB_W, this frame C relative to other_frame B, as Drake defines it."""
        return self.CalcSpatialVelocityInWorld(context) - other_frame.CalcSpatialVelocityInWorld(context)

    def CalcRelativeSpatialVelocity(self, context, other_frame: "Frame", measured_in_frame: "Frame",
                                    expressed_in_frame: "Frame"):
        """V_M_BC_E = V_MC_E − V_MB_E (C this frame, B other_frame)."""
        M, E = measured_in_frame, expressed_in_frame
        return self.CalcSpatialVelocity(context, M, E) - other_frame.CalcSpatialVelocity(context, M, E)

    def CalcSpatialAccelerationInWorld(self, context):
        """A_WF_W: the body's A_WB_W (EvalSpatialAccelerationInWorld) shifted to Fo."""
        return self.GetParentPlant()._frame_spatial_acceleration_in_world(context, self)

    def CalcSpatialAcceleration(self, context, measured_in_frame: "Frame", expressed_in_frame: "Frame"):
        """A_MF_E: this frame's spatial acceleration measured in M, expressed in E."""
        return self.GetParentPlant()._frame_spatial_acceleration(context, self, measured_in_frame,
                                                                 expressed_in_frame)

    def CalcRelativeSpatialAccelerationInWorld(self, context, other_frame: "Frame"):
        """A_W_BC_W = A_WC_W − A_WB_W (C this frame, B other_frame)."""
        return self.CalcSpatialAccelerationInWorld(context) - other_frame.CalcSpatialAccelerationInWorld(context)

    def CalcRelativeSpatialAcceleration(self, context, other_frame: "Frame", measured_in_frame: "Frame",
                                        expressed_in_frame: "Frame"):
        """A_M_BC_E = A_MC_E − A_MB_E (C this frame, B other_frame)."""
        M, E = measured_in_frame, expressed_in_frame
        return self.CalcSpatialAcceleration(context, M, E) - other_frame.CalcSpatialAcceleration(context, M, E)


class RigidBodyFrame(Frame):
    """The frame B of a rigid body: origin Bo, X_BB = identity."""

    def __init__(self, body: "RigidBody"):
        super().__init__(body.name(), body.model_instance())
        self._body = body

    def body(self) -> "RigidBody":
        return self._body

    def is_body_frame(self) -> bool:
        return True

    def GetFixedPoseInBodyFrame(self) -> RigidTransform:
        return RigidTransform()


class FixedOffsetFrame(Frame):
    """F fixed to parent frame P with pose X_PF."""

    def __init__(self, name: str, P: Frame | None = None, X_PF: RigidTransform | None = None,
                 model_instance: ModelInstanceIndex | None = None, *, bodyB: "RigidBody | None" = None,
                 X_BF: RigidTransform | None = None):
        """FixedOffsetFrame(name, P, X_PF, model_instance=None) or FixedOffsetFrame(name, bodyB=B, X_BF=X)
        (F fixed to the body frame of B), Drake's two constructors."""
        if bodyB is not None:
            if P is not None or X_PF is not None or model_instance is not None:
                raise TypeError(f"FixedOffsetFrame '{name}': pass either (P, X_PF[, model_instance]) or (bodyB, X_BF)")
            P, X_PF = bodyB.body_frame(), X_BF
        if not isinstance(P, Frame):
            raise TypeError(f"FixedOffsetFrame '{name}': the parent must be a Frame, got {type(P).__name__}")
        super().__init__(name, P.model_instance() if model_instance is None else model_instance)
        self._parent = P
        self._X_PF = RigidTransform() if X_PF is None else RigidTransform(X_PF)

    def parent_frame(self) -> Frame:
        return self._parent

    def body(self) -> "RigidBody":
        return self._parent.body()

    def GetFixedPoseInBodyFrame(self) -> RigidTransform:
        return self._parent.GetFixedPoseInBodyFrame() @ self._X_PF

    def GetFixedPoseInParentFrame(self) -> RigidTransform:
        return RigidTransform(self._X_PF)

    def GetPoseInParentFrame(self, context) -> RigidTransform:
        """X_PF in this context: the constructor's unless SetPoseInParentFrame changed it."""
        self.GetParentPlant()._check_context(context)
        X = context._parameters.get((self, "X_PF"))
        return RigidTransform(self._X_PF) if X is None else RigidTransform(X)

    def SetPoseInParentFrame(self, context, X_PF) -> None:
        """Sets X_PF in this context (Drake's frame parameter): the facade's kinematics in this context
        use it. Not for a frame the compiled model holds (a joint's frame, or a frame a joint's frame is
        offset from): RuntimeError."""
        plant = self.GetParentPlant()
        plant._check_context(context)
        held = plant._frames_held_by_joints()
        if self in held:
            raise RuntimeError(f"SetPoseInParentFrame: frame '{self.name()}' locates a joint, whose frames the "
                               "compiled model holds; give it its pose X_PF when constructing it")
        context._parameters[(self, "X_PF")] = RigidTransform(X_PF).GetAsMatrix4()

    def CalcPoseInBodyFrame(self, context) -> RigidTransform:
        """X_BF = X_BP(context) X_PF(context)."""
        if not context._parameters:
            return self.GetFixedPoseInBodyFrame()
        return self._parent.CalcPoseInBodyFrame(context) @ self.GetPoseInParentFrame(context)


class RigidBody(MultibodyElement):
    """A rigid body B with spatial inertia M_BBo_B and its body frame."""

    def __init__(self, name: str | None = None, model_instance: ModelInstanceIndex | None = None,
                 M_BBo_B: SpatialInertia | None = None, *, body_name: str | None = None):
        """RigidBody(body_name[, model_instance][, M_BBo_B]); ``name`` is accepted as well as Drake's
        ``body_name``. Without a model instance it is the default one once added to a plant."""
        if (name is None) == (body_name is None):
            raise TypeError("RigidBody takes the body's name once, as body_name (or name)")
        super().__init__(body_name if name is None else name, model_instance)
        self._M = as_spatial_inertia(M_BBo_B)
        self._frame = RigidBodyFrame(self)
        self._visuals = []
        self._collisions = []

    def body_frame(self) -> RigidBodyFrame:
        return self._frame

    def default_mass(self) -> float:
        return self._M.get_mass()

    def default_com(self) -> np.ndarray:
        return self._M.get_com()

    def default_unit_inertia(self):
        return self._M.get_unit_inertia()

    def default_rotational_inertia(self):
        return self._M.CalcRotationalInertia()

    def default_spatial_inertia(self) -> SpatialInertia:
        return self._M

    def is_world_body(self) -> bool:
        return self._index == 0

    def inboard_joint(self):
        """The joint whose child is this body (after Finalize), or None for the world."""
        return self.GetParentPlant()._inboard_joint_of(self)

    def is_floating_base_body(self) -> bool:
        j = self.inboard_joint()
        return j is not None and j.type_name() == "quaternion_floating" and j.parent_body().is_world_body()

    is_floating = is_floating_base_body

    def has_quaternion_dofs(self) -> bool:
        j = self.inboard_joint()
        return j is not None and j.type_name() == "quaternion_floating"

    def floating_positions_start(self) -> int:
        if not self.is_floating_base_body():
            raise RuntimeError(f"body '{self._name}' is not a floating base body")
        return self.inboard_joint().position_start()

    def floating_velocities_start_in_v(self) -> int:
        if not self.is_floating_base_body():
            raise RuntimeError(f"body '{self._name}' is not a floating base body")
        return self.inboard_joint().velocity_start()

    def floating_position_suffix(self, position_index_in_body: int) -> str:
        """'qw', 'qx', 'qy', 'qz', 'x', 'y', 'z': the name suffix of a floating base's k-th position."""
        return self._floating_suffix(("qw", "qx", "qy", "qz", "x", "y", "z"), position_index_in_body)

    def floating_velocity_suffix(self, velocity_index_in_body: int) -> str:
        return self._floating_suffix(("wx", "wy", "wz", "vx", "vy", "vz"), velocity_index_in_body)

    def _floating_suffix(self, names, k: int) -> str:
        if not self.is_floating_base_body():
            raise RuntimeError(f"body '{self._name}' is not a floating base body")
        if not 0 <= k < len(names):
            raise IndexError(f"index {k} is not in [0, {len(names)})")
        return names[k]

    # Mass properties are model parameters here (Drake keeps them in the context): these return the defaults.
    def get_mass(self, context) -> float:
        return self.default_mass()

    def CalcCenterOfMassInBodyFrame(self, context) -> np.ndarray:
        return self.default_com()

    def CalcSpatialInertiaInBodyFrame(self, context) -> SpatialInertia:
        return self._M

    def CalcCenterOfMassTranslationalVelocityInWorld(self, context) -> np.ndarray:
        """v_WBcm = v_WBo + w_WB × p_BoBcm_W."""
        V = self.EvalSpatialVelocityInWorld(context)
        p_BoBcm_W = self.EvalPoseInWorld(context).rotation().matrix() @ self.default_com()
        return V.translational() + np.cross(V.rotational(), p_BoBcm_W)

    def EvalSpatialAccelerationInWorld(self, context):
        """A_WB from the forward dynamics with zero actuation (gravity and damping act), as Drake with no
        actuation input."""
        plant = self.GetParentPlant()
        vdot = plant.CalcForwardDynamics(context, np.zeros(plant.num_velocities()))
        return plant.CalcSpatialAccelerationsFromVdot(context, vdot)[int(self._index)]

    def CalcCenterOfMassTranslationalAccelerationInWorld(self, context) -> np.ndarray:
        """a_WBcm = a_WBo + α_WB × r + w_WB × (w_WB × r), r = p_BoBcm_W."""
        A = self.EvalSpatialAccelerationInWorld(context)
        w = self.EvalSpatialVelocityInWorld(context).rotational()
        r = self.EvalPoseInWorld(context).rotation().matrix() @ self.default_com()
        return A.translational() + np.cross(A.rotational(), r) + np.cross(w, np.cross(w, r))

    def EvalPoseInWorld(self, context) -> RigidTransform:
        return self.GetParentPlant().EvalBodyPoseInWorld(context, self)

    def EvalSpatialVelocityInWorld(self, context):
        return self.GetParentPlant().EvalBodySpatialVelocityInWorld(context, self)

    def AddInForceInWorld(self, context, F_Bo_W: SpatialForce, forces) -> None:
        """Adds F_Bo_W (applied at Bo, expressed in W) to this body's entry of ``forces``."""
        forces._body_forces[int(self._index)] += F_Bo_W.get_coeffs()

    def AddInForce(self, context, p_BoBq_B, F_Bq_E: SpatialForce, frame_E: Frame, forces) -> None:
        """Adds F_Bq_E, applied at point Bq of B and expressed in frame E."""
        plant = self.GetParentPlant()
        R_WE = plant.CalcRelativeTransform(context, plant.world_frame(), frame_E).rotation().matrix()
        R_WB = plant.EvalBodyPoseInWorld(context, self).rotation().matrix()
        tau_W, f_W = R_WE @ F_Bq_E.rotational(), R_WE @ F_Bq_E.translational()
        p_BoBq_W = R_WB @ np.asarray(p_BoBq_B, float)
        forces._body_forces[int(self._index)] += np.r_[tau_W + np.cross(p_BoBq_W, f_W), f_W]

    def GetForceInWorld(self, context, forces) -> SpatialForce:
        return SpatialForce(forces._body_forces[int(self._index)])


class JointActuator(MultibodyElement):
    """An actuator applying a generalized force u to a single-dof joint."""

    def __init__(self, name: str, joint, effort_limit: float = np.inf):
        super().__init__(name, joint.model_instance())
        if joint.num_velocities() != 1:
            raise ValueError(f"actuator '{name}': joint '{joint.name()}' has {joint.num_velocities()} "
                             "dofs; actuators drive single-dof joints")
        if not effort_limit > 0:
            raise ValueError(f"actuator '{name}': effort limit must be positive, got {effort_limit}")
        self._joint = joint
        self._effort_limit = float(effort_limit)
        self._input_start = None
        self._rotor_inertia, self._gear_ratio = 0.0, 1.0

    def joint(self):
        return self._joint

    def effort_limit(self) -> float:
        return self._effort_limit

    def set_effort_limit(self, limit: float) -> None:
        self._effort_limit = float(limit)

    def default_rotor_inertia(self) -> float:
        return self._rotor_inertia

    def default_gear_ratio(self) -> float:
        return self._gear_ratio

    def default_reflected_inertia(self) -> float:
        """I_refl = ρ² I_r: what Drake adds to M's diagonal entry of the joint's velocity."""
        return self._gear_ratio ** 2 * self._rotor_inertia

    def set_default_rotor_inertia(self, rotor_inertia: float) -> None:
        self._set_reflection(rotor_inertia, self._gear_ratio)

    def set_default_gear_ratio(self, gear_ratio: float) -> None:
        self._set_reflection(self._rotor_inertia, gear_ratio)

    def _set_reflection(self, rotor_inertia: float, gear_ratio: float) -> None:
        """The kernels compile the default reflected inertia at Finalize, so it is a pre-Finalize setting
        here; after Finalize, set a context's own (SetRotorInertia, SetGearRatio), as Drake."""
        if self._plant is not None and self._plant.is_finalized():
            raise RuntimeError(f"actuator '{self.name()}': rotor inertia and gear ratio are set before "
                               "Finalize() here")
        self._rotor_inertia, self._gear_ratio = float(rotor_inertia), float(gear_ratio)

    def rotor_inertia(self, context) -> float:
        """I_r in this context (its parameter; the default unless SetRotorInertia set it)."""
        return float(context._parameters.get((self, "rotor_inertia"), self._rotor_inertia))

    def gear_ratio(self, context) -> float:
        """ρ in this context (its parameter; the default unless SetGearRatio set it)."""
        return float(context._parameters.get((self, "gear_ratio"), self._gear_ratio))

    def SetRotorInertia(self, context, rotor_inertia: float) -> None:
        """Sets this context's I_r: its dynamics (M and what uses it) carry ρ² I_r on the joint's diagonal."""
        self.GetParentPlant()._check_context(context)
        context._parameters[(self, "rotor_inertia")] = np.array(float(rotor_inertia))

    def SetGearRatio(self, context, gear_ratio: float) -> None:
        """Sets this context's ρ (see SetRotorInertia)."""
        self.GetParentPlant()._check_context(context)
        context._parameters[(self, "gear_ratio")] = np.array(float(gear_ratio))

    def input_start(self) -> int:
        return self._input_start

    def num_inputs(self) -> int:
        return 1

    def get_actuation_vector(self, u) -> np.ndarray:
        return np.asarray(u)[self._input_start:self._input_start + 1].copy()

    def set_actuation_vector(self, u_actuator, u) -> None:
        u[self._input_start:self._input_start + 1] = u_actuator


class ForceElement:
    """A force element of a plant (Drake's ForceElement): its index, model instance and plant. Gravity is
    the plant's element 0; the others (dynamics_cy.force_elements) add their forces in
    CalcAndAddForceContribution(context, forces) and give CalcPotentialEnergy, CalcConservativePower and
    CalcNonConservativePower, which the plant's methods of those names sum."""

    def __init__(self, model_instance: ModelInstanceIndex):
        self._model_instance = ModelInstanceIndex(int(model_instance))
        self._index = None
        self._plant = None

    def is_ephemeral(self) -> bool:
        """False: the plant adds no force element at Finalize()."""
        return False

    def index(self) -> ForceElementIndex:
        return self._index

    def model_instance(self) -> ModelInstanceIndex:
        return self._model_instance

    def GetParentPlant(self):
        if self._plant is None:
            raise RuntimeError(f"this {type(self).__name__} has not been added to a MultibodyPlant")
        return self._plant

    def _check_plant(self, plant) -> None:
        """Raises if the element refers to elements of another plant (AddForceElement calls it)."""

    def __repr__(self) -> str:
        index = "unset" if self._index is None else int(self._index)
        return f"<{type(self).__name__} index={index} model_instance={int(self._model_instance)}>"


class UniformGravityFieldElement(ForceElement):
    """Uniform gravity g_W, default [0, 0, -9.81] m/s^2: every plant's force element 0."""

    kDefaultStrength = 9.81

    def __init__(self, g_W=(0.0, 0.0, -9.81)):
        super().__init__(world_model_instance())
        self._g = np.array(g_W, dtype=float).reshape(3)

    def gravity_vector(self) -> np.ndarray:
        return self._g.copy()

    def set_gravity_vector(self, g_W) -> None:
        if self._plant is not None and self._plant.is_finalized():
            raise RuntimeError("Post-finalize calls to 'set_gravity_vector()' are not allowed; "
                               "calls to this method must happen before Finalize().")
        self._g = np.array(g_W, dtype=float).reshape(3)
