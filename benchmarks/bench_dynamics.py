"""Per-call time of the dynamics from Python: dynamics_cy's kernels and facade next to Pinocchio and
pydrake, measured in one process. Prints a markdown table of medians (µs) and ratios to Pinocchio,
and under it why a peer has no row (not installed, cannot load the model). The last two columns are
what a Cartesian law needs: M⁻¹ (Pinocchio's computeMinverse, which fills the upper triangle), and
the measured frame's Jacobian with Λ = (J M⁻¹ Jᵀ)⁻¹ (ours: Kernels.jacobian, mass_matrix_cholesky,
dynamics_cy.linalg's operational_space_inertia; Pinocchio: computeMinverse mirrored, computeFrameJacobian
and numpy's products and inverse, as a Python law would); the facade and pydrake have neither as one call.

    python benchmarks/bench_dynamics.py [--repeats 15] [--calls 2000] [--only Talos] [--json PATH]
"""
from __future__ import annotations

import logging
import sys
import sysconfig
from pathlib import Path

import numpy as np
import record
import timing

import dynamics_cy as dc
from dynamics_cy import linalg

REPO = Path(__file__).resolve().parent.parent
ROBOT_DATA = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data"
OPS = ("gravity", "inverse dynamics", "mass matrix", "forward dynamics", "frame pose", "jacobian",
       "mass matrix inverse", "operational-space inertia")


class PeerSkipped(Exception):
    """A peer that does not measure this model; the message is the one-line reason printed."""


def first_line(error: Exception, path: str) -> str:
    """The first line of a loader's error, with the model's folder left out."""
    lines = str(error).strip().splitlines() or [type(error).__name__]
    return lines[0].replace(str(Path(path).parent) + "/", "")


