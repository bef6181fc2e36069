"""`hil replay LOG`: a recorded status stream through the controller again, offline, with its
commands compared to the recorded ones: the way a field log becomes a regression test.

The loop runs in lockstep on an in-process LCM, one tick per recorded command. Before each tick it
gets the inputs the recorded loop had: the statuses up to the one the recorded command answered
(its utime echoes that status's), and the e-stop, plan, gripper status and force/torque messages logged
before the command. The
loop's trajectories run on the status clock, so with the same code and config the commands come out
bit for bit; a change in the controller, the gains, the safety logic or the dynamics shows up as a
difference, joint by joint, from the first command it touches. The safety transitions are compared
too. The config is the log's own (its run-info) unless another is given. A legged robot's log
(robot.protocol floating_base) is replayed by hil.legged_log.

Limits: a log written by another program replays only if its commands echo the status utime (else
each command gets every status logged before it); a `cartesian` trajectory planned in a background
thread in real time starts at a tick the log does not record, so its replay differs.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import lcm
import numpy as np

from drivers.core.config import RunConfig, channels_for
from drivers.core.paths import CONFIGS
from drivers.core.robot import joint_label, load_robot
from drivers.core.schema import ConfigError, LogError, parse_yaml
from drivers.run_config import parse_config
from messages import lcmt_hil_safety_event
from messages.codec import CommandDecoder, StatusDecoder
from messages.enums import FaultCode, SafetyState
from messages.logs import read_events
from messages.validation import decode_message

from .hardware import READ_LIMIT
from .lifecycle import Mode
from .loop import ControlLoop
from .runlog import read_run_info


def log_config(path: str | Path, skip_corrupt: bool = False) -> RunConfig:
    """The run config stored in the log's run-info."""
    start, _ = read_run_info(path, corrupt=[] if skip_corrupt else None)
    if start is None:
        raise ConfigError("", "the log has no run-info (it was not recorded by hil); pass --config", str(path))
    source = f"{path} (its run-info)"
    return parse_config(parse_yaml(start.config_yaml, source), CONFIGS, source)


def _event_text(data: bytes) -> str:
    m = decode_message(lcmt_hil_safety_event, data, check_values=False)
    text = f"{SafetyState(m.previous_state).name} -> {SafetyState(m.state).name}"
    return text + (f" [{FaultCode(m.fault_code).name}]" if m.fault_code else "")


def _recorded_transitions(path, channel: str, skip: list | None) -> list[str]:
    return [_event_text(e.data) for e in read_events(path, {channel}, skip)]


