"""Box–box contact against closed forms, and the WSG 50 grasp (tests/sim/grasp_scene.py) on both
engines: slip, chatter, place error and determinism (docs/sim.md, Grasping)."""
import numpy as np
import pytest

from drivers.sim import Physics, load_sim_config
from dynamics_cy import Box, CoulombFriction, MultibodyPlant, RigidTransform, SpatialInertia, UnitInertia
from tests.alloc import net_and_peak
from tests.sim.grasp_scene import GRASP_STIFFNESS, grasp_plant, run_grasp

G = 9.81
TABLE = (0.4, 0.4, 0.1)         # welded, its top face at z = 0
BLOCK = (0.1, 0.08, 0.05)
INTEGRATORS = ["semi_implicit_euler", "rk4"]


def block_on_table(mass=1.0, mu=0.5, yaw=0.0):
    plant = MultibodyPlant(0.0)
    table = plant.AddRigidBody("table", SpatialInertia(10.0, np.zeros(3), UnitInertia.SolidBox(*TABLE)))
    plant.WeldFrames(plant.world_frame(), table.body_frame(), RigidTransform([0.0, 0.0, -TABLE[2] / 2]))
    plant.RegisterCollisionGeometry(table, RigidTransform(), Box(*TABLE), "table", CoulombFriction(mu, mu))
    block = plant.AddRigidBody("block", SpatialInertia(mass, np.zeros(3), UnitInertia.SolidBox(*BLOCK)))
    plant.RegisterCollisionGeometry(block, RigidTransform(), Box(*BLOCK), "block", CoulombFriction(mu, mu))
    plant.Finalize()
    c, s = np.cos(yaw / 2), np.sin(yaw / 2)
    return plant, [c, 0.0, 0.0, s, 0.0, 0.0, BLOCK[2] / 2]


def physics(plant, q0, integrator="semi_implicit_euler"):
    return Physics(plant, load_sim_config({
        "integrator": integrator, "initial_positions": q0,
        "contact": {"enabled": True, "between_bodies": True, "ground": {"enabled": False}}}))


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("yaw", [0.0, 0.3])
def test_a_box_resting_on_a_box_carries_its_weight_without_drift(integrator, yaw):
    """Face on face: four points (the block's corners), Σ fₙ = m g, sunk by m g/(4 k), no drift or turn."""
    m = 1.0
    plant, q0 = block_on_table(m, yaw=yaw)
    p = physics(plant, q0, integrator)
    for _ in range(1500):
        p.step(None)
    c = p.contact.point_contact
    assert c.num_contacts == 4
    block = plant.GetBodyByName("block").index()
    on_block = sum(c.f_Bc_W[i] if c.body_B[i] == block else -c.f_Bc_W[i] for i in range(4))   # f_Bc_W: on B
    np.testing.assert_allclose(on_block, [0.0, 0.0, m * G], rtol=1e-3, atol=1e-9)
    np.testing.assert_allclose(np.abs(c.nhat_BA_W[:4]), np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-9)
    k = load_sim_config({}).contact.stiffness
    assert p.q[6] == pytest.approx(BLOCK[2] / 2 - m * G / (4 * k), rel=1e-3)
    np.testing.assert_allclose(p.q[:6], q0[:6], atol=1e-9)      # no turn, no slide
    assert np.abs(p.v).max() < 1e-7


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_a_box_sliding_on_a_box_decelerates_at_mu_g(integrator):
    """v0 = 1 m/s along x: decelerates at μ g (velocity linear in time) and stops after v0²/(2 μ g)."""
    mu, v0 = 0.5, 1.0
    plant, q0 = block_on_table(mu=mu)
    q0[4] = -0.1
    p = physics(plant, q0, integrator)
    for _ in range(300):
        p.step(None)
    x0 = p.q[4]
    p.set_state(p.q, [0, 0, 0, v0, 0, 0], p.steps)
    speeds = []
    for _ in range(150):
        p.step(None)
        speeds.append(p.v[3])
    t = 0.001 * np.arange(1, 151)
    slope = np.polyfit(t, speeds, 1)[0]
    assert slope == pytest.approx(-mu * G, rel=0.01)
    for _ in range(450):
        p.step(None)
    assert abs(p.v[3]) < 1e-3
    assert p.q[4] - x0 == pytest.approx(v0 ** 2 / (2 * mu * G), rel=0.02)