def median_us(fn, calls: int, repeats: int) -> float:
    return timing.median_us(fn, calls, repeats, warmup=calls // 10)


class Model:
    """A robot as loaded by each implementation, with two states to alternate (no caching)."""

    def __init__(self, label, path, weld=None):
        self.label, self.path, self.weld = label, str(path), weld
        self.plant = self._load(dc)
        self.nv = self.plant.num_velocities()
        rng = np.random.default_rng(0)
        self.states = []
        for _ in range(2):
            q = self.plant.GetDefaultPositions() + rng.normal(size=self.plant.num_positions()) * 0.3
            if self.plant.GetFloatingBaseBodies():
                q[:4] /= np.linalg.norm(q[:4])
            self.states.append((q, rng.normal(size=self.nv), rng.normal(size=self.nv), rng.normal(size=self.nv)))
        frames = [self.plant.get_frame(i) for i in range(self.plant.num_frames())]
        self.frame = max(frames, key=lambda f: len(self._path_to_world(f.body())))

    def _path_to_world(self, body):
        path = []
        while not body.is_world_body():
            j = body.inboard_joint()
            path.append(j)
            body = j.parent_body()
        return path

    def _load(self, module):
        plant = module.MultibodyPlant(0.0)
        parser = module.Parser(plant)
        if ROBOT_DATA.is_dir():
            parser.package_map().Add("example-robot-data", str(ROBOT_DATA))
        parser.AddModels(self.path)
        if self.weld:
            plant.WeldFrames(plant.world_frame(), plant.GetFrameByName(self.weld))
        plant.Finalize()
        return plant


def plant_api_ops(plant, states, f, multibody_forces, kV) -> dict:
    """The operations through the MultibodyPlant API that dynamics_cy's facade and pydrake share, each
    setting the next of `states()` (q, v, vd, tau) first; f: the measured frame."""
    ctx, forces, W = plant.CreateDefaultContext(), multibody_forces(plant), plant.world_frame()

    def set_state():
        q, v, vd, tau = states()
        plant.SetPositions(ctx, q)
        plant.SetVelocities(ctx, v)
        return vd, tau

    return {
        "gravity": lambda: (set_state(), plant.CalcGravityGeneralizedForces(ctx)),
        "inverse dynamics": lambda: plant.CalcInverseDynamics(ctx, set_state()[0], forces),
        "mass matrix": lambda: (set_state(), plant.CalcMassMatrix(ctx)),
        "forward dynamics": lambda: plant.CalcForwardDynamics(ctx, set_state()[1]),
        "frame pose": lambda: (set_state(), plant.CalcRelativeTransform(ctx, W, f)),
        "jacobian": lambda: (set_state(), plant.CalcJacobianSpatialVelocity(ctx, kV, f, np.zeros(3), W, W)),
    }


def bench_ours(m: Model, calls, repeats) -> dict:
    k = m.plant.kernels()
    out, M, X, J = np.zeros(m.nv), np.zeros((m.nv, m.nv)), np.zeros((4, 4)), np.zeros((6, m.nv))
    JMinv, Lam = np.zeros((6, m.nv)), np.zeros((6, 6))
    s = m.states
    f = m.frame
    i = [0]

    def st():
        i[0] ^= 1
        return s[i[0]]

    kernel = {
        "gravity": lambda: k.gravity(st()[0], out),
        "inverse dynamics": lambda: k.inverse_dynamics(*st()[:3], out),
        "mass matrix": lambda: k.mass_matrix(st()[0], M),
        "forward dynamics": lambda: k.forward_dynamics(st()[0], st()[1], st()[3], out),
        "frame pose": lambda: k.frame_pose(st()[0], f, X),
        "jacobian": lambda: k.jacobian(st()[0], f, J),
        "mass matrix inverse": lambda: k.mass_matrix_inverse(st()[0], M),
        "operational-space inertia": lambda: operational_space_inertia(k, st()[0], f, M, J, JMinv, Lam),
    }
    facade = plant_api_ops(m.plant, st, m.frame, dc.MultibodyForces, dc.JacobianWrtVariable.kV)
    return {"dynamics_cy kernels": {op: median_us(kernel[op], calls, repeats) for op in OPS},
            "dynamics_cy facade": {op: median_us(facade[op], calls // 4, repeats) if op in facade else float("nan")
                                   for op in OPS}}


def operational_space_inertia(k, q, frame, L, J, JMinv, Lam) -> None:
    """J of `frame` and Λ = (J M⁻¹ Jᵀ)⁻¹ at q with the kernels and dynamics_cy.linalg (damped a little,
    as the random states may be near a singularity)."""
    k.jacobian(q, frame, J)
    k.mass_matrix_cholesky(q, L)
    linalg.operational_space_inertia(L, J, JMinv, Lam, 1e-6)


def load_pinocchio(m: Model):
    """(the pinocchio module, its model of m: the same URDF, a free-flyer root when m floats); PeerSkipped
    when Pinocchio is not installed or cannot load it."""
    try:
        import pinocchio as pin
    except ImportError:
        raise PeerSkipped("Pinocchio: not installed") from None
    free = bool(m.plant.GetFloatingBaseBodies())
    try:
        model = pin.buildModelFromUrdf(m.path, pin.JointModelFreeFlyer()) if free else pin.buildModelFromUrdf(m.path)
    except (RuntimeError, ValueError) as e:
        raise PeerSkipped(f"Pinocchio: cannot load the model: {first_line(e, m.path)}") from None
    if model.nv != m.nv:
        raise PeerSkipped(f"Pinocchio: its model has nv = {model.nv}, dynamics_cy's {m.nv}")
    return pin, model


def bench_pinocchio(m: Model, calls, repeats) -> dict:
    pin, model = load_pinocchio(m)
    data = model.createData()
    rng = np.random.default_rng(1)
    qs = [pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq)) for _ in range(2)]
    v, a, tau = (rng.normal(size=model.nv) for _ in range(3))
    fid = model.getFrameId(m.frame.name()) if model.existFrame(m.frame.name()) else model.nframes - 1
    i = [0]

    def q():
        i[0] ^= 1
        return qs[i[0]]

    def pose():
        pin.forwardKinematics(model, data, q())
        return pin.updateFramePlacement(model, data, fid)

    def osc_inertia():
        Minv = pin.computeMinverse(model, data, q())         # its upper triangle, mirrored
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        J = pin.computeFrameJacobian(model, data, qs[i[0]], fid, pin.LOCAL_WORLD_ALIGNED)
        return np.linalg.inv(J @ Minv @ J.T + 1e-12 * np.eye(6))

    ops = {
        "mass matrix inverse": lambda: pin.computeMinverse(model, data, q()),     # (its upper triangle)
        "operational-space inertia": osc_inertia,
        "gravity": lambda: pin.computeGeneralizedGravity(model, data, q()),
        "inverse dynamics": lambda: pin.rnea(model, data, q(), v, a),
        "mass matrix": lambda: pin.crba(model, data, q()),
        "forward dynamics": lambda: pin.aba(model, data, q(), v, tau),
        "frame pose": pose,
        "jacobian": lambda: pin.computeFrameJacobian(model, data, q(), fid, pin.LOCAL_WORLD_ALIGNED),
    }
    return {"Pinocchio " + pin.__version__: {op: median_us(ops[op], calls, repeats) for op in OPS}}


