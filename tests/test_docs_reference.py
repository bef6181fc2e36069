"""The generated references of the docs site (docs/gen writes them into docs/reference, committed):
the config reference covers every key of every config file with its type, default and text, and
the command-line reference every subcommand and option of `hil`'s parser."""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def generator(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_gen_{name}", REPO / "docs" / "gen" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # its dataclass looks its module up
    spec.loader.exec_module(module)          # not "<run_path>": it only defines render()
    return module


def test_the_config_reference_describes_every_key():
    gen = generator("config_reference")
    page = gen.render()
    sections = re.findall(r"^#{3,4} `([^`]+)` \{#([\w-]+)\}\n\n(.*?)(?=^#{2,4} |\Z)", page, re.M | re.S)
    anchors = [a for _, a, _ in sections]
    assert len(anchors) == len(set(anchors)), "two sections share an anchor"
    for link in re.findall(r"\]\(#([\w-]+)\)", page):
        assert link in anchors, f"#{link} links to no section"
    seen = set()
    for _, _, body in sections:
        for row in re.findall(r"^\| `(\w+)` \| (.*)\|$", body, re.M):
            key, cells = row[0], [c.strip() for c in row[1].split(" | ")]
            assert len(cells) == 4 and cells[0] and cells[1] and cells[3], f"{key}: {cells}"
    for title, _, run_sections in gen._sections():
        for path, cls, _ in run_sections:
            stack = [(path, cls)]
            while stack:
                where, c = stack.pop()
                if not dataclasses.is_dataclass(c) or c in seen:
                    continue
                seen.add(c)
                for key in gen.keys(c, where):
                    assert key.text or key.nested, f"{title}: {where}.{key.name} has no text"
                    assert f"| `{key.name}` |" in page
                    stack += key.nested
    from drivers.sim.config import FaultSpec, SimConfig
    from hil.campaign import Distribution
    assert {SimConfig, FaultSpec, Distribution} <= seen


def test_the_cli_reference_has_every_command_and_option():
    from hil.cli import parser
    page = generator("cli_reference").render()
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        section = page[page.index(f"## `hil {name}` {{#hil-{name}}}"):]
        section = section[:section.find("\n## ", 1) if "\n## " in section[1:] else None]
        for action in p._actions:
            for flag in action.option_strings or [action.metavar or action.dest]:
                assert f"`{flag}`" in section, f"hil {name}: {flag}"


@pytest.mark.parametrize("name", ["cli_reference", "config_reference"])
def test_the_committed_reference_is_what_its_generator_writes(name):
    gen = generator(name)
    committed = (REPO / "docs" / gen.PAGE).read_text()
    assert committed == gen.render(), f"docs/{gen.PAGE} is stale: run `python docs/gen/{name}.py`"


def test_every_relative_link_of_the_readme_and_the_docs_resolves_in_a_checkout():
    """What a reader of the checkout (or of GitHub) follows: a link to a file that only a build makes
    is dead there."""
    dead = []
    for page in [REPO / "README.md", REPO / "DESIGN.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", page.read_text(), flags=re.S))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            path = target.split("#", 1)[0]
            if not path or re.match(r"[a-z]+:", path):
                continue
            if not (page.parent / path).exists():
                dead.append(f"{page.relative_to(REPO)}: {target}")
    assert not dead, "links to files not in the checkout:\n" + "\n".join(dead)
