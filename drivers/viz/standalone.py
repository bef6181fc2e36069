"""Viewer messages from a robot's status channel (`hil viz CONFIG`).

Any status publisher works - a real robot's driver or the simulated plant - in Drake's iiwa or
panda protocol; the run config's robot, lcm, channels and viz sections say which.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from drivers.core.schema import ConfigError
from messages.channels import Channels
from messages.codec import StatusDecoder

from .bridge import ViewerBridge, VizConfig

log = logging.getLogger(__name__)

WARNING_PERIOD_S = 10.0
"""After the first rejected status, a warning at most this often while statuses keep being rejected."""


class StatusViewer:
    """Subscribes to `channels.status` of `lc` and feeds each valid status to a ViewerBridge: its
    position_measured sets the first num_joints entries of q (the rest keep the plant's default
    positions), stamped with the status utime, at the time clock() (ns) of arrival.

    num_joints: the joints in the status message; None: viz.status_joints, and if that is None too,
    the model's number of positions. Invalid statuses are dropped and counted (`rejected`, and by
    reason in `status.counters`); the first one is logged as a warning naming the reason, then one
    warning every WARNING_PERIOD_S while they go on."""

    def __init__(self, plant, lc, protocol: str = "iiwa", channels: Channels | None = None,
                 viz: VizConfig = VizConfig(), num_joints: int | None = None, clock=time.monotonic_ns):
        channels = channels or Channels.for_robot(protocol)
        nq = plant.num_positions()
        from_config = num_joints is None and viz.status_joints is not None
        num_joints = num_joints if num_joints is not None else viz.status_joints if from_config else nq
        if num_joints > nq:
            message = f"the status has {num_joints} joints but the model has only {nq} positions"
            raise ConfigError("viz.status_joints", message) if from_config else ValueError(message)
        self.num_joints, self.num_positions = num_joints, nq
        self.status = StatusDecoder(protocol, num_joints, channels.status)
        self.bridge = ViewerBridge(plant, lc, channels, viz)
        self.lc, self.clock = lc, clock
        self.q = plant.GetDefaultPositions()
        self._q_joints = self.q[:num_joints]
        self.rejected = 0
        self._warned_at = 0                 # `rejected` at the last warning
        self._next_warning_ns = 0
        self._subscription = lc.subscribe(channels.status, self._on_status)

    def _on_status(self, channel: str, data: bytes) -> None:
        if self.status.decode(data):
            np.copyto(self._q_joints, self.status.position_measured)
            self.bridge.tick(self.clock(), self.q, self.status.utime)
            return
        self.rejected += 1
        now = self.clock()
        if self.rejected == 1 or now >= self._next_warning_ns:
            log.warning("hil viz: rejected status #%d (%d since the last warning): %s", self.rejected,
                        self.rejected - self._warned_at, self.reason())
            self._warned_at = self.rejected
            self._next_warning_ns = now + round(WARNING_PERIOD_S * 1e9)

    def reason(self) -> str:
        """Why the last status was rejected, with what to change for a joint-count mismatch."""
        error = self.status.last_error
        if error is None:
            return "no status rejected"
        text = str(error)
        if error.counter == "joint_count" and isinstance(error.actual, int):
            text += (f"; the viewer expects {self.num_joints} joints (viz.status_joints, default the model's "
                     f"{self.num_positions} positions)")
            if 0 < error.actual <= self.num_positions:
                text += f": set viz.status_joints: {error.actual}"
            else:
                text += f", and the model has only {self.num_positions} positions: is robot.model this robot's?"
        return text

    def close(self) -> None:
        self.lc.unsubscribe(self._subscription)
        self.bridge.close()


def run(plant, lc, protocol: str = "iiwa", channels: Channels | None = None, viz: VizConfig = VizConfig(),
        num_joints: int | None = None, duration_s: float | None = None, stop=None) -> StatusViewer:
    """Serve `plant`'s viewer messages from the status channel on `lc` (see StatusViewer) until
    duration_s has passed (forever if None) or stop() is true. Returns the closed StatusViewer, whose
    counters tell what it did."""
    viewer = StatusViewer(plant, lc, protocol, channels, viz, num_joints)
    end = None if duration_s is None else time.monotonic() + duration_s
    try:
        while (end is None or time.monotonic() < end) and not (stop is not None and stop()):
            try:
                lc.handle_timeout(100)
            except OSError:             # its select() interrupted (EINTR) by the signal that sets stop
                if stop is None or not stop():
                    raise
    finally:
        viewer.close()
    return viewer
