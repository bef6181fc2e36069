"""The pytest plugin (hil.pytest_plugin) as a user's project meets it: a test file in a temporary
directory that defines its own law and uses the fixtures, run by pytester; and what a run records,
against the drivers' stand-ins, injected faults, a payload and a push."""
import dataclasses

import numpy as np
import pytest

from drivers.sim.config import SimConfig
from hil.controllers import GravityCompensation

# pytester for the users' runs; the plugin for this module's own (a no-op where its entry point,
# of the same name, is installed)
pytest_plugins = ["pytester", "hil.pytest_plugin"]
PLUGIN = ("-p", "hil.pytest_plugin")

LAWS = '''
import numpy as np
from hil import Controller

Q0 = [0.2, 0.6, -0.1, -1.1, 0.1, 0.8, 0.0]
HOLD = {"trajectory": {"type": "hold"}, "sim": {"initial_positions": Q0}}


class Hold(Controller):
    def on_configure(self):
        self.tau_g = np.zeros(self.n)

    def update(self, state, command):
        self.kernels.gravity(state.q, self.tau_g)
        np.negative(self.tau_g, out=command.tau)


class Allocates(Hold):
    def update(self, state, command):
        tau_g = np.zeros(self.n)
        self.kernels.gravity(state.q, tau_g)
        np.negative(tau_g, out=command.tau)
'''


def user_test(pytester, body: str):
    pytester.makepyfile(laws=LAWS)
    pytester.makepyfile(test_user="import numpy as np\n\nfrom laws import HOLD, Q0, Allocates, Hold\n\n" + body)


def test_a_law_that_holds_the_arm_passes_with_a_run_of_arrays(pytester):
    user_test(pytester, '''
def test_hold(hil_sim, hil_config):
    own_gravity = {"sim": {**HOLD["sim"], "gravity_compensation": "none"},     # the law carries the arm
                   "controller": {"robot_compensates_gravity": False}}
    run = hil_sim(hil_config("iiwa"), Hold, duration=1.0, overrides={**HOLD, **own_gravity})
    assert run.final_state == "RUNNING" and run.faults == [] and run.error is None and run.running.all()
    assert run.q.shape == run.v.shape == run.tau.shape == run.q_d.shape == (1000, 7)
    assert np.allclose(np.diff(run.t), 1e-3) and run.elapsed[-1] == run.t[-1] - run.t[0]
    assert np.abs(run.q - Q0).max() < 1e-6 and np.abs(run.q_d - Q0).max() < 1e-6
    assert np.allclose(np.abs(run.tau).max(axis=0), run.summary["torque_max_nm"], atol=1e-5)
    assert np.abs(run.tau[-1]).max() > 1.0            # the sent torque is the law's (gravity): not zero
    assert run.allocations is None
''')
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1)


def test_a_law_that_raises_is_a_controller_fault_with_its_traceback(pytester):
    user_test(pytester, '''
class GivesUp(Hold):
    def update(self, state, command):
        if state.t >= 0.2:
            raise RuntimeError("the law gave up")
        super().update(state, command)


def test_raises(hil_sim, hil_config):
    run = hil_sim(hil_config("iiwa"), GivesUp, duration=0.5, overrides=HOLD)
    assert run.final_state == "FAULT" and [f["fault"] for f in run.faults] == ["CONTROLLER"]
    assert run.faults[0]["reason"] == "RuntimeError: the law gave up"
    assert "test_user.py" in run.error and 'raise RuntimeError("the law gave up")' in run.error
    stop = np.argmin(run.running)
    assert abs(run.elapsed[stop] - 0.2) < 2e-3 and not run.running[stop:].any()
    assert np.abs(run.q - Q0).max() < 1e-3            # the safe command holds the arm
''')
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=1)


def test_hil_check_alloc_fails_the_test_whose_law_allocates(pytester):
    user_test(pytester, '''
def test_allocating(hil_sim, hil_config):
    hil_sim(hil_config("iiwa"), Allocates, duration=0.5, overrides=HOLD)


def test_allocation_free(hil_sim, hil_config, request):
    run = hil_sim(hil_config("iiwa"), Hold, duration=0.5, overrides=HOLD)
    checked = request.config.getoption("--hil-check-alloc")
    assert run.allocations["ticks"] > 400 if checked else run.allocations is None


def test_opted_out(hil_sim, hil_config):
    assert hil_sim(hil_config("iiwa"), Allocates, duration=0.5, overrides=HOLD, check_alloc=False).allocations is None
''')
    result = pytester.runpytest(*PLUGIN, "--hil-check-alloc")
    result.assert_outcomes(passed=2, failed=1)
    line = LAWS.lstrip("\n").splitlines().index("        tau_g = np.zeros(self.n)") + 1    # (as makepyfile writes it)
    result.stdout.fnmatch_lines(["*laws:Allocates: update() allocated on * ticks*",
                                 f"*allocates at laws.py:{line} (update): * B: tau_g = np.zeros(self.n)*",
                                 "*FAILED*test_allocating*"])
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=3)


