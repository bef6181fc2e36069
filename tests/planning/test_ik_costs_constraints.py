"""InverseKinematics' position, orientation and angle costs, polyhedron, point-to-line and minimum-distance
bound constraints: each evaluator's gradient against central differences, its value and gradient against
pydrake's own InverseKinematics on the same model (Drake's plant parsed from the same file; Drake's
AutoDiff gradient) at the same q, and solves whose results satisfy Drake's evaluators.

Models: the iiwa of configs/robots, and two free bodies (spheres, like Drake's two_bodies.sdf) beside a
box and a capsule welded to the world, where both libraries' signed distances are exact (sphere pairs)."""
import numpy as np
import pytest

from dynamics_cy import RigidTransform, RollPitchYaw, RotationMatrix
from dynamics_cy.planning import (
    ExponentiallySmoothedHingeLoss,
    InverseKinematics,
    MinimumDistanceLowerBoundConstraint,
    MinimumDistanceUpperBoundConstraint,
    Solve,
)

TWO_BODIES = """<?xml version="1.0"?>
<sdf version="1.7">
  <model name="two_bodies">
    <link name="body1">
      <inertial><mass>1</mass><inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz>
        <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
      <collision name="body1_sphere"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
    </link>
    <link name="body2">
      <inertial><mass>1</mass><inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz>
        <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>
      <collision name="body2_sphere"><pose>0.05 0 0 0 0 0</pose>
        <geometry><sphere><radius>0.2</radius></sphere></geometry></collision>
    </link>
    <link name="obstacle">
      <collision name="obstacle_box"><pose>0 0 -0.6 0.1 0.2 0.3</pose>
        <geometry><box><size>0.8 0.6 0.1</size></box></geometry></collision>
      <collision name="obstacle_capsule"><pose>0.7 0 0 0.3 0 0</pose>
        <geometry><capsule><radius>0.05</radius><length>0.4</length></capsule></geometry></collision>
    </link>
    <joint name="obstacle_weld" type="fixed"><parent>world</parent><child>obstacle</child></joint>
  </model>
</sdf>
"""
C = np.array([[2.0, 0.3, 0.0], [-0.1, 1.0, 0.2], [0.4, 0.0, 3.0]])  # not symmetric: the gradient uses C + Cᵀ
P_GP = np.array([[0.0, 0.05], [0.0, -0.02], [0.0, 0.1]])  # two points (columns)
A_POLY = np.random.default_rng(5).normal(size=(4, 6))
B_POLY = np.array([0.3, -0.1, 0.5, 0.2])


def iiwa_specs(lib):
    """(IK method, arguments) on the iiwa; frame names and ("R", rpy) rotations are resolved per library."""
    return [
        ("AddPositionCost", ("iiwa_link_3", [0.1, 0.2, 0.3], "iiwa_link_ee", [0.05, -0.02, 0.1], C)),
        ("AddOrientationCost", ("iiwa_link_2", ("R", [0.3, -0.2, 0.5]), "iiwa_link_ee", ("R", [-0.1, 0.4, 1.2]),
                                2.5)),
        ("AddAngleBetweenVectorsCost", ("world", [0.2, 0.3, 1.0], "iiwa_link_ee", [1.0, 0.0, 0.3], 1.7)),
        ("AddPolyhedronConstraint", ("iiwa_link_1", "iiwa_link_7", P_GP, A_POLY, B_POLY)),
        ("AddPointToLineDistanceConstraint", ("iiwa_link_ee", [0.1, 0.0, 0.0], "iiwa_link_2", [0.1, 0.2, 0.3],
                                              [0.3, -0.2, 1.0], 0.1, 0.4)),
        ("AddPositionConstraint", ("iiwa_link_ee", [0.05, 0.0, 0.1], "iiwa_link_2",
                                   [-0.3, -0.2, 0.1], [0.2, 0.4, 0.5])),
        ("AddPositionConstraint", ("iiwa_link_ee", [0.05, 0.0, 0.1], "iiwa_link_2",
                                   ("X", [0.3, -0.4, 1.1], [0.1, -0.2, 0.3]), [-0.3, -0.2, 0.1], [0.2, 0.4, 0.5])),
    ]


def resolve(lib, plant, args):
    out = []
    for a in args:
        if isinstance(a, str):
            a = plant.GetFrameByName(a)
        elif isinstance(a, tuple) and a[0] == "X":
            a = RigidTransform(RollPitchYaw(a[1]), a[2]) if lib == "ours" else \
                lib.RigidTransform(lib.RollPitchYaw(np.asarray(a[1])), np.asarray(a[2]))
        elif isinstance(a, tuple) and a[0] == "R":
            a = RotationMatrix(RollPitchYaw(a[1])) if lib == "ours" else \
                lib.RotationMatrix(lib.RollPitchYaw(np.asarray(a[1])))
        out.append(a)
    return out


