"""The model directives' structs (Drake's model_directives.h) and the deterministic part of Drake's
pose schema (drake/common/schema/transform.h, rotation.h): Transform, Rpy, AngleAxis, Identity."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..spatial_math import RigidTransform, RollPitchYaw, RotationMatrix


@dataclass
class Identity:
    """No rotation (YAML: !Identity {}, or an untagged empty mapping)."""

    def GetDeterministicValue(self) -> RotationMatrix:
        return RotationMatrix()


@dataclass
class Rpy:
    """Roll, pitch, yaw in degrees (YAML: !Rpy {deg: [r, p, y]})."""
    deg: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def GetDeterministicValue(self) -> RotationMatrix:
        return RotationMatrix(RollPitchYaw(np.deg2rad(np.asarray(self.deg, dtype=float))))


@dataclass
class AngleAxis:
    """A rotation of angle_deg degrees about axis (normalized; YAML: !AngleAxis {angle_deg: a, axis: [x, y, z]})."""
    angle_deg: float = 0.0
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))

    def GetDeterministicValue(self) -> RotationMatrix:
        k = np.asarray(self.axis, dtype=float)
        norm = np.linalg.norm(k)
        if not norm > 0:
            raise ValueError(f"AngleAxis: the axis {k} is zero")
        k = k / norm
        a = np.deg2rad(self.angle_deg)
        K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
        return RotationMatrix(np.eye(3) + np.sin(a) * K + (1.0 - np.cos(a)) * K @ K)


class Transform:
    """A pose: base_frame (the frame it is measured from, by scoped name, or None), translation (m) and
    rotation (Identity, Rpy or AngleAxis). Transform(X) takes a RigidTransform (ours or pydrake's)."""

    def __init__(self, X=None, *, base_frame: str | None = None, translation=None, rotation=None):
        self.base_frame = base_frame
        self.translation = np.zeros(3) if translation is None else np.asarray(translation, dtype=float)
        self.rotation = Identity() if rotation is None else rotation
        if X is not None:
            X = RigidTransform(X)
            self.translation = np.array(X.translation())
            self.rotation = Rpy(deg=np.rad2deg(RollPitchYaw(X.rotation()).vector()))

    def IsDeterministic(self) -> bool:
        return True

    def GetDeterministicValue(self) -> RigidTransform:
        return RigidTransform(self.rotation.GetDeterministicValue(), np.asarray(self.translation, dtype=float))

    def __eq__(self, other) -> bool:
        return isinstance(other, Transform) and self.base_frame == other.base_frame and \
            np.array_equal(self.translation, other.translation) and repr(self.rotation) == repr(other.rotation)

    def __repr__(self) -> str:
        return (f"Transform(base_frame={self.base_frame!r}, translation={list(map(float, self.translation))}, "
                f"rotation={self.rotation!r})")


@dataclass
class AddModel:
    """Adds the one model of `file` (a URL or path) as the model instance `name`."""
    file: str = ""
    name: str = ""
    default_joint_positions: dict = field(default_factory=dict)
    default_free_body_pose: dict = field(default_factory=dict)


@dataclass
class AddModelInstance:
    """Adds an empty model instance (a namespace for frames and included directives)."""
    name: str = ""


@dataclass
class AddFrame:
    """Adds a frame `name` (scoped: its model instance; unscoped: its base frame's) at X_PF."""
    name: str = ""
    X_PF: Transform = field(default_factory=Transform)


@dataclass
class AddWeld:
    """Welds frame `child` to frame `parent` at X_PC (identity if None)."""
    parent: str = ""
    child: str = ""
    X_PC: Transform | None = None


@dataclass
class AddCollisionFilterGroup:
    """A collision filter group of bodies (and other groups), and the groups it ignores."""
    name: str = ""
    model_namespace: str | None = None
    members: list = field(default_factory=list)
    member_groups: list = field(default_factory=list)
    ignored_collision_filter_groups: list = field(default_factory=list)


@dataclass
class AddDirectives:
    """Includes the directives of `file`, their names scoped by `model_namespace`."""
    file: str = ""
    model_namespace: str | None = None
