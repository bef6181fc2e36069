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
