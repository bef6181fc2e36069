"""Our viewer messages against Drake's own: DrakeVisualizer (role illustration) publishing the same
models to a memq:// DrakeLcm, decoded with Drake's lcm-gen classes."""
import logging
from pathlib import Path

import lcm
import numpy as np
import pytest

pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")

from drake import lcmt_viewer_command as DrakeViewerCommand  # noqa: E402
from drake import lcmt_viewer_draw as DrakeDraw  # noqa: E402
from drake import lcmt_viewer_load_robot as DrakeLoad  # noqa: E402
from pydrake.geometry import DrakeVisualizer, DrakeVisualizerParams, Role  # noqa: E402
from pydrake.lcm import DrakeLcm  # noqa: E402
from pydrake.multibody.parsing import Parser as DrakeParser  # noqa: E402
from pydrake.multibody.plant import AddMultibodyPlantSceneGraph  # noqa: E402
from pydrake.systems.framework import DiagramBuilder  # noqa: E402

from drivers.viz import VIEWER_STARTED, DrawPublisher, load_robot_message  # noqa: E402
from drivers.viz.load import HALF_SPACE_SIZE  # noqa: E402
from dynamics_cy import MultibodyPlant, Parser  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
IIWA = REPO / "configs" / "robots" / "iiwa14.urdf"

OBJ = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"
SHAPES_URDF = """<?xml version="1.0"?>
<robot name="shapes">
  <material name="blue"><color rgba="0.1 0.2 0.9 0.5"/></material>
  <link name="world">
    <visual><origin xyz="0 0 -0.05"/><geometry><box size="1 1 0.1"/></geometry></visual>
  </link>
  <joint name="w" type="fixed"><parent link="world"/><child link="base"/>
    <origin xyz="0.1 0.2 0.3" rpy="0.1 0.2 0.3"/></joint>
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual name="b1"><origin xyz="0 0 0.1" rpy="0.3 0 0"/><geometry><box size="0.2 0.3 0.4"/></geometry>
      <material name="blue"/></visual>
    <visual><geometry><sphere radius="0.05"/></geometry></visual>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
    <origin xyz="0 0 0.5" rpy="3.14159 0 1.2"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="l1">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.2" rpy="0 1.2 0"/><geometry><capsule radius="0.03" length="0.3"/></geometry>
      <material><color rgba="0 1 0 1"/></material></visual>
    <visual><origin rpy="3.14159 0 0"/><geometry><mesh filename="tri.obj" scale="0.1 0.2 0.3"/></geometry></visual>
    <visual><geometry><mesh filename="tri.obj"/></geometry></visual>
  </link>
  <joint name="weld" type="fixed"><parent link="l1"/><child link="tool"/><origin xyz="0 0 0.4"/></joint>
  <link name="tool">
    <inertial><mass value="0.1"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><cylinder radius="0.02" length="0.1"/></geometry></visual>
  </link>
  <link name="no_geometry">
    <inertial><mass value="0.1"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="j2" type="revolute"><parent link="tool"/><child link="no_geometry"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"""
BALL_SDF = """<?xml version="1.0"?>
<sdf version="1.7"><model name="ball"><link name="ball_link">
  <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
  <visual name="v"><geometry><sphere><radius>0.1</radius></sphere></geometry>
    <material><diffuse>1 0 0 1</diffuse></material></visual>
</link></model></sdf>
"""
GROUND_SDF = """<?xml version="1.0"?>
<sdf version="1.7"><model name="ground"><static>true</static><link name="ground_link">
  <visual name="v"><pose>0 0 0.2 0 0 0</pose>
    <geometry><plane><normal>0 0 1</normal><size>10 10</size></plane></geometry></visual>
</link></model></sdf>
"""


