"""GlobalInverseKinematics: solved on a real arm (configs/robots/dxl_arm3.urdf: pan, shoulder, elbow and a
tool) and on a double pendulum hinged on the world, the reconstructed q checked by our plant's forward
kinematics against the target (the error is the relaxation's: reported, bounded, and smaller with a finer
grid), refined by the local InverseKinematics; infeasible targets proven infeasible; regions and polytopes
on a free body; and the program compared with pydrake's GlobalInverseKinematics variable by variable (same
names in the same order, the same binaries and cones), Drake's constraints holding at our solutions."""
import numpy as np
import pytest

from dynamics_cy import (
    BodyIndex,
    MultibodyPlant,
    Parser,
    PrismaticJoint,
    RollPitchYaw,
    RotationMatrix,
    SpatialInertia,
)
from dynamics_cy.errors import ModelError
from dynamics_cy.planning import GlobalInverseKinematics, IntervalBinning, InverseKinematics, SolutionResult, Solve
from dynamics_cy.planning.global_inverse_kinematics import GlobalInverseKinematicsError
from tests.conftest import REPO
from tests.plants import double_pendulum

ARM3 = REPO / "configs" / "robots" / "dxl_arm3.urdf"
Q_GOAL = np.array([0.7, 0.5, 0.9])


def plant_of(path):
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(path))
    plant.Finalize()
    return plant


def options(n=2, linear=False, binning=IntervalBinning.kLogarithmic):
    o = GlobalInverseKinematics.Options()
    o.num_intervals_per_half_axis, o.linear_constraint_only, o.interval_binning = n, linear, binning
    return o


def pose(plant, q, body):
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, q)
    X = plant.CalcRelativeTransform(context, plant.world_frame(), body.body_frame())
    return X.rotation().matrix(), X.translation()


def angle(R1, R2):
    return float(np.arccos(np.clip((np.trace(R1.T @ R2) - 1) / 2, -1, 1)))


def reach(plant, o, q_goal=Q_GOAL, body_name="tool", angle_tol=0.05):
    """Global IK for the tool's pose at q_goal (position ±1 mm, orientation within angle_tol)."""
    tool = plant.GetBodyByName(body_name)
    R_goal, p_goal = pose(plant, q_goal, tool)
    ik = GlobalInverseKinematics(plant, o)
    ik.AddWorldPositionConstraint(tool.index(), [0, 0, 0], p_goal - 1e-3, p_goal + 1e-3)
    ik.AddWorldOrientationConstraint(tool.index(), RotationMatrix(R_goal).ToQuaternion(), angle_tol)
    return ik, tool, R_goal, p_goal


def solve_and_measure(plant, o, record_property=None):
    ik, tool, R_goal, p_goal = reach(plant, o)
    result = Solve(ik.prog())
    assert result.is_success(), result.get_solver_details()
    q = ik.ReconstructGeneralizedPositionSolution(result)
    R, p = pose(plant, q, tool)
    errors = {"position": float(np.linalg.norm(p - p_goal)), "angle": angle(R, R_goal),
              # how far the solution's rotations are from SO(3): the relaxation's own error
              "so3": max(float(np.linalg.norm(result.GetSolution(ik.body_rotation_matrix(BodyIndex(i)))
                                              - RotationMatrix(_project(result.GetSolution(
                                                  ik.body_rotation_matrix(BodyIndex(i))))).matrix()))
                         for i in range(1, plant.num_bodies()))}
    label = f"N={o.num_intervals_per_half_axis} linear_only={o.linear_constraint_only}"
    print(f"global IK on dxl_arm3, {label}: {result.get_solver_id().name()}, errors {errors}")
    if record_property:
        record_property(label, errors)
    # every body's FK at the reconstructed q is near the solution's pose variables (Drake's own check)
    for i in range(1, plant.num_bodies()):
        body = plant.get_body(BodyIndex(i))
        assert np.linalg.norm(pose(plant, q, body)[1] - result.GetSolution(ik.body_position(body.index()))) < 0.02
    return q, errors


