"""Arms of example-robot-data end to end (configs/arms/): package:// models and meshes through the
package map, actuated joints named or taken from <transmission>s, each config holding within 1 mrad
and tracking its waypoint move in lockstep behind its driver, and robot.package_map's errors."""
import lcm
import numpy as np
import pytest

from drivers.core.robot import load_robot
from drivers.core.schema import ConfigError
from drivers.run_config import load_config, parse_config
from dynamics_cy.planning.legged_models import example_robot_data_root
from hil.lockstep import start_lockstep

pytestmark = pytest.mark.skipif(example_robot_data_root() is None, reason="example-robot-data is not installed")
ARMS = ["panda_torque", "panda_velocity", "panda_position", "ur5", "kinova", "xarm7"]


def start(cfg):
    """A real driver (the Panda's franka_driver) runs 0.5 s before the loop; Drake's simulated driver,
    which only damps an arm that gets no command, starts with it."""
    order = "together" if cfg.robot.driver in ("drake_sim", "auto") else "driver_first"
    return start_lockstep(cfg, order, 0.5, lcm.LCM("memq://"))


@pytest.mark.parametrize("name", ARMS)
def test_each_arm_holds_and_tracks_in_lockstep(name):
    cfg = load_config(f"configs/arms/{name}.yaml", {"viz": False, "trajectory": {"type": "hold"}})
    q0 = np.array(cfg.sim.initial_positions)
    loop, sim = start(cfg)
    drift = [0.0]

    def track(lp):
        if lp.safety.commanding:
            drift[0] = max(drift[0], float(np.max(np.abs(lp.q - q0))))
    summary = loop.run(2.0, on_tick=track)
    assert getattr(sim, "exited", None) is None, sim.exited
    assert summary["final_state"] == "RUNNING" and summary["faults"] == [], summary["transitions"]
    assert drift[0] < 1e-3, drift

    cfg = load_config(f"configs/arms/{name}.yaml", {"viz": False})
    via = np.array(cfg.trajectory.waypoints[0]["q"] if isinstance(cfg.trajectory.waypoints[0], dict)
                   else cfg.trajectory.waypoints[0].q)
    loop, sim = start(cfg)
    reached = [np.inf]

    def near(lp):
        reached[0] = min(reached[0], float(np.max(np.abs(lp.q - via))))
    summary = loop.run(5.0, on_tick=near)
    assert getattr(sim, "exited", None) is None, sim.exited
    assert summary["final_state"] == "RUNNING" and summary["faults"] == [], summary["transitions"]
    assert np.max(summary["tracking_error_rad"]["max"]) < 0.02, summary["tracking_error_rad"]
    assert reached[0] < 0.01, reached                                # it went to the waypoint
    np.testing.assert_allclose(loop.q, q0, atol=2e-3)                # and came back


def test_the_panda_drives_seven_joints_with_the_fingers_welded_and_urdf_effort_limits():
    cfg = load_config("configs/arms/panda_torque.yaml")
    robot = load_robot(cfg.robot)
    assert robot.joint_names == [f"panda_joint{i}" for i in range(1, 8)]
    assert robot.plant.num_velocities() == 7                       # 9 in the file: the fingers are welded
    np.testing.assert_allclose(robot.plant.GetEffortUpperLimits(), [87, 87, 87, 87, 12, 12, 12])
    assert cfg.robot.model.startswith(str(example_robot_data_root()))


def test_a_model_without_transmissions_actuates_every_movable_joint():
    """The stock Panda with no actuated_joints: 9 actuators (the fingers' effort limit, 100 N, from the URDF)."""
    cfg = parse_config({"robot": {"model": "package://example-robot-data/robots/panda_description/urdf/panda.urdf",
                                  "weld": "panda_link0"}}, example_robot_data_root(), "t")
    robot = load_robot(cfg.robot)
    assert robot.n == 9 and robot.joint_names[-2:] == ["panda_finger_joint1", "panda_finger_joint2"]
    assert robot.plant.GetEffortUpperLimits()[-1] == 100       # the URDF finger joints' <limit effort>


