"""PackageMap: package names to directories, and package://, model://, file:// URLs to files, as in Drake.

Drake's semantics (multibody/parsing/package_map.cc): a package is a directory holding a
``package.xml`` whose ``<name>`` names it; adding a name twice with inequivalent directories is an
error (a crawl keeps the first and warns); a ``<export><deprecated>`` makes GetPath warn.

The default map (``PackageMap()``) holds what pydrake's holds: ``drake`` (Drake's resource root:
``DRAKE_RESOURCE_ROOT`` when it is a Drake resource root, else the installed pydrake's share/) and the
remote ``drake_models`` (``drake_models.json`` beside Drake's parser), when Drake's resources are
there; ``PackageMap.MakeEmpty()`` has none. ``PopulateFromInstalledPackages()`` adds what a user of
this machine expects to resolve: every package installed as ``share/<dir>/package.xml`` under this
Python's prefixes (its own and the cmeel prefix where pip puts example-robot-data and Pinocchio) and
under ``AMENT_PREFIX_PATH``, by its manifest's name and by ``<dir>`` (ament's layout;
example-robot-data's URDFs say ``package://example-robot-data`` but its manifest
``example_robot_descriptions``), and the packages of ``ROS_PACKAGE_PATH`` (ROS's crawl rules, as
PopulateFromRosPackagePath).

A remote package (``AddRemote``, Drake's ``drake_models``) is never downloaded over the network here: it
resolves to Drake's download cache (``<cache>/drake/package_map/<sha256>-<sha256(strip_prefix)>``, the
cache found as Drake finds it) when pydrake or Drake already fetched it, or GetPath fetches it there from
its ``file://`` URLs as Drake does; otherwise GetPath says so.

Hand-written because it must be Drake's (its crawl rules, URI rule and messages): rospkg (PyPI)
crawls ROS_PACKAGE_PATH with ROS 1's markers (CATKIN_IGNORE, rospack_nosubdirs, not AMENT_IGNORE or
COLCON_IGNORE) and knows nothing of URIs; ament_index_python comes with ROS 2, not from PyPI.
"""
from __future__ import annotations

import copy
import functools
import logging
import os
import re
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

from .remote import (
    RemoteParams,
    drake_models_params,
    drake_resource_root,
    fetch_from_files,
    find_in_cache,
    not_fetched_error,
)

log = logging.getLogger(__name__)

ROS_STOP_MARKERS = ("AMENT_IGNORE", "CATKIN_IGNORE", "COLCON_IGNORE")
_URI = re.compile(r"^([a-z0-9+.-]+)://([^/]*)/+(.*)$")


def _manifest(package_xml: str) -> tuple[str, str | None]:
    """(name, deprecation message or None) of a package.xml; RuntimeError naming the file if bad."""
    try:
        root = ET.parse(package_xml).getroot()
    except (ET.ParseError, OSError) as e:
        raise RuntimeError(f"PackageMap: cannot read the package manifest '{package_xml}': {e}") from None
    if root.tag != "package":
        raise RuntimeError(f"PackageMap: '{package_xml}' does not contain element <package>")
    name = (root.findtext("name") or "").strip()
    if not name:
        raise RuntimeError(f"PackageMap: the <package> of '{package_xml}' has no <name>")
    deprecated = root.find("export/deprecated")
    message = None if deprecated is None else " ".join((deprecated.text or "").split())
    return name, message


def _same_dir(a: str | None, b: str | None) -> bool:
    if a is None or b is None:          # a remote package not found locally is no local directory
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