def drake_value_and_gradient(pydrake, evaluator, q):
    y = evaluator.Eval(pydrake.InitializeAutoDiff(np.asarray(q, float)))
    return np.array([v.value() for v in y.reshape(-1)]), pydrake.ExtractGradient(y)


def assert_same_as_drake(pydrake, ours, theirs, q, what):
    """Our evaluator's value and gradient against Drake's (Eval on floats, and AutoDiff)."""
    y, dy = ours.EvalWithGradient(q)
    np.testing.assert_allclose(y, theirs.Eval(q), rtol=1e-9, atol=1e-10, err_msg=what)
    y_d, dy_d = drake_value_and_gradient(pydrake, theirs, q)
    np.testing.assert_allclose(y, y_d, rtol=1e-9, atol=1e-10, err_msg=what)
    np.testing.assert_allclose(dy, dy_d, rtol=1e-8, atol=1e-9, err_msg=what)
    if hasattr(theirs, "lower_bound"):
        np.testing.assert_array_equal(ours.lower_bound(), theirs.lower_bound(), err_msg=what)
        np.testing.assert_array_equal(ours.upper_bound(), theirs.upper_bound(), err_msg=what)


@pytest.fixture(scope="module")
def two_bodies(plants_from_urdf):
    """Our plant and Drake's (with a SceneGraph) of TWO_BODIES, and Drake's plant context in its diagram."""
    ours, theirs, scene_graph, diagram = plants_from_urdf(TWO_BODIES, "sdf")
    root = diagram.CreateDefaultContext()
    return {"ours": ours, "theirs": theirs, "context": theirs.GetMyMutableContextFromRoot(root),
            "keep_alive": (diagram, scene_graph, root)}


def two_bodies_q(rng, p1=(0.0, 0.0, -0.25), p2=(0.35, 0.05, -0.2), spread=0.05):
    """Unit quaternions and the two bodies near p1 and p2 (close to each other and to the obstacles)."""
    q = []
    for p in (p1, p2):
        z = rng.normal(size=4)
        q += list(z / np.linalg.norm(z)) + list(np.asarray(p) + spread * rng.normal(size=3))
    return np.array(q)


def drake_distances(two_bodies, q):
    """SceneGraph's signed distances of every candidate pair at q."""
    theirs, ctx = two_bodies["theirs"], two_bodies["context"]
    theirs.SetPositions(ctx, q)
    query = theirs.get_geometry_query_input_port().Eval(ctx)
    return np.array([p.distance for p in query.ComputeSignedDistancePairwiseClosestPoints(10.0)])


@pytest.mark.parametrize("index", range(len(iiwa_specs(None))))
def test_kinematic_costs_and_constraints_match_drake_on_the_iiwa(pydrake, iiwa, drake_iiwa, check_gradient, index):
    from pydrake.multibody import inverse_kinematics as dik
    name, args = iiwa_specs(None)[index]
    ours_ik, theirs_ik = InverseKinematics(iiwa), dik.InverseKinematics(drake_iiwa)  # the IKs own the contexts
    ours = getattr(ours_ik, name)(*resolve("ours", iiwa, args)).evaluator()
    theirs = getattr(theirs_ik, name)(*resolve(pydrake, drake_iiwa, args)).evaluator()
    assert type(ours).__name__ == type(theirs).__name__
    rng = np.random.default_rng(40 + index)
    for _ in range(4):
        q = rng.uniform(-2, 2, 7)
        assert_same_as_drake(pydrake, ours, theirs, q, name)
        check_gradient(ours, q)


def test_kinematic_costs_and_constraints_match_drake_on_free_bodies(pydrake, two_bodies, check_gradient):
    """Between two quaternion-floating bodies (gradients in q̇ = N⁺ v terms, as Drake's kQDot)."""
    from pydrake.multibody import inverse_kinematics as dik
    ours_plant, theirs_plant = two_bodies["ours"], two_bodies["theirs"]
    frames = {"iiwa_link_ee": "body1", "iiwa_link_7": "body1", "iiwa_link_1": "body2", "iiwa_link_2": "body2",
              "iiwa_link_3": "body2"}
    specs = [(name, tuple(frames.get(a, a) if isinstance(a, str) else a for a in args))
             for name, args in iiwa_specs(None)]
    ours_ik, theirs_ik = InverseKinematics(ours_plant), dik.InverseKinematics(theirs_plant)
    rng = np.random.default_rng(48)
    for name, args in specs:
        ours = getattr(ours_ik, name)(*resolve("ours", ours_plant, args)).evaluator()
        theirs = getattr(theirs_ik, name)(*resolve(pydrake, theirs_plant, args)).evaluator()
        for _ in range(3):
            q = two_bodies_q(rng)
            assert_same_as_drake(pydrake, ours, theirs, q, name)
            check_gradient(ours, q)


