"""Operational-space control (task-space inverse dynamics) of the hand's position, with a posture
task in the null space, on the law's own allocation-free dynamics kernels.

The hand E moves from where it is at the start to `goal` (p_WG, m) on a minimum-jerk path p_d(t);
with J the hand's translational Jacobian, Λ = (J M⁻¹ Jᵀ)⁻¹ its operational-space inertia and
J̄ = M⁻¹ Jᵀ Λ the dynamically consistent inverse:

    a* = p̈_d + Kp (p_d − p) + Kd (ṗ_d − J v) − J̇ v
    τ  = Jᵀ Λ a* + C(q, v) v − τ_g(q) + d∘v + (I − Jᵀ J̄ᵀ) M (K₀ (q_d − q) + D₀ (v_d − v))

so the hand moves as p̈ = a* whatever the arm's inertia, and the posture task (the trajectory's
q_d: with `trajectory: hold`, the start) acts only in the 4 joint directions the hand does not use.

M⁻¹ Jᵀ comes from the articulated-body algorithm (forward_dynamics at v = 0, one column per row of
J). Λ is the inverse of a 3×3 matrix that changes little between ticks: a Newton–Schulz step
X ← X (2I − A X) from the previous tick's Λ keeps it exact, with np.dot's out= and no solver that
allocates (many steps from I / trace A on the first tick after activation).

Run it in lockstep against the simulated iiwa: python examples/operational_space.py
Its test (the hand reaches the goal, the posture holds): pytest examples/test_operational_space.py
"""
from __future__ import annotations

