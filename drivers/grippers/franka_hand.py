"""The Franka (Panda) Hand behind drake-franka-driver's hand driver, as a deterministic state machine.

The driver's source is the specification (franka-driver/franka_hand_driver.cc of
RobotLocomotion/drake-franka-driver):

- the flags: `--lcm_command_channel` PANDA_HAND_COMMAND, `--lcm_status_channel` PANDA_HAND_STATUS
  (lcmt_schunk_wsg_command / lcmt_schunk_wsg_status), `--control_loop_period_ms` 100,
  `--control_mode` position or status_only, `--grasp_speed` 1.0 m/s, `--home_initial` true,
  `--move_only` false.
- `PandaHandDriver::PandaHandDriver`: unless status_only, homes the hand before anything else
  (nothing is published meanwhile) and subscribes with `setQueueCapacity(5)`: LCM keeps at most five
  waiting commands and drops what arrives beyond them; status_only never subscribes.
- `PandaHandDriver::ControlLoop`, each cycle: read the hand's state and publish it, then take the
  newest waiting command (`HandleCommandMessage` overwrites `command_`). A command equal to the last
  executed one (`AreCommandsEqual`: target and force) is ignored and the next cycle starts at once
  (the `continue` skips the sleep: a second status at the same time). Otherwise a running operation
  is stopped (`gripper_.stop()`), the target width is clamped into [0, max_width], and the hand
  moves (`gripper_.move`) if the target is wider than the current width (with `--move_only`: if it
  differs), grasps (`gripper_.grasp(width, grasp_speed, force, max_width, max_width)`: any final
  width counts as a grasp) if narrower, and does nothing if equal (then the command is not
  remembered as the last one). The cycle sleeps out the rest of its period.
- `PandaHandDriver::PublishState`: position = the hand's width × 1000 (mm), force always 0 ("GripperState
  doesn't include this information"), speed 5.0 mm/s while an operation runs and 0 otherwise (the
  driver's fake value); utime is the host's clock, µs.

The hand's side is ours, from libfranka's Gripper (move, grasp, homing, stop) and the hand's data
(`FrankaHandLimits`): a homing closes then opens to the maximum width; move and grasp run a
trapezoidal setpoint at min(speed, the hand's maximum); a grasp presses with its force (clamped to
the hand's continuous rating) and keeps holding after it ends; an operation ends when the fingers
stall for `stall_time` or reach the target; stop() leaves the fingers where they are.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from drivers.core.schema import Positive
from drivers.grippers._base import GripperDriverModel
from drivers.grippers.mechanism import TrapezoidProfile
from messages.channels import PANDA_HAND_COMMAND, PANDA_HAND_STATUS

QUEUE_CAPACITY = 5          # HandleCommandMessage's subscription: sub->setQueueCapacity(5)
RUNNING_SPEED_MM_PER_S = 5.0   # PublishState's speed while an operation runs
STALL_SPEED = 1e-3          # m/s: below this the fingers are not moving
AT_TARGET = 1e-3            # m: a move this close to its target has arrived


@dataclass
class FrankaHandLimits:
    """The Franka Hand's data (not the driver's): width 0–80 mm, 50 mm/s per finger, 70 N continuous."""

    max_width: Positive = 0.08           # m: GripperState::max_width after homing
    max_speed: Positive = 0.1            # m/s of the width (both fingers)
    acceleration: Positive = 1.0         # m/s² of the width (ours: not published)
    max_force: Positive = 70.0           # N: continuous grasping force
    move_force: Positive = 70.0          # N: the force bound while moving (ours)
    stall_time: Positive = 0.05          # s: a stall this long ends an operation (ours)


@dataclass
class FrankaHandDriverConfig:
    """franka_hand_driver's flags (same names and defaults)."""

    lcm_command_channel: str = PANDA_HAND_COMMAND
    lcm_status_channel: str = PANDA_HAND_STATUS
    control_loop_period_ms: int = 100
    control_mode: Literal["position", "status_only"] = "position"
    grasp_speed: Positive = 1.0          # m/s
    home_initial: bool = True
    move_only: bool = False
    limits: FrankaHandLimits = field(default_factory=FrankaHandLimits)


