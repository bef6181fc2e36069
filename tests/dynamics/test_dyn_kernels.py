"""The allocation-free kernel API: same numbers as the facade, no allocation, clear errors."""
import threading

import numpy as np
import pytest

from dynamics_cy import JacobianWrtVariable, MultibodyForces
from tests.alloc import traced_snapshots


def state(plant, seed):
    rng = np.random.default_rng(seed)
    q = plant.GetDefaultPositions() + rng.normal(size=plant.num_positions()) * 0.5
    return q, rng.normal(size=plant.num_velocities()), rng.normal(size=plant.num_velocities())


def test_kernels_agree_with_the_facade(iiwa):
    k = iiwa.kernels()
    n = iiwa.num_velocities()
    q, v, vdot = state(iiwa, 1)
    ctx = iiwa.CreateDefaultContext()
    iiwa.SetPositions(ctx, q)
    iiwa.SetVelocities(ctx, v)
    out, M, X, J = np.zeros(n), np.zeros((n, n)), np.zeros((4, 4)), np.zeros((6, n))

    k.gravity(q, out)
    np.testing.assert_allclose(out, iiwa.CalcGravityGeneralizedForces(ctx), atol=1e-13)
    k.bias(q, v, out)
    np.testing.assert_allclose(out, iiwa.CalcBiasTerm(ctx), atol=1e-13)
    k.mass_matrix(q, M)
    np.testing.assert_allclose(M, iiwa.CalcMassMatrix(ctx), atol=1e-14)
    forces = MultibodyForces(iiwa)
    iiwa.CalcForceElementsContribution(ctx, forces)
    forces.mutable_generalized_forces()[:] = 0          # the kernel excludes damping
    k.inverse_dynamics(q, v, vdot, out)
    np.testing.assert_allclose(out, iiwa.CalcInverseDynamics(ctx, vdot, forces), atol=1e-12)
    np.testing.assert_allclose(out, M @ vdot + iiwa.CalcBiasTerm(ctx) - iiwa.CalcGravityGeneralizedForces(ctx),
                               atol=1e-12)
    tau = out.copy()
    k.forward_dynamics(q, v, tau, out)
    np.testing.assert_allclose(out, vdot, atol=1e-10)

    ee = iiwa.GetFrameByName("iiwa_link_ee")
    k.frame_pose(q, ee, X)
    np.testing.assert_allclose(X, iiwa.CalcRelativeTransform(ctx, iiwa.world_frame(), ee).GetAsMatrix4(), atol=1e-15)
    k.frame_pose(q, ee.index(), X)          # a FrameIndex works too
    np.testing.assert_allclose(X, iiwa.CalcRelativeTransform(ctx, iiwa.world_frame(), ee).GetAsMatrix4(), atol=1e-15)
    k.jacobian(q, ee, J)
    np.testing.assert_allclose(J, iiwa.CalcJacobianSpatialVelocity(ctx, JacobianWrtVariable.kV, ee, np.zeros(3),
                                                                   iiwa.world_frame(), iiwa.world_frame()), atol=1e-15)

    poses = np.zeros((iiwa.num_bodies(), 4, 4))
    k.body_poses(q, poses)
    V = np.zeros((iiwa.num_bodies(), 6))
    k.body_spatial_velocities(q, v, V)
    for b, body in enumerate(iiwa._bodies):
        np.testing.assert_allclose(poses[b], body.EvalPoseInWorld(ctx).GetAsMatrix4(), atol=1e-15)
        np.testing.assert_allclose(V[b], body.EvalSpatialVelocityInWorld(ctx).get_coeffs(), atol=1e-14)


def test_the_hot_path_allocates_nothing(iiwa):
    k = iiwa.kernels()
    n = iiwa.num_velocities()
    q, v, vdot = state(iiwa, 2)
    out, M, X, J = np.zeros(n), np.zeros((n, n)), np.zeros((4, 4)), np.zeros((6, n))
    ee = iiwa.GetFrameByName("iiwa_link_ee")
    poses, F = np.zeros((iiwa.num_bodies(), 4, 4)), np.zeros((iiwa.num_bodies(), 6))

    def tick():
        k.gravity(q, out)
        k.inverse_dynamics(q, v, vdot, out)
        k.inverse_dynamics(q, v, vdot, out, F)
        k.bias(q, v, out)
        k.mass_matrix(q, M)
        k.forward_dynamics(q, v, out, out, F)
        k.frame_pose(q, ee, X)
        k.jacobian(q, ee, J)
        k.body_poses(q, poses)
        k.body_spatial_velocities(q, v, F)
        k.map_velocity_to_qdot(q, v, out)

    for _ in range(100):
        tick()
    before, after = traced_snapshots(tick, 2000)
    first, last = tick.__code__.co_firstlineno, tick.__code__.co_firstlineno + 12
    in_tick = [s for s in after.compare_to(before, "lineno")
               if s.traceback[0].filename == __file__ and first <= s.traceback[0].lineno <= last]
    assert [s for s in in_tick if s.size_diff or s.count_diff] == []


