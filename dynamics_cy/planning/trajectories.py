"""Vector-valued trajectories with pydrake.trajectories' names: PiecewisePolynomial (joint-space paths
through waypoints, and the s(t) Toppra returns) and PathParameterizedTrajectory q(s(t)).

As in Drake, value(t) and EvalDerivative(t, k) return a column (rows x 1) and vector_values(ts) a
(rows x len(ts)) matrix; times outside [start_time, end_time] are clamped to the range (derivatives
too: they are those of the first or last segment at its end). Only column vectors (cols() == 1) are
supported.
"""
from __future__ import annotations

import bisect
from math import comb, perm

import numpy as np
from scipy.linalg import solve_banded


def _breaks(breaks) -> np.ndarray:
    b = np.asarray(breaks, dtype=float).reshape(-1)
    if b.shape[0] < 2 or not np.all(np.diff(b) > 0) or not np.all(np.isfinite(b)):
        raise ValueError(f"breaks must be at least two strictly increasing finite times, got {b}")
    return b


def _samples(samples, n: int) -> np.ndarray:
    """samples as (rows, n): one column per break (a 1-D array is one row)."""
    y = np.asarray(samples, dtype=float)
    y = y.reshape(1, -1) if y.ndim == 1 else y
    if y.shape[1] != n:
        raise ValueError(f"samples must have one column per break ({n}), got shape {y.shape}")
    return y


