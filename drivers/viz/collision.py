"""The collision guard's model and its nearest pair for Meldis (hil.collision_guard; docs/hil.md,
Collision guard), on the channels Meldis shows as their own layers:

- DRAKE_VIEWER_LOAD_ROBOT_PROXIMITY: the capsules (CAPSULE geometry, one link per body, named as the
  plant's viewer links), the workspace boxes and planes on the world link, red and translucent;
- DRAKE_VIEWER_DRAW_PROXIMITY: those links' poses X_WB;
- DRAKE_DRAW_FRAMES_COLLISION: the nearest pair's witness points Ca and Cb as two frames whose z axes
  point along n̂_BA_W (Meldis draws each as a triad: the pair's closest points and the line between them).
"""
from __future__ import annotations

import math

import numpy as np

from dynamics_cy import BodyIndex, RigidTransform, RotationMatrix
from messages import lcmt_viewer_draw, lcmt_viewer_geometry_data, lcmt_viewer_link_data, lcmt_viewer_load_robot

from .load import HALF_SPACE_SIZE, HALF_SPACE_THICKNESS, WORLD_LINK, link_name

LOAD_CHANNEL, DRAW_CHANNEL = "DRAKE_VIEWER_LOAD_ROBOT_PROXIMITY", "DRAKE_VIEWER_DRAW_PROXIMITY"
PAIR_CHANNEL = "DRAKE_DRAW_FRAMES_COLLISION"
COLOR = (0.9, 0.2, 0.2, 0.35)


def wxyz(R: np.ndarray) -> list[float]:
    """The unit quaternion [w x y z] (w >= 0) of the rotation matrix R, by Shepperd's method (from the
    largest of w², x², y², z²): a few µs, where the facade's RotationMatrix(R).ToQuaternion() validates R."""
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = R[0], R[1], R[2]
    t = r00 + r11 + r22
    if t >= r00 and t >= r11 and t >= r22:
        s = 2.0 * math.sqrt(1.0 + t)
        q = [0.25 * s, (r21 - r12) / s, (r02 - r20) / s, (r10 - r01) / s]
    elif r00 >= r11 and r00 >= r22:
        s = 2.0 * math.sqrt(1.0 + r00 - r11 - r22)
        q = [(r21 - r12) / s, 0.25 * s, (r01 + r10) / s, (r02 + r20) / s]
    elif r11 >= r22:
        s = 2.0 * math.sqrt(1.0 + r11 - r00 - r22)
        q = [(r02 - r20) / s, (r01 + r10) / s, 0.25 * s, (r12 + r21) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + r22 - r00 - r11)
        q = [(r10 - r01) / s, (r02 + r20) / s, (r12 + r21) / s, 0.25 * s]
    return [-x for x in q] if q[0] < 0 else q


def z_along(n) -> list[float]:
    """[w x y z] of the shortest rotation taking Ẑ onto the unit vector n (about Ẑ × n; 180° about X̂ for
    n = −Ẑ): a frame whose z axis is n."""
    w, x, y = 1.0 + float(n[2]), -float(n[1]), float(n[0])
    norm = math.sqrt(w * w + x * x + y * y)
    return [w / norm, x / norm, y / norm, 0.0] if norm > 1e-9 else [0.0, 1.0, 0.0, 0.0]


def _geometry(kind: int, sizes, X: np.ndarray) -> lcmt_viewer_geometry_data:
    g = lcmt_viewer_geometry_data()
    g.type, g.float_data = kind, [float(s) for s in sizes]
    g.num_float_data = len(g.float_data)
    g.position = [float(x) for x in X[:3, 3]]
    g.quaternion = wxyz(X[:3, :3].tolist())
    g.color = list(COLOR)
    return g


def _axis_pose(z: np.ndarray, p: np.ndarray) -> np.ndarray:
    """A pose at p whose z axis is along z."""
    return RigidTransform(RotationMatrix.MakeFromOneVector(z, 2), p).GetAsMatrix4()


def load_message(plant, model) -> lcmt_viewer_load_robot:
    """The capsules of a planning.capsules.CapsuleModel on their bodies' links, its boxes and planes on the world."""
    message = lcmt_viewer_load_robot()
    world = []
    for b in model.boxes:
        world.append(_geometry(lcmt_viewer_geometry_data.BOX, b.size, b.X_WB))
    for p in model.planes:
        n = np.asarray(p.normal, dtype=float)
        world.append(_geometry(lcmt_viewer_geometry_data.BOX, [HALF_SPACE_SIZE, HALF_SPACE_SIZE, HALF_SPACE_THICKNESS],
                               _axis_pose(n, (p.offset - 0.5 * HALF_SPACE_THICKNESS) * n)))
    links = []
    for body in sorted({c.body for c in model.capsules}):
        geoms = []
        for c in model.capsules:
            if c.body == body:
                axis = c.p_BP1 - c.p_BP0
                length = float(np.linalg.norm(axis))
                z = axis / length if length > 0 else np.array([0.0, 0.0, 1.0])
                geoms.append(_geometry(lcmt_viewer_geometry_data.CAPSULE, [c.radius, length],
                                       _axis_pose(z, 0.5 * (c.p_BP0 + c.p_BP1))))
        b = plant.get_body(BodyIndex(body))
        links.append((link_name(plant, b), int(b.model_instance()), geoms))
    if world:
        links.insert(0, (WORLD_LINK, 0, world))
    for name, robot, geoms in links:
        link = lcmt_viewer_link_data()
        link.name, link.robot_num, link.geom, link.num_geom = name, robot, geoms, len(geoms)
        message.link.append(link)
    message.num_links = len(message.link)
    return message


class CollisionViewer:
    """Publishes the guard's model once (and on demand) and, per draw, its bodies' poses and the nearest pair."""

    def __init__(self, plant, model, lc):
        self.lc, self.model = lc, model
        self._load = load_message(plant, model).encode()
        self._bodies = sorted({c.body for c in model.capsules})
        draw = self._draw = lcmt_viewer_draw()
        draw.link_name = [link_name(plant, plant.get_body(BodyIndex(b))) for b in self._bodies]
        draw.robot_num = [int(plant.get_body(BodyIndex(b)).model_instance()) for b in self._bodies]
        draw.num_links = len(self._bodies)
        pair = self._pair = lcmt_viewer_draw()
        pair.link_name, pair.robot_num, pair.num_links = ["Ca", "Cb"], [0, 0], 2
        self.loads = self.draws = 0

    def publish_load(self) -> None:
        self.lc.publish(LOAD_CHANNEL, self._load)
        self.loads += 1

    def publish(self, X_WB: np.ndarray, k: int, p_WCa: np.ndarray, p_WCb: np.ndarray, nhat: np.ndarray,
                utime: int) -> None:
        """The bodies' poses and pair k's witnesses (k < 0: the pair frames are not sent)."""
        if self.loads == 0:
            self.publish_load()
        draw = self._draw
        draw.timestamp = utime // 1000
        draw.position = [[float(x) for x in X_WB[b, :3, 3]] for b in self._bodies]
        draw.quaternion = [wxyz(X_WB[b, :3, :3].tolist()) for b in self._bodies]
        self.lc.publish(DRAW_CHANNEL, draw.encode())
        if k >= 0:
            pair = self._pair
            pair.timestamp = draw.timestamp
            pair.position = [[float(x) for x in p_WCa], [float(x) for x in p_WCb]]
            q_n = z_along(nhat)
            pair.quaternion = [q_n, q_n]
            self.lc.publish(PAIR_CHANNEL, pair.encode())
        self.draws += 1
