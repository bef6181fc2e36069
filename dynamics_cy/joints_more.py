"""The multi-dof and screw joints with Drake's names and coordinates (joints.py holds the base class,
the single-axis joints and the weld; the coordinates of every type are listed there).

- BallRpyJoint, PlanarJoint, UniversalJoint: rotations (and a planar translation), v = q̇ or w_FM_F.
- QuaternionFloatingJoint, RpyFloatingJoint: six dofs, v = [w_FM_F; v_FMo_F].
- ScrewJoint: one dof θ, rotating about â and translating (pitch θ/2π) â.
"""
from __future__ import annotations

import math

import numpy as np

from .joints import (
    BALL_RPY,
    PLANAR,
    QUATERNION_FLOATING,
    RPY_FLOATING,
    SCREW,
    UNIVERSAL,
    Joint,
    _limits,
    _SingleAxisJoint,
)
from .spatial_math import Quaternion, RigidTransform, RollPitchYaw, RotationMatrix, matrix_to_quaternion
from .tree import Frame


class _Coordinates:
    """Get/set helpers on slices of a joint's q and v, in its context or its defaults."""

    def _get_q(self, context, lo: int, hi: int) -> np.ndarray:
        return self.GetPositions(context)[lo:hi]

    def _set_q(self, context, lo: int, hi: int, value) -> None:
        q = self.GetPositions(context)
        q[lo:hi] = np.asarray(value, dtype=float).reshape(-1)
        self.SetPositions(context, q)

    def _set_v(self, context, lo: int, hi: int, value) -> None:
        v = self.GetVelocities(context)
        v[lo:hi] = np.asarray(value, dtype=float).reshape(-1)
        self.SetVelocities(context, v)

    def _set_default_q(self, lo: int, hi: int, value) -> None:
        q = self.default_positions()
        q[lo:hi] = np.asarray(value, dtype=float).reshape(-1)
        self.set_default_positions(q)


class _AnglesJoint(_Coordinates, Joint):
    """A rotational joint whose q are angles, with one damping constant for every velocity."""

    def __init__(self, name: str, frame_on_parent: Frame, frame_on_child: Frame, damping: float = 0.0):
        super().__init__(name, frame_on_parent, frame_on_child, damping)

    def default_damping(self) -> float:
        return float(self._damping[0])

    def get_angles(self, context) -> np.ndarray:
        return self.GetPositions(context)

    def set_angles(self, context, angles) -> None:
        self.SetPositions(context, angles)

    def get_default_angles(self) -> np.ndarray:
        return self.default_positions()

    def set_default_angles(self, angles) -> None:
        self.set_default_positions(angles)

    def set_random_angles_distribution(self, angles) -> None:
        self._set_random(angles=angles)


class BallRpyJoint(_AnglesJoint):
    """Three rotational dofs: q = roll-pitch-yaw of R_FM, v = w_FM_F."""

    _type_code = BALL_RPY
    kTypeName = "ball_rpy"
    _nq = 3
    _nv = 3
    _position_suffixes = ("qx", "qy", "qz")
    _velocity_suffixes = ("wx", "wy", "wz")

    def get_angular_velocity(self, context) -> np.ndarray:
        return self.GetVelocities(context)

    def set_angular_velocity(self, context, w_FM) -> None:
        self.SetVelocities(context, w_FM)