class PiecewisePolynomial:
    """p(t) = Σₖ cₖ,ᵢ (t - tᵢ)ᵏ on [tᵢ, tᵢ₊₁], from coefficients (segments, degree + 1, rows)."""

    def __init__(self, breaks, coefficients):
        self._t = _breaks(breaks)
        c = np.asarray(coefficients, dtype=float)
        if c.ndim != 3 or c.shape[0] != self._t.shape[0] - 1:
            raise ValueError(f"coefficients must be (segments={self._t.shape[0] - 1}, degree + 1, rows), got {c.shape}")
        self._c = c
        self._breaks_list = self._t.tolist()
        self._tables: dict[int, tuple] = {}

    # --- construction ------------------------------------------------------------------------
    @staticmethod
    def ZeroOrderHold(breaks, samples) -> "PiecewisePolynomial":
        t = _breaks(breaks)
        y = _samples(samples, t.shape[0])
        return PiecewisePolynomial(t, y.T[:-1, None, :])

    @staticmethod
    def FirstOrderHold(breaks, samples) -> "PiecewisePolynomial":
        t = _breaks(breaks)
        y = _samples(samples, t.shape[0])
        h = np.diff(t)[:, None]
        return PiecewisePolynomial(t, np.stack([y.T[:-1], np.diff(y, axis=1).T / h], axis=1))

    @staticmethod
    def CubicHermite(breaks, samples, samples_dot) -> "PiecewisePolynomial":
        """The cubic through samples with derivatives samples_dot at the breaks (C¹)."""
        t = _breaks(breaks)
        y, m = _samples(samples, t.shape[0]).T, _samples(samples_dot, t.shape[0]).T
        h = np.diff(t)[:, None]
        dy = (y[1:] - y[:-1]) / h
        c2 = (3 * dy - 2 * m[:-1] - m[1:]) / h
        c3 = (m[:-1] + m[1:] - 2 * dy) / h ** 2
        return PiecewisePolynomial(t, np.stack([y[:-1], m[:-1], c2, c3], axis=1))

    @staticmethod
    def CubicWithContinuousSecondDerivatives(breaks, samples, sample_dot_at_start,
                                             sample_dot_at_end) -> "PiecewisePolynomial":
        """The C² cubic spline through samples with the given end derivatives (a clamped spline)."""
        t = _breaks(breaks)
        y = _samples(samples, t.shape[0]).T
        n = t.shape[0]
        m = np.empty_like(y)
        m[0] = np.asarray(sample_dot_at_start, float).reshape(-1)
        m[-1] = np.asarray(sample_dot_at_end, float).reshape(-1)
        if n > 2:
            g = 1.0 / np.diff(t)
            dy = np.diff(y, axis=0) * (g ** 2)[:, None]
            rhs = 3 * (dy[:-1] + dy[1:])
            rhs[0] -= g[0] * m[0]
            rhs[-1] -= g[-1] * m[-1]
            band = np.zeros((3, n - 2))
            band[0, 1:], band[1], band[2, :-1] = g[1:-1], 2 * (g[:-1] + g[1:]), g[1:-1]
            m[1:-1] = solve_banded((1, 1), band, rhs)
        return PiecewisePolynomial.CubicHermite(t, y.T, m.T)

    @staticmethod
    def QuinticWithContinuousFourthDerivatives(breaks, samples, sample_dot_at_start, sample_dot_at_end,
                                               sample_ddot_at_start, sample_ddot_at_end) -> "PiecewisePolynomial":
        """The C⁴ quintic spline through samples with the given end first and second derivatives
        (our addition; Drake has no quintic spline factory)."""
        t = _breaks(breaks)
        y = _samples(samples, t.shape[0]).T
        n, rows = t.shape[0], y.shape[1]
        ends = [np.asarray(v, float).reshape(-1) for v in (sample_dot_at_start, sample_dot_at_end,
                                                              sample_ddot_at_start, sample_ddot_at_end)]

        def knots(z):  # z: interior (n - 2, 2, rows) [velocity, acceleration] -> (n, 2, rows)
            out = np.empty((n, 2, rows))
            out[0], out[-1], out[1:-1] = (ends[0], ends[2]), (ends[1], ends[3]), z
            return out

        def jumps(z):  # jumps of the third and fourth derivatives at the interior breaks, affine in z
            c = _quintic_hermite(t, y, knots(z))
            h = np.diff(t)[:-1, None]
            d3 = 6 * c[:-1, 3] + 24 * c[:-1, 4] * h + 60 * c[:-1, 5] * h ** 2 - 6 * c[1:, 3]
            d4 = 24 * c[:-1, 4] + 120 * c[:-1, 5] * h - 24 * c[1:, 4]
            return np.concatenate([d3, d4])

        k = 2 * (n - 2)
        z0 = np.zeros((n - 2, 2, rows))
        b = jumps(z0)
        A = np.empty((k, k, rows))
        for j in range(k):
            e = np.zeros(k)
            e[j] = 1.0
            A[:, j] = jumps(np.broadcast_to(e.reshape(n - 2, 2)[:, :, None], z0.shape)) - b
        z = np.stack([np.linalg.solve(A[:, :, r], -b[:, r]) for r in range(rows)], axis=-1) if k else z0
        return PiecewisePolynomial(t, _quintic_hermite(t, y, knots(z.reshape(n - 2, 2, rows))))

    # --- evaluation --------------------------------------------------------------------------
    def rows(self) -> int:
        return self._c.shape[2]

    def cols(self) -> int:
        return 1

    def start_time(self) -> float:
        return float(self._t[0])

    def end_time(self) -> float:
        return float(self._t[-1])

    def get_number_of_segments(self) -> int:
        return self._c.shape[0]

    def get_segment_times(self) -> list[float]:
        return list(self._breaks_list)

    def getSegmentPolynomialDegree(self, segment_index: int) -> int:
        return self._c.shape[1] - 1

    def duration(self, segment_index: int) -> float:
        return float(self._t[segment_index + 1] - self._t[segment_index])

    def is_time_in_range(self, t: float) -> bool:
        return self._t[0] <= t <= self._t[-1]

    def get_segment_index(self, t: float) -> int:
        return min(max(bisect.bisect_right(self._breaks_list, t) - 1, 0), self._c.shape[0] - 1)

    def coefficients(self) -> np.ndarray:
        """The (segments, degree + 1, rows) coefficients (our addition)."""
        return self._c.copy()

    def _derivatives(self, t: float, n: int) -> np.ndarray:
        """[p(t), p′(t), …, p⁽ⁿ⁾(t)] as (n + 1, rows): T @ c with T[k, j] = j!/(j-k)! τ^(j-k)."""
        table = self._tables.get(n)
        if table is None:
            degree = self._c.shape[1] - 1
            factors = np.array([[perm(j, k) for j in range(degree + 1)] for k in range(n + 1)], dtype=float)
            powers = np.maximum(np.arange(degree + 1)[None, :] - np.arange(n + 1)[:, None], 0)
            table = self._tables[n] = (factors, powers)
        i = self.get_segment_index(t)
        tau = min(max(t, self._breaks_list[0]), self._breaks_list[-1]) - self._breaks_list[i]
        return (table[0] * tau ** table[1]) @ self._c[i]

    def value(self, t: float) -> np.ndarray:
        return self._derivatives(float(t), 0)[0][:, None]

    def EvalDerivative(self, t: float, derivative_order: int = 1) -> np.ndarray:
        return self._derivatives(float(t), int(derivative_order))[-1][:, None]

    def vector_values(self, t) -> np.ndarray:
        """(rows, len(t)) values at the times t."""
        ts = np.clip(np.asarray(t, dtype=float).reshape(-1), self._t[0], self._t[-1])
        i = np.clip(np.searchsorted(self._t, ts, side="right") - 1, 0, self._c.shape[0] - 1)
        tau = (ts - self._t[i])[:, None]
        c = self._c[i]
        out = c[:, -1]
        for k in range(c.shape[1] - 2, -1, -1):
            out = out * tau + c[:, k]
        return out.T

    def derivative(self, derivative_order: int = 1) -> "PiecewisePolynomial":
        c = self._c
        for _ in range(int(derivative_order)):
            deg = c.shape[1] - 1
            c = c[:, 1:] * np.arange(1, deg + 1)[None, :, None] if deg > 0 else np.zeros_like(c)
        return PiecewisePolynomial(self._t, c)

    def __repr__(self) -> str:
        return (f"<PiecewisePolynomial rows={self.rows()} segments={self.get_number_of_segments()} "
                f"degree={self._c.shape[1] - 1} t=[{self.start_time()}, {self.end_time()}]>")


