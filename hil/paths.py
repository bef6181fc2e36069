"""Where the project's configs live (installed with the package or in the checkout), and where
pip put example-robot-data's models (`package://example-robot-data/...` in a config)."""
import sysconfig
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
DEFAULT_ROBOT = CONFIGS / "robots" / "iiwa14.urdf"
ROBOT_DATA_URL = "package://example-robot-data/"


def example_robot_data() -> Path | None:
    """The installed example-robot-data package folder (under pip's cmeel prefix), if there is one."""
    root = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data"
    return root if root.is_dir() else None
