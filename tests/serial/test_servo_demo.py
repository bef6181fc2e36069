"""The servo arms in real time as a user runs them: `hil demo --config configs/servo/...` (simulated
servos on a pty, the servo-bus driver and the control loop in three processes, UDP multicast LCM),
and the unpowered simulated arm, which must sag as geared servos let it, not swing."""
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from drivers.run_config import load_config
from drivers.serial.servo_plant import build_bus

CONFIGS = Path("configs/servo")


def _copy(name: str, tmp_path: Path) -> Path:
    """configs/servo/NAME with its bus on a pty of its own (concurrent runs do not share a link)."""
    data = yaml.safe_load((CONFIGS / name).read_text())
    model = data["robot"]["model"]
    if not model.startswith("package://"):
        data["robot"]["model"] = str((CONFIGS / model).resolve())
    data["servo_bus"]["port"] = str(tmp_path / "bus")
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("name", ["so101.yaml", "dxl_arm.yaml", "koch.yaml"])
def test_demo_runs_the_servo_arm_to_the_end_without_a_fault(name, tmp_path, multicast_url):
    config = _copy(name, tmp_path)
    result = subprocess.run([sys.executable, "-m", "hil", "demo", "--config", str(config), "--duration", "4",
                             "--lcm-url", multicast_url, "--json", "--quiet"],
                            capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["final_state"] == "RUNNING" and summary["faults"] == [], summary["transitions"]
    assert summary["tracking_error_rad"]["ticks"] > 2000          # it tracked the trajectory most of the run
    assert max(summary["tracking_error_rad"]["max"]) < 0.5        # rad: generous for a loaded machine


def test_unpowered_so101_sags_and_does_not_swing(tmp_path):
    """Torque off (before the driver enables it): only the back-driven gear trains hold the arm."""
    cfg = load_config(CONFIGS / "so101.yaml", {"servo_bus": {"port": str(tmp_path / "bus")}})
    bus = build_bus(cfg)
    try:
        physics = bus.plant.physics
        q0, top = physics.q.copy(), 0.0
        for _ in range(100):
            bus.advance(0.01)
            top = max(top, float(np.max(np.abs(physics.v))))
        assert top < 2.0, top                                      # rad/s; frictionless it exceeds 10
        assert np.max(np.abs(physics.q - q0)) > 0.05               # but gravity does move it
    finally:
        bus.link.unplug()


def test_the_simulated_arm_rests_until_its_torque_first_comes_on(tmp_path):
    """`hil servo-bus-device` up, no driver yet (it starts late on a loaded machine) or one still
    PINGing: the arm rests where it was left, however long; the first torque on starts its clock."""
    import serial

    from drivers.serial.dynamixel import PacketWriter
    cfg = load_config(CONFIGS / "dxl_arm.yaml", {"servo_bus": {"port": str(tmp_path / "bus")}})
    bus = build_bus(cfg).start()
    try:
        physics = bus.plant.physics
        q0 = physics.q.copy()
        time.sleep(1.5)                                            # unpowered and served, it fell 0.7 rad
        assert np.array_equal(physics.q, q0)
        with serial.Serial(bus.path, timeout=0.1) as port:
            writer = PacketWriter()
            port.write(bytes(writer.ping(1)))
            time.sleep(1.0)
            assert np.array_equal(physics.q, q0)                   # a PING powers nothing
            port.write(bytes(writer.write(1, 64, b"\x01")))       # the pan servo's torque on
            end = time.monotonic() + 10.0
            while np.max(np.abs(physics.q - q0)) < 0.05 and time.monotonic() < end:
                time.sleep(0.05)
        assert np.max(np.abs(physics.q - q0)) >= 0.05                      # then it sags
    finally:
        bus.stop()
