"""Point contact: contact points per shape, the force law, which pairs are checked, Drake's types and
LCM message, and the geometry against pydrake's penetration queries."""
import numpy as np
import pytest

from drivers.core.schema import ConfigError, load
from drivers.sim import ContactModel, Physics, SimConfig, load_sim_config
from drivers.sim.config import ContactConfig
from drivers.sim.contact_lcm import ContactResultsPublisher
from dynamics_cy import (
    Box,
    Capsule,
    CoulombFriction,
    Cylinder,
    Mesh,
    MultibodyPlant,
    PrismaticJoint,
    RevoluteJoint,
    RigidTransform,
    RollPitchYaw,
    RotationMatrix,
    SpatialInertia,
    Sphere,
    UnitInertia,
    WeldJoint,
)
from messages import lcmt_contact_results_for_viz
from messages.validation import MessageDecoder

SHAPES = {"sphere": Sphere(0.1), "box": Box(0.3, 0.2, 0.1), "capsule": Capsule(0.05, 0.3),
          "cylinder": Cylinder(0.08, 0.25)}


def bodies_with(*shapes, mu=0.5):
    """A free body per shape named after it, each with that collision geometry at its origin."""
    plant = MultibodyPlant(0.0)
    for name in shapes:
        body = plant.AddRigidBody(name, SpatialInertia(1.0, np.zeros(3), UnitInertia.SolidSphere(0.1)))
        plant.RegisterCollisionGeometry(body, RigidTransform(), SHAPES[name], name, CoulombFriction(mu, mu))
    plant.Finalize()
    return plant


def contact_config(**extra):
    return load(ContactConfig, {"enabled": True, **extra}, "sim.contact")


class Scene:
    """A ContactModel with the bodies placed at X_WB (and moving with V_WB) by hand."""

    def __init__(self, plant, **config):
        self.plant = plant
        self.model = ContactModel(plant, contact_config(**config))
        self.c = self.model.point_contact
        nb = plant.num_bodies()
        self.X, self.V, self.F = np.tile(np.eye(4), (nb, 1, 1)), np.zeros((nb, 6)), np.zeros((nb, 6))

    def place(self, name, R=None, p=(0, 0, 0), V=None):
        b = int(self.plant.GetBodyByName(name).index())
        self.X[b, :3, :3] = np.eye(3) if R is None else R
        self.X[b, :3, 3] = p
        self.V[b] = 0 if V is None else V
        return self

    def evaluate(self):
        n = self.c.evaluate(self.X, self.V, self.F)
        return n


def rotation(rpy):
    return RotationMatrix(RollPitchYaw(*rpy)).matrix()


# --- contact points against the ground ------------------------------------------------------------
@pytest.mark.parametrize("name, R, z, expected", [
    ("sphere", None, 0.09, 1),
    ("capsule", None, 0.19, 1),                                   # upright: the lower cap
    ("capsule", rotation([np.pi / 2, 0, 0]), 0.049, 2),           # lying: both caps
    ("box", None, 0.049, 4),                                      # flat: four corners
    ("box", rotation([np.pi / 4, 0, 0]), 0.08, 2),                # on an edge
    ("box", rotation([0.3, 0.4, 0]), 0.1, 1),                     # on a corner
    ("cylinder", None, 0.124, 3),                                 # on its face: a support triangle
    ("cylinder", rotation([np.pi / 2, 0, 0]), 0.079, 2),          # on its side: one point per end
    ("cylinder", rotation([0.3, 0, 0]), 0.135, 1),                # tilted onto its rim
])
def test_ground_contact_points_per_shape(name, R, z, expected):
    scene = Scene(bodies_with(name)).place(name, R, (0, 0, z))
    assert scene.evaluate() == expected
    c = scene.c
    for i in range(expected):
        assert c.geometry_B[i] == -1 and c.body_B[i] == 0
        np.testing.assert_array_equal(c.nhat_BA_W[i], [0, 0, 1])
        assert c.depth[i] == pytest.approx(-c.p_WCa[i, 2]) and c.p_WCb[i, 2] == 0
        np.testing.assert_allclose(c.p_WC[i], 0.5 * (c.p_WCa[i] + c.p_WCb[i]))


