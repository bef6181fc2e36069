"""Collision filter groups as Drake's parser records them (multibody/parsing/collision_filter_groups.h).

A model's ``<drake:collision_filter_group name="g">`` (URDF: ``<drake:member link="l"/>``,
``<drake:member_group name="h"/>``, ``<drake:ignored_collision_filter_group name="h"/>``; SDFormat: the
same elements with the names as text; ``ignore="true"`` skips the group) becomes the group
``<model>::g`` whose members are the bodies ``<model>::l``, with the members of its member groups
added, and an exclusion pair (``<model>::g``, ``<model>::h``) per ignored group, sorted as Drake's
SortedPair. Model directives' ``add_collision_filter_group`` adds to the same record.
"""
from __future__ import annotations

import copy


class CollisionFilterGroups:
    """Parsed collision filter groups (scoped names) and exclusion pairs; Drake's class and methods."""

    def __init__(self):
        self._groups: dict[str, set[str]] = {}
        self._pairs: set[tuple[str, str]] = set()

    def AddGroup(self, name: str, members) -> None:
        if name in self._groups:
            raise RuntimeError(f"CollisionFilterGroups: group '{name}' is already defined")
        self._groups[name] = set(members)

    def AddExclusionPair(self, pair) -> None:
        a, b = pair
        self._pairs.add((a, b) if a <= b else (b, a))

    def empty(self) -> bool:
        return not self._groups and not self._pairs

    def groups(self) -> dict[str, set[str]]:
        return {name: set(members) for name, members in sorted(self._groups.items())}

    def exclusion_pairs(self) -> set[tuple[str, str]]:
        return set(self._pairs)

    def to_string(self) -> str:
        lines = ["", "Collision filter groups:"]
        for name, members in sorted(self._groups.items()):
            lines.append(f"    {name}")
            lines += [f"        {m}" for m in sorted(members)]
        lines.append("Collision filter exclusion pairs:")
        lines += [f"    {a}, {b}" for a, b in sorted(self._pairs)]
        return "\n".join(lines) + "\n"

    __str__ = to_string

    def __repr__(self) -> str:
        return f"CollisionFilterGroups({len(self._groups)} groups, {len(self._pairs)} exclusion pairs)"

    def __eq__(self, other) -> bool:
        return isinstance(other, CollisionFilterGroups) and (self._groups, self._pairs) == (other._groups, other._pairs)

    def __copy__(self) -> "CollisionFilterGroups":
        out = CollisionFilterGroups()
        out._groups, out._pairs = copy.deepcopy(self._groups), set(self._pairs)
        return out

    def __deepcopy__(self, memo) -> "CollisionFilterGroups":
        return self.__copy__()


class GroupResolver:
    """Groups and pairs declared during one parse; resolve() expands member groups into members
    (Drake's CollisionFilterGroupResolver) and adds the result to a CollisionFilterGroups."""

    def __init__(self):
        self.groups: dict[str, tuple[set[str], set[str]]] = {}     # scoped name -> (members, member groups)
        self.pairs: list[tuple[str, str]] = []

    def add_group(self, name: str, members, member_groups=()) -> None:
        if name in self.groups:
            raise ValueError(f"collision filter group '{name}' is defined twice")
        self.groups[name] = (set(members), set(member_groups))

    def add_pair(self, a: str, b: str) -> None:
        self.pairs.append((a, b))

    def resolve(self, out: CollisionFilterGroups) -> None:
        """ValueError naming an undefined group a member group or a pair names."""
        known = set(self.groups) | set(out._groups)

        def members_of(name, seen=()):
            if name in out._groups:
                return set(out._groups[name])
            if name not in self.groups:
                raise ValueError(f"collision filter group '{name}' is not defined (named by "
                                 f"'{seen[-1] if seen else name}')")
            members, subgroups = self.groups[name]
            result = set(members)
            for sub in subgroups:
                if sub not in seen and sub != name:
                    result |= members_of(sub, seen + (name,))
            return result

        resolved = {name: members_of(name) for name in self.groups}
        for a, b in self.pairs:
            for g in (a, b):
                if g not in known:
                    raise ValueError(f"collision filter group '{g}' is not defined (an ignored group of "
                                     f"'{a if g == b else b}')")
        for name, members in resolved.items():
            out.AddGroup(name, members)
        for pair in self.pairs:
            out.AddExclusionPair(pair)
        self.groups, self.pairs = {}, []
