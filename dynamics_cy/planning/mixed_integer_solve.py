"""The mixed-integer path of Solve: programs with binary variables go to a branch-and-bound solver.

What it accepts: binary and continuous variables; bounding-box, linear and linear-equality constraints;
Lorentz-cone and rotated-Lorentz-cone constraints; linear and convex quadratic costs. Anything else (a
generic nonlinear constraint or cost, a non-convex quadratic cost) raises MixedIntegerSolveError before
solving: Solve never hands such a program to a solver that would answer something else.

Which solver (SolverId name):
    "HiGHS"  mixed-integer linear programs (no cones, linear costs), through scipy.optimize.milp.
    "SCIP"   mixed-integer second-order-cone and convex-quadratic programs, through PySCIPOpt
             (`pip install hilstack[mip]`; without it such programs raise MixedIntegerSolveError
             naming the package). Cones are given to SCIP as ‖u‖² ≤ t², t ≥ 0 on auxiliary variables,
             a quadratic cost as its epigraph.

Every returned solution is checked against the program itself (integrality of the binaries and every
constraint's residual, cones as ‖z₁…‖ − z₀) to 10 × feasibility_tolerance; a solution that fails the
check is reported as kSolverSpecificError, never as success.

`solver_options` (a dict) for this path:
    solver                "auto" (default: HiGHS when it can, else SCIP), "HiGHS" or "SCIP"
    time_limit            seconds (default: none)
    mip_rel_gap           relative optimality gap at which branch and bound stops (default 1e-6)
    feasibility_tolerance SCIP's feasibility tolerance and the scale of the check below (default 1e-6;
                          HiGHS keeps its own, 1e-7)
    verbose               print the solver's log (default False)
A time limit reached with a feasible incumbent gives kIterationLimit and that incumbent.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, sparse

from dynamics_cy.errors import HilstackError

from .program import (
    BoundingBoxConstraint,
    LinearConstraint,
    LinearCost,
    LorentzConeConstraint,
    MathematicalProgram,
    QuadraticCost,
    RotatedLorentzConeConstraint,
    Variable,
)
from .program_result import MathematicalProgramResult, SolutionResult

_DEFAULTS = {"solver": "auto", "time_limit": None, "mip_rel_gap": 1e-6, "feasibility_tolerance": 1e-6,
             "verbose": False}
_CHECK_FACTOR = 10.0


class MixedIntegerSolveError(HilstackError, ValueError):
    """A program with binary variables that the mixed-integer path cannot solve, or a missing solver."""


class _Model:
    """The program as arrays: bounds, binaries, stacked linear rows, cones (as standard second-order
    cones ‖A_u x + b_u‖ ≤ a_t x + b_t) and the cost cᵀx + ½xᵀQx + c₀."""

    def __init__(self, prog: MathematicalProgram):
        n = prog.num_vars()
        self.n = n
        self.binary = np.array([v.get_type() == Variable.Type.BINARY for v in prog.decision_variables()], dtype=bool)
        other = [v for v in prog.decision_variables() if v.get_type() not in (Variable.Type.BINARY,
                                                                               Variable.Type.CONTINUOUS)]
        if other:
            raise MixedIntegerSolveError(f"Solve: variables of type {other[0].get_type().name} are not supported "
                                         f"({other[0]!r}); use binary or continuous variables")
        self.lo, self.hi = np.full(n, -np.inf), np.full(n, np.inf)
        self.lo[self.binary], self.hi[self.binary] = 0.0, 1.0
        rows, lbs, ubs, self.cones = [], [], [], []
        for b in prog.GetAllConstraints():
            e, idx = b.evaluator(), prog.FindDecisionVariableIndices(b.variables())
            if isinstance(e, BoundingBoxConstraint):
                np.maximum.at(self.lo, idx, e.lower_bound())
                np.minimum.at(self.hi, idx, e.upper_bound())
            elif isinstance(e, LinearConstraint):
                rows.append(self._scatter(e.GetDenseA(), idx))
                lbs.append(e.lower_bound())
                ubs.append(e.upper_bound())
            elif type(e) in (LorentzConeConstraint, RotatedLorentzConeConstraint):
                self.cones.append(self._standard_cone(e, idx))
            else:
                raise MixedIntegerSolveError(
                    f"Solve: the program has binary variables and a {type(e).__name__} "
                    f"('{e.get_description()}'); the mixed-integer solvers take linear, Lorentz-cone and "
                    "rotated-Lorentz-cone constraints only")
        if np.any(self.lo > self.hi):
            i = int(np.flatnonzero(self.lo > self.hi)[0])
            raise MixedIntegerSolveError(f"Solve: the bounds of {prog.decision_variable(i)!r} are inconsistent "
                                         f"({self.lo[i]} > {self.hi[i]})")
        self.A = sparse.vstack(rows, format="csr") if rows else sparse.csr_matrix((0, n))
        self.lb = np.concatenate(lbs) if lbs else np.zeros(0)
        self.ub = np.concatenate(ubs) if ubs else np.zeros(0)
        self.c, self.Q, self.c0 = np.zeros(n), np.zeros((n, n)), 0.0
        for b in prog.GetAllCosts():
            e, idx = b.evaluator(), prog.FindDecisionVariableIndices(b.variables())
            if isinstance(e, LinearCost):
                np.add.at(self.c, idx, e.a())
                self.c0 += e.b()
            elif isinstance(e, QuadraticCost):
                np.add.at(self.c, idx, e.b())
                self.Q[np.ix_(idx, idx)] += e.Q()
                self.c0 += e.c()
            else:
                raise MixedIntegerSolveError(
                    f"Solve: the program has binary variables and a {type(e).__name__}; the mixed-integer "
                    "solvers take linear and convex quadratic costs only")
        self.quadratic = bool(np.any(self.Q))
        if self.quadratic and np.linalg.eigvalsh(self.Q).min() < -1e-9 * max(1.0, np.abs(self.Q).max()):
            raise MixedIntegerSolveError("Solve: the quadratic cost is not convex (its Hessian has a negative "
                                         "eigenvalue); the mixed-integer solvers need a convex cost")

    def _scatter(self, A_local, idx):
        A = sparse.coo_matrix(A_local)
        return sparse.csr_matrix((A.data, (A.row, idx[A.col])), shape=(A_local.shape[0], self.n))

    def _standard_cone(self, e, idx):
        """(A_t, b_t, A_u, b_u): ‖A_u x + b_u‖ ≤ A_t x + b_t. The rotated cone z₀z₁ ≥ ‖z₂…‖², z₀, z₁ ≥ 0
        is ‖(2z₂…, z₀ − z₁)‖ ≤ z₀ + z₁."""
        A, b = np.zeros((e.A().shape[0], self.n)), e.b()
        np.add.at(A.T, idx, e.A().T)
        if isinstance(e, LorentzConeConstraint):
            return A[0], b[0], A[1:], b[1:]
        return (A[0] + A[1], b[0] + b[1], np.vstack([2 * A[2:], A[0] - A[1]]), np.r_[2 * b[2:], b[0] - b[1]])

    def cost(self, x) -> float:
        return float(self.c @ x + 0.5 * x @ self.Q @ x + self.c0)

    def max_violation(self, x) -> float:
        """The largest residual: bounds, linear rows, cones (‖u‖ − t) and the binaries' integrality."""
        r = [np.maximum(self.lo - x, 0.0), np.maximum(x - self.hi, 0.0),
             np.abs(x[self.binary] - np.round(x[self.binary]))]
        if self.A.shape[0]:
            y = self.A @ x
            r += [np.maximum(self.lb - y, 0.0), np.maximum(y - self.ub, 0.0)]
        r += [np.array([max(np.linalg.norm(Au @ x + bu) - (at @ x + bt), 0.0)]) for at, bt, Au, bu in self.cones]
        return float(max((a.max(initial=0.0) for a in r), default=0.0))


