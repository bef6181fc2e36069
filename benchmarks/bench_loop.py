"""The HIL loop's tick and its real-time behaviour, next to peers, in one process.

1. Tick cost: decode the iiwa status → computed-torque controller (inverse dynamics) → saturate →
   encode → publish, over in-process LCM (memq://). Ours (hil.loop.ControlLoop.tick: also the
   safety checks, trajectory and timing) with the built-in law and with the same law written as a
   user writes one (a hil.Controller subclass in numpy on the kernels), next to the same tick built
   from lcm-gen's Python classes with Pinocchio and with pydrake; the laws' own update() time
   (the loop's controller_timing) beside. Then whole ControlLoop.update() calls (telemetry and trace too),
   without and with a ViewerBridge at 60 Hz of loop time, and with the collision guard off, the three
   loops ticking alternately in the same run: their means differ by the bridge's cost per tick, draws
   included, their medians by the guard's check.
2. Real time: the loop at 1 kHz against the simulated iiwa in its own process over UDP multicast
   (ttl=0) for --duration seconds, lateness percentiles and misses, beside a bare loop that only
   waits on the same clock (the machine's floor). With --viz, the viewer bridge publishes at 60 Hz.

    python benchmarks/bench_loop.py [--ticks 20000] [--duration 60] [--skip-realtime] [--json PATH]
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import lcm
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import record  # noqa: E402

from drivers.core.clock import RealTimeClock  # noqa: E402
from drivers.core.config import channels_for  # noqa: E402
from drivers.core.robot import load_robot  # noqa: E402
from drivers.run_config import load_config  # noqa: E402
from drivers.viz import ViewerBridge  # noqa: E402
from hil import Controller  # noqa: E402
from hil.loop import ControlLoop  # noqa: E402
from hil.telemetry import fault_count  # noqa: E402
from messages import lcmt_iiwa_command, lcmt_iiwa_status  # noqa: E402
from messages.channels import private_lcm_url  # noqa: E402
from messages.codec import StatusEncoder  # noqa: E402

CONFIG = REPO / "configs" / "demo.yaml"
KP, KD = 400.0, 40.0


def percentiles(us: np.ndarray) -> dict:
    p50, p99, p999 = np.percentile(us, [50, 99, 99.9])
    return {"p50": p50, "p99": p99, "p99.9": p999, "max": us.max()}


def status_stream(n_ticks: int):
    """Encoded status messages of a moving arm, as a driver would send them."""
    enc = StatusEncoder("iiwa", 7)
    rng = np.random.default_rng(0)
    out = []
    for k in range(n_ticks):
        q = 0.3 * np.sin(0.001 * k + np.arange(7))
        v = 0.3 * np.cos(0.001 * k + np.arange(7))
        enc.encode(k * 1000, position_measured=q, velocity_estimated=v, position_commanded=q,
                   torque_measured=rng.normal(size=7), torque_commanded=np.zeros(7), torque_external=np.zeros(7))
        out.append(enc.tobytes())
    return out


class UserComputedTorque(Controller):
    """computed_torque as a user writes it: τ = ID(q, v, a_d + Kp e + Kd ė) + d∘v, numpy with out=."""

    def on_configure(self):
        n = self.n
        self.kp, self.kd = np.full(n, KP), np.full(n, KD)
        self.acc, self.tmp = np.zeros(n), np.zeros(n)

    def update(self, state, command):
        np.subtract(state.q_d, state.q, out=self.acc)
        np.multiply(self.acc, self.kp, out=self.acc)
        np.subtract(state.v_d, state.v, out=self.tmp)
        np.multiply(self.tmp, self.kd, out=self.tmp)
        np.add(self.acc, self.tmp, out=self.acc)
        np.add(self.acc, state.a_d, out=self.acc)
        self.kernels.inverse_dynamics(state.q, state.v, self.acc, command.tau)
        np.multiply(state.v, self.neg_damping, out=self.tmp)
        np.subtract(command.tau, self.tmp, out=command.tau)


def bench_ours(statuses, controller=None) -> tuple[np.ndarray, np.ndarray]:
    """µs per tick (the loop's compute time) and per update() of the law (its controller_timing)."""
    cfg = load_config(CONFIG, {"viz": False})
    cfg.trajectory.type = "hold"
    lc = lcm.LCM("memq://")
    loop = ControlLoop(cfg, load_robot(cfg.robot), lc, mode="lockstep", trace_every=10**9,
                       controller=controller).configure()
    loop.activate()
    compute_ns, update_ns = np.zeros(len(statuses)), np.zeros(len(statuses))
    for i, data in enumerate(statuses):
        lc.publish("IIWA_STATUS", data)
        loop.update()
        compute_ns[i] = loop.recorder.last_compute_ns      # what the loop's own statistics record
        update_ns[i] = loop.guard.last_ns
    return compute_ns[100:] / 1e3, update_ns[100:] / 1e3


def bench_whole_ticks(statuses) -> tuple[np.ndarray, np.ndarray, np.ndarray, ViewerBridge]:
    """µs of each whole ControlLoop.update() call (the status published before the timer) for a loop
    without a ViewerBridge, the same with the collision guard off (safety.collision, on by default), and
    one with a ViewerBridge at the default 60 Hz, ticked alternately on the same statuses (each loop on its
    own memq:// LCM), and that bridge. The bridge runs on the lockstep clock (1 ms per tick), so it draws
    every 16-17 ticks, as at 1 kHz in real time."""
    loops = []
    for viz, guard in ((False, True), (False, False), (True, True)):
        cfg = load_config(CONFIG, {"viz": viz, "safety": {"collision": {"enabled": guard}}})
        cfg.trajectory.type = "hold"
        lc = lcm.LCM("memq://")
        robot = load_robot(cfg.robot)
        bridge = ViewerBridge(robot.plant, lc, channels_for(cfg), cfg.viz) if viz else None
        loop = ControlLoop(cfg, robot, lc, mode="lockstep", viz=bridge, trace_every=10**9).configure()
        loop.activate()
        loops.append((lc, loop))
    times = np.zeros((len(loops), len(statuses)), dtype=np.int64)
    for k, data in enumerate(statuses):
        for i, (lc, loop) in enumerate(loops):
            lc.publish("IIWA_STATUS", data)
            t0 = time.perf_counter_ns()
            loop.update()
            times[i, k] = time.perf_counter_ns() - t0
    return times[0, 100:] / 1e3, times[1, 100:] / 1e3, times[2, 100:] / 1e3, loops[2][1].viz


def bench_peer(statuses, inverse_dynamics) -> np.ndarray:
    """The same tick from lcm-gen classes and numpy around a peer's inverse dynamics."""
    lc = lcm.LCM("memq://")
    box = {}
    lc.subscribe("IIWA_STATUS", lambda ch, data: box.__setitem__("msg", lcmt_iiwa_status.decode(data)))
    q_d, limit = np.zeros(7), np.array([320, 320, 176, 176, 110, 40, 40.0])
    times = []
    for data in statuses:
        lc.publish("IIWA_STATUS", data)
        t0 = time.perf_counter_ns()
        lc.handle_timeout(0)
        msg = box["msg"]
        q, v = np.array(msg.joint_position_measured), np.array(msg.joint_velocity_estimated)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            continue
        a = KP * (q_d - q) - KD * v
        tau = np.clip(inverse_dynamics(q, v, a), -limit, limit)
        cmd = lcmt_iiwa_command()
        cmd.utime, cmd.num_joints, cmd.joint_position = msg.utime, 0, []
        cmd.num_torques, cmd.joint_torque = 7, tau.tolist()
        lc.publish("IIWA_COMMAND", cmd.encode())
        times.append(time.perf_counter_ns() - t0)
    return np.array(times[100:]) / 1e3


def pinocchio_id():
    try:
        import pinocchio as pin
    except ImportError:
        return None
    model = pin.buildModelFromUrdf(str(REPO / "configs" / "robots" / "iiwa14.urdf"))
    data = model.createData()
    return lambda q, v, a: pin.rnea(model, data, q, v, a)


def pydrake_id():
    try:
        from pydrake.multibody.parsing import Parser
        from pydrake.multibody.plant import MultibodyPlant
        from pydrake.multibody.tree import MultibodyForces
    except ImportError:
        return None
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(REPO / "configs" / "robots" / "iiwa14.urdf"))
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    forces = MultibodyForces(plant)

    def inverse_dynamics(q, v, a):
        plant.SetPositions(ctx, q)
        plant.SetVelocities(ctx, v)
        plant.CalcForceElementsContribution(ctx, forces)
        forces.mutable_generalized_forces()[:] = 0
        return plant.CalcInverseDynamics(ctx, a, forces)
    return inverse_dynamics


