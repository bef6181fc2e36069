"""Identification end to end (issue 29): the simulated iiwa carries a payload the controller's model
lacks, joint Coulomb friction and viscous damping, and noisy sensors; an excitation of at most 30 s is
run and logged in lockstep, and `hil identify` must recover the payload's mass within 2 %, its centre
of mass within 5 mm and each joint's friction coefficients within 5 %; Pinocchio's regressor on the
same log's samples is ours to 1e-10; the identified payload on the controller's model cuts the drift
of a gravity-compensation hold by at least 10× against the model without it. One excitation run per
payload, shared by the tests (module fixtures)."""
import json
import logging

import numpy as np
import pytest
import yaml

from drivers.core.paths import CONFIGS
from drivers.run_config import load_config, parse_config
from hil.cli import main
from hil.identify import IdentifyOptions, filtered, identify, read_samples
from hil.identify_report import format_identify, fragment, fragment_yaml, physically_valid
from hil.identify_run import run_excitation, run_identify

CONFIG = CONFIGS / "sim" / "iiwa_identify.yaml"
DAMPING = np.array([0.8, 1.0, 0.7, 0.9, 0.6, 0.55, 0.5])     # the shipped config's sim section
FRICTION = np.array([1.0, 1.2, 0.8, 0.9, 0.5, 0.4, 0.3])
# Two more payloads at the ends of the range: light, 10 cm off the flange; heavy, rotated inertia.
PAYLOADS = {"light": {"mass": 0.6, "com": [0.0, 0.06, 0.08], "inertia": [0.002, 0.003, 0.0025]},
            "heavy": {"mass": 3.0, "com": [-0.05, 0.02, 0.06],
                      "inertia": [0.02, 0.025, 0.015, 0.002, -0.001, 0.0015]}}


def check(result, payload, seconds):
    p = result["payload"]
    assert seconds <= 30.0
    assert abs(p["mass"] - payload["mass"]) <= 0.02 * payload["mass"], p["mass"]
    assert np.linalg.norm(p["com"] - np.array(payload["com"])) <= 5e-3, p["com"]
    np.testing.assert_allclose(result["viscous"], DAMPING, rtol=0.05)
    np.testing.assert_allclose(result["coulomb"], FRICTION, rtol=0.05)
    assert physically_valid(result)
    assert np.all(result["rms"] < 0.25 * result["rms_model"])     # held out: the model alone misses 4× more


@pytest.fixture(scope="module")
def shipped():
    """`hil run configs/sim/iiwa_identify.yaml --identify`'s result: 2 kg, and the holds."""
    return run_identify(load_config(CONFIG))


@pytest.fixture(scope="module", params=sorted(PAYLOADS))
def logged(request, tmp_path_factory):
    """(payload, log path, excitation summary) of one excitation run with the payload."""
    payload = PAYLOADS[request.param]
    cfg = load_config(CONFIG, {"sim": {"payload": payload}})
    log = tmp_path_factory.mktemp("identify") / f"{request.param}.lcmlog"
    summary = run_excitation(cfg, str(log))
    assert summary["final_state"] == "RUNNING" and not summary["faults"], summary["faults"]
    return payload, log, summary


def test_the_shipped_config_recovers_its_payload_and_friction(shipped):
    cfg = load_config(CONFIG)
    s = cfg.sim.payload
    check(shipped, {"mass": s.mass, "com": s.com}, shipped["samples"] * 1e-3)
    np.testing.assert_allclose(np.diag(shipped["payload"]["inertia"]), s.inertia, rtol=0.15)


@pytest.mark.parametrize("opts", [IdentifyOptions(), IdentifyOptions(cutoff=20.0, consistent=False)],
                         ids=["consistent", "least_squares_20hz"])
def test_payloads_across_the_range_are_recovered(logged, opts):
    payload, log, _ = logged
    result = identify([str(log)], opts)
    check(result, payload, result["samples"] * 1e-3)
    assert result["seconds"]["total"] < 30       # (the 5 s claim is benchmarks/bench_identify.py's)


def test_the_identified_payload_cuts_the_hold_drift_tenfold(shipped):
    h = shipped["hold"]
    assert max(h["without"]) >= 10 * max(h["with"]), h
    assert max(h["without"]) > 0.05          # without it the arm sags visibly (rad)
    assert h["states"][1] == "RUNNING"       # the hold with the identified payload does not fault
    text = format_identify(shipped)
    assert ("ended in " + h["states"][0] in text) == (h["states"][0] != "RUNNING"), text


def test_a_run_cut_before_the_excitation_ends_says_so(tmp_path, caplog):
    # its own logger's level: an in-process `hil replay` (hil.cli) earlier in the session sets "hil" to ERROR
    caplog.set_level(logging.WARNING, logger="hil.identify_run")
    summary = run_excitation(load_config(CONFIG), str(tmp_path / "cut.lcmlog"), duration=1.0)
    assert not summary["faults"]
    assert any("before its end" in r.getMessage() and r.levelname == "WARNING" for r in caplog.records), caplog.text


def test_the_fragment_is_a_config_the_loop_and_the_sim_take(shipped, tmp_path):
    text = fragment_yaml(shipped)
    data = yaml.safe_load(text)
    assert data == fragment(shipped)
    base = yaml.safe_load(CONFIG.read_text())
    for section, values in data.items():
        base.setdefault(section, {}).update(values)
    cfg = parse_config(base, CONFIG.parent, "merged")
    assert cfg.robot.payload.mass == pytest.approx(shipped["payload"]["mass"], rel=1e-5)
    assert cfg.controller.friction_compensation.coulomb == pytest.approx(shipped["coulomb"].tolist(), rel=1e-5)
    np.testing.assert_allclose(cfg.sim.joint_friction, shipped["coulomb"], rtol=1e-5)


