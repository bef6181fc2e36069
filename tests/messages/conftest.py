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