class FrankaHandDriverModel(GripperDriverModel):
    """franka_hand_driver in front of the hand, from time 0 (the constructor's homing first).

    `on_command(data)` for each LCM message (or give `lc`), `update(t_ns, width, speed, force)` every
    physics step (force is unused: the driver never reports one). `operation` is None, "homing",
    "move" or "grasp"; `holding` says a finished grasp still presses with its force."""

    def __init__(self, config: FrankaHandDriverConfig | None = None, utime_offset_us: int = 0,
                 lc=None, initial_width: float | None = None):
        self.config = cfg = config or FrankaHandDriverConfig()
        if cfg.control_loop_period_ms <= 0:              # DRAKE_THROW_UNLESS(control_loop_period_ms > 0)
            raise ValueError(f"control_loop_period_ms must be positive, got {cfg.control_loop_period_ms}")
        super().__init__(cfg.lcm_command_channel, cfg.lcm_status_channel, utime_offset_us,
                         lc if cfg.control_mode == "position" else None)
        if cfg.control_mode == "status_only" and lc is not None:
            self.lc = lc                                  # publishes, never subscribes
        lim = self.limits = cfg.limits
        self.period_ns = cfg.control_loop_period_ms * 1_000_000
        self.speed = min(cfg.grasp_speed, lim.max_speed)
        width = lim.max_width if initial_width is None else initial_width
        self.profile = TrapezoidProfile(lim.max_speed, lim.acceleration, width)
        self.queue: list[tuple[float, float]] = []
        self.last_command: tuple[float, float] | None = None
        self.operation: str | None = None
        self.holding = False
        self.force_limit = lim.move_force
        self.homing_leg = 0
        self.stall_since = -1.0
        self.started = 0.0
        self.next_cycle_ns = None if cfg.control_mode == "position" and cfg.home_initial else 0
        if self.next_cycle_ns is None:
            self.operation = "homing"

    def on_command(self, data) -> bool:
        """The subscription's queue: False if dropped (undecodable, full queue, status_only)."""
        if self.config.control_mode != "position":
            return False
        values = self._decode_command(data)
        if values is None or len(self.queue) >= QUEUE_CAPACITY:
            return False
        self.queue.append(values)
        return True

    def update(self, t_ns: int, width: float, speed: float, force: float) -> int:
        """Advance to t_ns with the fingers' measured state; the number of statuses published."""
        t = t_ns * 1e-9
        self._operate(t, width, speed)
        published = 0
        while self.next_cycle_ns is not None and t_ns >= self.next_cycle_ns:
            published += 1
            immediate = self._cycle(t_ns, t, width, speed)
            if not immediate:
                self.next_cycle_ns = t_ns + self.period_ns
        p = self.profile
        p.evaluate(t)
        self.target[0], self.target[1], self.target[2] = p.position, p.velocity, self.force_limit
        return published

    def _cycle(self, t_ns: int, t: float, width: float, speed: float) -> bool:
        """One pass of ControlLoop's body; True if it `continue`s (the next cycle starts at once)."""
        self._publish(t_ns, width * 1000.0, 0.0, RUNNING_SPEED_MM_PER_S if self.operation else 0.0)
        if not self.queue:
            return False
        command = self.queue[-1]
        self.queue.clear()
        if command == self.last_command:
            return True                                   # "Received same command; ignoring"
        if self.operation:
            self._stop(t, width)
        target = min(max(command[0] * 0.001, 0.0), self.limits.max_width)
        move = target != width if self.config.move_only else target > width
        if move or target < width:
            self.operation, self.holding, self.started, self.stall_since = ("move" if move else "grasp"), False, t, -1.0
            self.force_limit = self.limits.move_force if move else min(max(command[1], 0.0), self.limits.max_force)
            self.profile.plan(t, width, 0.0, target)
            self.last_command = command
        return False

    def _stop(self, t: float, width: float) -> None:
        """gripper_.stop(): the operation ends, the fingers stay where they are."""
        self.operation, self.holding = None, False
        self.profile.hold(t, width)

    def _operate(self, t: float, width: float, speed: float) -> None:
        """The hand's side of the running operation: homing's two legs, the end of move and grasp."""
        p = self.profile
        if self.operation is None:
            return
        if self.operation == "homing":
            if self.homing_leg == 0:
                self.homing_leg = 1
                p.plan(t, width, 0.0, 0.0)
            elif t >= p.end and self.homing_leg == 1:
                self.homing_leg = 2
                p.plan(t, p.target, 0.0, self.limits.max_width)
            elif t >= p.end:
                self.operation, self.next_cycle_ns = None, int(round(t * 1e9))
            return
        stalled = abs(speed) < STALL_SPEED and t - self.started >= self.limits.stall_time
        if stalled and self.stall_since < 0:
            self.stall_since = t
        elif not stalled:
            self.stall_since = -1.0
        arrived = t >= p.end and abs(width - p.target) <= AT_TARGET
        blocked = self.stall_since >= 0 and t - self.stall_since >= self.limits.stall_time
        if self.operation == "grasp" and (arrived or blocked):
            self.operation, self.holding = None, True          # the grasp ends; the hand keeps its force
        elif arrived:
            self.operation = None                               # the move ends at its target
        elif blocked:
            self._stop(t, width)                                # a blocked move fails where it is
