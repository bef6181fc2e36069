"""Frames by scoped name ('instance::frame'), as Drake's parsing/scoped_names.h."""
from __future__ import annotations

SEPARATOR = "::"


def split_scoped_name(full_name: str) -> tuple[str, str]:
    """(namespace, element) of 'a::b::c' -> ('a::b', 'c'), as Drake's ScopedName::Parse (the last '::')."""
    namespace, sep, element = full_name.rpartition(SEPARATOR)
    return (namespace, element) if sep else ("", full_name)


def join_scoped_name(namespace: str, element: str) -> str:
    """Drake's ScopedName::Join: 'namespace::element', or either alone when the other is empty."""
    return f"{namespace}{SEPARATOR}{element}" if namespace and element else namespace or element


def GetScopedFrameByNameMaybe(plant, full_name: str):
    """The frame 'instance::frame' (or an unscoped name unique in the plant, or 'world'), or None."""
    if full_name == "world":
        return plant.world_frame()
    namespace, element = split_scoped_name(full_name)
    if namespace:
        if plant.HasModelInstanceNamed(namespace):
            instance = plant.GetModelInstanceByName(namespace)
            if plant.HasFrameNamed(element, instance):
                return plant.GetFrameByName(element, instance)
        return None
    return plant.GetFrameByName(element) if plant.HasFrameNamed(element) else None


def GetScopedFrameByName(plant, full_name: str):
    """The frame 'instance::frame' (or an unscoped name unique in the plant, or 'world'); the plant's
    error (a RuntimeError naming what is missing) otherwise, as Drake's GetScopedFrameByName."""
    if full_name == "world":
        return plant.world_frame()
    namespace, element = split_scoped_name(full_name)
    if namespace:
        return plant.GetFrameByName(element, plant.GetModelInstanceByName(namespace))
    return plant.GetFrameByName(element)
