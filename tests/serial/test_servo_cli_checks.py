"""A servo mapping that does not fit the robot's joints (a servo for a joint the URDF lacks, or a URDF
joint without a servo) is a config error of every command that would drive the bus, found before
any process, pty or port is opened: `hil demo --config`, `hil servo-bus` and `hil servo-bus-device`
exit 2 at once with one line naming the joint, where the demo used to start its children and wait
loop.start_timeout for a status that could never come."""
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

CONFIG = REPO / "configs" / "servo" / "dxl_arm.yaml"          # joints pan, shoulder, elbow
COMMANDS = {"demo": ["demo", "--config"], "servo-bus": ["servo-bus"], "servo-bus-device": ["servo-bus-device"]}
CASES = {   # name: (change to servo_bus.joints, the text the error line must hold)
    "joint_not_in_urdf": (lambda joints: joints[2].update(joint="wrist"),
                          "servo_bus.joints[2].joint: 'wrist' is no actuated joint of the robot; its joints: "
                          "pan, shoulder, elbow"),
    "urdf_joint_without_servo": (lambda joints: joints.pop(1),
                                 "servo_bus.joints: no servo for the robot's joints shoulder"),
}


def bad_config(tmp_path: Path, case: str) -> Path:
    data = yaml.safe_load(CONFIG.read_text())
    data["robot"]["model"] = str((CONFIG.parent / data["robot"]["model"]).resolve())
    data["servo_bus"]["port"] = str(tmp_path / "bus")
    data["loop"]["start_timeout"] = 60.0          # the old demo would wait this long: the test would time out
    CASES[case][0](data["servo_bus"]["joints"])
    path = tmp_path / f"{case}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_servo_mapping_that_misses_the_robot_exits_2_before_anything_starts(command, case, tmp_path):
    config = bad_config(tmp_path, case)
    argv = [sys.executable, "-m", "hil", *COMMANDS[command], str(config), "--duration", "1"]
    result = subprocess.run(argv + (["--quiet", "--lcm-url", "udpm://239.255.76.67:7611?ttl=0"]
                                    if command == "demo" else []),
                            capture_output=True, text=True, timeout=40, cwd=REPO)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr + result.stdout, result.stderr
    assert lines[0] == f"hil: config error: {config}: {CASES[case][1]}"
    assert not (tmp_path / "bus").exists()               # no simulated bus was started: its pty link
    assert "hil demo:" not in result.stdout and "ready" not in result.stdout


def test_regress_help_names_every_servo_scenario(capsys):
    """`hil regress --help` says what the scenarios run against, the servo chains by their files."""
    from hil.cli import main
    with pytest.raises(SystemExit) as done:
        main(["regress", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    names = sorted(p.name for p in (REPO / "configs" / "scenarios").glob("servo_*.yaml"))
    assert names and all(name in text for name in names), text
    assert "servo chain" in text and "Dynamixel" in text and "Feetech" in text
