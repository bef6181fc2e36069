"""drivers.core.schema.load: pydantic validates the config dataclasses; each kind of error it reports becomes one
ConfigError line naming the dotted key, as the CLI prints it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional

import pytest
from annotated_types import Ge, Len, Lt

from drivers.core.schema import ConfigError, Help, NonNegative, Positive, Rate, Timeout, load


@dataclass
class Inner:
    gain: Positive = 1.0
    ids: list[Annotated[int, Ge(0)]] = field(default_factory=list)


@dataclass
class Section:
    name: Annotated[str, Help("what the section is called")]
    rate: Rate = 100.0
    timeout: Timeout = 0.1
    damping: NonNegative = 0.0
    scale: Annotated[float, Ge(0), Lt(1)] = 0.5
    mode: Literal["on", "off"] = "off"
    count: Optional[int] = None
    enabled: bool = True
    xyz: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    gains: Optional[float | list[float]] = None
    names: dict[str, str] = field(default_factory=dict)
    inner: Inner = field(default_factory=Inner)
    extra: Any = None


def error(data) -> str:
    with pytest.raises(ConfigError) as e:
        load(Section, data, "sec")
    return str(e.value)


def test_a_valid_section_is_the_dataclass_with_numbers_as_floats():
    s = load(Section, {"name": "a", "rate": 50, "gains": [1, 2], "inner": {"ids": [3]}, "extra": {"k": [1]}}, "sec")
    assert s == Section(name="a", rate=50.0, gains=[1.0, 2.0], inner=Inner(ids=[3]), extra={"k": [1]})
    assert isinstance(s.rate, float) and isinstance(s.gains[0], float)
    assert load(Section, {"name": "b", "gains": 2}).gains == 2.0


@pytest.mark.parametrize("data, message", [
    ({"name": "a", "rat": 5}, "sec.rat: unknown key (did you mean 'rate'?)"),
    ({"name": "a", "zzz": 5}, "sec.zzz: unknown key (known keys: name, rate, timeout"),
    ({"name": "a", "inner": {"gian": 1}}, "sec.inner.gian: unknown key (did you mean 'gain'?)"),
    ({"rate": 5}, "sec.name: is required (what the section is called)"),
    ({"name": "a", "rate": -5}, "sec.rate: must be > 0, got -5"),
    ({"name": "a", "rate": 20000}, "sec.rate: must be <= 10000, got 20000"),
    ({"name": "a", "scale": 1}, "sec.scale: must be < 1, got 1"),
    ({"name": "a", "timeout": 1e-6}, "sec.timeout: must be >= 0.0001, got 1e-06 (a timeout shorter than one "
                                     "period of a 10 kHz loop cannot be measured)"),
    ({"name": "a", "inner": {"gain": 0}}, "sec.inner.gain: must be > 0, got 0"),
    ({"name": "a", "inner": {"ids": [1, -1]}}, "sec.inner.ids[1]: must be >= 0, got -1"),
    ({"name": "a", "rate": "5"}, "sec.rate: must be a number, got '5'"),
    ({"name": "a", "rate": True}, "sec.rate: must be a number, got True"),
    ({"name": "a", "damping": float("nan")}, "sec.damping: must be a finite number, got nan"),
    ({"name": "a", "count": 1.0}, "sec.count: must be an integer, got 1.0"),
    ({"name": "a", "count": True}, "sec.count: must be an integer, got True"),
    ({"name": "a", "enabled": "yes"}, "sec.enabled: must be true or false, got 'yes'"),
    ({"name": 5}, "sec.name: must be a string, got 5"),
    ({"name": "a", "mode": "auto"}, "sec.mode: must be one of 'on', 'off', got 'auto'"),
    ({"name": "a", "xyz": [1, 2]}, "sec.xyz: must have 3 entries, got 2"),
    ({"name": "a", "xyz": 1}, "sec.xyz: must be a list, got 1"),
    ({"name": "a", "gains": "x"}, "sec.gains: must be a number or a list of numbers, got 'x'"),
    ({"name": "a", "gains": [1, "x"]}, "sec.gains: must be a number or a list of numbers, got [1, 'x']"),
    ({"name": "a", "names": {"k": 1}}, "sec.names.k: must be a string, got 1"),
    ({"name": "a", "names": []}, "sec.names: must be a mapping, got []"),
    ({"name": "a", "inner": 3}, "sec.inner: must be a mapping of keys, got 3"),
])
def test_each_error_names_the_key_and_says_what_is_wrong(data, message):
    assert error(data).startswith(message)


def test_an_unknown_key_is_reported_before_other_errors():
    assert error({"rate": -1, "nmae": "a"}) == "sec.nmae: unknown key (did you mean 'name'?)"


def test_a_section_that_is_not_a_mapping():
    with pytest.raises(ConfigError, match=r"^sec: must be a mapping of keys, got \[1\]$"):
        load(Section, [1], "sec")
    assert load(Inner, None) == Inner()