class PackageMap:
    """Maps ROS-style package names to directories (Drake's names and semantics).

    PackageMap() is Drake's default map (drake, drake_models); PackageMap(other) a copy of `other`;
    PackageMap.MakeEmpty() an empty map. PopulateFromInstalledPackages() adds this machine's installed
    packages (example-robot-data, ROS and ament packages)."""

    RemoteParams = RemoteParams

    def __init__(self, other: "PackageMap | None" = None):
        self._paths: dict[str, str | None] = {}        # None: a remote package not found locally yet
        self._deprecated: dict[str, str | None] = {}
        self._remote: dict[str, RemoteParams] = {}
        if other is not None:
            self._paths, self._deprecated = dict(other._paths), dict(other._deprecated)
            self._remote = {n: copy.copy(r) for n, r in other._remote.items()}
            return
        root = drake_resource_root()
        if root is None:
            return
        self.AddPackageXml(os.path.join(root, "drake", "package.xml"))
        local_models = os.path.join(root, "drake_models", "package.xml")     # Drake's runfiles layout
        if os.path.isfile(local_models):
            self.AddPackageXml(local_models)
            return
        params = drake_models_params(os.path.join(root, "drake", "multibody", "parsing", "drake_models.json"))
        if params is not None:
            self.AddRemote("drake_models", copy.copy(params))

    @staticmethod
    def MakeEmpty() -> "PackageMap":
        pm = PackageMap.__new__(PackageMap)
        pm._paths, pm._deprecated, pm._remote = {}, {}, {}
        return pm

    def __copy__(self) -> "PackageMap":
        return PackageMap(self)

    def __deepcopy__(self, memo) -> "PackageMap":
        return PackageMap(self)

    # --- look-up -------------------------------------------------------------------------------
    def size(self) -> int:
        return len(self._paths)

    def GetPackageNames(self) -> list[str]:
        return sorted(self._paths)

    def Contains(self, package_name: str) -> bool:
        return package_name in self._paths

    def GetPath(self, package_name: str) -> str:
        """The package's directory; warns if the package is deprecated. A remote package's directory is
        Drake's download cache's copy, fetched there from its file:// URLs if need be (RuntimeError if it
        is not there and has none: nothing is downloaded over the network here)."""
        self._require(package_name, "GetPath")
        if self._deprecated.get(package_name) is not None:
            log.warning("PackageMap: Package '%s' is deprecated: %s", package_name, self._deprecated[package_name])
        path = self._paths[package_name]
        if path is None:
            remote = self._remote[package_name]
            path = find_in_cache(remote) or fetch_from_files(package_name, remote)
            if path is None:
                raise not_fetched_error(package_name, self._remote[package_name])
            self._paths[package_name] = path
        return path

    def GetDeprecated(self, package_name: str) -> str | None:
        self._require(package_name, "GetDeprecated")
        return self._deprecated.get(package_name)

    def GetRemoteParams(self, package_name: str) -> RemoteParams | None:
        """The params a package was added with by AddRemote, or None for a local package (ours)."""
        self._require(package_name, "GetRemoteParams")
        remote = self._remote.get(package_name)
        return None if remote is None else copy.copy(remote)

    def ResolveUrl(self, url: str, relative_to: str | None = None) -> str:
        """The existing file a URL names (package://, model://, file://, or a path relative to
        `relative_to`, the model file's directory); RuntimeError saying why otherwise."""
        path, error = self._resolve(url, relative_to)
        if error:
            raise RuntimeError(error)
        return path

    def _resolve(self, url: str, root_dir: str | None) -> tuple[str, str | None]:
        """(path, None), or (the path it would be or the URL, why it does not resolve), as Drake's ResolveUri."""
        m = _URI.match(url)
        if m:
            scheme, package, rest = m.groups()
            if scheme == "file":
                path = "/" + rest
            elif scheme in ("package", "model"):
                if package not in self._paths:
                    return url, f"URI '{url}' refers to unknown package '{package}'"
                try:
                    path = os.path.join(self.GetPath(package), rest)
                except RuntimeError as e:
                    return url, str(e)
            else:
                return url, (f"URI '{url}' specifies an unsupported scheme; supported schemes are 'file://', "
                             "'model://', and 'package://'.")
        elif os.path.isabs(url):
            path = url
        elif root_dir:
            path = os.path.join(root_dir, url)
        else:
            return url, f"URI '{url}' is invalid when parsing a string instead of a filename."
        path = os.path.normpath(path)
        if not os.path.exists(path):
            return path, f"URI '{url}' resolved to '{path}' which does not exist."
        return path, None

    # --- adding ----------------------------------------------------------------------------------
    def Add(self, package_name: str, package_path: str) -> None:
        """Adds a package; RuntimeError if the directory does not exist or the name is mapped elsewhere."""
        path = str(package_path)
        if not os.path.isdir(path):
            raise RuntimeError(f"PackageMap::Add cannot add '{package_name}' because directory '{path}' does "
                               "not exist")
        if package_name in self._remote:
            raise RuntimeError(f"PackageMap::Add() cannot add '{package_name}' because the existing path is remote "
                               f"('{self._remote[package_name].urls[0]}') but the the new path is local ('{path}')")
        old = self._paths.get(package_name)
        if old is not None and not _same_dir(old, path):
            raise RuntimeError(f"PackageMap already contains package '{package_name}' at '{old}'; cannot add it "
                               f"at '{path}'")
        if old is None:
            self._paths[package_name], self._deprecated[package_name] = path, None

    def AddRemote(self, package_name: str, params: RemoteParams) -> None:
        """Declares a remote package (Drake's AddRemote): checked, recorded, never downloaded. GetPath finds
        it in Drake's download cache once pydrake (or Drake) has fetched it, and raises otherwise."""
        params = copy.copy(params)
        params.urls = list(params.urls)
        params.check(package_name)
        if package_name in self._paths:
            old = self._remote.get(package_name)
            if old is None:
                raise RuntimeError(f"PackageMap::AddRemote() cannot add '{package_name}' because the existing path "
                                   f"is local ('{self._paths[package_name]}') but the the new path is remote "
                                   f"('{params.urls[0]}')")
            if old != params:
                raise RuntimeError(f"PackageMap::AddRemote() cannot add '{package_name}' because the remote package "
                                   f"parameters differ ({old.ToJson()} vs {params.ToJson()})")
            return
        self._paths[package_name], self._deprecated[package_name] = None, None
        self._remote[package_name] = params

    def AddMap(self, other_map: "PackageMap") -> None:
        for name in other_map.GetPackageNames():
            if name in other_map._remote:
                self.AddRemote(name, other_map._remote[name])
                if self._paths[name] is None and other_map._paths[name] is not None:
                    self._paths[name] = other_map._paths[name]       # already found in the cache
            else:
                self.Add(name, other_map._paths[name])
            if other_map._deprecated.get(name) is not None and self._deprecated.get(name) is None:
                self._deprecated[name] = other_map._deprecated[name]

    def AddPackageXml(self, filename: str) -> None:
        """Adds the package a package.xml names, at the file's directory."""
        name, deprecated = _manifest(str(filename))
        self.Add(name, str(Path(filename).parent))
        self.SetDeprecated(name, deprecated)

    def PopulateFromFolder(self, path: str) -> None:
        """Adds every package at or below `path` (a package found again elsewhere keeps its first path,
        with a warning; an unreadable directory is a warning)."""
        if not path:
            raise RuntimeError("PackageMap.PopulateFromFolder(): the path is empty")
        self._crawl(str(path), stop_at_package=False, stop_markers=())

    def PopulateFromEnvironment(self, environment_variable: str) -> None:
        """PopulateFromFolder for each ':'-separated folder of the environment variable."""
        if environment_variable == "ROS_PACKAGE_PATH":
            raise RuntimeError('PackageMap::PopulateFromEnvironment() must not be used to load a "ROS_PACKAGE_PATH";'
                               " use PopulateFromRosPackagePath() instead.")
        for folder in os.environ.get(environment_variable, "").split(":"):
            if folder:
                self._crawl(folder, stop_at_package=False, stop_markers=())

    def PopulateFromRosPackagePath(self) -> None:
        """The packages of ROS_PACKAGE_PATH, crawled as ROS does: not below a package, nor into a directory
        holding AMENT_IGNORE, CATKIN_IGNORE or COLCON_IGNORE."""
        for folder in os.environ.get("ROS_PACKAGE_PATH", "").split(":"):
            if folder:
                self._crawl(folder, stop_at_package=True, stop_markers=ROS_STOP_MARKERS)

    def PopulateFromInstalledPackages(self) -> None:
        """Adds this machine's installed packages (ours; Drake has no such method): every
        share/<dir>/package.xml under this Python's prefixes (its own, and the cmeel prefix where pip puts
        example-robot-data and Pinocchio) and under AMENT_PREFIX_PATH, by its manifest's name and by <dir>
        (ament's layout: example-robot-data's URDFs say package://example-robot-data, its manifest
        example_robot_descriptions), then the packages of ROS_PACKAGE_PATH (PopulateFromRosPackagePath).
        As a crawl: a package already mapped keeps its path (a different one is a warning). The search is
        done once per process and environment."""
        found = _installed_packages(os.environ.get("ROS_PACKAGE_PATH", ""), os.environ.get("AMENT_PREFIX_PATH", ""))
        for name, (path, deprecated) in found.items():
            if name not in self._paths:
                self._paths[name], self._deprecated[name] = path, deprecated
            elif not _same_dir(self._paths[name], path):
                log.warning("PackageMap is ignoring newly-found path '%s' for package '%s' (it is at '%s')",
                            path, name, self._paths[name] or self._remote[name].urls[0])

    # --- changing --------------------------------------------------------------------------------
    def SetDeprecated(self, package_name: str, deprecated_message: str | None) -> None:
        self._require(package_name, "SetDeprecated")
        self._deprecated[package_name] = deprecated_message

    def Remove(self, package_name: str) -> None:
        self._require(package_name, "Remove")
        del self._paths[package_name], self._deprecated[package_name]
        self._remote.pop(package_name, None)

    def to_string(self) -> str:
        return "PackageMap:\n" + "".join(f"  - {n}: {self._paths[n] or self._remote[n].urls[0]}\n"
                                         for n in self.GetPackageNames())

    def __repr__(self) -> str:
        return f"PackageMap({self.size()} packages: {', '.join(self.GetPackageNames())})"

    # --- helpers ---------------------------------------------------------------------------------
    def _require(self, package_name: str, method: str) -> None:
        if package_name not in self._paths:
            raise RuntimeError(f"PackageMap.{method}(): package '{package_name}' is not known; known packages: "
                               f"{', '.join(self.GetPackageNames()) or '(none)'}")

    def _crawl(self, path: str, stop_at_package: bool, stop_markers) -> None:
        """Drake's CrawlForPackages: the directory's package.xml, then its sub-directories (not hidden)."""
        d = os.path.normpath(path)
        if any(os.path.exists(os.path.join(d, m)) for m in stop_markers):
            return
        manifest = os.path.join(d, "package.xml")
        if os.path.exists(manifest):
            try:
                name, deprecated = _manifest(manifest)
            except RuntimeError as e:
                log.warning("%s", e)
            else:
                if name not in self._paths:
                    self._paths[name], self._deprecated[name] = d, deprecated
                elif not _same_dir(self._paths[name], d):
                    log.warning("PackageMap is ignoring newly-found path '%s' for package '%s' (it is at '%s')",
                                d, name, self._paths[name])
            if stop_at_package:
                return
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            log.warning("Unable to open directory: %s", path)
            return
        for entry in entries:
            if entry.is_dir() and not entry.name.startswith("."):
                self._crawl(entry.path, stop_at_package, stop_markers)


