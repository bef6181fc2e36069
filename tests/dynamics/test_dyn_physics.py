"""The algorithms checked against physics: closed forms, identities, finite differences, energy."""
import numpy as np
import pytest

from dynamics_cy import (
    BallRpyJoint,
    FixedOffsetFrame,
    JacobianWrtVariable,
    MultibodyForces,
    MultibodyPlant,
    PlanarJoint,
    PrismaticJoint,
    RevoluteJoint,
    RigidTransform,
    RollPitchYaw,
    RotationMatrix,
    SpatialForce,
    SpatialInertia,
    UnitInertia,
    WeldJoint,
)
from tests.plants import double_pendulum

G = 9.81
Y = np.array([0.0, 1.0, 0.0])


def pendulum(m=2.0, l=0.7, I_cm=(0.1, 0.2, 0.3)):
    plant = MultibodyPlant(0.0)
    M = SpatialInertia.MakeFromCentralInertia(m, [0, 0, -l], SpatialInertia(1, np.zeros(3), UnitInertia(
        I_cm[0], I_cm[1], I_cm[2])).CalcRotationalInertia())
    link = plant.AddRigidBody("link", M)
    plant.AddJoint(RevoluteJoint("pin", plant.world_frame(), link.body_frame(), Y))
    plant.Finalize()
    return plant


def every_joint_tree():
    """A floating base with a revolute, prismatic, ball, planar and weld joint in a branched tree,
    with offsets on both sides of the joints and full inertias."""
    plant = MultibodyPlant(0.0)
    rng = np.random.default_rng(7)

    def body(name):
        m = rng.uniform(0.5, 3)
        G = UnitInertia.SolidBox(*rng.uniform(0.05, 0.4, 3)).ReExpress(RotationMatrix(RollPitchYaw(rng.normal(size=3))))
        return plant.AddRigidBody(name, SpatialInertia.MakeFromCentralInertia(
            m, rng.normal(size=3) * 0.1, G * m))

    def offset(name, frame):
        return plant.AddFrame(FixedOffsetFrame(name, frame, RigidTransform(RollPitchYaw(rng.normal(size=3)),
                                                                           rng.normal(size=3) * 0.2)))

    base, a, b, c, d, e, f = (body(n) for n in ("base", "a", "b", "c", "d", "e", "f"))
    plant.AddJoint(RevoluteJoint("rev", offset("Fa", base.body_frame()), offset("Ma", a.body_frame()),
                                 rng.normal(size=3), damping=0.3))
    plant.AddJoint(PrismaticJoint("pri", offset("Fb", a.body_frame()), b.body_frame(), rng.normal(size=3),
                                  damping=0.2))
    plant.AddJoint(BallRpyJoint("ball", offset("Fc", base.body_frame()), offset("Mc", c.body_frame()),
                                damping=0.1))
    plant.AddJoint(PlanarJoint("planar", offset("Fd", c.body_frame()), offset("Md", d.body_frame()),
                               damping=[0.1, 0.2, 0.3]))
    plant.AddJoint(WeldJoint("weld", offset("Fe", d.body_frame()), e.body_frame(),
                             RigidTransform(RollPitchYaw(0.1, 0.2, 0.3), [0.1, 0, 0])))
    plant.AddJoint(RevoluteJoint("after_weld", offset("Ff", e.body_frame()), f.body_frame(), [0, 0, 1.0]))
    plant.Finalize()
    return plant


def random_state(plant, rng, ctx=None):
    """A random (q, v) (unit quaternions), also set in `ctx` when given."""
    q = plant.GetDefaultPositions() + rng.normal(size=plant.num_positions()) * 0.4
    for j in plant._joints:
        if j.type_name() == "quaternion_floating":
            s = j.position_start()
            q[s:s + 4] /= np.linalg.norm(q[s:s + 4])
    v = rng.normal(size=plant.num_velocities())
    if ctx is not None:
        plant.SetPositions(ctx, q)
        plant.SetVelocities(ctx, v)
    return q, v


MODELS = {"pendulum": pendulum, "double_pendulum": double_pendulum, "every_joint_tree": every_joint_tree}


@pytest.fixture(params=sorted(MODELS) + ["iiwa"])
def model(request, iiwa):
    return iiwa if request.param == "iiwa" else MODELS[request.param]()


