"""The operational-space example against the simulated iiwa, with the stack's pytest fixtures: the hand
goes straight to its goal as the critically damped spring a* makes it; the posture task brings the
joints back in the null space."""
import numpy as np

from examples.operational_space import OperationalSpace

Q0 = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
HOLD = {"trajectory": {"type": "hold"}, "sim": {"initial_positions": Q0}}


def test_the_hand_goes_straight_to_the_goal_allocation_free(hil_sim, hil_config):
    goal = np.array([0.5, 0.2, 0.6])
    run = hil_sim(hil_config("iiwa"), OperationalSpace({"goal": goal.tolist()}), duration=4.0, overrides=HOLD,
                  check_alloc=True)
    assert run.final_state == "RUNNING" and run.faults == []
    assert run.allocations["ticks"] > 3900         # measured: check_alloc fails the test if update() allocates
    hand = run.frame_positions()
    distance = np.linalg.norm(goal - hand[0])
    way = (goal - hand[0]) / distance
    along = (hand - hand[0]) @ way
    across = np.linalg.norm(hand - hand[0] - np.outer(along, way), axis=1)
    w = 3.0                                   # √kp: p̈ = kp (G − p) − 2 w ṗ from rest
    spring = distance * (1 - (1 + w * run.elapsed) * np.exp(-w * run.elapsed))
    assert across.max() < 1e-3 and np.abs(along - spring).max() < 1e-3
    assert np.linalg.norm(hand[-1] - goal) < 1e-4


def test_the_posture_task_returns_the_joints_the_hand_does_not_need(hil_sim, hil_config):
    """Joints set moving at the start, the hand told to stay (no goal): the task brings the hand back,
    and the posture task, in the null space, the joints to q_d."""
    moving = {**HOLD["sim"], "initial_velocities": [0.3, -0.2, 0.4, 0.2, -0.3, 0.3, 0.5], "brakes": False}
    run = hil_sim(hil_config("iiwa"), OperationalSpace, duration=4.0, overrides={**HOLD, "sim": moving})
    assert run.final_state == "RUNNING" and run.faults == []
    hand = run.frame_positions()
    assert np.abs(run.q[:100] - Q0).max() > 0.02                 # it moved
    assert np.abs(run.q[-1] - Q0).max() < 1e-3
    assert np.linalg.norm(hand[-1] - hand[0]) < 1e-4
