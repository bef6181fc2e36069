"""Parser: adds the models of URDF, SDFormat and model-directives files, strings or URLs to a
MultibodyPlant, as in Drake. ProcessModelDirectives, which builds a Parser when given none, is in
process.py (parser selection apart from the parsers, as Drake's detail_select_parser.h)."""
from __future__ import annotations

import os

from ..errors import ParseError
from .collision_filter_groups import CollisionFilterGroups, GroupResolver
from .common import _DIRECTIVES, _file_type
from .model_directives import _add_directives_models
from .package_map import PackageMap
from .sdf import parse_sdf
from .urdf import parse_urdf

_FORMATS = {"urdf": parse_urdf, "sdf": parse_sdf}


class Parser:
    """Parser(plant) parses model files into `plant`; `diagnostics` keeps the warnings it issued.

    package_map: the PackageMap to resolve package:// URLs with (default: Drake's default map,
    PackageMap()). model_name_prefix: every model instance is named '<prefix>::<model>' (Drake's
    Parser(plant, model_name_prefix); also accepted as the second positional argument when it is a
    str, as pydrake's overload takes it).

    nonphysical_inertia: "warn" (default) is Drake's policy: a link whose inertia no physical body
    has (rotational inertia that fails the triangle inequality or has a negative principal moment,
    negative mass, rotational inertia on a massless link) gets a solid sphere of water density
    instead, with a warning naming the link. "error" (strict) rejects it with a ParseError naming the
    file, line and link; use it where the physics must be the model's own (the simulated plant).
    """

    def __init__(self, plant, package_map: PackageMap | str | None = None, *, model_name_prefix: str | None = None,
                 nonphysical_inertia: str = "warn"):
        plant._throw_if_finalized("Parser")
        if nonphysical_inertia not in ("error", "warn"):
            raise ValueError(f"nonphysical_inertia must be 'error' or 'warn', got {nonphysical_inertia!r}")
        if isinstance(package_map, str):              # pydrake's Parser(plant, model_name_prefix)
            package_map, model_name_prefix = None, package_map
        self._plant = plant
        self._package_map = PackageMap() if package_map is None else package_map
        self._prefix = model_name_prefix or ""
        self.nonphysical_inertia = nonphysical_inertia
        self.diagnostics: list[str] = []
        self.strict = False
        self._auto_renaming = False
        self._collision_groups = CollisionFilterGroups()
        self._collision_resolver = GroupResolver()
        self._namespace: str | None = None          # a model-directives namespace while they are processed
        self._name_override: str | None = None      # an add_model directive's name for the next model

    def SetStrictParsing(self) -> None:
        """From now on every warning is an error (a ParseError), as in Drake."""
        self.strict = True

    def SetAutoRenaming(self, value: bool) -> None:
        """With auto-renaming, a model whose instance name is taken is named '<name>_<k>' with the least
        k >= 1 free (Drake's MakeModelName); without it (the default) that is an error."""
        self._auto_renaming = bool(value)

    def GetAutoRenaming(self) -> bool:
        return self._auto_renaming

    def plant(self):
        return self._plant

    def package_map(self) -> PackageMap:
        return self._package_map

    def GetCollisionFilterGroups(self) -> CollisionFilterGroups:
        """The collision filter groups and exclusion pairs parsed so far (scoped names), as Drake's
        (a copy). Recorded, not applied: the plant's contact does not filter by them."""
        return self._collision_groups.__copy__()

    # --- naming ----------------------------------------------------------------------------------
    def _model_name(self, candidate: str) -> str:
        """Drake's MakeModelName: the candidate (or a directive's name) scoped by the prefix or the
        directives' namespace, subscripted '_k' under auto-renaming when taken."""
        if self._name_override is not None:
            candidate, self._name_override = self._name_override, None
        scope = self._prefix if self._namespace is None else self._namespace
        name = f"{scope}::{candidate}" if scope else candidate
        if self._auto_renaming and self._plant.HasModelInstanceNamed(name):
            k = 1
            while self._plant.HasModelInstanceNamed(f"{name}_{k}"):
                k += 1
            name = f"{name}_{k}"
        return name

    # --- parsing ---------------------------------------------------------------------------------
    def _parse(self, text: str, file_type: str, source: str | None) -> list:
        kind = file_type.lower().lstrip(".")
        if kind in _DIRECTIVES:
            return _add_directives_models(self, text, source)
        if kind not in _FORMATS:
            raise ParseError(f"unknown model format '{file_type}' (urdf, sdf or dmd.yaml)", source)
        try:
            result = _FORMATS[kind](self._plant, text, source, self)
            self._collision_resolver.resolve(self._collision_groups)
        except ValueError as e:
            raise ParseError(str(e), source) from None
        finally:
            self._collision_resolver = GroupResolver()
        return result if isinstance(result, list) else [result]

    def _read(self, file_name) -> tuple[str, str]:
        path = os.fspath(file_name)
        if not os.path.isfile(path):
            raise ParseError("no such model file", path)
        try:
            with open(path) as f:
                return f.read(), path
        except (OSError, UnicodeDecodeError) as e:
            raise ParseError(f"cannot read the file: {e}", path) from None

    def AddModels(self, file_name=None, *, url: str | None = None, file_contents: str | None = None,
                  file_type: str | None = None) -> list:
        """The model instances of a .urdf, .sdf or .dmd.yaml file; or, as pydrake's keyword forms, of
        `url` (AddModelsFromUrl) or of `file_contents` with `file_type` (AddModelsFromString)."""
        given = [k for k, v in (("file_name", file_name), ("url", url), ("file_contents", file_contents))
                 if v is not None]
        if len(given) != 1:
            raise TypeError("Parser.AddModels() takes exactly one of file_name, url= or file_contents= "
                            f"(with file_type=); got {', '.join(given) or 'none'}")
        if url is not None:
            return self.AddModelsFromUrl(url)
        if file_contents is not None:
            if file_type is None:
                raise TypeError("Parser.AddModels(file_contents=...) needs file_type= ('urdf', 'sdf' or 'dmd.yaml')")
            return self.AddModelsFromString(file_contents, file_type)
        if file_type is not None:
            raise TypeError("Parser.AddModels(file_name) takes no file_type: the file's extension names it")
        text, path = self._read(file_name)
        return self._parse(text, _file_type(path), path)

    def AddModelsFromUrl(self, url: str) -> list:
        """The model instances of the file a package:// (or model://, file://) URL names."""
        path, error = self._package_map._resolve(url, None)
        if error:
            raise ParseError(error, url)
        text, path = self._read(path)
        return self._parse(text, _file_type(path), path)

    def AddModelsFromString(self, file_contents: str, file_type: str) -> list:
        """The model instances of a model given as text; file_type is "urdf", "sdf" or "dmd.yaml"."""
        return self._parse(file_contents, file_type, None)
