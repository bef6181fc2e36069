"""Telemetry: per-tick timing and tracking statistics, the LCM telemetry and safety-event messages,
and the end-of-run summary (text, JSON, plots).

Per-tick timing goes into streaming histograms (hil.sketch) and the plots' trace is a fixed number
of rows, decimated by two whenever it fills: a run of any length costs the same memory, and the
summary's percentiles and counters cover the whole run.
"""
from __future__ import annotations

import json

import numpy as np

from drivers.core import _control
from messages import lcmt_hil_safety_event
from messages.codec import TelemetryEncoder
from messages.enums import ControllerState

from .safety import Transition
from .sketch import LogHistogram


class TickRecorder:
    """Timing and tracking statistics of the loop, preallocated; fixed memory for any run length."""

    def __init__(self, n: int, period_ns: int, budget_ns: int, trace_rows: int = 20_000, trace_every: int = 1):
        self.period_ns, self.budget_ns = period_ns, budget_ns
        self.compute, self.lateness = LogHistogram(), LogHistogram()     # ns, the whole run
        self.ticks = 0
        self.deadline_misses = 0
        self.overruns = 0
        self.sumsq = np.zeros(n)
        self.maxabs = np.zeros(n)
        self.tau_maxabs = np.zeros(n)       # max |τ_cmd| per joint over the commands sent
        self.tracked = 0
        self.first_ns = self.last_ns = 0
        self.last_compute_ns = self.last_lateness_ns = 0
        # A trace of t, q, q_d, τ and the timing for plots: every trace_every-th tick, at most
        # `trace_rows` rows; when full, every other row is dropped and trace_every doubles.
        self.trace_every = trace_every
        self.trace_t = np.zeros(trace_rows)
        self.trace_q = np.zeros((trace_rows, n))
        self.trace_qd = np.zeros((trace_rows, n))
        self.trace_tau = np.zeros((trace_rows, n))
        self.trace_timing = np.zeros((trace_rows, 2))     # compute, lateness [ns]
        self._timing = np.zeros(2)
        self.trace_rows = 0

    def record(self, start_ns: int, lateness_ns: int, compute_ns: int) -> None:
        self.compute.add(compute_ns)
        self.lateness.add(lateness_ns)
        self.last_compute_ns, self.last_lateness_ns = compute_ns, lateness_ns
        if self.ticks == 0:
            self.first_ns = start_ns
        self.last_ns = start_ns
        self.ticks += 1
        if lateness_ns > self.budget_ns:
            self.deadline_misses += 1
        if compute_ns > self.period_ns:
            self.overruns += 1

    def reset_timing(self) -> None:
        """Forgets the timing so far (e.g. a benchmark's warm-up ticks); counters and tracking stay."""
        self.compute.clear()
        self.lateness.clear()

    def track(self, q, q_d) -> float:
        """Accumulates the tracking error q_d − q of a RUNNING tick; returns its max over joints."""
        self.tracked += 1
        return _control.track_error(q, q_d, self.sumsq, self.maxabs)

    def torque(self, tau) -> None:
        """Accumulates the max |τ| per joint of a command sent."""
        _control.max_abs(tau, self.tau_maxabs)

    def trace(self, t_s: float, q, q_d, tau) -> None:
        if self.ticks % self.trace_every:
            return
        if self.trace_rows == self.trace_t.shape[0]:
            for a in (self.trace_t, self.trace_q, self.trace_qd, self.trace_tau, self.trace_timing):
                _control.decimate_rows(a, self.trace_rows)
            self.trace_rows //= 2
            self.trace_every *= 2
            if self.ticks % self.trace_every:
                return
        r = self.trace_rows
        self.trace_t[r] = t_s
        _control.set_row(self.trace_q, r, q)
        _control.set_row(self.trace_qd, r, q_d)
        _control.set_row(self.trace_tau, r, tau)
        self._timing[0], self._timing[1] = self.last_compute_ns, self.last_lateness_ns
        _control.set_row(self.trace_timing, r, self._timing)
        self.trace_rows += 1

    def summary(self, safety, extra: dict | None = None) -> dict:
        """The run's summary as a JSON-ready dict."""
        elapsed = (self.last_ns - self.first_ns) * 1e-9
        rms = np.sqrt(self.sumsq / self.tracked) if self.tracked else np.zeros_like(self.sumsq)
        out = {
            "ticks": self.ticks,
            "duration_s": round(elapsed, 4),
            "rate_hz": {"target": round(1e9 / self.period_ns, 3),
                        "achieved": round((self.ticks - 1) / elapsed, 3) if elapsed > 0 else None},
            "compute_us": self.compute.percentiles(),
            "lateness_us": self.lateness.percentiles(),
            "deadline_misses": self.deadline_misses,
            "deadline_budget_us": self.budget_ns / 1e3,
            "overruns": self.overruns,
            "tracking_error_rad": {"rms": [round(float(x), 7) for x in rms],
                                   "max": [round(float(x), 7) for x in self.maxabs],
                                   "ticks": self.tracked},
            "torque_max_nm": [round(float(x), 5) for x in self.tau_maxabs],
            "torque_saturated_ticks": safety.saturated_ticks,
            "final_state": safety.state.name,
            "faults": [{"tick": t, "utime": u, "fault": f, "reason": r} for t, u, f, r in safety.faults_seen],
            "fault_counts": dict(safety.faults_seen.counts),    # every fault, kept in "faults" or not
        }
        out.update(extra or {})
        return out


