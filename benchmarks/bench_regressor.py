"""Per-call time of the inverse-dynamics regressor from Python: dynamics_cy's kernels (the whole
regressor Y(q, v, v̇) and a payload's block Y_F) next to Pinocchio's computeJointTorqueRegressor, on the
iiwa14 and the Panda, measured in one process. Prints a markdown table of medians (µs), ratios to
Pinocchio and each regressor's column count, and under it why a peer has no row.

    python benchmarks/bench_regressor.py [--repeats 15] [--calls 2000] [--only Panda] [--json PATH]
"""
from __future__ import annotations

import logging
import sys

import numpy as np
import record
from bench_dynamics import Model, load_pinocchio, measure, median_us, model_specs, parser

ROBOTS = ("iiwa", "Panda")          # of bench_dynamics's models, the arms measured here


def alternate(states: list) -> callable:
    """A function returning the next of `states`, the two alternated call by call (no caching)."""
    i = [0]

    def next_state():
        i[0] ^= 1
        return states[i[0]]
    return next_state


def bench_ours(m: Model, calls, repeats) -> dict:
    k = m.plant.kernels()
    nb = m.plant.num_bodies()
    Y, Y_F = np.zeros((m.nv, 10 * nb)), np.zeros((m.nv, 10))
    st = alternate(m.states)
    torque = median_us(lambda: k.torque_regressor(*st()[:3], Y), calls, repeats)
    payload = median_us(lambda: k.payload_regressor(*st()[:3], m.frame, Y_F), calls, repeats)
    return {"dynamics_cy kernels": {"torque": torque, "payload": payload, "columns": Y.shape[1],
                                    "units": f"{nb} bodies"}}


def bench_pinocchio(m: Model, calls, repeats) -> dict:
    pin, model = load_pinocchio(m)
    data = model.createData()
    rng = np.random.default_rng(1)
    qs = [pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq)) for _ in range(2)]
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    q = alternate(qs)
    torque = median_us(lambda: pin.computeJointTorqueRegressor(model, data, q(), v, a), calls, repeats)
    columns = pin.computeJointTorqueRegressor(model, data, qs[0], v, a).shape[1]
    return {"Pinocchio " + pin.__version__: {"torque": torque, "payload": None, "columns": columns,
                                             "units": f"{model.njoints - 1} joints"}}


def table(rec: record.Record, m: Model, results: dict, skipped: list[str]) -> record.Table:
    peer = next((name for name in results if name.startswith("Pinocchio")), None)
    columns = [record.Column("implementation", "{name}", align="left"),
               record.Column("torque regressor", "{torque:.2f} ({torque_ratio:.2f}×)", "{torque:.2f}", missing="n/a"),
               record.Column(f"payload regressor (frame '{m.frame.name()}')", "{payload:.2f}", missing="n/a"),
               record.Column("columns", "{columns} (10 × {units})")]
    t = rec.table(f"{m.label} (nv = {m.nv})", columns, [f"not measured: {reason}" for reason in skipped])
    for name, r in results.items():
        row = {"name": name, **r}
        if peer and name != peer:
            row["torque_ratio"] = r["torque"] / results[peer]["torque"]
        t.add(**row)
    return t


def main(argv=None) -> int:
    ap = parser(__file__, __doc__)
    args = ap.parse_args(argv)
    logging.getLogger("dynamics_cy").setLevel(logging.ERROR)
    rec = record.Record(__file__, __doc__, args, "Inverse-dynamics regressor",
                        peers=("pinocchio", "example-robot-data"))
    specs = [s for s in model_specs(ap, args.only) if any(robot in s[0] for robot in ROBOTS)]
    if not specs:
        ap.error(f"no arm's label contains '{args.only}'")
    print("Median µs per call from Python (ratio to Pinocchio); lower is better.\n")
    measure(rec, specs, args, bench_ours, (bench_pinocchio,), table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
