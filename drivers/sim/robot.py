"""The simulated robot: it stands where the robot and its driver stand and speaks their LCM protocol.

    robot = SimulatedRobot(plant, config, "iiwa", channels, lc)
    robot.publish_status()          # lockstep: the status the controller starts from
    ... the controller publishes commands; each valid one advances the plant one step and publishes
        one status (with memq://, handle LCM until the queue is empty: `while lc.handle_timeout(0): pass`)
    robot.run_realtime(duration)    # or: paced to the wall clock, newest command each step
    robot.push("iiwa_link_7", F_Bq_W, duration)   # an external wrench on the arm (also sim.pushes)

With viz (drivers.viz.VizConfig, enabled), the plant also drives a drivers.viz.ViewerBridge on the same LCM:
lcmt_viewer_load_robot / lcmt_viewer_draw of its true state (physics q, before any sensor fault),
ticked with the simulated time after every step, so draws go out at viz.draw_rate_hz of simulated
time, stamped with the simulated time; with contact against the ground, the load message shows the
ground as a half space at contact.ground.height.

The driver firmware it models (per step, from the newest valid command not older than
command_timeout; without one, the safe command):

- torque only:                 u = τ_cmd [− τ_g if gravity_compensation is internal]
- positions (and/or velocities): u = ID(q, v, kp∘(q_cmd − q) + kd∘(v_d − v)) + d∘v [+ τ_cmd], v_d the
  panda's commanded velocity or the finite difference of consecutive position commands, ID the
  inverse dynamics with gravity and d∘v the joint damping: Drake's SimIiwaDriver (an
  InverseDynamicsController) without its integral term; no position term for velocity commands;
- no commander (before the first valid command, and command_timeout after the last): the safe command:
  hold (the default): u = ID(q, v, kp∘(q_hold − q) − kd∘v) + d∘v, q_hold latched where the commands
  stopped (the initial pose before the first), gravity included, as Drake's IiwaCommandReceiver holds
  the latched measured position and the real drivers hold the arm (docs/sim.md); zero torque, or
  −d_safe∘v (damping), [− τ_g if internal].

The status (Drake's field names via messages.codec; iiwa / panda wire names in docs/sim.md):
position_measured = q, velocity_estimated = v (after sensor faults), position_commanded = the
command's positions (else q, as Drake), torque_commanded = the actuator torque after the effort
clamp, torque_measured = the torque the actuator applied (differs from commanded only for a
joint_unresponsive joint), torque_external = Σ J_Bᵀ F_Bo_W (contact) + Σ J_Bqᵀ F_Bq_W (pushes) of the step,
taken at its start: what the arm's estimator reports, the torque of every force the model does not
predict (iiwa: FRI's getExternalTorque; panda: libfranka's tau_ext_hat_filtered, without its filter).
Signs as the hardware reports them (Drake's manipulation/README): iiwa torque_commanded and
torque_measured are negated; iiwa torque_external is "correct", positive when the external force
pushes the joint positive (+Jᵀ F, as MultibodyPlant's generalized forces), panda torque_external is
negated (−Jᵀ F); everything else is in MultibodyPlant's convention.
"""
from __future__ import annotations

import sys
import threading
import time

import numpy as np

from drivers.core.schema import ConfigError
from messages.channels import Channels
from messages.codec import CommandDecoder, StatusEncoder

from ._physics import gather, scatter
from .config import SimConfig, per_joint
from .contact import ground_visual
from .contact_lcm import ContactResultsPublisher
from .faults import FaultInjector
from .ft_sensor import ForceTorqueSensor
from .gripper import SimGripper
from .pacing import run_paced
from .physics import ONE_DOF, joint_inertias, make_physics
from .real_drivers import DriverExit, FrankaDriver, KukaDriver, wall_us

MODE_BITS = {"position": 1, "velocity": 2, "torque": 4}
PANDA_IDLE, PANDA_MOVE, PANDA_REFLEX = 1, 2, 4


