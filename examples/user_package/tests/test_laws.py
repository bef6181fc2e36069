"""The law against the stack's simulated iiwa, with the fixtures of the installed stack's pytest plugin."""
from pathlib import Path

import numpy as np
from hil_example_laws.laws import JointSpring

from hil import Command, State

CONFIG = Path(__file__).resolve().parent.parent / "robot.yaml"
GOAL = [0.3, 0.8, -0.2, -1.0, 0.2, 0.6, 0.3]


def test_the_config_runs_the_law_it_names_to_the_goal(hil_sim):
    run = hil_sim(CONFIG, duration=3.0, check_alloc=True)
    assert run.summary["controller"] == "hil_example_laws.laws:JointSpring"
    assert run.final_state == "RUNNING" and run.faults == []
    assert np.abs(run.q - run.q_d).max() < 0.02             # a spring lags its trajectory a little
    assert np.abs(run.q[-1] - GOAL).max() < 2e-3


def test_a_softer_spring_lags_more(hil_sim):
    stiff, soft = (hil_sim(CONFIG, JointSpring({"stiffness": [k], "damping": [0.3]}), duration=2.0)
                   for k in (200.0, 50.0))
    assert np.abs(soft.q - soft.q_d).max() > 2 * np.abs(stiff.q - stiff.q_d).max()


def test_it_holds_the_shipped_iiwa_where_it_starts(hil_sim, hil_config):
    q0 = [0.2, 0.5, -0.1, -1.3, 0.1, 0.7, 0.0]
    run = hil_sim(hil_config("iiwa"), JointSpring, duration=1.0,
                  overrides={"trajectory": {"type": "hold"}, "sim": {"initial_positions": q0}})
    assert run.final_state == "RUNNING" and np.abs(run.q - q0).max() < 1e-6


def test_update_alone_on_a_state_built_by_hand():
    """A unit test of update(), no simulation: at rest on q_d the law is gravity compensation alone."""
    from drivers.core.paths import DEFAULT_ROBOT
    from dynamics_cy import MultibodyPlant, Parser

    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(DEFAULT_ROBOT))
    plant.Finalize()
    law = JointSpring({"stiffness": [50.0]}).bind(plant, period=1e-3).configure()
    q, command, tau_g = np.array([0.1, 0.5, 0.0, -1.0, 0.0, 0.6, 0.0]), Command(7), np.zeros(7)
    law.update(State.of(7, q=q, q_d=q), command)
    plant.kernels().gravity(q, tau_g)
    np.testing.assert_allclose(command.tau, -tau_g)
