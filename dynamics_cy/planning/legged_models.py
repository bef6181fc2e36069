"""Legged robots from example-robot-data as whole-body control problems: where each model is, its
contact points and a standing posture (the presets the tests, benchmarks and configs share)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dynamics_cy import CoulombFriction, MultibodyPlant, Parser, RigidTransform, Sphere
from dynamics_cy.errors import HilstackError
from dynamics_cy.parsing import PackageMap
from dynamics_cy.parsing.urdf import add_simple_transmissions

from .whole_body import ContactPoint, ContactSurface


@dataclass(frozen=True)
class LeggedModel:
    """A model file under example-robot-data's robots/ folder, contact points (frame name, p_FC) and
    the standing joint angles (q[7:]); the base is placed so the contact points touch z = 0."""

    urdf: str
    contacts: tuple
    standing: tuple


@dataclass(frozen=True)
class Foot:
    """A foot by frame name: a point p_FC (``point``), or a sole (``sole_center`` p_FS, ``length``
    along F's x, ``width`` along F's y, normal F's z): a run config's controller.whole_body.contacts."""

    frame: str
    point: tuple | None = None
    sole_center: tuple | None = None
    length: float = 0.0
    width: float = 0.0

    def corners(self) -> list:
        """The sole's four corners in F (a point foot: its point)."""
        if self.point is not None:
            return [np.asarray(self.point, float)]
        c = np.asarray(self.sole_center, float)
        return [c + [x * self.length / 2, y * self.width / 2, 0.0] for x in (1, -1) for y in (1, -1)]


class FootError(HilstackError, ValueError):
    """A foot that does not fit the model: ``index`` in the feet list, ``field`` (e.g. "frame")."""

    def __init__(self, index: int, field: str, message: str):
        super().__init__(message)
        self.index, self.field = index, field


def _flat_foot(frame: str, x_back: float, x_front: float, y: float, z: float) -> tuple:
    return tuple((frame, (x, s * y, z)) for x in (x_front, x_back) for s in (1.0, -1.0))


LEGGED = {
    # Unitree Go2: 18 velocities, 4 point feet (the centres of the foot spheres)
    "go2": LeggedModel("go2_description/urdf/go2.urdf",
                       tuple((f"{leg}_foot", (0.0, 0.0, 0.0)) for leg in ("FL", "FR", "RL", "RR")),
                       (0.0, 0.8, -1.5) * 4),
    # Unitree G1 29 DoF: 35 velocities, 2 flat feet x 4 corners (the sole's collision spheres' bottoms)
    "g1": LeggedModel("g1_description/urdf/g1_29dof_rev_1_0.urdf",
                      _flat_foot("left_ankle_roll_link", -0.05, 0.12, 0.025, -0.035)
                      + _flat_foot("right_ankle_roll_link", -0.05, 0.12, 0.025, -0.035),
                      (-0.3, 0.0, 0.0, 0.6, -0.3, 0.0) * 2 + (0.0,) * 17),
}


def example_robot_data_root() -> Path | None:
    """The example-robot-data package folder, if installed (PackageMap.PopulateFromInstalledPackages)."""
    pm = PackageMap.MakeEmpty()
    pm.PopulateFromInstalledPackages()
    return Path(pm.GetPath("example-robot-data")) if pm.Contains("example-robot-data") else None


FOOT_RADIUS = {"go2": 0.022, "g1": 0.005}
"""Radius (m) of the collision sphere at each contact point when simulated."""

FOOT_FRICTION = (0.8, 0.7)
"""Static and dynamic friction of the simulated feet: rubber on a dry floor (docs/sim.md, Contact defaults)."""


def load_legged(name: str, root: Path | None = None, simulation: bool = False, feet: list[Foot] | None = None):
    """(plant, contacts, q_standing) for a model in LEGGED, parsed by dynamics_cy.

    feet: the contacts instead of the preset's (Foot: a point or a sole by frame name; a point
    becomes a ContactPoint, a sole a ContactSurface); FootError names a foot whose frame the model
    does not have.

    Every revolute joint gets an actuator with its URDF effort limit (the model has no
    <transmission>: a SimpleTransmission per joint, as Drake parses one), in the joints' order.

    simulation: the model's own collision geometry (meshes, which the simulator does not collide) is
    replaced by a sphere of FOOT_RADIUS per contact point. A point foot's sphere is centred on its
    contact point; a flat foot's corner sphere sits on its contact point (centre r above it along the
    foot's z).

    q_standing is the same either way: the base raised so that the feet rest on z = 0 (a point foot's
    sphere of FOOT_RADIUS, the real foot's size, on the ground; a sole's corners on it)."""
    if name not in LEGGED:
        raise ValueError(f"unknown legged model '{name}' (known: {', '.join(LEGGED)})")
    root = root or example_robot_data_root()
    if root is None:
        raise FileNotFoundError("example-robot-data is not installed (pip install example-robot-data)")
    model = LEGGED[name]
    feet = [Foot(f, point=tuple(p)) for f, p in model.contacts] if feet is None else list(feet)
    if not feet:
        raise FootError(0, "", "at least one foot is needed")
    plant = MultibodyPlant(0.0)
    parser = Parser(plant, nonphysical_inertia="warn")
    parser.package_map().Add("example-robot-data", str(root))
    path = root / "robots" / model.urdf
    urdf = ET.fromstring(path.read_text())
    if simulation:
        for link in urdf.findall("link"):
            for collision in link.findall("collision"):
                link.remove(collision)
    add_simple_transmissions(urdf, [j.get("name") for j in urdf.findall("joint") if j.get("type") == "revolute"])
    parser._parse(ET.tostring(urdf, encoding="unicode"), "urdf", str(path))
    if simulation:
        r = FOOT_RADIUS[name]
        points = _points_per_frame(feet)
        for i, foot in enumerate(feet):
            F = _frame(plant, foot, i)
            for k, p in enumerate(foot.corners()):        # a corner's sphere sits on it, a lone point's is centred
                center = p + (np.array([0.0, 0.0, r]) if points[foot.frame] > 1 else 0.0)
                X_BG = F.GetFixedPoseInBodyFrame() @ RigidTransform(center)
                plant.RegisterCollisionGeometry(F.body(), X_BG, Sphere(r), f"{foot.frame}_{i}_{k}",
                                                CoulombFriction(*FOOT_FRICTION))
    plant.Finalize()
    contacts = []
    for i, foot in enumerate(feet):
        F = _frame(plant, foot, i)
        contacts.append(ContactPoint(F, np.array(foot.point, float)) if foot.point is not None else
                        ContactSurface(F, np.array(foot.sole_center, float), foot.length, foot.width))
    q = plant.GetDefaultPositions()
    q[7:] = model.standing
    k, X = plant.kernels(), np.empty((4, 4))
    lowest, lone = np.inf, False
    points = _points_per_frame(feet)
    for foot, c in zip(feet, contacts):
        k.frame_pose(q, c.frame, X)
        for p in foot.corners():
            z = (X[:3, :3] @ p + X[:3, 3])[2]
            if z < lowest:
                lowest, lone = z, points[foot.frame] == 1
    q[6] -= lowest
    if lone:        # the lowest foot is a sphere centred on its point (the real foot, the simulator's): its radius
        q[6] += FOOT_RADIUS[name]
    return plant, contacts, q


def _points_per_frame(feet: list[Foot]) -> dict:
    """How many contact points (a sole: its 4 corners) each frame has."""
    count: dict = {}
    for foot in feet:
        count[foot.frame] = count.get(foot.frame, 0) + len(foot.corners())
    return count


def _frame(plant, foot: Foot, index: int):
    if not plant.HasFrameNamed(foot.frame):
        import difflib
        names = [plant.get_frame(i).name() for i in range(plant.num_frames())]
        close = difflib.get_close_matches(foot.frame, names, n=1)
        raise FootError(index, "frame", f"no frame {foot.frame!r} in the model"
                        + (f" (did you mean {close[0]!r}?)" if close else ""))
    return plant.GetFrameByName(foot.frame)
