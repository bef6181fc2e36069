"""Fixtures for the planning tests (the iiwa, its URDF and example-robot-data come from tests/conftest.py):
two free-floating bodies with every supported collision shape, finite-difference gradient checks, pydrake."""
import numpy as np
import pytest

from dynamics_cy import (
    Box,
    Capsule,
    CoulombFriction,
    Cylinder,
    HalfSpace,
    MultibodyPlant,
    Parser,
    RigidTransform,
    RollPitchYaw,
    RotationalInertia,
    SpatialInertia,
    Sphere,
)


@pytest.fixture(scope="module")
def free_bodies():
    """Two free bodies with box, sphere, capsule and cylinder collision geometry (off-centre masses),
    and in the world a ground half space (z = -0.5) and a box obstacle."""
    plant = MultibodyPlant(0.0)
    a = plant.AddRigidBody("a", SpatialInertia.MakeFromCentralInertia(2.0, [0.01, -0.02, 0.03],
                                                                      RotationalInertia(0.04, 0.03, 0.02)))
    b = plant.AddRigidBody("b", SpatialInertia.MakeFromCentralInertia(1.0, [0.0, 0.01, 0.0],
                                                                      RotationalInertia(0.01, 0.01, 0.002)))
    mu = CoulombFriction(0.8, 0.8)
    plant.RegisterCollisionGeometry(a, RigidTransform(RollPitchYaw(0.1, 0.2, 0.3), [0.05, 0, 0]), Box(0.2, 0.3, 0.4),
                                    "a_box", mu)
    plant.RegisterCollisionGeometry(a, RigidTransform([0, 0, 0.3]), Sphere(0.06), "a_sphere", mu)
    plant.RegisterCollisionGeometry(b, RigidTransform(RollPitchYaw(0.3, 0, 0), [0, 0, 0]), Capsule(0.05, 0.3),
                                    "b_capsule", mu)
    plant.RegisterCollisionGeometry(b, RigidTransform([0.1, 0, 0]), Cylinder(0.04, 0.1), "b_cylinder", mu)
    world = plant.world_body()
    plant.RegisterCollisionGeometry(world, RigidTransform([0.0, 0.0, -0.5]), HalfSpace(), "ground", mu)
    plant.RegisterCollisionGeometry(world, RigidTransform(RollPitchYaw(0, 0, 0.4), [1.5, 0.0, 0.2]),
                                    Box(0.3, 0.3, 0.3), "obstacle", mu)
    plant.Finalize()
    return plant


@pytest.fixture
def free_bodies_q():
    """random_q(rng): unit quaternions, the two bodies close to each other above the ground."""
    def random_q(rng):
        q = []
        for center in ([0.0, 0.0, 0.3], [0.35, 0.1, 0.4]):
            z = rng.normal(size=4)
            q += list(z / np.linalg.norm(z)) + list(np.array(center) + 0.05 * rng.normal(size=3))
        return np.array(q)
    return random_q


def numerical_gradient(f, x, h=1e-6):
    """Central differences of f: R^n -> R^m at x, shape (m, n)."""
    x = np.asarray(x, dtype=float)
    cols = []
    for i in range(x.shape[0]):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((np.asarray(f(x + e), float) - np.asarray(f(x - e), float)) / (2 * h))
    return np.column_stack(cols)


@pytest.fixture(scope="session")
def fd_gradient():
    return numerical_gradient


@pytest.fixture(scope="session")
def check_gradient():
    """check(evaluator, x): EvalWithGradient equals Eval and central differences of Eval."""
    def check(evaluator, x, rtol=1e-5, atol=1e-6, h=1e-6):
        y, dy = evaluator.EvalWithGradient(x)
        np.testing.assert_allclose(y, evaluator.Eval(x), rtol=1e-12, atol=1e-12)
        num = numerical_gradient(evaluator.Eval, x, h)
        scale = max(1.0, float(np.abs(num).max()))
        np.testing.assert_allclose(dy, num, rtol=rtol, atol=atol * scale,
                                   err_msg=f"{type(evaluator).__name__}: analytic and numerical gradients differ")
    return check


@pytest.fixture(scope="session")
def pydrake():
    return pytest.importorskip("pydrake.all", reason="pydrake (pip install drake) is not installed")


@pytest.fixture(scope="module")
def drake_iiwa(pydrake, iiwa_urdf):
    """Drake's MultibodyPlant of configs/robots/iiwa14.urdf, finalized."""
    plant = pydrake.MultibodyPlant(0.0)
    pydrake.Parser(plant).AddModels(str(iiwa_urdf))
    plant.Finalize()
    return plant


@pytest.fixture(scope="session")
def plants_from_urdf(pydrake):
    """make(text, file_type="urdf") -> (ours, theirs, scene_graph, diagram): our plant and Drake's (in a diagram
    with a SceneGraph, which keeps the geometry) parsed from the same URDF (or SDFormat) text, both finalized."""
    def make(text: str, file_type: str = "urdf"):
        ours = MultibodyPlant(0.0)
        Parser(ours).AddModelsFromString(text, file_type)
        ours.Finalize()
        builder = pydrake.DiagramBuilder()
        theirs, scene_graph = pydrake.AddMultibodyPlantSceneGraph(builder, 0.0)
        pydrake.Parser(theirs).AddModelsFromString(text, file_type)
        theirs.Finalize()
        return ours, theirs, scene_graph, builder.Build()
    return make
