"""The plant's constraints in the simulated plant (drivers.sim._constraints, docs/sim.md "Constraints"): Drake's
SAP impulse reproduced (a four-bar closed by a ball constraint and a geared pair against pydrake's discrete
plant), the loop staying closed and the energy not growing over a long passive run, a coupler following a
driven joint, a weld's reaction equal to the weight it holds (and the torque of its offset), a compliant
distance constraint stretching by mg/k, deactivation, MuJoCo's equalities agreeing with ours, allocation."""
import numpy as np
import pytest

import dynamics_cy as dc
from drivers.sim import load_sim_config
from drivers.sim.physics import make_physics
from dynamics_cy.errors import ModelError
from tests.alloc import net_and_peak
from tests.sim.constrained_plants import four_bar, four_bar_positions, geared_pair, run_pydrake

G, H = 9.81, 1e-3


def physics(plant, **sim):
    return make_physics(plant, load_sim_config(sim))


def four_bar_sim(**sim):
    plant = dc.MultibodyPlant(0.0)
    id, joints = four_bar(dc, plant)
    plant.Finalize()
    return plant, id, physics(plant, initial_positions=list(four_bar_positions(joints)), **sim)


def ball_error(plant, context, id) -> float:
    s = plant.get_ball_constraint_specs(id)
    p_WP = plant.CalcPointsPositions(context, plant.get_body(s.body_A).body_frame(), s.p_AP, plant.world_frame())
    p_WQ = plant.CalcPointsPositions(context, plant.get_body(s.body_B).body_frame(), s.p_BQ, plant.world_frame())
    return float(np.linalg.norm(p_WP - p_WQ))


def test_four_bar_is_drakes_sap():
    """Drake's discrete plant (SAP, the same time step) and ours agree after 1 s of the swinging four-bar."""
    pytest.importorskip("pydrake")
    plant, _, p = four_bar_sim()
    for _ in range(1000):
        p.step(None)
    q, v = run_pydrake(four_bar, H, 1.0, lambda built: four_bar_positions(built[1]))
    np.testing.assert_allclose(p.q, q, atol=1e-8)
    np.testing.assert_allclose(p.v, v, atol=1e-7)


@pytest.mark.parametrize("integrator, closed", [("semi_implicit_euler", 1e-8), ("rk4", 5e-5)])
def test_four_bar_stays_closed_and_its_energy_does_not_grow(integrator, closed):
    """20 s of the passive four-bar: the ball constraint's gap stays bounded, and the energy never exceeds its
    start by more than the integrator's O(h) ripple (semi-implicit Euler's: 2.4·10⁻³ of the swing's kinetic
    energy scale) and does not drift up: its last-second mean is at most its first-second mean."""
    plant, id, p = four_bar_sim(integrator=integrator)
    c = plant.CreateDefaultContext()
    energy, gap = [], []
    for k in range(20000):
        p.step(None)
        if k % 10 == 0:
            plant.SetPositions(c, p.q)
            plant.SetVelocities(c, p.v)
            energy.append(plant.CalcKineticEnergy(c) + plant.CalcPotentialEnergy(c))
            gap.append(ball_error(plant, c, id))
    energy = np.array(energy)
    swing = 3 * G * 0.5 * (1 - np.cos(0.5))              # the kinetic energy scale: each bar drops ~ (1 − cos θ)/2
    assert max(gap) < closed
    assert energy.max() - energy[0] < 2.4e-3 * swing
    assert energy[-100:].mean() <= energy[:100].mean() + 1e-9


