"""Solve(prog): a local nonlinear-programming solver for `MathematicalProgram`, with a result shaped
like pydrake.solvers.MathematicalProgramResult (program_result.py). A program with binary variables
goes instead to the global mixed-integer path (mixed_integer_solve.py: HiGHS or SCIP), with its own
solver_options.

The solver runs in phases, each with the analytic gradients the evaluators provide:

1. feasibility: a Levenberg–Marquardt method on the constraints' feasibility residuals r(x)
   (Constraint.feasibility_residual: by default y(x) - clip(y(x), lb, ub), equality rows always and
   inequality rows while violated; OrientationConstraint uses the rotation vector instead of the
   trace), with x kept inside the bounding boxes. It drives ‖r‖∞ far below the feasibility tolerance
   (to ~1e-13 where the problem allows), so equality constraints come out tight.
   Phase 1 gives up at a local minimum of ‖r‖ > 0 (no 0.1% progress in 5 steps) or after 200 steps.
2. optimality, when the program has costs: scipy's SLSQP (default) or trust-constr from the phase-1
   point, followed by phase 1 again to polish feasibility.
3. optional restarts from uniformly random points inside the finite bounds when a start fails
   (``solver_options={"max_restarts": k}``); when every start fails phase 1, phase 2 runs once from
   the least infeasible point as a fallback.

The result succeeds when every constraint (bounding boxes included) is violated by at most the
feasibility tolerance and, with costs, the optimizer reported convergence; a feasible point at which
the optimizer did not converge is kIterationLimit, anything else kInfeasibleConstraints. The solver id
is "LevenbergMarquardt" when phase 1 alone solved a program without costs, else the method's name.

`solver_options` is a dict (Drake takes a SolverOptions object):
    method                "SLSQP" (default) or "trust-constr"
    feasibility_tolerance success threshold on every constraint's violation (default 1e-6)
    max_iterations        iterations of the optimizer in phase 2 (default 200)
    max_restarts          random restarts after a failed start (default 0)
    random_seed           seed of the restart points (default 0)
"""
from __future__ import annotations

import numpy as np
from scipy import optimize

from .mixed_integer_solve import SolveMixedInteger
from .program import BoundingBoxConstraint, MathematicalProgram, Variable
from .program_result import MathematicalProgramResult, SolutionResult

_DEFAULTS = {"method": "SLSQP", "feasibility_tolerance": 1e-6, "max_iterations": 200, "max_restarts": 0,
             "random_seed": 0}
_RESTORATION_ITERATIONS = 200
_RESTORATION_TARGET = 1e-13  # ‖r‖∞ at which phase 1 stops early


