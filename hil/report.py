"""`hil report LOG`: a run's summary and plots from its LCM log alone.

From the streams: the robot's status (count, rate and the longest gap on the robot's clock and on
arrival), the commands (count, max |τ| per joint), the loop's telemetry samples (compute time and
lateness percentiles, deadline misses, tracking error q_d − q), the safety transitions, and the
driver's health. A log recorded by hil also carries the run config and the loop's own end-of-run
summary (run-info), which the report prints as well. A log without run-info (lcm-logger on a
robot's bus) is read with the default channels of the protocol whose status it holds. A legged
robot's log (robot.protocol floating_base) is read by hil.legged_log.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from drivers.core.config import gripper_channels
from drivers.core.schema import LogError, parse_yaml
from messages import lcmt_hil_telemetry
from messages.channels import Channels
from messages.codec import CommandDecoder, ForceTorqueDecoder, StatusDecoder, WsgCommandDecoder, WsgStatusDecoder
from messages.logs import read_events
from messages.validation import decode_message

from .hardware import PROTOCOLS
from .replay import _event_text
from .runlog import read_run_info


def _channels(path, start, corrupt) -> tuple[Channels, str, int, float]:
    """(channels, protocol, joints, deadline budget µs) of the logged run: from its run-info's config,
    else from the robot status channel the log holds."""
    from messages import lcmt_iiwa_status, lcmt_panda_status
    if start is not None:
        data = parse_yaml(start.config_yaml, f"{path} (its run-info)")
        try:
            protocol = data["robot"]["protocol"]
            candidates = [(Channels.for_robot(protocol, **(data.get("channels") or {})), protocol)]
            budget = float(data.get("loop", {}).get("deadline_budget_us", 200.0))
        except (KeyError, TypeError, AttributeError, ValueError) as e:   # a run-info written by another tool
            raise LogError(f"{path}: its run-info's config has no usable robot, channels or loop ({e!r})") from None
    else:
        candidates, budget = [(Channels.for_robot(p), p) for p in ("iiwa", "panda")], 200.0
    for ch, protocol in candidates:
        first = next(read_events(path, {ch.status}, corrupt), None)
        if first is not None:
            msg = decode_message(lcmt_iiwa_status if protocol == "iiwa" else lcmt_panda_status, first.data,
                                 first.channel, check_values=False)
            return ch, protocol, msg.num_joints, budget
    raise LogError(f"{path}: no robot status in the log (looked for "
                     f"{', '.join(ch.status for ch, _ in candidates)})")


def _run_config(path, start) -> dict:
    """The run-info's config as a mapping ({} without run-info)."""
    data = None if start is None else parse_yaml(start.config_yaml, f"{path} (its run-info)")
    return data if isinstance(data, dict) else {}


def _robot_key(config: dict, key: str) -> str | None:
    """robot.KEY of the run's config (None without it)."""
    return (config.get("robot") or {}).get(key)


def _gripper_channels(config: dict) -> tuple[str, str] | None:
    """The gripper's (status, command) channels when the run had one (its config's gripper), else None."""
    g = config.get("gripper") or {}
    return gripper_channels(g["type"], g.get("status_channel"), g.get("command_channel")) if g.get("type") else None


def _ft_channel(config: dict) -> str | None:
    """The wrist force/torque sensor's channel when the run read one (its config's sensors.ft), else None."""
    ft = (config.get("sensors") or {}).get("ft") or {}
    return ft.get("channel", "FT_SENSOR") if ft.get("enabled") else None


def _pct(x: np.ndarray) -> dict:
    if not x.size:
        return {}
    p50, p99, p999 = np.percentile(x, [50, 99, 99.9])
    return {"p50": round(float(p50), 2), "p99": round(float(p99), 2), "p99.9": round(float(p999), 2),
            "max": round(float(x.max()), 2)}


