"""Legged-robot scenarios for `hil regress`: a YAML file with a `legged:` section runs the simulated
legged robot (drivers.sim.legged) and the loop (hil.loop) with whole-body torque control (hil.legged)
in lockstep over memq:// LCM, applies the scenario's events, and checks its criteria (docs/wbc.md, Scenarios).

    legged:
      robot: go2                     # a dynamics_cy.planning.legged_models preset: go2 or g1
      mu: 0.6                        # friction coefficient of the controller's friction cones
      friction_facets: 8             # faces of a point foot's pyramid inscribed in its cone
      f_min: 0.0                     # N, least normal force on a foot in contact
      effort_limit: null             # N·m, tightening the model's (URDF effort); null: the model's
      foot_loss_ticks: 5             # statuses in a row of a foot loss (docs/wbc.md, Foot loss)
      foot_loss_load: 0.5            # of m g / feet: a foot asked more while reporting no contact is lost
      weights: {posture: 1.0e-2}     # WholeBodyWeights fields
      sim: {contact: {enabled: true}}        # drivers.sim SimConfig (initial_positions: the preset)
      events:
        - {at: 1.0, push: [0, 50, 0], duration: 0.1}     # a force (N, in W) on the base
        - {at: 0.5, com_shift: [0.03, 0.02, 0], ramp: 1.0} # CoM target moved by a linear ramp
    scenario:
      description: ...
      duration: 10.0                 # s of simulated time
      criteria:
        settle: 0.5                  # s: the base position the drift is measured from
        max_base_drift: 0.001        # m: |p_WBo(end) − p_WBo(settle)|
        feet_in_contact: true        # every foot touches the ground at the end
        fault: null                  # null: no fault; else a text the latched fault must contain
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Optional, Union

import lcm
import numpy as np
from annotated_types import Ge

from drivers.core.schema import ConfigError, Help, NonNegative, Positive, load, read_yaml
from drivers.sim.config import SimConfig
from dynamics_cy.planning.legged_models import LEGGED
from dynamics_cy.planning.whole_body import WholeBodyWeights
from messages.enums import SafetyState


@dataclass
class LeggedEvent:
    """A push on the base or a shift of the CoM target: exactly one of push, com_shift."""

    at: NonNegative                          # s of simulated time
    push: Optional[list[float]] = None                               # N, in W, on the base origin
    duration: Positive = 0.1          # s, of the push
    com_shift: Optional[list[float]] = None                          # m, from the CoM target at `at`
    ramp: Positive = 1.0              # s, of the CoM shift


@dataclass
class LeggedRun:
    """The legged robot, its whole-body controller and what happens to it."""

    robot: str                                  # a dynamics_cy.planning.legged_models preset: go2 or g1
    mu: Positive = 0.6                          # friction coefficient of the controller's friction cones
    friction_facets: Annotated[int, Ge(3)] = 8  # faces of a point foot's pyramid inscribed in its cone
    f_min: NonNegative = 0.0                    # N, least normal force on a foot in contact
    # N·m: one limit or one per joint, tightening the model's (URDF effort); None: the model's
    effort_limit: Optional[Union[Positive, list[Positive]]] = None
    foot_loss_ticks: Annotated[int, Ge(1)] = 5  # statuses in a row of a foot loss (docs/wbc.md): the fault
    foot_loss_load: NonNegative = 0.5           # a foot reporting no contact is lost when asked > this × m g / feet
    weights: WholeBodyWeights = field(default_factory=WholeBodyWeights)
    sim: SimConfig = field(default_factory=SimConfig)          # initial_positions: the preset's
    events: list[LeggedEvent] = field(default_factory=list)


@dataclass
class LeggedCriteria:
    settle: NonNegative = 0.5                   # s: when the base position the drift is measured from is taken
    max_base_drift: Optional[float] = None      # m: |p_WBo(end) − p_WBo(settle)|
    feet_in_contact: Optional[bool] = None      # every foot touches the ground at the end
    fault: Optional[str] = None                 # None: no fault; else a text the latched fault must contain


@dataclass
class LeggedScenarioSpec:
    duration: Annotated[Positive, Help("seconds of simulated time")]
    description: str = ""                       # shown in the report
    criteria: LeggedCriteria = field(default_factory=LeggedCriteria)


def is_legged_scenario(path: str | Path) -> bool:
    return "legged" in read_yaml(path)


def load_legged_scenario(path: str | Path) -> tuple[LeggedRun, LeggedScenarioSpec]:
    data = read_yaml(path)
    try:
        unknown = sorted(set(data) - {"legged", "scenario"})
        if unknown:
            raise ConfigError(unknown[0], "unknown key (a legged scenario has legged: and scenario:)")
        if "legged" not in data:
            raise ConfigError("legged", "is required")
        run = load(LeggedRun, data["legged"], "legged")
        if run.robot not in LEGGED:
            raise ConfigError("legged.robot", f"unknown robot {run.robot!r}; one of {', '.join(LEGGED)}")
        for i, e in enumerate(run.events):
            for key in ("push", "com_shift"):
                value = getattr(e, key)
                if value is not None and (len(value) != 3 or not np.all(np.isfinite(value))):
                    raise ConfigError(f"legged.events[{i}].{key}", "must be 3 finite numbers")
            if (e.push is None) == (e.com_shift is None):
                raise ConfigError(f"legged.events[{i}]", "needs exactly one of push, com_shift")
        if "scenario" not in data:
            raise ConfigError("scenario", "is required")
        spec = load(LeggedScenarioSpec, data["scenario"], "scenario")
    except ConfigError as e:
        raise ConfigError(e.key, str(e).split(": ", 1)[-1], str(path)) from None
    return run, spec


class LeggedRig:
    """A legged preset under the loop (hil.loop, controller whole_body) in lockstep with the simulated
    robot on one LCM: run(seconds) ticks the loop, each tick one physics step. `controller`:
    controller.whole_body keys (mu, f_min, effort_limit, weights, ...); `viz` (True or a drivers.viz.VizConfig):
    the simulated robot draws itself, the ground and the contact forces for Meldis. On an LCM other
    than memq:// (a UDP multicast group) each tick waits for the status its command stepped."""

    def __init__(self, name: str, sim: SimConfig | None = None, lcm_url: str = "memq://", viz=False,
                 **controller):
        from .lockstep import make_lockstep
        from .running import load
        sim = sim or SimConfig()
        weights = controller.get("weights")
        if dataclasses.is_dataclass(weights):
            controller["weights"] = dataclasses.asdict(weights)
        self.cfg = load({"robot": {"model": name, "protocol": "floating_base", "command": "torque"},
                         "controller": {"type": "whole_body", "whole_body": controller},
                         "loop": {"rate_hz": 1.0 / sim.time_step}, "sim": dataclasses.asdict(sim),
                         "viz": dataclasses.asdict(viz) if dataclasses.is_dataclass(viz) else {"enabled": bool(viz)}})
        self.lc = lcm.LCM(lcm_url)
        self.loop, self.robot = make_lockstep(self.cfg, self.lc,
                                              status_wait_s=0.0 if lcm_url.startswith("memq://") else 1.0)
        self.plant, self.q0 = self.loop.robot.plant, self.loop.robot.q0
        self.law = self.loop.controller
        self.loop.activate()
        self.robot.publish_status()

    @property
    def fault(self) -> str | None:
        """The fault the loop latched (its reason), or None."""
        safety = self.loop.safety
        return safety.fault_text if safety.state == SafetyState.FAULT else None

    def run(self, seconds: float, each_step=None, realtime: bool = False) -> "LeggedRig":
        """Tick `seconds` of simulated time (realtime: no faster than the wall clock)."""
        end = self.robot.physics.steps + int(round(seconds / self.robot.config.time_step))
        t0, s0 = time.monotonic(), self.robot.physics.time_ns
        while self.robot.physics.steps < end:
            self.loop.update()
            if each_step is not None:
                each_step(self)
            if realtime:
                ahead = (self.robot.physics.time_ns - s0) * 1e-9 - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)
        return self

    def close(self) -> None:
        """The exit command; the loop stops listening."""
        self.loop.close()

    def base(self) -> np.ndarray:
        return self.robot.physics.q[4:7].copy()

    def com(self) -> np.ndarray:
        p, J, b = np.empty(3), np.empty((3, self.plant.num_velocities())), np.empty(3)
        self.plant.kernels().center_of_mass(self.robot.physics.q, self.robot.physics.v, p, J, b)
        return p


