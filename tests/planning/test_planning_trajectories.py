"""PiecewisePolynomial (Drake's values, shapes and factories; the C⁴ quintic spline) and
PathParameterizedTrajectory's derivatives."""
import numpy as np
import pytest

from dynamics_cy.planning import PathParameterizedTrajectory, PiecewisePolynomial


def data(seed, rows=3, n=6):
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.uniform(0.3, 1.0, n)), rng.normal(size=(rows, n)), rng


def test_factories_match_drake(pydrake):
    t, y, rng = data(1)
    dy, v0, v1 = rng.normal(size=y.shape), rng.normal(size=3), rng.normal(size=3)
    D = pydrake.PiecewisePolynomial
    pairs = [(PiecewisePolynomial.ZeroOrderHold(t, y), D.ZeroOrderHold(t, y)),
             (PiecewisePolynomial.FirstOrderHold(t, y), D.FirstOrderHold(t, y)),
             (PiecewisePolynomial.CubicHermite(t, y, dy), D.CubicHermite(t, y, dy)),
             (PiecewisePolynomial.CubicWithContinuousSecondDerivatives(t, y, v0, v1),
              D.CubicWithContinuousSecondDerivatives(t, y, v0, v1))]
    ts = np.r_[t[0] - 0.5, np.linspace(t[0], t[-1], 41), t[-1] + 0.5]  # clamped outside the range
    for ours, theirs in pairs:
        assert ours.get_segment_times() == pytest.approx(theirs.get_segment_times())
        assert ours.rows() == theirs.rows() and ours.cols() == theirs.cols() == 1
        np.testing.assert_allclose(ours.vector_values(ts), theirs.vector_values(ts), atol=1e-12)
        for tau in ts:
            assert ours.value(tau).shape == (3, 1)
            for k in range(3):
                np.testing.assert_allclose(ours.EvalDerivative(tau, k), theirs.EvalDerivative(tau, k), atol=1e-10)
        np.testing.assert_allclose(ours.derivative(2).vector_values(ts), theirs.derivative(2).vector_values(ts),
                                   atol=1e-10)


def test_quintic_spline_is_c4_and_interpolates():
    t, y, rng = data(2)
    v0, v1, a0, a1 = (rng.normal(size=3) for _ in range(4))
    p = PiecewisePolynomial.QuinticWithContinuousFourthDerivatives(t, y, v0, v1, a0, a1)
    assert p.getSegmentPolynomialDegree(0) == 5 and p.get_number_of_segments() == len(t) - 1
    assert p.duration(1) == pytest.approx(t[2] - t[1])
    np.testing.assert_allclose(p.vector_values(t), y, atol=1e-12)
    np.testing.assert_allclose(p.EvalDerivative(t[0], 1)[:, 0], v0, atol=1e-12)
    np.testing.assert_allclose(p.EvalDerivative(t[-1], 1)[:, 0], v1, atol=1e-10)
    np.testing.assert_allclose(p.EvalDerivative(t[0], 2)[:, 0], a0, atol=1e-12)
    np.testing.assert_allclose(p.EvalDerivative(t[-1], 2)[:, 0], a1, atol=1e-9)
    for k in range(1, 5):
        d = p.derivative(k)
        for tb in t[1:-1]:  # left and right polynomials agree at the interior breaks
            i = d.get_segment_index(tb)
            left = sum(c * (tb - t[i - 1]) ** j for j, c in enumerate(d.coefficients()[i - 1]))
            np.testing.assert_allclose(left, d.EvalDerivative(tb, 0)[:, 0], atol=1e-8 * 10 ** k)


def test_clamped_cubic_matches_scipy():
    from scipy.interpolate import CubicSpline
    t, y, _ = data(3)
    p = PiecewisePolynomial.CubicWithContinuousSecondDerivatives(t, y, np.zeros(3), np.zeros(3))
    ts = np.linspace(t[0], t[-1], 33)
    np.testing.assert_allclose(p.vector_values(ts), CubicSpline(t, y, axis=1, bc_type="clamped")(ts), atol=1e-12)


def test_path_parameterized_derivatives_by_finite_differences():
    t, y, _ = data(4)
    path = PiecewisePolynomial.QuinticWithContinuousFourthDerivatives(t, y, *np.zeros((4, 3)))
    s_of_t = PiecewisePolynomial.CubicHermite([0.0, 2.0], [[t[0], t[-1]]], [[0.5, 3.0]])
    q = PathParameterizedTrajectory(path, s_of_t)
    assert (q.start_time(), q.end_time(), q.rows()) == (0.0, 2.0, 3)
    assert s_of_t.is_time_in_range(2.0) and not s_of_t.is_time_in_range(2.1)
    h = 1e-4
    for tau in (0.3, 0.9, 1.7):
        np.testing.assert_allclose(q.value(tau), path.value(s_of_t.value(tau)[0, 0]), atol=1e-14)
        for k in range(1, 4):
            fd = (q.EvalDerivative(tau + h, k - 1) - q.EvalDerivative(tau - h, k - 1)) / (2 * h)
            np.testing.assert_allclose(q.EvalDerivative(tau, k), fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(q.vector_values([0.3, 0.9]), np.hstack([q.value(0.3), q.value(0.9)]), atol=1e-14)


def test_rejects_bad_breaks():
    with pytest.raises(ValueError, match="strictly increasing"):
        PiecewisePolynomial.FirstOrderHold([0.0, 0.0], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="one column per break"):
        PiecewisePolynomial.FirstOrderHold([0.0, 1.0, 2.0], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="scalar"):
        PathParameterizedTrajectory(PiecewisePolynomial.FirstOrderHold([0, 1], np.zeros((2, 2))),
                                    PiecewisePolynomial.FirstOrderHold([0, 1], np.zeros((2, 2))))
