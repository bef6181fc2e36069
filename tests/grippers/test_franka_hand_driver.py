"""The Franka hand driver model against franka_hand_driver.cc's documented behaviour
(drivers/grippers/franka_hand.py), driven over memq:// with kinematic fingers."""
import pytest

from drivers.grippers import FrankaHandDriverConfig, FrankaHandDriverModel
from messages import errors
from tests.grippers.conftest import Bench, Fingers

EPOCH_US = 1_600_000_000_000_000


def _bench(memq, part=None, width=0.08, **config):
    model = FrankaHandDriverModel(FrankaHandDriverConfig(**config), utime_offset_us=EPOCH_US, lc=memq,
                                  initial_width=width)
    return Bench(model, Fingers(width, part), memq)


def _homed(memq, **kwargs):
    bench = _bench(memq, **kwargs)
    while not bench.statuses:
        bench.run(0.001)
    return bench


def test_homing_comes_first_then_one_status_per_100ms(memq):
    bench = _bench(memq, width=0.05)
    # Homing closes (0.05 m) then opens (0.08 m) at 0.1 m/s and 1 m/s² (d/v + v/a each: 0.6 s and
    # 0.9 s), publishing nothing meanwhile.
    bench.run(0.6)
    closed = bench.fingers.width
    bench.run(0.89)
    assert bench.statuses == [] and bench.model.operation == "homing"
    bench.run(0.42)
    times = [t for t, _ in bench.statuses]
    assert times[0] == pytest.approx(1.5e9, abs=2e6) and len(times) == 5
    assert [b - a for a, b in zip(times, times[1:])] == [100_000_000] * 4
    first = bench.statuses[0][1]
    assert first.actual_position_mm == pytest.approx(80.0, abs=0.01) and first.utime == EPOCH_US + times[0] // 1000
    assert closed == pytest.approx(0.0, abs=1e-5) and bench.model.operation is None


def test_status_reports_no_force_and_a_fake_5mm_per_s_while_an_operation_runs(memq):
    bench = _homed(memq, part=0.05)
    start = bench.t_ns
    bench.command(20.0, 40.0)
    bench.run(1.0)
    statuses = bench.since(start)
    assert all(s.actual_force == 0.0 for s in statuses)
    speeds = [s.actual_speed_mm_per_s for s in statuses]
    assert speeds[0] == 0.0 and 5.0 in speeds and speeds[-1] == 0.0
    assert set(speeds) == {0.0, 5.0}


def test_narrower_grasps_with_the_force_and_keeps_holding(memq):
    bench = _homed(memq, part=0.05)
    bench.command(20.0, 40.0)
    bench.run(1.0)
    model = bench.model
    assert model.operation is None and model.holding and model.target[2] == 40.0
    assert bench.fingers.width == pytest.approx(0.05) and bench.fingers.force == 40.0
    assert model.target[0] == pytest.approx(0.02)          # pressing towards the target
    assert bench.statuses[-1][1].actual_position_mm == pytest.approx(50.0)


def test_wider_moves_with_the_hands_move_force(memq):
    bench = _homed(memq, width=0.03)
    bench.command(20.0, 30.0)
    bench.run(0.6)
    bench.command(70.0, 30.0)
    bench.run(0.8)
    model = bench.model
    assert model.operation is None and not model.holding and model.target[2] == model.limits.move_force
    assert bench.fingers.width == pytest.approx(0.07)


def test_grasp_speed_is_the_flag_within_the_hands_maximum(memq):
    bench = _homed(memq)
    start = bench.t_ns
    bench.command(30.0, 20.0)
    bench.run(1.0)
    assert bench.model.speed == 0.1
    # From 80 mm to 30 mm at 0.1 m/s and 1 m/s²: 0.05/0.1 + 0.1/1 = 0.6 s after the cycle took it.
    t_cycle = next(t for t, _ in bench.statuses if t > start)
    assert bench.model.profile.end == pytest.approx(t_cycle * 1e-9 + 0.6)


def test_the_same_command_is_ignored_and_the_next_cycle_starts_at_once(memq):
    bench = _homed(memq)
    bench.command(60.0, 20.0)
    bench.run(0.5)
    last = bench.model.last_command
    count = len(bench.statuses)
    bench.command(60.0, 20.0)
    bench.run(0.1)
    times = [t for t, _ in bench.statuses[count:]]
    assert len(times) == 2 and times[0] == times[1]          # the extra status at the same time
    assert bench.model.last_command == last and bench.model.operation is None


def test_width_is_clamped_into_0_to_max_width(memq):
    bench = _homed(memq, width=0.03)
    bench.command(120.0, 20.0)
    bench.run(0.8)
    assert bench.fingers.width == pytest.approx(0.08)
    bench.command(-10.0, 20.0)
    bench.run(1.2)
    assert bench.fingers.width == pytest.approx(0.0) and bench.model.profile.target == 0.0


def test_a_command_at_the_current_width_does_nothing_and_is_not_remembered(memq):
    bench = _homed(memq)
    bench.command(80.0, 20.0)
    bench.run(0.3)
    assert bench.model.last_command is None and bench.model.operation is None
    count = len(bench.statuses)
    bench.command(80.0, 20.0)                 # not "the same command": no extra status
    bench.run(0.1)
    assert len(bench.statuses) == count + 1


def test_a_new_command_stops_the_running_operation(memq):
    bench = _homed(memq)
    bench.command(20.0, 20.0)
    bench.run(0.2)
    assert bench.model.operation == "grasp"
    width = bench.fingers.width
    bench.command(79.0, 20.0)
    bench.run(0.1)
    assert bench.model.operation == "move" and bench.model.profile.target == pytest.approx(0.079)
    assert bench.fingers.width >= width - 0.011            # stopped, then reversed


def test_lcm_queue_keeps_five_commands_and_the_last_of_them_wins(memq):
    bench = _homed(memq)
    for width in (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0):
        bench.command(width, 20.0)
    bench.run(0.1)
    assert bench.model.last_command == (50.0, 20.0)


def test_status_only_neither_homes_nor_listens(memq):
    bench = _bench(memq, width=0.04, control_mode="status_only")
    bench.command(70.0, 20.0)
    bench.run(0.35)
    assert [t for t, _ in bench.statuses] == [0, 100_000_000, 200_000_000, 300_000_000]
    assert bench.model.commands_received == 0 and bench.fingers.width == 0.04


def test_move_only_moves_instead_of_grasping(memq):
    bench = _homed(memq, move_only=True)
    bench.command(30.0, 40.0)
    bench.run(1.0)
    assert bench.model.force_limit == bench.model.limits.move_force and not bench.model.holding
    assert bench.fingers.width == pytest.approx(0.03)


def test_malformed_commands_are_dropped_with_a_clear_error(memq):
    bench = _homed(memq)
    bench.send(b"\x00" * 24)
    bench.run(0.2)
    assert bench.model.commands_rejected == 1 and isinstance(bench.model.last_error, errors.FingerprintError)
    assert "lcmt_schunk_wsg_command" in str(bench.model.last_error)
    assert bench.model.operation is None and bench.fingers.width == 0.08


def test_period_must_be_positive():
    with pytest.raises(ValueError, match="control_loop_period_ms"):
        FrankaHandDriverModel(FrankaHandDriverConfig(control_loop_period_ms=0))
