"""The inverse-dynamics regressor τ = Y(q, v, v̇) π: against our own inverse dynamics, against
Pinocchio's computeJointTorqueRegressor on the same URDF, the payload block, friction, no allocation."""
import numpy as np
import pytest

import dynamics_cy as dc
from tests.alloc import net_and_peak
from tests.dynamics.test_dyn_crosscheck import PinocchioMap, load_ours, load_pinocchio, random_state

MODELS = ["iiwa", "panda_description/urdf/panda.urdf", "g1_description/urdf/g1_29dof_rev_1_0.urdf"]


def model_path(name, iiwa_urdf, robot_data):
    return (iiwa_urdf, None) if name == "iiwa" else (robot_data / "robots" / name, robot_data)


@pytest.fixture(params=MODELS)
def robot(request, iiwa_urdf):
    robot_data = request.getfixturevalue("robot_data") if request.param != "iiwa" else None
    path, rd = model_path(request.param, iiwa_urdf, robot_data)
    return load_ours(path, rd), path


def regressor(plant, q, v, vdot):
    Y = np.zeros((plant.num_velocities(), 10 * plant.num_bodies()))
    plant.kernels().torque_regressor(q, v, vdot, Y)
    return Y


def test_regressor_times_parameters_is_inverse_dynamics(robot):
    plant, _ = robot
    pi, k, tau = plant.GetDefaultInertialParameters(), plant.kernels(), np.zeros(plant.num_velocities())
    for seed in range(3):
        q, v, vdot, _ = random_state(plant, seed)
        k.inverse_dynamics(q, v, vdot, tau)      # gravity included
        assert np.max(np.abs(regressor(plant, q, v, vdot) @ pi - tau)) < 1e-10 * max(1.0, np.max(np.abs(tau)))


def test_regressor_matches_pinocchio(robot):
    """Pinocchio's columns are per joint (welded links merged into it, at the joint's frame = its
    child link's frame): they equal our columns of each joint's child body; welded bodies' own
    columns have no Pinocchio counterpart (checked by Y π = τ above)."""
    plant, path = robot
    pin, model = load_pinocchio(path, floating=bool(plant.GetFloatingBaseBodies()))
    data, m = model.createData(), PinocchioMap(plant, model)
    for seed in range(3):
        q, v, vdot, _ = random_state(plant, seed)
        qp, T = m.q(q), m.T(q)
        vp = T @ v
        bias = np.zeros(model.nv)
        if m.free is not None:                   # d/dt (Rᵀ v_W) = Rᵀ a_W − w_B × v_B
            bias[:3] = -np.cross(vp[3:6], vp[:3])
        Yp = T.T @ pin.computeJointTorqueRegressor(model, data, qp, vp, T @ vdot + bias)
        Y = regressor(plant, q, v, vdot)
        for jid in range(1, model.njoints):
            name = model.names[jid]
            body = m.free.child_body() if model.joints[jid].shortname() == "JointModelFreeFlyer" else \
                plant.GetJointByName(name).child_body()
            b = int(body.index())
            np.testing.assert_allclose(Y[:, 10 * b:10 * b + 10], Yp[:, 10 * (jid - 1):10 * jid], rtol=0,
                                       atol=1e-10 * max(1.0, np.max(np.abs(Yp))))


def test_pinocchio_parameter_order_is_ours(iiwa_urdf):
    plant = load_ours(iiwa_urdf)
    pin, model = load_pinocchio(iiwa_urdf, floating=False)
    pi = plant.GetDefaultInertialParameters()
    for jid in range(1, model.njoints):
        b = int(plant.GetJointByName(model.names[jid]).child_body().index())
        np.testing.assert_allclose(model.inertias[jid].toDynamicParameters(), pi[10 * b:10 * b + 10], atol=1e-12)


def payload_plant(iiwa_urdf, payload=None):
    """The iiwa with a tool frame T on link 7 and, optionally, a payload body welded at T."""
    plant = dc.MultibodyPlant(0.0)
    instance = dc.Parser(plant).AddModels(str(iiwa_urdf))[0]
    X_7T = dc.RigidTransform(dc.RollPitchYaw(0.3, -0.5, 1.1), [0.02, -0.04, 0.11])
    tool = plant.AddFrame(dc.FixedOffsetFrame("tool", plant.GetFrameByName("iiwa_link_7"), X_7T))
    if payload is not None:
        body = plant.AddRigidBody("payload", instance, payload)
        plant.WeldFrames(tool, body.body_frame(), dc.RigidTransform())
    plant.Finalize()
    return plant


