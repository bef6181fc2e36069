"""Collision candidates, the signed distances of geometry pairs at a configuration, and
pydrake.multibody.inverse_kinematics' DistanceConstraint (minimum_distance.py builds on them).

Geometry pairs are pairs of dynamics_cy GeometryInstance objects (Drake uses GeometryId pairs).
"""
from __future__ import annotations

import numpy as np

from dynamics_cy import BodyIndex, Box, Capsule, Cylinder, JointIndex, Sphere

from .distance import SignedDistance, signed_distance
from .kinematics import FrameKinematics, frame_kinematics, point_jacobian
from .program import Constraint


def _weld_groups(plant) -> list[int]:
    """The weld group (a representative body index) of every body; group 0 is anchored to the world."""
    group = list(range(plant.num_bodies()))

    def root(b: int) -> int:
        while group[b] != b:
            b = group[b]
        return b

    for i in range(plant.num_joints()):
        j = plant.get_joint(JointIndex(i))
        if j.type_name() == "weld":
            a, b = sorted((root(int(j.parent_body().index())), root(int(j.child_body().index()))))
            group[b] = a
    return [root(b) for b in range(plant.num_bodies())]


def CollisionCandidates(plant) -> list[tuple]:
    """The collision-geometry pairs Drake's default filters leave: geometries on different bodies, minus
    pairs within one welded group (which includes pairs of anchored geometries) and pairs on the parent
    and child bodies of a joint other than a free body's floating joint. Ordered by body index, then
    registration order."""
    group = _weld_groups(plant)
    adjacent = set()
    for i in range(plant.num_joints()):
        j = plant.get_joint(JointIndex(i))
        if j.type_name() != "quaternion_floating":  # a free body still collides with the world
            adjacent.add(frozenset((int(j.parent_body().index()), int(j.child_body().index()))))
    geoms = [g for b in range(plant.num_bodies())
             for g in plant.GetCollisionGeometriesForBody(plant.get_body(BodyIndex(b)))]
    return [(ga, gb) for i, ga in enumerate(geoms) for gb in geoms[i + 1:]
            if group[ga.body_index] != group[gb.body_index]
            and frozenset((ga.body_index, gb.body_index)) not in adjacent]


def _bounding_radius(shape) -> float:
    """The radius of a ball about the geometry origin that contains the shape (inf for a half space)."""
    if isinstance(shape, Sphere):
        return shape.radius()
    if isinstance(shape, (Capsule, Cylinder)):
        return 0.5 * shape.length() + shape.radius()
    if isinstance(shape, Box):
        return 0.5 * float(np.linalg.norm(shape.size()))
    return np.inf


class GeometryPairs:
    """Signed distances of geometry pairs on one plant at the configuration of a FrameKinematics, with
    the witness points' body frames for Jacobians."""

    def __init__(self, kin: FrameKinematics, pairs):
        plant = kin.plant
        self.kin, self.pairs = kin, list(pairs)
        self._frame = {}
        self._X_BG = {}
        self._radius = {}
        for pair in self.pairs:
            for g in pair:
                self._frame[id(g)] = plant.get_body(BodyIndex(g.body_index)).body_frame()
                self._X_BG[id(g)] = g.X_BG.GetAsMatrix4()
                self._radius[id(g)] = _bounding_radius(g.shape)

    def pose(self, g) -> np.ndarray:
        """X_WG."""
        return self.kin.pose(self._frame[id(g)]) @ self._X_BG[id(g)]

    def lower_bound(self, k: int) -> float:
        """A cheap lower bound on φ of pair k, from bounding balls."""
        ga, gb = self.pairs[k]
        d = np.linalg.norm(self.pose(ga)[:3, 3] - self.pose(gb)[:3, 3])
        return float(d - self._radius[id(ga)] - self._radius[id(gb)])

    def distance(self, k: int) -> SignedDistance:
        ga, gb = self.pairs[k]
        return signed_distance(ga.shape, self.pose(ga), gb.shape, self.pose(gb))

    def witness_jacobian(self, g, p_WC: np.ndarray) -> np.ndarray:
        """Jv_WC (3 x nq) of the point C fixed to g's body, at p_WC."""
        f = self._frame[id(g)]
        return point_jacobian(self.kin.jacobian(f), p_WC - self.kin.pose(f)[:3, 3])

    def distance_gradient(self, k: int, sd: SignedDistance) -> np.ndarray:
        """∂φ/∂q = n̂_BAᵀ (Jv_WCa - Jv_WCb)."""
        ga, gb = self.pairs[k]
        return sd.nhat_BA_W @ (self.witness_jacobian(ga, sd.p_WCa) - self.witness_jacobian(gb, sd.p_WCb))


class DistanceConstraint(Constraint):
    """distance_lower ≤ φ(q) ≤ distance_upper for one pair of collision geometries."""

    def __init__(self, plant, geometry_pair, plant_context, distance_lower: float, distance_upper: float):
        ga, gb = geometry_pair
        group = _weld_groups(plant)
        if group[ga.body_index] == group[gb.body_index] == group[0]:
            raise ValueError(f"DistanceConstraint: geometries '{ga.name}' and '{gb.name}' are both anchored")
        if not distance_lower <= distance_upper:
            raise ValueError(f"DistanceConstraint: distance_lower {distance_lower} > distance_upper {distance_upper}")
        self._pairs = GeometryPairs(frame_kinematics(plant, plant_context), [(ga, gb)])
        super().__init__(1, plant.num_positions(), distance_lower, distance_upper)

    def _eval(self, x, with_gradient):
        self._pairs.kin.update(x)
        sd = self._pairs.distance(0)
        return np.array([sd.distance]), (self._pairs.distance_gradient(0, sd)[None, :] if with_gradient else None)
