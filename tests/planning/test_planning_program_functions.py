"""Binding[C] as pydrake's template, and costs and constraints given as Python functions
(AddConstraint(func, lb, ub, vars), AddCost(func, vars)): values and gradients against closed forms,
central differences and pydrake's own evaluation of the same function (with AutoDiffXd), and solves
with known answers."""
import numpy as np
import pytest

from dynamics_cy.planning import (
    Binding,
    BoundingBoxConstraint,
    CalcGridPointsOptions,
    Constraint,
    Cost,
    EvaluatorBase,
    LinearConstraint,
    LinearCost,
    LinearEqualityConstraint,
    MathematicalProgram,
    PiecewisePolynomial,
    QuadraticCost,
    Solve,
    Toppra,
    ToppraDiscretization,
)
from dynamics_cy.planning.autodiff import Dual


def constraint_function(x):
    """Generic in the scalar type: works with floats, our Duals and pydrake's AutoDiffXd."""
    return np.array([x[0] * x[1] + np.sin(x[2]), np.sqrt(x[0] ** 2 + 1.0) * np.exp(-x[1]),
                     np.arctan2(x[2], x[0]) / (1.0 + x[1] ** 2), np.cos(x[0] - x[2]) ** 3])


def cost_function(x):
    return x.dot(x) + np.tanh(x[0] * x[2]) + np.exp(0.5 * x[1]) ** 2


def test_binding_template_types():
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(3, "x")
    returned = {
        BoundingBoxConstraint: prog.AddBoundingBoxConstraint(-1, 1, x),
        LinearConstraint: prog.AddLinearConstraint(np.ones((1, 3)), 0, 1, x),
        LinearEqualityConstraint: prog.AddLinearEqualityConstraint(np.ones((1, 3)), [1], x),
        Constraint: prog.AddConstraint(constraint_function, -np.ones(4), np.ones(4), x),
        Cost: prog.AddCost(cost_function, x),
        LinearCost: prog.AddLinearCost([1, 2, 3], 0.5, x),
        QuadraticCost: prog.AddQuadraticErrorCost(np.eye(3), [1, 2, 3], x),
    }
    for evaluator_type, binding in returned.items():
        assert type(binding) is Binding[evaluator_type]
        assert type(binding).__name__ == f"Binding[{evaluator_type.__name__}]"
        assert isinstance(binding, Binding) and isinstance(binding, Binding[EvaluatorBase])
        # usable wherever a binding of a base evaluator type is (pydrake converts them implicitly)
        assert isinstance(binding, Binding[Constraint]) == issubclass(evaluator_type, Constraint)
        assert isinstance(binding, Binding[Cost]) == issubclass(evaluator_type, Cost)
    assert Binding[Constraint] is Binding[Constraint]
    assert not isinstance(returned[LinearConstraint], Binding[BoundingBoxConstraint])
    # the constructors: Binding[C](c, v) checks the evaluator; Binding[C](binding) views another binding
    c = LinearConstraint(np.ones((1, 2)), 0, 1)
    b = Binding[LinearConstraint](c, x[:2])
    assert b.evaluator() is c and list(b.variables()) == list(x[:2])
    view = Binding[Constraint](b)
    assert type(view) is Binding[Constraint] and view == b and hash(view) == hash(b)
    assert prog.AddConstraint(b) == b and b in prog.linear_constraints()
    with pytest.raises(TypeError, match=r"Binding\[BoundingBoxConstraint\] binds a BoundingBoxConstraint"):
        Binding[BoundingBoxConstraint](c, x[:2])
    with pytest.raises(TypeError, match=r"Binding\[Cost\] binds a Cost"):
        prog.AddCost(b)
    with pytest.raises(TypeError, match="takes an evaluator class"):
        Binding[float]


def test_function_constraint_and_cost_gradients(fd_gradient):
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(3)
    con = prog.AddConstraint(func=constraint_function, lb=-np.ones(4), ub=np.ones(4), vars=x, description="mine")
    cost = prog.AddCost(cost_function, x, "my cost")
    assert con.evaluator().get_description() == "mine" and cost.evaluator().get_description() == "my cost"
    assert (con.evaluator().num_constraints(), con.evaluator().num_vars()) == (4, 3)
    rng = np.random.default_rng(3)
    for _ in range(5):
        x0 = rng.normal(size=3)
        for evaluator, f in ((con.evaluator(), constraint_function), (cost.evaluator(), cost_function)):
            y, dy = evaluator.EvalWithGradient(x0)
            np.testing.assert_allclose(y, np.atleast_1d(f(x0)), rtol=1e-15)
            np.testing.assert_allclose(evaluator.Eval(x0), y, rtol=1e-15)
            np.testing.assert_allclose(dy, fd_gradient(lambda z: np.atleast_1d(f(z)), x0), rtol=1e-6, atol=1e-8)


def test_function_evaluators_match_pydrake(pydrake):
    """The same function added to pydrake's MathematicalProgram and to ours: the same value and gradient
    (Drake's from AutoDiffXd, ours from Duals) to rounding."""
    ours, theirs = MathematicalProgram(), pydrake.MathematicalProgram()
    x, xd = ours.NewContinuousVariables(3), theirs.NewContinuousVariables(3)
    pairs = [(ours.AddConstraint(constraint_function, -np.ones(4), np.ones(4), x),
              theirs.AddConstraint(constraint_function, -np.ones(4), np.ones(4), xd)),
             (ours.AddCost(cost_function, x), theirs.AddCost(cost_function, xd))]
    rng = np.random.default_rng(4)
    for _ in range(5):
        x0 = rng.normal(size=3)
        for o, t in pairs:
            y, dy = o.evaluator().EvalWithGradient(x0)
            y_ad = t.evaluator().Eval(pydrake.InitializeAutoDiff(x0))
            np.testing.assert_allclose(y, t.evaluator().Eval(x0), rtol=1e-14)
            np.testing.assert_allclose(dy, pydrake.ExtractGradient(y_ad), rtol=1e-12, atol=1e-14)


