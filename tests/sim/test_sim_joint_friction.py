"""Joint damping (implicit) and Coulomb joint friction (stick-slip solved per step) against closed
forms, energy, the optimality conditions checked by finite differences, and pydrake's discrete plant."""
import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.sim import Physics, load_sim_config
from dynamics_cy import MultibodyPlant, Parser, PrismaticJoint, RevoluteJoint, SpatialInertia, UnitInertia

G, H = 9.81, 1e-3


def physics(plant, **sim):
    return Physics(plant, load_sim_config(sim))


def rotor(inertia, damping=0.0, gravity=True):
    """A disc of polar inertia `inertia` on a revolute joint about z (gravity along the axis: no torque)."""
    plant = MultibodyPlant(0.0)
    body = plant.AddRigidBody("disc", SpatialInertia(1.0, np.zeros(3), UnitInertia(inertia, inertia, inertia)))
    plant.AddJoint(RevoluteJoint("spin", plant.world_frame(), body.body_frame(), [0, 0, 1], damping=damping))
    if not gravity:
        plant.mutable_gravity_field().set_gravity_vector([0, 0, 0])
    plant.Finalize()
    return plant


def vertical_slider(mass):
    """A block of `mass` on a vertical prismatic joint: gravity pulls it along the joint with m g."""
    plant = MultibodyPlant(0.0)
    body = plant.AddRigidBody("block", SpatialInertia.SolidBoxWithMass(mass, 0.1, 0.1, 0.1))
    plant.AddJoint(PrismaticJoint("lift", plant.world_frame(), body.body_frame(), [0, 0, 1]))
    plant.Finalize()
    return plant


def arm(path):
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(path))
    plant.Finalize()
    return plant


# --- closed forms -------------------------------------------------------------------------------------
@pytest.mark.parametrize("ratio", [0.01, 14.0])
def test_implicit_damping_decays_as_its_closed_form(ratio):
    """I v̇ = −d v, implicit: vₙ = v₀ / (1 + h d/I)ⁿ exactly, within O(h) of v₀ e^(−d t/I) when h d/I is
    small, and monotone without overshoot when it is 14 (the xArm7's wrist: explicit Euler diverges)."""
    inertia, v0 = 1.4e-4, 2.0
    d = ratio * inertia / H
    p = physics(rotor(inertia, damping=d), initial_velocities=[v0])
    vs = []
    for _ in range(200):
        p.step(None)
        vs.append(p.v[0])
    n = np.arange(1, 201)
    np.testing.assert_allclose(vs, v0 / (1 + ratio) ** n, rtol=1e-12)
    assert np.all(np.diff(vs) <= 0) and np.all(np.array(vs) >= 0)
    if ratio < 1:
        np.testing.assert_allclose(vs, v0 * np.exp(-d * n * H / inertia), rtol=ratio * 200 * 0.6)


def test_coulomb_friction_stops_a_spinning_disc_at_i_v0_over_f_and_holds_it():
    """I v̇ = −f sign(v): v falls by h f/I a step exactly, the disc stops in I v₀/f and stays at rest."""
    inertia, f, v0 = 0.02, 0.5, 3.0
    p = physics(rotor(inertia), initial_velocities=[v0], joint_friction=f)
    vs = []
    for _ in range(300):
        p.step(None)
        vs.append(p.v[0])
    stop = inertia * v0 / f                                   # 0.12 s
    n = np.arange(1, 301)
    np.testing.assert_allclose(vs, np.maximum(v0 - n * H * f / inertia, 0.0), atol=1e-12)
    assert np.all(np.array(vs)[n * H >= stop] == 0.0)
    assert p.q[0] == pytest.approx(0.5 * v0 * stop, rel=2e-2)  # the distance of a uniform deceleration


@pytest.mark.parametrize("integrator", ["semi_implicit_euler", "rk4"])
@pytest.mark.parametrize("ratio", [0.5, 0.99, 1.01, 2.0])
def test_a_block_is_held_by_static_friction_below_breakaway(integrator, ratio):
    """A block on a vertical joint with friction f: below breakaway (m g < f) it does not move at all;
    above, it slides down at g − f/m."""
    mass = 2.0
    f = mass * G / ratio
    p = physics(vertical_slider(mass), integrator=integrator, joint_friction=f)
    for _ in range(500):
        p.step(None)
    if ratio < 1:
        assert abs(p.q[0]) < 1e-15 and p.v[0] == 0.0             # RK4: to rounding
    else:
        assert p.v[0] == pytest.approx(-(G - f / mass) * 0.5, rel=1e-9)


