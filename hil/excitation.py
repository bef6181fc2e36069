"""The excitation trajectory for identification (`trajectory.type: excitation`, issue 29).

Per joint j a finite Fourier series (Swevers et al. 1997) of base frequency f_f, ω_l = 2π f_f l,
l = 1..L, windowed so that the robot starts and stops at rest:

    p_j(t)  = Σ_l (a_jl/ω_l) sin(ω_l t) − (b_jl/ω_l) cos(ω_l t)
    ṗ_j(t)  = Σ_l a_jl cos(ω_l t) + b_jl sin(ω_l t)
    p̈_j(t)  = Σ_l −a_jl ω_l sin(ω_l t) + b_jl ω_l cos(ω_l t)
    q_j(t)  = q0_j + w(t) p_j(t),  q̇ = ẇ p + w ṗ,  q̈ = ẅ p + 2 ẇ ṗ + w p̈

on 0 ≤ t ≤ T = periods/f_f, with w the quintic smoothstep over `ramp` seconds at each end (w = 1
between; w, ẇ, ẅ are 0 at both ends), and q = q0 at rest outside. Band-limited to L f_f by
construction (the window adds its own slow spectrum at the ends only).

The coefficients are drawn from `seed`, scaled inside the joint position, velocity and acceleration
limits (q − q0, q̇ and q̈ are linear in them) and the effort limits (the model's inverse-dynamics
torque, shrinking the scale until it fits), then, with `optimize`, chosen to minimise cond(W), W
stacking over sample times the regressor columns identification estimates: the payload block at a
frame (dynamics_cy's `payload_regressor`) and the joint friction (`friction_regressor`); by
L-BFGS-B with every limit, torque included, as a penalty, offline (at setup, or when it starts about
the position at start: Excitation). The optimised series is scaled back to FIT of the limits (room for
the tracking error and the sensor noise below the safety's velocity limit) and checked against all
of them. The tick (`sample`) evaluates the series into preallocated arrays.
"""
from __future__ import annotations

import logging

import numpy as np

from drivers.core import _control
from drivers.core.robot import actuated_joint_names, joint_label
from drivers.core.schema import ConfigError

from .trajectories import Hold, Source, feasible_duration

log = logging.getLogger(__name__)

KEY = "trajectory.excitation"
FIT = 0.8            # the initial guess and the optimised series use this share of the tightest limit
PENALTY = 1e3        # weight of the squared relative limit violations in the optimised cost
CHECKS_PER_CYCLE = 20   # limit-check samples per period of the highest harmonic
TORQUE_SHRINK, TORQUE_STEPS = 0.9, 20   # scaling down a series whose torque leaves the effort limits


def window(t: np.ndarray, T: float, ramp: float) -> tuple:
    """(w, ẇ, ẅ) at times t: the quintic smoothstep s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ rising over [0, ramp],
    1 between, falling over [T − ramp, T], 0 outside [0, T]."""
    t = np.asarray(t, dtype=float)
    rise = np.clip(t / ramp, 0.0, 1.0)
    fall = np.clip((T - t) / ramp, 0.0, 1.0)
    up = t < T - ramp if T > 2 * ramp else t < T / 2
    tau = np.where(up, rise, fall)
    sign = np.where(up, 1.0, -1.0)
    inside = (t > 0) & (t < T) & (tau < 1.0)
    w = tau ** 3 * (10 - 15 * tau + 6 * tau ** 2)
    wd = np.where(inside, sign * 30 * tau ** 2 * (1 - tau) ** 2 / ramp, 0.0)
    wdd = np.where(inside, 60 * tau * (1 - tau) * (1 - 2 * tau) / ramp ** 2, 0.0)
    return w, wd, wdd


