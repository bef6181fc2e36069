"""Joints with Drake's names and coordinates (seed 003).

A joint connects frame F on the parent body P to frame M on the child body B and gives X_FM(q)
and V_FM = H(q) v. Coordinates per type:

- RevoluteJoint:   q = θ, v = θ̇ about the axis â (same in F and M).
- PrismaticJoint:  q = d, v = ḋ along â.
- WeldJoint:       no coordinates, X_FM constant.
- BallRpyJoint:    q = [r, p, y] with R_FM = Rz(y) Ry(p) Rx(r); v = w_FM_F.
- PlanarJoint:     q = [x, y, θ] (translation in F's x-y plane, rotation about F's z); v = [ẋ, ẏ, θ̇].
- QuaternionFloatingJoint: q = [qw qx qy qz, x y z] (R_FM, p_FoMo_F); v = [w_FM_F; v_FMo_F].
- RpyFloatingJoint: q = [r p y, x y z] with R_FM = Rz(y) Ry(p) Rx(r); v = [w_FM_F; v_FMo_F].
- ScrewJoint:      q = θ about â with p_FoMo = (pitch θ/2π) â; v = θ̇.
- UniversalJoint:  q = [θ0, θ1] with R_FM = Rx(θ0) Ry(θ1); v = [θ̇0, θ̇1].

The multi-dof and screw joints' classes are in joints_more.py. Per-context values (the lock flag, the
damping) live in the context's parameters, as Drake keeps them.
"""
from __future__ import annotations

import numpy as np

from ._joints import JointType
from .spatial_math import Quaternion, RigidTransform, matrix_to_quaternion
from .tree import Frame, MultibodyElement

# Each class's code in the compiled joint table (_joints.pxd), where its kinematics live.
WELD, REVOLUTE, PRISMATIC, BALL_RPY, QUATERNION_FLOATING, PLANAR, RPY_FLOATING, SCREW, UNIVERSAL = (
    JointType.WELD, JointType.REVOLUTE, JointType.PRISMATIC, JointType.BALL_RPY, JointType.QUATERNION_FLOATING,
    JointType.PLANAR, JointType.RPY_FLOATING, JointType.SCREW, JointType.UNIVERSAL)


def _limits(value, n: int, what: str, joint: str) -> np.ndarray:
    a = np.array(np.broadcast_to(np.asarray(value, dtype=float), (n,)), dtype=float)
    if np.any(np.isnan(a)):
        raise ValueError(f"joint '{joint}': {what} contains NaN")
    return a


