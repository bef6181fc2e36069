"""The status period the loop learns (drivers.core.clock.StatusClock) from statuses whose arrival and wall-clock
stamps jitter: franka_driver stamps utime with its host's wall clock when it publishes, so a stall of
the host bunches the stamps; its robot_utime (libfranka's robot time) steps 1 ms regardless.
Deterministic: the arrival times and stamps are given."""
import numpy as np
import pytest

from drivers.core.clock import StatusClock

EPOCH_US = 1_700_000_000_000_000


def stalled_stamps(n: int, period_us: int, stall_at: int, stall_us: int, rng) -> np.ndarray:
    """Host stamps of n statuses of a `period_us` driver: ±30 % jitter, and a stall of the host at
    status `stall_at` after which the statuses it missed go out 5 µs apart (a burst)."""
    ideal = np.arange(n) * period_us
    stamps = ideal + rng.uniform(-0.3, 0.3, n) * period_us
    late = (ideal >= stall_at * period_us) & (ideal < stall_at * period_us + stall_us)
    burst = np.flatnonzero(late)
    stamps[burst] = stall_at * period_us + stall_us + 5 * np.arange(len(burst))
    return EPOCH_US + np.maximum.accumulate(stamps).astype(np.int64)


@pytest.mark.parametrize("stall_at", [0, 3, 10])
def test_franka_the_period_comes_from_robot_utime_however_the_wall_clock_stamps_bunch(stall_at):
    """1 ms, exactly, with a 20 ms stall and its burst anywhere in the learning window (from the
    wall-clock stamps, the mean of their first 16 positive steps, `hil run` learned 0.25 to 1.8 ms
    over UDP)."""
    rng = np.random.default_rng(stall_at)
    wall = stalled_stamps(100, 1000, stall_at, 20_000, rng)
    clock = StatusClock()
    for k, utime in enumerate(wall):
        clock.update(int(utime), int(utime) * 1000 + 50_000, steady_us=(k + 1) * 1000)
    assert clock.learned and clock.period_ns == 1_000_000
    # without robot_utime and without a stall: the median of the jittered wall-clock steps
    clock = StatusClock()
    for utime in stalled_stamps(100, 1000, 0, 0, rng):
        clock.update(int(utime), int(utime) * 1000)
    assert clock.learned and clock.period_ns == pytest.approx(1_000_000, rel=0.15)


def test_utime_steps_median_ignores_a_stall_and_a_burst():
    """kuka_driver's utime (the FRI timestamp on the host clock): a 30 ms gap and two steps of 10 µs in
    the window do not move the learned 5 ms."""
    steps = [5000] * 13 + [30_000, 10, 10]
    utime, clock = EPOCH_US, StatusClock()
    clock.update(utime, 0)
    for k, du in enumerate(steps):
        utime += du
        clock.update(utime, (utime - EPOCH_US) * 1000)
    assert clock.learned and clock.period_ns == 5_000_000


def test_kuka_arrivals_while_utime_is_minus_one_then_the_utime_steps_take_over():
    """While utime is −1 the period is the mean arrival interval (a burst after a stall averages out);
    once utime comes it is relearned from utime's steps, and the robot's clock does not jump."""
    rng = np.random.default_rng(1)
    arrivals = stalled_stamps(300, 5000, 4, 30_000, rng) - EPOCH_US        # local µs
    clock = StatusClock()
    t = []
    for k, local_us in enumerate(arrivals):
        utime = -1 if k < 199 else EPOCH_US + k * 5000                       # synchronised at the 200th
        t.append(clock.update(int(utime), int(local_us) * 1000))
        if k == 20:
            assert clock.learned and clock.period_ns == pytest.approx(5_000_000, rel=0.05)
    assert clock.learned and clock.period_ns == 5_000_000
    assert clock.jumps == 1
    assert 0 < t[199] - t[198] < 10_000_000 and np.all(np.diff(t[199:]) == 5_000_000)


def test_two_status_streams_are_told_from_a_restarted_driver():
    """A driver restarted sends its clock back once; two simulators on one channel (one 0.3 s ahead of the
    other) send it back on every other status: `interleaved`, with the step that showed it."""
    restart = StatusClock()
    for k, utime in enumerate([*range(5_000_000, 5_200_000, 1000), *range(0, 200_000, 1000)]):
        restart.update(utime, k * 1_000_000)
    assert not restart.interleaved
    mixed = StatusClock()
    for k in range(6):
        mixed.update(300_000 * (k % 2) + 1000 * k, k * 500_000)
    assert mixed.interleaved and (mixed.back_utime, mixed.back_from) == (4000, 303_000)
