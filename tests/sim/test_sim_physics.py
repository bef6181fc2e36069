"""The simulated plant's physics against closed forms, conservation laws and pydrake."""
import numpy as np
import pytest

from drivers.sim import Physics, SimConfig, load_sim_config
from dynamics_cy import (
    MultibodyPlant,
    Quaternion,
    RevoluteJoint,
    RollPitchYaw,
    RotationalInertia,
    RotationMatrix,
    SpatialInertia,
)
from tests.alloc import net_and_peak
from tests.plants import parsed

G = 9.81
INTEGRATORS = ["semi_implicit_euler", "rk4"]


def physics(plant, **sim):
    return Physics(plant, load_sim_config(sim))


def run(p, steps, u=None):
    for _ in range(steps):
        p.step(u)


# --- conservation and dissipation ---------------------------------------------------------------
def test_double_pendulum_energy_is_conserved_with_rk4(make_double_pendulum, total_energy):
    """No damping, no limits: RK4 at 1 ms drifts less than 1e-6 of the energy over 10 s."""
    plant = make_double_pendulum()
    p = physics(plant, integrator="rk4", initial_positions=[1.3, -0.7], initial_velocities=[0.5, -1.5])
    e0 = total_energy(plant, p.q, p.v)
    drift = 0.0
    for _ in range(100):
        run(p, 100)
        drift = max(drift, abs(total_energy(plant, p.q, p.v) - e0))
    assert p.time_ns == 10_000_000_000
    assert drift / abs(e0) < 1e-6, f"relative energy drift {drift / abs(e0):.2e}"


def test_double_pendulum_semi_implicit_euler_energy_is_bounded(make_double_pendulum, total_energy):
    """Symplectic Euler does not conserve energy exactly but keeps it bounded (no secular drift)."""
    plant = make_double_pendulum()
    p = physics(plant, initial_positions=[1.3, -0.7], initial_velocities=[0.5, -1.5])
    e0 = total_energy(plant, p.q, p.v)
    errors = []
    for _ in range(100):
        run(p, 100)
        errors.append(total_energy(plant, p.q, p.v) - e0)
    errors = np.abs(errors)
    assert errors.max() / abs(e0) < 3e-2
    assert errors[50:].max() < 3 * errors[:50].max()


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_damping_dissipates_exactly_its_power(make_double_pendulum, total_energy, integrator):
    """E(t) − E(0) = −∫ vᵀ D v dt for joint damping D (the only non-conservative force)."""
    d = 0.3
    plant = make_double_pendulum(damping=d)
    p = physics(plant, integrator=integrator, initial_positions=[1.0, 0.5], initial_velocities=[0.0, 2.0])
    e0 = total_energy(plant, p.q, p.v)
    h, dissipated, power = 1e-3, 0.0, d * p.v @ p.v
    for _ in range(3000):
        p.step(None)
        new = d * p.v @ p.v
        dissipated += 0.5 * h * (power + new)
        power = new
    change = total_energy(plant, p.q, p.v) - e0
    assert change < 0
    assert change == pytest.approx(-dissipated, rel=5e-3 if integrator == "semi_implicit_euler" else 1e-5)


# --- free bodies ------------------------------------------------------------------------------------
def free_body():
    plant = MultibodyPlant(0.0)
    plant.AddRigidBody("body", SpatialInertia.MakeFromCentralInertia(3.0, np.zeros(3),
                                                                     RotationalInertia(0.05, 0.08, 0.11)))
    plant.Finalize()
    return plant