class SimulatedRobot:
    """A plant behind Drake's iiwa or panda LCM protocol, in lockstep (default) or real time.

    plant: a finalized dynamics_cy MultibodyPlant; config: SimConfig (validated here, errors name
    `path`); protocol: "iiwa" or "panda"; channels: messages.channels.Channels (default: the
    protocol's); lcm: an lcm.LCM (None: no LCM, drive it with tick() and read plant_state()); viz:
    a drivers.viz.VizConfig: when enabled (and with an LCM), `viewer` is a ViewerBridge drawing the
    plant's own state (see the module doc), else None.
    """

    def __init__(self, plant, config: SimConfig | None = None, protocol: str = "iiwa",
                 channels: Channels | None = None, lcm=None, path: str = "sim", viz=None):
        if protocol not in ("iiwa", "panda"):
            raise ValueError(f"protocol must be 'iiwa' or 'panda', got {protocol!r}")
        self.physics = physics = make_physics(plant, config, path)
        cfg = self.config = physics.config
        self.protocol, self.lc, self._iiwa = protocol, lcm, protocol == "iiwa"
        self.channels = channels or Channels.for_robot(protocol)
        self.gripper = SimGripper(plant, physics, cfg.gripper, lcm, f"{path}.gripper") \
            if cfg.gripper.type is not None else None
        """The gripper on the flange (drivers.sim.gripper), or None."""
        joints = self.protocol_joints(plant, cfg, path, self.gripper)
        self.joint_names = [j.name() for j in joints]
        n = self.n = len(joints)
        actuator_of = {a.joint().name(): a.input_start()
                       for a in (plant.get_joint_actuator(i) for i in plant.GetJointActuatorIndices())}
        self._qi = np.array([j.position_start() for j in joints], dtype=np.intp)
        self._vi = np.array([j.velocity_start() for j in joints], dtype=np.intp)
        self._ai = np.array([actuator_of[j.name()] for j in joints], dtype=np.intp)
        nv, nu = plant.num_velocities(), plant.num_actuators()
        self._all_actuators = n == nu and np.array_equal(self._ai, np.arange(n))   # u is the joints' torque
        self._kernels = plant.kernels()
        self._h_ns, self._timeout_ns = cfg.time_step_ns, round(cfg.command_timeout * 1e9)
        self._status_period_ns = cfg.steps(cfg.status_period, f"{path}.status_period") * self._h_ns \
            if cfg.status_period is not None else self._h_ns
        modes = cfg.control_mode if cfg.control_mode is not None else (["torque"] if protocol == "panda" else None)
        self._required_mode = sum(MODE_BITS[m] for m in set(modes)) if modes else 0
        self._gravity_compensation = cfg.gravity_compensation == "internal"
        self._sim_utime = cfg.utime == "sim"
        self._damping = plant.GetDampingVector()[self._vi]
        self._kp = per_joint(cfg.position_control.kp, n, f"{path}.position_control.kp")
        self._kd = per_joint(cfg.position_control.kd, n, f"{path}.position_control.kd", 2 * np.sqrt(self._kp))
        self.joint_inertia = inertia = joint_inertias(plant, physics.q)[self._vi]
        d_safe = per_joint(cfg.safe_damping, n, f"{path}.safe_damping", inertia / (2 * cfg.time_step))
        self._neg_safe_damping = -d_safe if cfg.safe_command == "damping" else None
        self._hold = cfg.safe_command == "hold"
        # Preallocated buffers: per protocol joint (n) and per plant velocity (nv).
        self._decoder = CommandDecoder(protocol, n, self.channels.command)
        self._encoder = StatusEncoder(protocol, n, self.channels.status)
        self._nan_ipo = np.full(n, np.nan, ">f8").tobytes()    # kuka_driver's ipo positions outside COMMANDING
        self._q, self._v, self._uj, self._err, self._tmp = (np.zeros(n) for _ in range(5))
        self._gravity_j, self._tau_cmd, self._tau_meas, self._tau_ext = (np.zeros(n) for _ in range(4))
        self._u = np.zeros(nu)
        self._accel, self._tau_full, self._gravity = np.zeros(nv), np.zeros(nv), np.zeros(nv)
        self._sign_u, self._sign_ext = (-1.0, 1.0) if self._iiwa else (1.0, -1.0)
        self._v_ff, self._q_prev, self._zeros, self._q_hold = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        self._holding = False                    # q_hold latched: the firmware holds the arm (safe_command hold)
        self._have_command = self._have_position = self._fresh = False
        self._ever_commanded = False
        self._brakes = cfg.brakes
        self._command_ns = self._position_ns = 0
        self._success = bytearray(100)
        self._success_sum = self._success_index = 0
        self._lockstep = True
        self.scheduled = False                   # lockstep steps: on each command, or by step_lockstep only
        self.commands_received = self.commands_rejected = self.mode_rejected = 0
        self.statuses_published = 0
        self.statuses_due = 0                    # with a driver: its status periods, sent or not
        self.faults = FaultInjector(cfg, protocol, self.joint_names, self._ai, self._status_period_ns,
                                    self._required_mode or MODE_BITS["torque"], path) if cfg.faults else None
        self._contact_publisher = None
        if physics.contact is not None and cfg.contact.publish_rate > 0 and lcm is not None:
            self._contact_publisher = ContactResultsPublisher(physics.contact, self.channels.contact_results)
            self._contact_period_ns = round(1e9 / cfg.contact.publish_rate)
            self._contact_due = 0
        self.ft_sensor = ForceTorqueSensor(plant, physics, cfg.ft_sensor, f"{path}.ft_sensor") \
            if cfg.ft_sensor.enabled else None
        """The wrist force/torque sensor (drivers.sim.ft_sensor), or None."""
        self.viewer = None
        if viz is not None and viz.enabled and lcm is not None:
            from drivers.viz import ViewerBridge
            ground = physics.contact is not None and cfg.contact.ground.enabled
            self.viewer = ViewerBridge(plant, lcm, self.channels, viz,
                                       anchored=[ground_visual(cfg.contact.ground.height)] if ground else ())
        self.exited: DriverExit | None = None
        self.driver_log: list[str] = []
        self.driver = None
        if cfg.driver == "kuka_driver":
            self.driver = KukaDriver(self, cfg.kuka_driver, path)
            self._status_period_ns = self.driver.period_ns
        elif cfg.driver == "franka_driver":
            self.driver = FrankaDriver(self, cfg.franka_driver, path)
        self._adds_gravity = (cfg.driver == "kuka_driver" and cfg.kuka_driver.torque_only) or \
            (cfg.driver == "franka_driver" and cfg.franka_driver.control_mode == "torque")
        self.commanders = None
        """A drivers.sim.commanders.CommanderWatch (hil sim sets it on udpm://): a second commander refused."""
        self.subscription = None
        if lcm is not None:
            self.subscription = lcm.subscribe(self.channels.command, self._on_command)

    @staticmethod
    def protocol_joints(plant, cfg: SimConfig, path: str, gripper=None) -> list:
        actuated = sorted((plant.get_joint_actuator(i).joint() for i in plant.GetJointActuatorIndices()),
                          key=lambda j: j.velocity_start())      # the loop's order (drivers.core.robot.load_robot)
        if gripper is not None:                  # the gripper's joints have their own protocol
            actuated = [j for j in actuated if j.model_instance() != gripper.instance]
        if cfg.joints is None:
            joints = actuated
        else:
            names = {j.name(): j for j in actuated}
            joints = []
            for i, name in enumerate(cfg.joints):
                if name not in names:
                    raise ConfigError(f"{path}.joints[{i}]", f"{name!r} is not an actuated joint of the model "
                                                             f"(actuated: {sorted(names)})")
                joints.append(names[name])
        for j in joints:
            if j.type_name() not in ONE_DOF:
                raise ConfigError(f"{path}.joints", f"joint {j.name()!r} is {j.type_name()}; the protocol reports "
                                                    f"revolute and prismatic joints only")
        if not joints:
            raise ConfigError(f"{path}.joints", "the protocol needs at least one actuated joint")
        return joints

    # --- LCM ------------------------------------------------------------------------------------
    def _on_command(self, channel: str, data: bytes) -> None:
        if self.exited is not None:
            return
        if self.driver is not None:
            if self.commanders is not None and not self._from_commander(data):
                return
            if self.driver.on_command(data, self.wall_us()) and self._lockstep:
                self._fresh = True
                if not self.scheduled:
                    self.advance()
            return
        d = self._decoder
        if not d.decode(data):
            self.commands_rejected += 1
            return
        if self.commanders is not None and not self._from_commander(data):
            return
        if self._required_mode and d.control_mode != self._required_mode:
            # A driver refuses a command for another control mode; its arrays are not ours to use.
            self.commands_rejected += 1
            self.mode_rejected += 1
            self._have_command = False
            return
        t = self.physics.time_ns
        self.commands_received += 1
        if d.has_position:
            if not self._have_position:
                self._v_ff.fill(0.0)
            elif t > self._position_ns:
                np.subtract(d.position, self._q_prev, out=self._v_ff)
                self._v_ff *= 1e9 / (t - self._position_ns)
            np.copyto(self._q_prev, d.position)
            self._position_ns, self._have_position = t, True
        self._command_ns = t
        self._have_command = self._fresh = self._ever_commanded = True
        if self._lockstep and not self.scheduled:
            self.tick()

    def _from_commander(self, data: bytes) -> bool:
        """Whether the command comes from the one commander (drivers.sim.commanders); a second one's is
        refused and said once per sender."""
        if self.commanders.accept(data, self.physics.time_ns):
            return True
        self.commands_rejected += 1
        text = self.commanders.refusal(self.channels.command)
        if text:
            self.log(text)
        return False

    @property
    def rejected_by(self) -> dict[str, int]:
        """Commands rejected, by reason: the decoder's error counters, "control_mode" and
        "second_commander"."""
        counts = {k: v for k, v in self._decoder.counters.items() if v}
        if self.mode_rejected:
            counts["control_mode"] = self.mode_rejected
        if self.commanders is not None and self.commanders.refused:
            counts["second_commander"] = self.commanders.refused
        return counts

    # --- the real drivers (drivers.sim.real_drivers) -------------------------------------------------
    def wall_us(self, t: int | None = None) -> int:
        """The driver host's clock (µs): the wall clock in real time, a fixed epoch + t in lockstep."""
        return wall_us(self._lockstep, self.physics.time_ns if t is None else t)

    def abort(self, status: int, message: str) -> None:
        """The driver process ends with `status` after printing `message`: no more statuses, the arm held."""
        if self.exited is None:
            self.exited = DriverExit(status, message)
            self.log(message)

    def log(self, message: str) -> None:
        """What the driver prints (stderr in real time); the last 100 lines are kept in driver_log."""
        self.driver_log.append(message)
        del self.driver_log[:-100]
        if not self._lockstep:
            print(message, file=sys.stderr, flush=True)

    def step_lockstep(self) -> None:
        """Lockstep in one process (`scheduled`), the simulator's half of a tick (hil.loop's scheduler,
        after the loop's update): the LCM messages waiting are handled (the loop's command is taken,
        not stepped on), then the plant advances (advance()), whether a command came or not, as a
        robot's clock runs on. Nothing before the first status (publish_status). Not scheduled (a
        peer across a link, or driven by hand), lockstep steps on each command instead."""
        if self.lc is not None:
            while self.lc.handle_timeout(0) > 0:
                pass
        if self.statuses_published or self.physics.steps:
            self.advance()

    def advance(self) -> None:
        """Lockstep with a driver: steps until the next status is due (one status period: out, or lost to
        a transmission fault), or the driver ended; without one (Drake's simulated driver), one step."""
        if self.driver is None:
            self.tick()
            return
        due = self.statuses_due
        while self.exited is None and self.statuses_due == due:
            self.tick()

    def _driver_actuation(self, t: int):
        physics, uj = self.physics, self._uj
        gather(physics.q, self._qi, 1.0, self._q)
        gather(physics.v, self._vi, 1.0, self._v)
        u = self.driver.actuation(t, self.wall_us(t), self._q, self._v, uj)
        if u is None:
            return None
        return self._to_actuators(u, uj, self._adds_gravity)   # the cabinet / the Panda adds −τ_g itself

    # --- one step ---------------------------------------------------------------------------------
    def tick(self) -> None:
        """One step under the newest command (or the safe command), then the status of the new time."""
        physics = self.physics
        t = physics.time_ns
        if self.exited is not None:              # the driver process is gone: the arm on its brakes
            physics.hold()
            return
        if self.driver is not None:
            if isinstance(self.driver, KukaDriver) and self.driver.held(t):
                physics.hold()
            else:
                u = self._driver_actuation(t)
                if u is None:                    # ended now, or franka_driver's status_only: not controlled
                    physics.hold()
                    if self.exited is not None:
                        return
                else:
                    physics.step(u)
            self._publish(t + self._h_ns)
            if self.viewer is not None:
                self.viewer.tick(t + self._h_ns, physics.q, (t + self._h_ns) // 1000)
            return
        if self.faults is not None and self.faults.actuation:
            bad = self.faults.before_step(t, physics.actuator_enabled)
            if bad is not None and self.lc is not None:
                self.lc.publish(self.channels.command, bad)
        if self._brakes and not self._ever_commanded:
            physics.hold()                       # held on the brakes
        else:
            physics.step(self._actuation(t))
        self._publish(t + self._h_ns)
        if self.viewer is not None:
            t += self._h_ns
            self.viewer.tick(t, physics.q, t // 1000)

    def _actuation(self, t: int):
        """The actuator torques u of the step starting at t (the driver firmware)."""
        physics, d, uj = self.physics, self._decoder, self._uj
        fresh = self._have_command and t - self._command_ns <= self._timeout_ns
        if fresh:
            self._holding = False
        if not fresh or d.has_position or d.has_velocity:
            gather(physics.q, self._qi, 1.0, self._q)
            gather(physics.v, self._vi, 1.0, self._v)
        if fresh and (d.has_position or d.has_velocity):
            if d.has_position:
                self.impedance(d.position, d.velocity if d.has_velocity else self._v_ff, uj)
            else:
                self.impedance(None, d.velocity, uj)
            if d.has_torque:
                uj += d.torque
            source = uj
        else:
            if fresh:
                source = d.torque
            elif self._hold:                     # the firmware holds where the commands stopped
                if not self._holding:
                    np.copyto(self._q_hold, self._q)
                    self._holding = True
                return self._to_actuators(self.impedance(self._q_hold, None, uj), uj, False)
            elif self._neg_safe_damping is None:
                source = self._zeros
            else:
                source = np.multiply(self._neg_safe_damping, self._v, out=uj)
            return self._to_actuators(source, uj, self._gravity_compensation)
        return self._to_actuators(source, uj, False)

    def _to_actuators(self, source: np.ndarray, uj: np.ndarray, gravity: bool) -> np.ndarray:
        """The plant's actuation u from protocol-joint torques `source` (− τ_g(q) added when `gravity`:
        firmware that compensates it)."""
        if gravity:
            self._kernels.gravity(self.physics.q, self._gravity)
            gather(self._gravity, self._vi, 1.0, self._gravity_j)
            source = np.subtract(source, self._gravity_j, out=uj)
        if self._all_actuators:
            return source
        scatter(source, self._ai, self._u)
        if self.gripper is not None:
            t = self.physics.time_ns
            self.gripper.actuate(t, self._u, self.faults is not None and self.faults.gripper_silent(t))
        return self._u

    def impedance(self, q_cmd, v_d, uj: np.ndarray) -> np.ndarray:
        """The joint impedance firmware into uj: ID(q, v, kp∘(q_cmd − q) + kd∘(v_d − v)) + d∘v (q_cmd None:
        no position term; v_d None: zero). self._q, self._v must hold the protocol joints' q, v."""
        if q_cmd is not None:
            np.subtract(q_cmd, self._q, out=self._err)
            self._err *= self._kp
        else:
            self._err.fill(0.0)
        if v_d is None:
            np.negative(self._v, out=self._tmp)
        else:
            np.subtract(v_d, self._v, out=self._tmp)
        self._tmp *= self._kd
        self._err += self._tmp
        scatter(self._err, self._vi, self._accel)
        self._kernels.inverse_dynamics(self.physics.q, self.physics.v, self._accel, self._tau_full)
        gather(self._tau_full, self._vi, 1.0, uj)
        np.multiply(self._damping, self._v, out=self._tmp)
        uj += self._tmp
        return uj

    def _publish(self, t: int, force: bool = False) -> None:
        """The status (and, when due, the contact results and the force/torque reading) at simulated time t."""
        if self.ft_sensor is not None:
            self.ft_sensor.update(t, self.lc)
        if t % self._status_period_ns and not force:
            return
        physics, d, faults = self.physics, self._decoder, self.faults
        q, v = self._q, self._v
        gather(physics.q, self._qi, 1.0, q)
        gather(physics.v, self._vi, 1.0, v)
        tau_cmd, tau_meas, tau_ext = self._tau_cmd, self._tau_meas, self._tau_ext
        gather(physics.u_commanded, self._ai, self._sign_u, tau_cmd)
        gather(physics.u_applied, self._ai, self._sign_u, tau_meas)
        gather(physics.tau_external, self._vi, self._sign_ext, tau_ext)
        if faults is not None and faults.sensor:
            q, v = faults.measure(t, q, v)
        if self.driver is not None:
            self._publish_driver(t, q, v, tau_cmd, tau_meas, tau_ext)
            return
        commanded = self._have_command and t - self._h_ns - self._command_ns <= self._timeout_ns
        q_cmd = d.position if commanded and d.has_position else (self._q_hold if self._holding else self._q)
        v_cmd = d.velocity if not self._iiwa and commanded and d.has_velocity else self._zeros
        utime = t // 1000 if self._sim_utime else time.time_ns() // 1000
        if faults is not None and faults.depth:
            utime, (q, v, q_cmd, tau_meas, tau_cmd, tau_ext, v_cmd) = faults.delay(
                t, utime, (q, v, q_cmd, tau_meas, tau_cmd, tau_ext, v_cmd))
        copies = faults.copies(t) if faults is not None and faults.transmission else 1
        if copies and self.lc is not None:
            if self._iiwa:
                self._encoder.encode(utime, position_measured=q, velocity_estimated=v, position_commanded=q_cmd,
                                     torque_measured=tau_meas, torque_commanded=tau_cmd, torque_external=tau_ext)
            else:
                self._encoder.encode(utime, position_measured=q, velocity_estimated=v, position_commanded=q_cmd,
                                     torque_measured=tau_meas, torque_commanded=tau_cmd, torque_external=tau_ext,
                                     velocity_commanded=v_cmd, control_command_success_rate=self._success_rate(),
                                     robot_mode=self._panda_mode(commanded), robot_utime=t // 1000,
                                     control_mode=self._required_mode)
            for _ in range(copies):
                self._encoder.publish(self.lc)
            self.statuses_published += copies
        state = t - self._h_ns                   # the contact results are those at the start of the step
        if self._contact_publisher is not None and state >= self._contact_due and not force \
                and not (faults is not None and faults.silent(t)):
            self._contact_publisher.publish(self.lc, state // 1000)
            self._contact_due = (state // self._contact_period_ns + 1) * self._contact_period_ns

    def _publish_driver(self, t, q, v, tau_cmd, tau_meas, tau_ext) -> None:
        """The status as the real driver fills it (drivers.sim.real_drivers)."""
        driver, now = self.driver, self.wall_us(t)
        if self.lc is None:
            return
        self.statuses_due += 1
        faults = self.faults
        copies = faults.copies(t) if faults is not None and faults.transmission else 1   # the link's faults
        if isinstance(driver, KukaDriver):
            utime = driver.status(t, now, q, tau_ext)
            if utime is None or not copies:
                return
            commanding = driver.commanding
            q_cmd = driver.q_commanded if commanding else q
            self._encoder.encode(utime, position_measured=q, velocity_estimated=driver.v_filtered,
                                 position_commanded=q_cmd, position_ipo=q_cmd, torque_measured=tau_meas,
                                 torque_commanded=tau_cmd, torque_external=tau_ext)
            if not commanding:                   # outside COMMANDING the driver sends NaN ipo positions
                data = bytearray(self._encoder.tobytes())
                start = 20 + 3 * 8 * self.n
                data[start:start + 8 * self.n] = self._nan_ipo
                payload = bytes(data)
                for _ in range(copies):
                    self.lc.publish(self.channels.status, payload)
            else:
                for _ in range(copies):
                    self._encoder.publish(self.lc)
        else:
            if driver.check_reflex(tau_ext) or not copies:
                return
            mode = PANDA_IDLE if driver.mode == "status_only" else PANDA_MOVE
            self._encoder.encode(now, position_measured=q, velocity_estimated=v,
                                 position_commanded=driver.command_position(q), torque_measured=tau_meas,
                                 torque_commanded=tau_cmd, torque_external=tau_ext,
                                 velocity_commanded=driver.command_velocity(),
                                 control_command_success_rate=self._success_rate(), robot_mode=mode,
                                 robot_utime=t // 1000, control_mode=0)
            for _ in range(copies):
                self._encoder.publish(self.lc)
        self.statuses_published += copies

    def _success_rate(self) -> float:
        """Fraction of the last 100 status periods in which a command arrived (panda)."""
        new = 1 if self._fresh else 0
        self._success_sum += new - self._success[self._success_index]
        self._success[self._success_index] = new
        self._success_index = (self._success_index + 1) % 100
        self._fresh = False
        return self._success_sum / 100

    def _panda_mode(self, commanded: bool) -> int:
        return PANDA_MOVE if commanded else (PANDA_REFLEX if self._ever_commanded else PANDA_IDLE)

    # --- public -----------------------------------------------------------------------------------
    def publish_status(self) -> None:
        """Publishes the status of the current time without stepping (lockstep: the first status), and
        the viewer messages of that state if due."""
        t = self.physics.time_ns
        self._publish(t, force=True)
        if self.viewer is not None:
            self.viewer.tick(t, self.physics.q, t // 1000)

    @property
    def time_ns(self) -> int:
        return self.physics.time_ns

    def push(self, body: str, F_Bq_W, duration: float, start: float | None = None, p_BoBq_B=(0.0, 0.0, 0.0)) -> None:
        """Pushes the arm: the spatial force F_Bq_W = [τ; f] (N·m, N, in W) at the point Bq of the body (or
        frame) B named `body` (p_BoBq_B: m, in B), on the steps that start in [start, start + duration)
        (seconds of simulated time; start None: now). It acts in the physics and in torque_external.
        ValueError for an unknown body, non-finite values or a duration under one time_step."""
        h = self.config.time_step
        if not duration >= h:
            raise ValueError(f"duration must be at least one time_step ({h:g} s), got {duration!r}")
        t = self.physics.time_ns if start is None else round(start * 1e9)
        self.physics.push(body, F_Bq_W, t, t + round(duration * 1e9), p_BoBq_B)

    def plant_state(self) -> dict:
        """The plant now: q, v (copies), the actuation of the last step (commanded after the clamp,
        applied), its contact torque, its external torque (contact and pushes, MultibodyPlant's sign) and
        contact results (Drake's ContactResults)."""
        p = self.physics
        return {"time_ns": p.time_ns, "q": p.q.copy(), "v": p.v.copy(), "u_commanded": p.u_commanded.copy(),
                "u_applied": p.u_applied.copy(), "tau_contact": p.tau_contact.copy(),
                "tau_external": p.tau_external.copy(), "contact_results": p.contact_results()}

    def summary(self) -> dict:
        return {"steps": self.physics.steps, "sim_time_s": self.physics.time_ns * 1e-9,
                "commands_received": self.commands_received, "commands_rejected": self.commands_rejected,
                "rejected_by": self.rejected_by, "statuses_published": self.statuses_published,
                "contact_results_published": self._contact_publisher.published if self._contact_publisher else 0,
                **({"contact_results_with_contact": self._contact_publisher.with_contact,
                    "contact_max_force_n": round(self._contact_publisher.max_force, 6)}
                   if self._contact_publisher else {}),
                "faults": self.faults.summary() if self.faults else [],
                **({"driver": {**self.driver.summary(),
                               "exit_status": None if self.exited is None else self.exited.status}}
                   if self.driver is not None else {}),
                **({"exit": {"status": self.exited.status, "message": self.exited.message}}
                   if self.exited is not None else {}),
                **({"viz": self.viewer.summary()} if self.viewer is not None else {})}

    def close(self) -> None:
        """Stops listening on the LCM (commands, and the viewer's requests)."""
        if self.subscription is not None:
            self.lc.unsubscribe(self.subscription)
            self.subscription = None
        if self.gripper is not None:
            self.gripper.close()
        if self.viewer is not None:
            self.viewer.close()
        if self.commanders is not None:
            self.commanders.close()
            self.commanders = None

    def _watched_tick(self) -> None:
        self.commanders.poll()                   # its socket drained each step: it never overflows
        self.tick()

    def run_realtime(self, duration: float | None = None, stop_event: threading.Event | None = None,
                     spin_us: float = 200.0) -> dict:
        """Steps paced to the wall clock (drivers.core.clock.RealTimeClock: sleep until spin_us before each
        deadline, then spin) with the newest command, until `duration` seconds of simulated time
        have passed, stop_event is set, or SIGINT/SIGTERM (handled while running in the main
        thread). Steps up to 100 periods late are caught up; later ones re-phase the schedule
        (`resyncs`). Returns summary() with the wall time, real-time factor and lateness."""
        if self.lc is None:
            raise RuntimeError("run_realtime needs an LCM instance")
        period = self._h_ns
        end = None if duration is None else self.physics.steps + round(duration * 1e9 / period)
        first = self.physics.steps
        self._lockstep = False
        try:
            tick = self.tick if self.commanders is None else self._watched_tick
            clock, wall = run_paced(period, spin_us, (self.lc,), self.publish_status, tick, stop_event,
                                    lambda: (end is not None and self.physics.steps >= end) or self.exited is not None)
        finally:
            self._lockstep = True
        summary = self.summary()
        elapsed = (self.physics.steps - first) * period
        summary.update(wall_time_s=wall * 1e-9, real_time_factor=elapsed / max(wall, 1), late_steps=clock.late,
                       max_lateness_us=clock.max_lateness / 1e3, resyncs=clock.resyncs)
        return summary

