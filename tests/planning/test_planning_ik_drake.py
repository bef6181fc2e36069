"""IK solutions checked with Drake's own constraint evaluators: our InverseKinematics + Solve on the iiwa (plus a
sphere obstacle welded to the world) with gaze, angle, point-to-point distance, minimum-distance and distance
constraints; then the same constraints built with pydrake.multibody.inverse_kinematics on a pydrake plant (with a
SceneGraph for the collision constraints) parsed from the same URDF text, and CheckSatisfied on our solution."""
import numpy as np
import pytest

from dynamics_cy.planning import InverseKinematics, Solve

OBSTACLE = np.array([0.5, 0.0, 0.45])  # centre of a 0.08 m sphere welded to the world
D_MIN, INFLUENCE_OFFSET = 0.01, 0.05
TARGETS = [[0.67, 0.017, 0.438], [0.677, -0.022, 0.444], [0.7, -0.005, 0.453]]  # ~18 cm beyond the obstacle
Q_START = [0.0, 0.3, 0.0, -1.6, 0.0, 0.6, 0.0]  # elbow up, in front of the robot


@pytest.fixture(scope="module")
def plants(plants_from_urdf, iiwa_urdf):
    """Our plant and Drake's (in a diagram with a SceneGraph) from the iiwa URDF plus the obstacle link."""
    urdf = open(iiwa_urdf).read().replace("</robot>", f"""
  <link name="obstacle">
    <collision><geometry><sphere radius="0.08"/></geometry></collision>
  </link>
  <joint name="obstacle_weld" type="fixed">
    <parent link="world"/><child link="obstacle"/><origin xyz="{OBSTACLE[0]} {OBSTACLE[1]} {OBSTACLE[2]}"/>
  </joint>
</robot>""")
    ours, theirs, scene_graph, diagram = plants_from_urdf(urdf)
    root = diagram.CreateDefaultContext()
    return {"ours": ours, "theirs": theirs, "context": theirs.GetMyMutableContextFromRoot(root),
            "keep_alive": (diagram, scene_graph, root)}


def build(pydrake, plants, specs):
    """Adds each (name, args) to a new InverseKinematics as ik.Add<name>(*args) and builds Drake's
    pydrake.multibody.inverse_kinematics.<name>(plant, *args, context) (in its constructor's argument order);
    frame names and ("geometry", body_a, body_b) pairs in args are resolved on each plant.
    Returns (ik, [(our binding, Drake's constraint)])."""
    from pydrake.multibody import inverse_kinematics as dik
    ours, theirs = plants["ours"], plants["theirs"]

    def resolve(plant, a):
        if isinstance(a, str):
            return plant.GetFrameByName(a)
        if isinstance(a, tuple) and a[0] == "geometry":
            return tuple(plant.GetCollisionGeometriesForBody(plant.GetBodyByName(b))[0] for b in a[1:])
        return a

    ik = InverseKinematics(ours)
    out = []
    for name, args in specs:
        binding = getattr(ik, f"Add{name}")(*(resolve(ours, a) for a in args))
        d_args = [resolve(theirs, a) for a in args]
        if name == "DistanceConstraint":  # (plant, pair, context, lower, upper)
            drake = dik.DistanceConstraint(theirs, d_args[0], plants["context"], *d_args[1:])
        else:  # the constructor takes PositionConstraint's arguments as (frameA, lower, upper, frameB, p_BQ)
            order = [2, 3, 4, 0, 1] if name == "PositionConstraint" else range(len(args))
            drake = getattr(dik, name)(theirs, *(d_args[i] for i in order), plants["context"])
        out.append((binding, drake))
    return ik, out


def drake_min_distance(plants, q):
    """The smallest signed distance over Drake's collision candidates at q (SceneGraph's own query)."""
    theirs, ctx = plants["theirs"], plants["context"]
    theirs.SetPositions(ctx, q)
    query = theirs.get_geometry_query_input_port().Eval(ctx)
    return min(p.distance for p in query.ComputeSignedDistancePairwiseClosestPoints(1.0))


