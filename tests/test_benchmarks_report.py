"""The benchmarks as data: benchmarks/record.py (tables and machine facts as JSON) and
benchmarks/report.py (docs/benchmarks.md from them), on synthetic results; every benchmark script's
command line names --json; the committed page is what the committed results make."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
SCRIPTS = sorted([*BENCHMARKS.glob("bench_*.py"), BENCHMARKS / "soak.py"])
sys.path.insert(0, str(BENCHMARKS))

import record  # noqa: E402
import report  # noqa: E402


def env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def synthetic(tmp_path: Path) -> tuple[Path, Path]:
    """A results folder with one run made through record.Record, and a notes folder for it."""
    results, notes = tmp_path / "results", tmp_path / "notes"
    notes.mkdir()
    rec = record.Record("bench_synthetic.py", "Synthetic: a made-up benchmark.\n\nMore text.", None, "Synthetic",
                        peers=("pinocchio",))
    rec.path = results / "bench_synthetic.json"
    rec.set_peer("nothing-installed", None)
    t = rec.table("two rows", [record.Column("implementation", "{name}", align="left"),
                               record.Column("median µs", "{us:.2f} ({ratio:.1f}×)", "{us:.2f}", missing="n/a")],
                  ["a note under the table"])
    t.add(name="ours", us=1.234, ratio=0.5)
    t.add(name="peer", us=2.468)
    t.add(name="absent", us=float("nan"))
    rec.note("a note of the run")
    rec.save()
    data = json.loads(rec.path.read_text())          # the machine facts as a fixed, known machine
    data["machine"].update(cpu="Test CPU 9000", cores=8, cores_usable=8, load_start=[0.5, 0.4, 0.3],
                           load_end=[1.25, 0.5, 0.3])
    data["started"] = "2030-01-02T03:04:05Z"
    rec.path.write_text(json.dumps(data))
    (notes / "bench_synthetic.md").write_text("How it is measured.\n\n<!-- tables -->\n\nWhat the figures say.\n")
    (notes / "_intro.md").write_text("The introduction.\n")
    return results, notes


def test_record_writes_the_tables_and_the_machine(tmp_path):
    results, _ = synthetic(tmp_path)
    data = record.load(results / "bench_synthetic.json")
    assert data["script"] == "bench_synthetic" and data["title"] == "Synthetic"
    assert data["description"] == "Synthetic: a made-up benchmark."
    assert {"cpu", "cores", "load_start", "load_end", "os", "arch"} <= set(data["machine"])
    assert {"python", "numpy", "cython", "hilstack", "commit"} <= set(data["versions"])
    assert data["versions"]["python"] == ".".join(map(str, sys.version_info[:3]))
    assert data["peers"]["nothing-installed"] is None and "pinocchio" in data["peers"]
    rows = data["tables"][0]["rows"]
    assert rows[0] == {"name": "ours", "us": 1.234, "ratio": 0.5}
    assert rows[2]["us"] is None                          # NaN is null in the JSON
    assert data["notes"] == ["a note of the run"]


def test_markdown_uses_the_first_format_whose_fields_are_there():
    table = {"title": "", "notes": [], "columns": [
        {"label": "a", "formats": ["{x:.1f} ({r:.1f}×)", "{x:.1f}"], "missing": "n/a", "align": "right"}],
        "rows": [{"x": 1.0, "r": 2.0}, {"x": 3.0, "r": None}, {}]}
    lines = record.markdown(table).splitlines()
    assert [line.strip("| ").strip() for line in lines[2:]] == ["1.0 (2.0×)", "3.0", "n/a"]
    assert lines[1].endswith(":|")                        # right-aligned


def test_the_page_has_a_section_per_run_with_its_notes_table_and_machine_line(tmp_path):
    results, notes = synthetic(tmp_path)
    out = tmp_path / "benchmarks.md"
    done = subprocess.run([sys.executable, str(BENCHMARKS / "report.py"), "--results", str(results), "--notes",
                           str(notes), "--out", str(out)], capture_output=True, text=True, env=env())
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert page.startswith("# Benchmarks\n") and "The introduction." in page
    assert "- [Synthetic](#synthetic)" in page
    section = page[page.index("## Synthetic\n"):]
    order = [section.index(text) for text in ("How it is measured.", "**two rows**", "| ours ",
                                              "a note under the table", "a note of the run", "What the figures say.",
                                              "*Measured")]
    assert order == sorted(order)
    assert "| ours           | 1.23 (0.5×) |" in section and "| absent         |         n/a |" in section
    line = section[section.index("*Measured"):].splitlines()[0]
    for text in ("2030-01-02 03:04:05 UTC", "Test CPU 9000, 8 cores", "load average (1 min) 0.50 at the start, "
                 "1.25 at the end", f"Python {sys.version_info.major}.{sys.version_info.minor}", "numpy ",
                 "nothing-installed not installed", "`python benchmarks/bench_synthetic.py"):
        assert text in line, (text, line)
    assert "## Not measured in these results" in page and "`python benchmarks/bench_dynamics.py`" in page
    # --check: the page just written is up to date; a changed note makes it stale
    check = [sys.executable, str(BENCHMARKS / "report.py"), "--results", str(results), "--notes", str(notes),
             "--out", str(out), "--check"]
    assert subprocess.run(check, capture_output=True, env=env()).returncode == 0
    (notes / "bench_synthetic.md").write_text("Changed.\n")
    assert subprocess.run(check, capture_output=True, env=env()).returncode == 1


def test_a_file_that_is_not_a_result_is_named(tmp_path):
    (tmp_path / "other.json").write_text('{"a": 1}')
    done = subprocess.run([sys.executable, str(BENCHMARKS / "report.py"), "--results", str(tmp_path), "--out",
                           str(tmp_path / "page.md")], capture_output=True, text=True, env=env())
    assert done.returncode == 2 and "other.json" in done.stderr and not (tmp_path / "page.md").exists()


def test_the_committed_page_is_what_the_committed_results_make():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "report.py"), "--check"], capture_output=True,
                          text=True, env=env())
    assert done.returncode == 0, done.stderr


def test_every_script_is_on_the_page_with_notes():
    names = {p.stem for p in SCRIPTS}
    assert names == set(report.ORDER)
    assert all((BENCHMARKS / "notes" / f"{name}.md").is_file() for name in names)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_each_script_says_where_its_json_goes(script):
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, env=env(),
                          cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--json PATH" in done.stdout and "--no-json" in done.stdout
    assert f"benchmarks/results/{script.stem}.json" in done.stdout