def test_payload_block_is_the_change_in_inverse_dynamics(iiwa_urdf):
    I_cm = dc.RotationalInertia(0.011, 0.008, 0.006, 0.001, -0.0007, 0.0004)
    M = dc.SpatialInertia.MakeFromCentralInertia(1.7, [0.03, -0.02, 0.08], I_cm)
    bare, loaded = payload_plant(iiwa_urdf), payload_plant(iiwa_urdf, M)
    pi_p = loaded.GetDefaultInertialParameters()[-10:]
    assert pi_p[0] == pytest.approx(1.7)
    kb, kl = bare.kernels(), loaded.kernels()
    n = bare.num_velocities()
    tb, tl, Yp = np.zeros(n), np.zeros(n), np.zeros((n, 10))
    for seed in range(3):
        q, v, vdot, _ = random_state(bare, seed)
        kb.inverse_dynamics(q, v, vdot, tb)
        kl.inverse_dynamics(q, v, vdot, tl)
        kb.payload_regressor(q, v, vdot, bare.GetFrameByName("tool"), Yp)
        np.testing.assert_allclose(Yp @ pi_p, tl - tb, rtol=0, atol=1e-10 * np.max(np.abs(tl)))
        # at a body frame, the payload block is that body's block of the whole regressor
        b = int(bare.GetBodyByName("iiwa_link_7").index())
        kb.payload_regressor(q, v, vdot, bare.GetFrameByName("iiwa_link_7"), Yp)
        np.testing.assert_allclose(Yp, regressor(bare, q, v, vdot)[:, 10 * b:10 * b + 10], atol=1e-13)


def test_facade_and_friction(iiwa_urdf):
    plant = payload_plant(iiwa_urdf)
    c = plant.CreateDefaultContext()
    q, v, vdot, _ = random_state(plant, 4)
    plant.SetPositions(c, q)
    plant.SetVelocities(c, v)
    np.testing.assert_array_equal(plant.CalcInverseDynamicsRegressor(c, vdot), regressor(plant, q, v, vdot))
    Yp = np.zeros((7, 10))
    plant.kernels().payload_regressor(q, v, vdot, plant.GetFrameByName("tool"), Yp)
    np.testing.assert_array_equal(plant.CalcInverseDynamicsRegressor(c, vdot, plant.GetFrameByName("tool")), Yp)
    F = plant.CalcJointFrictionRegressor(c, epsilon=0.05)
    bv, bc = np.linspace(0.1, 0.7, 7), np.linspace(1.0, 2.0, 7)
    np.testing.assert_allclose(F @ np.r_[bv, bc], bv * v + bc * np.tanh(v / 0.05), atol=1e-15)


def test_the_regressor_allocates_nothing(iiwa_urdf):
    plant = payload_plant(iiwa_urdf)
    k, n, nb = plant.kernels(), plant.num_velocities(), plant.num_bodies()
    q, v, vdot, _ = random_state(plant, 5)
    Y, Yp, F = np.zeros((n, 10 * nb)), np.zeros((n, 10)), np.zeros((n, 2 * n))
    tool = plant.GetFrameByName("tool")

    def tick():
        k.torque_regressor(q, v, vdot, Y)
        k.payload_regressor(q, v, vdot, tool, Yp)
        k.friction_regressor(v, F, 0.01)
    tick()
    (net, peak), (net0, peak0) = net_and_peak(tick, 200)
    assert net == net0 and peak == peak0


def test_bad_arrays_are_refused(iiwa_urdf):
    plant = load_ours(iiwa_urdf)
    k, n = plant.kernels(), plant.num_velocities()
    q, v, vdot, _ = random_state(plant, 0)
    with pytest.raises(ValueError, match=r"out must have shape \(7, 120\)"):
        k.torque_regressor(q, v, vdot, np.zeros((n, 70)))
    with pytest.raises(ValueError, match="vdot must have dtype float64"):
        k.torque_regressor(q, v, vdot.astype(np.float32), np.zeros((n, 120)))
    with pytest.raises(ValueError, match="not a frame of this plant"):
        k.payload_regressor(q, v, vdot, "tool", np.zeros((n, 10)))
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        k.payload_regressor(q, v, vdot, plant.GetFrameByName("iiwa_link_7"), np.zeros((10, n)).T)
    with pytest.raises(ValueError, match="epsilon must be positive"):
        k.friction_regressor(v, np.zeros((n, 2 * n)), 0.0)