def test_cylinder_on_its_face_is_supported_at_its_centre():
    """The three rim points at 120° carry equal loads: the resultant acts on the axis (no tipping)."""
    scene = Scene(bodies_with("cylinder")).place("cylinder", rotation([0, 0, 0.7]), (0.3, -0.2, 0.124))
    assert scene.evaluate() == 3
    c = scene.c
    np.testing.assert_allclose(c.depth[:3], 0.001, rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(c.p_WCa[:3, :2] - [0.3, -0.2], axis=1), 0.08, rtol=1e-12)
    b = int(scene.plant.GetBodyByName("cylinder").index())
    np.testing.assert_allclose(scene.F[b, :3], 0, atol=1e-12)       # no moment about the centre


def test_ground_height_and_anchored_geometry():
    """The ground is z <= height; geometry welded to the world never touches it."""
    plant = MultibodyPlant(0.0)
    base = plant.AddRigidBody("base", SpatialInertia(1.0, np.zeros(3), UnitInertia.SolidSphere(0.1)))
    plant.AddJoint(WeldJoint("weld", plant.world_frame(), base.body_frame(), RigidTransform()))
    plant.RegisterCollisionGeometry(base, RigidTransform(), Sphere(0.5), "base", CoulombFriction())
    ball = plant.AddRigidBody("ball", SpatialInertia(1.0, np.zeros(3), UnitInertia.SolidSphere(0.1)))
    plant.RegisterCollisionGeometry(ball, RigidTransform(), Sphere(0.1), "ball", CoulombFriction())
    plant.Finalize()
    scene = Scene(plant, ground={"height": 0.25}).place("ball", p=(2, 0, 0.3))
    assert [g.name for g in scene.model.geometries] == ["base", "ball"]
    assert scene.evaluate() == 1
    assert scene.c.depth[0] == pytest.approx(0.05) and scene.c.geometry_A[0] == 1


# --- the force law ------------------------------------------------------------------------------------
def test_hunt_crossley_normal_force():
    k, d = 2e4, 3.0
    scene = Scene(bodies_with("sphere"), stiffness=k, dissipation=d)
    b = int(scene.plant.GetBodyByName("sphere").index())
    for vz in (0.0, -0.2, 0.1, 1.0 / d + 0.01):
        scene.place("sphere", p=(0.2, 0.1, 0.098), V=[0, 0, 0, 0, 0, vz]).evaluate()
        fn = max(0.0, k * 0.002 * (1 - d * vz))
        assert scene.c.separation_speed[0] == vz
        np.testing.assert_allclose(scene.c.f_Bc_W[0], [0, 0, -fn], atol=1e-12)   # on the ground
        np.testing.assert_allclose(scene.F[b], [0, 0, 0, 0, 0, fn], atol=1e-12)     # on the sphere at its centre


@pytest.mark.parametrize("ratio", [0.3, 1.0, 2.0, 5.0])
def test_regularized_friction(ratio):
    """|f_t| = μ(s) fₙ against the slip: μs·x(2 − x) up to the stiction tolerance (x = s/vₛ), then
    blending to μd by 3 vₛ with step5; the resultant also carries the moment about the body origin."""
    mu_s, mu_d, vs = 0.9, 0.6, 0.01
    plant = MultibodyPlant(0.0)
    ball = plant.AddRigidBody("sphere", SpatialInertia(1.0, np.zeros(3), UnitInertia.SolidSphere(0.1)))
    # Against the default ground (μs = g_s, μd = g_d), a geometry with μ g/(2g − μ) makes the pair's
    # 2μ₁μ₂/(μ₁ + μ₂) equal to μ.
    ground = SimConfig().contact.ground.friction
    plant.RegisterCollisionGeometry(ball, RigidTransform(), Sphere(0.1), "sphere", CoulombFriction(
        mu_s * ground.static / (2 * ground.static - mu_s), mu_d * ground.dynamic / (2 * ground.dynamic - mu_d)))
    plant.Finalize()
    scene = Scene(plant, stiction_tolerance=vs, dissipation=0.0)
    s = ratio * vs
    slip = np.array([0.6, -0.8, 0.0]) * s
    scene.place("sphere", p=(0, 0, 0.099), V=[0, 0, 0, *slip]).evaluate()
    fn = SimConfig().contact.stiffness * 0.001
    if ratio >= 3:
        mu = mu_d
    elif ratio >= 1:
        x = (ratio - 1) / 2
        mu = mu_s - (mu_s - mu_d) * x ** 3 * (10 + x * (6 * x - 15))
    else:
        mu = mu_s * ratio * (2 - ratio)
    f_on_sphere = -scene.c.f_Bc_W[0]
    np.testing.assert_allclose(f_on_sphere[:2], -mu * fn * slip[:2] / s, rtol=1e-12)
    assert scene.c.slip_speed[0] == pytest.approx(s)
    b = int(plant.GetBodyByName("sphere").index())
    np.testing.assert_allclose(scene.F[b, :3], np.cross(scene.c.p_WC[0] - scene.X[b, :3, 3], f_on_sphere), atol=1e-12)


