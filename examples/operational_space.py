"""Operational-space control (task-space inverse dynamics) of the hand's position, with a posture
task in its null space, on the law's own allocation-free dynamics kernels.

The hand E goes to `goal` G. With J its translational Jacobian, Λ = (J M⁻¹ Jᵀ)⁻¹ and J̄ = M⁻¹ Jᵀ Λ:

    a* = Kp (G − p) − Kd J v − J̇ v
    τ  = Jᵀ Λ a* + C(q, v) v − τ_g(q) + d∘v + (I − Jᵀ J̄ᵀ) M (K₀ (q_d − q) + D₀ (v_d − v))

so the hand accelerates as p̈ = a*, a critically damped spring to G (Kd = 2 √Kp) whatever the arm's
inertia: it goes straight there. The posture (the trajectory's q_d) acts only in the joint motions
that leave the hand where it is. The stack's allocation-free helpers do the linear algebra: the
Cholesky factor of M (Kernels.mass_matrix_cholesky) gives J M⁻¹ and Λ in one call
(dynamics_cy.linalg.operational_space_inertia); and as J̄ᵀ M a₀ = Λ J a₀, with a₀ = K₀ (q_d − q) +
D₀ (v_d − v) the law is

    τ = Jᵀ Λ (a* − J a₀) + [M a₀ + C v − τ_g] + d∘v,   the bracket one inverse_dynamics(q, v, a₀).

Start away from the stretched arm's singularity, where Λ is unbounded (a DynamicsError there, which
the loop turns into a CONTROLLER fault; operational_space_inertia's damping bounds it instead).

Run it (lockstep, the simulated iiwa): python examples/operational_space.py
Its tests: pytest examples/test_operational_space.py
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from dynamics_cy import linalg
from hil import Controller


class OperationalSpace(Controller):
    """The hand's position by operational-space control; the trajectory's q_d as a null-space posture."""

    @dataclass
    class Params:
        goal: Optional[list[float]] = None   # m, p_WG; None: where the hand is at the start
        kp: float = 9.0              # 1/s²: hand position (more drives the light wrist past its speed limit)
        kd: float = 6.0              # 1/s: 2 √kp
        posture_kp: float = 25.0     # 1/s²: joints, in the null space
        posture_kd: float = 10.0     # 1/s

    adds_bias = True                 # τ includes C(q, v) v + d∘v (d: the joints' damping)

    def on_configure(self) -> None:
        n, p = self.n, self.params
        self.hold = p.goal is None
        self.G = np.zeros(3) if self.hold else np.array(p.goal, dtype=float)
        self.kp, self.kd = np.full(3, p.kp), np.full(3, p.kd)
        self.k0, self.d0 = np.full(n, p.posture_kp), np.full(n, p.posture_kd)
        self.J6, self.Jdv6, self.X = np.zeros((6, n)), np.zeros(6), np.zeros((4, 4))
        self.J, self.Jdv, self.p = self.J6[3:], self.Jdv6[3:], self.X[:3, 3]   # views: translation
        self.a, self.e, self.f = np.zeros(3), np.zeros(3), np.zeros(3)
        self.L, self.JMinv, self.Lam = np.zeros((n, n)), np.zeros((3, n)), np.zeros((3, 3))
        self.a0, self.tmp = np.zeros(n), np.zeros(n)
        self.restart = True

    def on_activate(self) -> None:
        self.restart = True          # with no goal, G is where the hand is at the next update

    def update(self, state, command) -> None:
        q, v, k = state.q, state.v, self.kernels
        k.frame_pose(q, self.end_effector, self.X)
        k.frame_jacobian_bias(q, v, self.end_effector, self.J6, self.Jdv6)
        if self.restart and self.hold:
            np.copyto(self.G, self.p)
        self.restart = False
        # a* = Kp (G − p) − Kd J v − J̇ v
        np.subtract(self.G, self.p, out=self.e)
        np.multiply(self.kp, self.e, out=self.a)
        np.dot(self.J, v, out=self.e)
        np.multiply(self.kd, self.e, out=self.e)
        np.subtract(self.a, self.e, out=self.a)
        np.subtract(self.a, self.Jdv, out=self.a)
        # M = L Lᵀ; J M⁻¹ and Λ = (J M⁻¹ Jᵀ)⁻¹
        k.mass_matrix_cholesky(q, self.L)
        linalg.operational_space_inertia(self.L, self.J, self.JMinv, self.Lam)
        # a₀ = K₀ (q_d − q) + D₀ (v_d − v); τ = M a₀ + C v − τ_g + d∘v + Jᵀ Λ (a* − J a₀)
        np.subtract(state.q_d, q, out=self.tmp)
        np.multiply(self.k0, self.tmp, out=self.a0)
        np.subtract(state.v_d, v, out=self.tmp)
        np.multiply(self.d0, self.tmp, out=self.tmp)
        np.add(self.a0, self.tmp, out=self.a0)
        k.inverse_dynamics(q, v, self.a0, command.tau)
        np.multiply(self.neg_damping, v, out=self.tmp)               # + d∘v, the joints' damping
        np.subtract(command.tau, self.tmp, out=command.tau)
        np.dot(self.J, self.a0, out=self.e)
        np.subtract(self.a, self.e, out=self.e)
        np.dot(self.Lam, self.e, out=self.f)
        np.dot(self.f, self.J, out=self.tmp)
        np.add(command.tau, self.tmp, out=command.tau)


if __name__ == "__main__":
    from hil.testing import config_path, simulate

    start = {"trajectory": {"type": "hold"}, "sim": {"initial_positions": [0, 0.6, 0, -1.2, 0, 0.8, 0]}}
    run = simulate(config_path("iiwa"), OperationalSpace({"goal": [0.5, 0.2, 0.6]}), duration=3.0, overrides=start)
    print(run.final_state, "hand from", run.frame_positions()[0].round(4), "to", run.frame_positions()[-1].round(4))
