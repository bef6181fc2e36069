"""ScopedName (pydrake.multibody.tree): an element name within a "::"-separated namespace, as Drake's."""
from __future__ import annotations

_SEP = "::"


def _trim(name: str) -> str:
    while name.startswith(_SEP):
        name = name[len(_SEP):]
    while name.endswith(_SEP):
        name = name[:-len(_SEP)]
    return name


def _problem(namespace_name: str, element_name: str) -> bool:
    """True if the parts cannot form a scoped name: a delimiter in the element, or at either end of the
    namespace."""
    return _SEP in element_name or namespace_name.startswith(_SEP) or namespace_name.endswith(_SEP)


class ScopedName:
    """``namespace::element``; the namespace may itself hold "::" (nested scopes) and may be empty."""

    def __init__(self, namespace_name: str = "", element_name: str = ""):
        if _problem(namespace_name, element_name):
            raise RuntimeError(f"Cannot create a ScopedName('{namespace_name}', '{element_name}') with "
                               "mis-placed delimiters")
        self._namespace, self._element = str(namespace_name), str(element_name)

    @staticmethod
    def Make(namespace_name: str, element_name: str) -> "ScopedName | None":
        """The scoped name, or None if the parts are malformed or the element is empty (Drake's optional)."""
        if not element_name or _problem(namespace_name, element_name):
            return None
        return ScopedName(namespace_name, element_name)

    @staticmethod
    def Join(name1: str, name2: str) -> "ScopedName":
        """name1::name2 parsed (either may be empty or scoped)."""
        return ScopedName.Parse(f"{name1}{_SEP}{name2}")

    @staticmethod
    def Parse(scoped_name: str) -> "ScopedName":
        """Split at the last "::" after dropping leading and trailing delimiters."""
        name = _trim(str(scoped_name))
        namespace, sep, element = name.rpartition(_SEP)
        return ScopedName(_trim(namespace) if sep else "", element)

    def get_namespace(self) -> str:
        return self._namespace

    def get_element(self) -> str:
        return self._element

    def get_full(self) -> str:
        return f"{self._namespace}{_SEP}{self._element}" if self._namespace else self._element

    def to_string(self) -> str:
        return self.get_full()

    def set_namespace(self, namespace_name: str) -> None:
        ScopedName(namespace_name, self._element)
        self._namespace = str(namespace_name)

    def set_element(self, element_name: str) -> None:
        ScopedName(self._namespace, element_name)
        self._element = str(element_name)

    def __str__(self) -> str:
        return self.get_full()

    def __repr__(self) -> str:
        return f"ScopedName('{self._namespace}', '{self._element}')"
