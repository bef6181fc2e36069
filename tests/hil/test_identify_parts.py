"""The pieces identification hands to the loop and its fit, without a run: robot.payload on the
controller's model equals the payload welded as a body, controller.friction_compensation in the
built-in laws (the law's torque, allocation-free, capped), the pseudo-inertia and the consistent fit,
the excitation's torque limit, and clear refusals."""
import sys

import numpy as np
import pytest

import hil
from drivers.core.config import PayloadConfig
from drivers.core.paths import CONFIGS
from drivers.core.robot import build_plant, load_robot
from drivers.core.schema import ConfigError
from drivers.run_config import load_config
from hil.cli import main
from hil.identify_fit import consistent, pseudo_inertia, weighted
from tests.alloc import net_and_peak

CONFIG = CONFIGS / "sim" / "iiwa_identify.yaml"
PAYLOAD = {"mass": 1.7, "com": [0.02, -0.03, 0.09], "inertia": [0.012, 0.01, 0.008, 0.001, -0.0005, 0.0007]}
FRICTION = {"viscous": [0.8, 1.0, 0.7, 0.9, 0.6, 0.55, 0.5], "coulomb": [1.0, 1.2, 0.8, 0.9, 0.5, 0.4, 0.3],
            "smoothing": 0.02}


def states(n, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1, 1, n), rng.normal(size=n), rng.normal(size=n)) for _ in range(5)]


def test_the_payload_on_the_controllers_model_is_the_payload_welded_as_a_body():
    cfg = load_config(CONFIG, {"robot": {"payload": PAYLOAD}})
    ours = load_robot(cfg.robot).plant.kernels()                   # set_body_inertia on link 7's model
    welded = build_plant(cfg.robot.__class__(**{**cfg.robot.__dict__, "payload": None}),
                         PayloadConfig(**PAYLOAD)).kernels()       # a body welded at the frame, as the sim does
    bare = load_robot(load_config(CONFIG).robot).plant.kernels()
    a, b, c = np.zeros(7), np.zeros(7), np.zeros(7)
    for q, v, vd in states(7):
        ours.inverse_dynamics(q, v, vd, a)
        welded.inverse_dynamics(q, v, vd, b)
        bare.inverse_dynamics(q, v, vd, c)
        np.testing.assert_allclose(a, b, atol=1e-10 * max(1.0, np.abs(b).max()))
        assert np.abs(a - c).max() > 0.5                           # and it is there


def law(controller: dict):
    return hil.make_law(CONFIG, overrides={"controller": controller})


@pytest.mark.parametrize("kind", ["gravity_compensation", "joint_pd", "computed_torque", "joint_impedance",
                                  "cartesian_impedance"])
def test_friction_compensation_adds_the_identified_friction_to_each_built_in_law(kind):
    gains = {"kp": [100.0], "kd": [10.0] * 4 + [5.0, 5.0, 1.0]}       # (the wrist's kd below 2m/T)
    with_fc = law({"type": kind, **gains, "friction_compensation": FRICTION})
    without = law({"type": kind, **gains})
    for laws in (with_fc, without):
        laws.activate()
    bv, bc = np.array(FRICTION["viscous"]), np.array(FRICTION["coulomb"])
    d = without.plant.GetDampingVector() if without.adds_bias else np.zeros(7)
    for q, v, a in states(7, 1):
        s1, s2 = (x.new_state(q=q, v=v, q_d=q + 0.01, v_d=v, a_d=a) for x in (with_fc, without))
        c1, c2 = with_fc.new_command(), without.new_command()
        with_fc.update(s1, c1)
        without.update(s2, c2)
        # the model-based laws' own d∘v gives way to b_v∘v
        np.testing.assert_allclose(c1.tau - c2.tau, bv * v + bc * np.tanh(v / 0.02) - d * v, atol=1e-9)
    state, command = with_fc.new_state(q=q, v=v), with_fc.new_command()
    (net, peak), (net0, peak0) = net_and_peak(lambda: with_fc.update(state, command), 500)
    assert (net, peak) == (net0, peak0)