def test_free_fall_matches_the_closed_form():
    """p(t) = p0 + v0 t + ½ g t² with RK4; semi-implicit Euler hits its own closed form
    p0 + v0 t + ½ g t (t + h) exactly; a spin about a principal axis stays a rotation at constant rate."""
    plant = free_body()
    R0 = RotationMatrix(RollPitchYaw(0.2, -0.3, 0.4))
    w = 2.5 * R0.matrix()[:, 2]                       # about the body's principal z axis, in W
    q0 = np.concatenate([R0.ToQuaternion().wxyz(), [0.1, -0.2, 1.5]])
    v0 = np.concatenate([w, [0.4, 0.3, 2.0]])
    g, t, h = np.array([0, 0, -G]), 1.0, 1e-3
    for integrator in INTEGRATORS:
        p = physics(plant, integrator=integrator, initial_positions=q0.tolist(), initial_velocities=v0.tolist())
        run(p, 1000)
        drop = 0.5 * g * t * (t + (h if integrator == "semi_implicit_euler" else 0.0))
        np.testing.assert_allclose(p.q[4:], q0[4:] + v0[3:] * t + drop, rtol=0, atol=1e-12)
        np.testing.assert_allclose(p.v, np.concatenate([w, v0[3:] + g * t]), rtol=0, atol=1e-12)
        R = RotationMatrix.MakeZRotation(2.5 * t)
        expected = R0.multiply(R).ToQuaternion().wxyz()
        quaternion = p.q[:4] * np.sign(p.q[0] * expected[0])
        np.testing.assert_allclose(quaternion, expected, atol=1e-9 if integrator == "rk4" else 1e-6)
        assert np.linalg.norm(p.q[:4]) == pytest.approx(1.0, abs=1e-15)


def test_torque_free_tumbling_conserves_momentum_and_energy():
    """A general spin (not about a principal axis): L_W = R I Rᵀ ω and the kinetic energy stay constant."""
    plant = free_body()
    I_B = np.diag([0.05, 0.08, 0.11])
    q0 = np.concatenate([RotationMatrix(RollPitchYaw(0.5, 0.1, -0.7)).ToQuaternion().wxyz(), np.zeros(3)])
    v0 = np.array([3.0, -2.0, 1.0, 0, 0, 0])
    p = physics(plant, integrator="rk4", initial_positions=q0.tolist(), initial_velocities=v0.tolist())

    def momentum(q, v):
        R = Quaternion(q[:4] / np.linalg.norm(q[:4])).rotation()
        return R @ I_B @ R.T @ v[:3], 0.5 * v[:3] @ R @ I_B @ R.T @ v[:3]

    L0, T0 = momentum(p.q, p.v)
    run(p, 2000)
    L, T = momentum(p.q, p.v)
    np.testing.assert_allclose(L, L0, rtol=0, atol=1e-8 * np.linalg.norm(L0))
    assert T == pytest.approx(T0, rel=1e-8)


# --- contact with the ground ------------------------------------------------------------------------
def contact(mu=0.5, **extra):
    return {"enabled": True, "ground": {"friction": {"static": mu, "dynamic": mu}}, **extra}


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_dropped_box_comes_to_rest_with_normal_force_mg(make_box, integrator):
    m = 2.0
    plant = make_box(mass=m)
    p = physics(plant, integrator=integrator, initial_positions=[1, 0, 0, 0, 0, 0, 0.3], contact=contact())
    run(p, 3000)
    assert np.abs(p.v).max() < 1e-3
    results = p.contact_results()
    assert results.num_point_pair_contacts() == 4                     # the four bottom corners
    k = SimConfig().contact.stiffness
    normal = 0.0
    for i in range(4):
        info = results.point_pair_contact_info(i)
        pair = info.point_pair()
        assert (int(info.bodyA_index()), int(info.bodyB_index())) == (int(plant.GetBodyByName("box").index()), 0)
        assert (pair.id_A, pair.id_B) == ("box_collision", "ground")
        np.testing.assert_allclose(pair.nhat_BA_W, [0, 0, 1])
        np.testing.assert_allclose(pair.p_WCb - pair.p_WCa, pair.depth * pair.nhat_BA_W, atol=1e-15)
        np.testing.assert_allclose(info.contact_point(), 0.5 * (pair.p_WCa + pair.p_WCb))
        assert pair.p_WCb[2] == 0.0 and pair.depth == pytest.approx(m * G / 4 / k, rel=0.05)
        assert abs(info.separation_speed()) < 1e-3 and info.slip_speed() < 1e-3
        normal -= info.contact_force()[2]                                # f_Bc_W is the force on the ground
    assert normal == pytest.approx(m * G, rel=0.01)
    assert p.q[6] == pytest.approx(0.025 - m * G / 4 / k, rel=1e-3)


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("mu_box, mu_ground", [(0.5, 0.5), (0.4, 0.8)])
def test_sliding_box_stops_after_v2_over_2_mu_g(make_box, integrator, mu_box, mu_ground):
    """Stopping distance v0²/(2 μ g) with μ = 2 μ_box μ_ground / (μ_box + μ_ground) (Drake's rule)."""
    plant = make_box(mu=mu_box)
    p = physics(plant, integrator=integrator, initial_positions=[1, 0, 0, 0, 0, 0, 0.025], contact=contact(mu_ground))
    run(p, 500)                                                              # settle
    v0, x0 = 2.0, p.q[4]
    p.set_state(p.q, [0, 0, 0, v0, 0, 0], p.steps)
    run(p, 1500)
    mu = 2 * mu_box * mu_ground / (mu_box + mu_ground)
    assert abs(p.v[3]) < 1e-3
    assert p.q[4] - x0 == pytest.approx(v0 ** 2 / (2 * mu * G), rel=0.02)


