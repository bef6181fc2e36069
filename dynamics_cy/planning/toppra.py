"""Toppra: time-optimal path parameterization by reachability analysis (Pham & Pham, "A new approach
to time-optimal path parameterization based on reachability analysis", IEEE T-RO 2018), with the
names and semantics of pydrake.multibody.optimization.Toppra.

A path q(s), s ∈ [s₀, s_N], is discretized at gridpoints sᵢ (Δᵢ = sᵢ₊₁ - sᵢ). With x = ṡ² and
u = s̈ (constant on [sᵢ, sᵢ₊₁], so xᵢ₊₁ = xᵢ + 2Δᵢuᵢ), q̇ = q′ṡ and q̈ = q′u + q″x, every limit is

    first order:   x_lowerᵢ ≤ xᵢ ≤ x_upperᵢ                  (velocities)
    second order:  lowerᵢ ≤ aᵢ u + bᵢ x + cᵢ ≤ upperᵢ        (accelerations, torques)

kCollocation imposes a second-order row at gridpoint i on (uᵢ, xᵢ); kInterpolation imposes it also
at gridpoint i + 1 on (uᵢ, xᵢ + 2Δᵢuᵢ). The backward pass computes the controllable sets
Kᵢ = [xᵢ_min, xᵢ_max] from K_N = {0}; the greedy forward pass takes from x₀ = 0 the largest uᵢ that keeps
xᵢ₊₁ in Kᵢ₊₁. Each stage's LP over (u, x) is solved exactly in closed form: for fixed x the feasible u
form an interval [max of lower lines, min of upper lines] and x is feasible iff every lower line lies
below every upper line, a set of half-lines in x. The x-bounds among a stage's own rows are computed
for all stages at once; the backward pass only adds the two rows from Kᵢ₊₁.

As in Drake: paths must have q̇ = v (no quaternion joints), ṡ is capped at 1e8, and the result s(t) is
a piecewise quadratic (constant s̈ per stage) starting at the path's start time. Joint damping is
not part of the torque model (τ = M q̈ + C q̇ - τ_g, from dynamics_cy's inverse dynamics).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynamics_cy import JacobianWrtVariable
from dynamics_cy.enums import DrakeEnum

from .kinematics import check_frame, qdot_is_v
from .program import Binding, MathematicalProgram
from .trajectories import PiecewisePolynomial

_X_MAX = 1e16  # ṡ ≤ 1e8


class ToppraDiscretization(DrakeEnum):
    kCollocation = 0
    kInterpolation = 1


@dataclass
class CalcGridPointsOptions:
    """Gridpoint selection for Toppra.CalcGridPoints (Drake's defaults)."""

    max_err: float = 1e-3
    max_iter: int = 100
    max_seg_length: float = 0.05
    min_points: int = 100


@dataclass
class PathConstraint:
    """lower ≤ a u + b x + c ≤ upper at every gridpoint, arrays (gridpoints, rows); a = 0 for first-order
    (velocity) constraints. What Toppra keeps of each Add* call."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    discretization: ToppraDiscretization
    first_order: bool = False


def _speed_bounds(r: np.ndarray, lower, upper) -> tuple[np.ndarray, np.ndarray]:
    """Bounds (x_lo, x_hi) on x = ṡ² (ṡ ≥ 0) from lower ≤ r ṡ ≤ upper for all columns of r (an empty set
    comes out as x_lo > x_hi)."""
    lo = np.broadcast_to(np.asarray(lower, float), r.shape)
    hi = np.broadcast_to(np.asarray(upper, float), r.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        top = np.where(r > 0, hi / r, np.where(r < 0, lo / r, np.inf))     # ṡ ≤ top
        bottom = np.where(r > 0, lo / r, np.where(r < 0, hi / r, -np.inf))  # ṡ ≥ bottom
    empty = (top < 0) | ((r == 0) & ((lo > 0) | (hi < 0)))
    x_hi = np.where(empty, 0.0, np.square(np.minimum(top, 1e8)))
    x_lo = np.where(empty, 1.0, np.where(bottom > 0, np.square(bottom), 0.0))
    return x_lo.max(axis=1), x_hi.min(axis=1)


def _half_lines(p: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The x-interval of {x : p x ≤ r} over the last axis (empty: lo > hi)."""
    ratio = r / p
    hi = np.where(p > 0, ratio, np.inf)
    lo = np.where(p < 0, ratio, -np.inf)
    hi = np.where((p == 0) & (r < 0), -np.inf, hi)
    return lo.max(axis=-1, initial=-np.inf), hi.min(axis=-1, initial=np.inf)


class Toppra:
    """Time-optimal parameterization of path (a PiecewisePolynomial q(s) with plant.num_positions()
    rows) for plant at the given gridpoints."""

    def __init__(self, path, plant, gridpoints):
        if not qdot_is_v(plant):
            raise ValueError("Toppra: the plant must have q̇ = v (no quaternion or roll-pitch-yaw joints)")
        if path.rows() != plant.num_positions():
            raise ValueError(f"Toppra: the path has {path.rows()} rows; the plant has {plant.num_positions()} "
                             "positions")
        s = np.asarray(gridpoints, dtype=float).reshape(-1)
        if s.shape[0] < 2 or not np.all(np.diff(s) > 0):
            raise ValueError("Toppra: gridpoints must be at least two strictly increasing values")
        if not (np.isclose(s[0], path.start_time()) and np.isclose(s[-1], path.end_time())):
            raise ValueError(f"Toppra: the gridpoints must start at the path's start ({path.start_time()}) and "
                             f"end at its end ({path.end_time()}); got [{s[0]}, {s[-1]}]")
        self._path, self._plant, self._s = path, plant, s
        self._q = path.vector_values(s).T
        self._dq = path.derivative(1).vector_values(s).T
        self._ddq = path.derivative(2).vector_values(s).T
        self._constraints: list[PathConstraint] = []
        self._k = plant.kernels()
        # Drake's per-stage LPs, backward on [x, u] and forward on u, of which the Add* methods return the
        # Bindings; Drake rewrites their coefficients at each gridpoint while solving, ours solves the stages
        # in closed form from self._constraints, so they keep the placeholders Drake creates them with.
        self._backward_prog, self._forward_prog = MathematicalProgram(), MathematicalProgram()
        self._backward_xu = np.r_[self._backward_prog.NewContinuousVariables(1, "x"),
                                  self._backward_prog.NewContinuousVariables(1, "u")]
        self._forward_u = self._forward_prog.NewContinuousVariables(1, "u")

    @staticmethod
    def CalcGridPoints(path, options: CalcGridPointsOptions | None = None) -> np.ndarray:
        """Gridpoints from bisection: a segment is split at its midpoint while longer than max_seg_length
        or while max|q″(mid)| Δ²/2 > max_err (at most max_iter rounds), then every segment is split until
        there are at least min_points."""
        o = options or CalcGridPointsOptions()
        ddq = path.derivative(2)
        s = np.array([path.start_time(), path.end_time()])
        for _ in range(o.max_iter):
            d = np.diff(s)
            mid = s[:-1] + 0.5 * d
            err = 0.5 * np.abs(ddq.vector_values(mid)).max(axis=0) * d ** 2
            split = (d > o.max_seg_length) | (err > o.max_err)
            if not split.any():
                break
            s = np.sort(np.r_[s, mid[split]])
        while s.shape[0] < o.min_points:
            s = np.sort(np.r_[s, s[:-1] + 0.5 * np.diff(s)])
        return s

    # --- constraints -------------------------------------------------------------------------
    def _add(self, a, b, c, lower, upper, discretization, first_order: bool = False) -> tuple[Binding, Binding]:
        """Keeps the PathConstraint; returns the (backward, forward) Binding[LinearConstraint] pair."""
        shape = np.shape(b)
        con = PathConstraint(np.broadcast_to(a, shape).astype(float), np.asarray(b, float),
                             np.broadcast_to(c, shape).astype(float), np.broadcast_to(lower, shape).astype(float),
                             np.broadcast_to(upper, shape).astype(float), ToppraDiscretization(discretization),
                             first_order)
        self._constraints.append(con)
        rows = shape[1] * (2 if con.discretization == ToppraDiscretization.kInterpolation else 1)
        zero = np.zeros(rows)
        return (self._backward_prog.AddLinearConstraint(np.zeros((rows, 2)), zero, zero, self._backward_xu),
                self._forward_prog.AddLinearConstraint(np.zeros((rows, 1)), zero, zero, self._forward_u))

    def _add_first_order(self, x_lo, x_hi) -> Binding:
        """Keeps the bounds on x; returns the Binding[BoundingBoxConstraint] on x."""
        ones = np.ones((self._s.shape[0], 1))
        self._add(0.0, ones, 0.0, x_lo[:, None], x_hi[:, None], ToppraDiscretization.kCollocation, True)
        return self._backward_prog.AddBoundingBoxConstraint(0.0, 1.0, self._backward_xu[:1])

    def _limits(self, limit, n: int, what: str) -> np.ndarray:
        """A constant limit (n,) or a trajectory, as (gridpoints, n); ±inf outside the trajectory's range."""
        if hasattr(limit, "vector_values"):
            inside = (self._s >= limit.start_time()) & (self._s <= limit.end_time())
            if not inside.any():
                raise ValueError(f"Toppra: the {what} trajectory's time range does not overlap the path")
            return limit.vector_values(self._s).T, inside
        v = np.asarray(limit, dtype=float).reshape(-1)
        if v.shape[0] != n:
            raise ValueError(f"Toppra: {what} has {v.shape[0]} elements; expected {n}")
        return np.broadcast_to(v, (self._s.shape[0], n)), np.ones(self._s.shape[0], dtype=bool)

    def _both_limits(self, lower, upper, n: int, what: str):
        lo, lo_in = self._limits(lower, n, f"{what} lower limit")
        hi, hi_in = self._limits(upper, n, f"{what} upper limit")
        inside = (lo_in & hi_in)[:, None]
        if np.any(lo[inside[:, 0]] > hi[inside[:, 0]]):
            raise ValueError(f"Toppra: a {what} lower limit exceeds its upper limit")
        return np.where(inside, lo, -np.inf), np.where(inside, hi, np.inf)

    def AddJointVelocityLimit(self, lower_limit, upper_limit) -> Binding:
        """lower ≤ q̇ = q′ṡ ≤ upper, as bounds on x."""
        lo, hi = self._both_limits(lower_limit, upper_limit, self._q.shape[1], "joint velocity")
        return self._add_first_order(*_speed_bounds(self._dq, lo, hi))

    def AddJointAccelerationLimit(self, lower_limit, upper_limit,
                                  discretization=ToppraDiscretization.kInterpolation) -> tuple[Binding, Binding]:
        """lower ≤ q̈ = q′u + q″x ≤ upper."""
        lo, hi = self._both_limits(lower_limit, upper_limit, self._q.shape[1], "joint acceleration")
        return self._add(self._dq, self._ddq, 0.0, lo, hi, discretization)

    def AddJointTorqueLimit(self, lower_limit, upper_limit,
                            discretization=ToppraDiscretization.kInterpolation) -> tuple[Binding, Binding]:
        """lower ≤ τ = M(q)q̈ + C(q, q̇)q̇ - τ_g(q) ≤ upper: with ID(q, v, v̇) = M v̇ + C v - τ_g,
        c = ID(q, 0, 0), a = ID(q, 0, q′) - c and b = ID(q, q′, q″) - c."""
        lo, hi = self._both_limits(lower_limit, upper_limit, self._q.shape[1], "joint torque")
        n, zero = self._q.shape, np.zeros(self._q.shape[1])
        a, b, c = np.empty(n), np.empty(n), np.empty(n)
        for i, (q, dq, ddq) in enumerate(zip(self._q, self._dq, self._ddq)):
            q, dq, ddq = np.ascontiguousarray(q), np.ascontiguousarray(dq), np.ascontiguousarray(ddq)
            self._k.inverse_dynamics(q, zero, zero, c[i])
            self._k.inverse_dynamics(q, zero, dq, a[i])
            self._k.inverse_dynamics(q, dq, ddq, b[i])
        return self._add(a - c, b - c, c, lo, hi, discretization)

    def _frame_jacobians(self, frame) -> np.ndarray:
        check_frame(self._plant, frame, "Toppra")
        J = np.empty((self._s.shape[0], 6, self._q.shape[1]))
        for i, q in enumerate(self._q):
            self._k.jacobian(np.ascontiguousarray(q), frame, J[i])
        return J

    def AddFrameVelocityLimit(self, constraint_frame, lower_limit, upper_limit) -> Binding:
        """lower ≤ V_WF = [w_WF; v_WF] (in W) ≤ upper, with V_WF = J_WF q′ ṡ; as bounds on x."""
        lo, hi = self._both_limits(lower_limit, upper_limit, 6, "frame velocity")
        r = np.einsum("gij,gj->gi", self._frame_jacobians(constraint_frame), self._dq)
        return self._add_first_order(*_speed_bounds(r, lo, hi))

    def AddFrameTranslationalSpeedLimit(self, constraint_frame, upper_limit) -> Binding:
        """|v_WF| ≤ upper_limit (a float or a scalar trajectory): x ≤ upper² / |Jv_WF q′|²."""
        if hasattr(upper_limit, "vector_values"):
            hi, inside = self._limits(upper_limit, 1, "frame speed upper limit")
            hi = np.where(inside, hi[:, 0], np.inf)
        else:
            hi = np.full(self._s.shape[0], float(upper_limit))
        v = np.einsum("gij,gj->gi", self._frame_jacobians(constraint_frame)[:, 3:], self._dq)
        speed = np.linalg.norm(v, axis=1)
        return self._add_first_order(*_speed_bounds(speed[:, None], -np.inf, hi[:, None]))

    def AddFrameAccelerationLimit(self, constraint_frame, lower_limit, upper_limit,
                                  discretization=ToppraDiscretization.kInterpolation) -> tuple[Binding, Binding]:
        """lower ≤ A_WF = [α_WF; a_WF] ≤ upper, with A_WF = J q̈ + J̇ q̇ = J q′ u + (J q″ + J̇(q, q′) q′) x;
        the bias J̇ q′ is dynamics_cy's CalcBiasSpatialAcceleration at v = q′."""
        lo, hi = self._both_limits(lower_limit, upper_limit, 6, "frame acceleration")
        J = self._frame_jacobians(constraint_frame)
        plant, context = self._plant, self._plant.CreateDefaultContext()
        W = plant.world_frame()
        bias = np.empty((self._s.shape[0], 6))
        for i, (q, dq) in enumerate(zip(self._q, self._dq)):
            plant.SetPositions(context, q)
            plant.SetVelocities(context, dq)
            bias[i] = plant.CalcBiasSpatialAcceleration(context, JacobianWrtVariable.kV, constraint_frame,
                                                        np.zeros(3), W, W).get_coeffs()
        a = np.einsum("gij,gj->gi", J, self._dq)
        b = np.einsum("gij,gj->gi", J, self._ddq) + bias
        return self._add(a, b, 0.0, lo, hi, discretization)

    # --- solve -------------------------------------------------------------------------------
    def _stage_rows(self):
        """(a, b, c, lower, upper) of every stage i = 0..N-1, arrays (N, rows)."""
        d = np.diff(self._s)[:, None]
        parts = []
        for con in self._constraints:
            if con.first_order:
                continue
            parts.append((con.a[:-1], con.b[:-1], con.c[:-1], con.lower[:-1], con.upper[:-1]))
            if con.discretization == ToppraDiscretization.kInterpolation:
                parts.append((con.a[1:] + 2 * d * con.b[1:], con.b[1:], con.c[1:], con.lower[1:], con.upper[1:]))
        if not parts:
            z = np.zeros((d.shape[0], 0))
            return z, z, z, z, z
        return tuple(np.concatenate([p[k] for p in parts], axis=1) for k in range(5))

    def _stage_lines(self, x_lo: np.ndarray, x_hi: np.ndarray):
        """Second-order rows as lines in (x, u): lower lines u ≥ αL + βL x and upper lines u ≤ αU + βU x
        (N x rows, absent lines at ∓inf), and each stage's own x-interval [stage_lo, stage_hi]."""
        a, b, c, lo, hi = self._stage_rows()
        N = a.shape[0]
        scale = np.maximum(np.abs(a).max(axis=0, initial=0.0), 1e-300)
        tiny = np.abs(a) <= 1e-10 * scale  # rows that bound x alone: lo - c ≤ b x ≤ hi - c
        sa = np.where(tiny, 1.0, a)
        al_lo, al_hi, beta = (lo - c) / sa, (hi - c) / sa, -b / sa
        pos = a > 0
        aL = np.where(tiny, -np.inf, np.where(pos, al_lo, al_hi))
        aU = np.where(tiny, np.inf, np.where(pos, al_hi, al_lo))
        bL = np.where(tiny | ~np.isfinite(aL), 0.0, beta)
        bU = np.where(tiny | ~np.isfinite(aU), 0.0, beta)
        tiny2 = np.repeat(tiny, 2, axis=1)
        xl, xh = _half_lines(np.where(tiny2, np.stack([b, -b], -1).reshape(N, -1), 0.0),
                             np.where(tiny2, np.stack([hi - c, c - lo], -1).reshape(N, -1), np.inf))
        # every lower line below every upper line: (βL - βU) x ≤ αU - αL
        pl, ph = _half_lines((bL[:, :, None] - bU[:, None, :]).reshape(N, -1),
                             (aU[:, None, :] - aL[:, :, None]).reshape(N, -1))
        return aL, bL, aU, bU, np.maximum.reduce([xl, pl, x_lo[:-1]]), np.minimum.reduce([xh, ph, x_hi[:-1]])

    def SolvePathParameterization(self, s_dot_start: float = 0.0, s_dot_end: float = 0.0) -> PiecewisePolynomial | None:
        """s(t) of the time-optimal traversal from ṡ(0) = s_dot_start to ṡ(T) = s_dot_end (default: rest to
        rest), or None when no parameterization satisfies the constraints."""
        if not (s_dot_start >= 0 and s_dot_end >= 0):
            raise ValueError(f"SolvePathParameterization: s_dot_start and s_dot_end must be >= 0, got "
                             f"{s_dot_start}, {s_dot_end}")
        x_start, x_end = float(s_dot_start) ** 2, float(s_dot_end) ** 2
        s, N = self._s, self._s.shape[0] - 1
        delta = np.diff(s)
        x_lo, x_hi = np.zeros(N + 1), np.full(N + 1, _X_MAX)  # first-order bounds at every gridpoint
        for con in self._constraints:
            if con.first_order:
                x_lo = np.maximum(x_lo, ((con.lower - con.c) / con.b).max(axis=1))
                x_hi = np.minimum(x_hi, ((con.upper - con.c) / con.b).min(axis=1))
        if not x_lo[N] <= x_end <= x_hi[N]:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            aL, bL, aU, bU, stage_lo, stage_hi = self._stage_lines(x_lo, x_hi)
            # The rows x + 2Δu ∈ [k_lo, k_hi] are the lines u ≥ -g k_lo + g x and u ≤ -g k_hi + g x,
            # g = -1/(2Δ). Against the upper lines: (g - βU) x ≤ αU + g k_lo; against the lower lines:
            # (βL - g) x ≤ -αL - g k_hi. Each is x ≤ A + B k (p > 0) or x ≥ A + B k (p < 0).
            g = (-0.5 / delta)[:, None]
            p = np.hstack([g - bU, bL - g])
            A = np.hstack([aU, -aL]) / p
            B_lo = np.hstack([g / (g - bU), np.zeros_like(aL)])
            B_hi = np.hstack([np.zeros_like(aU), -g / (bL - g)])
            up, down = p > 0, p < 0
            hiA, hiBl, hiBh = np.where(up, A, np.inf), np.where(up, B_lo, 0.0), np.where(up, B_hi, 0.0)
            loA, loBl, loBh = np.where(down, A, -np.inf), np.where(down, B_lo, 0.0), np.where(down, B_hi, 0.0)
        K = np.zeros((N + 1, 2))  # backward pass: the controllable sets, K_N = {ṡ_end²}
        K[N] = x_end
        for i in range(N - 1, -1, -1):
            k_lo, k_hi = K[i + 1]
            top = min(stage_hi[i], (hiA[i] + k_lo * hiBl[i] + k_hi * hiBh[i]).min(initial=np.inf))
            bottom = max(stage_lo[i], (loA[i] + k_lo * loBl[i] + k_hi * loBh[i]).max(initial=-np.inf), 0.0)
            if bottom > top * (1 + 1e-9) + 1e-12:
                return None
            K[i] = (min(bottom, top), top)
        if not K[0, 0] - 1e-12 <= x_start <= K[0, 1] * (1 + 1e-9) + 1e-12:
            return None
        x = np.zeros(N + 1)  # forward pass: from x₀ = ṡ_start² the largest u keeping x_{i+1} in K_{i+1}
        x[0] = x_start
        with np.errstate(invalid="ignore"):
            for i in range(N):
                u_max = min((aU[i] + bU[i] * x[i]).min(initial=np.inf), (K[i + 1, 1] - x[i]) / (2 * delta[i]))
                x[i + 1] = min(max(x[i] + 2 * delta[i] * u_max, K[i + 1, 0]), K[i + 1, 1])
        u = np.diff(x) / (2 * delta)
        sd = np.sqrt(x)
        if np.any(sd[:-1] + sd[1:] <= 0.0):
            return None
        t = np.r_[0.0, np.cumsum(2 * delta / (sd[:-1] + sd[1:]))] + self._path.start_time()
        return PiecewisePolynomial(t, np.stack([s[:-1], sd[:-1], 0.5 * u], axis=1)[:, :, None])