def fault_count(summary: dict) -> int:
    """How many faults a run had: every one, also those the summary's bounded "faults" list left out."""
    return sum(summary["fault_counts"].values()) if "fault_counts" in summary else len(summary["faults"])


def _faults(faults: list[dict], counts: dict[str, int] | None = None) -> str:
    """Faults grouped by kind: count, first tick and reason (a recovering run can trip many times);
    `counts` (the summary's fault_counts) counts those the bounded list left out too."""
    if not faults:
        return "none"
    kinds: dict[str, list[dict]] = {}
    for f in faults:
        kinds.setdefault(f["fault"], []).append(f)
    counts = counts or {name: len(fs) for name, fs in kinds.items()}
    return "; ".join(f"{name} ×{counts[name]} (first at tick {fs[0]['tick']}: {fs[0]['reason']})"
                     if counts[name] > 1 else f"{name} at tick {fs[0]['tick']}: {fs[0]['reason']}"
                     for name, fs in kinds.items())


def format_summary(s: dict) -> str:
    """The summary as a few readable lines."""
    c, l, e = s["compute_us"], s["lateness_us"], s["tracking_error_rad"]
    lines = [f"ticks {s['ticks']} in {s['duration_s']:.2f} s, rate {s['rate_hz']['achieved']} Hz "
             f"(target {s['rate_hz']['target']:g})",
             f"compute µs   p50 {c.get('p50')}  p99 {c.get('p99')}  p99.9 {c.get('p99.9')}  max {c.get('max')}",
             f"lateness µs  p50 {l.get('p50')}  p99 {l.get('p99')}  p99.9 {l.get('p99.9')}  max {l.get('max')}",
             f"deadline misses {s['deadline_misses']} (> {s['deadline_budget_us']:g} µs late), overruns "
             f"{s['overruns']}, torque-saturated ticks {s['torque_saturated_ticks']}",
             f"tracking error rad  rms {[round(x, 5) for x in e['rms']]}",
             f"                    max {[round(x, 5) for x in e['max']]}",
             f"final state {s['final_state']}; faults: {_faults(s['faults'], s.get('fault_counts'))}"]
    law = s.get("controller_timing")
    if law:
        u = law["update_us"]
        lines.insert(2, f"controller {s['controller']}: update µs  p50 {u.get('p50')}  p99 {u.get('p99')}  max "
                        f"{u.get('max')} (budget {law['budget_us']:g}, overruns {law['overruns']})")
        if "\n" in law.get("error", ""):    # (its message is the CONTROLLER fault's reason, above)
            lines.append("the law's traceback: logged as it happened (--json: controller_timing.error)")
    if s.get("base_drift_m") is not None:             # a floating base (hil.floating_base)
        lines.append(f"base drift {s['base_drift_m'] * 1e3:.3f} mm, feet in contact: {s['feet_in_contact']}")
    if s.get("process"):
        lines.append(f"process: {', '.join(s['process'])}")
    sim = s.get("sim") or {}
    if sim:
        lines.append(f"sim: {json.dumps({k: v for k, v in sim.items() if k != 'viz'})}")
    if "status" in s:
        lines.append(f"status: {json.dumps(s['status'])}")
    for device in ("gripper", "ft_sensor"):           # the arm's devices in the loop (hil.gripper, hil.ft_sensor)
        if s.get(device):
            lines.append(f"{device}: {json.dumps(s[device])}")
    # The viewer bridge's counters: the loop's (measured q) and the simulated plant's (its own q).
    for label, viz in (("viz", s.get("viz")), ("viz (simulated plant)", sim.get("viz"))):
        if viz:
            from drivers.viz import format_counters
            lines.append(f"{label}: {format_counters(viz)}")
    if "log" in s:
        lines.append(f"log: {json.dumps(s['log'])}")
    return "\n".join(lines)


