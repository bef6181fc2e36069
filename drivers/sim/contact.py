"""Point contact between a plant's collision geometries and a ground half space (and each other).

`ContactModel(plant, config)` reads the collision geometries (Sphere, Box, Capsule, Cylinder), decides
which pairs can touch and sets up the compiled `PointContact`; `contact_results()` turns the last
step's contacts into Drake's `ContactResults`. Which pairs are checked:

- every geometry of a body that is not welded to the world, against the ground (contact.ground);
- with contact.between_bodies, every pair of geometries on two bodies unless both are welded to the
  world, they are welded to each other, a joint joins them (parent and child), or the pair is listed
  in contact.exclude (as Drake filters collisions by default). Supported pairs: a sphere with any
  shape, capsule with capsule, box with box, cylinder with box; others raise ConfigError naming the geometries.

A one-name entry of contact.exclude removes that body's geometries from contact altogether.
"""
from __future__ import annotations

import numpy as np

from drivers.core.schema import ConfigError
from dynamics_cy import (
    Box,
    CalcContactFrictionFromSurfaceProperties,
    ContactResults,
    CoulombFriction,
    GeometryInstance,
    HalfSpace,
    PenetrationAsPointPair,
    PointPairContactInfo,
    RigidTransform,
    Sphere,
)

from ._contact import SHAPE_CODES, PointContact
from .config import ContactConfig
from .contact_check import check_stiffness

GROUND_NAME = "ground"
"""The id (PenetrationAsPointPair.id_B) of the ground half space; geometries are named by their own names."""

GROUND_COLOR = (0.55, 0.55, 0.5, 1.0)
"""The rgba of the ground in the viewer."""


def ground_visual(height: float) -> GeometryInstance:
    """The ground z <= height as a visual HalfSpace on the world body (it is not part of the plant):
    the viewer bridge adds it to the load message's world link, which draws it as DrakeVisualizer
    draws a half space, a 50 m × 50 m × 1 m box whose top face is the plane z = height."""
    return GeometryInstance(0, RigidTransform([0.0, 0.0, height]), HalfSpace(), GROUND_NAME, "visual",
                            diffuse_color=GROUND_COLOR)


def body_groups(plant) -> tuple[list[int], set[frozenset]]:
    """Per body, the index of its weld group (bodies welded together share one; the world's is 0),
    and the pairs of bodies a moving joint connects (parent, child)."""
    group = list(range(plant.num_bodies()))

    def root(b: int) -> int:
        while group[b] != b:
            b = group[b]
        return b

    joints = [plant.get_joint(i) for i in range(plant.num_joints())]
    for j in joints:
        if j.type_name() == "weld":
            a, b = sorted((root(int(j.parent_body().index())), root(int(j.child_body().index()))))
            group[b] = a
    adjacent = {frozenset((int(j.parent_body().index()), int(j.child_body().index())))
                for j in joints if j.type_name() != "weld"}
    return [root(b) for b in range(plant.num_bodies())], adjacent


def _shape_size(shape) -> tuple[float, float, float]:
    if isinstance(shape, Sphere):
        return shape.radius(), 0.0, 0.0
    if isinstance(shape, Box):
        return shape.width() / 2, shape.depth() / 2, shape.height() / 2
    return shape.radius(), shape.length() / 2, 0.0


