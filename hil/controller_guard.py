"""Guard rails around a control law at 1 kHz: its time per tick apart from the loop's, a budget whose
consecutive overruns become a fault, the traceback of a law that raised (logged once), and an
optional allocation probe (tracemalloc) that reports what the law's update allocates per tick and
on which of the law's lines.

The loop calls `guard.call(update, state, command)` each RUNNING tick. The timing is the law's alone
(time.perf_counter_ns around the call); a tick over the budget is an overrun, and `overrun_limit`
overruns in a row are a CONTROLLER fault when `fault_on_overrun` (real time; in lockstep the time of
a tick is not real time, so overruns are counted and the run stays deterministic). Isolated overruns
(a stalled VM, a page fault) do not fault.
"""
from __future__ import annotations

import linecache
import logging
import os
import sys
import sysconfig
import traceback
import tracemalloc
from pathlib import Path
from time import perf_counter_ns

from drivers.core._control import hist_add

from .controller_api import ControllerFault
from .sketch import LogHistogram

log = logging.getLogger(__name__)

WARMUP_TICKS = 10          # ticks the allocation probe ignores (first-call caches)
NOISE_B = 16               # bytes a traced line may vary by without allocating (the tracer's own readings)
LOCATE_TICKS = 3           # ticks after an allocating one traced line by line (more, up to 20, until a line shows)


