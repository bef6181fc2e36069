"""Run logs (hil.runlog), `hil replay` and `hil report`: recorded in lockstep and in real time (two
processes over UDP multicast, lcm-logger recording), replayed exactly, changes caught."""
import dataclasses
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from drivers.core.paths import CONFIGS
from drivers.core.schema import ConfigError
from drivers.run_config import load_config, parse_config
from hil.lockstep import run_lockstep
from hil.replay import format_replay, replay
from hil.report import format_report, read_log
from hil.runlog import read_run_info
from messages.channels import private_lcm_url
from messages.logs import LogRecorder, read_events
from tests.hil.processes import spawn

DEMO = CONFIGS / "demo.yaml"


@pytest.fixture(scope="module")
def lockstep_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("logs") / "lockstep.lcmlog"
    cfg = load_config(DEMO, {"viz": False, "telemetry": {"log": str(path)},
                             "sim": {"faults": [{"type": "silent", "start": 0.3, "stop": 0.35}]}})
    summary, loop, sim = run_lockstep(cfg, 1.5)
    return path, cfg, summary


def test_lockstep_log_holds_the_traffic_the_config_and_the_summary(lockstep_log):
    path, cfg, summary = lockstep_log
    counts = Counter(e.channel for e in read_events(path))
    # 50 silent steps; the simulator's step after the last tick published one that no tick heard
    assert counts["IIWA_STATUS"] == summary["sim"]["statuses_published"] - 1 == 1450
    # the last tick's command went to the simulator's step (heard); the exit command is still queued
    assert summary["status"]["exit_command_sent"]
    assert counts["IIWA_COMMAND"] == summary["status"]["commands_sent"] - 1
    assert counts["HIL_TELEMETRY"] == 150 and counts["HIL_RUN_INFO"] == 2
    assert counts["HIL_SAFETY"] == len(summary["transitions"]) == 3
    start, end = read_run_info(path)
    assert (start.mode, start.event, end.event) == ("lockstep", start.EVENT_START, end.EVENT_END)
    again = parse_config(yaml.safe_load(start.config_yaml), Path("/"), "log")
    again.source = cfg.source
    assert again == cfg
    assert json.loads(end.summary_json) == json.loads(json.dumps({k: v for k, v in summary.items() if k != "log"}))
    assert summary["log"] == str(path)
    times = [e.timestamp for e in read_events(path, {"IIWA_STATUS"})]
    assert times[:3] == [0, 1000, 2000]                     # stamped with simulated time, µs


def test_replay_of_a_lockstep_log_is_exact(lockstep_log):
    path, _, summary = lockstep_log
    r = replay(path)
    assert r["passed"] and r["commands"] == summary["status"]["commands_sent"] - 1     # all but the exit command
    assert r["max_diff_nm"] == [0.0] * 7 and r["utime_mismatches"] == 0
    assert r["transitions"]["replayed"] == ["INIT -> RUNNING", "RUNNING -> FAULT [STATUS_TIMEOUT]",
                                            "FAULT -> RUNNING"]
    assert format_replay(r).endswith("PASS")


def test_replay_catches_a_changed_controller(lockstep_log, tmp_path):
    path, cfg, _ = lockstep_log
    data = yaml.safe_load(DEMO.read_text())
    data["controller"]["kd"] = [30] * 7
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(data))
    r = replay(path, load_config(changed, {"viz": False}))
    assert not r["passed"] and r["mismatched_commands"] > 100
    f = r["first_mismatch"]
    assert f["replayed_nm"] != f["recorded_nm"]
    assert f"first: command {f['command']} (status utime {f['utime']})" in format_replay(r)


