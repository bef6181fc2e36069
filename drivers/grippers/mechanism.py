"""What a gripper driver model hands the physics, and the laws that share it.

A driver model (drivers.grippers.wsg, drivers.grippers.franka_hand) turns the command stream into a
target for the mechanism, `target = [w_d, ẇ_d, f_max]`: the desired distance between the fingers
(m, Drake's "width": q₁ − q₀, positive open), its rate (m/s) and the bound on the grip force (N).
The grip force is Drake's: |f₀ − f₁|, the two fingers' generalized forces together
(MultibodyForceToWsgForceSystem in manipulation/schunk_wsg/schunk_wsg_constants.h), which is also
what the WSG calls its grasping force (twice the force each finger applies to the part).

Finger coordinates (Drake's, SchunkWsgPdController in schunk_wsg_position_controller.h): q₀ the left
finger, q₁ the right, both along the body's x; q₀ = q₁ = 0 is closed at the centre, open has q₀ < 0 <
q₁; the mechanism keeps q₀ = −q₁ (our model's <mimic>, a coupler constraint).

- `TrapezoidProfile`: the setpoint a gripper's motion controller runs from its state to a target
  width under speed and acceleration limits (the WSG's Preposition at the limits the driver sets; the
  Panda hand's move/grasp at their speed), closed-form so replays are exact.
- `schunk_wsg_pd_force`: Drake's SchunkWsgPdController law (SchunkWsgPdController::CalcGeneralizedForce)
  from a target to the fingers' generalized forces, with Drake's default gains.
"""
from __future__ import annotations

import math

DRAKE_KP_COMMAND = 200.0       # N/m   SchunkWsgPdController's defaults
DRAKE_KD_COMMAND = 5.0         # N·s/m
DRAKE_KP_CONSTRAINT = 2000.0   # N/m
DRAKE_KD_CONSTRAINT = 5.0      # N·s/m
DRAKE_DEFAULT_FORCE_LIMIT = 40.0   # N: SchunkWsgPdController, SchunkWsgCommandSender, SchunkWsgCommandReceiver


def schunk_wsg_pd_force(q0: float, q1: float, v0: float, v1: float, width_desired: float,
                        width_rate_desired: float, force_limit: float = DRAKE_DEFAULT_FORCE_LIMIT,
                        kp_command: float = DRAKE_KP_COMMAND, kd_command: float = DRAKE_KD_COMMAND,
                        kp_constraint: float = DRAKE_KP_CONSTRAINT,
                        kd_constraint: float = DRAKE_KD_CONSTRAINT) -> tuple[float, float]:
    """(f₀, f₁), the fingers' generalized forces (N) of Drake's SchunkWsgPdController:

        f₀ + f₁ = −kp_c (q₀ + q₁) − kd_c (v₀ + v₁)                       (keeps the fingers centred)
        f₁ − f₀ = clamp(kp (w_d − (q₁ − q₀)) + kd (ẇ_d − (v₁ − v₀)), ±f_max)  (opens / closes)

    so the grip force |f₀ − f₁| never exceeds f_max. ValueError unless f_max > 0 (Drake demands it)."""
    if not force_limit > 0:
        raise ValueError(f"force_limit must be positive, got {force_limit}")
    centre = -kp_constraint * (q0 + q1) - kd_constraint * (v0 + v1)
    grip = kp_command * (width_desired + q0 - q1) + kd_command * (width_rate_desired + v0 - v1)
    grip = min(max(grip, -force_limit), force_limit)
    return 0.5 * (centre - grip), 0.5 * (centre + grip)


class TrapezoidProfile:
    """A width setpoint from (p₀, v₀) at t₀ to rest at p₁: |v| ≤ v_max, |a| ≤ a_max, time-optimal.

    plan(t0, p0, v0, p1) lays out at most four constant-acceleration pieces (stop if heading away
    or unable to stop in time, accelerate, cruise, decelerate); evaluate(t) sets `position` and
    `velocity`; `end` is when it comes to rest. Times in seconds, lengths in metres."""

    def __init__(self, max_speed: float, max_acceleration: float, position: float = 0.0):
        if not (max_speed > 0 and max_acceleration > 0):
            raise ValueError(f"speed and acceleration limits must be positive, got {max_speed}, "
                             f"{max_acceleration}")
        self.max_speed, self.max_acceleration = max_speed, max_acceleration
        self._t = [0.0] * 5          # piece k starts at _t[k] at _p[k] with velocity _v[k], acceleration _a[k]
        self._p = [position] * 5
        self._v = [0.0] * 5
        self._a = [0.0] * 5
        self._n = 1
        self.target = self.position = position
        self.velocity = 0.0
        self.end = 0.0

    def _piece(self, t: float, p: float, v: float, a: float, duration: float):
        """Append a piece; returns its end state (t, p, v)."""
        k = self._n
        self._t[k], self._p[k], self._v[k], self._a[k] = t, p, v, a
        self._n += 1
        return t + duration, p + v * duration + 0.5 * a * duration * duration, v + a * duration

    def plan(self, t0: float, p0: float, v0: float, p1: float) -> None:
        """Replace the profile by one from (p0, v0) at t0 to rest at p1."""
        vmax, amax = self.max_speed, self.max_acceleration
        self._n = 0
        t, p, v = t0, p0, v0
        d = p1 - p
        if v != 0.0 and (v * d <= 0.0 or v * v / (2.0 * amax) > abs(d)):   # away, or cannot stop in time
            t, p, v = self._piece(t, p, v, -math.copysign(amax, v), abs(v) / amax)
            v = 0.0
            d = p1 - p
        s = math.copysign(1.0, d)
        u0, distance = abs(v), abs(d)
        peak = min(vmax, math.sqrt(amax * distance + 0.5 * u0 * u0))
        t_up = abs(peak - u0) / amax
        d_up = 0.5 * (peak + u0) * t_up
        t_down = peak / amax
        d_cruise = max(0.0, distance - d_up - 0.5 * peak * t_down)
        if distance > 0.0:
            t, p, v = self._piece(t, p, v, s * math.copysign(amax, peak - u0), t_up)
            if d_cruise > 0.0:
                t, p, v = self._piece(t, p, s * peak, 0.0, d_cruise / peak)
            t, p, v = self._piece(t, p, s * peak, -s * amax, t_down)
        self._piece(t, p1, 0.0, 0.0, 0.0)      # at rest at the target
        self.target, self.end = p1, t
        self.evaluate(t0)

    def evaluate(self, t: float) -> None:
        """Set `position` and `velocity` at time t (held at the start before t0, at rest after `end`)."""
        k = self._n - 1
        while k > 0 and self._t[k] > t:
            k -= 1
        dt = max(0.0, t - self._t[k])
        a = self._a[k]
        self.position = self._p[k] + self._v[k] * dt + 0.5 * a * dt * dt
        self.velocity = self._v[k] + a * dt

    def hold(self, t: float, position: float) -> None:
        """Rest at `position` from t on (a stop)."""
        self._n = 0
        self._piece(t, position, 0.0, 0.0, 0.0)
        self.target, self.end, self.position, self.velocity = position, t, position, 0.0
