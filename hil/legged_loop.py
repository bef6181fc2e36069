"""The loop of a legged robot from a run config: robot.protocol floating_base, controller.type
whole_body (docs/wbc.md, Run configs). `hil run CONFIG` and `hil sim CONFIG` dispatch here.

    loop = LeggedLoop(cfg, lc).configure()           # hil.legged.LeggedTorqueControl on the config's channels
    loop.run(duration)                               # real time: one QP per status as it arrives
    loop = LeggedLoop(cfg, lcm.LCM("memq://"), Mode.LOCKSTEP).configure()   # loop.sim: the simulated robot
    loop.run(10.0)                                   # lockstep: the simulated robot steps once per command

The control is status-driven (as Drake's LcmDrivenLoop): each lcmt_hil_floating_base_status gets one
lcmt_hil_joint_command. The loop around it keeps what the arms' loop keeps: the real-time process
settings (loop.cpus, priority, lock_memory, gc), the start timeout, a status timeout (no status for
safety.status_timeout_periods × the loop period: the safe state), the safe command on every exit
path, the run log (telemetry.log) and a summary with the controller's compute time.

Its lifecycle is the arms' loop's (hil.lifecycle, docs/hil.md): configure() loads the model and
builds the controller (and, in lockstep, the simulated robot on the same plant); activate() applies
the process settings and starts the controller listening; update() handles the LCM once (each
status: one QP); deactivate() sends the exit command.
"""
from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

from core.config import RunConfig, channels_for
from core.schema import load
from drivers.sim.legged import SimulatedLeggedRobot
from planning.legged_contacts import legged_feet
from planning.legged_models import load_legged
from planning.whole_body import WholeBodyWeights

from .legged import LeggedTorqueControl
from .lifecycle import Lifecycle, Mode
from .process import RealtimeProcess

COMPUTE_SAMPLES = 1 << 16          # compute times kept for the percentiles (a ring)


def feet_of(contacts) -> dict:
    """{frame name: frame} of the contact points' frames, in order (the feet the status reports)."""
    feet = {}
    for c in contacts:
        feet.setdefault(c.frame.name(), c.frame)
    return feet


def make_legged_sim(cfg: RunConfig, plant, contacts, q0, lc, *, lockstep: bool, viz=None) -> SimulatedLeggedRobot:
    """The simulated legged robot of the config's sim section (initial positions: the preset's
    standing pose unless given; contact always on), on the config's channels."""
    sim = cfg.sim                                       # a copy changes these two, the config stays as loaded
    q0 = np.asarray(q0).tolist() if sim.initial_positions is None else sim.initial_positions
    sim = dataclasses.replace(sim, initial_positions=q0, contact=dataclasses.replace(sim.contact, enabled=True))
    channels = channels_for(cfg)
    return SimulatedLeggedRobot(plant, feet_of(contacts), sim, lc, status_channel=channels.status,
                                command_channel=channels.command, contact_channel=channels.contact_results,
                                safe_damping=cfg.controller.whole_body.safe_damping, viz=viz, lockstep=lockstep)


def make_legged_control(cfg: RunConfig, plant, contacts, lc) -> LeggedTorqueControl:
    """hil.legged.LeggedTorqueControl with the config's controller.whole_body section and channels."""
    wb, channels = cfg.controller.whole_body, channels_for(cfg)
    return LeggedTorqueControl(plant, contacts, lc, mu=wb.mu, f_min=wb.f_min, effort_limits=wb.effort_limit,
                               weights=load(WholeBodyWeights, dict(wb.weights), "controller.whole_body.weights"),
                               safe_damping=wb.safe_damping, foot_loss_ticks=wb.foot_loss_ticks,
                               status_channel=channels.status, command_channel=channels.command).configure()