def test_friction_is_combined_with_drakes_rule():
    plant = bodies_with("sphere", mu=0.3)
    model = ContactModel(plant, contact_config(ground={"friction": {"static": 0.9, "dynamic": 0.6}}))
    assert model.ground_friction == [(pytest.approx(2 * 0.3 * 0.9 / 1.2), pytest.approx(2 * 0.3 * 0.6 / 0.9))]


# --- pairs between bodies -------------------------------------------------------------------------------
def chain():
    """a —revolute— b —prismatic— c, d welded to c, and a free e: spheres on all of them."""
    plant = MultibodyPlant(0.0)
    bodies = {n: plant.AddRigidBody(n, SpatialInertia(1.0, np.zeros(3), UnitInertia.SolidSphere(0.1)))
              for n in "abcde"}
    plant.AddJoint(RevoluteJoint("ab", bodies["a"].body_frame(), bodies["b"].body_frame(), [0, 0, 1]))
    plant.AddJoint(PrismaticJoint("bc", bodies["b"].body_frame(), bodies["c"].body_frame(), [1, 0, 0]))
    plant.AddJoint(WeldJoint("cd", bodies["c"].body_frame(), bodies["d"].body_frame(), RigidTransform()))
    for n, body in bodies.items():
        plant.RegisterCollisionGeometry(body, RigidTransform(), Sphere(0.1), n, CoulombFriction())
    plant.Finalize()
    return plant


def test_pairs_filtered_as_drake_does():
    """Parent/child bodies and bodies welded together are never in contact; the rest are checked."""
    plant = chain()
    model = ContactModel(plant, contact_config(between_bodies=True, ground={"enabled": False}))
    names = {frozenset((model.geometries[a].name, model.geometries[b].name)) for a, b in model.pairs}
    expected = {frozenset(p) for p in ("ac", "ad", "ae", "bd", "be", "ce", "de")}
    assert names == expected
    model = ContactModel(plant, contact_config(between_bodies=True, exclude=[["a", "e"], ["d"]]))
    names = {frozenset((model.geometries[a].name, model.geometries[b].name)) for a, b in model.pairs}
    assert names == {frozenset(p) for p in ("ac", "be", "ce")}         # without d, and without a–e


@pytest.mark.parametrize("a, b", [("sphere", "sphere"), ("sphere", "capsule"), ("capsule", "capsule"),
                                  ("sphere", "box"), ("sphere", "cylinder"), ("box", "sphere")])
def test_supported_pairs_put_the_swept_shape_first(a, b):
    plant = bodies_with(a, b) if a != b else _two(a)
    model = ContactModel(plant, contact_config(between_bodies=True, ground={"enabled": False}))
    (first, second), = model.pairs
    assert type(model.geometries[first].shape).__name__ in ("Sphere", "Capsule")


def _two(shape):
    plant = MultibodyPlant(0.0)
    for name in ("one", "two"):
        body = plant.AddRigidBody(name, SpatialInertia(1.0, np.zeros(3), UnitInertia.SolidSphere(0.1)))
        plant.RegisterCollisionGeometry(body, RigidTransform(), SHAPES[shape], name, CoulombFriction())
    plant.Finalize()
    return plant


@pytest.mark.parametrize("a, b", [("capsule", "cylinder"), ("capsule", "box")])
def test_unsupported_pairs_are_config_errors_naming_them(a, b):
    with pytest.raises(ConfigError, match=rf"sim.contact.between_bodies: point contact between '{a}' "
                                          rf"\(\w+\) and '{b}' .* exclude the pair with sim.contact.exclude: "
                                          rf"\[\[{a}, {b}\]\]"):
        ContactModel(bodies_with(a, b), contact_config(between_bodies=True))


