"""`hil identify LOG [LOG ...]`: a payload's inertial parameters and the joints' friction from run
logs (issue 29): the rows; hil.identify_fit solves, hil.identify_report reports, hil.identify_run
closes the loop (`hil run CONFIG --identify`).

From each log (`hil run --log`, `hil demo --log`, or lcm-logger with --config): the robot's status,
q, v and the measured joint torque τ in MultibodyPlant's signs (hil.hardware's torque_signs), on the
robot's clock t. Per log, offline and zero-phase (scipy.signal.sosfiltfilt, a Butterworth low-pass of
`cutoff` Hz run forward and back): q̃, ṽ, τ̃, and v̇ = dṽ/dt (central differences of the filtered
velocity). The rigid arm of the config's model (robot.payload left out: the estimate is of what the
model lacks) is the prior; with F the payload's frame, per sample k and joint j

    τ̃_j − ID_j(q̃, ṽ, v̇) = Y_F,j(q̃, ṽ, v̇) π_F + b_v,j ṽ_j + b_c,j tanh(ṽ_j / ε)

ID the model's inverse dynamics M v̇ + C v − τ_g (no joint damping: b_v holds all of the viscous
friction), Y_F the payload regressor (dynamics_cy Kernels.payload_regressor: π_F = [m, m p_FoFcm_F,
I_FFo_F (xx xy yy xz yz zz)]) and [diag(v), diag(tanh(v/ε))] the friction regressor
(Kernels.friction_regressor). With `base`, the whole arm's regressor (Kernels.torque_regressor, every
body's 10 parameters) replaces Y_F and the model's torque: τ̃ = Y(q̃, ṽ, v̇) π + friction.

A row (k, j) counts when |ṽ_j| >= v_min (a joint at rest holds any friction torque up to its
Coulomb level, which the smooth sign cannot say), away from the filter's ends. The last `holdout`
share of each log's time (a time split) is kept out of the fit to measure the prediction error.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from drivers.core.robot import actuated_joint_names, joint_labels
from drivers.core.schema import ConfigError, LogError

EDGE_S = 0.05      # s at each end of a log left out: the filter's start-up


@dataclass
class IdentifyOptions:
    """What `hil identify` estimates and how (its command-line options)."""
    frame: str | None = None      # the payload's frame F; default robot.end_effector
    cutoff: float = 10.0          # Hz, the zero-phase Butterworth low-pass
    order: int = 4                # of the Butterworth filter (sosfiltfilt doubles it)
    epsilon: float = 0.01         # rad/s, ε of the smooth sign tanh(v/ε)
    v_min: float = 0.05           # rad/s, the least |v_j| of a row that counts
    holdout: float = 0.25         # the last share of each log's time, kept out of the fit
    base: bool = False            # the whole arm's base parameters instead of a payload
    consistent: bool = True       # enforce the pseudo-inertia PSD (a convex solver; hil.identify_fit)
    solver: str = "clarabel"      # the consistent fit's conic solver through cvxpy: clarabel or scs
    # status periods by which the measured torque is moved earlier; None: 0.5 for a lockstep log (the
    # simulated robot reports the torque that acted during the step ending at the status), else 0
    torque_shift: float | None = None


@dataclass
class Samples:
    """One log's status stream: t (s, the robot's clock), q, v, τ (N, n) in MultibodyPlant's signs."""
    path: str
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    cfg: object = None            # the run config (the log's run-info, or --config)
    lockstep: bool = False        # recorded in lockstep (against the simulated robot)


@dataclass
class Regression:
    """The stacked rows y = A θ + e (fit and held-out), θ = [π (payload or the base's) ; b_v ; b_c]."""
    A: np.ndarray
    y: np.ndarray
    joint: np.ndarray             # each row's joint
    A_test: np.ndarray
    y_test: np.ndarray
    joint_test: np.ndarray
    n: int
    n_inertial: int               # the first n_inertial columns of A are inertial parameters
    bodies: list = field(default_factory=list)   # base: the BodyIndex of each 10-column block
    samples: int = 0              # status samples read (all logs)
    rows_dropped: int = 0         # rows below v_min or at the ends