class Joint(MultibodyElement):
    """Base of all joints: frames, coordinate ranges, limits, damping and defaults."""

    _type_code = None
    kTypeName = None        # the type_name() of the class, as Drake's static kTypeName
    _nq = 0
    _nv = 0

    def __init__(self, name: str, frame_on_parent: Frame, frame_on_child: Frame,
                 damping=0.0, pos_lower=-np.inf, pos_upper=np.inf):
        for what, f in (("frame_on_parent", frame_on_parent), ("frame_on_child", frame_on_child)):
            if not isinstance(f, Frame):
                raise TypeError(f"joint '{name}': {what} must be a Frame, got {type(f).__name__}")
        if frame_on_parent.body() is frame_on_child.body():
            raise ValueError(f"joint '{name}' connects body '{frame_on_child.body().name()}' to itself")
        super().__init__(name, frame_on_child.model_instance())
        self._F = frame_on_parent
        self._M = frame_on_child
        self._damping = _limits(damping, self._nv, "damping", name)
        if np.any(self._damping < 0):
            raise ValueError(f"joint '{name}': damping must be non-negative, got {self._damping}")
        self._q_lower = _limits(pos_lower, self._nq, "lower position limit", name)
        self._q_upper = _limits(pos_upper, self._nq, "upper position limit", name)
        self._check_order(self._q_lower, self._q_upper, "position")
        self._v_lower = np.full(self._nv, -np.inf)
        self._v_upper = np.full(self._nv, np.inf)
        self._a_lower = np.full(self._nv, -np.inf)
        self._a_upper = np.full(self._nv, np.inf)
        self._q_default = self._zero_position()
        self._q_start = None
        self._v_start = None
        self._random_distribution = {}     # what set_random_*_distribution was given, by coordinate name

    def _check_order(self, lower, upper, what: str) -> None:
        if np.any(lower > upper):
            raise ValueError(f"joint '{self._name}': {what} lower limit {lower} exceeds upper limit {upper}")

    def _zero_position(self) -> np.ndarray:
        return np.zeros(self._nq)

    # --- identity and topology -------------------------------------------------------------
    def type_name(self) -> str:
        return self.kTypeName

    def frame_on_parent(self) -> Frame:
        return self._F

    def frame_on_child(self) -> Frame:
        return self._M

    def parent_body(self):
        return self._F.body()

    def child_body(self):
        return self._M.body()

    def num_positions(self) -> int:
        return self._nq

    def num_velocities(self) -> int:
        return self._nv

    def position_start(self) -> int:
        self.GetParentPlant()._throw_if_not_finalized("position_start")
        return self._q_start

    def velocity_start(self) -> int:
        self.GetParentPlant()._throw_if_not_finalized("velocity_start")
        return self._v_start

    def position_suffix(self, i: int) -> str:
        return self._position_suffixes[i]

    def velocity_suffix(self, i: int) -> str:
        return self._velocity_suffixes[i]

    def can_rotate(self) -> bool:
        return self._type_code in (REVOLUTE, BALL_RPY, QUATERNION_FLOATING, PLANAR, RPY_FLOATING, SCREW, UNIVERSAL)

    def can_translate(self) -> bool:
        return self._type_code in (PRISMATIC, QUATERNION_FLOATING, PLANAR, RPY_FLOATING, SCREW)

    # --- limits, damping, defaults ---------------------------------------------------------
    def position_lower_limits(self) -> np.ndarray:
        return self._q_lower.copy()

    def position_upper_limits(self) -> np.ndarray:
        return self._q_upper.copy()

    def velocity_lower_limits(self) -> np.ndarray:
        return self._v_lower.copy()

    def velocity_upper_limits(self) -> np.ndarray:
        return self._v_upper.copy()

    def acceleration_lower_limits(self) -> np.ndarray:
        return self._a_lower.copy()

    def acceleration_upper_limits(self) -> np.ndarray:
        return self._a_upper.copy()

    def _set_limits(self, attr_lo: str, attr_hi: str, n: int, lower, upper, what: str) -> None:
        """Before or after Finalize, as in Drake (the compiled model holds no limits; a simulator or
        planner reads them when it is built)."""
        lo, hi = _limits(lower, n, f"lower {what} limit", self._name), _limits(upper, n, f"upper {what} limit",
                                                                               self._name)
        self._check_order(lo, hi, what)
        setattr(self, attr_lo, lo)
        setattr(self, attr_hi, hi)

    def set_position_limits(self, lower_limits, upper_limits) -> None:
        self._set_limits("_q_lower", "_q_upper", self._nq, lower_limits, upper_limits, "position")

    def set_velocity_limits(self, lower_limits, upper_limits) -> None:
        self._set_limits("_v_lower", "_v_upper", self._nv, lower_limits, upper_limits, "velocity")

    def set_acceleration_limits(self, lower_limits, upper_limits) -> None:
        self._set_limits("_a_lower", "_a_upper", self._nv, lower_limits, upper_limits, "acceleration")

    def default_damping_vector(self) -> np.ndarray:
        return self._damping.copy()

    def set_default_damping_vector(self, damping) -> None:
        d = _limits(damping, self._nv, "damping", self._name)
        if np.any(d < 0):
            raise ValueError(f"joint '{self._name}': damping must be non-negative, got {d}")
        self._damping = d
        if self._plant is not None and self._plant.is_finalized():
            self._plant._refresh_damping()

    def default_positions(self) -> np.ndarray:
        return self._q_default.copy()

    def set_default_positions(self, default_positions) -> None:
        q = np.array(default_positions, dtype=float).reshape(-1)
        if q.shape != (self._nq,):
            raise ValueError(f"joint '{self._name}' has {self._nq} positions, got {q.shape[0]}")
        self._q_default = q

    # --- state access ----------------------------------------------------------------------
    def GetPositions(self, context) -> np.ndarray:
        s = self.position_start()
        return context._q[s:s + self._nq].copy()

    def SetPositions(self, context, positions) -> None:
        s = self.position_start()
        q = context.get_mutable_positions()
        q[s:s + self._nq] = positions

    def GetVelocities(self, context) -> np.ndarray:
        s = self.velocity_start()
        return context._v[s:s + self._nv].copy()

    def SetVelocities(self, context, velocities) -> None:
        s = self.velocity_start()
        v = context.get_mutable_velocities()
        v[s:s + self._nv] = velocities

    def GetOnePosition(self, context) -> float:
        """q of a joint with one position."""
        self._check_one("GetOnePosition", self._nq)
        return float(self.GetPositions(context)[0])

    def GetOneVelocity(self, context) -> float:
        """v of a joint with one velocity."""
        self._check_one("GetOneVelocity", self._nv)
        return float(self.GetVelocities(context)[0])

    def _check_one(self, what: str, n: int) -> None:
        if n != 1:
            raise RuntimeError(f"{what}: joint '{self._name}' ({self.kTypeName}) has {n} coordinates, not 1")

    def AddInOneForce(self, context, joint_dof: int, joint_tau: float, forces) -> None:
        """Adds the generalized force joint_tau on the joint's velocity joint_dof to forces."""
        plant = self.GetParentPlant()
        plant._check_context(context)
        if not 0 <= joint_dof < self._nv:
            raise IndexError(f"AddInOneForce: joint '{self._name}' has {self._nv} velocities; joint_dof = {joint_dof}")
        if not forces.CheckHasRightSizeForModel(plant):
            raise ValueError("AddInOneForce: the forces were made for a plant of another size")
        forces._tau[self.velocity_start() + joint_dof] += joint_tau

    def AddInDamping(self, context, forces) -> None:
        """Adds the joint's damping force τ = -d ∘ v_j (d = GetDampingVector(context)) to forces."""
        if not forces.CheckHasRightSizeForModel(self.GetParentPlant()):
            raise ValueError("AddInDamping: the forces were made for a plant of another size")
        s = self.velocity_start()
        forces._tau[s:s + self._nv] -= self.GetDampingVector(context) * context._v[s:s + self._nv]

    # --- per-context parameters ------------------------------------------------------------
    def _checked(self, context):
        self.GetParentPlant()._check_context(context)
        return context

    def Lock(self, context) -> None:
        """Locks the joint in this context and zeroes its velocities, as Drake. Drake's discrete solver
        then keeps v_j = 0; here the lock is only the context's flag: dynamics_cy's algorithms and the
        simulated plant (drivers.sim, which reads no context) do not lock joints."""
        self._checked(context)._parameters[(self, "locked")] = np.array(True)
        s = self.velocity_start()
        context._v[s:s + self._nv] = 0.0

    def Unlock(self, context) -> None:
        self._checked(context)._parameters.pop((self, "locked"), None)

    def is_locked(self, context) -> bool:
        return (self, "locked") in self._checked(context)._parameters

    def GetDampingVector(self, context) -> np.ndarray:
        """The damping d (nv) this context holds (default_damping_vector() unless set)."""
        return self._checked(context)._parameters.get((self, "damping"), self._damping).copy()

    def SetDampingVector(self, context, damping) -> None:
        """Sets this context's damping d (nv, d ≥ 0), which its dynamics use (-d ∘ v)."""
        d = np.array(damping, dtype=float).reshape(-1)
        if d.shape != (self._nv,) or np.any(np.isnan(d)):
            raise ValueError(f"joint '{self._name}' has {self._nv} velocities; got damping {damping!r}")
        if np.any(d < 0):
            raise ValueError(f"joint '{self._name}': damping must be non-negative, got {d}")
        self._checked(context)._parameters[(self, "damping")] = d

    # --- default pose (Drake implements it for the floating joints only) ----------------------
    def SetDefaultPose(self, X_FM: RigidTransform) -> None:
        self.SetDefaultPosePair(Quaternion(matrix_to_quaternion(X_FM.rotation().matrix())), X_FM.translation())

    def GetDefaultPose(self) -> RigidTransform:
        q_FM, p_FM = self.GetDefaultPosePair()
        return RigidTransform(Quaternion(q_FM).normalized(), p_FM)

    def SetDefaultPosePair(self, q_FM: Quaternion, p_FM) -> None:
        raise RuntimeError(f"SetDefaultPose(): not implemented for joint type {self.kTypeName}")

    def GetDefaultPosePair(self):
        raise RuntimeError(f"GetDefaultPose(): not implemented for joint type {self.kTypeName}")

    def _set_random(self, **distributions) -> None:
        """Keeps what a set_random_*_distribution was given (Drake takes symbolic expressions; any object
        is kept). The plant has no SetRandomContext, so nothing samples them."""
        self._random_distribution.update(distributions)

    # --- for the compiled model ------------------------------------------------------------
    def _axis(self) -> np.ndarray:
        return np.zeros(3)

    def _lead(self) -> float:
        """Translation along the axis per radian (a screw's pitch/2π); 0 for the others."""
        return 0.0

    def _X_FM_default(self) -> RigidTransform:
        """X_FM for a weld; identity for the others (their X_FM comes from q)."""
        return RigidTransform()


