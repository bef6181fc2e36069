"""A law of a user's own on a legged robot: the one loop runs it over the floating base as it runs
an arm's, through the pytest fixture's machinery (hil.testing.simulate) and hil.run."""
import numpy as np
import pytest

import hil
from hil import Controller
from hil.testing import config_path, missing_module, simulate

pytestmark = pytest.mark.skipif(missing_module("go2") is not None, reason="example-robot-data is not installed")


class JointHold(Controller):
    """Each joint held where it was at activation by a PD: τ = Kp (q₀ − q) − Kd v (the drives' stiffness,
    as a quadruped stands on its low-level PD)."""

    def on_configure(self):
        self.q0, self.seen = np.zeros(self.n), []

    def on_activate(self):
        self.start = True

    def update(self, state, command):
        q, v = state.q[self.nq - self.n:], state.v[self.nv - self.n:]
        if self.start:
            self.q0[:] = q
            self.start = False
            self.seen.append((state.q.shape, state.v.shape, command.tau.shape, state.contact.names,
                              state.has_tau_external))
        np.subtract(self.q0, q, out=command.tau)
        command.tau *= 80.0
        command.tau -= 2.0 * v


def test_a_users_law_stands_the_go2_through_the_loop():
    law = JointHold()
    run = simulate(config_path("go2"), law, duration=1.0)
    assert run.final_state == "RUNNING" and run.faults == []
    (q_shape, v_shape, tau_shape, feet, has_ext), = law.seen
    assert (q_shape, v_shape, tau_shape) == ((19,), (18,), (12,))
    assert feet == ("FL_foot", "FR_foot", "RL_foot", "RR_foot") and not has_ext
    assert run.q.shape == (1000, 19) and run.tau.shape == (1000, 12)
    height = run.plant_q[6]
    assert abs(height - run.q[0, 6]) < 0.02                      # it stands: the base within 2 cm
    assert run.summary["feet_in_contact"] and run.summary["controller"].endswith("JointHold")


def test_a_users_law_that_raises_is_the_safe_state_with_drive_damping():
    def law(state, command):
        if state.tick > 50:
            raise ValueError("lost")
        command.tau[:] = 0.0
    run = hil.run(config_path("go2"), law, duration=0.2)
    assert run["final_state"] == "FAULT" and "ValueError: lost" in run["faults"][0]["reason"]
    assert run["status"]["exit_command_sent"]
