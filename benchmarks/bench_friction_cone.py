"""The friction cone in the whole-body QP: what a finer cone costs per tick and what it gives.

The controller (dynamics_cy.planning.whole_body) bounds a point foot's force by a pyramid of N faces
inscribed in the cone ‖f_t‖ ≤ μ f_n (``friction_facets``); the exact second-order cone needs a conic
solver. For N = 4 (the inner pyramid), 8 and 16, the controller's own tick (kernels, assembly,
elimination, DAQP hot-started) is timed on two runs of Go2 (4 point feet, μ = 0.6):

- sway: a swaying base and joints with a foot lifted for the middle third (the cones rarely active);
- lateral demand: standing, a sideways CoM acceleration of 1.5 μ g asked (every loaded cone active),
  and the lateral force the feet give, Σ f_y / (m g), the most the cone allows being μ.

The exact cone is the same QP with each point foot's pyramid replaced by (μ f_n, f_t) in the
second-order cone, solved by Clarabel (interior point: from scratch each tick, no warm start; the
time includes building its sparse matrices from the assembled QP). Every solution's
max ‖f_t‖ − μ f_n over the feet in contact (N) is reported: ≤ 0 means no foot is asked for more
than μ f_n.

    .venv/bin/python benchmarks/bench_friction_cone.py [--ticks 1000] [--json PATH]
"""
from __future__ import annotations

import gc
import time

import numpy as np
import record
import scipy.sparse as sp
from bench_wbc_solvers import states

from dynamics_cy.planning.legged_models import load_legged
from dynamics_cy.planning.whole_body import WholeBodyController

MU = 0.6
FACETS = (4, 8, 16)


class ExactCone:
    """The controller's assembled QP with each point foot's pyramid replaced by its second-order
    cone, for Clarabel: equalities (zero cone), the remaining finite bounds (nonnegative cone) and
    per foot in contact s = (μ f_n, f_x, f_y) ∈ SOC(3)."""

    def __init__(self, c: WholeBodyController):
        import clarabel
        self.clarabel, self.c = clarabel, c
        self.settings = clarabel.DefaultSettings()
        self.settings.verbose = False
        drop = set()
        for g in c.groups:
            if not g.flat:
                drop.update(range(g.ineq, g.ineq + c.facets))
        self.keep = np.array([i for i in range(c.n_in) if i not in drop], dtype=int)

    def solve(self) -> np.ndarray | None:
        c, cl = self.c, self.clarabel
        C, lo, hi = c.C[self.keep], c.l[self.keep], c.u[self.keep]
        up, down = hi < 1e29, lo > -1e29
        blocks, rhs = [c.A, C[up], -C[down]], [c.b, hi[up], -lo[down]]
        cones = [cl.ZeroConeT(c.n_eq), cl.NonnegativeConeT(int(up.sum() + down.sum()))]
        n_hat = c.R_WC[:, 2]
        for gi, g in enumerate(c.groups):
            if g.flat or not c.active[gi]:
                continue
            rows = np.zeros((3, c.n))
            rows[0, g.var:g.var + 3] = -c.mu * n_hat
            rows[1, g.var:g.var + 3] = -c.R_WC[:, 0]
            rows[2, g.var:g.var + 3] = -c.R_WC[:, 1]
            blocks.append(rows)
            rhs.append(np.zeros(3))
            cones.append(cl.SecondOrderConeT(3))
        solver = cl.DefaultSolver(sp.csc_matrix(np.triu(c.H)), c.g, sp.csc_matrix(np.vstack(blocks)),
                                  np.concatenate(rhs), cones, self.settings)
        sol = solver.solve()
        return np.array(sol.x) if str(sol.status) == "Solved" else None


def excess(c: WholeBodyController, x: np.ndarray) -> float:
    """max ‖f_t‖ − μ f_n over the point feet in contact for the solution x."""
    worst = -np.inf
    for gi, g in enumerate(c.groups):
        if c.active[gi] and not g.flat:
            f = c.R_WC.T @ x[g.var:g.var + 3]
            worst = max(worst, float(np.hypot(f[0], f[1]) - c.mu * f[2]))
    return worst


def run(plant, contacts, q0, facets, ticks, lateral: bool, exact: bool = False) -> dict:
    """Times `ticks` ticks; the worst friction excess and (lateral) the mean Σ f_y / (m g)."""
    nv = plant.num_velocities()
    c = WholeBodyController(plant, contacts, mu=MU, friction_facets=facets)
    c.hold(q0)
    weight = -plant.CalcTotalMass(plant.CreateDefaultContext()) * plant.gravity_field().gravity_vector()[2]
    if lateral:
        c.com_acceleration_ff = [0.0, 1.5 * MU * 9.81, 0.0]
        runs = ((q0, np.zeros(nv), False) for _ in range(ticks))
    else:
        runs = states(q0, nv, ticks)
    cone = ExactCone(c) if exact else None
    times, worst, lateral_share, solved = [], -np.inf, [], 0
    gc.disable()
    for q, v, lifted in runs:
        c.active[:] = True
        c.active[0] = not lifted
        t0 = time.perf_counter_ns()
        if cone is None:
            ok = c.solve(q, v)
            x = c.x
        else:
            c.setup(q, v)
            x = cone.solve()
            ok = x is not None
        times.append((time.perf_counter_ns() - t0) / 1e3)
        if ok:
            solved += 1
            worst = max(worst, excess(c, x))
            lateral_share.append(sum(x[g.var + 1] for g in c.groups) / weight)
    gc.enable()
    return {"p50": np.median(times), "p99": np.percentile(times, 99), "excess": worst, "solved": solved,
            "lateral": float(np.mean(lateral_share)) if lateral_share else None, "rows": c.n_in}


def main(argv=None):
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--ticks", type=int, default=1000, help="ticks per run (default 1000)")
    args = ap.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Friction cones in the whole-body QP",
                        peers=("daqp", "clarabel", "example-robot-data"))
    plant, contacts, q0 = load_legged("go2")
    columns = [record.Column("cone", "{cone}", align="left"), record.Column("rows", "{rows}"),
               record.Column("tick p50/p99 µs", "{p50:.0f} / {p99:.0f}"),
               record.Column("solved", "{solved}"), record.Column("max ‖f_t‖ − μ f_n (N)", "{excess:.1e}")]
    sway = rec.table(f"Go2, sway with a foot lifted; {args.ticks} ticks", columns)
    push = rec.table(f"Go2 standing, a sideways CoM acceleration of 1.5 μ g asked; {args.ticks} ticks",
                     columns + [record.Column("Σ f_y / m g (μ = 0.6 at most)", "{lateral:.3f}")])
    variants = [(f"inscribed pyramid, N = {n}" + (" (inner pyramid)" if n == 4 else ""), n, False) for n in FACETS]
    variants.append(("second-order cone, Clarabel", 4, True))
    for label, n, exact in variants:
        ticks = args.ticks if not exact else max(50, args.ticks // 5)
        for table, lateral in ((sway, False), (push, True)):
            row = run(plant, contacts, q0, n, ticks, lateral, exact)
            if exact:
                row["rows"] = "SOC"
            table.add(cone=label, **row)
        print(f"  {label}: {row['p50']:.0f} µs", flush=True)
    rec.show(sway)
    rec.show(push)
    rec.save()


if __name__ == "__main__":
    main()
