"""The loop's tick statistics in fixed memory: a streaming log-linear histogram whose quantiles are
within a bin (≤ 1/128) of numpy's exact ones, and a plot trace that decimates instead of growing."""
from __future__ import annotations

import numpy as np
import pytest

from drivers.core import _control
from hil.sketch import HeadTail, LogHistogram, bin_bounds
from hil.telemetry import TickRecorder


def test_every_value_lands_in_a_bin_that_holds_it_and_is_at_most_1_128_wide():
    rng = np.random.default_rng(0)
    values = np.concatenate([np.arange(0, 2000), rng.integers(0, 2 ** 41, 20000), 2 ** np.arange(0, 41),
                             2 ** np.arange(1, 41) - 1])
    for v in values.tolist():
        lo, hi = bin_bounds(_control.hist_bin(v))
        assert lo <= v < hi and (hi - lo) <= max(1, lo / 128), v
    assert _control.hist_bin(-5) == 0 and _control.hist_bin(2 ** 50) == _control.HIST_BINS - 1


@pytest.mark.parametrize("seed", [0, 1])
def test_quantiles_agree_with_numpy_within_a_bin(seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.lognormal(10, 1.2, 50_000), rng.integers(0, 300, 2000)]).astype(np.int64)
    h = LogHistogram()
    for v in x.tolist():
        h.add(v)
    assert h.count == x.size and h.max == x.max()
    for q in (0.5, 0.9, 0.99, 0.999):
        exact = np.quantile(x, q, method="inverted_cdf")
        assert abs(h.quantile(q) - exact) <= max(0.5, exact / 256 + 0.5), q
    p = h.percentiles()
    assert p["max"] == round(x.max() / 1e3, 2) and p["p50"] == round(h.quantile(0.5) / 1e3, 2)


def test_the_recorder_costs_the_same_memory_for_any_run_length():
    n = 7
    rec = TickRecorder(n, 1_000_000, 200_000, trace_rows=1000)
    arrays = [a for a in vars(rec).values() if isinstance(a, np.ndarray)] + \
        [rec.compute.counts, rec.lateness.counts]
    nbytes = sum(a.nbytes for a in arrays)
    q, q_d, tau = np.zeros(n), np.full(n, 0.1), np.ones(n)
    rng = np.random.default_rng(1)
    compute = rng.integers(1_000, 50_000, 20_000)
    for k in range(20_000):
        rec.record(k * 1_000_000, 100 + k % 300, int(compute[k]))
        rec.trace(k * 1e-3, q, q_d, tau)
    after = [a for a in vars(rec).values() if isinstance(a, np.ndarray)] + [rec.compute.counts, rec.lateness.counts]
    assert sum(a.nbytes for a in after) == nbytes and all(a is b for a, b in zip(arrays, after))
    assert rec.trace_every == 32 and 500 <= rec.trace_rows <= 1000             # 20,000 ticks in ≤ 1,000 rows
    t = rec.trace_t[:rec.trace_rows]
    assert np.all(np.diff(t) > 0) and t[-1] > 19.0                              # still covers the whole run
    s = rec.summary(type("Safety", (), {"saturated_ticks": 0, "state": type("S", (), {"name": "RUNNING"}),
                                        "faults_seen": HeadTail()})())
    assert s["ticks"] == 20_000
    assert abs(s["compute_us"]["p50"] - np.median(compute) / 1e3) <= np.median(compute) / 1e3 / 100
    assert s["compute_us"]["max"] == round(compute.max() / 1e3, 2)
