"""The Schunk WSG 50 behind RobotLocomotion/drake-schunk-driver, as a deterministic state machine.

The driver's source is the specification (src/ of drake-schunk-driver):

- schunk_driver.cc, `main`: `Task()` then `usleep(50000)`: one task, and one status, every 50 ms
  (`task_period`), the rate Drake's kSchunkWsgLcmStatusPeriod and SchunkWsgTrajectoryGenerator's
  update period also use. Channels SCHUNK_WSG_COMMAND / SCHUNK_WSG_STATUS (`kLcmCommandChannel`,
  `kLcmStatusChannel`).
- schunk_driver.cc, `SchunkLcmClient::HandleCommandMessage`: keeps the newest command;
  `lcm_command_` starts value-initialised, so before any command the driver asks for 0 mm at 0 N,
  and when commands stop it keeps asking for the last one, every task: there is no timeout.
- schunk_driver.cc, `SchunkLcmClient::Task`: drains LCM, then `SetPositionAndForce(
  target_position_mm, fabs(force))`; the status is the gripper's last reported opening width (mm)
  and speed (mm/s), and its force with the sign of the speed: `force` if speed > 0, else `−force`
  (so a gripper holding a part, speed 0, reports a negative force); utime is the host's clock, µs.
- position_force_control.cc, `kUpdatePeriodMs = 20`, `DoCalibrationSteps`: the gripper reports
  width, speed and force every 20 ms (`update_period`: the driver sees samples up to 20 ms old);
  calibration homes the fingers and leaves them fully open (the stroke), with zero force, and sets
  the acceleration to the gripper's maximum.
- position_force_control.cc, `SetPositionAndForce`: the target is clamped to at most the stroke and
  the force to at most the overdrive force; the gripper is re-commanded only if the commanded force
  differs from the measured force by more than `kForceDeadband` = 5 N, or the new target and the
  executing one lie on opposite sides of the current width (a reversal); otherwise the gripper is
  left alone. A re-command is `SetForceLimit(force)` and `Preposition(clamp on block, absolute,
  target, max speed)`: the fingers move at the gripper's maximum speed and acceleration and, blocked
  by a part, clamp it with the force limit. (Comparisons with NaN are false and std::min keeps a
  NaN first argument: a NaN force never triggers the force test, a NaN target never a reversal, and
  the gripper refuses either value when it is sent.)
- wsg.h, `PhysicalLimits` / `GetPhysicalLimits`: stroke, speeds, accelerations, forces are the
  gripper's; `WsgLimits` holds the WSG 50's (datasheet: 110 mm stroke, 5–80 N; 420 mm/s and
  5000 mm/s², the values Drake's SchunkWsgTrajectoryGenerator takes as the WSG 50's maxima).

The firmware's side is ours, from the WSG command set's description: Preposition runs a
trapezoidal setpoint (`TrapezoidProfile`) from the fingers' state; a force limit or a width outside
the gripper's limits is refused (E_RANGE_ERROR) and changes nothing. The model does no physics: the
physics layer follows `target` (e.g. with drivers.grippers.mechanism.schunk_wsg_pd_force) and gives
back the measured width, its rate and the grip force.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from drivers.core.schema import NonNegative, Positive
from drivers.grippers._base import GripperDriverModel
from drivers.grippers.mechanism import TrapezoidProfile
from messages.channels import SCHUNK_WSG_COMMAND, SCHUNK_WSG_STATUS

STALL_SPEED = 1e-3      # m/s: below this the fingers are not moving
BLOCK_OFFSET = 1e-3     # m: a stalled finger this far from the setpoint is blocked (clamping a part)


@dataclass
class WsgLimits:
    """A WSG's `GetPhysicalLimits()` (mm, mm/s, mm/s², N): the WSG 50's."""

    stroke_mm: Positive = 110.0
    min_speed_mm_per_s: Positive = 5.0
    max_speed_mm_per_s: Positive = 420.0
    min_acc_mm_per_ss: Positive = 100.0
    max_acc_mm_per_ss: Positive = 5000.0
    min_force: Positive = 5.0
    nominal_force: Positive = 80.0
    overdrive_force: Positive = 80.0


@dataclass
class WsgDriverConfig:
    """drake-schunk-driver's flags and constants that reach its LCM behaviour."""

    lcm_command_channel: str = SCHUNK_WSG_COMMAND     # --lcm_command_channel
    lcm_status_channel: str = SCHUNK_WSG_STATUS       # --lcm_status_channel
    task_period: Positive = 0.05         # s: main()'s usleep(50000) between tasks
    update_period: Positive = 0.02       # s: kUpdatePeriodMs, the gripper's automatic updates
    force_deadband: NonNegative = 5.0    # N: kForceDeadband
    limits: WsgLimits = field(default_factory=WsgLimits)


