"""Real-time process setup (hil.process): each setting is applied by the OS and undone on exit."""
import gc
import os

import pytest

from drivers.core.config import LoopConfig
from drivers.core.schema import ConfigError
from hil.process import RealtimeProcess


def vm_locked_kib() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmLck:"):
            return int(line.split()[1])
    return 0


def can(fn) -> bool:
    try:
        fn()
        return True
    except OSError:
        return False


def test_gc_is_off_inside_and_restored_after():
    assert gc.isenabled()
    with RealtimeProcess(LoopConfig()) as p:
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        assert p.applied == ["garbage collector off"]
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with RealtimeProcess(LoopConfig(gc="on")) as p:
        assert gc.isenabled() and p.applied == []


def test_cpu_pinning_applied_and_restored():
    before = os.sched_getaffinity(0)
    cpu = min(before)
    with RealtimeProcess(LoopConfig(cpus=[cpu], gc="on")) as p:
        assert os.sched_getaffinity(0) == {cpu}
        assert p.applied == [f"pinned to CPUs [{cpu}]"]
    assert os.sched_getaffinity(0) == before


def test_a_cpu_the_machine_lacks_is_an_error_naming_the_key():
    with pytest.raises(ConfigError, match=r"loop\.cpus: cannot pin to CPUs \[4095\]"):
        RealtimeProcess(LoopConfig(cpus=[4095])).__enter__()
    assert gc.isenabled()


def test_fifo_priority_applied_and_restored_or_refused_with_the_fix():
    policy = os.sched_getscheduler(0)
    allowed = can(lambda: (os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10)),
                           os.sched_setscheduler(0, policy, os.sched_param(0))))
    cfg = LoopConfig(priority=10, gc="on")
    if not allowed:
        with pytest.raises(ConfigError, match=r"loop\.priority: SCHED_FIFO priority 10 refused.*ulimit -r"):
            RealtimeProcess(cfg).__enter__()
    else:
        with RealtimeProcess(cfg) as p:
            assert os.sched_getscheduler(0) == os.SCHED_FIFO and os.sched_getparam(0).sched_priority == 10
            assert p.applied == ["SCHED_FIFO priority 10"]
    assert os.sched_getscheduler(0) == policy


def test_locked_memory_applied_and_released():
    before = vm_locked_kib()
    try:
        with RealtimeProcess(LoopConfig(lock_memory=True, gc="on")) as p:
            assert vm_locked_kib() > before + 1024      # the interpreter, numpy and the extensions: many MiB
            assert p.applied == ["memory locked"]
    except ConfigError as e:                           # no CAP_IPC_LOCK and a small memlock limit
        assert "loop.lock_memory: mlockall failed" in str(e) and "ulimit -l" in str(e)
        return
    assert vm_locked_kib() == before


def test_a_failure_part_way_undoes_what_was_applied():
    before = os.sched_getaffinity(0)
    with pytest.raises(ConfigError):
        # pinning succeeds, then the priority is out of range for the OS (validation is skipped here)
        RealtimeProcess(LoopConfig(cpus=[min(before)], priority=1000)).__enter__()
    assert os.sched_getaffinity(0) == before and gc.isenabled()