def test_bad_actuated_joints_and_package_map_entries_are_named(tmp_path):
    panda = "package://example-robot-data/robots/panda_description/urdf/panda.urdf"
    cfg = parse_config({"robot": {"model": panda, "actuated_joints": ["panda_joint1", "elbow"]}}, tmp_path, "t")
    with pytest.raises(ConfigError, match=r"robot.actuated_joints\[1\].*no movable joint 'elbow'"):
        load_robot(cfg.robot)
    with pytest.raises(ConfigError, match="robot.package_map.*does not exist"):
        parse_config({"robot": {"model": panda, "package_map": {"mine": "nowhere"}}}, tmp_path, "t")
    with pytest.raises(ConfigError, match="robot.model.*unknown package 'mine'"):
        parse_config({"robot": {"model": "package://mine/arm.urdf"}}, tmp_path, "t")


def test_package_map_entries_resolve_a_model_and_its_meshes(tmp_path):
    """A package given by folder and one by package.xml: the model and a mesh found through them."""
    pkg = tmp_path / "src" / "my_arm"
    (pkg / "urdf").mkdir(parents=True)
    (pkg / "package.xml").write_text("<package><name>my_arm</name></package>")
    (pkg / "meshes").mkdir()
    (pkg / "meshes" / "link.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    (pkg / "urdf" / "arm.urdf").write_text(
        '<robot name="a"><link name="base"/><link name="l1"><inertial><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
        '<visual><geometry><mesh filename="package://my_arm/meshes/link.obj"/></geometry></visual></link>'
        '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>'
        '<limit effort="5" lower="-1" upper="1" velocity="1"/></joint></robot>')
    for entry in ("src/my_arm", "src/my_arm/package.xml"):
        cfg = parse_config({"robot": {"model": "package://my_arm/urdf/arm.urdf", "weld": "base",
                                      "package_map": {"my_arm": entry}}}, tmp_path, "t")
        assert cfg.robot.model == str(pkg / "urdf" / "arm.urdf")
        robot = load_robot(cfg.robot)
        assert robot.joint_names == ["j1"] and robot.plant.GetEffortUpperLimits()[0] == 5
    with pytest.raises(ConfigError, match="names another package"):
        parse_config({"robot": {"model": "package://my_arm/urdf/arm.urdf",
                                "package_map": {"other": "src/my_arm/package.xml"}}}, tmp_path, "t")


@pytest.mark.parametrize("name", ["panda_torque", "ur5", "kinova"])
def test_meshes_reach_the_viewer_and_the_camera_frames_the_arm(name):
    """Every visual of the load message is a mesh file that exists (resolved by the package map), and
    the camera's view cone (drivers.viz.camera, looking at the origin) holds every body origin."""
    from drivers.core.robot import build_plant
    from drivers.viz import load_robot_message
    from drivers.viz.camera import FOV_DEG, camera_position
    cfg = load_config(f"configs/arms/{name}.yaml")
    plant = build_plant(cfg.robot)
    geoms = [g for link in load_robot_message(plant).link for g in link.geom]
    assert geoms and all(g.string_data.endswith((".dae", ".stl", ".obj")) for g in geoms)
    assert all(__import__("os").path.isfile(g.string_data) for g in geoms)
    q = cfg.sim.initial_positions
    p_WC = camera_position(plant, q)
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, np.array(q))
    axis = -p_WC / np.linalg.norm(p_WC)
    for i in range(plant.num_bodies()):
        p = plant.EvalBodyPoseInWorld(context, plant.get_body(i)).translation() - p_WC
        angle = np.degrees(np.arccos(np.clip(np.dot(p, axis) / np.linalg.norm(p), -1.0, 1.0)))
        assert angle < FOV_DEG / 2 * 0.9, (plant.get_body(i).name(), angle)


def test_meldis_meshcat_takes_the_camera_parameters():
    """The YAML parses as pydrake's MeshcatParams and Meshcat (Meldis's viewer) sets the camera from it."""
    geometry = pytest.importorskip("pydrake.geometry")
    from pydrake.common.yaml import yaml_load_typed

    from drivers.core.robot import build_plant
    from drivers.viz.camera import CAMERA, camera_position, meshcat_params_yaml
    cfg = load_config("configs/arms/ur5.yaml")
    plant = build_plant(cfg.robot)
    params = yaml_load_typed(schema=geometry.MeshcatParams, data=meshcat_params_yaml(plant))
    x, y, z = camera_position(plant)
    (prop,) = params.initial_properties
    assert prop.path == CAMERA and prop.property == "position"
    np.testing.assert_allclose(prop.value, [x, z, -y], atol=1e-3)              # Meshcat's y-up frame
    params.host = "localhost"
    assert geometry.Meshcat(params).HasPath(CAMERA)
