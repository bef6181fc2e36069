"""MathematicalProgram and Solve on problems with known solutions."""
import numpy as np
import pytest

from dynamics_cy.planning import (
    BoundingBoxConstraint,
    Constraint,
    Cost,
    LinearConstraint,
    MathematicalProgram,
    QuadraticCost,
    SolutionResult,
    Solve,
    Variable,
)


class Circle(Constraint):
    """x² + y² = r² (a user-defined constraint: implement _eval)."""

    def __init__(self, r):
        super().__init__(1, 2, r * r, r * r)

    def _eval(self, x, with_gradient):
        return np.array([x @ x]), (2 * x[None, :] if with_gradient else None)


class Rosenbrock(Cost):
    def __init__(self):
        super().__init__(2)

    def _eval(self, x, with_gradient):
        a, b = x
        f = (1 - a) ** 2 + 100 * (b - a * a) ** 2
        return np.array([f]), (np.array([[-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)]])
                               if with_gradient else None)


def test_variables_and_initial_guess():
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(3, "x")
    Y = prog.NewContinuousVariables(2, 2, "Y")
    assert x.shape == (3,) and Y.shape == (2, 2) and prog.num_vars() == 7
    assert isinstance(x[0], Variable) and x[1].get_name() == "x(1)" and Y[1, 0].get_name() == "Y(1,0)"
    assert prog.FindDecisionVariableIndex(Y[1, 1]) == 6
    assert np.all(np.isnan(prog.GetInitialGuess(x)))
    prog.SetInitialGuess(Y, [[1, 2], [3, 4]])
    assert prog.GetInitialGuess(Y[1, 0]) == 3.0 and prog.GetInitialGuess(Y).shape == (2, 2)
    with pytest.raises(ValueError, match="not a decision variable"):
        prog.FindDecisionVariableIndex(MathematicalProgram().NewContinuousVariables(1)[0])
    with pytest.raises(ValueError, match="takes 2 variables"):
        prog.AddConstraint(Circle(1.0), x)


def test_quadratic_program():
    """min |x - a|² s.t. x₀ + x₁ + x₂ = 1, x₀ - x₁ ≤ -0.5, 0 ≤ x ≤ 1: a projection with a known answer."""
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(3)
    a = np.array([0.9, 0.1, 0.6])
    cost = prog.AddQuadraticErrorCost(np.eye(3), a, x)
    eq = prog.AddLinearEqualityConstraint(np.ones((1, 3)), [1.0], x)
    ineq = prog.AddLinearConstraint([[1, -1, 0]], -np.inf, -0.5, x)
    prog.AddBoundingBoxConstraint(0, 1, x)
    assert isinstance(cost.evaluator(), QuadraticCost) and isinstance(ineq.evaluator(), LinearConstraint)
    assert len(prog.GetAllConstraints()) == 3 and len(prog.bounding_box_constraints()) == 1
    result = Solve(prog)
    assert result.is_success() and result.get_solution_result() == SolutionResult.kSolutionFound
    # KKT by hand: x₀ - x₁ = -0.5 and x₀ + x₁ + x₂ = 1 active, x₂ free: x = a - λ₁(1,1,1) - λ₂(1,-1,0)
    A = np.array([[1, 1, 1], [1, -1, 0]])
    lam = np.linalg.solve(A @ A.T, A @ a - [1, -0.5])
    np.testing.assert_allclose(result.GetSolution(x), a - A.T @ lam, atol=1e-8)
    assert result.get_optimal_cost() == pytest.approx(np.sum((A.T @ lam) ** 2), abs=1e-9)
    assert result.EvalBinding(eq)[0] == pytest.approx(1.0, abs=1e-12)
    assert result.get_max_constraint_violation() < 1e-9


@pytest.mark.parametrize("method", ["SLSQP", "trust-constr"])
def test_nonlinear_program(method):
    """Rosenbrock on the circle x² + y² = 2 has its minimum at (1, 1)."""
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(2)
    prog.AddCost(Rosenbrock(), x)
    prog.AddConstraint(Circle(np.sqrt(2.0)), x)
    prog.SetInitialGuess(x, [1.4, -0.2])
    result = Solve(prog, solver_options={"method": method, "max_iterations": 500})
    assert result.is_success(), result.get_solver_details()
    np.testing.assert_allclose(result.GetSolution(x), [1.0, 1.0], atol=1e-5)
    assert result.get_solver_id().name() == method


