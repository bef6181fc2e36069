"""The real robot drivers' LCM behaviour in the simulated plant (`sim.driver`, docs/sim.md).

Written from the drivers' sources, which are the specification: RobotLocomotion/drake-iiwa-driver
`kuka-driver/kuka_driver.cc` (`kuka_driver`) and RobotLocomotion/drake-franka-driver
`franka-driver/franka_driver.cc` (`franka_driver`). Each class is the driver's command handling,
firmware law and status, plugged into drivers.sim.robot.SimulatedRobot; where the real driver throws
and its process exits, the model records `DriverExit(status, message)` with the real message, stops
publishing and holds the arm (the cabinet's brakes), and `hil sim` prints the message and exits with
that status.

"Wall clock" is the driver's host clock: the wall clock in real time; in lockstep the fixed
LOCKSTEP_EPOCH_US plus the simulated time, so lockstep runs stay repeatable.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Literal, Optional

import numpy as np

from drivers.core.schema import ConfigError, NonNegative, Positive
from messages.drake import lcmt_iiwa_command, lcmt_panda_command

LOCKSTEP_EPOCH_US = 1_700_000_000_000_000      # the lockstep wall clock at simulated time 0
KUKA_SYNC_MEASUREMENTS = 200                   # TimeSyncFilter(200): utime is -1 before this many statuses
KUKA_EXT_TRQ_SCALE = (1, 1, 1, 0.5, 0.2, 0.2, 0.1)
KUKA_TORQUE_ONLY_KP = (1000, 1000, 1000, 500, 500, 500, 500)
KUKA_TORQUE_ONLY_KD = (50, 50, 50, 50, 35, 35, 35)
KUKA_JOINT_LIMITS_DEG = (170, 120, 170, 120, 170, 120, 175)
FRANKA_KD = (37.5, 50.0, 37.5, 25.0, 5.0, 3.75, 2.5)   # SetGainsForJointStiffnessErrorToTorque
FRANKA_MODE_BITS = {"status_only": 0, "position": 1, "velocity": 2, "torque": 4}
ABORT_STATUS = 134                             # an uncaught C++ exception: std::terminate → SIGABRT


@dataclass
class KukaDriverConfig:
    """kuka_driver's flags (same names and defaults), plus the Sunrise application's side."""

    time_step: Positive = 0.005       # s: FRI period, one status each
    torque_only: bool = False                    # torques only; the cabinet compensates gravity
    command_expire: Positive = 0.05   # s (torque_only): then hold
    start_command_guard: NonNegative = 0.25   # s after the first status
    ext_trq_limit: Positive = 60.0    # N·m, scaled per joint
    joint_ext_trq_limit: Optional[list[float]] = None                # 7 values; overrides ext_trq_limit
    torque_only_kp_scale: NonNegative = 1.0      # torque_only: of the holding PD's stiffness
    torque_only_kd_scale: NonNegative = 1.0      # torque_only: of the holding PD's damping
    velocity_filter_cutoff: Positive = 40.0   # Hz
    # Not flags: the Sunrise application's FRI client command mode (TORQUE: positions and torques;
    # POSITION: positions only) and how long FRI monitors before it commands.
    client_command_mode: Literal["torque", "position"] = "torque"
    monitoring: NonNegative = 0.5      # s of MONITORING (ipo NaN, arm held)


@dataclass
class FrankaDriverConfig:
    """franka_driver's flags (same names and defaults) that reach the LCM behaviour."""

    control_mode: Literal["status_only", "velocity", "position", "torque"] = "velocity"   # --control_mode
    expire_sec: NonNegative = 0.1      # |wall clock − command.utime| limit
    latch: bool = False                          # keep using the previous command when none is new
    joint_torque_limit: Positive = 100.0   # N·m: collision reflex


@dataclass
class DriverExit:
    """The driver process ended: its exit status and what it printed to stderr."""

    status: int
    message: str