def test_friction_creeps_below_the_stiction_tolerance_on_an_incline(make_box):
    """The regularized friction's known limit: on a slope with tan θ < μ a box creeps at the speed s with
    μ(s) = μ·x(2 − x) = tan θ, x = s/vₛ: about a quarter of the stiction tolerance here."""
    theta = 0.2
    plant = make_box(gravity=[G * np.sin(theta), 0, -G * np.cos(theta)])
    p = physics(plant, initial_positions=[1, 0, 0, 0, 0, 0, 0.025], contact=contact(0.5))
    run(p, 3000)
    speed = p.v[3]
    assert 0 < speed < SimConfig().contact.stiction_tolerance
    x = speed / SimConfig().contact.stiction_tolerance
    assert 0.5 * x * (2 - x) == pytest.approx(np.tan(theta), rel=1e-6)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_light_links_on_the_ground_do_not_chatter(iiwa_urdf, integrator):
    """The iiwa's wrist (joint 7: 0.001 kg·m²) resting on a table under zero torque (the arm also lands
    on its joint 2 limit on the way). Explicit friction at 1 ms made the wrist flip between ±8 rad/s
    every few steps; bounded (RK4) or implicit (Euler) contact damping keeps it smooth."""
    p = physics(parsed(iiwa_urdf), integrator=integrator, initial_positions=[0, 1.2, 0, -1.6, 0, 1.4, 0],
                contact={"enabled": True, "ground": {"height": 0.037}})
    u, wrist = np.zeros(7), []
    for _ in range(3000):
        p.step(u)
        wrist.append(p.v[6])
    assert p.contact.point_contact.num_contacts > 0
    # the flips were ±8 rad/s; what is left is the wrist's slow roll on the table, decaying (≈ 0.05 rad/s)
    assert np.abs(wrist[-1000:]).max() < 0.1
    assert np.abs(np.diff(wrist[-1000:])).max() < 1e-3         # smooth: no step-to-step flips


# --- the iiwa -----------------------------------------------------------------------------------------
def test_iiwa_hanging_under_gravity_with_damping_settles(iiwa_urdf, total_energy):
    """Mounted upside down (gravity along +z) with zero torque, the joint damping (0.5 N·m·s/rad) takes
    the energy out monotonically and the arm comes to rest where gravity exerts no torque."""
    plant = parsed(iiwa_urdf, gravity=[0, 0, G])
    p = physics(plant, integrator="rk4", initial_positions=[0.4, 0.9, -0.5, -1.0, 0.6, 0.8, 0.3])
    u = np.zeros(7)
    energies = [total_energy(plant, p.q, p.v)]
    for _ in range(2000):                     # 200 s: the slowest mode decays as exp(−t·d/2I) ≈ exp(−t/20 s)
        run(p, 100, u)
        energies.append(total_energy(plant, p.q, p.v))
    assert np.all(np.diff(energies) <= 1e-9)
    assert np.abs(p.v).max() < 1e-3
    tau_g = np.zeros(7)
    plant.kernels().gravity(p.q, tau_g)
    assert np.abs(tau_g).max() < 0.05
    assert np.all(p.q > plant.GetPositionLowerLimits()) and np.all(p.q < plant.GetPositionUpperLimits())


