"""A capsule model of a plant for fast distance checks: capsules fitted to its collision geometry (or
given), world boxes and planes, the pairs to check, and their signed distances at q through the compiled
dynamics_cy._capsules (the collision guard's model, hil.collision_guard, and IK's
MinimumDistanceLowerBoundConstraint on it: minimum_distance.CapsuleMinimumDistanceLowerBoundConstraint).

Fitting (a body's collision geometry, or its visual geometry when it has none): a sphere is a capsule of
length 0; a capsule is itself; a cylinder (radius r, half length a)
becomes the capsule on its axis with half segment h and radius R = √(r² + (a − h)²) (the rim on its
surface), h chosen to make the capsule's reach beyond the cylinder least; a box becomes the fit of its
circumscribed cylinder about its longest axis. Every fitted capsule contains its shape; its `margin` is
how far the capsule reaches beyond the shape at most (the one-sided Hausdorff distance, measured on
the capsule's surface), so the distance of two fitted capsules is never above the shapes' and at most
the two margins below.

Pairs: capsules on bodies that are neither welded together nor the parent and child of a joint (or at
most `skip_within_joints` joints apart), and
every capsule not on the world's welded group against every box and plane, minus the allowed pairs.
A mesh (STL or OBJ) becomes the least-volume capsule about its vertices' principal axis that contains
them (mesh_capsule.py); other meshes are not fitted (listed in `skipped`): give their capsules instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize_scalar

from dynamics_cy import BodyIndex, Box, Capsule, Cylinder, JointIndex, Mesh, Sphere
from dynamics_cy._capsules import KIND_BOX, KIND_CAPSULE, KIND_PLANE, CapsuleDistances

from .collision import _weld_groups
from .distance import SignedDistance
from .kinematics import point_jacobian
from .mesh_capsule import fit_mesh


@dataclass
class CapsuleSpec:
    """A capsule: the segment [p_BP0, p_BP1] in body B's frame grown by `radius`; `margin`: how far it reaches
    beyond the shape it was fitted to (0 when given)."""
    name: str
    body: int
    p_BP0: np.ndarray
    p_BP1: np.ndarray
    radius: float
    margin: float = 0.0


@dataclass
class BoxSpec:
    """A box fixed in the world: X_WB (4x4) and its edge lengths."""
    name: str
    X_WB: np.ndarray
    size: np.ndarray


@dataclass
class PlaneSpec:
    """The half space n̂·x ≤ o (the obstacle; the free side is n̂·x > o)."""
    name: str
    normal: np.ndarray
    offset: float


def _cylinder_fit(r: float, a: float) -> tuple[float, float]:
    """(h, R) of the least-reaching capsule about a cylinder of radius r and half length a."""
    def reach(h):
        R = np.hypot(r, a - h)
        return max(R - r, h + R - a)
    h = minimize_scalar(reach, bounds=(0.0, a), method="bounded", options={"xatol": 1e-12}).x if a > 0 else 0.0
    return float(h), float(np.hypot(r, a - h))


def _reach_beyond(h: float, R: float, r: float, a: float, samples: int = 4001) -> float:
    """The largest distance from the capsule (half segment h, radius R, on z) to the cylinder (r, a): over
    the capsule's profile (axial symmetry), the cap's arc and the side."""
    theta = np.linspace(0.0, 0.5 * np.pi, samples)
    rho = np.concatenate([R * np.sin(theta), np.full(samples, R)])
    z = np.concatenate([h + R * np.cos(theta), np.linspace(0.0, h, samples)])
    dr, dz = np.maximum(rho - r, 0.0), np.maximum(z - a, 0.0)
    return float(np.hypot(dr, dz).max())


def fit_capsule(shape, X_BG: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(p_BP0, p_BP1, radius, margin) of the capsule fitted to `shape` at X_BG (4x4) in body B."""
    R_BG, p_BGo = X_BG[:3, :3], X_BG[:3, 3]
    axis = 2
    if isinstance(shape, Sphere):
        h, r, margin = 0.0, shape.radius(), 0.0
    elif isinstance(shape, Capsule):
        h, r, margin = 0.5 * shape.length(), shape.radius(), 0.0
    elif isinstance(shape, (Cylinder, Box)):
        if isinstance(shape, Cylinder):
            rc, a = shape.radius(), 0.5 * shape.length()
        else:
            half = 0.5 * np.asarray(shape.size(), dtype=float)
            axis = int(np.argmax(half))
            rc, a = float(np.hypot(*np.delete(half, axis))), float(half[axis])
        h, r = _cylinder_fit(rc, a)
        margin = _reach_beyond(h, r, rc, a)
        if isinstance(shape, Box):   # beyond the box: add how far the circumscribed cylinder reaches beyond it
            margin += rc - float(np.delete(half, axis).min())
    elif isinstance(shape, Mesh):
        p0, p1, r, margin = fit_mesh(shape)
        return R_BG @ p0 + p_BGo, R_BG @ p1 + p_BGo, r, margin
    else:
        raise ValueError(f"fit_capsule: unsupported shape {shape!r} (sphere, capsule, cylinder, box, mesh)")
    u = R_BG[:, axis] * h
    return p_BGo - u, p_BGo + u, float(r), float(margin)