def test_a_mismatch_below_the_printed_digits_shows_its_difference(lockstep_log, tmp_path):
    """The FAIL line prints each torque to the last digit it has and the difference: a gain changed by
    1e-9 of itself shows (with 6 significant digits both read the same)."""
    path, cfg, _ = lockstep_log
    data = yaml.safe_load(DEMO.read_text())
    data["controller"]["kd"] = [40 * (1 + 1e-9)] * 7
    changed = tmp_path / "nudged.yaml"
    changed.write_text(yaml.safe_dump(data))
    r = replay(path, load_config(changed, {"viz": False}), tolerance=1e-12)
    f = r["first_mismatch"]
    assert f is not None and f"{f['replayed_nm']:.6g}" == f"{f['recorded_nm']:.6g}"
    line = next(x for x in format_replay(r).splitlines() if x.startswith("  first:"))
    assert f"replayed {f['replayed_nm']!r} N·m, recorded {f['recorded_nm']!r} N·m" in line
    assert f"(Δ {f['replayed_nm'] - f['recorded_nm']:.3g})" in line
    assert r["joints"][0] == "iiwa_joint_1"                            # the joint named, not numbered from 0
    assert f"), {r['joints'][f['joint']]}: replayed" in line, line


def test_report_from_a_lockstep_log(lockstep_log, tmp_path):
    path, _, summary = lockstep_log
    r, traces = read_log(path)
    assert r["mode"] == "lockstep" and r["status"]["count"] == 1450
    assert r["status"]["robot_clock"]["max_gap_ms"] == 51.0        # the silent window
    assert r["command"]["torque_max_nm"] == pytest.approx(summary["torque_max_nm"], abs=1e-4)
    assert r["telemetry"]["samples"] == 150 and r["recorded_summary"]["ticks"] == summary["ticks"]
    assert [t.split(": ", 1)[1] for t in r["transitions"]] == ["INIT -> RUNNING", "RUNNING -> FAULT [STATUS_TIMEOUT]",
                                                                "FAULT -> RUNNING"]
    text = format_report(r)
    assert "the loop's own summary:" in text and "longest gap 51.0 ms" in text


def test_a_log_without_run_info_reports_and_replays_with_a_config(lockstep_log, tmp_path):
    path, cfg, _ = lockstep_log
    foreign = tmp_path / "foreign.lcmlog"
    with LogRecorder(foreign, channels={"IIWA_STATUS", "IIWA_COMMAND"}) as rec:
        for e in read_events(path, {"IIWA_STATUS", "IIWA_COMMAND"}):
            rec.write(e.channel, e.timestamp, e.data)
    r, _ = read_log(foreign)
    assert r["mode"] is None and r["status"]["count"] == 1450 and r["recorded_summary"] is None
    assert "no run-info" in format_report(r)
    with pytest.raises(ConfigError, match="the log has no run-info .*pass --config"):
        replay(foreign)
    result = replay(foreign, load_config(DEMO, {"viz": False, "sim": dataclasses.asdict(cfg.sim)}))
    assert result["max_diff_nm"] == [0.0] * 7
    assert result["transitions"]["recorded"] == []       # the foreign log has no safety channel to compare


def hil(*args):
    return subprocess.run([sys.executable, "-m", "hil", *map(str, args)], capture_output=True, text=True, timeout=120)


