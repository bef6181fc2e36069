"""A simulated wrist force/torque sensor: the wrench a weld transmits, as `lcmt_force_torque`.

    sensor = ForceTorqueSensor(plant, physics, FtSensorConfig(enabled=True, joint="iiwa_joint_ee"))
    sensor.update(t_ns)             # after each step: measure, filter; publish when due (allocation-free)
    sensor.wrench                   # [τ; f] in the sensor frame S (N·m, N), the last reading

The sensor sits in the weld `joint` (parent P: the arm's flange, child C: the tool). Each step it takes
F_CJc_Jc, the spatial force the weld applies on the tool side at Jc (dynamics_cy's reaction forces,
Drake's reaction_forces convention), at the step's start state (q, v) with v̇ = (v⁺ − v)/h (so
constraint impulses count, as in Drake's discrete plant) and the contact and force-element body forces of
the step; expresses it in the sensor frame S (`frame`, fixed on C; default Jc): τ_S = R_SJ (τ_J − p_JcSo × f_J),
f_S = R_SJ f_J; adds the bias b and Gaussian noise n (σ per axis, seeded by `seed`: deterministic in
lockstep); and runs a first-order low-pass at `cutoff` Hz: y ← y + α (x − y), α = 1 − exp(−2π f_c h), so a
step of size F reads F (1 − e^{−2π f_c t}) at whole steps. A tool hanging still reads f = −m g (in S): what
holds it up; pressing on a surface with f, the (massless) tool reads f. External pushes (sim.pushes) are
not body forces of the step and are not seen.
"""
from __future__ import annotations

import math

import numpy as np

from drivers.core.schema import ConfigError
from dynamics_cy import RigidTransform
from messages.codec import ForceTorqueEncoder


class ForceTorqueSensor:
    """The sensor of `config` (an FtSensorConfig, enabled) on `physics` (drivers.sim.physics.Physics)."""

    def __init__(self, plant, physics, config, path: str = "sim.ft_sensor"):
        try:
            joint = plant.GetJointByName(config.joint)
        except Exception as e:
            raise ConfigError(f"{path}.joint", f"no joint named {config.joint!r} in the model") from e
        if joint.num_velocities() != 0:
            raise ConfigError(f"{path}.joint", f"{config.joint!r} is a {joint.type_name()} joint; the sensor "
                                               f"sits in a weld")
        if physics.config.engine != "hilstack":
            raise ConfigError(f"{path}.enabled", "the force/torque sensor needs sim.engine: hilstack")
        self.row = [int(i) for i in plant.GetJointIndices()].index(int(joint.index()))   # by ordinal
        child = joint.child_body()
        X_CJ = joint.frame_on_child().GetFixedPoseInBodyFrame()
        if config.frame is None:
            X_JS = RigidTransform()
        else:
            try:
                S = plant.GetFrameByName(config.frame)
            except Exception as e:
                raise ConfigError(f"{path}.frame", f"no frame named {config.frame!r} in the model") from e
            if S.body().index() != child.index():
                raise ConfigError(f"{path}.frame", f"{config.frame!r} is on {S.body().name()!r}, not on the weld's "
                                                   f"child {child.name()!r}")
            X_JS = X_CJ.inverse() @ S.GetFixedPoseInBodyFrame()
        self._R_SJ = np.ascontiguousarray(X_JS.rotation().matrix().T)
        self._p_JS = np.asarray(X_JS.translation(), dtype=float).copy()
        self.config, self.physics = config, physics
        self._h = physics.config.time_step
        self._h_ns = physics.time_step_ns
        self._period_ns = physics.config.steps(1.0 / config.publish_rate, f"{path}.publish_rate") * self._h_ns
        self._alpha = 1.0 - math.exp(-2.0 * math.pi * config.cutoff * self._h) if config.cutoff > 0 else 1.0
        self._kernels = plant.kernels()
        self._rng = np.random.default_rng(config.seed)
        self._std = np.r_[np.broadcast_to(config.torque_std, 3), np.broadcast_to(config.force_std, 3)].astype(float)
        self._noisy = bool(self._std.any())
        self._bias = np.r_[config.bias[3:], config.bias[:3]].astype(float)     # [fx fy fz tx ty tz] -> [τ; f]
        nv = plant.num_velocities()
        self._q, self._v, self._vdot = physics.q.copy(), physics.v.copy(), np.zeros(nv)
        self._reactions = np.zeros((plant.num_joints(), 6))
        self._x, self._noise, self._tmp = np.zeros(6), np.zeros(6), np.zeros(3)
        F = self._F = self._reactions[self.row]
        self._at_Jc = config.frame is None
        self._F_tau, self._F_f, self._x_tau, self._x_f = F[:3], F[3:], self._x[:3], self._x[3:]
        p = self._p_JS
        self._p_JS_cross = np.array([[0.0, -p[2], p[1]], [p[2], 0.0, -p[0]], [-p[1], p[0], 0.0]])
        self._inv_h = np.full(plant.num_velocities(), 1.0 / self._h)    # arrays: `*=` a float allocates
        self._alpha6 = np.full(6, self._alpha)
        self._due_ns = self._period_ns
        self.wrench = np.zeros(6)
        """[τ; f] in S of the last update (N·m, N): what the sensor reads."""
        self._started = False
        self._last_ns = -1
        self._encoder = ForceTorqueEncoder(config.channel)
        self.published = 0

    def update(self, t_ns: int, lc=None) -> None:
        """The reading of the step that ended at t_ns; publishes it on `lc` when due. Once per t_ns."""
        if t_ns == self._last_ns:
            return
        self._last_ns = t_ns
        physics, x = self.physics, self._x
        np.copyto(self._vdot, physics.v)           # in-place operators: a keyword out= allocates its dict
        self._vdot -= self._v
        self._vdot *= self._inv_h
        self._kernels.reaction_forces(self._q, self._v, self._vdot, self._reactions, physics.stepper.body_forces)
        np.copyto(self._q, physics.q)
        np.copyto(self._v, physics.v)
        if self._at_Jc:
            np.copyto(x, self._F)
        else:
            np.dot(self._p_JS_cross, self._F_f, out=self._tmp)    # τ about So = τ about Jc − p_JcSo × f
            np.subtract(self._F_tau, self._tmp, out=self._tmp)
            np.dot(self._R_SJ, self._tmp, out=self._x_tau)
            np.dot(self._R_SJ, self._F_f, out=self._x_f)
        x += self._bias
        if self._noisy:
            self._rng.standard_normal(out=self._noise)
            self._noise *= self._std
            x += self._noise
        if self._started:
            x -= self.wrench                                    # y += α (x − y)
            x *= self._alpha6
            self.wrench += x
        else:
            np.copyto(self.wrench, x)
            self._started = True
        if lc is not None and t_ns >= self._due_ns:
            self._due_ns = (t_ns // self._period_ns + 1) * self._period_ns
            w = self.wrench
            self._encoder.encode(t_ns // 1_000_000, w[3], w[4], w[5], w[0], w[1], w[2])
            if self._encoder.publish(lc):
                self.published += 1
