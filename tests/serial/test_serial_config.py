"""The `serial:` section: defaults, the example configs, and errors that name the key."""
import re
from pathlib import Path

import lcm
import pytest

from drivers.core.config import channels_for
from drivers.core.robot import build_plant
from drivers.core.schema import ConfigError, read_yaml
from drivers.run_config import load_config
from drivers.serial.config import SerialConfig, load_serial_config
from drivers.serial.device import SimulatedBoard
from drivers.serial.device import run_from_config as run_device
from drivers.serial.driver import SerialDriver
from drivers.sim.config import load_sim_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "serial"


def test_defaults():
    cfg = load_serial_config({"port": "/dev/ttyACM0"})
    assert isinstance(cfg, SerialConfig)
    assert (cfg.baudrate, cfg.joint_count, cfg.effort, cfg.safe_command) == (2_000_000, None, "auto", "disable")
    assert (cfg.command_timeout, cfg.board_watchdog, cfg.stale_timeout, cfg.link_timeout) == (0.05, 0.1, 0.01, 0.5)
    assert (cfg.reconnect.initial, cfg.reconnect.max, cfg.health_rate) == (0.05, 2.0, 10.0)
    assert (cfg.device.state_rate, cfg.device.effort, cfg.device.faults) == (1000.0, "torque", [])


@pytest.mark.parametrize("name", ["iiwa.yaml", "iiwa_faults.yaml"])
def test_example_configs_load(run_config, name):
    cfg = run_config(CONFIGS / name)
    assert isinstance(cfg.serial, SerialConfig) and cfg.serial.port.endswith("board") and cfg.robot.protocol == "iiwa"
    assert load_serial_config(read_yaml(CONFIGS / name)["serial"]).port == "/tmp/hil-serial/iiwa"


@pytest.mark.parametrize("section, message", [
    ({}, "serial.port: is required (the board's port: a device path or any pyserial URL)"),
    ({"port": "x", "baudrat": 9600}, "serial.baudrat: unknown key (did you mean 'baudrate'?)"),
    ({"port": "x", "joint_count": 40}, "serial.joint_count: must be <= 32, got 40"),
    ({"port": "x", "effort": "amps"}, "serial.effort: must be one of 'auto', 'torque', 'current', got 'amps'"),
    ({"port": "x", "stale_timeout": 0.6}, "serial.link_timeout: must be longer than stale_timeout (0.6 s), got 0.5"),
    ({"port": "x", "board_watchdog": 0.03}, "serial.board_watchdog: must be 0 (the board's default) or longer than "
                                            "command_timeout (0.05 s)"),
    ({"port": "x", "board_watchdog": 70}, "serial.board_watchdog: must be <= 65.535 s (a u16 of ms), got 70"),
    ({"port": "x", "reconnect": {"initial": 3.0}}, "serial.reconnect.max: must be >= initial (3 s), got 2"),
    ({"port": "x", "command_timeout": -1}, "serial.command_timeout: must be >= 0.0001, got -1 (a timeout shorter"),
    ({"port": "x", "device": {"lockstep": "yes"}}, "serial.device.lockstep: must be true or false, got 'yes'"),
    ({"port": "x", "device": {"faults": [{"type": "bit_flip"}]}},
     "serial.device.faults[0].every: a bit_flip fault needs exactly one of every or probability"),
    ({"port": "x", "device": {"faults": [{"type": "drop_byte", "every": 2, "probability": 0.1}]}},
     "serial.device.faults[0].every: a drop_byte fault needs exactly one of every or probability"),
    ({"port": "x", "device": {"faults": [{"type": "silent", "every": 3}]}},
     "serial.device.faults[0].every: is not a parameter of a silent fault"),
    ({"port": "x", "device": {"faults": [{"type": "unplug", "text": "x"}]}},
     "serial.device.faults[0].text: is only a parameter of a board_fault, not of unplug"),
    ({"port": "x", "device": {"faults": [{"type": "board_fault", "code": "HOT"}]}},
     "serial.device.faults[0].code: unknown fault code 'HOT'"),
    ({"port": "x", "device": {"faults": [{"type": "board_fault", "code": 0x10000}]}},
     "serial.device.faults[0].code: must be a fault code name or a number in 1..0xFFFF, got 65536"),
    ({"port": "x", "device": {"faults": [{"type": "board_fault", "text": "é" * 40}]}},
     "serial.device.faults[0].text: must be at most 64 bytes of UTF-8, got 80"),
    ({"port": "x", "device": {"faults": [{"type": "unplug", "start": 2.0, "stop": 1.0}]}},
     "serial.device.faults[0].stop: must be after start (2 s), got 1"),
    ({"port": "x", "device": {"faults": [{"type": "drop"}]}}, "serial.device.faults[0].type: must be one of"),
])
def test_errors_name_the_key(section, message):
    with pytest.raises(ConfigError) as error:
        load_serial_config(section)
    assert message in str(error.value)


