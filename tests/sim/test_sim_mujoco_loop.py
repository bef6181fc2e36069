"""The loop against MuJoCo as the simulated plant (sim.engine: mujoco), beside our own: the arms track
alike, faults act alike, the legged robots stand, shift their CoM and take a push, their feet carry the
same loads, and `hil sim` and `hil regress` run on it."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from drivers.core.schema import read_yaml
from drivers.sim.config import load_sim_config

pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'hilstack[mujoco]')")

REPO = Path(__file__).resolve().parents[2]
ENGINES = ("hilstack", "mujoco")
FOOT_FORCE_TOL = 0.1          # N: each foot's normal load standing, MuJoCo against ours (measured ≤ 0.031)


def tracking(name, engine, **kw):
    from hil.testing import config_path, simulate
    kw.setdefault("overrides", {"sim": {"engine": engine}})
    run = simulate(config_path(name), duration=4.0, **kw)
    return run, run.q - run.q_d


@pytest.mark.parametrize("arm", ["iiwa", "panda"])
def test_the_arms_track_alike_on_both_plants(arm, request):
    """Computed torque on the shipped configs' trajectories: the same tracking error on both plants to
    1e-9 rad (their dynamics agree to 1e-14 and both integrate joint damping implicitly), max 1.04 mrad
    (iiwa) and 0.03 mrad (Panda behind franka_driver)."""
    if arm == "panda":
        request.getfixturevalue("robot_data")
    (ours, e_ours), (theirs, e_theirs) = (tracking(arm, engine) for engine in ENGINES)
    assert ours.final_state == theirs.final_state == "RUNNING"
    assert len(e_ours) == len(e_theirs) == 4000
    assert np.abs(e_theirs).max() < (1.1e-3 if arm == "iiwa" else 5e-5)
    np.testing.assert_allclose(e_theirs, e_ours, rtol=0, atol=1e-9)


def test_a_fault_acts_alike_on_both_plants():
    """joint_unresponsive on iiwa_joint_1 for 0.5 s (the shipped scenario's): the guard trips on both,
    at the same tick, and the arms move alike."""
    faults = [{"type": "joint_unresponsive", "start": 1.0, "stop": 1.5, "joints": ["iiwa_joint_1"]}]
    safety = {"max_tracking_error": 0.05, "recover": True, "recover_after_periods": 50}
    runs = [tracking("iiwa", engine, faults=faults, overrides={"sim": {"engine": engine}, "safety": safety})[0]
            for engine in ENGINES]
    assert [f["tick"] for f in runs[0].faults] == [f["tick"] for f in runs[1].faults] != []
    np.testing.assert_allclose(runs[1].q, runs[0].q, rtol=0, atol=1e-6)


def rig(name, engine, seconds):
    from dynamics_cy.planning.legged_models import example_robot_data_root
    from hil.legged_scenario import LeggedRig
    if example_robot_data_root() is None:
        pytest.skip("example-robot-data is not installed")
    return LeggedRig(name, load_sim_config({"engine": engine})).run(seconds)


@pytest.mark.parametrize("name", ["go2", "g1"])
def test_legged_robots_stand_10_s_on_mujoco(name):
    r = rig(name, "mujoco", 0.5)
    assert type(r.robot.physics).__name__ == "MujocoPhysics"
    settled = r.base()
    r.run(9.5)
    assert r.fault is None and all(r.robot.msg.contact)
    assert np.linalg.norm(r.base() - settled) < 1e-3
    r.close()


@pytest.mark.parametrize("name", ["go2", "g1"])
def test_standing_feet_carry_the_same_loads_on_both_plants(name):
    """After 2 s standing: each foot's normal force on MuJoCo within FOOT_FORCE_TOL of ours (measured: Go2
    0.031 N of 36-42 N, G1 0.005 N of 163 N), both summing to the robot's weight; the base sits lower on
    MuJoCo's softer contact (Go2 2.4 mm, G1 0.3 mm)."""
    forces, heights = [], []
    for engine in ENGINES:
        r = rig(name, engine, 2.0)
        mass = sum(r.plant.get_body(b).default_mass() for b in range(r.plant.num_bodies()))
        f = np.array(r.robot.msg.contact_force)
        assert r.fault is None and f[:, 2].sum() == pytest.approx(mass * 9.81, rel=1e-6)
        forces.append(f[:, 2])
        heights.append(r.base()[2])
        r.close()
    np.testing.assert_allclose(forces[1], forces[0], rtol=0, atol=FOOT_FORCE_TOL)
    assert 0 < heights[0] - heights[1] < 3e-3


def mujoco_scenario(tmp_path, name) -> Path:
    """A shipped legged scenario with sim.engine: mujoco."""
    data = read_yaml(REPO / "configs" / "scenarios" / f"{name}.yaml")
    data["legged"]["sim"] = {**data["legged"].get("sim", {}), "engine": "mujoco"}
    path = tmp_path / f"{name}_mujoco.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("scenario", ["legged_g1_com_shift", "legged_g1_push"])
def test_legged_scenarios_pass_on_mujoco(tmp_path, scenario, robot_data):
    """The shipped scenarios' criteria (base back within 1 mm, feet down, no fault) on MuJoCo."""
    from hil.legged_scenario import run_legged_scenario
    summary, checks, _ = run_legged_scenario(mujoco_scenario(tmp_path, scenario))
    assert all(c["passed"] for c in checks), checks


def test_the_go2_recovers_its_push_on_mujoco(tmp_path, robot_data):
    """legged_go2_push (5 N·s) on MuJoCo: no fault and every foot down, but the base comes back within
    2.2 mm (measured), not the scenario's 1 mm as on our stiffer contact: the feet slip a little."""
    from hil.legged_scenario import run_legged_scenario
    summary, _, _ = run_legged_scenario(mujoco_scenario(tmp_path, "legged_go2_push"))
    assert summary["fault"] is None and summary["feet_in_contact"]
    assert summary["base_drift_m"] < 3e-3


def test_hil_regress_runs_a_legged_scenario_on_mujoco(tmp_path, robot_data):
    """`hil regress` in its own process: the Go2's CoM shift and back on MuJoCo passes."""
    path = mujoco_scenario(tmp_path, "legged_go2_com_shift")
    out = subprocess.run([sys.executable, "-m", "hil", "regress", str(path), "--report", str(tmp_path / "r.json")],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| legged_go2_com_shift_mujoco | PASS |" in out.stdout


def test_hil_sim_runs_mujoco_in_real_time():
    """`hil sim`'s runner on the iiwa config with engine mujoco: its start line names MuJoCo; paced steps."""
    import io

    from drivers.run_config import load_config
    from drivers.sim.realtime import run_sim
    from hil.testing import config_path
    cfg = load_config(config_path("iiwa"), {"sim": {"engine": "mujoco"}, "lcm": {"url": "memq://"}})
    out = io.StringIO()
    summary = run_sim(cfg, duration=0.2, out=out, viz=False)
    assert "MuJoCo implicitfast" in out.getvalue()
    assert summary["steps"] == 200