def test_the_compensated_viscous_friction_is_capped_as_the_damping_is():
    fc = law({"type": "gravity_compensation", "friction_compensation": FRICTION})
    capped = fc.cap_damping(np.full(7, 1e-4), 1_000_000)          # m/T = 0.1 N·m·s/rad
    assert capped == list(range(7))
    np.testing.assert_allclose(fc.friction_viscous, 0.1)


def test_bad_keys_are_refused_naming_them():
    with pytest.raises(ConfigError, match=r"controller\.friction_compensation\.viscous.*1 or 7"):
        law({"type": "joint_pd", "friction_compensation": {"viscous": [1.0, 2.0]}})
    with pytest.raises(ConfigError, match=r"controller\.friction_compensation.*built-in"):
        law({"type": "tests.hil.test_identify_parts:states", "kp": None, "kd": None,
             "friction_compensation": FRICTION})
    with pytest.raises(ConfigError, match=r"robot\.payload\.frame.*no_such"):
        load_robot(load_config(CONFIG, {"robot": {"payload": {**PAYLOAD, "frame": "no_such"}}}).robot)
    with pytest.raises(ConfigError, match=r"robot\.payload\.inertia.*physically valid"):
        load_robot(load_config(CONFIG, {"robot": {"payload": {**PAYLOAD, "inertia": [1.0, 0.1, 0.1]}}}).robot)


def test_the_pseudo_inertia_is_psd_exactly_for_mass_distributions():
    m, c, I = 2.0, np.array([0.1, -0.2, 0.3]), np.diag([0.02, 0.03, 0.04])
    I_o = I + m * (c @ c * np.eye(3) - np.outer(c, c))
    pi = np.r_[m, m * c, I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]]
    assert np.linalg.eigvalsh(pseudo_inertia(pi)).min() > 0
    bad = pi.copy()
    bad[4] += 0.2                    # I_xx above I_yy + I_zz: no mass distribution has it
    assert np.linalg.eigvalsh(pseudo_inertia(bad)).min() < 0


def test_the_consistent_fit_is_physical_where_least_squares_is_not():
    """A point mass (J of rank 1, on the boundary) seen through noisy rows: least squares leaves the
    cone, the semidefinite program stays in it and is as close to the data."""
    pytest.importorskip("cvxpy")
    rng = np.random.default_rng(5)
    c = np.array([0.05, 0.02, -0.04])
    m = 1.5
    I_o = m * (c @ c * np.eye(3) - np.outer(c, c))
    pi = np.r_[m, m * c, I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2], 0.3, 0.2]
    A = rng.normal(size=(400, 12))
    y = A @ pi + 0.05 * rng.normal(size=400)
    joint = np.zeros(400, dtype=int)
    theta_ls, _, Aw, yw = weighted(A, y, joint, 1)
    assert np.linalg.eigvalsh(pseudo_inertia(theta_ls[:10])).min() < -1e-6
    theta = consistent(Aw, yw, 10, 1)
    assert np.linalg.eigvalsh(pseudo_inertia(theta[:10])).min() > -1e-7
    assert np.all(theta[10:] >= -1e-9)
    assert np.sum((Aw @ theta - yw) ** 2) < 1.05 * np.sum((Aw @ theta_ls - yw) ** 2)


@pytest.fixture(scope="module")
def short_log(tmp_path_factory):
    """A 4.5 s log of a short excitation (no optimisation) against the shipped config's simulated iiwa."""
    log = tmp_path_factory.mktemp("short") / "run.lcmlog"
    hil.run(load_config(CONFIG, {"telemetry": {"log": str(log)}, "trajectory": {
        "type": "excitation", "excitation": {"optimize": False, "base_frequency": 0.5, "periods": 2,
                                             "ramp": 0.5}}}), duration=4.5)
    return log


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


