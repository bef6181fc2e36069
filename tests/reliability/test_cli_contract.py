"""The CLI contract: every `hil` command given every class of bad input exits 2 with one line on stderr
that names what is wrong, and never a traceback (issue 15). In-process through hil.cli.main (an escaping
exception fails the test, as it would print a traceback), plus real processes for the exit status."""
from __future__ import annotations

import subprocess
import sys

import pytest

from hil.cli import main
from tests.reliability.inputs import bad_configs, bad_logs

CONFIG_COMMANDS = {
    "run": lambda c, log: ["run", c, "--duration", "0.1", "--quiet"],
    "sim": lambda c, log: ["sim", c, "--duration", "0.1"],
    "demo": lambda c, log: ["demo", "--config", c, "--duration", "0.1", "--quiet"],
    "viz": lambda c, log: ["viz", c, "--duration", "0.1"],
    "serial": lambda c, log: ["serial", c, "--duration", "0.1"],
    "serial-device": lambda c, log: ["serial-device", c, "--duration", "0.1"],
    "regress": lambda c, log: ["regress", c, "--report", "/dev/null"],
    "replay": lambda c, log: ["replay", log, "--config", c],
}
MESSAGES = {("regress", "missing_file"): "no such scenario folder or file"}
LOG_COMMANDS = {"report": lambda p: ["report", p], "replay": lambda p: ["replay", p]}


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


@pytest.mark.parametrize("command", LOG_COMMANDS)
def test_every_log_command_rejects_every_bad_log_in_one_line(command, logs, run_log, capsys):
    for name, (path, message) in logs.items():
        argv = LOG_COMMANDS[command](str(path))
        if command == "replay" and name == "corrupt_run_info":
            argv += ["--config", str(run_log.parent / "good.yaml")]    # the log's own config is unreadable
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
