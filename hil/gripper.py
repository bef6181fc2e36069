"""A gripper beside the arm, in the loop (the run config's `gripper` section): its driver's status in
State.gripper, the law's (or the trajectory's gripper track's) Command.gripper sent to its driver.

Both drivers speak Drake's lcmt_schunk_wsg_command / lcmt_schunk_wsg_status (mm, N, mm/s; docs/grippers.md):
drake-schunk-driver on SCHUNK_WSG_*, status every 50 ms, and drake-franka-driver's franka_hand_driver on
PANDA_HAND_*, status every 100 ms. What the loop sends follows what they do with a command:

- the WSG's driver executes the newest command at each task and keeps executing the last one for ever
  (no timeout); the hand's takes the newest of its queue each cycle, stops a running operation for a new
  command and ignores one equal to the last it executed. So a command goes out **once, when it changes**
  (target width or force), never repeated each tick: a repeat is useless to the WSG and makes the hand
  skip its cycle's sleep.
- a command before the driver's first status is held back (over UDP the driver may not be listening
  yet; the hand homes, silently, before it subscribes) and goes out with the first status.
- **the safe gripper command is no command**: outside RUNNING (a fault, an e-stop, the end of the run)
  nothing is sent, so the WSG keeps executing its last command (a part held stays clamped at its force)
  and a hand's grasp keeps holding. Opening would drop the part; re-commanding would interrupt the
  hand's grasp. A change the law made while faulting is dropped; a recovery sends what the law and the
  restarted trajectory then command.

The status is refreshed in place each tick as [w, ẇ, f]: the width (m), its rate (m/s, positive
opening) and the grip force |f| (N: the WSG reports it with the speed's sign; the hand reports 0). It
is NaN before the first status and once the newest is older than `gripper.timeout`; then the link is
lost: `fault` holds (FaultCode.DRIVER_LINK, why), which the safety layer turns into a FAULT until a
status comes again (hil.safety.SafetyMonitor.device_fault). Before the first status the same holds after
`gripper.start_timeout` from the loop's first tick.
"""
from __future__ import annotations

import logging
import math

import numpy as np

from drivers.core.config import GripperLinkConfig, gripper_channels
from messages.codec import WsgCommandEncoder, WsgStatusDecoder
from messages.enums import FaultCode

from .devices import Subscribed

log = logging.getLogger(__name__)

STATUS_PERIOD_S = {"wsg50": 0.05, "franka_hand": 0.1}   # drake-schunk-driver's task, the hand driver's loop
TIMEOUT_PERIODS = 4                                     # gripper.timeout's default, in status periods


class GripperLink(Subscribed):
    """The gripper of `cfg` on `lc`: `update(now_ns)` once per tick after the tick's messages were handled,
    `track(trajectory, command)` after the trajectory's sample, `write(now_ns, command, commanding)` after
    the arm's command. `status` (3,) is [w m, ẇ m/s, |f| N]; `sent` (2,) the last command sent [w m, f N]."""

    what = "gripper status"

    def __init__(self, lc, cfg: GripperLinkConfig):
        self.lc, self.type = lc, cfg.type
        self.status_channel, self.command_channel = gripper_channels(cfg.type, cfg.status_channel,
                                                                     cfg.command_channel)
        timeout = cfg.timeout if cfg.timeout is not None else TIMEOUT_PERIODS * STATUS_PERIOD_S[cfg.type]
        self.timeout_ns, self.start_timeout_ns = round(timeout * 1e9), round(cfg.start_timeout * 1e9)
        self.force = float(cfg.force)
        self.decoder = WsgStatusDecoder(self.status_channel)
        self.encoder = WsgCommandEncoder(self.command_channel)
        self.status = np.full(3, np.nan)
        self.sent = np.full(2, np.nan)
        self.first_ns = -1              # the loop's first tick
        self.arrived_ns = -1            # loop clock of the tick that took the newest status (-1: none yet)
        self.age_ns = -1
        self.received = self.rejected = self.commands = self.lost = 0
        self.fault = None               # (FaultCode.DRIVER_LINK, why) while the link is lost, else None
        self._fresh = False
        self._segments = -1             # the trajectory's segment count at the last track()
        self._subscription = lc.subscribe(self.status_channel, self._on_message)

    def update(self, now_ns: int) -> None:
        """status := the newest one in SI units, or NaN if none came within the timeout (then `fault`)."""
        if self.first_ns < 0:
            self.first_ns = now_ns
        if self._fresh:
            values = self.decoder.values                  # [position mm, force N, speed mm/s]
            self.status[0] = values[0] * 1e-3
            self.status[1] = values[2] * 1e-3
            self.status[2] = abs(values[1])
            self.arrived_ns, self._fresh = now_ns, False
            if self.fault is not None:
                log.info("gripper status on %s again", self.status_channel)
                self.fault = None
        if self.arrived_ns < 0:
            if self.fault is None and now_ns - self.first_ns > self.start_timeout_ns:
                self._lose(f"no status on {self.status_channel} within gripper.start_timeout "
                           f"{self.start_timeout_ns * 1e-9:g} s")
            return
        self.age_ns = now_ns - self.arrived_ns
        if self.fault is None and self.age_ns > self.timeout_ns:
            self._lose(f"no status on {self.status_channel} for {self.age_ns * 1e-9:.3f} s "
                       f"(gripper.timeout {self.timeout_ns * 1e-9:g} s)")

    def _lose(self, why: str) -> None:
        self.status.fill(np.nan)
        self.fault = (FaultCode.DRIVER_LINK, f"gripper: {why}")
        self.lost += 1

    def track(self, trajectory, command) -> None:
        """The trajectory's gripper track: as a segment whose waypoint names a gripper command begins, that
        command (a force of NaN: gripper.force) into command.gripper, before the law (which may change it)."""
        track = getattr(trajectory, "track", None)
        if track is None or trajectory.segments == self._segments:
            return
        self._segments = trajectory.segments
        k = trajectory.segment
        if 0 <= k < track.shape[0] and not math.isnan(track[k, 0]):
            command.gripper[0] = track[k, 0]
            command.gripper[1] = self.force if math.isnan(track[k, 1]) else track[k, 1]

    def write(self, now_ns: int, command, commanding: bool) -> bool:
        """Sends command.gripper [w m, f N] if the law is commanding, the driver has reported, both values
        are finite and either differs from the last sent; True if it went out."""
        g, sent = command.gripper, self.sent
        if not commanding or self.arrived_ns < 0 or math.isnan(g[0]) or math.isnan(g[1]) \
                or (g[0] == sent[0] and g[1] == sent[1]):
            return False
        if self.encoder.encode(now_ns // 1000, g[0] * 1e3, g[1]) is None:
            return False                                  # (±inf: refused by the codec)
        self.encoder.publish(self.lc)
        sent[0], sent[1] = g[0], g[1]
        self.commands += 1
        return True

    def summary(self) -> dict:
        return {"gripper": {"type": self.type, "status_channel": self.status_channel,
                            "command_channel": self.command_channel, "received": self.received,
                            "rejected": self.rejected, "commands_sent": self.commands, "link_lost": self.lost,
                            "last_command": None if math.isnan(self.sent[0]) else
                            {"width_m": float(self.sent[0]), "force_n": float(self.sent[1])},
                            "width_m": None if math.isnan(self.status[0]) else float(self.status[0])}}
