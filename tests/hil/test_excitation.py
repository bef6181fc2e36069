"""The excitation trajectory (trajectory.type: excitation, issue 29 item 2): the windowed Fourier
series' closed-form derivatives against finite differences, rest at both ends, the limits, the
optimised condition number, an allocation-free tick in the loop against the simulated iiwa, and
clear refusals."""
import lcm
import numpy as np
import pytest

from drivers.core.robot import load_robot
from drivers.core.schema import ConfigError
from drivers.run_config import load_config
from hil.excitation import FourierSeries, check_times, design
from hil.loop import ControlLoop
from hil.trajectories import make_trajectory
from messages.codec import StatusEncoder
from tests.alloc import net_and_peak
from tests.hil.test_hil_alloc import SCALARS_MEDIAN, SCALARS_PEAK, transient_peaks

FAST = {"harmonics": 3, "base_frequency": 0.5, "ramp": 0.5, "iterations": 5, "samples": 40}
Q_START = np.array([0.0, 0.5, 0.0, -1.0, 0.0, 0.6, 0.0])


def config(**excitation):
    return load_config("configs/demo.yaml", {"viz": False, "trajectory": {
        "type": "excitation", "excitation": {**FAST, **excitation}}})


@pytest.fixture(scope="module")
def iiwa():
    cfg = config()
    robot = load_robot(cfg.robot)
    return cfg, robot


def source(cfg, robot):
    return make_trajectory(cfg.trajectory, robot.plant, robot.joint_names, None, 1_000_000, robot.end_effector,
                           background=False, safety=cfg.safety)


def sample(series, t, q0):
    q, v, a = np.zeros(series.n), np.zeros(series.n), np.zeros(series.n)
    series.at(t, q0, q, v, a)
    return q, v, a


def test_the_closed_form_derivatives_match_finite_differences():
    rng = np.random.default_rng(3)
    s = FourierSeries(rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), 0.4, 5.0, 1.0)
    q0, h = rng.standard_normal(4), 1e-5
    for t in (0.3, 0.9, 1.7, 2.5, 4.2, 4.8):        # in the ramps and between
        q, v, a = sample(s, t, q0)
        qp, vp, _ = sample(s, t + h, q0)
        qm, vm, _ = sample(s, t - h, q0)
        np.testing.assert_allclose(v, (qp - qm) / (2 * h), atol=1e-7)
        np.testing.assert_allclose(a, (vp - vm) / (2 * h), atol=1e-6)
    t = np.array([0.3, 1.7, 4.8])                    # the setup's grid is the tick's series
    dQ, V, A = s.grid(t)
    for k, tk in enumerate(t):
        q, v, a = sample(s, tk, q0)
        np.testing.assert_allclose(np.hstack([q - q0, v, a]), np.hstack([dQ[k], V[k], A[k]]), atol=1e-12)


def test_it_starts_and_ends_at_rest():
    rng = np.random.default_rng(4)
    s = FourierSeries(rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), 0.25, 8.0, 1.5)
    q0 = np.array([0.1, -0.2, 0.3])
    for t in (0.0, 8.0, 1e-9, 8.0 - 1e-9, 9.0):
        q, v, a = sample(s, t, q0)
        np.testing.assert_allclose(q, q0, atol=1e-12)
        np.testing.assert_allclose(v, 0.0, atol=1e-12)
        np.testing.assert_allclose(a, 0.0, atol=1e-6)
    q, v, a = sample(s, 4.0, q0)                     # and moves in between
    assert np.min(np.abs(v)) > 0


def test_it_stays_within_the_limits_and_the_optimised_condition_number_is_lower(iiwa):
    cfg, robot = iiwa
    plant, ex = robot.plant, cfg.trajectory.excitation
    src = source(cfg, robot)
    src.start(Q_START, 0)
    assert src.error is None
    lim = src.limits
    T = src.duration_ns * 1e-9
    q, v, a = np.zeros(7), np.zeros(7), np.zeros(7)
    Q, V, A = [], [], []
    for t_ns in range(0, src.duration_ns + 1, 1_000_000):     # every tick, 1 kHz
        src.sample(t_ns, q, v, a)
        Q.append(q.copy()), V.append(v.copy()), A.append(a.copy())
    Q, V, A = map(np.array, (Q, V, A))
    assert np.all(Q >= lim.lower - 1e-9) and np.all(Q <= lim.upper + 1e-9)
    assert np.all(np.abs(V) <= lim.v_max + 1e-9) and np.all(np.abs(A) <= lim.a_max + 1e-9)
    np.testing.assert_allclose(Q[-1], Q_START, atol=1e-12)
    assert abs(T - 1 / ex.base_frequency) < 1e-9
    assert np.max(np.abs(V)) > 0.1 * np.min(lim.v_max)      # it does move
    centre = np.clip(plant.GetDefaultPositions(), lim.lower, lim.upper)
    *_, c0, c = design(ex, plant, robot.end_effector, lim, centre)
    assert c < c0, (c, c0)


def test_a_trajectory_outside_the_limits_is_refused_naming_the_joint(iiwa):
    cfg, robot = iiwa
    src = source(cfg, robot)                 # centred on the position at start: designed in start()
    near = Q_START.copy()
    near[3] = src.limits.upper[3] + 1e-3
    src.start(near, 0)
    assert src.error is not None and "iiwa_joint_4 centre" in src.error, src.error
    weak = load_config("configs/demo.yaml", {"viz": False, "safety": {"effort_scale": 0.05}, "trajectory": {
        "type": "excitation", "excitation": {**FAST, "q0": Q_START.tolist()}}})
    with pytest.raises(ConfigError, match=r"trajectory\.excitation: .*iiwa_joint_\d torque .* at t = \d"):
        source(weak, robot)