def test_pydrake_matches_the_iiwa_under_a_torque_profile(iiwa_urdf):
    """The same URDF in pydrake's MultibodyPlant, the same zero-order-hold torque profile for 1 s:
    our RK4 at 1 ms against Drake's error-controlled RK5 at accuracy 1e-13 within 1e-6, and our
    semi-implicit Euler (joint damping implicit) against Drake's discrete plant at 1 ms to rounding."""
    pydrake = pytest.importorskip("pydrake.all", reason="pydrake is not installed")
    from pydrake.systems.analysis import ResetIntegratorFromFlags
    plant = parsed(iiwa_urdf)
    q0 = np.array([0.1, 0.5, -0.2, -1.2, 0.3, 0.8, 0.0])
    k = plant.kernels()
    tau_g, M = np.zeros(7), np.zeros((7, 7))
    k.gravity(q0, tau_g)
    k.mass_matrix(q0, M)
    h, steps = 1e-3, 1000

    def torque(i):        # gravity compensation at q0 plus about 1 rad/s² of sinusoids per joint
        return -tau_g + np.diag(M) * np.sin(1.3 * np.arange(1, 8) * i * h + np.arange(7))

    def drake(scheme, accuracy=None):
        dp = pydrake.MultibodyPlant(h if scheme == "discrete" else 0.0)
        pydrake.Parser(dp).AddModels(str(iiwa_urdf))
        dp.Finalize()
        context = dp.CreateDefaultContext()
        dp.SetPositions(context, q0)
        simulator = pydrake.Simulator(dp, context)
        if scheme != "discrete":
            ResetIntegratorFromFlags(simulator, scheme, h)
        if accuracy:
            simulator.get_mutable_integrator().set_target_accuracy(accuracy)
        simulator.Initialize()
        for i in range(steps):
            dp.get_actuation_input_port().FixValue(context, torque(i))
            simulator.AdvanceTo((i + 1) * h)
        return dp.GetPositions(context), dp.GetVelocities(context)

    for integrator, scheme, accuracy, tolerance in (("rk4", "runge_kutta5", 1e-13, 1e-6),
                                                   ("semi_implicit_euler", "discrete", None, 1e-12)):
        p = physics(plant, integrator=integrator, initial_positions=q0.tolist())
        for i in range(steps):
            p.step(torque(i))
        q, v = drake(scheme, accuracy)
        assert np.abs(p.q - q).max() < tolerance, integrator
        assert np.abs(p.v - v).max() < 100 * tolerance, integrator
        assert np.all(p.q > plant.GetPositionLowerLimits()) and np.all(p.q < plant.GetPositionUpperLimits())