class LeggedLoop(Lifecycle):
    """Whole-body torque control of the config's legged robot over `lc`, in Mode.REALTIME or
    Mode.LOCKSTEP (then `sim`, built by configure() on the loop's plant with `viz`, steps once per
    command)."""

    def __init__(self, cfg: RunConfig, lc, mode: Mode | str = Mode.REALTIME, viz=None):
        self.cfg, self.lc, self.mode, self.viz = cfg, lc, Mode(mode), viz
        self.sim: SimulatedLeggedRobot | None = None

    def on_configure(self) -> None:
        cfg = self.cfg
        self.channels = channels_for(cfg)
        self.plant, self.contacts, self.q0 = load_legged(cfg.robot.model, simulation=True, feet=legged_feet(cfg))
        self.ctl = make_legged_control(cfg, self.plant, self.contacts, self.lc)
        self.period_s = 1.0 / cfg.loop.rate_hz
        self.status_timeout_s = cfg.safety.status_timeout_periods * self.period_s
        if self.mode is Mode.LOCKSTEP:
            self.sim = make_legged_sim(cfg, self.plant, self.contacts, self.q0, self.lc, lockstep=True, viz=self.viz)
        self.compute_ns = np.zeros(COMPUTE_SAMPLES, dtype=np.int64)
        self.samples = 0
        self.seen = 0                        # statuses noted (compute time, first base position)
        self.first_base: np.ndarray | None = None
        self.transitions: list[str] = []
        self.process: list[str] = []
        self._realtime_process: RealtimeProcess | None = None
        self.exit_command_sent = False

    def on_activate(self) -> None:
        """Real time: the process settings; the controller starts listening to the status."""
        if self.mode is Mode.REALTIME:
            self._realtime_process = RealtimeProcess(self.cfg.loop).__enter__()
            self.process = self._realtime_process.applied
        self.ctl.activate()

    def update(self, wait_ms: int = 0) -> int:
        """One tick: handles the LCM once (waiting up to `wait_ms`): each status is one QP and one
        command (the controller's update); notes the statuses handled. Returns what handle_timeout did."""
        handled = self.lc.handle_timeout(wait_ms)
        if self.ctl.received != self.seen:
            self.compute_ns[self.samples % COMPUTE_SAMPLES] = self.ctl.compute_ns
            self.samples += 1
            if self.first_base is None and self.ctl.status is not None:
                self.first_base = np.array(self.ctl.status.base_position)
            self.seen = self.ctl.received
        return handled

    def on_deactivate(self) -> None:
        """The exit command (publish_exit_command); the process settings undone."""
        try:
            self.publish_exit_command()
        finally:
            process, self._realtime_process = self._realtime_process, None
            if process is not None:
                process.__exit__(None, None, None)

    # ------------------------------------------------------------------------------------------
    def run(self, duration_s: float | None = None, stop=None, each_step=None) -> dict:
        """Runs for `duration_s` (default loop.duration; None: until stop()) after the first status;
        the summary. Lockstep: `each_step(loop)` after each physics step. With telemetry.log set, the
        run's LCM traffic goes to that log (hil.runlog)."""
        self.configure()
        duration_s = self.cfg.loop.duration if duration_s is None else duration_s
        from .runlog import run_logged

        def ticks():
            self.activate()
            if self.mode is Mode.LOCKSTEP:
                self._lockstep(duration_s, stop, each_step)
            else:
                self._realtime(duration_s, stop)
        return run_logged(self.cfg, self.lc, self.mode, self._utime, ticks, self.deactivate, self.summary)

    def _utime(self) -> int:
        if self.sim is not None:
            return self.sim.physics.time_ns // 1000
        return time.monotonic_ns() // 1000

    def _lockstep(self, duration_s: float | None, stop, each_step) -> None:
        sim = self.sim
        if duration_s is None and stop is None:
            raise ValueError("lockstep needs a duration or a stop condition")
        end = None if duration_s is None else sim.physics.steps + int(round(duration_s / sim.config.time_step))
        sim.publish_status()
        stepped = sim.physics.steps
        while (end is None or sim.physics.steps < end) and not (stop is not None and stop()):
            if self.update() <= 0:
                raise TimeoutError(f"the simulated robot sent no status on {self.channels.status}")
            if each_step is not None and sim.physics.steps != stepped:    # once per physics step (an
                stepped = sim.physics.steps                             # update handles a status or a command)
                each_step(self)

    def _realtime(self, duration_s: float | None, stop) -> None:
        cfg = self.cfg
        start = time.monotonic()
        while self.ctl.received == 0:
            if stop is not None and stop():
                return
            if time.monotonic() - start > cfg.loop.start_timeout:
                raise TimeoutError(f"no status on {self.channels.status} within {cfg.loop.start_timeout:g} s "
                                   f"(is the robot driver or `hil sim` running on {cfg.lcm.url}?)")
            self.update(100)
        first = last = time.monotonic()
        wait_ms = max(1, int(self.status_timeout_s * 1e3))
        while not (stop is not None and stop()):
            now = time.monotonic()
            if duration_s is not None and now - first >= duration_s:
                break
            seen = self.ctl.received
            self.update(wait_ms)
            now = time.monotonic()
            if self.ctl.received != seen:
                last = now
            elif now - last > self.status_timeout_s and self.ctl.fault is None:
                self.ctl.fail(f"status timeout: no status on {self.channels.status} for "
                              f"{(now - last) * 1e3:.1f} ms (safety.status_timeout_periods "
                              f"{cfg.safety.status_timeout_periods} × {self.period_s * 1e3:g} ms)")
            if self.ctl.fault is not None and not self.transitions:
                self.transitions.append(f"status {self.ctl.received}: FAULT: {self.ctl.fault}")

    def publish_exit_command(self) -> bool:
        """The safe command (joint damping), once, as the loop leaves (the controller stops listening
        first, so it is the last command sent); False if no status was seen."""
        if self.ctl.status is None or self.exit_command_sent:
            return False
        if self.ctl.active:
            self.ctl.deactivate()
        self.ctl.safe_command()
        self.exit_command_sent = True
        return True

    def summary(self) -> dict:
        n = min(self.samples, COMPUTE_SAMPLES)
        us = self.compute_ns[:n] * 1e-3
        status, fault = self.ctl.status, self.ctl.fault
        if fault is not None and not self.transitions:
            self.transitions.append(f"status {self.ctl.received}: FAULT: {fault}")
        base = None if status is None else list(status.base_position)
        return {
            "controller": "whole_body", "robot": self.cfg.robot.model, "mode": self.mode.value,
            "final_state": "RUNNING" if fault is None else "FAULT",
            "faults": [] if fault is None else [{"fault": fault}], "fault": fault,
            "ticks": self.ctl.ticks,
            "status": {"received": self.ctl.received, "rejected": self.ctl.received - self.ctl.decoder.ok_count,
                       "exit_command_sent": self.exit_command_sent},
            "compute_us": {"p50": float(np.percentile(us, 50)) if n else None,
                           "p99": float(np.percentile(us, 99)) if n else None,
                           "max": float(us.max()) if n else None},
            "base_position": base,
            "base_drift_m": None if base is None or self.first_base is None
            else float(np.linalg.norm(np.array(base) - self.first_base)),
            "feet_in_contact": None if status is None else bool(all(status.contact)),
            "transitions": self.transitions, "process": self.process,
        }


