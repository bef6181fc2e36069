"""Campaign files: validation with clear errors, sampling against the distributions' statistics, the
payload and joint-damping sim knobs against pydrake and physics, and `hil campaign` end to end."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from drivers.core.schema import ConfigError
from hil.campaign import load_campaign
from hil.campaign_run import run_one
from hil.cli import main

REPO = Path(__file__).resolve().parents[2]
BASE = REPO / "configs" / "scenarios" / "joint_pd_quintic.yaml"


def write(tmp_path, campaign: dict, name="c.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump({"campaign": {"base": str(BASE), **campaign}}))
    return p


@pytest.mark.parametrize("campaign, key, text", [
    ({"vary": {"sim.payload.mass": {"uniform": [0, 1], "normal": {"std": 1}}}}, "campaign.vary.sim.payload.mass",
     "exactly one of"),
    ({"vary": {"sim.payload.mass": {"unifrom": [0, 1]}}}, "campaign.vary.sim.payload.mass.unifrom",
     "did you mean 'uniform'"),
    ({"vary": {"sim..mass": {"uniform": [0, 1]}}}, "campaign.vary.sim..mass", "dotted key"),
    ({"vary": {"sim.payload.mass": {"uniform": [1, 0]}}}, "campaign.vary.sim.payload.mass.uniform", "low <= high"),
    ({"vary": {"sim.payload.mass": {"uniform": [-2, -1]}}}, "sim.payload.mass", "seed 0"),
    ({"vary": {"sim.payload.mass": {"uniform": [0, 1]}}, "runz": 3}, "campaign.runz", "did you mean 'runs'"),
    ({"vary": {"scenario.duration": {"uniform": [1, 2]}}}, "campaign.vary.scenario.duration", "not varied"),
    ({"vary": {"sim.faults[0].delay": {"choice": [0.001]}}}, "campaign.vary.sim.faults[0].delay", "no list"),
    ({"vary": {"sim.payload.mass": {"choice": [1, 2], "weights": [1]}}}, "campaign.vary.sim.payload.mass.weights",
     "needs 2 numbers"),
    ({"vary": {"sim.bogus": {"uniform": [0, 1]}}}, "sim.bogus", "unknown key"),
    ({"vary": {"controller.kq": {"normal": {"std": 1}, "mode": "scale"}}}, "campaign.vary.controller.kq",
     "needs a value in the base"),
])
def test_bad_campaign_files_name_the_key(tmp_path, campaign, key, text):
    with pytest.raises(ConfigError) as e:
        load_campaign(write(tmp_path, campaign))
    assert key in str(e.value) and text in str(e.value) and "c.yaml" in str(e.value)


def test_missing_base_and_cli_exit_2(tmp_path, capsys):
    p = tmp_path / "c.yaml"
    p.write_text("campaign: {base: nowhere.yaml}\n")
    assert main(["campaign", str(p)]) == 2
    assert "campaign.base: no such scenario file 'nowhere.yaml'" in capsys.readouterr().err


def test_sampling_follows_the_distributions(tmp_path):
    c = load_campaign(write(tmp_path, {"seed": 100, "vary": {
        "sim.payload.mass": {"uniform": [0.5, 2.0]},
        "controller.kp": {"normal": {"mean": 1.0, "std": 0.1}, "mode": "scale"},
        "sim.initial_positions": {"normal": {"std": 0.05}, "mode": "add"},
        "safety.on_fault": {"choice": ["damping", "zero_torque"], "weights": [3, 1]},
        "sim.joint_damping": {"uniform": [0, 1], "round": 0.25},
        "safety.max_tracking_error": {"grid": [0.1, 0.2, 0.3]}}}))
    base = yaml.safe_load(BASE.read_text())
    kp0, q0 = np.array(base["controller"]["kp"]), np.array(base["sim"]["initial_positions"])
    vs = [c.variation(c.run_seed(k)) for k in range(3000)]
    mass = np.array([v["sim.payload.mass"] for v in vs])
    assert 0.5 <= mass.min() and mass.max() < 2.0 and abs(mass.mean() - 1.25) < 0.03
    ratio = np.array([v["controller.kp"] for v in vs]) / kp0          # one draw per joint
    assert abs(ratio.mean() - 1.0) < 0.01 and abs(ratio.std() - 0.1) < 0.01
    assert abs(np.corrcoef(ratio[:, 0], ratio[:, 1])[0, 1]) < 0.1
    dq = np.array([v["sim.initial_positions"] for v in vs]) - q0
    assert abs(dq.std() - 0.05) < 0.005
    share = np.mean([v["safety.on_fault"] == "damping" for v in vs])
    assert abs(share - 0.75) < 0.04
    assert set(v["sim.joint_damping"] for v in vs) == {0.0, 0.25, 0.5, 0.75, 1.0}
    assert [v["safety.max_tracking_error"] for v in vs[:6]] == [0.1, 0.2, 0.3, 0.1, 0.2, 0.3]
    assert c.variation(c.run_seed(7)) == vs[7]                          # a seed gives its variation again
    data = c.scenario_data(c.run_seed(7))
    assert data["sim"]["seed"] == 107 and "golden" not in data["scenario"]
    assert c.scenario(107).cfg.controller.kp == pytest.approx(vs[7]["controller.kp"])


def test_payload_matches_pydrake_gravity(tmp_path):
    """The simulated plant with sim.payload has Drake's gravity forces for the same welded body."""
    pytest.importorskip("pydrake")
    from pydrake.multibody.parsing import Parser as DParser
    from pydrake.multibody.plant import MultibodyPlant as DPlant
    from pydrake.multibody.tree import RotationalInertia as DRot
    from pydrake.multibody.tree import SpatialInertia as DSpatial

    from drivers.core.config import RobotConfig
    from drivers.core.robot import build_plant
    from drivers.sim.config import PayloadConfig
    payload = PayloadConfig(mass=2.5, com=[0.01, -0.02, 0.08], inertia=[0.01, 0.012, 0.008])
    ours = build_plant(RobotConfig(str(REPO / "configs/robots/iiwa14.urdf"), end_effector="iiwa_link_ee"), payload)
    d = DPlant(0.0)
    DParser(d).AddModels(str(REPO / "configs/robots/iiwa14.urdf"))
    ee = d.GetFrameByName("iiwa_link_ee")
    body = d.AddRigidBody("load", ee.model_instance(), DSpatial.MakeFromCentralInertia(
        2.5, np.array([0.01, -0.02, 0.08]), DRot(0.01, 0.012, 0.008)))
    d.WeldFrames(ee, body.body_frame())
    d.Finalize()
    q = np.array([0.3, 0.7, -0.2, -1.1, 0.4, 0.9, 0.1])
    ctx, dctx = ours.CreateDefaultContext(), d.CreateDefaultContext()
    ours.SetPositions(ctx, q)
    d.SetPositions(dctx, q)
    assert np.allclose(ours.CalcGravityGeneralizedForces(ctx), d.CalcGravityGeneralizedForces(dctx), atol=1e-9)
    assert np.allclose(ours.CalcMassMatrix(ctx), d.CalcMassMatrix(dctx), atol=1e-9)