def _rate(t_us: np.ndarray) -> dict:
    if t_us.size < 2:
        return {"rate_hz": None, "max_gap_ms": None}
    span = (t_us[-1] - t_us[0]) * 1e-6
    return {"rate_hz": round((t_us.size - 1) / span, 2) if span > 0 else None,
            "max_gap_ms": round(float(np.diff(t_us).max()) * 1e-3, 3)}


def _rms(E: np.ndarray) -> np.ndarray:
    """Per column √(mean e²), inf where a corrupted log's errors overflow the squares (no warning)."""
    with np.errstate(over="ignore"):
        return np.sqrt((E ** 2).mean(axis=0))


def read_log(path: str | Path, skip_corrupt: bool = False) -> tuple[dict, dict]:
    """(report, traces): the figures, and the arrays the plots need."""
    corrupt = [] if skip_corrupt else None        # (byte offset, what is wrong) of each corrupt stretch
    start, end = read_run_info(path, corrupt=[] if skip_corrupt else None)
    config = _run_config(path, start)
    if _robot_key(config, "protocol") == "floating_base":
        from .legged_log import read_legged_log
        return read_legged_log(path, start, end, corrupt)
    ch, protocol, n, budget = _channels(path, start, [] if skip_corrupt else None)
    status, command = StatusDecoder(protocol, n), CommandDecoder(protocol, n)
    sign = PROTOCOLS[protocol].torque_signs[0]
    ft_channel, ft = _ft_channel(config), ForceTorqueDecoder()
    grip = _gripper_channels(config)
    g_status, g_command = (WsgStatusDecoder(grip[0]), WsgCommandDecoder(grip[1])) if grip else (None, None)
    s_t, s_arrive, s_q, s_tau, c_t, c_tau, w_t, w = [], [], [], [], [], [], [], []
    g_t, g, g_sent, sent = [], [], [], [np.nan, np.nan]      # the gripper's status [w, ẇ, f], the command in force
    tel, transitions, health = [], [], 0
    rejected = {"status": 0, "command": 0, "telemetry": 0, "wrench": 0, "gripper": 0}
    t0 = None
    for e in read_events(path, corrupt=corrupt):
        t0 = e.timestamp if t0 is None else t0
        if e.channel == ch.status:
            if status.decode(e.data):
                s_t.append(status.utime)
                s_arrive.append(e.timestamp)
                s_q.append(status.position_measured.copy())
                s_tau.append(sign * status.torque_measured)       # in MultibodyPlant's signs
            else:
                rejected["status"] += 1
        elif e.channel == ch.command:
            if command.decode(e.data):
                c_t.append(e.timestamp)
                c_tau.append(command.torque.copy())
            else:
                rejected["command"] += 1
        elif e.channel == ch.telemetry:
            try:
                tel.append((e.timestamp, decode_message(lcmt_hil_telemetry, e.data, e.channel)))
            except ValueError:
                rejected["telemetry"] += 1
        elif e.channel == ch.safety:
            transitions.append(f"t {(e.timestamp - t0) * 1e-6:.3f} s: {_event_text(e.data)}")
        elif e.channel == ch.driver_health:
            health += 1
        elif e.channel == ft_channel:
            if ft.decode(e.data):                        # [τ; f] from fx fy fz tx ty tz
                w_t.append(e.timestamp)
                w.append(np.r_[ft.values[3:], ft.values[:3]])
            else:
                rejected["wrench"] += 1
        elif grip and e.channel == grip[0]:
            if g_status.decode(e.data):                  # [position mm, force N, speed mm/s]
                g_t.append(e.timestamp)
                g.append((g_status.actual_position_mm * 1e-3, g_status.actual_speed_mm_per_s * 1e-3,
                          abs(g_status.actual_force)))
                g_sent.append(tuple(sent))
            else:
                rejected["gripper"] += 1
        elif grip and e.channel == grip[1] and g_command.decode(e.data):
            sent = [g_command.target_position_mm * 1e-3, g_command.force]
    s_t, s_arrive, c_t, w_t, g_t = (np.array(x, dtype=np.int64) for x in (s_t, s_arrive, c_t, w_t, g_t))
    W = np.array(w).reshape(-1, 6)
    S_q, S_tau, C_tau = (np.array(x).reshape(-1, n) for x in (s_q, s_tau, c_tau))
    running = [(t, m) for t, m in tel if m.safety_state == 1]          # SAFETY_RUNNING
    E = np.array([np.subtract(m.q_desired, m.q) for _, m in running]).reshape(-1, n)
    report = {
        "log": str(path),
        "corrupt": [{"byte": b, "problem": p} for b, p in corrupt or []],
        "mode": start.mode if start else None,
        "deadline_budget_us": budget,
        "version": start.version if start else None,
        "config": "in the log (run-info)" if start else None,
        "span_s": round((max(s_arrive[-1] if s_arrive.size else 0, c_t[-1] if c_t.size else 0) - t0) * 1e-6, 3)
        if t0 is not None else 0.0,
        "status": {"count": int(s_t.size), "robot_clock": _rate(s_t), "arrival": _rate(s_arrive),
                   "rejected": rejected["status"]},
        "command": {"count": int(c_t.size), **_rate(c_t), "rejected": rejected["command"],
                    "torque_max_nm": [round(float(x), 5) for x in np.abs(C_tau).max(axis=0)] if C_tau.size else []},
        "telemetry": {"samples": len(tel),
                      "compute_us": _pct(np.array([m.compute_ns for _, m in tel]) / 1e3),
                      "lateness_us": _pct(np.array([m.lateness_ns for _, m in tel]) / 1e3),
                      "deadline_misses": tel[-1][1].deadline_misses if tel else None,
                      "overruns": tel[-1][1].overruns if tel else None},
        "tracking_error_rad": {"samples": int(E.shape[0]),
                               "rms": [round(float(x), 7) for x in _rms(E)] if E.size else [],
                               "max": [round(float(x), 7) for x in np.abs(E).max(axis=0)] if E.size else []},
        "transitions": transitions,
        "driver_health_messages": health,
        "wrench": None if ft_channel is None else {
            "channel": ft_channel, "count": int(w_t.size), **_rate(w_t), "rejected": rejected["wrench"],
            "torque_max_nm": round(float(np.linalg.norm(W[:, :3], axis=1).max()), 5) if W.size else None,
            "force_max_n": round(float(np.linalg.norm(W[:, 3:], axis=1).max()), 5) if W.size else None},
        "gripper": None if grip is None else {
            "channel": grip[0], "count": int(g_t.size), **_rate(g_t), "rejected": rejected["gripper"]},
        "recorded_summary": json.loads(end.summary_json) if end is not None and end.summary_json else None,
    }
    T = np.array([t for t, _ in tel], dtype=np.int64)
    summary = report["recorded_summary"] or {}
    traces = {"t0": t0 or 0, "status": (s_arrive, S_q), "command": (c_t, C_tau), "telemetry": (T, tel),
              "n": n, "wrench": (w_t, W) if ft_channel is not None else None, "joints": summary.get("joints"),
              "status_torque": S_tau,
              "gripper": (g_t, np.array(g).reshape(-1, 3), np.array(g_sent).reshape(-1, 2)) if grip else None,
              # a position or velocity command carries no τ: the plots show the measured one
              "measured_torque": (s_arrive, S_tau) if _robot_key(config, "command") in ("position", "velocity")
              else None}
    return report, traces