def test_kinematic_ik_solutions_satisfy_drakes_evaluators(pydrake, plants):
    """10 problems (feasible by construction: the bounds come from a random q*), random starts: gaze, angle
    between vectors (both bounds within 0.05 rad of q*'s) and a point-to-point distance held exactly."""
    ours = plants["ours"]
    lo, hi = ours.GetPositionLowerLimits(), ours.GetPositionUpperLimits()
    k, X, X3 = ours.kernels(), np.empty((4, 4)), np.empty((4, 4))
    rng = np.random.default_rng(31)
    for _ in range(10):
        q_star, q0 = rng.uniform(lo, hi), rng.uniform(lo, hi)
        k.frame_pose(q_star, ours.GetFrameByName("iiwa_link_ee"), X)
        k.frame_pose(q_star, ours.GetFrameByName("iiwa_link_3"), X3)
        target = X[:3, 3] + X[:3, :3] @ [0.4, 0.01, 0.0]  # 0.025 rad off the ee x axis at q*
        angle = np.arccos(X[2, 0])  # between the world z axis and the ee x axis at q*
        d = np.linalg.norm(X[:3, 3] - X3[:3, 3])
        ik, pairs = build(pydrake, plants, [
            ("GazeTargetConstraint", ("iiwa_link_ee", [0, 0, 0], [1, 0, 0], "world", target, 0.05)),
            ("AngleBetweenVectorsConstraint", ("world", [0, 0, 1], "iiwa_link_ee", [1, 0, 0],
                                               max(angle - 0.05, 0.0), min(angle + 0.05, np.pi))),
            ("PointToPointDistanceConstraint", ("iiwa_link_3", [0, 0, 0], "iiwa_link_ee", [0, 0, 0], d, d)),
        ])
        ik.prog().SetInitialGuess(ik.q(), q0)
        result = Solve(ik.prog(), solver_options={"max_restarts": 20})
        assert result.is_success(), result.GetInfeasibleConstraintNames(ik.prog())
        q = result.GetSolution(ik.q())
        assert np.all(q >= lo) and np.all(q <= hi)
        assert not all(drake.CheckSatisfied(q0, 1e-6) for _, drake in pairs)  # the start does not satisfy them
        for _, drake in pairs:
            assert drake.CheckSatisfied(q, 1e-8), (type(drake).__name__, drake.Eval(q), drake.lower_bound(),
                                                   drake.upper_bound())


def test_collision_ik_solutions_satisfy_drakes_evaluators(pydrake, plants):
    """The end effector 18 cm beyond the obstacle sphere (seen from the robot), pointing down within 0.3 rad,
    the wrist sphere (link 6) 2-30 cm from the obstacle (DistanceConstraint), from an elbow-up start: without
    a minimum-distance constraint the solutions cut through the obstacle or the arm itself, and Drake's
    MinimumDistanceLowerBoundConstraint rejects them; with AddMinimumDistanceConstraint(1 cm, offset 5 cm)
    Drake's evaluators (MinimumDistanceLowerBoundConstraint on a SceneGraph, DistanceConstraint,
    PositionConstraint, GazeTargetConstraint) accept every solution and SceneGraph's distances are ≥ 1 cm."""
    margins, rejected_without = [], 0
    for target in TARGETS:
        target = np.array(target)
        specs = [
            ("PositionConstraint", ("iiwa_link_ee", [0, 0, 0], "world", target - 0.01, target + 0.01)),
            ("GazeTargetConstraint", ("iiwa_link_ee", [0, 0, 0], [1, 0, 0], "world", target - [0, 0, 0.3], 0.3)),
            ("DistanceConstraint", (("geometry", "iiwa_link_6", "obstacle"), 0.02, 0.3)),
        ]
        minimum = pydrake.MinimumDistanceLowerBoundConstraint(plants["theirs"], D_MIN, plants["context"], None,
                                                              INFLUENCE_OFFSET)
        for with_minimum_distance in (False, True):
            ik, pairs = build(pydrake, plants, specs)
            if with_minimum_distance:
                ours_minimum = ik.AddMinimumDistanceConstraint(D_MIN, INFLUENCE_OFFSET)
            ik.prog().SetInitialGuess(ik.q(), Q_START)
            result = Solve(ik.prog(), solver_options={"max_restarts": 10})
            assert result.is_success(), result.GetInfeasibleConstraintNames(ik.prog())
            q = result.GetSolution(ik.q())
            for binding, drake in pairs:
                assert drake.CheckSatisfied(q, 1e-8), (type(drake).__name__, drake.Eval(q), binding.evaluator().Eval(q))
            if not with_minimum_distance:
                rejected_without += not minimum.CheckSatisfied(q, 1e-6)
                continue
            # our cylinders are circumscribed prisms (distances ≤ the true ones): Drake's value is at most ours
            assert minimum.CheckSatisfied(q, 1e-6), (minimum.Eval(q), ours_minimum.evaluator().Eval(q))
            assert minimum.Eval(q)[0] <= ours_minimum.evaluator().Eval(q)[0] + 1e-6
            margins.append(drake_min_distance(plants, q) - D_MIN)
    assert min(margins) >= -1e-6
    assert min(margins) < 0.005  # the minimum-distance constraint was active
    assert rejected_without == len(TARGETS)  # and needed: without it Drake's evaluator rejects every solution
