"""The real run log the bad-input tests corrupt."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.inputs import good_config


@pytest.fixture(scope="session")
def run_log(tmp_path_factory) -> Path:
    """A real run log: 0.3 s of the loop against the simulated iiwa in lockstep, recorded in-process
    (its config, good.yaml, beside it)."""
    from drivers.run_config import load_config
    from hil.lockstep import run_lockstep
    folder = tmp_path_factory.mktemp("runlog")
    path = folder / "run.lcmlog"
    (folder / "good.yaml").write_text(good_config().split("serial:")[0])     # and the config, beside it
    run_lockstep(load_config(folder / "good.yaml", {"viz": False, "telemetry": {"log": str(path)}}), 0.3)
    return path