def test_bad_keys_are_refused_with_the_key_named(iiwa):
    cfg, robot = iiwa
    with pytest.raises(ConfigError, match=r"trajectory\.excitation\.harmonic"):
        config(harmonic=3)
    with pytest.raises(ConfigError, match=r"trajectory\.excitation\.base_frequency"):
        config(base_frequency=-1.0)
    bad = config(ramp=1.5)                            # 2 × 1.5 s > 1 / 0.5 Hz
    with pytest.raises(ConfigError, match=r"trajectory\.excitation\.ramp"):
        source(bad, robot)
    with pytest.raises(ConfigError, match=r"trajectory\.excitation\.q0.*7 joint positions"):
        source(config(q0=[0.0, 0.1]), robot)
    with pytest.raises(ConfigError, match=r"trajectory\.excitation\.frame.*no_such"):
        source(config(frame="no_such"), robot)


def test_a_fixed_centre_is_approached_first_then_excited():
    cfg = config(q0=[0.2, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0], optimize=False)
    robot = load_robot(cfg.robot)
    src = source(cfg, robot)
    src.start(Q_START, 0)
    q, v, a = np.zeros(7), np.zeros(7), np.zeros(7)
    src.sample(int(src.approach * 1e9), q, v, a)
    np.testing.assert_allclose(q, cfg.trajectory.excitation.q0, atol=1e-9)
    np.testing.assert_allclose(v, 0.0, atol=1e-9)
    assert src.duration_ns == pytest.approx((src.approach + 2.0) * 1e9)
    assert len(check_times(cfg.trajectory.excitation)) >= 50


def test_the_tick_allocates_nothing_in_lockstep_against_the_simulated_iiwa(iiwa):
    robot = iiwa[1]
    cfg = config()
    cfg.safety.status_timeout_periods = 10**6       # one status keeps the loop RUNNING
    lc = lcm.LCM("memq://")
    loop = ControlLoop(cfg, robot, lc, mode="lockstep").configure()
    loop.activate()
    status = StatusEncoder("iiwa", 7)
    status.encode(0, position_measured=Q_START, velocity_estimated=np.zeros(7))
    lc.publish("IIWA_STATUS", status.tobytes())
    for _ in range(300):
        loop.update()
    assert loop.safety.state.name == "RUNNING"
    peaks = transient_peaks(loop.update, 1500)       # the whole tick, the excitation's sample in it
    assert max(peaks) <= SCALARS_PEAK and np.median(peaks) <= SCALARS_MEDIAN, (max(peaks), np.median(peaks))
    src = loop.trajectory
    q, v, a = np.zeros(7), np.zeros(7), np.zeros(7)
    t = [src.t0]

    def tick():
        t[0] += 1_000_000
        src.sample(t[0], q, v, a)
    (net, peak), (net0, peak0) = net_and_peak(tick, 1500)
    assert net <= net0 + 64 and peak <= peak0 + 128, (net, peak, net0, peak0)
    loop.close()


def test_an_excitation_runs_in_lockstep_against_the_simulated_iiwa():
    import hil
    summary = hil.run("configs/demo.yaml", duration=2.6, overrides={
        "viz": False, "lcm": {"url": "memq://"},
        "trajectory": {"type": "excitation", "excitation": FAST}})
    assert summary["final_state"] == "RUNNING" and not summary["faults"], summary["faults"]
    assert max(summary["tracking_error_rad"]["max"]) < 0.05


@pytest.mark.parametrize("name", ["kuka_position_torque", "franka_torque"])
def test_an_excitation_runs_behind_the_real_drivers_rules(name):
    """configs/real/ against the simulated plant's sim.driver (the real driver's start guard, clocks
    and command rules): no driver abort, no fault, back at rest where it started."""
    from tests.hil.test_hil_real_drivers import start
    loop, sim, _ = start(name, "loop_first", {"type": "excitation", "excitation": FAST})
    summary = loop.run(3.0)
    assert sim.exited is None, sim.exited
    assert summary["final_state"] == "RUNNING" and summary["faults"] == [], summary["transitions"]
    assert max(summary["tracking_error_rad"]["max"]) > 1e-3            # it moved
    np.testing.assert_allclose(loop.v, 0.0, atol=0.02)                 # and stopped


def test_in_real_time_it_holds_while_designing_in_the_background(iiwa):
    import time
    cfg, robot = iiwa
    src = make_trajectory(cfg.trajectory, robot.plant, robot.joint_names, None, 1_000_000, robot.end_effector,
                          background=True, safety=cfg.safety)
    src.start(Q_START, 0)
    q, v, a = np.zeros(7), np.zeros(7), np.zeros(7)
    t_ns, deadline = 0, time.monotonic() + 60
    while not src.ready and src.error is None and time.monotonic() < deadline:
        src.sample(t_ns, q, v, a)
        np.testing.assert_array_equal(q, Q_START)
        t_ns += 1_000_000
        time.sleep(0.001)
    assert src.ready and src.error is None
    src.sample(t_ns + 5_000_000, q, v, a)              # the series begins at rest on the first tick after
    assert src.t0 == t_ns + 5_000_000
    np.testing.assert_allclose(q, Q_START, atol=1e-12)
