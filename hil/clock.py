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

    def start(self) -> int:
        self.t = self.next = 0
        return 0

    def now_ns(self) -> int:
        return self.t

    def wait(self) -> tuple[int, int]:
        self.t, self.next = self.next, self.next + self.period_ns
        return self.t, 0
