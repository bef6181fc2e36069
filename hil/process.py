"""Process setup for a real-time loop, from the `loop` section: CPU pinning (`cpus`), SCHED_FIFO
priority (`priority`), locked memory (`lock_memory`) and the garbage collector (`gc: off`).

Everything is undone on exit. A setting the OS refuses is an error at start that names the key and
the fix: a loop that silently runs without the real-time guarantees its user asked for is worse than
one that does not start.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import gc
import os

from drivers.core.schema import ConfigError

MCL_CURRENT, MCL_FUTURE = 1, 2


def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def check_cpus(cpus) -> None:
    """loop.cpus names CPUs this process may run on (a ConfigError otherwise), checked when the config
    is loaded: before `hil demo` starts the robot's processes or a loop waits for its first status."""
    if cpus:
        allowed = os.sched_getaffinity(0)
        missing = sorted(set(cpus) - allowed)
        if missing:
            raise ConfigError("loop.cpus", f"CPUs {missing} are not available to this process; it may run on "
                                           f"{sorted(allowed)}")


class RealtimeProcess:
    """Context manager applying a LoopConfig's process settings; `applied` lists what is in effect."""

    def __init__(self, loop_cfg):
        self.cfg = loop_cfg
        self.applied: list[str] = []
        self._affinity = self._policy = self._param = None
        self._locked = self._gc_frozen = self._gc_was_enabled = False

    def __enter__(self) -> "RealtimeProcess":
        try:
            self._apply()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _apply(self) -> None:
        c = self.cfg
        if c.cpus:
            self._affinity = os.sched_getaffinity(0)
            try:
                os.sched_setaffinity(0, c.cpus)
            except OSError as e:
                raise ConfigError("loop.cpus", f"cannot pin to CPUs {c.cpus} ({e.strerror}); this machine has "
                                  f"{sorted(self._affinity)}") from None
            self.applied.append(f"pinned to CPUs {sorted(c.cpus)}")
        if c.priority:
            self._policy, self._param = os.sched_getscheduler(0), os.sched_getparam(0)
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(c.priority))
            except OSError as e:
                self._policy = None
                fix = ("run as root, give the interpreter CAP_SYS_NICE, or raise the rtprio limit (ulimit -r, "
                       "/etc/security/limits.conf)") if e.errno == errno.EPERM else e.strerror
                raise ConfigError("loop.priority", f"SCHED_FIFO priority {c.priority} refused: {fix}") from None
            self.applied.append(f"SCHED_FIFO priority {c.priority}")
        if c.lock_memory:
            libc = _libc()
            if libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0:
                err = ctypes.get_errno()
                hint = "raise the memlock limit (ulimit -l) or give the interpreter CAP_IPC_LOCK" \
                    if err in (errno.EPERM, errno.ENOMEM) else os.strerror(err)
                raise ConfigError("loop.lock_memory", f"mlockall failed ({os.strerror(err)}): {hint}")
            self._locked = True
            self.applied.append("memory locked")
        if c.gc == "off":
            self._gc_was_enabled = gc.isenabled()
            gc.collect()
            gc.freeze()             # everything alive now is never scanned again
            self._gc_frozen = True
            gc.disable()
            self.applied.append("garbage collector off")

    def __exit__(self, *exc) -> None:
        if self._gc_frozen:
            gc.unfreeze()
            self._gc_frozen = False
        if self._gc_was_enabled:
            gc.enable()
            self._gc_was_enabled = False
        if self._locked:
            _libc().munlockall()
            self._locked = False
        if self._policy is not None:
            os.sched_setscheduler(0, self._policy, self._param)
            self._policy = None
        if self._affinity is not None:
            os.sched_setaffinity(0, self._affinity)
            self._affinity = None
