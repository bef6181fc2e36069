"""Where the project's configs live (installed with the package or in the checkout), and the package
map that resolves a config's `package://` URIs (`robot.package_map` added to Drake's default map)."""
from __future__ import annotations

from pathlib import Path

from dynamics_cy.parsing import PackageMap

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
DEFAULT_ROBOT = CONFIGS / "robots" / "iiwa14.urdf"


def package_map(entries: dict[str, str] | None = None, base: Path | None = None) -> PackageMap:
    """The default PackageMap (installed packages: example-robot-data, pydrake's drake, ROS_PACKAGE_PATH)
    plus `entries`: package name -> its folder, or -> its package.xml (whose <name> must be that name);
    relative paths are relative to `base`. RuntimeError naming the entry if one does not fit."""
    pm = PackageMap()
    for name, where in (entries or {}).items():
        path = Path(where).expanduser()
        path = path if path.is_absolute() or base is None else base / path
        if path.name == "package.xml":
            pm.AddPackageXml(str(path))
            if not pm.Contains(name) or not Path(pm.GetPath(name)).samefile(path.parent):
                raise RuntimeError(f"'{path}' names another package than '{name}'")
        else:
            pm.Add(name, str(path))
    return pm