def format_legged_summary(s: dict) -> str:
    c = s["compute_us"]
    timing = "no statuses" if c["p50"] is None else \
        f"compute p50 {c['p50']:.0f} µs, p99 {c['p99']:.0f} µs, max {c['max']:.0f} µs"
    drift = "" if s["base_drift_m"] is None else f"base drift {s['base_drift_m'] * 1e3:.3f} mm, "
    return (f"hil run: {s['robot']} whole_body, {s['ticks']} QPs solved of {s['status']['received']} statuses; "
            f"{timing}\n  {drift}feet in contact: {s['feet_in_contact']}, state {s['final_state']}"
            + (f" ({s['fault']})" if s["fault"] else "")
            + f", exit command sent: {s['status']['exit_command_sent']}")


def run_legged_sim(cfg: RunConfig, duration: float | None = None, stop=None, viz: bool | None = None, out=None) -> dict:
    """`hil sim CONFIG` for protocol floating_base: the simulated legged robot paced to the wall
    clock on cfg.lcm.url; prints a start line and the summary, returns the summary."""
    from core.config import open_lcm
    out = out or sys.stdout
    plant, contacts, q0 = load_legged(cfg.robot.model, simulation=True, feet=legged_feet(cfg))
    viz_cfg = cfg.viz
    if viz is not None:
        viz_cfg = dataclasses.replace(viz_cfg, enabled=viz)
    ch = channels_for(cfg)
    robot = make_legged_sim(cfg, plant, contacts, q0, open_lcm(cfg.lcm.url), lockstep=False,
                            viz=viz_cfg if viz_cfg.enabled else None)
    print(f"hil sim: {cfg.robot.model} ({robot.na} joints, {len(robot.feet)} feet), protocol floating_base, "
          f"status {ch.status}, command {ch.command}, contact {ch.contact_results}, LCM {cfg.lcm.url}, "
          f"step {robot.config.time_step * 1e3:g} ms", file=out, flush=True)
    summary = robot.run_realtime(duration, stop)
    print(f"hil sim: {summary['steps']} steps, {summary['sim_time_s']:g} s simulated in {summary['wall_time_s']:g} s; "
          f"late steps {summary['late_steps']}, resyncs {summary['resyncs']}; commands received "
          f"{summary['commands_received']}, rejected {summary['commands_rejected']}"
          + (f"; {summary['diverged']}" if summary["diverged"] else ""), file=out, flush=True)
    return summary
