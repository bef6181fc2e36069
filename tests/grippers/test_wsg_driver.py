"""The WSG 50 driver model against drake-schunk-driver's documented behaviour (drivers/grippers/wsg.py),
driven over memq:// with kinematic fingers."""
import math

import pytest

from drivers.grippers import WsgDriverConfig, WsgDriverModel
from messages import errors
from messages.drake import lcmt_schunk_wsg_command
from tests.grippers.conftest import Bench, Fingers

EPOCH_US = 1_700_000_000_000_000


def _bench(memq, part=None, **config):
    model = WsgDriverModel(WsgDriverConfig(**config), utime_offset_us=EPOCH_US, lc=memq)
    return Bench(model, Fingers(0.110, part), memq)


def test_one_status_per_50ms_task_in_mm_with_the_host_clock(memq):
    bench = _bench(memq)
    bench.run(1.0)
    times = [t for t, _ in bench.statuses]
    assert times == [k * 50_000_000 for k in range(20)]
    assert [s.utime for _, s in bench.statuses] == [EPOCH_US + t // 1000 for t in times]
    assert {s.actual_position_mm for _, s in bench.statuses} == {110.0}     # mm: calibration leaves it open


def test_before_any_command_the_gripper_stays_open_and_reports_negative_zero_force(memq):
    """lcm_command_{} asks for 0 mm at 0 N, which SetPositionAndForce's tests never send."""
    bench = _bench(memq)
    bench.run(0.5)
    assert bench.model.recommands == 0 and bench.model.target[0] == pytest.approx(0.110)
    status = bench.statuses[-1][1]
    assert (status.actual_position_mm, status.actual_speed_mm_per_s) == (110.0, 0.0)
    assert math.copysign(1.0, status.actual_force) == -1.0          # speed ≤ 0: −force


def test_command_is_taken_at_the_next_task_and_run_at_the_maximum_speed(memq):
    bench = _bench(memq)
    bench.run(0.010)
    bench.command(20.0, 40.0)
    bench.run(0.040)
    assert bench.fingers.width == 0.110                     # the task at 50 ms takes it
    # Preposition at 420 mm/s and 5000 mm/s² from the 50 ms task: 90 mm take d/v + v/a (the task
    # re-sends it every 50 ms, the measured force being outside the deadband: the same motion).
    arrival = 0.050 + 0.090 / 0.420 + 0.420 / 5.0
    bench.run(arrival - 0.050 - 0.001)
    assert 0.020 < bench.fingers.width < 0.0201
    bench.run(0.6 - arrival)
    model = bench.model
    assert model.executing_target_mm == 20.0 and model.force_limit == 40.0
    assert bench.fingers.width == pytest.approx(0.020)
    moving = [s for t, s in bench.statuses if 0.05e9 < t < 0.30e9]
    assert moving and all(s.actual_speed_mm_per_s < 0 for s in moving)          # closing: negative
    assert min(s.actual_speed_mm_per_s for s in moving) == pytest.approx(-420.0)
    assert all(s.actual_force == 0.0 for s in moving)                            # free motion: no force
    assert bench.statuses[-1][1].actual_position_mm == pytest.approx(20.0)
    assert model.grasp_state == "idle"


def test_a_blocking_part_is_clamped_with_the_force_limit_and_reported_negative(memq):
    bench = _bench(memq, part=0.050)
    bench.command(20.0, 40.0)
    bench.run(0.6)
    model = bench.model
    status = bench.statuses[-1][1]
    assert status.actual_position_mm == pytest.approx(50.0) and status.actual_speed_mm_per_s == 0.0
    assert status.actual_force == -40.0          # held at the limit; speed 0 gives the negative sign
    assert model.grasp_state == "holding" and model.target[2] == 40.0
    assert model.target[0] == pytest.approx(0.020)     # the setpoint went on to the target: clamping


def test_force_is_clamped_to_the_overdrive_force_and_a_force_below_the_minimum_is_refused(memq):
    bench = _bench(memq, part=0.070)
    bench.command(60.0, -100.0)                        # fabs, then at most the overdrive force
    bench.run(0.3)
    assert bench.model.force_limit == 80.0 and bench.statuses[-1][1].actual_force == -80.0
    bench.command(100.0, 2.0)                          # re-commanded; 2 N < the minimum force: refused
    bench.run(0.3)
    assert bench.model.executing_target_mm == 100.0 and bench.model.force_limit == 80.0
    assert bench.fingers.width == pytest.approx(0.100)


def test_target_is_clamped_to_the_stroke_and_a_negative_width_is_refused(memq):
    bench = _bench(memq)
    bench.command(50.0, 40.0)
    bench.run(0.4)
    bench.command(200.0, 40.0)
    bench.run(0.4)
    assert bench.model.executing_target_mm == 110.0 and bench.fingers.width == pytest.approx(0.110)
    bench.command(-5.0, 40.0)                          # Preposition out of range: no motion
    bench.run(0.4)
    assert bench.model.executing_target_mm == -5.0 and bench.fingers.width == pytest.approx(0.110)


def test_within_the_force_deadband_and_without_a_reversal_nothing_is_sent(memq):
    bench = _bench(memq, part=0.050)
    bench.command(60.0, 3.0)               # |3 − 0| ≤ 5 N and no reversal (executing target 0 mm)
    bench.run(0.3)
    assert bench.model.recommands == 0 and bench.fingers.width == pytest.approx(0.110)
    bench.command(20.0, 40.0)
    bench.run(0.5)                         # now holding the part at 40 N
    count = bench.model.recommands
    bench.command(30.0, 43.0)              # same side, |43 − 40| ≤ 5: left alone
    bench.run(0.3)
    assert bench.model.recommands == count and bench.model.executing_target_mm == 20.0
    bench.command(30.0, 60.0)              # |60 − 40| > 5: re-commanded with the new force
    bench.run(0.3)
    assert bench.model.executing_target_mm == 30.0 and bench.model.force_limit == 60.0
    assert bench.statuses[-1][1].actual_force == -60.0
    bench.command(100.0, 60.0)             # a reversal: the fingers open from where they are
    bench.run(0.4)
    assert bench.fingers.width == pytest.approx(0.100) and bench.model.grasp_state == "idle"


def test_when_commands_stop_the_last_one_is_kept_for_ever(memq):
    bench = _bench(memq)
    bench.command(20.0, 40.0)
    bench.run(2.0)
    assert len(bench.statuses) == 40 and bench.statuses[-1][1].actual_position_mm == pytest.approx(20.0)
    # Moving freely the measured force (0) is outside the deadband of 40 N: re-sent every task.
    assert bench.model.recommands >= 5
    assert bench.model.command_values == (20.0, 40.0)


def test_only_the_newest_command_between_tasks_is_acted_on(memq):
    bench = _bench(memq)
    bench.run(0.01)
    for width in (10.0, 30.0, 70.0):
        bench.command(width, 40.0)
    bench.run(0.6)
    assert bench.model.recommands >= 1 and bench.model.executing_target_mm == 70.0
    assert bench.fingers.width == pytest.approx(0.070)


def test_malformed_commands_are_dropped_with_a_clear_error(memq):
    bench = _bench(memq)
    bench.command(20.0, 40.0)
    bench.run(0.1)
    good = lcmt_schunk_wsg_command()
    good.target_position_mm, good.force = 80.0, 40.0
    bench.send(good.encode()[:-3])                              # truncated: LCM drops it
    bench.run(0.05)
    assert bench.model.commands_rejected == 1 and isinstance(bench.model.last_error, errors.TruncatedError)
    assert "force" in str(bench.model.last_error) and "truncated" in str(bench.model.last_error)
    assert bench.model.command_values == (20.0, 40.0)
    good.target_position_mm = math.nan      # a NaN reaches the driver's handler; the gripper refuses it
    bench.send(good.encode())
    bench.run(0.5)
    assert isinstance(bench.model.last_error, errors.NonFiniteError)
    assert "target_position_mm is nan" in str(bench.model.last_error)
    assert math.isnan(bench.model.executing_target_mm)
    assert bench.fingers.width == pytest.approx(0.020)     # the executing Preposition ran on


def test_the_same_command_stream_gives_the_same_status_bytes(memq):
    def run():
        import lcm
        lc = lcm.LCM("memq://")
        bench = _bench(lc, part=0.040)
        bench.command(20.0, 40.0)
        bench.run(0.5)
        bench.command(100.0, 20.0)
        bench.run(0.5)
        return [s.encode() for _, s in bench.statuses]
    assert run() == run()


@pytest.mark.parametrize("speed, sign", [(0.05, 1.0), (-0.05, -1.0), (0.0, -1.0)])
def test_the_force_takes_the_sign_of_the_speed_opening_positive_else_negative(memq, speed, sign):
    """Task(): the gripper's force is a magnitude; the status gives it the speed's sign, speed > 0 (opening)
    positive and otherwise negative, a gripper at rest included."""
    bench = _bench(memq)
    bench.model.update(0, 0.060, speed, 30.0)
    memq.handle_timeout(0)
    (_, status), = bench.statuses
    assert status.actual_speed_mm_per_s == pytest.approx(speed * 1000.0)
    assert status.actual_force == sign * 30.0