def test_a_pendulum_with_friction_sticks_where_gravity_is_within_the_friction(make_double_pendulum,
                                                                             total_energy):
    """A double pendulum with friction f and damping comes to rest exactly (v = 0) away from the bottom,
    where |τ_g| <= f on each joint. RK4 + friction (a split) loses energy at every step, up to 1e-5 J
    (the split's O(h²) at stick-slip transitions) against 7.9 J dissipated."""
    f = np.array([1.5, 0.6])
    plant = make_double_pendulum(damping=0.05)
    p = physics(plant, initial_positions=[1.2, -0.4], joint_friction=f.tolist())
    for _ in range(20000):
        p.step(None)
    tau_g = np.zeros(2)
    plant.kernels().gravity(p.q, tau_g)
    assert np.all(p.v == 0.0)
    assert np.all(np.abs(tau_g) <= f * (1 + 1e-9)) and np.abs(tau_g).max() > 0.1 * f.min()

    p = physics(plant, integrator="rk4", initial_positions=[1.2, -0.4], joint_friction=f.tolist(), joint_damping=0)
    energies = [total_energy(plant, p.q, p.v)]
    for _ in range(3000):
        p.step(None)
        energies.append(total_energy(plant, p.q, p.v))
    assert np.all(np.diff(energies) <= 1e-5) and energies[-1] < energies[0] - 5.0


# --- the step's optimality, by finite differences --------------------------------------------------------
def test_each_step_minimizes_its_objective(iiwa_urdf):
    """v⁺ minimizes Φ(w) = ½ (w − v*)ᵀ M (w − v*) + ½ h wᵀ D w + h Σ fᵢ |wᵢ| (v* the free step): every
    finite-difference step ±ε eᵢ from v⁺ raises Φ, on a coupled arm with some joints stuck, some slipping."""
    plant = arm(iiwa_urdf)
    k = plant.kernels()
    d = plant.GetDampingVector()
    f = np.array([0.5, 200.0, 0.5, 200.0, 0.5, 50.0, 0.01])
    q0 = np.array([0.1, 0.5, -0.2, -1.2, 0.3, 0.8, 0.0])
    v0 = np.array([0.3, 0.0, 0.5, 0.0, -0.4, 0.0, 0.6])
    p = physics(plant, initial_positions=q0.tolist(), initial_velocities=v0.tolist(), joint_friction=f.tolist())
    q, v = p.q.copy(), p.v.copy()
    u = np.array([5.0, -3.0, 2.0, 1.0, -1.0, 0.5, 0.2])
    p.step(u)
    vdot, M = np.zeros(7), np.zeros((7, 7))
    k.forward_dynamics(q, v, u, vdot)
    k.mass_matrix(q, M)
    v_free = v + H * vdot

    def phi(w):
        e = w - v_free
        return 0.5 * e @ M @ e + 0.5 * H * w @ (d * w) + H * f @ np.abs(w)
    stuck = p.v == 0.0
    assert 0 < stuck.sum() < 7, p.v
    best = phi(p.v)
    for i in range(7):
        for eps in (1e-7, -1e-7):
            w = p.v.copy()
            w[i] += eps
            assert phi(w) >= best - 1e-15, (i, eps)
    # the friction torque of the step, M (v* − v⁺)/h − D v⁺: within ±f, and ±f on the slipping joints
    tau_f = M @ (v_free - p.v) / H - d * p.v
    assert np.all(np.abs(tau_f) <= f * (1 + 1e-6))
    np.testing.assert_allclose(tau_f[~stuck], f[~stuck] * np.sign(p.v[~stuck]), rtol=1e-6)


# --- pydrake ---------------------------------------------------------------------------------------------
def test_pydrake_discrete_plant_matches_the_implicit_joint_damping(robot_data):
    """The xArm7 (URDF damping 2 N·m·s/rad on 1.4e-4 kg·m² at its wrist) falling under gravity for 1 s:
    our semi-implicit Euler at 1 ms against Drake's discrete MultibodyPlant at 1 ms (joint damping
    implicit, (M + hD) v⁺ = M v*) agree to rounding; an explicit damping would diverge."""
    pydrake = pytest.importorskip("pydrake.all", reason="pydrake is not installed")
    urdf = robot_data / "robots" / "xarm_description" / "urdf" / "xarm7.urdf"
    plant = arm(urdf)
    assert plant.GetDampingVector()[-1] == 2.0
    q0 = np.array([0.0, -0.3, 0.0, 0.6, 0.0, 0.9, 0.0])
    p = physics(plant, initial_positions=q0.tolist(), joint_limits={"enabled": False})
    dp = pydrake.MultibodyPlant(H)
    pydrake.Parser(dp).AddModels(str(urdf))
    dp.Finalize()
    context = dp.CreateDefaultContext()
    dp.SetPositions(context, q0)
    dp.get_actuation_input_port().FixValue(context, np.zeros(7))
    simulator = pydrake.Simulator(dp, context)
    for i in range(1, 1001):
        p.step(np.zeros(7))
        if i % 250 == 0:
            simulator.AdvanceTo(i * H)
            assert np.abs(p.q - dp.GetPositions(context)).max() < 1e-9, i
            assert np.abs(p.v - dp.GetVelocities(context)).max() < 1e-7, i
    assert np.abs(p.v).max() > 0.1                            # it moved


def test_joint_friction_is_validated(iiwa):
    with pytest.raises(ConfigError, match=r"sim.joint_friction\[1\]"):
        physics(iiwa, joint_friction=[0.1, -1.0, 0, 0, 0, 0, 0])
    with pytest.raises(ConfigError, match="sim.joint_friction"):
        physics(iiwa, joint_friction=[0.1, 0.2])
