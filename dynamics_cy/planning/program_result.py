"""The outcome of solving a `MathematicalProgram`, shaped like pydrake.solvers.MathematicalProgramResult:
the result types both solvers return (solve.py: the local NLP path, mixed_integer_solve.py: the global
mixed-integer path), apart from the solvers as Drake keeps solvers/mathematical_program_result.h beside
solve.h."""
from __future__ import annotations

import numpy as np

from dynamics_cy.enums import DrakeEnum

from .program import Binding, MathematicalProgram, Variable


class SolutionResult(DrakeEnum):
    """pydrake's values (those of the outcomes we report)."""

    kSolutionFound = 0
    kInfeasibleConstraints = -2
    kIterationLimit = -6
    kUnbounded = -3                # the mixed-integer path's outcomes (mixed_integer_solve.py)
    kInfeasibleOrUnbounded = -5
    kSolverSpecificError = -4


class SolverId:
    def __init__(self, name: str):
        self._name = name

    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"SolverId('{self._name}')"


class MathematicalProgramResult:
    """The outcome of Solve(prog)."""

    def __init__(self, prog: MathematicalProgram, x: np.ndarray, cost: float, result: SolutionResult,
                 solver: str, details: dict, tolerance: float):
        self._prog, self._x, self._cost, self._result = prog, x, cost, result
        self._solver, self._details, self._tol = SolverId(solver), details, tolerance

    def is_success(self) -> bool:
        return self._result == SolutionResult.kSolutionFound

    def get_solution_result(self) -> SolutionResult:
        return self._result

    def get_solver_id(self) -> SolverId:
        return self._solver

    def get_solver_details(self) -> dict:
        """Phase, iteration counts, optimizer status and message."""
        return dict(self._details)

    def get_x_val(self) -> np.ndarray:
        return self._x.copy()

    def GetSolution(self, var=None):
        """The value of one variable (float), an array of variables (same shape) or all (None)."""
        if var is None:
            return self._x.copy()
        if isinstance(var, Variable):
            return float(self._x[self._prog.FindDecisionVariableIndex(var)])
        v = np.asarray(var, dtype=object)
        return self._x[self._prog.FindDecisionVariableIndices(v)].reshape(v.shape)

    def get_optimal_cost(self) -> float:
        """The total cost at the solution (0 without costs)."""
        return self._cost

    def EvalBinding(self, binding: Binding) -> np.ndarray:
        return self._prog.EvalBinding(binding, self._x)

    def GetConstraintViolation(self, binding: Binding) -> np.ndarray:
        """max(lb - y, y - ub, 0) per row at the solution (our addition)."""
        return binding.evaluator().violation(self.EvalBinding(binding))

    def get_max_constraint_violation(self) -> float:
        """The largest violation over all constraints, bounding boxes included (our addition)."""
        return max((float(self.GetConstraintViolation(b).max(initial=0.0)) for b in self._prog.GetAllConstraints()),
                   default=0.0)

    def GetInfeasibleConstraints(self, prog: MathematicalProgram, tol: float | None = None) -> list[Binding]:
        t = self._tol if tol is None else tol
        return [b for b in prog.GetAllConstraints() if np.any(self.GetConstraintViolation(b) > t)]

    def GetInfeasibleConstraintNames(self, prog: MathematicalProgram, tol: float | None = None) -> list[str]:
        """Names like Drake's: 'description[i]: lb <= y <= ub' for each violated row."""
        t = self._tol if tol is None else tol
        names = []
        for b in prog.GetAllConstraints():
            e, y = b.evaluator(), self.EvalBinding(b)
            label = e.get_description() or type(e).__name__
            for i in np.flatnonzero(e.violation(y) > t):
                names.append(f"{label}[{i}]: {e.lower_bound()[i]:.6g} <= {y[i]:.6g} <= {e.upper_bound()[i]:.6g}")
        return names
