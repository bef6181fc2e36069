"""MultibodyPlant: the pydrake-compatible facade over the compiled tree.

Names, argument order, sign conventions and state ordering follow pydrake.multibody.plant (seed
000). The facade allocates; the control loop uses ``plant.kernels()`` instead.
"""
from __future__ import annotations

import numpy as np

from ._facade import Evaluator
from ._kernels import Kernels
from ._model import Model
from .context import Context, MultibodyForces
from .errors import ModelError
from .geometry import CoulombFriction, GeometryInstance, Shape
from .inertia import SpatialInertia
from .joints import QUATERNION_FLOATING, Joint, WeldJoint
from .spatial_math import RigidTransform, SpatialAcceleration, SpatialMomentum, SpatialVelocity
from .topology import compile_arrays, floating_joint_for, inboard_joints, mobilizer_frames, plan_forest
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
    UniformGravityFieldElement,
    default_model_instance,
    world_model_instance,
)


class JacobianWrtVariable:
    """Whether a Jacobian is with respect to q̇ (kQDot) or v (kV)."""

    kQDot = "kQDot"
    kV = "kV"


def _name_list(elements, plant) -> str:
    by_instance = {}
    for e in elements:
        by_instance.setdefault(int(e.model_instance()), []).append(e.name())
    return "; ".join(f"valid names in model instance '{plant._instance_names[i]}' are: {', '.join(sorted(n))}"
                     for i, n in sorted(by_instance.items()))


