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
from drivers.core.robot import joint_label
from messages import lcmt_hil_safety_event
from messages.codec import TelemetryEncoder
from messages.enums import ControllerState, SafetyState

from .safety import Transition
from .sketch import LogHistogram


class TickRecorder:
    """Timing and tracking statistics of the loop, preallocated; fixed memory for any run length."""

    def __init__(self, n: int, period_ns: int, budget_ns: int, trace_rows: int = 20_000, trace_every: int = 1,
                 joint_names: list[str] | None = None, torque: str = "commanded"):
        self.period_ns, self.budget_ns = period_ns, budget_ns
        self.joint_names = joint_names          # the summary's "joints", the plots' legends
        self.traced_torque = torque             # which τ the trace holds: "commanded", or "measured" (position mode)
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
        self.followed: dict[str, np.ndarray] = {}      # name: the trace of an array the loop follows (follow())
        self._follow: list[tuple[np.ndarray, np.ndarray]] = []
        self.objects: list[tuple[str, int]] = []       # (name, start of its p_WO in the followed "sim_q")

    def follow(self, name: str, values: np.ndarray) -> None:
        """Traces `values` (an array refreshed in place: a gripper's status, the F/T wrench, the simulated
        plant's q) beside q, for the plots' device panels; buffers allocated here, at setup."""
        self.followed[name] = buf = np.zeros((self.trace_t.shape[0], values.shape[0]))
        self._follow.append((buf, values))

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
            for a, _ in self._follow:
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
        for buf, values in self._follow:
            _control.set_row(buf, r, values)
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
            **({"joints": list(self.joint_names)} if self.joint_names else {}),
        }
        out.update(extra or {})
        return out


def fault_count(summary: dict) -> int:
    """How many faults a run had: every one, also those the summary's bounded "faults" list left out."""
    return sum(summary["fault_counts"].values()) if "fault_counts" in summary else len(summary["faults"])


def exit_status(summary: dict) -> int:
    """`hil run`'s exit status for a run that ended: 0 without a fault, 3 when it faulted, whether it
    ended in the fault or recovered from it (the summary says which)."""
    return 3 if fault_count(summary) else 0


def final_line(s: dict) -> str:
    """'final state X; faults: ...', or 'final state RUNNING, recovered from N faults: ...'."""
    n, faults = fault_count(s), _faults(s["faults"], s.get("fault_counts"))
    if n and s["final_state"] in ("RUNNING", "INIT"):
        return f"final state {s['final_state']}, recovered from {n} fault{'s' if n > 1 else ''}: {faults}"
    return f"final state {s['final_state']}; faults: {faults}"


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


def _figures(p: dict, keys=("p50", "p99", "p99.9", "max")) -> str:
    """'p50 1.2  p99 3.4 …' of a percentiles dict, or what stands for none (no tick measured)."""
    return "  ".join(f"{k} {p[k]}" for k in keys) if p else "— (no tick measured)"


def format_summary(s: dict) -> str:
    """The summary as a few readable lines ("—" for a figure a short run has none of)."""
    c, l, e = s["compute_us"], s["lateness_us"], s["tracking_error_rad"]
    rate = s["rate_hz"]["achieved"]
    lines = [f"ticks {s['ticks']} in {s['duration_s']:.2f} s, rate {'—' if rate is None else rate} Hz "
             f"(target {s['rate_hz']['target']:g})",
             f"compute µs   {_figures(c)}",
             f"lateness µs  {_figures(l)}",
             f"deadline misses {s['deadline_misses']} (> {s['deadline_budget_us']:g} µs late), overruns "
             f"{s['overruns']}, torque-saturated ticks {s['torque_saturated_ticks']}",
             *(["tracking error rad  — (no RUNNING tick)"] if e.get("ticks") == 0 else
               [f"tracking error rad  rms {[round(x, 5) for x in e['rms']]}",
                f"                    max {[round(x, 5) for x in e['max']]}"]),
             final_line(s)]
    law = s.get("controller_timing")
    if law:
        u = law["update_us"]
        ran = f"update µs  {_figures(u, ('p50', 'p99', 'max'))}" if u else "the law never ran (update() not called)"
        lines.insert(2, f"controller {s['controller']}: {ran} (budget {law['budget_us']:g}, "
                        f"overruns {law['overruns']})")
        if "\n" in law.get("error", ""):    # (its message is the CONTROLLER fault's reason, above)
            lines.append("the law's traceback: logged as it happened (--json: controller_timing.error)")
    if s.get("controller_metrics"):
        lines.append(f"controller metrics: {json.dumps(s['controller_metrics'])}")
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
    if isinstance(s.get("plot"), str):
        lines.append(f"plot: {s['plot']}")
    return "\n".join(lines)


TORQUE_PANELS = {        # the τ panel: (its label, a note above it)
    "commanded": ("commanded τ [N·m]", None),
    "measured": ("measured τ [N·m]", "the command carries positions or velocities, no τ: the driver's measured τ"),
    "zero": ("measured τ [N·m]", "the commanded τ is zero throughout (the robot's own controller carries the arm): "
                                 "the driver's measured τ")}


def torque_panel(kind: str, commanded, measured) -> tuple[str, object]:
    """(the τ panel's kind, its (t, rows) trace): the commanded τ, unless it is zero throughout and the
    measured one is known ("zero")."""
    if kind == "commanded" and measured is not None and commanded[1].size and not np.any(commanded[1]):
        return "zero", measured
    return kind, commanded


