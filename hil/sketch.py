"""Fixed-memory records of a run of any length: a streaming histogram of nanosecond durations (35 KB)
and the head and tail of an event stream (HeadTail).

Log-linear bins (HdrHistogram's layout): exact below 128 ns, then 128 bins per power of two, so a
bin [lo, lo + w) has w ≤ lo / 128 and a quantile read from it is within 0.4 % of the true one
(the bin's midpoint). add() is allocation-free (drivers.core._control.hist_add); hand-written rather than the
`hdrhistogram` package, whose record_value allocates Python objects in the tick.
"""
from __future__ import annotations

import math
from collections import deque

import numpy as np

from drivers.core import _control

SUB = 128


def bin_bounds(b: int) -> tuple[int, int]:
    """[lo, hi) of the values in bin b."""
    if b < SUB:
        return b, b + 1
    e = b // SUB - 1
    lo = (b % SUB + SUB) << e
    return lo, lo + (1 << e)


class LogHistogram:
    """Counts of non-negative integer values (negative ones count as 0), the exact max and the count."""

    def __init__(self):
        self.counts = np.zeros(_control.HIST_BINS)
        self.max = 0

    def add(self, value: int) -> None:
        """Counts `value`; allocates nothing (no Python int is made)."""
        _control.hist_add(self.counts, value)
        if value > self.max:
            self.max = value

    @property
    def count(self) -> int:
        return int(self.counts.sum())

    def clear(self) -> None:
        self.counts[:] = 0
        self.max = 0

    def quantile(self, q: float) -> float:
        """The value of rank ⌈q·count⌉ (the midpoint of its bin, at most the exact max); NaN if empty."""
        count = self.count
        if not count:
            return math.nan
        rank = max(1, math.ceil(q * count))
        b = int(np.searchsorted(np.cumsum(self.counts), rank))
        lo, hi = bin_bounds(b)
        return min(float(self.max), lo + (hi - 1 - lo) / 2)

    def percentiles(self, scale: float = 1e-3) -> dict:
        """{"p50", "p99", "p99.9", "max"} × scale (default: ns → µs), rounded to 0.01; {} if empty."""
        if not self.count:
            return {}
        out = {name: round(self.quantile(q) * scale, 2) for name, q in (("p50", 0.5), ("p99", 0.99),
                                                                         ("p99.9", 0.999))}
        out["max"] = round(self.max * scale, 2)
        return out


class HeadTail:
    """A bounded record of a stream of events: the first `keep`, the last `keep`, the count of each kind
    and the total. Fixed memory however long the run (a recovering loop trips ~1,400 times an hour);
    iterating yields the kept events in order (head, then tail)."""

    def __init__(self, keep: int = 200):
        self.keep, self.total = keep, 0
        self.head: list = []
        self.tail: deque = deque(maxlen=keep)
        self.counts: dict[str, int] = {}      # kind -> how many (every event, kept or not)

    def append(self, event, kind: str | None = None) -> None:
        self.total += 1
        if kind is not None:
            self.counts[kind] = self.counts.get(kind, 0) + 1
        (self.head if len(self.head) < self.keep else self.tail).append(event)

    @property
    def dropped(self) -> int:
        """Events between the head and the tail that were counted but not kept."""
        return self.total - len(self.head) - len(self.tail)

    def __iter__(self):
        yield from self.head
        yield from self.tail

    def __len__(self) -> int:
        return len(self.head) + len(self.tail)

    def __bool__(self) -> bool:
        return self.total > 0

    def lines(self, what: str = "events") -> list:
        """The kept events with one '... N more {what} ...' line where some were dropped."""
        gap = [f"... {self.dropped} more {what} ..."] if self.dropped else []
        return [*self.head, *gap, *self.tail]