def _solve_highs(model: _Model, opts: dict):
    options = {"disp": bool(opts["verbose"]), "mip_rel_gap": float(opts["mip_rel_gap"]), "presolve": True}
    if opts["time_limit"] is not None:
        options["time_limit"] = float(opts["time_limit"])
    cons = [optimize.LinearConstraint(model.A, model.lb, model.ub)] if model.A.shape[0] else []
    res = optimize.milp(model.c, integrality=model.binary.astype(int), bounds=optimize.Bounds(model.lo, model.hi),
                        constraints=cons, options=options)
    status = {0: SolutionResult.kSolutionFound, 1: SolutionResult.kIterationLimit,
              2: SolutionResult.kInfeasibleConstraints, 3: SolutionResult.kUnbounded}.get(
                  res.status, SolutionResult.kSolverSpecificError)
    return (None if res.x is None else np.asarray(res.x, dtype=float)), status, str(res.message)


def _solve_scip(model: _Model, opts: dict, x0: np.ndarray):
    try:
        import pyscipopt  # optional: the [mip] extra
    except ImportError:
        raise MixedIntegerSolveError(
            "Solve: this program has binary variables and cones or a quadratic cost, which need SCIP; install "
            "PySCIPOpt (pip install 'hilstack[mip]'), or make the program linear (e.g. "
            "GlobalInverseKinematics.Options.linear_constraint_only = True and no posture cost)") from None
    m = pyscipopt.Model()
    if not opts["verbose"]:
        m.hideOutput()
    m.setParam("limits/gap", float(opts["mip_rel_gap"]))
    m.setParam("numerics/feastol", float(opts["feasibility_tolerance"]))
    if opts["time_limit"] is not None:
        m.setParam("limits/time", float(opts["time_limit"]))
    fin = lambda v: v if math.isfinite(v) else None
    x = [m.addVar(f"x{i}", vtype="B" if model.binary[i] else "C", lb=fin(model.lo[i]), ub=fin(model.hi[i]))
         for i in range(model.n)]

    def affine(a, b=0.0):
        nz = np.flatnonzero(a)
        return pyscipopt.quicksum(float(a[k]) * x[k] for k in nz) + float(b)

    A = model.A.tocsr()
    for r in range(A.shape[0]):
        cols, vals = A.indices[A.indptr[r]:A.indptr[r + 1]], A.data[A.indptr[r]:A.indptr[r + 1]]
        expr = pyscipopt.quicksum(float(v) * x[k] for k, v in zip(cols, vals))
        lo, hi = model.lb[r], model.ub[r]
        if lo == hi:
            m.addCons(expr == float(lo))
        else:
            if math.isfinite(lo):
                m.addCons(expr >= float(lo))
            if math.isfinite(hi):
                m.addCons(expr <= float(hi))
    for at, bt, Au, bu in model.cones:
        t = m.addVar(vtype="C", lb=0.0)
        m.addCons(t == affine(at, bt))
        u = [m.addVar(vtype="C", lb=None) for _ in range(Au.shape[0])]
        for ui, a, b in zip(u, Au, bu):
            m.addCons(ui == affine(a, b))
        m.addCons(pyscipopt.quicksum(ui * ui for ui in u) <= t * t)
    objective = affine(model.c)
    if model.quadratic:
        s = m.addVar("cost_epigraph", vtype="C", lb=None)
        rows, cols = np.nonzero(model.Q)
        m.addCons(pyscipopt.quicksum(0.5 * float(model.Q[i, j]) * x[i] * x[j] for i, j in zip(rows, cols)) <= s)
        objective = objective + s
    m.setObjective(objective, "minimize")
    if np.all(np.isfinite(x0)):
        sol = m.createSol()
        for xi, v in zip(x, x0):
            m.setSolVal(sol, xi, float(v))
        m.addSol(sol, free=True)    # a start that SCIP finds infeasible is just dropped
    m.optimize()
    status = m.getStatus()
    have = m.getNSols() > 0
    xs = np.array([m.getVal(xi) for xi in x]) if have else None
    result = {"optimal": SolutionResult.kSolutionFound, "infeasible": SolutionResult.kInfeasibleConstraints,
              "unbounded": SolutionResult.kUnbounded, "inforunbd": SolutionResult.kInfeasibleOrUnbounded,
              "gaplimit": SolutionResult.kSolutionFound}.get(status)
    if result is None:
        result = SolutionResult.kIterationLimit if status.endswith("limit") else SolutionResult.kSolverSpecificError
    return xs, result, status