class _SingleAxisJoint(Joint):
    _nq = 1
    _nv = 1

    def __init__(self, name, frame_on_parent, frame_on_child, axis, pos_lower_limit=-np.inf,
                 pos_upper_limit=np.inf, damping=0.0):
        a = np.asarray(axis, dtype=float).reshape(-1)
        if a.shape != (3,) or not np.all(np.isfinite(a)) or np.linalg.norm(a) < 1e-12:
            raise ValueError(f"joint '{name}': the axis must be a finite non-zero 3-vector, got {axis!r}")
        self._unit_axis = a / np.linalg.norm(a)
        super().__init__(name, frame_on_parent, frame_on_child, damping, pos_lower_limit, pos_upper_limit)

    def _axis(self) -> np.ndarray:
        return self._unit_axis.copy()

    def position_lower_limit(self) -> float:
        return float(self._q_lower[0])

    def position_upper_limit(self) -> float:
        return float(self._q_upper[0])

    def velocity_lower_limit(self) -> float:
        return float(self._v_lower[0])

    def velocity_upper_limit(self) -> float:
        return float(self._v_upper[0])

    def acceleration_lower_limit(self) -> float:
        return float(self._a_lower[0])

    def acceleration_upper_limit(self) -> float:
        return float(self._a_upper[0])

    def default_damping(self) -> float:
        return float(self._damping[0])

    def set_default_damping(self, damping: float) -> None:
        self.set_default_damping_vector([damping])

    def GetDamping(self, context) -> float:
        return float(self.GetDampingVector(context)[0])

    def SetDamping(self, context, damping: float) -> None:
        self.SetDampingVector(context, [damping])


