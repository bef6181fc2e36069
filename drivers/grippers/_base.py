"""What the grippers' driver models share: the command decoding as the driver's LCM sees it, the
status encoder and the target they hand the physics (drivers.grippers.mechanism)."""
from __future__ import annotations

import numpy as np

from messages import codec, errors


class GripperDriverModel:
    """The LCM side of a driver model: `on_command(data)` is the driver's LCM handler, the newest
    command wins; `status` encodes what the driver publishes, on `lc` if one was given (then the
    command channel is subscribed too). `target` is [w_d (m), ẇ_d (m/s), f_max (N)].

    A packet that does not decode as lcmt_schunk_wsg_command (wrong fingerprint, truncated,
    oversized) is dropped, as the driver's LCM drops it; `commands_rejected` counts it and
    `last_error` says why. A command with a NaN or an infinity is also reported there (its
    NonFiniteError) and then given to the driver as it arrives (`command_values` NaN), which is what
    the real driver's handler does with it."""

    def __init__(self, command_channel: str, status_channel: str, utime_offset_us: int, lc=None):
        self.command_in = codec.WsgCommandDecoder(channel=command_channel)
        self.status = codec.WsgStatusEncoder(channel=status_channel)
        self.utime_offset_us = utime_offset_us
        self.target = np.zeros(3)
        self.commands_received = self.commands_rejected = self.statuses = 0
        self.last_error: errors.MessageError | None = None
        self.lc = lc
        if lc is not None:
            lc.subscribe(command_channel, lambda channel, data: self.on_command(data))

    def _decode_command(self, data) -> tuple[float, float] | None:
        """(target_position_mm, force) as the driver's handler receives them, or None if LCM drops it."""
        if self.command_in.decode(data):
            self.commands_received += 1
            return self.command_in.values[0], self.command_in.values[1]
        self.commands_rejected += 1
        self.last_error = self.command_in.last_error
        if isinstance(self.last_error, errors.NonFiniteError):
            message = self.command_in.message_type.decode(bytes(data))
            return message.target_position_mm, message.force
        return None

    def _publish(self, t_ns: int, position_mm: float, force: float, speed_mm_per_s: float) -> None:
        self.status.encode_or_raise(self.utime_offset_us + t_ns // 1000, position_mm, force, speed_mm_per_s)
        self.statuses += 1
        if self.lc is not None:
            self.status.publish(self.lc)
