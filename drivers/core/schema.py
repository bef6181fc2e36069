"""YAML configs validated into dataclasses by pydantic, with errors that name the file and the key.

    @dataclass
    class Ground:
        height: float = 0.0
        stiffness: Positive = 1e5                      # Annotated[float, Gt(0)]
        model: Annotated[str, Help("the ground's mesh")]

    ground = load(Ground, {"stiffness": 2e5}, "sim.contact.ground")

Field types: bool, int, float, str, Literal[...], Optional[T], unions, list[T], tuple[float, ...],
dict[str, T], Any and nested dataclasses. Bounds are annotated_types constraints in Annotated[...]
(Gt, Ge, Lt, Le; Len for a list's length; on a list's items they bound each item); Help(text) is
shown when a required key is missing, Why(text) when a bound is broken. Scalars are strict (no
"5" for 5, no true for 1; an integer is a number), numbers finite; unknown keys are errors with a
did-you-mean; every error is a ConfigError "<file>: <dotted.key>: <what is wrong>".

Why pydantic (2.14, with pydantic-core) rather than msgspec (0.22): pydantic validates the project's
plain dataclasses as they are (dataclasses.replace/asdict/fields keep working) and reports each error
as a record (type, location, constraint, input), from which the messages above are written as they
were by the hand-written validator this replaces. msgspec refuses unknown keys only on its own
Struct classes (every config class and its users would change) and reports an error as one sentence
("Expected `float` > 0.0 - at `$.loop.rate_hz`") without the value, to be parsed back. msgspec is
cheaper to start: measured on this loaded 2-core VM (medians of 5 runs), importing msgspec ~45 ms,
pydantic ~155 ms, and building the run config's validator ~190 ms: ~0.35 s once per process, paid
when the first config is loaded (`hil --help` and `import hil.cli`, ~0.4 s, do not import pydantic);
`hil sim configs/demo.yaml` prints its start line after ~0.8 s instead of ~0.6 s (medians of 10).
After that, validating the run config costs the same as before (~40 µs; loading configs/demo.yaml
whole, ~8 ms, is mostly the package map). The loop's hot path never validates.
"""
from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import re
import reprlib
import types
import typing
from pathlib import Path
from typing import Annotated

import yaml
from annotated_types import Ge, Gt, Le, Lt

from dynamics_cy.errors import HilstackError

MAX_RATE_HZ = 10_000.0


class Help(str):
    """Annotated[...] metadata: what a required key holds, shown when it is missing."""


class Why(str):
    """Annotated[...] metadata: why a bound exists, shown when it is broken."""


Positive = Annotated[float, Gt(0)]
NonNegative = Annotated[float, Ge(0)]
Fraction = Annotated[float, Gt(0), Le(1)]                  # (0, 1]
Rate = Annotated[float, Gt(0), Le(MAX_RATE_HZ)]            # Hz a loop can keep: period >= 100 µs
Period = Annotated[float, Ge(1 / MAX_RATE_HZ)]             # s, a period a loop can keep
# s, a timeout a loop can measure: at least one period of the fastest rate (RunConfig checks the loop's own)
Timeout = Annotated[float, Ge(1 / MAX_RATE_HZ),
                    Why("a timeout shorter than one period of a 10 kHz loop cannot be measured")]
Count = Annotated[int, Ge(1)]


class ConfigError(HilstackError, ValueError):
    """A config value that cannot be used; the message names the source and the key."""

    def __init__(self, key: str, message: str, source: str | None = None):
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{key}: {message}" if key else f"{where}{message}")
        self.key, self.source = key, source


class LogError(HilstackError, ValueError):
    """An LCM log that cannot be used for what was asked; the message names the file."""


MAX_VALUES = 100_000        # values a config may hold once its aliases are expanded
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict, _SHOWN.maxstring, _SHOWN.maxother = 3, 6, 6, 60, 60


def _shown(value) -> str:
    """repr(value), shortened for an error message (a value may be a large or deeply nested list)."""
    text = _SHOWN.repr(value)
    return text if len(text) <= 100 else text[:96] + " ..."