def replay(path: str | Path, cfg: RunConfig | None = None, tolerance: float = 1e-9, skip_corrupt: bool = False,
           viz_url: str | None = None) -> dict:
    """Replays the log at `path`; returns the comparison (see format_replay). skip_corrupt: read past
    corrupt events (messages.logs.read_events), listed in the result's "corrupt", instead of raising.
    viz_url: a legged log's replay is drawn for Meldis on that LCM URL (hil.legged_log)."""
    cfg = cfg or log_config(path, skip_corrupt)
    corrupt, skip = ([], []) if skip_corrupt else (None, None)      # skip: the stretches the other passes meet
    if cfg.robot.protocol == "floating_base":
        from .legged_log import replay_legged
        return replay_legged(path, cfg, *read_run_info(path, corrupt=skip), tolerance, corrupt, skip, viz_url)
    if viz_url is not None:
        raise ConfigError("--viz", "draws a legged robot's log (robot.protocol floating_base) only", str(path))
    cfg.telemetry.log, cfg.viz = None, dataclasses.replace(cfg.viz, enabled=False)
    ch = channels_for(cfg)
    robot = load_robot(cfg.robot)
    lc = lcm.LCM("memq://")
    loop = ControlLoop(cfg, robot, lc, Mode.LOCKSTEP, trace_every=10).configure()
    replayed: list[bytes] = []            # the replay's own safety events, as it publishes them
    lc.subscribe(ch.safety, lambda channel, data: replayed.append(data))
    n = robot.n
    recorded = CommandDecoder(cfg.robot.protocol, n, channel=ch.command)
    status = StatusDecoder(cfg.robot.protocol, n, channel=ch.status)
    inputs = {ch.status, ch.estop} | ({cfg.trajectory.channel} if cfg.trajectory.type == "stream" else set()) \
        | ({loop.gripper.status_channel} if loop.gripper is not None else set()) \
        | ({cfg.sensors.ft.channel} if cfg.sensors.ft.enabled else set())
    pending: list = []
    diffs, utime_mismatch, bad_recorded, lost, first_loss = [], 0, 0, 0, None
    first = None                          # (command index, utime, joint, replayed, recorded)
    start, end = read_run_info(path, corrupt=skip)
    summary = json.loads(end.summary_json) if end is not None and end.summary_json else {}
    exit_sent = bool(summary.get("status", {}).get("exit_command_sent"))
    # The safe command the loop sent as it left answers no tick; lcm-logger (real time) recorded it.
    exit_index = sum(1 for e in read_events(path, corrupt=skip) if e.channel == ch.command) - 1 \
        if exit_sent and start is not None and start.mode != "lockstep" else -1
    commands_seen = 0
    loop.activate()
    for event in read_events(path, corrupt=corrupt):
        if event.channel in inputs:
            pending.append(event)
            continue
        if event.channel != ch.command:
            continue
        commands_seen += 1
        if commands_seen - 1 == exit_index:
            continue
        if not recorded.decode(event.data):
            bad_recorded += 1
            continue
        while lc.handle_timeout(0) > 0:  # the replay's own messages (its command looped back, its safety
            pass                         # events) before the inputs: the tick's READ_LIMIT is theirs
        pending, found = _deliver(lc, pending, ch.status, status, recorded.utime,
                                  loop.hardware.status.utime if loop.hardware.timing.received else None)
        if not found:
            lost += 1
            first_loss = len(diffs) if first_loss is None else first_loss
        sent = loop.hardware.commands.sent
        loop.update()
        if loop.hardware.commands.sent == sent:    # no status yet in the replay: nothing to compare
            continue
        d = np.abs(loop.tau_cmd - recorded.torque)
        diffs.append(d)
        if loop.hardware.status.utime != recorded.utime:
            utime_mismatch += 1
        if first is None and d.max() > tolerance:
            j = int(d.argmax())
            first = (len(diffs) - 1, int(recorded.utime), j, float(loop.tau_cmd[j]), float(recorded.torque[j]))
    if not diffs:
        raise LogError(f"{path}: no command on {ch.command} answers a status on {ch.status} in the log")
    while lc.handle_timeout(0) > 0:
        pass
    D = np.array(diffs) if diffs else np.zeros((0, n))
    sent = summary["status"]["commands_sent"] if summary else None
    if sent is not None and exit_sent:
        sent -= 1                         # the exit command (not a tick's; in lockstep never handled)
    if sent is not None and start is not None and start.mode == "lockstep":
        sent -= 1                         # the last command is still queued for the simulator at the end
    expected = _recorded_transitions(path, ch.safety, skip)
    transitions = [_event_text(data) for data in replayed]
    worst = D.max(axis=1) if len(D) else np.zeros(0)
    return {
        "log": str(path), "config": cfg.source, "commands": len(diffs), "tolerance_nm": tolerance,
        "joints": list(robot.joint_names),
        "max_diff_nm": [float(x) for x in (D.max(axis=0) if len(D) else np.zeros(n))],
        "mismatched_commands": int((worst > tolerance).sum()),
        "first_mismatch": None if first is None else dict(zip(("command", "utime", "joint", "replayed_nm",
                                                                "recorded_nm"), first)),
        "utime_mismatches": utime_mismatch, "unreadable_recorded_commands": bad_recorded,
        "log_losses": {"commands_sent": sent, "commands_in_log": len(diffs) + bad_recorded,
                       "statuses_missing": lost, "first_command_after_a_loss": first_loss},
        "transitions": {"recorded": expected, "replayed": transitions, "match": expected == transitions},
        "corrupt": [{"byte": b, "problem": p} for b, p in corrupt or []],
        "passed": len(D) > 0 and not (worst > tolerance).any() and expected == transitions,
    }


