"""Guard rails around a control law at 1 kHz: its time per tick apart from the loop's, a budget whose
consecutive overruns become a fault, the traceback of a law that raised (logged once), and an
optional allocation probe (tracemalloc) that reports what the law's update allocates per tick.

The loop calls `guard.call(update, state, command)` each RUNNING tick. The timing is the law's alone
(time.perf_counter_ns around the call); a tick over the budget is an overrun, and `overrun_limit`
overruns in a row are a CONTROLLER fault when `fault_on_overrun` (real time; in lockstep the time of
a tick is not real time, so overruns are counted and the run stays deterministic). Isolated overruns
(a stalled VM, a page fault) do not fault.
"""
from __future__ import annotations

import logging
import traceback
import tracemalloc
from pathlib import Path
from time import perf_counter_ns

from drivers.core._control import hist_add

from .controller_api import ControllerFault
from .sketch import LogHistogram

log = logging.getLogger(__name__)

WARMUP_TICKS = 10          # ticks the allocation probe ignores (first-call caches)


class AllocationProbe:
    """tracemalloc around each update: the bytes it allocated at peak (freed within the tick or not)
    and those it kept, less the probe's own (measured at start on a law that does nothing, through
    the same calls). Slows every allocation of the process while on: for a check run, never the robot."""

    def __init__(self, frames: int = 8):
        self.frames = frames
        self.per_tick = LogHistogram()     # peak bytes above the start of the call, per tick
        self.ticks = self.allocating = 0
        self.max_bytes = self.kept_bytes = 0
        self.sites: list[str] = []
        self._seen = 0
        self._own = (0, 0)
        self._own_samples: list[tuple[int, int]] = []
        self._started_here = False
        self._before = None

    def start(self) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start(self.frames)
            self._started_here = True

    def stop(self) -> None:
        """Notes where the kept bytes were allocated (a snapshot diff), then stops tracing."""
        if self._before is not None and tracemalloc.is_tracing() and self.kept_bytes:
            loop = str(Path(__file__).resolve().parent)                # the loop's own lines are not the law's
            inside = [tracemalloc.Filter(True, __file__, all_frames=True),      # allocated under update
                      tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, f"{loop}/*")]
            after = tracemalloc.take_snapshot().filter_traces(inside)
            for stat in after.compare_to(self._before.filter_traces(inside), "traceback")[:3]:
                if stat.size_diff > 0:
                    frame = next((f for f in reversed(stat.traceback) if f.filename != __file__),
                                 stat.traceback[0])
                    self.sites.append(f"{frame.filename}:{frame.lineno}: +{stat.size_diff} B in "
                                      f"{stat.count_diff} blocks")
        self._before = None
        if self._started_here:
            tracemalloc.stop()
            self._started_here = False

    def _measure(self, update, state, command) -> tuple[int, int]:
        """(peak bytes above the start, bytes kept) of one call, less the probe's own."""
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        update(state, command)
        current, peak = tracemalloc.get_traced_memory()
        return max(peak - start - self._own[0], 0), max(current - start - self._own[1], 0)

    def call(self, update, state, command) -> None:
        """The first WARMUP_TICKS calls: the probe's own share, measured on a law that does nothing at
        the same call site, and update unmeasured (its first-call caches); then update, measured."""
        self._seen += 1
        if self._seen <= WARMUP_TICKS:
            own = self._measure(_nothing, state, command)
            self._own_samples.append(own)
            update(state, command)
            if self._seen == WARMUP_TICKS:
                self._own = (min(p for p, _ in self._own_samples), min(k for _, k in self._own_samples))
                self._before = tracemalloc.take_snapshot()
            return
        used, kept = self._measure(update, state, command)
        self.ticks += 1
        self.per_tick.add(used)
        if used > 0:
            self.allocating += 1
            self.max_bytes = max(self.max_bytes, used)
        self.kept_bytes += kept

    def report(self) -> dict:
        """whether the law allocates, ticks measured, ticks that allocated, bytes per tick (median, max),
        bytes kept over the run and where the kept ones were allocated (the top lines; known once stopped)."""
        median = self.per_tick.quantile(0.5) if self.ticks else 0.0
        # allocates: on more than 1% of the ticks (a stray allocation of another thread in a measured
        # window, e.g. a test runner's watchdog, is no finding), or keeps memory
        allocates = self.allocating > max(1, self.ticks // 100) or self.kept_bytes > 4096
        return {"allocates": allocates, "ticks": self.ticks, "allocating_ticks": self.allocating,
                "median_bytes": median,
                "max_bytes": self.max_bytes, "kept_bytes": self.kept_bytes, "kept_sites": list(self.sites)}


def _nothing(state, command) -> None:
    pass


# The stack's frames around a law's (the loop's tick, this guard, the lifecycle's hooks, State's and
# Command's checks, a function law's wrapper): no part of the law's traceback.
_CALLERS = {str(Path(__file__).resolve().parent / f"{name}.py")
            for name in ("loop", "controller_guard", "lifecycle", "controller_api")}


def law_traceback(error: BaseException) -> str:
    """The traceback of an exception a law raised, the law's frames only (all kept if none is the law's)."""
    te = traceback.TracebackException.from_exception(error)
    frames = [f for f in te.stack if str(Path(f.filename).resolve()) not in _CALLERS]
    te.stack = traceback.StackSummary.from_list(frames or list(te.stack))
    return "".join(te.format()).rstrip()


class ControllerGuard:
    """The law's timing, overruns and failures; `alloc`: an AllocationProbe or None (then `call` goes
    through it)."""

    def __init__(self, budget_ns: int, overrun_limit: int, fault_on_overrun: bool, check_alloc: bool = False):
        self.budget_ns, self.overrun_limit, self.fault_on_overrun = budget_ns, overrun_limit, fault_on_overrun
        self.time = LogHistogram()
        self._counts = self.time.counts
        self.last_ns = self.overruns = self.in_a_row = 0
        self.error: str | None = None      # the first exception's traceback
        self.errors = 0
        self.alloc = AllocationProbe() if check_alloc else None
        if self.alloc is not None:
            self._update_through = self.alloc.call
            self.call = self._call_probed

    def call(self, update, state, command) -> str | None:
        """update(state, command), timed; the reason to fault when the overruns in a row reach the limit.
        (On the tick's path, written flat: each Python call here shows in the loop benchmark.)"""
        start = perf_counter_ns()
        update(state, command)
        self.last_ns = elapsed = perf_counter_ns() - start
        hist_add(self._counts, elapsed)
        if elapsed <= self.budget_ns:
            self.in_a_row = 0
            return None
        return self._overrun(elapsed)

    def _call_probed(self, update, state, command) -> str | None:
        start = perf_counter_ns()
        self._update_through(update, state, command)
        self.last_ns = elapsed = perf_counter_ns() - start
        hist_add(self._counts, elapsed)
        return None if elapsed <= self.budget_ns else self._overrun(elapsed)

    def _overrun(self, elapsed: int) -> str | None:
        self.overruns += 1
        self.in_a_row += 1
        if self.fault_on_overrun and self.in_a_row >= self.overrun_limit:
            return (f"over budget: update() took more than {self.budget_ns / 1e3:g} µs (controller.budget_us) "
                    f"on {self.in_a_row} ticks in a row (controller.overrun_limit), the last {elapsed / 1e3:.0f} µs")
        return None

    def _exact_max(self) -> int:
        """The largest time recorded, from the histogram (its bin's upper bound: the tick's path keeps
        no exact max)."""
        from .sketch import bin_bounds
        nonzero = self._counts.nonzero()[0]
        return bin_bounds(int(nonzero[-1]))[1] - 1 if nonzero.size else 0

    def failed(self, error: BaseException) -> None:
        """A law that raised: its traceback logged (the first time) and kept for the summary; a
        ControllerFault (the law stopping the robot on purpose) as one line."""
        self.errors += 1
        if self.error is None and isinstance(error, ControllerFault):
            self.error = str(error)
            log.warning("the controller faulted: %s; the loop goes to its safe state", error)
        elif self.error is None:
            self.error = law_traceback(error)
            log.error("the controller raised; the loop goes to its safe state:\n%s", self.error)

    def summary(self) -> dict:
        """update()'s time per tick, its budget and overruns, the errors and the first one's traceback
        (`error`), the allocation report when probed."""
        self.time.max = self._exact_max()
        out = {"update_us": self.time.percentiles(), "budget_us": self.budget_ns / 1e3,
               "overruns": self.overruns, "errors": self.errors}
        if self.error is not None:
            out["error"] = self.error
        if self.alloc is not None:
            out["allocations"] = self.alloc.report()
        return out
