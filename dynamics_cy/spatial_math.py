"""Rotations, rigid transforms and spatial vectors with Drake's names and conventions.

RotationMatrix ``R_AB`` maps vectors expressed in B to A: ``v_A = R_AB v_B``.
RollPitchYaw ``[r, p, y]`` is the space-fixed X-Y-Z sequence: ``R = Rz(y) Ry(p) Rx(r)``.
Quaternion coefficients are ``[w, x, y, z]``. RigidTransform ``X_AB = (R_AB, p_AoBo_A)``.
Spatial vectors are ``[angular; linear]`` (``V_WB = [w_WB; v_WBo]``).
"""
from __future__ import annotations

import math

import numpy as np


def _vec3(value, what: str) -> np.ndarray:
    a = np.asarray(value, dtype=float).reshape(-1)
    if a.shape != (3,):
        raise ValueError(f"{what} must have 3 elements, got shape {np.shape(value)}")
    return a


def _call(value, name: str):
    """value.name() for another library's value type (pydrake's), else None (arrays, lists, numbers)."""
    method = getattr(value, name, None)
    return method() if callable(method) and not isinstance(value, np.ndarray) else None


_ROTATION_METHODS = ("matrix", "ToRotationMatrix", "wxyz")


def _is_rotation(value) -> bool:
    """Another library's rotation, roll-pitch-yaw or quaternion (what matrix3 converts), not a pose."""
    return not isinstance(value, np.ndarray) and not hasattr(value, "GetAsMatrix4") and \
        any(callable(getattr(value, name, None)) for name in _ROTATION_METHODS)


def matrix3(R) -> np.ndarray:
    """A rotation as a 3×3 array, whatever gives it: a RotationMatrix, RollPitchYaw or Quaternion,
    ours or pydrake's (the one conversion layer: every method taking a rotation goes through here
    or RotationMatrix(R)), or anything array-like (not checked)."""
    for name, convert in zip(_ROTATION_METHODS, (None, "matrix", "quaternion")):
        value = _call(R, name)
        if value is not None:
            if convert == "matrix":
                value = value.matrix()
            elif convert == "quaternion":
                value = quaternion_to_matrix(value)
            return np.asarray(value, dtype=float)
    return np.asarray(R, dtype=float)


def matrix4(X) -> np.ndarray:
    """A pose as a 4×4 array: a RigidTransform, ours or pydrake's, or anything array-like (not checked)."""
    value = _call(X, "GetAsMatrix4")
    return np.asarray(X if value is None else value, dtype=float)


def skew(w) -> np.ndarray:
    """[w]x, the matrix with [w]x u = w x u."""
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


class Quaternion:
    """Unit quaternion ``[w, x, y, z]`` (Drake's ``Quaternion``/Eigen order)."""

    __slots__ = ("_wxyz",)

    def __init__(self, *args):
        if not args:
            wxyz = (1.0, 0.0, 0.0, 0.0)
        elif len(args) == 1:
            wxyz = args[0] if _call(args[0], "wxyz") is None else args[0].wxyz()     # ours or pydrake's
        elif len(args) == 4:
            wxyz = args
        else:
            raise TypeError("Quaternion(), Quaternion(wxyz) or Quaternion(w, x, y, z)")
        a = np.array(wxyz, dtype=float).reshape(-1)
        if a.shape != (4,):
            raise ValueError(f"a quaternion has 4 coefficients [w x y z], got {a.shape}")
        self._wxyz = a

    @staticmethod
    def Identity() -> "Quaternion":
        return Quaternion()

    def w(self) -> float:
        return float(self._wxyz[0])

    def x(self) -> float:
        return float(self._wxyz[1])

    def y(self) -> float:
        return float(self._wxyz[2])

    def z(self) -> float:
        return float(self._wxyz[3])

    def wxyz(self) -> np.ndarray:
        return self._wxyz.copy()

    def xyz(self) -> np.ndarray:
        return self._wxyz[1:].copy()

    def norm(self) -> float:
        return float(np.linalg.norm(self._wxyz))

    def normalized(self) -> "Quaternion":
        return Quaternion(self._wxyz / np.linalg.norm(self._wxyz))

    def conjugate(self) -> "Quaternion":
        return Quaternion(self._wxyz * [1.0, -1.0, -1.0, -1.0])

    def inverse(self) -> "Quaternion":
        return Quaternion(self.conjugate()._wxyz / float(self._wxyz @ self._wxyz))

    def multiply(self, other: "Quaternion") -> "Quaternion":
        w1, v1 = self._wxyz[0], self._wxyz[1:]
        w2, v2 = other._wxyz[0], other._wxyz[1:]
        return Quaternion(np.r_[w1 * w2 - v1 @ v2, w1 * v2 + w2 * v1 + np.cross(v1, v2)])

    __matmul__ = multiply

    def rotation(self) -> np.ndarray:
        """The 3x3 rotation matrix of the (normalized) quaternion."""
        return quaternion_to_matrix(self._wxyz)

    def __repr__(self) -> str:
        w, x, y, z = self._wxyz
        return f"Quaternion(w={w!r}, x={x!r}, y={y!r}, z={z!r})"


