"""Signed distance between primitives: the witness-point identities, points on the surfaces, the gradient
formula by finite differences, agreement with Drake's SceneGraph on the exact pairs it computes, the
conservative cylinder, and half-space pairs (which Drake computes only for spheres) in closed form."""
import itertools

import numpy as np
import pytest

from dynamics_cy import Box, Capsule, Cylinder, HalfSpace, Mesh, Quaternion, RigidTransform, RotationMatrix, Sphere
from dynamics_cy.planning import CalcSignedDistance

SHAPES = {"sphere": Sphere(0.15), "box": Box(0.2, 0.3, 0.4), "capsule": Capsule(0.1, 0.3),
          "cylinder": Cylinder(0.1, 0.3)}
PAIRS = list(itertools.combinations_with_replacement(SHAPES, 2)) + [(s, "halfspace") for s in SHAPES]


def random_pose(rng, spread):
    z = rng.normal(size=4)
    return RigidTransform(RotationMatrix(Quaternion(z / np.linalg.norm(z))), rng.uniform(-spread, spread, 3))


def shape_of(name):
    return HalfSpace() if name == "halfspace" else SHAPES[name]


def surface_distance(shape, X, p):
    """The signed distance of the point p (in W) to the shape's surface, computed independently."""
    M = X.GetAsMatrix4()
    local = M[:3, :3].T @ (p - M[:3, 3])
    if isinstance(shape, Sphere):
        return np.linalg.norm(local) - shape.radius()
    if isinstance(shape, Capsule):
        h = shape.length() / 2
        return np.linalg.norm(local - [0, 0, np.clip(local[2], -h, h)]) - shape.radius()
    if isinstance(shape, Cylinder):
        radial, axial = np.linalg.norm(local[:2]) - shape.radius(), abs(local[2]) - shape.length() / 2
        return min(max(radial, axial), 0.0) + np.linalg.norm(np.maximum([radial, axial], 0.0))
    if isinstance(shape, Box):
        d = np.abs(local) - shape.size() / 2
        return min(d.max(), 0.0) + np.linalg.norm(np.maximum(d, 0.0))
    return local[2]  # half space


def samples(a, b, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        XA = random_pose(rng, 0.05)
        XB = RigidTransform(random_pose(rng, 0.0).rotation(), [0.0, 0.0, -0.25]) if b == "halfspace" else \
            random_pose(rng, 0.35)
        yield XA, XB


@pytest.mark.parametrize("a,b", PAIRS)
def test_witness_points_lie_on_the_surfaces(a, b):
    A, B = shape_of(a), shape_of(b)
    for XA, XB in samples(a, b, 40, 1):
        sd = CalcSignedDistance(A, XA, B, XB)
        np.testing.assert_allclose(sd.p_WCa - sd.p_WCb, sd.distance * sd.nhat_BA_W, atol=1e-12)
        assert np.linalg.norm(sd.nhat_BA_W) == pytest.approx(1.0)
        if "cylinder" in (a, b) and "halfspace" not in (a, b):
            continue  # witness points on the circumscribed prism
        for shape, X, p in ((A, XA, sd.p_WCa), (B, XB, sd.p_WCb)):
            assert surface_distance(shape, X, p) == pytest.approx(0.0, abs=1e-9)


def twist_pose(X, w, v):
    """X moved by the small twist (w about its origin, v): R ← exp(w) R, p ← p + v."""
    th = np.linalg.norm(w)
    K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]) / max(th, 1e-300)
    R = np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K
    return RigidTransform(RotationMatrix(R @ X.rotation().matrix()), X.translation() + v)


@pytest.mark.parametrize("a,b", PAIRS)
def test_distance_gradient_formula(a, b):
    """dφ = n̂ᵀ(dp_Ca - dp_Cb) with the witness points moving with their shapes."""
    A, B = shape_of(a), shape_of(b)
    rng = np.random.default_rng(2)
    h = 1e-6
    for XA, XB in samples(a, b, 15, 3):
        sd = CalcSignedDistance(A, XA, B, XB)
        w, v = rng.normal(size=3), rng.normal(size=3)
        predicted = sd.nhat_BA_W @ (v + np.cross(w, sd.p_WCa - XA.translation()))
        fd = (CalcSignedDistance(A, twist_pose(XA, h * w, h * v), B, XB).distance
              - CalcSignedDistance(A, twist_pose(XA, -h * w, -h * v), B, XB).distance) / (2 * h)
        assert fd == pytest.approx(predicted, rel=1e-5, abs=1e-6)


def test_unsupported_shapes():
    with pytest.raises(ValueError, match="half spaces"):
        CalcSignedDistance(HalfSpace(), RigidTransform(), HalfSpace(), RigidTransform())
    with pytest.raises(ValueError, match="unsupported shape"):
        CalcSignedDistance(Mesh("m.obj"), RigidTransform(), Sphere(1.0), RigidTransform())