def plot(recorder: TickRecorder, path: str) -> None:
    """Tracking (q and q_d per joint) and timing (compute time, lateness) plots of a run in one PNG."""
    r = recorder.trace_rows
    t = recorder.trace_t[:r]
    q, q_d = recorder.trace_q[:r], recorder.trace_qd[:r]
    timing = recorder.trace_timing[:r] / 1e3
    plot_traces(path, (t, q), (t, q_d), (t, q_d - q), (t, recorder.trace_tau[:r]),
                (t, timing[:, 0], timing[:, 1], "t [s]"),
                recorder.budget_ns / 1e3)


def plot_traces(path: str, q, q_d, error, tau, timing, budget_us: float, wrench=None) -> None:
    """Four panels in one PNG: q (solid) and q_d (dashed), q_d − q, commanded τ (each a (t [s], rows ×
    joints) pair), and timing: (x, compute µs, lateness µs, x label); a fifth, the wrist force/torque
    sensor's readings, with `wrench` (t [s], rows × [τ; f])."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(4 if wrench is None else 5, 1, figsize=(10, 12 if wrench is None else 15))
    for j in range(q[1].shape[1]):
        line, = axes[0].plot(q[0], q[1][:, j], label=f"q{j}")
        axes[0].plot(q_d[0], q_d[1][:, j], "--", color=line.get_color(), linewidth=0.8)
        axes[1].plot(error[0], error[1][:, j], label=f"e{j}")
        axes[2].plot(tau[0], tau[1][:, j], label=f"τ{j}")
    axes[0].set_ylabel("q (solid), q_d (dashed) [rad]")
    axes[1].set_ylabel("q_d − q [rad]")
    axes[2].set_ylabel("commanded τ [N·m]")
    for ax in axes[:3]:
        ax.legend(loc="upper right", ncol=4, fontsize=7)
        ax.set_xlabel("t [s]")
    x, compute, lateness, xlabel = timing
    axes[3].plot(x, compute, linewidth=0.5, label="compute")
    axes[3].plot(x, lateness, linewidth=0.5, label="lateness")
    axes[3].axhline(budget_us, color="r", linestyle=":", label="deadline budget")
    axes[3].set_yscale("symlog", linthresh=10)
    axes[3].set_ylim(bottom=0)
    axes[3].set_xlabel(xlabel)
    axes[3].set_ylabel("µs")
    axes[3].legend(loc="upper right", fontsize=7)
    if wrench is not None:
        t, W = wrench
        for i, name in enumerate(("τx", "τy", "τz")):
            axes[4].plot(t, W[:, i], "--", linewidth=0.8, label=f"{name} [N·m]")
        for i, name in enumerate(("fx", "fy", "fz")):
            axes[4].plot(t, W[:, 3 + i], label=f"{name} [N]")
        axes[4].set_ylabel("wrench in S: f [N] (solid), τ [N·m] (dashed)")
        axes[4].set_xlabel("t [s]")
        axes[4].legend(loc="upper right", ncol=6, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


class TelemetryPublisher:
    """lcmt_hil_telemetry at a fixed rate (allocation-free) and lcmt_hil_safety_event on each transition."""

    def __init__(self, lc, channels, n: int, rate_hz: float, period_ns: int, controller_name: str):
        self.lc, self.channels = lc, channels
        self.every = max(1, int(round(1e9 / rate_hz / period_ns)))
        self.encoder = TelemetryEncoder(n, controller_name, channel=channels.telemetry)
        self.published = 0

    def maybe_publish(self, tick: int, utime: int, rec: TickRecorder, safety, status_utime: int,
                      status_rejected: int, q, v, q_d, tau) -> None:
        if tick % self.every:
            return
        state = ControllerState.RUNNING if safety.commanding else ControllerState.STOPPED
        if self.encoder.encode(utime, tick, rec.period_ns, rec.last_compute_ns, rec.last_lateness_ns,
                               rec.deadline_misses, rec.overruns, state, safety.state, safety.fault,
                               status_utime, status_rejected, q, v, q_d, tau) is not None:
            self.encoder.publish(self.lc)
            self.published += 1

    def safety_event(self, tick: int, utime: int, transition: Transition, source: str = "safety") -> None:
        text = transition.text[:1000]
        self.encoder.set_text(self.encoder.controller_name, text)
        e = lcmt_hil_safety_event()
        e.utime, e.tick = utime, tick
        e.previous_state, e.state = int(transition.previous), int(transition.state)
        e.fault_code, e.fault_text, e.source = int(transition.fault), text, source
        self.lc.publish(self.channels.safety, e.encode())
