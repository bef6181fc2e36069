"""The collision guard's whole check per tick (hil.collision_guard, safety.collision) on the iiwa14 with a
gripper and a table, next to Drake's SceneGraph computing the same capsules' and box's distances, in one
process.

Ours: CollisionGuard.check(q) (the bodies' poses by Kernels.body_poses, every pair's φ, witnesses and
normal in dynamics_cy._capsules, the pair nearest its stop distance), and check + shape (the warning
zone's policy active on every pair: the Jacobians of the eight bodies and the repulsive torques).
Drake: the same capsules registered on the same bodies of its MultibodyPlant and the table as an
anchored box; per tick SetPositions, then
ComputeSignedDistancePairClosestPoints over the same pairs (FCL), and ComputeSignedDistancePairwiseClosestPoints
over every pair its default filters leave (more pairs: it also checks links two joints apart).

    python benchmarks/bench_collision_guard.py [--calls 2000] [--repeats 15] [--json PATH]
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import record  # noqa: E402
from dynamics_cy._capsules import KIND_BOX, KIND_CAPSULE  # noqa: E402
from timing import median_us  # noqa: E402

from drivers.core.config import CollisionBox, CollisionCapsule, CollisionConfig  # noqa: E402
from dynamics_cy import BodyIndex, MultibodyPlant, Parser  # noqa: E402
from hil.collision_guard import CollisionGuard  # noqa: E402

URDF = REPO / "configs" / "robots" / "iiwa14.urdf"
# The WSG 50 on the flange (body and the two fingers, as configs/scenarios/collision_*.yaml mount it) and
# a table in front of the robot.
CONFIG = CollisionConfig(
    capsules=[CollisionCapsule("gripper_body", "iiwa_link_7", [0.0, -0.06, 0.114], [0.0, 0.06, 0.114], 0.047),
              CollisionCapsule("left_finger", "iiwa_link_7", [0.0, -0.045, 0.14], [0.0, -0.045, 0.22], 0.02),
              CollisionCapsule("right_finger", "iiwa_link_7", [0.0, 0.045, 0.14], [0.0, 0.045, 0.22], 0.02)],
    boxes=[CollisionBox("table", [0.8, 1.2, 0.1], [0.7, 0.0, 0.05])])
Q = [np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]), np.array([0.3, 1.0, -0.2, -1.4, 0.2, 1.2, 0.1])]


def alternate(states):
    i = [0]

    def next_state():
        i[0] ^= 1
        return states[i[0]]
    return next_state


def our_plant():
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(URDF))
    plant.Finalize()
    return plant


def bench_ours(plant, calls, repeats) -> tuple[dict, CollisionGuard]:
    guard = CollisionGuard(plant, CONFIG)
    q = alternate(Q)
    check = median_us(lambda: guard.check(q()), calls, repeats, warmup=100)
    v, tau = np.full(7, 0.1), np.zeros(7)
    guard.warn[:] = 10.0            # every pair inside its warning zone: the policy runs each tick

    def both():
        x = q()
        guard.check(x)
        guard.shape(x, v, tau)
    shaped = median_us(both, calls, repeats, warmup=100)
    return {"check": check, "shaped": shaped, "pairs": len(guard.model.pairs)}, guard


def bench_drake(ours_plant, guard: CollisionGuard, calls, repeats) -> dict:
    import pydrake
    from pydrake.all import (
        AddMultibodyPlantSceneGraph,
        Box,
        Capsule,
        CoulombFriction,
        DiagramBuilder,
        Parser,
        RigidTransform,
        RotationMatrix,
        Sphere,
    )
    builder = DiagramBuilder()
    plant, scene_graph = AddMultibodyPlantSceneGraph(builder, 0.0)
    Parser(plant).AddModels(str(URDF))
    model = guard.model
    ids = []
    for c in model.capsules:                                   # our capsules, replacing the URDF's shapes
        body = plant.GetBodyByName(ours_plant.get_body(BodyIndex(c.body)).name())
        axis = c.p_BP1 - c.p_BP0
        length = float(np.linalg.norm(axis))
        z = axis / length if length > 0 else np.array([0.0, 0.0, 1.0])
        X_BG = RigidTransform(RotationMatrix.MakeFromOneVector(z, 2), 0.5 * (c.p_BP0 + c.p_BP1))
        shape = Capsule(c.radius, length) if length > 0 else Sphere(c.radius)      # Drake's capsules have length > 0
        ids.append(plant.RegisterCollisionGeometry(body, X_BG, shape, c.name + "_capsule", CoulombFriction()))
    box_ids = [plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(b.X_WB), Box(*b.size), b.name,
                                               CoulombFriction()) for b in model.boxes]
    plant.Finalize()
    diagram = builder.Build()
    context = diagram.CreateDefaultContext()
    plant_context = plant.GetMyMutableContextFromRoot(context)
    sg_context = scene_graph.GetMyContextFromRoot(context)
    inspector = scene_graph.model_inspector()
    ours = set(ids) | set(box_ids)
    urdf_shapes = [g for g in inspector.GetAllGeometryIds() if g not in ours]
    from pydrake.geometry import CollisionFilterDeclaration, GeometrySet
    scene_graph.collision_filter_manager(sg_context).Apply(
        CollisionFilterDeclaration().ExcludeWithin(GeometrySet(urdf_shapes))
        .ExcludeBetween(GeometrySet(urdf_shapes), GeometrySet(list(ours))))
    pairs = [(ids[a], ids[b] if kind == KIND_CAPSULE else box_ids[b]) for kind, a, b in model.pairs
             if kind in (KIND_CAPSULE, KIND_BOX)]
    port = scene_graph.get_query_output_port()
    q = alternate(Q)

    def per_pair():
        plant.SetPositions(plant_context, q())
        query = port.Eval(sg_context)
        for a, b in pairs:
            query.ComputeSignedDistancePairClosestPoints(a, b)

    def pairwise():
        plant.SetPositions(plant_context, q())
        port.Eval(sg_context).ComputeSignedDistancePairwiseClosestPoints(np.inf)

    # The same distances: φ of our pairs from both (at the first configuration).
    plant.SetPositions(plant_context, Q[0])
    query = port.Eval(sg_context)
    theirs = np.array([query.ComputeSignedDistancePairClosestPoints(a, b).distance for a, b in pairs])
    guard.check(Q[0])
    n_all = len(port.Eval(sg_context).ComputeSignedDistancePairwiseClosestPoints(np.inf))
    return {"version": pydrake.__version__ if hasattr(pydrake, "__version__") else record.version("drake"),
            "per_pair": median_us(per_pair, max(calls // 10, 50), repeats, warmup=10),
            "pairwise": median_us(pairwise, max(calls // 10, 50), repeats, warmup=10),
            "pairs": len(pairs), "pairs_all": n_all,
            "max_diff": float(np.abs(theirs - guard.distance).max())}


def main(argv=None) -> int:
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--calls", type=int, default=2000, help="calls per batch (Drake's: a tenth)")
    ap.add_argument("--repeats", type=int, default=15, help="batches; the median batch counts")
    args = ap.parse_args(argv)
    logging.getLogger("dynamics_cy").setLevel(logging.ERROR)
    rec = record.Record(__file__, __doc__, args, "Collision guard", peers=("pydrake",))
    plant = our_plant()
    ours, guard = bench_ours(plant, args.calls, args.repeats)
    notes = []
    try:
        drake = bench_drake(plant, guard, args.calls, args.repeats)
    except ImportError as e:
        drake = None
        notes.append(f"not measured: pydrake ({e})")
    t = rec.table(f"iiwa14 + gripper (3 capsules) + table: {ours['pairs']} pairs",
                  [record.Column("implementation", "{name}", align="left"),
                   record.Column("µs per tick", "{us:.2f}"),
                   record.Column("pairs", "{pairs}"),
                   record.Column("ratio to ours", "{ratio:.0f}×", missing="")], notes)
    t.add(name="dynamics_cy._capsules: CollisionGuard.check", us=ours["check"], pairs=ours["pairs"])
    t.add(name="CollisionGuard.check + shape (the warning policy on)", us=ours["shaped"], pairs=ours["pairs"])
    if drake is not None:
        t.add(name=f"pydrake {drake['version']}: ComputeSignedDistancePairClosestPoints, the same pairs",
              us=drake["per_pair"], pairs=drake["pairs"], ratio=drake["per_pair"] / ours["check"])
        t.add(name=f"pydrake {drake['version']}: ComputeSignedDistancePairwiseClosestPoints, default filters",
              us=drake["pairwise"], pairs=drake["pairs_all"], ratio=drake["pairwise"] / ours["check"])
    print("Median µs per tick from Python; lower is better.\n")
    rec.show(t)
    if drake is not None:
        rec.note(f"Largest |φ_ours − φ_Drake| over the pairs at the first configuration: {drake['max_diff']:.1e} m "
                 "(Drake computes capsule pairs with FCL's GJK, distance tolerance 1e-6).")
    rec.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
