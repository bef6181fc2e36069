"""Whole-body inverse dynamics per tick: our QP (planning.whole_body: kernels + DAQP) next to PlaCo's
DynamicsSolver on the same robot, state and tasks, in the same run.

Quadruped: Go2, 18 velocities, 4 unilateral point feet. Humanoid: G1 (29 joints), 35 velocities,
2 flat feet (ours: 4 corner points each under a 6-D foot constraint; PlaCo: a planar contact of the
same sole size on each ankle frame). Tasks: CoM and posture (soft), contacts hard, minimum torque.
Ours is timed as setup (kernels fill every matrix) and solve (DAQP, hot-started); PlaCo's
``solve()`` builds and solves its problem in one call (its kinematics update is outside the timing,
ours is inside). PlaCo runs in its own environment (make placo-env), as a subprocess.

    .venv/bin/python benchmarks/bench_wbc.py [--ticks 2000]
"""
from __future__ import annotations

import argparse
import gc
import json
import subprocess
import time
from pathlib import Path

import numpy as np

from planning.legged_models import LEGGED, example_robot_data_root, load_legged
from planning.whole_body import WholeBodyController, WholeBodyWeights

REPO = Path(__file__).resolve().parents[1]
PLACO = REPO / ".venv-placo" / "bin" / "python"
WEIGHTS = {"com": 1.0, "posture": 1.0, "torque": 1e-3, "forces": 1e-5, "regularization": 1e-9}
SOLE = (0.17, 0.05)      # G1 sole length and width (its four collision spheres)


def ours(name, ticks):
    plant, contacts, q = load_legged(name)
    c = WholeBodyController(plant, contacts, weights=WholeBodyWeights(
        com=WEIGHTS["com"], base_orientation=0.0, posture=WEIGHTS["posture"], torque=WEIGHTS["torque"],
        force_regularization=WEIGHTS["forces"]))
    v = np.zeros(plant.num_velocities())
    c.solve(q, v)
    setup, total = np.empty(ticks), np.empty(ticks)
    gc.disable()
    for i in range(ticks):
        t0 = time.perf_counter_ns()
        c.setup(q, v)
        t1 = time.perf_counter_ns()
        c.solve(q, v)                                   # setup + DAQP
        t2 = time.perf_counter_ns()
        setup[i], total[i] = (t1 - t0) / 1e3, (t2 - t1) / 1e3
    gc.enable()
    return plant, contacts, q, c, setup, total


def placo(name, plant, contacts, q, ticks):
    if not PLACO.exists() or subprocess.run([str(PLACO), "-c", "import placo"], capture_output=True).returncode:
        return None
    joints = {j.name(): float(q[j.position_start()]) for j in plant._joints if j.num_positions() == 1}
    problem = {"urdf": str(example_robot_data_root() / "robots" / LEGGED[name].urdf),
               "package_root": str(example_robot_data_root()), "q_base": [*q[4:7], *q[1:4], q[0]],
               "joints": joints, "mu": 0.6, "weights": WEIGHTS, "repeat": ticks, "contacts": [],
               "planar_contacts": []}
    frames = list(dict.fromkeys(c.frame.name() for c in contacts))
    if len(frames) == len(contacts):
        problem["contacts"] = frames
    else:
        problem["planar_contacts"] = [[f, *SOLE] for f in frames]
    out = subprocess.run([str(PLACO), str(REPO / "tests" / "wbc" / "placo_solve.py")], input=json.dumps(problem),
                         capture_output=True, text=True, check=True)
    return np.array(json.loads(out.stdout)["times_us"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ticks", type=int, default=2000)
    args = ap.parse_args()
    print("| robot | nv | contact points | ours setup p50/p99 µs | ours setup + solve p50/p99 µs "
          "| PlaCo solve() p50/p99 µs | PlaCo / ours (p50) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in ("go2", "g1"):
        plant, contacts, q, c, setup, total = ours(name, args.ticks)
        theirs = placo(name, plant, contacts, q, args.ticks)
        pct = lambda a: f"{np.median(a):.0f} / {np.percentile(a, 99):.0f}"
        peer = "absent (make placo-env)" if theirs is None else pct(theirs)
        ratio = "" if theirs is None else f"{np.median(theirs) / np.median(total):.1f}x"
        print(f"| {name} | {plant.num_velocities()} | {len(contacts)} | {pct(setup)} | {pct(total)} "
              f"| {peer} | {ratio} |")


if __name__ == "__main__":
    main()
