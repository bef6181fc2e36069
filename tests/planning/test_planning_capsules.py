"""The compiled capsule distances (dynamics_cy._capsules) and the capsule model (planning.capsules): φ,
witnesses and normals against Drake's SceneGraph (exact pairs: capsule–capsule, sphere–box, sphere–half
space) to 1e-9, capsule–box against the independent hull-based CalcSignedDistance to 1e-9 and a brute-force
sampling, signs and depths under penetration in closed form, ∂φ/∂q by finite differences, the fits.
Drake computes capsule–capsule and capsule–box with FCL's GJK: ours agree with it within a few µm on the
sampled poses (GJK's own error reaches ~1e-4 m on others, where ours still equals the exact distances);
the pairs with a sphere are Drake's own closed forms and agree to 1e-9."""
import numpy as np
import pytest
from dynamics_cy._capsules import KIND_BOX, KIND_CAPSULE, KIND_PLANE, CapsuleDistances, normal_row

from dynamics_cy import (
    Box,
    Capsule,
    CoulombFriction,
    Cylinder,
    Mesh,
    MultibodyPlant,
    Parser,
    RigidTransform,
    SpatialInertia,
    Sphere,
)
from dynamics_cy.planning import CalcSignedDistance
from dynamics_cy.planning.capsules import CapsuleModel, fit_capsule
from dynamics_cy.planning.mesh_capsule import capsule_surface

from .test_planning_distance import drake_shape, random_pose, surface_distance


def one_pair(kind, rA, LA, XA, other, Xo):
    """(φ, p_WCa, p_WCb, n̂) of a capsule (radius rA, length LA at XA, a 4x4) against `other`:
    ("capsule", r, L), ("box", size) at Xo, or ("plane", n̂, o)."""
    boxes, planes, b = [], [], 0
    bodies, p0, p1, radius = [0], [[0, 0, -LA / 2]], [[0, 0, LA / 2]], [rA]
    X = np.stack([XA, np.eye(4)])
    if other[0] == "capsule":
        bodies.append(1)
        p0.append([0, 0, -other[2] / 2])
        p1.append([0, 0, other[2] / 2])
        radius.append(other[1])
        X[1] = Xo
        b = 1
    elif other[0] == "box":
        boxes.append(np.concatenate([Xo[:3, :3].ravel(), Xo[:3, 3], 0.5 * np.asarray(other[1])]))
    else:
        planes.append(np.concatenate([other[1], [other[2]]]))
    cd = CapsuleDistances(bodies, p0, p1, radius, boxes, planes, [[kind, 0, b]])
    d, ca, cb, n = np.zeros(1), np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 3))
    assert cd.compute(X, d, ca, cb, n) == 0
    return d[0], ca[0], cb[0], n[0]


def matrix(X):
    return X.GetAsMatrix4()


@pytest.fixture(scope="module")
def drake_pair(pydrake):
    """Drake's SignedDistancePair (φ, p_WCa, p_WCb, n̂_BA_W) of shape A on a free body and shape B on
    another (or anchored, for a half space), in the order A, B."""
    def to_drake(shape):
        return drake_shape(pydrake, shape)

    def pair(A, XA, B, XB):
        builder = pydrake.DiagramBuilder()
        plant, scene_graph = pydrake.AddMultibodyPlantSceneGraph(builder, 0.0)
        inertia = pydrake.SpatialInertia.SolidSphereWithMass(1.0, 0.1)
        a = plant.AddRigidBody("A", inertia)
        ga = plant.RegisterCollisionGeometry(a, pydrake.RigidTransform(), to_drake(A), "A", pydrake.CoulombFriction())
        anchored = B is None
        b = plant.world_body() if anchored else plant.AddRigidBody("B", inertia)
        plant.RegisterCollisionGeometry(b, pydrake.RigidTransform(XB) if anchored else pydrake.RigidTransform(),
                                        pydrake.HalfSpace() if anchored else to_drake(B), "B",
                                        pydrake.CoulombFriction())
        plant.Finalize()
        diagram = builder.Build()
        context = diagram.CreateDefaultContext()
        plant_context = plant.GetMyMutableContextFromRoot(context)
        plant.SetFreeBodyPose(plant_context, a, pydrake.RigidTransform(XA))
        if not anchored:
            plant.SetFreeBodyPose(plant_context, b, pydrake.RigidTransform(XB))
        sg_context = scene_graph.GetMyContextFromRoot(context)
        query = scene_graph.get_query_output_port().Eval(sg_context)
        sd = query.ComputeSignedDistancePairwiseClosestPoints(10.0)[0]
        X_WA = query.GetPoseInWorld(sd.id_A)
        X_WB = query.GetPoseInWorld(sd.id_B)
        p_WCa, p_WCb, n = X_WA.multiply(sd.p_ACa), X_WB.multiply(sd.p_BCb), sd.nhat_BA_W
        if sd.id_A != ga:                                           # Drake ordered the pair (B, A)
            p_WCa, p_WCb, n = p_WCb, p_WCa, -n
        return sd.distance, p_WCa, p_WCb, n
    return pair


