"""Exceptions for bad models and undefined dynamics. All derive from RuntimeError, which is what Drake
raises for them."""


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


class DynamicsError(RuntimeError):
    """A state at which a kernel's math is undefined; every kernel (the Drake-style API and the
    allocation-free Kernels) raises the same subclass for the same fault."""


class SingularInertiaError(DynamicsError):
    """Forward dynamics: a joint sees a singular articulated-body inertia (e.g. it moves only massless
    bodies), so v̇ is not defined."""


class GimbalLockError(DynamicsError):
    """N(q) of a roll-pitch-yaw joint at |pitch| = π/2, where ṙpy = f(ω) is not defined."""
