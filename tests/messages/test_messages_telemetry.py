"""TelemetryEncoder: byte-identical to the lcm-gen class, allocation-free between text changes."""
import tracemalloc

import numpy as np
import pytest

from messages import lcmt_hil_telemetry
from messages.codec import TelemetryEncoder
from messages.errors import JointCountError, NonFiniteError


def reference(num_joints, name, text, numbers, arrays):
    m = lcmt_hil_telemetry()
    (m.utime, m.tick, m.period_ns, m.compute_ns, m.lateness_ns, m.deadline_misses, m.overruns,
     m.controller_state, m.safety_state, m.fault_code, m.status_utime, m.status_rejected) = numbers
    m.controller_name, m.fault_text, m.num_joints = name, text, num_joints
    m.q, m.v, m.q_desired, m.tau_commanded = (a.tolist() for a in arrays)
    return m.encode()


@pytest.mark.parametrize("text", ["", "joint 3 at -2.1 rad is outside [-2.07, 2.07]", "Ω ünïcode"])
def test_bytes_equal_lcm_gen(text):
    rng = np.random.default_rng(1)
    enc = TelemetryEncoder(7, "computed_torque")
    enc.set_text("computed_torque", text)
    numbers = (123456789, 42, 1_000_000, 8_123, -250, 3, 1, 1, 2, 4, 123000, 7)
    arrays = [rng.normal(size=7) for _ in range(4)]
    assert bytes(enc.encode(*numbers, *arrays)) == reference(7, "computed_torque", text, numbers, arrays)


def test_invalid_arrays_are_rejected_and_counted():
    enc = TelemetryEncoder(3, "pd")
    good, bad = np.zeros(3), np.array([0.0, np.nan, 0.0])
    assert enc.encode(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, good, bad, good, good) is None
    assert isinstance(enc.last_error, NonFiniteError) and "v" in str(enc.last_error)
    assert enc.encode(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, good, good, np.zeros(4), good) is None
    assert isinstance(enc.last_error, JointCountError)
    assert enc.counters["non_finite"] == 1 and enc.counters["joint_count"] == 1


def test_encoding_allocates_nothing():
    enc = TelemetryEncoder(7, "computed_torque")
    arrays = [np.ones(7) for _ in range(4)]

    def tick(k):
        enc.encode(k, k, 1_000_000, 5000, 10, 0, 0, 1, 1, 0, k, 0, *arrays)

    for k in range(100):
        tick(k)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for k in range(5000):
            tick(k)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    line = tick.__code__.co_firstlineno + 1
    grown = [s for s in after.compare_to(before, "lineno") if s.traceback[0].lineno == line
             and s.traceback[0].filename == __file__ and (s.size_diff or s.count_diff)]
    assert grown == []
