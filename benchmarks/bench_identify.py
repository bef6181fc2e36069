"""Time and accuracy of `hil identify` on a 30 s log at 1 kHz: the shipped identification config
(configs/sim/iiwa_identify.yaml: the simulated iiwa with a 2 kg payload, joint friction and damping,
sensor noise) run 30 s in lockstep and logged, then identified with each fit: physically consistent
through cvxpy with Clarabel and with SCS, plain least squares, and the arm's base parameters. Prints a
markdown table of the median seconds (and their split: reading the log, building the rows, fitting)
and the errors against the simulated truth.

    python benchmarks/bench_identify.py [--repeats 3] [--seconds 30] [--json PATH]
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import record

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CONFIG = REPO / "configs" / "sim" / "iiwa_identify.yaml"
FITS = (("consistent, cvxpy + Clarabel", {}), ("consistent, cvxpy + SCS", {"solver": "scs"}),
        ("least squares", {"consistent": False}), ("base parameters, consistent (Clarabel)", {"base": True}))


def make_log(path: str, seconds: float):
    """The shipped config run `seconds` in lockstep, logged to `path`; its sim section (the truth)."""
    import hil
    from drivers.run_config import load_config
    cfg = load_config(CONFIG, {"telemetry": {"log": path}})
    summary = hil.run(cfg, duration=seconds)
    if summary["faults"]:
        raise SystemExit(f"the excitation faulted: {summary['faults'][0]}")
    return cfg.sim


def errors(result: dict, sim) -> dict:
    """Mass (%), centre of mass (mm), friction coefficients (largest %) against the simulated truth."""
    out = {"viscous_pct": 100 * np.max(np.abs(result["viscous"] / np.array(sim.joint_damping) - 1)),
           "coulomb_pct": 100 * np.max(np.abs(result["coulomb"] / np.array(sim.joint_friction) - 1)),
           "rms": float(np.max(result["rms"]))}
    if "payload" in result:
        p = result["payload"]
        out["mass_pct"] = 100 * abs(p["mass"] / sim.payload.mass - 1)
        out["com_mm"] = 1e3 * float(np.linalg.norm(p["com"] - np.array(sim.payload.com)))
    return out


def main(argv=None) -> int:
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--repeats", type=int, default=3, help="identifications per fit; the median counts")
    ap.add_argument("--seconds", type=float, default=30.0, help="seconds of the logged run (default 30)")
    args = ap.parse_args(argv)
    from hil.identify import IdentifyOptions, identify
    rec = record.Record(__file__, __doc__, args, "Identification", peers=("scipy", "clarabel", "cvxpy", "scs"))
    with tempfile.TemporaryDirectory() as tmp:
        log = str(Path(tmp) / "excitation.lcmlog")
        t0 = time.perf_counter()
        sim = make_log(log, args.seconds)
        rec.note(f"the {args.seconds:g} s run in lockstep took {time.perf_counter() - t0:.1f} s (excitation "
                 "design included)")
        columns = [record.Column("fit", "{name}", align="left"),
                   record.Column("total s", "{total:.2f}"), record.Column("read s", "{read:.2f}"),
                   record.Column("rows s", "{rows:.2f}"), record.Column("fit s", "{fit:.2f}"),
                   record.Column("mass error %", "{mass_pct:.3f}", missing="–"),
                   record.Column("CoM error mm", "{com_mm:.3f}", missing="–"),
                   record.Column("friction error % (viscous, Coulomb)", "{viscous_pct:.2f}, {coulomb_pct:.2f}"),
                   record.Column("held-out RMS N·m (worst joint)", "{rms:.3f}")]
        t = rec.table(f"iiwa14, a {args.seconds:g} s log at 1 kHz", columns)
        for name, options in FITS:
            runs = [identify([log], IdentifyOptions(**options)) for _ in range(args.repeats)]
            seconds = {k: float(np.median([r["seconds"][k] for r in runs])) for k in ("total", "read", "rows", "fit")}
            t.add(name=name, **seconds, **errors(runs[-1], sim))
        rec.show(t)
    rec.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
