"""Solve's mixed-integer path and the mixed-integer building blocks of GlobalInverseKinematics: small
programs whose optimum is found by enumerating the binaries, the SOS2 encodings, the cone evaluators
against pydrake's, and the SO(3) relaxation (contains SO(3), excludes reflections and shrunken matrices,
tightens towards the exact optimum over SO(3) as the grid is refined)."""
import itertools

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dynamics_cy.planning import (
    AddLogarithmicSos2Constraint,
    AddSos2Constraint,
    IntervalBinning,
    LorentzConeConstraint,
    MathematicalProgram,
    MixedIntegerRotationConstraintGenerator,
    RotatedLorentzConeConstraint,
    SolutionResult,
    Solve,
    Variable,
)
from dynamics_cy.planning.mixed_integer_optimization import CalculateReflectedGrayCodes
from dynamics_cy.planning.mixed_integer_rotation import NewRotationMatrixVars, UnsupportedApproachError
from dynamics_cy.planning.mixed_integer_solve import MixedIntegerSolveError
from dynamics_cy.planning.program import Constraint

Approach = MixedIntegerRotationConstraintGenerator.Approach


def knapsack(values, weights, capacity):
    prog = MathematicalProgram()
    x = prog.NewBinaryVariables(len(values), "x")
    prog.AddLinearConstraint(np.atleast_2d(weights), -np.inf, capacity, x)
    prog.AddLinearCost(-np.asarray(values, float), 0.0, x)
    return prog, x


def test_binary_variables_and_milp_against_enumeration():
    values, weights = [6.0, 5.0, 8.0, 9.0, 6.0, 7.0, 3.0], [2.0, 3.0, 6.0, 7.0, 5.0, 9.0, 4.0]
    prog, x = knapsack(values, weights, 13.0)
    assert x[0].get_type() == Variable.Type.BINARY and x[0].get_name() == "x(0)"
    best = max(np.dot(values, z) for z in itertools.product((0, 1), repeat=7) if np.dot(weights, z) <= 13)
    result = Solve(prog)
    assert result.is_success() and result.get_solver_id().name() == "HiGHS"
    assert result.get_optimal_cost() == pytest.approx(-best)
    z = result.GetSolution(x)
    np.testing.assert_allclose(z, np.round(z), atol=1e-9)
    assert np.dot(weights, np.round(z)) <= 13.0 and result.get_solver_details()["num_binary"] == 7


def test_infeasible_milp():
    prog = MathematicalProgram()
    b = prog.NewBinaryVariables(2)
    prog.AddLinearEqualityConstraint([[1.0, 1.0]], [1.5], b)   # no 0/1 pair sums to 1.5 (its relaxation can)
    result = Solve(prog)
    assert not result.is_success() and result.get_solution_result() == SolutionResult.kInfeasibleConstraints


def test_misocp_and_miqp_against_enumeration():
    """min ‖x − a‖ (a Lorentz cone on the epigraph t) and min (x − a)ᵀQ(x − a) over x ∈ {0, 1}⁴ with Σx = 2
    and a continuous offset s ∈ [−0.3, 0.3] added to x₀: the optimum over s is explicit per binary vector."""
    pytest.importorskip("pyscipopt")
    a = np.array([0.8, 0.3, 0.6, 0.45])
    L = np.array([[1.0, 0, 0, 0], [0.4, 1, 0, 0], [0.2, -0.3, 1, 0], [0, 0.5, 0.1, 1]])
    Q = L @ L.T

    def best(f):
        vals = []
        for z in itertools.product((0, 1), repeat=4):
            if sum(z) == 2:
                vals.append(min(f(np.array(z, float) + np.r_[s, 0, 0, 0]) for s in np.linspace(-0.3, 0.3, 6001)))
        return min(vals)

    for kind in ("cone", "quadratic"):
        prog = MathematicalProgram()
        x = prog.NewBinaryVariables(4, "x")
        s = prog.NewContinuousVariables(1, "s")
        prog.AddBoundingBoxConstraint(-0.3, 0.3, s)
        prog.AddLinearEqualityConstraint(np.ones((1, 4)), [2.0], x)
        y = np.r_[x, s]                                    # x + s e₀ − a = A y − a
        A = np.c_[np.eye(4), np.eye(4)[:, :1]]
        if kind == "cone":
            t = prog.NewContinuousVariables(1, "t")
            prog.AddLorentzConeConstraint(np.r_[np.eye(1, 6, 5), np.c_[A, np.zeros((4, 1))]], np.r_[0.0, -a],
                                          np.r_[y, t])
            prog.AddLinearCost([1.0], 0.0, t)
            expected = best(lambda v: np.linalg.norm(v - a))
        else:
            prog.AddQuadraticErrorCost(A.T @ Q @ A, np.linalg.lstsq(A, a, rcond=None)[0], y)
            expected = best(lambda v: (v - a) @ Q @ (v - a))
        result = Solve(prog)
        assert result.is_success() and result.get_solver_id().name() == "SCIP", kind
        assert result.get_optimal_cost() == pytest.approx(expected, abs=1e-5), kind
        assert result.get_solver_details()["max_violation"] < 1e-6