def test_coupler_follows_a_driven_joint():
    """q₀ = ρ q₁ + Δq holds to 10⁻⁶ rad while a sinusoidal torque drives q₁ (SAP's near-rigid compliance:
    an error of order h² R τ); the same pair under a constant
    torque matches pydrake's after 0.5 s."""
    rho, offset = -1.5, 0.2
    plant = dc.MultibodyPlant(0.0)
    _, (j0, j1) = geared_pair(dc, plant, rho, offset)
    plant.Finalize()
    p = physics(plant, initial_positions=[offset, 0.0])
    u = np.zeros(1)
    worst = 0.0
    for k in range(3000):
        u[0] = 2.0 * np.sin(2 * np.pi * k * H)
        p.step(u)
        worst = max(worst, abs(p.q[j0.position_start()] - rho * p.q[j1.position_start()] - offset))
    assert worst < 1e-6 and abs(p.q[j1.position_start()]) > 0.05
    pytest.importorskip("pydrake")
    p = physics(plant)
    for _ in range(500):
        p.step(np.array([1.0]))
    q, v = run_pydrake(lambda ns, plant: geared_pair(ns, plant, rho, offset), H, 0.5, np.zeros(2), np.array([1.0]))
    np.testing.assert_allclose(p.q, q, atol=1e-9)
    np.testing.assert_allclose(p.v, v, atol=1e-8)


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_weld_holds_a_free_body_and_its_reaction_is_the_weight(integrator):
    """A 2 kg free body welded to the world at frame Q 0.2 m from its centre of mass stays put (within SAP's
    near-rigid compliance, 2·10⁻⁵ m), and the weld's impulse per step is the support: on B at Q (the
    midpoint of the coincident Po and Qo), f = m g ẑ and τ = p_QBcm_W × m g ẑ."""
    m = 2.0
    plant = dc.MultibodyPlant(0.0)
    B = plant.AddRigidBody("B", dc.SpatialInertia.SolidBoxWithMass(m, 0.1, 0.2, 0.3))
    X_WP = dc.RigidTransform(dc.RollPitchYaw(0.1, 0.2, 0.3), [0, 0, 1.0])
    plant.AddWeldConstraint(plant.world_body(), X_WP, B, dc.RigidTransform([0.2, 0, 0]))
    plant.Finalize()
    X_WB = X_WP @ dc.RigidTransform([-0.2, 0, 0])
    q0 = np.r_[X_WB.rotation().ToQuaternion().wxyz(), X_WB.translation()]
    p = physics(plant, integrator=integrator, initial_positions=list(q0))
    for _ in range(2000):
        p.step(None)
    np.testing.assert_allclose(p.q[4:], X_WB.translation(), atol=2e-5)
    torque = np.cross(X_WB.rotation().matrix() @ [-0.2, 0, 0], [0, 0, m * G])
    np.testing.assert_allclose(p.constraints.impulses / H, [*torque, 0, 0, m * G], atol=1e-6)
    np.testing.assert_allclose(p.constraints.generalized_force[3:], [0, 0, m * G], atol=1e-6)


def hanging_mass_drop(stiffness: float, **sim) -> float:
    """How far below its anchor a 1.5 kg ball hanging by a distance constraint (free length 0.5 m, damping
    40 N·s/m) settles in 5 s."""
    plant = dc.MultibodyPlant(0.0)
    B = plant.AddRigidBody("B", dc.SpatialInertia.SolidSphereWithMass(1.5, 0.01))
    plant.AddDistanceConstraint(plant.world_body(), [0, 0, 1.0], B, [0, 0, 0], 0.5, stiffness, 40.0)
    plant.Finalize()
    p = physics(plant, initial_positions=[1, 0, 0, 0, 0, 0, 0.5], **sim)
    for _ in range(5000):
        p.step(None)
    return 1.0 - p.q[6]


@pytest.mark.parametrize("engine, tolerance", [("hilstack", 1e-6), ("mujoco", 1e-4)])
def test_a_compliant_distance_constraint_is_a_spring(engine, tolerance):
    """A compliant distance constraint (k = 2000 N/m) holds the ball at 0.5 + m g / k below its anchor, a rigid
    one (k = ∞) at 0.5 m (MuJoCo: a tendon spring, a tendon equality)."""
    if engine == "mujoco":
        pytest.importorskip("mujoco")
    assert abs(hanging_mass_drop(2000.0, engine=engine) - (0.5 + 1.5 * G / 2000.0)) < tolerance
    assert abs(hanging_mass_drop(np.inf, engine=engine) - 0.5) < tolerance


def test_an_inactive_constraint_lets_go():
    plant, id, p = four_bar_sim()
    p.constraints.set_active(id, False)
    c = plant.CreateDefaultContext()
    for _ in range(300):
        p.step(None)
    plant.SetPositions(c, p.q)
    assert ball_error(plant, c, id) > 0.01
    with pytest.raises(ValueError, match="is not a constraint of this plant"):
        p.constraints.set_active(dc.MultibodyConstraintId.get_new_id(), True)


