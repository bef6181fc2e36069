"""The admittance example against the simulated iiwa, with the stack's pytest fixtures: untouched it
holds; pushed at the wrist it gives way along the push and comes back when the push ends."""
import dataclasses

import numpy as np
import pytest

from drivers.sim.config import SimConfig
from examples.admittance import Admittance

Q0 = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
HOLD = {"trajectory": {"type": "hold"}, "sim": {"initial_positions": Q0}}
needs_pushes = pytest.mark.skipif("pushes" not in {f.name for f in dataclasses.fields(SimConfig)},
                                  reason="needs sim.pushes")


def test_without_a_push_it_holds_and_allocates_nothing(hil_sim, hil_config):
    run = hil_sim(hil_config("iiwa"), Admittance, duration=2.0, overrides=HOLD, check_alloc=True)
    assert run.final_state == "RUNNING" and run.faults == []
    assert run.allocations["ticks"] > 1900         # measured: check_alloc fails the test if update() allocates
    assert np.abs(run.tau_external).max() == 0.0
    assert np.abs(run.q - Q0).max() < 1e-6


@needs_pushes
def test_a_push_moves_the_hand_along_it_and_the_arm_returns(hil_sim, hil_config):
    push = {"body": "iiwa_link_7", "force": [0.0, 20.0, 0.0], "start": 0.5, "duration": 0.5}
    run = hil_sim(hil_config("iiwa"), Admittance, duration=4.0, pushes=[push], overrides=HOLD)
    assert run.final_state == "RUNNING" and run.faults == []
    hand = run.frame_positions() - run.frame_positions()[0]
    pushed = (run.elapsed > 0.51) & (run.elapsed < 1.0)
    # The robot reports the push as external torque, only while it acts.
    assert np.all(np.abs(run.tau_external[pushed]).max(axis=1) > 1.0)
    assert np.abs(run.tau_external[run.elapsed > 1.01]).max() == 0.0
    # The hand gave way along +y by centimetres, little across, then came back to within 0.1 mm.
    end_of_push = hand[np.searchsorted(run.elapsed, 1.0)]
    assert end_of_push[1] > 0.05 and np.abs(end_of_push[[0, 2]]).max() < 0.2 * end_of_push[1], end_of_push
    assert np.abs(hand[-1]).max() < 1e-4 and np.abs(run.q[-1] - Q0).max() < 1e-3
