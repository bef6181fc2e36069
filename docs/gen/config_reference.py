"""The config reference (reference/config.md), generated from the config dataclasses.

One source of truth: every key, its type, default and bounds come from the dataclasses pydantic
validates (`drivers.core.schema.load`): the types and `Annotated` bounds from their type hints, the
defaults from their fields, the text from a field's `Help(...)` and the `# comments` written beside
it (on its lines, continued on the lines below at the same column, or on the lines just above it),
the section's text from the class docstring. `python docs/gen/config_reference.py` writes it into
docs/ (committed, so that links work in a checkout; tests/test_docs_reference.py checks it is current).
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import io
import json
import tokenize
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

from annotated_types import Ge, Gt, Le, Len, Lt, MaxLen, MinLen

PAGE = "reference/config.md"
_SECTION_TEXT: dict[str, str] = {}     # a top-level section's text: the comment beside it in RunConfig


def _sections():
    """(title, intro, [(dotted key of a section, its dataclass, a prefix that keeps its anchors apart)]) of
    each kind of file, in page order."""
    from drivers.core.config import RunConfig
    from drivers.serial.config import SerialConfig
    from drivers.serial.servo_config import ServoBusConfig
    from drivers.sim.config import SimConfig
    from drivers.station import StationSpec
    from drivers.viz.bridge import VizConfig
    from hil.campaign import CampaignSpec
    from hil.legged_scenario import LeggedRun, LeggedScenarioSpec
    from hil.scenario import ScenarioSpec
    from hil.station_scenario import StationScenarioSpec
    # RunConfig keeps the sections the packages above drivers.core own as `Any`; drivers.run_config's
    # load_sections validates them into these dataclasses.
    above_core = {"viz": VizConfig, "sim": SimConfig, "serial": SerialConfig, "servo_bus": ServoBusConfig}
    run = [(f.name, above_core.get(f.name, _hint(RunConfig, f.name)), "") for f in dataclasses.fields(RunConfig)
           if f.init and f.name != "source"]
    _SECTION_TEXT.update(_field_comments(RunConfig))
    return [
        ("Run config", "The YAML file `hil run`, `hil sim`, `hil demo`, `hil viz`, `hil serial`, "
                       "`hil servo-bus` and their device stand-ins take (`drivers.run_config.load_config`). "
                       "Paths are relative to the config file's folder, or to the shipped `configs/`.", run),
        ("Regression scenario", "A run config with a `scenario:` section, for `hil regress` "
                                "([regress.md](../regress.md)); the other commands ignore the section.",
         [("scenario", ScenarioSpec, "")]),
        ("Legged scenario", "A file of a `legged:` and a `scenario:` section, for `hil regress` and "
                            "`hil demo --config` ([wbc.md](../wbc.md#scenarios-hil-regress)).",
         [("legged", LeggedRun, ""), ("scenario", LeggedScenarioSpec, "legged-")]),
        ("Station", "A run config whose `station:` section lists several arms, for `hil run`, `hil sim` and, "
                    "with a `scenario:` section, `hil regress` ([station.md](../station.md)). The other sections "
                    "are the arms' defaults.",
         [("station", StationSpec, ""), ("scenario", StationScenarioSpec, "station-")]),
        ("Campaign", "A file of one `campaign:` section, for `hil campaign` ([campaign.md](../campaign.md)).",
         [("campaign", CampaignSpec, "")]),
    ]


# --- reading a dataclass ---------------------------------------------------------------------------------
def _hint(cls, name: str):
    return typing.get_type_hints(cls, include_extras=True)[name]


def _unwrap(tp) -> tuple[Any, list, bool]:
    """(the type inside Annotated and Optional, the Annotated metadata met on the way, whether it is Optional)."""
    meta, optional = [], False
    while True:
        if typing.get_origin(tp) is Annotated:
            meta += list(tp.__metadata__)
            tp = tp.__origin__
        elif _is_union(tp) and type(None) in typing.get_args(tp):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            optional = True
            tp = args[0] if len(args) == 1 else typing.Union[tuple(args)]
        else:
            return tp, meta, optional


def _is_union(tp) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


@functools.cache
def _comments(path: str) -> tuple[dict[int, tuple[int, str]], list[str]]:
    """{line: (column, text)} of every comment in a source file, and its lines."""
    source = Path(path).read_text()
    found = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            found[tok.start[0]] = (tok.start[1], tok.string.lstrip("#").strip())
    return found, source.splitlines()


@functools.cache
def _field_comments(cls) -> dict[str, str]:
    """{field: the comments written beside it} for a dataclass defined in a source file."""
    path = inspect.getsourcefile(cls)
    comments, lines = _comments(path)
    tree = ast.parse("\n".join(lines))
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
    out = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        first, last, col = stmt.lineno, stmt.end_lineno, stmt.col_offset
        above = []
        line = first - 1
        while line in comments and lines[line - 1].lstrip().startswith("#") and comments[line][0] == col:
            above.insert(0, comments[line][1])
            line -= 1
        beside = [comments[n][1] for n in range(first, last + 1) if n in comments]
        if beside:                       # continued below, at the same column, on lines of their own
            at = comments[max(n for n in range(first, last + 1) if n in comments)][0]
            line = last + 1
            while line in comments and lines[line - 1].lstrip().startswith("#") and comments[line][0] == at > col:
                beside.append(comments[line][1])
                line += 1
        out[stmt.target.id] = " ".join(above + beside)
    return out


@dataclasses.dataclass
class Key:
    name: str
    type: str
    default: str
    bounds: str
    text: str
    nested: list[tuple[str, type]]        # (dotted key, dataclass) of the sections under this key


def _bound(m) -> str | None:
    for kind, attr, sign in ((Gt, "gt", ">"), (Ge, "ge", "≥"), (Lt, "lt", "<"), (Le, "le", "≤")):
        if isinstance(m, kind):
            return f"{sign} {_number(getattr(m, attr))}"
    if isinstance(m, Len):
        if m.min_length == m.max_length:
            return f"{m.min_length} entries"
        return f"{m.min_length}–{m.max_length} entries" if m.max_length is not None else f"≥ {m.min_length} entries"
    if isinstance(m, MinLen):
        return f"≥ {m.min_length} entries"
    if isinstance(m, MaxLen):
        return f"≤ {m.max_length} entries"
    return None


def _number(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _type(tp, key: str, nested: list, prefix: str = "") -> tuple[str, list[str]]:
    """(the type in words, the bounds on its items) of a field's type; dataclasses met are added to
    `nested` as (dotted key, class)."""
    tp, meta, optional = _unwrap(tp)
    bounds = [b for b in map(_bound, meta) if b]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if dataclasses.is_dataclass(tp):
        nested.append((key, tp))
        text = f"mapping ([`{key}`](#{_anchor(prefix + key)}))"
    elif tp is Any:
        text = "any"
    elif origin is Literal:
        text = "one of " + ", ".join(f"`{_value(a)}`" for a in args)
    elif origin in (list, tuple):
        item, item_bounds = _type(args[0] if args else Any, f"{key}[]", nested, prefix)
        text = f"list of {item}" + (f" (each {', '.join(item_bounds)})" if item_bounds else "")
    elif origin is dict:
        item, item_bounds = _type(args[1], f"{key}.*", nested, prefix)
        text = f"mapping of {_type(args[0], key, [])[0]} to {item}" + \
               (f" (each {', '.join(item_bounds)})" if item_bounds else "")
    elif _is_union(tp):
        text = " or ".join(_type(a, key, nested, prefix)[0] for a in args)
    else:
        names = {float: "number", int: "integer", str: "string", bool: "boolean"}
        text = names.get(tp, getattr(tp, "__name__", str(tp)))
    if optional:
        text += " or `null`"
    return text, bounds


def _value(v) -> str:
    """A value as YAML writes it."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, str):
        return v if v else '""'
    if dataclasses.is_dataclass(v):
        return "(its keys' defaults)"
    return json.dumps(v, ensure_ascii=False).replace('"', "")


