"""Controllers on dynamics_cy's kernels. Each writes the joint torque τ into a preallocated array.

With e = q_d − q and ė = v_d − v (τ_g is the generalized force of gravity, so −τ_g compensates it):

- gravity_compensation: τ = −τ_g
- joint_pd:             τ = Kp e + Kd ė − τ_g
- computed_torque:      τ = M(q) (a_d + Kp e + Kd ė) + C(q, v) v − τ_g + d∘v   (Kp in 1/s², Kd in 1/s)
- joint_impedance:      τ = M(q) a_d + C(q, v) v − τ_g + d∘v + K e + D ė      (K in N·m/rad, D in N·m·s/rad)
- cartesian_impedance:  τ = Jᵀ (K_x e_x + D_x (V_d − J v)) − τ_g − d v, with e_x the pose error of the
  end-effector frame E to its goal G = E(q_d) (a rotation vector and a translation, in W).

The model-based laws use the model's full inverse dynamics, joint damping d included (as the
plant's force elements do), so a perfect model tracks exactly. That + d∘v is a positive velocity
feedback computed from a status held for a status period T: it destabilizes a joint once d·T > 2m
(m its inertia), e.g. the iiwa's link 7 (m ≈ 10⁻³ kg·m², d = 0.5) behind a 200 Hz driver, where it
drove joint 7 into VELOCITY_LIMIT within 0.2 s even with Kp = Kd = 0. cap_damping() (called by the
loop once it has measured T) limits the compensated d to m/T.

Every controller follows hil.lifecycle: configure() checks the gains and allocates its buffers,
activate() / deactivate() bracket the stretches in which the loop's safety is RUNNING (the laws
here keep no state across ticks, so both are no-ops), and update(q, v, q_d, v_d, a_d, out) is the
per-tick law: it allocates nothing.
"""
from __future__ import annotations

import numpy as np

from core import _control
from core.config import ControllerConfig
from core.schema import ConfigError

from .lifecycle import Lifecycle


def gains(values: list[float], n: int, key: str) -> np.ndarray:
    """A per-joint gain vector from a scalar (one value) or n values."""
    a = np.array(values, dtype=float)
    if a.size == 1:
        a = np.full(n, a[0])
    if a.shape != (n,):
        raise ConfigError(key, f"needs 1 or {n} values (one per joint), got {a.size}")
    if np.any(a < 0) or not np.all(np.isfinite(a)):
        raise ConfigError(key, f"gains must be finite and non-negative, got {a.tolist()}")
    return a


class Controller(Lifecycle):
    """Base: the plant's kernels and the buffers every law needs (allocated by configure())."""

    name = "controller"

    def __init__(self, plant, cfg: ControllerConfig):
        self.plant, self.cfg = plant, cfg

    def on_configure(self) -> None:
        plant, cfg = self.plant, self.cfg
        self.k = plant.kernels()
        self.n = n = plant.num_velocities()
        self.kp = gains(cfg.kp, n, "controller.kp")
        self.kd = gains(cfg.kd, n, "controller.kd")
        self.tau_g = np.zeros(n)
        self.acc = np.zeros(n)
        self.zero = np.zeros(n)
        self.neg_damping = -plant.GetDampingVector()

    def update(self, q, v, q_d, v_d, a_d, out) -> None:
        """The law: the joint torque into `out` (allocation-free)."""
        raise NotImplementedError

    def cap_damping(self, inertia, period_ns: int) -> list[int]:
        """Limits the compensated joint damping to d_i <= m_i / T (T the status period); returns the
        joints capped."""
        cap = np.asarray(inertia) / (period_ns * 1e-9)
        capped = [int(i) for i in np.flatnonzero(-self.neg_damping > cap)]
        np.maximum(self.neg_damping, -cap, out=self.neg_damping)
        return capped


class GravityCompensation(Controller):
    name = "gravity_compensation"

    def update(self, q, v, q_d, v_d, a_d, out) -> None:
        self.k.gravity(q, self.tau_g)
        _control.damping(v, self.zero, self.tau_g, -1.0, out)


class JointPD(Controller):
    name = "joint_pd"

    def update(self, q, v, q_d, v_d, a_d, out) -> None:
        self.k.gravity(q, self.tau_g)
        _control.pd(q, v, q_d, v_d, self.kp, self.kd, self.tau_g, -1.0, out)


class ComputedTorque(Controller):
    name = "computed_torque"

    def update(self, q, v, q_d, v_d, a_d, out) -> None:
        _control.pd(q, v, q_d, v_d, self.kp, self.kd, a_d, 1.0, self.acc)
        self.k.inverse_dynamics(q, v, self.acc, out)
        _control.damping(v, self.neg_damping, out, 1.0, out)          # + d∘v


class JointImpedance(Controller):
    name = "joint_impedance"

    def update(self, q, v, q_d, v_d, a_d, out) -> None:
        self.k.inverse_dynamics(q, v, a_d, self.acc)
        _control.damping(v, self.neg_damping, self.acc, 1.0, self.acc)   # + d∘v
        _control.pd(q, v, q_d, v_d, self.kp, self.kd, self.acc, 1.0, out)


class CartesianImpedance(Controller):
    name = "cartesian_impedance"

    def __init__(self, plant, cfg: ControllerConfig, frame):
        super().__init__(plant, cfg)
        self.frame = frame

    def on_configure(self) -> None:
        super().on_configure()
        cfg = self.cfg
        self.K = np.array(cfg.cartesian_stiffness, dtype=float)
        self.D = np.array(cfg.cartesian_damping, dtype=float)
        if np.any(self.K < 0) or np.any(self.D < 0):
            raise ConfigError("controller.cartesian_stiffness", "stiffness and damping must be non-negative")
        self.joint_damping = cfg.nullspace_damping
        self.X, self.X_goal = np.zeros((4, 4)), np.zeros((4, 4))
        self.J, self.J_goal = np.zeros((6, self.n)), np.zeros((6, self.n))
        self.V_goal = np.zeros(6)

    def update(self, q, v, q_d, v_d, a_d, out) -> None:
        self.k.frame_pose(q_d, self.frame, self.X_goal)
        self.k.jacobian(q_d, self.frame, self.J_goal)
        np.dot(self.J_goal, v_d, out=self.V_goal)
        self.k.frame_pose(q, self.frame, self.X)
        self.k.jacobian(q, self.frame, self.J)
        self.k.gravity(q, self.tau_g)
        _control.cartesian_impedance(self.X, self.J, v, self.X_goal, self.V_goal, self.K, self.D, self.tau_g,
                                     self.joint_damping, out)


def make_controller(plant, cfg: ControllerConfig, end_effector=None) -> Controller:
    """The controller the config names, configured; Cartesian impedance needs the end-effector frame."""
    kinds = {c.name: c for c in (GravityCompensation, JointPD, ComputedTorque, JointImpedance)}
    if cfg.type == "cartesian_impedance":
        return CartesianImpedance(plant, cfg, end_effector).configure()
    return kinds[cfg.type](plant, cfg).configure()
