"""Clocks that pace the loop and the simulator: the wall clock (hybrid sleep-then-spin) or lockstep.

Both hand out integer nanoseconds; `wait()` returns (tick start, lateness) where lateness is how far
after its scheduled time the tick started.
"""
from __future__ import annotations

import time


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
    the status period learned from the arrivals.

    update(utime_us, local_ns) on each new status returns t_ns = utime·1000 + offset. The offset is 0
    until the clock breaks: while utime is −1 (kuka_driver's "clocks not synchronised yet") t advances
    by the local arrival interval Δlocal, and when utime comes back, or jumps against Δlocal by more
    than `jump_ns` (a switch of clock, e.g. −1 → the host's wall clock), the offset is set so that t
    advances by Δlocal there. period_ns is the status period: the mean positive Δutime over the first
    `learn` consecutive valid utimes (the driver's own clock: a burst of arrivals does not fool it),
    else, while utime is −1, the mean arrival interval (t_last − t_first)/(k − 1) (None before 4
    statuses). Hand-written: it runs in the tick, allocation-free.
    """

    def __init__(self, learn: int = 16, jump_ns: int = 1_000_000_000):
        self.learn, self.jump_ns = learn, jump_ns
        self.t_ns = self.offset_ns = 0
        self.count = 0
        self.last_utime = -1
        self.first_local = self.last_local = 0
        self.period_ns: int | None = None
        self.jumps = 0                      # clock breaks bridged with the local clock
        self.du_sum = self.du_count = 0     # positive utime steps, µs, over the learning window

    def update(self, utime: int, local_ns: int) -> int:
        local = local_ns - self.last_local
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
            if utime > self.last_utime and self.du_count < self.learn:
                self.du_sum += utime - self.last_utime
                self.du_count += 1
        if self.count == 0:
            self.first_local = local_ns
        self.count += 1
        if self.du_count >= 3:
            self.period_ns = self.du_sum * 1000 // self.du_count
        elif 4 <= self.count <= self.learn and local_ns > self.first_local:
            self.period_ns = (local_ns - self.first_local) // (self.count - 1)
        self.last_utime, self.last_local = utime, local_ns
        return self.t_ns

    @property
    def learned(self) -> bool:
        """Whether the period is measured over the whole learning window (of utime steps, or of
        arrivals while utime is −1)."""
        return self.du_count >= self.learn or (self.du_count < 3 and self.count >= self.learn)