@pytest.mark.parametrize("penalty", [None, ExponentiallySmoothedHingeLoss])
def test_minimum_distance_bounds_match_drake(pydrake, two_bodies, check_gradient, penalty):
    """Both bounds, with the default penalty and with ours passed to Drake as a Python penalty function
    (penalty_function(x, compute_grad), pydrake's signature), at configurations where 1 to 5 of the 5
    candidate pairs are within the influence distance; SceneGraph's and our distances are exact here."""
    from pydrake.multibody import inverse_kinematics as dik
    ours_plant, theirs_plant, ctx = two_bodies["ours"], two_bodies["theirs"], two_bodies["context"]
    ours_ctx = ours_plant.CreateDefaultContext()
    pairs = [
        (MinimumDistanceLowerBoundConstraint(ours_plant, 0.05, ours_ctx, penalty, 0.3),
         dik.MinimumDistanceLowerBoundConstraint(theirs_plant, 0.05, ctx, penalty, 0.3)),
        (MinimumDistanceUpperBoundConstraint(ours_plant, 0.02, ours_ctx, 0.5, penalty),
         dik.MinimumDistanceUpperBoundConstraint(theirs_plant, 0.02, ctx, 0.5, penalty)),
    ]
    rng = np.random.default_rng(49)
    within = set()
    for _ in range(8):
        q = two_bodies_q(rng, spread=0.12)
        within.add(int(np.sum(drake_distances(two_bodies, q) < 0.35)))
        for ours, theirs in pairs:
            assert (ours.distance_bound(), ours.influence_distance()) == \
                (theirs.distance_bound(), pytest.approx(theirs.influence_distance(), abs=1e-15))
            assert_same_as_drake(pydrake, ours, theirs, q, type(ours).__name__)
            check_gradient(ours, q)
    assert min(within) >= 1 and max(within) >= 3


def test_minimum_distance_from_the_ik_matches_drakes_ik(pydrake, two_bodies):
    """AddMinimumDistanceLowerBoundConstraint's default offset (0.01) and AddMinimumDistanceUpperBoundConstraint
    on the IK's context: the same values as pydrake's InverseKinematics on a diagram context."""
    from pydrake.multibody import inverse_kinematics as dik
    ours_ik = InverseKinematics(two_bodies["ours"])
    theirs_ik = dik.InverseKinematics(two_bodies["theirs"], two_bodies["context"])
    ours = [ours_ik.AddMinimumDistanceLowerBoundConstraint(0.1),
            ours_ik.AddMinimumDistanceUpperBoundConstraint(0.1, 0.4)]
    theirs = [theirs_ik.AddMinimumDistanceLowerBoundConstraint(0.1),
              theirs_ik.AddMinimumDistanceUpperBoundConstraint(0.1, 0.4)]
    rng = np.random.default_rng(50)
    for _ in range(5):
        q = two_bodies_q(rng, spread=0.1)
        for o, t in zip(ours, theirs):
            assert_same_as_drake(pydrake, o.evaluator(), t.evaluator(), q, type(o.evaluator()).__name__)


def test_constructor_errors(iiwa, two_bodies):
    ik, W, E = InverseKinematics(iiwa), iiwa.world_frame(), iiwa.GetFrameByName("iiwa_link_ee")
    with pytest.raises(ValueError, match="C must be 3 x 3"):
        ik.AddPositionCost(W, [0, 0, 0], E, [0, 0, 0], np.eye(2))
    with pytest.raises(ValueError, match="a_A is close to zero"):
        ik.AddAngleBetweenVectorsCost(W, [0, 0, 0], E, [1, 0, 0], 1.0)
    with pytest.raises(ValueError, match="A has 5 columns"):
        ik.AddPolyhedronConstraint(W, E, P_GP, np.ones((2, 5)), [1, 1])
    with pytest.raises(ValueError, match="n_B2 is close to zero"):
        ik.AddPointToLineDistanceConstraint(E, [0, 0, 0], W, [0, 0, 0], [0, 0, 0], 0.0, 1.0)
    with pytest.raises(ValueError, match="distance_lower <= distance_upper"):
        ik.AddPointToLineDistanceConstraint(E, [0, 0, 0], W, [0, 0, 0], [0, 0, 1], 0.5, 0.1)
    for offset in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="influence_distance_offset must be finite and > 0"):
            ik.AddMinimumDistanceLowerBoundConstraint(0.01, offset)
        with pytest.raises(ValueError, match="influence_distance_offset must be finite and > 0"):
            ik.AddMinimumDistanceUpperBoundConstraint(0.01, offset)
    with pytest.raises(RuntimeError, match="does not belong to the plant"):
        ik.AddOrientationCost(W, RotationMatrix(), two_bodies["ours"].GetFrameByName("body1"), RotationMatrix(), 1.0)