def test_mesh_geometry_and_unknown_bodies_are_config_errors():
    plant = MultibodyPlant(0.0)
    body = plant.AddRigidBody("hull", SpatialInertia(1.0, np.zeros(3), UnitInertia.SolidSphere(0.1)))
    plant.RegisterCollisionGeometry(body, RigidTransform(), Mesh("hull.obj"), "hull_mesh", CoulombFriction())
    plant.Finalize()
    with pytest.raises(ConfigError, match=r"sim.contact: collision geometry 'hull_mesh' of body 'hull' is a Mesh"):
        ContactModel(plant, contact_config())
    assert ContactModel(plant, contact_config(exclude=[["hull"]])).geometries == []
    with pytest.raises(ConfigError, match=r"sim.contact.exclude\[0\]\[1\]: the model has no body named 'nope'"):
        ContactModel(plant, contact_config(exclude=[["hull", "nope"]]))


def test_sphere_against_box_and_cylinder_inside_and_outside():
    """Signed distance to the solid's surface: outside along the gap, inside to the nearest face."""
    plant = bodies_with("sphere", "box")
    scene = Scene(plant, between_bodies=True, ground={"enabled": False})
    scene.place("box").place("sphere", p=(0.0, 0.0, 0.12))                   # 0.03 deep through the top face
    assert scene.evaluate() == 1
    c = scene.c
    assert c.depth[0] == pytest.approx(0.03)
    np.testing.assert_allclose(c.nhat_BA_W[0], [0, 0, 1])
    np.testing.assert_allclose(c.p_WCb[0], [0, 0, 0.05])
    np.testing.assert_allclose(c.p_WCa[0], [0, 0, 0.02])
    scene.place("sphere", p=(0.14, 0.0, 0.0))                                 # centre inside, nearest +x face
    scene.evaluate()
    assert c.depth[0] == pytest.approx(0.1 + 0.01) and c.nhat_BA_W[0] == pytest.approx([1, 0, 0])
    plant = bodies_with("sphere", "cylinder")
    scene = Scene(plant, between_bodies=True, ground={"enabled": False})
    scene.place("cylinder").place("sphere", p=(0.1, 0.1, 0.13))               # beyond the rim: to the edge
    assert scene.evaluate() == 1
    rim = np.array([0.08 / np.sqrt(2), 0.08 / np.sqrt(2), 0.125])
    gap = np.array([0.1, 0.1, 0.13]) - rim
    np.testing.assert_allclose(scene.c.p_WCb[0], rim)
    assert scene.c.depth[0] == pytest.approx(0.1 - np.linalg.norm(gap))


def test_body_pair_forces_are_equal_and_opposite():
    plant = bodies_with("sphere", "capsule")
    scene = Scene(plant, between_bodies=True, ground={"enabled": False})
    scene.place("capsule", rotation([0.2, 0.1, 0]), (0, 0, 0), V=[0.1, 0, 0.3, 0.2, 0, 0])
    scene.place("sphere", p=(0.05, 0.02, 0.22), V=[0, 0, 0, -0.1, 0.05, -0.4])
    assert scene.evaluate() == 1
    total = scene.F.sum(axis=0)
    np.testing.assert_allclose(total[3:], 0, atol=1e-12)
    # Moments about the world origin balance too: [τ_Bo + p_Bo × f] summed over both bodies.
    moments = sum(scene.F[b, :3] + np.cross(scene.X[b, :3, 3], scene.F[b, 3:]) for b in (1, 2))
    np.testing.assert_allclose(moments, 0, atol=1e-12)


