"""Whole-body inverse dynamics per tick: our QP (dynamics_cy.planning.whole_body: kernels + DAQP) next to PlaCo's
DynamicsSolver on the same robot, state and tasks, in the same run.

Quadruped: Go2, 18 velocities, 4 unilateral point feet. Humanoid: G1 (29 joints), 35 velocities,
2 flat feet: a sole of G1's size (0.17 m x 0.05 m) centred on each ankle roll frame, a 6-D contact
wrench under its contact wrench cone for us and PlaCo's planar contact of the same sole (the same
problem, but for our yaw-torque rows, which are not active standing). Tasks: CoM and posture
(soft), contacts hard, minimum torque, the same weights and regularisation. Ours is timed as setup
(kernels fill every matrix, the compiled assembly fills the QP) and setup + reduce + solve (the
equalities eliminated, DAQP hot-started on the rest); PlaCo's ``solve()`` builds and solves its
problem in one call (its kinematics update is outside the timing, ours is inside). PlaCo runs in
its own environment (make placo-env), as a subprocess.

    .venv/bin/python benchmarks/bench_wbc.py [--ticks 2000] [--json PATH]
"""
from __future__ import annotations

import functools
import gc
import json
import subprocess
import time
from pathlib import Path

import numpy as np
import record

from dynamics_cy.planning.legged_models import LEGGED, example_robot_data_root, load_legged
from dynamics_cy.planning.whole_body import ContactSurface, WholeBodyController, WholeBodyWeights

REPO = Path(__file__).resolve().parents[1]
PLACO = REPO / ".venv-placo" / "bin" / "python"
WEIGHTS = {"com": 1.0, "posture": 1.0, "torque": 1e-3, "forces": 1e-5, "regularization": 1e-9}
SOLE = (0.17, 0.05)      # G1 sole length and width (its four collision spheres)


def ours(name, ticks):
    plant, contacts, q = load_legged(name)
    frames = list(dict.fromkeys(c.frame.name() for c in contacts))
    if len(frames) < len(contacts):          # flat feet: PlaCo's planar contact, a sole on the frame
        contacts = [ContactSurface(plant.GetFrameByName(f), np.zeros(3), *SOLE) for f in frames]
    reg = WEIGHTS["regularization"]
    c = WholeBodyController(plant, contacts, weights=WholeBodyWeights(
        com=WEIGHTS["com"], base_orientation=0.0, posture=WEIGHTS["posture"], torque=WEIGHTS["torque"],
        vdot_regularization=reg, force_regularization=WEIGHTS["forces"] + reg, moment_regularization=reg))
    v = np.zeros(plant.num_velocities())
    c.solve(q, v)
    setup, total = np.empty(ticks), np.empty(ticks)
    gc.disable()
    for i in range(ticks):
        t0 = time.perf_counter_ns()
        c.setup(q, v)
        t1 = time.perf_counter_ns()
        c.solve(q, v)                                   # setup + reduce + DAQP
        t2 = time.perf_counter_ns()
        setup[i], total[i] = (t1 - t0) / 1e3, (t2 - t1) / 1e3
    gc.enable()
    return plant, contacts, q, c, setup, total


@functools.cache
def placo_version() -> str | None:
    """PlaCo's version in its own environment (make placo-env), or None without it."""
    if not PLACO.exists():
        return None
    out = subprocess.run([str(PLACO), "-c", "import importlib.metadata as m, placo; print(m.version('placo'))"],
                         capture_output=True, text=True)
    return out.stdout.strip() or None if out.returncode == 0 else None


def placo(name, plant, contacts, q, ticks):
    if placo_version() is None:
        return None
    joints = {j.name(): float(q[j.position_start()]) for j in plant._joints if j.num_positions() == 1}
    problem = {"urdf": str(example_robot_data_root() / "robots" / LEGGED[name].urdf),
               "package_root": str(example_robot_data_root()), "q_base": [*q[4:7], *q[1:4], q[0]],
               "joints": joints, "mu": 0.6, "weights": WEIGHTS, "repeat": ticks, "contacts": [],
               "planar_contacts": []}
    if isinstance(contacts[0], ContactSurface):
        problem["planar_contacts"] = [[c.frame.name(), c.length, c.width] for c in contacts]
    else:
        problem["contacts"] = [c.frame.name() for c in contacts]
    out = subprocess.run([str(PLACO), str(REPO / "tests" / "wbc" / "placo_solve.py")], input=json.dumps(problem),
                         capture_output=True, text=True, check=True)
    return np.array(json.loads(out.stdout)["times_us"])


def main(argv=None):
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--ticks", type=int, default=2000, help="ticks timed per robot (default 2000)")
    args = ap.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Whole-body inverse dynamics", peers=("daqp", "example-robot-data"))
    rec.set_peer("placo", placo_version())
    table = rec.table(f"standing, CoM + posture, minimum torque; {args.ticks} ticks", [
        record.Column("robot", "{robot}", align="left"), record.Column("nv", "{nv}"),
        record.Column("contacts", "{contacts}"),
        record.Column("ours setup p50/p99 µs", "{setup_p50:.0f} / {setup_p99:.0f}"),
        record.Column("ours tick p50/p99 µs", "{tick_p50:.0f} / {tick_p99:.0f}"),
        record.Column("PlaCo solve() p50/p99 µs", "{placo_p50:.0f} / {placo_p99:.0f}",
                      missing="absent (make placo-env)"),
        record.Column("PlaCo / ours (p50)", "{ratio:.1f}×", missing="")])
    for name in ("go2", "g1"):
        plant, contacts, q, c, setup, total = ours(name, args.ticks)
        theirs = placo(name, plant, contacts, q, args.ticks)
        kind = f"{len(contacts)} soles" if isinstance(contacts[0], ContactSurface) else f"{len(contacts)} points"
        row = dict(robot=name, nv=plant.num_velocities(), contacts=kind, setup_p50=np.median(setup),
                   setup_p99=np.percentile(setup, 99), tick_p50=np.median(total), tick_p99=np.percentile(total, 99))
        if theirs is not None:
            row.update(placo_p50=np.median(theirs), placo_p99=np.percentile(theirs, 99),
                       ratio=np.median(theirs) / np.median(total))
        table.add(**row)
        print(f"  {name}: ours {np.median(total):.0f} µs", flush=True)
    rec.show(table)
    rec.save()


if __name__ == "__main__":
    main()