def bench_drake(m: Model, calls, repeats) -> dict:
    try:
        from pydrake.multibody import parsing, tree
        from pydrake.multibody import plant as dplant
    except ImportError:
        raise PeerSkipped("pydrake: not installed") from None
    logging.getLogger("drake").setLevel(logging.ERROR)

    class Module:
        MultibodyPlant, Parser = dplant.MultibodyPlant, parsing.Parser

    try:
        plant = m._load(Module)
    except RuntimeError as e:
        raise PeerSkipped(f"pydrake: cannot load the model: {first_line(e, m.path)}") from None
    i = [0]

    def st():
        i[0] ^= 1
        return m.states[i[0]]

    ops = plant_api_ops(plant, st, plant.GetFrameByName(m.frame.name()), tree.MultibodyForces,
                        tree.JacobianWrtVariable.kV)
    del ops["forward dynamics"]                # not in pydrake's Python API
    return {f"pydrake {record.version('drake') or ''}".strip():
            {op: median_us(ops[op], calls // 4, repeats) if op in ops else float("nan") for op in OPS}}


def key(op: str) -> str:
    return op.replace(" ", "_")


def table(rec: record.Record, m: Model, results: dict, skipped: list[str]) -> record.Table:
    peer = next((name for name in results if name.startswith("Pinocchio")), None)
    columns = [record.Column("implementation", "{name}", align="left")]
    columns += [record.Column(op, f"{{{key(op)}:.2f}} ({{{key(op)}_ratio:.2f}}×)", f"{{{key(op)}:.2f}}", missing="n/a")
                for op in OPS]
    t = rec.table(f"{m.label} (nv = {m.nv}, frame '{m.frame.name()}')", columns,
                  [f"not measured: {reason}" for reason in skipped])
    for name, r in results.items():
        row = {"name": name}
        for op in OPS:
            row[key(op)] = r[op]
            if peer and name != peer and not np.isnan(r[op]):
                row[key(op) + "_ratio"] = r[op] / results[peer][op]
        t.add(**row)
    return t


def model_specs(ap, only: str) -> list[tuple]:
    """(label, URDF, frame welded to the world or None) of the robots measured whose label contains
    `only`: the iiwa14, and the Panda, G1 and Talos when example-robot-data is installed."""
    specs = [("KUKA iiwa14 (configs/robots)", REPO / "configs" / "robots" / "iiwa14.urdf", None)]
    if ROBOT_DATA.is_dir():
        robots = ROBOT_DATA / "robots"
        specs += [("Franka Panda, base welded", robots / "panda_description/urdf/panda.urdf", "panda_link0"),
                  ("Unitree G1 humanoid, floating", robots / "g1_description/urdf/g1_29dof_rev_1_0.urdf", None),
                  ("Talos humanoid (full v2), floating", robots / "talos_data/robots/talos_full_v2.urdf", None)]
    else:
        print("example-robot-data is not installed: only the iiwa is measured", file=sys.stderr)
    specs = [s for s in specs if only.lower() in s[0].lower()]
    if not specs:
        ap.error(f"no model label contains '{only}'")
    return specs


def parser(file: str, doc: str):
    """A dynamics benchmark's options: record's, and --repeats, --calls, --only."""
    ap = record.parser(file, doc)
    ap.add_argument("--repeats", type=int, default=15, help="batches per measurement (median reported)")
    ap.add_argument("--calls", type=int, default=2000, help="calls per batch")
    ap.add_argument("--only", default="", help="measure only the models whose label contains this text")
    return ap


def measure(rec: record.Record, specs, args, ours, peers, make_table) -> None:
    """One table per model of `specs`: `ours` and each of `peers` (bench functions of a Model, calls and
    repeats; a peer's PeerSkipped gives its reason under the table), then the results saved."""
    for label, path, weld in specs:
        m = Model(label, path, weld)
        results, skipped = ours(m, args.calls, args.repeats), []
        for bench in peers:
            try:
                results.update(bench(m, args.calls, args.repeats))
            except PeerSkipped as e:
                skipped.append(str(e))
        rec.show(make_table(rec, m, results, skipped))
    rec.save()


def main(argv=None) -> int:
    ap = parser(__file__, __doc__)
    args = ap.parse_args(argv)
    logging.getLogger("dynamics_cy").setLevel(logging.ERROR)
    rec = record.Record(__file__, __doc__, args, "Dynamics", peers=("pinocchio", "pydrake", "example-robot-data"))
    specs = model_specs(ap, args.only)
    print("Median µs per call from Python (ratio to Pinocchio); lower is better. "
          "Facade and pydrake rows include setting q and v in the context.\n")
    measure(rec, specs, args, bench_ours, (bench_pinocchio, bench_drake), table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