def test_hil_config_names_the_shipped_robots(pytester):
    user_test(pytester, '''
import importlib.util

import pytest


def test_names(hil_config):
    assert hil_config("iiwa").name == "demo.yaml"
    with pytest.raises(KeyError, match="known: iiwa, panda, go2"):
        hil_config("ur10")


def test_panda(hil_config):
    assert hil_config("panda").is_file()
    from dynamics_cy.planning.legged_models import example_robot_data_root
    assert example_robot_data_root() is not None      # else it skipped
''')
    result = pytester.runpytest(*PLUGIN, "-rs")
    from dynamics_cy.planning.legged_models import example_robot_data_root
    if example_robot_data_root() is None:
        result.assert_outcomes(passed=1, skipped=1)
        result.stdout.fnmatch_lines(["*hil_config('panda') needs example-robot-data*"])
    else:
        result.assert_outcomes(passed=2)


def test_hil_sim_tests_get_the_signal_timeout_watchdog_unless_they_name_one(pytester):
    pytester.makepyfile(test_user='''
import pytest


def test_plain(hil_sim, request):
    assert request.node.get_closest_marker("timeout").kwargs == {"method": "signal"}


@pytest.mark.timeout(7)
def test_own(hil_sim, request):
    assert request.node.get_closest_marker("timeout").args == (7,)
''')
    pytester.runpytest(*PLUGIN, "-p", "timeout", "--timeout", "60").assert_outcomes(passed=2)


# --- what a run records -----------------------------------------------------------------------------
Q0 = [0.2, 0.6, -0.1, -1.1, 0.1, 0.8, 0.0]
HOLD = {"trajectory": {"type": "hold"}, "sim": {"initial_positions": Q0}}


@pytest.mark.parametrize("driver", ["drake_sim", "kuka_driver", "franka_driver"])
def test_each_driver_stand_in_holds_the_arm_under_gravity_compensation(hil_sim, hil_config, driver):
    run = hil_sim(hil_config("iiwa"), GravityCompensation, duration=1.0, driver=driver, overrides=HOLD)
    assert run.final_state == "RUNNING" and run.faults == [], run.transitions
    assert run.config.robot.driver == run.config.sim.driver == driver
    assert np.abs(run.q - Q0).max() < 1e-3 and np.abs(run.plant_q - Q0).max() < 1e-3
    if driver == "kuka_driver":             # its start guard: no command for 0.3 s after the first status
        assert not run.running[:299].any() and run.running[301:].all()
        assert run.config.sim.kuka_driver.torque_only
    else:
        assert run.running.all()
    if driver == "franka_driver":           # the panda protocol, its clock the host's wall clock
        assert run.config.robot.protocol == "panda" and run.t[0] > 1e9
        assert np.allclose(run.elapsed[[0, -1]], [0.0, 0.999])


def test_injected_faults_show_in_the_run(hil_sim, hil_config):
    silent = {"type": "silent", "start": 0.3, "stop": 0.35}
    run = hil_sim(hil_config("iiwa"), GravityCompensation, duration=1.0, faults=[silent],
                  overrides={**HOLD, "safety": {"recover": False}})
    assert [f["fault"] for f in run.faults] == ["STATUS_TIMEOUT"] and run.final_state == "FAULT"
    assert run.injected[0]["type"] == "silent" and run.injected[0]["applied"] == 50
    assert not run.running[run.elapsed > 0.36].any()


def test_a_payload_the_law_does_not_know_pulls_the_arm_down(hil_sim, hil_config):
    """(The simulated robot's own gravity compensation would carry it: it knows the payload.)"""
    run = hil_sim(hil_config("iiwa"), GravityCompensation, duration=0.5, payload=3.0,
                  overrides={**HOLD, "sim": {**HOLD["sim"], "gravity_compensation": "none"},
                             "controller": {"robot_compensates_gravity": False}})
    drop = run.frame_positions()[:, 2] - run.frame_positions()[0, 2]
    assert drop[-1] < -0.05 and run.config.sim.payload.mass == 3.0


@pytest.mark.skipif("pushes" not in {f.name for f in dataclasses.fields(SimConfig)}, reason="needs sim.pushes")
def test_a_push_is_the_external_torque_jt_f_in_the_plants_signs(hil_sim, hil_config, iiwa):
    force = np.array([0.0, 0.0, 0.0, 10.0, -5.0, 0.0])          # [torque; force] in W at the body's origin
    push = {"body": "iiwa_link_7", "force": force[3:].tolist(), "start": 0.1, "duration": 0.2}
    run = hil_sim(hil_config("iiwa"), GravityCompensation, duration=0.5, pushes=[push], overrides=HOLD)
    k, J = iiwa.kernels(), np.zeros((6, 7))
    frame = iiwa.GetBodyByName("iiwa_link_7").body_frame()
    pushed = np.flatnonzero((run.elapsed > 0.12) & (run.elapsed < 0.29))
    for i in pushed[::20]:
        k.jacobian(run.q[i], frame, J)
        np.testing.assert_allclose(run.tau_external[i], J.T @ force, rtol=0.02, atol=0.05)
    assert np.abs(run.tau_external[run.elapsed > 0.31]).max() == 0.0
