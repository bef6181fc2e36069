"""Fixtures for the messages tests: a random generator and LCM URLs."""
import random

import lcm
import pytest


@pytest.fixture
def rng():
    return random.Random(20240611)


@pytest.fixture
def memq():
    """An in-process LCM instance."""
    return lcm.LCM("memq://")


def _multicast_problem(url):
    """None if LCM multicast with ttl=0 delivers on this host, else why not."""
    try:
        sender, receiver = lcm.LCM(url), lcm.LCM(url)
    except (RuntimeError, OSError) as error:
        return f"cannot open {url}: {error}"
    received = []
    receiver.subscribe("PROBE", lambda channel, data: received.append(data))
    for _ in range(3):
        sender.publish("PROBE", b"probe")
        if receiver.handle_timeout(500) and received:
            return None
    return (f"no multicast loopback on {url}: check that an interface with MULTICAST "
            "has a route for 239.0.0.0/8 (e.g. `ip link set lo multicast on; "
            "ip route add 239.0.0.0/8 dev lo`)")


@pytest.fixture
def multicast_url():
    """A ttl=0 multicast URL on a port no other test (or concurrent run) shares; skips
    when multicast does not work on this host."""
    port = random.Random().randint(20000, 29999)
    url = f"udpm://239.255.76.67:{port}?ttl=0"
    problem = _multicast_problem(url)
    if problem:
        pytest.skip(problem)
    return url
