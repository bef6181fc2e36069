"""A kinematic stand-in for the fingers and an LCM harness, to drive the gripper driver models."""
from __future__ import annotations

import lcm
import pytest

from messages.drake import lcmt_schunk_wsg_command, lcmt_schunk_wsg_status

H_NS = 1_000_000          # 1 ms steps


class Fingers:
    """Fingers that follow the setpoint exactly, except that a part of width `part` stops them
    closing; a blocked pair presses with the force bound (what the saturated PD does)."""

    def __init__(self, width: float, part: float | None = None):
        self.width, self.speed, self.force, self.part = width, 0.0, 0.0, part

    def step(self, target, h: float) -> None:
        width = target[0]
        blocked = self.part is not None and width < self.part <= self.width + 1e-12
        width = self.part if blocked else width
        self.speed, self.width = (width - self.width) / h, width
        self.force = target[2] if blocked else 0.0


class Bench:
    """A driver model on memq:// with fingers: `command(...)` publishes on the model's command
    channel, `run(seconds)` steps 1 ms at a time and collects the statuses the model published
    (decoded with lcm-gen's class) with the time each went out."""

    def __init__(self, model, fingers: Fingers, lc):
        self.model, self.fingers, self.lc, self.t_ns = model, fingers, lc, 0
        self.statuses: list[tuple[int, lcmt_schunk_wsg_status]] = []
        lc.subscribe(model.status.channel, lambda c, d: self.statuses.append(
            (self.t_ns, lcmt_schunk_wsg_status.decode(d))))

    def command(self, target_position_mm: float, force: float, utime: int = 0) -> None:
        message = lcmt_schunk_wsg_command()
        message.utime, message.target_position_mm, message.force = utime, target_position_mm, force
        self.lc.publish(self.model.command_in.channel, message.encode())

    def send(self, data: bytes) -> None:
        self.lc.publish(self.model.command_in.channel, data)

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds * 1e9 / H_NS)):
            while self.lc.handle_timeout(0) > 0:
                pass
            f = self.fingers
            self.model.update(self.t_ns, f.width, f.speed, f.force)
            while self.lc.handle_timeout(0) > 0:
                pass
            f.step(self.model.target, H_NS * 1e-9)
            self.t_ns += H_NS

    def since(self, t_ns: int):
        return [s for t, s in self.statuses if t >= t_ns]


@pytest.fixture
def memq():
    return lcm.LCM("memq://")
