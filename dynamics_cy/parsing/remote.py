"""Drake's resources and remote packages for PackageMap, without downloading anything.

- Drake's resource root, as Drake's FindResource finds it: ``DRAKE_RESOURCE_ROOT`` when it is a
  directory holding ``drake/.drake-find_resource-sentinel`` (else ignored with a warning, once, as
  Drake does), otherwise the installed pydrake's ``share/`` (found without importing pydrake).
- ``RemoteParams``: Drake's ``PackageMap::RemoteParams`` (urls, sha256, archive_type, strip_prefix),
  checked as Drake's ``AddRemote`` checks them.
- Drake's download cache, found as ``drake::internal::FindOrCreateCache("package_map")`` finds it
  (``$TEST_TMPDIR/.cache``, ``$XDG_CACHE_HOME``, ``$HOME/.cache``; then ``drake/package_map``), where
  a remote package lives once fetched, at ``<sha256>-<sha256(strip_prefix)>``.
- ``fetch_from_files``: a remote package with ``file://`` URLs is fetched into that cache as Drake's
  package_downloader does (each such URL in turn, the sha256 checked, unpacked, the strip_prefix
  taken, moved into place atomically, a README beside it). http(s) URLs are never fetched here.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
import urllib.parse
import urllib.request

log = logging.getLogger("dynamics_cy.parsing.package_map")

SENTINEL = os.path.join("drake", ".drake-find_resource-sentinel")
ARCHIVE_TYPES = ("zip", "tar", "gztar", "bztar", "xztar")


class RemoteParams:
    """Where a remote package's archive is (Drake's PackageMap.RemoteParams; pydrake's keywords)."""

    def __init__(self, urls=(), sha256: str = "", archive_type: str | None = None,
                 strip_prefix: str | None = None):
        self.urls = list(urls)
        self.sha256 = sha256
        self.archive_type = archive_type
        self.strip_prefix = strip_prefix

    def ToJson(self) -> str:
        """The JSON Drake writes for these params (sorted keys, unset optionals left out)."""
        data = {"urls": list(self.urls), "sha256": self.sha256}
        if self.archive_type is not None:
            data["archive_type"] = self.archive_type
        if self.strip_prefix is not None:
            data["strip_prefix"] = self.strip_prefix
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    def __eq__(self, other) -> bool:
        return isinstance(other, RemoteParams) and self.ToJson() == other.ToJson()

    def __repr__(self) -> str:
        return (f"RemoteParams(urls={self.urls!r}, sha256={self.sha256!r}, archive_type={self.archive_type!r}, "
                f"strip_prefix={self.strip_prefix!r})")

    def check(self, package_name: str) -> None:
        """ValueError as Drake's AddRemote (a std::logic_error there) for malformed params."""
        if not self.urls:
            raise ValueError(f"PackageMap::AddRemote on '{package_name}' requires at least one URL")
        for url in self.urls:
            if not url.startswith(("https://", "http://", "file://")):
                raise ValueError(f"PackageMap::AddRemote on '{package_name}' has unsupported URL '{url}'")
        if len(self.sha256) != 64 or any(c not in "0123456789abcdefABCDEF" for c in self.sha256):
            raise ValueError(f"PackageMap::AddRemote on '{package_name}' has invalid sha256 '{self.sha256}'")
        if self.archive_type is not None and self.archive_type not in ARCHIVE_TYPES:
            raise ValueError(f"PackageMap::AddRemote on '{package_name}' has unsupported archive type "
                             f"'{self.archive_type}'")

    def cache_relative_path(self) -> str:
        """Drake's GetCacheRelativePath: '<sha256>-<sha256 of strip_prefix>'."""
        return f"{self.sha256}-{hashlib.sha256((self.strip_prefix or '').encode()).hexdigest()}"


def drake_cache_dir() -> str | None:
    """Drake's package_map cache directory as FindOrCreateCache names it (not created here)."""
    def env_dir(name):
        value = os.environ.get(name)
        return value if value and os.path.isdir(value) else None
    if env_dir("TEST_TMPDIR"):
        cache = os.path.join(os.environ["TEST_TMPDIR"], ".cache")
    elif env_dir("XDG_CACHE_HOME"):
        cache = os.environ["XDG_CACHE_HOME"]
    elif env_dir("HOME"):
        cache = os.path.join(os.environ["HOME"], ".cache")
    else:
        return None
    return os.path.join(cache, "drake", "package_map")


def find_in_cache(params: RemoteParams) -> str | None:
    """The directory of a remote package already fetched into Drake's cache, or None."""
    cache = drake_cache_dir()
    if cache is None:
        return None
    path = os.path.join(cache, params.cache_relative_path())
    return path if os.path.isdir(path) else None


