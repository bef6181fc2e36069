"""What the benchmark scripts share (imported as `timing`: the scripts' folder is on sys.path when
they run): the median time of one call, and the command line of a script."""
from __future__ import annotations

import argparse
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


def script_parser(doc: str | None) -> argparse.ArgumentParser:
    """The argument parser of a benchmark script: its module docstring as the description."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