def test_programs_the_mixed_integer_path_refuses():
    class Circle(Constraint):
        def __init__(self):
            super().__init__(1, 2, 1.0, 1.0)

        def _eval(self, x, with_gradient):
            return np.array([x @ x]), (2 * x[None, :] if with_gradient else None)

    prog = MathematicalProgram()
    b = prog.NewBinaryVariables(2)
    prog.AddConstraint(Circle(), b)
    with pytest.raises(MixedIntegerSolveError, match="Circle"):
        Solve(prog)
    prog = MathematicalProgram()
    b = prog.NewBinaryVariables(2)
    prog.AddLorentzConeConstraint(np.eye(2), [1.0, 0.0], b)
    with pytest.raises(MixedIntegerSolveError, match="HiGHS solves mixed-integer linear"):
        Solve(prog, solver_options={"solver": "HiGHS"})
    with pytest.raises(ValueError, match="unknown solver_options"):
        Solve(prog, solver_options={"method": "SLSQP"})
    prog = MathematicalProgram()
    b = prog.NewBinaryVariables(2)
    prog.AddQuadraticCost(np.diag([1.0, -1.0]), [0.0, 0.0], b)
    with pytest.raises(MixedIntegerSolveError, match="not convex"):
        Solve(prog)


def test_cone_constraints_match_pydrake(check_gradient, pydrake):
    from pydrake.solvers import LorentzConeConstraint as DL
    from pydrake.solvers import RotatedLorentzConeConstraint as DR
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(4, 3)), rng.normal(size=4)
    for ours, theirs in ((LorentzConeConstraint(A, b), DL(A, b)), (RotatedLorentzConeConstraint(A, b), DR(A, b))):
        np.testing.assert_array_equal(ours.lower_bound(), theirs.lower_bound())
        np.testing.assert_array_equal(ours.upper_bound(), theirs.upper_bound())
        for _ in range(5):
            x = rng.normal(size=3)
            np.testing.assert_allclose(ours.Eval(x), theirs.Eval(x), rtol=1e-12, atol=1e-12)
            check_gradient(ours, x)


def test_gray_codes_and_logarithmic_sos2():
    """With y fixed to each code, the only λ that can be positive are the two ends of the interval whose
    reflected Gray code y is; a code no interval uses (3 intervals on 2 digits) is infeasible."""
    np.testing.assert_array_equal(CalculateReflectedGrayCodes(2), [[0, 0], [0, 1], [1, 1], [1, 0]])
    for n_interval in (4, 3):
        codes = CalculateReflectedGrayCodes(2)
        for m, code in enumerate(codes):
            reachable = []
            for i in range(n_interval + 1):
                prog = MathematicalProgram()
                lam = prog.NewContinuousVariables(n_interval + 1, "lambda")
                y = AddLogarithmicSos2Constraint(prog, lam)
                prog.AddBoundingBoxConstraint(code, code, y)
                prog.AddLinearCost(-np.eye(n_interval + 1)[i], 0.0, lam)
                result = Solve(prog)
                if m >= n_interval:
                    assert result.get_solution_result() == SolutionResult.kInfeasibleConstraints
                    break
                assert result.is_success()
                if -result.get_optimal_cost() > 1e-9:
                    reachable.append(i)
            if m < n_interval:
                assert reachable == [m, m + 1], (n_interval, code)


def test_linear_sos2():
    def max_lambda(m, i):
        prog = MathematicalProgram()
        lam = prog.NewContinuousVariables(4, "lambda")
        y = prog.NewBinaryVariables(3, "y")
        AddSos2Constraint(prog, lam, y)
        prog.AddBoundingBoxConstraint(np.eye(3)[m], np.eye(3)[m], y)
        prog.AddLinearCost(-np.eye(4)[i], 0.0, lam)
        return -Solve(prog).get_optimal_cost()

    for m in range(3):
        assert [i for i in range(4) if max_lambda(m, i) > 1e-9] == [m, m + 1]


