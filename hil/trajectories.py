"""Trajectory sources: each writes the desired q_d, v_d, a_d at time t into preallocated arrays.

`start(q, t_ns)` anchors a source at the measured position when control starts (or restarts after a
fault); `sample(t_ns, q_d, v_d, a_d)` is called every tick and allocates nothing; `error` is None, or
why the source cannot deliver its trajectory (the loop faults with it).
"""
from __future__ import annotations

import bisect
import logging

import numpy as np

from drivers.core import _control
from drivers.core.config import SafetyConfig, TrajectoryConfig
from drivers.core.robot import joint_label
from drivers.core.schema import ConfigError
from messages import lcmt_hil_joint_plan, lcmt_robot_state
from messages.validation import MessageDecoder

log = logging.getLogger(__name__)


def _goal(values, n: int, key: str, lower, upper, names=None) -> np.ndarray:
    q = np.array(values, dtype=float)
    if q.shape != (n,):
        raise ConfigError(key, f"needs {n} joint positions, got {q.size}")
    outside = np.flatnonzero((q < lower) | (q > upper))
    if outside.size:
        i = outside[0]
        raise ConfigError(key, f"{joint_label(names, i)} goal {q[i]:.4g} rad is outside its limits "
                               f"[{lower[i]:.4g}, {upper[i]:.4g}]")
    return q


class Source:
    """What every source has besides start() and sample(): `error`, None while it can deliver."""

    error: str | None = None


class Hold(Source):
    """q_d = the position at start."""

    def __init__(self, n: int):
        self.q0 = np.zeros(n)

    def start(self, q, t_ns: int) -> None:
        self.q0[:] = q

    def sample(self, t_ns: int, q_d, v_d, a_d) -> None:
        _control.quintic(self.q0, self.q0, 0.0, 1.0, q_d, v_d, a_d)   # s = 0: q_d = q0, v_d = a_d = 0


# Peaks of the rest-to-rest quintic s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ over a move Δ in time T:
# |v| ≤ 15/8 |Δ|/T and |a| ≤ 10/√3 |Δ|/T².
QUINTIC_PEAK_VELOCITY = 15.0 / 8.0
QUINTIC_PEAK_ACCELERATION = 10.0 / np.sqrt(3.0)


def feasible_duration(delta: np.ndarray, duration: float, v_max: np.ndarray, a_max: np.ndarray) -> float:
    """The shortest duration ≥ `duration` at which a quintic move by `delta` stays within the
    velocity and acceleration limits."""
    d = np.abs(delta)
    t_v = np.max(QUINTIC_PEAK_VELOCITY * d / v_max)
    t_a = np.sqrt(np.max(QUINTIC_PEAK_ACCELERATION * d / a_max))
    return float(max(duration, t_v, t_a))


