"""The CLI contract: every `hil` command given every class of bad input exits 2 with one line on stderr
that names what is wrong, and never a traceback (issue 15). In-process through hil.cli.main (an escaping
exception fails the test, as it would print a traceback), plus real processes for the exit status."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hil.cli import main
from tests.conftest import REPO
from tests.reliability.inputs import IIWA_JOINTS, bad_campaigns, bad_configs, bad_legged, bad_logs, servo_config

CONFIG_COMMANDS = {
    "run": lambda c, log: ["run", c, "--duration", "0.1", "--quiet"],
    "sim": lambda c, log: ["sim", c, "--duration", "0.1"],
    "demo": lambda c, log: ["demo", "--config", c, "--duration", "0.1", "--quiet"],
    "viz": lambda c, log: ["viz", c, "--duration", "0.1"],
    "serial": lambda c, log: ["serial", c, "--duration", "0.1"],
    "serial-device": lambda c, log: ["serial-device", c, "--duration", "0.1"],
    "regress": lambda c, log: ["regress", c, "--report", "/dev/null"],
    "replay": lambda c, log: ["replay", log, "--config", c],
    "servo-bus": lambda c, log: ["servo-bus", c, "--duration", "0.1"],
    "servo-bus-device": lambda c, log: ["servo-bus-device", c, "--duration", "0.1"],
}
MESSAGES = {("regress", "missing_file"): "no such scenario folder or file"}
LOG_COMMANDS = {"report": lambda p: ["report", p], "replay": lambda p: ["replay", p],
                "export": lambda p: ["export", p, "--mcap", str(Path(p).with_suffix(".mcap"))]}
SERVO_COMMANDS = {"servo-bus": CONFIG_COMMANDS["servo-bus"], "servo-bus-device": CONFIG_COMMANDS["servo-bus-device"]}
# Legged scenario files: `hil demo --config` runs one, `hil regress` checks them with the others.
LEGGED_COMMANDS = {"demo": CONFIG_COMMANDS["demo"], "regress": CONFIG_COMMANDS["regress"]}


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    return bad_configs(tmp_path_factory.mktemp("configs"))


@pytest.fixture(scope="module")
def logs(run_log, tmp_path_factory):
    return bad_logs(run_log, tmp_path_factory.mktemp("logs"))


def _one_line_error(argv, capsys) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hil: "), err
    assert "Traceback" not in err + out
    return lines[0]


@pytest.mark.parametrize("command", CONFIG_COMMANDS)
def test_every_config_command_rejects_every_bad_config_in_one_line(command, configs, run_log, capsys):
    for name, (path, message) in configs.items():
        line = _one_line_error(CONFIG_COMMANDS[command](str(path), str(run_log)), capsys)
        message = MESSAGES.get((command, name), message)
        assert message in line and path.name in line, (command, name, line)


@pytest.mark.parametrize("command", SERVO_COMMANDS)
def test_the_servo_commands_reject_a_config_their_bus_cannot_drive(command, tmp_path, capsys):
    """What only the servo-bus commands check: the section is there, and its joints are the robot's."""
    cases = {"no_section.yaml": (servo_config().split("servo_bus:")[0], "servo_bus: is required"),
             "no_such_joint.yaml": (servo_config().replace(IIWA_JOINTS[2], "elbow"), "'elbow'")}
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text)
        line = _one_line_error(SERVO_COMMANDS[command](str(tmp_path / name), None), capsys)
        assert message in line and name in line, (command, name, line)


@pytest.mark.parametrize("command", LEGGED_COMMANDS)
def test_every_legged_scenario_command_rejects_every_bad_legged_scenario_in_one_line(command, tmp_path, capsys):
    for name, (path, message) in bad_legged(tmp_path).items():
        line = _one_line_error(LEGGED_COMMANDS[command](str(path), None), capsys)
        message = MESSAGES.get((command, name), message)
        assert message in line and path.name in line, (command, name, line)


