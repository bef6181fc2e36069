"""A station's arms where they stand and as one scene: robot.base_pose welds an arm's base at X_WA in the
controller's model and in the simulated plant alike (its end effector's world pose X_WA X_AE, gravity as the
tilted base feels it, an arm held by gravity compensation); the simulated station draws every arm, its
objects and their contacts as one Meldis scene with distinct names (drivers.sim.station, drivers.viz)."""
import lcm
import numpy as np
import pytest

from drivers.core.config import BasePoseConfig, RobotConfig
from drivers.core.paths import CONFIGS
from drivers.core.robot import build_plant, load_robot, parse_model
from drivers.core.schema import ConfigError
from drivers.station import parse_station
from dynamics_cy import RigidTransform, RollPitchYaw
from hil.station import make_station_lockstep
from messages import lcmt_contact_results_for_viz, lcmt_viewer_draw, lcmt_viewer_load_robot

MODEL = str(CONFIGS / "robots/iiwa14.urdf")
Q0 = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
XYZ, RPY = [0.3, -0.6, 0.2], [0.4, -0.3, 0.9]
X_WA = RigidTransform(RollPitchYaw(*RPY), np.array(XYZ))
G = np.array([0.0, 0.0, -9.81])


def pose(plant, q, frame):
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, np.asarray(q, dtype=float))
    return plant.CalcRelativeTransform(context, plant.world_frame(), frame)


def gravity(plant, q):
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, np.asarray(q, dtype=float))
    return plant.CalcGravityGeneralizedForces(context)


# --- robot.base_pose ----------------------------------------------------------------------------------
def test_the_base_pose_moves_the_end_effector_by_X_WA_and_turns_gravity_into_the_base():
    """X_WE = X_WA X_AE at any q; and τ_g(q) of the tilted arm is the level arm's under the gravity R_AW g
    (the same physics seen from A), a large change for this tilt."""
    cfg = RobotConfig(model=MODEL, end_effector="iiwa_link_ee", base_pose=BasePoseConfig(XYZ, RPY))
    tilted, level = load_robot(cfg), load_robot(RobotConfig(model=MODEL, end_effector="iiwa_link_ee"))
    q = [0.3, 0.7, -0.4, -1.1, 0.5, 0.9, -0.2]
    X_WE, X_AE = pose(tilted.plant, q, tilted.end_effector), pose(level.plant, q, level.end_effector)
    np.testing.assert_allclose((X_WA @ X_AE).GetAsMatrix4(), X_WE.GetAsMatrix4(), atol=1e-12)
    seen_from_A = parse_model(RobotConfig(model=MODEL))
    seen_from_A.mutable_gravity_field().set_gravity_vector(X_WA.rotation().matrix().T @ G)
    np.testing.assert_allclose(gravity(tilted.plant, q),
                               gravity(build_plant(RobotConfig(model=MODEL), parsed=seen_from_A), q), atol=1e-9)
    assert np.abs(gravity(tilted.plant, q) - gravity(level.plant, q)).max() > 10.0


def test_a_base_pose_the_model_cannot_take_is_refused(tmp_path):
    free = tmp_path / "free.urdf"
    free.write_text('<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" '
                    'ixy="0" ixz="0" iyz="0"/></inertial></link></robot>')
    with pytest.raises(ConfigError) as e:
        parse_model(RobotConfig(model=str(free), base_pose=BasePoseConfig()))
    assert "robot.base_pose" in str(e.value) and "robot.weld" in str(e.value)