def drake_shape(pydrake, shape):
    """pydrake's shape for a dynamics_cy one (a HalfSpace for anything else)."""
    if isinstance(shape, Sphere):
        return pydrake.Sphere(shape.radius())
    if isinstance(shape, Box):
        return pydrake.Box(*shape.size())
    if isinstance(shape, Capsule):
        return pydrake.Capsule(shape.radius(), shape.length())
    if isinstance(shape, Cylinder):
        return pydrake.Cylinder(shape.radius(), shape.length())
    return pydrake.HalfSpace()


@pytest.fixture(scope="module")
def drake_distance(pydrake):
    """φ from Drake's SceneGraph for shapes A (free body) and B (free body, or anchored for a half space)."""
    def to_drake(shape):
        return drake_shape(pydrake, shape)

    def X(T):
        return pydrake.RigidTransform(pydrake.RotationMatrix(T.rotation().matrix()), T.translation())

    def distance(A, XA, B, XB):
        builder = pydrake.DiagramBuilder()
        plant, scene_graph = pydrake.AddMultibodyPlantSceneGraph(builder, 0.0)
        inertia = pydrake.SpatialInertia.SolidSphereWithMass(1.0, 0.1)
        a = plant.AddRigidBody("A", inertia)
        plant.RegisterCollisionGeometry(a, pydrake.RigidTransform(), to_drake(A), "A", pydrake.CoulombFriction())
        b = plant.world_body() if isinstance(B, HalfSpace) else plant.AddRigidBody("B", inertia)
        plant.RegisterCollisionGeometry(b, X(XB) if isinstance(B, HalfSpace) else pydrake.RigidTransform(),
                                        to_drake(B), "B", pydrake.CoulombFriction())
        plant.Finalize()
        diagram = builder.Build()
        context = diagram.CreateDefaultContext()
        plant_context = plant.GetMyMutableContextFromRoot(context)
        plant.SetFreeBodyPose(plant_context, a, X(XA))
        if not isinstance(B, HalfSpace):
            plant.SetFreeBodyPose(plant_context, b, X(XB))
        query = scene_graph.get_query_output_port().Eval(scene_graph.GetMyContextFromRoot(context))
        return query.ComputeSignedDistancePairwiseClosestPoints(10.0)[0].distance
    return distance


@pytest.mark.parametrize("a,b", [p for p in PAIRS if "cylinder" not in p and p[1] != "halfspace"]
                         + [("sphere", "halfspace")])
def test_exact_pairs_match_drake(drake_distance, a, b):
    A, B = shape_of(a), shape_of(b)
    compared = 0
    for XA, XB in samples(a, b, 12, 4):
        try:
            expected = drake_distance(A, XA, B, XB)
        except RuntimeError:  # a penetrating pair Drake does not support
            continue
        assert CalcSignedDistance(A, XA, B, XB).distance == pytest.approx(expected, abs=2e-6)
        compared += 1
    assert compared >= 5


@pytest.mark.parametrize("other", ["sphere", "box", "capsule", "cylinder"])
def test_cylinder_is_conservative(drake_distance, other):
    """Against anything but a half space a cylinder counts as its circumscribed 16-sided prism: φ never
    exceeds the exact distance (Drake's) and falls short of it by at most r (sec(π/16) - 1) per cylinder."""
    slack = SHAPES["cylinder"].radius() * (1 / np.cos(np.pi / 16) - 1) * (2 if other == "cylinder" else 1)
    compared = 0
    for XA, XB in samples("cylinder", other, 12, 5):
        try:
            exact = drake_distance(SHAPES["cylinder"], XA, SHAPES[other], XB)
        except RuntimeError:
            continue
        ours = CalcSignedDistance(SHAPES["cylinder"], XA, SHAPES[other], XB).distance
        assert exact - slack - 2e-6 <= ours <= exact + 2e-6
        compared += 1
    assert compared >= 5


def lowest_point_height(shape, X, n):
    """min over the shape of n·p, from its vertices (box), sampled rims (cylinder) or sphere-swept cores."""
    M = X.GetAsMatrix4()
    R, c = M[:3, :3], M[:3, 3]
    if isinstance(shape, Box):
        corners = np.array(list(itertools.product(*[(-s / 2, s / 2) for s in shape.size()])))
        return float((c + corners @ R.T).dot(n).min())
    if isinstance(shape, Cylinder):
        t = np.linspace(0, 2 * np.pi, 20001)
        rim = shape.radius() * np.c_[np.cos(t), np.sin(t), np.zeros_like(t)]
        pts = np.vstack([rim + [0, 0, z] for z in (-shape.length() / 2, shape.length() / 2)])
        return float((c + pts @ R.T).dot(n).min())
    h = shape.length() / 2 if isinstance(shape, Capsule) else 0.0
    return float(min((c + s * h * R[:, 2]) @ n for s in (-1, 1)) - shape.radius())


@pytest.mark.parametrize("a", list(SHAPES))
def test_halfspace_pairs(a):
    """φ to a half space is the height of the shape's lowest point above the plane (also in penetration)."""
    for XA, XB in samples(a, "halfspace", 20, 6):
        n, p0 = XB.rotation().matrix()[:, 2], XB.translation()
        expected = lowest_point_height(SHAPES[a], XA, n) - n @ p0
        assert CalcSignedDistance(SHAPES[a], XA, HalfSpace(), XB).distance == pytest.approx(expected, abs=1e-7)