def poses(seed, n, spread=0.35):
    rng = np.random.default_rng(seed)
    return [(matrix(random_pose(rng, 0.05)), matrix(random_pose(rng, spread))) for _ in range(n)]


def test_sphere_capsule_matches_drake_to_1e9(drake_pair):
    """A capsule of length 0 is a sphere, against which Drake's capsule distance is exact (its own closed form)."""
    compared = 0
    for XA, XB in poses(11, 40):
        ours = one_pair(KIND_CAPSULE, 0.06, 0.0, XA, ("capsule", 0.05, 0.25), XB)
        theirs = drake_pair(Sphere(0.06), XA, Capsule(0.05, 0.25), XB)
        assert ours[0] == pytest.approx(theirs[0], abs=1e-9)
        if ours[0] > -0.05:                     # the centre off the axis: the witnesses are unique
            for a, b in zip(ours[1:], theirs[1:]):
                np.testing.assert_allclose(a, b, atol=1e-9)
            compared += 1
    assert compared >= 10


def test_capsule_capsule_matches_the_closed_form_to_1e9_and_drake_to_its_tolerance(drake_pair):
    """Capsule–capsule against planning.distance's segment closest points (independent code) to 1e-9; Drake
    computes this pair with FCL's GJK (distance tolerance 1e-6): within 5e-6 of ours."""
    for XA, XB in poses(11, 40):
        ours = one_pair(KIND_CAPSULE, 0.06, 0.3, XA, ("capsule", 0.05, 0.25), XB)
        exact = CalcSignedDistance(Capsule(0.06, 0.3), RigidTransform(XA), Capsule(0.05, 0.25), RigidTransform(XB))
        assert ours[0] == pytest.approx(exact.distance, abs=1e-9)
        if ours[0] > 1e-6:
            for a, b in zip(ours[1:], (exact.p_WCa, exact.p_WCb, exact.nhat_BA_W)):
                np.testing.assert_allclose(a, b, atol=1e-9)
        assert ours[0] == pytest.approx(drake_pair(Capsule(0.06, 0.3), XA, Capsule(0.05, 0.25), XB)[0], abs=5e-6)


def test_sphere_box_matches_drake_to_1e9_in_and_out_of_contact(drake_pair):
    """A capsule of length 0 is a sphere, against which Drake's box distance is exact (its own closed form)."""
    signs = set()
    for XA, XB in poses(12, 60, spread=0.25):
        ours = one_pair(KIND_BOX, 0.08, 0.0, XA, ("box", [0.2, 0.3, 0.4]), XB)
        theirs = drake_pair(Sphere(0.08), XA, Box(0.2, 0.3, 0.4), XB)
        assert ours[0] == pytest.approx(theirs[0], abs=1e-9)
        for a, b in zip(ours[1:], theirs[1:]):
            np.testing.assert_allclose(a, b, atol=1e-9)
        signs.add(np.sign(ours[0]))
    assert signs == {-1.0, 1.0}


def test_sphere_plane_matches_drake_to_1e9(drake_pair):
    rng = np.random.default_rng(13)
    for XA, _ in poses(13, 20):
        R = matrix(random_pose(rng, 0.0))
        n, point = R[:3, 2], rng.uniform(-0.1, 0.1, 3)
        X_WH = np.eye(4)
        X_WH[:3, :3], X_WH[:3, 3] = R[:3, :3], point
        ours = one_pair(KIND_PLANE, 0.08, 0.0, XA, ("plane", n, n @ point), None)
        theirs = drake_pair(Sphere(0.08), XA, None, X_WH)
        assert ours[0] == pytest.approx(theirs[0], abs=1e-9)
        for a, b in zip(ours[1:], theirs[1:]):
            np.testing.assert_allclose(a, b, atol=1e-9)


