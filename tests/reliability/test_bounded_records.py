"""Memory bounded by design (issue 15): the safety monitor's fault record and the loop's transitions
keep the first and the last events and per-kind counts, so a run of any length costs the same memory
and its summary still groups every fault by kind."""
from __future__ import annotations

import logging
import tracemalloc

from drivers.run_config import load_config
from hil.lockstep import make_lockstep
from hil.sketch import HeadTail
from hil.telemetry import fault_count, format_summary
from messages.enums import FaultCode, SafetyState
from tests.reliability.inputs import good_config


def test_head_tail_keeps_the_first_and_last_and_counts_every_event():
    h = HeadTail(keep=3)
    for k in range(10):
        h.append(k, "odd" if k % 2 else "even")
    assert list(h) == [0, 1, 2, 7, 8, 9] and len(h) == 6 and h.total == 10 and h.dropped == 4
    assert h.counts == {"even": 5, "odd": 5}
    assert h.lines("faults") == [0, 1, 2, "... 4 more faults ...", 7, 8, 9]
    assert not HeadTail() and HeadTail().lines() == []


def test_50k_faults_cost_the_memory_of_1k_and_the_summary_counts_them_all(tmp_path):
    path = tmp_path / "recover.yaml"
    path.write_text(good_config().split("serial:")[0] + "safety: {recover: true}\n")
    loop, _ = make_lockstep(load_config(path, {"viz": False}))
    logging.getLogger("hil").setLevel(logging.ERROR)        # 100,000 transitions, not as many log lines
    safety = loop.safety
    kinds = [FaultCode.STATUS_TIMEOUT, FaultCode.JOINT_LIMIT]

    def trip(k: int) -> None:           # a fault and its recovery, as a recovering run has them
        loop.tick_index = k
        loop._transition(safety._to(SafetyState.FAULT, kinds[k % 2], f"fault {k}", k), k * 1000)
        loop._transition(safety._to(SafetyState.RUNNING, FaultCode.NONE, "recovered", k), k * 1000)
    try:
        for k in range(1_000):          # past the head: from here on every fault replaces the oldest of the tail
            trip(k)
        tracemalloc.start()
        for k in range(1_000, 2_000):   # what tracing itself first allocates (caches) is not the records'
            trip(k)
        before = tracemalloc.get_traced_memory()[0]
        for k in range(2_000, 12_000):
            trip(k)
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        for k in range(12_000, 50_000):
            trip(k)
    finally:
        tracemalloc.stop()
        logging.getLogger("hil").setLevel(logging.NOTSET)
    assert grown < 16_000, f"{grown} bytes more after 10,000 more faults"    # unbounded: ~3 MB
    assert len(safety.faults_seen) == 2 * safety.faults_seen.keep and len(loop.transitions) <= 400
    s = loop.summary()
    assert fault_count(s) == 50_000 and s["fault_counts"] == {"STATUS_TIMEOUT": 25_000, "JOINT_LIMIT": 25_000}
    assert s["faults"][0]["reason"] == "fault 0" and s["faults"][-1]["reason"] == "fault 49999"
    assert "... 99600 more transitions ..." in s["transitions"] and s["transitions"][-1].startswith("tick 49999:")
    text = format_summary(s)
    assert "STATUS_TIMEOUT ×25000 (first at tick 0: fault 0); JOINT_LIMIT ×25000 (first at tick 1: fault 1)" in text