def test_without_cvxpy_the_command_says_what_to_install_in_one_line(short_log, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cvxpy", None)
    assert main(["identify", str(short_log)]) == 2
    assert "pip install 'hilstack[identify]'" in one_line_error(capsys)
    assert main(["identify", str(short_log), "--unconstrained"]) == 0      # least squares needs no cvxpy


def test_the_commands_refuse_what_they_cannot_identify_in_one_line(short_log, tmp_path, capsys):
    assert main(["identify", str(tmp_path / "none.lcmlog")]) == 2
    assert "no such log file" in one_line_error(capsys)
    assert main(["identify", str(short_log), "--cutoff", "900"]) == 2
    assert "--cutoff" in one_line_error(capsys)
    for option, value in (("--epsilon", "0"), ("--v-min", "-1"), ("--torque-shift", "nan"), ("--holdout", "1")):
        assert main(["identify", str(short_log), option, value]) == 2
        assert option in one_line_error(capsys)
    for option, path in (("--out", tmp_path / "no_dir" / "x.yaml"), ("--plot", tmp_path / "no_dir" / "x.png"),
                         ("--out", tmp_path)):
        assert main(["identify", str(short_log), option, str(path)]) == 2
        assert option in one_line_error(capsys)
    assert main(["identify", str(short_log), "--plot", str(tmp_path / "x.nosuchformat")]) == 2
    assert "--plot" in one_line_error(capsys)
    still = tmp_path / "still.lcmlog"
    hil.run(load_config(CONFIG, {"telemetry": {"log": str(still)}, "trajectory": {"type": "hold"}}), duration=1.0)
    assert main(["identify", str(still)]) == 2
    assert "too little motion" in one_line_error(capsys)
    hold = tmp_path / "hold.yaml"
    hold.write_text(CONFIG.read_text().replace("type: excitation", "type: hold"))
    assert main(["run", str(hold), "--identify"]) == 2
    assert "trajectory.type" in one_line_error(capsys)


def test_the_excitation_keeps_the_torque_within_the_effort_limits():
    cfg = load_config(CONFIG, {"safety": {"effort_scale": 0.35}, "trajectory": {"excitation": {
        "base_frequency": 0.5, "periods": 1, "ramp": 0.5, "iterations": 3, "samples": 20,
        "q0": [0.0, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0]}}})
    robot = load_robot(cfg.robot)
    from hil.excitation import FIT, check_times
    from hil.trajectories import make_trajectory
    src = make_trajectory(cfg.trajectory, robot.plant, robot.joint_names, None, 1_000_000, robot.end_effector,
                          background=False, safety=cfg.safety)
    t = check_times(cfg.trajectory.excitation)
    dQ, V, A = src.series.grid(t)
    assert src.limits.torque_ratio(src.q0, dQ, V, A) <= FIT + 1e-9
    assert src.limits.torque_ratio(src.q0, dQ, V, A) > 0.3          # the limit binds: gravity alone is less


@pytest.mark.parametrize("kind", ["joint_impedance", "gravity_compensation"])
def test_a_whole_tick_with_the_identified_payload_and_friction_allocates_only_scalars(kind):
    """The loop's tick (the excitation, the law with robot.payload and friction compensation, safety,
    command, telemetry) under tracemalloc: no numpy temporary, the bounds of test_hil_alloc."""
    import lcm

    from hil.loop import ControlLoop
    from messages.codec import StatusEncoder
    from tests.hil.test_hil_alloc import SCALARS_MEDIAN, SCALARS_PEAK, transient_peaks
    cfg = load_config(CONFIG, {"viz": False, "robot": {"payload": PAYLOAD}, "safety": {"status_timeout_periods": 10**6},
                               "controller": {"type": kind, "friction_compensation": FRICTION}})
    lc = lcm.LCM("memq://")
    loop = ControlLoop(cfg, load_robot(cfg.robot), lc, mode="lockstep", trace_every=1).configure()
    loop.activate()
    assert loop.controller.friction is not None
    status = StatusEncoder("iiwa", 7)
    status.encode(0, position_measured=np.array(cfg.trajectory.excitation.q0), velocity_estimated=np.full(7, 0.3))
    lc.publish("IIWA_STATUS", status.tobytes())
    for _ in range(300):
        loop.update()
    assert loop.safety.state.name == "RUNNING"
    peaks = transient_peaks(loop.update, 3000)
    assert loop.hardware.commands.sent >= 3000
    assert max(peaks) <= SCALARS_PEAK and np.median(peaks) <= SCALARS_MEDIAN, (max(peaks), np.median(peaks))
