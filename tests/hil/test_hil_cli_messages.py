"""What the `hil` command prints for a user to read: warnings in one line, joints by name, the files it
writes, the summary's figures (real processes)."""
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

SCENARIOS = Path(__file__).parents[2] / "configs" / "scenarios"


def hil(*args, timeout=120, cwd=None):
    return subprocess.run([sys.executable, "-m", "hil", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)


@pytest.mark.parametrize("name", ["collision_wrist_to_table", "collision_wrist_to_base"])
def test_the_shipped_gripper_scenarios_do_not_warn_about_their_contact_stiffness(name):
    result = hil("sim", str(SCENARIOS / f"{name}.yaml"), "--duration", "0.05", "--no-viz", "--lcm-url", "memq://")
    assert result.returncode == 0, result.stderr
    assert "stiffness" not in result.stderr and "arning" not in result.stderr, result.stderr


def test_a_warning_is_printed_once_in_one_line_without_a_source_line(tmp_path):
    data = yaml.safe_load(open(SCENARIOS / "collision_wrist_to_table.yaml"))
    del data["sim"]["contact"]["stiffness"]                # the default 10⁵ N/m on the WSG's 50 g fingers
    data["robot"]["model"] = str(SCENARIOS.parent / data["robot"]["model"])
    (tmp_path / "stiff.yaml").write_text(yaml.safe_dump(data))
    result = hil("sim", str(tmp_path / "stiff.yaml"), "--duration", "0.05", "--no-viz", "--lcm-url", "memq://")
    assert result.returncode == 0, result.stderr
    lines = [x for x in result.stderr.splitlines() if "stiffness" in x]
    assert len(lines) == 1 and lines[0].startswith("hil: warning: sim.contact.stiffness: 100000 N/m on "), \
        result.stderr
    assert "ContactStiffnessWarning" not in result.stderr and ".py:" not in result.stderr, result.stderr


def test_faults_and_the_summary_name_the_joints_as_the_model_does():
    import hil

    def shove(state, command):              # joint 3 (iiwa_joint_4) driven hard: VELOCITY_LIMIT on it
        command.tau[:] = 0.0
        command.tau[3] = 150.0

    summary = hil.run("configs/demo.yaml", shove, duration=1.0, overrides={"viz": False,
                                                                             "safety": {"recover": False}})
    assert summary["joints"] == [f"iiwa_joint_{i}" for i in range(1, 8)]
    fault = summary["faults"][0]
    assert fault["fault"] == "VELOCITY_LIMIT" and fault["reason"].startswith("iiwa_joint_4 at "), fault


def test_a_scenarios_failed_criterion_names_the_worst_joint(tmp_path):
    data = yaml.safe_load(open(SCENARIOS / "joint_pd_quintic.yaml"))
    data["robot"]["model"] = str(SCENARIOS.parent / data["robot"]["model"])
    data["scenario"]["criteria"] = {"max_torque": 1e-6}
    data["scenario"].pop("golden", None)
    (tmp_path / "tight.yaml").write_text(yaml.safe_dump(data))
    result = hil("regress", str(tmp_path / "tight.yaml"), "--report", str(tmp_path / "r.json"))
    assert result.returncode == 1
    assert "max_torque: iiwa_joint_" in result.stdout, result.stdout
