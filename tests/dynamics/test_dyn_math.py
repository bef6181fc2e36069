"""Rotations, transforms and mass properties."""
import numpy as np
import pytest

from dynamics_cy import (
    Quaternion,
    RigidTransform,
    RollPitchYaw,
    RotationalInertia,
    RotationMatrix,
    SpatialInertia,
    UnitInertia,
)


def test_roll_pitch_yaw_round_trip_including_gimbal_lock():
    rng = np.random.default_rng(0)
    for rpy in list(rng.uniform(-3, 3, (50, 3))) + [[0.3, np.pi / 2, 0.0], [0.3, -np.pi / 2, 0.0]]:
        R = RollPitchYaw(rpy).ToRotationMatrix()
        back = RollPitchYaw(R).ToRotationMatrix()
        assert back.IsNearlyEqualTo(R, 1e-12)
        assert abs(RollPitchYaw(R).pitch_angle()) <= np.pi / 2


def test_space_fixed_xyz_convention():
    r, p, y = 0.2, -0.4, 1.1
    expected = RotationMatrix.MakeZRotation(y) @ RotationMatrix.MakeYRotation(p) @ RotationMatrix.MakeXRotation(r)
    assert RollPitchYaw(r, p, y).ToRotationMatrix().IsNearlyEqualTo(expected, 1e-15)


def test_quaternion_round_trip_and_product():
    rng = np.random.default_rng(1)
    for _ in range(50):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        R = RotationMatrix(Quaternion(q))
        q2 = R.ToQuaternion().wxyz()
        assert np.allclose(q2, q, atol=1e-12) or np.allclose(q2, -q, atol=1e-12)
        a, b = Quaternion(q), Quaternion(rng.normal(size=4)).normalized()
        np.testing.assert_allclose((a @ b).rotation(), a.rotation() @ b.rotation(), atol=1e-12)


def test_rigid_transform_compose_inverse_and_points():
    X = RigidTransform(RollPitchYaw(0.1, 0.2, 0.3), [1, 2, 3])
    Y = RigidTransform(RollPitchYaw(-0.3, 0.5, 0.0), [0.5, 0, -1])
    np.testing.assert_allclose((X @ Y).GetAsMatrix4(), X.GetAsMatrix4() @ Y.GetAsMatrix4(), atol=1e-15)
    assert (X @ X.inverse()).IsNearlyEqualTo(RigidTransform(), 1e-15)
    pts = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(X @ pts, (X.GetAsMatrix4() @ np.vstack([pts, np.ones(2)]))[:3], atol=1e-15)
    with pytest.raises(ValueError, match="rotation matrix"):
        RotationMatrix(np.ones((3, 3)))


def solid_integral(inside, lo, hi, n=60):
    """Unit inertia about the origin of the uniform solid `inside`, by midpoint quadrature."""
    axes = [np.linspace(a, b, n, endpoint=False) + (b - a) / (2 * n) for a, b in zip(lo, hi)]
    x, y, z = np.meshgrid(*axes, indexing="ij")
    keep = inside(x, y, z)
    P = np.stack([x[keep], y[keep], z[keep]])
    return (np.sum(P * P) * np.eye(3) - P @ P.T) / keep.sum()


def test_unit_inertias_match_volume_integrals():
    r, L = 0.2, 0.5
    cyl = solid_integral(lambda x, y, z: x * x + y * y <= r * r, [-r, -r, -L / 2], [r, r, L / 2])
    np.testing.assert_allclose(UnitInertia.SolidCylinder(r, L, [0, 0, 1]).CopyToFullMatrix3(), cyl, rtol=2e-2,
                               atol=1e-5)
    cap = solid_integral(lambda x, y, z: x * x + y * y + np.maximum(np.abs(z) - L / 2, 0) ** 2 <= r * r,
                         [-r, -r, -L / 2 - r], [r, r, L / 2 + r])
    np.testing.assert_allclose(UnitInertia.SolidCapsule(r, L, [0, 0, 1]).CopyToFullMatrix3(), cap, rtol=2e-2,
                               atol=1e-5)
    box = solid_integral(lambda x, y, z: np.ones_like(x, bool), [-0.1, -0.2, -0.3], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(UnitInertia.SolidBox(0.2, 0.4, 0.6).CopyToFullMatrix3(), box, rtol=1e-3, atol=1e-6)


def test_unit_inertias_match_drake():
    mt = pytest.importorskip("pydrake.multibody.tree", reason="pydrake is not installed")
    axis = np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)
    pairs = [(UnitInertia.SolidCapsule(0.1, 0.3, axis), mt.UnitInertia.SolidCapsule(0.1, 0.3, axis)),
             (UnitInertia.SolidCylinder(0.1, 0.3, [0, 1, 0]), mt.UnitInertia.SolidCylinder(0.1, 0.3, [0, 1, 0])),
             (UnitInertia.SolidBox(0.1, 0.2, 0.3), mt.UnitInertia.SolidBox(0.1, 0.2, 0.3))]
    for ours, drake in pairs:
        np.testing.assert_allclose(ours.CopyToFullMatrix3(), drake.CopyToFullMatrix3(), rtol=1e-12)