def _hops(plant, group: list[int]) -> dict[int, dict[int, int]]:
    """The number of joints between every two weld groups (breadth first over the joints)."""
    links: dict[int, set[int]] = {g: set() for g in group}
    for i in range(plant.num_joints()):
        j = plant.get_joint(JointIndex(i))
        a, b = group[int(j.parent_body().index())], group[int(j.child_body().index())]
        if a != b:
            links[a].add(b)
            links[b].add(a)
    hops = {}
    for start in links:
        seen, frontier, k = {start: 0}, [start], 0
        while frontier:
            k += 1
            frontier = [n for f in frontier for n in links[f] if n not in seen]
            seen.update({n: k for n in frontier})
        hops[start] = seen
    return hops


@dataclass
class CapsuleModel:
    """Capsules on a plant's bodies, world boxes and planes, the pairs checked (kind, capsule, other) and
    their names ('capsule / other'). `from_plant` builds one; `distances()` compiles it."""
    capsules: list[CapsuleSpec]
    boxes: list[BoxSpec] = field(default_factory=list)
    planes: list[PlaneSpec] = field(default_factory=list)
    pairs: list[tuple[int, int, int]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)     # collision geometries not fitted (unreadable meshes)

    @classmethod
    def from_plant(cls, plant, extra: list[CapsuleSpec] = (), boxes: list[BoxSpec] = (),
                   planes: list[PlaneSpec] = (), allowed: list[tuple[str, str]] = (), fit: bool = True,
                   bodies: list[str] | None = None, skip_within_joints: int = 1) -> "CapsuleModel":
        """Capsules fitted to every collision geometry of the plant's bodies (the visual geometry of a body
        that has none; those named in `bodies`, default all; none with fit=False; shapes fit_capsule
        refuses, such as a half space or a mesh it cannot read, are left out and listed in `skipped`) plus
        `extra`; pairs as the module docstring says, minus `allowed` (pairs of capsule, body, box or plane
        names, either order) and minus the capsules on bodies at most `skip_within_joints` joints apart (1:
        the parent and child of a joint, as Drake's filters; 2: also the links on either side of one, such as a
        spherical wrist's)."""
        capsules, skipped = [], []
        if fit:
            for b in range(plant.num_bodies()):
                body = plant.get_body(BodyIndex(b))
                if bodies is not None and body.name() not in bodies:
                    continue
                # A body without collision geometry: its visual geometry (the meshes a URDF draws it with).
                for g in plant.GetCollisionGeometriesForBody(body) or plant.GetVisualGeometriesForBody(body):
                    try:
                        p0, p1, r, margin = fit_capsule(g.shape, g.X_BG.GetAsMatrix4())
                    except ValueError:              # a half space, a mesh in another format
                        skipped.append(g.name)
                        continue
                    capsules.append(CapsuleSpec(g.name, b, p0, p1, r, margin))
        capsules += list(extra)
        group = _weld_groups(plant)
        hops = _hops(plant, group)
        allow = {frozenset(p) for p in allowed}
        names = [plant.get_body(BodyIndex(c.body)).name() for c in capsules]

        def allowed_pair(i, other_names):
            return any(frozenset((x, y)) in allow for x in (capsules[i].name, names[i]) for y in other_names)

        pairs = []
        for i, ci in enumerate(capsules):
            for j in range(i + 1, len(capsules)):
                cj = capsules[j]
                if hops[group[ci.body]].get(group[cj.body], skip_within_joints + 1) <= skip_within_joints:
                    continue
                if not allowed_pair(i, (cj.name, names[j])):
                    pairs.append((KIND_CAPSULE, i, j))
        for i, ci in enumerate(capsules):
            if group[ci.body] == group[0]:
                continue
            pairs += [(KIND_BOX, i, k) for k, box in enumerate(boxes) if not allowed_pair(i, (box.name,))]
            pairs += [(KIND_PLANE, i, k) for k, pl in enumerate(planes) if not allowed_pair(i, (pl.name,))]
        return cls(capsules, list(boxes), list(planes), pairs, skipped)

    def pair_names(self, k: int) -> tuple[str, str]:
        """The names of pair k's capsule and of its capsule, box or plane."""
        kind, a, b = self.pairs[k]
        other = {KIND_CAPSULE: self.capsules, KIND_BOX: self.boxes, KIND_PLANE: self.planes}[kind][b]
        return self.capsules[a].name, other.name

    def pair_name(self, k: int) -> str:
        """'capsule / capsule', 'capsule / box' or 'capsule / plane' of pair k."""
        return " / ".join(self.pair_names(k))

    def pair_bodies(self, k: int) -> tuple[int, int]:
        """The bodies of pair k's A and B (−1 for a box or plane: the world)."""
        kind, a, b = self.pairs[k]
        return self.capsules[a].body, (self.capsules[b].body if kind == KIND_CAPSULE else -1)

    def distances(self) -> CapsuleDistances:
        """The compiled checker of this model (allocation-free compute())."""
        c = self.capsules
        boxes = [np.concatenate([b.X_WB[:3, :3].ravel(), b.X_WB[:3, 3], 0.5 * np.asarray(b.size, dtype=float)])
                 for b in self.boxes]
        planes = []
        for p in self.planes:
            n = np.asarray(p.normal, dtype=float)
            planes.append(np.concatenate([n / np.linalg.norm(n), [p.offset / np.linalg.norm(n)]]))
        return CapsuleDistances([x.body for x in c], [x.p_BP0 for x in c], [x.p_BP1 for x in c],
                                [x.radius for x in c], boxes, planes, self.pairs)