def _quintic_hermite(t: np.ndarray, y: np.ndarray, va: np.ndarray) -> np.ndarray:
    """Coefficients (segments, 6, rows) of the quintics matching y, velocity and acceleration va[:, 0],
    va[:, 1] at both ends of every segment."""
    h = np.diff(t)[:, None]
    y0, y1, v0, v1, a0, a1 = y[:-1], y[1:], va[:-1, 0], va[1:, 0], va[:-1, 1], va[1:, 1]
    d0 = y1 - y0 - v0 * h - 0.5 * a0 * h ** 2
    d1 = v1 - v0 - a0 * h
    d2 = a1 - a0
    c3 = (10 * d0 - 4 * d1 * h + 0.5 * d2 * h ** 2) / h ** 3
    c4 = (-15 * d0 + 7 * d1 * h - d2 * h ** 2) / h ** 4
    c5 = (6 * d0 - 3 * d1 * h + 0.5 * d2 * h ** 2) / h ** 5
    return np.stack([y0, v0, 0.5 * a0, c3, c4, c5], axis=1)


class PathParameterizedTrajectory:
    """q(t) = path(s(t)) for a path q(s) and a scalar time scaling s(t) (pydrake.trajectories'
    PathParameterizedTrajectory); derivatives by Faà di Bruno's formula."""

    def __init__(self, path, time_scaling):
        if time_scaling.rows() != 1:
            raise ValueError(f"time_scaling must be scalar (1 row), got {time_scaling.rows()} rows")
        self._path, self._s = path, time_scaling

    def path(self):
        return self._path

    def time_scaling(self):
        return self._s

    def rows(self) -> int:
        return self._path.rows()

    def cols(self) -> int:
        return 1

    def start_time(self) -> float:
        return self._s.start_time()

    def end_time(self) -> float:
        return self._s.end_time()

    def value(self, t: float) -> np.ndarray:
        return self.EvalDerivative(t, 0)

    def EvalDerivative(self, t: float, derivative_order: int = 1) -> np.ndarray:
        """dⁿq/dtⁿ = Σₖ q⁽ᵏ⁾(s) Bₙ,ₖ(ṡ, s̈, …) with the partial Bell polynomials Bₙ,ₖ."""
        n = int(derivative_order)
        s = self._s._derivatives(float(t), n)[:, 0]
        q = self._path._derivatives(float(s[0]), n)
        if n == 0:
            return q[0][:, None]
        return (_bell(n, s[1:].tolist()) @ q)[:, None]

    def vector_values(self, t) -> np.ndarray:
        return self._path.vector_values(self._s.vector_values(t)[0])

    def __repr__(self) -> str:
        return f"<PathParameterizedTrajectory rows={self.rows()} t=[{self.start_time()}, {self.end_time()}]>"


def _bell(n: int, x: list[float]) -> np.ndarray:
    """[Bₙ,ₖ(x₁, …, xₙ₋ₖ₊₁) for k = 0..n], by Bₘ,ₖ = Σᵢ C(m-1, i-1) xᵢ Bₘ₋ᵢ,ₖ₋₁."""
    B = [[1.0] + [0.0] * n] + [[0.0] * (n + 1) for _ in range(n)]
    for m in range(1, n + 1):
        for k in range(1, m + 1):
            B[m][k] = sum(comb(m - 1, i - 1) * x[i - 1] * B[m - i][k - 1] for i in range(1, m - k + 2))
    return np.array(B[n])
