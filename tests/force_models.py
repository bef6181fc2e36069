"""Models with force elements, built by one function on either dynamics_cy or pydrake (the same API), so
that tests compare the two on the same model (tests/dynamics, tests/sim import it as tests.force_models)."""
import types

import numpy as np


def namespace(which: str) -> types.SimpleNamespace:
    """The multibody names of dynamics_cy ('ours') or of pydrake ('drake')."""
    if which == "ours":
        import dynamics_cy as m
        return types.SimpleNamespace(**{k: getattr(m, k) for k in dir(m) if not k.startswith("_")})
    from pydrake.math import RigidTransform, RollPitchYaw
    from pydrake.multibody import plant, tree
    names = {**{k: getattr(tree, k) for k in dir(tree)}, **{k: getattr(plant, k) for k in dir(plant)}}
    return types.SimpleNamespace(**names, RigidTransform=RigidTransform, RollPitchYaw=RollPitchYaw)


def three_bodies(ns, bushing: bool = True, hinge: bool = True):
    """Body a on a revolute joint (x) at an offset frame of the world, b on a prismatic joint of a, c free;
    a RevoluteSpring and (hinge) a DoorHinge on a's joint, a PrismaticSpring on b's, a LinearSpringDamper
    between a and c and (bushing) a LinearBushingRollPitchYaw between frames of b and c. Finalized."""
    p = ns.MultibodyPlant(0.0)

    def M(m, c, inertia):
        return ns.SpatialInertia(mass=m, p_PScm_E=c, G_SP_E=ns.UnitInertia(*inertia))

    def X(rpy, xyz):
        return ns.RigidTransform(ns.RollPitchYaw(*rpy), xyz)

    a = p.AddRigidBody("a", M(1.5, [0.1, 0.2, -0.3], (0.6, 0.7, 0.8)))
    b = p.AddRigidBody("b", M(0.7, [0.0, -0.1, 0.05], (0.5, 0.55, 0.6)))
    c = p.AddRigidBody("c", M(2.0, [0.05, 0.0, 0.1], (0.5, 0.45, 0.55)))
    Fw = p.AddFrame(ns.FixedOffsetFrame("Fw", p.world_frame(), X([0.1, -0.2, 0.3], [0.2, 0.1, 1.0])))
    ja = p.AddJoint(ns.RevoluteJoint("ja", Fw, a.body_frame(), [1.0, 0.0, 0.0]))
    Fa = p.AddFrame(ns.FixedOffsetFrame("Fa", a.body_frame(), X([0.3, 0.1, -0.2], [0.0, 0.5, 0.0])))
    jb = p.AddJoint(ns.PrismaticJoint("jb", Fa, b.body_frame(), [0.0, 0.6, 0.8]))
    p.AddForceElement(ns.RevoluteSpring(ja, 0.3, 12.0))
    if hinge:
        p.AddForceElement(ns.DoorHinge(ja, ns.DoorHingeConfig()))
    p.AddForceElement(ns.PrismaticSpring(jb, -0.1, 40.0))
    p.AddForceElement(ns.LinearSpringDamper(a, [0.1, 0.0, 0.2], c, [0.0, -0.1, 0.1], 0.8, 30.0, 2.5))
    if bushing:
        FA = p.AddFrame(ns.FixedOffsetFrame("FA", b.body_frame(), X([0.2, -0.1, 0.4], [0.1, 0.0, -0.2])))
        FC = p.AddFrame(ns.FixedOffsetFrame("FC", c.body_frame(), X([-0.3, 0.2, 0.1], [0.0, 0.2, 0.1])))
        p.AddForceElement(ns.LinearBushingRollPitchYaw(FA, FC, [10.0, 11.0, 12.0], [1.0, 1.1, 1.2],
                                                       [200.0, 210.0, 220.0], [2.0, 2.1, 2.2]))
    p.Finalize()
    return p


def random_state(plant, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(q, v) near the default positions (the free body's quaternion normalized)."""
    rng = np.random.default_rng(seed)
    q = plant.GetDefaultPositions() + 0.3 * rng.normal(size=plant.num_positions())
    for i in plant.GetJointIndices():
        j = plant.get_joint(i)
        if j.num_positions() == 7:
            s = j.position_start()
            q[s:s + 4] /= np.linalg.norm(q[s:s + 4])
    return q, rng.normal(size=plant.num_velocities())


def context_at(plant, q, v):
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, q)
    plant.SetVelocities(ctx, v)
    return ctx


def element_forces(ns, plant, ctx) -> np.ndarray:
    """The generalized forces of CalcForceElementsContribution (gravity, damping and the elements)."""
    forces = ns.MultibodyForces(plant)
    plant.CalcForceElementsContribution(ctx, forces)
    return plant.CalcGeneralizedForces(ctx, forces)