def quaternion_to_matrix(wxyz) -> np.ndarray:
    """R(q) for q = [w x y z], normalized first."""
    w, x, y, z = np.asarray(wxyz, dtype=float) / np.linalg.norm(wxyz)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def matrix_to_quaternion(R) -> np.ndarray:
    """[w x y z] with w >= 0 of the rotation matrix R (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    t = np.trace(R)
    if t > 0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return -q if q[0] < 0 else q


def rpy_to_matrix(rpy) -> np.ndarray:
    """R = Rz(y) Ry(p) Rx(r)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def matrix_to_rpy(R) -> np.ndarray:
    """[r, p, y] with p in [-pi/2, pi/2] of R = Rz(y) Ry(p) Rx(r)."""
    R = np.asarray(R, dtype=float)
    p = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    if abs(math.cos(p)) > 1e-12:
        r = math.atan2(R[2, 1], R[2, 2])
        y = math.atan2(R[1, 0], R[0, 0])
    else:  # gimbal lock: only r - y (p = pi/2) or r + y (p = -pi/2) is defined; put it all in r
        y = 0.0
        r = math.atan2(-R[1, 2], R[1, 1])
    return np.array([r, p, y])


class RotationMatrix:
    """R_AB, the orientation of frame B in frame A."""

    __slots__ = ("_R",)

    def __init__(self, value=None):
        if value is None:
            self._R = np.eye(3)
        elif isinstance(value, RotationMatrix):
            self._R = value._R.copy()
        elif isinstance(value, RollPitchYaw):
            self._R = rpy_to_matrix(value.vector())
        elif isinstance(value, Quaternion):
            self._R = quaternion_to_matrix(value.wxyz())
        else:
            R = np.array(matrix3(value), dtype=float)         # pydrake's rotations, or a 3×3
            if R.shape != (3, 3):
                raise ValueError(f"a rotation matrix is 3x3, got shape {R.shape}")
            if not np.all(np.isfinite(R)) or not np.allclose(R @ R.T, np.eye(3), atol=1e-9) \
                    or np.linalg.det(R) < 0:
                raise ValueError(f"not a proper orthonormal rotation matrix:\n{R}")
            self._R = R

    @staticmethod
    def Identity() -> "RotationMatrix":
        return RotationMatrix()

    @staticmethod
    def MakeXRotation(theta: float) -> "RotationMatrix":
        return RotationMatrix(RollPitchYaw(theta, 0.0, 0.0))

    @staticmethod
    def MakeYRotation(theta: float) -> "RotationMatrix":
        return RotationMatrix(RollPitchYaw(0.0, theta, 0.0))

    @staticmethod
    def MakeZRotation(theta: float) -> "RotationMatrix":
        return RotationMatrix(RollPitchYaw(0.0, 0.0, theta))

    @staticmethod
    def MakeFromOneVector(b_A, axis_index: int) -> "RotationMatrix":
        """MakeFromOneUnitVector(b_A / |b_A|, axis_index), as in Drake."""
        b = np.asarray(b_A, dtype=float).reshape(3)
        n = np.linalg.norm(b)
        if not n > 0 or not np.isfinite(n):
            raise ValueError(f"MakeFromOneVector(): b_A = {b.tolist()} cannot be made a unit vector")
        return RotationMatrix.MakeFromOneUnitVector(b / n, axis_index)

    @staticmethod
    def MakeFromOneUnitVector(u_A, axis_index: int) -> "RotationMatrix":
        """R_AB whose column `axis_index` is the unit vector u_A, the other two built as Drake does:
        with i the index of u's smallest |element| (first on ties), j = i+1, k = j+1 (mod 3),
        r = 1/√(1 − uᵢ²), v = [vᵢ, vⱼ, vₖ] = [0, −r uₖ, r uⱼ], w = [√(1 − uᵢ²), −r uᵢ uⱼ, −r uᵢ uₖ]
        in columns axis_index+1 and axis_index+2."""
        u = np.asarray(u_A, dtype=float).reshape(3)
        if abs(np.linalg.norm(u) - 1.0) > 4 * np.finfo(float).eps:
            raise ValueError(f"MakeFromOneUnitVector(): u_A = {u.tolist()} is not a unit vector")
        i = int(np.argmin(np.abs(u)))
        j, k = (i + 1) % 3, (i + 2) % 3
        mag = np.sqrt(1.0 - u[i] * u[i])
        r = 1.0 / mag
        R = np.zeros((3, 3))
        R[:, axis_index] = u
        v, w = np.zeros(3), np.zeros(3)
        v[j], v[k] = -r * u[k], r * u[j]
        w[i], w[j], w[k] = mag, -r * u[i] * u[j], -r * u[i] * u[k]
        R[:, (axis_index + 1) % 3], R[:, (axis_index + 2) % 3] = v, w
        return RotationMatrix._trusted(R)

    @classmethod
    def _trusted(cls, R: np.ndarray) -> "RotationMatrix":
        out = cls.__new__(cls)
        out._R = R
        return out

    def matrix(self) -> np.ndarray:
        return self._R.copy()

    def col(self, i: int) -> np.ndarray:
        return self._R[:, i].copy()

    def row(self, i: int) -> np.ndarray:
        return self._R[i, :].copy()

    def inverse(self) -> "RotationMatrix":
        return RotationMatrix._trusted(self._R.T.copy())

    transpose = inverse

    def multiply(self, other):
        """R_AB * R_BC -> R_AC, or R_AB * v_B -> v_A (a 3-vector or 3xN matrix)."""
        if isinstance(other, RotationMatrix):
            return RotationMatrix._trusted(self._R @ other._R)
        return self._R @ np.asarray(other, dtype=float)

    __matmul__ = multiply

    def ToQuaternion(self) -> Quaternion:
        return Quaternion(matrix_to_quaternion(self._R))

    def ToRollPitchYaw(self) -> "RollPitchYaw":
        return RollPitchYaw(self)

    def IsNearlyEqualTo(self, other: "RotationMatrix", tolerance: float) -> bool:
        """Element-wise within tolerance of `other` (ours or pydrake's)."""
        return bool(np.max(np.abs(self._R - matrix3(other))) <= tolerance)

    def IsExactlyEqualTo(self, other: "RotationMatrix") -> bool:
        return bool(np.array_equal(self._R, matrix3(other)))

    def __repr__(self) -> str:
        return f"RotationMatrix({self._R.tolist()!r})"