def plot(recorder: TickRecorder, path: str, title: str | None = None) -> None:
    """Tracking (q and q_d per joint) and timing (compute time, lateness) plots of a run in one PNG."""
    r = recorder.trace_rows
    t = recorder.trace_t[:r]
    q, q_d = recorder.trace_q[:r], recorder.trace_qd[:r]
    timing = recorder.trace_timing[:r] / 1e3
    f = {name: buf[:r] for name, buf in recorder.followed.items()}
    gripper = (t, f["gripper"], f["gripper_sent"]) if "gripper" in f else None
    objects = (t, {name: f["sim_q"][:, i:i + 3] for name, i in recorder.objects}) if recorder.objects else None
    kind, tau = torque_panel(recorder.traced_torque, (t, recorder.trace_tau[:r]),
                             (t, f["tau_measured"]) if "tau_measured" in f else None)
    plot_traces(path, (t, q), (t, q_d), (t, q_d - q), tau,
                (t, timing[:, 0], timing[:, 1], "t [s]"),
                recorder.budget_ns / 1e3, wrench=(t, f["wrench"]) if "wrench" in f else None,
                names=recorder.joint_names, torque=kind, title=title, gripper=gripper,
                objects=objects)


def plot_traces(path: str, q, q_d, error, tau, timing, budget_us: float, wrench=None, names=None,
                torque: str = "commanded", title: str | None = None, gripper=None, objects=None) -> None:
    """Four panels in one PNG: q (solid) and q_d (dashed, drawn over q), q_d − q, τ (`torque`: commanded,
    or measured when the command sends none; each a (t [s], rows × joints) pair), and timing: (x, compute
    µs, lateness µs, x label); a panel more for each device: the wrist force/torque sensor's readings
    (`wrench`: t [s], rows × [τ; f]), the gripper (`gripper`: t, rows × its status [w, ẇ, f], rows × the
    command sent [w, f]) and the simulated objects' positions (`objects`: t, {name: rows × p_WO}). The
    legends name the joints (`names`, else joint 0, 1, …); `title` above them."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = 4 + sum(x is not None for x in (wrench, gripper, objects))
    fig, axes = plt.subplots(panels, 1, figsize=(10, 3 * panels))
    for j in range(q[1].shape[1]):
        name = joint_label(names, j)
        line, = axes[0].plot(q[0], q[1][:, j], linewidth=2.2, alpha=0.45, label=name)
        axes[0].plot(q_d[0], q_d[1][:, j], "--", color=line.get_color(), linewidth=0.9, zorder=3)
        axes[1].plot(error[0], error[1][:, j], label=name)
        axes[2].plot(tau[0], tau[1][:, j], label=name)
    axes[0].set_ylabel("q (solid, wide), q_d (dashed) [rad]")
    axes[1].set_ylabel("q_d − q [rad]")
    label, note = TORQUE_PANELS[torque]
    axes[2].set_ylabel(label)
    if note:
        axes[2].set_title(note, fontsize=8)
    if title:
        fig.suptitle(title)
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
    more = iter(axes[4:])
    if wrench is not None:
        ax, (t, W) = next(more), wrench
        for i, name in enumerate(("τx", "τy", "τz")):
            ax.plot(t, W[:, i], "--", linewidth=0.8, label=f"{name} [N·m]")
        for i, name in enumerate(("fx", "fy", "fz")):
            ax.plot(t, W[:, 3 + i], label=f"{name} [N]")
        ax.set_ylabel("wrench in S: f [N] (solid), τ [N·m] (dashed)")
        ax.set_xlabel("t [s]")
        ax.legend(loc="upper right", ncol=6, fontsize=7)
    if gripper is not None:
        ax, (t, status, sent) = next(more), gripper
        ax.plot(t, status[:, 0] * 1e3, label="width (status)")
        ax.step(t, sent[:, 0] * 1e3, "--", where="post", linewidth=0.9, label="width commanded")
        ax.set_ylabel("gripper width [mm]")
        ax.set_xlabel("t [s]")
        grip = ax.twinx()
        grip.plot(t, status[:, 2], color="tab:red", linewidth=0.8, label="grip force (status)")
        grip.set_ylabel("grip force [N]")
        lines = ax.get_legend_handles_labels(), grip.get_legend_handles_labels()
        ax.legend(lines[0][0] + lines[1][0], lines[0][1] + lines[1][1], loc="upper right", fontsize=7)
    if objects is not None:
        ax, (t, P) = next(more), objects
        for name, p in P.items():
            line, = ax.plot(t, p[:, 2], label=f"{name} z")
            ax.plot(t, p[:, 0], ":", color=line.get_color(), linewidth=0.8, label=f"{name} x")
            ax.plot(t, p[:, 1], "-.", color=line.get_color(), linewidth=0.8, label=f"{name} y")
        ax.set_ylabel("simulated objects p_WO [m]")
        ax.set_xlabel("t [s]")
        ax.legend(loc="upper right", ncol=3, fontsize=7)
    for ax in axes[4:]:                   # the devices' time axis as the joints' (a gripper's status comes later)
        ax.set_xlim(axes[0].get_xlim())
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / (3 * panels)) if title else None)
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

    def final(self, tick: int, utime: int, rec: TickRecorder, safety, status_utime: int, status_rejected: int,
              q, v, q_d, tau) -> None:
        """The last message, after the exit command: the controller STOPPED, the final safety state and a
        text saying the loop ended (a viewer of the telemetry does not go on reading RUNNING)."""
        state = safety.state.name + (f" [{safety.fault.name}]" if safety.state == SafetyState.FAULT else "")
        self.encoder.set_text(self.encoder.controller_name, f"the loop ended (final state {state}); the exit "
                                                            "command sent, no controller commands")
        if self.encoder.encode(utime, tick, rec.period_ns, rec.last_compute_ns, rec.last_lateness_ns,
                               rec.deadline_misses, rec.overruns, ControllerState.STOPPED, safety.state,
                               safety.fault, status_utime, status_rejected, q, v, q_d, tau) is not None:
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
