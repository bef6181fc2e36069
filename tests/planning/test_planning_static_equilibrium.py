"""StaticEquilibriumProblem solved for real models: a table on four spherical feet and example-robot-data's
solo12 standing on its four feet, with friction cones and complementarity checked on the solution."""
import numpy as np
import pytest

from dynamics_cy import (
    CoulombFriction,
    HalfSpace,
    JointIndex,
    Mesh,
    MultibodyPlant,
    PackageMap,
    Parser,
    RigidTransform,
    SpatialInertia,
    Sphere,
)
from dynamics_cy.planning import CollisionCandidates, Solve, StaticEquilibriumProblem

G = 9.81


def check_solution(plant, problem, result, mu):
    """Equilibrium, friction cones, non-penetration and complementarity at the solution; returns the
    total normal force on the robot."""
    prog = problem.prog()
    assert result.is_success(), result.GetInfeasibleConstraintNames(prog)
    assert prog.CheckSatisfied(prog.GetAllConstraints(), result.GetSolution(), 1e-6)
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, result.GetSolution(problem.q_vars()))
    wrenches = problem.GetContactWrenchSolution(result)
    assert len(wrenches) == len(problem.contact_pairs())
    total = np.zeros(3)
    for w, (ga, gb) in zip(wrenches, problem.contact_pairs()):
        f = w.F_Cb_W.translational()
        np.testing.assert_array_equal(w.F_Cb_W.rotational(), np.zeros(3))
        if ga.name == "ground":  # the force from the ground on the foot
            assert f[2] >= -1e-9 and np.linalg.norm(f[:2]) <= mu * f[2] + 1e-6
            if f[2] > 1e-6:
                assert abs(w.p_WCb_W[2]) < 1e-6  # a loaded foot touches the ground
            total += f
        else:
            assert np.linalg.norm(f) < 1e-5  # feet do not push each other
    return total


def test_table_on_four_feet():
    plant = MultibodyPlant(0.0)
    table = plant.AddRigidBody("table", SpatialInertia.SolidBoxWithMass(5.0, 0.8, 0.6, 0.05))
    mu = CoulombFriction(0.6, 0.6)
    for i, (x, y) in enumerate([(0.35, 0.25), (0.35, -0.25), (-0.35, 0.25), (-0.35, -0.25)]):
        plant.RegisterCollisionGeometry(table, RigidTransform([x, y, -0.3]), Sphere(0.02), f"foot{i}", mu)
    plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(), HalfSpace(), "ground", mu)
    plant.Finalize()
    problem = StaticEquilibriumProblem(plant, plant.CreateDefaultContext())
    assert len(problem.contact_pairs()) == 4 and problem.u_vars().shape == (0,)
    q0 = np.r_[np.cos(0.1), np.sin(0.1), 0.0, 0.0, 0.0, 0.0, 0.4]  # tilted and in the air
    problem.prog().SetInitialGuess(problem.q_vars(), q0)
    result = Solve(problem.prog())
    total = check_solution(plant, problem, result, 0.6)
    np.testing.assert_allclose(total, [0.0, 0.0, 5.0 * G], atol=1e-6)
    q = result.GetSolution(problem.q_vars())
    assert q[6] == pytest.approx(0.32, abs=1e-6)  # resting on its feet: level, feet on the ground
    assert abs(q[1]) < 1e-6 and abs(q[2]) < 1e-6


def test_update_complementarity_tolerance():
    plant = MultibodyPlant(0.0)
    ball = plant.AddRigidBody("ball", SpatialInertia.SolidSphereWithMass(1.0, 0.1))
    plant.RegisterCollisionGeometry(ball, RigidTransform(), Sphere(0.1), "ball", CoulombFriction(0.5, 0.5))
    plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(), HalfSpace(), "ground",
                                    CoulombFriction(0.5, 0.5))
    plant.Finalize()
    problem = StaticEquilibriumProblem(plant, plant.CreateDefaultContext())
    problem.UpdateComplementarityTolerance(1e-3)
    (binding,) = [b for b in problem.prog().generic_constraints() if b.evaluator().num_constraints() == 4]
    assert binding.evaluator().upper_bound()[3] == 1e-3
    problem.prog().SetInitialGuess(problem.q_vars(), [1, 0, 0, 0, 0, 0, 0.3])
    result = Solve(problem.prog())
    assert result.is_success()
    z = result.GetSolution(problem.q_vars())[6]
    assert 0.1 - 1e-9 <= z <= 0.1 + 1e-3 / G + 1e-9  # relaxed: φ α ≤ 1e-3 with α = m g lets it hover a little
    np.testing.assert_allclose(problem.GetContactWrenchSolution(result)[0].F_Cb_W.translational(), [0, 0, G],
                               atol=1e-6)


def test_solo12_stands_on_four_feet(robot_data):
    """example-robot-data's solo12 with spherical feet on the ground and 2.7 N m actuators (its mesh
    geometry is ignored, as the problem requires)."""
    urdf = robot_data / "robots" / "solo_description" / "robots" / "solo12.urdf"
    if not urdf.is_file():
        pytest.skip(f"{urdf} is not installed")
    plant = MultibodyPlant(0.0)
    packages = PackageMap()
    packages.Add("example-robot-data", str(robot_data))
    Parser(plant, packages).AddModels(str(urdf))
    for i in range(plant.num_joints()):
        j = plant.get_joint(JointIndex(i))
        if j.type_name() == "revolute":
            plant.AddJointActuator(j.name(), j, 2.7)
    mu = CoulombFriction(0.8, 0.8)
    for leg in ("FL", "FR", "HL", "HR"):
        plant.RegisterCollisionGeometry(plant.GetBodyByName(f"{leg}_FOOT"), RigidTransform(), Sphere(0.0175),
                                        f"{leg}_foot", mu)
    plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(), HalfSpace(), "ground", mu)
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    meshes = [p for p in CollisionCandidates(plant) if isinstance(p[0].shape, Mesh) or isinstance(p[1].shape, Mesh)]
    with pytest.raises(ValueError, match="Mesh"):
        StaticEquilibriumProblem(plant, ctx)
    problem = StaticEquilibriumProblem(plant, ctx, meshes)
    assert len(problem.contact_pairs()) == 10  # 4 feet with the ground, 6 foot pairs
    legs = [0, 0.8, -1.6] * 2 + [0, -0.8, 1.6] * 2
    problem.prog().SetInitialGuess(problem.q_vars(), np.r_[1, 0, 0, 0, 0.02, -0.01, 0.25, legs])
    result = Solve(problem.prog())
    weight = plant.CalcTotalMass(ctx) * G
    total = check_solution(plant, problem, result, 0.8)
    np.testing.assert_allclose(total, [0.0, 0.0, weight], atol=1e-6)
    u = result.GetSolution(problem.u_vars())
    assert np.all(np.abs(u) <= 2.7 + 1e-9) and np.abs(u).max() > 0.1  # the legs hold the body up
    loads = [w.F_Cb_W.translational()[2] for w, (ga, _) in
             zip(problem.GetContactWrenchSolution(result), problem.contact_pairs()) if ga.name == "ground"]
    assert min(loads) > 0.1 * weight  # standing on all four feet