class PlanarJoint(_Coordinates, Joint):
    """Translation [x, y] in F's x-y plane and rotation θ about F's z axis."""

    _type_code = PLANAR
    kTypeName = "planar"
    _nq = 3
    _nv = 3
    _position_suffixes = ("x", "y", "qz")
    _velocity_suffixes = ("vx", "vy", "wz")

    def __init__(self, name: str, frame_on_parent: Frame, frame_on_child: Frame, damping=(0.0, 0.0, 0.0)):
        super().__init__(name, frame_on_parent, frame_on_child, damping)

    def default_damping(self) -> np.ndarray:
        """[translational x, translational y, rotational] damping, as Drake's PlanarJoint."""
        return self._damping.copy()

    def get_translation(self, context) -> np.ndarray:
        return self._get_q(context, 0, 2)

    def set_translation(self, context, p_FoMo_F) -> None:
        self._set_q(context, 0, 2, p_FoMo_F)

    def get_rotation(self, context) -> float:
        return float(self.GetPositions(context)[2])

    def set_rotation(self, context, theta: float) -> None:
        self._set_q(context, 2, 3, theta)

    def set_pose(self, context, p_FoMo_F, theta: float) -> None:
        self.SetPositions(context, np.r_[np.asarray(p_FoMo_F, float)[:2], theta])

    def get_translational_velocity(self, context) -> np.ndarray:
        return self.GetVelocities(context)[:2]

    def set_translational_velocity(self, context, v_FoMo_F) -> None:
        self._set_v(context, 0, 2, v_FoMo_F)

    def get_angular_velocity(self, context) -> float:
        return float(self.GetVelocities(context)[2])

    def set_angular_velocity(self, context, theta_dot: float) -> None:
        self._set_v(context, 2, 3, theta_dot)

    def get_default_translation(self) -> np.ndarray:
        return self._q_default[:2].copy()

    def set_default_translation(self, p_FoMo_F) -> None:
        self._set_default_q(0, 2, p_FoMo_F)

    def get_default_rotation(self) -> float:
        return float(self._q_default[2])

    def set_default_rotation(self, theta: float) -> None:
        self._set_default_q(2, 3, theta)

    def set_default_pose(self, p_FoMo_F, theta: float) -> None:
        self.set_default_positions(np.r_[np.asarray(p_FoMo_F, float)[:2], theta])

    def set_random_pose_distribution(self, p_FoMo_F, theta) -> None:
        self._set_random(p_FoMo_F=p_FoMo_F, theta=theta)


class UniversalJoint(_AnglesJoint):
    """Two rotations, θ0 about F's x then θ1 about the y of M: R_FM = Rx(θ0) Ry(θ1); v = [θ̇0, θ̇1]."""

    _type_code = UNIVERSAL
    kTypeName = "universal"
    _nq = 2
    _nv = 2
    _position_suffixes = ("qx", "qy")
    _velocity_suffixes = ("wx", "wy")

    def get_angular_rates(self, context) -> np.ndarray:
        return self.GetVelocities(context)

    def set_angular_rates(self, context, theta_dot) -> None:
        self.SetVelocities(context, theta_dot)