def stable_gains(robot, kp: np.ndarray, kd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The driver's joint-space PD gains (N·m/rad, N·m·s/rad) capped at kp <= m/(2h)², kd <= m/(2h), m the
    joint's inertia (1/(M⁻¹)_ii, as the automatic limit gains): what the explicit step keeps stable. The
    real arms' rotor inertia, which the URDFs leave out, makes their wrists far heavier than the model's
    (the iiwa's link 7: m ≈ 10⁻³ kg·m², so kd = 35 would diverge at 1 ms)."""
    m, h = robot.joint_inertia, robot.config.time_step
    return np.minimum(kp, m / (2 * h) ** 2), np.minimum(kd, m / (2 * h))


def _iiwa_raw(data: bytes):
    """The lcm-gen decoding of a command, as the real driver's LCM does; None if LCM would drop it."""
    try:
        return lcmt_iiwa_command.decode(data)
    except (ValueError, Exception):   # struct.error included
        return None


def _panda_raw(data: bytes):
    try:
        return lcmt_panda_command.decode(data)
    except (ValueError, Exception):
        return None


class KukaDriver:
    """kuka_driver in front of FRI: status every `time_step`, utime −1 until the clocks are synchronised,
    the start-command guard, position (and torque) commands or torque_only with expiry and a
    holding PD, the external-torque safety check. Per step, u in protocol joints (robot.n = 7)."""

    name = "kuka_driver"

    def __init__(self, robot, cfg: KukaDriverConfig, path: str):
        if robot.protocol != "iiwa" or robot.n != 7:
            raise ConfigError(f"{path}", f"kuka_driver drives the iiwa protocol with 7 joints, got "
                                         f"{robot.protocol} with {robot.n}")
        self.r, self.cfg = robot, cfg
        h = robot.config.time_step
        self.period_ns = robot.config.steps(cfg.time_step, f"{path}.kuka_driver.time_step") * robot._h_ns
        if cfg.joint_ext_trq_limit is not None:
            if len(cfg.joint_ext_trq_limit) != 7:
                raise ConfigError(f"{path}.kuka_driver.joint_ext_trq_limit",
                                  "--joint_ext_trq_limit must contain 7 comma delimited values")
            self.ext_limit = np.array(cfg.joint_ext_trq_limit, dtype=float)
        else:
            self.ext_limit = cfg.ext_trq_limit * np.array(KUKA_EXT_TRQ_SCALE)
        rc = 1.0 / (2 * math.pi * cfg.velocity_filter_cutoff)
        self.alpha = 1.0 - cfg.time_step / (cfg.time_step + rc)
        self.kp, self.kd = stable_gains(robot, np.array(KUKA_TORQUE_ONLY_KP, dtype=float) * cfg.torque_only_kp_scale,
                                        np.array(KUKA_TORQUE_ONLY_KD, dtype=float) * cfg.torque_only_kd_scale)
        self.limit = np.radians(np.array(KUKA_JOINT_LIMITS_DEG, dtype=float) - 1.0)
        self.monitor_ns = round(cfg.monitoring / h) * robot._h_ns
        self.guard_ns = round(cfg.start_command_guard * 1e9)
        self.expire_us = cfg.command_expire * 1e6
        n = 7
        self.v_filtered, self.q_last, self.hold = np.zeros(n), np.zeros(n), np.zeros(n)
        self.position, self.torque, self.tmp = np.zeros(n), np.zeros(n), np.zeros(n)
        self.q_cycle, self.tau_cycle = np.zeros(n), np.zeros(n)     # what command() took this FRI cycle
        self.q_commanded, self.v_ff = np.zeros(n), np.zeros(n)
        self.cycle = -1                          # the FRI cycle command() last ran in
        self.cycle_valid = self.cycle_torque = False
        self.statuses = 0
        self.sync_diff = 0.0                     # TimeSyncFilter: host − remote, low-passed (α = 0.99)
        self.first_status_ns = -1
        self.command_started = False
        self.command_utime = -1                  # lcm_command_.utime: −1 until a command arrives
        self.has_torque = False
        self.receipt_us = 0
        self.commanding = False
        self.expired = False
        self.expirations = 0

    # --- LCM in -------------------------------------------------------------------------------
    def on_command(self, data: bytes, now_us: int) -> bool:
        """HandleCommandMessage: True if the command was stored."""
        r = self.r
        msg = _iiwa_raw(data)
        if msg is None:                          # LCM drops what does not decode as lcmt_iiwa_command
            r.commands_rejected += 1
            return False
        if not self.command_started:
            r.abort(ABORT_STATUS, "First command received within guard time.  Aborting.")
            return False
        needs_positions = not self.cfg.torque_only
        if needs_positions and msg.num_joints < 7:
            r.abort(ABORT_STATUS, f"a command with {msg.num_joints} joint positions: kuka_driver copies 7 out of "
                                  "it unchecked (undefined behaviour on the arm; the simulated driver stops)")
            return False
        values = list(msg.joint_position[:7]) + list(msg.joint_torque[:min(msg.num_torques, 7)])
        if not all(math.isfinite(x) for x in values):
            r.commands_rejected += 1             # FRI refuses non-finite values; the driver keeps the last
            return False
        if msg.num_joints >= 7:
            self.position[:] = msg.joint_position[:7]
        self.has_torque = msg.num_torques >= 7
        if self.has_torque:
            self.torque[:] = msg.joint_torque[:7]
        self.command_utime = msg.utime
        self.receipt_us = now_us
        r.commands_received += 1
        return True

    # --- firmware -------------------------------------------------------------------------------
    def held(self, t: int) -> bool:
        """FRI monitoring: the Sunrise application holds the arm, no command() callback."""
        return t < self.monitor_ns

    def actuation(self, t: int, now_us: int, q: np.ndarray, v: np.ndarray, uj: np.ndarray) -> np.ndarray:
        """KukaFRIClient::command(): u (protocol joints) for the step starting at t; the cabinet
        compensates gravity in every mode (added by the caller)."""
        r = self.r
        if not self.commanding:
            self.commanding = True
            np.copyto(self.hold, q)             # joint_position_when_command_entered_
        if t // self.period_ns != self.cycle:
            self._take_command(t // self.period_ns)
        valid = self.cycle_valid
        if self.cfg.torque_only:
            valid = valid and self.cycle_torque
            if valid and now_us - self.receipt_us > self.expire_us:
                valid = False
                if not self.expired:
                    self.expired = True
                    self.expirations += 1
                    r.log("Torque command expiration! Engaging holding controller.")
                    np.copyto(self.hold, q)
            elif valid and self.expired:
                self.expired = False
                r.log("Received fresh command. Resuming nominal control.")
            np.copyto(self.q_commanded, q)
            if valid:
                np.copyto(uj, self.tau_cycle)
                return uj
            np.subtract(q, self.hold, out=uj)    # −kp (q − q_hold) − kd v_filtered
            uj *= -self.kp
            np.multiply(self.kd, self.v_filtered, out=self.tmp)
            uj -= self.tmp
            return uj
        if valid:
            np.clip(self.q_cycle, -self.limit, self.limit, out=self.q_commanded)
        else:
            np.copyto(self.q_commanded, self.hold)
        r.impedance(self.q_commanded, self.v_ff if valid else None, uj)
        if valid and self.cycle_torque and self.cfg.client_command_mode == "torque":
            uj += self.tau_cycle
        return uj

    def _take_command(self, cycle: int) -> None:
        """KukaFRIClient::command() runs once per FRI cycle and reads the newest LCM command (the driver
        keeps only the latest): its positions and torques hold for the cycle. The interpolator's
        velocity (Drake's SimIiwaDriver differentiates the setpoint at its period; the cabinet's own
        interpolation is not public) is the change of the setpoint over the cycle, (q_k − q_{k−1})/T:
        however the commands arrived within it (a burst after a stall of either process, two
        commands microseconds apart), and 0 when none came."""
        valid = self.command_utime != -1
        if valid and self.cycle_valid and cycle == self.cycle + 1:
            np.subtract(self.position, self.q_cycle, out=self.v_ff)
            self.v_ff *= 1e9 / self.period_ns
        else:
            self.v_ff.fill(0.0)
        if valid:
            np.copyto(self.q_cycle, self.position)
            np.copyto(self.tau_cycle, self.torque)
        self.cycle, self.cycle_valid, self.cycle_torque = cycle, valid, valid and self.has_torque

    # --- status ---------------------------------------------------------------------------------
    def status(self, t: int, now_us: int, q: np.ndarray, tau_ext: np.ndarray) -> int:
        """UpdateRobotState + CheckSafety + PublishStateUpdate's guard: the utime to publish (−1 before
        the clocks are synchronised), or None when the driver aborted on the external torque."""
        if self.statuses:
            self.tmp[:] = q
            self.tmp -= self.q_last
            self.tmp *= (1.0 - self.alpha) / self.cfg.time_step
            self.v_filtered *= self.alpha
            self.v_filtered += self.tmp
        np.copyto(self.q_last, q)
        self.statuses += 1
        if np.any(np.abs(tau_ext) > self.ext_limit):
            self.r.abort(ABORT_STATUS, "Robot0 is in an unsafe state.")
            return None
        if self.first_status_ns < 0:
            self.first_status_ns = t
        self.command_started = t - self.first_status_ns >= self.guard_ns
        # UpdateRobotState: TimeSyncFilter(200) low-passes host − remote (α = 0.99, from the first
        # measurement) and stamps remote + that, −1 before 200 measurements. The remote clock is the
        # FRI timestamp (the simulated time), so utime steps by exactly the FRI period plus the
        # filter's slow drift, however late the host publishes.
        remote = t // 1000
        diff = now_us - remote
        if self.statuses == 1:
            self.sync_diff = float(diff)
        self.sync_diff += (1.0 - 0.99) * (diff - self.sync_diff)
        return remote + int(self.sync_diff) if self.statuses >= KUKA_SYNC_MEASUREMENTS else -1

    def summary(self) -> dict:
        return {"driver": self.name, "expirations": self.expirations}


class FrankaDriver:
    """franka_driver over libfranka: status every 1 ms stamped with the wall clock, the control mode's
    command checks (a mismatch ends the process), expiry against the command's utime on the wall
    clock, and each mode's behaviour without a command."""

    name = "franka_driver"

    def __init__(self, robot, cfg: FrankaDriverConfig, path: str):
        if robot.protocol != "panda" or robot.n != 7:
            raise ConfigError(f"{path}", f"franka_driver drives the panda protocol with 7 joints, got "
                                         f"{robot.protocol} with {robot.n}")
        if robot._status_period_ns != 1_000_000:
            raise ConfigError(f"{path}.time_step", "franka_driver publishes every 1 ms (libfranka's period): "
                                                   "time_step and status_period must be 0.001")
        self.r, self.cfg = robot, cfg
        self.mode = cfg.control_mode
        self.expire_us = int(cfg.expire_sec * 1e6)
        _, self.kd = stable_gains(robot, np.zeros(7), np.array(FRANKA_KD))
        n = 7
        self.position, self.velocity, self.torque = np.zeros(n), np.zeros(n), np.zeros(n)
        self.q_cmd_latest = robot.physics.q[robot._qi].copy()
        self.v_cmd, self.tmp = np.zeros(n), np.zeros(n)
        self.command = None                      # the newest lcmt_panda_command (command_)
        self.previous = None                     # command_prev_
        self.expirations = 0
        self.warned = ""

    def on_command(self, data: bytes, now_us: int) -> bool:
        """HandleCommandMessage: command_ = *command."""
        msg = _panda_raw(data)
        if msg is None:
            self.r.commands_rejected += 1
            return False
        self.command = msg
        self.r.commands_received += 1
        return True

    def _fail(self, function: str, line: int, condition: str) -> None:
        self._exception(f"Failure at franka-driver/franka_driver.cc:{line} in {function}(): "
                        f"condition '{condition}' failed.")

    def _exception(self, what: str) -> None:
        self.r.abort(0, f"[error] Control loop exception: [{what}]\n[error] Running recovery")

    def _check(self, function: str, lines: tuple, mode: str, others: tuple) -> bool:
        c = self.command
        bit = {"velocity": "VELOCITY", "position": "POSITION", "torque": "TORQUE"}[mode]
        if c.control_mode_expected != FRANKA_MODE_BITS[mode]:
            self._fail(function, lines[0], f"command_->control_mode_expected == "
                                           f"drake::lcmt_panda_status::CONTROL_MODE_{bit}")
            return False
        for line, name in zip(lines[1:], others):
            if getattr(c, f"num_joint_{name}") != 0:
                self._fail(function, line, f"command_->num_joint_{name} == 0")
                return False
        return True

    def _expired(self, now_us: int, warning: str) -> bool:
        if abs(now_us - self.command.utime) > self.expire_us:
            if self.warned != warning:
                self.r.log(f"[warning] {warning}")
                self.warned = warning
            self.expirations += 1
            self.command = self.previous = None
            return True
        self.warned = ""
        return False

    def actuation(self, t: int, now_us: int, q: np.ndarray, v: np.ndarray, uj: np.ndarray):
        """The control callback of the mode: u (protocol joints, without the gravity the robot adds)
        for the step, or None after the driver ended."""
        r, mode = self.r, self.mode
        if mode == "status_only":
            return None
        if self.command is None and self.cfg.latch:
            self.command = self.previous
        c = self.command
        if mode == "torque":
            if c is not None and self._expired(now_us, "Torque command expiration! Engaging gravity "
                                                       "compensation and damping controller."):
                c = None
            if c is None:
                np.multiply(self.kd, v, out=uj)
                uj *= -1.0
                return uj
            if not self._check("DoTorqueControl", (655, 658, 659), "torque", ("position", "velocity")):
                return None
            if c.num_joint_torque != 7:
                self._fail("DoTorqueControl", 660, "command_->num_joint_torque == kNdof")
                return None
            uj[:] = c.joint_torque
            return self._finite(uj)
        if mode == "velocity":
            self.v_cmd.fill(0.0)
            if c is not None:
                if not self._check("DoVelocityControl", (377, 380, 381), "velocity", ("position", "torque")):
                    return None
                if not self._expired(now_us, "Resetting state velocity command to zero"):
                    if c.num_joint_velocity != 7:
                        self._exception("Received command with unexpected num_joint_velocity")
                        return None
                    self.v_cmd[:] = c.joint_velocity
                    self.previous = c
            if not np.all(np.isfinite(self.v_cmd)):
                return self._finite(self.v_cmd)
            r.impedance(None, self.v_cmd, uj)
            return uj
        if c is not None:                        # position
            if not self._check("DoPositionControl", (429, 432, 433), "position", ("velocity", "torque")):
                return None
            if not self._expired(now_us, "Leaving state position command at last known command"):
                if c.num_joint_position != 7:
                    self._exception("Received command with unexpected num_joint_position")
                    return None
                if self._finite(np.asarray(c.joint_position, dtype=float)) is None:
                    return None
                self.q_cmd_latest[:] = c.joint_position
                self.previous = c
        r.impedance(self.q_cmd_latest, None, uj)
        return uj

    def _finite(self, values):
        if np.all(np.isfinite(values)):
            return values
        self._exception("libfranka: commanded values must be finite")
        return None

    def check_reflex(self, tau_ext: np.ndarray) -> bool:
        """setCollisionBehavior(joint_torque_limit): an external torque above it is a reflex, which
        ends the control loop (libfranka's ControlException); True if it did."""
        if self.mode != "status_only" and np.any(np.abs(tau_ext) > self.cfg.joint_torque_limit):
            self._exception("libfranka: Move command aborted: motion aborted by reflex! [\"jointReflex\"]")
            return True
        return False

    def command_position(self, q: np.ndarray) -> np.ndarray:
        """The status's joint_position_desired (libfranka's q_d)."""
        return self.q_cmd_latest if self.mode == "position" else q

    def command_velocity(self) -> np.ndarray:
        return self.v_cmd

    def summary(self) -> dict:
        return {"driver": self.name, "control_mode": self.mode, "expirations": self.expirations}


def wall_us(lockstep: bool, t_ns: int) -> int:
    """The driver host's clock in µs: the wall clock in real time, LOCKSTEP_EPOCH_US + t in lockstep."""
    return LOCKSTEP_EPOCH_US + t_ns // 1000 if lockstep else time.time_ns() // 1000
