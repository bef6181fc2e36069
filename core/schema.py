"""YAML configs validated into dataclasses, with errors that name the file and the key.

    @dataclass
    class Ground:
        height: float = 0.0
        stiffness: float = field(default=1e5, metadata={"min": 0, "exclusive": True})

    ground = load(Ground, {"stiffness": 2e5}, "sim.contact.ground")

Supported field types: bool, int, float, str, Literal[...], Optional[T], list[T], tuple[float, ...],
dict[str, T] and nested dataclasses. Field metadata may hold "min"/"max" (inclusive, unless
"exclusive" for min and "max_exclusive" for max), "len" (exact length of a list) and "help" (shown
in messages). Unknown keys are errors with a suggestion; so are missing required fields and values
of the wrong type.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import re
import reprlib
import types
import typing
from pathlib import Path

import yaml

MAX_RATE_HZ = 10_000.0
RATE_HZ = {"min": 0, "exclusive": True, "max": MAX_RATE_HZ}   # a rate a loop can keep: period >= 100 µs
PERIOD_S = {"min": 1 / MAX_RATE_HZ}                           # a period a loop can keep, in seconds
# a timeout a loop can measure: at least one period of the fastest rate (RunConfig checks the loop's own)
TIMEOUT_S = {"min": 1 / MAX_RATE_HZ, "why": "a timeout shorter than one period of a 10 kHz loop cannot be measured"}


class ConfigError(ValueError):
    """A config value that cannot be used; the message names the source and the key."""

    def __init__(self, key: str, message: str, source: str | None = None):
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{key}: {message}" if key else f"{where}{message}")
        self.key, self.source = key, source


class LogError(ValueError):
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


def _join(path: str, key) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else str(key))


def _type_name(tp) -> str:
    return getattr(tp, "__name__", str(tp).replace("typing.", ""))


def _scalar(tp, value, path: str):
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(path, f"must be true or false, got {_shown(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(path, f"must be an integer, got {_shown(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(path, f"must be a number, got {_shown(value)}")
        if not math.isfinite(value):
            raise ConfigError(path, f"must be a finite number, got {value}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(path, f"must be a string, got {_shown(value)}")
        return value
    raise TypeError(f"unsupported config field type {tp!r} at {path}")


def convert(tp, value, path: str):
    """`value` checked and converted to the annotated type `tp`."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        for option in inner[:-1]:         # the first option the value fits, e.g. float | list[float]
            try:
                return convert(option, value, path)
            except ConfigError:
                pass
        try:
            return convert(inner[-1], value, path)
        except ConfigError as e:
            if len(inner) == 1:
                raise
            names = " or ".join("a list" if typing.get_origin(a) in (list, tuple) else
                                "a mapping" if typing.get_origin(a) is dict or dataclasses.is_dataclass(a) else
                                {float: "a number", int: "an integer", str: "a string", bool: "true or false"}
                                .get(a, f"a {_type_name(a)}") for a in inner)
            raise ConfigError(path, f"must be {names}, got {_shown(value)}") from e
    if origin is typing.Literal:
        if value not in args:
            raise ConfigError(path, f"must be one of {', '.join(repr(a) for a in args)}, got {_shown(value)}")
        return value
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(path, f"must be a list, got {_shown(value)}")
        item = args[0] if args else typing.Any
        return origin(convert(item, v, _join(path, i)) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(path, f"must be a mapping, got {_shown(value)}")
        return {str(k): convert(args[1], v, _join(path, k)) for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        return load(tp, value, path)
    if tp is typing.Any:
        return value
    return _scalar(tp, value, path)


def _check_bounds(f: dataclasses.Field, value, path: str) -> None:
    meta = f.metadata
    values = value if isinstance(value, (list, tuple)) else [value]
    if "len" in meta and isinstance(value, (list, tuple)) and len(value) != meta["len"]:
        raise ConfigError(path, f"must have {meta['len']} entries, got {len(value)}")
    for v in values:
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        lo, hi = meta.get("min"), meta.get("max")
        strict, strict_hi = meta.get("exclusive", False), meta.get("max_exclusive", False)
        if lo is not None and (v < lo or (strict and v == lo)):
            why = f" ({meta['why']})" if "why" in meta else ""
            raise ConfigError(path, f"must be {'>' if strict else '>='} {lo}, got {v}{why}")
        if hi is not None and (v > hi or (strict_hi and v == hi)):
            raise ConfigError(path, f"must be {'<' if strict_hi else '<='} {hi}, got {v}")


def load(cls, data, path: str = ""):
    """An instance of the dataclass `cls` from the mapping `data` (None means all defaults)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(path, f"must be a mapping of keys, got {_shown(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = [k for k in data if k not in fields]
    if unknown:
        k = unknown[0]
        close = difflib.get_close_matches(str(k), list(fields), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(fields)})"
        raise ConfigError(_join(path, k), f"unknown key{hint}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, f in fields.items():
        key = _join(path, name)
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                help_ = f" ({f.metadata['help']})" if "help" in f.metadata else ""
                raise ConfigError(key, f"is required{help_}")
            continue
        value = convert(hints[name], data[name], key)
        _check_bounds(f, value, key)
        kwargs[name] = value
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (ValueError, TypeError) as e:
        raise ConfigError(path, str(e)) from None


def load_file(cls, path: str | Path, section: str | None = None):
    """`cls` from a YAML file (or one top-level section of it); errors name the file."""
    data = read_yaml(path)
    try:
        return load(cls, data.get(section) if section else data, section or "")
    except ConfigError as e:
        raise ConfigError(e.key, str(e).split(": ", 1)[-1] if e.key else str(e), str(path)) from None
