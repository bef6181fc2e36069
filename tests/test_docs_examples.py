"""Every code example of the docs (docs/**/*.md and README.md), run as a reader would run it.

- ```python blocks run whole, as scripts, one after another in a temporary directory of their page
  outside the repository (the project on PYTHONPATH, as an installed stack is), each with a timeout.
  A block with a title (```python title="mylaws.py"```) is saved under that name first, as the page
  tells the reader to save it; a block that is a test file (titled test_*.py, or untitled with a
  `def test_`) is run by pytest, as the page says to.
- ```yaml blocks with a title are saved the same way; every YAML block that is a config is validated
  as `hil` reads it: a run config (robot, loop, controller, ...) by drivers.run_config.parse_config, a
  regression scenario, a legged scenario and a campaign file by their loaders, a fragment of run
  config sections (`sim:` alone) section by section.
- A block that cannot run here (a real robot, a browser, hours) says why on the line before its
  fence, `<!-- not run: reason -->`; test_examples_not_run lists each, skipped with its reason. One
  that needs example-robot-data's models (or an optional module) says so, `<!-- requires:
  example-robot-data -->` (`<!-- requires: pydrake -->`), and is
  skipped (its page's test says so) where that is not installed.
- Shell blocks are not run; test_the_tutorials_check_alloc_command runs the one the controller
  tutorial is about.
"""
from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "docs").rglob("*.md")) + [REPO / "README.md"]
TIMEOUT = 300                      # s, one block
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
       "MPLBACKEND": "Agg"}

_FENCE = re.compile(r"^([ \t]*)```([^\n`]*)\n(.*?)^\1```[ \t]*$", re.M | re.S)
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(.*?)\s*-->")
_REQUIRES = re.compile(r"<!--\s*requires:\s*(\S+)\s*-->")     # example-robot-data, or a module (pydrake)
_TITLE = re.compile(r'title="([^"]+)"')
_USES = re.compile(r"<!--\s*uses the files of\s+(\S+\.md)\s*-->")     # a page that goes on from another


def _required(line: str) -> str | None:
    m = _REQUIRES.search(line)
    return m.group(1) if m else None


@dataclasses.dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    title: str | None
    body: str
    not_run: str | None            # the reason, for a block marked not to run
    requires: str | None = None    # example-robot-data, or a module the block imports (pydrake)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def is_test(self) -> bool:
        return Path(self.title).name.startswith("test_") if self.title else bool(
            re.search(r"^def test_", self.body, re.M))

    @property
    def file_name(self) -> str:
        ext = {"python": "py", "yaml": "yaml"}.get(self.lang, self.lang)
        return self.title or f"{'test_' if self.is_test else ''}{self.page.stem}_{self.line}.{ext}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, in order."""
    text = page.read_text()
    out = []
    for m in _FENCE.finditer(text):
        info = m.group(2).strip()
        before = [ln for ln in text[:m.start()].splitlines() if ln.strip()]
        not_run = _NOT_RUN.search(before[-1]) if before else None
        title = _TITLE.search(info)
        out.append(Block(page, text.count("\n", 0, m.start()) + 1, info.split(" ")[0].lower(),
                         title.group(1) if title else None, textwrap.dedent(m.group(3)),
                         not_run.group(1) if not_run else None, _required(before[-1] if before else "")))
    return out


ALL = [b for page in PAGES for b in blocks(page)]
PYTHON_PAGES = sorted({b.page for b in ALL if b.lang == "python" and not b.not_run}, key=str)
YAML = [b for b in ALL if b.lang == "yaml" and not b.not_run]


def _id(x) -> str:
    return str(x.relative_to(REPO)) if isinstance(x, Path) else x.where


def save(block: Block, where: Path) -> Path:
    path = where / block.file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(block.body)
    return path


def run_python(block: Block, where: Path) -> subprocess.CompletedProcess:
    """Runs a python block saved in `where` as the reader would: a script with python, a test file
    with pytest."""
    path = save(block, where)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path.name] if block.is_test \
        else [sys.executable, path.name]
    return subprocess.run(command, cwd=path.parent, env=ENV, capture_output=True, text=True, timeout=TIMEOUT)


def save_files(page: Path, where: Path, upto: int | None = None) -> None:
    """The files a reader of `page` has saved in `where` (before line `upto`): those of the pages it
    goes on from (`<!-- uses the files of other.md -->`), then its own titled blocks."""
    for other in _USES.findall(page.read_text()):
        save_files(page.parent / other, where)
    for block in blocks(page):
        if block.title and not block.not_run and (upto is None or block.line < upto):
            save(block, where)


def installed(requirement: str | None) -> bool:
    """Whether what a block requires is here: example-robot-data's models, or an importable module."""
    if requirement is None:
        return True
    if requirement == "example-robot-data":
        from dynamics_cy.planning.legged_models import example_robot_data_root
        return example_robot_data_root() is not None
    import importlib.util
    return importlib.util.find_spec(requirement) is not None


