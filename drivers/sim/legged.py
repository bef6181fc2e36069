"""A simulated legged robot behind the project's floating-base protocol (hilmsg).

    robot = SimulatedLeggedRobot(plant, feet, SimConfig(contact=...), lc)
    robot.publish_status()           # lockstep: the first status; then step_lockstep() after each of the
                                     # loop's ticks steps the plant once under the newest command and
                                     # publishes one lcmt_hil_floating_base_status
    robot.push(F_W, duration)        # an external force on the base (a push), for `duration` seconds
    robot.run_realtime(seconds)      # not lockstep: one step and one status per
                                     # time_step of the wall clock, under the newest command (`hil sim`);
                                     # until the first command that drives it (a torque, or a PD with
                                     # kp > 0; the safe command's damping alone does not) the robot
                                     # hangs still (as on a gantry;
                                     # its clock runs)

The drives model Unitree's low-level command: each step, per joint, τ = tau + kp (q_d − q) + kd
(v_d − v) with the command's gains (kp = kd = 0 or num_pd = 0: torque only), from the newest command,
saturated to the joint's effort limit (the URDF's); the status reports the torque applied.
Without a command for config.command_timeout the drives damp: τ = −d_safe v (the safe command).

The status is ground truth (base_source "ground_truth"): the base pose and twist, an IMU on the base
(its angular velocity in the base frame and the proper acceleration (a_WBo − g) in the base frame,
from the step's change of v_WBo), the joints, and for each foot whether the simulator's contact
touches it and the force on it from the ground. CONTACT_RESULTS go out as Drake's
lcmt_contact_results_for_viz at contact.publish_rate (Meldis draws them); with viz (a drivers.viz.VizConfig)
a ViewerBridge draws the robot and the ground.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from messages import lcmt_hil_floating_base_status, lcmt_hil_joint_command
from messages.channels import CONTACT_RESULTS, FLOATING_BASE_STATUS, JOINT_COMMAND
from messages.validation import MessageDecoder

from .config import SimConfig
from .contact_lcm import ContactResultsPublisher
from .physics import make_physics


class SimulatedLeggedRobot:
    """plant: finalized, one free body at the root, an actuator on every other joint (planning.
    legged_models.load_legged(..., simulation=True) builds one); feet: {name: frame} of the feet whose
    contact is reported; lc: an LCM instance (memq:// for lockstep in one process)."""

    def __init__(self, plant, feet: dict, config: SimConfig, lc, *, status_channel: str = FLOATING_BASE_STATUS,
                 command_channel: str = JOINT_COMMAND, contact_channel: str = CONTACT_RESULTS,
                 safe_damping: float = 2.0, viz=None):
        self.plant, self.lc, self.config = plant, lc, config
        self.physics = make_physics(plant, config, "sim")
        if self.physics.contact is None:
            raise ValueError("SimulatedLeggedRobot: the robot needs sim.contact.enabled (it stands on the ground)")
        self.nv = plant.num_velocities()
        self.na = self.nv - 6
        actuators = sorted((plant.get_joint_actuator(i) for i in plant.GetJointActuatorIndices()),
                           key=lambda a: a.input_start())
        if [a.joint().velocity_start() for a in actuators] != list(range(6, self.nv)):
            raise ValueError("SimulatedLeggedRobot: every joint after the free body needs one actuator, in order")
        self.joint_names = [a.joint().name() for a in actuators]
        self.feet = {name: int(frame.body().index()) for name, frame in feet.items()}
        self._feet = list(self.feet.values())
        self._touching, self._foot_force = np.zeros(len(self.feet), dtype=bool), np.zeros((len(self.feet), 3))
        self.base_name = next(j.child_body().name() for j in (plant.get_joint(i) for i in range(plant.num_joints()))
                              if j.type_name() == "quaternion_floating")
        self.status_channel, self.contact_channel = status_channel, contact_channel
        self.safe_damping = float(safe_damping)
        self.u = np.zeros(self.na)
        self.tau_ff, self.q_d, self.v_d = np.zeros(self.na), np.zeros(self.na), np.zeros(self.na)
        self.kp, self.kd = np.zeros(self.na), np.zeros(self.na)
        self.last_command_ns = None
        self.released = False          # off the gantry: a command that drives the joints has come (run_realtime)
        self.decoder = MessageDecoder(lcmt_hil_joint_command, command_channel)
        self.contacts = ContactResultsPublisher(self.physics.contact, contact_channel)
        self._next_contact_ns = 0
        self.msg = lcmt_hil_floating_base_status()
        self.msg.base_source = "ground_truth"
        self.msg.num_joints, self.msg.joint_names = self.na, list(self.joint_names)
        self.msg.num_contacts, self.msg.contact_names = len(self.feet), list(self.feet)
        self._v_prev = self.physics.v[3:6].copy()
        self.commands = self.rejected = self.published = 0
        self.viewer = None
        if viz is not None and viz.enabled:          # the robot and the ground in Meldis (drivers.viz.VizConfig)
            from drivers.viz import ViewerBridge
            from messages.channels import Channels

            from .contact import ground_visual
            self.viewer = ViewerBridge(plant, lc, Channels(), viz,
                                       anchored=[ground_visual(config.contact.ground.height)])
        self.subscription = lc.subscribe(command_channel, self._on_command)
        self.command_channel = command_channel
        self.commanders = None
        """A drivers.sim.commanders.CommanderWatch (hil sim sets it on udpm://): a second commander refused."""

    # ------------------------------------------------------------------------------------------
    def push(self, force_W, duration: float) -> None:
        """Apply the force F (N, in W) at the base origin for `duration` seconds from now (physics.push)."""
        t = self.physics.time_ns
        self.physics.push(self.base_name, [0.0, 0.0, 0.0, *force_W], t, t + int(round(duration * 1e9)))

    def _on_command(self, channel, data) -> None:
        msg = self.decoder.decode(data)
        if msg is None or msg.num_joints != self.na or msg.num_pd not in (0, self.na) or (
                msg.num_pd and (min(msg.kp) < 0 or min(msg.kd) < 0)):
            self.rejected += 1
            return
        if self.commanders is not None and not self.commanders.accept(data, self.physics.time_ns):
            self.rejected += 1
            text = self.commanders.refusal(self.command_channel)
            if text:
                print(text, file=sys.stderr, flush=True)
            return
        self.commands += 1
        self.tau_ff[:] = msg.tau
        if msg.num_pd:
            self.q_d[:], self.v_d[:], self.kp[:], self.kd[:] = msg.q_desired, msg.v_desired, msg.kp, msg.kd
        else:
            self.kp[:] = 0.0
            self.kd[:] = 0.0
        self.last_command_ns = self.physics.time_ns
        self.released = self.released or not msg.num_pd or max(msg.kp) > 0

    def step_lockstep(self) -> None:
        """Lockstep, the simulator's half of a tick (hil.loop's scheduler, after the loop's update): the
        LCM messages waiting are handled (the loop's command is taken), then one step under the newest
        command and its status. Nothing before the first status (publish_status)."""
        while self.lc.handle_timeout(0) > 0:
            pass
        if self.published:
            self.step()
            self.publish_status()

    def plant_state(self) -> dict:
        """The plant now: q, v (copies), the drives' torque of the last step."""
        return {"time_ns": self.physics.time_ns, "q": self.physics.q.copy(), "v": self.physics.v.copy(),
                "u": self.u.copy()}

    def close(self) -> None:
        """Stops listening on the LCM (commands, and the viewer's requests)."""
        if self.subscription is not None:
            self.lc.unsubscribe(self.subscription)
            self.subscription = None
        if self.viewer is not None:
            self.viewer.close()
        if self.commanders is not None:
            self.commanders.close()
            self.commanders = None

    def summary(self) -> dict:
        """Steps taken, the simulated time, the commands received and rejected."""
        return {"steps": self.physics.steps, "sim_time_s": round(self.physics.time_ns * 1e-9, 6),
                "commands_received": self.commands, "commands_rejected": self.rejected}

    def run_realtime(self, seconds: float | None = None, stop=None) -> dict:
        """Step at the wall clock's pace for `seconds` (None: until stop()), handling the commands that
        arrived before each step; a step more than 10 periods late resyncs the clock. The summary."""
        h = self.config.time_step
        steps = None if seconds is None else int(round(seconds / h))
        late = resyncs = n = 0
        t0 = start = time.monotonic()
        diverged = None
        self.publish_status()
        while (steps is None or n < steps) and not (stop is not None and stop()):
            if self.commanders is not None:
                self.commanders.poll()               # its socket drained each step: it never overflows
            while self.lc.handle_timeout(0) > 0:
                pass
            if not self.released:                    # before the first command that drives it, the robot hangs still,
                self.physics.hold()                  # its clock running (the status's utime advances)
            else:
                try:
                    self.step()
                except RuntimeError as e:            # a DynamicsError or a failed contact solve (a fallen G1)
                    diverged = f"the simulation diverged at t = {self.physics.time_ns * 1e-9:.3f} s: {e}"
                    break
            self.publish_status()
            n += 1
            ahead = t0 + n * h - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
            elif ahead < -10 * h:
                late, resyncs, t0 = late + 1, resyncs + 1, time.monotonic() - n * h
            elif ahead < -h:
                late += 1
        return {"steps": n, "sim_time_s": round(n * h, 6), "wall_time_s": round(time.monotonic() - start, 3),
                "late_steps": late, "resyncs": resyncs, "commands_received": self.commands,
                "commands_rejected": self.rejected, "diverged": diverged,
                "second_commander": 0 if self.commanders is None else self.commanders.refused}

    def step(self) -> None:
        """One physics step under the drives' torque (or the safe command without a fresh command)."""
        ph = self.physics
        q, v = ph.q, ph.v
        stale = self.last_command_ns is None or ph.time_ns - self.last_command_ns > self.config.command_timeout * 1e9
        if stale:
            np.multiply(-self.safe_damping, v[6:], out=self.u)
        else:
            self.u[:] = self.tau_ff + self.kp * (self.q_d - q[7:]) + self.kd * (self.v_d - v[6:])
        self._v_prev[:] = v[3:6]
        ph.step(self.u)
        if self.viewer is not None:
            self.viewer.tick(ph.time_ns, ph.q, ph.time_ns // 1000)
        if self.contacts and self.config.contact.publish_rate > 0 and ph.time_ns >= self._next_contact_ns:
            self.contacts.publish(self.lc, ph.time_ns // 1000)
            self._next_contact_ns = ph.time_ns + int(1e9 / self.config.contact.publish_rate)

    def publish_status(self) -> None:
        ph, m = self.physics, self.msg
        q, v = ph.q, ph.v
        m.utime = ph.time_ns // 1000
        m.base_quaternion, m.base_position = q[:4].tolist(), q[4:7].tolist()
        m.base_angular_velocity, m.base_linear_velocity = v[:3].tolist(), v[3:6].tolist()
        w, x, y, z = q[:4]
        R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        a_W = (v[3:6] - self._v_prev) / self.config.time_step - self.plant.gravity_field().gravity_vector()
        m.imu_quaternion = q[:4].tolist()
        m.imu_angular_velocity = (R.T @ v[:3]).tolist()
        m.imu_linear_acceleration = (R.T @ a_W).tolist()
        m.joint_position, m.joint_velocity, m.joint_torque = q[7:].tolist(), v[6:].tolist(), ph.u_applied.tolist()
        ph.contact_forces(self._feet, self._touching, self._foot_force)
        m.contact, m.contact_force = self._touching.tolist(), self._foot_force.tolist()
        self.lc.publish(self.status_channel, m.encode())
        self.published += 1
