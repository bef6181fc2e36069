"""The operational-space example against the simulated iiwa, with the stack's pytest fixtures: the
hand follows its minimum-jerk path to the goal; the posture task brings the joints back in the null
space."""
import numpy as np

from examples.operational_space import OperationalSpace

Q0 = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
HOLD = {"trajectory": {"type": "hold"}, "sim": {"initial_positions": Q0}}


def minimum_jerk(p0, goal, t, duration):
    x = np.clip(t / duration, 0.0, 1.0)[:, None]
    return p0 + (goal - p0) * x ** 3 * (10 - 15 * x + 6 * x ** 2)


def test_the_hand_follows_its_path_to_the_goal_allocation_free(hil_sim, hil_config):
    goal = np.array([0.5, 0.2, 0.6])
    law = OperationalSpace({"goal": goal.tolist(), "duration": 2.0})
    run = hil_sim(hil_config("iiwa"), law, duration=3.0, overrides=HOLD, check_alloc=True)
    assert run.final_state == "RUNNING" and run.faults == []
    assert run.allocations["allocating_ticks"] == 0
    hand = run.frame_positions()
    path = minimum_jerk(hand[0], goal, run.elapsed, 2.0)
    assert np.linalg.norm(hand - path, axis=1).max() < 2e-3
    assert np.linalg.norm(hand[-1] - goal) < 2e-4


def test_the_posture_task_returns_the_joints_the_hand_does_not_need(hil_sim, hil_config):
    """Joints set moving at the start, the hand told to stay: the task brings the hand back, and the
    posture task (in the null space) the joints to q_d."""
    start = {**HOLD["sim"], "initial_velocities": [0.3, -0.2, 0.4, 0.2, -0.3, 0.3, 0.5], "brakes": False}
    hand0 = np.array([0.6916, 0.0, 0.5078])          # the hand at Q0
    run = hil_sim(hil_config("iiwa"), OperationalSpace({"goal": hand0.tolist()}), duration=3.0,
                  overrides={**HOLD, "sim": start})
    assert run.final_state == "RUNNING" and run.faults == []
    assert np.abs(run.q[:50] - Q0).max() > 0.02           # it moved
    assert np.abs(run.q[-1] - Q0).max() < 1e-3
    assert np.linalg.norm(run.frame_positions()[-1] - hand0) < 1e-3