class MultibodyPlant:
    """A tree of rigid bodies connected by joints, with gravity, actuators and geometry."""

    def __init__(self, time_step: float = 0.0):
        if not (time_step >= 0 and np.isfinite(time_step)):
            raise ValueError(f"time_step must be >= 0, got {time_step}")
        self._time_step = float(time_step)
        self._instance_names = ["WorldModelInstance", "DefaultModelInstance"]
        self._bodies: list[RigidBody] = []
        self._frames: list[Frame] = []
        self._joints: list[Joint] = []
        self._actuators: list[JointActuator] = []
        self._geometries: list[GeometryInstance] = []
        self._gravity = UniformGravityFieldElement()
        self._gravity._plant = self
        self._default_free_body_poses: dict[int, RigidTransform] = {}
        self._mimic: list[dict] = []
        self._finalized = False
        self._add_body(RigidBody("world", world_model_instance()))

    # ------------------------------------------------------------------------------------------
    # Finalize guards
    # ------------------------------------------------------------------------------------------
    def _throw_if_not_finalized(self, method: str) -> None:
        if not self._finalized:
            raise RuntimeError(f"Pre-finalize calls to '{method}()' are not allowed; "
                               "you must call Finalize() first.")

    def _throw_if_finalized(self, method: str) -> None:
        if self._finalized:
            raise RuntimeError(f"Post-finalize calls to '{method}()' are not allowed; "
                               "calls to this method must happen before Finalize().")

    def is_finalized(self) -> bool:
        return self._finalized

    def time_step(self) -> float:
        return self._time_step

    def is_discrete(self) -> bool:
        return self._time_step > 0

    # ------------------------------------------------------------------------------------------
    # Construction
    # ------------------------------------------------------------------------------------------
    def AddModelInstance(self, name: str) -> ModelInstanceIndex:
        self._throw_if_finalized("AddModelInstance")
        if name in self._instance_names:
            raise RuntimeError(f"This model already contains a model instance named '{name}'. "
                               "Model instance names must be unique within a given model.")
        self._instance_names.append(name)
        return ModelInstanceIndex(len(self._instance_names) - 1)

    def _check_instance(self, model_instance) -> ModelInstanceIndex:
        mi = int(model_instance)
        if not 0 <= mi < len(self._instance_names):
            raise RuntimeError(f"ModelInstanceIndex({mi}) is not a model instance of this plant")
        return ModelInstanceIndex(mi)

    def _add_body(self, body: RigidBody) -> RigidBody:
        body._index, body._plant = BodyIndex(len(self._bodies)), self
        self._bodies.append(body)
        self._add_frame(body.body_frame())
        return body

    def AddRigidBody(self, name: str, model_instance=None, M_BBo_B: SpatialInertia | None = None) -> RigidBody:
        """AddRigidBody(name[, model_instance], M_BBo_B): a new body in the model instance."""
        self._throw_if_finalized("AddRigidBody")
        if isinstance(model_instance, SpatialInertia):
            model_instance, M_BBo_B = None, model_instance
        if model_instance is None:
            if len(self._instance_names) > 2:
                raise RuntimeError("This model has more model instances than the default. Please call "
                                   "AddRigidBody with an explicit model instance.")
            model_instance = default_model_instance()
        mi = self._check_instance(model_instance)
        if self.HasBodyNamed(name, mi):
            raise RuntimeError(f"This model already contains a body named '{name}' in model instance "
                               f"'{self._instance_names[mi]}'. Body names must be unique within a given model.")
        M = SpatialInertia() if M_BBo_B is None else M_BBo_B
        if not (np.isfinite(M.get_mass()) and np.all(np.isfinite(M.get_com()))
                and np.all(np.isfinite(M.get_unit_inertia().CopyToFullMatrix3()))) or M.get_mass() < 0:
            raise ModelError(f"body '{name}': {M.physical_problem()}")
        return self._add_body(RigidBody(name, mi, M))

    def _add_frame(self, frame: Frame) -> Frame:
        frame._index, frame._plant = FrameIndex(len(self._frames)), self
        self._frames.append(frame)
        return frame

    def AddFrame(self, frame: Frame) -> Frame:
        self._throw_if_finalized("AddFrame")
        if not isinstance(frame, FixedOffsetFrame):
            raise TypeError(f"AddFrame takes a FixedOffsetFrame, got {type(frame).__name__}")
        if frame._plant is not None:
            raise RuntimeError(f"frame '{frame.name()}' already belongs to a plant")
        if frame.parent_frame()._plant is not self:
            raise RuntimeError(f"frame '{frame.name()}': its parent frame '{frame.parent_frame().name()}' "
                               "does not belong to this plant")
        if self.HasFrameNamed(frame.name(), frame.model_instance()):
            raise RuntimeError(f"This model already contains a frame named '{frame.name()}' in model instance "
                               f"'{self._instance_names[frame.model_instance()]}'.")
        return self._add_frame(frame)

    def AddJoint(self, joint: Joint) -> Joint:
        self._throw_if_finalized("AddJoint")
        if not isinstance(joint, Joint):
            raise TypeError(f"AddJoint takes a Joint, got {type(joint).__name__}")
        if joint._plant is not None:
            raise RuntimeError(f"joint '{joint.name()}' already belongs to a plant")
        for f in (joint.frame_on_parent(), joint.frame_on_child()):
            if f._plant is not self:
                raise RuntimeError(f"joint '{joint.name()}': frame '{f.name()}' does not belong to this plant; "
                                   "add it with AddFrame() first")
        if self.HasJointNamed(joint.name(), joint.model_instance()):
            raise RuntimeError(f"This model already contains a joint named '{joint.name()}' in model instance "
                               f"'{self._instance_names[joint.model_instance()]}'. Joint names must be unique "
                               "within a given model.")
        inboard_joints(self._bodies, self._joints + [joint])  # a second parent fails now, not at Finalize
        joint._index, joint._plant = JointIndex(len(self._joints)), self
        self._joints.append(joint)
        return joint

    def WeldFrames(self, frame_on_parent_F: Frame, frame_on_child_M: Frame,
                   X_FM: RigidTransform | None = None) -> WeldJoint:
        """A WeldJoint '<F>_welds_to_<M>'. If X_FM is not exactly the identity, Finalize adds the frame
        '<joint>_<F>_F' (pose X_FM in F, in the joint's model instance), as Drake does."""
        name = f"{frame_on_parent_F.name()}_welds_to_{frame_on_child_M.name()}"
        return self.AddJoint(WeldJoint(name, frame_on_parent_F, frame_on_child_M,
                                       RigidTransform() if X_FM is None else X_FM))

    def AddJointActuator(self, name: str, joint: Joint, effort_limit: float = np.inf) -> JointActuator:
        self._throw_if_finalized("AddJointActuator")
        if joint._plant is not self:
            raise RuntimeError(f"actuator '{name}': joint '{joint.name()}' does not belong to this plant")
        if any(a.name() == name and a.model_instance() == joint.model_instance() for a in self._actuators):
            raise RuntimeError(f"This model already contains a joint actuator named '{name}'.")
        if any(a.joint() is joint for a in self._actuators):
            raise RuntimeError(f"joint '{joint.name()}' already has an actuator")
        a = JointActuator(name, joint, effort_limit)
        a._index, a._plant = JointActuatorIndex(len(self._actuators)), self
        self._actuators.append(a)
        return a

    def gravity_field(self) -> UniformGravityFieldElement:
        return self._gravity

    def mutable_gravity_field(self) -> UniformGravityFieldElement:
        self._throw_if_finalized("mutable_gravity_field")
        return self._gravity

    def RegisterVisualGeometry(self, body: RigidBody, X_BG: RigidTransform, shape: Shape, name: str,
                               diffuse_color=(0.9, 0.9, 0.9, 1.0)) -> GeometryInstance:
        self._throw_if_finalized("RegisterVisualGeometry")
        rgba = np.array(diffuse_color, dtype=float).reshape(-1)
        if rgba.shape != (4,):
            raise ValueError(f"geometry '{name}': diffuse_color must be rgba (4 values), got {diffuse_color!r}")
        return self._register_geometry(GeometryInstance(int(body.index()), RigidTransform(X_BG), shape, name,
                                                        "visual", diffuse_color=rgba))

    def RegisterCollisionGeometry(self, body: RigidBody, X_BG: RigidTransform, shape: Shape, name: str,
                                  coulomb_friction: CoulombFriction | None = None) -> GeometryInstance:
        self._throw_if_finalized("RegisterCollisionGeometry")
        return self._register_geometry(GeometryInstance(int(body.index()), RigidTransform(X_BG), shape, name,
                                                        "collision", friction=coulomb_friction or CoulombFriction()))

    def _register_geometry(self, g: GeometryInstance) -> GeometryInstance:
        if not isinstance(g.shape, Shape):
            raise TypeError(f"geometry '{g.name}': shape must be a Shape, got {type(g.shape).__name__}")
        body = self._bodies[g.body_index]
        names = body._visuals if g.role == "visual" else body._collisions
        if any(x.name == g.name for x in names):
            raise RuntimeError(f"body '{body.name()}' already has a {g.role} geometry named '{g.name}'")
        names.append(g)
        self._geometries.append(g)
        return g

    def GetVisualGeometriesForBody(self, body: RigidBody) -> list[GeometryInstance]:
        return list(body._visuals)

    def GetCollisionGeometriesForBody(self, body: RigidBody) -> list[GeometryInstance]:
        return list(body._collisions)

    def num_visual_geometries(self) -> int:
        return sum(len(b._visuals) for b in self._bodies)

    def num_collision_geometries(self) -> int:
        return sum(len(b._collisions) for b in self._bodies)

    # ------------------------------------------------------------------------------------------
    # Finalize
    # ------------------------------------------------------------------------------------------
    def Finalize(self) -> None:
        """Builds the spanning forest, assigns coordinates and compiles the model."""
        if self._finalized:
            raise RuntimeError("MultibodyTreeSystem::Finalize(): repeated calls not allowed.")
        floating, order = plan_forest(self)
        for b in floating:
            j = floating_joint_for(self, self._bodies[b])
            j._index, j._plant = JointIndex(len(self._joints)), self
            self._joints.append(j)
            if b in self._default_free_body_poses:
                j.SetDefaultPose(self._default_free_body_poses[b])
        inboard = inboard_joints(self._bodies, self._joints)
        nq = nv = 0
        for b in order[1:]:
            j = inboard[b]
            for frame in mobilizer_frames(self, j):
                self._add_frame(frame)
            j._q_start, j._v_start = nq, nv
            nq, nv = nq + j.num_positions(), nv + j.num_velocities()
        self._nq, self._nv = nq, nv
        for k, a in enumerate(self._actuators):
            a._input_start = k
        self._inboard = inboard
        self._model = Model(compile_arrays(self, order, inboard))
        self._tree = Evaluator(self._model)
        self._ws_key = None
        self._body_poses = self._body_velocities = None
        self._finalized = True
        self._refresh_damping()

    def _joints_in_v_order(self) -> list[Joint]:
        return sorted(self._joints, key=lambda j: (j._v_start, j.num_velocities()))

    def _refresh_damping(self) -> None:
        self._damping = self._stack("GetDampingVector", False, Joint.default_damping_vector)

    def _inboard_joint_of(self, body: RigidBody):
        self._throw_if_not_finalized("inboard_joint")
        return self._inboard.get(int(body.index()))

    def kernels(self) -> Kernels:
        """A new allocation-free kernel object over the plant's one compiled model, with its own
        workspace (one per thread)."""
        self._throw_if_not_finalized("kernels")
        return Kernels(self._model, {f: int(f.index()) for f in self._frames})

    def compiled_model(self) -> Model:
        """The compiled model every kernels object of this plant shares (read-only to the algorithms;
        ``set_body_inertia`` changes a body's inertia, e.g. a payload, for all of them at once)."""
        self._throw_if_not_finalized("compiled_model")
        return self._model

    # ------------------------------------------------------------------------------------------
    # Sizes and element access
    # ------------------------------------------------------------------------------------------
    def _instance_filter(self, elements, model_instance):
        if model_instance is None:
            return list(elements)
        mi = self._check_instance(model_instance)
        return [e for e in elements if e.model_instance() == mi]

    def num_positions(self, model_instance=None) -> int:
        self._throw_if_not_finalized("num_positions")
        return sum(j.num_positions() for j in self._instance_filter(self._joints, model_instance))

    def num_velocities(self, model_instance=None) -> int:
        self._throw_if_not_finalized("num_velocities")
        return sum(j.num_velocities() for j in self._instance_filter(self._joints, model_instance))

    def num_multibody_states(self, model_instance=None) -> int:
        return self.num_positions(model_instance) + self.num_velocities(model_instance)

    def num_actuators(self, model_instance=None) -> int:
        return len(self._instance_filter(self._actuators, model_instance))

    def num_actuated_dofs(self, model_instance=None) -> int:
        return self.num_actuators(model_instance)

    def num_bodies(self) -> int:
        return len(self._bodies)

    def num_joints(self) -> int:
        return len(self._joints)

    def num_frames(self) -> int:
        return len(self._frames)

    def num_model_instances(self) -> int:
        return len(self._instance_names)

    def _get(self, elements, index, kind: str):
        i = int(index)
        if not 0 <= i < len(elements):
            raise RuntimeError(f"The given {kind}({i}) is out of bounds (must be less than {len(elements)})")
        return elements[i]

    def get_body(self, body_index) -> RigidBody:
        return self._get(self._bodies, body_index, "BodyIndex")

    def get_joint(self, joint_index) -> Joint:
        return self._get(self._joints, joint_index, "JointIndex")

    get_mutable_joint = get_joint

    def get_frame(self, frame_index) -> Frame:
        return self._get(self._frames, frame_index, "FrameIndex")

    def get_joint_actuator(self, actuator_index) -> JointActuator:
        return self._get(self._actuators, actuator_index, "JointActuatorIndex")

    def world_body(self) -> RigidBody:
        return self._bodies[0]

    def world_frame(self) -> Frame:
        return self._frames[0]

    def GetModelInstanceName(self, model_instance) -> str:
        return self._instance_names[self._check_instance(model_instance)]

    def GetModelInstanceByName(self, name: str) -> ModelInstanceIndex:
        if name not in self._instance_names:
            raise RuntimeError(f"GetModelInstanceByName(): There is no model instance named '{name}'. "
                               f"The current model instances are: {', '.join(self._instance_names)}")
        return ModelInstanceIndex(self._instance_names.index(name))

    def HasModelInstanceNamed(self, name: str) -> bool:
        return name in self._instance_names

    def _by_name(self, elements, name: str, model_instance, kind: str, method: str):
        found = [e for e in self._instance_filter(elements, model_instance) if e.name() == name]
        if len(found) == 1:
            return found[0]
        if not found:
            where = "anywhere in the model" if model_instance is None else \
                f"in model instance '{self._instance_names[int(model_instance)]}'"
            names = _name_list(self._instance_filter(elements, model_instance), self)
            raise RuntimeError(f"{method}(): There is no {kind} named '{name}' {where} ({names})")
        raise RuntimeError(f"{method}(): A {kind} named '{name}' appears in multiple model instances "
                           f"({', '.join(self._instance_names[e.model_instance()] for e in found)}); "
                           "pass the model instance to choose one")

    def GetBodyByName(self, name: str, model_instance=None) -> RigidBody:
        return self._by_name(self._bodies, name, model_instance, "RigidBody", "GetRigidBodyByName")

    GetRigidBodyByName = GetBodyByName

    def GetFrameByName(self, name: str, model_instance=None) -> Frame:
        return self._by_name(self._frames, name, model_instance, "Frame", "GetFrameByName")

    def GetJointByName(self, name: str, model_instance=None) -> Joint:
        return self._by_name(self._joints, name, model_instance, "Joint", "GetJointByName")

    GetMutableJointByName = GetJointByName

    def GetJointActuatorByName(self, name: str, model_instance=None) -> JointActuator:
        return self._by_name(self._actuators, name, model_instance, "JointActuator", "GetJointActuatorByName")

    def HasBodyNamed(self, name: str, model_instance=None) -> bool:
        return any(b.name() == name for b in self._instance_filter(self._bodies, model_instance))

    def HasFrameNamed(self, name: str, model_instance=None) -> bool:
        return any(f.name() == name for f in self._instance_filter(self._frames, model_instance))

    def HasJointNamed(self, name: str, model_instance=None) -> bool:
        return any(j.name() == name for j in self._instance_filter(self._joints, model_instance))

    def HasJointActuatorNamed(self, name: str, model_instance=None) -> bool:
        return any(a.name() == name for a in self._instance_filter(self._actuators, model_instance))

    def GetBodyIndices(self, model_instance) -> list[BodyIndex]:
        return [b.index() for b in self._instance_filter(self._bodies, model_instance)]

    def GetJointIndices(self, model_instance=None) -> list[JointIndex]:
        return [j.index() for j in self._instance_filter(self._joints, model_instance)]

    def GetFrameIndices(self, model_instance) -> list[FrameIndex]:
        return [f.index() for f in self._instance_filter(self._frames, model_instance)]

    def GetJointActuatorIndices(self, model_instance=None) -> list[JointActuatorIndex]:
        return [a.index() for a in self._instance_filter(self._actuators, model_instance)]

    def GetMimicJoints(self) -> list[dict]:
        """The URDF <mimic> relations parsed into this plant (recorded, not enforced)."""
        return [dict(m) for m in self._mimic]

    def GetFloatingBaseBodies(self) -> set:
        self._throw_if_not_finalized("GetFloatingBaseBodies")
        return {b.index() for b in self._bodies[1:] if b.is_floating_base_body()}

    # ------------------------------------------------------------------------------------------
    # State
    # ------------------------------------------------------------------------------------------
    def GetDefaultPositions(self) -> np.ndarray:
        self._throw_if_not_finalized("GetDefaultPositions")
        q = np.zeros(self._nq)
        for j in self._joints:
            q[j._q_start:j._q_start + j.num_positions()] = j.default_positions()
        return q

    def SetDefaultPositions(self, q) -> None:
        q = self._vector(q, self._nq, "q")
        for j in self._joints:
            j.set_default_positions(q[j._q_start:j._q_start + j.num_positions()])

    def CreateDefaultContext(self) -> Context:
        if not self._finalized:
            raise RuntimeError("MultibodyPlant cannot SetDefaultParameters or CreateDefaultContext until after "
                               "MultibodyPlant::Finalize() has been called.")
        return Context(self, self.GetDefaultPositions(), np.zeros(self._nv))

    def SetDefaultState(self, context: Context, state=None) -> None:
        context._x[:] = np.r_[self.GetDefaultPositions(), np.zeros(self._nv)]

    def _check_context(self, context: Context) -> None:
        if not isinstance(context, Context) or context._plant is not self:
            raise RuntimeError("the context was not created by this plant (use plant.CreateDefaultContext())")

    @staticmethod
    def _vector(value, n: int, what: str) -> np.ndarray:
        a = np.asarray(value, dtype=float).reshape(-1)
        if a.shape != (n,):
            raise ValueError(f"{what} has {a.shape[0]} elements; expected {n}")
        return a

    def _q_index(self, model_instance) -> np.ndarray:
        return np.array([i for j in self._instance_filter(self._joints_in_v_order(), model_instance)
                         for i in range(j._q_start, j._q_start + j.num_positions())], dtype=int)

    def _v_index(self, model_instance) -> np.ndarray:
        return np.array([i for j in self._instance_filter(self._joints_in_v_order(), model_instance)
                         for i in range(j._v_start, j._v_start + j.num_velocities())], dtype=int)

    def GetPositions(self, context: Context, model_instance=None) -> np.ndarray:
        self._check_context(context)
        return context._q.copy() if model_instance is None else context._q[self._q_index(model_instance)]

    def GetVelocities(self, context: Context, model_instance=None) -> np.ndarray:
        self._check_context(context)
        return context._v.copy() if model_instance is None else context._v[self._v_index(model_instance)]

    def GetPositionsAndVelocities(self, context: Context, model_instance=None) -> np.ndarray:
        return np.r_[self.GetPositions(context, model_instance), self.GetVelocities(context, model_instance)]

    def GetMutablePositions(self, context: Context) -> np.ndarray:
        self._check_context(context)
        return context.get_mutable_positions()

    def GetMutableVelocities(self, context: Context) -> np.ndarray:
        self._check_context(context)
        return context.get_mutable_velocities()

    def GetMutablePositionsAndVelocities(self, context: Context) -> np.ndarray:
        self._check_context(context)
        return context.get_mutable_state_vector()

    def SetPositions(self, context: Context, *args) -> None:
        """SetPositions(context, q) or SetPositions(context, model_instance, q_instance)."""
        self._check_context(context)
        if len(args) == 1:
            context._q[:] = self._vector(args[0], self._nq, "q")
        else:
            idx = self._q_index(args[0])
            context._q[idx] = self._vector(args[1], idx.size, "q of the model instance")

    def SetVelocities(self, context: Context, *args) -> None:
        """SetVelocities(context, v) or SetVelocities(context, model_instance, v_instance)."""
        self._check_context(context)
        if len(args) == 1:
            context._v[:] = self._vector(args[0], self._nv, "v")
        else:
            idx = self._v_index(args[0])
            context._v[idx] = self._vector(args[1], idx.size, "v of the model instance")

    def SetPositionsAndVelocities(self, context: Context, *args) -> None:
        self._check_context(context)
        if len(args) == 1:
            context._x[:] = self._vector(args[0], self._nq + self._nv, "[q; v]")
        else:
            nqi = self._q_index(args[0]).size
            x = np.asarray(args[1], dtype=float).reshape(-1)
            self.SetPositions(context, args[0], x[:nqi])
            self.SetVelocities(context, args[0], x[nqi:])

    def GetPositionsFromArray(self, model_instance, q) -> np.ndarray:
        return self._vector(q, self._nq, "q")[self._q_index(model_instance)]

    def GetVelocitiesFromArray(self, model_instance, v) -> np.ndarray:
        return self._vector(v, self._nv, "v")[self._v_index(model_instance)]

    def SetPositionsInArray(self, model_instance, q_instance, q) -> None:
        idx = self._q_index(model_instance)
        q[idx] = self._vector(q_instance, idx.size, "q of the model instance")

    def SetVelocitiesInArray(self, model_instance, v_instance, v) -> None:
        idx = self._v_index(model_instance)
        v[idx] = self._vector(v_instance, idx.size, "v of the model instance")

    def GetActuationFromArray(self, model_instance, u) -> np.ndarray:
        u = self._vector(u, len(self._actuators), "u")
        return u[[a.input_start() for a in self._instance_filter(self._actuators, model_instance)]]

    def SetActuationInArray(self, model_instance, u_instance, u) -> None:
        idx = [a.input_start() for a in self._instance_filter(self._actuators, model_instance)]
        u[idx] = self._vector(u_instance, len(idx), "u of the model instance")

    def SetFreeBodyPose(self, context: Context, body: RigidBody, X_WB: RigidTransform) -> None:
        j = self._free_joint(body, "SetFreeBodyPose")
        j.SetPose(context, X_WB)

    def GetFreeBodyPose(self, context: Context, body: RigidBody) -> RigidTransform:
        return self._free_joint(body, "GetFreeBodyPose").get_pose(context)

    def SetFreeBodySpatialVelocity(self, body: RigidBody, V_WB: SpatialVelocity, context: Context) -> None:
        j = self._free_joint(body, "SetFreeBodySpatialVelocity")
        j.SetVelocities(context, V_WB.get_coeffs())

    def SetDefaultFreeBodyPose(self, body: RigidBody, X_WB: RigidTransform) -> None:
        """The pose a free body starts at in new contexts (before or after Finalize)."""
        if self._finalized:
            self._free_joint(body, "SetDefaultFreeBodyPose").SetDefaultPose(X_WB)
        else:
            self._default_free_body_poses[int(body.index())] = RigidTransform(X_WB)

    def GetDefaultFreeBodyPose(self, body: RigidBody) -> RigidTransform:
        return self._free_joint(body, "GetDefaultFreeBodyPose").get_default_pose()

    def _free_joint(self, body: RigidBody, method: str):
        self._throw_if_not_finalized(method)
        j = self._inboard.get(int(body.index()))
        if j is None or j._type_code != QUATERNION_FLOATING or not j.parent_body().is_world_body():
            raise RuntimeError(f"{method}(): body '{body.name()}' is not a free body")
        return j

    # ------------------------------------------------------------------------------------------
    # Limits and maps
    # ------------------------------------------------------------------------------------------
    def _stack(self, method: str, in_q: bool, getter) -> np.ndarray:
        """Per-joint vectors stacked in q order (in_q) or v order."""
        self._throw_if_not_finalized(method)
        out = np.empty(self._nq if in_q else self._nv)
        for j in self._joints:
            start, count = (j._q_start, j.num_positions()) if in_q else (j._v_start, j.num_velocities())
            out[start:start + count] = getter(j)
        return out

    def GetPositionLowerLimits(self) -> np.ndarray:
        return self._stack("GetPositionLowerLimits", True, Joint.position_lower_limits)

    def GetPositionUpperLimits(self) -> np.ndarray:
        return self._stack("GetPositionUpperLimits", True, Joint.position_upper_limits)

    def GetVelocityLowerLimits(self) -> np.ndarray:
        return self._stack("GetVelocityLowerLimits", False, Joint.velocity_lower_limits)

    def GetVelocityUpperLimits(self) -> np.ndarray:
        return self._stack("GetVelocityUpperLimits", False, Joint.velocity_upper_limits)

    def GetAccelerationLowerLimits(self) -> np.ndarray:
        return self._stack("GetAccelerationLowerLimits", False, Joint.acceleration_lower_limits)

    def GetAccelerationUpperLimits(self) -> np.ndarray:
        return self._stack("GetAccelerationUpperLimits", False, Joint.acceleration_upper_limits)

    def GetEffortLowerLimits(self) -> np.ndarray:
        return -self.GetEffortUpperLimits()

    def GetEffortUpperLimits(self) -> np.ndarray:
        self._throw_if_not_finalized("GetEffortUpperLimits")
        return np.array([a.effort_limit() for a in self._actuators])

    def GetDampingVector(self) -> np.ndarray:
        """Joint damping coefficients d (nv), so that the damping force is -d ∘ v."""
        self._throw_if_not_finalized("GetDampingVector")
        return self._damping.copy()

    def MakeActuationMatrix(self) -> np.ndarray:
        """B (nv x nu) with τ_actuation = B u."""
        B = np.zeros((self.num_velocities(), len(self._actuators)))
        for a in self._actuators:
            B[a.joint()._v_start, a.input_start()] = 1.0
        return B

    def MapVelocityToQDot(self, context: Context, v) -> np.ndarray:
        self._check_context(context)
        return self._tree.map_velocity_to_qdot(context._q.copy(), self._vector(v, self._nv, "v").copy())

    def MakeVelocityToQDotMap(self, context: Context) -> np.ndarray:
        """N(q) (nq x nv) with q̇ = N v."""
        self._check_context(context)
        return np.column_stack([self.MapVelocityToQDot(context, e) for e in np.eye(self._nv)]) \
            if self._nv else np.zeros((self._nq, 0))

    def MakeQDotToVelocityMap(self, context: Context) -> np.ndarray:
        """N⁺(q) (nv x nq) with v = N⁺ q̇."""
        self._check_context(context)
        return self._tree.qdot_to_velocity_map(context._q)

    def MapQDotToVelocity(self, context: Context, qdot) -> np.ndarray:
        return self.MakeQDotToVelocityMap(context) @ self._vector(qdot, self._nq, "qdot")

    # ------------------------------------------------------------------------------------------
    # Kinematics
    # ------------------------------------------------------------------------------------------
    def _update(self, context: Context, with_v: bool = False) -> None:
        """Brings the facade workspace up to date with the context (cached on the state values)."""
        self._check_context(context)
        key, x = self._ws_key, context._x.tobytes()
        if key is not None and key[0] is context and (key[2] or not with_v) and key[1] == x:
            return
        self._tree.update(context._q, context._v if with_v else None)
        self._ws_key = (context, x, with_v)
        self._body_poses = self._body_velocities = None

    @property
    def _R_WB(self) -> np.ndarray:
        """R_WB of every body (nbodies, 3, 3) for the last _update(), computed on first use."""
        if self._body_poses is None:
            self._body_poses = self._tree.body_poses()
        return self._body_poses[0]

    @property
    def _p_WB(self) -> np.ndarray:
        self._R_WB  # noqa: B018 (computes both poses)
        return self._body_poses[1]

    @property
    def _V_WB(self) -> np.ndarray:
        """V_WB_W of every body (nbodies, 6) for the last _update(context, with_v=True)."""
        if self._body_velocities is None:
            self._body_velocities = self._tree.body_velocities()
        return self._body_velocities

    def _pose_of_body(self, b: int) -> RigidTransform:
        return RigidTransform._trusted(self._R_WB[b].copy(), self._p_WB[b].copy())

    def EvalBodyPoseInWorld(self, context: Context, body_B: RigidBody) -> RigidTransform:
        self._update(context)
        return self._pose_of_body(int(body_B.index()))

    def EvalBodySpatialVelocityInWorld(self, context: Context, body_B: RigidBody) -> SpatialVelocity:
        self._update(context, with_v=True)
        return SpatialVelocity(self._V_WB[int(body_B.index())])

    def _frame_pose_in_world(self, context: Context, frame: Frame) -> RigidTransform:
        if frame._plant is not self:
            raise RuntimeError(f"frame '{frame.name()}' does not belong to this plant")
        self._update(context)
        X = self._tree.frame_pose_world(frame._index)
        return RigidTransform._trusted(X[:3, :3], X[:3, 3])

    def CalcRelativeTransform(self, context: Context, frame_A: Frame, frame_B: Frame) -> RigidTransform:
        """X_AB."""
        X_WB = self._frame_pose_in_world(context, frame_B)
        return X_WB if frame_A._index == 0 else self._frame_pose_in_world(context, frame_A).inverse() @ X_WB

    def CalcPointsPositions(self, context: Context, frame_B: Frame, p_BQi, frame_A: Frame) -> np.ndarray:
        """p_AQi (3 x n) for points Qi given in frame B (3 x n or 3)."""
        p = np.asarray(p_BQi, dtype=float)
        pts = p.reshape(3, -1) if p.ndim == 2 else p.reshape(3, 1)
        return self.CalcRelativeTransform(context, frame_A, frame_B) @ pts

    def _frame_spatial_velocity_in_world(self, context: Context, frame: Frame) -> SpatialVelocity:
        self._update(context, with_v=True)
        V = self._V_WB[int(frame.body().index())]
        p_BoFo_W = self._pose_of_body(int(frame.body().index())).rotation() @ \
            frame.GetFixedPoseInBodyFrame().translation()
        return SpatialVelocity(V[:3], V[3:] + np.cross(V[:3], p_BoFo_W))

    def _frame_spatial_velocity(self, context: Context, frame_B: Frame, frame_M: Frame,
                                frame_E: Frame) -> SpatialVelocity:
        """V_MB_E: the spatial velocity of frame B measured in frame M, expressed in E."""
        V_WB = self._frame_spatial_velocity_in_world(context, frame_B).get_coeffs()
        V_WM = self._frame_spatial_velocity_in_world(context, frame_M).get_coeffs()
        p_MoBo_W = self._frame_pose_in_world(context, frame_B).translation() - \
            self._frame_pose_in_world(context, frame_M).translation()
        w = V_WB[:3] - V_WM[:3]
        v = V_WB[3:] - V_WM[3:] - np.cross(V_WM[:3], p_MoBo_W)
        R_EW = self._frame_pose_in_world(context, frame_E).rotation().inverse().matrix()
        return SpatialVelocity(R_EW @ w, R_EW @ v)

    def CalcSpatialAccelerationsFromVdot(self, context: Context, known_vdot) -> list[SpatialAcceleration]:
        """A_WB (expressed in W) of every body, by BodyIndex, for v̇ = known_vdot."""
        self._update(context, with_v=True)
        A = self._tree.body_accelerations(self._vector(known_vdot, self._nv, "known_vdot").copy())
        return [SpatialAcceleration(a) for a in A]

    # --- Jacobians -----------------------------------------------------------------------------
    def _point_jacobian(self, context: Context, body_index: int, p_WQ: np.ndarray) -> np.ndarray:
        self._update(context)
        return self._tree.point_jacobian_world(body_index, p_WQ)

    def _jacobian_wrt(self, J: np.ndarray, with_respect_to, context: Context) -> np.ndarray:
        if with_respect_to == JacobianWrtVariable.kV:
            return J
        if with_respect_to == JacobianWrtVariable.kQDot:
            return J @ self.MakeQDotToVelocityMap(context)
        raise ValueError(f"with_respect_to must be JacobianWrtVariable.kV or kQDot, got {with_respect_to!r}")

    def CalcJacobianSpatialVelocity(self, context: Context, with_respect_to, frame_B: Frame, p_BoBp_B,
                                    frame_A: Frame, frame_E: Frame) -> np.ndarray:
        """Js_V_ABp_E (6 x nv or 6 x nq): V_ABp_E = Js ṡ for the point Bp fixed in frame B."""
        X_WB = self._frame_pose_in_world(context, frame_B)
        p_WBp = X_WB @ np.asarray(p_BoBp_B, dtype=float).reshape(3)
        J = self._point_jacobian(context, int(frame_B.body().index()), p_WBp)
        if not frame_A.body().is_world_body():
            J = J - self._point_jacobian(context, int(frame_A.body().index()), p_WBp)
        if frame_E._index != 0:
            R_EW = self._frame_pose_in_world(context, frame_E).rotation().inverse().matrix()
            J = np.vstack([R_EW @ J[:3], R_EW @ J[3:]])
        return self._jacobian_wrt(J, with_respect_to, context)

    def CalcJacobianTranslationalVelocity(self, context: Context, with_respect_to, frame_B: Frame, p_BoBi_B,
                                          frame_A: Frame, frame_E: Frame) -> np.ndarray:
        """Js_v_ABi_E (3n x nv or 3n x nq) for n points Bi (3 x n, or 3) fixed in frame B."""
        pts = np.asarray(p_BoBi_B, dtype=float)
        pts = pts.reshape(3, -1) if pts.ndim == 2 else pts.reshape(3, 1)
        return np.vstack([self.CalcJacobianSpatialVelocity(context, with_respect_to, frame_B, pts[:, i],
                                                           frame_A, frame_E)[3:] for i in range(pts.shape[1])])

    def CalcJacobianAngularVelocity(self, context: Context, with_respect_to, frame_B: Frame, frame_A: Frame,
                                    frame_E: Frame) -> np.ndarray:
        """Js_w_AB_E (3 x nv or 3 x nq)."""
        return self.CalcJacobianSpatialVelocity(context, with_respect_to, frame_B, np.zeros(3), frame_A,
                                                frame_E)[:3]

    def CalcJacobianCenterOfMassTranslationalVelocity(self, context: Context, *args) -> np.ndarray:
        """(context[, model_instances], with_respect_to, frame_A, frame_E) -> Js_v_ACcm_E (3 x nv or nq),
        the Jacobian of the velocity of the centre of mass Ccm measured in A, expressed in E."""
        model_instances, (with_respect_to, frame_A, frame_E) = (None, args) if len(args) == 3 else \
            (args[0], args[1:])
        idx = self._bodies_of(model_instances)
        m = sum(self._bodies[i].default_mass() for i in idx)
        if not m > 0:
            raise RuntimeError("CalcJacobianCenterOfMassTranslationalVelocity(): the total mass must be "
                               "greater than zero")
        p_WCcm = self.CalcCenterOfMassPositionInWorld(context, model_instances)
        J = sum(self._bodies[i].default_mass() * self._point_jacobian(
            context, i, self._pose_of_body(i) @ self._bodies[i].default_com())[3:] for i in idx) / m
        if not frame_A.body().is_world_body():
            J = J - self._point_jacobian(context, int(frame_A.body().index()), p_WCcm)[3:]
        R_EW = self._frame_pose_in_world(context, frame_E).rotation().inverse().matrix()
        return self._jacobian_wrt(R_EW @ J, with_respect_to, context)

    def CalcCenterOfMassTranslationalVelocityInWorld(self, context: Context, model_instances=None) -> np.ndarray:
        """v_WCcm, the velocity of the centre of mass in W."""
        args = (JacobianWrtVariable.kV, self.world_frame(), self.world_frame())
        J = self.CalcJacobianCenterOfMassTranslationalVelocity(context, *((model_instances,) + args
                                                                          if model_instances else args))
        return J @ context._v

    def CalcBiasSpatialAcceleration(self, context: Context, with_respect_to, frame_B: Frame, p_BoBp_B,
                                    frame_A: Frame, frame_E: Frame) -> SpatialAcceleration:
        """AsBias_ABp_E = J̇s ṡ: the spatial acceleration of point Bp fixed in B when s̈ = 0.
        Measured in the world frame A = W (other frames A raise ValueError)."""
        if not frame_A.body().is_world_body() or not frame_A.is_body_frame():
            raise ValueError("CalcBiasSpatialAcceleration: only frame_A = world is supported")
        if with_respect_to != JacobianWrtVariable.kV:
            raise ValueError("CalcBiasSpatialAcceleration: only JacobianWrtVariable.kV is supported")
        b = int(frame_B.body().index())
        A = self.CalcSpatialAccelerationsFromVdot(context, np.zeros(self._nv))[b].get_coeffs()
        w = self._V_WB[b][:3]
        r = self._frame_pose_in_world(context, frame_B) @ np.asarray(p_BoBp_B, float).reshape(3) - self._p_WB[b]
        a = A[3:] + np.cross(A[:3], r) + np.cross(w, np.cross(w, r))
        R_EW = self._frame_pose_in_world(context, frame_E).rotation().inverse().matrix()
        return SpatialAcceleration(R_EW @ A[:3], R_EW @ a)

    def CalcBiasTranslationalAcceleration(self, context: Context, with_respect_to, frame_B: Frame, p_BoBi_B,
                                          frame_A: Frame, frame_E: Frame) -> np.ndarray:
        """aBias_ABi_E (3 x n) for n points Bi (3 x n) fixed in B, measured in A = W."""
        pts = np.asarray(p_BoBi_B, dtype=float)
        pts = pts.reshape(3, -1) if pts.ndim == 2 else pts.reshape(3, 1)
        return np.column_stack([self.CalcBiasSpatialAcceleration(context, with_respect_to, frame_B, pts[:, i],
                                                                 frame_A, frame_E).translational()
                                for i in range(pts.shape[1])])

    # ------------------------------------------------------------------------------------------
    # Dynamics
    # ------------------------------------------------------------------------------------------
    @staticmethod
    def _body_forces_or_none(forces: MultibodyForces) -> np.ndarray | None:
        return forces._body_forces if forces._body_forces.any() else None

    def CalcMassMatrix(self, context: Context) -> np.ndarray:
        self._update(context)
        return self._tree.mass_matrix()

    def CalcMassMatrixViaInverseDynamics(self, context: Context) -> np.ndarray:
        """M column by column: M e_i = ID(q, v = 0, v̇ = e_i) without gravity."""
        self._update(context)
        return np.column_stack([self._tree.inverse_dynamics(e, False, False) for e in np.eye(self._nv)]) \
            if self._nv else np.zeros((0, 0))

    def CalcBiasTerm(self, context: Context) -> np.ndarray:
        """C(q, v) v."""
        self._update(context, with_v=True)
        return self._tree.inverse_dynamics(None, True, False)

    def CalcGravityGeneralizedForces(self, context: Context) -> np.ndarray:
        """τ_g(q), the generalized force of gravity; gravity compensation is -τ_g."""
        self._update(context)
        return self._tree.gravity_forces()

    def CalcInverseDynamics(self, context: Context, known_vdot, external_forces: MultibodyForces) -> np.ndarray:
        """M v̇ + C v - τ_app - Σ J_Bᵀ F_app_Bo_W. Gravity counts only if the caller put it in the forces
        (CalcForceElementsContribution), as in Drake."""
        self._update(context, with_v=True)
        vdot = self._vector(known_vdot, self._nv, "known_vdot").copy()
        tau = self._tree.inverse_dynamics(vdot, True, False, self._body_forces_or_none(external_forces))
        return tau - external_forces._tau

    def CalcForceElementsContribution(self, context: Context, forces: MultibodyForces) -> None:
        """Overwrites forces with those of the force elements: gravity on every body (at its centre of
        mass) and joint damping -d ∘ v."""
        self._update(context)
        forces.SetZero()
        g = self._gravity.gravity_vector()
        for b, body in enumerate(self._bodies):
            m = body.default_mass()
            if m == 0:
                continue
            p_BoBcm_W = self._R_WB[b] @ body.default_com()
            forces._body_forces[b] = np.r_[np.cross(p_BoBcm_W, m * g), m * g]
        forces._tau[:] = -self._damping * context._v

    def CalcForwardDynamics(self, context: Context, tau) -> np.ndarray:
        """v̇ with CalcInverseDynamics(context, v̇, force elements) = tau: M v̇ = tau + τ_g - d∘v - C v.
        (Drake has no public method for this; it is the acceleration its continuous plant integrates.)"""
        self._update(context, with_v=True)
        tau = self._vector(tau, self._nv, "tau") - self._damping * context._v
        return self._tree.forward_dynamics(tau.copy(), True)

    # --- energy, momentum, centre of mass ------------------------------------------------------
    def CalcPotentialEnergy(self, context: Context) -> float:
        """V = -Σ m_B g · p_WBcm."""
        self._update(context)
        g = self._gravity.gravity_vector()
        return float(-sum(b.default_mass() * (g @ (self._pose_of_body(i) @ b.default_com()))
                          for i, b in enumerate(self._bodies) if b.default_mass() > 0))

    def CalcKineticEnergy(self, context: Context) -> float:
        """½ vᵀ M v."""
        v = context._v
        return float(0.5 * v @ self.CalcMassMatrix(context) @ v)

    def CalcConservativePower(self, context: Context) -> float:
        """Pc = -dV/dt = τ_g · v."""
        return float(self.CalcGravityGeneralizedForces(context) @ context._v)

    def CalcNonConservativePower(self, context: Context) -> float:
        """0.0, as Drake: the sum over force elements, and gravity is the only one. Joint damping is not a
        force element, so its power -vᵀ(d ∘ v) is not included (nor is actuation)."""
        self._check_context(context)
        return 0.0

    def _bodies_of(self, model_instances) -> list[int]:
        if model_instances is None:
            return list(range(1, len(self._bodies)))
        chosen = {int(self._check_instance(m)) for m in model_instances}
        return [i for i, b in enumerate(self._bodies) if i > 0 and int(b.model_instance()) in chosen]

    def CalcTotalMass(self, context: Context, model_instances=None) -> float:
        self._check_context(context)
        return float(sum(self._bodies[i].default_mass() for i in self._bodies_of(model_instances)))

    def CalcCenterOfMassPositionInWorld(self, context: Context, model_instances=None) -> np.ndarray:
        self._update(context)
        idx = self._bodies_of(model_instances)
        m = sum(self._bodies[i].default_mass() for i in idx)
        if not m > 0:
            raise RuntimeError("CalcCenterOfMassPositionInWorld(): the system's total mass must be greater "
                               "than zero")
        return sum(self._bodies[i].default_mass() * (self._pose_of_body(i) @ self._bodies[i].default_com())
                   for i in idx) / m

    def CalcSpatialMomentumInWorldAboutPoint(self, context: Context, *args) -> SpatialMomentum:
        """(context[, model_instances], p_WoP_W) -> L_WS_P_W, the spatial momentum about P."""
        model_instances, p_WoP_W = (None, args[0]) if len(args) == 1 else args
        self._update(context, with_v=True)
        p_P = np.asarray(p_WoP_W, dtype=float).reshape(3)
        L = np.zeros(6)
        for i in self._bodies_of(model_instances):
            body = self._bodies[i]
            m = body.default_mass()
            R, p_WBo, V = self._R_WB[i], self._p_WB[i], self._V_WB[i]
            c_W = R @ body.default_com()
            I_W = R @ body.default_rotational_inertia().CopyToFullMatrix3() @ R.T
            lin = m * (V[3:] + np.cross(V[:3], c_W))
            ang = I_W @ V[:3] + m * np.cross(c_W, V[3:])
            L += np.r_[ang + np.cross(p_WBo - p_P, lin), lin]
        return SpatialMomentum(L)

    def __repr__(self) -> str:
        state = f"nq={self._nq}, nv={self._nv}" if self._finalized else "not finalized"
        return f"<MultibodyPlant bodies={len(self._bodies)} joints={len(self._joints)} {state}>"

