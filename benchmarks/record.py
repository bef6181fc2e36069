"""What every benchmark script records beside its tables: the machine (CPU, cores, load average at the
start and the end), the date, the versions of Python, numpy, Cython, hilstack and the peers measured,
and the tables themselves as data, written as JSON to benchmarks/results/<script>.json (--json PATH,
--no-json). benchmarks/report.py turns those files into docs/benchmarks.md.

A script's use of it:

    ap = record.parser(__file__, __doc__)           # the script's options, with --json and --no-json
    args = ap.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Dynamics", peers=("pinocchio", "pydrake"))
    t = rec.table("iiwa14", [record.Column("implementation", "{name}", align="left"),
                             record.Column("gravity µs", "{gravity:.2f} ({gravity_ratio:.2f}×)", "{gravity:.2f}")])
    t.add(name="dynamics_cy kernels", gravity=0.49, gravity_ratio=0.54)
    rec.show(t)                                      # prints it as markdown
    rec.save()                                       # the JSON (unless --no-json)

A table is columns and rows. A row is a record of named values (numbers, text or null); a column shows
them through format templates, the first whose fields are all present and not null wins, else the
column's `missing` text. So the JSON holds the numbers, and the page and the terminal show them as
the script always printed them.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import shlex
import string
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
FORMAT = "hilstack-benchmark/1"

# A peer's name as the tables say it -> the distributions that install it (the first found counts).
PEER_DISTRIBUTIONS = {
    "pydrake": ("drake",), "pinocchio": ("pin", "pinocchio"), "toppra": ("toppra",),
    "proxsuite": ("proxsuite",), "daqp": ("daqp",), "osqp": ("osqp",), "clarabel": ("clarabel",),
    "dynamixel_sdk": ("dynamixel-sdk", "dynamixel_sdk"), "scservo_sdk": ("feetech-servo-sdk",),
    "pyserial": ("pyserial",), "lcm": ("lcm",), "ray": ("ray",), "placo": ("placo",),
    "example-robot-data": ("example-robot-data",), "scipy": ("scipy",),
}


def version(*distributions: str) -> str | None:
    """The installed version of the first of `distributions` found, or None."""
    for name in distributions:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "Hardware", "Processor")) and ":" in line:
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def git_commit() -> str | None:
    """The checkout's commit, with "+dirty" when it has uncommitted changes (None outside git)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, timeout=10)
        if head.returncode:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def machine() -> dict:
    """The facts of this machine that do not change during a run."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "cores_usable": usable, "arch": platform.machine(),
            "os": f"{platform.system()} {platform.release()}"}


def versions() -> dict:
    return {"python": platform.python_version(), "numpy": version("numpy"), "cython": version("Cython", "cython"),
            "hilstack": version("hilstack"), "commit": git_commit()}


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def plain(value: Any) -> Any:
    """A JSON value of `value`: numpy scalars as Python numbers, NaN and infinities as null."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist"):                      # numpy scalar or array
        return plain(value.tolist())
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


# --- tables -----------------------------------------------------------------------------------------

class Column:
    """A column: its label, format templates over a row's fields (the first whose fields are all
    present and not null is used), the text when none applies, and its alignment (right by default,
    for numbers)."""

    def __init__(self, label: str, *formats: str, missing: str = "–", align: str = "right"):
        self.label, self.formats, self.missing, self.align = label, formats or ("{%s}" % label,), missing, align

    def to_json(self) -> dict:
        return {"label": self.label, "formats": list(self.formats), "missing": self.missing, "align": self.align}


def _fields(template: str) -> list[str]:
    return [name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name]


def cell(column: dict, row: dict) -> str:
    for template in column["formats"]:
        if all(row.get(f) is not None for f in _fields(template)):
            return template.format(**row)
    return column.get("missing", "–")