class _Loader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses duplicate keys (safe_load keeps the last one silently) and alias
    bombs (anchors referring to anchors: a few lines that expand to billions of values), and reads
    YAML 1.2 floats such as `1e12` as numbers (YAML 1.1 needs a dot: `1.0e+12`)."""

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None and _expanded_size(node, {}) > MAX_VALUES:
            raise _TooLarge(f"too large: it expands to more than {MAX_VALUES:,} values through its aliases "
                            "(&anchor, *alias)")
        return node

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:         # the mapping's own keys; a merge (<<) may be overridden
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:                    # unhashable: SafeLoader reports it
                break
            if first is not None:
                raise _DuplicateKey(key, first, key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


def _expanded_size(node, sizes: dict) -> int:
    """Values in the node once its aliases are expanded (each shared node counted once per use);
    memoized, so linear in the document's size."""
    if id(node) in sizes:
        return sizes[id(node)]
    sizes[id(node)] = MAX_VALUES + 1             # a recursive alias is too large
    total = 1
    if isinstance(node, yaml.MappingNode):
        total += sum(_expanded_size(k, sizes) + _expanded_size(v, sizes) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        total += sum(_expanded_size(v, sizes) for v in node.value)
    sizes[id(node)] = total
    return total


class _TooLarge(yaml.YAMLError):
    pass


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key, first_line: int, mark):
        super().__init__(f"duplicate key '{key}' at line {mark.line + 1}, column {mark.column + 1} "
                         f"(first at line {first_line})")


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"), list("-+0123456789"))


def parse_yaml(text: str | bytes, source: str) -> dict:
    """The mapping in YAML text (UTF-8 if bytes); a ConfigError naming `source` and the line for text
    that is not UTF-8, not YAML, has a duplicate key or an unsafe tag, or is not a mapping."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            line = text[:e.start].count(b"\n") + 1
            raise ConfigError("", f"not UTF-8 text: byte 0x{text[e.start]:02x} at line {line} "
                                  f"(offset {e.start}); save the file as UTF-8", source) from None
    try:
        data = yaml.load(text, Loader=_Loader)
    except (_DuplicateKey, _TooLarge) as e:
        raise ConfigError("", str(e), source) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError("", f"not valid YAML{line}: {getattr(e, 'problem', None) or e}", source) from None
    except RecursionError:
        raise ConfigError("", "not a usable config: nested too deeply", source) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("", f"the top level must be a mapping of keys, got {type(data).__name__}", source)
    return data


def read_yaml(path: str | Path) -> dict:
    """The mapping in a YAML file (parse_yaml); errors name the file and line."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError("", "no such config file", str(p)) from None
    except OSError as e:
        raise ConfigError("", f"cannot read the config: {e.strerror}", str(p)) from None
    return parse_yaml(raw, str(p))


def merge(base: dict, over: dict | None) -> dict:
    """A copy of `base` with `over` on it: a mapping in both is merged key by key, at every depth;
    anything else in `over` (a list, a scalar, None) replaces what `base` has. The one rule for every
    layer of config: a station's shared sections and its arms', overrides (hil.run, the CLI options,
    the fixtures) on a config."""
    out = copy.deepcopy(base)
    for key, value in (over or {}).items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) \
            else copy.deepcopy(value)
    return out


def _join(path: str, key) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else str(key))


def _strict(schema) -> None:
    """Tightens a pydantic-core schema in place: scalars strict, numbers finite, unknown keys refused
    (pydantic's own strict mode would also refuse a mapping where a dataclass is expected)."""
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind in ("float", "int", "bool", "str"):
            schema["strict"] = True
        if kind == "float":
            schema["allow_inf_nan"] = False
        if kind == "dataclass-args":
            schema["extra_behavior"] = "forbid"
        for value in schema.values():
            _strict(value)
    elif isinstance(schema, list):
        for value in schema:
            _strict(value)


@functools.cache
def _validator(cls):
    from pydantic import TypeAdapter
    from pydantic_core import SchemaValidator
    schema = copy.deepcopy(TypeAdapter(cls).core_schema)
    _strict(schema)
    return SchemaValidator(schema)


def _unwrap(tp) -> tuple[object, list]:
    """(the type inside Annotated/Optional, the Annotated metadata met on the way)."""
    meta = []
    while True:
        if typing.get_origin(tp) is Annotated:
            meta += list(tp.__metadata__)
            tp = tp.__origin__
        elif typing.get_origin(tp) in (typing.Union, types.UnionType) and \
                len([a for a in typing.get_args(tp) if a is not type(None)]) == 1:
            tp = next(a for a in typing.get_args(tp) if a is not type(None))
        else:
            return tp, meta


def _follow(cls, loc, data):
    """Follows pydantic's error location through the type and the data: (dotted key, type there,
    its metadata, the dataclass holding it, the value there, whether it stopped at a union)."""
    tp, meta = _unwrap(cls)
    path, owner, value = "", None, data
    for part in loc:
        if typing.get_origin(tp) in (typing.Union, types.UnionType):
            return path, tp, meta, owner, value, True
        if dataclasses.is_dataclass(tp):
            owner = tp
            hints = typing.get_type_hints(tp, include_extras=True)
            value = value.get(part) if isinstance(value, dict) else None
            path = _join(path, part)
            if part not in hints:
                return path, None, [], owner, value, False
            tp, meta = _unwrap(hints[part])
        elif typing.get_origin(tp) in (list, tuple):
            value = value[part] if isinstance(value, (list, tuple)) and isinstance(part, int) \
                and part < len(value) else None
            path = _join(path, part)
            tp, meta = _unwrap((typing.get_args(tp) or (typing.Any,))[0])
        elif typing.get_origin(tp) is dict:
            if part == "[key]":
                return path, str, [], owner, value, False
            value = value.get(part) if isinstance(value, dict) else None
            path = _join(path, part)
            tp, meta = _unwrap(typing.get_args(tp)[1])
        else:
            break
    return path, tp, meta, owner, value, typing.get_origin(tp) in (typing.Union, types.UnionType)


