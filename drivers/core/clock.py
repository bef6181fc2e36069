"""Clocks that pace the loop and the simulator: the wall clock (hybrid sleep-then-spin) or lockstep.

Both hand out integer nanoseconds; `wait()` returns (tick start, lateness) where lateness is how far
after its scheduled time the tick started.
"""
from __future__ import annotations

import time

import numpy as np


class RealTimeClock:
    """Ticks at t0 + k·period on time.monotonic_ns: sleeps until `spin_ns` before the deadline, then
    spins. A tick later than `max_catch_up` periods re-phases the schedule (`resyncs`, and the ticks
    it drops are counted in `skipped`); a shorter delay is caught up with back-to-back ticks. The
    control loop re-phases after one period (a stale tick is worthless); a simulator catches up, to
    keep simulated time with the wall clock."""

    def __init__(self, period_ns: int, spin_ns: int, max_catch_up: int = 1):
        self.period_ns, self.spin_ns, self.max_catch_up = period_ns, spin_ns, max(1, max_catch_up)
        self.t0 = self.deadline = 0
        self.skipped = self.resyncs = self.late = 0
        self.max_lateness = 0

    def start(self) -> int:
        self.t0 = self.deadline = time.monotonic_ns()
        return self.t0

    def now_ns(self) -> int:
        return time.monotonic_ns()

    def wait(self) -> tuple[int, int]:
        deadline = self.deadline
        remaining = deadline - time.monotonic_ns()
        if remaining > self.spin_ns:
            time.sleep((remaining - self.spin_ns) * 1e-9)
        now = time.monotonic_ns()
        while now < deadline:
            now = time.monotonic_ns()
        late = now - deadline
        if late > self.max_lateness:
            self.max_lateness = late
        if late > self.period_ns:
            self.late += 1
        if late > self.max_catch_up * self.period_ns:
            missed = late // self.period_ns
            self.skipped += missed
            self.resyncs += 1
            self.deadline = deadline + (missed + 1) * self.period_ns
        else:
            self.deadline = deadline + self.period_ns
        return now, late


class LockstepClock:
    """Simulated time: each tick is exactly one period after the previous; nothing waits. now_ns() is
    the start of the current tick."""

    def __init__(self, period_ns: int):
        self.period_ns = period_ns
        self.t = self.next = 0
        self.skipped = 0
        self.started = False

    def start(self) -> int:
        """Time 0 on the first call; later calls keep the time (a run after a lead-in of ticks)."""
        if not self.started:
            self.t = self.next = 0
            self.started = True
        return self.t

    def now_ns(self) -> int:
        return self.t

    def wait(self) -> tuple[int, int]:
        self.t, self.next = self.next, self.next + self.period_ns
        return self.t, 0


class StatusClock:
    """The robot's clock read from its statuses' utime, continuous where a real driver's is not, and
    the status period learned from the statuses.

    update(utime_us, local_ns, steady_us) on each new status returns t_ns = utime·1000 + offset. The
    offset is 0 until the clock breaks: while utime is −1 (kuka_driver's "clocks not synchronised
    yet") t advances by the local arrival interval Δlocal, and when utime comes back, or jumps
    against Δlocal by more than `jump_ns` (a switch of clock, e.g. −1 → the host's wall clock), the
    offset is set so that t advances by Δlocal there.

    period_ns is the status period: the median of the first `learn` positive steps of the robot's
    steadiest clock, `steady_us` where the status carries one that advances (franka_driver's
    robot_utime, libfranka's robot time: its utime is the host's wall clock at publishing, whose
    steps jitter with the host's scheduling and bunch after a stall), else utime (kuka_driver: the
    FRI timestamp shifted onto the host clock by a slow filter); while utime is −1, the mean arrival
    interval (t_last − t_first)/(k − 1) over `learn` arrivals (a burst of arrivals after a stall
    averages out; None before 4). A steadier clock appearing restarts the learning. The median
    ignores a minority of outliers (a stall, a burst) in the window. Hand-written: it runs in the
    tick; it allocates only while learning (the first `learn` statuses of each source).

    `interleaved` turns True when utime goes back twice within INTERLEAVED statuses: two status
    streams on one channel (two robots or simulators publishing), which no one driver's clock does
    (a restart goes back once); `back_utime`, `back_from`: the utime and the one before it, the last time.
    """

    INTERLEAVED = 100

    ARRIVALS, UTIME, STEADY = 0, 1, 2       # period sources, steadiest last

    def __init__(self, learn: int = 16, jump_ns: int = 1_000_000_000):
        self.learn, self.jump_ns = learn, jump_ns
        self.t_ns = self.offset_ns = 0
        self.count = 0
        self.last_utime = self.last_steady = -1
        self.first_local = self.last_local = 0
        self.period_ns: int | None = None
        self.jumps = 0                      # clock breaks bridged with the local clock
        self.source = self.ARRIVALS         # the clock the period is learned from
        self.steps = np.zeros(learn, dtype=np.int64)    # its positive steps, µs
        self.n_steps = 0
        self.interleaved = False
        self.back_utime = self.back_from = 0
        self._back_at = -self.INTERLEAVED - 1   # the status count at which utime last went back

    def update(self, utime: int, local_ns: int, steady_us: int = -1) -> int:
        local = local_ns - self.last_local
        steady_step = steady_us - self.last_steady if steady_us > 0 and self.last_steady > 0 else 0
        utime_step = 0
        if utime < 0:
            if self.count:
                self.t_ns += local
        elif self.count == 0:
            self.t_ns = utime * 1000
        elif self.last_utime < 0 or abs((utime - self.last_utime) * 1000 - local) > self.jump_ns:
            self.t_ns += local
            self.offset_ns = self.t_ns - utime * 1000
            self.jumps += 1
        else:
            self.t_ns = utime * 1000 + self.offset_ns
            utime_step = utime - self.last_utime
        if self.count == 0:
            self.first_local = local_ns
        self.count += 1
        if 0 <= utime < self.last_utime:
            self.interleaved |= self.count - self._back_at <= self.INTERLEAVED
            self.back_utime, self.back_from, self._back_at = utime, self.last_utime, self.count
        if steady_step > 0:
            self._learn(self.STEADY, steady_step)
        elif utime_step > 0 and self.source <= self.UTIME:
            self._learn(self.UTIME, utime_step)
        elif self.source == self.ARRIVALS and 4 <= self.count <= self.learn and local_ns > self.first_local:
            self.period_ns = (local_ns - self.first_local) // (self.count - 1)
        self.last_utime, self.last_local = utime, local_ns
        self.last_steady = steady_us
        return self.t_ns

    def _learn(self, source: int, step_us: int) -> None:
        if source > self.source:
            self.source, self.n_steps = source, 0
        elif self.n_steps >= self.learn:
            return                          # learned
        self.steps[self.n_steps] = step_us
        self.n_steps += 1
        if self.n_steps >= 3:
            self.period_ns = int(np.median(self.steps[:self.n_steps]) * 1000)

    @property
    def learned(self) -> bool:
        """Whether the period is measured over the whole learning window (of clock steps, or of
        arrivals while utime is −1)."""
        return self.n_steps >= self.learn or (self.source == self.ARRIVALS and self.count >= self.learn)