def read_samples(path: str | Path, cfg=None) -> Samples:
    """The status stream of the log at `path`; `cfg` (a RunConfig) names the robot and the channels,
    default the log's run-info. LogError for a log without a status or of a legged robot."""
    from drivers.core.config import channels_for
    from drivers.core.robot import load_robot
    from messages.codec import StatusDecoder
    from messages.logs import read_events

    from .hardware import PROTOCOLS
    from .replay import log_config
    from .runlog import read_run_info
    path = str(path)
    if not Path(path).is_file():
        raise LogError(f"{path}: no such log file")
    cfg = cfg or log_config(path)
    if cfg.robot.protocol not in PROTOCOLS:
        raise LogError(f"{path}: identification reads an arm's status (iiwa, panda), not {cfg.robot.protocol}")
    n = load_robot(_bare(cfg.robot)).n
    channel = channels_for(cfg).status
    status = StatusDecoder(cfg.robot.protocol, n, channel=channel)
    sign = PROTOCOLS[cfg.robot.protocol].torque_signs[0]
    t, q, v, tau = [], [], [], []
    for e in read_events(path, {channel}):
        if status.decode(e.data):
            t.append(status.utime * 1e-6)
            q.append(status.position_measured.copy())
            v.append(status.velocity_estimated.copy())
            tau.append(sign * status.torque_measured)
    if len(t) < 100:
        raise LogError(f"{path}: {len(t)} robot statuses on {channel}; identification needs a run's worth")
    t = np.array(t)
    keep = np.r_[True, np.diff(t) > 0]          # repeated statuses (a duplicate fault) once
    start, _ = read_run_info(path)
    return Samples(path, t[keep], np.array(q)[keep], np.array(v)[keep], np.array(tau)[keep], cfg,
                   start is not None and start.mode == "lockstep")


def _bare(robot_cfg):
    """The robot section without a payload on the controller's model (the prior is the bare arm)."""
    return dataclasses.replace(robot_cfg, payload=None) if getattr(robot_cfg, "payload", None) else robot_cfg


def check_options(opts: IdentifyOptions) -> None:
    """A ConfigError naming the option whose value cannot be used (those not needing the log's rate)."""
    finite = (("--epsilon", opts.epsilon, opts.epsilon > 0, "positive"), ("--v-min", opts.v_min, opts.v_min >= 0,
              "non-negative"), ("--order", opts.order, opts.order >= 1, "at least 1"),
              ("--holdout", opts.holdout, 0 <= opts.holdout < 1, "in [0, 1)"))
    for key, value, ok, what in finite:
        if not (np.isfinite(value) and ok):
            raise ConfigError(key, f"must be {what}, got {value:g}")
    if opts.torque_shift is not None and not np.isfinite(opts.torque_shift):
        raise ConfigError("--torque-shift", f"must be a finite number of status periods, got {opts.torque_shift:g}")


def filtered(s: Samples, opts: IdentifyOptions) -> tuple:
    """(t, q̃, ṽ, v̇, τ̃) of one log: zero-phase Butterworth low-pass at opts.cutoff on the status
    rate (the median period), v̇ the central difference of ṽ; τ̃ moved opts.torque_shift periods."""
    from scipy.signal import butter, sosfiltfilt
    h = float(np.median(np.diff(s.t)))
    nyquist = 0.5 / h
    if not 0 < opts.cutoff < nyquist:
        raise ConfigError("--cutoff", f"must be in (0, {nyquist:g}) Hz (the status rate's Nyquist), "
                                      f"got {opts.cutoff:g}")
    sos = butter(opts.order, opts.cutoff, fs=1.0 / h, output="sos")
    if len(s.t) <= 3 * (2 * len(sos) + 1):
        raise LogError(f"{s.path}: {len(s.t)} statuses are too few to filter")
    q, v, tau = (np.ascontiguousarray(sosfiltfilt(sos, x, axis=0)) for x in (s.q, s.v, s.tau))
    shift = opts.torque_shift if opts.torque_shift is not None else 0.5 if s.lockstep else 0.0
    if shift:
        tau = np.ascontiguousarray(np.stack([np.interp(s.t + shift * h, s.t, tau[:, j])
                                             for j in range(tau.shape[1])], 1))
    vdot = np.ascontiguousarray(np.gradient(v, s.t, axis=0))
    return s.t, q, v, vdot, tau