def keys(cls, path: str, prefix: str = "") -> list[Key]:
    """The keys of the dataclass `cls`, the section at dotted key `path`."""
    comments = _field_comments(cls)
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp = _hint(cls, f.name)
        nested: list = []
        text, bounds = _type(tp, f"{path}.{f.name}", nested, prefix)
        _, meta, _ = _unwrap(tp)
        why = [str(m) for m in meta if type(m).__name__ == "Why"]
        if f.default is not dataclasses.MISSING:
            default = f"`{_value(f.default)}`"
        elif f.default_factory is not dataclasses.MISSING:
            value = f.default_factory()
            default = _value(value) if dataclasses.is_dataclass(value) else f"`{_value(value)}`"
        else:
            default = "**required**"
        helps = [str(m) for m in meta if type(m).__name__ == "Help"]
        comment = comments.get(f.name, "")
        described = "; ".join(dict.fromkeys(t for t in [*helps, comment] if t))
        out.append(Key(f.name, text, default, ", ".join(bounds) + (f" ({'; '.join(why)})" if why else ""),
                       described, nested))
    return out


# --- the page ----------------------------------------------------------------------------------------------
def _anchor(key: str) -> str:
    return "".join(c for c in key.replace(".", "-").replace(" ", "-").replace("*", "key").replace("[]", "-item")
                   if c.isalnum() or c in "-_").lower()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _section(path: str, cls, level: int, done: dict, prefix: str) -> list[str]:
    """The table of the section at dotted key `path` (class `cls`) and those below it; `done` maps a
    class already shown to its anchor (a class met again links there), `prefix` makes the anchors of
    a kind of file unique."""
    anchor = _anchor(prefix + path)
    out = [f"{'#' * level} `{path}` {{#{anchor}}}", ""]
    if cls in done:
        return out + [f"The keys of [`{done[cls][0]}`](#{done[cls][1]}).", ""]
    done[cls] = (path, anchor)
    if _SECTION_TEXT.get(path):
        out += [_SECTION_TEXT[path], ""]
    doc = inspect.getdoc(cls)
    if doc and not doc.startswith(f"{cls.__name__}("):      # a dataclass without one gets a generated signature
        out += [" ".join(doc.split()).replace("<", "&lt;").replace(">", "&gt;"), ""]
    out += [f"*`{cls.__module__}.{cls.__qualname__}`*", "",
            "| key | type | default | bounds | description |", "|---|---|---|---|---|"]
    below = []
    for key in keys(cls, path, prefix):
        text = key.text or next((_first_sentence(c) for _, c in key.nested), "") or (
            f"its keys: [`{key.nested[0][0]}`](#{_anchor(prefix + key.nested[0][0])})" if key.nested else "")
        text = text.replace("<", "&lt;").replace(">", "&gt;")        # a comment's <transmission> is no HTML tag
        out.append(f"| `{key.name}` | {_cell(key.type)} | {_cell(key.default)} | {_cell(key.bounds)} | "
                   f"{_cell(text)} |")
        below += key.nested
    out.append("")
    for sub, sub_cls in below:
        out += _section(sub, sub_cls, min(level + 1, 4), done, prefix)
    return out


