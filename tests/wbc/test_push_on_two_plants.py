"""Our simulated plant and MuJoCo (sim.engine: mujoco) agree on the largest lateral push the
whole-body controller recovers from, standing, within PUSH_TOL: the Go2 and the G1 at the plants'
defaults (rubber feet on a floor, μ 0.8), by hil.legged_scenario.largest_push_recovered to 1 N·s
(benchmarks/bench_push_recovery.py measures it to 0.5 N·s: Go2 15.0 on ours and 16.5 on MuJoCo, G1
8.0 and 9.5)."""
import pytest

from drivers.sim.config import load_sim_config
from dynamics_cy.planning.legged_models import example_robot_data_root
from hil.legged_scenario import largest_push_recovered

pytestmark = pytest.mark.skipif(example_robot_data_root() is None, reason="example-robot-data is not installed")
pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'hilstack[mujoco]')")

PUSH_TOL = 0.25          # |P_mujoco − P_ours| ≤ PUSH_TOL · P_ours (measured: Go2 0.10, G1 0.19)


@pytest.mark.parametrize("name", ["go2", "g1"])
def test_both_plants_recover_the_same_push_within_the_tolerance(name):
    ours, failed, _ = largest_push_recovered(name, load_sim_config({}), resolution=1.0)
    theirs, _, _ = largest_push_recovered(name, load_sim_config({"engine": "mujoco"}), resolution=1.0)
    assert 4.0 <= ours < failed <= 64.0           # a push it recovers, and one it does not
    assert abs(theirs - ours) <= PUSH_TOL * ours, (ours, theirs)
