"""Cylinder–box contact (drivers/sim/_cylinder_box.pxd) against closed forms and pydrake's signed
distance, a cylinder standing and lying on a table in the step, and the WSG's grasp of a cylinder
(tests/sim/grasp_scene.py) on both engines (docs/sim.md, Contact and Grasping)."""
import numpy as np
import pytest
from drivers.sim._contact import PointContact

from drivers.sim import Physics, load_sim_config
from dynamics_cy import (
    Box,
    CoulombFriction,
    Cylinder,
    MultibodyPlant,
    RigidTransform,
    RollPitchYaw,
    SpatialInertia,
    UnitInertia,
)
from tests.alloc import net_and_peak
from tests.sim.grasp_scene import GRASP_STIFFNESS, run_grasp

G = 9.81
R, LENGTH = 0.03, 0.12
TABLE = (0.4, 0.4, 0.1)
BOX, CYL = 1, 3                  # drivers.sim._contact's shape codes


def rot(axis, angle):
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    M = np.eye(3)
    M[i, i], M[i, j], M[j, i], M[j, j] = c, -s, s, c
    return M


def contacts(R_WC, p_WC, R_WB, p_WB, half_box, radius=R, length=LENGTH):
    """Our cylinder (A) – box (B) points at the given poses: (p_WCa, p_WCb, nhat_BA_W, depth)."""
    pc = PointContact([CYL, BOX], [1, 2], [np.eye(3)] * 2, np.zeros((2, 3)),
                      [(radius, length / 2, 0.0), tuple(half_box)], [], np.zeros((0, 2)), [(0, 1)],
                      [(0.5, 0.5)], 0.0, 1e5, 0.0, 1e-4, 3, 12, 0.001)
    X = np.tile(np.eye(4), (3, 1, 1))
    X[1, :3, :3], X[1, :3, 3] = R_WC, p_WC
    X[2, :3, :3], X[2, :3, 3] = R_WB, p_WB
    n = pc.evaluate(X, np.zeros((3, 6)), np.zeros((3, 6)))
    return pc.p_WCa[:n].copy(), pc.p_WCb[:n].copy(), pc.nhat_BA_W[:n].copy(), pc.depth[:n].copy()


def test_a_standing_cylinder_touches_a_face_on_its_rim():
    """Upright on the table's top, sunk δ: 8 points on the bottom rim, each at depth δ, n̂ = +z."""
    d = 1e-4
    pa, pb, n, depth = contacts(np.eye(3), [0.01, -0.02, LENGTH / 2 - d], np.eye(3), [0, 0, -TABLE[2] / 2],
                                np.array(TABLE) / 2)
    assert len(depth) == 8
    np.testing.assert_allclose(depth, d, rtol=1e-9)
    np.testing.assert_allclose(n, np.tile([0, 0, 1.0], (8, 1)), atol=1e-12)
    np.testing.assert_allclose(np.hypot(pa[:, 0] - 0.01, pa[:, 1] + 0.02), R, rtol=1e-12)
    np.testing.assert_allclose(pa[:, 2], -d, atol=1e-12)
    np.testing.assert_allclose(pb[:, 2], 0.0, atol=1e-12)


def test_a_lying_cylinder_has_a_line_contact():
    """Axis along x on the table, sunk δ: 2 points, the lowest generator's ends (x = ±L/2), depth δ."""
    d = 2e-4
    pa, pb, n, depth = contacts(rot(1, np.pi / 2), [0.0, 0.05, R - d], np.eye(3), [0, 0, -TABLE[2] / 2],
                                np.array(TABLE) / 2)
    assert len(depth) == 2
    np.testing.assert_allclose(depth, d, rtol=1e-9)
    np.testing.assert_allclose(sorted(pa[:, 0]), [-LENGTH / 2, LENGTH / 2], atol=1e-12)
    np.testing.assert_allclose(pa[:, 1:], [[0.05, -d]] * 2, atol=1e-12)
    np.testing.assert_allclose(n, np.tile([0, 0, 1.0], (2, 1)), atol=1e-12)


