"""The control loop: status in, torque out, at a fixed rate, every tick bounded and safe.

One tick: wait for the deadline → hardware.read (the LCM waiting, without blocking: the newest
status, e-stop, plan stream) → safety checks → trajectory and controller (or the safe command) →
saturation and rate limit → hardware.write (the command) → record timing; then, outside the measured
compute time, telemetry, the viewer bridge and (in lockstep) delivering the command to the simulator.
Nothing in a tick raises: a failure becomes a FAULT with its reason, and the safe command is sent.
The robot's protocol and the quirks of the driver in front of it are hil.hardware's, not the loop's:
one loop drives an arm (iiwa, Panda) and a legged robot (floating_base, hil.floating_base) alike. The
state the law sees is the plant's (q, v: a floating base's first, then the joints'); the safety, the
trajectory and the command are the actuated joints'.

Trajectories run on the robot's clock, the utime of the newest status (as Drake's LcmDrivenLoop
does): the desired state belongs to the same instant as the measured one, however late the tick,
and the commands are a function of the status stream alone, so a recorded run replays exactly
(hil.replay).

The loop's lifecycle is hil.lifecycle's (docs/hil.md, Lifecycle): ControlLoop(...) holds its
arguments; configure() allocates and subscribes; activate() starts the clock (and, in real time, the
process settings); update() is one tick; deactivate() sends the exit command; close() unsubscribes.
run() is all of them but close(). Within ACTIVE the safety state machine (hil.safety) decides who
commands: the controller is active exactly while the safety is RUNNING.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass

import numpy as np

from drivers.core import _control
from drivers.core.clock import LockstepClock, RealTimeClock
from drivers.core.config import RunConfig, channels_for
from drivers.core.robot import Robot, joint_label, joint_labels
from messages.enums import SafetyState

from .collision_guard import make_guard
from .controller_api import Command, ControllerFault, State
from .controller_guard import ControllerGuard
from .controllers import StableJointLaw, config_folders, make_controller
from .ft_sensor import WrenchSensor
from .gripper import GripperLink
from .hardware import hardware_for
from .lifecycle import Lifecycle, LifecycleState, Mode
from .process import RealtimeProcess
from .safety import SafetyMonitor, Transition
from .sketch import HeadTail
from .telemetry import TelemetryPublisher, TickRecorder

log = logging.getLogger(__name__)
_set_tick = State.tick.__set__


@dataclass
class StartUp:
    """The start-up line (`startup` in the summary): said once the status period is learned, or as the
    driver's start guard begins."""
    announced: bool = False
    text: str = ""


