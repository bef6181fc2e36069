"""Allocation checks shared by the tests of allocation-free code (tracemalloc)."""
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