class ScrewJoint(_SingleAxisJoint):
    """Rotation θ about the unit axis â (the same in F and M) with the translation z = pitch θ/(2π)
    along it: X_FM = (R_â(θ), z â); v = θ̇. Drake's constructors: (name, frame_on_parent,
    frame_on_child, screw_pitch, damping) about z, and (name, frame_on_parent, frame_on_child, axis,
    screw_pitch, damping)."""

    _type_code = SCREW
    kTypeName = "screw"
    _position_suffixes = ("q",)
    _velocity_suffixes = ("w",)

    def __init__(self, name, frame_on_parent, frame_on_child, *args, **kwargs):
        names = ("axis", "screw_pitch", "damping") if len(args) == 3 or "axis" in kwargs else (
            "screw_pitch", "damping")
        if len(args) > len(names):
            raise TypeError(f"ScrewJoint(): too many arguments {args!r}")
        given = dict(zip(names, args), **kwargs)
        unknown = set(given) - set(names)
        if unknown or "screw_pitch" not in given or "damping" not in given:
            raise TypeError("ScrewJoint(): the forms are (name, frame_on_parent, frame_on_child, screw_pitch, "
                            "damping) and (name, frame_on_parent, frame_on_child, axis, screw_pitch, damping); got "
                            f"{sorted(given)}")
        self._pitch = float(given["screw_pitch"])
        super().__init__(name, frame_on_parent, frame_on_child, given.get("axis", (0.0, 0.0, 1.0)),
                         damping=given["damping"])

    def _lead(self) -> float:
        return self._pitch / (2 * math.pi)

    def screw_axis(self) -> np.ndarray:
        return self._axis()

    def screw_pitch(self) -> float:
        return self._pitch

    def _theta_of(self, z: float) -> float:
        if abs(self._pitch) < np.sqrt(np.finfo(float).eps):
            raise RuntimeError(f"joint '{self._name}': a screw of pitch {self._pitch} cannot be set by its "
                               "translation")
        return z / self._lead()

    def get_default_rotation(self) -> float:
        return float(self._q_default[0])

    def set_default_rotation(self, theta: float) -> None:
        self.set_default_positions([theta])

    def get_default_translation(self) -> float:
        return float(self._q_default[0]) * self._lead()

    def set_default_translation(self, z: float) -> None:
        self.set_default_positions([self._theta_of(z)])

    def get_rotation(self, context) -> float:
        return self.GetOnePosition(context)

    def set_rotation(self, context, theta: float) -> None:
        self.SetPositions(context, [theta])

    def get_translation(self, context) -> float:
        return self.GetOnePosition(context) * self._lead()

    def set_translation(self, context, translation: float) -> None:
        self.SetPositions(context, [self._theta_of(translation)])

    def get_angular_velocity(self, context) -> float:
        return self.GetOneVelocity(context)

    def set_angular_velocity(self, context, theta_dot: float) -> None:
        self.SetVelocities(context, [theta_dot])

    def get_translational_velocity(self, context) -> float:
        return self.GetOneVelocity(context) * self._lead()

    def set_translational_velocity(self, context, translation_dot: float) -> None:
        self.SetVelocities(context, [self._theta_of(translation_dot)])

    def set_random_pose_distribution(self, theta) -> None:
        self._set_random(theta=theta)


class _FloatingJoint(_Coordinates, Joint):
    """Six dofs with v = [w_FM_F; v_FMo_F]; the orientation's coordinates are the subclass's (q[:k])."""

    _nv = 6
    _velocity_suffixes = ("wx", "wy", "wz", "vx", "vy", "vz")

    def __init__(self, name: str, frame_on_parent: Frame, frame_on_child: Frame,
                 angular_damping: float = 0.0, translational_damping: float = 0.0):
        super().__init__(name, frame_on_parent, frame_on_child,
                         [angular_damping] * 3 + [translational_damping] * 3)

    def default_angular_damping(self) -> float:
        return float(self._damping[0])

    def default_translational_damping(self) -> float:
        return float(self._damping[3])

    def get_translation(self, context) -> np.ndarray:
        return self._get_q(context, self._nq - 3, self._nq)

    def SetTranslation(self, context, p_FM) -> None:
        self._set_q(context, self._nq - 3, self._nq, p_FM)

    def get_angular_velocity(self, context) -> np.ndarray:
        return self.GetVelocities(context)[:3]

    def get_translational_velocity(self, context) -> np.ndarray:
        return self.GetVelocities(context)[3:]

    def set_angular_velocity(self, context, w_FM) -> None:
        self._set_v(context, 0, 3, w_FM)

    def set_translational_velocity(self, context, v_FM) -> None:
        self._set_v(context, 3, 6, v_FM)

    def get_default_translation(self) -> np.ndarray:
        return self._q_default[-3:].copy()

    def GetPose(self, context) -> RigidTransform:
        return RigidTransform(self._rotation_of(self.GetPositions(context)), self.get_translation(context))

    def SetPose(self, context, X_FM) -> None:
        X = RigidTransform(X_FM)
        self.SetPositions(context, np.r_[self._coordinates_of(X.rotation()), X.translation()])

    def _set_orientation(self, context, R) -> None:
        self._set_q(context, 0, self._nq - 3, self._coordinates_of(RotationMatrix(R)))

    def SetDefaultPosePair(self, q_FM, p_FM) -> None:
        R = RotationMatrix(Quaternion(q_FM))
        self.set_default_positions(np.r_[self._coordinates_of(R), np.asarray(p_FM, dtype=float).reshape(3)])

    def GetDefaultPosePair(self):
        q = self._q_default
        return Quaternion(matrix_to_quaternion(self._rotation_of(q).matrix())), q[-3:].copy()


