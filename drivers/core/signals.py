"""Stop on a signal: the one way a command or a driver's run() turns SIGINT (Ctrl-C) and SIGTERM (what
`hil demo`, a test or systemd send) into a flag its loop polls, so that it stops on its own exit path
(a loop's safe command, a driver's torque off) instead of being cut short by a KeyboardInterrupt or
killed.

    with stop_on_signals() as stop:
        while not stop.is_set():
            ...
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterable, Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopFlag:
    """Set once a stop was asked for: threading.Event's set, is_set and wait, on a reentrant lock.

    A Python signal handler runs in the main thread between two bytecodes, possibly while that thread
    is inside wait() or set() holding the flag's lock: with threading.Event's plain lock, the
    handler's set() would then wait for that lock forever."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.RLock())
        self._flag = False

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        with self._cond:
            self._flag = True
            self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Until the flag is set or `timeout` seconds have passed; returns is_set()."""
        with self._cond:
            return self._cond.wait_for(self.is_set, timeout)


@contextlib.contextmanager
def stop_on_signals(signals: Iterable[int] = STOP_SIGNALS, restore: bool = True) -> Iterator[StopFlag]:
    """Yields a StopFlag that each of `signals` sets while the block runs.

    - Every signal, the first and any later one, only sets the flag: a second Ctrl-C while the caller
      stops (an impatient user, `hil demo`'s SIGTERM after a Ctrl-C) neither raises KeyboardInterrupt
      nor kills the process, so the exit path it would interrupt (the safe command, torque off) runs
      to its end. A process that hangs on the way out is ended by SIGKILL, or SIGQUIT (Ctrl-\\).
    - On leaving the block (normally or by an exception) each signal's previous handler is restored;
      with restore=False each is ignored (SIG_IGN) from then on instead, for a process that exits
      after the block: a late signal can then neither interrupt what follows nor make the exit a kill
      (Python's own handlers are reset to SIG_DFL as the interpreter finalizes; SIG_IGN is not).
    - Python runs signal handlers only in the main thread and lets only it install them: in any other
      thread the block installs nothing and changes nothing, and the flag is set only by the caller's
      own code (its stop_event, say).
    - A signal interrupts a wait inside C code that Python does not retry: LCM's handle_timeout
      (its select() fails with EINTR, and lcm-python raises OSError): a loop that waits there expects
      that OSError (drivers.viz.standalone.run stops when the flag is set; SimulatedRobot.run_realtime goes
      on, and raises after 3 in a row)."""
    stop = StopFlag()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {}

    def handler(signum, frame) -> None:
        stop.set()

    try:
        for sig in signals:
            previous[sig] = signal.signal(sig, handler)
        yield stop
    finally:
        for sig, before in previous.items():     # None: a handler installed outside Python, not restorable
            signal.signal(sig, signal.SIG_IGN if not restore else signal.SIG_DFL if before is None else before)
