"""The whole-body-control kernels (contact-point and frame Jacobians and bias accelerations, centre
of mass kinematics) against pydrake on floating-base robots from example-robot-data, and against finite
differences of our own positions and velocities."""
import numpy as np
import pytest

from tests.dynamics.test_dyn_crosscheck import load_drake, load_ours, random_state

ROBOTS = ["go2_description/urdf/go2.urdf", "solo_description/robots/solo12.urdf",
          "talos_data/robots/talos_full_v2.urdf", "g1_description/urdf/g1_29dof_rev_1_0.urdf"]
TOL = 1e-9


def _points(plant):
    """Three frames spread over the tree, with an offset point on each."""
    n = plant.num_frames()
    frames = [plant.get_frame(i) for i in (1, n // 2, n - 1)]
    return frames, np.array([[0.01, -0.02, 0.03], [0.0, 0.0, 0.0], [-0.05, 0.04, 0.1]])


@pytest.mark.parametrize("model", ROBOTS)
def test_points_and_com_match_drake(robot_data, model):
    pytest.importorskip("pydrake")
    from pydrake.multibody.tree import JacobianWrtVariable as DJ
    path = robot_data / "robots" / model
    ours, drake = load_ours(path, robot_data), load_drake(path, robot_data)
    k, d = ours.kernels(), drake.CreateDefaultContext()
    frames, pts = _points(ours)
    nv = ours.num_velocities()
    J, b = np.empty((3 * len(frames), nv)), np.empty(3 * len(frames))
    c, Jc, bc = np.empty(3), np.empty((3, nv)), np.empty(3)
    J6, b6 = np.empty((6, nv)), np.empty(6)
    for seed in range(2):
        q, v, _, _ = random_state(ours, seed)
        drake.SetPositions(d, q)
        drake.SetVelocities(d, v)
        k.points_jacobian_bias(q, v, frames, pts, J, b)
        W = drake.world_frame()
        for i, f in enumerate(frames):
            instance = drake.GetModelInstanceByName(ours.GetModelInstanceName(f.model_instance()))
            df = drake.GetFrameByName(f.name(), instance)
            Jd = drake.CalcJacobianTranslationalVelocity(d, DJ.kV, df, pts[i], W, W)
            bd = drake.CalcBiasTranslationalAcceleration(d, DJ.kV, df, pts[i], W, W)[:, 0]
            np.testing.assert_allclose(J[3 * i:3 * i + 3], Jd, atol=TOL * max(1.0, np.abs(Jd).max()))
            np.testing.assert_allclose(b[3 * i:3 * i + 3], bd, atol=TOL * max(1.0, np.abs(bd).max()))
            k.frame_jacobian_bias(q, v, f, J6, b6)
            Jd = drake.CalcJacobianSpatialVelocity(d, DJ.kV, df, np.zeros(3), W, W)
            bd = drake.CalcBiasSpatialAcceleration(d, DJ.kV, df, np.zeros(3), W, W).get_coeffs()
            np.testing.assert_allclose(J6, Jd, atol=TOL * max(1.0, np.abs(Jd).max()))
            np.testing.assert_allclose(b6, bd, atol=TOL * max(1.0, np.abs(bd).max()))
        k.center_of_mass(q, v, c, Jc, bc)
        np.testing.assert_allclose(c, drake.CalcCenterOfMassPositionInWorld(d), atol=TOL)
        np.testing.assert_allclose(Jc, drake.CalcJacobianCenterOfMassTranslationalVelocity(d, DJ.kV, W, W), atol=TOL)
        np.testing.assert_allclose(bc, drake.CalcBiasCenterOfMassTranslationalAcceleration(d, DJ.kV, W, W),
                                   atol=TOL * max(1.0, np.abs(bc).max()))


def _integrate(plant, k, q, v, h):
    """q ⊕ h v (the quaternion renormalised), by q̇ = N(q) v at the midpoint."""
    qd = np.empty_like(q)
    k.map_velocity_to_qdot(q, v, qd)
    qm = q + 0.5 * h * qd
    k.map_velocity_to_qdot(qm, v, qd)
    out = q + h * qd
    for j in plant._joints:
        if j.type_name() == "quaternion_floating":
            s = j.position_start()
            out[s:s + 4] /= np.linalg.norm(out[s:s + 4])
    return out


@pytest.mark.parametrize("model", ROBOTS[:3:2])
def test_finite_differences(robot_data, model):
    """J v = d/dt p and J̇ v = d/dt (J v) with v̇ = 0, by central differences along q(t) = q ⊕ t v."""
    plant = load_ours(robot_data / "robots" / model, robot_data)
    k = plant.kernels()
    frames, pts = _points(plant)
    nv, m = plant.num_velocities(), 3 * len(frames)
    q, v, _, _ = random_state(plant, 7)
    h = 1e-5
    J, b = np.empty((m, nv)), np.empty(m)
    c, Jc, bc = np.empty(3), np.empty((3, nv)), np.empty(3)
    k.points_jacobian_bias(q, v, frames, pts, J, b)
    k.center_of_mass(q, v, c, Jc, bc)
    pos, vel = {}, {}
    for s in (-1, 1):
        qs = _integrate(plant, k, q, v, s * h)
        Js, bs = np.empty((m, nv)), np.empty(m)
        k.points_jacobian_bias(qs, v, frames, pts, Js, bs)
        cs, Jcs, bcs = np.empty(3), np.empty((3, nv)), np.empty(3)
        k.center_of_mass(qs, v, cs, Jcs, bcs)
        X = np.empty((4, 4))
        pos[s] = np.concatenate([_point_in_world(k, qs, f, p, X) for f, p in zip(frames, pts)] + [cs])
        vel[s] = np.concatenate([Js @ v, Jcs @ v])
    np.testing.assert_allclose((pos[1] - pos[-1]) / (2 * h), np.concatenate([J @ v, Jc @ v]), atol=1e-6)
    np.testing.assert_allclose((vel[1] - vel[-1]) / (2 * h), np.concatenate([b, bc]), atol=1e-5)


def _point_in_world(k, q, frame, p_FQ, X):
    k.frame_pose(q, frame, X)
    return X[:3, :3] @ p_FQ + X[:3, 3]


def test_bad_arguments(robot_data):
    plant = load_ours(robot_data / "robots" / ROBOTS[0], robot_data)
    k = plant.kernels()
    q, v = plant.GetDefaultPositions(), np.zeros(plant.num_velocities())
    nv = plant.num_velocities()
    with pytest.raises(ValueError, match="p_FQ"):
        k.points_jacobian_bias(q, v, [1, 2], np.zeros((3, 3)), np.empty((6, nv)), np.empty(6))
    with pytest.raises(ValueError, match="J must have shape"):
        k.points_jacobian_bias(q, v, [1, 2], np.zeros((2, 3)), np.empty((3, nv)), np.empty(6))
    with pytest.raises(ValueError, match="not a frame|out of range"):
        k.points_jacobian_bias(q, v, [10_000], np.zeros((1, 3)), np.empty((3, nv)), np.empty(3))
    with pytest.raises(ValueError, match="Jdot_v"):
        k.center_of_mass(q, v, np.empty(3), np.empty((3, nv)), np.empty(4))