class FourierSeries:
    """The windowed series' offsets from q0 for coefficients a, b (n, L): evaluated on a grid (setup)
    with `grid`, or at one time into preallocated arrays with `at` (the tick's, allocation-free)."""

    def __init__(self, a: np.ndarray, b: np.ndarray, base_frequency: float, duration: float, ramp: float):
        self.n, self.L = a.shape
        self.a, self.b = np.array(a, dtype=float), np.array(b, dtype=float)
        self.omega = 2 * np.pi * base_frequency * np.arange(1, self.L + 1)
        self.T, self.ramp = duration, ramp
        # [p; ṗ; p̈] (3n) = C @ [sin(ω t); cos(ω t)] (2L)
        w = self.omega
        self.C = np.ascontiguousarray(np.block([[self.a / w, -self.b / w], [self.b, self.a],
                                                [-self.a * w, self.b * w]]))
        self.phase, self.zero_L = np.zeros(self.L), np.zeros(self.L)
        self.sc = np.zeros(2 * self.L)
        self.sin, self.cos = self.sc[:self.L], self.sc[self.L:]
        self.out = np.zeros(3 * self.n)
        self.p, self.pd, self.pdd = self.out[:self.n], self.out[self.n:2 * self.n], self.out[2 * self.n:]
        self.zero_n = np.zeros(self.n)

    def grid(self, t: np.ndarray) -> tuple:
        """(Δq, q̇, q̈), each (len(t), n): q − q0 and its derivatives at the times t."""
        phase = np.outer(t, self.omega)
        S = self.C @ np.vstack([np.sin(phase).T, np.cos(phase).T])      # (3n, K)
        P, Pd, Pdd = S[:self.n].T, S[self.n:2 * self.n].T, S[2 * self.n:].T
        w, wd, wdd = (x[:, None] for x in window(t, self.T, self.ramp))
        return (np.ascontiguousarray(w * P), np.ascontiguousarray(wd * P + w * Pd),
                np.ascontiguousarray(wdd * P + 2 * wd * Pd + w * Pdd))

    def at(self, t: float, q0, q_d, v_d, a_d) -> None:
        """q_d, v_d, a_d at time t (s from the series' start), allocation-free."""
        if t <= 0.0 or t >= self.T:
            _control.quintic(q0, self.zero_n, 0.0, 1.0, q_d, v_d, a_d)     # at rest at q0
            return
        _control.add(self.zero_L, self.omega, t, self.phase)
        np.sin(self.phase, out=self.sin)
        np.cos(self.phase, out=self.cos)
        np.dot(self.C, self.sc, out=self.out)
        r = self.ramp
        if t < r or t > self.T - r:
            tau = t / r if t < r else (self.T - t) / r
            sign = 1.0 if t < r else -1.0
            w = tau * tau * tau * (10.0 - 15.0 * tau + 6.0 * tau * tau)
            wd = sign * 30.0 * tau * tau * (1.0 - tau) * (1.0 - tau) / r
            wdd = 60.0 * tau * (1.0 - tau) * (1.0 - 2.0 * tau) / (r * r)
        else:
            w, wd, wdd = 1.0, 0.0, 0.0
        _control.add(q0, self.p, w, q_d)
        _control.add(self.zero_n, self.pd, w, v_d)
        _control.add(v_d, self.p, wd, v_d)
        _control.add(self.zero_n, self.pdd, w, a_d)
        _control.add(a_d, self.pd, 2.0 * wd, a_d)
        _control.add(a_d, self.p, wdd, a_d)


