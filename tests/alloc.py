"""Allocation checks shared by the tests of allocation-free code (tracemalloc)."""
import itertools
import tracemalloc


def traced_snapshots(fn, calls: int, warmup: int = 0, frames: int = 1) -> tuple:
    """(before, after): tracemalloc snapshots around `calls` calls of fn(), taken with `frames` frames
    per trace after `warmup` calls under tracing (so objects they leave live are traced ones)."""
    tracemalloc.start(frames)
    try:
        for _ in range(warmup):
            fn()
        before = tracemalloc.take_snapshot()
        for _ in range(calls):
            fn()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    return before, after


def net_and_peak(fn, calls: int = 1000) -> tuple:
    """((net, peak) bytes of `calls` calls of fn(), (net, peak) of the measurement around no call):
    equal when fn allocates nothing, not even transiently."""
    def traced(n):
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        for _ in itertools.repeat(None, n):
            fn()
        current, peak = tracemalloc.get_traced_memory()
        return current - start, peak - start

    tracemalloc.start()
    try:
        frame = traced(0)
        return traced(calls), frame
    finally:
        tracemalloc.stop()
