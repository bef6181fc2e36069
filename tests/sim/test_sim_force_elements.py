"""The model's force elements in the simulated plant (drivers.sim._forces): the compiled forces equal the
facade's, a step's acceleration is the facade's forward dynamics, a passive spring–mass conserves energy
and oscillates at √(k/m), MuJoCo's engine agrees with ours, and a step allocates nothing."""
import numpy as np
import pytest
from drivers.sim._forces import ForceElements

import dynamics_cy as dc
from drivers.sim import Physics, load_sim_config
from drivers.sim.physics import make_physics
from tests.alloc import net_and_peak
from tests.force_models import context_at, namespace, random_state, three_bodies

OURS = namespace("ours")
INTEGRATORS = ["semi_implicit_euler", "rk4"]


def physics(plant, **sim):
    return Physics(plant, load_sim_config(sim))


def passive_model(bushing=True):
    """three_bodies without the door hinge (its friction, 3 N·m over 1 mm/s, is too stiff for an explicit
    1 ms step)."""
    return three_bodies(OURS, bushing=bushing, hinge=False)


@pytest.mark.parametrize("bushing", [False, True])
def test_compiled_forces_equal_the_facades(bushing):
    plant = three_bodies(OURS, bushing=bushing)
    elements = ForceElements(plant, plant.kernels())
    out = np.zeros(plant.num_velocities())
    for seed in range(4):
        q, v = random_state(plant, seed)
        ctx = context_at(plant, q, v)
        forces = dc.MultibodyForces(plant)
        for i in range(1, plant.num_force_elements()):
            plant.get_force_element(dc.ForceElementIndex(i)).CalcAndAddForceContribution(ctx, forces)
        elements.generalized(q, v, out)
        np.testing.assert_allclose(out, plant.CalcGeneralizedForces(ctx, forces), rtol=0, atol=1e-12)


def facade_rate(plant, q, v):
    ctx = context_at(plant, q, v)
    return plant.MapVelocityToQDot(ctx, v), plant.CalcForwardDynamics(ctx, np.zeros(plant.num_velocities()))


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_a_step_integrates_the_facades_forward_dynamics(integrator):
    """One step from a random state equals the same integrator run on CalcForwardDynamics (which has
    every force element) by hand."""
    plant = passive_model()
    q0, v0 = random_state(plant, 3)
    p = physics(plant, integrator=integrator, initial_positions=q0.tolist(), initial_velocities=v0.tolist())
    h = p.config.time_step
    p.step(None)
    if integrator == "semi_implicit_euler":
        v1 = v0 + h * facade_rate(plant, q0, v0)[1]
        q1 = q0 + h * plant.MapVelocityToQDot(context_at(plant, q0, v1), v1)
    else:
        k = [facade_rate(plant, q0, v0)]
        for w in (0.5 * h, 0.5 * h, h):
            k.append(facade_rate(plant, q0 + w * k[-1][0], v0 + w * k[-1][1]))
        q1 = q0 + h / 6 * (k[0][0] + 2 * k[1][0] + 2 * k[2][0] + k[3][0])
        v1 = v0 + h / 6 * (k[0][1] + 2 * k[1][1] + 2 * k[2][1] + k[3][1])
    s = plant.get_joint(dc.JointIndex(2)).position_start()          # c's free joint: renormalized quaternion
    q1[s:s + 4] /= np.linalg.norm(q1[s:s + 4])
    np.testing.assert_allclose(p.v, v1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.q, q1, rtol=0, atol=1e-14)


def spring_mass(m=2.0, k=50.0, x0=0.1, revolute=False):
    """A mass on a prismatic joint (or a rod's inertia on a revolute joint) with a spring to x0; no gravity."""
    plant = dc.MultibodyPlant(0.0)
    body = plant.AddRigidBody("m", dc.SpatialInertia(m, [0, 0, 0], dc.UnitInertia(1.0, 1.0, 1.0)))
    plant.mutable_gravity_field().set_gravity_vector([0, 0, 0])
    kind = dc.RevoluteJoint if revolute else dc.PrismaticJoint
    j = plant.AddJoint(kind("j", plant.world_frame(), body.body_frame(), [0, 0, 1]))
    plant.AddForceElement((dc.RevoluteSpring if revolute else dc.PrismaticSpring)(j, x0, k))
    plant.Finalize()
    return plant, m                   # the revolute joint's inertia: m · 1 m² about z