def _project(M):
    U, _, Vt = np.linalg.svd(M)
    return U @ np.diag([1, 1, np.sign(np.linalg.det(U @ Vt))]) @ Vt


def test_arm_reaches_the_target_linear_relaxation(record_property):
    """Linear constraints only (HiGHS), the loosest relaxation: any point of it is a solution, seen within
    1 cm and 0.1 rad of the target for this 0.36 m arm (asserted: 2 cm, 0.2 rad); the local IK seeded with
    the global solution converges to an exact solution on the same branch, within 0.15 rad of it."""
    plant = plant_of(ARM3)
    q, errors = solve_and_measure(plant, options(2, linear=True), record_property)
    assert errors["position"] < 0.02 and errors["angle"] < 0.2
    lower, upper = plant.GetPositionLowerLimits(), plant.GetPositionUpperLimits()
    assert np.all(q >= lower) and np.all(q <= upper)
    tool = plant.GetBodyByName("tool")
    R_goal, p_goal = pose(plant, Q_GOAL, tool)
    local = InverseKinematics(plant)
    local.AddPositionConstraint(tool.body_frame(), [0, 0, 0], plant.world_frame(), p_goal, p_goal)
    local.AddOrientationConstraint(plant.world_frame(), RotationMatrix(R_goal), tool.body_frame(), RotationMatrix(),
                                   0.0)
    local.prog().SetInitialGuess(local.q(), q)
    result = Solve(local.prog())
    assert result.is_success()
    q_local = result.GetSolution(local.q())
    R, p = pose(plant, q_local, tool)
    assert np.linalg.norm(p - p_goal) < 1e-8 and angle(R, R_goal) < 1e-6
    assert np.abs(q_local - q).max() < 0.3


def test_arm_second_order_cone_relaxation_tightens(record_property):
    """The default options (second-order cones, SCIP): the solution's rotations come closer to SO(3) from one
    to two intervals per half axis (0.10 to 0.024 seen, Frobenius), and so does the FK of the reconstructed q
    (3 mm, 0.023 rad to 1.5 mm, 0.010 rad seen; asserted at two: 5 mm, 0.03 rad)."""
    pytest.importorskip("pyscipopt")
    plant = plant_of(ARM3)
    _, e1 = solve_and_measure(plant, options(1), record_property)
    _, e2 = solve_and_measure(plant, options(2), record_property)
    assert e2["so3"] < e1["so3"]
    assert e2["position"] < 0.005 and e2["angle"] < 0.03


def test_pendulum_hinged_on_the_world():
    """Revolute joints whose parent is the world (the constant pose I, 0): a reachable point of the lower
    link is reached to the relaxation's error, and the elbow's sign is recovered."""
    plant = double_pendulum()
    lower = plant.GetBodyByName("lower")
    q_goal = np.array([0.6, -1.1])
    R_goal, p_goal = pose(plant, q_goal, lower)
    tip = np.array([0.0, 0.0, -0.45])
    p_tip = p_goal + R_goal @ tip
    ik = GlobalInverseKinematics(plant, options(2, linear=True))
    ik.AddWorldPositionConstraint(lower.index(), tip, p_tip - 1e-3, p_tip + 1e-3)
    ik.AddWorldPositionConstraint(lower.index(), [0, 0, 0], p_goal - 1e-3, p_goal + 1e-3)
    result = Solve(ik.prog())
    assert result.is_success()
    q = ik.ReconstructGeneralizedPositionSolution(result)
    R, p = pose(plant, q, lower)
    assert np.linalg.norm(p + R @ tip - p_tip) < 0.02 and np.abs(q - q_goal).max() < 0.05