# --- against pydrake ---------------------------------------------------------------------------------------
def _drake_pairs(shapes_and_poses, halfspace=False):
    """pydrake's ComputePointPairPenetration for free bodies with the given shapes at the given poses."""
    pydrake = pytest.importorskip("pydrake.all", reason="pydrake is not installed")
    builder = pydrake.DiagramBuilder()
    plant, scene_graph = pydrake.AddMultibodyPlantSceneGraph(builder, 0.0)
    shapes = {"sphere": pydrake.Sphere(0.1), "box": pydrake.Box(0.3, 0.2, 0.1),
              "capsule": pydrake.Capsule(0.05, 0.3), "cylinder": pydrake.Cylinder(0.08, 0.25)}
    bodies = []
    for i, (shape, _) in enumerate(shapes_and_poses):
        body = plant.AddRigidBody(f"body{i}", pydrake.SpatialInertia(1.0, np.zeros(3),
                                                                       pydrake.UnitInertia.SolidSphere(0.1)))
        plant.RegisterCollisionGeometry(body, pydrake.RigidTransform(), shapes[shape], f"g{i}",
                                        pydrake.CoulombFriction(1, 1))
        bodies.append(body)
    if halfspace:
        plant.RegisterCollisionGeometry(plant.world_body(), pydrake.RigidTransform(), pydrake.HalfSpace(), "ground",
                                        pydrake.CoulombFriction(1, 1))
    plant.Finalize()
    diagram = builder.Build()
    context = diagram.CreateDefaultContext()
    plant_context = plant.GetMyMutableContextFromRoot(context)
    for body, (_, X) in zip(bodies, shapes_and_poses):
        plant.SetFreeBodyPose(plant_context, body, pydrake.RigidTransform(pydrake.RotationMatrix(X[:3, :3]), X[:3, 3]))
    query = scene_graph.get_query_output_port().Eval(scene_graph.GetMyContextFromRoot(context))
    inspector = query.inspector()
    return [(inspector.GetName(p.id_A), inspector.GetName(p.id_B), p) for p in query.ComputePointPairPenetration()]


@pytest.mark.parametrize("a, b", [("sphere", "sphere"), ("sphere", "capsule"), ("sphere", "box"),
                                  ("sphere", "cylinder")])
def test_body_pairs_match_pydrake(a, b):
    rng = np.random.default_rng(11)
    plant = bodies_with(a, b) if a != b else _two(a)
    names = [plant.get_body(1).name(), plant.get_body(2).name()]
    checked = 0
    while checked < 20:
        X = [np.eye(4), np.eye(4)]
        for k in range(2):
            X[k][:3, :3] = rotation(rng.uniform(-np.pi, np.pi, 3))
        X[1][:3, 3] = rng.uniform(-0.22, 0.22, 3)
        scene = Scene(plant, between_bodies=True, ground={"enabled": False})
        for k in range(2):
            scene.place(names[k], X[k][:3, :3], X[k][:3, 3])
        ours = scene.evaluate()
        theirs = _drake_pairs([(a, X[0]), (b, X[1])])
        assert ours == len(theirs)
        if not ours:
            continue
        (name_a, _, pair), = theirs
        c = scene.c
        flip = scene.model.geometries[c.geometry_A[0]].name != names[int(name_a[1:])]
        sign = -1.0 if flip else 1.0
        pa, pb = (c.p_WCb[0], c.p_WCa[0]) if flip else (c.p_WCa[0], c.p_WCb[0])
        assert c.depth[0] == pytest.approx(pair.depth, abs=1e-9)
        np.testing.assert_allclose(sign * c.nhat_BA_W[0], pair.nhat_BA_W, atol=1e-7)
        np.testing.assert_allclose(pa, pair.p_WCa, atol=1e-9)
        np.testing.assert_allclose(pb, pair.p_WCb, atol=1e-9)
        checked += 1


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_deepest_ground_point_matches_pydrake(shape):
    """Drake reports one point per geometry pair (the deepest); ours include it among up to 8."""
    rng = np.random.default_rng(5)
    plant = bodies_with(shape)
    for _ in range(20):
        X = np.eye(4)
        X[:3, :3] = rotation(rng.uniform(-np.pi, np.pi, 3))
        X[2, 3] = rng.uniform(0.0, 0.12)
        scene = Scene(plant).place(shape, X[:3, :3], X[:3, 3])
        n = scene.evaluate()
        theirs = [p for a, b, p in _drake_pairs([(shape, X)], halfspace=True)]
        assert bool(n) == bool(theirs)
        if n:
            deepest = int(np.argmax(scene.c.depth[:n]))
            assert scene.c.depth[deepest] == pytest.approx(theirs[0].depth, abs=1e-9)
            witness = theirs[0].p_WCa if theirs[0].nhat_BA_W[2] > 0 else theirs[0].p_WCb
            if shape in ("sphere", "capsule") or (shape == "cylinder" and abs(X[2, 2]) < 0.999):
                np.testing.assert_allclose(scene.c.p_WCa[deepest], witness, atol=1e-9)