def test_capsule_box_matches_the_hull_distance_to_1e9_and_drake_to_its_tolerance(drake_pair):
    """Our capsule–box against the Minkowski-difference hull of planning.distance (independent: scipy's
    ConvexHull) to 1e-9, apart and overlapping; Drake computes this pair with FCL's GJK (tolerance ~1e-6)."""
    capsule, box = Capsule(0.05, 0.3), Box(0.3, 0.2, 0.1)
    inside = 0
    for XA, XB in poses(14, 300, spread=0.3):
        ours = one_pair(KIND_BOX, 0.05, 0.3, XA, ("box", [0.3, 0.2, 0.1]), XB)
        hull = CalcSignedDistance(capsule, RigidTransform(XA), box, RigidTransform(XB))
        assert ours[0] == pytest.approx(hull.distance, abs=1e-9)
        inside += ours[0] < -0.05
    assert inside >= 10                                         # the segment itself inside the box
    for XA, XB in poses(4, 12):
        ours = one_pair(KIND_BOX, 0.05, 0.3, XA, ("box", [0.3, 0.2, 0.1]), XB)
        try:
            theirs = drake_pair(capsule, XA, box, XB)
        except RuntimeError:
            continue
        assert ours[0] == pytest.approx(theirs[0], abs=2e-6)


@pytest.mark.parametrize("kind, other", [(KIND_CAPSULE, ("capsule", 0.05, 0.25)), (KIND_BOX, ("box", [0.3, 0.2, 0.1])),
                                         (KIND_PLANE, ("plane", np.array([0.0, 0.6, 0.8]), -0.1))])
def test_witnesses_on_the_surfaces_and_brute_force_sampling(kind, other):
    """p_WCa − p_WCb = φ n̂ with both witnesses on their surfaces; apart, no sampled pair of surface
    points is nearer than φ, and the nearest sampled pair is within the sampling's resolution of φ."""
    rng = np.random.default_rng(15)
    rA, LA = 0.06, 0.3
    u, w = np.meshgrid(np.linspace(0, np.pi, 40), np.linspace(0, 2 * np.pi, 80))
    sphere = np.stack([np.sin(u) * np.cos(w), np.sin(u) * np.sin(w), np.cos(u)], -1).reshape(-1, 3)
    for XA, XB in poses(16, 20):
        d, ca, cb, n = one_pair(kind, rA, LA, XA, other, XB)
        np.testing.assert_allclose(ca - cb, d * n, atol=1e-12)
        assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12)
        assert surface_distance(Capsule(rA, LA), RigidTransform(XA), ca) == pytest.approx(0.0, abs=1e-9)
        if other[0] == "capsule":
            assert surface_distance(Capsule(other[1], other[2]), RigidTransform(XB), cb) == pytest.approx(0.0, abs=1e-9)
        elif other[0] == "box":
            assert surface_distance(Box(*other[1]), RigidTransform(XB), cb) == pytest.approx(0.0, abs=1e-9)
        else:
            assert other[1] @ cb / np.linalg.norm(other[1]) == pytest.approx(other[2], abs=1e-9)
        # A's surface: points of the segment grown by rA (every sample is on or inside the surface).
        t = rng.uniform(-LA / 2, LA / 2, (sphere.shape[0], 1))
        points_A = (np.c_[np.zeros((len(t), 2)), t] + rA * sphere) @ XA[:3, :3].T + XA[:3, 3]
        if other[0] == "plane":                 # the least height of A's samples over the plane, in or out
            n_hat = other[1] / np.linalg.norm(other[1])
            heights = points_A @ n_hat - other[2] / np.linalg.norm(other[1])
            assert heights.min() >= d - 1e-12 and heights.min() <= d + 0.01
            continue
        if d <= 0.01:
            continue
        if other[0] == "capsule":
            sB = np.c_[np.zeros((len(t), 2)), rng.uniform(-other[2] / 2, other[2] / 2, (len(t), 1))] + other[1] * sphere
        else:
            half = 0.5 * np.asarray(other[1])
            sB = rng.uniform(-half, half, (4000, 3))
            face = rng.integers(0, 3, 4000)
            sB[np.arange(4000), face] = np.sign(rng.normal(size=4000)) * half[face]
        points_B = sB @ XB[:3, :3].T + XB[:3, 3]
        gaps = np.linalg.norm(points_A[:, None, :] - points_B[None, ::4, :], axis=-1).min()
        assert gaps >= d - 1e-12 and gaps <= d + 0.02