def test_unreachable_target_is_infeasible():
    """0.8 m from the base of a 0.36 m arm: the relaxation proves it (even with |Rᵢⱼ| ≤ 1 alone a link
    reaches at most √3 times its length)."""
    plant = plant_of(ARM3)
    ik = GlobalInverseKinematics(plant, options(1, linear=True))
    ik.AddWorldPositionConstraint(plant.GetBodyByName("tool").index(), [0, 0, 0], [0.8, 0, 0.1], [0.8, 0, 0.1])
    assert Solve(ik.prog()).get_solution_result() == SolutionResult.kInfeasibleConstraints


def test_joint_limits_exclude_the_only_solution():
    """The pan joint limited to [−0.3, 0] while the target needs pan = 0.7: infeasible; the same target within
    [0.6, 0.8] is reached and the reconstructed pan angle respects the limits."""
    pytest.importorskip("pyscipopt")
    plant = plant_of(ARM3)
    turret = plant.GetBodyByName("turret").index()
    ik, *_ = reach(plant, options(1))
    ik.AddJointLimitConstraint(turret, -0.3, 0.0)
    assert Solve(ik.prog()).get_solution_result() == SolutionResult.kInfeasibleConstraints
    ik, *_ = reach(plant, options(1))
    ik.AddJointLimitConstraint(turret, 0.6, 0.8)
    result = Solve(ik.prog())
    assert result.is_success()
    assert 0.6 <= ik.ReconstructGeneralizedPositionSolution(result)[0] <= 0.8


def test_posture_cost_at_a_feasible_posture_is_zero():
    """Nothing but the posture cost: its minimum is 0, at the desired posture itself."""
    pytest.importorskip("pyscipopt")
    plant = plant_of(ARM3)
    q_desired = np.array([-0.4, 0.8, -1.2])
    ik = GlobalInverseKinematics(plant, options(1))
    ik.AddPostureCost(q_desired, np.ones(plant.num_bodies()), np.ones(plant.num_bodies()))
    result = Solve(ik.prog())
    assert result.is_success() and result.get_optimal_cost() == pytest.approx(0.0, abs=1e-5)
    np.testing.assert_allclose(ik.ReconstructGeneralizedPositionSolution(result), q_desired, atol=2e-3)


