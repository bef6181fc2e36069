"""A servo mapping that does not fit the robot's joints (a servo for a joint the URDF lacks, or a URDF
joint without a servo) is a config error of every command that would drive the bus, found before
any process, pty or port is opened: `hil demo --config`, `hil servo-bus` and `hil servo-bus-device`
exit 2 at once with one line naming the joint, where the demo used to start its children and wait
loop.start_timeout for a status that could never come. A demo whose robot process ends (a device
that cannot start, a driver killed mid-run) stops with it and names it; `hil regress --help` names
the servo scenarios."""
import os
import signal
import subprocess
import sys
import time
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


def _demo_config(tmp_path: Path, **bus) -> Path:
    data = yaml.safe_load(CONFIG.read_text())
    data["robot"]["model"] = str((CONFIG.parent / data["robot"]["model"]).resolve())
    data["servo_bus"].update(port=str(tmp_path / "bus"), **bus)
    data["loop"]["start_timeout"] = 60.0
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_demo_whose_servo_device_cannot_start_exits_2_at_once(tmp_path, multicast_url):
    """The bus's port is a regular file: `hil servo-bus-device` refuses to replace it (exit 2, its own
    line), and the demo stops then instead of waiting loop.start_timeout (60 s) for a status."""
    (tmp_path / "bus").write_text("not a pty link")
    config = _demo_config(tmp_path)
    result = subprocess.run([sys.executable, "-m", "hil", "demo", "--config", str(config), "--duration", "5",
                             "--quiet", "--lcm-url", multicast_url], capture_output=True, text=True, timeout=40,
                            cwd=REPO)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "servo_bus.link: " in result.stderr and "exists and is not a symlink" in result.stderr
    assert ("hil demo: `hil servo-bus-device` ended (exit status 2) before the first status; the loop stopped"
            in result.stderr), result.stderr
    assert "Traceback" not in result.stderr and (tmp_path / "bus").read_text() == "not a pty link"


def test_a_demo_whose_driver_dies_mid_run_stops_with_exit_3(tmp_path, multicast_url):
    """`hil servo-bus` is killed (SIGKILL) while the loop runs: the demo stops, prints its summary and
    a line naming the process, exit 3, and leaves no process of its own behind."""
    config = _demo_config(tmp_path)
    demo = subprocess.Popen([sys.executable, "-m", "hil", "demo", "--config", str(config), "--duration", "60",
                             "--quiet", "--lcm-url", multicast_url], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        pids = None
        for line in demo.stdout:                  # "hil demo: simulated panda (pids DEVICE, DRIVER) and ..."
            if line.startswith("hil demo: simulated"):
                pids = [int(p) for p in line.split("(pids ")[1].split(")")[0].split(", ")]
                break
        assert pids is not None and len(pids) == 2
        for line in demo.stderr:                  # the loop's start-up line comes with its first tick
            if line.startswith("hil run: ") and "waiting for the status" not in line:
                break
        os.kill(pids[1], signal.SIGKILL)
        out, err = demo.communicate(timeout=30)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    assert demo.returncode == 3, (out, err)
    assert "hil demo: `hil servo-bus` ended (exit status -9) during the run; the loop stopped" in err, err
    assert "Traceback" not in err
    time.sleep(0.5)
    for pid in pids:                              # the device was terminated by the demo, the driver reaped
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