class CapsulePairs:
    """The signed distances of a CapsuleModel's pairs at the configuration of a FrameKinematics, with
    collision.GeometryPairs' interface: minimum_distance's constraints take either (their `capsules=`)."""

    def __init__(self, kin, model: CapsuleModel):
        plant = kin.plant
        self.kin, self.model, self.pairs = kin, model, list(model.pairs)
        self._distances = model.distances()
        self._frames = {b: plant.get_body(BodyIndex(b)).body_frame() for b in {c.body for c in model.capsules}}
        n = len(self.pairs)
        self._X = np.tile(np.eye(4), (plant.num_bodies(), 1, 1))
        self._d, self._n = np.zeros(n), np.zeros((n, 3))
        self._ca, self._cb = np.zeros((n, 3)), np.zeros((n, 3))
        self._at: np.ndarray | None = None

    def _update(self) -> None:
        q = self.kin.q
        if self._at is not None and np.array_equal(self._at, q):
            return
        for b, frame in self._frames.items():
            self._X[b] = self.kin.pose(frame)
        self._distances.compute(self._X, self._d, self._ca, self._cb, self._n)
        self._at = np.array(q)

    def lower_bound(self, k: int) -> float:
        """φ of pair k itself (exact and cheap)."""
        self._update()
        return float(self._d[k])

    def distance(self, k: int) -> SignedDistance:
        self._update()
        return SignedDistance(float(self._d[k]), self._ca[k].copy(), self._cb[k].copy(), self._n[k].copy())

    def distance_gradient(self, k: int, sd: SignedDistance) -> np.ndarray:
        """∂φ/∂q = n̂_BAᵀ (Jv_WCa − Jv_WCb), the witnesses fixed to their bodies (B's: none for the world's)."""
        a, b = self.model.pair_bodies(k)
        grad = np.zeros(self.kin.nq)
        for body, p_WC, sign in ((a, sd.p_WCa, 1.0), (b, sd.p_WCb, -1.0)):
            if body >= 0:
                frame = self._frames[body]
                J = point_jacobian(self.kin.jacobian(frame), p_WC - self.kin.pose(frame)[:3, 3])
                grad += sign * (sd.nhat_BA_W @ J)
        return grad