def _segment_distance(p0, p1, q0, q1):
    """Distance between two segments: a ternary search along the first of the (convex) distance from
    its points to the second, which is a clamped projection."""
    def to_q(s):
        x, d = p0 + s * (p1 - p0), q1 - q0
        return np.linalg.norm(x - q0 - np.clip((x - q0) @ d / (d @ d), 0, 1) * d)

    lo, hi = 0.0, 1.0
    for _ in range(100):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (lo, m2) if to_q(m1) <= to_q(m2) else (m1, hi)
    return to_q(0.5 * (lo + hi))


def test_capsule_pairs_give_the_minimum_translation_distance():
    """Capsules are segments swept by a radius, so the depth is rA + rB − dist(segments): moving B by the
    depth against n̂ makes them touch, and no direction separates them with a shorter move. (pydrake
    1.51's ComputePointPairPenetration reports larger depths for about a third of these poses.)"""
    rng = np.random.default_rng(11)
    plant = _two("capsule")
    checked = 0
    while checked < 10:
        R = [rotation(rng.uniform(-np.pi, np.pi, 3)) for _ in range(2)]
        p = rng.uniform(-0.15, 0.15, 3)
        scene = Scene(plant, between_bodies=True, ground={"enabled": False})
        scene.place("one", R[0], (0, 0, 0)).place("two", R[1], p)
        if not scene.evaluate():
            continue
        c = scene.c
        a_is_one = scene.model.geometries[c.geometry_A[0]].name == "one"
        n = c.nhat_BA_W[0] if a_is_one else -c.nhat_BA_W[0]             # from "two" into "one"
        ends = [(0.15 * Rk[:, 2], -0.15 * Rk[:, 2]) for Rk in R]

        def gap(shift):            # segment distance minus the radii with "two" moved by `shift`
            return _segment_distance(*ends[0], ends[1][0] + p + shift, ends[1][1] + p + shift) - 0.1

        assert gap(-c.depth[0] * n) == pytest.approx(0.0, abs=1e-7)
        for u in rng.normal(size=(20, 3)):
            u /= np.linalg.norm(u)
            assert gap(-0.999 * c.depth[0] * u) < 1e-9          # a shorter move in any direction still overlaps
        checked += 1