def test_penetration_depths_in_closed_form():
    """Upright capsule pushed δ into a box's top, across a plane and through another capsule."""
    X = np.eye(4)
    for delta in (0.001, 0.02, 0.07):
        X[:3, 3] = [0.01, -0.02, 0.05 + 0.15 + 0.04 - delta]              # box top at z = 0.05
        d, ca, cb, n = one_pair(KIND_BOX, 0.04, 0.3, X, ("box", [0.3, 0.2, 0.1]), np.eye(4))
        assert d == pytest.approx(-delta, abs=1e-12)
        np.testing.assert_allclose(n, [0, 0, 1], atol=1e-12)
        d = one_pair(KIND_PLANE, 0.04, 0.3, X, ("plane", np.array([0.0, 0.0, 1.0]), 0.05), None)[0]
        assert d == pytest.approx(-delta, abs=1e-12)
    # The segment fully inside a box: φ = −(least push out of the segment) − r.
    X[:3, 3] = [0.0, 0.0, 0.0]
    X[:3, :3] = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]                       # along x
    d, *_ = one_pair(KIND_BOX, 0.01, 0.1, X, ("box", [0.4, 0.2, 0.1]), np.eye(4))
    assert d == pytest.approx(-0.05 - 0.01, abs=1e-12)
    # Crossing capsules: φ = −(rA + rB) along the common normal.
    Y = np.eye(4)
    Y[:3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]
    d, ca, cb, n = one_pair(KIND_CAPSULE, 0.03, 0.2, np.eye(4), ("capsule", 0.02, 0.2), Y)
    assert d == pytest.approx(-0.05, abs=1e-12) and abs(n[2]) < 1e-12


@pytest.fixture(scope="module")
def iiwa():
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels("configs/robots/iiwa14.urdf")
    plant.Finalize()
    return plant


def test_distance_gradient_matches_finite_differences(iiwa):
    """∂φ/∂q from the witness normal (normal_row on the bodies' Jacobians) against central differences."""
    model = CapsuleModel.from_plant(iiwa, skip_within_joints=1)
    cd, k = model.distances(), iiwa.kernels()
    n = len(model.pairs)
    X = np.zeros((iiwa.num_bodies(), 4, 4))
    d, ca, cb, nh = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))

    def phi(q):
        k.body_poses(q, X)
        cd.compute(X, d, ca, cb, nh)
        return d.copy()

    rng = np.random.default_rng(17)
    J, grad = np.zeros((6, 7)), np.zeros(7)
    checked = 0
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, 7)
        phi(q)
        for pair in range(n):
            if d[pair] < 1e-3:
                continue
            a, b = model.pair_bodies(pair)
            grad.fill(0.0)
            for body, p, sign in ((a, ca[pair].copy(), 1.0), (b, cb[pair].copy(), -1.0)):
                if body < 0:
                    continue
                k.jacobian(q, iiwa.get_body(body).body_frame(), J)
                normal_row(J, X, body, p, nh[pair].copy(), sign, grad)
            h = 1e-6
            fd = np.array([(phi(q + h * e)[pair] - phi(q - h * e)[pair]) / (2 * h) for e in np.eye(7)])
            phi(q)
            np.testing.assert_allclose(grad, fd, atol=1e-6)
            checked += 1
    assert checked >= 20


@pytest.mark.parametrize("shape", [Cylinder(0.075, 0.2), Cylinder(0.11, 0.05), Box(0.146, 0.0725, 0.0495),
                                   Sphere(0.07), Capsule(0.05, 0.2)])
def test_a_fitted_capsule_contains_its_shape_and_reaches_its_margin(shape):
    """Every sampled point of the shape is inside the capsule, and the capsule's surface is at most
    `margin` from the shape (reached within sampling resolution)."""
    X = matrix(random_pose(np.random.default_rng(18), 0.2))
    p0, p1, r, margin = fit_capsule(shape, X)
    rng = np.random.default_rng(19)
    G = RigidTransform(X)
    # points of the shape: uniform samples of a cube about it that are inside it
    local = rng.uniform(-0.2, 0.2, (60000, 3))
    world = local @ X[:3, :3].T + X[:3, 3]
    inside = np.array([surface_distance(shape, G, p) <= 0 for p in world])
    seg = p1 - p0
    L2 = max(seg @ seg, 1e-300)
    t = np.clip((world - p0) @ seg / L2, 0, 1)
    to_core = np.linalg.norm(world - (p0 + t[:, None] * seg), axis=1)
    assert (to_core[inside] <= r + 1e-12).all()
    # The capsule's surface points' distances to the shape: at most the margin.
    u = rng.normal(size=(4000, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    surface = p0 + rng.uniform(0, 1, (4000, 1)) * seg + r * u
    reach = max(max(surface_distance(shape, G, p), 0.0) for p in surface)
    assert reach <= margin + 1e-9
    if isinstance(shape, (Sphere, Capsule)):
        assert margin == 0.0


def test_the_model_pairs_and_names(iiwa):
    model = CapsuleModel.from_plant(iiwa, skip_within_joints=2, allowed=[("iiwa_link_0", "iiwa_link_3")])
    names = [model.pair_name(k) for k in range(len(model.pairs))]
    assert "iiwa_link_0_collision / iiwa_link_3_collision" not in names       # allowed
    assert "iiwa_link_1_collision / iiwa_link_3_collision" not in names       # two joints apart
    assert "iiwa_link_1_collision / iiwa_link_4_collision" in names
    assert len(CapsuleModel.from_plant(iiwa, skip_within_joints=1).pairs) == 21


def box_mesh(tmp_path, size, binary):
    """A box of edges `size` as an STL (binary) or OBJ file: its 8 corners, 12 triangles."""
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * 0.5 * np.asarray(size)
    faces = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7), (2, 7, 6), (0, 2, 6),
             (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    if binary:
        record = np.zeros(12, np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attribute", "<u2")]))
        record["v"] = corners[np.array(faces)]
        path = tmp_path / "box.stl"
        path.write_bytes(b"\0" * 80 + np.uint32(12).tobytes() + record.tobytes())
    else:
        path = tmp_path / "box.obj"
        path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners)
                        + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in faces))
    return path


