"""Where the project's configs live (installed with the package or in the checkout), and the package
map that resolves a config's `package://` URIs (`robot.package_map` added to Drake's default map and the
installed packages)."""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from dynamics_cy.parsing import PackageMap


def _configs() -> Path:
    """The shipped configs: drivers' package data once installed (setup.py copies the repository's
    top-level configs/ to drivers/configs in the wheel), else the checkout's configs/."""
    installed = Path(str(files("drivers") / "configs"))
    return installed if installed.is_dir() else Path(__file__).resolve().parents[2] / "configs"


CONFIGS = _configs()
INSTALLED = CONFIGS.parent.name == "drivers"      # the configs are the installed package's data (read-only)
DEFAULT_ROBOT = CONFIGS / "robots" / "iiwa14.urdf"


def package_map(entries: dict[str, str] | None = None, base: Path | None = None) -> PackageMap:
    """Drake's default PackageMap (drake, drake_models) with this machine's installed packages
    (PopulateFromInstalledPackages: example-robot-data, ament prefixes, ROS_PACKAGE_PATH) plus `entries`:
    package name -> its folder, or -> its package.xml (whose <name> must be that name); relative paths
    are relative to `base`. An entry replaces a remote package of the default map (a local copy of
    drake_models: Remove, then Add, since Drake's Add refuses a local path for a remote name); any other
    name already mapped elsewhere is refused, as Add does. RuntimeError naming the entry if one does not fit."""
    pm = PackageMap()
    pm.PopulateFromInstalledPackages()
    for name, where in (entries or {}).items():
        path = Path(where).expanduser()
        path = path if path.is_absolute() or base is None else base / path
        if pm.Contains(name) and pm.GetRemoteParams(name) is not None:
            pm.Remove(name)
        if path.name == "package.xml":
            pm.AddPackageXml(str(path))
            if not pm.Contains(name) or not Path(pm.GetPath(name)).samefile(path.parent):
                raise RuntimeError(f"'{path}' names another package than '{name}'")
        else:
            pm.Add(name, str(path))
    return pm