def payload_frame(plant, robot_cfg, name: str | None):
    """The frame F a payload sits on: `name`, else robot.end_effector, else the model's last frame."""
    name = name or robot_cfg.end_effector
    if name is None:
        return plant.get_frame(plant.num_frames() - 1)
    if not plant.HasFrameNamed(name):
        raise ConfigError("--frame", f"the model has no frame named {name!r}")
    return plant.GetFrameByName(name)


def moving_bodies(plant) -> list[int]:
    """The BodyIndex of every body that moves: whose regressor columns are not zero at a random state
    (the world's and those of the bodies welded to it are)."""
    rng = np.random.default_rng(0)
    n, nb = plant.num_velocities(), plant.num_bodies()
    Y = np.zeros((n, 10 * nb))
    q = plant.GetDefaultPositions() + 0.1 * rng.standard_normal(plant.num_positions())
    plant.kernels().torque_regressor(q, rng.standard_normal(n), rng.standard_normal(n), Y)
    return [b for b in range(1, nb) if np.any(Y[:, 10 * b:10 * b + 10])]


def rows(plant, frame, data: tuple, opts: IdentifyOptions, bodies: list[int] | None = None) -> tuple:
    """(A, y, joint, speed) of one filtered log (t, q, v, v̇, τ): every sample's n rows, before any
    selection (hil.identify's module docstring); bodies: the base mode's body blocks."""
    t, Q, V, Vd, Tau = data
    k = plant.kernels()
    N, n = Q.shape
    p = 10 * len(bodies) if bodies is not None else 10
    A = np.zeros((N, n, p + 2 * n))
    y = Tau.copy()
    tau_id = np.zeros(n)
    Yf = np.zeros((n, 2 * n))
    if bodies is None:
        Yp = np.zeros((n, 10))
        f = int(frame.index())
        for i in range(N):
            k.payload_regressor(Q[i], V[i], Vd[i], f, Yp)
            k.inverse_dynamics(Q[i], V[i], Vd[i], tau_id)
            k.friction_regressor(V[i], Yf, opts.epsilon)
            A[i, :, :10] = Yp
            A[i, :, 10:] = Yf
            y[i] -= tau_id
    else:
        cols = np.concatenate([np.arange(10 * b, 10 * b + 10) for b in bodies])
        Y = np.zeros((n, 10 * plant.num_bodies()))
        for i in range(N):
            k.torque_regressor(Q[i], V[i], Vd[i], Y)
            k.friction_regressor(V[i], Yf, opts.epsilon)
            A[i, :, :p] = Y[:, cols]
            A[i, :, p:] = Yf
    joint = np.broadcast_to(np.arange(n), (N, n))
    return A.reshape(N * n, -1), y.reshape(-1), joint.reshape(-1), np.abs(V).reshape(-1), \
        np.repeat(t, n)


def regression(logs: list[Samples], plant, frame, opts: IdentifyOptions) -> Regression:
    """The rows of every log, split in time (the last opts.holdout of each log held out) and
    selected (|ṽ_j| >= v_min, away from the ends)."""
    bodies = moving_bodies(plant) if opts.base else None
    fit, test, dropped, total = [], [], 0, 0
    for s in logs:
        A, y, joint, speed, t = rows(plant, frame, filtered(s, opts), opts, bodies)
        total += len(s.t)
        inside = (t >= s.t[0] + EDGE_S) & (t <= s.t[-1] - EDGE_S) & (speed >= opts.v_min)
        dropped += int(np.sum(~inside))
        split = s.t[0] + (1 - opts.holdout) * (s.t[-1] - s.t[0])
        fit.append((A[inside & (t < split)], y[inside & (t < split)], joint[inside & (t < split)]))
        test.append((A[inside & (t >= split)], y[inside & (t >= split)], joint[inside & (t >= split)]))
    A, y, joint = (np.concatenate(x) for x in zip(*fit))
    A_test, y_test, joint_test = (np.concatenate(x) for x in zip(*test))
    n = plant.num_velocities()
    if len(y) < A.shape[1] or any(np.sum(joint == j) < 10 for j in range(n)):
        short = [j for j in range(n) if np.sum(joint == j) < 10]
        raise LogError(f"too little motion to identify from: {joint_labels(actuated_joint_names(plant), short)} "
                       f"moved faster than {opts.v_min:g} rad/s in fewer than 10 samples (run an excitation: "
                       f"trajectory.type excitation)")
    return Regression(A, y, joint, A_test, y_test, joint_test, n, A.shape[1] - 2 * n, bodies or [], total, dropped)