def _unlimited(damping=0.0):
    return -np.inf, np.inf, damping


def _limited(pos_lower_limit, pos_upper_limit, damping=0.0):
    return pos_lower_limit, pos_upper_limit, damping


class RevoluteJoint(_SingleAxisJoint):
    """Rotation θ about the unit axis â, fixed in both F and M.

    Drake's two constructors: ``(name, frame_on_parent, frame_on_child, axis, damping=0)`` and
    ``(name, frame_on_parent, frame_on_child, axis, pos_lower_limit, pos_upper_limit, damping=0)``;
    a 5th positional argument is the damping.
    """

    _type_code = REVOLUTE
    kTypeName = "revolute"
    _position_suffixes = ("q",)
    _velocity_suffixes = ("w",)

    def __init__(self, name, frame_on_parent, frame_on_child, axis, *args, **kwargs):
        for overload in (_unlimited, _limited):
            try:
                lower, upper, damping = overload(*args, **kwargs)
                break
            except TypeError:
                continue
        else:
            given = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
            raise TypeError("RevoluteJoint(): incompatible arguments after axis: (" + given + "); the supported "
                            "forms are (name, frame_on_parent, frame_on_child, axis, damping=0) and (name, "
                            "frame_on_parent, frame_on_child, axis, pos_lower_limit, pos_upper_limit, damping=0)")
        super().__init__(name, frame_on_parent, frame_on_child, axis, lower, upper, damping)

    def revolute_axis(self) -> np.ndarray:
        return self._axis()

    def get_angle(self, context) -> float:
        return float(self.GetPositions(context)[0])

    def set_angle(self, context, angle: float) -> None:
        self.SetPositions(context, [angle])

    def get_angular_rate(self, context) -> float:
        return float(self.GetVelocities(context)[0])

    def set_angular_rate(self, context, angle: float) -> None:
        """Sets θ̇ (Drake's binding names the argument `angle`)."""
        self.SetVelocities(context, [angle])

    def set_random_angle_distribution(self, angle) -> None:
        self._set_random(angle=angle)

    def get_default_angle(self) -> float:
        return float(self._q_default[0])

    def set_default_angle(self, angle: float) -> None:
        self.set_default_positions([angle])


class PrismaticJoint(_SingleAxisJoint):
    """Translation d along the unit axis â, fixed in both F and M."""

    _type_code = PRISMATIC
    kTypeName = "prismatic"
    _position_suffixes = ("x",)
    _velocity_suffixes = ("v",)

    def translation_axis(self) -> np.ndarray:
        return self._axis()

    def get_translation(self, context) -> float:
        return float(self.GetPositions(context)[0])

    def set_translation(self, context, translation: float) -> None:
        self.SetPositions(context, [translation])

    def get_translation_rate(self, context) -> float:
        return float(self.GetVelocities(context)[0])

    def set_translation_rate(self, context, translation_dot: float) -> None:
        self.SetVelocities(context, [translation_dot])

    def set_random_translation_distribution(self, translation) -> None:
        self._set_random(translation=translation)

    def get_default_translation(self) -> float:
        return float(self._q_default[0])

    def set_default_translation(self, translation: float) -> None:
        self.set_default_positions([translation])


class WeldJoint(Joint):
    """Fixes M to F with the constant pose X_FM."""

    _type_code = WELD
    kTypeName = "weld"
    _position_suffixes = ()
    _velocity_suffixes = ()

    def __init__(self, name: str, frame_on_parent_F: Frame, frame_on_child_M: Frame, X_FM: RigidTransform):
        super().__init__(name, frame_on_parent_F, frame_on_child_M)
        self._X_FM = RigidTransform(X_FM)

    def X_FM(self) -> RigidTransform:
        return RigidTransform(self._X_FM)

    def _X_FM_default(self) -> RigidTransform:
        return RigidTransform(self._X_FM)