def _share_dirs(ament_prefix_path: str) -> list[str]:
    """The share/ directories of this Python's prefixes (and of a cmeel prefix) and of AMENT_PREFIX_PATH."""
    prefixes = [sys.prefix, os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix")]
    prefixes += [p for p in ament_prefix_path.split(":") if p]
    seen, out = set(), []
    for prefix in prefixes:
        share = os.path.join(prefix, "share")
        if os.path.isdir(share) and os.path.realpath(share) not in seen:
            seen.add(os.path.realpath(share))
            out.append(share)
    return out


@functools.lru_cache(maxsize=4)
def _installed_packages(ros_package_path: str, ament_prefix_path: str) -> dict:
    """name -> (path, deprecation) of PopulateFromInstalledPackages; computed once per environment."""
    pm = PackageMap.MakeEmpty()
    for share in _share_dirs(ament_prefix_path):
        for entry in sorted(os.scandir(share), key=lambda e: e.name):
            if entry.is_dir() and os.path.isfile(os.path.join(entry.path, "package.xml")):
                pm._crawl(entry.path, stop_at_package=True, stop_markers=ROS_STOP_MARKERS)
                # an installed package's share/ directory is named for it too (ament's layout, which
                # Pinocchio resolves): example-robot-data's package.xml says example_robot_descriptions
                if entry.name not in pm._paths:
                    pm._paths[entry.name], pm._deprecated[entry.name] = entry.path, None
    for folder in ros_package_path.split(":"):
        if folder:
            pm._crawl(folder, stop_at_package=True, stop_markers=ROS_STOP_MARKERS)
    return {name: (pm._paths[name], pm._deprecated[name]) for name in pm._paths}