class RollPitchYaw:
    """Space-fixed X-Y-Z angles [roll, pitch, yaw]."""

    __slots__ = ("_rpy",)

    def __init__(self, *args):
        if len(args) == 3:
            self._rpy = np.array(args, dtype=float)
        elif len(args) == 1 and isinstance(args[0], RotationMatrix):
            self._rpy = matrix_to_rpy(args[0].matrix())
        elif len(args) == 1 and isinstance(args[0], Quaternion):
            self._rpy = matrix_to_rpy(args[0].rotation())
        elif len(args) == 1 and _call(args[0], "vector") is not None and hasattr(args[0], "roll_angle"):
            self._rpy = _vec3(args[0].vector(), "RollPitchYaw")              # pydrake's RollPitchYaw
        elif len(args) == 1 and _is_rotation(args[0]):
            self._rpy = matrix_to_rpy(matrix3(args[0]))                         # pydrake's rotations
        elif len(args) == 1:
            self._rpy = _vec3(args[0], "RollPitchYaw")
        else:
            raise TypeError("RollPitchYaw(r, p, y), RollPitchYaw(rpy), or RollPitchYaw(R)")

    def vector(self) -> np.ndarray:
        return self._rpy.copy()

    def roll_angle(self) -> float:
        return float(self._rpy[0])

    def pitch_angle(self) -> float:
        return float(self._rpy[1])

    def yaw_angle(self) -> float:
        return float(self._rpy[2])

    def ToRotationMatrix(self) -> RotationMatrix:
        return RotationMatrix(self)

    def ToQuaternion(self) -> Quaternion:
        return RotationMatrix(self).ToQuaternion()

    def __repr__(self) -> str:
        r, p, y = self._rpy
        return f"RollPitchYaw(roll={r!r}, pitch={p!r}, yaw={y!r})"