class WsgDriverModel(GripperDriverModel):
    """drake-schunk-driver and the WSG's Preposition, after calibration, from time 0.

    Call `on_command(data)` for each LCM message (or give `lc`), and `update(t_ns, width, speed,
    force)` every physics step with the measured width (m), its rate (m/s) and grip force (N ≥ 0);
    it runs the driver's task when one is due (then publishes one status) and sets `target`.
    `grasp_state` is "positioning" (the setpoint moves), "holding" (stalled short of the setpoint:
    blocked, clamping with the force limit) or "idle"."""

    def __init__(self, config: WsgDriverConfig | None = None, utime_offset_us: int = 0, lc=None):
        self.config = cfg = config or WsgDriverConfig()
        super().__init__(cfg.lcm_command_channel, cfg.lcm_status_channel, utime_offset_us, lc)
        lim = cfg.limits
        self.task_ns = round(cfg.task_period * 1e9)
        self.update_ns = round(cfg.update_period * 1e9)
        open_m = lim.stroke_mm / 1000.0
        self.profile = TrapezoidProfile(lim.max_speed_mm_per_s / 1000.0, lim.max_acc_mm_per_ss / 1000.0, open_m)
        self.command_values = (0.0, 0.0)            # lcm_command_{}: value-initialised
        self.executing_target_mm = 0.0              # PositionForceControl's members
        self.executing_force = 0.0
        self.force_limit = 0.0                      # the gripper's: zero after calibration
        self.sample = [lim.stroke_mm, 0.0, 0.0]     # last update: width mm, speed mm/s, force N
        self.next_task_ns = self.next_sample_ns = 0
        self.recommands = 0
        self.grasp_state = "idle"

    def on_command(self, data) -> bool:
        """HandleCommandMessage: the newest command replaces the previous one. False if dropped."""
        values = self._decode_command(data)
        if values is None:
            return False
        self.command_values = values
        return True

    def update(self, t_ns: int, width: float, speed: float, force: float) -> int:
        """Advance to t_ns with the fingers' measured state; the number of statuses published (0/1)."""
        if t_ns >= self.next_sample_ns:
            s = self.sample
            s[0], s[1], s[2] = width * 1000.0, speed * 1000.0, force
            self.next_sample_ns += self.update_ns
        published = 0
        if t_ns >= self.next_task_ns:
            self._task(t_ns, width, speed)
            self.next_task_ns += self.task_ns
            published = 1
        p = self.profile
        p.evaluate(t_ns * 1e-9)
        self.target[0], self.target[1], self.target[2] = p.position, p.velocity, self.force_limit
        self.grasp_state = ("positioning" if abs(speed) >= STALL_SPEED
                            else "holding" if abs(p.position - width) > BLOCK_OFFSET else "idle")
        return published

    def _task(self, t_ns: int, width: float, speed: float) -> None:
        """SchunkLcmClient::Task at t_ns: SetPositionAndForce, then the status."""
        lim, s = self.config.limits, self.sample
        position_mm = min(self.command_values[0], lim.stroke_mm)
        force = min(abs(self.command_values[1]), lim.overdrive_force)
        current = s[0]
        if (abs(force - s[2]) > self.config.force_deadband
                or (position_mm > current > self.executing_target_mm)
                or (position_mm < current < self.executing_target_mm)):
            self.recommands += 1
            if lim.min_force <= force <= lim.overdrive_force:       # SetForceLimit
                self.force_limit = force
            self.executing_force = force
            if 0.0 <= position_mm <= lim.stroke_mm:                  # Preposition (clamp on block)
                self._preposition(t_ns * 1e-9, position_mm / 1000.0, width, speed)
            self.executing_target_mm = position_mm
        self._publish(t_ns, s[0], s[2] if s[1] > 0 else -s[2], s[1])

    def _preposition(self, t: float, target: float, width: float, speed: float) -> None:
        """Plan the setpoint to `target` from the setpoint's state, or from the fingers at rest when
        they are blocked away from it."""
        p = self.profile
        p.evaluate(t)
        if abs(speed) < STALL_SPEED and abs(p.position - width) > BLOCK_OFFSET:
            p.plan(t, width, 0.0, target)
        else:
            p.plan(t, p.position, p.velocity, target)