def test_edge_on_face_and_crossed_faces():
    """A block tilted 30° about x rests on one edge: 2 points, the edge's ends, at its depth; turned 45°
    about z and flat, its face inside the table's: its 4 corners."""
    plant, q0 = block_on_table()
    c = physics(plant, q0).contact
    X = np.tile(np.eye(4), (plant.num_bodies(), 1, 1))
    V, F = np.zeros((plant.num_bodies(), 6)), np.zeros((plant.num_bodies(), 6))
    a = np.radians(30)
    R = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    lowest = np.min([(R @ (np.array([sx, sy, sz]) * BLOCK / 2))[2] for sx in (-1, 1) for sy in (-1, 1)
                     for sz in (-1, 1)])
    X[2, :3, :3], X[2, :3, 3] = R, [0, 0, -lowest - 1e-4]
    X[1, :3, 3] = [0, 0, -TABLE[2] / 2]
    n = c.point_contact.evaluate(X, V, F)
    assert n == 2
    np.testing.assert_allclose(c.point_contact.depth[:2], 1e-4, rtol=1e-9)
    np.testing.assert_allclose(sorted(c.point_contact.p_WCa[:2, 0]), [-BLOCK[0] / 2, BLOCK[0] / 2], atol=1e-12)
    s = np.sqrt(0.5)
    X[2, :3, :3] = [[s, -s, 0], [s, s, 0], [0, 0, 1]]
    X[2, :3, 3] = [0, 0, BLOCK[2] / 2 - 1e-4]
    X[1, :3, :3], X[1, :3, 3] = np.eye(3), [0, 0, -TABLE[2] / 2]
    assert c.point_contact.evaluate(X, V, F) == 4


@pytest.mark.parametrize("engine", ["hilstack", "mujoco"])
def test_the_wsg_holds_the_cube_through_lift_carry_and_place(engine):
    """40 N grip, 0.2 kg cube, 10 cm lift: slip below 1 mm (ours: a few µm), the grip force steady,
    the cube placed back within 1 mm, and two runs bitwise identical."""
    if engine == "mujoco":
        pytest.importorskip("mujoco")
        sim = {"mujoco": {"cone": "elliptic", "impratio": 100.0}}
    else:
        sim = {"contact": {"enabled": True, "between_bodies": True, "stiffness": GRASP_STIFFNESS}}
    first, second = run_grasp(engine, **sim), run_grasp(engine, **sim)
    assert first.slip_mm < (0.01 if engine == "hilstack" else 0.1)
    assert first.force_mean == pytest.approx(40.0, rel=1e-3)
    assert first.chatter < 1e-3
    assert first.place_mm < 1.0 and first.place_deg < 0.1
    assert np.array_equal(first.q_final, second.q_final)


def test_a_damped_carrier_joint_does_not_make_the_cube_slip():
    """Joint damping on the joint that carries the gripper (as an arm's): its implicit step goes before the
    contacts' (docs/sim.md, Semi-implicit Euler), so the pads and the cube still move together: slip as
    without damping (a few µm), where damping after the contacts slid them ∝ D ż."""
    plant = grasp_plant()
    damping = np.zeros(plant.num_velocities())
    damping[plant.GetJointByName("lift").velocity_start()] = 200.0      # N·s/m on a ~1.5 kg carrier
    sim = {"contact": {"enabled": True, "between_bodies": True, "stiffness": GRASP_STIFFNESS},
           "joint_damping": damping.tolist()}
    assert run_grasp("hilstack", **sim).slip_mm < 0.01


def test_mujoco_at_its_defaults_lets_the_cube_slip():
    """The measured reason for the decision: MuJoCo's default soft contact (elliptic, impratio 1) lets
    the held cube slide millimetres down the pads during the lift."""
    pytest.importorskip("mujoco")
    assert run_grasp("mujoco").slip_mm > 1.0


def test_a_box_box_step_allocates_nothing():
    plant, q0 = block_on_table(yaw=0.3)
    p = physics(plant, q0)
    for _ in range(50):
        p.step(None)
    work, frame = net_and_peak(lambda: p.step(None))
    assert work == frame, f"1000 steps allocated {work} (net, peak) bytes; the call alone {frame}"