def test_realtime_demo_log_replays_exactly_and_reports(tmp_path):
    """`hil demo --log`: lcm-logger records the two-process run; the replay reproduces every command."""
    log, png = tmp_path / "demo.lcmlog", tmp_path / "report.png"
    url = private_lcm_url()
    p = hil("demo", "--duration", 1.5, "--quiet", "--lcm-url", url, "--log", log)
    assert p.returncode in (0, 3), p.stdout + p.stderr    # 3: the machine stalled the sim past the watchdog
    assert f'log: "{log}"' in p.stdout
    start, end = read_run_info(log)
    assert start.mode == "realtime" and json.loads(end.summary_json)["ticks"] == 1500
    p = hil("replay", log, "--json")
    r = json.loads(p.stdout)
    loss = r["log_losses"]
    if loss["commands_in_log"] == loss["commands_sent"] == 1500 and not loss["statuses_missing"]:
        assert p.returncode == 0 and r["passed"] and r["max_diff_nm"] == [0.0] * 7, r
    else:   # a stall of this shared machine cost lcm-logger messages: exact up to the first loss
        assert "the log is incomplete" in hil("replay", log).stdout
        first = loss["first_command_after_a_loss"]
        assert r["first_mismatch"] is None or (first is not None and r["first_mismatch"]["command"] >= first), r
    p = hil("report", log, "--plot", png, "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["mode"] == "realtime" and r["command"]["count"] >= 1499 and r["recorded_summary"]["ticks"] == 1500
    assert png.stat().st_size > 20_000


def test_log_commands_reject_missing_and_unreadable_files(tmp_path):
    p = hil("report", tmp_path / "nope.lcmlog")
    assert p.returncode == 2 and "nope.lcmlog: no such log file" in p.stderr
    garbage = tmp_path / "garbage.lcmlog"
    garbage.write_bytes(bytes(range(256)) * 10)
    for command in ("report", "replay"):
        p = hil(command, garbage)
        assert p.returncode == 2 and "garbage.lcmlog: not an LCM log (it starts with 00010203" in p.stderr
    other = tmp_path / "other.lcmlog"               # a real LCM log, of something else
    with LogRecorder(other) as recorder:
        recorder.write("SOMETHING", 1, b"data")
    p = hil("report", other)
    assert p.returncode == 2 and "no robot status in the log" in p.stderr
    p = hil("replay", other)
    assert p.returncode == 2 and "no run-info" in p.stderr


MOVING = """
robot: {model: robots/iiwa14.urdf, protocol: iiwa, end_effector: iiwa_link_ee}
controller: {type: joint_pd, kp: [300, 300, 200, 200, 50, 30, 10], kd: [20, 20, 10, 10, 3, 2, 0.5]}
trajectory: {type: hold}
safety: {status_timeout_periods: 50}
telemetry: {rate_hz: 100}
viz: false
sim:
  brakes: false
  gravity_compensation: none
  initial_positions: [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
  initial_velocities: [0.3, -0.3, 0.3, 0.3, 0.3, 0.3, 0.3]
"""


def test_a_realtime_log_of_an_arm_moving_at_the_start_replays_exactly(tmp_path):
    """`hil sim` and `hil run --log` as two processes over UDP, the arm moving as the loop starts
    (no brakes, no gravity compensation in the sim, an initial velocity): lcm-logger records the
    statuses from before the loop's first tick, more than one tick reads; the replay delivers the
    first tick what the loop had (up to the status its first command answers), so the hold's start
    q and every command come out the same (it failed from command 0, answering another status)."""
    config, log = tmp_path / "moving.yaml", tmp_path / "moving.lcmlog"
    config.write_text(MOVING)
    url = private_lcm_url()
    sim = spawn("sim", config, "--lcm-url", url, "--duration", "30")
    try:
        run = hil("run", config, "--lcm-url", url, "--duration", 1.5, "--quiet", "--json", "--log", log)
    finally:
        sim.terminate()
        sim.communicate(timeout=60)
    assert run.returncode in (0, 3), run.stdout + run.stderr     # 3: the machine stalled the sim
    p = hil("replay", log, "--json")
    r = json.loads(p.stdout)
    loss = r["log_losses"]
    first = r["first_mismatch"]
    if loss["commands_in_log"] == loss["commands_sent"] and not loss["statuses_missing"]:
        assert p.returncode == 0 and r["passed"] and r["max_diff_nm"] == [0.0] * 7, r
        assert r["utime_mismatches"] == 0
    else:   # a stall of this shared machine cost lcm-logger messages: exact up to the first loss
        after = loss["first_command_after_a_loss"]
        assert first is None or (after is not None and first["command"] >= after), r
