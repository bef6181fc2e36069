"""Joints with Drake's names and coordinates (seed 003).

A joint connects frame F on the parent body P to frame M on the child body B and gives X_FM(q)
and V_FM = H(q) v. Coordinates per type:

- RevoluteJoint:   q = θ, v = θ̇ about the axis â (same in F and M).
- PrismaticJoint:  q = d, v = ḋ along â.
- WeldJoint:       no coordinates, X_FM constant.
- BallRpyJoint:    q = [r, p, y] with R_FM = Rz(y) Ry(p) Rx(r); v = w_FM_F.
- PlanarJoint:     q = [x, y, θ] (translation in F's x-y plane, rotation about F's z); v = [ẋ, ẏ, θ̇].
- QuaternionFloatingJoint: q = [qw qx qy qz, x y z] (R_FM, p_FoMo_F); v = [w_FM_F; v_FMo_F].
"""
from __future__ import annotations

import numpy as np

from ._joints import JointType
from .spatial_math import Quaternion, RigidTransform, RotationMatrix, matrix_to_quaternion
from .tree import Frame, MultibodyElement

# Each class's code in the compiled joint table (_joints.pxd), where its kinematics live.
WELD, REVOLUTE, PRISMATIC, BALL_RPY, QUATERNION_FLOATING, PLANAR = (
    JointType.WELD, JointType.REVOLUTE, JointType.PRISMATIC, JointType.BALL_RPY, JointType.QUATERNION_FLOATING,
    JointType.PLANAR)


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
        return self._type_code in (REVOLUTE, BALL_RPY, QUATERNION_FLOATING, PLANAR)

    def can_translate(self) -> bool:
        return self._type_code in (PRISMATIC, QUATERNION_FLOATING, PLANAR)

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

    # --- for the compiled model ------------------------------------------------------------
    def _axis(self) -> np.ndarray:
        return np.zeros(3)

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

    def set_angular_rate(self, context, rate: float) -> None:
        self.SetVelocities(context, [rate])

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

    def set_translation_rate(self, context, rate: float) -> None:
        self.SetVelocities(context, [rate])

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


class BallRpyJoint(Joint):
    """Three rotational dofs: q = roll-pitch-yaw of R_FM, v = w_FM_F."""

    _type_code = BALL_RPY
    kTypeName = "ball_rpy"
    _nq = 3
    _nv = 3
    _position_suffixes = ("qx", "qy", "qz")
    _velocity_suffixes = ("wx", "wy", "wz")

    def __init__(self, name: str, frame_on_parent: Frame, frame_on_child: Frame, damping: float = 0.0):
        super().__init__(name, frame_on_parent, frame_on_child, damping)

    def default_damping(self) -> float:
        return float(self._damping[0])

    def get_angles(self, context) -> np.ndarray:
        return self.GetPositions(context)

    def set_angles(self, context, angles) -> None:
        self.SetPositions(context, angles)

    def get_angular_velocity(self, context) -> np.ndarray:
        return self.GetVelocities(context)

    def set_angular_velocity(self, context, w_FM) -> None:
        self.SetVelocities(context, w_FM)

    def get_default_angles(self) -> np.ndarray:
        return self.default_positions()

    def set_default_angles(self, angles) -> None:
        self.set_default_positions(angles)


class PlanarJoint(Joint):
    """Translation [x, y] in F's x-y plane and rotation θ about F's z axis."""

    _type_code = PLANAR
    kTypeName = "planar"
    _nq = 3
    _nv = 3
    _position_suffixes = ("x", "y", "qz")
    _velocity_suffixes = ("vx", "vy", "wz")

    def __init__(self, name: str, frame_on_parent: Frame, frame_on_child: Frame, damping=(0.0, 0.0, 0.0)):
        super().__init__(name, frame_on_parent, frame_on_child, damping)

    def get_translation(self, context) -> np.ndarray:
        return self.GetPositions(context)[:2]

    def set_translation(self, context, p_FoMo_F) -> None:
        q = self.GetPositions(context)
        q[:2] = p_FoMo_F
        self.SetPositions(context, q)

    def get_rotation(self, context) -> float:
        return float(self.GetPositions(context)[2])

    def set_rotation(self, context, theta: float) -> None:
        q = self.GetPositions(context)
        q[2] = theta
        self.SetPositions(context, q)

    def set_pose(self, context, p_FoMo_F, theta: float) -> None:
        self.SetPositions(context, np.r_[np.asarray(p_FoMo_F, float)[:2], theta])


