"""What the commands show while they work: the progress bar of those that run many things (`hil regress`,
`hil campaign`: tqdm's) and the live status line of a run (`hil run`, `hil demo`)."""
from __future__ import annotations

import logging
import sys
import time


class ProgressBar:
    """tqdm's bar with ETA and the failures so far, on stderr (or `file`); off when that is not a
    terminal or when not `enabled` (a --quiet): `shown` says which.

    No monitor thread: the bar is updated from the caller's thread as things finish, and tqdm's
    monitor would live on in the process, waking every 10 s (it allocated inside the tick-allocation
    tests of a pytest process that had run a campaign)."""

    def __init__(self, total: int, unit: str, enabled: bool = True, file=None):
        from tqdm import tqdm
        tqdm.monitor_interval = 0
        self.bar = tqdm(total=total, unit=unit, file=file or sys.stderr, disable=None if enabled else True,
                        mininterval=0.5, dynamic_ncols=True)
        self.shown, self.failed = not self.bar.disable, 0

    def update(self, n: int, failed: int = 0, last: str = "") -> None:
        """`n` more finished, `failed` of them failed; `last` names the last one after the count."""
        self.failed += failed
        self.bar.set_postfix_str(f"failed {self.failed}" + (f", {last}" if last else ""), refresh=False)
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


class StatusLine(logging.Filter):
    """A one-line live status, rewritten in place about five times a second; a line printed meanwhile
    (the start-up line, a log record: as a filter of the log's handlers) first ends it (break_line)."""

    def __init__(self, enabled: bool):
        super().__init__()
        self.enabled, self.next = enabled and sys.stdout.isatty() or enabled == "always", 0.0
        self.shown = False              # a status line is on the terminal, not yet ended
        self.last_ticks = 0
        self.last_time = time.monotonic()

    def break_line(self) -> None:
        """Ends the status line shown, so that what is printed next starts on a line of its own."""
        if self.shown:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.shown = False

    def filter(self, record) -> bool:
        self.break_line()
        return True

    def __call__(self, loop) -> None:
        now = time.monotonic()
        if not self.enabled or now < self.next:
            return
        self.next = now + 0.2
        rec = loop.recorder
        rate = (rec.ticks - self.last_ticks) / max(1e-9, now - self.last_time)
        self.last_ticks, self.last_time = rec.ticks, now
        sys.stdout.write(f"\r t {(rec.last_ns - rec.first_ns) * 1e-9:6.2f} s  {loop.safety.state.name:9s} "
                         f"rate {rate:7.1f} Hz  compute {rec.last_compute_ns / 1e3:6.1f} µs  late "
                         f"{rec.last_lateness_ns / 1e3:6.1f} µs  misses {rec.deadline_misses}  "
                         f"max err {float(rec.maxabs.max()) * 1e3:6.2f} mrad ")
        sys.stdout.flush()
        self.shown = True

    def close(self) -> None:
        self.break_line()