def crossing_period(x, h):
    """The mean period between upward zero crossings of x (linear interpolation)."""
    up = [i + x[i] / (x[i] - x[i + 1]) for i in range(len(x) - 1) if x[i] < 0 <= x[i + 1]]
    return (up[-1] - up[0]) / (len(up) - 1) * h


@pytest.mark.parametrize("revolute", [False, True])
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_spring_mass_oscillates_at_the_closed_form_frequency_and_keeps_its_energy(integrator, revolute):
    """x(t) = x0 + A cos ωt, ω = √(k/m) (rotational: I = m·1 kg·m²). RK4 keeps E = ½ m v² + ½ k (x − x0)²
    to 1e-9 and the period to 1e-8; symplectic Euler keeps E within O(ωh) with no drift and oscillates at
    its discrete frequency, cos(ω_d h) = 1 − (ωh)²/2."""
    k, x0 = 50.0, 0.1
    plant, inertia = spring_mass(k=k, x0=x0, revolute=revolute)
    p = physics(plant, integrator=integrator, initial_positions=[x0 + 0.2], joint_limits={"enabled": False})
    h, omega = p.config.time_step, np.sqrt(k / inertia)
    x, energy = [], []
    for _ in range(20000):                                          # 20 s, ~32 periods
        p.step(None)
        x.append(p.q[0] - x0)
        energy.append(0.5 * inertia * p.v[0] ** 2 + 0.5 * k * x[-1] ** 2)
    end = context_at(plant, p.q, p.v)                               # the plant's energy is the same
    assert plant.CalcKineticEnergy(end) + plant.CalcPotentialEnergy(end) == pytest.approx(energy[-1], rel=1e-12)
    e0 = 0.5 * k * 0.2 ** 2
    period = crossing_period(np.array(x), h)
    if integrator == "rk4":
        assert np.max(np.abs(np.array(energy) - e0)) / e0 < 1e-9
        assert period == pytest.approx(2 * np.pi / omega, rel=1e-8)
    else:
        error = np.abs(np.array(energy) - e0) / e0
        assert error.max() < 2 * omega * h and error[10000:].max() < 1.1 * error[:10000].max()
        assert period == pytest.approx(2 * np.pi * h / np.arccos(1 - (omega * h) ** 2 / 2), rel=1e-5)


def test_free_body_on_a_spring_damper_conserves_energy_without_damping_and_dissipates_with_it():
    """A free body hung from a world point by a LinearSpringDamper under gravity: RK4 keeps the energy
    (kinetic + gravity + spring) to 1e-8 without damping; with damping c the energy falls, at the rate
    CalcNonConservativePower = −c ℓ̇² (checked by the trapezoid rule over the run)."""
    def hung(c):
        plant = dc.MultibodyPlant(0.0)
        b = plant.AddRigidBody("b", dc.SpatialInertia(1.5, [0.05, 0, 0], dc.UnitInertia(0.2, 0.3, 0.25)))
        plant.AddForceElement(dc.LinearSpringDamper(plant.world_body(), [0, 0, 1.0], b, [0.1, 0.0, 0.05], 0.5, 80.0, c))
        plant.Finalize()
        return plant, b

    for c in (0.0, 0.8):
        plant, b = hung(c)
        ctx = plant.CreateDefaultContext()
        plant.SetFreeBodyPose(ctx, b, dc.RigidTransform(dc.RollPitchYaw(0.3, 0.2, -0.1), [0.2, 0.1, 0.2]))
        plant.SetFreeBodySpatialVelocity(b, dc.SpatialVelocity([0.5, -0.3, 0.2], [0.3, 0.0, -0.2]), ctx)
        p = physics(plant, integrator="rk4", initial_positions=plant.GetPositions(ctx).tolist(),
                    initial_velocities=plant.GetVelocities(ctx).tolist())

        def energy_and_power():
            s = context_at(plant, p.q, p.v)
            return plant.CalcKineticEnergy(s) + plant.CalcPotentialEnergy(s), plant.CalcNonConservativePower(s)

        e0, pnc0 = energy_and_power()
        dissipated = 0.0
        for _ in range(3000):
            p.step(None)
            e, pnc = energy_and_power()
            dissipated += 0.5 * p.config.time_step * (pnc0 + pnc)
            pnc0 = pnc
        if c == 0.0:
            assert abs(e - e0) / abs(e0) < 1e-8
        else:
            assert e < e0 and (e - e0) == pytest.approx(dissipated, rel=1e-4)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_a_step_with_force_elements_allocates_nothing(integrator):
    plant = passive_model()
    q0, v0 = random_state(plant, 1)
    p = physics(plant, integrator=integrator, initial_positions=q0.tolist(), initial_velocities=v0.tolist())
    assert p.stepper.elements.acts_on_bodies
    p.step(None)
    work, frame = net_and_peak(lambda: p.step(None))
    assert work == frame, f"1000 steps allocated {work} (net, peak) bytes; the call alone {frame}"


