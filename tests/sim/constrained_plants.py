"""Small constrained mechanisms built the same way on dynamics_cy and on pydrake (for tests/sim's constraint
tests), and a pydrake runner: the independent implementation they are checked against."""
import numpy as np

THETA = 0.5                   # the four-bar's initial crank angle (rad)


def namespace(which: str):
    """The names a builder needs, from dynamics_cy ("ours") or pydrake ("pydrake")."""
    if which == "ours":
        import dynamics_cy as ns
        return ns
    import types

    from pydrake.math import RigidTransform, RotationMatrix
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import FixedOffsetFrame, RevoluteJoint, SpatialInertia
    return types.SimpleNamespace(RigidTransform=RigidTransform, RotationMatrix=RotationMatrix,
                                 MultibodyPlant=MultibodyPlant, FixedOffsetFrame=FixedOffsetFrame,
                                 RevoluteJoint=RevoluteJoint, SpatialInertia=SpatialInertia)


def four_bar(ns, plant):
    """A parallelogram four-bar in the x-z plane closed by a ball constraint: cranks A (pivot at the origin)
    and B (pivot at x = 1), 1 m bars of 1 kg hanging along −z on revolute joints about y; the 1 m coupler bar
    C on a revolute joint at A's tip; C's far end joined to B's tip by the ball constraint. Returns (the
    constraint's id, q0 at the crank angle THETA, the joints (jA, jB, jC))."""
    bar = lambda: ns.SpatialInertia.SolidBoxWithMass(1.0, 0.05, 0.05, 1.0)       # noqa: E731
    A, B = plant.AddRigidBody("A", bar()), plant.AddRigidBody("B", bar())
    C = plant.AddRigidBody("C", ns.SpatialInertia.SolidBoxWithMass(1.0, 1.0, 0.05, 0.05))
    frame = lambda name, parent, xyz: plant.AddFrame(ns.FixedOffsetFrame(name, parent, ns.RigidTransform(xyz)))  # noqa
    y = [0.0, 1.0, 0.0]
    jA = plant.AddJoint(ns.RevoluteJoint("jA", plant.world_frame(), frame("FA", A.body_frame(), [0, 0, 0.5]), y))
    jB = plant.AddJoint(ns.RevoluteJoint("jB", frame("W1", plant.world_frame(), [1, 0, 0]),
                                         frame("FB", B.body_frame(), [0, 0, 0.5]), y))
    jC = plant.AddJoint(ns.RevoluteJoint("jC", frame("Atip", A.body_frame(), [0, 0, -0.5]),
                                         frame("Cl", C.body_frame(), [-0.5, 0, 0]), y))
    id = plant.AddBallConstraint(C, [0.5, 0, 0], B, [0, 0, -0.5])
    return id, (jA, jB, jC)


def four_bar_positions(joints) -> np.ndarray:
    """q with the cranks at THETA and the coupler level (in the plant's order of the joints)."""
    q = np.zeros(3)
    for j, x in zip(joints, (THETA, THETA, -THETA)):
        q[j.position_start()] = x
    return q


def geared_pair(ns, plant, gear_ratio: float, offset: float):
    """Two 1 kg boxes on revolute joints about z at the origin and at x = 1, the first (j0, unactuated)
    coupled to the second (j1, actuated) by q₀ = ρ q₁ + Δq. Returns (id, (j0, j1))."""
    box = lambda: ns.SpatialInertia.SolidBoxWithMass(1.0, 0.4, 0.1, 0.1)         # noqa: E731
    A, B = plant.AddRigidBody("A", box()), plant.AddRigidBody("B", box())
    F = plant.AddFrame(ns.FixedOffsetFrame("F", plant.world_frame(), ns.RigidTransform([1.0, 0, 0])))
    j0 = plant.AddJoint(ns.RevoluteJoint("j0", plant.world_frame(), A.body_frame(), [0, 0, 1]))
    j1 = plant.AddJoint(ns.RevoluteJoint("j1", F, B.body_frame(), [0, 0, 1]))
    plant.AddJointActuator("motor", j1)
    return plant.AddCouplerConstraint(j0, j1, gear_ratio, offset), (j0, j1)


def run_pydrake(build, time_step: float, duration: float, q0, u=None):
    """(q, v) after `duration` s of pydrake's discrete plant (SAP) built by build(ns, plant), from q0 (or
    q0(what build returned)), v = 0, under constant actuation u."""
    from pydrake.multibody.plant import AddMultibodyPlantSceneGraph
    from pydrake.systems.analysis import Simulator
    from pydrake.systems.framework import DiagramBuilder
    builder = DiagramBuilder()
    plant, _ = AddMultibodyPlantSceneGraph(builder, time_step)
    built = build(namespace("pydrake"), plant)
    plant.Finalize()
    diagram = builder.Build()
    root = diagram.CreateDefaultContext()
    context = plant.GetMyMutableContextFromRoot(root)
    plant.SetPositions(context, q0(built) if callable(q0) else q0)
    if plant.num_actuators():
        plant.get_actuation_input_port().FixValue(context, np.zeros(plant.num_actuators()) if u is None else u)
    Simulator(diagram, root).AdvanceTo(duration)
    return plant.GetPositions(context), plant.GetVelocities(context)