def test_minimum_distance_without_candidate_pairs_is_always_satisfied(iiwa):
    """No collision candidates: the lower bound's value is 0 and the upper bound's 2 (Drake's constants)."""
    from dynamics_cy import MultibodyPlant, SpatialInertia
    plant = MultibodyPlant(0.0)
    plant.AddRigidBody("lonely", SpatialInertia.SolidSphereWithMass(1.0, 0.1))
    plant.Finalize()
    ik = InverseKinematics(plant)
    lower = ik.AddMinimumDistanceLowerBoundConstraint(0.1).evaluator()
    upper = ik.AddMinimumDistanceUpperBoundConstraint(0.1, 0.2).evaluator()
    q = np.r_[1.0, 0, 0, 0, 0, 0, 0]
    assert lower.Eval(q)[0] == 0.0 and upper.Eval(q)[0] == 2.0
    assert lower.CheckSatisfied(q) and upper.CheckSatisfied(q)


# --- solves ------------------------------------------------------------------------------------------------

Q_START = np.array([0.0, 0.3, 0.0, -1.6, 0.0, 0.6, 0.0])


def solve(ik, q0, **options):
    ik.prog().SetInitialGuess(ik.q(), q0)
    result = Solve(ik.prog(), solver_options=options)
    assert result.is_success(), result.GetInfeasibleConstraintNames(ik.prog())
    return result.GetSolution(ik.q())


def test_costs_reach_their_minimum_on_the_iiwa(pydrake, iiwa, drake_iiwa):
    """A reachable point, orientation and axis direction: each cost goes to 0 (Drake's evaluator agrees)."""
    from pydrake.multibody import inverse_kinematics as dik
    W, E = iiwa.world_frame(), iiwa.GetFrameByName("iiwa_link_ee")
    dW, dE = drake_iiwa.world_frame(), drake_iiwa.GetFrameByName("iiwa_link_ee")
    q_goal = np.array([0.4, 0.7, -0.3, -1.1, 0.5, 0.9, -0.2])
    X = np.empty((4, 4))
    iiwa.kernels().frame_pose(q_goal, E, X)
    R_goal = RotationMatrix(X[:3, :3])
    ik, theirs = InverseKinematics(iiwa), dik.InverseKinematics(drake_iiwa)
    ik.AddPositionCost(W, X[:3, 3], E, [0, 0, 0], np.diag([1.0, 2.0, 3.0]))
    ik.AddOrientationCost(W, R_goal, E, RotationMatrix(), 0.5)
    ik.AddAngleBetweenVectorsCost(W, X[:3, 2], E, [0, 0, 1], 0.3)
    costs = [theirs.AddPositionCost(dW, X[:3, 3], dE, [0, 0, 0], np.diag([1.0, 2.0, 3.0])),
             theirs.AddOrientationCost(dW, pydrake.RotationMatrix(X[:3, :3]), dE, pydrake.RotationMatrix(), 0.5),
             theirs.AddAngleBetweenVectorsCost(dW, X[:3, 2], dE, [0, 0, 1], 0.3)]
    q = solve(ik, Q_START)
    iiwa.kernels().frame_pose(q, E, X_q := np.empty((4, 4)))
    assert np.linalg.norm(X_q[:3, 3] - X[:3, 3]) < 1e-5
    assert np.arccos(np.clip((np.trace(X_q[:3, :3].T @ X[:3, :3]) - 1) / 2, -1, 1)) < 1e-4
    for cost in costs:
        assert cost.evaluator().Eval(q)[0] < 1e-9


