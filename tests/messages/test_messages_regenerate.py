"""The committed lcm-gen output is what lcm-gen makes of messages/*.lcm."""
import pytest

import messages
from messages import regenerate
from messages.lcm_tools import lcm_tool


@pytest.fixture(scope="module")
def fresh():
    if lcm_tool("lcm-gen") is None:
        pytest.skip("lcm-gen is not installed (it ships with the `lcm` wheel)")
    return regenerate.generate()


def test_committed_code_is_not_stale(fresh):
    stale = regenerate.stale_files()
    assert not stale, (f"generated code is stale: {stale}; run `python -m messages.regenerate` "
                       "and commit the result")


def test_every_source_is_generated_and_exported(fresh):
    sources = {path.stem for path in regenerate.lcm_sources()}
    modules = {name.split("/", 1)[1][:-3] for name in fresh if not name.endswith("__init__.py")}
    assert modules == sources
    assert {cls.__name__ for cls in messages.MESSAGE_TYPES} == sources
