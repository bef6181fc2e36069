"""Which QP solver for the whole-body controller: time and robustness of proxsuite (dense ProxQP,
warm and cold), DAQP, OSQP and Clarabel on the controller's own QPs, for the quadruped (Go2, 18
velocities, 4 point feet) and the humanoid (G1, 35 velocities, 2 soles: a wrench each), along a
swaying trajectory with a contact lifted for part of it.

Per solver: median and p99 solve time (µs), the number of QPs it solved, the worst equality residual
|A x − b|∞ (the equations of motion and the contacts), the worst inequality violation and the worst
distance to the reference solution (DAQP's one-shot solve: an active-set method's solution is
exact up to round-off).

    .venv/bin/python benchmarks/bench_wbc_solvers.py [--ticks 300] [--json PATH]
"""
from __future__ import annotations

import time

import numpy as np
import record
import scipy.sparse as sp

from dynamics_cy.planning.legged_models import load_legged
from dynamics_cy.planning.whole_body import WholeBodyController

BIG = 1e19


def states(q0, nv, ticks, dt=1e-3):
    """A sway of the base and joints (smooth q(t), v(t)), a contact lifted in the middle third."""
    rng = np.random.default_rng(0)
    amp, freq, phase = 0.05 * rng.random(nv), 0.5 + rng.random(nv), 2 * np.pi * rng.random(nv)
    for i in range(ticks):
        t = i * dt * 20
        dq = amp * np.sin(freq * t + phase)
        v = amp * freq * np.cos(freq * t + phase) * 20 * dt * 50
        q = q0.copy()
        q[4:7] += dq[3:6]
        q[7:] += dq[6:]
        w = dq[:3]
        q[:4] = [1.0, *(0.5 * w)]
        q[:4] /= np.linalg.norm(q[:4])
        yield q, v, ticks // 3 <= i < 2 * ticks // 3


class Proxsuite:
    def __init__(self, c, warm, eps=1e-10):
        import proxsuite  # the solvers are imported where used: --help works without them
        self.proxsuite = proxsuite
        self.c, self.warm, self.eps, self.qp = c, warm, eps, None

    def solve(self):
        c, proxsuite = self.c, self.proxsuite
        if self.qp is None or not self.warm:
            self.qp = proxsuite.proxqp.dense.QP(c.n, c.n_eq, c.n_in)
            self.qp.settings.eps_abs, self.qp.settings.eps_rel, self.qp.settings.verbose = self.eps, 0.0, False
            self.qp.init(c.H, c.g, c.A, c.b, c.C, c.l, c.u)
            self.qp.solve()
            if self.warm:
                self.qp.settings.initial_guess = proxsuite.proxqp.InitialGuess.WARM_START_WITH_PREVIOUS_RESULT
        else:
            self.qp.update(c.H, c.g, c.A, c.b, c.C, c.l, c.u)
            self.qp.solve()
        return self.qp.results.x, self.qp.results.info.status == proxsuite.proxqp.QPSolverOutput.PROXQP_SOLVED


class Daqp:
    def __init__(self, c, model=False):
        import daqp
        self.daqp, self.c, self.model = daqp, c, (daqp.Model() if model else None)
        self.ready = False
        self.AA = np.zeros((c.n_eq + c.n_in, c.n))
        self.bu, self.bl = np.zeros(c.n_eq + c.n_in), np.zeros(c.n_eq + c.n_in)
        self.sense = np.zeros(c.n_eq + c.n_in, dtype=np.int32)
        self.sense[:c.n_eq] = 5                                 # active + immutable: an equality

    def solve(self):
        c, ne = self.c, self.c.n_eq
        self.AA[:ne], self.AA[ne:] = c.A, c.C
        self.bu[:ne], self.bl[:ne] = c.b, c.b
        self.bu[ne:], self.bl[ne:] = np.minimum(c.u, 1e30), np.maximum(c.l, -1e30)
        if self.model is None:
            x, _, flag, _ = self.daqp.solve(c.H, c.g, self.AA, self.bu, self.bl, self.sense, primal_tol=1e-10)
            return np.asarray(x), flag == 1
        if not self.ready:
            self.model.setup(c.H, c.g, self.AA, self.bu, self.bl, self.sense)
            self.ready = True
        else:
            self.model.update(H=c.H, f=c.g, A=self.AA, bupper=self.bu, blower=self.bl)
        x, _, flag, _ = self.model.solve()
        return np.asarray(x), flag == 1


class DaqpC:
    """The controller's own solve: the equalities eliminated (dynamics_cy.planning._wbc_reduce), then DAQP's C
    functions on the least-distance problem (dynamics_cy.planning._wbc_qp.DaqpQP), then x expanded."""

    def __init__(self, c):
        self.c = c

    def solve(self):
        if self.c._red.reduce() != 0:
            return None, False
        flag = self.c.qp.solve()
        self.c._red.expand()
        return self.c.x.copy(), flag == 1


