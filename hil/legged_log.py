"""`hil report` and `hil replay` of a floating-base (legged) run's log (robot.protocol floating_base).

The report reads the robot's lcmt_hil_floating_base_status and the loop's lcmt_hil_joint_command
streams: the base (its first and last position, drift, height, the largest tilt of its z axis from
W's and speed), each foot's contact (the fraction of statuses in contact, touch-downs, lift-offs,
the largest force), the joints' distance from the hold posture (the first status's joints: the
loop's only target), the commands (rate, max |τ|, the safe damping commands) and the recorded
summary (fault, transitions, compute time).

The replay runs the statuses through the loop (hil.loop, in lockstep on an in-process LCM, the
config's law) again, one tick per recorded command, and compares each command with the recorded
one answering the same status (its utime echoes the status's): τ, and kp, kd of the safe damping
commands. The law is deterministic, so the same code and config give the same commands bit for bit.
The first fault is compared too; a status timeout is the loop's (a gap in time), which the replay,
fed the statuses back to back, does not see. With a viewer URL the
replayed statuses are drawn for Meldis as they go (the robot, the ground and the logged contact
results), paced to the log's clock.
"""
from __future__ import annotations

import json
import time

import lcm
import numpy as np

from drivers.core.schema import LogError, parse_yaml
from messages import lcmt_hil_floating_base_status, lcmt_hil_joint_command
from messages.channels import Channels
from messages.logs import read_events
from messages.validation import decode_message

from .report import _rate


def _decode(cls, event):
    try:
        return decode_message(cls, event.data, event.channel)
    except ValueError:
        return None


def legged_channels(path, start) -> Channels:
    data = parse_yaml(start.config_yaml, f"{path} (its run-info)")
    return Channels.for_robot("floating_base", **(data.get("channels") or {}))


def first_fault(summary: dict | None) -> str | None:
    """The reason of a run summary's first fault, or None."""
    faults = (summary or {}).get("faults") or []
    return faults[0]["reason"] if faults else None


def is_safe_command(m) -> bool:
    """The loop's safe command: no torque, the drives' PD as damping only (kp 0, kd > 0)."""
    return m.num_pd > 0 and not any(m.tau) and not any(m.kp) and all(k > 0 for k in m.kd)


