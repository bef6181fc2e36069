"""An admittance law on the external joint torque: the arm yields to a push and comes back.

The robot's estimate of the external torque, state.tau_external (τ_ext = Σ J_Bᵀ F_B), drives a
virtual mass-spring-damper per joint, M ẍ + D ẋ + K x = τ_ext; its state offsets the reference a
computed-torque loop tracks:

    q_r = q_d + x,  v_r = v_d + ẋ,  τ = M(q) (a_d + Kp (q_r − q) + Kd (v_r − v)) + C(q, v) v − τ_g(q) + d∘v

A push moves the reference with it (the arm yields by about K⁻¹ τ_ext); when it ends, the spring
brings the arm back to q_d at the virtual damping's pace. The virtual dynamics are integrated once
per tick (semi-implicit Euler). update() allocates nothing: every gain is an array made in
on_configure (no Python float times an array) and every operation writes with out=.

Run it in lockstep against the simulated iiwa (prints the run's summary):

    python examples/admittance.py

Its tests (a push on the wrist: it yields and returns; no push: it holds): pytest examples/test_admittance.py
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hil import Controller


class Admittance(Controller):
    """Joint-space admittance around the trajectory, tracked by computed torque."""

    @dataclass
    class Params:
        mass: list[float] = field(default_factory=lambda: [1.0])        # kg·m²: one value, or one per joint
        damping: list[float] = field(default_factory=lambda: [30.0])    # N·m·s/rad
        stiffness: list[float] = field(default_factory=lambda: [150.0])  # N·m/rad: pulls the arm back to q_d
        kp: float = 400.0                                                # 1/s²: tracking of q_d + x
        kd: float = 40.0                                                 # 1/s

    adds_bias = True          # τ includes C(q, v) v + d∘v (d: the joints' damping)

    def on_configure(self) -> None:
        n, p = self.n, self.params

        def per_joint(values):
            return np.broadcast_to(np.asarray(values, dtype=float), (n,)).copy()

        self.step_over_mass = self.period / per_joint(p.mass)        # T / M
        self.D, self.K = per_joint(p.damping), per_joint(p.stiffness)
        self.T = np.full(n, self.period)
        self.kp, self.kd = np.full(n, p.kp), np.full(n, p.kd)
        self.x, self.xd = np.zeros(n), np.zeros(n)                   # the virtual offset and its rate
        self.acc, self.tmp = np.zeros(n), np.zeros(n)

    def on_activate(self) -> None:
        self.x.fill(0.0)                                             # (re)start on the trajectory
        self.xd.fill(0.0)

    def update(self, state, command) -> None:
        # ẋ += T/M (τ_ext − D ẋ − K x);  x += T ẋ
        np.multiply(self.D, self.xd, out=self.acc)
        np.multiply(self.K, self.x, out=self.tmp)
        np.add(self.acc, self.tmp, out=self.acc)
        np.subtract(state.tau_external, self.acc, out=self.acc)
        np.multiply(self.acc, self.step_over_mass, out=self.acc)
        np.add(self.xd, self.acc, out=self.xd)
        np.multiply(self.xd, self.T, out=self.tmp)
        np.add(self.x, self.tmp, out=self.x)
        # v̇ = a_d + Kp (q_d + x − q) + Kd (v_d + ẋ − v);  τ = M v̇ + C v − τ_g
        np.add(state.q_d, self.x, out=self.tmp)
        np.subtract(self.tmp, state.q, out=self.tmp)
        np.multiply(self.kp, self.tmp, out=self.acc)
        np.add(state.v_d, self.xd, out=self.tmp)
        np.subtract(self.tmp, state.v, out=self.tmp)
        np.multiply(self.kd, self.tmp, out=self.tmp)
        np.add(self.acc, self.tmp, out=self.acc)
        np.add(self.acc, state.a_d, out=self.acc)
        self.kernels.inverse_dynamics(state.q, state.v, self.acc, command.tau)
        np.multiply(self.neg_damping, state.v, out=self.tmp)           # + d∘v, the joints' damping
        np.subtract(command.tau, self.tmp, out=command.tau)


if __name__ == "__main__":
    import json

    import hil
    from hil.testing import config_path

    summary = hil.run(config_path("iiwa"), Admittance, duration=3.0,
                      overrides={"trajectory": {"type": "hold"}, "viz": False})
    print(json.dumps({k: summary[k] for k in ("final_state", "faults", "controller", "controller_timing")},
                     indent=2))
