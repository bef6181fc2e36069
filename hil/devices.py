"""What the loop's devices beside the robot share (hil.ft_sensor's wrist sensor, hil.gripper's gripper): one
LCM subscription, closed by close(), and the age of the newest message on the loop's clock."""
from __future__ import annotations

import numpy as np


class Subscribed:
    """A device on `lc` whose handler is `_subscription`; `age_ns` is the newest message's age at the last
    update (-1: none yet)."""

    lc = None
    _subscription = None
    age_ns = -1

    @property
    def age_s(self) -> float:
        """Seconds between the newest message's arrival and the last update (inf before the first)."""
        return np.inf if self.age_ns < 0 else self.age_ns * 1e-9

    def close(self) -> None:
        """Stops listening (the LCM holds its handlers, which hold their owners)."""
        if self._subscription is not None:
            self.lc.unsubscribe(self._subscription)
            self._subscription = None