@pytest.mark.parametrize("bad, message", [
    (lambda q: q[:-1], "shape"),
    (lambda q: q.astype(np.float32), "dtype float64"),
    (lambda q: list(q), "numpy float64 array"),
    (lambda q: np.tile(q, (2, 1))[:, ::2].copy()[0], "shape"),
    (lambda q: np.c_[q, q][:, 0], "C-contiguous"),
    (lambda q: q.reshape(1, -1), "shape"),
])
def test_bad_arrays_raise_value_error(iiwa, bad, message):
    k = iiwa.kernels()
    q = np.zeros(iiwa.num_positions())
    with pytest.raises(ValueError, match=message):
        k.gravity(bad(q), np.zeros(iiwa.num_velocities()))


def test_bad_outputs_and_frames_raise_value_error(iiwa):
    k = iiwa.kernels()
    q, n = np.zeros(7), 7
    readonly = np.zeros(n)
    readonly.setflags(write=False)
    with pytest.raises(ValueError, match="writable"):
        k.gravity(q, readonly)
    with pytest.raises(ValueError, match=r"shape \(7, 7\)"):
        k.mass_matrix(q, np.zeros((7, 6)))
    with pytest.raises(ValueError, match="C-contiguous"):
        k.mass_matrix(q, np.zeros((7, 7)).T)
    with pytest.raises(ValueError, match="out of range"):
        k.jacobian(q, 10_000, np.zeros((6, n)))
    with pytest.raises(ValueError, match="not a frame of this plant"):
        k.frame_pose(q, "iiwa_link_ee", np.zeros((4, 4)))
    with pytest.raises(ValueError, match="body_forces"):
        k.inverse_dynamics(q, q, q, np.zeros(n), np.zeros((3, 6)))
    with pytest.raises(ValueError, match=r"\(12, 4, 4\)"):
        k.body_poses(q, np.zeros((12, 4)))


def test_each_kernels_object_has_its_own_workspace_across_threads(iiwa):
    """Two threads, two kernel objects, interleaved calls that release the GIL: both stay exact."""
    q1, v1, a1 = state(iiwa, 3)
    q2, v2, a2 = state(iiwa, 4)
    expected = {}
    for name, (q, v, a) in (("one", (q1, v1, a1)), ("two", (q2, v2, a2))):
        out = np.zeros(7)
        iiwa.kernels().inverse_dynamics(q, v, a, out)
        expected[name] = out
    errors = []

    def worker(name, q, v, a):
        k, out = iiwa.kernels(), np.zeros(7)
        for _ in range(20000):
            k.inverse_dynamics(q, v, a, out)
            if not np.array_equal(out, expected[name]):
                errors.append(name)
                return

    threads = [threading.Thread(target=worker, args=("one", q1, v1, a1)),
               threading.Thread(target=worker, args=("two", q2, v2, a2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_body_positions_and_quaternions(iiwa):
    from dynamics_cy import Quaternion, RotationMatrix
    k = iiwa.kernels()
    q = state(iiwa, 9)[0]
    out = np.zeros((iiwa.num_bodies(), 7))
    k.body_positions_quaternions(q, out)
    ctx = iiwa.CreateDefaultContext()
    iiwa.SetPositions(ctx, q)
    for b, body in enumerate(iiwa._bodies):
        X = body.EvalPoseInWorld(ctx)
        np.testing.assert_allclose(out[b, :3], X.translation(), atol=1e-15)
        assert out[b, 3] >= 0 and abs(np.linalg.norm(out[b, 3:]) - 1) < 1e-14
        np.testing.assert_allclose(RotationMatrix(Quaternion(out[b, 3:])).matrix(), X.rotation().matrix(),
                                   atol=1e-14)
