"""Fuzzing run logs: a real log recorded in lockstep, truncated anywhere or corrupted, read by
`hil report` and `hil replay`. Property: a report or a replay result, or a ValueError (LogError,
a messages.errors.MessageError, ConfigError) that the CLI prints as one line with exit 2."""
from __future__ import annotations

import contextlib
import io

from hypothesis import given
from hypothesis import strategies as st

from hil.cli import main
from hil.report import read_log
from tests.reliability.inputs import fuzz_settings, mutations


def _write(tmp_path_factory, data: bytes):
    path = tmp_path_factory.mktemp("log") / "fuzz.lcmlog"
    path.write_bytes(data)
    return path


@fuzz_settings(120)
@given(mutate=mutations())
def test_report_of_a_corrupted_log_is_a_report_or_a_value_error(run_log, tmp_path_factory, mutate):
    path = _write(tmp_path_factory, mutate(run_log.read_bytes()))
    for skip_corrupt in (False, True):
        try:
            report, _ = read_log(path, skip_corrupt)
        except ValueError as e:
            assert str(e), "an error says what is wrong"
            continue
        assert report["status"]["count"] >= 0 and (skip_corrupt or not report["corrupt"])


@fuzz_settings(60)
@given(cut=st.floats(0, 1))
def test_report_of_a_truncated_log(run_log, tmp_path_factory, cut):
    data = run_log.read_bytes()
    path = _write(tmp_path_factory, data[:int(cut * len(data))])
    try:
        read_log(path)
    except ValueError:
        pass


@fuzz_settings(25)
@given(mutate=mutations())
def test_the_cli_reports_and_replays_corrupted_logs_with_exit_0_1_or_2(run_log, tmp_path_factory, mutate):
    path = _write(tmp_path_factory, mutate(run_log.read_bytes()))
    for argv, codes in ((["report", str(path)], (0, 2)), (["replay", str(path)], (0, 1, 2))):
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
        err = stderr.getvalue()
        assert code in codes, (argv, err)
        if code == 2:
            assert len(err.strip().splitlines()) == 1 and "fuzz.lcmlog" in err, err
