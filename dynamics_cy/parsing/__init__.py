"""Model file parsing: URDF, an SDFormat subset, and Drake's model directives (YAML)."""
from .collision_filter_groups import CollisionFilterGroups
from .model_directives import (
    AddCollisionFilterGroup,
    AddDirectives,
    AddFrame,
    AddModel,
    AddModelInstance,
    AddWeld,
    FlattenModelDirectives,
    LoadModelDirectives,
    LoadModelDirectivesFromString,
    ModelDirective,
    ModelDirectives,
    ModelInstanceInfo,
    Transform,
)
from .package_map import PackageMap
from .parser import Parser
from .process import ProcessModelDirectives
from .scoped_names import GetScopedFrameByName, GetScopedFrameByNameMaybe

__all__ = ["AddCollisionFilterGroup", "AddDirectives", "AddFrame", "AddModel", "AddModelInstance", "AddWeld",
           "CollisionFilterGroups", "FlattenModelDirectives", "GetScopedFrameByName", "GetScopedFrameByNameMaybe",
           "LoadModelDirectives", "LoadModelDirectivesFromString", "ModelDirective", "ModelDirectives",
           "ModelInstanceInfo", "PackageMap", "Parser", "ProcessModelDirectives", "Transform"]
