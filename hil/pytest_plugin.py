"""pytest fixtures for testing a control law against the simulated robot (docs/testing.md).

Installed with the stack as a pytest11 entry point (`hil.pytest_plugin`), so any project's tests can
use them:

    def test_my_law_holds(hil_sim, hil_config):
        run = hil_sim(hil_config("iiwa"), MyLaw, duration=2.0, overrides={"trajectory": {"type": "hold"}})
        assert run.final_state == "RUNNING" and abs(run.q - run.q[0]).max() < 1e-3

`hil_station` runs a station file (several arms in one loop) the same way.
`pytest --hil-check-alloc` makes every run measure what the law's update() allocates and fails the
test that allocates. The work is done by hil.testing, imported when a fixture is first used.
"""
from __future__ import annotations

import signal

import pytest


def pytest_addoption(parser) -> None:
    parser.getgroup("hil").addoption(
        "--hil-check-alloc", action="store_true",
        help="every hil_sim run traces what the law's update() allocates (tracemalloc) and fails the test "
             "if it allocates")


def pytest_collection_modifyitems(config, items) -> None:
    """Tests using hil_sim get pytest-timeout's signal watchdog (when pytest-timeout is on and the test
    names no timeout of its own): its default thread watchdog can start late, inside a run, and its
    allocations would be taken for the law's."""
    if config.pluginmanager.hasplugin("timeout") and hasattr(signal, "SIGALRM"):
        for item in items:
            if "hil_sim" in getattr(item, "fixturenames", ()) and item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(method="signal"))


@pytest.fixture
def hil_sim(request):
    """A function that runs a control law in lockstep against the simulated robot and returns the run:

        run = hil_sim(config, controller=None, duration=2.0, driver=None, pushes=(), payload=None,
                      faults=None, overrides=None, check_alloc=None)

    config: a path (hil_config("iiwa")), a mapping or a RunConfig; controller: a hil.Controller
    (instance or class) or a function law(state, command), None: the config's controller.type.
    duration: seconds of the robot's clock. driver: the stand-in in front of the arm, commanded in
    torque: "drake_sim" (Drake's simulated driver), "kuka_driver" (drake-iiwa-driver's --torque_only:
    its start guard, FRI monitoring), "franka_driver" (drake-franka-driver's --control_mode=torque: the
    panda protocol, commands stamped on its clock); None: the config's. A config with a servo_bus (or
    serial) section runs behind its chain instead: the simulated servos on a pty and the servo-bus
    driver as processes of their own, in lockstep (hil.chain; hil_config("dxl_arm")).
    pushes: external wrenches, sim.pushes ({body, force, torque, start, duration, point}); payload:
    sim.payload (a mapping, or a mass in kg); faults: sim.faults (docs/sim.md); overrides: merged into
    the config (nested mappings key by key, lists replaced). check_alloc: trace update()'s
    allocations and fail the test if it allocates (None: the --hil-check-alloc option).

    Returns a hil.testing.SimRun: per-tick arrays t, elapsed, q, v, q_d, tau (sent), tau_external,
    safety, gripper; faults, transitions, error (the law's traceback), final_state, summary, allocations,
    injected, frame_positions(frame), object_position(name) (a body of the simulated plant at the end).
    A law that raises does not fail the test: the run shows it
    (a CONTROLLER fault, run.error) for the test to assert on.
    """
    from hil.testing import allocation_problem, simulate
    default = request.config.getoption("hil_check_alloc")

    def run(config, controller=None, *, duration: float = 2.0, driver: str | None = None, pushes=(), payload=None,
            faults=None, overrides: dict | None = None, check_alloc: bool | None = None):
        check = default if check_alloc is None else check_alloc
        result = simulate(config, controller, duration=duration, driver=driver, pushes=pushes, payload=payload,
                          faults=faults, overrides=overrides, check_alloc=check)
        problem = allocation_problem(result) if check else None
        if problem:
            pytest.fail(problem, pytrace=False)
        return result

    return run


@pytest.fixture
def hil_station():
    """A function that runs a station file (several arms in one loop, docs/station.md) in lockstep
    against its simulated arms and returns the run (hil.testing.StationRun: `arms`, each arm's SimRun
    by name; `summary`, `final_state`, `stopped_by`):

        run = hil_station(path, controllers=None, duration=2.0, overrides=None)

    controllers: a law per arm name instead of its controller.type; overrides: the shared sections' keys.
    """
    from hil.testing import simulate_station
    return simulate_station


@pytest.fixture(scope="session")
def hil_config():
    """A function from a shipped robot's name to its config's path, so a test needs no YAML of its own:
    hil_config("iiwa") (configs/demo.yaml: the iiwa14 behind Drake's simulated driver), hil_config("panda")
    (configs/arms/panda_torque.yaml: example-robot-data's Panda behind franka_driver), hil_config("go2")
    (configs/legged/go2.yaml: the Go2 standing, a floating base), hil_config("g1") (configs/legged/g1.yaml:
    the G1 humanoid on two soles), hil_config("dxl_arm")
    (configs/servo/dxl_arm.yaml: Dynamixel servos behind the servo bus) and hil_config("iiwa_wsg")
    (configs/station/iiwa_wsg.yaml: the iiwa with a WSG 50 and a wrist F/T sensor picking a box from a
    table); a test whose robot's models are
    not installed (example-robot-data) skips. Pass `overrides` to hil_sim to change a section (e.g. the trajectory)."""
    from hil.testing import config_path, missing_module

    def path(name: str):
        found = config_path(name)
        missing = missing_module(name)
        if missing:
            pytest.skip(f"hil_config({name!r}) needs {missing}, which is not installed")
        return found

    return path
