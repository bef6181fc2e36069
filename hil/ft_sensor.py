"""A wrist force/torque sensor's readings for the law (`sensors.ft`): the newest Drake
`lcmt_force_torque` on its channel, decoded allocation-free into State.wrench.

The message carries fx fy fz (N) then tx ty tz (N·m) in the sensor frame S; the law sees Drake's
SpatialForce order, the wrench F_S = [τ; f] = [tx ty tz fx fy fz]. Before the first reading, and when
the newest arrived more than `sensors.ft.timeout` ago on the loop's clock (the sensor stopped or its
link dropped), every value is NaN: a law that uses a stale wrench produces a non-finite torque, which
the loop turns into a CONTROLLER fault instead of acting on an old force. `age_s` says how old the
reading is (inf before the first).
"""
from __future__ import annotations

import numpy as np

from messages.codec import ForceTorqueDecoder

from .devices import Subscribed


class WrenchSensor(Subscribed):
    """The sensor on `channel` of `lc`, read by the loop once per tick (`update(now_ns)`) after the
    tick's LCM messages were handled. `wrench` (6,) is [τ; f] in S, NaN when there is none or it is stale;
    `stamp_ms` the newest message's timestamp (ms, the sensor's clock); `received`, `rejected` counts."""

    what = "force/torque reading"

    def __init__(self, lc, channel: str, timeout_s: float):
        self.lc, self.channel = lc, channel
        self.timeout_ns = round(timeout_s * 1e9)
        self.decoder = ForceTorqueDecoder(channel)
        self.wrench = np.full(6, np.nan)
        self.arrived_ns = -1            # loop clock of the tick that took the newest reading (-1: none yet)
        self.age_ns = -1                # at the last update (-1: none yet)
        self.stamp_ms = 0
        self.received = self.rejected = self.stale = 0      # stale: updates that found it older than the timeout
        self._fresh = False             # a reading arrived since the last update
        self._valid = False             # wrench holds a reading (not NaN)
        values = self.decoder.values    # [fx fy fz tx ty tz]: views made once, copied without allocating
        self._copies = ((self.wrench[:3], values[3:]), (self.wrench[3:], values[:3]))
        self._subscription = lc.subscribe(channel, self._on_message)

    def _accepted(self) -> None:
        self.stamp_ms = self.decoder.utime

    def update(self, now_ns: int) -> None:
        """wrench := the newest reading as [τ; f], or NaN if none came within the timeout; a reading is
        stamped with the tick (`now_ns`, the loop's clock) that handled it."""
        if self._fresh:
            self.arrived_ns = now_ns
            for dst, src in self._copies:       # τ := tx ty tz, f := fx fy fz
                np.copyto(dst, src)
            self._fresh, self._valid = False, True
        if self.arrived_ns < 0:
            return
        self.age_ns = now_ns - self.arrived_ns
        if self._valid and self.age_ns > self.timeout_ns:
            self.wrench.fill(np.nan)
            self._valid = False
            self.stale += 1

    def summary(self) -> dict:
        return {"ft_sensor": {"channel": self.channel, "received": self.received, "rejected": self.rejected,
                              "stale": self.stale}}