def test_both_bodies_welded_to_the_world_is_refused():
    plant = dc.MultibodyPlant(0.0)
    B = plant.AddRigidBody("B", dc.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
    plant.WeldFrames(plant.world_frame(), B.body_frame())
    plant.AddBallConstraint(plant.world_body(), [0, 0, 0], B, [0, 0, 0])
    plant.Finalize()
    with pytest.raises(ModelError, match="Creating a ball constraint between bodies 'world' and 'B' where both are "
                                         "welded to the world is not allowed."):
        physics(plant)


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
def test_a_constrained_step_allocates_nothing(integrator):
    plant, _, p = four_bar_sim(integrator=integrator)
    for _ in range(10):
        p.step(None)
    work, frame = net_and_peak(lambda: p.step(None))
    assert work == frame, f"1000 steps allocated {work} (net, peak) bytes; the call alone {frame}"


# --- MuJoCo's equalities --------------------------------------------------------------------------------
def test_mujoco_agrees_on_the_four_bar_and_the_coupler():
    """MuJoCo's connect and joint equalities (solref [2h, 1]) against our SAP impulse: the four-bar's q after
    1 s within 10⁻⁵ rad, the geared pair's within 10⁻⁴ rad after 0.5 s of constant torque, the coupler holding
    within 10⁻⁴ rad on MuJoCo (its constraints are soft)."""
    pytest.importorskip("mujoco")
    plant, _, ours = four_bar_sim()
    _, _, theirs = four_bar_sim(engine="mujoco")
    for _ in range(1000):
        ours.step(None)
        theirs.step(None)
    np.testing.assert_allclose(theirs.q, ours.q, atol=1e-5)
    plant = dc.MultibodyPlant(0.0)
    _, (j0, j1) = geared_pair(dc, plant, -1.5, 0.2)
    plant.Finalize()
    ours, theirs = physics(plant), physics(plant, engine="mujoco")
    for _ in range(500):
        ours.step(np.array([1.0]))
        theirs.step(np.array([1.0]))
    np.testing.assert_allclose(theirs.q, ours.q, atol=1e-4)
    assert abs(theirs.q[0] + 1.5 * theirs.q[1] - 0.2) < 1e-4


def test_mujoco_weld_holds_the_body():
    """The weld holds the free body within 5·10⁻⁴ (m, and quaternion coefficients) on MuJoCo."""
    pytest.importorskip("mujoco")
    plant = dc.MultibodyPlant(0.0)
    B = plant.AddRigidBody("B", dc.SpatialInertia.SolidBoxWithMass(2.0, 0.1, 0.2, 0.3))
    plant.AddWeldConstraint(plant.world_body(), dc.RigidTransform([0, 0, 1.0]), B, dc.RigidTransform([0.2, 0, 0]))
    plant.Finalize()
    p = physics(plant, engine="mujoco", initial_positions=[1, 0, 0, 0, -0.2, 0, 1.0])
    for _ in range(2000):
        p.step(None)
    np.testing.assert_allclose(p.q, [1, 0, 0, 0, -0.2, 0, 1.0], atol=5e-4)


@pytest.mark.parametrize("engine, together", [("hilstack", 2e-6), ("mujoco", 5e-4)])
def test_panda_fingers_move_together(robot_data, engine, together):
    """example-robot-data's Panda: <mimic> couples panda_finger_joint2 to panda_finger_joint1 (Drake's coupler
    constraint); with finger 1 driven by a sinusoidal force (an actuator added for the test) and the arm
    swinging under gravity, finger 2 follows it."""
    if engine == "mujoco":
        pytest.importorskip("mujoco")
    root = robot_data / "robots"
    plant = dc.MultibodyPlant(0.0)
    parser = dc.Parser(plant)
    parser.package_map().PopulateFromFolder(str(root))
    parser.AddModels(str(root / "panda_description" / "urdf" / "panda.urdf"))
    j1, j2 = plant.GetJointByName("panda_finger_joint1"), plant.GetJointByName("panda_finger_joint2")
    plant.AddJointActuator("finger", j1)
    plant.WeldFrames(plant.world_frame(), plant.GetFrameByName("panda_link0"))
    plant.Finalize()
    q0 = plant.GetDefaultPositions()
    q0[[j1.position_start(), j2.position_start()]] = 0.02
    p = physics(plant, engine=engine, initial_positions=list(q0))
    u, worst, travel = np.zeros(1), 0.0, 0.0
    for k in range(2000):
        u[0] = 0.02 * np.sin(2 * np.pi * k * H)
        p.step(u)
        worst = max(worst, abs(p.q[j2.position_start()] - p.q[j1.position_start()]))
        travel = max(travel, abs(p.q[j1.position_start()] - 0.02))
    assert worst < together and travel > 0.015
