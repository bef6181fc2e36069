"""A legged robot from a run config (robot.protocol floating_base, controller.type whole_body) through
the loop (hil.loop, hil.floating_base): the shipped configs validate, bad ones are rejected naming
the key, the Go2 stands in lockstep over memq:// LCM, and `hil run` + `hil sim` stand it in real
time over UDP multicast (ttl=0)."""
import json
import os
import subprocess
import sys
import threading

import lcm
import numpy as np
import pytest

from drivers.core.paths import CONFIGS
from drivers.core.schema import ConfigError
from drivers.run_config import load_config, parse_config
from dynamics_cy.planning.legged_models import example_robot_data_root
from hil.floating_base import make_legged_sim
from hil.hardware import robot_for
from hil.legged_log import first_fault
from hil.lifecycle import Mode
from hil.lockstep import make_lockstep
from hil.loop import ControlLoop

ROOT = CONFIGS.parent
needs_models = pytest.mark.skipif(example_robot_data_root() is None, reason="example-robot-data is not installed")


@pytest.mark.parametrize("name", ["go2", "g1"])
def test_shipped_configs_validate(name):
    cfg = load_config(CONFIGS / "legged" / f"{name}.yaml")
    assert (cfg.robot.protocol, cfg.robot.model, cfg.controller.type) == ("floating_base", name, "whole_body")


@pytest.mark.parametrize("change, key", [
    ({"robot": {"model": "spot"}}, "robot.model"),
    ({"controller": {"type": "computed_torque"}}, "controller.type"),
    ({"controller": {"type": "whole_body", "whole_body": {"mu": -1}}}, "controller.whole_body.mu"),
    ({"controller": {"type": "whole_body", "whole_body": {"weights": {"comm": 1.0}}}},
     "controller.whole_body.weights"),
    ({"robot": {"command": "position"}}, "robot.command"),
])
def test_bad_legged_configs_name_the_key(change, key, tmp_path):
    data = {"robot": {"model": "go2", "protocol": "floating_base"}, "controller": {"type": "whole_body"}}
    for section, values in change.items():
        data[section].update(values)
    with pytest.raises(ConfigError) as e:
        parse_config(data, tmp_path, "bad.yaml")
    assert key in str(e.value)


def test_whole_body_needs_the_floating_base_protocol(tmp_path):
    with pytest.raises(ConfigError, match="controller.type.*floating_base"):
        parse_config({"robot": {"model": str(CONFIGS / "robots" / "iiwa14.urdf")},
                      "controller": {"type": "whole_body"}}, tmp_path, "arm.yaml")


@needs_models
def test_go2_stands_in_lockstep_through_the_loop(tmp_path):
    """10 s standing: the base moves less than 1 mm after 0.5 s of settling, every foot touches, no
    fault; the exit command is the safe damping command and reaches the robot; the run log has it."""
    cfg = load_config(CONFIGS / "legged" / "go2.yaml", {"telemetry": {"log": str(tmp_path / "go2.lcmlog")},
                                                        "viz": {"enabled": False}})
    loop, sim = make_lockstep(cfg)
    settled = []

    calls = []

    def on_tick(lp):
        calls.append(sim.physics.steps)
        if not settled and sim.physics.time_ns >= 500_000_000:
            settled.append(sim.physics.q[4:7].copy())
    sim.publish_status()
    summary = loop.run(10.0, on_tick=on_tick)
    assert calls == list(range(calls[0], calls[0] + len(calls))) and len(calls) == 10_000   # one step per tick
    drift = np.linalg.norm(sim.physics.q[4:7] - settled[0])
    assert drift < 1e-3, drift
    assert summary["faults"] == [] and summary["final_state"] == "RUNNING"
    assert summary["feet_in_contact"] and all(sim.msg.contact)
    assert summary["ticks"] == 10_000 and summary["status"]["exit_command_sent"]
    assert summary["controller_timing"]["update_us"]["p50"] > 0
    while loop.lc.handle_timeout(0) > 0:   # the last tick's command, then the exit command
        pass
    # the exit command reached the robot last: damping, no torque
    np.testing.assert_array_equal(sim.kd, cfg.controller.whole_body.safe_damping)
    np.testing.assert_array_equal(sim.tau_ff, 0.0)
    from hil.runlog import read_run_info
    start, end = read_run_info(tmp_path / "go2.lcmlog")
    assert start is not None and json.loads(end.summary_json)["ticks"] == 10_000


