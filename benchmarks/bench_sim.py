"""Speed of the simulated plant on the iiwa14 (1 ms steps), next to pydrake's simulator on the same URDF.

    python benchmarks/bench_sim.py [--seconds 1.0] [--repeats 15] [--json PATH]

Prints, per row, the median over `repeats` runs of `seconds` of simulated time, each from the same
start state (resetting it is timed too): simulated seconds per wall second (the real-time factor)
and µs per 1 ms step (time.perf_counter_ns). A row slower than real time runs shorter and fewer runs
(at most about 2 s of wall time per run, 3 runs); the last column says how much. Rows:

- physics only (drivers.sim.Physics.step), semi-implicit Euler and RK4: a constant torque (gravity
  compensation at the start pose) and 0.5 rad/s on every joint at the start, so the arm keeps moving
  (an arm at rest would let an error-controlled integrator take arbitrarily long steps);
- with ground contact: the arm starts with its wrist on a table 37 mm above its base and falls onto it
  under zero torque (1–3 links in contact, 2 contact points typically);
- lockstep over memq:// LCM, the physics-only Euler row's motion: a pre-encoded command (gravity
  compensation at the start pose) published, the simulated robot decodes it, steps, encodes and
  publishes the status, the status decoded (messages.codec on both sides), the LCM queue drained;
- pydrake: MultibodyPlant of the same URDF, discrete (time_step 1 ms, Drake's default discrete
  solver) and continuous (the Simulator's default integrator and accuracy), the same start and
  constant actuation; with contact, a SceneGraph and a half space at the same height (Drake's
  default contact model), the robot's self-collisions filtered.
"""
import statistics
import time
from pathlib import Path

import numpy as np
import record

from drivers.sim import Physics, SimulatedRobot, load_sim_config
from dynamics_cy import MultibodyPlant, Parser

URDF = Path(__file__).resolve().parents[1] / "configs" / "robots" / "iiwa14.urdf"
Q_FREE = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
V_FREE = [0.5] * 7
Q_GROUND = [0.0, 1.2, 0.0, -1.6, 0.0, 1.4, 0.0]
GROUND = 0.037
H = 0.001


def plant():
    p = MultibodyPlant(0.0)
    Parser(p).AddModels(str(URDF))
    p.Finalize()
    return p


def median_rate(run, seconds, repeats):
    """Median of simulated seconds per wall second over `repeats` calls of run(seconds)."""
    rates = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        run(seconds)
        rates.append(seconds / ((time.perf_counter_ns() - start) * 1e-9))
    return statistics.median(rates)


def ours(integrator, contact):
    p = plant()
    sim = {"integrator": integrator, "initial_positions": Q_GROUND if contact else Q_FREE}
    if contact:
        sim["contact"] = {"enabled": True, "ground": {"height": GROUND}}
    else:
        sim["initial_velocities"] = V_FREE
    physics = Physics(p, load_sim_config(sim))
    q0, v0, u = physics.q.copy(), physics.v.copy(), np.zeros(7)
    if not contact:
        p.kernels().gravity(physics.q, u)
        u *= -1.0

    def run(seconds):
        physics.set_state(q0, v0)
        for _ in range(round(seconds / H)):
            physics.step(u)
    return run


def lockstep():
    import lcm

    from messages.codec import CommandEncoder, StatusDecoder
    lc = lcm.LCM("memq://")
    p = plant()
    robot = SimulatedRobot(p, load_sim_config({"initial_positions": Q_FREE, "initial_velocities": V_FREE}), "iiwa",
                           lcm=lc)
    status = StatusDecoder("iiwa", 7)
    lc.subscribe("IIWA_STATUS", lambda channel, data: status.decode(data))
    tau = np.zeros(7)
    p.kernels().gravity(robot.physics.q, tau)
    command = CommandEncoder("iiwa", 7, fields=("torque",)).encode_or_raise(0, torque=-tau).tobytes()
    robot.publish_status()
    q0, v0 = robot.physics.q.copy(), robot.physics.v.copy()

    def run(seconds):
        robot.physics.set_state(q0, v0)
        for _ in range(round(seconds / H)):
            lc.publish("IIWA_COMMAND", command)
            while lc.handle_timeout(0) > 0:
                pass
    return run


