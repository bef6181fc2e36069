"""Steps paced to the wall clock, for the simulated robot and the simulated station."""
from __future__ import annotations

from drivers.core.clock import RealTimeClock
from drivers.core.signals import stop_on_signals


def run_paced(period_ns: int, spin_us: float, lcs, publish, tick, stop_event, done) -> tuple:
    """Steps paced to the wall clock (drivers.core.clock.RealTimeClock: sleep until spin_us before each
    deadline, then spin; up to 100 periods late caught up, later re-phased): publish(), then per period
    the messages waiting on each LCM of `lcs` and tick(), until done(), stop_event is set or
    SIGINT/SIGTERM (handled while running in the main thread). Returns (the clock, the wall time in ns)."""
    clock = RealTimeClock(period_ns, int(spin_us * 1e3), max_catch_up=100)
    interrupted = 0
    with stop_on_signals() as stop:
        publish()
        start = clock.start()
        while not stop.is_set() and not (stop_event is not None and stop_event.is_set()) and not done():
            clock.wait()
            try:
                for lc in lcs:
                    while lc.handle_timeout(0) > 0:
                        pass
                interrupted = 0
            except OSError:
                # select() interrupted (EINTR) by SIGTERM/SIGINT, whose handler sets `stop`; a broken
                # socket fails again and again: raised after 3 in a row
                interrupted += 1
                if interrupted > 3:
                    raise
            tick()
        clock.wait()                          # the last step lasts its period too
        return clock, clock.now_ns() - start
