"""The sim section (SimConfig), the runner's reading of a run config, and the example configs."""
from pathlib import Path

import numpy as np
import pytest

from drivers.core.config import RobotConfig, channels_for
from drivers.core.robot import build_plant
from drivers.core.schema import ConfigError
from drivers.run_config import load_config
from drivers.sim import SimConfig, SimulatedRobot, load_sim_config
from drivers.sim.config import per_joint

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "sim"


def test_defaults():
    c = load_sim_config(None)
    assert c == SimConfig()
    assert (c.time_step, c.time_step_ns, c.integrator, c.status_period, c.utime) == \
        (0.001, 1_000_000, "semi_implicit_euler", None, "sim")
    assert (c.gravity_compensation, c.command_timeout, c.safe_command, c.seed) == ("none", 0.1, "hold", 0)
    assert (c.contact.enabled, c.contact.stiffness, c.contact.dissipation, c.contact.stiction_tolerance,
            c.contact.publish_rate) == (False, 1e5, 2.0, 1e-4, 60.0)
    assert (c.contact.ground.height, c.contact.ground.friction.static, c.contact.ground.friction.dynamic) == \
        (0.0, 0.8, 0.7)
    assert c.joint_limits.enabled and c.joint_limits.stiffness is None and c.position_control.kp == 1000.0


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_example_configs_build_a_robot(path, memq):
    cfg = load_config(path)
    channels = channels_for(cfg)
    assert Path(cfg.robot.model).name == "iiwa14.urdf" and cfg.robot.protocol == "iiwa"
    assert channels.status == "IIWA_STATUS"
    robot = SimulatedRobot(build_plant(cfg.robot), cfg.sim, cfg.robot.protocol, channels, memq)
    for _ in range(10):
        robot.tick()
    assert robot.physics.steps == 10


@pytest.mark.parametrize("section, key, message", [
    ({"integrater": "rk4"}, "sim.integrater", "did you mean 'integrator'"),
    ({"integrator": "euler"}, "sim.integrator", "must be one of 'semi_implicit_euler', 'rk4'"),
    ({"time_step": 0}, "sim.time_step", "must be > 0"),
    ({"time_step": 1.5e-9}, "sim.time_step", "whole number of nanoseconds"),
    ({"status_period": 0.0025}, "sim.status_period", "must be a positive multiple of time_step"),
    ({"command_timeout": 0.0005}, "sim.command_timeout", "must be at least one time_step"),
    ({"contact": {"ground": {"friction": {"static": 0.3, "dynamic": 0.5}}}}, "sim.contact.ground.friction.dynamic",
     r"must be <= static"),
    ({"contact": {"stiffness": -1.0}}, "sim.contact.stiffness", "must be > 0"),
    ({"contact": {"exclude": [["a", "b", "c"]]}}, "sim.contact.exclude[0]", "must be a pair of body names"),
    ({"control_mode": []}, "sim.control_mode", "must name at least one"),
    ({"control_mode": ["force"]}, "sim.control_mode[0]", "must be one of"),
    ({"utime": "gps"}, "sim.utime", "must be one of 'sim', 'wall'"),
    ({"seed": 1.5}, "sim.seed", "must be an integer"),
    ({"faults": {"type": "silent"}}, "sim.faults", "must be a list"),
])
def test_bad_values_name_the_key(section, key, message):
    with pytest.raises(ConfigError, match=message) as error:
        load_sim_config(section)
    assert error.value.key == key