class _FlatProgram:
    """The program as f(x), g(x) and stacked constraints lb ≤ c(x) ≤ ub with dense Jacobians."""

    def __init__(self, prog: MathematicalProgram):
        n = prog.num_vars()
        self.n = n
        self.lo, self.hi = np.full(n, -np.inf), np.full(n, np.inf)
        for b in prog.bounding_box_constraints():
            idx = prog.FindDecisionVariableIndices(b.variables())
            e = b.evaluator()
            np.maximum.at(self.lo, idx, e.lower_bound())
            np.minimum.at(self.hi, idx, e.upper_bound())
        if np.any(self.lo > self.hi):
            raise ValueError("the bounding-box constraints are inconsistent (some lower bound exceeds its upper bound)")
        cons = [b for b in prog.GetAllConstraints() if not isinstance(b.evaluator(), BoundingBoxConstraint)]
        self.cons = [(b.evaluator(), prog.FindDecisionVariableIndices(b.variables())) for b in cons]
        self.costs = [(b.evaluator(), prog.FindDecisionVariableIndices(b.variables())) for b in prog.GetAllCosts()]
        rows = [e.num_constraints() for e, _ in self.cons]
        self.offsets = np.r_[0, np.cumsum(rows)].astype(int)
        self.m = int(self.offsets[-1])
        self.lb = np.concatenate([e.lower_bound() for e, _ in self.cons]) if self.cons else np.zeros(0)
        self.ub = np.concatenate([e.upper_bound() for e, _ in self.cons]) if self.cons else np.zeros(0)
        self.eq = self.lb == self.ub
        self._key, self._val = None, None

    def clip(self, x: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(x, self.lo), self.hi)

    def constraints(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(c(x), ∂c/∂x), cached on the last x."""
        key = x.tobytes()
        if key != self._key:
            y, J = np.empty(self.m), np.zeros((self.m, self.n))
            for (e, idx), r0, r1 in zip(self.cons, self.offsets[:-1], self.offsets[1:]):
                y[r0:r1], dy = e.EvalWithGradient(x[idx])
                np.add.at(J[r0:r1].T, idx, np.asarray(dy).T)
            self._key, self._val = key, (y, J)
        return self._val

    def cost(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = 0.0, np.zeros(self.n)
        for e, idx in self.costs:
            y, dy = e.EvalWithGradient(x[idx])
            f += float(y[0])
            np.add.at(g, idx, np.asarray(dy).reshape(-1))
        return f, g

    def violation(self, x: np.ndarray) -> float:
        y = self.constraints(x)[0] if self.m else np.zeros(0)
        box = np.maximum(np.maximum(self.lo - x, x - self.hi), 0.0)
        return float(max(np.maximum(np.maximum(self.lb - y, y - self.ub), 0.0).max(initial=0.0), box.max(initial=0.0)))

    def residual(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The stacked feasibility residuals r(x) of the constraints and ∂r/∂x (see
        Constraint.feasibility_residual)."""
        parts = [(e.feasibility_residual(x[idx]), idx) for e, idx in self.cons]
        r = np.concatenate([p[0][0] for p in parts]) if parts else np.zeros(0)
        J = np.zeros((r.shape[0], self.n))
        row = 0
        for (ri, dri), idx in parts:
            np.add.at(J[row:row + ri.shape[0]].T, idx, np.asarray(dri).T)
            row += ri.shape[0]
        return r, J


def _restore(flat: _FlatProgram, x0: np.ndarray) -> tuple[np.ndarray, int]:
    """Levenberg–Marquardt on ½‖r(x)‖² inside the bounds: (AᵀA + λ s I) Δ = -Aᵀr on the free variables
    (A the columns of ∂r/∂x of the free variables, s = ‖∂r/∂x‖²_F / n), where a variable becomes fixed for
    the step when the step would carry it through a bound; λ shrinks after a step that reduces ‖r‖ and
    grows (the step retried) otherwise."""
    x = flat.clip(x0)
    r, Jr = flat.residual(x)
    f = r @ r
    lam, rejected, stalled, it = 1e-3, 0, 0, 0
    for it in range(1, _RESTORATION_ITERATIONS + 1):
        if r.size == 0 or np.abs(r).max() <= _RESTORATION_TARGET or rejected >= 12 or stalled >= 5:
            break
        damping = lam * max(float(np.vdot(Jr, Jr)) / flat.n, 1e-12)
        free = np.ones(flat.n, dtype=bool)
        for _ in range(flat.n):
            A = Jr[:, free]
            d = np.zeros(flat.n)
            d[free] = -np.linalg.solve(A.T @ A + damping * np.eye(A.shape[1]), A.T @ r)
            out = free & ((x + d < flat.lo) | (x + d > flat.hi))
            if not out.any():
                break
            free &= ~out
        x_new = flat.clip(x + d)
        r_new, J_new = flat.residual(x_new)
        f_new = r_new @ r_new
        if f_new < f:
            stalled = stalled + 1 if f_new > (1.0 - 1e-3) * f else 0  # a local minimum of ‖r‖ > 0
            x, r, Jr, f, rejected = x_new, r_new, J_new, f_new, 0
            lam = max(lam / 3.0, 1e-12)
        else:
            lam *= 4.0
            rejected += 1
    return x, it


def _optimize(flat: _FlatProgram, x0: np.ndarray, method: str, max_iterations: int):
    """Phase 2 with scipy: min f(x) s.t. the constraints and bounds. Returns (x, converged, message)."""
    fun = flat.cost if flat.costs else (lambda x: (0.0, np.zeros(flat.n)))
    bounds = optimize.Bounds(flat.lo, flat.hi) if np.isfinite(np.r_[flat.lo, flat.hi]).any() else None
    if method == "SLSQP":
        cons = []
        eq, lo_rows, hi_rows = flat.eq, ~flat.eq & np.isfinite(flat.lb), ~flat.eq & np.isfinite(flat.ub)
        if eq.any():
            cons.append({"type": "eq", "fun": lambda x: flat.constraints(x)[0][eq] - flat.lb[eq],
                         "jac": lambda x: flat.constraints(x)[1][eq]})
        if lo_rows.any() or hi_rows.any():
            cons.append({"type": "ineq",
                         "fun": lambda x: np.r_[flat.constraints(x)[0][lo_rows] - flat.lb[lo_rows],
                                                flat.ub[hi_rows] - flat.constraints(x)[0][hi_rows]],
                         "jac": lambda x: np.vstack([flat.constraints(x)[1][lo_rows],
                                                     -flat.constraints(x)[1][hi_rows]])})
        res = optimize.minimize(fun, x0, jac=True, method="SLSQP", bounds=bounds, constraints=cons,
                                options={"maxiter": max_iterations, "ftol": 1e-12})
    elif method == "trust-constr":
        cons = [optimize.NonlinearConstraint(lambda x: flat.constraints(x)[0], flat.lb, flat.ub,
                                             jac=lambda x: flat.constraints(x)[1], hess=optimize.BFGS())
                ] if flat.m else []
        res = optimize.minimize(fun, x0, jac=True, method="trust-constr", bounds=bounds, constraints=cons,
                                hess=optimize.BFGS(), options={"maxiter": max_iterations, "gtol": 1e-10,
                                                               "xtol": 1e-12})
    else:
        raise ValueError(f"solver_options['method'] must be 'SLSQP' or 'trust-constr', got {method!r}")
    return flat.clip(np.asarray(res.x, dtype=float)), bool(res.success), str(res.message)


def Solve(prog: MathematicalProgram, initial_guess=None, solver_options: dict | None = None
          ) -> MathematicalProgramResult:
    """Solves prog locally from initial_guess (default: prog's initial guess, NaN read as 0). A program with
    binary variables is solved globally by a mixed-integer solver instead (mixed_integer_solve.py)."""
    if any(v.get_type() != Variable.Type.CONTINUOUS for v in prog.decision_variables()):
        return SolveMixedInteger(prog, initial_guess, solver_options)
    opts = dict(_DEFAULTS)
    unknown = set(solver_options or {}) - set(_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown solver_options {sorted(unknown)}; valid keys are {sorted(_DEFAULTS)}")
    opts.update(solver_options or {})
    flat = _FlatProgram(prog)
    x0 = prog.initial_guess() if initial_guess is None else \
        np.asarray(initial_guess, dtype=float).reshape(-1).copy()
    if x0.shape[0] != flat.n:
        raise ValueError(f"initial_guess has {x0.shape[0]} elements; the program has {flat.n} variables")
    x0 = np.where(np.isnan(x0), 0.0, x0)
    tol, method = float(opts["feasibility_tolerance"]), opts["method"]
    rng = np.random.default_rng(opts["random_seed"])
    finite = np.isfinite(flat.lo) & np.isfinite(flat.hi)
    iterations, closest, feasible_unconverged = 0, None, None

    def finish(x, result, solver, message, attempts):
        details = {"attempts": attempts, "restoration_iterations": iterations, "message": message,
                   "max_violation": flat.violation(x)}
        return MathematicalProgramResult(prog, x, flat.cost(x)[0] if flat.costs else 0.0, result, solver, details,
                                         tol)

    def optimize_and_polish(x):
        nonlocal iterations
        x, converged, message = _optimize(flat, x, method, int(opts["max_iterations"]))
        if flat.m:
            x, k = _restore(flat, x)
            iterations += k
        return x, converged, message

    attempts = int(opts["max_restarts"]) + 1
    for attempt in range(attempts):
        start = x0.copy()
        if attempt:
            start[finite] = rng.uniform(flat.lo[finite], flat.hi[finite])
        x, k = _restore(flat, start) if flat.m else (flat.clip(start), 0)
        iterations += k
        violation = flat.violation(x)
        if violation > tol:
            if closest is None or violation < closest[1]:
                closest = (x, violation)
            continue
        if not flat.costs:
            return finish(x, SolutionResult.kSolutionFound, "LevenbergMarquardt", "feasible", attempt + 1)
        x_opt, converged, message = optimize_and_polish(x)
        if flat.violation(x_opt) <= tol:
            if converged:
                return finish(x_opt, SolutionResult.kSolutionFound, method, message, attempt + 1)
            feasible_unconverged = feasible_unconverged or (x_opt, message)
        else:
            feasible_unconverged = feasible_unconverged or (x, message)
    if feasible_unconverged is not None:
        return finish(feasible_unconverged[0], SolutionResult.kIterationLimit, method, feasible_unconverged[1],
                      attempts)
    x, converged, message = optimize_and_polish(closest[0])  # fallback from the least infeasible point
    ok = flat.violation(x) <= tol and (converged or not flat.costs)
    return finish(x, SolutionResult.kSolutionFound if ok else SolutionResult.kInfeasibleConstraints, method, message,
                  attempts)
