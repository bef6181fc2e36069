"""Fixtures of the simulated-plant tests: small models built in code (as factories, since test modules
cannot import each other under --import-mode=importlib), LCM helpers and URLs."""

import lcm
import numpy as np
import pytest

from dynamics_cy import (
    Box,
    CoulombFriction,
    MultibodyPlant,
    RigidTransform,
    SpatialInertia,
    UnitInertia,
)
from tests.plants import double_pendulum

G = 9.81


def free_box(mass=2.0, size=(0.2, 0.1, 0.05), mu=0.5, gravity=None):
    """One free box with a box collision geometry of friction (mu, mu)."""
    plant = MultibodyPlant(0.0)
    box = plant.AddRigidBody("box", SpatialInertia(mass, np.zeros(3), UnitInertia.SolidBox(*size)))
    plant.RegisterCollisionGeometry(box, RigidTransform(), Box(*size), "box_collision", CoulombFriction(mu, mu))
    if gravity is not None:
        plant.mutable_gravity_field().set_gravity_vector(gravity)
    plant.Finalize()
    return plant


def energy(plant, q, v) -> float:
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, q)
    plant.SetVelocities(context, v)
    return plant.CalcKineticEnergy(context) + plant.CalcPotentialEnergy(context)


def drain(lc) -> int:
    """Handles every message waiting on an in-process LCM; returns how many."""
    handled = 0
    while lc.handle_timeout(0) > 0:
        handled += 1
    return handled


@pytest.fixture
def make_box():
    return free_box


@pytest.fixture
def make_double_pendulum():
    return double_pendulum


@pytest.fixture
def total_energy():
    return energy


@pytest.fixture
def handle_all():
    return drain


@pytest.fixture
def memq():
    return lcm.LCM("memq://")