def _kind(tp) -> str:
    origin = typing.get_origin(tp)
    if origin in (list, tuple):
        return "a list"
    if origin is dict or dataclasses.is_dataclass(tp):
        return "a mapping"
    return {float: "a number", int: "an integer", str: "a string", bool: "true or false"}.get(tp, f"a {tp}")


_META_BOUNDS = ((Gt, "gt", ">"), (Ge, "ge", ">="), (Lt, "lt", "<"), (Le, "le", "<="))


def _describe(tp) -> str:
    """What a value of type `tp` must be, with its bounds: "a number > 0", "a list of numbers > 0"."""
    tp, meta = _unwrap(tp)
    if typing.get_origin(tp) in (list, tuple) and typing.get_args(tp):
        item = _describe(typing.get_args(tp)[0]).split(" ", 1)[1]
        return "a list of " + item.replace("number", "numbers", 1).replace("integer", "integers", 1)
    bounds = [f"{sign} {getattr(m, attr):g}" for m in meta for kind, attr, sign in _META_BOUNDS if isinstance(m, kind)]
    return _kind(tp) + (" " + " and ".join(bounds) if bounds else "")


_BOUND = {"greater_than": ("gt", ">"), "greater_than_equal": ("ge", ">="), "less_than": ("lt", "<"),
          "less_than_equal": ("le", "<=")}
_TYPE = {"float_type": "must be a number", "int_type": "must be an integer",
         "int_from_float": "must be an integer", "bool_type": "must be true or false",
         "string_type": "must be a string", "list_type": "must be a list", "tuple_type": "must be a list",
         "dict_type": "must be a mapping", "dataclass_type": "must be a mapping of keys"}


def _message(cls, error: dict, data) -> ConfigError:
    """The ConfigError of one of pydantic's error records (path relative to `cls`)."""
    kind, ctx = error["type"], error.get("ctx") or {}
    path, tp, meta, owner, value, union = _follow(cls, error["loc"], data)
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        known = [f.name for f in dataclasses.fields(owner) if f.init]
        close = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(known)})"
        return ConfigError(path, f"unknown key{hint}")
    if kind == "missing":
        help_ = next((f" ({m})" for m in meta if isinstance(m, Help)), "")
        return ConfigError(path, f"is required{help_}")
    if union:
        names = " or ".join(_describe(a) for a in typing.get_args(tp) if a is not type(None))
        return ConfigError(path, f"must be {names}, got {_shown(value)}")
    shown = _shown(error["input"])
    if kind in _BOUND:
        key, sign = _BOUND[kind]
        why = next((f" ({m})" for m in meta if isinstance(m, Why)), "")
        return ConfigError(path, f"must be {sign} {ctx[key]:g}, got {shown}{why}")
    if kind == "finite_number":
        return ConfigError(path, f"must be a finite number, got {shown}")
    if kind == "literal_error":
        return ConfigError(path, f"must be one of {', '.join(repr(a) for a in typing.get_args(tp))}, got {shown}")
    if kind in ("too_short", "too_long"):
        return ConfigError(path, f"must have {ctx.get('min_length', ctx.get('max_length'))} entries, "
                                 f"got {ctx['actual_length']}")
    if kind in _TYPE:
        return ConfigError(path, f"{_TYPE[kind]}, got {shown}")
    return ConfigError(path, error["msg"])


def load(cls, data, path: str = ""):
    """An instance of the dataclass `cls` from the mapping `data` (None means all defaults); a
    ConfigError naming `path` + the key for the first thing wrong (an unknown key first)."""
    from pydantic_core import ValidationError
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(path, f"must be a mapping of keys, got {_shown(data)}")
    try:
        return _validator(cls).validate_python(data)
    except ValidationError as e:
        errors = e.errors(include_url=False)
        first = next((x for x in errors if x["type"] in ("unexpected_keyword_argument", "extra_forbidden")),
                     errors[0])
        error = _message(cls, first, data)
    key = _join(path, error.key) if path and error.key else (error.key or path)
    raise ConfigError(key, str(error).split(": ", 1)[-1] if error.key else str(error)) from None

