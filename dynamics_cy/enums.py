"""pydrake's enums, ours: each member equal to pydrake's member of the same enum (the same class name
and value: ``options.approach == pydrake.solvers.MixedIntegerRotationConstraintGenerator.Approach.
kBilinearMcCormick``) and hashed as it is (by value), so a dict keyed by ours finds pydrake's. pybind11's
``__eq__`` refuses other types, so the comparison is ours on the left. pydrake is never imported: its
members are told by their type's module."""
from __future__ import annotations

import enum


def is_pydrakes_twin(member: enum.Enum, other) -> bool:
    """Whether `other` is pydrake's member of the enum `member` mirrors."""
    kind = type(other)
    return (kind.__module__.split(".")[0] == "pydrake" and kind.__name__ == type(member).__name__
            and getattr(other, "value", None) == member.value)


class DrakeEnum(enum.Enum):
    """An enum with pydrake's names and values."""

    def __eq__(self, other):
        if isinstance(other, enum.Enum):
            return self is other
        return True if is_pydrakes_twin(self, other) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.value)


class DrakeIntEnum(enum.IntEnum):
    """An IntEnum with pydrake's names and values: ``int(x)`` is the C++ value, ``str(x)`` ``Class.kName``."""

    def __eq__(self, other):
        return True if is_pydrakes_twin(self, other) else int.__eq__(self, other)

    __hash__ = int.__hash__
    __str__ = enum.Enum.__str__