def free_body():
    plant = MultibodyPlant(0.0)
    plant.AddRigidBody("box", SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
    plant.Finalize()
    return plant


def cube(center, half):
    return np.array([[center[k] + s[k] * half for k in range(3)]
                     for s in np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T]).T


def test_free_body_in_one_of_two_regions():
    """A free body's origin in one of two cubes, x ≤ 0 forcing the second; its orientation within 0.1 rad of
    a desired one. The floating base's q is [qw qx qy qz x y z], as our plant orders it."""
    plant = free_body()
    body = plant.GetBodyByName("box").index()
    ik = GlobalInverseKinematics(plant, options(2, linear=True))
    z = ik.BodyPointInOneOfRegions(body, [0, 0, 0], [cube([1, 0, 0], 0.1), cube([-1, 0.2, 0], 0.1)])
    ik.AddWorldPositionConstraint(body, [0, 0, 0], [-np.inf] * 3, [0.0, np.inf, np.inf])
    R_desired = RollPitchYaw(0.3, -0.2, 0.5).ToRotationMatrix()
    ik.AddWorldOrientationConstraint(body, R_desired.ToQuaternion(), 0.1)
    result = Solve(ik.prog())
    assert result.is_success()
    np.testing.assert_allclose(result.GetSolution(z), [0, 1], atol=1e-6)
    q = ik.ReconstructGeneralizedPositionSolution(result)
    assert np.linalg.norm(q[:4]) == pytest.approx(1.0)
    p = result.GetSolution(ik.body_position(body))
    np.testing.assert_allclose(q[4:], p)
    assert np.all(np.abs(p - [-1, 0.2, 0]) <= 0.1 + 1e-9)
    R, _ = pose(plant, q, plant.get_body(body))
    assert angle(R, R_desired.matrix()) < 0.3, angle(R, R_desired.matrix())


def test_free_body_sphere_in_one_of_two_polytopes():
    plant = free_body()
    body = plant.GetBodyByName("box").index()
    ik = GlobalInverseKinematics(plant, options(1, linear=True))
    A = np.vstack([np.eye(3), -np.eye(3)])
    boxes = [GlobalInverseKinematics.Polytope3D(A, np.r_[c, -c] + 0.2) for c in (np.array([0, 0, 1.0]),
                                                                             np.array([0, 0, -1.0]))]
    p_BQ = np.array([0.05, 0.0, 0.0])
    z = ik.BodySphereInOneOfPolytopes(body, p_BQ, 0.1, boxes)
    ik.AddWorldPositionConstraint(body, p_BQ, [-np.inf, -np.inf, 0.0], [np.inf] * 3)
    result = Solve(ik.prog())
    assert result.is_success()
    np.testing.assert_allclose(result.GetSolution(z), [1, 0], atol=1e-6)
    p_WQ = result.GetSolution(ik.body_position(body)) + result.GetSolution(ik.body_rotation_matrix(body)) @ p_BQ
    assert np.all(np.abs(p_WQ - [0, 0, 1]) <= 0.1 + 1e-6)      # the 0.1 sphere inside the 0.2 box


def test_options_polytope_and_errors():
    o = GlobalInverseKinematics.Options()
    assert repr(o) == ("GlobalInverseKinematics.Options(num_intervals_per_half_axis=2, "
                       "approach=Approach.kBilinearMcCormick, interval_binning=IntervalBinning.kLogarithmic, "
                       "linear_constraint_only=False)")
    assert repr(GlobalInverseKinematics.Polytope3D(np.eye(3), np.zeros(3))) == \
        "GlobalInverseKinematics.Polytope(A=[[1. 0. 0.]\n [0. 1. 0.]\n [0. 0. 1.]], b=[0. 0. 0.])"
    plant = plant_of(ARM3)
    ik = GlobalInverseKinematics(plant, options(1, linear=True))
    for bad in (0, plant.num_bodies()):
        with pytest.raises(GlobalInverseKinematicsError, match="out of range"):
            ik.body_position(BodyIndex(bad))
    with pytest.raises(GlobalInverseKinematicsError, match="body_position_cost should have"):
        ik.AddPostureCost(np.zeros(3), np.ones(2), np.ones(plant.num_bodies()))
    with pytest.raises(GlobalInverseKinematicsError, match=r"body_orientation_cost\(2\) is negative"):
        costs = np.ones(plant.num_bodies())
        costs[2] = -1.0
        ik.AddPostureCost(np.zeros(3), np.ones(plant.num_bodies()), costs)
    with pytest.raises(GlobalInverseKinematicsError, match="at least 3 vertices"):
        ik.BodyPointInOneOfRegions(BodyIndex(2), np.zeros(3), [np.zeros((3, 2))])
    with pytest.raises(GlobalInverseKinematicsError, match="no larger than the upper"):
        ik.AddJointLimitConstraint(BodyIndex(2), 1.0, 0.0)
    with pytest.raises(GlobalInverseKinematicsError, match="fixed joint"):
        ik.AddJointLimitConstraint(plant.GetBodyByName("tool").index(), -1.0, 1.0)
    free = free_body()
    with pytest.raises(GlobalInverseKinematicsError, match="floating"):
        GlobalInverseKinematics(free, options(1, linear=True)).AddJointLimitConstraint(BodyIndex(1), -1.0, 1.0)
    slider = MultibodyPlant(0.0)
    b = slider.AddRigidBody("b", SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
    slider.AddJoint(PrismaticJoint("slide", slider.world_frame(), b.body_frame(), [1.0, 0.0, 0.0]))
    slider.Finalize()
    with pytest.raises(ModelError, match="prismatic"):
        GlobalInverseKinematics(slider)
    with pytest.raises(GlobalInverseKinematicsError, match="finalized"):
        GlobalInverseKinematics(MultibodyPlant(0.0))


def drake_program(pydrake, path, o):
    from pydrake.multibody.inverse_kinematics import GlobalInverseKinematics as DrakeGlobalIK
    from pydrake.solvers import IntervalBinning as DrakeBinning
    plant = pydrake.MultibodyPlant(0.0)
    pydrake.Parser(plant).AddModels(str(path))
    plant.Finalize()
    d = DrakeGlobalIK.Options()
    d.num_intervals_per_half_axis, d.linear_constraint_only = o.num_intervals_per_half_axis, o.linear_constraint_only
    d.interval_binning = getattr(DrakeBinning, o.interval_binning.name)
    return plant, DrakeGlobalIK(plant, d)


@pytest.mark.parametrize("path", [ARM3, REPO / "configs" / "robots" / "iiwa14.urdf"], ids=["dxl_arm3", "iiwa14"])
@pytest.mark.parametrize("n, linear, binning", [(2, False, IntervalBinning.kLogarithmic),
                                                (1, True, IntervalBinning.kLinear),
                                                (3, False, IntervalBinning.kLogarithmic)])
def test_program_matches_drakes(pydrake, path, n, linear, binning):
    """The same decision variables as pydrake's GlobalInverseKinematics, name by name in the same order, the
    same binaries, and the same number of Lorentz and rotated Lorentz cones, posture cost included."""
    from pydrake.symbolic import Variable as DrakeVariable
    o = options(n, linear, binning)
    d_plant, d_ik = drake_program(pydrake, path, o)
    plant = plant_of(path)
    ik = GlobalInverseKinematics(plant, o)
    q = np.zeros(plant.num_positions())
    ik.AddPostureCost(q, np.ones(plant.num_bodies()), np.ones(plant.num_bodies()))
    d_ik.AddPostureCost(q, np.ones(d_plant.num_bodies()), np.ones(d_plant.num_bodies()))
    ours, theirs = ik.prog(), d_ik.prog()
    assert [v.get_name() for v in ours.decision_variables()] == [v.get_name() for v in theirs.decision_variables()]
    assert [v.get_type().name for v in ours.decision_variables()] == \
        [v.get_type().name for v in theirs.decision_variables()]
    assert sum(v.get_type() == DrakeVariable.Type.BINARY for v in theirs.decision_variables()) > 0
    assert len(ours.lorentz_cone_constraints()) == len(theirs.lorentz_cone_constraints())
    assert len(ours.rotated_lorentz_cone_constraints()) == len(theirs.rotated_lorentz_cone_constraints())


@pytest.mark.parametrize("linear", [True, False], ids=["linear", "cones"])
def test_drakes_constraints_hold_at_our_solutions(pydrake, linear):
    """Our SetInitialGuess point (every variable, binaries included, for the poses at a q) and our solution
    of the arm's target problem satisfy every constraint of Drake's program built the same way."""
    if not linear:
        pytest.importorskip("pyscipopt")
    o = options(1, linear)
    d_plant, d_ik = drake_program(pydrake, ARM3, o)
    plant = plant_of(ARM3)
    ik, tool, R_goal, p_goal = reach(plant, o)
    d_tool = d_plant.GetBodyByName("tool").index()
    d_ik.AddWorldPositionConstraint(d_tool, [0, 0, 0], p_goal - 1e-3, p_goal + 1e-3)
    d_ik.AddWorldOrientationConstraint(d_tool, pydrake.Quaternion(RotationMatrix(R_goal).ToQuaternion().wxyz()), 0.05)
    theirs = d_ik.prog()
    ik.SetInitialGuess(Q_GOAL)
    result = Solve(ik.prog())
    assert result.is_success()
    for x in (ik.prog().initial_guess(), result.GetSolution()):
        violated = [b for b in theirs.GetAllConstraints() if not theirs.CheckSatisfied(b, x, 1e-6)]
        assert not violated, [str(b)[:200] for b in violated[:3]]
    np.testing.assert_allclose(ik.prog().GetInitialGuess(ik.body_position(tool.index())), p_goal, atol=1e-9)