def follow(page: Path, where: Path) -> list[Block]:
    """The page's blocks, in order, in `where`: titled blocks saved, python blocks run; each failure
    names the block. Returns the blocks left out for want of what they require."""
    for other in _USES.findall(page.read_text()):
        save_files(page.parent / other, where)
    left_out = []
    for block in blocks(page):
        if block.not_run:
            continue
        if not installed(block.requires):
            left_out.append(block)
            continue
        if block.lang == "python":
            result = run_python(block, where)
            assert result.returncode == 0, f"{block.where} failed (exit {result.returncode}):\n" \
                                           f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        elif block.title:
            save(block, where)
    return left_out


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("page", PYTHON_PAGES, ids=_id)
def test_python_examples_run(page, tmp_path):
    assert not tmp_path.resolve().is_relative_to(REPO)
    left_out = follow(page, tmp_path)
    if left_out:
        pytest.skip("the others ran; what these require is not installed: "
                    + ", ".join(f"{b.where} ({b.requires})" for b in left_out))


# --- YAML ---------------------------------------------------------------------------------------------------
def _run_config_sections() -> dict:
    """{section: its loader(mapping, key)} of the run config, for a fragment of sections."""
    import typing

    from drivers.core.config import RunConfig
    from drivers.core.schema import load
    from drivers.serial.config import load_serial_config
    from drivers.serial.servo_config import load_servo_config
    from drivers.sim.config import load_sim_config
    from drivers.viz import load_viz_config
    hints = typing.get_type_hints(RunConfig)
    sections = {f.name: (lambda data, key, cls=hints[f.name]: load(cls, data, key))
                for f in dataclasses.fields(RunConfig) if dataclasses.is_dataclass(hints[f.name])}
    sections.update(viz=load_viz_config, sim=load_sim_config, serial=load_serial_config, servo_bus=load_servo_config,
                    channels=lambda data, key: data)
    return sections


def validate_yaml(block: Block, where: Path) -> str:
    """Validates a YAML block as the stack reads such a file; returns what it was taken for."""
    from drivers.core.schema import parse_yaml
    data = parse_yaml(block.body, block.where)
    path = save(block, where)
    if "campaign" in data:
        from hil.campaign import load_campaign
        load_campaign(path)
        return "campaign"
    if "legged" in data:
        from hil.legged_scenario import load_legged_scenario
        load_legged_scenario(path)
        return "legged scenario"
    if "station" in data:
        from drivers.station import parse_station
        from hil.station_scenario import load_station_scenario
        if "scenario" in data:
            load_station_scenario(path)
        else:
            parse_station(data, path.parent, block.where)
        return "station"
    if "scenario" in data:
        from hil.scenario import load_scenario
        load_scenario(path)
        return "scenario"
    if "robot" in data:
        from drivers.run_config import parse_config
        parse_config(data, path.parent, block.where)
        return "run config"
    sections = _run_config_sections()
    assert set(data) <= set(sections), f"{block.where}: not a config file (keys {sorted(data)})"
    for key, value in data.items():
        sections[key](value, key)
    return "run config sections " + ", ".join(data)


@pytest.mark.parametrize("block", YAML, ids=_id)
def test_yaml_examples_are_valid(block, tmp_path):
    from dynamics_cy.planning.legged_models import example_robot_data_root
    model = str((yaml.safe_load(block.body).get("robot") or {}).get("model", ""))
    if model.startswith("package://example-robot-data/") and example_robot_data_root() is None:
        pytest.skip(f"{block.where}: its model is example-robot-data's, which is not installed")
    save_files(block.page, tmp_path, upto=block.line)   # the files the page had the reader save before it
    validate_yaml(block, tmp_path)


# --- the exceptions, and the tutorial's one command --------------------------------------------------------
NOT_RUN = [b for b in ALL if b.not_run]


@pytest.mark.parametrize("block", NOT_RUN or [None], ids=lambda b: b.where if b else "none")
def test_examples_not_run(block):
    """Each block the docs mark `<!-- not run: reason -->`, reported with its reason."""
    if block is None:
        return
    assert block.not_run.strip(), f"{block.where}: a block not run says why"
    pytest.skip(f"{block.where} ({block.lang}) not run: {block.not_run}")


def test_the_tutorials_check_alloc_command(tmp_path):
    """docs/controllers.md's law and config, saved as the page says, and its `hil run --check-alloc`."""
    page = REPO / "docs" / "controllers.md"
    command = next(b for b in blocks(page) if b.lang == "sh" and "--check-alloc" in b.body).body.strip()
    assert command == "hil run robot.yaml --check-alloc"
    save_files(page, tmp_path)
    check = subprocess.run([sys.executable, "-m", "hil", *command.split()[1:]], cwd=tmp_path, env=ENV,
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert check.returncode == 0 and "mylaws:Admittance: update() allocated nothing" in check.stdout, check.stderr


def test_every_example_is_seen():
    """The fence parser finds the python blocks a plain search finds (none hides from the tests)."""
    for page in PAGES:
        plain = len(re.findall(r"^[ \t]*```python\b", page.read_text(), re.M))
        assert plain == sum(b.lang == "python" for b in blocks(page)), page
