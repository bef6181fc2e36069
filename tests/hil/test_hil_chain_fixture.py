"""The fixtures' runs behind a driver chain in processes of its own (hil.chain): a user's law on the
Dynamixel arm behind `hil servo-bus` and simulated XM430s on a pty, from pytest as a user runs it."""
import time

import numpy as np
import pytest

from hil import Controller
from hil.testing import config_path, simulate

HOLD = {"trajectory": {"type": "hold"}}


class GravityPD(Controller):
    """τ = Kp (q_d − q) − Kd v − τ_g: a user's law holding the arm where it starts."""

    def on_configure(self):
        self.tau_g = np.zeros(self.n)

    def update(self, state, command):
        self.kernels.gravity(state.q, self.tau_g)
        np.subtract(state.q_d, state.q, out=command.tau)
        command.tau *= 2.0
        command.tau -= 0.05 * state.v
        command.tau -= self.tau_g


def test_a_users_law_holds_the_dynamixel_arm_behind_the_servo_bus():
    run = simulate(config_path("dxl_arm"), GravityPD, duration=1.0, overrides=HOLD)
    assert run.final_state == "RUNNING" and run.faults == [], run.transitions
    assert run.summary["controller"].endswith("GravityPD")
    assert set(run.summary["servo"]) == {"device", "driver"}          # the chain's processes ran and ended
    assert len(run.t) >= 400 and np.all(np.diff(run.t) > 0)             # its own clock: one status per tick
    assert np.abs(run.q - run.q[0]).max() < 0.05                        # held: within 3 degrees
    assert np.array_equal(run.plant_q, run.q[-1])                       # (the plant is the device's: measured)


def test_a_driver_that_starts_late_finds_the_arm_where_it_was_left(monkeypatch):
    """`hil servo-bus` starting 4 s after the simulated servos (a loaded machine: the unpowered arm falls
    to the shoulder's 2.0 rad limit in 3 s): the arm rests until the driver's first instruction, the
    driver holds it from its connect, and the run starts where the config says, with no fault."""
    from hil import chain
    spawn = chain._spawn

    def late(command, config, duration):
        if command == "servo-bus":
            time.sleep(4.0)
        return spawn(command, config, duration)

    monkeypatch.setattr(chain, "_spawn", late)
    run = simulate(config_path("dxl_arm"), GravityPD, duration=0.5, overrides=HOLD)
    assert run.final_state == "RUNNING" and run.faults == [], run.transitions
    assert np.abs(run.q[0] - [0.0, 0.4, 0.8]).max() < 0.3                 # near sim.initial_positions


def test_a_driver_stand_in_is_refused_for_a_chain():
    with pytest.raises(ValueError, match="servo chain"):
        simulate(config_path("dxl_arm"), GravityPD, duration=0.1, driver="kuka_driver", overrides=HOLD)


def test_hil_run_and_the_allocation_check_go_behind_the_chain():
    """hil.run and hil.check_allocations of a servo config run the same chain as the fixtures; the check
    finds GravityPD's temporary (`0.05 * state.v` allocates an array each tick)."""
    import hil
    summary = hil.run(config_path("dxl_arm"), GravityPD, duration=0.3, overrides=HOLD)
    assert summary["final_state"] == "RUNNING" and set(summary["servo"]) == {"device", "driver"}
    report = hil.check_allocations(config_path("dxl_arm"), GravityPD, duration=0.3, overrides=HOLD)
    assert report["ticks"] > 100 and report["allocates"] and report["allocating_ticks"] == report["ticks"], report
    assert report["median_bytes"] >= 3 * 8
