"""What the benchmark scripts share for timing (imported as `timing`: the scripts' folder is on
sys.path when they run): the median time of one call. Their command line and results files are
record.py's."""
from __future__ import annotations

import time

import numpy as np


def median_us(fn, calls: int, batches: int, warmup: int = 0) -> float:
    """Median over `batches` batches of `calls` calls of the time of one call, in µs (after `warmup`
    calls)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(batches):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter_ns() - t0) / calls / 1e3)
    return float(np.median(samples))