from dataclasses import dataclass, field

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
        goal: list[float] = field(default_factory=lambda: [0.5, 0.2, 0.6])   # m, p_WG
        duration: float = 2.0        # s, the minimum-jerk move from the start
        kp: float = 100.0            # 1/s²: hand position
        kd: float = 20.0             # 1/s
        posture_kp: float = 25.0     # 1/s²: joints, in the null space
        posture_kd: float = 10.0     # 1/s

    adds_bias = True                 # τ includes C(q, v) v + d∘v (d: the joints' damping)

    def on_configure(self) -> None:
        n, p = self.n, self.params
        self.goal = np.array(p.goal, dtype=float)
        self.kp, self.kd = np.full(3, p.kp), np.full(3, p.kd)
        self.k0, self.d0 = np.full(n, p.posture_kp), np.full(n, p.posture_kd)
        self.J6, self.Jdv6, self.X = np.zeros((6, n)), np.zeros(6), np.zeros((4, 4))
        self.J, self.Jdv, self.p = self.J6[3:], self.Jdv6[3:], self.X[:3, 3]   # views: translation
        self.p0, self.delta = np.zeros(3), np.zeros(3)
        self.s, self.sd, self.sdd = np.zeros(()), np.zeros(()), np.zeros(())       # the path's s(t), ṡ, s̈
        self.p_d, self.v_d, self.a, self.e, self.f = (np.zeros(3) for _ in range(5))
        self.M, self.MinvJT = np.zeros((n, n)), np.zeros((3, n))
        self.rows = tuple(zip(self.J, self.MinvJT))                  # (J_i, row i of M⁻¹ Jᵀ) views
        self.JMinvJT = self.MinvJT.T                                 # (M⁻¹ Jᵀ) as a view
        self.A, self.Lam, self.AX, self.XAX = (np.zeros((3, 3)) for _ in range(4))
        self.I, self.two_I = np.eye(3), 2.0 * np.eye(3)
        self.ones, self.trace = np.ones((1, 3)), np.zeros((1, 1))
        self.trace_0d = self.trace.reshape(())                       # dividing by a 0-d array allocates nothing
        self.A_diagonal = self.A.reshape(-1)[::4, None]              # a (3, 1) view of A's diagonal
        self.tau_g, self.bias, self.zero, self.a0, self.tau0, self.tmp = (np.zeros(n) for _ in range(6))
        self.t0, self.restart = 0.0, True

    def on_activate(self) -> None:
        self.restart = True          # the path starts from the hand's pose at the next update

    def _path(self, t: float) -> None:
        """self.p_d, v_d, a (p̈_d) of the minimum-jerk move at t (s since the start)."""
        T = self.params.duration
        x = t / T if t < T else 1.0
        self.s.fill(x * x * x * (10.0 - 15.0 * x + 6.0 * x * x))
        self.sd.fill(30.0 * x * x * (1.0 - x) * (1.0 - x) / T)
        self.sdd.fill(60.0 * x * (1.0 - 3.0 * x + 2.0 * x * x) / (T * T))
        np.multiply(self.delta, self.s, out=self.p_d)
        np.add(self.p0, self.p_d, out=self.p_d)
        np.multiply(self.delta, self.sd, out=self.v_d)
        np.multiply(self.delta, self.sdd, out=self.a)

    def update(self, state, command) -> None:
        q, v, k = state.q, state.v, self.kernels
        k.frame_pose(q, self.end_effector, self.X)
        k.frame_jacobian_bias(q, v, self.end_effector, self.J6, self.Jdv6)
        if self.restart:
            np.copyto(self.p0, self.p)
            np.subtract(self.goal, self.p0, out=self.delta)
            self.t0 = state.t
        self._path(state.t - self.t0)
        # a* = p̈_d + Kp (p_d − p) + Kd (ṗ_d − J v) − J̇ v
        np.subtract(self.p_d, self.p, out=self.e)
        np.multiply(self.kp, self.e, out=self.e)
        np.add(self.a, self.e, out=self.a)
        np.dot(self.J, v, out=self.e)
        np.subtract(self.v_d, self.e, out=self.e)
        np.multiply(self.kd, self.e, out=self.e)
        np.add(self.a, self.e, out=self.a)
        np.subtract(self.a, self.Jdv, out=self.a)
        # M⁻¹ Jᵀ (row i: M⁻¹ J_iᵀ = forward_dynamics(q, 0, J_i − τ_g)), A = J M⁻¹ Jᵀ, Λ = A⁻¹
        k.gravity(q, self.tau_g)
        i = 0
        while i < 3:
            J_i, row = self.rows[i]
            np.subtract(J_i, self.tau_g, out=self.tmp)
            k.forward_dynamics(q, self.zero, self.tmp, row)
            i += 1
        np.dot(self.J, self.JMinvJT, out=self.A)
        if self.restart:
            np.dot(self.ones, self.A_diagonal, out=self.trace)
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
        # + (I − Jᵀ J̄ᵀ) τ₀, τ₀ = M (K₀ (q_d − q) + D₀ (v_d − v)); J̄ᵀ τ₀ = Λ (M⁻¹ Jᵀ)ᵀ τ₀
        np.subtract(state.q_d, q, out=self.tmp)
        np.multiply(self.k0, self.tmp, out=self.a0)
        np.subtract(state.v_d, v, out=self.tmp)
        np.multiply(self.d0, self.tmp, out=self.tmp)
        np.add(self.a0, self.tmp, out=self.a0)
        k.mass_matrix(q, self.M)
        np.dot(self.M, self.a0, out=self.tau0)
        np.dot(self.MinvJT, self.tau0, out=self.e)
        np.dot(self.Lam, self.e, out=self.f)
        np.dot(self.f, self.J, out=self.tmp)
        np.subtract(self.tau0, self.tmp, out=self.tau0)
        np.add(command.tau, self.tau0, out=command.tau)


if __name__ == "__main__":
    import hil
    from hil.testing import config_path, simulate

    run = simulate(config_path("iiwa"), OperationalSpace, duration=3.0, overrides={"trajectory": {"type": "hold"}})
    hand = run.frame_positions()
    print(f"{run.final_state}; hand from {hand[0].round(3)} to {hand[-1].round(3)} (goal "
          f"{OperationalSpace.Params().goal}); update() p50 {run.summary['controller_timing']['update_us']['p50']} µs")
    print(hil.check_allocations(config_path("iiwa"), OperationalSpace, overrides={"viz": False}))
