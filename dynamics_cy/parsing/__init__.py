"""Model file parsing: URDF and an SDFormat subset."""
from .package_map import PackageMap
from .parser import Parser

__all__ = ["PackageMap", "Parser"]