def test_feasibility_program_and_restarts():
    """Without costs the feasibility phase alone solves; restarts find a disconnected feasible set."""
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(2)
    c = prog.AddConstraint(Circle(1.0), x)
    prog.AddBoundingBoxConstraint([0.5, -2], [2, 2], x)
    result = Solve(prog, initial_guess=[2.0, 2.0])
    assert result.is_success() and result.get_solver_id().name() == "LevenbergMarquardt"
    assert result.EvalBinding(c)[0] == pytest.approx(1.0, abs=1e-12)
    assert prog.CheckSatisfied(prog.GetAllConstraints(), result.GetSolution(), 1e-12)


def test_infeasible_program():
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(2)
    c = prog.AddConstraint(Circle(1.0), x)
    c.evaluator().set_description("circle")
    prog.AddBoundingBoxConstraint(2.0, 3.0, x)
    result = Solve(prog)
    assert not result.is_success()
    assert result.get_solution_result() == SolutionResult.kInfeasibleConstraints
    assert result.GetInfeasibleConstraintNames(prog) == [f"circle[0]: 1 <= {result.EvalBinding(c)[0]:.6g} <= 1"]
    np.testing.assert_allclose(result.GetSolution(x), [2.0, 2.0], atol=1e-6)  # the least violation in the box


def test_solver_options_are_checked():
    prog = MathematicalProgram()
    prog.NewContinuousVariables(1)
    with pytest.raises(ValueError, match="unknown solver_options"):
        Solve(prog, solver_options={"tolerance": 1})
    with pytest.raises(ValueError, match="initial_guess has 2 elements"):
        Solve(prog, initial_guess=[0, 0])


def test_constraint_api():
    c = BoundingBoxConstraint([0, 0], [1, 2])
    assert c.num_constraints() == 2 and c.CheckSatisfied([0.5, 2.0]) and not c.CheckSatisfied([1.5, 0.0])
    np.testing.assert_array_equal(c.violation([1.5, -1.0]), [0.5, 1.0])
    c.UpdateUpperBound([2, 2])
    assert c.CheckSatisfied([1.5, 0.0])
    with pytest.raises(ValueError, match="lower <= upper"):
        c.set_bounds([1, 1], [0, 0])
    y, dy = Circle(1.0).EvalWithGradient([0.6, 0.8])
    np.testing.assert_allclose(y, [1.0])
    np.testing.assert_allclose(dy, [[1.2, 1.6]])


def test_pydrake_style_accessors():
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(2, "x")
    assert list(prog.decision_variables()) == list(x) and prog.decision_variable(1) is x[1]
    assert x[0].get_id() != x[1].get_id()
    quad = prog.AddQuadraticCost(np.diag([2.0, 4.0]), [-2.0, 0.0], x)  # ½xᵀQx + bᵀx: minimum at (1, 0)
    lin = prog.AddLinearConstraint([[1.0, 1.0]], 0.5, np.inf, x)
    eq = prog.AddLinearEqualityConstraint([[1.0, -1.0]], [0.0], x)
    assert prog.linear_constraints() == [lin] and prog.linear_equality_constraints() == [eq]
    np.testing.assert_array_equal(lin.evaluator().GetDenseA(), [[1.0, 1.0]])
    lin.evaluator().UpdateLowerBound([1.0])
    result = Solve(prog)
    np.testing.assert_allclose(result.get_x_val(), [0.5, 0.5], atol=1e-8)  # x₀ = x₁ on x₀ + x₁ ≥ 1
    assert result.get_optimal_cost() == pytest.approx(result.EvalBinding(quad)[0])


def test_costs_and_guess_accessors():
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(2)
    lin = prog.AddLinearCost([1.0, -1.0], 0.5, x).evaluator()
    quad = prog.AddQuadraticErrorCost(np.diag([1.0, 2.0]), [1.0, 0.0], x).evaluator()
    np.testing.assert_array_equal(lin.a(), [1.0, -1.0])
    assert lin.b() == 0.5 and lin.Eval([1.0, 2.0])[0] == pytest.approx(-0.5)
    np.testing.assert_array_equal(quad.Q(), np.diag([2.0, 4.0]))  # (x - x_d)ᵀQ(x - x_d) = ½xᵀ(2Q)x - 2x_dᵀQx + x_dᵀQx_d
    np.testing.assert_array_equal(quad.b(), [-2.0, 0.0])
    assert quad.c() == 1.0 and quad.Eval([1.0, 0.0])[0] == 0.0
    prog.SetInitialGuessForAllVariables([3.0, 4.0])
    np.testing.assert_array_equal(prog.initial_guess(), [3.0, 4.0])