def format_report(r: dict) -> str:
    if r.get("protocol") == "floating_base":
        from .legged_log import format_legged_report
        return format_legged_report(r)
    s, c, t, e = r["status"], r["command"], r["telemetry"], r["tracking_error_rad"]
    lines = [f"log {r['log']}: {r['span_s']} s" + (f", {r['mode']} run of hilstack {r['version']}" if r["mode"] else
                                                  ", no run-info (not recorded by hil)"),
             f"status   {s['count']} (rejected {s['rejected']}); robot clock {s['robot_clock']['rate_hz']} Hz, "
             f"longest gap {s['robot_clock']['max_gap_ms']} ms; arrival longest gap {s['arrival']['max_gap_ms']} ms",
             f"command  {c['count']} (rejected {c['rejected']}); {c['rate_hz']} Hz, longest gap {c['max_gap_ms']} ms; "
             f"max |τ| N·m {c['torque_max_nm']}"]
    if t["samples"]:
        lines += [f"telemetry {t['samples']} samples: compute µs {t['compute_us']}, lateness µs {t['lateness_us']}",
                  f"          deadline misses {t['deadline_misses']}, overruns {t['overruns']}",
                  f"tracking error rad ({e['samples']} samples while RUNNING) rms {e['rms']}",
                  f"                    max {e['max']}"]
    w = r.get("wrench")
    if w is not None:
        lines.append(f"wrench   {w['count']} on {w['channel']} (rejected {w['rejected']}); {w['rate_hz']} Hz, longest "
                     f"gap {w['max_gap_ms']} ms; max |f| {w['force_max_n']} N, max |τ| {w['torque_max_nm']} N·m")
    g = r.get("gripper")
    if g is not None:
        lines.append(f"gripper  {g['count']} statuses on {g['channel']} (rejected {g['rejected']}); {g['rate_hz']} Hz, "
                     f"longest gap {g['max_gap_ms']} ms")
    if r["corrupt"]:
        first = r["corrupt"][0]
        lines.append(f"corrupt: {len(r['corrupt'])} stretch(es) skipped (--skip-corrupt); the first at byte "
                     f"{first['byte']}: {first['problem']}")
    lines.append(f"safety transitions: {len(r['transitions'])}")
    lines += [f"  {x}" for x in r["transitions"][:20]]
    if len(r["transitions"]) > 20:
        lines.append(f"  ... {len(r['transitions']) - 20} more")
    if r["recorded_summary"] is not None:
        from .telemetry import format_summary
        lines += ["the loop's own summary:", format_summary(r["recorded_summary"])]
    return "\n".join(lines)