class Osqp:
    def __init__(self, c):
        import osqp
        self.c, self.osqp = c, osqp
        self.P = sp.csc_matrix(np.triu(np.ones((c.n, c.n))))
        self.Am = sp.csc_matrix(np.ones((c.n_eq + c.n_in, c.n)))
        self.solver = None

    def solve(self):
        c = self.c
        Pv = np.triu(c.H).T[np.triu(np.ones((c.n, c.n))).T > 0]          # column-major upper triangle
        Av = np.vstack([c.A, c.C]).T.reshape(-1)
        lo, hi = np.r_[c.b, np.maximum(c.l, -np.inf)], np.r_[c.b, c.u]
        lo[lo <= -BIG], hi[hi >= BIG] = -np.inf, np.inf
        if self.solver is None:
            self.P.data[:], self.Am.data[:] = Pv, Av
            self.solver = self.osqp.OSQP()
            self.solver.setup(self.P, c.g, self.Am, lo, hi, eps_abs=1e-9, eps_rel=0.0, verbose=False,
                              max_iter=20000, polishing=True)
        else:
            self.solver.update(Px=Pv, Ax=Av, q=c.g, l=lo, u=hi)
        r = self.solver.solve()
        return r.x, r.info.status_val == 1


class Clarabel:
    def __init__(self, c):
        import clarabel
        self.c, self.cl = c, clarabel
        self.settings = clarabel.DefaultSettings()
        self.settings.verbose = False
        self.settings.tol_gap_abs = self.settings.tol_feas = 1e-10

    def solve(self):
        c, cl = self.c, self.cl
        up, lo = c.u < BIG, c.l > -BIG
        A = np.vstack([c.A, c.C[up], -c.C[lo]])
        b = np.r_[c.b, c.u[up], -c.l[lo]]
        s = cl.DefaultSolver(sp.csc_matrix(np.triu(c.H)), c.g, sp.csc_matrix(A), b,
                             [cl.ZeroConeT(c.n_eq), cl.NonnegativeConeT(int(up.sum() + lo.sum()))], self.settings)
        r = s.solve()
        return np.array(r.x), str(r.status) == "Solved"


def measure(rec, name, ticks):
    plant, contacts, q0 = load_legged(name)
    c = WholeBodyController(plant, contacts)
    ref = Daqp(c)
    solvers = {"proxsuite (warm)": Proxsuite(c, True), "proxsuite (cold)": Proxsuite(c, False),
               "daqp": Daqp(c), "daqp (Model, hot)": Daqp(c, model=True),
               "ours: reduced, daqp C functions (hot)": DaqpC(c),
               "osqp (warm)": Osqp(c),
               "clarabel": Clarabel(c)}
    stats = {k: dict(t=[], ok=0, eq=0.0, ineq=0.0, dx=0.0) for k in solvers}
    for q, v, lifted in states(q0, plant.num_velocities(), ticks):
        c.active[:] = True
        if lifted:
            c.active[0] = False
        c.setup(q, v)
        x_ref, _ = ref.solve()
        for k, s in solvers.items():
            t0 = time.perf_counter_ns()
            x, ok = s.solve()
            stats[k]["t"].append((time.perf_counter_ns() - t0) / 1e3)
            st = stats[k]
            if ok and x is not None and np.all(np.isfinite(x)):
                st["ok"] += 1
                st["eq"] = max(st["eq"], float(np.abs(c.A @ x - c.b).max()))
                Cx = c.C @ x
                st["ineq"] = max(st["ineq"], float(max(np.max(c.l - Cx), np.max(Cx - c.u), 0.0)))
                st["dx"] = max(st["dx"], float(np.abs(x - x_ref).max()))
    table = rec.table(f"{name}: {plant.num_velocities()} velocities, {len(contacts)} contact points; QP {c.n} "
                      f"variables, {c.n_eq} equalities, {c.n_in} inequalities; {ticks} ticks", [
                          record.Column("solver", "{solver}", align="left"), record.Column("p50 µs", "{p50:.0f}"),
                          record.Column("p99 µs", "{p99:.0f}"), record.Column("solved", "{solved}/{ticks}"),
                          record.Column("max abs(Ax-b)", "{eq:.1e}"), record.Column("max violation", "{ineq:.1e}"),
                          record.Column("max abs(x - ref)", "{dx:.1e}")])
    for k, st in stats.items():
        t = np.array(st["t"])
        table.add(solver=k, p50=np.median(t), p99=np.percentile(t, 99), solved=st["ok"], ticks=ticks, eq=st["eq"],
                  ineq=st["ineq"], dx=st["dx"])
    rec.show(table)


def main(argv=None):
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--ticks", type=int, default=300, help="QPs per robot along the sway (default 300)")
    args = ap.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Whole-body QP solvers",
                        peers=("proxsuite", "daqp", "osqp", "clarabel", "scipy"))
    for name in ("go2", "g1"):
        measure(rec, name, args.ticks)
    rec.save()


if __name__ == "__main__":
    main()
