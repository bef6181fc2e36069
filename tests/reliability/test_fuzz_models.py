"""Fuzzing the URDF/SDFormat parser with mutated real models (numbers, attributes, elements, bytes),
entity bombs and deep trees. Property: a model parses and finalizes, or raises dynamics_cy's ModelError
(ParseError naming the file and line is one), never anything else, and never expands an entity bomb or
reads an external entity."""
from __future__ import annotations

import importlib.util
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynamics_cy import ModelError, MultibodyPlant, Parser
from tests.conftest import IIWA_URDF
from tests.reliability.inputs import fuzz_settings, mutations


def _drake_sdf() -> Path | None:
    """Drake's planar gripper (24 joints, frames, collision filters), if pydrake is installed."""
    spec = importlib.util.find_spec("pydrake")
    path = spec and Path(spec.origin).parent / "share/drake/examples/planar_gripper/planar_gripper.sdf"
    return path if path and path.is_file() else None


MODELS = {"urdf": IIWA_URDF.read_text(), **({"sdf": _drake_sdf().read_text()} if _drake_sdf() else {})}
NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")
ATTRIBUTE = re.compile(r'="[^"]*"')
ODD_NUMBERS = ["-1", "0", "nan", "inf", "-inf", "1e400", "1e-400", "abc", "", "1 2", "0x10", "-0", "1e308"]
ODD_VALUES = ["", "world", "iiwa_link_0", "iiwa_link_7", "../../x", "package://nope/x.obj", "continuous", "floating",
              "planar", "0 0 0", "&amp;", "\u00e9\u4e2d", " " * 3]


def parse(text: str, kind: str):
    """Parses and finalizes; returns the plant, or the ModelError it raised."""
    plant = MultibodyPlant(0.0)
    try:
        Parser(plant).AddModelsFromString(text, kind)
        plant.Finalize()
    except ModelError as e:
        return e
    return plant


def _replace(pattern, choices):
    return st.tuples(st.integers(0, 10_000), st.sampled_from(choices)).map(
        lambda a: lambda text: _nth_sub(pattern, text, a[0], a[1]))


def _nth_sub(pattern, text, n, value):
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = matches[n % len(matches)]
    replacement = f'="{value}"' if m.group(0).startswith("=") else value
    return text[:m.start()] + replacement + text[m.end():]


def _structural():
    """Delete, duplicate or move one element of the model's tree."""
    return st.tuples(st.sampled_from(["delete", "duplicate", "move"]), st.integers(0, 10_000), st.integers(0, 10_000)) \
        .map(lambda a: lambda text: _edit_tree(text, *a))


def _edit_tree(text, kind, i, j):
    try:
        root = ET.fromstring(text)
    except ET.ParseError:                  # an earlier edit broke the XML: nothing to restructure
        return text
    parents = [(p, c) for p in root.iter() for c in p]
    if not parents:
        return text
    parent, child = parents[i % len(parents)]
    if kind == "delete":
        parent.remove(child)
    elif kind == "duplicate":
        parent.append(child)
    else:
        parent.remove(child)
        targets = list(root.iter())
        targets[j % len(targets)].append(child)
    return ET.tostring(root, encoding="unicode")


def text_mutations():
    bytes_level = mutations().map(lambda f: lambda text: f(text.encode()).decode("utf-8", "replace"))
    edit = st.one_of(_replace(NUMBER, ODD_NUMBERS), _replace(ATTRIBUTE, ODD_VALUES), _structural(), bytes_level)
    return st.lists(edit, min_size=1, max_size=3)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # overflow in a huge inertia, then rejected
@pytest.mark.parametrize("kind", list(MODELS))
@fuzz_settings(120)
@given(edits=text_mutations())
def test_mutated_real_models_parse_or_raise_model_error(kind, edits):
    text = MODELS[kind]
    for edit in edits:
        text = edit(text)
    result = parse(text, kind)
    if isinstance(result, ModelError):
        assert str(result).startswith("<string>")      # it names the source (and the line, where known)
        return
    context = result.CreateDefaultContext()           # a model accepted is one the kernels can use
    assert np.all(np.isfinite(result.CalcGravityGeneralizedForces(context)))
    assert np.all(np.isfinite(result.CalcMassMatrix(context)))


def test_the_unmutated_models_parse():
    for kind, text in MODELS.items():
        assert not isinstance(parse(text, kind), ModelError), kind


BILLION_LAUGHS = ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
                  + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(9))
                  + ']><robot name="&j;"><link name="l"/></robot>')
QUADRATIC = ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "' + "x" * 50_000 + '">]><robot name="r">'
             + '<link name="&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"/>' * 50 + "</robot>")
EXTERNAL = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]><robot name="&x;"/>'


@pytest.mark.parametrize("text", [BILLION_LAUGHS, QUADRATIC, EXTERNAL], ids=["billion_laughs", "quadratic", "external"])
def test_entity_bombs_and_external_entities_are_refused_quickly(text):
    start = time.monotonic()
    result = parse(text, "urdf")
    assert time.monotonic() - start < 5.0
    assert isinstance(result, ModelError), result


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deep_xml_trees_raise_model_error(depth):
    text = '<robot name="r">' + "<link name='l'>" * depth + "</link>" * depth + "</robot>"
    result = parse(text, "urdf")
    assert isinstance(result, (ModelError, MultibodyPlant))