def test_a_pad_shorter_than_the_cylinder_presses_the_middle_of_its_side():
    """A 2 cm tall finger pad pressing an upright cylinder's side by δ along −x: 2 points at the pad's
    upper and lower edges on the generator x = R, depth δ, n̂ = −x (from the pad into the cylinder)."""
    d, pad = 3e-4, np.array([0.008, 0.01, 0.01])
    pa, pb, n, depth = contacts(np.eye(3), [0.0, 0.0, 0.0], np.eye(3), [R + pad[0] - d, 0.0, 0.015], pad)
    assert len(depth) == 2
    np.testing.assert_allclose(depth, d, rtol=1e-9)
    np.testing.assert_allclose(n, np.tile([-1.0, 0, 0], (2, 1)), atol=1e-12)
    np.testing.assert_allclose(sorted(pa[:, 2]), [0.005, 0.025], atol=1e-12)
    np.testing.assert_allclose(pa[:, :2], [[R, 0.0]] * 2, atol=1e-12)       # the cylinder's side, in the pad
    np.testing.assert_allclose(pb[:, :2], [[R - d, 0.0]] * 2, atol=1e-12)   # the pad's face


def test_a_tilted_cylinder_rests_on_its_rim_point():
    """Tilted 0.3 rad about x: the deepest rim point's depth is the closed form R sin θ + L/2 cos θ − z."""
    th = 0.3
    z = R * np.sin(th) + LENGTH / 2 * np.cos(th) - 1e-4
    pa, pb, n, depth = contacts(rot(0, th), [0, 0, z], np.eye(3), [0, 0, -TABLE[2] / 2], np.array(TABLE) / 2)
    assert depth.max() == pytest.approx(1e-4, rel=1e-9)
    deepest = pa[np.argmax(depth)]
    np.testing.assert_allclose(deepest, rot(0, th) @ [0, -R, -LENGTH / 2] + [0, 0, z], atol=1e-12)


POSES = [     # (R_WC, p_WC, R_WB, p_WB, half box): cylinder A against box B, each penetrating
    (np.eye(3), [0.0, 0.0, 0.0598], np.eye(3), [0, 0, -0.05], [0.2, 0.2, 0.05]),              # standing
    (rot(0, 0.2), [0.01, 0.0, 0.062], rot(2, 0.4), [0, 0, -0.05], [0.2, 0.2, 0.05]),           # tilted on its rim
    (rot(1, np.pi / 2), [0.0, 0.0, 0.0297], rot(2, 0.3), [0, 0, -0.05], [0.2, 0.2, 0.05]),      # lying
    (rot(1, 1.3), [0.0, 0.02, 0.0447], np.eye(3), [0, 0, -0.05], [0.2, 0.2, 0.05]),             # nearly lying
    (np.eye(3), [0, 0, 0], np.eye(3), [0.0375, 0, 0.01], [0.008, 0.01, 0.01]),                 # pad on the side
    (np.eye(3), [0, 0, 0], rot(2, 0.2), [0.0, 0.0375, -0.03], [0.008, 0.01, 0.01]),            # pad low, turned
    (np.eye(3), [0, 0, 0], rot(0, 0.1), [0.0, 0.0, 0.069], [0.02, 0.02, 0.01]),                # a box on its top
    (RollPitchYaw(2.3994871561332096, -0.5850366205989329, 0.7582996476466025).ToRotationMatrix().matrix(),
     [-0.0014915411742907336, -0.05733790623699825, -0.08551796560328927], np.eye(3), [0, 0, 0],
     [0.05, 0.04, 0.03]),                                                                       # a rim on an edge
]


