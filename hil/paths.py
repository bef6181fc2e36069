"""Where the project's configs live (installed with the package or in the checkout)."""
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
DEFAULT_ROBOT = CONFIGS / "robots" / "iiwa14.urdf"
