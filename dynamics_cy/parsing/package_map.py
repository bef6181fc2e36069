"""PackageMap: resolves package://name/path and model://name/path URLs to files, as in Drake."""
from __future__ import annotations

import logging
import os
import xml.etree.ElementTree as ET
from pathlib import Path

log = logging.getLogger(__name__)


class PackageMap:
    """Maps ROS-style package names to directories."""

    def __init__(self):
        self._paths: dict[str, Path] = {}

    def Add(self, package_name: str, package_path: str) -> None:
        path = Path(package_path)
        if not path.is_dir():
            raise RuntimeError(f"PackageMap.Add(): package '{package_name}' path '{package_path}' "
                               "is not an existing directory")
        old = self._paths.get(package_name)
        if old is not None and old.resolve() != path.resolve():
            raise RuntimeError(f"PackageMap.Add(): package '{package_name}' is already mapped to '{old}'; "
                               f"cannot remap it to '{package_path}'")
        self._paths[package_name] = path

    def Contains(self, package_name: str) -> bool:
        return package_name in self._paths

    def GetPath(self, package_name: str) -> str:
        if package_name not in self._paths:
            raise RuntimeError(f"PackageMap.GetPath(): package '{package_name}' is not known; known packages: "
                               f"{', '.join(sorted(self._paths)) or '(none)'}")
        return str(self._paths[package_name])

    def GetPackageNames(self) -> list[str]:
        return sorted(self._paths)

    def size(self) -> int:
        return len(self._paths)

    def AddPackageXml(self, filename: str) -> None:
        """Adds the package named by the <name> of a package.xml, at the file's directory."""
        try:
            name = ET.parse(filename).getroot().findtext("name")
        except (ET.ParseError, OSError) as e:
            raise RuntimeError(f"PackageMap.AddPackageXml(): cannot read '{filename}': {e}") from e
        if not name:
            raise RuntimeError(f"PackageMap.AddPackageXml(): '{filename}' has no <name>")
        self.Add(name.strip(), str(Path(filename).parent))

    def PopulateFromFolder(self, path: str) -> None:
        """Adds every package at or below `path` that has a package.xml."""
        root = Path(path)
        if not root.is_dir():
            raise RuntimeError(f"PackageMap.PopulateFromFolder(): '{path}' is not a directory")
        for xml in sorted(root.rglob("package.xml")):
            try:
                self.AddPackageXml(str(xml))
            except RuntimeError as e:
                log.warning("PopulateFromFolder(): skipping %s: %s", xml, e)

    def PopulateFromEnvironment(self, environment_variable: str) -> None:
        for folder in os.environ.get(environment_variable, "").split(":"):
            if folder and Path(folder).is_dir():
                self.PopulateFromFolder(folder)

    def ResolveUrl(self, url: str, relative_to: str | None = None) -> str:
        """The file a URL names: package://, model://, file:// or a path (relative to `relative_to`)."""
        for scheme in ("package://", "model://"):
            if url.startswith(scheme):
                name, _, rest = url[len(scheme):].partition("/")
                return str(Path(self.GetPath(name)) / rest)
        if url.startswith("file://"):
            return url[len("file://"):]
        p = Path(url)
        if not p.is_absolute() and relative_to:
            p = Path(relative_to) / p
        return str(p)
