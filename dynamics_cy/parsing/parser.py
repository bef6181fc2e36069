"""Parser: adds the models of URDF and SDFormat files or strings to a MultibodyPlant, as in Drake."""
from __future__ import annotations

from pathlib import Path

from ..errors import ParseError
from .package_map import PackageMap
from .sdf import parse_sdf
from .urdf import parse_urdf

_FORMATS = {"urdf": parse_urdf, "sdf": parse_sdf}


class Parser:
    """Parser(plant) parses model files into `plant`; `diagnostics` keeps the warnings it issued.

    nonphysical_inertia: "warn" (default) is Drake's policy: a link whose inertia no physical body
    has (rotational inertia that fails the triangle inequality or has a negative principal moment,
    negative mass, rotational inertia on a massless link) gets a solid sphere of water density
    instead, with a warning naming the link. "error" (strict) rejects it with a ParseError naming the
    file, line and link; use it where the physics must be the model's own (the simulated plant).
    """

    def __init__(self, plant, package_map: PackageMap | None = None, *, nonphysical_inertia: str = "warn"):
        plant._throw_if_finalized("Parser")
        if nonphysical_inertia not in ("error", "warn"):
            raise ValueError(f"nonphysical_inertia must be 'error' or 'warn', got {nonphysical_inertia!r}")
        self._plant = plant
        self._package_map = package_map or PackageMap()
        self.nonphysical_inertia = nonphysical_inertia
        self.diagnostics: list[str] = []
        self.strict = False

    def SetStrictParsing(self) -> None:
        """From now on every warning is an error (a ParseError), as in Drake."""
        self.strict = True

    def plant(self):
        return self._plant

    def package_map(self) -> PackageMap:
        return self._package_map

    def _parse(self, text: str, file_type: str, source: str | None) -> list:
        kind = file_type.lower().lstrip(".")
        if kind not in _FORMATS:
            raise ParseError(f"unknown model format '{file_type}' (urdf or sdf)", source)
        result = _FORMATS[kind](self._plant, text, source, self)
        return result if isinstance(result, list) else [result]

    def AddModels(self, file_name: str) -> list:
        """The model instances of a .urdf or .sdf file."""
        path = Path(file_name)
        if not path.is_file():
            raise ParseError("no such model file", str(file_name))
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise ParseError(f"cannot read the file: {e}", str(file_name)) from None
        return self._parse(text, path.suffix, str(path))

    def AddModelsFromString(self, file_contents: str, file_type: str) -> list:
        """The model instances of a model given as text; file_type is "urdf" or "sdf"."""
        return self._parse(file_contents, file_type, None)