def tick_table(rec: record.Record, n_ticks: int) -> record.Table:
    statuses = status_stream(n_ticks)
    builtin, builtin_update = bench_ours(statuses)
    user, user_update = bench_ours(statuses, UserComputedTorque())
    rows = [("hil loop tick (dynamics_cy + messages.codec), built-in computed_torque", builtin),
            ("hil loop tick, the same law as a Python user's hil.Controller", user),
            ("  its update() alone: built-in computed_torque", builtin_update),
            ("  its update() alone: the user's law", user_update)]
    for name, make in (("lcm-gen classes + Pinocchio rnea", pinocchio_id), ("lcm-gen classes + pydrake",
                                                                              pydrake_id)):
        f = make()
        if f is not None:
            rows.append((name, bench_peer(statuses, f)))
    plain, unguarded, with_viz, bridge = bench_whole_ticks(statuses)
    rows += [("hil loop, whole update() call (+ telemetry, trace)", plain),
             ("  the same, collision guard off", unguarded),
             ("hil loop tick + ViewerBridge at 60 Hz (whole update() call, draws included)", with_viz)]
    base = np.median(rows[0][1])
    t = rec.table("Tick cost, iiwa (7 joints), in one process over memq:// LCM", [
        record.Column("tick (iiwa, 7 joints)", "{name}", align="left"),
        record.Column("p50 µs", "{p50:.2f}"), record.Column("p99 µs", "{p99:.2f}"),
        record.Column("p99.9 µs", "{p99_9:.2f}"), record.Column("mean µs", "{mean:.2f}"),
        record.Column("p50 ratio to ours", "{ratio:.1f}×")])
    for name, us in rows:
        p = percentiles(us)
        t.add(name=name, p50=p["p50"], p99=p["p99"], p99_9=p["p99.9"], mean=us.mean(), ratio=p["p50"] / base)
    t.notes.append(f"ViewerBridge: {bridge.draws} draws and {bridge.loads} loads in {len(statuses)} ticks; "
                   f"mean cost per tick {with_viz.mean() - plain.mean():+.2f} µs (the two whole-tick means); "
                   f"the collision guard's check {np.median(plain) - np.median(unguarded):+.2f} µs (p50s)")
    return t


