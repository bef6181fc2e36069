"""Grasping on two plants: the Schunk WSG 50 picking a 5 cm, 0.2 kg cube on our engine (box–box point
contact) and on MuJoCo (sim.engine: mujoco, the same model through the MjSpec export), in the same run;
then a 0.2 kg cylinder, 5 cm across and 7 cm tall, standing on a table box (cylinder–box contact: line
contacts on the pads, its rim on the table).

The scene and the pick are tests/sim/grasp_scene.py's: the WSG hangs fingers-down from a prismatic z
joint held by a PD (gravity feed-forward), its left finger coupled to the right by the URDF's <mimic>;
the fingers close on the cube with their actuators' 40 N (the WSG's default grip force), the lift
raises it 10 cm over 0.8 s, carries it 1 s, lowers it 0.8 s, the fingers open, the lift retreats; 1 ms
steps, 3.8 s. Per plant, over `--repeats` runs:

- step: the median over the runs of each run's median µs per Physics.step (time.perf_counter_ns
  around the call: the contact detection, the forces and the integration; not the scripted PD);
- slip: the largest displacement of the cube (the cylinder) relative to the right finger from the grasp to the
  release, mm; drop: the cube's height below the commanded lift at the carry's end, mm (the lift's PD
  sag and the pads' compression included);
- chatter: the standard deviation of the right pad's normal force over the carry (its last 0.8 s)
  divided by its mean;
- place: the cube's distance from its start position after the release, mm;
- deterministic: every run's final state bitwise equal to the first's.

Plants: ours at contact.stiffness 2·10⁴ N/m (the scene's: h √(n k/m) < 1 for the 50 g fingers on 4
points) and at the default 10⁵ N/m; MuJoCo with the elliptic cone at impratio 1 (its default), 10 and
100, and with the pyramidal cone (its default cone), its default soft contact (solref 0.02 s). The
cylinder: ours at 2·10⁴ N/m, MuJoCo elliptic at impratio 1 and 100.

    .venv/bin/python benchmarks/bench_grasp.py [--repeats 3] [--json PATH]
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np
import record

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.sim.grasp_scene import GRASP_STIFFNESS, run_grasp  # noqa: E402

CONTACT = {"enabled": True, "between_bodies": True}
PLANTS = (
    ("ours, k 2·10⁴ N/m", "hilstack", {"contact": {**CONTACT, "stiffness": GRASP_STIFFNESS}}),
    ("ours, k 10⁵ N/m (default)", "hilstack", {}),
    ("MuJoCo elliptic, impratio 1", "mujoco", {"mujoco": {"cone": "elliptic"}}),
    ("MuJoCo elliptic, impratio 10", "mujoco", {"mujoco": {"cone": "elliptic", "impratio": 10.0}}),
    ("MuJoCo elliptic, impratio 100", "mujoco", {"mujoco": {"cone": "elliptic", "impratio": 100.0}}),
    ("MuJoCo pyramidal, impratio 1", "mujoco", {"mujoco": {"cone": "pyramidal"}}),
)
CYLINDER_PLANTS = (PLANTS[0], PLANTS[2], PLANTS[4])
COLUMNS = [
    record.Column("plant", "{plant}", align="left"), record.Column("µs/step", "{step:.1f}"),
    record.Column("slip mm", "{slip:.4f}"), record.Column("drop mm", "{drop:.3f}"),
    record.Column("chatter", "{chatter:.2g}"), record.Column("place mm", "{place:.3f}"),
    record.Column("deterministic", "{deterministic}")]


def measure(rec, table, shape: str, plants, repeats: int) -> None:
    """One row per plant: `repeats` picks of the `shape` ("box": the cube, "cylinder")."""
    for label, engine, sim in plants:
        if engine == "mujoco" and rec.peers["mujoco"] is None:
            continue
        runs = [run_grasp(engine, shape, **sim) for _ in range(repeats)]
        first = runs[0]
        row = table.add(plant=label, step=statistics.median(r.step_us for r in runs), slip=first.slip_mm,
                        drop=first.drop_mm, chatter=first.chatter, place=first.place_mm,
                        deterministic="yes" if all(np.array_equal(r.q_final, first.q_final) for r in runs) else "no")
        print(f"  {label}: {row}", flush=True)
    rec.show(table)


def main(argv=None):
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--repeats", type=int, default=3, help="runs per plant")
    args = ap.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Grasping on our plant and on MuJoCo", peers=("mujoco",))
    measure(rec, rec.table("WSG 50 pick of a 0.2 kg cube, 40 N grip, 10 cm lift, 1 ms steps", COLUMNS), "box",
            PLANTS, args.repeats)
    measure(rec, rec.table("WSG 50 pick of a 0.2 kg cylinder (r 2.5 cm, 7 cm tall) from a table, 40 N grip, "
                           "10 cm lift, 1 ms steps", COLUMNS), "cylinder", CYLINDER_PLANTS, args.repeats)
    rec.save()


if __name__ == "__main__":
    main()