def push_recovered(name: str, impulse: float, sim: SimConfig | None = None, *, settle: float = 0.5,
                   duration: float = 0.1, after: float = 3.0) -> bool:
    """One push trial: the robot stands `settle` s, its base is pushed along +y with `impulse` N·s over
    `duration` s, then watched for `after` s; recovered = no fault latched and the base height back
    within 5 cm. A simulation that gives up (a fallen robot) is not recovered."""
    rig = LeggedRig(name, sim)
    try:
        rig.run(settle)
        z0 = rig.base()[2]
        rig.robot.push([0.0, impulse / duration, 0.0], duration)
        for _ in range(int(round(after / 0.1))):
            rig.run(0.1)
            if rig.fault is not None:
                return False
        return abs(rig.base()[2] - z0) < 0.05
    except RuntimeError:
        return False
    finally:
        rig.close()


def largest_push_recovered(name: str, sim: SimConfig | None = None, resolution: float = 0.5,
                           start: float = 4.0, largest: float = 64.0) -> tuple[float, float, int]:
    """(the largest impulse recovered, the smallest that failed, trials) of push_recovered: doubling
    from `start` N·s to the first failure (up to `largest`), then bisection to `resolution`."""
    lo, hi, trials = 0.0, start, 0
    while hi <= largest:
        trials += 1
        if not push_recovered(name, hi, sim):
            break
        lo, hi = hi, 2 * hi
    while hi - lo > resolution:
        mid = 0.5 * (lo + hi)
        trials += 1
        lo, hi = (mid, hi) if push_recovered(name, mid, sim) else (lo, mid)
    return lo, hi, trials


