"""The controller's static special case (floating-base gravity compensation: the minimum-torque
contact forces that hold the robot still) against pydrake's StaticEquilibriumProblem on Go2 with
the configuration fixed and the same cost, Σ u², over the actuator efforts u; agreement to
SNOPT's default tolerance (1e-6), which solves Drake's nonlinear program."""
import re

import numpy as np
import pytest

from dynamics_cy.planning.legged_models import LEGGED, load_legged
from dynamics_cy.planning.whole_body import ContactPoint, WholeBodyController, WholeBodyWeights

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
RADIUS, MU = 0.022, 0.6


def drake_problem(pydrake, robot_data, q):
    """Go2 parsed by Drake (its mesh geometry stripped), a sphere at each foot on a ground half space,
    an actuator on every revolute joint; StaticEquilibriumProblem with q fixed and min Σ u²."""
    from pydrake.multibody.optimization import StaticEquilibriumProblem
    text = open(robot_data / "robots" / LEGGED["go2"].urdf).read()
    text = re.sub(r"<(collision|visual)>.*?</\1>", "", text, flags=re.S)
    builder = pydrake.DiagramBuilder()
    plant, scene_graph = pydrake.AddMultibodyPlantSceneGraph(builder, 0.0)
    pydrake.Parser(plant).AddModelsFromString(text, "urdf")
    for i in range(plant.num_joints()):
        joint = plant.get_joint(pydrake.JointIndex(i))
        if joint.type_name() == "revolute":
            plant.AddJointActuator(joint.name(), joint)
    friction = pydrake.CoulombFriction(MU, MU)
    for foot in FEET:
        plant.RegisterCollisionGeometry(plant.GetBodyByName(foot), pydrake.RigidTransform(),
                                        pydrake.Sphere(RADIUS), foot, friction)
    plant.RegisterCollisionGeometry(plant.world_body(), pydrake.RigidTransform(), pydrake.HalfSpace(), "ground",
                                    friction)
    plant.Finalize()
    diagram = builder.Build().ToAutoDiffXd()
    ad_plant = diagram.GetSubsystemByName(plant.get_name())
    root = diagram.CreateDefaultContext()
    ad_ctx = ad_plant.GetMyMutableContextFromRoot(root)
    inspector = scene_graph.model_inspector()
    ground = plant.GetCollisionGeometriesForBody(plant.world_body())[0]
    ignored = {p for p in inspector.GetCollisionCandidates() if ground not in p}
    problem = StaticEquilibriumProblem(ad_plant, ad_ctx, ignored)
    prog = problem.get_mutable_prog()
    prog.AddBoundingBoxConstraint(q, q, problem.q_vars())
    prog.AddQuadraticCost(np.eye(plant.num_actuators()), np.zeros(plant.num_actuators()), problem.u_vars())
    prog.SetInitialGuess(problem.q_vars(), q)
    return plant, problem, (diagram, root)


def test_static_distribution_matches_drake(pydrake, robot_data):
    plant, _, q = load_legged("go2", robot_data)        # the feet's spheres (RADIUS) resting on z = 0
    k, X = plant.kernels(), np.empty((4, 4))
    contacts = []
    for foot in FEET:                                   # the bottom point of each sphere, fixed in the foot
        frame = plant.GetFrameByName(foot)
        k.frame_pose(q, frame, X)
        contacts.append(ContactPoint(frame, X[:3, :3].T @ np.array([0.0, 0.0, -RADIUS])))
    c = WholeBodyController(plant, contacts, mu=MU, weights=WholeBodyWeights(
        com=1e6, posture=1e6, base_orientation=1e6, torque=1.0, vdot_regularization=1e-12,
        force_regularization=1e-12))
    assert c.solve(q, np.zeros(plant.num_velocities()))

    d_plant, problem, keep = drake_problem(pydrake, robot_data, q)
    result = pydrake.Solve(problem.prog())
    assert result.is_success()
    u = result.GetSolution(problem.u_vars())
    for i in range(d_plant.num_actuators()):
        joint = d_plant.get_joint_actuator(pydrake.JointActuatorIndex(i)).joint()
        ours = c.tau[plant.GetJointByName(joint.name()).velocity_start() - 6]
        assert ours == pytest.approx(u[i], abs=1e-5 * np.abs(u).max()), joint.name()
    for w in problem.GetContactWrenchSolution(result):
        a, b = d_plant.get_body(w.bodyA_index).name(), d_plant.get_body(w.bodyB_index).name()
        foot, sign = (b, 1.0) if b in FEET else (a, -1.0)       # our λ is the force on the foot
        np.testing.assert_allclose(c.lam.reshape(-1, 3)[FEET.index(foot)], sign * w.F_Cb_W.translational(),
                                   atol=1e-5 * np.abs(c.lam).max())