def read_legged_log(path, start, end, corrupt) -> tuple[dict, dict]:
    """(report, traces) of a floating-base run's log (start, end: its run-info)."""
    ch = legged_channels(path, start)
    rejected = {"status": 0, "command": 0}
    S_t, S_arrive, base_p, base_R22, base_v, joints, contact, force = [], [], [], [], [], [], [], []
    C_t, C_tau, safe_t = [], [], []
    names = feet = source = None
    t0 = None
    for e in read_events(path, corrupt=corrupt):
        t0 = e.timestamp if t0 is None else t0
        if e.channel == ch.status:
            m = _decode(lcmt_hil_floating_base_status, e)
            if m is None or (names is not None and (m.num_joints != len(names) or list(m.contact_names) != feet)):
                rejected["status"] += 1
                continue
            if names is None:
                names, feet, source = list(m.joint_names), list(m.contact_names), m.base_source
            w, x, y, z = m.base_quaternion
            n2 = w * w + x * x + y * y + z * z
            S_t.append(m.utime)
            S_arrive.append(e.timestamp)
            base_p.append(m.base_position)
            base_R22.append(1.0 - 2.0 * (x * x + y * y) / n2)        # ẑ_B · ẑ_W
            base_v.append(m.base_linear_velocity)
            joints.append(m.joint_position)
            contact.append(m.contact)
            force.append(m.contact_force)
        elif e.channel == ch.command:
            m = _decode(lcmt_hil_joint_command, e)
            if m is None:
                rejected["command"] += 1
                continue
            C_t.append(e.timestamp)
            C_tau.append(m.tau)
            if is_safe_command(m):
                safe_t.append(e.timestamp)
    if names is None:
        raise LogError(f"{path}: no floating-base status on {ch.status} in the log")
    nj, nf = len(names), len(feet)
    S_t, S_arrive, C_t = (np.array(x, dtype=np.int64) for x in (S_t, S_arrive, C_t))
    P, Q = np.array(base_p).reshape(-1, 3), np.array(joints).reshape(-1, nj)
    K, F = np.array(contact, dtype=bool).reshape(-1, nf), np.array(force).reshape(-1, nf, 3)
    T = np.array(C_tau).reshape(-1, nj)
    E = Q - Q[0]
    summary = json.loads(end.summary_json) if end is not None and end.summary_json else None
    feet_report = {}
    for i, foot in enumerate(feet):
        k = K[:, i].astype(int)
        feet_report[foot] = {"in_contact": round(float(k.mean()), 4), "touchdowns": int((np.diff(k) > 0).sum()),
                             "liftoffs": int((np.diff(k) < 0).sum()),
                             "max_force_n": round(float(np.linalg.norm(F[:, i], axis=1).max()), 3)}
    report = {
        "log": str(path), "protocol": "floating_base",
        "corrupt": [{"byte": b, "problem": p} for b, p in corrupt or []],
        "mode": start.mode, "version": start.version, "config": "in the log (run-info)", "deadline_budget_us": None,
        "span_s": round((max(S_arrive[-1], C_t[-1] if C_t.size else 0) - t0) * 1e-6, 3),
        "status": {"count": int(S_t.size), "robot_clock": _rate(S_t), "arrival": _rate(S_arrive),
                   "rejected": rejected["status"], "base_source": source},
        "command": {"count": int(C_t.size), **_rate(C_t), "rejected": rejected["command"],
                    "torque_max_nm": [round(float(x), 5) for x in np.abs(T).max(axis=0)] if T.size else [],
                    "safe_commands": len(safe_t),
                    "first_safe_s": round((safe_t[0] - t0) * 1e-6, 4) if safe_t else None},
        "base": {"first_position": [round(float(x), 6) for x in P[0]],
                 "last_position": [round(float(x), 6) for x in P[-1]],
                 "drift_m": round(float(np.linalg.norm(P[-1] - P[0])), 7),
                 "height_m": {"min": round(float(P[:, 2].min()), 5), "max": round(float(P[:, 2].max()), 5),
                              "last": round(float(P[-1, 2]), 5)},
                 "max_tilt_rad": round(float(np.arccos(np.clip(min(base_R22), -1.0, 1.0))), 5),
                 "max_speed_m_s": round(float(np.linalg.norm(base_v, axis=1).max()), 5)},
        "contacts": feet_report,
        "posture_error_rad": {"joints": names, "samples": int(E.shape[0]),
                              "rms": [round(float(x), 7) for x in np.sqrt((E ** 2).mean(axis=0))],
                              "max": [round(float(x), 7) for x in np.abs(E).max(axis=0)]},
        "fault": first_fault(summary),
        "transitions": summary.get("transitions", []) if summary else [],
        "recorded_summary": summary,
    }
    traces = {"protocol": "floating_base", "t0": t0, "status": (S_arrive, P, E, K), "command": (C_t, T),
              "feet": feet}
    return report, traces


def format_legged_report(r: dict) -> str:
    s, c, b = r["status"], r["command"], r["base"]
    lines = [f"log {r['log']}: {r['span_s']} s, {r['mode']} run of hilstack {r['version']} (floating base)",
             f"status   {s['count']} (rejected {s['rejected']}, base from {s['base_source']}); robot clock "
             f"{s['robot_clock']['rate_hz']} Hz, longest gap {s['robot_clock']['max_gap_ms']} ms; arrival longest "
             f"gap {s['arrival']['max_gap_ms']} ms",
             f"command  {c['count']} (rejected {c['rejected']}); {c['rate_hz']} Hz, longest gap {c['max_gap_ms']} ms; "
             f"max |τ| N·m {c['torque_max_nm']}",
             f"         safe (damping) commands {c['safe_commands']}"
             + (f", the first at {c['first_safe_s']} s" if c["first_safe_s"] is not None else ""),
             f"base     from {b['first_position']} to {b['last_position']} m: drift {b['drift_m'] * 1e3:.3f} mm; "
             f"height {b['height_m']['min']}..{b['height_m']['max']} m; max tilt {b['max_tilt_rad']} rad, "
             f"max speed {b['max_speed_m_s']} m/s"]
    lines += [f"foot     {name}: in contact {f['in_contact'] * 100:.1f}% of statuses, {f['touchdowns']} touch-downs, "
              f"{f['liftoffs']} lift-offs, max force {f['max_force_n']} N" for name, f in r["contacts"].items()]
    e = r["posture_error_rad"]
    lines += [f"posture  joints from the hold (the first status), rad ({e['samples']} statuses): "
              f"rms max {max(e['rms']):.3g}, max {max(e['max']):.3g} ({e['joints'][int(np.argmax(e['max']))]})"]
    if r["corrupt"]:
        lines.append(f"corrupt: {len(r['corrupt'])} stretch(es) skipped (--skip-corrupt); the first at byte "
                     f"{r['corrupt'][0]['byte']}: {r['corrupt'][0]['problem']}")
    lines.append(f"fault: {r['fault']}" if r["fault"] else "fault: none")
    lines += [f"  {x}" for x in r["transitions"][:20]]
    if r["recorded_summary"] is not None:
        from .telemetry import format_summary
        lines += ["the loop's own summary:", format_summary(r["recorded_summary"])]
    return "\n".join(lines)


