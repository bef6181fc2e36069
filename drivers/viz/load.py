"""lcmt_viewer_load_robot from a plant's visual geometry, as Drake's DrakeVisualizer builds it.

A *link* of the viewer messages is a body B with visual geometry. Its name is the one DrakeVisualizer
gives B's SceneGraph frame when the plant comes from AddMultibodyPlantSceneGraph (source name
"plant"): "plant::<model instance>::<body>", or "plant::<body>" for a body of the default model
instance; robot_num is B's model instance index. Geometry on the world body is anchored: it goes in
the load message only, as the link "world" with robot_num 0. The other links are the draw message's
links, in BodyIndex order (welded bodies included, each with its own X_WB).
"""
from __future__ import annotations

import os

from dynamics_cy import BodyIndex, Box, Capsule, Cylinder, HalfSpace, Mesh, Sphere, default_model_instance, world_index
from messages import lcmt_viewer_geometry_data, lcmt_viewer_link_data, lcmt_viewer_load_robot

SOURCE_NAME = "plant"
"""Drake's geometry source name of a plant added with AddMultibodyPlantSceneGraph."""

DEFAULT_COLOR = (0.9, 0.9, 0.9, 1.0)
"""DrakeVisualizerParams.default_color: the rgba of geometry without a diffuse colour."""

HALF_SPACE_SIZE, HALF_SPACE_THICKNESS = 50.0, 1.0
"""DrakeVisualizer draws a HalfSpace as a 50 x 50 x 1 box whose top face is the plane z = 0 of G."""

WORLD_LINK = "world"


def link_name(plant, body, source_name: str = SOURCE_NAME) -> str:
    """The viewer link name of `body` (see the module doc)."""
    if body.index() == world_index():
        return WORLD_LINK
    instance = body.model_instance()
    if instance == default_model_instance():
        return f"{source_name}::{body.name()}"
    return f"{source_name}::{plant.GetModelInstanceName(instance)}::{body.name()}"


def draw_bodies(plant) -> list:
    """The bodies of a draw message: every body but the world with visual geometry, by BodyIndex."""
    bodies = (plant.get_body(BodyIndex(i)) for i in range(1, plant.num_bodies()))
    return [b for b in bodies if plant.GetVisualGeometriesForBody(b)]


def geometry_data(geometry) -> lcmt_viewer_geometry_data:
    """One GeometryInstance G on body B as DrakeVisualizer encodes it: pose X_BG (position,
    quaternion [w x y z] with w >= 0), rgba, type and float_data (BOX: width, depth, height;
    SPHERE: radius; CYLINDER, CAPSULE: radius, length; MESH: absolute file name in string_data
    and scale x y z)."""
    shape, X_BG = geometry.shape, geometry.X_BG
    p_BG = X_BG.translation()
    g = lcmt_viewer_geometry_data()
    if isinstance(shape, Box):
        g.type, g.float_data = g.BOX, [shape.width(), shape.depth(), shape.height()]
    elif isinstance(shape, Sphere):
        g.type, g.float_data = g.SPHERE, [shape.radius()]
    elif isinstance(shape, Cylinder):
        g.type, g.float_data = g.CYLINDER, [shape.radius(), shape.length()]
    elif isinstance(shape, Capsule):
        g.type, g.float_data = g.CAPSULE, [shape.radius(), shape.length()]
    elif isinstance(shape, Mesh):
        # Viewers run elsewhere: a path relative to this process's directory means nothing to them.
        name = shape.filename()
        g.type, g.float_data = g.MESH, [float(s) for s in shape.scale3()]
        g.string_data = name if "://" in name else os.path.abspath(name)
    elif isinstance(shape, HalfSpace):
        g.type, g.float_data = g.BOX, [HALF_SPACE_SIZE, HALF_SPACE_SIZE, HALF_SPACE_THICKNESS]
        p_BG = p_BG - 0.5 * HALF_SPACE_THICKNESS * X_BG.rotation().matrix()[:, 2]
    else:
        raise TypeError(f"geometry '{geometry.name}' on body {int(geometry.body_index)}: "
                        f"no viewer encoding for {type(shape).__name__}")
    g.num_float_data = len(g.float_data)
    g.position = [float(x) for x in p_BG]
    g.quaternion = [float(x) for x in X_BG.rotation().ToQuaternion().wxyz()]
    rgba = DEFAULT_COLOR if geometry.diffuse_color is None else geometry.diffuse_color
    g.color = [float(x) for x in rgba]
    return g


def _link(name: str, robot_num: int, geometries) -> lcmt_viewer_link_data:
    link = lcmt_viewer_link_data()
    link.name, link.robot_num = name, robot_num
    link.geom = [geometry_data(g) for g in geometries]
    link.num_geom = len(link.geom)
    return link


def load_robot_message(plant, source_name: str = SOURCE_NAME, anchored=()) -> lcmt_viewer_load_robot:
    """The lcmt_viewer_load_robot DrakeVisualizer (role illustration) publishes for `plant`: the
    world link first if the world body has visual geometry, then draw_bodies(plant).

    `anchored`: more geometry on the world (dynamics_cy GeometryInstances, X_BG = X_WG), appended
    to the world link's own, e.g. the simulator's ground, which is not part of the plant. The
    message is then the one DrakeVisualizer sends for the plant with that geometry registered on
    the world body. `plant` may also be a list of (plant, source name, robot_num offset), the parts of
    one scene (a station's arms, scene_parts): one world link of all their world geometry, then each
    part's links named by its source name, robot_num its model instance's + its offset."""
    parts = plant if isinstance(plant, list) else [(plant, source_name, 0)]
    world_geometry = [g for p, _, _ in parts for g in p.GetVisualGeometriesForBody(p.world_body())]
    world_geometry += list(anchored)
    message = lcmt_viewer_load_robot()
    message.link = [_link(WORLD_LINK, int(world_index()), world_geometry)] if world_geometry else []
    message.link += [_link(link_name(p, b, name), offset + int(b.model_instance()), p.GetVisualGeometriesForBody(b))
                     for p, name, offset in parts for b in draw_bodies(p)]
    message.num_links = len(message.link)
    return message


def scene_parts(plants: dict) -> list:
    """(plant, source name, robot_num offset) of each named plant of one scene (a station's arms, by
    name): each its own source name and its model instances numbered after the previous plants'."""
    parts, offset = [], 0
    for name, plant in plants.items():
        parts.append((plant, name, offset))
        offset += plant.num_model_instances()
    return parts