def test_pinocchio_gives_the_same_regressor_on_the_log(logged):
    """On the log's filtered samples: Pinocchio's computeJointTorqueRegressor's columns of each joint
    are ours of its child body, and its joint-7 block moved to the payload frame (the parameters' own
    rigid transform, through Pinocchio's Inertia) is our payload block."""
    from tests.dynamics.test_dyn_crosscheck import PinocchioMap, load_pinocchio
    _, log, _ = logged
    s = read_samples(log)
    from drivers.core.robot import load_robot
    robot = load_robot(s.cfg.robot.__class__(**{**s.cfg.robot.__dict__, "payload": None}))
    plant = robot.plant
    pin, model = load_pinocchio(s.cfg.robot.model, floating=False)
    data, m = model.createData(), PinocchioMap(plant, model)
    _, Q, V, Vd, _ = filtered(s, IdentifyOptions())
    k = plant.kernels()
    n, nb = plant.num_velocities(), plant.num_bodies()
    Y, Yf = np.zeros((n, 10 * nb)), np.zeros((n, 10))
    ee = robot.end_effector
    X_7F = plant.CalcRelativeTransform(plant.CreateDefaultContext(), plant.GetFrameByName("iiwa_link_7"), ee)
    j7 = model.getJointId("iiwa_joint_7")
    placement = pin.SE3(X_7F.rotation().matrix(), X_7F.translation())
    act = lambda pi: placement.act(pin.Inertia.FromDynamicParameters(pi)).toDynamicParameters()   # noqa: E731
    unit = np.eye(10)[0]                                   # (a massless π has no Inertia: differences of two)
    T = np.column_stack([act(unit + e) - act(unit) for e in np.eye(10)])      # π_7 = T π_F, linear
    for i in range(0, len(Q), len(Q) // 200):
        Yp = pin.computeJointTorqueRegressor(model, data, m.q(Q[i]), V[i], Vd[i])
        k.torque_regressor(Q[i], V[i], Vd[i], Y)
        k.payload_regressor(Q[i], V[i], Vd[i], ee, Yf)
        scale = max(1.0, np.max(np.abs(Yp)))
        for jid in range(1, model.njoints):
            b = int(plant.GetJointByName(model.names[jid]).child_body().index())
            np.testing.assert_allclose(Y[:, 10 * b:10 * b + 10], Yp[:, 10 * (jid - 1):10 * jid], rtol=0,
                                       atol=1e-10 * scale)
        np.testing.assert_allclose(Yf, Yp[:, 10 * (j7 - 1):10 * j7] @ T, rtol=0, atol=1e-10 * scale)


def test_the_base_parameters_are_the_simulated_arms(logged):
    """--base: the base parameters β = π₁ + K π₂ of the simulated arm (the model's bodies, the payload's
    parameters added to its frame's body) with the fit's own K, recovered to 2 % of ‖β‖."""
    from dynamics_cy import RotationalInertia
    from hil.identify import load_logs, payload_frame, regression
    from hil.identify_fit import base_parameters, weighted
    payload, log, _ = logged
    if payload["mass"] < 1.0:
        pytest.skip("one payload is enough for the base parameters (the heavy one)")
    opts = IdentifyOptions(base=True)
    result = identify([str(log)], opts)
    logs, plant, robot_cfg = load_logs([str(log)])
    reg = regression(logs, plant, payload_frame(plant, robot_cfg, None), opts)
    indep, dep, K = base_parameters(weighted(reg.A, reg.y, reg.joint, reg.n)[2], reg.n_inertial)
    prior = plant.GetDefaultInertialParameters()
    names = result["base"]["bodies"]
    true = np.concatenate([prior[10 * b:10 * b + 10] for b in reg.bodies])
    m, c = payload["mass"], np.array(payload["com"])
    I = RotationalInertia(*payload["inertia"]).CopyToFullMatrix3() + m * (c @ c * np.eye(3) - np.outer(c, c))
    k = names.index(payload_frame(plant, robot_cfg, None).body().name())      # F is its body's frame here
    true[10 * k:10 * k + 10] += np.r_[m, m * c, I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]
    beta = true[indep] + K @ true[dep]
    assert np.linalg.norm(result["base"]["beta"] - beta) < 0.02 * np.linalg.norm(beta)
    # the friction shares the same data with 43 base parameters instead of 10: within 10 % here
    np.testing.assert_allclose(result["viscous"], DAMPING, rtol=0.10)
    np.testing.assert_allclose(result["coulomb"], FRICTION, rtol=0.10)


def test_the_command_line_writes_the_report_the_fragment_and_the_plot(logged, tmp_path, capsys):
    payload, log, _ = logged
    out, png = tmp_path / "identified.yaml", tmp_path / "identified.png"
    assert main(["identify", str(log), "--out", str(out), "--plot", str(png), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert abs(report["payload"]["mass"] - payload["mass"]) <= 0.02 * payload["mass"]
    assert yaml.safe_load(out.read_text())["robot"]["payload"]["frame"] == "iiwa_link_ee"
    assert png.stat().st_size > 10_000
    assert main(["identify", str(log), "--base", "--unconstrained"]) == 0
    text = capsys.readouterr().out
    assert "base parameters of the arm" in text and "held-out torque RMS" in text
    assert f"joints (the per-joint arrays' order): {', '.join(f'iiwa_joint_{i}' for i in range(1, 8))}" in text
    assert report["joint_names"][3] == "iiwa_joint_4"
