"""Fixtures shared by the whole suite."""
from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
IIWA_URDF = REPO / "configs" / "robots" / "iiwa14.urdf"


def example_robot_data_root() -> Path | None:
    """The example-robot-data package folder (under its cmeel prefix), if installed."""
    root = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data"
    return root if (root / "robots").is_dir() else None


@pytest.fixture(scope="session")
def iiwa_urdf() -> Path:
    return IIWA_URDF


@pytest.fixture(scope="session")
def robot_data() -> Path:
    root = example_robot_data_root()
    if root is None:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    return root


@pytest.fixture
def iiwa():
    from dynamics_cy import MultibodyPlant, Parser
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(IIWA_URDF))
    plant.Finalize()
    return plant