class Limits:
    """The joint limits an excitation stays within: positions [lower, upper] (margins taken off),
    |q̇| ≤ v_max, |q̈| ≤ a_max, |τ| ≤ tau_max (the inverse dynamics, with the kernels); `names` the joints'."""

    def __init__(self, lower, upper, v_max, a_max, tau_max, kernels, names=None):
        self.names = names
        self.lower, self.upper = np.asarray(lower, float), np.asarray(upper, float)
        self.v_max, self.a_max, self.tau_max = (np.asarray(x, float) for x in (v_max, a_max, tau_max))
        self.kernels = kernels

    def fit(self, q0, dQ, V, A) -> float:
        """The largest factor by which the offsets dQ and V, A (linear in the coefficients) may be
        scaled and stay within the position, velocity and acceleration limits."""
        up, lo = self.upper - q0, q0 - self.lower
        if np.any(up < 0) or np.any(lo < 0):
            return 0.0
        with np.errstate(divide="ignore"):
            ratios = [up / dQ.max(0).clip(0), lo / (-dQ.min(0)).clip(0),
                      self.v_max / np.abs(V).max(0), self.a_max / np.abs(A).max(0)]
        return float(min(np.min(r) for r in ratios))

    def torques(self, Q, V, A) -> np.ndarray:
        """The inverse-dynamics torque (len(Q), n) at each sample (the model's, payload aside)."""
        tau = np.zeros_like(Q)
        for k in range(len(Q)):
            self.kernels.inverse_dynamics(Q[k], V[k], A[k], tau[k])
        return tau

    def violation(self, q0, t, dQ, V, A) -> str | None:
        """Why the trajectory q0 + dQ, V, A at times t leaves the limits (the first joint and time), or
        None."""
        Q = q0 + dQ
        tau = self.torques(Q, V, A)
        checks = (("position", Q, self.lower, self.upper, "rad"), ("velocity", V, -self.v_max, self.v_max, "rad/s"),
                  ("acceleration", A, -self.a_max, self.a_max, "rad/s²"),
                  ("torque", tau, -self.tau_max, self.tau_max, "N·m"))
        found = []
        for what, X, lo, hi, unit in checks:
            bad = np.argwhere((X < lo - 1e-12) | (X > hi + 1e-12))
            if bad.size:
                k, j = bad[0]
                found.append((k, f"{joint_label(self.names, j)} {what} {X[k, j]:.4g} {unit} leaves its limits "
                                 f"[{lo[j]:.4g}, {hi[j]:.4g}] at t = {t[k]:.3f} s"))
        return min(found)[1] if found else None

    def penalty(self, q0, dQ, V, A) -> float:
        """Σ of the squared violations of the kinematic limits, each relative to its limit."""
        span = np.maximum(self.upper - self.lower, 1e-9)
        over = [np.maximum(q0 + dQ - self.upper, 0) / span, np.maximum(self.lower - q0 - dQ, 0) / span,
                np.maximum(np.abs(V) - self.v_max, 0) / self.v_max, np.maximum(np.abs(A) - self.a_max, 0) / self.a_max]
        return float(sum(np.sum(x ** 2) for x in over))

    def torque_penalty(self, tau) -> float:
        """Σ of the squared violations of the effort limits by the torques tau (K, n), relative."""
        return float(np.sum((np.maximum(np.abs(tau) - self.tau_max, 0) / self.tau_max) ** 2))

    def torque_ratio(self, q0, dQ, V, A) -> float:
        """max over samples and joints of |τ| / τ_max (at most 1: within the effort limits)."""
        return float(np.max(np.abs(self.torques(q0 + dQ, V, A)) / self.tau_max))


class ConditionCost:
    """log cond(W), W (K nv, 10 + 2 nv) stacking Y_F(q, q̇, q̈) (the payload block at frame F) and the
    friction regressor [diag(q̇), diag(tanh(q̇/ε))] at K sample times, plus the penalty of the
    kinematic limits (at the check times) and of the effort limits (the model's inverse-dynamics
    torque at the sample times)."""

    def __init__(self, kernels, frame_index: int, q0, t_samples, t_check, shape, base_frequency, T, ramp, limits):
        self.kernels, self.frame, self.q0 = kernels, frame_index, q0
        self.t_samples, self.t_check, self.shape, self.limits = t_samples, t_check, shape, limits
        self.args = (base_frequency, T, ramp)
        n = shape[0]
        self.W = np.zeros((len(t_samples), n, 10 + 2 * n))
        self.tau = np.zeros((len(t_samples), n))
        self.Yp, self.Yf = np.zeros((n, 10)), np.zeros((n, 2 * n))

    def series(self, x) -> FourierSeries:
        a, b = np.split(np.asarray(x, float).reshape(self.shape[0], 2 * self.shape[1]), 2, axis=1)
        return FourierSeries(a, b, *self.args)

    def condition(self, x, series: FourierSeries | None = None) -> float:
        """cond(W) of the coefficients x (the sample times' torques left in self.tau)."""
        dQ, V, A = (series or self.series(x)).grid(self.t_samples)
        Q = self.q0 + dQ
        for k in range(len(self.t_samples)):
            self.kernels.payload_regressor(Q[k], V[k], A[k], self.frame, self.Yp)
            self.kernels.friction_regressor(V[k], self.Yf)
            self.kernels.inverse_dynamics(Q[k], V[k], A[k], self.tau[k])
            self.W[k, :, :10] = self.Yp
            self.W[k, :, 10:] = self.Yf
        s = np.linalg.svd(self.W.reshape(-1, self.W.shape[2]), compute_uv=False)
        return float(s[0] / s[-1]) if s[-1] > 0 else np.inf

    def __call__(self, x) -> float:
        series = self.series(x)
        c = self.condition(x, series)
        dQ, V, A = series.grid(self.t_check)
        penalty = self.limits.penalty(self.q0, dQ, V, A) + self.limits.torque_penalty(self.tau)
        return float(np.log(min(c, 1e300))) + PENALTY * penalty