def test_depths_and_normals_match_drakes_signed_distance():
    """The deepest point's depth and the normal against pydrake's SceneGraph
    (ComputeSignedDistancePairwiseClosestPoints, its box–cylinder accuracy 6·10⁻⁶ m); a rim on an edge's
    normal to 10⁻² (the rim–edge axis is taken at the rim point nearest the edge's line)."""
    pydrake = pytest.importorskip("pydrake.geometry")
    from pydrake.math import RigidTransform as DrakeTransform
    from pydrake.math import RotationMatrix
    from pydrake.multibody.plant import AddMultibodyPlantSceneGraph
    from pydrake.multibody.tree import SpatialInertia as DrakeInertia
    from pydrake.systems.framework import DiagramBuilder
    for i, (R_WC, p_WC, R_WB, p_WB, half) in enumerate(POSES):
        builder = DiagramBuilder()
        plant, scene_graph = AddMultibodyPlantSceneGraph(builder, 0.0)
        bodies = [plant.AddRigidBody(name, DrakeInertia.SolidSphereWithMass(1.0, 0.01)) for name in "cb"]
        plant.RegisterCollisionGeometry(bodies[0], DrakeTransform(), pydrake.Cylinder(R, LENGTH), "c",
                                        pydrake_friction())
        plant.RegisterCollisionGeometry(bodies[1], DrakeTransform(), pydrake.Box(*(2 * np.array(half))), "b",
                                        pydrake_friction())
        plant.Finalize()
        diagram = builder.Build()
        context = diagram.CreateDefaultContext()
        plant_context = plant.GetMyMutableContextFromRoot(context)
        plant.SetFreeBodyPose(plant_context, bodies[0], DrakeTransform(RotationMatrix(R_WC), p_WC))
        plant.SetFreeBodyPose(plant_context, bodies[1], DrakeTransform(RotationMatrix(R_WB), p_WB))
        query = scene_graph.get_query_output_port().Eval(scene_graph.GetMyContextFromRoot(context))
        (pair,) = query.ComputeSignedDistancePairwiseClosestPoints()
        inspector = query.inspector()
        sign = 1.0 if inspector.GetName(pair.id_A).endswith("c") else -1.0     # nhat_BA_W from B into A
        pa, pb, n, depth = contacts(R_WC, p_WC, R_WB, p_WB, half)
        assert len(depth) >= 1
        assert depth.max() == pytest.approx(-pair.distance, abs=1e-6)
        rim_on_edge = i == len(POSES) - 1      # its axis: at the rim point nearest the edge's line (4·10⁻³)
        np.testing.assert_allclose(n[0], sign * np.asarray(pair.nhat_BA_W), atol=1e-2 if rim_on_edge else 1e-4)


def test_depths_match_mujocos_geom_distance():
    """The deepest point's depth against MuJoCo's own cylinder–box distance (mj_geomDistance, its
    native convex collision) for the same poses."""
    mujoco = pytest.importorskip("mujoco")

    def quat(M):
        q = np.zeros(4)
        mujoco.mju_mat2Quat(q, np.ascontiguousarray(M, dtype=float).ravel())
        return q

    for R_WC, p_WC, R_WB, p_WB, half in POSES:
        spec = mujoco.MjSpec()
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[R, LENGTH / 2, 0], pos=p_WC,
                                quat=quat(R_WC))
        spec.worldbody.add_body().add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=half, pos=p_WB, quat=quat(R_WB))
        model = spec.compile()
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        distance = mujoco.mj_geomDistance(model, data, 0, 1, 1.0, np.zeros(6))
        assert contacts(R_WC, p_WC, R_WB, p_WB, half)[3].max() == pytest.approx(-distance, abs=1e-6)


def pydrake_friction():
    from pydrake.multibody.plant import CoulombFriction as DrakeFriction
    return DrakeFriction(0.5, 0.5)