class AllocationProbe:
    """tracemalloc around each update: the bytes it allocated at peak (freed within the tick or not)
    and those it kept, less the probe's own (measured at start on a law that does nothing, through
    the same calls); and where: the tick after an allocating one runs under a LineTracer (that tick
    is not measured), which names the law's lines that allocated. Slows every allocation of the
    process while on: for a check run, never the robot."""

    def __init__(self, frames: int = 8):
        self.frames = frames
        self.per_tick = LogHistogram()     # peak bytes above the start of the call, per tick
        self.ticks = self.allocating = 0
        self.max_bytes = self.kept_bytes = 0
        self.sites: list[str] = []
        self.lines: dict[tuple, list] = {}      # (file, line, function): bytes at its peak on each traced tick
        self.located = 0                        # ticks traced line by line
        self._tracer, self._locate_next = LineTracer(_laws_code), False
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
                    frame = next((f for f in reversed(stat.traceback) if _laws_file(f.filename)),   # the law's
                                 stat.traceback[0])
                    code = linecache.getline(frame.filename, frame.lineno).strip()
                    self.sites.append(f"{_shown(frame.filename)}:{frame.lineno}: +{stat.size_diff} B in "
                                      f"{stat.count_diff} blocks: {code}")
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
                self._tracer.calibrate(state, command)
                self._before = tracemalloc.take_snapshot()
            return
        if self._locate_next:
            self._locate_next = False
            self.located += 1
            for site, size in self._tracer.run(update, state, command).items():
                self.lines.setdefault(site, []).append(size)
            return
        used, kept = self._measure(update, state, command)
        self.ticks += 1
        self.per_tick.add(used)
        if used > 0:
            self.allocating += 1
            self.max_bytes = max(self.max_bytes, used)
            self._locate_next = self.located < LOCATE_TICKS or (not self.lines and self.located < 20)
        self.kept_bytes += kept

    def report(self) -> dict:
        """whether the law allocates, ticks measured, ticks that allocated, bytes per tick (median, max),
        the law's lines that allocated (the most bytes first, at most 8), bytes kept over the run and
        where the kept ones were allocated (the top lines; known once stopped)."""
        median = self.per_tick.quantile(0.5) if self.ticks else 0.0
        # allocates: on more than 1% of the ticks (a stray allocation of another thread in a measured
        # window, e.g. a test runner's watchdog, is no finding), or keeps memory
        allocates = self.allocating > max(1, self.ticks // 100) or self.kept_bytes > 4096
        return {"allocates": allocates, "ticks": self.ticks, "allocating_ticks": self.allocating,
                "median_bytes": median,
                "max_bytes": self.max_bytes, "allocating_lines": self._lines(), "kept_bytes": self.kept_bytes,
                "kept_sites": list(self.sites)}

    def _lines(self) -> list[str]:
        """'mylaws.py:21 (update): 168 B: e = state.q_d - state.q', the most bytes first: the lines that
        allocated on at least half the traced ticks (a stray allocation shows on one), their median."""
        sizes = {site: sorted(s + [0] * (self.located - len(s)))[self.located // 2] for site, s in self.lines.items()}
        top = sorted(((site, size) for site, size in sizes.items() if size > 0), key=lambda item: -item[1])[:8]
        return [f"{_shown(file)}:{line} ({function}): {size} B: {linecache.getline(file, line).strip()}"
                for (file, line, function), size in top]


class LineTracer:
    """One call under sys.settrace: the bytes each line of the traced files allocated at its peak
    (tracemalloc's peak, reset at every line), by (file, line, function), less the tracer's own: its
    readings (`line_noise`), and the frame object the interpreter makes for each Python call it
    hands the tracer (its size, while alive, and `call_noise`). The other frames (numpy's, the
    stack's) are not traced: what they allocate counts to the traced line that called them."""

    def __init__(self, traced):
        self.traced = traced                 # code object -> bool
        self.line_noise = self.call_noise = 0
        self.sites: dict[tuple, int] = {}
        self.where, self.base, self.calls, self.alive, self.frames = None, 0, 0, 0, 0

    def calibrate(self, state, command) -> None:
        """The tracer's own bytes per line and per line that calls, on lines that allocate nothing (the
        median of 7 runs: a stray allocation of the interpreter's shows in one now and then)."""
        probe, lines, calls = LineTracer(lambda code: code is _calibration.__code__), [], []
        call_line = _calibration.__code__.co_firstlineno + 3
        for _ in range(7):
            sites = probe.run(_calibration, state, command)
            lines.append(max(b for (_, line, _), b in sites.items() if line != call_line))
            calls.append(sites.get((__file__, call_line, "_calibration"), 0))
        self.line_noise, self.call_noise = sorted(lines)[3] + NOISE_B, sorted(calls)[3] + NOISE_B

    def run(self, update, state, command) -> dict[tuple, int]:
        """update(state, command), traced: {(file, line, function): bytes} of the lines that allocated."""
        self.sites, self.where, self.calls, self.alive, self.frames = {}, None, 0, 0, 0
        previous = sys.gettrace()           # (a debugger's or coverage's, put back)
        tracemalloc.reset_peak()
        self.base = tracemalloc.get_traced_memory()[0]
        sys.settrace(self._call)
        try:
            update(state, command)
        finally:
            sys.settrace(previous)
            self._close()
        return self.sites

    def _call(self, frame, event, arg):
        self.calls += 1
        self.alive += sys.getsizeof(frame)  # the frame object made to hand to the tracer, alive until it returns
        self.frames = max(self.frames, self.alive)
        if not self.traced(frame.f_code):
            return self._untraced
        self._close()
        self.where = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        return self._local

    def _untraced(self, frame, event, arg):
        if event == "return":
            self.alive = max(self.alive - sys.getsizeof(frame), 0)
        return self._untraced

    def _local(self, frame, event, arg):
        if event == "line":
            self._close()
            self.where = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        elif event == "return":
            self._close()
            caller = frame.f_back
            self.where = None if caller is None or not self.traced(caller.f_code) else \
                (caller.f_code.co_filename, caller.f_lineno, caller.f_code.co_name)
        return self._local

    def _close(self) -> None:
        """The line that ran since the last event: its peak above where it started, less the tracer's."""
        noise = self.call_noise + self.frames if self.calls else self.line_noise
        size = tracemalloc.get_traced_memory()[1] - self.base - noise
        if self.where is not None and size > self.sites.get(self.where, 0):
            self.sites[self.where] = size
        self.calls = self.alive = self.frames = 0
        tracemalloc.reset_peak()
        self.base = tracemalloc.get_traced_memory()[0]


def _nothing(state, command) -> None:
    pass


def _calibration(state, command) -> None:          # lines that allocate nothing: LineTracer.calibrate
    a = state
    a = command
    _calling(a, state)                             # (its call_line: the third)
    del a


def _calling(state, command) -> None:             # Python calls, as a law's line makes (State's checks)
    a = state
    _nothing(a, command)


_ROOT = Path(__file__).resolve().parents[1]
_LIBRARIES = tuple({str(Path(sysconfig.get_paths()[k]).resolve()) + os.sep
                    for k in ("stdlib", "platstdlib", "purelib", "platlib")} |
                   {str(_ROOT / package) + os.sep for package in ("dynamics_cy", "drivers", "messages")})
_FILES: dict[str, bool] = {}


def _laws_code(code) -> bool:
    return _laws_file(code.co_filename)


def _laws_file(filename: str) -> bool:
    """Whether a file holds a law's code (the user's, a built-in's), not numpy's, Python's or the stack's."""
    traced = _FILES.get(filename)
    if traced is None:
        path = os.path.realpath(filename)
        traced = _FILES[filename] = not filename.startswith("<") and path not in _CALLERS and (
            path.startswith(str(_ROOT / "hil") + os.sep) or not path.startswith(_LIBRARIES))
    return traced


def _shown(file: str) -> str:
    """A path as the user knows it: relative to the current directory when under it."""
    try:
        return os.path.relpath(file) if os.path.realpath(file).startswith(os.getcwd() + os.sep) else file
    except ValueError:
        return file


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
