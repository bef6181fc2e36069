"""Regression scenarios: a run config plus a `scenario:` section that says how long to run, over which
link, what must hold (criteria) and, optionally, the stored outcome it must reproduce (golden).

    scenario:
      description: computed torque through the demo waypoints
      duration: 6.0                  # s of simulated time after the first status
      link: sim                      # sim: the simulated robot in-process; serial: board + driver processes;
                                     # servo: simulated servo bus + servo-bus driver processes
      criteria:
        tracking_rms: 1.0e-3         # rad; one value for every joint, or one per joint
        tracking_max: 5.0e-3         # rad
        max_torque: 150              # N·m, |τ_cmd|
        hand_position_rms: 1.0e-3    # m, the end effector's |p_WE(q_d) − p_WE(q)|; also hand_position_max
        deadline_misses: 0
        final_state: RUNNING
        trips: []                    # the safety trips expected, in order ([] = none; absent = not checked)
        # trips: [{fault: STATUS_TIMEOUT, at: 1.5, within_ms: 5}]
        other_trips: false           # whether trips beyond the listed ones are allowed
        summary: {sim.commands_rejected: 1, status.rejected: {max: 0}}   # any summary figure
      golden: {file: golden/computed_torque.json, rtol: 1.0e-6, atol: 1.0e-9}

Trip times are seconds of loop time, which in lockstep is the simulated time. docs/regress.md has the
reference.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np

from drivers.core.config import RunConfig
from drivers.core.robot import joint_label
from drivers.core.schema import ConfigError, Help, NonNegative, Positive, load, read_yaml
from drivers.run_config import parse_config

from .scenario_objects import ForceMatch, ObjectPosition, ObjectSlip

PerJoint = float | list[float]


@dataclass
class TripSpec:
    """A safety trip expected at `at` ≤ t ≤ `at` + `within_ms` (t: the loop time of the tick that tripped)."""

    fault: str                                                   # a FaultCode name, e.g. STATUS_TIMEOUT
    at: NonNegative                      # s of loop time when its cause starts
    within_ms: NonNegative = 5.0  # the trip comes at most this long after


@dataclass
class Criteria:
    """What must hold; an absent criterion is not checked."""

    tracking_rms: PerJoint | None = None            # rad, q_d − q over the RUNNING ticks: one value or one per joint
    tracking_max: PerJoint | None = None            # rad
    max_torque: PerJoint | None = None              # N·m, max |τ_cmd|: one value or one per joint
    hand_position_rms: float | None = None          # m: |p_WE(q_d) − p_WE(q)| of robot.end_effector
    hand_position_max: float | None = None          # m
    deadline_misses: int | None = None              # at most; a real-time measure, 0 in lockstep
    final_state: Literal["INIT", "RUNNING", "FAULT", "SAFE_STOP"] | None = None   # the safety state at the end
    trips: list[TripSpec] | None = None             # the safety trips expected, in order; [] = none allowed
    other_trips: bool = False                       # whether trips beyond those listed are allowed
    # any figure of the loop's summary by dotted path: equal to a value, or within {min, max}
    summary: dict[str, Any] = field(default_factory=dict)
    # on the simulated plant beside the robot (hil.scenario_objects; link: sim)
    object_position: ObjectPosition | None = None   # an object's final position within a tolerance of a target
    object_slip: ObjectSlip | None = None           # an object's largest motion in a gripper's frame over a carry
    ft_force: ForceMatch | None = None              # the F/T reading against the contact force beyond the sensor


@dataclass
class GoldenSpec:
    """The stored outcome the run must reproduce: a number differs when |now − golden| > atol + rtol·|golden|."""

    file: str                      # relative to the scenario file; written by hil regress --update-golden
    rtol: NonNegative = 1e-6       # relative tolerance
    atol: NonNegative = 1e-9       # absolute tolerance


@dataclass
class ScenarioSpec:
    duration: Annotated[Positive, Help("seconds of simulated time")]
    description: str = ""                                        # shown in the report
    # sim: the simulated robot in this process; serial: board and driver processes; servo: the servo bus's
    link: Literal["sim", "serial", "servo"] = "sim"
    # sim link: together (the robot's first status, then the loop), driver_first (the robot runs
    # `lead` s alone first) or loop_first (the loop ticks `lead` s before the robot's first status)
    start_order: Literal["together", "driver_first", "loop_first"] = "together"
    lead: NonNegative = 1.0                                      # s: start_order's lead
    criteria: Criteria = field(default_factory=Criteria)
    golden: GoldenSpec | None = None                             # None: no golden comparison


@dataclass
class Scenario:
    name: str
    path: Path
    spec: ScenarioSpec
    cfg: RunConfig
    data: dict                     # the file's run config part, for the processes of a serial link

    @property
    def golden_path(self) -> Path | None:
        return None if self.spec.golden is None else (self.path.parent / self.spec.golden.file).resolve()


def load_scenario(path: str | Path) -> Scenario:
    """The validated scenario of a YAML file; errors name the file and the key."""
    path = Path(path)
    from drivers.station import is_station
    if is_station(path):
        raise ConfigError("station", "makes it a station's scenario (several arms, hil.station_scenario; "
                                     "docs/station.md), not one robot's", str(path))
    spec, data = read_scenario(path, ScenarioSpec, "a run config")
    check_trips(spec.criteria, "scenario.criteria", path)
    data.setdefault("viz", False)
    cfg = parse_config(data, path.resolve().parent, str(path))
    if spec.link == "serial" and cfg.serial is None:
        raise ConfigError("serial", "is required for scenario.link: serial", str(path))
    if spec.link == "servo" and (cfg.servo_bus is None or not cfg.servo_bus.lockstep):
        raise ConfigError("servo_bus", "with lockstep: true is required for scenario.link: servo", str(path))
    return Scenario(path.stem, path, spec, cfg, data)


def read_scenario(path: Path, spec_class, what: str) -> tuple:
    """(the validated `scenario:` section as spec_class, the rest of the file) of a scenario file;
    errors name the file and the key (`what` the file is besides its scenario section)."""
    data = read_yaml(path)
    if "scenario" not in data:
        raise ConfigError("scenario", f"is required (a scenario file is {what} with a scenario section)", str(path))
    try:
        return load(spec_class, data.pop("scenario"), "scenario"), data
    except ConfigError as e:
        raise ConfigError(e.key, str(e).split(": ", 1)[-1], str(path)) from None


def check_trips(criteria: Criteria, key: str, path: Path) -> None:
    """A ConfigError naming `key`.trips[i].fault for a trip whose fault is no FaultCode."""
    from messages.enums import FaultCode
    for i, trip in enumerate(criteria.trips or []):
        if trip.fault not in FaultCode.__members__:
            raise ConfigError(f"{key}.trips[{i}].fault", f"unknown fault {trip.fault!r}; one of "
                              f"{', '.join(n for n in FaultCode.__members__ if n != 'NONE')}", str(path))


# --- outcome and checks -------------------------------------------------------------------------------
def outcome(loop, objects: dict | None = None) -> dict:
    """The figures a golden file pins, unrounded: tracking RMS and max, max |τ| per joint, the final
    measured position, the tick count and the safety transitions; with object criteria, their figures
    (hil.scenario_objects: the object's final position, its slip, the F/T error)."""
    rec = loop.recorder
    rms = np.sqrt(rec.sumsq / rec.tracked) if rec.tracked else np.zeros_like(rec.sumsq)
    out = {"ticks": rec.ticks, "tracking_rms_rad": rms.tolist(), "tracking_max_rad": rec.maxabs.tolist(),
           "torque_max_nm": rec.tau_maxabs.tolist(), "final_q_rad": loop.q.tolist(),
           "transitions": loop.transitions.lines("transitions")}
    for key, value in (objects or {}).items():
        out[key] = value["relative_error_max"] if key == "ft_force" else value
    return out


def _per_joint(limit: PerJoint, n: int, key: str) -> np.ndarray:
    lim = np.broadcast_to(np.asarray(limit, dtype=float), (n,)) if np.ndim(limit) == 0 or len(limit) == 1 \
        else np.asarray(limit, dtype=float)
    if lim.shape != (n,):
        raise ConfigError(f"scenario.criteria.{key}", f"needs 1 or {n} values, got {len(limit)}")
    return lim


def _lookup(summary: dict, dotted: str):
    value = summary
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            raise ConfigError(f"scenario.criteria.summary.{dotted}", f"no such summary figure (at '{part}')")
        value = value[part]
    return value


def check(spec: ScenarioSpec, summary: dict, period_s: float) -> list[dict]:
    """Each criterion as {name, measured, limit, passed}."""
    c, out = spec.criteria, []
    e = summary["tracking_error_rad"]
    n = len(e["rms"])
    for key, measured in (("tracking_rms", e["rms"]), ("tracking_max", e["max"]),
                          ("max_torque", summary["torque_max_nm"])):
        limit = getattr(c, key)
        if limit is not None:
            lim = _per_joint(limit, n, key)
            worst = int(np.argmax(np.asarray(measured) - lim))
            out.append({"name": key, "measured": measured, "limit": lim.tolist(),
                        "passed": bool(np.all(np.asarray(measured) <= lim)),
                        "detail": f"{joint_label(summary.get('joints'), worst)}: {measured[worst]:.4g} vs "
                                  f"{lim[worst]:.4g}"})
    hand = summary.get("hand_position_error_m")
    for key, figure in (("hand_position_rms", "rms"), ("hand_position_max", "max")):
        limit = getattr(c, key)
        if limit is not None:
            measured = hand[figure] if hand else None
            out.append({"name": key, "measured": measured, "limit": limit,
                        "passed": measured is not None and measured <= limit})
    if c.deadline_misses is not None:
        out.append({"name": "deadline_misses", "measured": summary["deadline_misses"], "limit": c.deadline_misses,
                    "passed": summary["deadline_misses"] <= c.deadline_misses})
    if c.final_state is not None:
        out.append({"name": "final_state", "measured": summary["final_state"], "limit": c.final_state,
                    "passed": summary["final_state"] == c.final_state})
    if c.trips is not None:
        out.append(_check_trips(c, summary["faults"], period_s))
    for dotted, want in c.summary.items():
        got = _lookup(summary, dotted)
        if isinstance(want, dict):
            ok = (want.get("min") is None or got >= want["min"]) and (want.get("max") is None or got <= want["max"])
        else:
            ok = got == want
        out.append({"name": f"summary.{dotted}", "measured": got, "limit": want, "passed": bool(ok)})
    return out


def _check_trips(c: Criteria, faults: list[dict], period_s: float) -> dict:
    seen = [(f["fault"], f["tick"] * period_s) for f in faults]
    unmatched, missing = list(seen), []
    for trip in c.trips:
        hit = next((s for s in unmatched if s[0] == trip.fault and trip.at <= s[1] <= trip.at + trip.within_ms / 1e3),
                   None)
        if hit is None:
            missing.append(f"{trip.fault} within {trip.within_ms:g} ms of {trip.at:g} s")
        else:
            unmatched.remove(hit)
    extra = [] if c.other_trips else [f"{name} at {t:.3f} s" for name, t in unmatched]
    detail = "; ".join(([f"missing: {', '.join(missing)}"] if missing else []) +
                       ([f"unexpected: {', '.join(extra)}"] if extra else []))
    return {"name": "trips", "measured": [f"{name} at {t:.3f} s" for name, t in seen],
            "limit": [dataclasses.asdict(t) for t in c.trips], "passed": not missing and not extra,
            "detail": detail or None}


# --- golden results -------------------------------------------------------------------------------------
def compare_golden(golden: dict, now: dict, rtol: float, atol: float) -> list[str]:
    """Readable differences between a stored outcome and this run's ([] when equal within tolerance)."""
    diffs = []
    for key in sorted(set(golden) | set(now)):
        if key not in golden or key not in now:
            diffs.append(f"{key}: {'only in the golden file' if key in golden else 'not in the golden file'}")
            continue
        g, x = golden[key], now[key]
        if key.endswith("transitions"):         # (a station's: `arm.transitions`)
            if g != x:
                diffs.append(f"{key} differ:\n" + "\n".join(
                    "    " + line for line in difflib.unified_diff(g, x, "golden", "now", lineterm="", n=1)))
            continue
        g_arr, x_arr = np.atleast_1d(np.asarray(g, dtype=float)), np.atleast_1d(np.asarray(x, dtype=float))
        if g_arr.shape != x_arr.shape:
            diffs.append(f"{key}: golden has {g_arr.size} values, now {x_arr.size}")
            continue
        bad = np.flatnonzero(np.abs(x_arr - g_arr) > atol + rtol * np.abs(g_arr))
        for i in bad:
            rel = (x_arr[i] - g_arr[i]) / abs(g_arr[i]) if g_arr[i] else np.inf
            where = f"{key}[{i}]" if np.ndim(g) else key
            diffs.append(f"{where}: golden {g_arr[i]:.6g}, now {x_arr[i]:.6g} ({rel:+.2%})")
    return diffs


def read_golden(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError("scenario.golden.file", f"{path} does not exist (run `hil regress --update-golden` "
                          "to write it)") from None
    except json.JSONDecodeError as e:
        raise ConfigError("scenario.golden.file", f"{path} is not valid JSON: {e}") from None


def write_golden(path: Path, values: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values, indent=1) + "\n")
