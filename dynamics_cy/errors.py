"""Exceptions for bad models and undefined dynamics, and the root of every exception of the project.

HilstackError is the one root: each package's errors derive from it (and from the builtin a caller
would expect: ValueError for bad input, RuntimeError where Drake raises one), so `except
HilstackError` catches what the stack raises on purpose and nothing else. It lives here, in the
package every other one may import (messages imports only this module of it). The model and
dynamics errors also derive from RuntimeError, which is what Drake raises for them."""


class HilstackError(Exception):
    """The root of the project's exceptions (hil.HilstackError)."""


class ModelError(HilstackError, RuntimeError):
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


class DynamicsError(HilstackError, RuntimeError):
    """A state at which a kernel's math is undefined; every kernel (the Drake-style API and the
    allocation-free Kernels) raises the same subclass for the same fault."""


class SingularInertiaError(DynamicsError):
    """Forward dynamics: a joint sees a singular articulated-body inertia (e.g. it moves only massless
    bodies), so v̇ is not defined."""


class GimbalLockError(DynamicsError):
    """N(q) of a roll-pitch-yaw joint at |pitch| = π/2, where ṙpy = f(ω) is not defined."""
