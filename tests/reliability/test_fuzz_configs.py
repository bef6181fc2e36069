"""Fuzzing run configs: every key of every section set to values of the wrong type, unknown keys,
deleted keys, YAML tags, duplicate keys, other encodings and mutated bytes. Property: load_config
returns a RunConfig or raises ConfigError naming the file, never anything else."""
from __future__ import annotations

import copy
import time

import yaml
from hypothesis import given
from hypothesis import strategies as st

from drivers.core.config import RunConfig
from drivers.core.schema import ConfigError, parse_yaml
from drivers.run_config import load_config
from drivers.serial.config import SerialConfig
from drivers.serial.servo_config import ServoBusConfig
from drivers.sim.config import SimConfig
from drivers.viz import VizConfig
from tests.conftest import IIWA_URDF
from tests.reliability.inputs import (
    apply_edits,
    fuzz_settings,
    good_config,
    key_edits,
    key_paths,
    load_or_error,
    mutations,
)

GOOD = good_config()
BASE = parse_yaml(GOOD, "good.yaml")


PATHS = [p for p in key_paths(RunConfig) if p[0] not in ("sim", "serial", "viz", "servo_bus", "source")] \
    + key_paths(SimConfig, ("sim",)) + key_paths(SerialConfig, ("serial",)) + key_paths(VizConfig, ("viz",)) \
    + key_paths(ServoBusConfig, ("servo_bus",))


def _load(tmp_path, content: bytes):
    return load_or_error(load_config, tmp_path, content)


@fuzz_settings(250)
@given(edits=key_edits(PATHS))
def test_wrong_types_unknown_and_missing_keys(tmp_path_factory, edits):
    text = yaml.safe_dump(apply_edits(BASE, edits), allow_unicode=True)
    _load(tmp_path_factory.mktemp("c"), text.encode())


TAGS = ["!!binary aGVsbG8=", "!!set {a, b}", "!!omap [a: 1]", "!!timestamp 2001-12-14", "!!python/name:os.system",
        "!!python/object/apply:os.system ['true']", "!custom 3", "!!float .inf", "!!int 0x1F", "!!str 5", "&a [1]",
        "*undefined", "!!null ''", "<<: {x: 1}", "{? [1, 2]: 3}"]


@fuzz_settings(150)
@given(section=st.sampled_from(["loop", "controller", "sim", "serial"]), key=st.sampled_from(["rate_hz", "kp", "x"]),
       tag=st.sampled_from(TAGS), duplicate=st.booleans(),
       encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32", "latin-1", "cp1252"]))
def test_tags_duplicates_and_encodings(tmp_path_factory, section, key, tag, duplicate, encoding):
    text = GOOD + f"{section}:\n  {key}: {tag}\n" + ("robot: {model: x}\n" if duplicate else "") + "# café\n"
    _load(tmp_path_factory.mktemp("c"), text.encode(encoding))


@fuzz_settings(200)
@given(mutate=mutations())
def test_mutated_bytes(tmp_path_factory, mutate):
    _load(tmp_path_factory.mktemp("c"), mutate(GOOD.encode()))


def test_deep_nesting_and_alias_bombs_are_config_errors_in_a_moment(tmp_path):
    """Found by fuzzing: nine lines of anchors expanded to 387 million values in the error message."""
    levels = ["&a [x, x, x, x, x, x, x, x, x]"] + [f"&{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]"
                                                     for i in range(8)]
    bomb = GOOD.split("loop:")[0] + "loop: {rate_hz: [" + ", ".join(levels) + "]}\n"
    recursive = GOOD + "controller: {kp: &r [1, *r]}\n"
    deep = GOOD.split("loop:")[0] + "loop: " + "[" * 50_000 + "]" * 50_000 + "\n"
    for content, message in ((bomb, "too large: it expands to more than 100,000 values"),
                             (recursive, "too large"), (deep, "nested too deeply")):
        start = time.monotonic()
        error = _load(tmp_path, content.encode())
        assert time.monotonic() - start < 30.0          # the bomb took 55 s before; ~1 s on an idle machine
        assert isinstance(error, ConfigError) and message in str(error), error
        assert len(str(error)) < 2_000                  # the bomb's message was 2.3 GB


def test_error_messages_show_values_shortened():
    data = copy.deepcopy(BASE)
    data["loop"]["rate_hz"] = [list(range(1000))] * 1000
    from drivers.run_config import parse_config
    try:
        parse_config(data, IIWA_URDF.parent, "big.yaml")
    except ConfigError as e:
        assert "loop.rate_hz: must be a number, got [[0, 1, 2, 3, 4, 5, ...]," in str(e) and len(str(e)) < 160
    else:
        raise AssertionError("accepted a list as the loop rate")