def markdown(table: dict) -> str:
    """A table (as saved: title, columns, rows, notes) as a markdown table, the cells padded."""
    columns, rows = table["columns"], table["rows"]
    cells = [[c["label"] for c in columns]] + [[cell(c, r) for c in columns] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    right = [c.get("align", "right") == "right" for c in columns]

    def line(values):
        return "| " + " | ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right)) + " |"
    rule = "|" + "|".join("-" * (w + 1) + (":" if r else "-") for w, r in zip(widths, right)) + "|"
    out = ([f"**{table['title']}**", ""] if table.get("title") else []) + [line(cells[0]), rule]
    out += [line(values) for values in cells[1:]]
    if table.get("notes"):
        out += [""] + [f"- {note}" for note in table["notes"]]
    return "\n".join(out)


class Table:
    """A table being filled: add() a row of named values; notes are lines shown under it."""

    def __init__(self, title: str, columns: list[Column], notes: list[str] | None = None):
        self.title, self.columns, self.rows, self.notes = title, columns, [], list(notes or [])

    def add(self, **values) -> dict:
        row = {k: plain(v) for k, v in values.items()}
        self.rows.append(row)
        return row

    def to_json(self) -> dict:
        return {"title": self.title, "columns": [c.to_json() for c in self.columns], "rows": self.rows,
                "notes": self.notes}

    def markdown(self) -> str:
        return markdown(self.to_json())


# --- one run of a script ----------------------------------------------------------------------------

def script_name(file: str) -> str:
    return Path(file).stem


def default_path(file: str) -> Path:
    return RESULTS / f"{script_name(file)}.json"


def parser(file: str, doc: str | None) -> argparse.ArgumentParser:
    """The argument parser of a benchmark script: its module docstring as the description, and where
    its results go (--json PATH, --no-json)."""
    ap = argparse.ArgumentParser(prog=f"{script_name(file)}.py", description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_json_options(ap, file)
    return ap


def add_json_options(ap: argparse.ArgumentParser, file: str) -> None:
    default = default_path(file)
    shown = default.relative_to(REPO) if default.is_relative_to(REPO) else default
    ap.add_argument("--json", type=Path, default=default, metavar="PATH",
                    help=f"where the tables, machine and versions are written as JSON (default {shown})")
    ap.add_argument("--no-json", action="store_true", help="write no JSON, only print the tables")


class Record:
    """One run of a benchmark script: started when made (date, load average), its tables and notes,
    and save() writes them with the machine and versions."""

    def __init__(self, file: str, doc: str | None, args: argparse.Namespace | None, title: str,
                 peers: tuple[str, ...] = ()):
        self.script, self.title = script_name(file), title
        self.description = " ".join((doc or "").strip().split("\n\n")[0].split())   # the docstring's first paragraph
        self.args = args
        self.path = None if args is None or getattr(args, "no_json", False) else getattr(args, "json", None)
        self.command = "python " + " ".join(shlex.quote(a) for a in [f"benchmarks/{self.script}.py", *sys.argv[1:]])
        self.started, self.load_start, self._t0 = utc_now(), load_average(), dt.datetime.now(dt.timezone.utc)
        self.peers = {name: version(*PEER_DISTRIBUTIONS.get(name, (name,))) for name in peers}
        self.tables: list[Table] = []
        self.notes: list[str] = []
        self.data: dict = {}

    def set_peer(self, name: str, version: str | None) -> None:
        self.peers[name] = version

    def table(self, title: str, columns: list[Column], notes: list[str] | None = None) -> Table:
        t = Table(title, columns, notes)
        self.tables.append(t)
        return t

    def show(self, table: Table) -> None:
        print(table.markdown() + "\n", flush=True)

    def note(self, text: str) -> None:
        """A line under the tables (printed now)."""
        self.notes.append(text)
        print(text, flush=True)

    def options(self) -> dict:
        if self.args is None:
            return {}
        return {k: plain(v) for k, v in vars(self.args).items() if k not in ("json", "no_json")}

    def to_json(self) -> dict:
        finished = dt.datetime.now(dt.timezone.utc)
        return {"format": FORMAT, "script": self.script, "title": self.title, "description": self.description,
                "command": self.command, "options": self.options(),
                "started": self.started, "finished": finished.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "wall_s": round((finished - self._t0).total_seconds(), 1),
                "machine": {**machine(), "load_start": self.load_start, "load_end": load_average()},
                "versions": versions(), "peers": self.peers,
                "tables": [t.to_json() for t in self.tables], "notes": self.notes, "data": plain(self.data)}

    def save(self) -> Path | None:
        """Writes the JSON (unless --no-json); returns its path."""
        if self.path is None:
            return None
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=1, ensure_ascii=False, allow_nan=False) + "\n")
        print(f"results: {path}", file=sys.stderr)
        return path


def load(path: Path) -> dict:
    """A results file, checked to be one (ValueError naming the file otherwise)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not readable as JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a benchmark result (format is not {FORMAT!r})")
    return data
