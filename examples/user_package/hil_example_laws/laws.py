"""A joint spring with gravity compensation, as a user writes one: τ = K (q_d − q) + D (v_d − v) − τ_g(q),
K and D per joint (config: controller.params.stiffness, damping). update() allocates nothing."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hil import Controller


class JointSpring(Controller):
    """A spring and damper per joint to the trajectory, on gravity compensation."""

    @dataclass
    class Params:
        stiffness: list[float] = field(default_factory=lambda: [100.0])   # N·m/rad: one value, or one per joint
        damping: list[float] = field(default_factory=lambda: [1.0])       # N·m·s/rad (D T < 2 m: light wrists)

    def on_configure(self) -> None:
        n = self.n
        self.K = np.broadcast_to(np.asarray(self.params.stiffness, dtype=float), (n,)).copy()
        self.D = np.broadcast_to(np.asarray(self.params.damping, dtype=float), (n,)).copy()
        self.tau_g, self.e = np.zeros(n), np.zeros(n)

    def update(self, state, command) -> None:
        np.subtract(state.q_d, state.q, out=self.e)
        np.multiply(self.K, self.e, out=command.tau)
        np.subtract(state.v_d, state.v, out=self.e)
        np.multiply(self.D, self.e, out=self.e)
        np.add(command.tau, self.e, out=command.tau)
        self.kernels.gravity(state.q, self.tau_g)
        np.subtract(command.tau, self.tau_g, out=command.tau)