def rotation_program(n, binning=IntervalBinning.kLogarithmic):
    prog = MathematicalProgram()
    R = NewRotationMatrixVars(prog)
    generator = MixedIntegerRotationConstraintGenerator(Approach.kBilinearMcCormick, n, binning)
    ret = generator.AddToProgram(R, prog)
    return prog, R, generator, ret


SPECIAL = [np.eye(3), np.array([[0.0, -1, 0], [0, 0, 1], [-1, 0, 0]]),              # entries on the grid (0, ±1)
           Rotation.from_rotvec([0.0, 0.0, np.pi / 3]).as_matrix()]                   # ±½ and ±√3/2


@pytest.mark.parametrize("n, binning", [(1, IntervalBinning.kLogarithmic), (2, IntervalBinning.kLogarithmic),
                                        (2, IntervalBinning.kLinear), (3, IntervalBinning.kLogarithmic)])
def test_relaxation_contains_so3(n, binning):
    prog, R, generator, ret = rotation_program(n, binning)
    assert len(ret.B_[0][0]) == ((2 * n - 1).bit_length() if binning == IntervalBinning.kLogarithmic else 2 * n)
    np.testing.assert_allclose(generator.phi(), np.linspace(-1, 1, 2 * n + 1))
    for R_true in SPECIAL + list(Rotation.random(3, random_state=n).as_matrix()):
        pin = prog.AddBoundingBoxConstraint(R_true.reshape(-1), R_true.reshape(-1), R.reshape(-1))
        result = Solve(prog)
        prog.RemoveConstraint(pin)
        assert result.is_success(), R_true
        for i, j in itertools.product(range(3), range(3)):    # R = φᵀλ
            assert generator.phi() @ result.GetSolution(ret.lambda_[i][j]) == pytest.approx(R_true[i, j], abs=1e-7)


@pytest.mark.parametrize("M", [np.diag([1.0, 1.0, -1.0]), 0.5 * np.eye(3),
                               np.array([[1.0, 1, 0], [0, 0, 1], [0, 0, 0]])])
def test_relaxation_excludes_reflections_and_non_unit_matrices(M):
    prog, R, _, _ = rotation_program(2)
    prog.AddBoundingBoxConstraint(M.reshape(-1), M.reshape(-1), R.reshape(-1))
    assert Solve(prog).get_solution_result() == SolutionResult.kInfeasibleConstraints


def test_relaxation_tightens_with_more_intervals():
    """min ⟨C, R⟩ over the relaxation is a lower bound of the exact minimum over SO(3) (σ₁ + σ₂ + det·σ₃ of
    −C's SVD); the gap shrinks as num_intervals_per_half_axis grows, the same for either binning."""
    C = np.random.default_rng(3).normal(size=(3, 3))
    U, s, Vt = np.linalg.svd(-C)
    exact = -(s[0] + s[1] + np.sign(np.linalg.det(U @ Vt)) * s[2])
    gaps = {}
    for n, binning in [(1, IntervalBinning.kLogarithmic), (2, IntervalBinning.kLogarithmic),
                       (2, IntervalBinning.kLinear), (3, IntervalBinning.kLogarithmic)]:
        prog, R, _, _ = rotation_program(n, binning)
        prog.AddLinearCost(C.reshape(-1), 0.0, R.reshape(-1))
        result = Solve(prog)
        assert result.is_success()
        gaps[n, binning] = exact - result.get_optimal_cost()
    assert gaps[2, IntervalBinning.kLinear] == pytest.approx(gaps[2, IntervalBinning.kLogarithmic], abs=1e-7)
    g1, g2, g3 = (gaps[n, IntervalBinning.kLogarithmic] for n in (1, 2, 3))
    assert 0 <= g3 < g2 < g1, gaps
    assert g1 > 0.5 and g3 < 0.25


def test_unsupported_approach_and_bad_arguments():
    with pytest.raises(UnsupportedApproachError, match="kBoxSphereIntersection"):
        MixedIntegerRotationConstraintGenerator(Approach.kBoxSphereIntersection, 2, IntervalBinning.kLogarithmic)
    with pytest.raises(ValueError, match="must be >= 1"):
        MixedIntegerRotationConstraintGenerator(Approach.kBilinearMcCormick, 0, IntervalBinning.kLogarithmic)
    generator = MixedIntegerRotationConstraintGenerator(Approach.kBilinearMcCormick, 2, IntervalBinning.kLinear)
    assert generator.num_intervals_per_half_axis() == 2 and generator.interval_binning() == IntervalBinning.kLinear
    np.testing.assert_allclose(generator.phi_nonnegative(), [0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="3x3"):
        generator.AddToProgram(MathematicalProgram().NewContinuousVariables(3), MathematicalProgram())