def test_campaign_rejects_every_bad_campaign_file_and_option_in_one_line(tmp_path, capsys):
    base = REPO / "configs" / "scenarios" / "joint_pd_quintic.yaml"
    for name, (path, message) in bad_campaigns(tmp_path, base).items():
        line = _one_line_error(["campaign", str(path), "--engine", "sequential", "--quiet",
                                "--out", str(tmp_path / "out")], capsys)
        assert message in line and path.name in line, (name, line)
    good = bad_campaigns(tmp_path, base)["missing_file"][0].parent / "good.yaml"
    good.write_text(f"campaign:\n  base: {base}\n  vary:\n    sim.joint_damping: {{uniform: [0.0, 1.0]}}\n")
    for options, message in ((["-n", "0"], "-n must be at least 1, got 0"), (["-j", "-2"], "-j must be at least 1"),
                             (["--log", "x.lcmlog"], "--log and --write-scenario go with --seed"),
                             (["--engine", "pool", "--address", "auto"], "--address is a Ray cluster's")):
        line = _one_line_error(["campaign", str(good), "--quiet", *options], capsys)
        assert message in line, (options, line)


@pytest.mark.parametrize("command", LOG_COMMANDS)
def test_every_log_command_rejects_every_bad_log_in_one_line(command, logs, run_log, capsys):
    for name, (path, message) in logs.items():
        argv = LOG_COMMANDS[command](str(path))
        if command == "replay" and name == "corrupt_run_info":
            argv += ["--config", str(run_log.parent / "good.yaml")]    # the log's own config is unreadable
        if command == "export" and name == "corrupt_run_info":         # a converter: counts what it cannot decode
            assert main(argv) == 0
            assert "skipped 1 (TruncatedError)" in capsys.readouterr().out
            continue
        line = _one_line_error(argv, capsys)
        assert message in line and path.name in line, (command, name, line)


def test_a_truncated_log_is_read_up_to_its_last_whole_event(run_log, tmp_path, capsys):
    """A log cut short (the recorder was killed) is still a log: report reads what it holds."""
    cut = tmp_path / "cut.lcmlog"
    data = run_log.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    assert main(["report", str(cut), "--json"]) == 0
    assert '"status"' in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["run", "{bad}"], "loop.rate_hz: must be a finite number"),
    (["report", "{log}"], "not UTF-8"),
])
def test_the_real_process_exits_2_with_one_line_and_verbose_adds_no_traceback(argv, message, configs, logs):
    values = {"bad": str(configs["infinite_rate"][0]), "log": str(logs["channel_not_utf8"][0])}
    for verbose in ([], ["-v"]):
        result = subprocess.run([sys.executable, "-m", "hil", *verbose, *(a.format(**values) for a in argv)],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and "Traceback" not in result.stderr
        if not verbose:
            assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_report_reads_past_corrupt_events_when_asked_and_counts_them(logs, run_log, capsys):
    """--skip-corrupt: each corrupt stretch is skipped to the next sync word, counted, and only the
    corrupt event is lost."""
    import json
    assert main(["report", str(run_log), "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    path = logs["channel_not_utf8"][0]
    assert main(["report", str(path), "--json", "--skip-corrupt"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["problem"][:33] for c in report["corrupt"]] == ["a channel name that is not UTF-8 "]
    assert report["status"]["count"] == whole["status"]["count"] - 1
    assert report["command"]["count"] == whole["command"]["count"] and whole["corrupt"] == []
    assert main(["report", str(path), "--skip-corrupt"]) == 0
    assert "corrupt: 1 stretch(es) skipped" in capsys.readouterr().out


def test_replay_reads_past_corrupt_events_when_asked_and_counts_them(logs, run_log, capsys):
    """hil replay --skip-corrupt, as hil report's: the corrupt status is skipped and counted, the
    replay runs on the rest (its comparison then says what the loss changed)."""
    import json
    path = logs["channel_not_utf8"][0]
    assert main(["replay", str(path), "--json", "--skip-corrupt"]) in (0, 1)
    result = json.loads(capsys.readouterr().out)
    assert [c["problem"][:33] for c in result["corrupt"]] == ["a channel name that is not UTF-8 "]
    assert result["commands"] > 250 and result["log_losses"]["statuses_missing"] <= 1
    assert main(["replay", str(run_log), "--json", "--skip-corrupt"]) == 0       # an intact log: nothing skipped
    assert json.loads(capsys.readouterr().out)["corrupt"] == []
    main(["replay", str(path), "--skip-corrupt"])
    assert "corrupt: 1 stretch(es) skipped" in capsys.readouterr().out