def test_pendulum_closed_form():
    m, l, Iyy = 2.0, 0.7, 0.2
    plant = pendulum(m, l)
    ctx = plant.CreateDefaultContext()
    for theta in (-2.0, -0.3, 0.0, 0.9, 2.5):
        plant.SetPositions(ctx, [theta])
        assert plant.CalcMassMatrix(ctx)[0, 0] == pytest.approx(Iyy + m * l * l, rel=1e-14)
        assert plant.CalcGravityGeneralizedForces(ctx)[0] == pytest.approx(-m * G * l * np.sin(theta), abs=1e-12)
        assert plant.CalcPotentialEnergy(ctx) == pytest.approx(-m * G * l * np.cos(theta), abs=1e-12)


def test_double_pendulum_closed_form():
    m1, m2, l1, l2 = 1.5, 0.8, 0.6, 0.45
    plant = double_pendulum(m1, m2, l1, l2)
    ctx = plant.CreateDefaultContext()
    rng = np.random.default_rng(1)
    for _ in range(10):
        (t1, t2), (w1, w2) = rng.uniform(-3, 3, 2), rng.normal(size=2)
        plant.SetPositions(ctx, [t1, t2])
        plant.SetVelocities(ctx, [w1, w2])
        c2 = np.cos(t2)
        M = np.array([[(m1 + m2) * l1**2 + m2 * l2**2 + 2 * m2 * l1 * l2 * c2, m2 * l2**2 + m2 * l1 * l2 * c2],
                      [m2 * l2**2 + m2 * l1 * l2 * c2, m2 * l2**2]])
        h = m2 * l1 * l2 * np.sin(t2)
        Cv = np.array([-h * (2 * w1 * w2 + w2**2), h * w1**2])
        tau_g = np.array([-(m1 + m2) * G * l1 * np.sin(t1) - m2 * G * l2 * np.sin(t1 + t2),
                          -m2 * G * l2 * np.sin(t1 + t2)])
        np.testing.assert_allclose(plant.CalcMassMatrix(ctx), M, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(plant.CalcBiasTerm(ctx), Cv, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(plant.CalcGravityGeneralizedForces(ctx), tau_g, rtol=1e-13, atol=1e-13)


def test_mass_matrix_symmetric_positive_definite_and_equal_to_inverse_dynamics_columns(model):
    rng = np.random.default_rng(2)
    ctx = model.CreateDefaultContext()
    for _ in range(5):
        q, v = random_state(model, rng, ctx)
        M = model.CalcMassMatrix(ctx)
        np.testing.assert_allclose(M, M.T, atol=1e-13 * np.abs(M).max())
        assert np.linalg.eigvalsh(M).min() > 0
        np.testing.assert_allclose(model.CalcMassMatrixViaInverseDynamics(ctx), M, atol=1e-12 * np.abs(M).max())


def test_mass_matrix_kernel_from_q_alone_equals_the_facades(model):
    """The kernel computes each X_PB(q) inside its sweep (no positions(), no X_WB); the facade's reads
    them from the context: the same M, exactly symmetric, and the kernel leaves the workspace's
    kinematics as they were (the facade's next query is unaffected)."""
    rng = np.random.default_rng(4)
    ctx, k = model.CreateDefaultContext(), model.kernels()
    n = model.num_velocities()
    M, garbage = np.zeros((n, n)), np.full((n, n), np.nan)
    for _ in range(3):
        q, _ = random_state(model, rng, ctx)
        k.mass_matrix(q, garbage)           # every entry is written, structural zeros included
        k.mass_matrix(q, M)
        np.testing.assert_array_equal(garbage, M)
        np.testing.assert_array_equal(M, M.T)
        np.testing.assert_allclose(M, model.CalcMassMatrix(ctx), rtol=0, atol=1e-14 * np.abs(M).max())


def test_forward_dynamics_inverts_inverse_dynamics_with_applied_forces(model):
    rng = np.random.default_rng(3)
    ctx = model.CreateDefaultContext()
    q, v = random_state(model, rng, ctx)
    tau = rng.normal(size=model.num_velocities())
    vdot = model.CalcForwardDynamics(ctx, tau)
    forces = MultibodyForces(model)
    model.CalcForceElementsContribution(ctx, forces)
    np.testing.assert_allclose(model.CalcInverseDynamics(ctx, vdot, forces), tau, atol=1e-10)
    # and the kernels, with body forces on every body
    k = model.kernels()
    F = rng.normal(size=(model.num_bodies(), 6))
    vd, out = np.zeros(model.num_velocities()), np.zeros(model.num_velocities())
    k.forward_dynamics(q, v, tau, vd, F)
    k.inverse_dynamics(q, v, vd, out, F)
    np.testing.assert_allclose(out, tau, atol=1e-10)


def potential_along(model, ctx, q, dq_dt, h):
    model.SetPositions(ctx, q + h * dq_dt)
    return model.CalcPotentialEnergy(ctx)


def test_gravity_force_is_minus_gradient_of_potential(model):
    """τ_g · v = -dV/dt along q̇ = N(q) v, by central differences."""
    rng = np.random.default_rng(4)
    ctx = model.CreateDefaultContext()
    for _ in range(3):
        q, v = random_state(model, rng)
        model.SetPositions(ctx, q)
        tau_g = model.CalcGravityGeneralizedForces(ctx)
        qdot = model.MapVelocityToQDot(ctx, v)
        h = 1e-6
        dV = (potential_along(model, ctx, q, qdot, h) - potential_along(model, ctx, q, qdot, -h)) / (2 * h)
        assert tau_g @ v == pytest.approx(-dV, rel=1e-6, abs=1e-8)
        model.SetPositions(ctx, q)
        model.SetVelocities(ctx, v)
        assert model.CalcConservativePower(ctx) == pytest.approx(tau_g @ v, rel=1e-14, abs=1e-14)


def rk4_step(model, k, x, dt, tau, F):
    nq = model.num_positions()

    def f(x):
        q, v = x[:nq].copy(), x[nq:].copy()
        qd, vd = np.zeros(nq), np.zeros(model.num_velocities())
        k.map_velocity_to_qdot(q, v, qd)
        k.forward_dynamics(q, v, tau - model.GetDampingVector() * v, vd, F)
        return np.r_[qd, vd]

    k1 = f(x)
    k2 = f(x + dt / 2 * k1)
    k3 = f(x + dt / 2 * k2)
    k4 = f(x + dt * k3)
    return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def energy(model, ctx, x):
    model.SetPositionsAndVelocities(ctx, x)
    return model.CalcKineticEnergy(ctx) + model.CalcPotentialEnergy(ctx)


def test_energy_rate_equals_power_of_applied_forces(model):
    """dE/dt = τ·v - vᵀ(d∘v) + Σ F_Bo_W · V_WB, with E = KE + PE, by integrating ±dt with RK4."""
    rng = np.random.default_rng(5)
    ctx = model.CreateDefaultContext()
    k = model.kernels()
    q, v = random_state(model, rng)
    tau = rng.normal(size=model.num_velocities())
    F = rng.normal(size=(model.num_bodies(), 6))
    x0 = np.r_[q, v]
    dt = 1e-6
    E_plus = energy(model, ctx, rk4_step(model, k, x0, dt, tau, F))
    E_minus = energy(model, ctx, rk4_step(model, k, x0, -dt, tau, F))
    V = np.zeros((model.num_bodies(), 6))
    k.body_spatial_velocities(q, v, V)
    power = tau @ v - v @ (model.GetDampingVector() * v) + np.sum(F * V)
    assert (E_plus - E_minus) / (2 * dt) == pytest.approx(power, rel=1e-6, abs=1e-7)


def test_mass_matrix_rate_minus_twice_coriolis_is_skew(model):
    """vᵀ (½ Ṁ - C) v = 0, with Ṁ by central differences along q̇ = N v."""
    rng = np.random.default_rng(12)
    k = model.kernels()
    ctx = model.CreateDefaultContext()
    q, v = random_state(model, rng)
    model.SetPositions(ctx, q)
    qdot = model.MapVelocityToQDot(ctx, v)
    n, h = model.num_velocities(), 1e-6
    M_plus, M_minus, Cv = np.zeros((n, n)), np.zeros((n, n)), np.zeros(n)
    k.mass_matrix(q + h * qdot, M_plus)
    k.mass_matrix(q - h * qdot, M_minus)
    k.bias(q, v, Cv)
    Mdot = (M_plus - M_minus) / (2 * h)
    assert 0.5 * v @ Mdot @ v - v @ Cv == pytest.approx(0.0, abs=1e-7 * (1 + abs(v @ Cv)))


def test_jacobians_map_velocities_to_frame_velocities(model):
    rng = np.random.default_rng(6)
    ctx = model.CreateDefaultContext()
    q, v = random_state(model, rng, ctx)
    qdot = model.MapVelocityToQDot(ctx, v)
    frames = [model.get_frame(i) for i in range(model.num_frames())]
    W = model.world_frame()
    for frame_B in frames[1:]:
        p_BoBp = np.array([0.1, -0.2, 0.05])
        for frame_A, frame_E in ((W, W), (frames[-1], frames[len(frames) // 2])):
            Jv = model.CalcJacobianSpatialVelocity(ctx, JacobianWrtVariable.kV, frame_B, p_BoBp, frame_A, frame_E)
            Jq = model.CalcJacobianSpatialVelocity(ctx, JacobianWrtVariable.kQDot, frame_B, p_BoBp, frame_A,
                                                   frame_E)
            V = frame_B.CalcSpatialVelocity(ctx, frame_A, frame_E)
            R_EB = model.CalcRelativeTransform(ctx, frame_E, frame_B).rotation().matrix()
            V_Bp = V.Shift(R_EB @ p_BoBp).get_coeffs()
            np.testing.assert_allclose(Jv @ v, V_Bp, atol=1e-12)
            np.testing.assert_allclose(Jq @ qdot, V_Bp, atol=1e-12)


def test_translational_jacobian_matches_finite_differences_of_positions(model):
    rng = np.random.default_rng(8)
    ctx = model.CreateDefaultContext()
    q, v = random_state(model, rng)
    model.SetPositions(ctx, q)
    qdot = model.MapVelocityToQDot(ctx, v)
    frame = model.get_frame(model.num_frames() - 1)
    pts = np.array([[0.1, 0.0], [0.0, 0.3], [-0.2, 0.1]])
    J = model.CalcJacobianTranslationalVelocity(ctx, JacobianWrtVariable.kV, frame, pts, model.world_frame(),
                                                model.world_frame())
    h = 1e-6
    model.SetPositions(ctx, q + h * qdot)
    p_plus = model.CalcPointsPositions(ctx, frame, pts, model.world_frame())
    model.SetPositions(ctx, q - h * qdot)
    p_minus = model.CalcPointsPositions(ctx, frame, pts, model.world_frame())
    np.testing.assert_allclose(J @ v, ((p_plus - p_minus) / (2 * h)).T.reshape(-1), atol=1e-7)


def test_spatial_accelerations_are_time_derivatives_of_spatial_velocities(model):
    rng = np.random.default_rng(9)
    ctx = model.CreateDefaultContext()
    q, v = random_state(model, rng, ctx)
    vdot = rng.normal(size=model.num_velocities())
    A = [a.get_coeffs() for a in model.CalcSpatialAccelerationsFromVdot(ctx, vdot)]
    qdot = model.MapVelocityToQDot(ctx, v)
    h = 1e-6

    def velocities(s):
        # q(t) to second order: q̈ = d/dt (N v) = N v̇ + Ṅ v, with Ṅ v from a nested difference
        model.SetPositions(ctx, q + s * h * qdot)
        qdot_s = model.MapVelocityToQDot(ctx, v + s * h * vdot)
        model.SetPositions(ctx, q + s * h * (qdot + qdot_s) / 2)
        model.SetVelocities(ctx, v + s * h * vdot)
        return [b.EvalSpatialVelocityInWorld(ctx).get_coeffs() for b in model._bodies]

    Vp, Vm = velocities(1), velocities(-1)
    for b in range(model.num_bodies()):
        np.testing.assert_allclose(A[b], (Vp[b] - Vm[b]) / (2 * h), atol=2e-6)


def test_momentum_of_a_free_body_changes_at_the_rate_of_the_applied_wrench():
    plant = MultibodyPlant(0.0)
    from dynamics_cy import RotationalInertia
    body = plant.AddRigidBody("free", SpatialInertia.MakeFromCentralInertia(
        3.0, [0.05, -0.02, 0.1], RotationalInertia(0.2, 0.3, 0.4, 0.01, -0.02, 0.03)))
    plant.Finalize()
    assert plant.GetJointByName("free").type_name() == "quaternion_floating"
    ctx = plant.CreateDefaultContext()
    rng = np.random.default_rng(10)
    q, v = random_state(plant, rng)
    k = plant.kernels()
    F = np.zeros((2, 6))
    F[1] = rng.normal(size=6)
    x = np.r_[q, v]
    P = np.array([0.3, 0.2, -0.1])

    def momentum(x):
        plant.SetPositionsAndVelocities(ctx, x)
        return plant.CalcSpatialMomentumInWorldAboutPoint(ctx, P).get_coeffs()

    dt = 1e-4
    dL = (momentum(rk4_step(plant, k, x, dt, np.zeros(6), F)) -
          momentum(rk4_step(plant, k, x, -dt, np.zeros(6), F))) / (2 * dt)
    plant.SetPositionsAndVelocities(ctx, x)
    p_WBcm = plant.CalcCenterOfMassPositionInWorld(ctx)
    p_WBo = plant.EvalBodyPoseInWorld(ctx, body).translation()
    wrench = SpatialForce(F[1]).Shift(P - p_WBo).get_coeffs()           # applied wrench about P
    weight = SpatialForce(np.cross(p_WBcm - P, 3.0 * np.array([0, 0, -G])), [0, 0, -3.0 * G]).get_coeffs()
    np.testing.assert_allclose(dL, wrench + weight, rtol=1e-6, atol=1e-7)
    # and its linear part is m v_com
    np.testing.assert_allclose(momentum(x)[3:], 3.0 * plant.CalcCenterOfMassTranslationalVelocityInWorld(ctx),
                               atol=1e-13)


def test_free_body_falls_like_a_point_mass():
    plant = MultibodyPlant(0.0)
    plant.AddRigidBody("ball", SpatialInertia.SolidSphereWithMass(1.3, 0.1))
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    plant.SetVelocities(ctx, [0.3, -0.2, 0.5, 1.0, 0.0, 2.0])
    vdot = plant.CalcForwardDynamics(ctx, np.zeros(6))
    # a sphere spins freely (no gyroscopic torque) and its centre accelerates at g
    np.testing.assert_allclose(vdot, [0, 0, 0, 0, 0, -G], atol=1e-14)
    assert plant.GetDefaultPositions().tolist() == [1, 0, 0, 0, 0, 0, 0]


def test_quaternion_rates_match_finite_differences_of_orientation():
    plant = MultibodyPlant(0.0)
    body = plant.AddRigidBody("b", SpatialInertia.SolidBoxWithMass(1, 0.1, 0.2, 0.3))
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    rng = np.random.default_rng(11)
    q, v = random_state(plant, rng)
    plant.SetPositions(ctx, q)
    qdot = plant.MapVelocityToQDot(ctx, v)
    np.testing.assert_allclose(plant.MapQDotToVelocity(ctx, qdot), v, atol=1e-14)
    R = plant.EvalBodyPoseInWorld(ctx, body).rotation().matrix()
    h = 1e-7
    plant.SetPositions(ctx, q + h * qdot)
    R_plus = plant.EvalBodyPoseInWorld(ctx, body).rotation().matrix()
    W = (R_plus - R) / h @ R.T           # Ṙ Rᵀ = [w_W]x
    np.testing.assert_allclose([W[2, 1], W[0, 2], W[1, 0]], v[:3], atol=1e-6)


def test_the_joint_tables_maps_invert_each_other_for_every_joint_type():
    """N⁺(q) N(q) = I for a tree with every joint type (N from map_velocity_to_qdot, N⁺ from
    MakeQDotToVelocityMap: both from the joint table, _joints.pxd)."""
    plant = every_joint_tree()
    rng = np.random.default_rng(3)
    ctx = plant.CreateDefaultContext()
    types = {type(j).__name__ for j in plant._joints}
    assert {"RevoluteJoint", "PrismaticJoint", "BallRpyJoint", "PlanarJoint", "QuaternionFloatingJoint"} <= types
    for _ in range(5):
        q, _ = random_state(plant, rng)
        plant.SetPositions(ctx, q)
        N, Np = plant.MakeVelocityToQDotMap(ctx), plant.MakeQDotToVelocityMap(ctx)
        np.testing.assert_allclose(Np @ N, np.eye(plant.num_velocities()), atol=1e-12)