def drake(discrete, contact):
    """pydrake's Simulator: a bare MultibodyPlant without contact; with a SceneGraph, the half space and
    the robot's self-collisions filtered (as drivers.sim checks only robot–ground) with contact."""
    from pydrake.all import (
        AddMultibodyPlantSceneGraph,
        CollisionFilterDeclaration,
        CoulombFriction,
        DiagramBuilder,
        GeometrySet,
        HalfSpace,
        RigidTransform,
        Simulator,
    )
    from pydrake.all import MultibodyPlant as DPlant
    from pydrake.all import Parser as DParser
    if contact:
        builder = DiagramBuilder()
        dplant, scene_graph = AddMultibodyPlantSceneGraph(builder, H if discrete else 0.0)
    else:
        dplant = DPlant(H if discrete else 0.0)
    robot, = DParser(dplant).AddModels(str(URDF))
    if contact:
        dplant.RegisterCollisionGeometry(dplant.world_body(), RigidTransform([0, 0, GROUND]), HalfSpace(), "ground",
                                         CoulombFriction(1.0, 1.0))
    dplant.Finalize()
    if contact:
        links = GeometrySet([dplant.GetBodyFrameIdOrThrow(b) for b in dplant.GetBodyIndices(robot)])
        scene_graph.collision_filter_manager().Apply(CollisionFilterDeclaration().ExcludeWithin(links))
        system = builder.Build()
    else:
        system = dplant
    context = system.CreateDefaultContext()
    plant_context = dplant.GetMyMutableContextFromRoot(context)
    q0, v0 = (Q_GROUND, np.zeros(7)) if contact else (Q_FREE, V_FREE)
    dplant.SetPositions(plant_context, q0)
    u = np.zeros(7) if contact else -dplant.CalcGravityGeneralizedForces(plant_context)
    dplant.get_actuation_input_port().FixValue(plant_context, u)
    simulator = Simulator(system, context)

    def run(seconds):
        context.SetTime(0.0)
        dplant.SetPositions(plant_context, q0)
        dplant.SetVelocities(plant_context, v0)
        simulator.Initialize()
        simulator.AdvanceTo(seconds)
    return run


def main(argv=None):
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--seconds", type=float, default=1.0, help="simulated seconds per run (default 1)")
    ap.add_argument("--repeats", type=int, default=15, help="runs per row, the median reported (default 15)")
    args = ap.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Simulated plant", peers=("pydrake",))
    rows = [("drivers.sim physics, semi-implicit Euler", ours("semi_implicit_euler", False)),
            ("drivers.sim physics, RK4", ours("rk4", False)),
            ("drivers.sim physics + ground contact, semi-implicit Euler", ours("semi_implicit_euler", True)),
            ("drivers.sim physics + ground contact, RK4", ours("rk4", True)),
            ("drivers.sim lockstep over memq LCM (Euler)", lockstep())]
    notes = []
    try:
        import pydrake.all  # noqa: F401  (the rows below need it)
        rows += [("pydrake discrete 1 ms", drake(True, False)),
                 ("pydrake continuous (default integrator)", drake(False, False)),
                 ("pydrake discrete 1 ms + ground contact", drake(True, True)),
                 ("pydrake continuous + ground contact", drake(False, True))]
    except ImportError:
        notes.append("pydrake is not installed: its rows are left out")
    table = rec.table(f"iiwa14, 1 ms steps, median of {args.repeats} runs of {args.seconds:g} s simulated", [
        record.Column("simulator", "{name}", align="left"), record.Column("sim s / wall s", "{rate:.1f}"),
        record.Column("µs per 1 ms step", "{us_per_step:.1f}"),
        record.Column("runs", "{repeats} × {seconds:g} s")], notes)
    for name, run in rows:
        start = time.perf_counter_ns()
        run(0.05)                                            # warm up, and a first estimate
        estimate = 0.05 / ((time.perf_counter_ns() - start) * 1e-9)
        seconds, repeats = args.seconds, args.repeats
        if estimate * 2.0 < seconds:
            seconds, repeats = max(0.01, round(estimate * 2.0, 2)), 3
        rate = median_rate(run, seconds, repeats)
        table.add(name=name, rate=rate, us_per_step=1e3 / rate, repeats=repeats, seconds=seconds)
        print(f"  {name}: {rate:.1f} sim s / wall s", flush=True)
    rec.show(table)
    rec.save()


if __name__ == "__main__":
    main()
