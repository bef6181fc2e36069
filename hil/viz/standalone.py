"""Viewer messages from a robot's status channel (`hil viz CONFIG`).

Any status publisher works - a real robot's driver or the simulated plant - in Drake's iiwa or
panda protocol; the run config's robot, lcm, channels and viz sections say which.
"""
from __future__ import annotations

import time

import numpy as np

from messages.channels import Channels
from messages.codec import StatusDecoder

from .bridge import ViewerBridge, VizConfig


class StatusViewer:
    """Subscribes to `channels.status` of `lc` and feeds each valid status to a ViewerBridge: its
    position_measured sets the first num_joints entries of q (the rest keep the plant's default
    positions), stamped with the status utime, at the time clock() (ns) of arrival. Invalid
    statuses are dropped and counted (`status.counters`)."""

    def __init__(self, plant, lc, protocol: str = "iiwa", channels: Channels | None = None,
                 viz: VizConfig = VizConfig(), num_joints: int | None = None, clock=time.monotonic_ns):
        channels = channels or Channels.for_robot(protocol)
        nq = plant.num_positions()
        num_joints = nq if num_joints is None else num_joints
        if num_joints > nq:
            raise ValueError(f"the status has {num_joints} joints but the model has only {nq} positions")
        self.status = StatusDecoder(protocol, num_joints, channels.status)
        self.bridge = ViewerBridge(plant, lc, channels, viz)
        self.lc, self.clock = lc, clock
        self.q = plant.GetDefaultPositions()
        self._q_joints = self.q[:num_joints]
        self._subscription = lc.subscribe(channels.status, self._on_status)

    def _on_status(self, channel: str, data: bytes) -> None:
        if self.status.decode(data):
            np.copyto(self._q_joints, self.status.position_measured)
            self.bridge.tick(self.clock(), self.q, self.status.utime)

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
            lc.handle_timeout(100)
    finally:
        viewer.close()
    return viewer