def test_polyhedron_and_point_to_line_solutions_satisfy_drakes_evaluators(pydrake, iiwa, drake_iiwa):
    """Two points of the hand inside a box 0.1 m wide (A = [I; -I] per point) far from the start, and the
    hand's origin 2-4 cm from a tilted line: Drake's constraints reject the start and accept the solution."""
    from pydrake.multibody import inverse_kinematics as dik
    center = np.array([0.5, -0.2, 0.5])
    A = np.kron(np.eye(2), np.vstack([np.eye(3), -np.eye(3)]))
    b = np.tile(np.r_[center + 0.05, 0.05 - center], 2)
    specs = [("AddPolyhedronConstraint", ("world", "iiwa_link_7", P_GP, A, b)),
             ("AddPointToLineDistanceConstraint", ("iiwa_link_ee", [0, 0, 0], "world", [0.5, -0.2, 0.0],
                                                   [0.1, 0.2, 1.0], 0.02, 0.04))]
    ik, theirs = InverseKinematics(iiwa), dik.InverseKinematics(drake_iiwa)
    drake = [getattr(theirs, name)(*resolve(pydrake, drake_iiwa, args)).evaluator() for name, args in specs]
    for name, args in specs:
        getattr(ik, name)(*resolve("ours", iiwa, args))
    assert not all(d.CheckSatisfied(Q_START, 1e-6) for d in drake)
    q = solve(ik, Q_START, max_restarts=10)
    for d in drake:
        assert d.CheckSatisfied(q, 1e-8), (type(d).__name__, d.Eval(q), d.upper_bound())


def test_minimum_distance_lower_bound_pushes_the_bodies_apart(pydrake, two_bodies):
    """body2 held at a pose, body1's centre asked into a box that overlaps body2's sphere, starting inside
    it: with AddMinimumDistanceLowerBoundConstraint(3 cm) every SceneGraph distance ends ≥ 3 cm (the bound
    active: the box forces body1 within reach) and Drake's evaluator accepts the solution."""
    from pydrake.multibody import inverse_kinematics as dik
    ours, theirs = two_bodies["ours"], two_bodies["theirs"]
    ik = InverseKinematics(ours)
    W, B1, B2 = ours.world_frame(), ours.GetFrameByName("body1"), ours.GetFrameByName("body2")
    p2 = np.array([0.3, 0.0, 0.0])
    ik.AddPositionConstraint(B2, [0, 0, 0], W, p2, p2)
    ik.AddOrientationConstraint(W, RotationMatrix(), B2, RotationMatrix(), 0.0)
    ik.AddPositionConstraint(B1, [0, 0, 0], W, [-0.1, -0.1, -0.1], [0.05, 0.1, 0.1])
    ik.AddMinimumDistanceLowerBoundConstraint(0.03, 0.05)
    q = solve(ik, np.r_[1.0, 0, 0, 0, 0.02, 0.0, 0.0, 1.0, 0, 0, 0, p2], max_restarts=5)
    d = drake_distances(two_bodies, q)
    assert d.min() >= 0.03 - 1e-6
    assert d.min() < 0.03 + 0.02  # body1 cannot get farther than 4 cm from body2's sphere in its box
    drake = dik.MinimumDistanceLowerBoundConstraint(theirs, 0.03, two_bodies["context"], None, 0.05)
    assert drake.CheckSatisfied(q, 1e-6)


def test_minimum_distance_upper_bound_brings_the_bodies_together(pydrake, two_bodies):
    """The two bodies start 0.3 m apart (and from the obstacles); an upper bound of 2 cm on the smallest
    distance (influence offset 0.5 m, so the pair pulls from there) with a lower bound of 5 mm: SceneGraph's
    smallest distance ends in [5 mm, 2 cm] and Drake's evaluators accept the solution."""
    from pydrake.multibody import inverse_kinematics as dik
    ours, theirs, ctx = two_bodies["ours"], two_bodies["theirs"], two_bodies["context"]
    ik = InverseKinematics(ours)
    ik.AddMinimumDistanceUpperBoundConstraint(0.02, 0.5)
    ik.AddMinimumDistanceLowerBoundConstraint(0.005, 0.01)
    q0 = np.r_[1.0, 0, 0, 0, -0.3, 0.0, 0.6, 1.0, 0, 0, 0, 0.2, 0.0, 0.7]
    assert drake_distances(two_bodies, q0).min() > 0.25
    q = solve(ik, q0)
    d = drake_distances(two_bodies, q)
    assert 0.005 - 1e-6 <= d.min() <= 0.02 + 1e-6
    assert dik.MinimumDistanceUpperBoundConstraint(theirs, 0.02, ctx, 0.5).CheckSatisfied(q, 1e-6)
    assert dik.MinimumDistanceLowerBoundConstraint(theirs, 0.005, ctx, None, 0.01).CheckSatisfied(q, 1e-6)