class QuaternionFloatingJoint(_FloatingJoint):
    """Six dofs: q = [qw qx qy qz x y z] for (R_FM, p_FoMo_F), v = [w_FM_F; v_FMo_F]."""

    _type_code = QUATERNION_FLOATING
    kTypeName = "quaternion_floating"
    _nq = 7
    _position_suffixes = ("qw", "qx", "qy", "qz", "x", "y", "z")

    def _zero_position(self) -> np.ndarray:
        return np.array([1.0, 0, 0, 0, 0, 0, 0])

    @staticmethod
    def _rotation_of(q) -> RotationMatrix:
        return RotationMatrix(Quaternion(q[:4]).normalized())

    @staticmethod
    def _coordinates_of(R: RotationMatrix) -> np.ndarray:
        return matrix_to_quaternion(R.matrix())

    def get_quaternion(self, context) -> Quaternion:
        return Quaternion(self.GetPositions(context)[:4])

    def SetOrientation(self, context, R) -> None:
        self._set_orientation(context, R)

    def SetQuaternion(self, context, q_FM) -> None:
        self._set_q(context, 0, 4, Quaternion(q_FM).wxyz())

    def SetDefaultPosePair(self, q_FM, p_FM) -> None:
        """Stores q_FM as given (bit-identical), as Drake."""
        self.set_default_positions(np.r_[Quaternion(q_FM).wxyz(), np.asarray(p_FM, dtype=float).reshape(3)])

    def GetDefaultPosePair(self):
        return Quaternion(self._q_default[:4]), self._q_default[4:].copy()

    def get_default_quaternion(self) -> Quaternion:
        return Quaternion(self._q_default[:4])

    def set_default_quaternion(self, q_FM) -> None:
        self._set_default_q(0, 4, Quaternion(q_FM).wxyz())

    def set_default_translation(self, translation) -> None:
        self._set_default_q(4, 7, translation)

    def set_random_translation_distribution(self, translation) -> None:
        self._set_random(translation=translation)

    def set_random_quaternion_distribution(self, q_FM) -> None:
        self._set_random(q_FM=q_FM)

    def set_random_quaternion_distribution_to_uniform(self) -> None:
        self._set_random(q_FM="uniform")


class RpyFloatingJoint(_FloatingJoint):
    """Six dofs: q = [r p y x y z] with R_FM = Rz(y) Ry(p) Rx(r) and p_FoMo_F = [x y z]; v = [w_FM_F;
    v_FMo_F]. N(q) is singular at |p| = π/2 (MapVelocityToQDot raises there)."""

    _type_code = RPY_FLOATING
    kTypeName = "rpy_floating"
    _nq = 6
    _position_suffixes = ("qx", "qy", "qz", "x", "y", "z")

    @staticmethod
    def _rotation_of(q) -> RotationMatrix:
        return RotationMatrix(RollPitchYaw(q[:3]))

    @staticmethod
    def _coordinates_of(R: RotationMatrix) -> np.ndarray:
        return RollPitchYaw(R).vector()

    def SetOrientation(self, context, R_FM) -> None:
        self._set_orientation(context, R_FM)

    def get_angles(self, context) -> np.ndarray:
        return self._get_q(context, 0, 3)

    def set_angles(self, context, angles) -> None:
        self._set_q(context, 0, 3, angles)

    def get_default_angles(self) -> np.ndarray:
        return self._q_default[:3].copy()

    def set_default_angles(self, angles) -> None:
        self._set_default_q(0, 3, _limits(angles, 3, "angles", self._name))

    def set_default_translation(self, p_FM) -> None:
        self._set_default_q(3, 6, p_FM)

    def set_random_angles_distribution(self, angles) -> None:
        self._set_random(angles=angles)

    def set_random_translation_distribution(self, p_FM) -> None:
        self._set_random(p_FM=p_FM)