class Waypoints(Source):
    """Rest-to-rest quintic segments from the start position through each waypoint in turn; with
    `loop`, back to the start and again. A segment too short for the joint velocity or acceleration
    limits (v_max, a_max) is stretched to the shortest feasible duration, with a warning. `track`: the
    gripper track, a row [width m, force N or NaN] per waypoint (NaN width: no command), which the
    loop's gripper (hil.gripper) applies as `segment` k begins; `segments` counts the segment changes."""

    def __init__(self, goals: list[np.ndarray], durations: list[float], loop: bool,
                 v_max: np.ndarray | None = None, a_max: np.ndarray | None = None, track: np.ndarray | None = None):
        n = goals[0].shape[0]
        self.goals, self.loop, self.track, self.segments = goals, loop, track, 0
        self.v_max = np.full(n, np.inf) if v_max is None else v_max
        self.a_max = np.full(n, np.inf) if a_max is None else a_max
        self.durations_ns = [int(round(d * 1e9)) for d in durations]
        self.starts = np.zeros((len(goals) + 1, n))
        self.deltas = np.zeros((len(goals) + 1, n))
        self.q0, self.dq = np.zeros(n), np.zeros(n)
        self.t0, self.segment = 0, 0
        self.ends_ns: list[int] = []

    def start(self, q, t_ns: int) -> None:
        points = [np.array(q, dtype=float)] + self.goals + ([np.array(q, dtype=float)] if self.loop else [])
        durations = self.durations_ns + ([self.durations_ns[0]] if self.loop else [])
        self.starts = np.array(points[:-1])
        self.deltas = np.array([b - a for a, b in zip(points[:-1], points[1:])])
        for i, (delta, d_ns) in enumerate(zip(self.deltas, durations)):
            need = feasible_duration(delta, d_ns * 1e-9, self.v_max, self.a_max)
            if need > d_ns * 1e-9:
                log.warning("trajectory segment %d: %.3f s would exceed the joint velocity or acceleration "
                            "limits; slowed to %.3f s", i, d_ns * 1e-9, need)
                durations[i] = int(np.ceil(need * 1e9))
        self.ends_ns = [int(x) for x in np.cumsum(durations)]
        self.seg_durations = [d * 1e-9 for d in durations]
        self.t0, self.segment = t_ns, -1

    @property
    def duration_ns(self) -> int:
        return int(self.ends_ns[-1]) if self.ends_ns else 0

    def sample(self, t_ns: int, q_d, v_d, a_d) -> None:
        t = t_ns - self.t0
        if self.loop and t >= self.ends_ns[-1]:
            t %= self.ends_ns[-1]
        k = min(bisect.bisect_right(self.ends_ns, t), len(self.ends_ns) - 1)
        if k != self.segment:
            self.segment = k
            self.segments += 1
            _control.copy_row(self.starts, k, self.q0)
            _control.copy_row(self.deltas, k, self.dq)
        begin = self.ends_ns[k - 1] if k > 0 else 0
        _control.quintic(self.q0, self.dq, (t - begin) * 1e-9, self.seg_durations[k], q_d, v_d, a_d)