@pytest.fixture(scope="module")
def shapes_models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shapes")
    files = {"tri.obj": OBJ, "shapes.urdf": SHAPES_URDF, "ball.sdf": BALL_SDF, "ground.sdf": GROUND_SDF}
    for name, text in files.items():
        (folder / name).write_text(text)
    return [folder / "shapes.urdf", folder / "ball.sdf", folder / "ground.sdf"]


def add_models(plant, parser_class, models, packages=None):
    """Parses the model files into `plant` (with `packages`: {name: path}) and finalizes it."""
    for model in models:
        parser = parser_class(plant)
        for name, path in (packages or {}).items():
            parser.package_map().Add(name, str(path))
        parser.AddModels(str(model))
    plant.Finalize()
    return plant


def ours(models, packages=None):
    return add_models(MultibodyPlant(0.0), Parser, models, packages)


def drake_messages(models, q, packages=None):
    """Drake's (load, draw) for the models at positions q, decoded with Drake's classes."""
    drake_lcm = DrakeLcm("memq://")
    received = {}
    drake_lcm.SubscribeAllChannels(lambda channel, data: received.setdefault(channel, data))
    builder = DiagramBuilder()
    plant, scene_graph = AddMultibodyPlantSceneGraph(builder, 0.0)
    add_models(plant, DrakeParser, models, packages)
    DrakeVisualizer.AddToBuilder(builder, scene_graph, drake_lcm, DrakeVisualizerParams(role=Role.kIllustration))
    diagram = builder.Build()
    context = diagram.CreateDefaultContext()
    plant.SetPositions(plant.GetMyContextFromRoot(context), q)
    context.SetTime(12.345)
    diagram.ForcedPublish(context)
    drake_lcm.HandleSubscriptions(0)
    return (DrakeLoad.decode(received["DRAKE_VIEWER_LOAD_ROBOT"]),
            DrakeDraw.decode(received["DRAKE_VIEWER_DRAW"]))


def assert_same_rotation(ours_wxyz, drake_wxyz, what):
    a, b = np.asarray(ours_wxyz), np.asarray(drake_wxyz)
    assert a[0] >= -1e-7, f"{what}: w must be >= 0, got {a}"
    assert min(np.abs(a - b).max(), np.abs(a + b).max()) < 2e-6, f"{what}: {a} vs Drake {b}"
    if abs(b[0]) > 1e-4:  # away from w = 0 the canonical sign is unique
        np.testing.assert_allclose(a, b, atol=2e-6, err_msg=what)


def assert_same_load(ours_message, drake_message, half_space_links=()):
    assert ours_message.num_links == drake_message.num_links
    for link, drake_link in zip(ours_message.link, drake_message.link):
        assert (link.name, link.robot_num, link.num_geom) == (
            drake_link.name, drake_link.robot_num, drake_link.num_geom)
        for k, (g, d) in enumerate(zip(link.geom, drake_link.geom)):
            what = f"{link.name} geom {k}"
            assert g.type == d.type, what
            assert g.string_data == d.string_data, what
            assert g.num_float_data == d.num_float_data, what
            np.testing.assert_allclose(g.float_data, d.float_data, rtol=1e-6, err_msg=what)
            np.testing.assert_allclose(g.position, d.position, atol=1e-6, err_msg=what)
            np.testing.assert_allclose(g.color, d.color, atol=1e-7, err_msg=what)
            if link.name in half_space_links:
                # Drake's SDFormat parser poses a plane with an extra yaw; the 50 x 50 slab looks the same.
                assert g.float_data[:2] == (HALF_SPACE_SIZE, HALF_SPACE_SIZE)
            else:
                assert_same_rotation(g.quaternion, d.quaternion, what)


def test_iiwa_load_robot_matches_drake_field_by_field():
    plant = ours([IIWA])
    drake_load, _ = drake_messages([IIWA], np.zeros(7))
    ours_load = DrakeLoad.decode(load_robot_message(plant).encode())   # decodes with Drake's class
    assert [link.name for link in ours_load.link] == [f"plant::iiwa14::iiwa_link_{i}" for i in range(8)]
    assert {link.robot_num for link in ours_load.link} == {2}
    assert_same_load(ours_load, drake_load)


