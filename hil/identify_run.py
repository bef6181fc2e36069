"""`hil run CONFIG --identify`: the excitation against the simulated robot, logged, identified, and the
identified payload tried: gravity compensation holding the arm with and without it, side by side.

In lockstep against the config's simulated robot (its sim section: the payload, the joint friction
and damping, the sensor noise it sets are what there is to find), as `hil run --check-alloc` runs:

1. the config's trajectory (type excitation) until it has ended and the arm rested REST_S, recorded to
   the log (--log, else a temporary file);
2. `hil identify` of that log (hil.identify);
3. two holds of HOLD_S from the excitation's centre (the sim's initial positions without q0), pure
   gravity compensation (τ = −τ_g of the controller's model) without and with the identified
   robot.payload: the largest |q − q_start| per joint over each.
"""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import numpy as np

from drivers.core.schema import ConfigError

from .identify import IdentifyOptions, identify
from .identify_report import fragment

logger = logging.getLogger(__name__)

REST_S = 0.5         # s of rest logged after the excitation ends
HOLD_S = 5.0         # s of each hold
MAX_S = 600.0        # s of simulated time the excitation may take at most (without --duration)


def run_excitation(cfg, log: str, duration: float | None = None) -> dict:
    """The config's excitation in lockstep against its simulated robot, logged to `log`; the summary."""
    from .lockstep import make_lockstep, run_closed
    from .running import load
    if cfg.trajectory.type != "excitation":
        raise ConfigError("trajectory.type", f"hil run --identify runs an excitation (trajectory.type: excitation), "
                                             f"not {cfg.trajectory.type}")
    cfg = load(cfg, {"telemetry": {"log": str(Path(log).resolve())}, "viz": {"enabled": False}})
    loop, sim = make_lockstep(cfg)
    rest_ns = round(REST_S * 1e9)

    def ended() -> bool:
        src = loop.trajectory
        return src.started and src.ready and loop.hardware.timing.robot_ns - src.t0 >= src.duration_ns + rest_ns
    summary = run_closed(loop, sim, duration or MAX_S, stop=ended)
    if not ended():
        logger.warning("the run ended %.1f s into the excitation, before its end (%.1f s): the identification "
                       "sees less motion", loop.hardware.timing.robot_ns * 1e-9 - loop.trajectory.t0 * 1e-9,
                       (loop.trajectory.duration_ns + rest_ns) * 1e-9)
    return summary


def hold_drift(cfg, q0, payload: dict | None, seconds: float = HOLD_S) -> tuple:
    """(max |q − q_start| per joint, final state) of gravity compensation holding the simulated arm at
    q0 for `seconds`, the controller's model with robot.payload `payload` (None: without)."""
    from .lockstep import make_lockstep, run_closed
    from .running import load
    overrides = {"controller": {"type": "gravity_compensation", "friction_compensation": None},
                 "trajectory": {"type": "hold"}, "telemetry": {"log": None}, "viz": {"enabled": False},
                 "robot": {"payload": payload}, "sim": {"initial_positions": [float(x) for x in q0],
                                                        "initial_velocities": None}}
    hold = load(cfg, overrides)
    loop, sim = make_lockstep(hold)
    summary = run_closed(loop, sim, seconds)
    return loop.recorder.maxabs.copy(), summary["final_state"]


def run_identify(cfg, log: str | None = None, opts: IdentifyOptions | None = None,
                 duration: float | None = None, hold_s: float = HOLD_S) -> dict:
    """The module's three steps; the identification's result (hil.identify.identify) with "hold":
    {"seconds", "q0", "without", "with", "states"} and "run" (the excitation's summary)."""
    from .running import load
    cfg = load(cfg)
    with tempfile.TemporaryDirectory() as tmp:
        path = log or str(Path(tmp) / "excitation.lcmlog")
        summary = run_excitation(cfg, path, duration)
        if summary["faults"]:
            first = summary["faults"][0]
            raise ConfigError("trajectory.excitation", f"the excitation faulted at t = {first['utime'] * 1e-6:.3f} s: "
                                                       f"{first['fault']} ({first['reason']})")
        result = identify([path], opts)
    result["logs"] = [log] if log else ["(temporary log)"]
    q0 = cfg.trajectory.excitation.q0 or cfg.sim.initial_positions
    if q0 is None:
        from drivers.core.robot import load_robot
        q0 = load_robot(cfg.robot).plant.GetDefaultPositions()
    payload = fragment(result)["robot"]["payload"] if "payload" in result else None
    without, state0 = hold_drift(cfg, q0, None, hold_s)
    with_payload, state1 = hold_drift(cfg, q0, payload, hold_s)
    result["hold"] = {"seconds": hold_s, "q0": np.asarray(q0, dtype=float), "without": without.tolist(),
                      "with": with_payload.tolist(), "states": [state0, state1]}
    result["run"] = {k: summary[k] for k in ("final_state", "faults") if k in summary}
    return result