@needs_models
def test_a_silent_robot_is_a_status_timeout(tmp_path):
    """Real time: the simulated robot stops publishing; the loop goes to the safe state and says why
    (safety.status_timeout_periods of the learned status period)."""
    url = "udpm://239.255.76.67:7691?ttl=0"
    cfg = load_config(CONFIGS / "legged" / "go2.yaml", {"lcm": {"url": url}})
    robot = robot_for(cfg)
    loop = ControlLoop(cfg, robot, lcm.LCM(url), Mode.REALTIME).configure()
    sim = make_legged_sim(cfg, robot, lcm.LCM(url))
    serving = threading.Thread(target=sim.run_realtime, args=(0.2,))   # 0.2 s of statuses, then none
    serving.start()
    try:
        summary = loop.run(1.0)
    finally:
        serving.join()
    assert summary["faults"][0]["fault"] == "STATUS_TIMEOUT" and "no valid status" in first_fault(summary)
    assert summary["status"]["exit_command_sent"]


def _hil(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "hil", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, **kw)


@needs_models
def test_the_real_time_sim_hangs_on_its_gantry_until_a_command_drives_it():
    """`hil sim`'s runner: the safe command's damping (what the loop sends before it runs) leaves the
    robot hanging where it stands; the first torque command releases it, and then it moves."""
    from messages import lcmt_hil_joint_command
    cfg = load_config(CONFIGS / "legged" / "go2.yaml", {"viz": {"enabled": False}, "lcm": {"url": "memq://"}})
    lc = lcm.LCM("memq://")
    sim = make_legged_sim(cfg, robot_for(cfg), lc)
    q0 = sim.physics.q.copy()
    damping = lcmt_hil_joint_command()
    damping.num_joints, damping.num_pd = 12, 12
    damping.tau = damping.q_desired = damping.v_desired = damping.kp = [0.0] * 12
    damping.kd = [2.0] * 12
    lc.publish("JOINT_COMMAND", damping.encode())
    sim.run_realtime(0.1)
    assert sim.commands == 1 and not sim.released
    np.testing.assert_array_equal(sim.physics.q, q0)                    # held: not one step taken
    torque = lcmt_hil_joint_command()
    torque.num_joints, torque.num_pd, torque.tau = 12, 0, [0.0] * 12
    lc.publish("JOINT_COMMAND", torque.encode())
    sim.run_realtime(0.1)
    assert sim.released and np.abs(sim.physics.q - q0).max() > 1e-4     # released: it sags under zero torque
    sim.close()


def test_hil_run_and_hil_sim_stand_the_go2_over_udp():
    """Two processes over UDP multicast LCM (ttl=0), paced to the wall clock on a loaded 2-core
    machine: generous outcome checks (no fault, feet down, the base within 1 cm), not timings."""
    url = "udpm://239.255.76.67:7692?ttl=0"
    config = str(CONFIGS / "legged" / "go2.yaml")
    sim = _hil("sim", config, "--no-viz", "--lcm-url", url, "--duration", "30")
    try:
        assert sim.stdout.readline().startswith("hil sim: go2")      # serving (hanging still until commanded)
        run = _hil("run", config, "--lcm-url", url, "--duration", "4", "--json")
        out, err = run.communicate(timeout=120)
    finally:
        sim.terminate()
        sim_out, _ = sim.communicate(timeout=30)
    assert run.returncode == 0, err
    summary = json.loads(out)
    assert summary["faults"] == [] and summary["feet_in_contact"]
    assert summary["ticks"] > 400 and summary["status"]["exit_command_sent"]
    assert summary["base_drift_m"] < 1e-2
    assert "commands received" in sim_out and "diverged" not in sim_out


def test_hil_run_without_a_robot_exits_2():
    run = _hil("run", str(CONFIGS / "legged" / "go2.yaml"), "--lcm-url", "udpm://239.255.76.67:7693?ttl=0",
               "--duration", "1")
    run.communicate(timeout=120)       # loop.start_timeout (5 s) without a status
    assert run.returncode == 2
