"""ViewerBridge: Drake's viewer messages for one plant, rate-limited so a control loop can call it
every tick; VizConfig, the `viz:` config section, and load_viz_config(data), its validation."""
from __future__ import annotations

import dataclasses
from typing import Annotated, Optional

import numpy as np
from annotated_types import Gt, Le

from drivers.core.schema import Count, NonNegative, load
from messages import lcmt_viewer_command
from messages.channels import DRAKE_VIEWER_STATUS, Channels

from .draw import DrawPublisher
from .load import SOURCE_NAME, load_robot_message


def _viewer_started() -> bytes:
    msg = lcmt_viewer_command()
    msg.command_type, msg.command_data = lcmt_viewer_command.STATUS, "loaded"
    return msg.encode()


VIEWER_STARTED = _viewer_started()
"""The bytes of lcmt_viewer_command{STATUS, "loaded"}, which drake_visualizer (Director) publishes on
DRAKE_VIEWER_STATUS when it starts: a request for the load message. Only this one is answered:
answering its "successfully loaded robot" acknowledgement would make the two reload each other
forever. Meldis publishes nothing."""

_NEVER = (1 << 63) - 1


@dataclasses.dataclass(frozen=True)
class VizConfig:
    """The `viz:` section: what ViewerBridge publishes and how often (`viz: true` is the defaults)."""

    enabled: bool = True                            # run the viewer bridge
    draw_rate_hz: Annotated[float, Gt(0), Le(1000.0)] = 60.0   # lcmt_viewer_draw messages per second
    load_period_s: NonNegative = 2.0                # republish lcmt_viewer_load_robot this often (0: only at
                                                    # start and on request)
    status_channel: str = DRAKE_VIEWER_STATUS       # where a starting drake_visualizer asks for the load
                                                    # message ('' to not listen)
    # `hil viz`: joints in the robot's status message; they set the first entries of q (default: all of
    # the model's positions)
    status_joints: Optional[Count] = None


def load_viz_config(data, path: str = "viz") -> VizConfig:
    """The validated VizConfig of a run config's `viz:` value: a mapping, `true` (the defaults),
    `false` or None (off)."""
    if data is None or isinstance(data, bool):
        return VizConfig(enabled=bool(data))
    return load(VizConfig, data, path)


class ViewerBridge:
    """Publishes `plant`'s lcmt_viewer_load_robot and lcmt_viewer_draw on `channels.viewer_load_robot`
    and `channels.viewer_draw` of the LCM instance `lc`, at most config.draw_rate_hz times a second.

    Call tick(now_ns, q, utime) every control tick. Ticks are slotted on a grid of period
    T = 1 / draw_rate_hz: a tick before the next slot costs one integer compare; the first tick at or
    after it publishes a draw (~20 µs for the iiwa) and moves the slot on by T (to now_ns + T if the
    loop fell behind, so there is never a burst). The load message is encoded once and sent before
    the draw of the first publishing tick, every load_period_s, and after a viewer asks on
    status_channel (answered at the next slot, so at most draw_rate_hz times a second). Requests
    arrive when the owner of `lc` handles it. Meldis ignores a load identical to the last one, so
    the periodic republish only matters to a viewer that started after us.

    now_ns is any monotonic nanosecond clock (time.monotonic_ns() in the loop, simulated time in
    the simulator); utime (µs) becomes the draw timestamp in ms. tick() never raises for a failed
    send (counted in `errors`, kept in `last_error`) nor for a non-finite q (counted in `rejected`).

    `anchored`: geometry on the world that is not the plant's (GeometryInstances), added to the
    load message's world link, e.g. the simulator's ground (see load_robot_message).
    """

    def __init__(self, plant, lc, channels: Channels = Channels(), config: VizConfig = VizConfig(),
                 source_name: str = SOURCE_NAME, anchored=()):
        self.lc, self.channels, self.config = lc, channels, config
        self.load_message = load_robot_message(plant, source_name, anchored)
        self._load_bytes = self.load_message.encode()
        self._draw = DrawPublisher(plant, lc, channels.viewer_draw, source_name)
        self._period_ns = round(1e9 / config.draw_rate_hz)
        self._load_period_ns = round(config.load_period_s * 1e9) or _NEVER
        self._next_ns = -_NEVER
        self._next_load_ns = -_NEVER
        self._load_requested = False
        self.draws = self.loads = self.requests = self.rejected = self.errors = 0
        self.last_error: OSError | None = None
        self._subscription = (lc.subscribe(config.status_channel, self._on_status)
                              if config.status_channel else None)

    def tick(self, now_ns: int, q: np.ndarray, utime: int) -> bool:
        """Publish what is due at now_ns for positions q (float64, (nq,)); True if a draw went out."""
        if now_ns < self._next_ns:
            return False
        return self._publish(now_ns, q, utime)

    def _publish(self, now_ns: int, q: np.ndarray, utime: int) -> bool:
        self._next_ns += self._period_ns
        if self._next_ns <= now_ns:
            self._next_ns = now_ns + self._period_ns
        try:
            if self._load_requested or now_ns >= self._next_load_ns:
                self.lc.publish(self.channels.viewer_load_robot, self._load_bytes)
                self._load_requested = False
                self._next_load_ns = now_ns + self._load_period_ns
                self.loads += 1
            if not self._draw.publish(q, utime):
                self.rejected += 1
                return False
        except OSError as error:
            self.errors += 1
            self.last_error = error
            return False
        self.draws += 1
        return True

    def request_load(self) -> None:
        """Send the load message again at the next draw slot."""
        self._load_requested = True

    def _on_status(self, channel: str, data: bytes) -> None:
        if data == VIEWER_STARTED:
            self.requests += 1
            self._load_requested = True

    def summary(self) -> dict:
        """The counters, JSON-ready: draws, loads, requests, rejected, errors (and last_error)."""
        out = {"draws": self.draws, "loads": self.loads, "requests": self.requests, "rejected": self.rejected,
               "errors": self.errors}
        if self.last_error is not None:
            out["last_error"] = str(self.last_error)
        return out

    def close(self) -> None:
        """Stop listening on status_channel."""
        if self._subscription is not None:
            self.lc.unsubscribe(self._subscription)
            self._subscription = None


def format_counters(summary: dict) -> str:
    """ViewerBridge.summary() as one line of text."""
    text = (f"draws {summary['draws']}, loads {summary['loads']}, viewer requests {summary['requests']}, "
            f"rejected q {summary['rejected']}, send errors {summary['errors']}")
    return text + (f" (last: {summary['last_error']})" if summary.get("last_error") else "")