def test_an_element_the_simulator_cannot_apply_is_refused():
    class Custom(dc.ForceElement):
        pass

    plant = dc.MultibodyPlant(0.0)
    plant.AddRigidBody("b", dc.SpatialInertia(1.0, [0, 0, 0], dc.UnitInertia(0.1, 0.1, 0.1)))
    plant.AddForceElement(Custom(dc.default_model_instance()))
    plant.Finalize()
    with pytest.raises(NotImplementedError, match="does not apply Custom"):
        physics(plant)


def test_a_bushing_at_gimbal_lock_stops_the_step():
    plant = dc.MultibodyPlant(0.0)
    b = plant.AddRigidBody("b", dc.SpatialInertia(1.0, [0, 0, 0], dc.UnitInertia(0.1, 0.1, 0.1)))
    plant.AddForceElement(dc.LinearBushingRollPitchYaw(plant.world_frame(), b.body_frame(), [1.0] * 3, [0.1] * 3,
                                                       [1.0] * 3, [0.1] * 3))
    plant.Finalize()
    q = np.r_[dc.RollPitchYaw(0, np.pi / 2, 0).ToQuaternion().wxyz(), 0, 0, 0]
    p = physics(plant, initial_positions=q.tolist())
    with pytest.raises(dc.GimbalLockError, match="gimbal-lock"):
        p.step(None)


# --- MuJoCo ------------------------------------------------------------------------------------------
def test_mujoco_applies_the_same_forces():
    """The passive model on MuJoCo's Euler and on our semi-implicit Euler, both taking the elements' forces
    at each step's start: the same trajectory over 0.5 s to within the engines' different quaternion
    integration, a second-order difference (it shrinks 4× when h halves), while the elements' forces are
    of order 100 N."""
    mujoco = pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'hilstack[mujoco]')")
    assert mujoco
    plant = passive_model()
    q0, v0 = random_state(plant, 5)
    tau_e = np.zeros(plant.num_velocities())
    ForceElements(plant, plant.kernels()).generalized(q0, v0, tau_e)
    assert np.abs(tau_e).max() > 50.0
    gaps = []
    for h in (1e-3, 5e-4):
        sim = {"time_step": h, "initial_positions": q0.tolist(), "initial_velocities": v0.tolist(),
               "joint_limits": {"enabled": False}}
        ours = make_physics(plant, load_sim_config(sim))
        theirs = make_physics(plant, load_sim_config({**sim, "engine": "mujoco", "mujoco": {"integrator": "euler"}}))
        for _ in range(round(0.5 / h)):
            ours.step(None)
            theirs.step(None)
        gaps.append(max(np.abs(theirs.q - ours.q).max(), np.abs(theirs.v - ours.v).max() * h))
    assert gaps[0] < 1e-6 and 3.5 < gaps[0] / gaps[1] < 4.5, gaps
    (net, peak), frame = net_and_peak(lambda: theirs.step(None))
    assert net <= 32 and peak < 1024, f"1000 steps allocated {net, peak} (net, peak) bytes; the call alone {frame}"