# --- results in Drake's types and on LCM --------------------------------------------------------------------
def test_contact_lcm_message_as_drake_publishes_it(make_box):
    """A 2 kg box at rest on the ground: the same body names, normal and force on the ground as pydrake's
    ContactResultsToLcmSystem for the same scene (Drake reports one point, we report four corners)."""
    pydrake = pytest.importorskip("pydrake.all", reason="pydrake is not installed")
    plant = MultibodyPlant(0.0)
    instance = plant.AddModelInstance("mybox")
    box = plant.AddRigidBody("box", instance, SpatialInertia(2.0, np.zeros(3), UnitInertia.SolidBox(0.2, 0.1, 0.05)))
    plant.RegisterCollisionGeometry(box, RigidTransform(), Box(0.2, 0.1, 0.05), "box", CoulombFriction(0.5, 0.5))
    plant.Finalize()
    p = Physics(plant, load_sim_config({"initial_positions": [1, 0, 0, 0, 0, 0, 0.025], "contact": {"enabled": True}}))
    for _ in range(1000):
        p.step(None)
    ours = ContactResultsPublisher(p.contact, "CONTACT_RESULTS").message(p.time_ns // 1000)
    decoded = MessageDecoder(lcmt_contact_results_for_viz, "CONTACT_RESULTS").decode_or_raise(ours.encode())
    assert decoded.num_point_pair_contacts == 4 and decoded.timestamp == 1_000_000

    lcm = pydrake.DrakeLcm("memq://")
    received = []
    lcm.Subscribe("CONTACT_RESULTS", received.append)
    builder = pydrake.DiagramBuilder()
    dplant, scene_graph = pydrake.AddMultibodyPlantSceneGraph(builder, 0.0)
    dbox = dplant.AddRigidBody("box", dplant.AddModelInstance("mybox"),
                               pydrake.SpatialInertia(2.0, np.zeros(3), pydrake.UnitInertia.SolidBox(0.2, 0.1, 0.05)))
    dplant.RegisterCollisionGeometry(dbox, pydrake.RigidTransform(), pydrake.Box(0.2, 0.1, 0.05), "box",
                                     pydrake.CoulombFriction(0.5, 0.5))
    dplant.RegisterCollisionGeometry(dplant.world_body(), pydrake.RigidTransform(), pydrake.HalfSpace(), "ground",
                                     pydrake.CoulombFriction(0.5, 0.5))
    dplant.Finalize()
    pydrake.ConnectContactResultsToDrakeVisualizer(builder, dplant, scene_graph, lcm)
    diagram = builder.Build()
    context = diagram.CreateDefaultContext()
    dplant.SetFreeBodyPose(dplant.GetMyMutableContextFromRoot(context), dbox, pydrake.RigidTransform([0, 0, 0.0249]))
    pydrake.Simulator(diagram, context).AdvanceTo(1.0)
    diagram.ForcedPublish(context)
    lcm.HandleSubscriptions(0)
    drake = lcmt_contact_results_for_viz.decode(received[-1])
    (info,) = drake.point_pair_contact_info
    for ours_info in decoded.point_pair_contact_info:
        assert (ours_info.body1_name, ours_info.body2_name) == (info.body1_name, info.body2_name) == ("box(2)",
                                                                                                      "world(0)")
        assert ours_info.normal == pytest.approx(info.normal)
    total = np.sum([i.contact_force for i in decoded.point_pair_contact_info], axis=0)
    np.testing.assert_allclose(total, [0, 0, -2.0 * 9.81], rtol=1e-3, atol=1e-9)
    # Drake's default (error-controlled, accuracy 1e-2) integration leaves the box jittering around m·g.
    np.testing.assert_allclose(info.contact_force, total, rtol=0.03, atol=1e-9)


def test_contact_results_are_drakes_types(make_box):
    plant = make_box()
    p = Physics(plant, load_sim_config({"initial_positions": [1, 0, 0, 0, 0, 0, 0.0249], "contact": {"enabled": True}}))
    p.step(None)
    results = p.contact_results()
    assert results.num_point_pair_contacts() == 4 and results.num_hydroelastic_contacts() == 0
    info = results.point_pair_contact_info(0)
    c = p.contact.point_contact
    np.testing.assert_array_equal(info.contact_force(), c.f_Bc_W[0])
    np.testing.assert_array_equal(info.point_pair().p_WCa, c.p_WCa[0])
    assert info.point_pair().depth == c.depth[0] == pytest.approx(1e-4)
    with pytest.raises(IndexError):
        results.point_pair_contact_info(4)
    assert Physics(plant).contact_results().num_point_pair_contacts() == 0


def test_iiwa_links_touch_the_ground_and_feel_it_in_the_joints(iiwa):
    """Ground under the wrist: contacts on the distal links only (link 0 is welded to the world), and
    τ_contact = Σ J_Bᵀ F of the recorded contact forces (inverse dynamics with and without them)."""
    q0 = np.array([0, 1.2, 0, -1.6, 0, 1.4, 0])
    for integrator in ("semi_implicit_euler", "rk4"):
        p = Physics(iiwa, load_sim_config({"integrator": integrator, "initial_positions": q0.tolist(),
                                           "contact": {"enabled": True, "ground": {"height": 0.1}}}))
        p.step(np.zeros(7))
        c = p.contact.point_contact
        touching = {iiwa.get_body(int(b)).name() for b in c.body_A[:c.num_contacts]}
        assert touching == {"iiwa_link_6", "iiwa_link_7"}
        assert len(p.contact.geometries) == 8 and len(p.contact.ground) == 7
        k = iiwa.kernels()
        X, F = np.zeros((iiwa.num_bodies(), 4, 4)), np.zeros((iiwa.num_bodies(), 6))
        k.body_poses(q0, X)
        for i in range(c.num_contacts):
            b, f = c.body_A[i], -c.f_Bc_W[i]
            F[b, :3] += np.cross(c.p_WC[i] - X[b, :3, 3], f)
            F[b, 3:] += f
        with_f, without = np.zeros(7), np.zeros(7)
        k.inverse_dynamics(q0, np.zeros(7), np.zeros(7), with_f, F)
        k.inverse_dynamics(q0, np.zeros(7), np.zeros(7), without)
        np.testing.assert_allclose(p.tau_contact, without - with_f, rtol=1e-10, atol=1e-9)
        assert np.abs(p.tau_contact).max() > 1.0
