"""Planning benchmark, one process: inverse kinematics on the iiwa and TOPP-RA for a 7-joint path, next to
pydrake (InverseKinematics + pydrake.solvers.Solve, Toppra) and the toppra package when installed.

IK: full-pose goals X_WG = FK(q_goal) for random q_goal within the limits, random starts within the
limits (the same goals as tests/planning/test_ik_iiwa.py). A solve succeeds when the solver says so
and the result is within 1e-6 m and 1e-6 rad of the goal and within the joint limits. "restarts" rows
retry from random configurations (up to 20) after a failed start; pydrake's are done the same way.

TOPP-RA: a clamped cubic spline through 5 random waypoints, 100 gridpoints, the iiwa's joint velocity
and acceleration limits (and 30% of its effort limits for the torque rows); the time is setup
(constraints) plus solve, the median over repeats; "T" is the optimal duration found.

    python benchmarks/bench_planning.py [--poses 200] [--repeats 20] [--json PATH]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import record

from dynamics_cy import MultibodyPlant, Parser, RotationMatrix
from dynamics_cy.planning import (
    DampedLeastSquaresIK,
    InverseKinematics,
    PiecewisePolynomial,
    Solve,
    Toppra,
    ToppraDiscretization,
)

REPO = Path(__file__).resolve().parent.parent
URDF = str(REPO / "configs" / "robots" / "iiwa14.urdf")
RESTARTS = 20
TAU = np.array([320, 320, 176, 176, 110, 40, 40.0])


def load_plant():
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(URDF)
    plant.Finalize()
    return plant


def goals(plant, n, seed=2024):
    rng = np.random.default_rng(seed)
    lo, hi = plant.GetPositionLowerLimits(), plant.GetPositionUpperLimits()
    k, X = plant.kernels(), np.empty((4, 4))
    out = []
    for _ in range(n):
        k.frame_pose(rng.uniform(lo, hi), plant.GetFrameByName("iiwa_link_ee"), X)
        out.append((X.copy(), rng.uniform(lo, hi)))
    return out


def reached(plant, q, X_goal) -> bool:
    X = np.empty((4, 4))
    plant.kernels().frame_pose(np.ascontiguousarray(q, dtype=float), plant.GetFrameByName("iiwa_link_ee"), X)
    R = X_goal[:3, :3].T @ X[:3, :3]
    angle = np.arctan2(np.linalg.norm([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2,
                       (np.trace(R) - 1) / 2)
    inside = np.all(q >= plant.GetPositionLowerLimits() - 1e-9) and np.all(q <= plant.GetPositionUpperLimits() + 1e-9)
    return bool(np.linalg.norm(X[:3, 3] - X_goal[:3, 3]) < 1e-6 and abs(angle) < 1e-6 and inside)


def ik_row(label, solve_one, cases):
    """solve_one(X_goal, q0) -> (success, q); returns (label, success rate, median ms, mean ms)."""
    times, ok = [], 0
    for X_goal, q0 in cases:
        t0 = time.perf_counter()
        success, q = solve_one(X_goal, q0)
        times.append(time.perf_counter() - t0)
        ok += success
    return label, ok / len(cases), 1e3 * float(np.median(times)), 1e3 * float(np.mean(times))


def ours_ik(plant, restarts):
    W, E = plant.world_frame(), plant.GetFrameByName("iiwa_link_ee")

    def solve_one(X_goal, q0):
        ik = InverseKinematics(plant)
        ik.AddPositionConstraint(E, [0, 0, 0], W, X_goal[:3, 3], X_goal[:3, 3])
        ik.AddOrientationConstraint(W, RotationMatrix(X_goal[:3, :3]), E, RotationMatrix(), 0.0)
        ik.prog().SetInitialGuess(ik.q(), q0)
        result = Solve(ik.prog(), solver_options={"max_restarts": restarts})
        q = result.GetSolution(ik.q())
        return result.is_success() and reached(plant, q, X_goal), q
    return solve_one


def dls_ik(plant, restarts):
    ik = DampedLeastSquaresIK(plant, plant.GetFrameByName("iiwa_link_ee"))
    rng, q = np.random.default_rng(7), np.empty(7)

    def solve_one(X_goal, q0):
        ok = ik.SolveWithRestarts(X_goal, q0, q, restarts, rng)
        return ok and reached(plant, q, X_goal), q.copy()
    return solve_one


def drake_ik(pd, plant, restarts):
    dplant = pd.MultibodyPlant(0.0)
    pd.Parser(dplant).AddModels(URDF)
    dplant.Finalize()
    W, E = dplant.world_frame(), dplant.GetFrameByName("iiwa_link_ee")
    lo, hi = dplant.GetPositionLowerLimits(), dplant.GetPositionUpperLimits()
    rng, solver = np.random.default_rng(7), []

    def solve_one(X_goal, q0):
        ik = pd.InverseKinematics(dplant)
        ik.AddPositionConstraint(E, [0, 0, 0], W, X_goal[:3, 3], X_goal[:3, 3])
        ik.AddOrientationConstraint(W, pd.RotationMatrix(X_goal[:3, :3]), E, pd.RotationMatrix(), 0.0)
        start = q0
        for _ in range(restarts + 1):
            result = pd.Solve(ik.prog(), start)
            solver[:] = [result.get_solver_id().name()]
            q = result.GetSolution(ik.q())
            if result.is_success() and reached(plant, q, X_goal):
                return True, q
            start = rng.uniform(lo, hi)
        return False, q
    return solve_one, solver


def benchmark_ik(plant, n):
    cases = goals(plant, n)
    rows = [ik_row("ours: InverseKinematics + Solve, 1 start", ours_ik(plant, 0), cases),
            ik_row(f"ours: InverseKinematics + Solve, ≤{RESTARTS} restarts", ours_ik(plant, RESTARTS), cases),
            ik_row("ours: DampedLeastSquaresIK, 1 start", dls_ik(plant, 0), cases),
            ik_row(f"ours: DampedLeastSquaresIK, ≤{RESTARTS} restarts", dls_ik(plant, RESTARTS), cases)]
    try:
        import pydrake.all as pd
    except ImportError:
        print("pydrake is not installed: no Drake IK rows", file=sys.stderr)
        return rows
    for restarts in (0, RESTARTS):
        solve_one, solver = drake_ik(pd, plant, restarts)
        label = f"pydrake: InverseKinematics + Solve, {'1 start' if restarts == 0 else f'≤{RESTARTS} restarts'}"
        row = ik_row(label, solve_one, cases)
        rows.append((f"{row[0]} ({solver[0] if solver else '?'})",) + row[1:])
    return rows


def toppra_case(seed=1):
    rng = np.random.default_rng(seed)
    return np.linspace(0.0, 1.0, 5), rng.uniform(-1.0, 1.0, (7, 5)), np.linspace(0.0, 1.0, 100)


def median_ms(fn, repeats):
    fn()
    samples, value = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        samples.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(samples)), value


def benchmark_toppra(plant, repeats):
    s, wp, grid = toppra_case()
    path = PiecewisePolynomial.CubicWithContinuousSecondDerivatives(s, wp, np.zeros(7), np.zeros(7))
    setups = {"velocity + acceleration, collocation": ("acc", ToppraDiscretization.kCollocation),
              "velocity + acceleration, interpolation": ("acc", ToppraDiscretization.kInterpolation),
              "velocity + torque, interpolation": ("tau", ToppraDiscretization.kInterpolation)}
    rows = []
    try:
        import pydrake.all as pd
        from pydrake.multibody.optimization import Toppra as DrakeToppra
        from pydrake.multibody.optimization import ToppraDiscretization as DD
        dplant = pd.MultibodyPlant(0.0)
        pd.Parser(dplant).AddModels(URDF)
        dplant.Finalize()
        dpath = pd.PiecewisePolynomial.CubicWithContinuousSecondDerivatives(s, wp, np.zeros(7), np.zeros(7))
    except ImportError:
        pd = None
        print("pydrake is not installed: no Drake Toppra rows", file=sys.stderr)
    try:
        import toppra as ta
        import toppra.algorithm
        import toppra.constraint  # noqa: F401 (registers ta.constraint)
    except ImportError:
        ta = None
        print("the toppra package is not installed: no toppra rows", file=sys.stderr)

    def run(toppra_cls, p, pl, kind, disc):
        def go():
            t = toppra_cls(p, pl, grid)
            t.AddJointVelocityLimit(pl.GetVelocityLowerLimits(), pl.GetVelocityUpperLimits())
            if kind == "acc":
                t.AddJointAccelerationLimit(pl.GetAccelerationLowerLimits(), pl.GetAccelerationUpperLimits(), disc)
            else:
                t.AddJointTorqueLimit(-0.3 * TAU, 0.3 * TAU, disc)
            return t.SolvePathParameterization().end_time()
        return go

    def run_package(kind, disc):
        k = plant.kernels()

        def inverse_dynamics(q, qd, qdd):
            out = np.empty(7)
            k.inverse_dynamics(*(np.ascontiguousarray(a, dtype=float) for a in (q, qd, qdd)), out)
            return out

        def go():
            c = ta.constraint
            scheme = c.DiscretizationType.Collocation if disc == ToppraDiscretization.kCollocation else \
                c.DiscretizationType.Interpolation
            cons = [c.JointVelocityConstraint(np.c_[plant.GetVelocityLowerLimits(), plant.GetVelocityUpperLimits()])]
            if kind == "acc":
                cons.append(c.JointAccelerationConstraint(
                    np.c_[plant.GetAccelerationLowerLimits(), plant.GetAccelerationUpperLimits()],
                    discretization_scheme=scheme))
            else:
                cons.append(c.JointTorqueConstraint(inverse_dynamics, np.c_[-0.3 * TAU, 0.3 * TAU], np.zeros(7),
                                                    discretization_scheme=scheme))
            inst = ta.algorithm.TOPPRA(cons, ta.SplineInterpolator(s, wp.T, bc_type="clamped"), gridpoints=grid,
                                       parametrizer="ParametrizeConstAccel")
            return inst.compute_trajectory().duration
        return go

    for name, (kind, disc) in setups.items():
        rows.append((name, "ours") + median_ms(run(Toppra, path, plant, kind, disc), repeats))
        if pd is not None:
            rows.append((name, "pydrake") + median_ms(run(DrakeToppra, dpath, dplant, kind, DD(disc.value)), repeats))
        if ta is not None:
            rows.append((name, "toppra package (seidel)") + median_ms(run_package(kind, disc), repeats))
    return rows


def main(argv=None) -> int:
    parser = record.parser(__file__, __doc__)
    parser.add_argument("--poses", type=int, default=200, help="IK goals (default 200)")
    parser.add_argument("--repeats", type=int, default=20, help="TOPP-RA solves per row, the median (default 20)")
    args = parser.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Planning", peers=("pydrake", "toppra"))
    plant = load_plant()
    ik = rec.table(f"IK: iiwa14, {args.poses} full-pose goals, random starts", [
        record.Column("IK solver", "{solver}", align="left"), record.Column("success", "{success:.1%}"),
        record.Column("median ms", "{median_ms:.2f}"), record.Column("mean ms", "{mean_ms:.2f}")])
    for label, rate, med, mean in benchmark_ik(plant, args.poses):
        ik.add(solver=label, success=rate, median_ms=med, mean_ms=mean)
    rec.show(ik)
    toppra = rec.table("TOPP-RA, 7 joints, 100 gridpoints", [
        record.Column("constraints, discretization", "{case}", align="left"),
        record.Column("implementation", "{implementation}", align="left"),
        record.Column("median ms (setup + solve)", "{median_ms:.2f}"), record.Column("T (s)", "{duration:.6f}")])
    for name, impl, ms, duration in benchmark_toppra(plant, args.repeats):
        toppra.add(case=name, implementation=impl, median_ms=ms, duration=duration)
    rec.show(toppra)
    rec.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
