"""Our simulated plant and MuJoCo (sim.engine: mujoco) agree on the lateral push the whole-body
controller recovers from, standing, at the plants' defaults (rubber feet on a floor, μ 0.8): the
Go2's largest within PUSH_TOL (hil.legged_scenario.largest_push_recovered to 1 N·s;
benchmarks/bench_push_recovery.py measures it to 0.5 N·s: 15.0 on ours, 16.5 on MuJoCo), the G1's
documented push on both."""
import pytest

from drivers.sim.config import load_sim_config
from dynamics_cy.planning.legged_models import example_robot_data_root
from hil.legged_scenario import largest_push_recovered, push_recovered

pytestmark = pytest.mark.skipif(example_robot_data_root() is None, reason="example-robot-data is not installed")
pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'hilstack[mujoco]')")

PUSH_TOL = 0.25          # |P_mujoco − P_ours| ≤ PUSH_TOL · P_ours (measured: 0.10)


def test_both_plants_recover_the_same_push_within_the_tolerance():
    """The Go2: the largest push recovered, to 1 N·s, on each plant at its defaults."""
    ours, failed, _ = largest_push_recovered("go2", load_sim_config({}), resolution=1.0)
    theirs, _, _ = largest_push_recovered("go2", load_sim_config({"engine": "mujoco"}), resolution=1.0)
    assert 4.0 <= ours < failed <= 64.0           # a push it recovers, and one it does not
    assert abs(theirs - ours) <= PUSH_TOL * ours, (ours, theirs)


def test_the_g1_recovers_its_documented_push_on_both_plants_and_neither_survives_twice_the_largest():
    """The G1's largest recovered push is not a sharp threshold: every failure is its right ankle's roll
    joint reaching its limit (the QP does not model joint limits), whose peak crosses the limit or not
    with round-off (between 5 and 8 N·s on our plant, 9.5 to 10 on MuJoCo: not monotonic in the push).
    So on both plants: the documented 5 N·s (legged_g1_push) is recovered and 20 N·s is not."""
    for engine in ("hilstack", "mujoco"):
        sim = load_sim_config({"engine": engine})
        assert push_recovered("g1", 5.0, sim) and not push_recovered("g1", 20.0, sim), engine
