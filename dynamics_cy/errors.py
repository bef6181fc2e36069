"""Exceptions for bad models. Both derive from RuntimeError, which is what Drake raises."""


class ModelError(RuntimeError):
    """An inconsistent multibody model (a loop, a body with two parents, a bad inertia, ...)."""


class ParseError(ModelError):
    """A model file that cannot be parsed; the message names the file, line and element."""

    def __init__(self, message: str, source: str | None = None, line: int | None = None,
                 element: str | None = None):
        where = source or "<string>"
        if line is not None:
            where += f":{line}"
        if element:
            where += f" ({element})"
        super().__init__(f"{where}: {message}")
        self.source, self.line, self.element = source, line, element
