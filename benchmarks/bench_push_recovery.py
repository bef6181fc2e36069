"""Push recovery on two independent plants: the largest lateral push each legged robot survives under
whole-body torque control, on our simulated plant and on MuJoCo (sim.engine: mujoco), in the same run;
and the arms' computed-torque tracking error on both.

A trial (hil.legged_scenario.push_recovered: the loop, controller whole_body at its defaults, in lockstep
with the simulated robot): stand 0.5 s, push the base along +y with a force of impulse/0.1 s for 0.1 s,
then 3 s. Recovered: no fault latched and the base within 5 cm of its height before the push. The
largest recovered impulse is found by doubling from 4 N·s to the first failure, then bisection to
0.5 N·s (--quick: the Go2 only, to 2 N·s). Plants: ours at its defaults (rubber feet on a floor: μ 0.8
static, 0.7 dynamic) and at μ 0.6, MuJoCo with the pyramidal cone at μ 0.6 and 0.8 and the elliptic cone
at μ 0.8 (μ the combined friction of the foot and the ground, sim.contact.ground.friction set so).
Arms: the shipped iiwa and Panda configs' computed-torque trajectories (4 s, --quick 2 s), max and RMS
|q − q_d| over the running ticks.

    .venv/bin/python benchmarks/bench_push_recovery.py [--quick] [--json PATH]
"""
from __future__ import annotations

import numpy as np
import record

from drivers.sim.config import load_sim_config
from dynamics_cy.planning.legged_models import load_legged
from hil.legged_scenario import largest_push_recovered
from hil.testing import config_path, simulate

PLANTS = (("ours (defaults, μ 0.8)", "hilstack", None, None), ("ours μ 0.6", "hilstack", None, 0.6),
          ("MuJoCo pyramidal μ 0.6", "mujoco", "pyramidal", 0.6),
          ("MuJoCo pyramidal μ 0.8", "mujoco", "pyramidal", 0.8), ("MuJoCo elliptic μ 0.8", "mujoco", "elliptic", 0.8))


def sim_section(name: str, engine: str, cone: str | None, mu: float | None) -> dict:
    """The sim section of a plant: the ground's friction g making the foot's combined
    μ = 2 μ_f g / (μ_f + g) equal to `mu`, i.e. g = μ μ_f / (2 μ_f − μ), static and dynamic alike (on our
    plant the foot's own dynamic 0.7 then makes the pair's dynamic μ a little lower: 0.57 at μ 0.6);
    mu None: the defaults."""
    if mu is None:
        return {}
    plant = load_legged(name, simulation=True)[0]
    mu_f = {g.friction.static_friction() for b in range(plant.num_bodies())
            for g in plant.GetCollisionGeometriesForBody(plant.get_body(b))}.pop()
    g = mu * mu_f / (2 * mu_f - mu)
    friction = {"static": g, "dynamic": g}
    section = {"contact": {"ground": {"friction": friction}}}
    return section if engine == "hilstack" else {"engine": engine, "mujoco": {"cone": cone}, **section}


def tracking(name: str, engine: str, duration: float) -> dict:
    run = simulate(config_path(name), duration=duration, overrides={"sim": {"engine": engine}})
    e = np.abs(run.q - run.q_d)[run.running]
    return {"max": e.max() * 1e3, "rms": np.sqrt((e ** 2).mean()) * 1e3, "state": run.final_state}


def main(argv=None):
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--quick", action="store_true", help="the Go2 only, to 2 N·s; the arms for 2 s")
    args = ap.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Push recovery on our plant and on MuJoCo",
                        peers=("mujoco", "example-robot-data"))
    resolution, robots = (2.0, ("go2",)) if args.quick else (0.5, ("go2", "g1"))
    table = rec.table(f"largest lateral push recovered (N·s over 0.1 s, to {resolution:g} N·s)", [
        record.Column("robot", "{robot}", align="left"), record.Column("plant", "{plant}", align="left"),
        record.Column("recovered N·s", "{recovered:.1f}"), record.Column("falls at N·s", "{failed:.1f}"),
        record.Column("trials", "{trials}")])
    for name in robots:
        for label, engine, cone, mu in PLANTS:
            sim = load_sim_config(sim_section(name, engine, cone, mu))
            lo, hi, n = largest_push_recovered(name, sim, resolution)
            table.add(robot=name, plant=label, recovered=lo, failed=hi, trials=n)
            print(f"  {name} on {label}: recovers {lo:g} N·s, falls at {hi:g}", flush=True)
    rec.show(table)
    duration = 2.0 if args.quick else 4.0
    arms = rec.table(f"computed-torque tracking, |q − q_d| over {duration:g} s (mrad)", [
        record.Column("arm", "{arm}", align="left"), record.Column("plant", "{plant}", align="left"),
        record.Column("max", "{max:.4f}"), record.Column("RMS", "{rms:.4f}"), record.Column("state", "{state}")])
    for name in ("iiwa", "panda"):
        for label, engine in (("ours", "hilstack"), ("MuJoCo", "mujoco")):
            arms.add(arm=name, plant=label, **tracking(name, engine, duration))
    rec.show(arms)
    rec.save()


if __name__ == "__main__":
    main()
