"""docs/controllers.md and docs/testing.md as a reader follows them: the tutorial's law and config
written to a directory of their own, `hil run --check-alloc` on them, the Python example, and the
testing page's sample test run by pytest with the installed plugin."""
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def blocks(page: str) -> list[tuple[str, str]]:
    return re.findall(r"```(\w+)\n(.*?)```", (REPO / "docs" / page).read_text(), re.S)


def test_the_tutorial_runs_as_written(tmp_path):
    tutorial = blocks("controllers.md")
    (tmp_path / "mylaws.py").write_text(tutorial[0][1])
    (tmp_path / "robot.yaml").write_text(tutorial[1][1])
    assert tutorial[2][1].strip() == "hil run robot.yaml --check-alloc"
    check = subprocess.run([sys.executable, "-m", "hil", "run", "robot.yaml", "--check-alloc"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0 and "mylaws:Admittance: update() allocated nothing" in check.stdout, check.stderr
    python = next(body for lang, body in tutorial if lang == "python" and body.startswith("import hil"))
    run = subprocess.run([sys.executable, "-c", python], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.startswith("RUNNING"), run.stderr


def test_the_testing_pages_sample_passes_with_the_tutorials_law(tmp_path):
    (tmp_path / "mylaws.py").write_text(blocks("controllers.md")[0][1])
    (tmp_path / "test_mylaws.py").write_text(blocks("testing.md")[0][1])
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mylaws.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr
