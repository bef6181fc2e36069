"""Fixtures shared by the whole suite."""
from __future__ import annotations

import time
from pathlib import Path

import lcm
import pytest

from dynamics_cy.planning.legged_models import example_robot_data_root
from messages.channels import private_lcm_url

REPO = Path(__file__).resolve().parent.parent
IIWA_URDF = REPO / "configs" / "robots" / "iiwa14.urdf"


def pytest_collection_modifyitems(items):
    """Tests that count allocations with tracemalloc get pytest-timeout's signal watchdog: its default
    thread watchdog, started with each test, allocates its lock inside their measurement when a
    loaded machine schedules it late (seen as a 2 KB 'tick' peak from threading.py)."""
    for item in items:
        module = getattr(item, "module", None)
        if any(hasattr(module, name) for name in ("tracemalloc", "traced_snapshots", "net_and_peak")):  # tests/alloc.py
            item.add_marker(pytest.mark.timeout(method="signal"))


@pytest.fixture(scope="session")
def iiwa_urdf() -> Path:
    return IIWA_URDF


@pytest.fixture(scope="session")
def robot_data() -> Path:
    root = example_robot_data_root()
    if root is None:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    return root


@pytest.fixture
def iiwa():
    from dynamics_cy import MultibodyPlant, Parser
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(IIWA_URDF))
    plant.Finalize()
    return plant


def _multicast_problem(url: str) -> str | None:
    """None if LCM multicast with ttl=0 delivers on this host, else why not."""
    try:
        sender, receiver = lcm.LCM(url), lcm.LCM(url)
    except (RuntimeError, OSError) as error:
        return f"cannot open {url}: {error}"
    received = []
    receiver.subscribe("PROBE", lambda channel, data: received.append(data))
    deadline = time.monotonic() + 3.0           # a loaded machine, or other traffic on the port: keep trying
    while time.monotonic() < deadline:
        sender.publish("PROBE", b"probe")
        receiver.handle_timeout(200)
        if received:
            return None
    return (f"no multicast loopback on {url}: check that an interface with MULTICAST has a route for "
            "239.0.0.0/8 (e.g. `ip link set lo multicast on; ip route add 239.0.0.0/8 dev lo`)")


@pytest.fixture
def multicast_url() -> str:
    """A ttl=0 multicast URL (stays on this host) on a random port, so concurrent tests and runs do
    not cross-talk; skips when multicast does not work here."""
    url = private_lcm_url()
    problem = _multicast_problem(url)
    if problem:
        pytest.skip(problem)
    return url