def test_per_joint_values():
    np.testing.assert_array_equal(per_joint(2.0, 3, "k"), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(per_joint([1, 2, 3], 3, "k"), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(per_joint(None, 2, "k", np.array([4.0, 5.0])), [4.0, 5.0])
    with pytest.raises(ConfigError, match=r"k\[1\]: must be a finite number >= 0, got 'x'"):
        per_joint([1, "x", 3], 3, "k")
    with pytest.raises(ConfigError, match="k: must be a finite number >= 0, got nan"):
        per_joint(float("nan"), 3, "k")


def write(tmp_path, text, name="run.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_run_config_reads_only_its_keys(tmp_path):
    """Other sections and robot keys belong to the loop; channels take a prefix and Channels overrides."""
    model = Path(__file__).resolve().parents[2] / "configs" / "robots" / "iiwa14.urdf"
    path = write(tmp_path, f"""
robot: {{model: {model}, protocol: panda, end_effector: iiwa_link_ee}}
lcm: {{url: "udpm://239.255.76.67:7999?ttl=0"}}
channels: {{prefix: "LEFT_", contact_results: MY_CONTACTS}}
loop: {{rate_hz: 1000}}
controller: {{type: joint_pd}}
sim: {{integrator: rk4}}
""")
    cfg = load_config(path)
    channels = channels_for(cfg)
    assert (cfg.robot.model, cfg.robot.protocol, cfg.lcm.url) == (str(model), "panda",
                                                                   "udpm://239.255.76.67:7999?ttl=0")
    assert (channels.status, channels.command, channels.contact_results) == \
        ("LEFT_PANDA_STATUS", "LEFT_PANDA_COMMAND", "MY_CONTACTS")
    assert cfg.sim.integrator == "rk4" and cfg.source == str(path)
    assert load_config(path, {"lcm": {"url": "memq://"}}).lcm.url == "memq://"


@pytest.mark.parametrize("text, key, message", [
    ("robot: {model: MODEL}\nsim: {time_step: -1}", "sim.time_step", "must be > 0"),
    ("robot: {model: MODEL}\nsim: {faults: [{type: latency}]}", "sim.faults[0].delay", "latency"),
])
def test_a_bad_sim_section_fails_when_the_run_config_loads(tmp_path, text, key, message):
    model = Path(__file__).resolve().parents[2] / "configs" / "robots" / "iiwa14.urdf"
    path = write(tmp_path, text.replace("MODEL", str(model)))
    with pytest.raises(ConfigError, match=message) as error:
        load_config(path)
    assert error.value.key == key and str(error.value).startswith(str(path))


def test_weld_of_the_run_config(tmp_path):
    with pytest.raises(ConfigError, match="robot.weld: the model has no frame named 'nowhere'"):
        build_plant(RobotConfig(model=str(CONFIGS.parent / "robots" / "iiwa14.urdf"), weld="nowhere"))


def test_sim_objects_are_validated_and_added_to_the_plant():
    from drivers.core.paths import CONFIGS
    box = {"name": "box", "size": [0.05, 0.05, 0.05], "mass": 0.2, "xyz": [0.5, 0.0, 0.2]}
    with pytest.raises(ConfigError, match=r"sim.objects\[1\].name.*twice"):
        load_sim_config({"objects": [box, box]})
    with pytest.raises(ConfigError, match=r"sim.objects\[0\].size"):
        load_sim_config({"objects": [{**box, "size": [0.05, 0.0, 0.05]}]})
    with pytest.raises(ConfigError, match=r"sim.objects\[0\].friction.dynamic"):
        load_sim_config({"objects": [{**box, "friction": {"static": 0.5, "dynamic": 0.6}}]})
    sim = load_sim_config({"objects": [box, {"name": "table", "size": [0.5, 0.5, 0.1], "xyz": [0.5, 0, 0.05],
                                             "welded": True}]})
    robot = RobotConfig(str(CONFIGS / "robots" / "iiwa14.urdf"), end_effector="iiwa_link_ee")
    plant = build_plant(robot, simulated=True, objects=sim.objects)
    assert plant.num_positions() == 7 + 7
    assert [plant.get_body(b).name() for b in plant.GetFloatingBaseBodies()] == ["box"]
    q = plant.GetDefaultPositions()
    s = plant.GetBodyByName("box").floating_positions_start()
    assert np.allclose(q[s:s + 7], [1, 0, 0, 0, 0.5, 0.0, 0.2])
    assert plant.CalcTotalMass(plant.CreateDefaultContext()) > 0.2
    with pytest.raises(ConfigError, match=r"sim.objects\[0\].name.*iiwa_link_7"):
        build_plant(robot, objects=load_sim_config({"objects": [{**box, "name": "iiwa_link_7"}]}).objects)


def test_a_cylinder_object_gets_a_solid_cylinders_inertia_and_geometry():
    """shape: cylinder needs radius and length (and no size); the body gets m r²/2 about Bz, m (3r² + l²)/12
    across, and a collision and visual Cylinder of that size."""
    from drivers.core.paths import CONFIGS
    from dynamics_cy import Cylinder
    can = {"name": "can", "shape": "cylinder", "radius": 0.03, "length": 0.1, "mass": 0.4, "xyz": [0.5, 0, 0.05]}
    with pytest.raises(ConfigError, match=r"sim.objects\[0\].length: a cylinder needs length and radius"):
        load_sim_config({"objects": [{k: v for k, v in can.items() if k != "length"}]})
    with pytest.raises(ConfigError, match=r"sim.objects\[0\].size: is not a cylinder's dimension"):
        load_sim_config({"objects": [{**can, "size": [0.1, 0.1, 0.1]}]})
    with pytest.raises(ConfigError, match=r"sim.objects\[0\].radius: is not a box's dimension"):
        load_sim_config({"objects": [{"name": "box", "size": [0.1, 0.1, 0.1], "radius": 0.1}]})
    with pytest.raises(ConfigError, match=r"sim.objects\[0\].size: a box needs size"):
        load_sim_config({"objects": [{"name": "box"}]})
    sim = load_sim_config({"objects": [can]})
    robot = RobotConfig(str(CONFIGS / "robots" / "iiwa14.urdf"), end_effector="iiwa_link_ee")
    plant = build_plant(robot, simulated=True, objects=sim.objects)
    body = plant.GetBodyByName("can")
    I = body.default_rotational_inertia().CopyToFullMatrix3()
    m, r, length = 0.4, 0.03, 0.1
    np.testing.assert_allclose(np.diag(I), [m * (3 * r * r + length ** 2) / 12] * 2 + [m * r * r / 2], rtol=1e-12)
    (g,) = plant.GetCollisionGeometriesForBody(body)
    assert isinstance(g.shape, Cylinder) and (g.shape.radius(), g.shape.length()) == (r, length)