def test_checks_that_need_the_robot(run_config, tmp_path):
    cfg = run_config()
    plant = build_plant(cfg.robot)
    names = [f"iiwa_joint_{i}" for i in range(1, 8)]
    kinds = [0] * 7

    def driver(**section):
        return SerialDriver(run_config(serial=section).serial, names, kinds, "iiwa",
                            channels_for(cfg), lcm.LCM("memq://"))

    with pytest.raises(ConfigError, match=r"serial.joint_count: is 6, but the robot model has 7 actuated joints"):
        driver(joint_count=6)
    with pytest.raises(ConfigError, match=r"serial.safe_damping: must be a number or a list of 7 numbers"):
        driver(safe_damping=[1.0, 2.0])

    def board(**device):
        return SimulatedBoard(plant, load_sim_config({}), load_serial_config(
            {"port": "x", "device": device}).device, tmp_path / "link")

    with pytest.raises(ConfigError, match=r"serial.device.state_rate: its period \(0.0025 s\) must be a whole number"):
        board(state_rate=400)
    with pytest.raises(ConfigError, match=r"serial.device.torque_constant: must be > 0 for every joint"):
        board(effort="current", torque_constant=[1, 1, 1, 0, 1, 1, 1])
    with pytest.raises(ConfigError, match=r"serial.device.faults\[0\].joint: is 9; the board has 7 joints"):
        board(faults=[{"type": "board_fault", "joint": 9}])
    (tmp_path / "ttyUSB0").write_text("")
    with pytest.raises(ConfigError, match=r"serial.device.link: .*ttyUSB0 exists and is not a symlink"):
        SimulatedBoard(plant, load_sim_config({}), load_serial_config({"port": "x"}).device, tmp_path / "ttyUSB0")

    url = run_config(serial={"port": "socket://localhost:7777"})
    with pytest.raises(ConfigError, match=r"serial.device.link: is required when serial.port is a URL"):
        run_device(url, 0.1)
    faults = run_config(sim={"faults": [{"type": "silent"}]})
    with pytest.raises(ConfigError, match=r"sim.faults: the serial board does not inject"):
        run_device(faults, 0.1)
    with pytest.raises(ConfigError, match=r"^serial: is required: the board's port"):
        run_device(load_config(CONFIGS.parent / "demo.yaml"), 0.1)



def test_every_board_fault_key_is_documented():
    """docs/serial_protocol.md's faults table (section 10) names every key of a board fault (the
    section's keys are in the generated config reference: tests/test_docs_reference.py)."""
    from dataclasses import fields

    from drivers.serial.config import BoardFaultSpec
    text = (CONFIGS.parents[1] / "docs" / "serial_protocol.md").read_text()
    faults = text[text.index("**Faults**"):text.index("## 11.")]
    for f in fields(BoardFaultSpec):
        assert re.search(rf"\b{f.name}\b", faults), f"BoardFaultSpec.{f.name}"