def test_joint_damping_slows_the_joints_as_physics_says(iiwa):
    """One semi-implicit Euler step with u = 0, the damping implicit: (M + h D) v⁺ = M v⁺(d=0)."""
    from drivers.sim.config import JointLimitsConfig, SimConfig
    from drivers.sim.physics import Physics
    q0, v0 = [0.2, 0.5, 0.0, -1.0, 0.3, 0.6, 0.0], np.array([0.3, -0.2, 0.4, 0.1, -0.5, 0.6, 1.0])
    d = np.array([2.0, 2.0, 1.0, 1.0, 0.5, 0.5, 0.2])
    out = []
    for damping in (0.0, d.tolist()):
        p = Physics(iiwa, SimConfig(initial_positions=q0, initial_velocities=v0.tolist(), joint_damping=damping,
                                    joint_limits=JointLimitsConfig(enabled=False)))
        p.step(np.zeros(7))
        out.append(p.v.copy())
    ctx = iiwa.CreateDefaultContext()
    iiwa.SetPositions(ctx, q0)
    M = iiwa.CalcMassMatrix(ctx)
    assert np.allclose(out[1], np.linalg.solve(M + 1e-3 * np.diag(d), M @ out[0]), rtol=1e-9, atol=1e-12)
    assert np.all(np.abs(out[1]) <= np.abs(v0) + 0.02)