def _first_sentence(cls) -> str:
    doc = " ".join((inspect.getdoc(cls) or "").split())
    return "" if doc.startswith(f"{cls.__name__}(") else doc.split(": ")[0].split(". ")[0].rstrip(".")


def render() -> str:
    out = ["# Config reference", "",
           "Every key of every config file the stack reads, generated from the dataclasses that validate "
           "them (`drivers/core/config.py` and the section's owner: `drivers/sim/config.py`, "
           "`drivers/viz/bridge.py`, `drivers/serial/config.py`, `drivers/serial/servo_config.py`, "
           "`hil/scenario.py`, `hil/legged_scenario.py`, `hil/campaign.py`); the text is the comment "
           "written beside the field. Configs are YAML; unknown keys, a value of the wrong type (no `\"5\"` "
           "for `5`, no `true` for `1`), a non-finite number and a broken bound are errors naming the file and "
           "the key, with a did-you-mean for a misspelt key ([hil.md](../hil.md#config-files)). `null` is "
           "YAML's None; *list of* a type also takes `[]`.", ""]
    done: dict = {}
    for title, intro, sections in _sections():
        out += [f"## {title} files {{#{_anchor(title)}-files}}", "", intro, ""]
        for path, cls, prefix in sections:
            if dataclasses.is_dataclass(cls):
                out += _section(path, cls, 3, done, prefix)
            else:
                text, _ = _type(cls, path, [], prefix)
                out += [f"### `{path}` {{#{_anchor(prefix + path)}}}", "", f"A {text}: {_SECTION_TEXT.get(path, '')}",
                        ""]
    return "\n".join(out) + "\n"


def main() -> None:
    """Writes the page into docs/ (committed, so that links work in a checkout and on GitHub;
    tests/test_docs_reference.py fails while it differs from what this renders)."""
    from pathlib import Path
    (Path(__file__).resolve().parents[1] / PAGE).write_text(render())


if __name__ == "__main__":
    main()
