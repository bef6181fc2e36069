"""Deliberately wrong laws for the regression scenarios: what the safety layer must stop
(configs/scenarios/collision_*.yaml name them as `controller.type: "hil.faulty_controllers:Name"`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from drivers.core import _control

from .controller_api import Controller


class WrongTarget(Controller):
    """Ignores the trajectory and pulls every joint to its own `target` by a PD with gravity compensation,
    τ = Kp (q_target − q) − Kd v − τ_g: a law with a wrong goal, such as a sign error in a Cartesian law."""

    @dataclass
    class Params:
        target: list[float] = field(default_factory=list)               # rad, one per joint
        kp: list[float] = field(default_factory=lambda: [40.0])         # N·m/rad
        kd: list[float] = field(default_factory=lambda: [15.0])         # N·m·s/rad

    def on_configure(self) -> None:
        n, p = self.n, self.params
        if len(p.target) != n:
            raise ValueError(f"controller.params.target: {n} joint positions expected, got {len(p.target)}")
        self.target = np.asarray(p.target, dtype=float)
        self.kp = np.broadcast_to(np.asarray(p.kp, dtype=float), (n,)).copy()
        self.kd = np.broadcast_to(np.asarray(p.kd, dtype=float), (n,)).copy()
        self.zero, self.tau_g = np.zeros(n), np.zeros(n)

    def update(self, state, command) -> None:
        self.kernels.gravity(state.q, self.tau_g)
        _control.pd(state.q, state.v, self.target, self.zero, self.kp, self.kd, self.tau_g, -1.0, command.tau)
