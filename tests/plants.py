"""Small models built in code that several test folders use (a module, not a conftest: test
modules import it as tests.plants)."""
import numpy as np

from dynamics_cy import FixedOffsetFrame, MultibodyPlant, Parser, RevoluteJoint, RigidTransform, SpatialInertia


def parsed(model, gravity=None) -> MultibodyPlant:
    """The finalized plant of a model file (URDF or SDF), optionally with another gravity vector."""
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(model))
    if gravity is not None:
        plant.mutable_gravity_field().set_gravity_vector(gravity)
    plant.Finalize()
    return plant


def double_pendulum(m1=1.5, m2=0.8, l1=0.6, l2=0.45, damping=0.0):
    """Point masses m1, m2 at the ends of links l1, l2, both joints about y, no limits."""
    plant = MultibodyPlant(0.0)
    y = np.array([0.0, 1.0, 0.0])
    b1 = plant.AddRigidBody("upper", SpatialInertia.PointMass(m1, [0, 0, -l1]))
    b2 = plant.AddRigidBody("lower", SpatialInertia.PointMass(m2, [0, 0, -l2]))
    elbow = plant.AddFrame(FixedOffsetFrame("elbow", b1.body_frame(), RigidTransform([0, 0, -l1])))
    plant.AddJoint(RevoluteJoint("shoulder", plant.world_frame(), b1.body_frame(), y, damping=damping))
    plant.AddJoint(RevoluteJoint("elbow", elbow, b2.body_frame(), y, damping=damping))
    plant.Finalize()
    return plant