class QuaternionFloatingJoint(Joint):
    """Six dofs: q = [qw qx qy qz x y z] for (R_FM, p_FoMo_F), v = [w_FM_F; v_FMo_F]."""

    _type_code = QUATERNION_FLOATING
    kTypeName = "quaternion_floating"
    _nq = 7
    _nv = 6
    _position_suffixes = ("qw", "qx", "qy", "qz", "x", "y", "z")
    _velocity_suffixes = ("wx", "wy", "wz", "vx", "vy", "vz")

    def __init__(self, name: str, frame_on_parent: Frame, frame_on_child: Frame,
                 angular_damping: float = 0.0, translational_damping: float = 0.0):
        super().__init__(name, frame_on_parent, frame_on_child,
                         [angular_damping] * 3 + [translational_damping] * 3)

    def _zero_position(self) -> np.ndarray:
        return np.array([1.0, 0, 0, 0, 0, 0, 0])

    def default_angular_damping(self) -> float:
        return float(self._damping[0])

    def default_translational_damping(self) -> float:
        return float(self._damping[3])

    def get_quaternion(self, context) -> Quaternion:
        return Quaternion(self.GetPositions(context)[:4])

    def get_translation(self, context) -> np.ndarray:
        return self.GetPositions(context)[4:]

    def get_pose(self, context) -> RigidTransform:
        q = self.GetPositions(context)
        return RigidTransform(Quaternion(q[:4]).normalized(), q[4:])

    def set_quaternion(self, context, q_FM: Quaternion) -> None:
        q = self.GetPositions(context)
        q[:4] = q_FM.wxyz()
        self.SetPositions(context, q)

    def SetFromRotationMatrix(self, context, R_FM: RotationMatrix) -> None:
        self.set_quaternion(context, Quaternion(matrix_to_quaternion(R_FM.matrix())))

    def SetTranslation(self, context, p_FM) -> None:
        q = self.GetPositions(context)
        q[4:] = p_FM
        self.SetPositions(context, q)

    def SetPose(self, context, X_FM: RigidTransform) -> None:
        self.SetPositions(context, np.r_[matrix_to_quaternion(X_FM.rotation().matrix()), X_FM.translation()])

    def get_angular_velocity(self, context) -> np.ndarray:
        return self.GetVelocities(context)[:3]

    def get_translational_velocity(self, context) -> np.ndarray:
        return self.GetVelocities(context)[3:]

    def set_angular_velocity(self, context, w_FM) -> None:
        v = self.GetVelocities(context)
        v[:3] = w_FM
        self.SetVelocities(context, v)

    def set_translational_velocity(self, context, v_FM) -> None:
        v = self.GetVelocities(context)
        v[3:] = v_FM
        self.SetVelocities(context, v)

    def get_default_pose(self) -> RigidTransform:
        return RigidTransform(Quaternion(self._q_default[:4]).normalized(), self._q_default[4:])

    def SetDefaultPose(self, X_FM: RigidTransform) -> None:
        self.set_default_positions(np.r_[matrix_to_quaternion(X_FM.rotation().matrix()), X_FM.translation()])


JOINT_TYPES = {cls.kTypeName: cls for cls in
               (RevoluteJoint, PrismaticJoint, WeldJoint, BallRpyJoint, PlanarJoint, QuaternionFloatingJoint)}
