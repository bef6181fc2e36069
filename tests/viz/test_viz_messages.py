"""The viewer messages without Drake: content from the model, naming, quaternions, the in-place
draw encoding against lcm-gen's, and allocation."""
import itertools
import tracemalloc
from pathlib import Path

import lcm
import numpy as np
import pytest

from drivers.viz import DEFAULT_COLOR, DrawPublisher, geometry_data, load_robot_message
from dynamics_cy import (
    Box,
    Capsule,
    GeometryInstance,
    HalfSpace,
    Mesh,
    MultibodyPlant,
    RigidTransform,
    RollPitchYaw,
    Shape,
    SpatialInertia,
    Sphere,
)
from dynamics_cy.spatial_math import quaternion_to_matrix
from messages import lcmt_viewer_draw, lcmt_viewer_geometry_data, lcmt_viewer_load_robot
from messages.validation import check_message

REPO = Path(__file__).resolve().parents[2]
IIWA = REPO / "configs" / "robots" / "iiwa14.urdf"
G = lcmt_viewer_geometry_data

# (type, float_data, position, color) of each iiwa link's one visual, from configs/robots/iiwa14.urdf.
GREY, ORANGE = (0.4, 0.4, 0.4, 1.0), (1.0, 0.423529, 0.039216, 1.0)
IIWA_VISUALS = [
    (G.CYLINDER, (0.11, 0.15), (0, 0, 0.075), GREY),
    (G.CYLINDER, (0.075, 0.20), (0, 0, 0.1), ORANGE),
    (G.CYLINDER, (0.075, 0.20), (0, 0.1, 0), ORANGE),
    (G.CYLINDER, (0.07, 0.20), (0, 0, 0.1), ORANGE),
    (G.CYLINDER, (0.07, 0.18), (0, 0.09, 0), ORANGE),
    (G.CYLINDER, (0.065, 0.20), (0, 0, 0.1), ORANGE),
    (G.SPHERE, (0.07,), (0, 0, 0), ORANGE),
    (G.CYLINDER, (0.045, 0.04), (0, 0, 0.02), GREY),
]


def free_bodies_plant():
    """A free box in the default model instance, a free sphere in model instance "robot", and a
    box anchored to the world."""
    plant = MultibodyPlant(0.0)
    a = plant.AddRigidBody("a", SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.2, 0.3))
    plant.RegisterVisualGeometry(a, RigidTransform(), Box(0.1, 0.2, 0.3), "a_box", (1, 0, 0, 1))
    robot = plant.AddModelInstance("robot")
    b = plant.AddRigidBody("b", robot, SpatialInertia.SolidSphereWithMass(1.0, 0.1))
    plant.RegisterVisualGeometry(b, RigidTransform(RollPitchYaw(0.1, 0.2, 0.3), [0.1, 0, 0]), Sphere(0.1), "b_sphere")
    plant.RegisterVisualGeometry(plant.world_body(), RigidTransform([0, 0, -1]), Box(2, 2, 0.1), "floor")
    plant.Finalize()
    return plant


def test_iiwa_load_message_holds_the_urdf_visuals(iiwa):
    message = load_robot_message(iiwa)
    check_message(message)
    assert message.num_links == 8
    for i, (link, (kind, sizes, position, color)) in enumerate(zip(message.link, IIWA_VISUALS)):
        assert (link.name, link.robot_num, link.num_geom) == (f"plant::iiwa14::iiwa_link_{i}", 2, 1)
        g = link.geom[0]
        assert g.type == kind and g.string_data == ""
        np.testing.assert_allclose(g.float_data, sizes)
        np.testing.assert_allclose(g.position, position, atol=1e-12)
        np.testing.assert_allclose(g.color, color, atol=1e-6)
    decoded = lcmt_viewer_load_robot.decode(message.encode())
    assert decoded.encode() == message.encode()


def test_default_instance_world_link_and_robot_numbers():
    message = load_robot_message(free_bodies_plant())
    assert [(link.name, link.robot_num) for link in message.link] == [
        ("world", 0), ("plant::a", 1), ("plant::robot::b", 2)]
    assert load_robot_message(free_bodies_plant(), source_name="sim").link[2].name == "sim::robot::b"


def test_geometry_encodings(tmp_path, monkeypatch):
    def data(shape, X_BG=RigidTransform(), color=(0.1, 0.2, 0.3, 0.4)):
        rgba = None if color is None else np.array(color)
        return geometry_data(GeometryInstance(1, X_BG, shape, "g", "visual", rgba))

    capsule = data(Capsule(0.1, 0.5), RigidTransform(RollPitchYaw(np.pi, 0, 0), [1, 2, 3]))
    assert (capsule.type, capsule.float_data, capsule.position) == (G.CAPSULE, [0.1, 0.5], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.abs(capsule.quaternion), [0, 1, 0, 0], atol=1e-12)
    assert capsule.color == [0.1, 0.2, 0.3, 0.4]
    assert data(Sphere(0.2), color=None).color == list(DEFAULT_COLOR)

    # A relative mesh path is made absolute: the viewer runs in another directory.
    monkeypatch.chdir(tmp_path)
    mesh = data(Mesh("meshes/link.obj", [1.0, 2.0, 3.0]))
    assert (mesh.type, mesh.float_data) == (G.MESH, [1.0, 2.0, 3.0])
    assert mesh.string_data == str(tmp_path / "meshes" / "link.obj")
    assert data(Mesh("package://robot/link.obj")).string_data == "package://robot/link.obj"

    # A half space is DrakeVisualizer's 50 x 50 x 1 box whose top face is the plane.
    slab = data(HalfSpace(), RigidTransform(RollPitchYaw(np.pi / 2, 0, 0), [0, 0, 1]))
    assert (slab.type, slab.float_data) == (G.BOX, [50.0, 50.0, 1.0])
    np.testing.assert_allclose(slab.position, [0, 0.5, 1], atol=1e-12)

    class Torus(Shape):
        pass

    with pytest.raises(TypeError, match="geometry 'g' on body 1: no viewer encoding for Torus"):
        data(Torus())