def scene(**more):
    """Two iiwas: left at the origin, right at X_WA, each with a box on a table of its own; contact between
    bodies (the arms' links out of it)."""
    links = [[f"iiwa_link_{i}"] for i in range(8)]
    sim = {"gravity_compensation": "none",
           "contact": {"enabled": True, "between_bodies": True, "ground": {"enabled": False}, "exclude": links,
                       "stiffness": 2.0e4, "publish_rate": 50.0}}

    def objects(x, y):      # the box free: its [qw qx qy qz x y z] after the arm's q
        return {"initial_positions": Q0 + [1, 0, 0, 0, x, y, 0.125],
                "objects": [{"name": "table", "size": [0.5, 0.8, 0.1], "xyz": [x, y, 0.05], "welded": True},
                            {"name": "box", "size": [0.05, 0.05, 0.05], "mass": 0.2, "xyz": [x, y, 0.125]}]}
    data = {"robot": {"model": "robots/iiwa14.urdf", "end_effector": "iiwa_link_ee"}, "lcm": {"url": "memq://"},
            "controller": {"type": "gravity_compensation"}, "trajectory": {"type": "hold"}, "sim": sim,
            "station": {"arms": [{"name": "left", "sim": objects(0.6, 0.0)},
                                 {"name": "right", "robot": {"base_pose": {"xyz": XYZ, "rpy": RPY}},
                                  "sim": objects(1.5, -0.6)}]}, **more}
    return parse_station(data, CONFIGS, "s.yaml")


def run(station, seconds, channels=()):
    lc = lcm.LCM("memq://")
    seen = {c: [] for c in channels}
    for c in channels:
        lc.subscribe(c, lambda ch, d: seen[ch].append(d))
    loop, sim = make_station_lockstep(station, {"memq://": lc})
    try:
        sim.publish_status()
        summary = loop.run(seconds)
    finally:
        loop.close()
        sim.close()
    return loop, sim, summary, seen


def test_a_tilted_offset_arm_holds_under_gravity_compensation():
    """The simulated arms add no gravity compensation: the loop's law holds each by its own model's τ_g(q),
    the right one tilted and offset; in both plants its end effector stands at X_WA X_AE."""
    s = scene(viz=False)
    assert s.arms["right"].robot.base_pose.rpy == RPY and s.arms["left"].robot.base_pose is None
    loop, sim, summary, _ = run(s, 1.0)
    assert summary["final_state"] == "RUNNING", summary["faults"]
    level = load_robot(RobotConfig(model=MODEL, end_effector="iiwa_link_ee"))
    for name, X in (("left", RigidTransform()), ("right", X_WA)):
        q = sim.robots[name].physics.q[:7]
        np.testing.assert_allclose(q, Q0, atol=2e-4)
        arm = loop.arms[name].robot
        expected = (X @ pose(level.plant, q, level.end_effector)).GetAsMatrix4()
        np.testing.assert_allclose(pose(arm.plant, q, arm.end_effector).GetAsMatrix4(), expected, atol=1e-9)
        plant = sim.robots[name].physics.plant
        np.testing.assert_allclose(pose(plant, sim.robots[name].physics.q, plant.GetFrameByName("iiwa_link_ee"))
                                   .GetAsMatrix4(), expected, atol=1e-9)


