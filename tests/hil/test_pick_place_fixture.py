"""The pick-and-place station through the pytest fixtures (hil.pytest_plugin, hil.testing): hil_config's
"iiwa_wsg" (configs/station/iiwa_wsg.yaml) run by hil_sim with its own law; the run's gripper column (the
status the law saw) and the box's final position on the simulated plant."""
import numpy as np

TARGET = np.array([0.55, 0.20, 0.125])


def test_the_station_picks_and_places_through_the_fixtures(hil_sim, hil_config):
    run = hil_sim(hil_config("iiwa_wsg"), duration=11.0)
    assert run.final_state == "RUNNING" and run.faults == []
    assert np.linalg.norm(run.object_position("box") - TARGET) < 0.01
    width = run.gripper[:, 0]
    carry = (run.elapsed > 6.2) & (run.elapsed < 8.0)
    assert np.nanmax(width[run.elapsed < 4.0]) > 0.099                    # open to 100 mm over the box
    assert np.allclose(width[carry], 0.05, atol=1e-3)                      # closed on the 5 cm box
    assert np.all(run.gripper[carry, 2] > 30.0)                             # clamping at about its 40 N
    assert width[-1] > 0.099                                               # opened again after the place
