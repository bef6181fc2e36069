"""The lifecycle the loops and the controllers share (ros2_control's managed-node states, reduced to
what a control loop has), and the run modes.

    UNCONFIGURED --configure()--> CONFIGURED --activate()--> ACTIVE --deactivate()--> INACTIVE
                                       ^                        |  update() per tick      |
                                       |                        +-------------------------+
                                       +--------------- activate() again -----------------+
    any state --close()--> FINALIZED

configure() allocates everything (buffers, decoders, LCM subscriptions); activate() starts the run
(clock, process settings, the controller's per-run state); update() is one tick and allocates
nothing; deactivate() leaves the robot safe (the exit command) and is safe to call on every exit
path. A transition out of order is a programming error: LifecycleError.
"""
from __future__ import annotations

import enum

from dynamics_cy.errors import HilstackError


class LifecycleState(enum.Enum):
    UNCONFIGURED = "unconfigured"   # built: holds its arguments only
    CONFIGURED = "configured"       # allocated and subscribed; not running
    ACTIVE = "active"               # update() runs, once per tick
    INACTIVE = "inactive"           # stopped, the robot left safe; may be activated again
    FINALIZED = "finalized"         # released (LCM unsubscribed); nothing more


class Mode(enum.StrEnum):
    """How a loop is paced: REALTIME to the wall clock, LOCKSTEP one tick per simulator step."""
    REALTIME = "realtime"
    LOCKSTEP = "lockstep"


class LifecycleError(HilstackError, RuntimeError):
    """A lifecycle step called in a state that does not allow it."""


class Lifecycle:
    """The state and its guarded transitions. Subclasses do each step's work in on_configure,
    on_activate and on_deactivate (the state changes once the step has succeeded); update() is theirs."""

    lifecycle = LifecycleState.UNCONFIGURED

    def _check(self, state: LifecycleState, *allowed: LifecycleState) -> bool:
        """Whether to go to `state`: False when already in it, LifecycleError from outside `allowed`."""
        if self.lifecycle is state:
            return False
        if self.lifecycle not in allowed:
            raise LifecycleError(f"{type(self).__name__}: cannot go {self.lifecycle.name} -> {state.name}")
        return True

    def configure(self):
        """UNCONFIGURED -> CONFIGURED: allocate. Returns self; a no-op once configured (in any state
        but FINALIZED)."""
        if self.lifecycle is LifecycleState.UNCONFIGURED:
            self.on_configure()
            self.lifecycle = LifecycleState.CONFIGURED
        elif self.lifecycle is LifecycleState.FINALIZED:
            raise LifecycleError(f"{type(self).__name__}: cannot configure once FINALIZED")
        return self

    def activate(self) -> None:
        """CONFIGURED or INACTIVE -> ACTIVE: start (per-run state reset)."""
        if self._check(LifecycleState.ACTIVE, LifecycleState.CONFIGURED, LifecycleState.INACTIVE):
            self.on_activate()
            self.lifecycle = LifecycleState.ACTIVE

    def deactivate(self) -> None:
        """ACTIVE (or CONFIGURED: an exit path before the start) -> INACTIVE: stop, leave the robot safe."""
        if self._check(LifecycleState.INACTIVE, LifecycleState.ACTIVE, LifecycleState.CONFIGURED):
            try:
                self.on_deactivate()
            finally:
                self.lifecycle = LifecycleState.INACTIVE

    def on_configure(self) -> None:
        pass

    def on_activate(self) -> None:
        pass

    def on_deactivate(self) -> None:
        pass

    @property
    def active(self) -> bool:
        return self.lifecycle is LifecycleState.ACTIVE