def bare_loop(duration_s: float, period_ns: int, spin_ns: int) -> np.ndarray:
    clock = RealTimeClock(period_ns, spin_ns)
    clock.start()
    late = np.zeros(int(duration_s * 1e9 / period_ns), dtype=np.int64)
    for i in range(late.size):
        late[i] = clock.wait()[1]
    return late / 1e3


def realtime_table(rec: record.Record, duration_s: float, viz: bool) -> record.Table:
    url = private_lcm_url()
    cfg = load_config(CONFIG, {"lcm": {"url": url}, "viz": viz})
    sim = subprocess.Popen([sys.executable, "-m", "hil", "sim", str(CONFIG), "--lcm-url", url,
                            "--duration", str(duration_s + 15)], stdout=subprocess.DEVNULL)
    try:
        lc = lcm.LCM(url)
        viz_bridge = None
        if viz:
            from drivers.viz import ViewerBridge
            robot = load_robot(cfg.robot)
            viz_bridge = ViewerBridge(robot.plant, lc)
        else:
            robot = load_robot(cfg.robot)
        loop = ControlLoop(cfg, robot, lc, mode="realtime", viz=viz_bridge, trace_every=100)
        s = loop.run(duration_s)
    finally:
        sim.terminate()
        sim.wait(timeout=10)
    bare = bare_loop(min(duration_s, 20.0), loop.period_ns, int(cfg.loop.spin_us * 1e3))
    budget = cfg.loop.deadline_budget_us
    stats = loop.recorder
    k = stats.ticks
    t = rec.table(f"Real time: 1 kHz for {duration_s:g} s", [
        record.Column("1 kHz real time", "{name}", align="left"), record.Column("ticks", "{ticks:,}"),
        record.Column("lateness p50 µs", "{p50:.1f}"), record.Column("p99", "{p99:.1f}"),
        record.Column("p99.9", "{p99_9:.1f}"), record.Column("max", "{max:,.0f}"),
        record.Column(f"misses (> {budget:g} µs)", "{misses:,}"), record.Column("within budget", "{within:.3f}%")])
    p = s["lateness_us"]          # the loop's streaming histogram (bins ≤ 1/128 wide)
    t.add(name=f"hil loop vs `hil sim` over UDP{' + viz 60 Hz' if viz else ''}", ticks=k, p50=p["p50"],
          p99=p["p99"], p99_9=p["p99.9"], max=p["max"], misses=stats.deadline_misses,
          within=100.0 * (1 - stats.deadline_misses / max(1, k)))
    p = percentiles(bare)
    t.add(name="bare loop that only waits", ticks=bare.size, p50=p["p50"], p99=p["p99"], p99_9=p["p99.9"],
          max=p["max"], misses=int(np.sum(bare > budget)), within=float(np.mean(bare <= budget)) * 100)
    c = s["compute_us"]
    t.notes.append(f"loop compute time µs: p50 {c['p50']:.1f}, p99 {c['p99']:.1f}, p99.9 {c['p99.9']:.1f}; "
                   f"achieved rate {s['rate_hz']['achieved']} Hz; final state {s['final_state']}; "
                   f"faults {fault_count(s)}; tracking error max {max(s['tracking_error_rad']['max']):.2e} rad")
    return t


def main(argv=None) -> int:
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--ticks", type=int, default=20000, help="ticks for the tick-cost table")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of the real-time run")
    ap.add_argument("--viz", action="store_true", help="publish viewer messages at 60 Hz during the run")
    ap.add_argument("--skip-realtime", action="store_true", help="only the tick-cost table")
    args = ap.parse_args(argv)
    logging.getLogger("hil").setLevel(logging.ERROR)       # the summary counts the faults
    rec = record.Record(__file__, __doc__, args, "The HIL loop", peers=("pinocchio", "pydrake", "lcm"))
    rec.show(tick_table(rec, args.ticks))
    if not args.skip_realtime:
        rec.show(realtime_table(rec, args.duration, args.viz))
    rec.save()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
