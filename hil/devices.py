"""What the loop's devices beside the robot share (hil.ft_sensor's wrist sensor, hil.gripper's gripper): one
LCM subscription whose handler decodes each message (counted, a rejected one logged), closed by close(), and
the age of the newest message on the loop's clock."""
from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)


class Subscribed:
    """A device on `lc` whose handler (`_subscription`) is `_on_message`: `decoder` decodes each message in
    place (`received`, `_fresh`; a rejected one counted in `rejected` and logged as a `what`); `age_ns` is the
    newest message's age at the last update (-1: none yet)."""

    what = "message"
    lc = None
    decoder = None
    _subscription = None
    age_ns = -1
    received = rejected = 0
    _fresh = False

    def _on_message(self, channel: str, data: bytes) -> None:
        if self.decoder.decode(data):
            self.received += 1
            self._fresh = True
            self._accepted()
        else:
            self.rejected += 1
            if self.rejected <= 10 or self.rejected % 1000 == 0:
                log.warning("rejected %s #%d on %s: %s", self.what, self.rejected, channel, self.decoder.last_error)

    def _accepted(self) -> None:
        """After a message was decoded (a device's own bookkeeping)."""

    @property
    def age_s(self) -> float:
        """Seconds between the newest message's arrival and the last update (inf before the first)."""
        return np.inf if self.age_ns < 0 else self.age_ns * 1e-9

    def close(self) -> None:
        """Stops listening (the LCM holds its handlers, which hold their owners)."""
        if self._subscription is not None:
            self.lc.unsubscribe(self._subscription)
            self._subscription = None