def load_logs(paths: list[str], cfg=None) -> tuple:
    """(samples of each log, the bare arm's plant, its robot config): every log of the same model."""
    from drivers.core.robot import load_robot
    logs = [read_samples(p, cfg) for p in paths]
    models = {(s.cfg.robot.model, s.cfg.robot.weld) for s in logs}
    if len(models) > 1:
        raise LogError(f"the logs are of different robots: {sorted(m for m, _ in models)}")
    robot_cfg = _bare(logs[0].cfg.robot)
    return logs, load_robot(robot_cfg).plant, robot_cfg


def identify(paths: list[str], opts: IdentifyOptions | None = None, cfg=None) -> dict:
    """The identification of the logs at `paths` (hil.identify_report formats it): the estimate
    (hil.identify_fit.fit) with the payload or the base parameters, the friction, the timing."""
    import time

    from .identify_fit import fit, payload
    opts = opts or IdentifyOptions()
    check_options(opts)
    t0 = time.perf_counter()
    logs, plant, robot_cfg = load_logs(paths, cfg)
    frame = payload_frame(plant, robot_cfg, opts.frame)
    t1 = time.perf_counter()
    reg = regression(logs, plant, frame, opts)
    t2 = time.perf_counter()
    prior = plant.GetDefaultInertialParameters()[np.concatenate([np.arange(10 * b, 10 * b + 10)
                                                                 for b in reg.bodies])] if reg.bodies else None
    est = fit(reg, opts.consistent, prior, opts.solver)
    t3 = time.perf_counter()
    n, p = reg.n, reg.n_inertial
    theta = est["theta"]
    result = {"logs": [str(x) for x in paths], "options": dataclasses.asdict(opts), "joints": n,
              "joint_names": actuated_joint_names(plant),
              "samples": reg.samples, "rows": len(reg.y), "rows_held_out": len(reg.y_test),
              "rows_dropped": reg.rows_dropped, "frame": frame.name(), "robot": robot_cfg,
              "viscous": theta[p:p + n], "coulomb": theta[p + n:], "viscous_se": est["se"][p:p + n],
              "coulomb_se": est["se"][p + n:], "sigma": est["sigma"], "rms_model": est["rms_model"],
              "rms_ls": est["rms_ls"], "rms": est["rms"], "rms_fit": est["rms_fit"],
              "seconds": {"read": t1 - t0, "rows": t2 - t1, "fit": t3 - t2, "total": t3 - t0},
              "held_out": {"joint": reg.joint_test, "y": reg.y_test, "predicted": reg.A_test @ theta}}
    if reg.bodies:
        indep, dep, K = est["base"]
        result["base"] = {"bodies": [plant.get_body(_body_index(b)).name() for b in reg.bodies],
                          "count": len(indep), "beta_ls": est["beta_ls"][:len(indep)],
                          "beta_se": est["beta_se"][:len(indep)],
                          "beta": theta[:p][indep] + K @ theta[:p][dep], "pi": theta[:p]}
    else:
        result["payload"] = payload(theta[:10], est["cov"][:10, :10])
        result["payload_ls"] = payload(est["theta_ls"][:10])
        result["payload_se"] = est["se"][:10]
    return result


def _body_index(b: int):
    from dynamics_cy import BodyIndex
    return BodyIndex(b)
