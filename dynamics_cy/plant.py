"""MultibodyPlant: the pydrake-compatible facade over the compiled tree.

Names, argument order, sign conventions and state ordering follow pydrake.multibody.plant (seed
000). The facade allocates; the control loop uses ``plant.kernels()`` instead.
"""
from __future__ import annotations

import numpy as np

from ._facade import Evaluator
from ._kernels import Kernels
from ._model import Model
from .constraints import PlantConstraints
from .errors import ModelError
from .geometry import CoulombFriction, GeometryInstance, Shape
from .inertia import SpatialInertia, as_spatial_inertia
from .joints import Joint, WeldJoint
from .plant_algorithms import PlantAlgorithms
from .plant_config import PlantConfig
from .plant_state import PlantStateAccess
from .spatial_math import RigidTransform
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


def _name_list(elements, plant) -> str:
    by_instance = {}
    for e in elements:
        by_instance.setdefault(int(e.model_instance()), []).append(e.name())
    return "; ".join(f"valid names in model instance '{plant._instance_names[i]}' are: {', '.join(sorted(n))}"
                     for i, n in sorted(by_instance.items()))


class MultibodyPlant(PlantStateAccess, PlantConfig, PlantConstraints, PlantAlgorithms):
    """A tree of rigid bodies connected by joints, with gravity, actuators and geometry."""

    def __init__(self, time_step: float = 0.0):
        if not (time_step >= 0 and np.isfinite(time_step)):
            raise ValueError(f"time_step must be >= 0, got {time_step}")
        self._time_step = float(time_step)
        self._instance_names = ["WorldModelInstance", "DefaultModelInstance"]
        self._bodies: list[RigidBody] = []
        self._frames: list[Frame] = []
        self._joints: list[Joint] = []                  # the plant's joints and actuators, in index order;
        self._actuators: list[JointActuator] = []       # by index (None once removed) in the slots:
        self._joint_slots: list[Joint | None] = []
        self._actuator_slots: list[JointActuator | None] = []
        self._geometries: list[GeometryInstance] = []
        self._gravity = UniformGravityFieldElement()
        self._default_free_body_poses: dict[int, RigidTransform] = {}
        self._finalized = False
        self._add_body(RigidBody("world", world_model_instance()))
        self._init_config()
        self._init_constraints()

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
        if callable(getattr(model_instance, "get_mass", None)):        # (name, M): ours or pydrake's
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
        M = as_spatial_inertia(M_BBo_B)
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
        return self._add_joint(joint)

    def _add_joint(self, joint: Joint) -> Joint:
        joint._index, joint._plant = JointIndex(len(self._joint_slots)), self
        self._joints.append(joint)
        self._joint_slots.append(joint)
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
        a._index, a._plant = JointActuatorIndex(len(self._actuator_slots)), self
        self._actuators.append(a)
        self._actuator_slots.append(a)
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
            j._ephemeral = True
            self._add_joint(j)
            if b in self._default_free_body_poses:
                j.SetDefaultPose(self._default_free_body_poses[b])
        inboard = inboard_joints(self._bodies, self._joints)
        nq = nv = 0
        for b in order[1:]:
            j = inboard[b]
            for frame in mobilizer_frames(self, j):
                frame._ephemeral = True
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
        self._finalize_constraints()

    def _joints_in_v_order(self) -> list[Joint]:
        return sorted(self._joints, key=lambda j: (j._v_start, j.num_velocities()))

    def _refresh_damping(self) -> None:
        self._damping = self._stack("GetDampingVector", False, Joint.default_damping_vector)

    def _frames_held_by_joints(self) -> set:
        """The frames whose poses the compiled joints hold: each joint's two frames and the frames they are
        offset from."""
        held = set()
        for j in self._joints:
            for f in (j.frame_on_parent(), j.frame_on_child()):
                while isinstance(f, FixedOffsetFrame) and f not in held:
                    held.add(f)
                    f = f.parent_frame()
        return held

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
        if elements[i] is None:
            raise RuntimeError(f"The {kind}({i}) has been removed")
        return elements[i]

    def get_body(self, body_index) -> RigidBody:
        return self._get(self._bodies, body_index, "BodyIndex")

    def get_joint(self, joint_index) -> Joint:
        return self._get(self._joint_slots, joint_index, "JointIndex")

    get_mutable_joint = get_joint

    def get_frame(self, frame_index) -> Frame:
        return self._get(self._frames, frame_index, "FrameIndex")

    def get_joint_actuator(self, actuator_index) -> JointActuator:
        return self._get(self._actuator_slots, actuator_index, "JointActuatorIndex")

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

    def GetFloatingBaseBodies(self) -> set:
        self._throw_if_not_finalized("GetFloatingBaseBodies")
        return {b.index() for b in self._bodies[1:] if b.is_floating_base_body()}
