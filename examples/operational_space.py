"""Operational-space control (task-space inverse dynamics) of the hand's position, with a posture
task in its null space, on the law's own allocation-free dynamics kernels.

The hand E goes to `goal` G. With J its translational Jacobian, Λ = (J M⁻¹ Jᵀ)⁻¹ and J̄ = M⁻¹ Jᵀ Λ:

    a* = Kp (G − p) − Kd J v − J̇ v
    τ  = Jᵀ Λ a* + C(q, v) v − τ_g(q) + d∘v + (I − Jᵀ J̄ᵀ) M (K₀ (q_d − q) + D₀ (v_d − v))

so the hand accelerates as p̈ = a*, a critically damped spring to G (Kd = 2 √Kp) whatever the arm's
inertia: it goes straight there. The posture (the trajectory's q_d) acts only in the joint motions
that leave the hand where it is. M⁻¹ Jᵀ comes from the articulated-body algorithm (forward_dynamics
at v = 0, one row of J at a time); Λ, a 3×3 inverse that changes little per tick, from a Newton–Schulz
step X ← X (2I − A X) on the previous tick's (numpy has no solver writing into out=). Start away from
the stretched arm's singularity, where Λ is unbounded.

Run it (lockstep, the simulated iiwa): python examples/operational_space.py
Its tests: pytest examples/test_operational_space.py
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from hil import Controller


def newton_schulz(A, X, AX, XAX, two_I, steps: int) -> None:
    """X ← X (2I − A X), `steps` times: X → A⁻¹ quadratically while ‖I − A X‖ < 1 (allocation-free)."""
    i = 0
    while i < steps:
        np.dot(A, X, out=AX)
        np.subtract(two_I, AX, out=AX)
        np.dot(X, AX, out=XAX)
        np.copyto(X, XAX)
        i += 1


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
        self.M, self.JMinv = np.zeros((n, n)), np.zeros((3, n))     # J M⁻¹: row i is M⁻¹ J_iᵀ (M = Mᵀ)
        self.rows, self.MinvJT = tuple(zip(self.J, self.JMinv)), self.JMinv.T   # views, made once
        self.A, self.Lam, self.AX, self.XAX = (np.zeros((3, 3)) for _ in range(4))
        self.I, self.two_I = np.eye(3), 2.0 * np.eye(3)
        # trace A = ones · diag(A) into a (1, 1) array; a 0-d view of it divides without allocating
        self.ones, self.trace, self.diag = np.ones((1, 3)), np.zeros((1, 1)), self.A.reshape(-1)[::4, None]
        self.trace_0d = self.trace.reshape(())
        self.tau_g, self.bias, self.zero, self.a0, self.tau0, self.tmp = (np.zeros(n) for _ in range(6))
        self.restart = True

    def on_activate(self) -> None:
        self.restart = True          # Λ from scratch (and, with no goal, G) at the next update

    def update(self, state, command) -> None:
        q, v, k = state.q, state.v, self.kernels
        k.frame_pose(q, self.end_effector, self.X)
        k.frame_jacobian_bias(q, v, self.end_effector, self.J6, self.Jdv6)
        if self.restart and self.hold:
            np.copyto(self.G, self.p)
        # a* = Kp (G − p) − Kd J v − J̇ v
        np.subtract(self.G, self.p, out=self.e)
        np.multiply(self.kp, self.e, out=self.a)
        np.dot(self.J, v, out=self.e)
        np.multiply(self.kd, self.e, out=self.e)
        np.subtract(self.a, self.e, out=self.a)
        np.subtract(self.a, self.Jdv, out=self.a)
        # M⁻¹ Jᵀ (row i: M⁻¹ J_iᵀ = forward_dynamics(q, 0, J_i − τ_g)), A = J M⁻¹ Jᵀ, Λ = A⁻¹
        k.gravity(q, self.tau_g)
        i = 0
        while i < 3:
            J_i, row = self.rows[i]
            np.subtract(J_i, self.tau_g, out=self.tmp)
            k.forward_dynamics(q, self.zero, self.tmp, row)
            i += 1
        np.dot(self.J, self.MinvJT, out=self.A)
        if self.restart:                                             # from I / trace A: many steps
            np.dot(self.ones, self.diag, out=self.trace)
            np.divide(self.I, self.trace_0d, out=self.Lam)
        newton_schulz(self.A, self.Lam, self.AX, self.XAX, self.two_I, 40 if self.restart else 2)
        self.restart = False
        # τ = Jᵀ Λ a* + C v − τ_g + d∘v
        np.dot(self.Lam, self.a, out=self.f)
        np.dot(self.f, self.J, out=command.tau)
        k.bias(q, v, self.bias)
        np.add(command.tau, self.bias, out=command.tau)
        np.multiply(self.neg_damping, v, out=self.tmp)               # + d∘v, the joints' damping
        np.subtract(command.tau, self.tmp, out=command.tau)
        np.subtract(command.tau, self.tau_g, out=command.tau)
        # + (I − Jᵀ J̄ᵀ) τ₀, τ₀ = M (K₀ (q_d − q) + D₀ (v_d − v)); J̄ᵀ τ₀ = Λ J M⁻¹ τ₀
        np.subtract(state.q_d, q, out=self.tmp)
        np.multiply(self.k0, self.tmp, out=self.a0)
        np.subtract(state.v_d, v, out=self.tmp)
        np.multiply(self.d0, self.tmp, out=self.tmp)
        np.add(self.a0, self.tmp, out=self.a0)
        k.mass_matrix(q, self.M)
        np.dot(self.M, self.a0, out=self.tau0)
        np.dot(self.JMinv, self.tau0, out=self.e)
        np.dot(self.Lam, self.e, out=self.f)
        np.dot(self.f, self.J, out=self.tmp)
        np.subtract(self.tau0, self.tmp, out=self.tau0)
        np.add(command.tau, self.tau0, out=command.tau)


if __name__ == "__main__":
    from hil.testing import config_path, simulate

    start = {"trajectory": {"type": "hold"}, "sim": {"initial_positions": [0, 0.6, 0, -1.2, 0, 0.8, 0]}}
    run = simulate(config_path("iiwa"), OperationalSpace({"goal": [0.5, 0.2, 0.6]}), duration=3.0, overrides=start)
    print(run.final_state, "hand from", run.frame_positions()[0].round(4), "to", run.frame_positions()[-1].round(4))
