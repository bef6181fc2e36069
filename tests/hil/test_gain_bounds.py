"""Gains unstable at the loop's period are refused at start (hil.controllers.StableJointLaw), the bound
verified in lockstep just below and above it, and a run that recovered from faults says so in its
summary and exit status (3, as a run that ended in a fault)."""
import json
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np
import pytest

import hil
from drivers.core import _control
from drivers.core.schema import ConfigError
from drivers.run_config import load_config
from drivers.sim.physics import joint_inertias
from hil.running import make_law
from messages.channels import private_lcm_url
from tests.hil.processes import spawn

ROBOT = "robot: {model: robots/iiwa14.urdf, protocol: iiwa, end_effector: iiwa_link_ee}\n"


def hil_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hil", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_one_kd_for_every_joint_that_is_unstable_on_the_wrist_is_refused_naming_it(tmp_path):
    """The issue's config: joint_pd with kd: [20] (VELOCITY_LIMIT ×45 on joint 7 in 3 s, exit 0)."""
    config = tmp_path / "robot.yaml"
    config.write_text(ROBOT + "controller: {type: joint_pd, kp: [100], kd: [20]}\ntrajectory: {type: hold}\n"
                      "viz: false\n")
    p = hil_cli("run", "robot.yaml", "--duration", 1, "--lcm-url", private_lcm_url(), cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", p.stdout + p.stderr
    line, = p.stderr.strip().splitlines()
    assert line.startswith("hil: config error: robot.yaml: controller.kd: 20 N·m·s/rad on iiwa_joint_7 is "
                           "unstable at the loop period T = 1 ms: it must be below d·coth(dT/2m) = 1.866 N·m·s/rad, "
                           "m = 0.0009101 kg·m² its inertia, d = 0.5 N·m·s/rad its viscous friction"), line
    assert "also iiwa_joint_5 (20 ≥ 15.48)" in line and "Traceback" not in p.stderr


def test_the_other_built_ins_are_checked_in_their_own_units(tmp_path):
    cfg = load_config("configs/demo.yaml", {"controller": {"kd": [40, 40, 40, 40, 40, 40, 2500]}})
    with pytest.raises(ConfigError, match=r"controller\.kd: 2500 1/s on iiwa_joint_7 .* below 2m/T = 2000 1/s"):
        make_law(cfg)
    cfg = load_config("configs/demo.yaml", {"controller": {"type": "joint_impedance", "kp": [300] * 6 + [4000],
                                                           "kd": [10] * 6 + [1]}})
    with pytest.raises(ConfigError, match=r"controller\.kp: 4000 N·m/rad on iiwa_joint_7 .* below 4m/T² = 3640"):
        make_law(cfg)
    make_law(load_config("configs/demo.yaml"))                     # the shipped gains pass


class RawPD(hil.Controller):
    """joint_pd's law, unchecked: a user's law may put any gains in."""

    @dataclass
    class Params:
        kp: list = field(default_factory=list)
        kd: list = field(default_factory=list)

    def on_configure(self):
        self.kp, self.kd = np.array(self.params.kp, float), np.array(self.params.kd, float)
        self.tau_g = np.zeros(self.n)

    def update(self, state, command):
        self.kernels.gravity(state.q, self.tau_g)
        _control.pd(state.q, state.v, state.q_d, state.v_d, self.kp, self.kd, self.tau_g, -1.0, command.tau)


@pytest.mark.parametrize("factor, stable", [(0.95, True), (1.05, False)])
def test_the_kd_bound_is_where_the_lockstep_loop_turns_unstable(factor, stable):
    """Joint 7 at kd = 0.95 and 1.05 × 2m/T (the simulated joint without damping, as the bound leaves
    the joint's friction out; kp small): below, its initial velocity dies out; above, it alternates and
    grows (×1.1 a tick) until the loop's torque rate limit holds it in a limit cycle."""
    cfg = load_config("configs/demo.yaml")
    law = make_law(cfg, RawPD({"kp": [1.0], "kd": [1.0]}))
    bound = 2 * joint_inertias(law.plant, np.zeros(7))[6] / 1e-3
    v7 = []
    summary = hil.run(cfg, RawPD({"kp": [100, 100, 100, 100, 20, 20, 1], "kd": [20, 20, 10, 10, 5, 5, factor * bound]}),
                      duration=1.0, on_tick=lambda loop: v7.append(float(loop.vj[6])), overrides={
        "controller": {"robot_compensates_gravity": False}, "trajectory": {"type": "hold"}, "viz": False,
        "telemetry": {"log": None}, "safety": {"recover": False},
        "sim": {"brakes": False, "gravity_compensation": "none", "joint_damping": 0.0,
                "initial_positions": [0.0] * 7, "initial_velocities": [0.0] * 6 + [0.05]}})
    late = np.abs(v7[500:]).max()
    if stable:
        assert summary["final_state"] == "RUNNING" and summary["faults"] == [], summary["faults"]
        assert abs(v7[20]) < 0.05 and late < 1e-3
    else:
        assert abs(v7[20]) > 0.5 and late > 0.5
        assert all(a * b < 0 for a, b in zip(v7[100:110], v7[101:111]))         # a pole beyond −1


DEMO_RECOVERING = """
controller: {type: computed_torque, kp: [400], kd: [40], robot_compensates_gravity: true}
trajectory: {type: hold}
safety: {status_timeout_periods: 10, recover: true}
telemetry: {rate_hz: 100}
viz: false
sim:
  brakes: true
  gravity_compensation: internal
  faults:
"""


def test_a_run_that_recovered_from_faults_says_so_and_exits_3(tmp_path):
    """`hil sim` goes silent 100 ms every second (STATUS_TIMEOUT, then recovery at rest); `hil run`
    ends RUNNING after recovering: its summary says `recovered from N faults` and it exits 3 (it
    exited 0)."""
    config = tmp_path / "robot.yaml"
    windows = "".join(f"    - {{type: silent, start: {k}.45, stop: {k}.55}}\n" for k in range(1, 40))
    config.write_text(ROBOT + DEMO_RECOVERING + windows)
    url = private_lcm_url()
    sim = spawn("sim", config, "--lcm-url", url, "--duration", "60")
    try:
        run = hil_cli("run", config, "--lcm-url", url, "--duration", 2.3, "--quiet", cwd=tmp_path)
    finally:
        sim.terminate()
        sim.communicate(timeout=60)
    assert run.returncode == 3, run.stdout + run.stderr
    final = next(x for x in run.stdout.splitlines() if x.startswith("final state"))
    assert "STATUS_TIMEOUT" in final
    if final.startswith("final state RUNNING"):          # (else the run ended inside a window: FAULT)
        assert final.startswith("final state RUNNING, recovered from "), final


def test_the_json_summary_and_the_exit_status_agree(tmp_path):
    from hil.telemetry import exit_status, final_line
    s = {"final_state": "RUNNING", "faults": [{"tick": 5, "utime": 1, "fault": "STATUS_TIMEOUT", "reason": "r"}],
         "fault_counts": {"STATUS_TIMEOUT": 2}}
    assert exit_status(s) == 3 and final_line(s).startswith("final state RUNNING, recovered from 2 faults: ")
    assert exit_status({"final_state": "RUNNING", "faults": [], "fault_counts": {}}) == 0
    assert json.dumps(s)


def test_gains_stable_at_the_loop_period_but_not_at_a_slower_status_period_are_warned_of():
    """Behind a 200 Hz driver the torque is held 5 ms: the wrist's kd 1 (below 2m/T at 1 ms) is above
    it at 5 ms, and the start-up line says so once the loop has measured the status period."""
    overrides = {"controller": {"type": "joint_pd", "kp": [300, 300, 200, 200, 50, 30, 10],
                                "kd": [20, 20, 10, 10, 3, 2, 1]}, "trajectory": {"type": "hold"}, "viz": False}
    quiet = hil.run("configs/demo.yaml", duration=0.1, overrides=overrides)
    assert "UNSTABLE" not in quiet["startup"]
    slow = hil.run("configs/demo.yaml", duration=0.1, overrides={**overrides, "sim": {"status_period": 0.005}})
    assert ("UNSTABLE gains at the status period: controller.kd: 1 N·m·s/rad on iiwa_joint_7 is unstable at "
            "the status period T = 5 ms: it must be below d·coth(dT/2m) = 0.5685") in slow["startup"], slow["startup"]


def _held_torque_radius(m, d, T, kp, kd):
    """The spectral radius of a joint (inertia m, viscous friction d) under τ = −kp q − kd v held over T:
    its exact map x⁺ = (Φ − Γ [kp kd]) x from the matrix exponential of [[A T, B T], [0, 0]]."""
    from scipy.linalg import expm
    big = np.zeros((3, 3))
    big[0, 1], big[1, 1], big[1, 2] = T, -d / m * T, T / m
    E = expm(big)
    return max(abs(np.linalg.eigvals(E[:2, :2] - E[:2, 2:] @ np.array([[kp, kd]]))))


@pytest.mark.parametrize("m, d, T", [(0.00091, 0.0, 1e-3), (0.00091, 0.5, 1e-3), (0.00091, 0.5, 5e-3),
                                     (0.35, 0.5, 1e-3)])
def test_the_bounds_are_where_the_held_torque_map_turns_unstable_whatever_the_other_gain(m, d, T):
    from hil.controllers import gain_bounds
    kp_max, kd_max = (float(x) for x in gain_bounds(m, d, T))
    kps, kds = np.linspace(0.0, 3 * kp_max, 301), np.linspace(0.0, 3 * kd_max, 301)
    assert min(_held_torque_radius(m, d, T, kp, 1.001 * kd_max) for kp in kps) > 1        # unstable for every kp
    assert min(_held_torque_radius(m, d, T, kp, 0.99 * kd_max) for kp in kps) < 1         # some kp is stable
    assert min(_held_torque_radius(m, d, T, 1.001 * kp_max, kd) for kd in kds) > 1        # unstable for every kd
    assert min(_held_torque_radius(m, d, T, 0.99 * kp_max, kd) for kd in kds) < 1


@pytest.mark.parametrize("law", ["joint_pd", "joint_impedance"])
def test_the_default_gains_are_stable_on_every_joint_and_hold_the_arm(law, tmp_path):
    """A law named with no gains: 100 and 20 where the joint allows, half the bound on the light wrist
    (20 everywhere is refused there: the test above), and the arm held without a fault."""
    (tmp_path / "robot.yaml").write_text(ROBOT + f"controller: {{type: {law}}}\ntrajectory: {{type: hold}}\n"
                                         "viz: false\n")
    cfg = load_config(tmp_path / "robot.yaml")
    pd = make_law(cfg)
    assert pd.kd[0] == 20 and pd.kp[0] == 100
    m = joint_inertias(pd.plant, pd.plant.GetDefaultPositions())
    d = pd.plant.GetDampingVector() + (pd.neg_damping if pd.adds_bias else 0)
    from hil.controllers import gain_bounds
    kp_max, kd_max = gain_bounds(m, d, pd.period)
    assert np.all(pd.kd <= 0.5 * kd_max + 1e-12) and np.all(pd.kp <= 0.5 * kp_max + 1e-12)
    assert pd.kd[6] < 1.0                               # iiwa_joint_7: half of 1.866
    summary = hil.run(cfg, duration=2.0)
    assert summary["final_state"] == "RUNNING" and not summary["faults"], summary["faults"]