def test_cli_campaign_report_seed_and_scenario(tmp_path, capsys):
    camp = write(tmp_path, {"seed": 5, "runs": 6, "duration": 0.5, "vary": {
        "sim.payload.mass": {"uniform": [0.0, 3.0]}, "controller.kp": {"normal": {"std": 0.2, "mean": 1},
                                                                        "mode": "scale"}}})
    out = tmp_path / "out"
    code = main(["campaign", str(camp), "--engine", "sequential", "--out", str(out), "--quiet"])
    text = capsys.readouterr().out
    s = json.loads((out / "summary.json").read_text())
    assert code == (0 if s["passed"] == 6 else 1) and s["finished"] == 6 and not s["interrupted"]
    for f in ("results.csv", "distributions.png", "tracking_error.png"):
        assert (out / f).stat().st_size > 100
    assert "| tracking_rms |" in text and "rerun: hil campaign" in text
    worst = s["worst"][0]
    rows = {int(r.split(",")[0]): r for r in (out / "results.csv").read_text().splitlines()[1:]}
    assert set(rows) == set(range(5, 11))
    # the printed command reruns the worst seed alone, with the same figures
    seed = worst["seed"]
    scen = tmp_path / "scen" / "from_seed.yaml"
    assert main(["campaign", str(camp), "--seed", str(seed), "--write-scenario", str(scen)]) == \
        (0 if worst["passed"] else 1)
    alone = capsys.readouterr().out
    one = run_one(load_campaign(camp), seed)
    assert f"tracking rms {one['tracking_rms_rad'] * 1e3:.3f} mrad" in alone
    if (out / "results.parquet").exists():
        import pyarrow.parquet as pq
        t = pq.read_table(out / "results.parquet").to_pylist()
        assert [r["tracking_rms_rad"] for r in t if r["seed"] == seed] == [one["tracking_rms_rad"]]
    # ... and the written scenario is a regression scenario with that outcome
    from hil.regress import run_scenario
    r = run_scenario(scen)
    assert r["error"] is None, r.get("traceback")
    assert max(r["summary"]["tracking_error_rad"]["rms"]) == one["tracking_rms_rad"]


def _interactive_ctrl_c() -> None:
    """SIGINT as a terminal's Ctrl-C meets it: a suite started in the background by a
    non-interactive shell (`make test &`, CI) inherits SIGINT ignored, and Python then installs no
    KeyboardInterrupt for it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_keeps_what_finished(tmp_path):
    # 20,000 runs: far more than one worker finishes before the Ctrl-C (an idle machine does 400 in 12 s)
    camp = write(tmp_path, {"runs": 20000, "vary": {"sim.payload.mass": {"uniform": [0.0, 1.0]}}})
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "hil", "campaign", str(camp), "--engine", "pool", "-j", "1",
                          "--batch", "2", "--out", str(out), "--quiet"], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                         start_new_session=True, preexec_fn=_interactive_ctrl_c)
    time.sleep(12.0)                                       # the first batches are in by then
    os.killpg(p.pid, signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 130, stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["interrupted"] and 0 < s["finished"] < 20000, s
    assert len((out / "results.csv").read_text().splitlines()) == s["finished"] + 1


@pytest.mark.parametrize("path", sorted((REPO / "configs" / "campaigns").glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_campaigns_run(path):
    c = load_campaign(path)
    row = run_one(c, c.run_seed(0))
    assert row["error"] is None, row.get("traceback")
    assert row["ticks"] >= c.base.spec.duration * 1000


def test_set_applies_before_vary(tmp_path):
    c = load_campaign(write(tmp_path, {"set": {"sim.faults": [{"type": "latency", "delay": 0.002}]},
                                       "vary": {"sim.faults[0].delay": {"choice": [2, 3], "mode": "scale"}}}))
    delays = {c.scenario(s).cfg.sim.faults[0].delay for s in range(20)}
    assert delays == {0.004, 0.006}
    with pytest.raises(ConfigError, match=r"campaign.set.sim.faults\[3\].delay: the base scenario has no list"):
        load_campaign(write(tmp_path, {"set": {"sim.faults[3].delay": 1}}, "d.yaml"))


def test_runs_release_their_lcm(tmp_path):
    """A worker runs thousands of scenarios: each run's memq:// LCM (two file descriptors) is freed, so
    select() never sees a descriptor past FD_SETSIZE (which crashed a process after ~510 runs)."""
    c = load_campaign(write(tmp_path, {"duration": 0.02, "vary": {"sim.payload.mass": {"uniform": [0, 1]}}}))
    run_one(c, 0)
    before = len(os.listdir("/proc/self/fd"))
    for s in range(1, 21):
        assert run_one(c, s)["error"] is None
    assert len(os.listdir("/proc/self/fd")) <= before
