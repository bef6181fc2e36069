"""Safety, in one place: the state machine, its checks, and the safe command.

States (lcmt_hil_safety_event's SAFETY_*): INIT (waiting for a valid status) → RUNNING (the
controller commands) → FAULT (a check failed: the safe command is sent; with `recover`, RUNNING
again once the cause has been clear and every joint slower than `recover_max_speed` for
`recover_after_periods` ticks in a row, since the trajectory restarts from rest) and SAFE_STOP
(e-stop latched: the safe command until it is released, then INIT). The safe command is zero
torque or damping (τ = −d∘v), per config; the loop adds gravity compensation (−τ_g) to damping
unless the robot compensates gravity itself, so that a safe arm is held and slowed, not dropped.
Every command, safe or not, is saturated to the effort limits and rate-limited against the
previous one. Checks run every tick; none raises. With a collision guard (hil.collision_guard, set by
the loop as `collision`), a pair below its stop distance is FAULT COLLISION_IMMINENT.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from drivers.core import _control
from drivers.core.config import SafetyConfig
from drivers.core.robot import joint_label
from messages import lcmt_hil_estop
from messages.enums import FaultCode, SafetyState
from messages.validation import MessageDecoder

from .controllers import gains
from .sketch import HeadTail


class Transition(NamedTuple):
    """One change of the safety state, as lcmt_hil_safety_event carries it."""
    previous: SafetyState
    state: SafetyState
    fault: FaultCode
    text: str

    def describe(self) -> str:
        """'RUNNING -> FAULT [JOINT_LIMIT]: iiwa_joint_4 at ...' (the fault only when there is one)."""
        reason = f" [{self.fault.name}]" if self.fault != FaultCode.NONE else ""
        return f"{self.previous.name} -> {self.state.name}{reason}: {self.text}"


class SafetyMonitor:
    """The loop's safety state machine and checks for one robot's actuated joints: the plant's last
    `joints` positions and velocities (default: all; a floating base's come first), limits from the
    plant; the fault texts name joint i `joint_names[i]`."""

    def __init__(self, plant, cfg: SafetyConfig, period_ns: int, lc=None, estop_channel: str | None = None,
                 joints: int | None = None, joint_names: list[str] | None = None):
        nq, nv = plant.num_positions(), plant.num_velocities()
        n = nv if joints is None else joints
        self.cfg, self.n, self.period_ns = cfg, n, period_ns
        self.joint_names = joint_names
        self.state = SafetyState.INIT
        self.fault, self.fault_text = FaultCode.NONE, ""
        lo, hi = plant.GetPositionLowerLimits()[nq - n:], plant.GetPositionUpperLimits()[nq - n:]
        self.q_lo, self.q_hi = lo + cfg.position_margin, hi - cfg.position_margin
        vmax = np.minimum(-plant.GetVelocityLowerLimits(), plant.GetVelocityUpperLimits())[nv - n:] * cfg.velocity_scale
        self.v_lo, self.v_hi = -vmax, vmax
        effort = np.full(n, np.inf)
        for a in plant._actuators:
            effort[a.joint().velocity_start() - (nv - n)] = a.effort_limit()
        self.effort = effort * cfg.effort_scale
        self.max_step = cfg.torque_rate_limit * period_ns * 1e-9
        self.damping = gains(cfg.damping, n, "safety.damping") if cfg.on_fault == "damping" else np.zeros(n)
        self.zero = np.zeros(n)
        self.prev_tau = np.zeros(n)
        self.commanded = False
        self.clear_ticks = 0
        self.rest_hi = np.full(n, cfg.recover_max_speed)
        self.rest_lo = -self.rest_hi
        self.saturated_ticks = 0
        self.faults_seen = HeadTail()       # (tick, robot utime, fault, reason): first and last, per-kind counts
        self.utime = 0                      # the robot's clock (newest status utime), for the records
        self.estop_latched = False
        self.estop_text = ""
        self.controller_latched = False     # a controller or trajectory failure: no automatic recovery
        self.collision = None               # hil.collision_guard.CollisionGuard: COLLISION_IMMINENT (the loop sets it)
        # (FaultCode, why) of a device beside the robot (hil.gripper's lost link), set by the loop each tick:
        # a fault while it lasts, as the robot's own checks
        self.device_fault = None
        self.estop_subscription = None
        if lc is not None and estop_channel:
            self._estop = MessageDecoder(lcmt_hil_estop, channel=estop_channel)
            self.estop_subscription = lc.subscribe(estop_channel, self._on_estop)

    def _on_estop(self, channel: str, data: bytes) -> None:
        msg = self._estop.decode(data)
        if msg is None:
            # A garbled e-stop message is treated as a press: the safe side.
            self.estop_latched, self.estop_text = True, f"unreadable e-stop message: {self._estop.last_error}"
            return
        self.estop_latched = bool(msg.latched)
        self.estop_text = f"e-stop {'pressed' if msg.latched else 'released'} by {msg.source}: {msg.reason}"

    def _to(self, state: SafetyState, fault: FaultCode, text: str, tick: int) -> Transition:
        previous = self.state
        self.state, self.fault, self.fault_text = state, fault, text
        if fault != FaultCode.NONE:
            self.faults_seen.append((tick, self.utime, fault.name, text), fault.name)
        return Transition(previous, state, fault, text)

    def check(self, tick: int, status_age_ticks: int, status_ok: bool, q, v, tracking_error: float):
        """Runs the checks on this tick's state; returns a Transition when the state changed, else None.

        status_age_ticks counts the ticks since the last valid status (0: fresh this tick)."""
        if self.estop_latched:
            if self.state != SafetyState.SAFE_STOP:
                return self._to(SafetyState.SAFE_STOP, FaultCode.ESTOP, self.estop_text, tick)
            return None
        if self.state == SafetyState.SAFE_STOP:
            return self._to(SafetyState.INIT, FaultCode.NONE, self.estop_text, tick)
        fault, text = self._find_fault(status_age_ticks, status_ok, q, v, tracking_error)
        if fault == FaultCode.NONE and self.device_fault is not None:
            fault, text = self.device_fault
        if self.state == SafetyState.INIT:
            if status_ok and fault == FaultCode.NONE:
                return self._to(SafetyState.RUNNING, FaultCode.NONE, "first valid status", tick)
            if status_ok:
                return self._to(SafetyState.FAULT, fault, text, tick)
            return None
        if self.state == SafetyState.RUNNING:
            return self._to(SafetyState.FAULT, fault, text, tick) if fault != FaultCode.NONE else None
        # FAULT
        if self.controller_latched:
            return None
        if fault != FaultCode.NONE or _control.first_outside(v, self.rest_lo, self.rest_hi) >= 0:
            self.clear_ticks = 0
            return None
        self.clear_ticks += 1
        if self.cfg.recover and self.clear_ticks >= self.cfg.recover_after_periods:
            self.clear_ticks = 0
            return self._to(SafetyState.RUNNING, FaultCode.NONE, f"recovered from {self.fault.name}", tick)
        return None

    def _find_fault(self, age: int, status_ok: bool, q, v, tracking_error: float):
        if age >= self.cfg.status_timeout_periods:
            return FaultCode.STATUS_TIMEOUT, f"no valid status for {age} periods " \
                                             f"(limit {self.cfg.status_timeout_periods})"
        if not status_ok:
            return FaultCode.NONE, ""
        found = _control.check_state(q, v, self.q_lo, self.q_hi, self.v_lo, self.v_hi)
        if found != _control.STATE_OK:
            kind, i = found % _control.STATE_KINDS, found // _control.STATE_KINDS
            name = joint_label(self.joint_names, i)
            if kind in (_control.Q_NONFINITE, _control.V_NONFINITE):
                what = "position" if kind == _control.Q_NONFINITE else "velocity"
                return FaultCode.STATUS_INVALID, f"non-finite {what} of {name}"
            if kind == _control.Q_OUTSIDE:
                return FaultCode.JOINT_LIMIT, f"{name} at {q[i]:.4f} rad is outside [{self.q_lo[i]:.4f}, " \
                                              f"{self.q_hi[i]:.4f}] (limits minus the margin)"
            return FaultCode.VELOCITY_LIMIT, f"{name} at {v[i]:.4f} rad/s exceeds {self.v_hi[i]:.4f}"
        if self.collision is not None and self.collision.check(q):
            return FaultCode.COLLISION_IMMINENT, self.collision.text()
        limit = self.cfg.max_tracking_error
        if limit is not None and tracking_error > limit:
            return FaultCode.CONTROLLER, f"tracking error {tracking_error:.4f} rad exceeds {limit}"
        return FaultCode.NONE, ""

    def controller_failed(self, tick: int, why: str) -> Transition:
        """A controller produced a non-finite torque or raised, or the trajectory cannot be delivered:
        FAULT and the safe command until the loop is restarted (software faults do not clear)."""
        self.controller_latched = True
        return self._to(SafetyState.FAULT, FaultCode.CONTROLLER, why, tick)

    def status_unusable(self, tick: int, why: str) -> Transition:
        """The statuses cannot be trusted as one robot's (two streams interleave): FAULT [STATUS_INVALID]
        and the safe command, latched until the loop is restarted."""
        self.controller_latched = True
        return self._to(SafetyState.FAULT, FaultCode.STATUS_INVALID, why, tick)

    def station_stopped(self, tick: int, why: str) -> Transition:
        """Another arm of the station faulted and its policy stops every arm (hil.station, on_fault
        stop_all): FAULT [STATION] and the safe command, latched until the station is restarted."""
        self.controller_latched = True
        return self._to(SafetyState.FAULT, FaultCode.STATION, why, tick)

    @property
    def commanding(self) -> bool:
        """Whether the controller's torque is sent (else the safe command)."""
        return self.state == SafetyState.RUNNING

    def cap_damping(self, inertia, period_ns: int) -> list[int]:
        """Caps the damping safe command's gains at d_i <= m_i / T: a velocity feedback held for a status
        period T (the loop's, when that is longer) is stable only below 2 m_i / T (m_i the inertia joint i
        sees, 1/(M⁻¹)_ii), and does not overshoot below m_i / T. The iiwa's link 7 (m ≈ 10⁻³ kg·m²) at a
        200 Hz status allows 0.2 N·m·s/rad, not the default 5. Returns the joints capped."""
        cap = np.asarray(inertia) / (period_ns * 1e-9)
        capped = [int(i) for i in np.flatnonzero(self.damping > cap)]
        np.minimum(self.damping, cap, out=self.damping)
        return capped

    def safe_command(self, v, out) -> None:
        """Zero torque, or damping τ = −d∘v (v = 0 when the status is not finite)."""
        if _control.first_nonfinite(v) >= 0:
            _control.damping(self.zero, self.zero, self.zero, 0.0, out)
        else:
            _control.damping(v, self.damping, self.zero, 0.0, out)

    def limit(self, tau, out) -> int:
        """Saturates to the effort limits and rate-limits against the previous command (the first
        command of a run has none: it is only saturated); returns the entries at the effort limit."""
        if not self.commanded:
            _control.saturate(tau, self.prev_tau, self.effort, np.inf, self.prev_tau)
            self.commanded = True
        hit = _control.saturate(tau, self.prev_tau, self.effort, self.max_step, out)
        if hit:
            self.saturated_ticks += 1
        return hit