def _deliver(lc, pending: list, status_channel: str, decoder: StatusDecoder, utime: int,
             current: int | None) -> tuple[list, bool]:
    """Publishes the pending inputs the recorded loop had when it sent the command echoing `utime`;
    returns those it did not have yet, and whether the status the command answered is in the log.
    A tick reads at most READ_LIMIT messages, and the recorded one read up to the status it answered:
    the statuses the recorder logged beyond that (before the loop's first tick, during a stall: the
    loop's LCM queue had not kept them) are left out, the oldest first."""
    statuses = [i for i, e in enumerate(pending) if e.channel == status_channel]
    found = True
    if utime == current:                  # the recorded tick reused the status it already had
        cut = statuses[0] if statuses else len(pending)
    else:
        match = [i for i in statuses if decoder.decode(pending[i].data) and decoder.utime == utime]
        cut, found = (match[-1] + 1, True) if match else (len(pending), False)
    older = [i for i in statuses if i < cut - 1]            # before the one answered
    unread = set(older[:max(cut - READ_LIMIT, 0)]) if found else set()
    for i, e in enumerate(pending[:cut]):
        if i not in unread:
            lc.publish(e.channel, e.data)
    return pending[cut:], found


def comparison_lines(r: dict, kind: str) -> list[str]:
    """The head of a replay's text: what was replayed, the largest differences, the first mismatch."""
    lines = [f"replayed {r['commands']} commands of {r['log']} ({kind}config: {r['config']})",
             f"max |Δτ| per joint N·m: {[float(f'{x:.3g}') for x in r['max_diff_nm']]} "
             f"(tolerance {r['tolerance_nm']:g})",
             f"commands beyond tolerance: {r['mismatched_commands']}"]
    f = r["first_mismatch"]
    if f is not None:
        joint = joint_label(r.get("joints"), f["joint"])
        lines.append(f"  first: command {f['command']} (status utime {f['utime']}), {joint}: replayed "
                     f"{f['replayed_nm']!r} N·m, recorded {f['recorded_nm']!r} N·m "
                     f"(Δ {f['replayed_nm'] - f['recorded_nm']:.3g})")
    return lines


def format_replay(r: dict) -> str:
    if r.get("protocol") == "floating_base":
        from .legged_log import format_legged_replay
        return format_legged_replay(r)
    lines = comparison_lines(r, "")
    loss = r["log_losses"]
    missing = (loss["commands_sent"] or 0) - loss["commands_in_log"]
    if missing > 0 or loss["statuses_missing"]:
        lines.append(f"the log is incomplete (its recorder lost messages): {max(missing, 0)} of the loop's "
                     f"{loss['commands_sent']} commands are not in it, nor the statuses that "
                     f"{loss['statuses_missing']} commands answered; commands from "
                     f"#{loss['first_command_after_a_loss']} on may differ")
    if r["corrupt"]:
        lines.append(f"corrupt: {len(r['corrupt'])} stretch(es) skipped (--skip-corrupt); the first at byte "
                     f"{r['corrupt'][0]['byte']}: {r['corrupt'][0]['problem']}")
    if r["utime_mismatches"]:
        lines.append(f"commands answering another status than recorded: {r['utime_mismatches']}")
    t = r["transitions"]
    lines.append(f"safety transitions: {'same' if t['match'] else 'DIFFERENT'} ({len(t['recorded'])} recorded)")
    if not t["match"]:
        lines += [f"  recorded: {t['recorded']}", f"  replayed: {t['replayed']}"]
    lines.append("PASS" if r["passed"] else "FAIL")
    return "\n".join(lines)