def plot_legged_log(traces: dict, path: str) -> None:
    """Base height and drift, the joints' distance from the hold, the commanded torques and the
    feet's contact flags over time."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t0 = traces["t0"]
    s_t, P, E, K = traces["status"]
    c_t, T = traces["command"]
    ts, tc = (s_t - t0) * 1e-6, (c_t - t0) * 1e-6
    fig, ax = plt.subplots(4, 1, figsize=(10, 11), sharex=True)
    ax[0].plot(ts, P[:, 2], label="base height [m]")
    ax[0].plot(ts, np.linalg.norm(P - P[0], axis=1), label="base drift [m]")
    ax[0].legend(loc="best")
    ax[1].plot(ts, E)
    ax[1].set_ylabel("q − q_hold [rad]")
    ax[2].plot(tc, T)
    ax[2].set_ylabel("τ commanded [N·m]")
    for i, foot in enumerate(traces["feet"]):
        ax[3].step(ts, K[:, i] + 1.5 * i, where="post", label=foot)
    ax[3].set_ylabel("contact")
    ax[3].legend(loc="best", fontsize="small")
    ax[3].set_xlabel("t [s] (arrival)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


class Drawing:
    """The statuses drawn for Meldis on the LCM at `url` (drivers.viz.ViewerBridge: the robot and the
    simulator's ground) as the replay delivers them, no faster than the log's clock."""

    def __init__(self, plant, url: str, ground_height: float):
        from drivers.sim.contact import ground_visual
        from drivers.viz import ViewerBridge, VizConfig
        self.lc = lcm.LCM(url)
        self.bridge = ViewerBridge(plant, self.lc, Channels(), VizConfig(), anchored=[ground_visual(ground_height)])
        self.q = plant.GetDefaultPositions()
        self.start: tuple | None = None          # (wall clock s, log utime) of the first status

    def status(self, m) -> None:
        now = time.monotonic()
        if self.start is None:
            self.start = (now, m.utime)
        ahead = (m.utime - self.start[1]) * 1e-6 - (now - self.start[0])
        if ahead > 0:
            time.sleep(ahead)
        self.q[:4], self.q[4:7], self.q[7:] = m.base_quaternion, m.base_position, m.joint_position
        self.bridge.tick(m.utime * 1000, self.q, m.utime)


def replay_legged(path, cfg, start, end, tolerance: float, corrupt, skip, viz_url: str | None = None) -> dict:
    """The statuses of the log through the controller of `cfg` again; its commands compared with the
    recorded ones (see the module docstring). corrupt/skip as in hil.replay.replay; viz_url: draw
    them for Meldis on that LCM URL (Drawing)."""
    from drivers.core.config import channels_for

    from .floating_base import legged_robot
    from .lifecycle import Mode
    from .loop import ControlLoop
    ch = channels_for(cfg)
    robot = legged_robot(cfg)
    plant = robot.plant
    lc = lcm.LCM("memq://")
    loop = ControlLoop(cfg, robot, lc, Mode.LOCKSTEP).configure()
    loop.activate()
    published: list[bytes] = []
    lc.subscribe(ch.command, lambda channel, data: published.append(data))
    drawing = None
    if viz_url is not None:
        drawing = Drawing(plant, viz_url, cfg.sim.contact.ground.height)
    summary = json.loads(end.summary_json) if end is not None and end.summary_json else {}
    exit_sent = bool(summary.get("status", {}).get("exit_command_sent"))
    # the safe command the loop sent as it left answers no status; lcm-logger (real time) recorded it
    exit_index = sum(1 for e in read_events(path, corrupt=skip) if e.channel == ch.command) - 1 \
        if exit_sent and start is not None and start.mode != "lockstep" else -1
    pending, diffs, bad, lost, first, seen = [], [], 0, 0, None, -1
    for event in read_events(path, corrupt=corrupt):
        if event.channel == ch.status:
            pending.append(event)
            continue
        if drawing is not None and event.channel == ch.contact_results:
            drawing.lc.publish(event.channel, event.data)
        if event.channel != ch.command:
            continue
        seen += 1
        if seen == exit_index:
            continue
        rec = _decode(lcmt_hil_joint_command, event)
        if rec is None:
            bad += 1
            continue
        cut = next((i + 1 for i, e in enumerate(pending)
                    if (m := _decode(lcmt_hil_floating_base_status, e)) is not None and m.utime == rec.utime), None)
        if cut is None:
            lost += 1
            cut = len(pending)
        for e in pending[:cut]:
            lc.publish(e.channel, e.data)
            if drawing is not None and (m := _decode(lcmt_hil_floating_base_status, e)) is not None:
                drawing.status(m)
        pending = pending[cut:]
        loop.update()                              # the statuses, one tick: one command
        while lc.handle_timeout(0) > 0:
            pass
        if not published:
            continue
        mine = lcmt_hil_joint_command.decode(published[-1])
        published.clear()
        d = np.abs(np.subtract(mine.tau, rec.tau)) if mine.num_joints == rec.num_joints else np.full(rec.num_joints,
                                                                                                     np.inf)
        if mine.num_pd != rec.num_pd:
            d = np.full_like(d, np.inf)
        elif mine.num_pd:
            d = np.maximum(d, np.maximum(np.abs(np.subtract(mine.kp, rec.kp)), np.abs(np.subtract(mine.kd, rec.kd))))
        diffs.append(d)
        if first is None and d.max() > tolerance:
            j = int(d.argmax())
            first = (len(diffs) - 1, int(rec.utime), j, float(mine.tau[j]), float(rec.tau[j]))
    if not diffs:
        raise LogError(f"{path}: no command on {ch.command} answers a status on {ch.status} in the log")
    D = np.array(diffs)
    worst = D.max(axis=1)
    recorded_fault = first_fault(summary)
    replayed = loop.safety.faults_seen.head[0][3] if loop.safety.faults_seen.head else None
    loop.close()
    timeout = recorded_fault is not None and recorded_fault.startswith("no valid status")
    fault_match = replayed == recorded_fault or (timeout and replayed is None)
    return {
        "log": str(path), "protocol": "floating_base", "config": cfg.source, "commands": len(diffs),
        "tolerance_nm": tolerance, "joints": list(robot.joint_names), "max_diff_nm": [float(x) for x in D.max(axis=0)],
        "mismatched_commands": int((worst > tolerance).sum()),
        "first_mismatch": None if first is None else dict(zip(("command", "utime", "joint", "replayed_nm",
                                                                "recorded_nm"), first)),
        "unreadable_recorded_commands": bad, "statuses_missing": lost,
        "fault": {"recorded": recorded_fault, "replayed": replayed, "match": fault_match},
        "corrupt": [{"byte": b, "problem": p} for b, p in corrupt or []],
        "drawn": None if drawing is None else {"url": viz_url, "draws": drawing.bridge.draws},
        "passed": not (worst > tolerance).any() and fault_match,
    }


def format_legged_replay(r: dict) -> str:
    from .replay import comparison_lines
    lines = comparison_lines(r, "floating base; ")
    if r["statuses_missing"] or r["unreadable_recorded_commands"]:
        lines.append(f"the log is incomplete: {r['statuses_missing']} commands answer a status not in it, "
                     f"{r['unreadable_recorded_commands']} recorded commands unreadable")
    if r["corrupt"]:
        lines.append(f"corrupt: {len(r['corrupt'])} stretch(es) skipped (--skip-corrupt); the first at byte "
                     f"{r['corrupt'][0]['byte']}: {r['corrupt'][0]['problem']}")
    if r["drawn"] is not None:
        lines.append(f"drawn for the viewer on {r['drawn']['url']}: {r['drawn']['draws']} draws")
    fault = r["fault"]
    lines.append(f"fault: {'same' if fault['match'] else 'DIFFERENT'} (recorded {fault['recorded']!r}, replayed "
                 f"{fault['replayed']!r})")
    lines.append("PASS" if r["passed"] else "FAIL")
    return "\n".join(lines)