# --- joint limits and effort limits ------------------------------------------------------------------
def limited_arm(lower=-0.5, upper=0.5, effort=5.0):
    """One link (I = 0.02 kg·m² about the joint) on a limited revolute joint, no gravity, one actuator."""
    plant = MultibodyPlant(0.0)
    link = plant.AddRigidBody("link", SpatialInertia.MakeFromCentralInertia(1.0, [0.1, 0, 0],
                                                                            RotationalInertia(0.01, 0.01, 0.01)))
    joint = plant.AddJoint(RevoluteJoint("pin", plant.world_frame(), link.body_frame(), [0, 0, 1], lower, upper))
    plant.AddJointActuator("motor", joint, effort)
    plant.mutable_gravity_field().set_gravity_vector([0, 0, 0])
    plant.Finalize()
    return plant


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_joint_limit_is_a_stiff_one_sided_spring(integrator):
    k = 2000.0
    p = physics(limited_arm(), integrator=integrator, joint_limits={"stiffness": k, "damping": 5.0})
    run(p, 2000, np.array([4.0]))
    assert p.q[0] == pytest.approx(0.5 + 4.0 / k, abs=1e-9)                # k (upper − q) + τ = 0
    run(p, 2000, np.array([-4.0]))
    assert p.q[0] == pytest.approx(-0.5 - 4.0 / k, abs=1e-9)
    # Pulled away from the limit, the spring lets go: it never pulls the joint into the limit.
    p.set_state([-0.5 - 4.0 / k], [2.0])
    p.step(np.array([0.0]))
    assert p.v[0] >= 2.0 - 1e-12


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_automatic_limit_gains_are_stable_at_full_effort(iiwa_urdf, integrator):
    """Every iiwa joint driven into its upper limit at its effort limit settles (no blow-up)."""
    plant = parsed(iiwa_urdf)
    p = physics(plant, integrator=integrator)
    effort = plant.GetEffortUpperLimits()
    run(p, 3000, effort)
    assert np.abs(p.v).max() < 1e-2
    assert np.all(p.q > plant.GetPositionUpperLimits() - 0.1)


def test_effort_limits_clamp_the_applied_torque():
    p = physics(limited_arm(effort=5.0), joint_limits={"enabled": False})
    p.step(np.array([40.0]))
    assert p.u_commanded[0] == p.u_applied[0] == 5.0
    assert p.v[0] == pytest.approx(1e-3 * 5.0 / 0.02)                        # I = 0.01 + 1.0 · 0.1²
    p.step(np.array([-40.0]))
    assert p.u_applied[0] == -5.0


def test_disabled_actuator_applies_nothing():
    p = physics(limited_arm(), joint_limits={"enabled": False})
    p.actuator_enabled[0] = 0.0
    p.step(np.array([3.0]))
    assert (p.u_commanded[0], p.u_applied[0], p.v[0]) == (3.0, 0.0, 0.0)


def test_time_is_an_integer_count_of_steps():
    p = physics(limited_arm(), time_step=0.0005)
    run(p, 3, np.zeros(1))
    assert (p.steps, p.time_ns) == (3, 1_500_000)
    assert isinstance(p.time_ns, int)


def test_step_rejects_bad_actuation():
    p = physics(limited_arm())
    with pytest.raises(ValueError, match=r"u must have shape \(1,\)"):
        p.step(np.zeros(2))
    with pytest.raises(ValueError, match="float64"):
        p.step(np.zeros(1, dtype=np.float32))


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("with_contact", [False, True])
def test_a_step_allocates_nothing(iiwa_urdf, integrator, with_contact):
    plant = parsed(iiwa_urdf)
    sim = {"integrator": integrator, "initial_positions": [0, 1.4, 0, -0.6, 0, 1.2, 0]}
    if with_contact:
        sim["contact"] = {"enabled": True, "ground": {"height": 0.35}}
    p = physics(plant, **sim)
    u = np.zeros(7)
    run(p, 100, u)
    if with_contact:
        assert p.contact.point_contact.num_contacts > 0

    work, frame = net_and_peak(lambda: p.step(u))
    assert work == frame, f"1000 steps allocated {work} (net, peak) bytes; the call alone {frame}"


def test_bad_initial_state_is_a_config_error(iiwa_urdf):
    from drivers.core.schema import ConfigError
    with pytest.raises(ConfigError, match=r"sim.initial_positions: must have 7 entries"):
        physics(parsed(iiwa_urdf), initial_positions=[0.0] * 6)
    with pytest.raises(ConfigError, match=r"sim.joint_limits.stiffness: must be a number or a list of 7"):
        physics(parsed(iiwa_urdf), joint_limits={"stiffness": [1.0, 2.0]})
    with pytest.raises(ConfigError, match=r"sim.initial_positions: the quaternion .* is zero"):
        physics(free_body(), initial_positions=[0.0] * 7)