def SolveMixedInteger(prog: MathematicalProgram, initial_guess=None, solver_options: dict | None = None
                      ) -> MathematicalProgramResult:
    """Solves prog (with binary variables) to global optimality; see the module docstring."""
    unknown = set(solver_options or {}) - set(_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown solver_options {sorted(unknown)} for a mixed-integer program; valid keys are "
                         f"{sorted(_DEFAULTS)}")
    opts = {**_DEFAULTS, **(solver_options or {})}
    model = _Model(prog)
    x0 = prog.initial_guess() if initial_guess is None else np.asarray(initial_guess, dtype=float).reshape(-1)
    if x0.shape[0] != model.n:
        raise ValueError(f"initial_guess has {x0.shape[0]} elements; the program has {model.n} variables")
    conic = bool(model.cones) or model.quadratic
    solver = opts["solver"]
    if solver == "auto":
        solver = "SCIP" if conic else "HiGHS"
    if solver == "HiGHS":
        if conic:
            raise MixedIntegerSolveError("Solve: HiGHS solves mixed-integer linear programs only; this one has "
                                         "cones or a quadratic cost (use solver 'SCIP' or 'auto')")
        x, result, message = _solve_highs(model, opts)
    elif solver == "SCIP":
        x, result, message = _solve_scip(model, opts, x0)
    else:
        raise ValueError(f"solver_options['solver'] must be 'auto', 'HiGHS' or 'SCIP', got {solver!r}")
    tol = float(opts["feasibility_tolerance"])
    details = {"status": message, "num_binary": int(model.binary.sum()), "num_cones": len(model.cones)}
    if x is None:
        x = np.full(model.n, np.nan)
        if result in (SolutionResult.kSolutionFound, SolutionResult.kIterationLimit):
            result = SolutionResult.kSolverSpecificError
        details["max_violation"] = np.nan
        return MathematicalProgramResult(prog, x, np.inf, result, solver, details, tol)
    details["max_violation"] = violation = model.max_violation(x)
    if violation > _CHECK_FACTOR * tol and result in (SolutionResult.kSolutionFound, SolutionResult.kIterationLimit):
        details["status"] += f" (rejected: the solution violates the program by {violation:.3g})"
        result = SolutionResult.kSolverSpecificError
    return MathematicalProgramResult(prog, x, model.cost(x), result, solver, details, _CHECK_FACTOR * tol)
