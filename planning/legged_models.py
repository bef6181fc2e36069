"""Legged robots from example-robot-data as whole-body control problems: where each model is, its
contact points and a standing posture (the presets the tests, benchmarks and configs share)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dynamics_cy.parsing import PackageMap

from .whole_body import ContactPoint


@dataclass(frozen=True)
class LeggedModel:
    """A model file under example-robot-data's robots/ folder, contact points (frame name, p_FC) and
    the standing joint angles (q[7:]); the base is placed so the contact points touch z = 0."""

    urdf: str
    contacts: tuple
    standing: tuple


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
    """The example-robot-data package folder as Drake's default PackageMap finds it, if installed."""
    pm = PackageMap()
    return Path(pm.GetPath("example-robot-data")) if pm.Contains("example-robot-data") else None


FOOT_RADIUS = {"go2": 0.022, "g1": 0.005}
"""Radius (m) of the collision sphere at each contact point when simulated."""


def load_legged(name: str, root: Path | None = None, simulation: bool = False):
    """(plant, contacts, q_standing) for a model in LEGGED, parsed by dynamics_cy.

    simulation: the model's own collision geometry (meshes, which the simulator does not collide) is
    replaced by a sphere of FOOT_RADIUS per contact point, an actuator (no effort limit) is added on
    every revolute joint, and the base is raised so the spheres rest on z = 0. A point foot's sphere
    is centred on its contact point; a flat foot's corner sphere sits on its contact point (centre
    r above it along the foot's z)."""
    from dynamics_cy import CoulombFriction, MultibodyPlant, Parser, RigidTransform, Sphere
    if name not in LEGGED:
        raise ValueError(f"unknown legged model '{name}' (known: {', '.join(LEGGED)})")
    root = root or example_robot_data_root()
    if root is None:
        raise FileNotFoundError("example-robot-data is not installed (pip install example-robot-data)")
    model = LEGGED[name]
    plant = MultibodyPlant(0.0)
    parser = Parser(plant, nonphysical_inertia="warn")
    parser.package_map().Add("example-robot-data", str(root))
    if not simulation:
        parser.AddModels(str(root / "robots" / model.urdf))
    else:
        text = re.sub(r"<collision>.*?</collision>", "", (root / "robots" / model.urdf).read_text(), flags=re.S)
        parser.AddModelsFromString(text, "urdf")
        r, flat = FOOT_RADIUS[name], len({f for f, _ in model.contacts}) < len(model.contacts)
        for i, (frame, p) in enumerate(model.contacts):
            F = plant.GetFrameByName(frame)
            center = np.array(p) + (np.array([0.0, 0.0, r]) if flat else 0.0)
            X_BG = F.GetFixedPoseInBodyFrame() @ RigidTransform(center)
            plant.RegisterCollisionGeometry(F.body(), X_BG, Sphere(r), f"{frame}_{i}", CoulombFriction(1.0, 1.0))
        for j in list(plant._joints):
            if j.type_name() == "revolute":
                plant.AddJointActuator(j.name(), j)
    plant.Finalize()
    contacts = [ContactPoint(plant.GetFrameByName(f), np.array(p)) for f, p in model.contacts]
    q = plant.GetDefaultPositions()
    q[7:] = model.standing
    k, X = plant.kernels(), np.empty((4, 4))
    lowest = np.inf
    for c in contacts:
        k.frame_pose(q, c.frame, X)
        lowest = min(lowest, (X[:3, :3] @ c.p_FC + X[:3, 3])[2])
    q[6] -= lowest
    if simulation and len({c.frame.name() for c in contacts}) == len(contacts):
        q[6] += FOOT_RADIUS[name]
    return plant, contacts, q