def cylinder_on_table(mass=0.5, lying=False, mu=0.6):
    plant = MultibodyPlant(0.0)
    table = plant.AddRigidBody("table", SpatialInertia(10.0, np.zeros(3), UnitInertia.SolidBox(*TABLE)))
    plant.WeldFrames(plant.world_frame(), table.body_frame(), RigidTransform([0.0, 0.0, -TABLE[2] / 2]))
    plant.RegisterCollisionGeometry(table, RigidTransform(), Box(*TABLE), "table", CoulombFriction(mu, mu))
    body = plant.AddRigidBody("can", SpatialInertia(mass, np.zeros(3), UnitInertia.SolidCylinder(R, LENGTH, [0, 0, 1])))
    plant.RegisterCollisionGeometry(body, RigidTransform(), Cylinder(R, LENGTH), "can", CoulombFriction(mu, mu))
    plant.Finalize()
    s = np.sqrt(0.5)
    q0 = [s, 0.0, s, 0.0, 0.0, 0.0, R] if lying else [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, LENGTH / 2]
    return plant, q0


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
@pytest.mark.parametrize("lying", [False, True])
def test_a_cylinder_resting_on_a_table_carries_its_weight_without_drift(integrator, lying):
    """Standing: 8 rim points; lying: 2 (the line's ends); Σ f = m g, sunk m g/(n k), no drift, roll or spin."""
    m = 0.5
    plant, q0 = cylinder_on_table(m, lying)
    p = Physics(plant, load_sim_config({
        "integrator": integrator, "initial_positions": q0,
        "contact": {"enabled": True, "between_bodies": True, "ground": {"enabled": False}}}))
    for _ in range(1500):
        p.step(None)
    c = p.contact.point_contact
    n = 2 if lying else 8
    assert c.num_contacts == n
    can = plant.GetBodyByName("can").index()
    on_can = sum(-c.f_Bc_W[i] if c.body_A[i] == can else c.f_Bc_W[i] for i in range(n))
    np.testing.assert_allclose(on_can, [0.0, 0.0, m * G], rtol=1e-3, atol=1e-9)
    k = load_sim_config({}).contact.stiffness
    assert p.q[6] == pytest.approx(q0[6] - m * G / (n * k), rel=1e-3)
    np.testing.assert_allclose(p.q[:6], q0[:6], atol=1e-9)
    assert np.abs(p.v).max() < 1e-7


def test_a_cylinder_box_step_allocates_nothing():
    plant, q0 = cylinder_on_table()
    p = Physics(plant, load_sim_config({"initial_positions": q0, "contact": {
        "enabled": True, "between_bodies": True, "ground": {"enabled": False}}}))
    for _ in range(50):
        p.step(None)
    work, frame = net_and_peak(lambda: p.step(None))
    assert work == frame, f"1000 steps allocated {work} (net, peak) bytes; the call alone {frame}"


@pytest.mark.parametrize("engine", ["hilstack", "mujoco"])
def test_the_wsg_holds_a_cylinder_through_lift_carry_and_place(engine):
    """40 N grip on a standing 0.2 kg cylinder (line contacts on the pads, its rim on a table box): slip
    below 1 mm, the grip force steady, placed back within 1 mm, two runs bitwise identical."""
    if engine == "mujoco":
        pytest.importorskip("mujoco")
        sim = {"mujoco": {"cone": "elliptic", "impratio": 100.0}}
    else:
        sim = {"contact": {"stiffness": GRASP_STIFFNESS}}
    first, second = run_grasp(engine, "cylinder", **sim), run_grasp(engine, "cylinder", **sim)
    assert first.slip_mm < (0.01 if engine == "hilstack" else 1.0)
    assert first.force_mean == pytest.approx(40.0, rel=1e-2)
    assert first.chatter < 1e-3
    assert first.place_mm < 1.0 and first.place_deg < 0.5
    assert np.array_equal(first.q_final, second.q_final)


@pytest.mark.parametrize("order", [("box", "can"), ("can", "box")])
def test_a_box_and_a_cylinder_pair_with_the_cylinder_as_a(order):
    """ContactModel orders the pair (cylinder A, box B) whichever comes first in the plant."""
    from drivers.sim.contact import ContactModel
    plant = MultibodyPlant(0.0)
    for name in order:
        body = plant.AddRigidBody(name, SpatialInertia(1.0, np.zeros(3), UnitInertia.SolidCube(0.1)))
        shape = Cylinder(R, LENGTH) if name == "can" else Box(*TABLE)
        plant.RegisterCollisionGeometry(body, RigidTransform(), shape, name, CoulombFriction(0.5, 0.5))
    plant.Finalize()
    model = ContactModel(plant, load_sim_config({"contact": {"enabled": True, "between_bodies": True}}).contact)
    ((a, b),) = model.pairs
    assert (model.geometries[a].name, model.geometries[b].name) == ("can", "box")