def test_spatial_inertia_shift_and_validity():
    M = SpatialInertia.MakeFromCentralInertia(2.0, [0.1, 0.0, -0.2], RotationalInertia(0.1, 0.2, 0.25))
    shifted = M.Shift([0.3, 0.1, 0.0]).Shift([-0.3, -0.1, 0.0])
    np.testing.assert_allclose(shifted.CopyToFullMatrix6(), M.CopyToFullMatrix6(), atol=1e-15)
    assert M.IsPhysicallyValid() and np.all(np.linalg.eigvalsh(M.CopyToFullMatrix6()) > 0)
    assert not SpatialInertia(1.0, [0, 0, 0], UnitInertia(1, 1, 3), skip_validity_check=True).IsPhysicallyValid()


def inertia_cases(rng):
    """Rotational inertias on both sides of Drake's validity test: random, near the triangle
    inequality's edge and the zero moment within its tolerance, products within its diagonal test."""
    eps = np.finfo(float).eps
    for scale in (1e-9, 1e-3, 1.0, 1e3):
        for _ in range(40):
            A = rng.normal(size=(3, 3))
            yield scale * (A + A.T)                       # often indefinite
            yield scale * A @ A.T                         # positive semidefinite, often fails the triangle
        for k in (-200, -20, -1, 0, 1, 20, 200):
            c = 2.0 * scale * (1 + k * eps)
            yield np.diag([scale, scale, c])              # a + b against c, around Drake's 16ε·max(1, ½ tr)
            yield np.diag([k * eps * max(1.0, scale), scale, scale])
            yield np.array([[scale, k * eps * scale, 0], [k * eps * scale, scale, 0], [0, 0, scale]])


def test_inertia_validity_is_drakes():
    tree = pytest.importorskip("pydrake.multibody.tree", reason="pydrake is not installed (pip install drake)")
    RotationalInertia = tree.RotationalInertia
    from dynamics_cy.inertia import inertia_problem, principal_moments
    rng = np.random.default_rng(7)
    n = {True: 0, False: 0}
    for I in inertia_cases(rng):
        theirs = RotationalInertia(I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2])
        valid = theirs.CouldBePhysicallyValid()
        assert (inertia_problem(I) is None) == valid, I
        np.testing.assert_allclose(principal_moments(I), theirs.CalcPrincipalMomentsOfInertia(), rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(I).max()))
        n[valid] += 1
    assert min(n.values()) > 50                           # both sides of the edge were exercised


def test_rotation_from_one_unit_vector_is_drakes():
    math = pytest.importorskip("pydrake.math", reason="pydrake is not installed (pip install drake)")
    rng = np.random.default_rng(3)
    vectors = [rng.normal(size=3) for _ in range(30)] + [np.array(v, float) for v in
                                                         ((0, -1, 0), (0, 0, -1), (1, 1, 0), (1, 1, 1), (0, 3, 4))]
    for u in vectors:
        u = u / np.linalg.norm(u)
        for axis in range(3):
            R = RotationMatrix.MakeFromOneVector(u, axis).matrix()
            np.testing.assert_allclose(R, math.RotationMatrix.MakeFromOneVector(u, axis).matrix(), atol=1e-15)
            np.testing.assert_allclose(R[:, axis], u, atol=1e-15)
            np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-15)