def design(cfg, plant, frame, limits: Limits, q0) -> tuple:
    """(a, b, cond_initial, cond_final): the coefficients of `cfg` (an ExcitationConfig) about q0, the
    seeded guess scaled into the limits and, with cfg.optimize, optimised for cond(W)."""
    from scipy.optimize import minimize
    n, L = plant.num_velocities(), cfg.harmonics
    T = cfg.periods / cfg.base_frequency
    t_check = check_times(cfg)
    t_samples = np.linspace(0.0, T, cfg.samples + 2)[1:-1]
    cost = ConditionCost(plant.kernels(), int(frame.index()), q0, t_samples, t_check, (n, L), cfg.base_frequency,
                         T, cfg.ramp, limits)
    rng = np.random.default_rng(cfg.seed)
    x0 = rng.standard_normal(2 * n * L) / np.tile(np.arange(1, L + 1), 2 * n)
    x0 = scaled(cost, x0, FIT)
    c0 = cost.condition(x0)
    if not cfg.optimize:
        return (*split(cost, x0), c0, c0)
    scale = np.max(np.abs(x0))
    res = minimize(lambda y: cost(y * scale), x0 / scale, method="L-BFGS-B",
                   options={"maxiter": cfg.iterations})
    x = scaled(cost, res.x * scale, FIT, shrink_only=True)
    c = cost.condition(x)
    if not c < c0:
        x, c = x0, c0
    log.info("excitation: cond(W) %.4g at the initial guess, %.4g optimised (%d iterations)", c0, c, res.nit)
    return (*split(cost, x), c0, c)


def split(cost: ConditionCost, x) -> tuple:
    s = cost.series(x)
    return s.a, s.b


def scaled(cost: ConditionCost, x, share: float, shrink_only: bool = False) -> np.ndarray:
    """x scaled to `share` of the largest factor within the kinematic limits (only ever down, with
    shrink_only), then shrunk further (by TORQUE_SHRINK at a time, a few times) while its torque leaves
    `share` of the effort limits."""
    dQ, V, A = cost.series(x).grid(cost.t_check)
    f = cost.limits.fit(cost.q0, dQ, V, A)
    if f == 0.0:
        j = int(np.argmax((cost.q0 < cost.limits.lower) | (cost.q0 > cost.limits.upper)))
        raise ConfigError(f"{KEY}.q0", f"{joint_label(cost.limits.names, j)} centre {cost.q0[j]:.4g} rad is not inside "
                                       f"its limits with the margins [{cost.limits.lower[j]:.4g}, "
                                       f"{cost.limits.upper[j]:.4g}]")
    f *= share
    f = min(f, 1.0) if shrink_only else f
    for _ in range(TORQUE_STEPS):
        if cost.limits.torque_ratio(cost.q0, f * dQ, f * V, f * A) <= share:
            break
        f *= TORQUE_SHRINK
    return x * f


def check_times(cfg) -> np.ndarray:
    T = cfg.periods / cfg.base_frequency
    k = int(np.ceil(T * cfg.harmonics * cfg.base_frequency * CHECKS_PER_CYCLE)) + 1
    return np.union1d(np.linspace(0.0, T, max(k, 50)), np.linspace(0.0, min(cfg.ramp, T), 50))