def plot_log(traces: dict, path: str, budget_us: float, title: str | None = None) -> None:
    """The run's plots (as `--plot` draws them) from the log's streams."""
    if traces.get("protocol") == "floating_base":
        from .legged_log import plot_legged_log
        return plot_legged_log(traces, path)
    from .telemetry import plot_traces, torque_panel
    t0, n = traces["t0"], traces["n"]
    s_t, S_q = traces["status"]
    c_t, C_tau = traces["command"]
    T, tel = traces["telemetry"]
    sec = lambda t: (t - t0) * 1e-6
    Q = np.array([m.q for _, m in tel]).reshape(-1, n)
    Qd = np.array([m.q_desired for _, m in tel]).reshape(-1, n)
    wrench, measured, gripper = traces.get("wrench"), traces.get("measured_torque"), traces.get("gripper")
    kind, tau = ("measured", (sec(measured[0]), measured[1])) if measured is not None else \
        torque_panel("commanded", (sec(c_t), C_tau), (sec(s_t), traces["status_torque"]))
    plot_traces(path, (sec(s_t), S_q), (sec(T), Qd), (sec(T), Qd - Q), tau,
                (sec(T), np.array([m.compute_ns for _, m in tel]) / 1e3,
                 np.array([m.lateness_ns for _, m in tel]) / 1e3, "t [s] (telemetry samples)"), budget_us,
                wrench=None if wrench is None else (sec(wrench[0]), wrench[1]), names=traces.get("joints"),
                torque=kind, title=title, gripper=None if gripper is None else (sec(gripper[0]), *gripper[1:]))