def run_legged_scenario(path: str | Path, *, realtime: bool = False, lcm_url: str = "memq://", viz: bool = False,
                        duration: float | None = None, log: str | None = None,
                        plot: str | None = None) -> tuple[dict, list[dict], LeggedScenarioSpec]:
    """(summary, checks, spec) of one legged scenario file; lockstep as fast as it goes on memq://
    by default, or paced to the wall clock on another LCM with the viewer (the demo). `log`: the run's
    LCM traffic recorded there (hil.runlog, as telemetry.log; `hil report` reads it); `plot`: the
    loop's tracking and timing plot written there (hil.telemetry.plot)."""
    from .runlog import run_logged
    run, spec = load_legged_scenario(path)
    if duration is not None:
        spec.duration = duration
    rig = LeggedRig(run.robot, run.sim, lcm_url=lcm_url, viz=viz, mu=run.mu, f_min=run.f_min,
                    friction_facets=run.friction_facets, effort_limit=run.effort_limit, weights=run.weights,
                    foot_loss_ticks=run.foot_loss_ticks, foot_loss_load=run.foot_loss_load)
    rig.cfg.telemetry.log = log
    h = rig.robot.config.time_step
    torque_max = np.zeros(rig.robot.na)
    shifts = []                                    # (start step, end step, from, to)

    def each_step(r):
        np.maximum(torque_max, np.abs(r.robot.physics.u_applied), out=torque_max)
        step = r.robot.physics.steps
        for s0, s1, a, b in shifts:
            if s0 <= step <= s1:
                r.law.wbc.com_target = a + (b - a) * (step - s0) / max(1, s1 - s0)

    t0, events = time.monotonic(), sorted(run.events, key=lambda e: e.at)
    settled = []

    def ticks():                                   # the events at their times, the loop ticking between
        now = 0.0
        for t in sorted({e.at for e in events} | {spec.criteria.settle, spec.duration}):
            if t > spec.duration:
                continue
            rig.run(t - now, each_step, realtime)
            now = t
            if not settled and t >= spec.criteria.settle:
                settled.append(rig.base())
            for e in (e for e in events if e.at == t):
                if e.push is not None:
                    rig.robot.push(e.push, e.duration)
                else:
                    a = rig.law.wbc.com_target.copy() if rig.law.wbc.com_target is not None else rig.com()
                    s0 = rig.robot.physics.steps
                    shifts.append((s0, s0 + int(round(e.ramp / h)), a, a + np.asarray(e.com_shift)))
    run_logged(rig.cfg, rig.lc, "lockstep", lambda: rig.robot.physics.time_ns // 1000, ticks, rig.loop.deactivate,
               rig.loop.summary)
    drift = float(np.linalg.norm(rig.base() - settled[0]))
    got = rig.fault
    rig.close()
    if plot is not None:
        from .telemetry import plot as plot_run
        plot_run(rig.loop.recorder, plot)
    summary = {"base_drift_m": drift, "fault": got, "feet_in_contact": bool(all(rig.robot.msg.contact)),
               "torque_max_nm": torque_max.tolist(), "tracking_error_rad": {"rms": [], "max": []},
               "faults": [{"fault": got}] if got else [],
               "ticks": rig.loop.tick_index, "sim_wall_s": round(time.monotonic() - t0, 3)}
    c, checks = spec.criteria, []
    if c.max_base_drift is not None:
        checks.append({"name": "max_base_drift", "measured": drift, "limit": c.max_base_drift,
                       "passed": drift <= c.max_base_drift})
    if c.feet_in_contact is not None:
        checks.append({"name": "feet_in_contact", "measured": summary["feet_in_contact"], "limit": c.feet_in_contact,
                       "passed": summary["feet_in_contact"] == c.feet_in_contact})
    checks.append({"name": "fault", "measured": got, "limit": c.fault,
                   "passed": got is None if c.fault is None else (got is not None and c.fault in got)})
    return summary, checks, spec


def run_legged_demo(path: str | Path, duration: float, lcm_url: str) -> int:
    """`hil demo --config LEGGED.yaml`: the scenario paced to the wall clock on `lcm_url`, with the
    robot, the ground and the contact forces for Meldis; prints the outcome. Exit 0, or 1 on a fault."""
    print(f"hil demo: simulated {load_legged_scenario(path)[0].robot} under whole-body torque control on "
          f"{lcm_url}; {duration:g} s. Watch it in Meldis: python -m pydrake.visualization.meldis")
    summary, checks, _ = run_legged_scenario(path, realtime=True, lcm_url=lcm_url, viz=True, duration=duration)
    print(f"base drift {summary['base_drift_m'] * 1e3:.3f} mm, feet in contact: {summary['feet_in_contact']}, "
          f"fault: {summary['fault'] or 'none'}")
    return 0 if summary["fault"] is None else 1