def test_the_station_is_one_scene_of_every_arm_at_its_base_pose_with_objects_and_contacts():
    """viz on: one load message of both arms' links and objects, each named by its arm ("left::iiwa14::..."),
    the arms' robot_nums apart; draw messages of all of them, the right base link at X_WA and each box
    resting on its table; one contact message of both boxes' contacts, each ≈ m g."""
    s = scene(viz={"enabled": True, "draw_rate_hz": 50.0})
    _, sim, summary, seen = run(s, 0.5, ("DRAKE_VIEWER_LOAD_ROBOT", "DRAKE_VIEWER_DRAW", "CONTACT_RESULTS"))
    load = lcmt_viewer_load_robot.decode(seen["DRAKE_VIEWER_LOAD_ROBOT"][-1])
    names = [link.name for link in load.link]
    for arm in ("left", "right"):
        assert f"{arm}::iiwa14::iiwa_link_0" in names and f"{arm}::box::box" in names and \
            f"{arm}::table::table" in names
    nums = {arm: {link.robot_num for link in load.link if link.name.startswith(arm)} for arm in ("left", "right")}
    assert not nums["left"] & nums["right"]
    assert len(seen["DRAKE_VIEWER_DRAW"]) == pytest.approx(0.5 * 50, abs=2)
    draw = lcmt_viewer_draw.decode(seen["DRAKE_VIEWER_DRAW"][-1])
    at = {name: (np.array(p), np.array(w)) for name, p, w in zip(draw.link_name, draw.position, draw.quaternion)}
    assert list(draw.link_name) == names and list(draw.robot_num) == [link.robot_num for link in load.link]
    level = load_robot(RobotConfig(model=MODEL))
    X_W0 = X_WA @ pose(level.plant, Q0, level.plant.GetFrameByName("iiwa_link_0"))
    np.testing.assert_allclose(at["right::iiwa14::iiwa_link_0"][0], X_W0.translation(), atol=1e-6)
    np.testing.assert_allclose(np.abs(at["right::iiwa14::iiwa_link_0"][1] @ X_W0.rotation().ToQuaternion().wxyz()),
                               1.0, atol=1e-6)
    for name, xy in (("left::box::box", [0.6, 0.0]), ("right::box::box", [1.5, -0.6])):
        np.testing.assert_allclose(at[name][0], [*xy, 0.125], atol=2e-3)
    contacts = lcmt_contact_results_for_viz.decode(seen["CONTACT_RESULTS"][-1])
    for arm in ("left", "right"):
        pairs = [c for c in contacts.point_pair_contact_info if c.body1_name.startswith(f"{arm}::")]
        assert pairs and all(c.body2_name.startswith(f"{arm}::") for c in pairs)
        f_z = sum(abs(c.contact_force[2]) for c in pairs)
        assert f_z == pytest.approx(0.2 * 9.81, rel=0.05)
    assert summary["sim"]["left"]["contact_results_published"] == 0      # the station's message carries them
    assert sim.viewer_summary()["viz"]["contact_results_published"] - len(seen["CONTACT_RESULTS"]) in (0, 1)


def test_the_base_pose_agrees_with_drake_welding_the_base_at_X_WA():
    """Drake's own plant of the model without its world joint, `base` welded at X_WA (WeldFrames): the same
    end-effector pose and gravity forces τ_g(q) as ours with robot.base_pose."""
    import xml.etree.ElementTree as ET
    pydrake = pytest.importorskip("pydrake.multibody.plant")
    from pydrake.math import RigidTransform as DrakeTransform
    from pydrake.math import RollPitchYaw as DrakeRpy
    from pydrake.multibody.parsing import Parser as DrakeParser
    root = ET.parse(MODEL).getroot()
    for element in [e for e in root if e.get("name") in ("world", "world_weld")]:
        root.remove(element)
    plant = pydrake.MultibodyPlant(0.0)
    DrakeParser(plant).AddModelsFromString(ET.tostring(root, encoding="unicode"), "urdf")
    plant.WeldFrames(plant.world_frame(), plant.GetFrameByName("base"), DrakeTransform(DrakeRpy(*RPY), XYZ))
    plant.Finalize()
    context = plant.CreateDefaultContext()
    q = np.array([0.3, 0.7, -0.4, -1.1, 0.5, 0.9, -0.2])
    plant.SetPositions(context, q)
    ours = load_robot(RobotConfig(model=MODEL, end_effector="iiwa_link_ee", base_pose=BasePoseConfig(XYZ, RPY)))
    X_WE = plant.CalcRelativeTransform(context, plant.world_frame(), plant.GetFrameByName("iiwa_link_ee"))
    np.testing.assert_allclose(pose(ours.plant, q, ours.end_effector).GetAsMatrix4(), X_WE.GetAsMatrix4(), atol=1e-12)
    np.testing.assert_allclose(gravity(ours.plant, q), plant.CalcGravityGeneralizedForces(context), atol=1e-9)