def test_draw_quaternions_are_canonical_for_every_branch():
    """A free body at rotations that pick each of Shepperd's four columns, at 180° (w = 0), and
    given with w < 0: the draw quaternion gives back R_WB, with w >= 0."""
    plant = free_bodies_plant()
    publisher = DrawPublisher(plant, lcm.LCM("memq://"))
    context = plant.CreateDefaultContext()
    body = plant.GetBodyByName("a")
    start = body.floating_positions_start()
    rng = np.random.default_rng(1)
    cases = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 1, 1, 0], [0, 1, -1, 1],
             [-0.1, 0.9, 0.3, 0.2], [0.2, -0.1, 0.1, -0.95], [-1, 0, 0, 0]] + list(rng.normal(size=(50, 4)))
    for wxyz in cases:
        wxyz = np.asarray(wxyz, dtype=float) / np.linalg.norm(wxyz)
        q = plant.GetDefaultPositions()
        q[start:start + 4], q[start + 4:start + 7] = wxyz, rng.normal(size=3)
        assert publisher.encode(q, 0)
        draw = lcmt_viewer_draw.decode(publisher.tobytes())
        plant.SetPositions(context, q)
        X_WB = plant.EvalBodyPoseInWorld(context, body)
        quaternion = np.asarray(draw.quaternion[0])
        assert quaternion[0] >= 0
        np.testing.assert_allclose(quaternion_to_matrix(quaternion), X_WB.rotation().matrix(), atol=1e-6)
        np.testing.assert_allclose(draw.position[0], X_WB.translation(), atol=1e-6)


def test_draw_bytes_equal_lcm_gen_encoding(iiwa):
    """The in-place encoding is lcm-gen's encode() of the same values (rounded to float32)."""
    publisher = DrawPublisher(iiwa, lcm.LCM("memq://"))
    context = iiwa.CreateDefaultContext()
    rng = np.random.default_rng(2)
    for utime in (0, 1_999, 123_456_789_000, -5_000):
        q = rng.uniform(-2, 2, 7)
        assert publisher.encode(q, utime)
        iiwa.SetPositions(context, q)
        expected = lcmt_viewer_draw()
        expected.timestamp = utime // 1000
        expected.num_links = 8
        expected.link_name = [f"plant::iiwa14::iiwa_link_{i}" for i in range(8)]
        expected.robot_num = [2] * 8
        decoded = lcmt_viewer_draw.decode(publisher.tobytes())
        expected.quaternion = decoded.quaternion
        for i in range(8):
            X_WB = iiwa.EvalBodyPoseInWorld(context, iiwa.GetBodyByName(f"iiwa_link_{i}"))
            expected.position.append(list(X_WB.translation()))
            np.testing.assert_allclose(quaternion_to_matrix(decoded.quaternion[i]), X_WB.rotation().matrix(), atol=1e-6)
        assert publisher.tobytes() == expected.encode()


def test_non_finite_q_is_refused_and_a_wrong_q_raises(iiwa):
    lc = lcm.LCM("memq://")
    received = []
    lc.subscribe("DRAKE_VIEWER_DRAW", lambda channel, data: received.append(data))
    publisher = DrawPublisher(iiwa, lc)
    assert publisher.publish(np.full(7, 0.1), 1000)
    before = publisher.tobytes()
    for bad in (np.inf, -np.inf, np.nan):
        q = np.full(7, 0.1)
        q[3] = bad
        assert not publisher.publish(q, 2000)
    assert publisher.tobytes() == before
    while lc.handle_timeout(0):
        pass
    assert len(received) == 1
    with pytest.raises(ValueError, match="q"):
        publisher.publish(np.zeros(6), 0)


def test_steady_state_draw_encoding_does_not_grow(iiwa):
    """Encoding allocates nothing that outlives a call (numpy keeps a few transient bytes per call)."""
    publisher = DrawPublisher(iiwa, lcm.LCM("memq://"))
    q = np.linspace(-1, 1, 7)
    tracemalloc.start()
    try:
        for _ in itertools.repeat(None, 200):   # warm up numpy's caches under tracing
            publisher.encode(q, 123_456_789)
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        for _ in itertools.repeat(None, 2000):
            publisher.encode(q, 123_456_789)
        end, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert end - start <= 64, f"{end - start} bytes kept after 2000 encodes"   # 64: the ints `start`, `_`
    assert peak - start < 8192, f"peak {peak - start} bytes during an encode"