def test_function_shape_errors_as_drake():
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(2)
    wrong_size = prog.AddConstraint(lambda z: np.array([z[0], z[1], z[0]]), [0, 0], [1, 1], x).evaluator()
    with pytest.raises(RuntimeError, match=r"ndim 1 or 2 \(a vector\) and .size 2; got .ndim 1 and .size 3"):
        wrong_size.Eval([0.1, 0.2])
    vector_cost = prog.AddCost(lambda z: np.array([z @ z]), x).evaluator()  # Drake wants a 0-d scalar
    with pytest.raises(RuntimeError, match=r"ndim 0 \(a scalar\)"):
        vector_cost.EvalWithGradient([0.1, 0.2])
    no_gradient = prog.AddCost(lambda z: float(z[0]), x).evaluator()  # float() drops the gradient: refused
    assert no_gradient.Eval([0.3, 0.0])[0] == 0.3
    with pytest.raises(TypeError):
        no_gradient.EvalWithGradient([0.3, 0.0])
    with pytest.raises(TypeError, match=r"AddConstraint\(binding\) or AddConstraint\(constraint, vars\)"):
        prog.AddConstraint(lambda z: z, [0], [1])


def test_dual_arithmetic_against_closed_forms():
    a, b = Dual(0.3, np.array([1.0, 0.0])), Dual(1.7, np.array([0.0, 1.0]))
    for expr, value, grad in [
        (a * b - 2 / b + 1, 0.3 * 1.7 - 2 / 1.7 + 1, [1.7, 0.3 + 2 / 1.7 ** 2]),
        (a ** b, 0.3 ** 1.7, [1.7 * 0.3 ** 0.7, np.log(0.3) * 0.3 ** 1.7]),
        (np.arctan2(a, b), np.arctan2(0.3, 1.7), [1.7 / (0.3 ** 2 + 1.7 ** 2), -0.3 / (0.3 ** 2 + 1.7 ** 2)]),
        (abs(-a) + np.arcsin(a), 0.3 + np.arcsin(0.3), [1 + 1 / np.sqrt(1 - 0.09), 0.0]),
    ]:
        assert expr.value() == pytest.approx(value, rel=1e-14)
        np.testing.assert_allclose(expr.derivatives(), grad, rtol=1e-13)
    assert a < b and max(a, b) is b and a != b


def test_function_program_solves_to_the_closed_form():
    """min |x - (2, 1)|² on the unit circle x₀² + x₁² = 1, both given as functions: x* = (2, 1)/√5."""
    prog = MathematicalProgram()
    x = prog.NewContinuousVariables(2)
    prog.AddConstraint(lambda z: np.array([z @ z]), [1.0], [1.0], x)
    prog.AddCost(lambda z: (z[0] - 2) ** 2 + (z[1] - 1) ** 2, x)
    prog.SetInitialGuess(x, [0.1, -0.5])
    result = Solve(prog)
    assert result.is_success()
    np.testing.assert_allclose(result.GetSolution(x), np.array([2.0, 1.0]) / np.sqrt(5), atol=1e-7)
    assert result.get_optimal_cost() == pytest.approx((np.sqrt(5) - 1) ** 2, abs=1e-9)


def test_toppra_returns_drakes_bindings(iiwa):
    """Velocity limits return a Binding[BoundingBoxConstraint] on x, acceleration, torque and frame
    acceleration limits a (backward, forward) pair of Binding[LinearConstraint] (2 rows a joint with
    kInterpolation), as Drake's Toppra."""
    path = PiecewisePolynomial.CubicWithContinuousSecondDerivatives(
        [0.0, 1.0], np.array([[-1.0, 0.1, 0, -1.2, 0, 1.6, 0], [-0.8, -0.6, 0.5, 0.1, -0.5, -0.1, -1]]).T,
        np.zeros(7), np.zeros(7))
    toppra = Toppra(path, iiwa, Toppra.CalcGridPoints(path, CalcGridPointsOptions()))
    limit = np.arange(1, 8.0)
    velocity = toppra.AddJointVelocityLimit(-limit, limit)
    assert isinstance(velocity, Binding[BoundingBoxConstraint]) and velocity.variables()[0].get_name() == "x(0)"
    for disc, rows in ((ToppraDiscretization.kCollocation, 7), (ToppraDiscretization.kInterpolation, 14)):
        backward, forward = toppra.AddJointAccelerationLimit(-limit, limit, disc)
        assert isinstance(backward, Binding[LinearConstraint]) and isinstance(forward, Binding[LinearConstraint])
        assert backward.evaluator().GetDenseA().shape == (rows, 2) and forward.evaluator().num_vars() == 1
    frame = iiwa.GetFrameByName("iiwa_link_7")
    assert isinstance(toppra.AddFrameTranslationalSpeedLimit(frame, 1.0), Binding[BoundingBoxConstraint])
    assert all(isinstance(b, Binding[LinearConstraint]) for b in toppra.AddFrameAccelerationLimit(
        frame, -np.ones(6), np.ones(6)))
    assert toppra.SolvePathParameterization() is not None