def test_all_shapes_instances_world_and_welds_match_drake(shapes_models):
    """box, sphere, cylinder, capsule, meshes with and without scale, a half space, anchored world
    geometry, a welded body, a body without geometry, three model instances, a free body."""
    plant = ours(shapes_models)
    drake_load, _ = drake_messages(shapes_models, plant.GetDefaultPositions())
    ours_load = DrakeLoad.decode(load_robot_message(plant).encode())
    assert [(link.name, link.robot_num) for link in ours_load.link] == [
        ("world", 0), ("plant::shapes::base", 2), ("plant::shapes::l1", 2), ("plant::shapes::tool", 2),
        ("plant::ball::ball_link", 3), ("plant::ground::ground_link", 4)]
    assert_same_load(ours_load, drake_load, half_space_links={"plant::ground::ground_link"})


@pytest.mark.parametrize("seed", range(10))
def test_draw_matches_drake_at_random_configurations(shapes_models, seed):
    rng = np.random.default_rng(seed)
    models = shapes_models + [IIWA]
    plant = ours(models)
    q = plant.GetDefaultPositions()
    q[:] = rng.uniform(-2.5, 2.5, q.size)
    free = plant.GetBodyByName("ball_link").floating_positions_start()
    q[free:free + 4] = rng.normal(size=4)
    q[free:free + 4] /= np.linalg.norm(q[free:free + 4])
    _, drake_draw = drake_messages(models, q)
    publisher = DrawPublisher(plant, lcm.LCM("memq://"))
    assert publisher.encode(q, 12_345_000)
    draw = DrakeDraw.decode(publisher.tobytes())
    assert draw.timestamp == drake_draw.timestamp == 12345
    assert draw.link_name == drake_draw.link_name
    assert draw.robot_num == drake_draw.robot_num
    np.testing.assert_allclose(draw.position, drake_draw.position, atol=2e-6)
    for name, a, b in zip(draw.link_name, draw.quaternion, drake_draw.quaternion):
        assert_same_rotation(a, b, name)


@pytest.mark.parametrize("model", ["anymal_c_simple_description/urdf/anymal.urdf", "a1_description/urdf/a1.urdf"])
def test_example_robot_data_models_match_drake(robot_data, model):
    """Real robots with package:// meshes, boxes and spheres on a floating base (the example-robot-data
    models whose collision meshes Drake's SceneGraph accepts)."""
    logging.getLogger("drake").setLevel(logging.ERROR)
    logging.getLogger("dynamics_cy").setLevel(logging.ERROR)
    path, packages = robot_data / "robots" / model, {"example-robot-data": robot_data}
    plant = ours([path], packages)
    rng = np.random.default_rng(7)
    q = plant.GetDefaultPositions() + rng.normal(size=plant.num_positions()) * 0.5
    q[:4] /= np.linalg.norm(q[:4])
    drake_load, drake_draw = drake_messages([path], q, packages)
    assert_same_load(DrakeLoad.decode(load_robot_message(plant).encode()), drake_load)
    publisher = DrawPublisher(plant, lcm.LCM("memq://"))
    assert publisher.encode(q, 0)
    draw = DrakeDraw.decode(publisher.tobytes())
    assert (draw.link_name, draw.robot_num) == (drake_draw.link_name, drake_draw.robot_num)
    np.testing.assert_allclose(draw.position, drake_draw.position, atol=2e-6)
    for name, a, b in zip(draw.link_name, draw.quaternion, drake_draw.quaternion):
        assert_same_rotation(a, b, name)


def test_viewer_started_is_drake_viewer_command_status_loaded():
    message = DrakeViewerCommand()
    message.command_type, message.command_data = DrakeViewerCommand.STATUS, "loaded"
    assert message.encode() == VIEWER_STARTED