def fetch_from_files(package_name: str, params: RemoteParams) -> str | None:
    """Fetches a remote package from its file:// URLs into Drake's cache (Drake's package_downloader):
    its directory there, None if it has no file:// URL; RuntimeError with Drake's message if each fails."""
    files = [u for u in params.urls if u.startswith("file://")]
    cache = drake_cache_dir()
    if not files or cache is None:
        return None
    os.makedirs(cache, exist_ok=True)
    output = os.path.join(cache, params.cache_relative_path())
    errors = []
    with tempfile.TemporaryDirectory(prefix="drake_downloader_") as tmp:
        for url in files:
            archive = urllib.request.url2pathname(urllib.parse.urlparse(url).path)
            try:
                with open(archive, "rb") as f:
                    digest = hashlib.file_digest(f, "sha256").hexdigest()
            except OSError as e:
                errors.append(f"Candidate {url} failed:\n{e}")
                continue
            if digest == params.sha256.lower():
                break
            errors.append(f"Candidate {url} failed:\nChecksum mismatch; was {digest} but wanted {params.sha256}.")
        else:
            raise RuntimeError(f"PackageMap: when downloading '{package_name}', the downloader experienced an error: "
                               "All downloads failed:\n\n" + "\n\n".join(errors))
        unpacked = os.path.join(tmp, "unpack")
        try:
            shutil.unpack_archive(archive, unpacked, format=params.archive_type)
        except (shutil.ReadError, ValueError, OSError) as e:
            raise RuntimeError(f"PackageMap: when downloading '{package_name}', the downloader experienced an "
                               f"error: {e}") from None
        package = os.path.join(unpacked, params.strip_prefix or "")
        if not os.path.isdir(package):
            raise RuntimeError(f"PackageMap: when downloading '{package_name}', the downloader experienced an error: "
                               f"The strip_prefix='{params.strip_prefix}' does not exist within "
                               f"{os.path.basename(archive)}")
        with tempfile.TemporaryDirectory(dir=cache, prefix=f"temp.{os.path.basename(output)}.") as staging:
            incoming = os.path.join(staging, "incoming")
            shutil.move(package, incoming)
            try:
                os.rename(incoming, output)
            except OSError:                 # another process put it there meanwhile: that copy serves
                pass
    with open(output + ".README", "w") as f:
        f.write(f"Our sibling directory ./{os.path.basename(output)} contains package://{package_name}.\n\n"
                "It was downloaded by Drake from one of these URLs:\n" + "".join(f" {u}\n" for u in params.urls))
    return output


def not_fetched_error(package_name: str, params: RemoteParams) -> RuntimeError:
    cache = drake_cache_dir()
    where = os.path.join(cache, params.cache_relative_path()) if cache else "(no cache directory: set XDG_CACHE_HOME)"
    return RuntimeError(
        f"PackageMap: package '{package_name}' is remote ({params.urls[0]}) and dynamics_cy downloads nothing "
        f"over the network (it fetches file:// URLs only): "
        f"it resolves once the package is in Drake's download cache, at '{where}' (pydrake's "
        f"PackageMap().GetPath('{package_name}') fetches it there), or add a local copy with "
        f"Add('{package_name}', folder)")


@functools.lru_cache(maxsize=8)
def _resource_root(env_value: str | None) -> str | None:
    if env_value is not None:
        if not os.path.isdir(env_value):
            log.warning("FindResource ignoring DRAKE_RESOURCE_ROOT='%s' because it does not exist.", env_value)
        elif not os.path.isdir(os.path.join(env_value, "drake")):
            log.warning("FindResource ignoring DRAKE_RESOURCE_ROOT='%s' because it does not contain a 'drake' "
                        "subdirectory.", env_value)
        elif not os.path.isfile(os.path.join(env_value, SENTINEL)):
            log.warning("FindResource ignoring DRAKE_RESOURCE_ROOT='%s' because it does not contain the expected "
                        "sentinel file '%s'.", env_value, SENTINEL)
        else:
            return env_value
    spec = importlib.util.find_spec("pydrake")          # found without importing pydrake
    if spec is not None and spec.submodule_search_locations:
        share = os.path.join(list(spec.submodule_search_locations)[0], "share")
        if os.path.isfile(os.path.join(share, "drake", "package.xml")):
            return share
    return None


def drake_resource_root() -> str | None:
    """Drake's resource root (the directory holding drake/), or None without Drake's resources."""
    return _resource_root(os.environ.get("DRAKE_RESOURCE_ROOT"))


@functools.lru_cache(maxsize=8)
def drake_models_params(json_file: str) -> RemoteParams | None:
    """The remote params of drake_models from Drake's drake_models.json, or None if unreadable."""
    try:
        with open(json_file) as f:
            data = json.load(f)
        return RemoteParams(data["urls"], data["sha256"], None, data.get("strip_prefix"))
    except (OSError, ValueError, KeyError) as e:
        log.warning("PackageMap: cannot read Drake's '%s' (%s); the default map has no drake_models", json_file, e)
        return None