class RigidTransform:
    """X_AB: the pose of frame B in frame A, (R_AB, p_AoBo_A)."""

    __slots__ = ("_R", "_p")

    def __init__(self, *args):
        R, p = np.eye(3), np.zeros(3)
        if len(args) == 1 and isinstance(args[0], RigidTransform):
            R, p = args[0]._R.copy(), args[0]._p.copy()
        elif len(args) == 1 and isinstance(args[0], (RotationMatrix, RollPitchYaw, Quaternion)):
            R = RotationMatrix(args[0])._R
        elif len(args) == 1 and _is_rotation(args[0]):
            R = RotationMatrix(args[0])._R                                      # pydrake's rotations
        elif len(args) == 1:
            a = matrix4(args[0])                                                # pydrake's transform, or an array
            if a.shape in ((4, 4), (3, 4)):
                R, p = RotationMatrix(a[:3, :3])._R, a[:3, 3].copy()
            else:
                p = _vec3(a, "RigidTransform translation")
        elif len(args) == 2:
            R, p = RotationMatrix(args[0])._R, _vec3(args[1], "RigidTransform translation")
        elif args:
            raise TypeError("RigidTransform(), (R), (p), (R, p) or (4x4 matrix)")
        self._R, self._p = R, p

    @staticmethod
    def Identity() -> "RigidTransform":
        return RigidTransform()

    @classmethod
    def _trusted(cls, R: np.ndarray, p: np.ndarray) -> "RigidTransform":
        out = cls.__new__(cls)
        out._R, out._p = R, p
        return out

    def rotation(self) -> RotationMatrix:
        return RotationMatrix._trusted(self._R.copy())

    def translation(self) -> np.ndarray:
        return self._p.copy()

    def set_rotation(self, R) -> None:
        self._R = RotationMatrix(R)._R

    def set_translation(self, p) -> None:
        self._p = _vec3(p, "translation")

    def GetAsMatrix4(self) -> np.ndarray:
        X = np.eye(4)
        X[:3, :3], X[:3, 3] = self._R, self._p
        return X

    def GetAsMatrix34(self) -> np.ndarray:
        return self.GetAsMatrix4()[:3]

    def inverse(self) -> "RigidTransform":
        Rt = self._R.T
        return RigidTransform._trusted(Rt.copy(), -Rt @ self._p)

    def multiply(self, other):
        """X_AB * X_BC -> X_AC, or X_AB * p_BoQ_B -> p_AoQ_A (3-vector or 3xN)."""
        if isinstance(other, RigidTransform):
            return RigidTransform._trusted(self._R @ other._R, self._R @ other._p + self._p)
        p = np.asarray(other, dtype=float)
        if p.ndim == 2:
            return self._R @ p + self._p[:, None]
        return self._R @ p + self._p

    __matmul__ = multiply

    def IsNearlyEqualTo(self, other: "RigidTransform", tolerance: float) -> bool:
        """Element-wise within tolerance of `other` (ours or pydrake's)."""
        return bool(np.max(np.abs(self.GetAsMatrix4() - matrix4(other))) <= tolerance)

    def IsExactlyEqualTo(self, other: "RigidTransform") -> bool:
        return bool(np.array_equal(self.GetAsMatrix4(), matrix4(other)))

    def IsExactlyIdentity(self) -> bool:
        return bool(np.array_equal(self._R, np.eye(3)) and not self._p.any())

    def __repr__(self) -> str:
        rpy = matrix_to_rpy(self._R)
        return f"RigidTransform(rpy={rpy.tolist()!r}, p={self._p.tolist()!r})"


