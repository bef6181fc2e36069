"""The `hil` command line as a user runs it: real processes, UDP multicast LCM with ttl=0."""
import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

DEMO = "configs/demo.yaml"


def hil(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "hil", *args], capture_output=True, text=True, timeout=timeout)


def test_help_lists_every_command():
    out = hil("--help").stdout
    commands = ("run", "sim", "demo", "viz", "serial", "serial-device", "regress", "replay", "report")
    for command in commands:
        assert f"hil {command} " in out
        assert hil(command, "--help").returncode == 0
    assert "--plot" in hil("run", "--help").stdout


def test_version_is_the_installed_distributions():
    from importlib.metadata import version

    import hil as package
    result = hil("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"hil (hilstack) {version('hilstack')}"
    assert package.__version__ == version("hilstack")


def test_demo_runs_the_simulated_iiwa_in_another_process_and_summarizes(multicast_url, tmp_path):
    plot = tmp_path / "demo.png"
    result = hil("demo", "--duration", "3", "--lcm-url", multicast_url, "--json", "--plot", str(plot))
    assert result.returncode in (0, 3), result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["ticks"] == 3000 and summary["controller"] == "computed_torque"
    assert summary["status"]["received"] > 2500
    assert max(summary["tracking_error_rad"]["max"]) < 0.05
    assert {"p50", "p99", "p99.9", "max"} <= summary["lateness_us"].keys()
    assert plot.stat().st_size > 10_000


@pytest.mark.parametrize("change, message", [
    ({"loop": {"rate_hz": 0}}, "loop.rate_hz: must be > 0"),
    ({"controller": {"type": "lqr"}}, "controller.type: unknown controller 'lqr'"),
    ({"sim": {"integrator": "euler"}}, "sim.integrator: must be one of"),
    ({"trajectory": {"type": "quintic", "goal": [0, 0, 0, -9, 0, 0, 0]}}, "trajectory.goal: iiwa_joint_4 goal -9"),
    ({"trajectory": {"type": "cartesian", "goal_position": [0.5, 0, 0.5], "velocity_scale": 1.0}},
     "trajectory.velocity_scale: must be < 1"),
    ({"lcm": {"url": "foo://bar"}}, "lcm.url: LCM cannot open 'foo://bar'"),
    ({"loop": {"cpus": [4095]}}, "loop.cpus: CPUs [4095] are not available to this process"),
])
def test_bad_configs_are_rejected_at_start_naming_the_key(tmp_path, change, message):
    data = yaml.safe_load(open(DEMO))
    for section, values in change.items():
        data[section] = {**data.get(section, {}), **values} if isinstance(data.get(section), dict) else values
    data["robot"]["model"] = str((__import__("pathlib").Path(DEMO).resolve().parent / data["robot"]["model"]))
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    result = hil("run", str(path), "--duration", "1", timeout=30)
    assert result.returncode == 2
    assert message in result.stderr and "bad.yaml" in result.stderr


def test_run_without_a_robot_says_so(tmp_path, multicast_url):
    result = hil("run", DEMO, "--lcm-url", multicast_url, "--quiet", timeout=30)
    assert result.returncode == 2
    assert "no valid status on IIWA_STATUS" in result.stderr and "hil sim" in result.stderr


def test_the_simulated_robot_refuses_a_nonphysical_inertia_that_the_controller_accepts(tmp_path, multicast_url):
    """Drake's policy (replace it, with a warning) for the controller's plant; the simulated robot,
    whose physics the tests trust, stops at start naming the link."""
    from pathlib import Path

    from drivers.core.robot import build_plant
    from drivers.core.schema import ConfigError
    from drivers.run_config import parse_config
    urdf = Path("configs/robots/iiwa14.urdf").read_text()
    link3 = urdf.index('<link name="iiwa_link_3">')
    start = urdf.index("<inertia ", link3)
    end = urdf.index("/>", start) + 2
    bad = tmp_path / "iiwa_bad.urdf"
    bad.write_text(urdf[:start] + '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.05"/>' + urdf[end:])
    data = yaml.safe_load(open(DEMO))
    data["robot"]["model"] = str(bad)
    data["lcm"]["url"] = multicast_url
    path = tmp_path / "bad_inertia.yaml"
    path.write_text(yaml.safe_dump(data))
    result = hil("sim", str(path), "--duration", "1", timeout=30)
    assert result.returncode == 2, result.stderr
    assert "link 'iiwa_link_3'" in result.stderr and "triangle inequality" in result.stderr
    assert "Traceback" not in result.stderr
    robot_cfg = parse_config(data, tmp_path, str(path)).robot
    plant = build_plant(robot_cfg)                                          # the controller's view: Drake's
    body = plant.GetBodyByName("iiwa_link_3")
    assert body.default_mass() == pytest.approx(3.5, rel=1e-12)               # a water sphere of its mass
    I_cm = body.default_rotational_inertia().ShiftToCenterOfMass(3.5, body.default_com()).get_moments()
    assert np.ptp(I_cm) < 1e-12 and I_cm[0] > 0

    massless = tmp_path / "iiwa_massless_hand.urdf"        # the last link without mass: ABA is singular
    i = urdf.index('<link name="iiwa_link_7">')
    j = urdf.index("</inertial>", i) + len("</inertial>")
    massless.write_text(urdf[:urdf.index("<inertial>", i)] + urdf[j:])
    robot_cfg.model = str(massless)
    build_plant(robot_cfg)                                                  # Drake finalizes it too
    with pytest.raises(ConfigError, match="simulated robot cannot move it: .*joint 'iiwa_joint_7'"):
        build_plant(robot_cfg, simulated=True)
