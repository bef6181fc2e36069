"""A gripper on the simulated arm: its driver model (drivers.grippers) run each step on the fingers'
measured state, and the mechanism's force on the finger joints.

    gripper = SimGripper(plant, physics, cfg.gripper, lc)    # the plant built with build_plant(..., gripper=)
    gripper.actuate(t_ns, u)        # before each step: the driver's update (a status when due), the finger forces

Each step that starts at t: the fingers' state in Drake's coordinates (q₀ left, q₁ right, open q₀ < 0 < q₁;
a model whose fingers both open positive, as the Panda's, has q₀ = −q_left), the width w = q₁ − q₀, its rate
ẇ = v₁ − v₀ and the grip force |f₁ − f₀| the actuators applied in the last step go to the driver model's
`update(t, w, ẇ, f)`, which publishes its status when due (stamped t/1000 µs) and sets the target
[w_d, ẇ_d, f_max]; Drake's SchunkWsgPdController law (drivers.grippers.mechanism.schunk_wsg_pd_force, with
this config's kp, kd on the width) turns it into (f₀, f₁), written into the finger actuators' entries of u.
The physics clamps each to its actuator's effort limit. Commands reach the model through the LCM subscription
(its handler, on_command).
"""
from __future__ import annotations

from drivers.core.schema import ConfigError
from drivers.grippers import FrankaHandDriverConfig, FrankaHandDriverModel, WsgDriverConfig, WsgDriverModel
from drivers.grippers.mechanism import schunk_wsg_pd_force
from messages.channels import GRIPPER_CHANNELS

FINGERS = {"wsg50": ("left_finger_sliding_joint", "right_finger_sliding_joint"),
           "franka_hand": ("panda_finger_joint1", "panda_finger_joint2")}
# the sign of each finger's joint coordinate in Drake's (q₀ < 0 < q₁ open)
SIGNS = {"wsg50": (1.0, 1.0), "franka_hand": (-1.0, 1.0)}


class SimGripper:
    """The gripper of `config` (a GripperConfig with a type) in `plant` (built with it), on `physics`."""

    def __init__(self, plant, physics, config, lc=None, path: str = "sim.gripper"):
        names = config.fingers or FINGERS[config.type]
        actuator_of = {plant.get_joint_actuator(a).joint().name(): plant.get_joint_actuator(a).input_start()
                       for a in plant.GetJointActuatorIndices()}
        joints = []
        for i, name in enumerate(names):
            if not plant.HasJointNamed(name):
                raise ConfigError(f"{path}.fingers[{i}]", f"the plant has no joint named {name!r} (is "
                                                          f"{path}.model the gripper's?)")
            joint = plant.GetJointByName(name)
            if joint.num_velocities() != 1 or name not in actuator_of:
                raise ConfigError(f"{path}.fingers[{i}]", f"{name!r} must be an actuated one-dof joint")
            joints.append(joint)
        self.instance = joints[0].model_instance()
        """The gripper's model instance: its joints are not the arm protocol's."""
        self._iq = [j.position_start() for j in joints]
        self._iv = [j.velocity_start() for j in joints]
        self._ia = [actuator_of[n] for n in names]
        self._s0, self._s1 = SIGNS.get(config.type, (1.0, 1.0)) if config.fingers is None else (1.0, 1.0)
        status, command = GRIPPER_CHANNELS["wsg" if config.type == "wsg50" else "panda_hand"]
        command, status = config.command_channel or command, config.status_channel or status
        if config.type == "wsg50":
            self.driver = WsgDriverModel(WsgDriverConfig(lcm_command_channel=command, lcm_status_channel=status))
        else:
            self.driver = FrankaHandDriverModel(FrankaHandDriverConfig(lcm_command_channel=command,
                                                                       lcm_status_channel=status),
                                                initial_width=self.width(physics))
        if config.type == "wsg50":               # after the driver's calibration: fully open, at rest
            self._set_width(physics, self.driver.profile.position)
        self.driver.lc = lc                     # publishes there; the subscription is ours (close())
        self.physics, self.config, self.lc = physics, config, lc
        self.subscription = lc.subscribe(command, self._on_command) if lc is not None else None

    def _on_command(self, channel: str, data: bytes) -> None:
        self.driver.on_command(data)

    def _set_width(self, physics, width: float) -> None:
        q = physics.q.copy()
        q[self._iq[0]], q[self._iq[1]] = -0.5 * width * self._s0, 0.5 * width * self._s1
        physics.set_state(q, physics.v.copy(), physics.steps)

    def width(self, physics=None) -> float:
        """w = q₁ − q₀ (m) now."""
        q = (physics or self.physics).q
        return self._s1 * q[self._iq[1]] - self._s0 * q[self._iq[0]]

    def actuate(self, t_ns: int, u, silent: bool = False) -> None:
        """The driver's update at t_ns (its status when due, unless `silent`: the sim.faults gripper_silent)
        and the finger forces into u (allocation-free but for Python floats)."""
        p, s0, s1 = self.physics, self._s0, self._s1
        q, v, applied = p.q, p.v, p.u_applied
        a0, a1 = self._ia
        q0, q1 = s0 * q[self._iq[0]], s1 * q[self._iq[1]]
        v0, v1 = s0 * v[self._iv[0]], s1 * v[self._iv[1]]
        force = abs(s1 * applied[a1] - s0 * applied[a0])
        self.driver.lc = None if silent else self.lc
        self.driver.update(t_ns, q1 - q0, v1 - v0, force)
        w_d, wdot_d, f_max = self.driver.target
        if f_max > 0:
            f0, f1 = schunk_wsg_pd_force(q0, q1, v0, v1, w_d, wdot_d, f_max, self.config.kp, self.config.kd)
        else:                                   # no force limit set yet (the WSG before its first command)
            f0 = f1 = 0.0
        u[a0], u[a1] = s0 * f0, s1 * f1

    def close(self) -> None:
        if self.subscription is not None:
            self.lc.unsubscribe(self.subscription)
            self.subscription = None
