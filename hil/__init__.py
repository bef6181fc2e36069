"""hil: the top of the stack. It owns the control loop and its lifecycle (loop, lifecycle), the
robot's read/write interface to its protocol and driver (hardware, floating_base), the controllers
(controllers, legged), trajectories, safety, telemetry and tick statistics (telemetry, sketch), the
real-time process settings (process), the lockstep wiring of a loop and a simulated robot
(lockstep), regression scenarios (scenario, legged_scenario, regress), campaigns (campaign*), run
logs, replay, report and MCAP export (runlog, replay, report, legged_log, mcap_export), and the
`hil` command line (cli, cli_table). It may import every other package of the project; none imports
it (DESIGN.md, tests/test_architecture.py).

Its public API (docs/controllers.md): `Controller`, `State`, `Command`, `ContactState`, `FunctionController`,
`ControllerFault`, `RebindError`
(hil.controller_api), `run`, `check_allocations` and `make_law` (hil.running), the pytest fixtures, and
`HilstackError`, the root of every exception the stack raises (dynamics_cy.errors)."""

from importlib import metadata as _metadata

from dynamics_cy.errors import HilstackError

from .controller_api import Command, ContactState, Controller, ControllerFault, FunctionController, RebindError, State

try:
    __version__ = _metadata.version("hilstack")
except _metadata.PackageNotFoundError:       # a checkout that was never installed
    __version__ = "0+unknown"

__all__ = ["Command", "ContactState", "Controller", "ControllerFault", "FunctionController", "HilstackError",
           "RebindError", "State", "__version__", "check_allocations", "make_law", "run"]


def __getattr__(name: str):
    """hil.run, hil.check_allocations and hil.make_law (hil.running), imported on first use: `hil --help`
    stays quick."""
    if name in ("run", "check_allocations", "make_law"):
        from . import running
        return getattr(running, name)
    raise AttributeError(f"module 'hil' has no attribute {name!r}")
