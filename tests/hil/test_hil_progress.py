"""The one progress bar of `hil regress` and `hil campaign` (hil.progress, tqdm's): shown on a terminal
with the failures so far, off elsewhere or when not enabled; regress writes one line per scenario
where no bar is shown (a CI log)."""
import io

from hil.progress import ProgressBar
from hil.regress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def result(name: str, passed: bool = True, error: str | None = None) -> dict:
    return {"name": name, "passed": passed, "error": error, "wall_s": 1.25}


def test_the_bar_on_a_terminal_counts_failures_and_names_the_last():
    out = Terminal()
    progress = Progress(3, out)
    for r in (result("a"), result("b", False), result("c", False, "RuntimeError: x")):
        progress.update(r)
    progress.close()
    text = out.getvalue()
    assert progress.bar.shown and "3/3" in text and "failed 2, ERROR c" in text, text
    assert "[1/3]" not in text


def test_one_line_per_scenario_off_a_terminal():
    out = io.StringIO()
    progress = Progress(2, out)
    progress.update(result("a"))
    progress.update(result("b", False))
    progress.close()
    assert not progress.bar.shown
    assert out.getvalue() == "[1/2] PASS  a (1.2 s)\n[2/2] FAIL  b (1.2 s)\n"


def test_quiet_shows_nothing_even_on_a_terminal():
    out = Terminal()
    bar = ProgressBar(5, "run", enabled=False, file=out)
    bar.update(5, 1)
    bar.close()
    assert not bar.shown and out.getvalue() == "" and bar.failed == 1