@pytest.mark.parametrize("binary", [True, False])
def test_a_mesh_is_fitted_around_its_vertices_with_its_margin(tmp_path, binary):
    """A box-shaped mesh (STL, OBJ, scaled): the capsule contains every vertex, the margin bounds how far
    its surface reaches beyond the box (checked exactly with surface_distance) and is within the hull
    sampling's spacing of that reach."""
    size = np.array([0.3, 0.1, 0.08])
    mesh = Mesh(str(box_mesh(tmp_path, size / 2, binary)), 2.0)
    X = matrix(random_pose(np.random.default_rng(20), 0.2))
    p0, p1, r, margin = fit_capsule(mesh, X)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * 0.5 * size
    world = corners @ X[:3, :3].T + X[:3, 3]
    seg = p1 - p0
    t = np.clip((world - p0) @ seg / (seg @ seg), 0, 1)
    assert (np.linalg.norm(world - (p0 + t[:, None] * seg), axis=1) <= r + 1e-9).all()
    assert np.linalg.norm(seg) > 0.1                          # along the box's long axis
    reach = max(surface_distance(Box(*size), RigidTransform(X), p) for p in capsule_surface(p0, p1, r, 2500))
    assert reach - 1e-9 <= margin <= reach + 0.01


def test_a_body_without_collision_geometry_is_fitted_to_its_visual_mesh(tmp_path):
    """A link drawn by a visual mesh only gets the mesh's capsule; a link with both keeps its collision
    geometry's."""
    plant = MultibodyPlant(0.0)
    inertia = SpatialInertia.SolidSphereWithMass(1.0, 0.1)
    drawn, both = plant.AddRigidBody("drawn", inertia), plant.AddRigidBody("both", inertia)
    plant.RegisterVisualGeometry(drawn, RigidTransform(), Mesh(str(box_mesh(tmp_path, [0.3, 0.1, 0.08], True))),
                                 "drawn_visual", [0.5, 0.5, 0.5, 1.0])
    plant.RegisterVisualGeometry(both, RigidTransform(), Box(0.5, 0.5, 0.5), "both_visual", [0.5, 0.5, 0.5, 1.0])
    plant.RegisterCollisionGeometry(both, RigidTransform(), Sphere(0.05), "both_collision", CoulombFriction())
    plant.Finalize()
    model = CapsuleModel.from_plant(plant)
    assert [(c.name, c.body) for c in model.capsules] == [("drawn_visual", int(drawn.index())),
                                                         ("both_collision", int(both.index()))]
    drawn_capsule = model.capsules[0]
    assert np.linalg.norm(drawn_capsule.p_BP1 - drawn_capsule.p_BP0) > 0.1      # along the mesh's long axis
    assert drawn_capsule.margin > 0.0


def test_an_unreadable_mesh_is_skipped_and_named(tmp_path):
    plant = MultibodyPlant(0.0)
    body = plant.AddRigidBody("b", SpatialInertia.SolidSphereWithMass(1.0, 0.1))
    plant.RegisterCollisionGeometry(body, RigidTransform(), Mesh(str(tmp_path / "part.dae")), "part", CoulombFriction())
    plant.Finalize()
    model = CapsuleModel.from_plant(plant)
    assert model.capsules == [] and model.skipped == ["part"]