class ContactModel:
    """The plant's collision geometries as a compiled PointContact (`point_contact`) per the config;
    time_step is the integrator's step h, which bounds the contact damping (see PointContact). `check`:
    warn when the stiffness is too stiff for a light body at h (drivers.sim.contact_check)."""

    def __init__(self, plant, config: ContactConfig, time_step: float = 0.001, path: str = "sim.contact",
                 check: bool = True):
        self.plant = plant
        bodies = [plant.get_body(b) for b in range(plant.num_bodies())]
        body_index = {b.name(): int(b.index()) for b in bodies}
        excluded_bodies, excluded_pairs = set(), set()
        for i, entry in enumerate(config.exclude):
            for j, name in enumerate(entry):
                if name not in body_index:
                    raise ConfigError(f"{path}.exclude[{i}][{j}]", f"the model has no body named {name!r}")
            if len(entry) == 1:
                excluded_bodies.add(body_index[entry[0]])
            else:
                excluded_pairs.add(frozenset(body_index[n] for n in entry))
        groups, adjacent = body_groups(plant)
        self.geometries = []
        for body in bodies:
            if int(body.index()) in excluded_bodies:
                continue
            for g in plant.GetCollisionGeometriesForBody(body):
                if type(g.shape).__name__ not in SHAPE_CODES:
                    raise ConfigError(path, f"collision geometry '{g.name}' of body '{body.name()}' is "
                                      f"a {type(g.shape).__name__}; point contact supports Sphere, Box, Capsule and "
                                      f"Cylinder (exclude the body with {path}.exclude: [[{body.name()}]])")
                self.geometries.append(g)
        shapes = [SHAPE_CODES[type(g.shape).__name__] for g in self.geometries]
        anchored = [groups[g.body_index] == groups[0] for g in self.geometries]
        ground, ground_mu = [], []
        if config.ground.enabled:
            surface = CoulombFriction(config.ground.friction.static, config.ground.friction.dynamic)
            for i, g in enumerate(self.geometries):
                if not anchored[i]:
                    mu = CalcContactFrictionFromSurfaceProperties(g.friction, surface)
                    ground.append(i)
                    ground_mu.append((mu.static_friction(), mu.dynamic_friction()))
        pairs, pair_mu = [], []
        if config.between_bodies:
            for i, a in enumerate(self.geometries):
                for j in range(i + 1, len(self.geometries)):
                    b = self.geometries[j]
                    ga, gb = groups[a.body_index], groups[b.body_index]
                    pair = frozenset((a.body_index, b.body_index))
                    if ga == gb or (anchored[i] and anchored[j]) or pair in adjacent or pair in excluded_pairs:
                        continue
                    pairs.append(self._ordered(i, j, shapes, path))
                    mu = CalcContactFrictionFromSurfaceProperties(a.friction, b.friction)
                    pair_mu.append((mu.static_friction(), mu.dynamic_friction()))
        self.ground, self.ground_friction = ground, ground_mu
        """Geometries checked against the ground (indices into `geometries`) and each pair's (μs, μd)."""
        self.pairs, self.pair_friction = pairs, pair_mu
        """Geometry pairs (A, B) checked against each other and each pair's (μs, μd)."""
        touching = set(ground) | {i for pair in pairs for i in pair if not anchored[i]}
        self.stiffness_ratio = check_stiffness(plant, self.geometries, touching, config.stiffness, time_step,
                                               path) if check else None
        """The largest h √(n k/m) of a geometry that can touch (drivers.sim.contact_check; warned above 1);
        None unchecked (`check` False: another engine's contact, MuJoCo's, which is not our explicit spring)."""
        self.point_contact = PointContact(
            shapes, [g.body_index for g in self.geometries],
            [g.X_BG.rotation().matrix() for g in self.geometries] or np.zeros((0, 3, 3)),
            [g.X_BG.translation() for g in self.geometries] or np.zeros((0, 3)),
            [_shape_size(g.shape) for g in self.geometries] or np.zeros((0, 3)),
            ground, ground_mu or np.zeros((0, 2)), pairs or np.zeros((0, 2)), pair_mu or np.zeros((0, 2)),
            config.ground.height, config.stiffness, config.dissipation, config.stiction_tolerance, len(bodies),
            plant.num_velocities(), time_step)
        self.body_names = [f"{b.name()}({int(b.model_instance())})" for b in bodies]
        """Bodies as Drake's ContactResultsToLcmSystem names them: name(model instance index)."""

    def _ordered(self, i: int, j: int, shapes: list[int], path: str) -> tuple[int, int]:
        """(A, B) with A a sphere, both capsules or boxes, or A a cylinder and B a box; ConfigError for pairs
        point contact cannot do."""
        sphere, capsule, box = SHAPE_CODES["Sphere"], SHAPE_CODES["Capsule"], SHAPE_CODES["Box"]
        cylinder = SHAPE_CODES["Cylinder"]
        if shapes[i] == sphere or shapes[i] == shapes[j] in (capsule, box) or (shapes[i], shapes[j]) == (
                cylinder, box):
            return i, j
        if shapes[j] == sphere or (shapes[j], shapes[i]) == (cylinder, box):
            return j, i
        a, b = self.geometries[i], self.geometries[j]
        body = self.plant.get_body
        raise ConfigError(f"{path}.between_bodies", f"point contact between '{a.name}' ({type(a.shape).__name__}) "
                          f"and '{b.name}' ({type(b.shape).__name__}) is not supported (supported: a sphere with any "
                          f"shape, capsule with capsule, box with box, cylinder with box); exclude the pair with "
                          f"{path}.exclude: "
                          f"[[{body(a.body_index).name()}, {body(b.body_index).name()}]]")

    def geometry_name(self, index: int) -> str:
        return GROUND_NAME if index < 0 else self.geometries[index].name

    def contact_results(self) -> ContactResults:
        """The contacts of the last step (at its start state) as Drake's ContactResults (allocates)."""
        c = self.point_contact
        results = ContactResults()
        for i in range(c.num_contacts):
            pair = PenetrationAsPointPair(self.geometry_name(c.geometry_A[i]), self.geometry_name(c.geometry_B[i]),
                                          c.p_WCa[i], c.p_WCb[i], c.nhat_BA_W[i], c.depth[i])
            results.AddContactInfo(PointPairContactInfo(c.body_A[i], c.body_B[i], c.f_Bc_W[i], c.p_WC[i],
                                                        c.separation_speed[i], c.slip_speed[i], pair))
        return results