class _SpatialVector:
    """A 6-vector [angular; linear]."""

    __slots__ = ("_v",)

    def __init__(self, *args):
        if len(args) == 2:
            self._v = np.r_[_vec3(args[0], "rotational part"), _vec3(args[1], "translational part")]
        elif len(args) == 1:
            coeffs = _call(args[0], "get_coeffs")                               # ours or pydrake's
            a = np.array(args[0] if coeffs is None else coeffs, dtype=float).reshape(-1)
            if a.shape != (6,):
                raise ValueError(f"a spatial vector has 6 elements, got {np.shape(args[0])}")
            self._v = a
        elif not args:
            self._v = np.zeros(6)
        else:
            raise TypeError(f"{type(self).__name__}(), (V6) or (rotational, translational)")

    @classmethod
    def Zero(cls):
        return cls()

    def rotational(self) -> np.ndarray:
        return self._v[:3].copy()

    def translational(self) -> np.ndarray:
        return self._v[3:].copy()

    def get_coeffs(self) -> np.ndarray:
        return self._v.copy()

    def IsApprox(self, other, tolerance: float = 1e-12) -> bool:
        return bool(np.max(np.abs(self._v - type(self)(other)._v)) <= tolerance)

    def __add__(self, other):
        return type(self)(self._v + other._v)

    def __sub__(self, other):
        return type(self)(self._v - other._v)

    def __neg__(self):
        return type(self)(-self._v)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rotational={self._v[:3].tolist()!r}, " \
               f"translational={self._v[3:].tolist()!r})"


class SpatialVelocity(_SpatialVector):
    """V_AB = [w_AB; v_ABo]."""

    def Shift(self, p_BoQ_E) -> "SpatialVelocity":
        w = self._v[:3]
        return SpatialVelocity(w, self._v[3:] + np.cross(w, p_BoQ_E))


class SpatialAcceleration(_SpatialVector):
    """A_AB = [alpha_AB; a_ABo] (classical accelerations)."""


class SpatialForce(_SpatialVector):
    """F_Bo = [torque about Bo; force]."""

    def Shift(self, p_BoQ_E) -> "SpatialForce":
        f = self._v[3:]
        return SpatialForce(self._v[:3] - np.cross(p_BoQ_E, f), f)


class SpatialMomentum(_SpatialVector):
    """L_WS_P = [angular momentum about P; linear momentum]."""

    def Shift(self, p_PQ_E) -> "SpatialMomentum":
        h = self._v[3:]
        return SpatialMomentum(self._v[:3] - np.cross(p_PQ_E, h), h)