class Excitation(Source):
    """The excitation source: from the position at start a rest-to-rest quintic approach to q0 (when
    cfg.q0 is set), then the series about q0; at rest at q0 after it. Centred on the position at
    start (no cfg.q0), the series is designed in start(): in a background thread in real time (holding
    the start position meanwhile; it begins on the first tick after), else at once. A design that
    leaves the limits sets `error` (the loop faults with it)."""

    def __init__(self, cfg, plant, frame, limits: Limits, series: FourierSeries | None, v_max, a_max,
                 background: bool):
        self.cfg, self.plant, self.frame, self.limits = cfg, plant, frame, limits
        self.fixed = series is not None
        self.series, self.ready = series, series is not None
        self.v_max, self.a_max, self.background = v_max, a_max, background
        n = plant.num_velocities()
        self.q0, self.start_q, self.delta = np.zeros(n), np.zeros(n), np.zeros(n)
        self.hold = Hold(n)
        self.t0, self.approach, self.started = 0, 0.0, False
        if self.fixed:
            self.q0[:] = cfg.q0

    @property
    def duration_ns(self) -> int:
        return int(round((self.approach + self.series.T) * 1e9)) if self.ready else 0

    def start(self, q, t_ns: int) -> None:
        self.t0, self.error, self.started = t_ns, None, self.fixed
        self.hold.start(q, t_ns)
        self.start_q[:] = q
        if not self.fixed:
            self.q0[:] = q
        self.delta[:] = self.q0 - self.start_q
        self.approach = (feasible_duration(self.delta, 1.0, self.v_max, self.a_max)
                         if np.any(np.abs(self.delta) > 1e-9) else 0.0)
        if self.fixed:
            return
        self.ready = False
        if self.background:
            import threading
            threading.Thread(target=self._design, args=(self.q0.copy(),), daemon=True).start()
        else:
            self._design(self.q0.copy())
            self.started = self.ready

    def _design(self, q0) -> None:
        try:
            self.series = designed(self.cfg, self.plant, self.frame, self.limits, q0)
        except ValueError as e:
            self.error = f"excitation about the position at start: {e}"
            return
        self.ready = True

    def sample(self, t_ns: int, q_d, v_d, a_d) -> None:
        if not self.ready:
            self.hold.sample(t_ns, q_d, v_d, a_d)
            return
        if not self.started:
            self.t0, self.started = t_ns, True
        t = (t_ns - self.t0) * 1e-9
        if t < self.approach:
            _control.quintic(self.start_q, self.delta, t, self.approach, q_d, v_d, a_d)
        else:
            self.series.at(t - self.approach, self.q0, q_d, v_d, a_d)


def designed(cfg, plant, frame, limits: Limits, q0) -> FourierSeries:
    """The series of `cfg` about q0 (design), checked: a ConfigError naming the joint, the limit and
    the time if it leaves one."""
    a, b, _, _ = design(cfg, plant, frame, limits, q0)
    series = FourierSeries(a, b, cfg.base_frequency, cfg.periods / cfg.base_frequency, cfg.ramp)
    t = check_times(cfg)
    why = limits.violation(q0, t, *series.grid(t))
    if why:
        raise ConfigError(KEY, f"about q0 = {np.round(q0, 4).tolist()}: {why}")
    return series


def make_excitation(cfg, plant, frame, lower, upper, v_max, a_max, safety, background: bool) -> Excitation:
    """The excitation source of `cfg` (an ExcitationConfig) for the plant: the limits are the
    position limits less safety.position_margin + cfg.position_margin, v_max, a_max (cfg's
    acceleration_limit where the model has none) and the effort limits × safety.effort_scale. With
    cfg.q0 the series is designed here (a ConfigError if it cannot be), else when it starts."""
    n = plant.num_velocities()
    margin = safety.position_margin + cfg.position_margin
    a_max = np.where(np.isfinite(a_max), a_max, cfg.acceleration_limit)
    tau_max = safety.effort_scale * np.minimum(-plant.GetEffortLowerLimits(), plant.GetEffortUpperLimits())
    limits = Limits(lower + margin, upper - margin, v_max, a_max, tau_max, plant.kernels(), actuated_joint_names(plant))
    T = cfg.periods / cfg.base_frequency
    if not 2 * cfg.ramp <= T:
        raise ConfigError(f"{KEY}.ramp", f"{cfg.ramp:g} s twice is longer than the series' {T:g} s "
                                         "(periods / base_frequency)")
    if cfg.frame is not None:
        if not plant.HasFrameNamed(cfg.frame):
            raise ConfigError(f"{KEY}.frame", f"the model has no frame named {cfg.frame!r}")
        frame = plant.GetFrameByName(cfg.frame)
    if frame is None:
        frame = plant.get_frame(plant.num_frames() - 1)
    series = None
    if cfg.q0 is not None:
        q0 = np.array(cfg.q0, dtype=float)
        if q0.shape != (n,):
            raise ConfigError(f"{KEY}.q0", f"needs {n} joint positions, got {q0.size}")
        series = designed(cfg, plant, frame, limits, q0)
    return Excitation(cfg, plant, frame, limits, series, v_max, a_max, background)
