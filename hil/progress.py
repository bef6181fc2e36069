"""The progress bar of the commands that run many things (`hil regress`, `hil campaign`): tqdm's."""
from __future__ import annotations

import sys


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
