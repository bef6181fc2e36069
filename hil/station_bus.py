"""The loop's side of kuka_driver --num_robots (station.layout num_robots, docs/station.md): one
lcmt_iiwa_status of 7·N joints in, one lcmt_iiwa_command of 7·N out, each arm's loop unchanged.

Each arm's hardware interface (hil.hardware) speaks its own 7-joint status and command on a private
in-process LCM (memq://) under its own channels; the bridge is the only one on the station's LCM for
the driver's two channels. Per station tick:

    read()    the station's LCM: the combined status decoded once, arm i's joints [7i, 7i + 7) encoded
              as its own status on the private LCM (the e-stop, streamed plans and the F/T sensor on the
              station's LCM reach the arms' loops, which listen there, as usual)
    ... every arm's tick: its hardware reads its status and writes its command on the private LCM
    flush()   the private LCM: each arm's command into its slice of one 7·N command, published once
              every arm has commanded (a slice an arm did not refresh this tick keeps its last values)

Decoding and encoding use the preallocated codecs (messages.codec) on slices of preallocated arrays:
a tick allocates no more than lcm-python's bytes of the messages it receives.
"""
from __future__ import annotations

import logging

import numpy as np

from drivers.core.config import channels_for
from drivers.core.schema import ConfigError
from messages.codec import CommandDecoder, CommandEncoder, StatusDecoder, StatusEncoder

from .hardware import COMMAND_FIELDS

log = logging.getLogger(__name__)

JOINTS = 7
_STATUS = ("position_measured", "velocity_estimated", "position_commanded", "torque_measured",
           "torque_commanded", "torque_external")


class NumRobotsBridge:
    """The station's arms (name → ControlLoop, not yet configured; their hardware on `private`) behind
    one kuka_driver --num_robots on `lc`'s `status` and `command` channels."""

    def __init__(self, station, lc, private, arms: dict):
        spec, n = station.spec, len(arms)
        self.lc, self.private, self.count = lc, private, n
        self.status_channel, self.command_channel = spec.status, spec.command
        commands = {cfg.robot.command for cfg in station.arms.values()}
        if len(commands) != 1:
            raise ConfigError("station.arms", f"layout num_robots sends one command for every arm: one robot.command "
                                              f"for all, got {sorted(commands)}", station.source)
        fields = COMMAND_FIELDS[commands.pop()]
        for i, (name, arm) in enumerate(arms.items()):
            if arm.robot.n != JOINTS:
                raise ConfigError(f"station.arms[{i}].robot.model", f"layout num_robots drives 7-joint iiwas; arm "
                                                                    f"{name!r} has {arm.robot.n}", station.source)
        self.status = StatusDecoder("iiwa", JOINTS * n, channel=spec.status)
        self.command = CommandEncoder("iiwa", JOINTS * n, fields=fields, channel=spec.command)
        self.position, self.torque = np.zeros(JOINTS * n), np.zeros(JOINTS * n)
        self.send_q, self.send_tau = "position" in fields, "torque" in fields
        self.arm_status = []         # (encoder on the arm's status channel, the slices of the combined arrays)
        self.arm_command = []        # (decoder, position slice, torque slice)
        for i, arm in enumerate(arms.values()):
            lo, hi = JOINTS * i, JOINTS * (i + 1)
            ch = channels_for(arm.cfg)
            self.arm_status.append((StatusEncoder("iiwa", JOINTS, ch.status),
                                    tuple(getattr(self.status, name)[lo:hi] for name in _STATUS)))
            self.arm_command.append((CommandDecoder("iiwa", JOINTS, ch.command), self.position[lo:hi],
                                     self.torque[lo:hi]))
        self.fresh = np.zeros(n, dtype=bool)
        self.commanded = np.zeros(n, dtype=bool)
        self.utime = 0
        self.received = self.rejected = self.sent = 0
        self._subscriptions = [(lc, lc.subscribe(spec.status, self._on_status))]
        self._subscriptions += [(private, private.subscribe(decoder.channel, self._on_arm_command))
                                for decoder, _, _ in self.arm_command]

    def _on_status(self, channel: str, data: bytes) -> None:
        s = self.status
        if not s.decode(data):
            self.rejected += 1
            if self.rejected <= 10 or self.rejected % 1000 == 0:
                log.warning("rejected status #%d on %s: %s", self.rejected, channel, s.last_error)
            return
        self.received += 1
        for encoder, (q, v, q_cmd, tau_meas, tau_cmd, tau_ext) in self.arm_status:
            encoder.encode(s.utime, position_measured=q, velocity_estimated=v, position_commanded=q_cmd,
                           torque_measured=tau_meas, torque_commanded=tau_cmd, torque_external=tau_ext)
            encoder.publish(self.private)

    def _on_arm_command(self, channel: str, data: bytes) -> None:
        for i, (decoder, q, tau) in enumerate(self.arm_command):
            if channel == decoder.channel:
                if decoder.decode(data):
                    np.copyto(q, decoder.position)
                    np.copyto(tau, decoder.torque)
                    self.utime = decoder.utime
                    self.fresh[i] = self.commanded[i] = True
                return

    def read(self, limit: int = 64) -> None:
        """The station's LCM messages waiting (without blocking): the combined status to each arm's."""
        handled = 0
        while handled < limit and self.lc.handle_timeout(0) > 0:
            handled += 1

    def flush(self, limit: int = 64) -> bool:
        """The arms' commands of this tick (on the private LCM) as one command on the driver's channel,
        once every arm has commanded; returns whether it went out."""
        handled = 0
        while handled < limit and self.private.handle_timeout(0) > 0:
            handled += 1
        if not self.fresh.any() or not self.commanded.all():
            return False
        self.fresh.fill(False)
        if self.command.encode(self.utime, position=self.position if self.send_q else None,
                               torque=self.torque if self.send_tau else None) is None:
            return False
        self.command.publish(self.lc)
        self.sent += 1
        return True

    def summary(self) -> dict:
        return {"num_robots": self.count, "status_channel": self.status_channel,
                "command_channel": self.command_channel, "statuses_received": self.received,
                "statuses_rejected": self.rejected, "commands_sent": self.sent}

    def close(self) -> None:
        for lc, subscription in self._subscriptions:
            lc.unsubscribe(subscription)
        self._subscriptions = []