class Sampled(Source):
    """A precomputed trajectory at the loop period: row k of Q, V, A is the desired state at t0 + k·dt
    (the last row is held after the end)."""

    def __init__(self, Q: np.ndarray, V: np.ndarray, A: np.ndarray, period_ns: int):
        self.Q, self.V, self.A = (np.ascontiguousarray(x, dtype=float) for x in (Q, V, A))
        self.period_ns, self.t0 = period_ns, 0

    @property
    def duration_ns(self) -> int:
        return (self.Q.shape[0] - 1) * self.period_ns

    def start(self, q, t_ns: int) -> None:
        self.t0 = t_ns

    def sample(self, t_ns: int, q_d, v_d, a_d) -> None:
        k = min(max((t_ns - self.t0) // self.period_ns, 0), self.Q.shape[0] - 1)
        _control.copy_row(self.Q, k, q_d)
        _control.copy_row(self.V, k, v_d)
        _control.copy_row(self.A, k, a_d)


class Stream(Source):
    """Follows desired states streamed on LCM: lcmt_robot_state (positions; v_d = a_d = 0) or
    lcmt_hil_joint_plan (knots interpolated as the plan says; a plan starts at its start_utime, or
    on receipt). Before anything arrives, and after a plan ends, it holds the last desired position
    (initially the start position)."""

    def __init__(self, lc, channel: str, kind: str, joint_names: list[str]):
        self.n, self.kind, self.joint_names = len(joint_names), kind, joint_names
        self.hold, self.zero = np.zeros(self.n), np.zeros(self.n)
        self.knots = [np.zeros(self.n) for _ in range(6)]     # p0, v0, a0, p1, v1, a1 of the segment
        self.plan = None
        self.plan_t0, self.pending_start, self.segment = 0, False, -1
        self.rejected = 0
        msg_type = lcmt_robot_state if kind == "robot_state" else lcmt_hil_joint_plan
        self.decoder = MessageDecoder(msg_type, channel=channel)
        self.subscription = lc.subscribe(channel, self._on_message)

    def start(self, q, t_ns: int) -> None:
        self.hold[:] = q

    def _reject(self, channel: str, why) -> None:
        self.rejected += 1
        log.warning("rejected a message on %s: %s", channel, why)

    def _on_message(self, channel: str, data: bytes) -> None:
        msg = self.decoder.decode(data)
        if msg is None:
            return self._reject(channel, self.decoder.last_error)
        names = list(msg.joint_name if self.kind == "robot_state" else msg.joint_names)
        if names and names != self.joint_names:
            return self._reject(channel, f"joints {names} do not match the robot's {self.joint_names}")
        if self.kind == "robot_state":
            self.plan = None
            self.hold[:] = msg.joint_position
            return
        if msg.num_knots < 2:
            return self._reject(channel, f"a plan needs at least 2 knots, got {msg.num_knots}")
        times = [int(t) * 1000 for t in msg.knot_time_us]
        if any(b <= a for a, b in zip(times, times[1:])):
            return self._reject(channel, "knot times must increase strictly")
        order = {msg.FIRST_ORDER_HOLD: 1, msg.CUBIC_HERMITE: 3, msg.QUINTIC_HERMITE: 5}.get(msg.interpolation)
        if order is None:
            return self._reject(channel, f"unknown interpolation {msg.interpolation}")
        self.plan = (times, np.array(msg.position, dtype=float), np.array(msg.velocity, dtype=float),
                     np.array(msg.acceleration, dtype=float), order)
        self.plan_t0 = msg.start_utime * 1000
        self.pending_start, self.segment = msg.start_utime == 0, -1

    def sample(self, t_ns: int, q_d, v_d, a_d) -> None:
        if self.plan is None:
            _control.quintic(self.hold, self.zero, 0.0, 1.0, q_d, v_d, a_d)
            return
        times, P, V, A, order = self.plan
        if self.pending_start:
            self.plan_t0, self.pending_start = t_ns, False
        t = t_ns - self.plan_t0
        k = max(bisect.bisect_right(times, t) - 1, 0)
        if k >= len(times) - 1:
            _control.copy_row(P, len(times) - 1, self.hold)
            self.plan = None
            _control.quintic(self.hold, self.zero, 0.0, 1.0, q_d, v_d, a_d)
            return
        if k != self.segment:
            self.segment = k
            for i, (X, row) in enumerate(((P, k), (V, k), (A, k), (P, k + 1), (V, k + 1), (A, k + 1))):
                _control.copy_row(X, row, self.knots[i])
        p0, v0, a0, p1, v1, a1 = self.knots
        _control.hermite(p0, v0, a0, p1, v1, a1, (times[k + 1] - times[k]) * 1e-9, (t - times[k]) * 1e-9, order,
                         q_d, v_d, a_d)


class CartesianMove(Source):
    """A straight-line move of a frame to the goal pose X_WG, planned from the position at start with IK
    and timed time-optimally under the joint velocity and acceleration limits (planning's
    plan_cartesian_move), then sampled at the loop period. Planning takes tens of milliseconds: with
    `background` it runs in a thread while this source holds the start position, and the move begins
    on the first tick after it is ready; otherwise (lockstep) it runs in start(). If planning fails,
    the source keeps holding and `error` says why (the loop then faults)."""

    def __init__(self, plant, frame, X_WG, period_ns: int, scales: tuple, background: bool,
                 position_margin: float = 0.0):
        self.plant, self.frame, self.X_WG, self.period_ns = plant, frame, X_WG, period_ns
        self.position_margin = position_margin
        self.scales, self.background = scales, background      # velocity, acceleration, effort (or None)
        self.hold = Hold(plant.num_velocities())
        self.plan: Sampled | None = None
        self.started = False

    def start(self, q, t_ns: int) -> None:
        self.hold.start(q, t_ns)
        self.plan, self.started, self.error = None, False, None
        if self.background:
            import threading
            threading.Thread(target=self._plan, args=(np.array(q, dtype=float),), daemon=True).start()
        else:
            self._plan(np.array(q, dtype=float))

    def _plan(self, q0: np.ndarray) -> None:
        from dynamics_cy.planning.cartesian import plan_cartesian_move
        try:
            traj = plan_cartesian_move(self.plant, q0, self.frame, self.X_WG, velocity_scale=self.scales[0],
                                       acceleration_scale=self.scales[1], effort_scale=self.scales[2],
                                       position_margin=self.position_margin)
        except (RuntimeError, ValueError) as e:
            self.error = str(e)
            return
        dt = self.period_ns * 1e-9
        times = np.arange(int(np.ceil(traj.end_time() / dt)) + 1) * dt
        Q = np.array([traj.value(min(t, traj.end_time()))[:, 0] for t in times])
        V = np.array([traj.EvalDerivative(min(t, traj.end_time()), 1)[:, 0] for t in times])
        A = np.array([traj.EvalDerivative(min(t, traj.end_time()), 2)[:, 0] for t in times])
        V[-1] = A[-1] = 0.0
        self.plan = Sampled(Q, V, A, self.period_ns)
        log.info("cartesian trajectory planned: %.3f s", traj.end_time())

    @property
    def duration_ns(self) -> int:
        return self.plan.duration_ns if self.plan is not None else 0

    def sample(self, t_ns: int, q_d, v_d, a_d) -> None:
        plan = self.plan
        if plan is None:
            self.hold.sample(t_ns, q_d, v_d, a_d)
            return
        if not self.started:
            plan.start(None, t_ns)
            self.started = True
        plan.sample(t_ns, q_d, v_d, a_d)


def make_trajectory(cfg: TrajectoryConfig, plant, joint_names: list[str], lc, period_ns: int, frame=None,
                    background: bool = True, safety: SafetyConfig | None = None):
    """The trajectory source the config names. Moves stay inside what the loop's safety checks allow:
    velocities within safety.velocity_scale × the model's limits, a planned move's waypoints
    safety.position_margin (plus 0.02 rad for the spline between them) inside the joint limits and its
    torques within safety.effort_scale × the effort limits (when trajectory.effort_scale is set)."""
    safety = safety or SafetyConfig(position_margin=0.0)
    n = plant.num_velocities()
    lower, upper = plant.GetPositionLowerLimits(), plant.GetPositionUpperLimits()
    v_scale = min(1.0, safety.velocity_scale)
    v_max = v_scale * np.minimum(-plant.GetVelocityLowerLimits(), plant.GetVelocityUpperLimits())
    a_max = np.minimum(-plant.GetAccelerationLowerLimits(), plant.GetAccelerationUpperLimits())
    if cfg.type == "hold":
        return Hold(len(joint_names) or n)          # (a floating base's: its joints)
    if cfg.type == "quintic":
        if cfg.goal is None:
            raise ConfigError("trajectory.goal", "is required for a quintic move")
        goal = _goal(cfg.goal, n, "trajectory.goal", lower, upper, joint_names)
        return Waypoints([goal], [cfg.duration], False, v_max, a_max)
    if cfg.type == "waypoints":
        if not cfg.waypoints:
            raise ConfigError("trajectory.waypoints", "needs at least one waypoint")
        goals = [_goal(w.q, n, f"trajectory.waypoints[{i}].q", lower, upper, joint_names)
                 for i, w in enumerate(cfg.waypoints)]
        track = None
        if any(w.gripper is not None for w in cfg.waypoints):
            track = np.array([[np.nan, np.nan] if w.gripper is None else
                              [w.gripper.width, np.nan if w.gripper.force is None else w.gripper.force]
                              for w in cfg.waypoints])
        return Waypoints(goals, [w.duration for w in cfg.waypoints], cfg.loop, v_max, a_max, track)
    if cfg.type == "excitation":
        from .excitation import make_excitation
        return make_excitation(cfg.excitation, plant, frame, lower, upper, v_max, a_max, safety, background)
    if cfg.type == "stream":
        if not cfg.channel:
            raise ConfigError("trajectory.channel", "is required for a streamed trajectory")
        return Stream(lc, cfg.channel, cfg.stream_type, joint_names)
    if cfg.goal_position is None:
        raise ConfigError("trajectory.goal_position", "is required for a cartesian move")
    from dynamics_cy import RigidTransform, RollPitchYaw
    X_WG = RigidTransform(RollPitchYaw(cfg.goal_rpy or [0.0, 0.0, 0.0]), cfg.goal_position)
    effort_scale = None if cfg.effort_scale is None else cfg.effort_scale * safety.effort_scale
    return CartesianMove(plant, frame, X_WG, period_ns, (v_scale * cfg.velocity_scale, cfg.acceleration_scale,
                                                         effort_scale), background, safety.position_margin + 0.02)