class ControlLoop(Lifecycle):
    """The HIL loop for one robot (an arm or a legged robot) over one LCM instance.

    Mode.REALTIME paces ticks to the wall clock; Mode.LOCKSTEP runs against a simulator on the same
    (memq://) LCM: after each tick the simulator (`sim`, whose summary joins the loop's) takes the
    command and steps once (update()), and publishes the status the next tick uses. `trajectory`
    (default: the config's) is a hil.trajectories.Source. `status_wait_s` (lockstep over a link):
    wait that long for each tick's status. `controller`: the law to run (a hil.Controller, its class,
    or a function law(state, command)) instead of the config's controller.type; `check_alloc`: trace
    what the law's update allocates (hil.controller_guard); `fault_on_overrun`: whether
    controller.overrun_limit overruns in a row fault (default: in real time). `clock`: an arm of a
    station (hil.station) ticks on the station's clock, which owns the process settings; `hardware_lc`:
    the LCM its robot's status and command are on, when not `lc` (hil.station_bus).
    The robot is `hardware` (hil.hardware: robot.protocol's status and command, robot.driver's demands).
    """

    def __init__(self, cfg: RunConfig, robot: Robot, lc, mode: Mode | str = Mode.REALTIME, trajectory=None,
                 viz=None, trace_every: int = 1, sim=None, status_wait_s: float = 0.0, controller=None,
                 check_alloc: bool = False, fault_on_overrun: bool | None = None, clock=None, hardware_lc=None):
        self.cfg, self.robot, self.lc, self.mode = cfg, robot, lc, Mode(mode)
        self._station_clock = clock     # an arm of a station (hil.station): its clock, the station's process
        self._hardware_lc = hardware_lc or lc
        self.trajectory, self.viz, self.sim = trajectory, viz, sim
        self.trace_every, self.status_wait_s = trace_every, status_wait_s
        self._law, self._check_alloc = controller, check_alloc
        self._fault_on_overrun = self.mode is Mode.REALTIME if fault_on_overrun is None else fault_on_overrun

    def on_configure(self) -> None:
        cfg, robot, lc = self.cfg, self.robot, self.lc
        n = self.n = robot.n
        self.period_ns = int(round(1e9 / cfg.loop.rate_hz))
        self.channels = channels_for(cfg)
        self.clock = self._station_clock or (LockstepClock(self.period_ns) if self.mode is Mode.LOCKSTEP else
                                             RealTimeClock(self.period_ns, int(cfg.loop.spin_us * 1e3)))
        self.controller = make_controller(robot.plant, cfg.controller, robot.end_effector,
                                          period=self.period_ns * 1e-9, joint_names=robot.joint_names,
                                          controller=self._law, search=config_folders(cfg), contacts=robot.contacts,
                                          q0=robot.q0)
        budget_us = cfg.controller.budget_us or self.period_ns * 0.5e-3
        self.guard = ControllerGuard(int(budget_us * 1e3), cfg.controller.overrun_limit,
                                     fault_on_overrun=self._fault_on_overrun, check_alloc=self._check_alloc)
        # position_and_torque: the driver's own position controller runs the inverse dynamics of the arm
        # (Drake's SimIiwaDriver, the KUKA cabinet), so the torque sent is the feed-forward beyond it:
        # a model-based law's C(q, v) v + d∘v (Controller.adds_bias) is taken out.
        self.driver_inverse_dynamics = cfg.robot.command == "position_and_torque" and self.controller.adds_bias
        self.gravity = robot.plant.kernels()
        if self.trajectory is None:
            from .trajectories import make_trajectory
            self.trajectory = make_trajectory(cfg.trajectory, robot.plant, robot.joint_names, lc, self.period_ns,
                                              robot.end_effector, background=self.mode is Mode.REALTIME,
                                              safety=cfg.safety)
        self.safety = SafetyMonitor(robot.plant, cfg.safety, self.period_ns, lc, self.channels.estop, joints=n,
                                    joint_names=robot.joint_names)
        self.collision = self.safety.collision = make_guard(robot.plant, cfg.safety.collision)
        if self.collision is not None and self.viz is not None:
            self.collision.show_in(lc)                  # its capsules and nearest pair in Meldis
        # The robot (hil.hardware): statuses in, commands out; position setpoints move at most v_max·T each.
        hw = self.hardware = hardware_for(cfg, robot, self._hardware_lc, self.channels, self.clock,
                                          self.safety.v_hi * (self.period_ns * 1e-9))
        # The damping safe command holds an arm against gravity unless the robot does that itself (a
        # floating base's safe command is its drives' damping: the hardware's, no torque of the loop's).
        self.hold_gravity = (cfg.safety.on_fault == "damping" and not cfg.controller.robot_compensates_gravity
                             and not hw.drive_damping)
        self.remove_gravity = cfg.controller.robot_compensates_gravity
        self.timeout_periods = cfg.safety.status_timeout_periods
        self.q, self.v = hw.q, hw.v                     # the plant's (what the law sees)
        self.qj, self.vj = hw.q_joints, hw.v_joints     # the actuated joints' (safety, trajectory)
        self.sends_setpoints = hw.sends_setpoints
        self.q_d, self.v_d, self.a_d = np.zeros(n), np.zeros(n), np.zeros(n)
        self.tau_cmd, self.tau_g, self.tau_v = np.zeros(n), np.zeros(n), np.zeros(n)
        self.zero = np.zeros(n)
        # What the law sees (the torques in MultibodyPlant's signs) and writes; self.tau is its command.tau.
        ft = cfg.sensors.ft
        self.ft = WrenchSensor(lc, ft.channel, ft.timeout) if ft.enabled else None
        self.gripper = GripperLink(lc, cfg.gripper) if cfg.gripper.type is not None else None
        self.state = State(self.q, self.v, hw.tau_measured, hw.tau_commanded, hw.tau_external,
                           self.q_d, self.v_d, self.a_d, period=self.period_ns * 1e-9, clock=hw.timing,
                           has_tau_external=hw.has_tau_external, ft=self.ft, contact=hw.contact,
                           gripper=self.gripper)
        self.cmd = Command(n)
        self.tau = self.cmd.tau
        self.startup = StartUp()
        # the plots' τ: the command's, or the measured one where the command carries none (position, velocity)
        torque = "measured" if cfg.robot.command in ("position", "velocity") else "commanded"
        self.tau_traced = hw.tau_measured if torque == "measured" else self.tau_cmd
        self.recorder = TickRecorder(n, self.period_ns, int(cfg.loop.deadline_budget_us * 1e3),
                                     trace_every=self.trace_every, joint_names=robot.joint_names, torque=torque)
        if torque == "commanded":       # the plots show it instead of a commanded τ that stays zero
            self.recorder.follow("tau_measured", hw.tau_measured)
        self._follow_devices()
        self.telemetry = TelemetryPublisher(lc, self.channels, n, cfg.telemetry.rate_hz, self.period_ns,
                                            self.controller.name)
        self.tick_index = 0
        self.tracking_error = 0.0
        self.transitions = HeadTail()       # 'tick N: text', the first and the last
        self.process: list[str] = []        # the real-time process settings in effect
        self._realtime_process: RealtimeProcess | None = None

    def on_activate(self) -> None:
        """Real time: the process settings (loop.cpus, priority, lock_memory, gc); the clock starts."""
        if self.mode is Mode.REALTIME and self._station_clock is None:
            self._realtime_process = RealtimeProcess(self.cfg.loop).__enter__()
            self.process = self._realtime_process.applied
        if self.guard.alloc is not None:
            self.guard.alloc.start()
        self.clock.start()

    def on_deactivate(self) -> None:
        """The exit command (publish_exit_command) and the telemetry's last message (the final state), the
        controller stopped, the process settings undone."""
        try:
            if self.publish_exit_command():
                hw = self.hardware
                self.telemetry.final(self.tick_index, self.clock.now_ns() // 1000, self.recorder, self.safety,
                                     hw.status.utime, hw.timing.rejected, self.qj, self.vj, self.q_d, self.tau_cmd)
        finally:
            if self.controller.active:
                self._law_step(self.controller.deactivate)
            if self.guard.alloc is not None:
                self.guard.alloc.stop()
            process, self._realtime_process = self._realtime_process, None
            if process is not None:
                process.__exit__(None, None, None)

    def close(self) -> None:
        """FINALIZED: stops listening on the LCM (status, command, e-stop, a streamed trajectory). The
        LCM object holds its handlers, which hold their owners: without this neither is freed (nor the
        LCM's file descriptors)."""
        if self.lifecycle is LifecycleState.UNCONFIGURED:
            self.lifecycle = LifecycleState.FINALIZED
            return
        if self.active:
            self.deactivate()
        self.hardware.close()
        for device in (self.ft, self.gripper):
            if device is not None:
                device.close()
        for owner, attr in ((self.safety, "estop_subscription"), (self.trajectory, "subscription")):
            subscription = getattr(owner, attr, None)
            if subscription is not None:
                self.lc.unsubscribe(subscription)
                setattr(owner, attr, None)
        self.lifecycle = LifecycleState.FINALIZED

    # --- one tick ---------------------------------------------------------------------------------
    def _transition(self, t: Transition, now_ns: int) -> None:
        text = t.describe()
        self.transitions.append(f"tick {self.tick_index}: {text}")
        (log.warning if t.fault else log.info)("%s", text)
        self.telemetry.safety_event(self.tick_index, now_ns // 1000, t)
        if t.state == SafetyState.RUNNING:
            # (Re)start the trajectory from where the robot is, so nothing jumps.
            self.trajectory.start(self.qj, self.hardware.timing.robot_ns)
            self.hardware.release_hold()
            error = self._law_step(self.controller.activate)
            if error is not None:
                self._transition(self.safety.controller_failed(
                    self.tick_index, f"on_activate: {type(error).__name__}: {error}"), now_ns)
        else:
            self.tracking_error = 0.0     # no trajectory is tracked outside RUNNING: nothing to hold against
            if self.controller.active:
                self._law_step(self.controller.deactivate)

    def _law_step(self, step) -> Exception | None:
        """The law's activate() or deactivate() (its on_activate / on_deactivate): what it raises is the
        law's failure (the traceback logged once, hil.controller_guard), returned, never raised."""
        try:
            step()
        except Exception as e:
            self.guard.failed(e)
            return e
        return None

    def update(self) -> None:
        """One tick (ACTIVE): allocation-free in steady state; raises nothing (a failure is a FAULT). With
        a simulator in this process it is the scheduler: the loop's tick, then the simulator's step
        (sim.step_lockstep: it takes the command just sent and advances once), alternately; nothing
        else steps the simulator."""
        self._tick()
        if self.sim is not None:
            self.sim.step_lockstep()

    def _tick(self) -> None:
        start, lateness = self.clock.wait()
        hw, k = self.hardware, self.tick_index
        if self.status_wait_s:
            hw.await_status(k, self.status_wait_s)
        wall = time.perf_counter_ns()
        hw.read(k)                       # (handles every subscription: the F/T sensor's too)
        if self.ft is not None:
            self.ft.update(start)
        if self.gripper is not None:
            self.gripper.update(start)
            self.safety.device_fault = self.gripper.fault
        timing, startup = hw.timing, self.startup
        have_status = timing.last_tick >= 0
        if hw.guard_ns and hw.guard_active(start):
            if timing.clock.learned:
                self._announce()
            self.tick_index += 1
            return                       # the driver's start guard: no command yet
        if have_status and not startup.announced and (hw.guard_ns or timing.clock.learned):
            self._announce(force=True)
        age = self._status_age(k, have_status, start)
        self.safety.utime = hw.status.utime
        t = self.safety.check(k, age, have_status and age < self.timeout_periods,
                              self.qj, self.vj, self.tracking_error)
        if t is not None:
            self._transition(t, start)
        if hw.foreign.seen > hw.foreign.reported:
            foreign = hw.second_commander()
            if not self.safety.controller_latched:
                self._transition(self.safety.controller_failed(k, foreign), start)
        if timing.clock.interleaved and not hw.streams_told:
            self._transition(self.safety.status_unusable(k, hw.second_status_stream()), start)
        if self.safety.commanding:
            self._control(start)
        if not have_status:
            self.tick_index += 1
            return                        # nothing to command before the first status
        commanding = self.safety.commanding             # (the law may have faulted)
        if not commanding:
            if age >= self.timeout_periods or hw.drive_damping:
                _control.add(self.zero, self.zero, 0.0, self.tau)        # no recent velocity: no damping
            else:
                self.safety.safe_command(self.vj, self.tau)              # the newest v, while still valid
            if self.hold_gravity and _control.first_nonfinite(self.q) < 0:
                self.gravity.gravity(self.q, self.tau_g)                 # − τ_g: the arm does not fall
                _control.add(self.tau, self.tau_g, -1.0, self.tau)
        self.safety.limit(self.tau, self.tau_cmd)
        if hw.write(start, self.tau_cmd, self.cmd.q, self.cmd.v, commanding):
            self.recorder.torque(self.tau_cmd)
        if self.gripper is not None:
            self.gripper.write(start, self.cmd, commanding)     # outside RUNNING: none (hil.gripper)
        self.recorder.record(start, lateness, time.perf_counter_ns() - wall)
        self._after(start)
        self.tick_index += 1

    def _status_age(self, k: int, have_status: bool, now_ns: int) -> int:
        """Status periods since the newest valid status: ticks × loop period / the learned status period
        (the loop's when faster); before it is learned, 0 until loop.start_timeout has passed."""
        if not have_status:
            return 0 if self.safety.state == SafetyState.INIT else k + 1   # waiting for the first: no timeout
        timing = self.hardware.timing
        age = k - timing.last_tick
        period = timing.clock.period_ns
        if period is None:
            late = now_ns - timing.arrived_ns > self.cfg.loop.start_timeout * 1e9
            return self.cfg.safety.status_timeout_periods if late else 0
        return age * self.period_ns // max(period, self.period_ns)

    def _announce(self, force: bool = False) -> None:
        """The start-up line (`startup` in the summary): what the first status said, the status period
        learned and the timeout it gives, the guard waited."""
        hw, startup = self.hardware, self.startup
        period = hw.timing.clock.period_ns
        if startup.announced or (not hw.timing.clock.learned and not force):
            return
        startup.announced = True
        utime = hw.status.utime
        clock = "-1: the driver is synchronising its clock" if utime == -1 else f"{utime}"
        text = f"first status on {self.channels.status} (utime {clock})"
        if hw.timing.clock.interleaved:
            text += f"; two status streams interleave on {self.channels.status}: no one status period"
        elif period is not None:
            text += (f"; status period {period * 1e-6:.2f} ms ({1e9 / period:.0f} Hz), status timeout "
                     f"{self.cfg.safety.status_timeout_periods * max(period, self.period_ns) * 1e-6:.1f} ms")
        if period is not None and _control.first_nonfinite(self.q) < 0 and not hw.drive_damping:
            from drivers.sim.physics import joint_inertias
            inertia, hold = joint_inertias(self.robot.plant, self.q), max(period, self.period_ns)
            capped = self.safety.cap_damping(inertia, hold)
            if capped:
                text += (f"; safe-command damping capped at m/T for {joint_labels(self.robot.joint_names, capped)}: "
                         f"{[round(float(self.safety.damping[i]), 3) for i in capped]} N·m·s/rad")
            capped = self.controller.cap_damping(inertia, hold)
            if capped:
                text += (f"; the controller's joint-damping compensation capped at m/T for "
                         f"{joint_labels(self.robot.joint_names, capped)}: "
                         f"{[round(float(-self.controller.neg_damping[i]), 3) for i in capped]} N·m·s/rad")
            unstable = self.controller.gains_warning(self.q, hold) if isinstance(self.controller, StableJointLaw) \
                else None
            if unstable:
                log.warning("the controller's gains at the status period: %s", unstable)
                text += f"; UNSTABLE gains at the status period: {unstable}"
        if hw.guard_ns:
            text += f"; waiting {hw.guard_ns * 1e-9:g} s (robot.kuka_driver.start_guard) before the first command"
        log.info("%s", text)
        startup.text = text

    def publish_exit_command(self) -> bool:
        """The safe command, once, as the loop leaves (every exit path: end, signal, fault, exception):
        the safe torque of the fault state (damping or zero, + gravity hold when the robot does not
        compensate it), positions = the measured q, velocities 0 (hil.hardware's write_exit). False if
        no status was ever seen, or it went out already."""
        if not self.hardware.exit_pending:
            return False
        self.safety.safe_command(self.vj, self.tau)
        if self.hold_gravity and _control.first_nonfinite(self.q) < 0:
            self.gravity.gravity(self.q, self.tau_g)
            _control.add(self.tau, self.tau_g, -1.0, self.tau)
        _control.saturate(self.tau, self.tau, self.safety.effort, np.inf, self.tau_cmd)
        return self.hardware.write_exit(self.clock.now_ns(), self.tau_cmd)

    def _control(self, now_ns: int) -> None:
        """The trajectory at the robot's clock, the law's state and command (its clock and tick; the
        setpoints q_d and v_d + gain (q_d − q) in command.q / command.v; the torques are hil.hardware's,
        refreshed with each status), the law (guarded), and what the robot does itself taken out."""
        state, cmd = self.state, self.cmd
        try:
            robot_ns = self.hardware.timing.robot_ns
            self.trajectory.sample(robot_ns, self.q_d, self.v_d, self.a_d)
            if self.trajectory.error is not None:
                raise RuntimeError(f"trajectory: {self.trajectory.error}")
            if self.gripper is not None:
                self.gripper.track(self.trajectory, cmd)
            _set_tick(state, self.tick_index)        # (the slot itself: State.__setattr__ guards its arrays)
            if self.sends_setpoints:
                np.copyto(cmd.q, self.q_d)
                _control.add(self.q_d, self.qj, -1.0, cmd.v)
                _control.add(self.v_d, cmd.v, self.cfg.robot.velocity_gain, cmd.v)
            try:
                overrun = self.guard.call(self.controller.update, self.state, self.cmd)
            except Exception as e:
                self.guard.failed(e)
                raise
            if overrun is not None:
                self._transition(self.safety.controller_failed(self.tick_index, overrun), now_ns)
                return
            if self.remove_gravity:                              # the robot adds −τ_g itself: take it out
                self.gravity.gravity(self.q, self.tau_g)
                _control.add(self.tau, self.tau_g, 1.0, self.tau)
            if self.collision is not None:                       # the guard's warning-zone policy
                self.collision.shape(self.q, self.v, self.tau)
            if self.driver_inverse_dynamics:                     # its ID applies C(q, v) v + d∘v already
                self.gravity.bias(self.q, self.v, self.tau_v)
                _control.damping(self.v, self.controller.neg_damping, self.tau_v, 1.0, self.tau_v)   # + d∘v
                _control.add(self.tau, self.tau_v, -1.0, self.tau)
        except Exception as e:            # a controller must never take the loop down
            why = str(e) if isinstance(e, ControllerFault) else f"{type(e).__name__}: {e}"
            self._transition(self.safety.controller_failed(self.tick_index, why), now_ns)
            return
        i = _control.first_nonfinite(self.tau)
        if i >= 0:
            why = f"non-finite torque on {joint_label(self.robot.joint_names, i)}"
            self._transition(self.safety.controller_failed(self.tick_index, why), now_ns)
            return
        self.tracking_error = self.recorder.track(self.qj, self.q_d)

    def _follow_devices(self) -> None:
        """The plots' device panels: the gripper's status and command, the F/T wrench, and in lockstep the
        simulated plant's q with where each free object's p_WO is in it."""
        rec = self.recorder
        if self.gripper is not None:
            rec.follow("gripper", self.gripper.status)
            rec.follow("gripper_sent", self.gripper.sent)
        if self.ft is not None:
            rec.follow("wrench", self.ft.wrench)
        physics = getattr(self.sim, "physics", None)
        objects = [o.name for o in getattr(self.cfg.sim, "objects", []) if not o.welded]
        if physics is not None and objects:
            plant = physics.plant
            rec.follow("sim_q", physics.q)
            rec.objects = [(name, plant.GetBodyByName(name).floating_positions_start() + 4) for name in objects
                           if plant.HasBodyNamed(name) and plant.GetBodyByName(name).is_floating_base_body()]

    def _after(self, now_ns: int) -> None:
        """Work outside the measured compute time."""
        hw = self.hardware
        self.telemetry.maybe_publish(self.tick_index, now_ns // 1000, self.recorder, self.safety, hw.status.utime,
                                     hw.timing.rejected, self.qj, self.vj, self.q_d, self.tau_cmd)
        if self.viz is not None and self.viz.tick(now_ns, self.q, hw.status.utime) and self.collision is not None:
            self.collision.draw(hw.status.utime, self.viz.loads)
        self.recorder.trace((now_ns - self.recorder.first_ns) * 1e-9, self.qj, self.q_d, self.tau_traced)

    # --- running ----------------------------------------------------------------------------------
    def run(self, duration_s: float | None = None, stop=None, on_tick=None) -> dict:
        """The lifecycle in one call: configure (if not yet), activate, update until `duration_s` of
        loop time has passed after the first status, `stop()` is true, or (real time) the first status
        does not come within loop.start_timeout; deactivate on every exit path. Returns the summary.
        With telemetry.log set, the run's LCM traffic is recorded there (hil.runlog)."""
        self.configure()
        duration_s = self.cfg.loop.duration if duration_s is None else duration_s
        limit = None if duration_s is None else int(round(duration_s * 1e9 / self.period_ns))
        from .runlog import run_logged
        return run_logged(self.cfg, self.lc, self.mode, lambda: self.clock.now_ns() // 1000,
                          lambda: self._ticks(limit, stop, on_tick), self.deactivate, self.summary)

    def _ticks(self, limit: int | None, stop, on_tick) -> None:
        self.activate()
        run_ticks(self, self.cfg.loop.start_timeout, limit, stop, on_tick, lambda: self.hardware.timing.last_tick >= 0,
                  lambda: f"no valid status on {self.channels.status} within {self.cfg.loop.start_timeout} s (is the "
                          f"robot driver or `hil sim` running on {self.cfg.lcm.url}?)",
                  lambda: f"the simulator sent no status on {self.channels.status}")

    def _law_metrics(self) -> dict:
        """{"controller_metrics": the law's metrics()} when it has any; what is wrong with them instead
        when it raises or returns something JSON cannot hold (the summary is made whatever the law does)."""
        try:
            metrics = self.controller.metrics()
        except Exception as e:
            return {"controller_metrics": {"error": f"metrics() raised {type(e).__name__}: {e}"}}
        if not metrics:
            return {}
        try:
            if not isinstance(metrics, dict):
                raise TypeError(f"{type(metrics).__name__} is not a mapping")
            return {"controller_metrics": json.loads(json.dumps(metrics, default=_plain))}   # numpy's as plain
        except (TypeError, ValueError) as e:
            return {"controller_metrics": {"error": f"metrics() returned what the summary cannot hold: {e}"}}

    def summary(self) -> dict:
        hw = self.hardware
        timing, c = hw.timing, hw.commands
        return self.recorder.summary(self.safety, {
            "controller": self.controller.name,
            "controller_timing": self.guard.summary(),
            **self._law_metrics(),
            "status": {"received": timing.received, "rejected": timing.rejected,
                       "commands_sent": c.sent, "skipped_ticks": self.clock.skipped,
                       "period_ms": None if timing.clock.period_ns is None
                       else round(timing.clock.period_ns * 1e-6, 3),
                       "clock_jumps": timing.clock.jumps, "foreign_commands": hw.foreign.seen,
                       "exit_command_sent": c.exit_sent},
            "transitions": self.transitions.lines("transitions"),
            "startup": self.startup.text,
            "process": self.process,
            **hw.summary(),
            **(self.ft.summary() if self.ft is not None else {}),
            **({"collision": self.collision.summary()} if self.collision is not None else {}),
            **(self.gripper.summary() if self.gripper is not None else {}),
            **({"sim": self.sim.summary()} if self.sim is not None else {}),
            **({"viz": self.viz.summary()} if self.viz is not None else {}),
        })


def _plain(x):
    """A numpy value as plain Python (json's default); a TypeError for anything else JSON cannot hold."""
    if hasattr(x, "tolist"):
        return x.tolist()
    raise TypeError(f"{type(x).__name__} is not a JSON value")


def run_ticks(loop, start_timeout: float, limit: int | None, stop, on_tick, started, late, silent) -> None:
    """loop.update() until `limit` ticks after started() turned true, or stop(); on_tick(loop) after each
    of those. Before the start: TimeoutError(late()) in real time after start_timeout s, TimeoutError(
    silent()) in lockstep after 1000 ticks (a ControlLoop, or a station's hil.station.StationLoop)."""
    start_wall = time.monotonic()
    ticks_after_start = 0
    while not (stop is not None and stop()):
        loop.update()
        if not started():
            if loop.mode is Mode.REALTIME and time.monotonic() - start_wall > start_timeout:
                raise TimeoutError(late())
            if loop.mode is Mode.LOCKSTEP and loop.tick_index > 1000:
                raise TimeoutError(silent())
            continue
        ticks_after_start += 1
        if on_tick is not None:
            on_tick(loop)
        if limit is not None and ticks_after_start >= limit:
            break
