"""drivers.core.signals.stop_on_signals: real signals sent to this process (os.kill, in the main thread, where
Python runs its signal handlers) set the flag and raise nothing; the previous handlers come back on
every exit of the block; a second signal while stopping is absorbed; elsewhere than the main thread
the block changes nothing."""
import os
import signal
import threading
import time

import pytest

from drivers.core.signals import STOP_SIGNALS, stop_on_signals


@pytest.fixture
def handlers():
    """A handler of this test's own on SIGINT, SIGTERM and SIGHUP (what the block must give back), the
    process's own put back afterwards."""
    caught = []

    def mine(signum, frame):
        caught.append(signum)

    sigs = (*STOP_SIGNALS, signal.SIGHUP)
    before = {sig: signal.signal(sig, mine) for sig in sigs}
    yield mine, caught
    for sig, handler in before.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize("sig", STOP_SIGNALS, ids=["SIGINT", "SIGTERM"])
def test_a_signal_sets_the_flag_and_the_previous_handler_comes_back(handlers, sig):
    mine, caught = handlers
    with stop_on_signals() as stop:
        assert not stop.is_set() and signal.getsignal(sig) is not mine
        os.kill(os.getpid(), sig)
        assert stop.is_set() and stop.wait(0)
    assert caught == [] and all(signal.getsignal(s) is mine for s in STOP_SIGNALS)
    os.kill(os.getpid(), sig)                       # the previous handler has it again
    assert caught == [sig]


def test_ctrl_c_raises_nothing_inside_and_keyboard_interrupt_after():
    """Python's own SIGINT handler (KeyboardInterrupt) is the one put back."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with stop_on_signals() as stop:
            os.kill(os.getpid(), signal.SIGINT)
        assert stop.is_set()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_second_signal_while_stopping_is_absorbed(handlers):
    """Ctrl-C, then more Ctrl-C and a SIGTERM during the exit path: the flag stays set, nothing is
    raised, the exit path runs to its end."""
    mine, caught = handlers
    finished = []
    with stop_on_signals() as stop:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.is_set()
        for sig in (signal.SIGINT, signal.SIGINT, signal.SIGTERM):     # the safe stop being sent
            os.kill(os.getpid(), sig)
        finished.append(True)
    assert stop.is_set() and finished == [True] and caught == []


def test_the_handlers_come_back_when_the_block_raises(handlers):
    mine, _ = handlers
    with pytest.raises(RuntimeError, match="a bug"):
        with stop_on_signals():
            raise RuntimeError("a bug")
    assert all(signal.getsignal(s) is mine for s in STOP_SIGNALS)


def test_nested_blocks_give_the_signal_back_to_the_outer_one(handlers):
    mine, caught = handlers
    with stop_on_signals() as outer:
        with stop_on_signals() as inner:
            os.kill(os.getpid(), signal.SIGTERM)
        assert inner.is_set() and not outer.is_set()
        os.kill(os.getpid(), signal.SIGTERM)
        assert outer.is_set()
    assert caught == [] and signal.getsignal(signal.SIGTERM) is mine


def test_signals_named_and_ignored_after(handlers):
    """The servo driver's use: SIGHUP as well, and the signals ignored once its torque off is done."""
    mine, caught = handlers
    with stop_on_signals((signal.SIGTERM, signal.SIGINT, signal.SIGHUP), restore=False) as stop:
        os.kill(os.getpid(), signal.SIGHUP)
        assert stop.is_set()
    assert all(signal.getsignal(s) == signal.SIG_IGN for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP))
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        os.kill(os.getpid(), sig)                   # ignored: this process lives on
    assert caught == []


def test_only_the_named_signals(handlers):
    mine, caught = handlers
    with stop_on_signals((signal.SIGTERM,)) as stop:
        assert signal.getsignal(signal.SIGINT) is mine
        os.kill(os.getpid(), signal.SIGINT)
        assert not stop.is_set() and caught == [signal.SIGINT]


def test_in_another_thread_it_installs_nothing(handlers):
    """Python lets only the main thread install handlers: elsewhere the block is a no-op (no
    ValueError), and its flag is the caller's to set."""
    mine, _ = handlers
    seen = {}

    def body():
        with stop_on_signals() as stop:
            seen["handlers"] = [signal.getsignal(s) for s in STOP_SIGNALS]
            seen["set before"] = stop.is_set()
            stop.set()
            seen["set after"] = stop.wait(1)
    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    assert seen == {"handlers": [mine, mine], "set before": False, "set after": True}
    assert all(signal.getsignal(s) is mine for s in STOP_SIGNALS)


def test_a_signal_wakes_the_main_thread_waiting_on_the_flag(handlers):
    """SIGTERM from another thread while the main thread sits in stop.wait(): the handler runs inside
    that wait and ends it."""
    with stop_on_signals() as stop:
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
        t0 = time.monotonic()
        assert stop.wait(20)
        assert time.monotonic() - t0 < 10


def test_a_signal_while_the_main_thread_holds_the_flags_lock_does_not_deadlock(handlers):
    """The handler runs between two bytecodes of the main thread, which may be inside the flag's own
    wait() or set() with its lock held: the lock is reentrant (a threading.Event would hang here)."""
    with stop_on_signals() as stop:
        with stop._cond:
            os.kill(os.getpid(), signal.SIGINT)
            held = stop.is_set()
    assert held and stop.is_set()
