"""The allocation-free helpers for user laws: Kernels.mass_matrix_cholesky / mass_matrix_inverse and
dynamics_cy.linalg, against numpy/scipy closed forms, pydrake (CalcMassMatrix, AngleAxis) and
Pinocchio (computeMinverse) on the iiwa14 and the Panda; no allocation; one-line errors."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dynamics_cy as dc
from dynamics_cy import linalg
from dynamics_cy.errors import DynamicsError
from tests.alloc import net_and_peak

IIWA = "configs/robots/iiwa14.urdf"
PANDA = "panda_description/urdf/panda.urdf"


def load(module, path, robot_data=None, weld=None):
    """(plant of `module`: dynamics_cy or pydrake's, its end frame)."""
    plant = module.MultibodyPlant(0.0)
    parser = module.Parser(plant)
    if robot_data is not None:
        parser.package_map().Add("example-robot-data", str(robot_data))
    parser.AddModels(str(path))
    if weld:
        plant.WeldFrames(plant.world_frame(), plant.GetFrameByName(weld))
    plant.Finalize()
    return plant


@pytest.fixture(params=["iiwa14", "panda"])
def arm(request):
    """(label, path, robot_data or None, welded frame or None, end frame name) of the iiwa14 and the Panda."""
    if request.param == "iiwa14":
        return IIWA, None, None, "iiwa_link_7"
    root = request.getfixturevalue("robot_data")
    return root / "robots" / PANDA, root, "panda_link0", "panda_link8"


def states(plant, count=4, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield plant.GetDefaultPositions() + rng.uniform(-1, 1, plant.num_positions())


def test_mass_matrix_factor_and_inverse_against_numpy_pydrake_and_pinocchio(arm):
    path, robot_data, weld, _ = arm
    ours = load(dc, path, robot_data, weld)
    k, n = ours.kernels(), ours.num_velocities()
    L, Minv, M = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    peers = []
    try:
        import pydrake.multibody.parsing as dparsing
        import pydrake.multibody.plant as dplant

        class Drake:
            MultibodyPlant, Parser = dplant.MultibodyPlant, dparsing.Parser
        drake = load(Drake, path, robot_data, weld)
        ctx = drake.CreateDefaultContext()

        def drake_minv(q):
            drake.SetPositions(ctx, q)
            return np.linalg.inv(drake.CalcMassMatrix(ctx))
        peers.append(drake_minv)
    except ImportError:
        pass
    try:
        import pinocchio as pin
        model = pin.buildModelFromUrdf(str(path))
        data = model.createData()
        assert model.nv == n

        def pin_minv(q):
            U = pin.computeMinverse(model, data, q)     # Pinocchio fills the upper triangle
            return np.triu(U) + np.triu(U, 1).T
        peers.append(pin_minv)
    except ImportError:
        pass
    for q in states(ours):
        k.mass_matrix(q, M)
        k.mass_matrix_cholesky(q, L)
        np.testing.assert_allclose(L, np.linalg.cholesky(M), atol=1e-12 * np.abs(L).max())
        assert np.all(np.triu(L, 1) == 0.0)
        k.mass_matrix_inverse(q, Minv)
        scale = np.abs(Minv).max()
        np.testing.assert_allclose(Minv, np.linalg.inv(M), atol=1e-9 * scale)
        np.testing.assert_allclose(Minv, Minv.T, atol=0)
        for peer in peers:
            np.testing.assert_allclose(Minv, peer(q), atol=1e-8 * scale)
    assert len(peers) >= 1 or pytest.skip("neither pydrake nor Pinocchio is installed")


@pytest.mark.parametrize("humanoid", [False, True])
def test_the_tree_sparse_ldlt_factor_and_solve(arm, humanoid, request):
    """M = Lᵀ D L (Featherstone's LTDL) with L nonzero only on each velocity's path to the root, and
    its solve, on the arms and on a floating humanoid (G1: branched, where the factor has no fill-in)."""
    path, robot_data, weld, _ = arm
    if humanoid:
        if robot_data is None:
            pytest.skip("the humanoid is run once, with the Panda's example-robot-data")
        path, weld = robot_data / "robots" / "g1_description/urdf/g1_29dof_rev_1_0.urdf", None
    plant = load(dc, path, robot_data, weld)
    k, n = plant.kernels(), plant.num_velocities()
    F, M, x, X = np.zeros((n, n)), np.zeros((n, n)), np.zeros(n), np.zeros((3, n))
    rng = np.random.default_rng(5)
    structural_zeros, fill = np.ones((n, n), bool), np.zeros((n, n), bool)
    for q in states(plant):
        if plant.GetFloatingBaseBodies():
            q[:4] /= np.linalg.norm(q[:4])
        k.mass_matrix(q, M)
        k.mass_matrix_ldlt(q, F)
        D, L = np.diag(np.diag(F)), np.tril(F, -1) + np.eye(n)
        assert np.all(np.triu(F, 1) == 0.0) and np.all(np.diag(F) > 0)
        np.testing.assert_allclose(L.T @ D @ L, M, atol=1e-12 * np.abs(M).max())
        structural_zeros &= M == 0.0
        fill |= F != 0.0
        b, B = rng.normal(size=n), rng.normal(size=(3, n))
        k.ldlt_solve(F, b, x)
        np.testing.assert_allclose(M @ x, b, atol=1e-9)
        k.ldlt_solve(F, B, X)
        np.testing.assert_allclose(X @ M, B, atol=1e-9)
        k.ldlt_solve(F, B, B)                                 # in place
        np.testing.assert_allclose(B, X, atol=0)
    assert not np.any(fill & structural_zeros)                # no fill-in: zero where the tree makes M zero
    assert np.count_nonzero(structural_zeros) > (n * n // 3 if humanoid else -1)   # G1: 578 of 35²


def test_solves_and_operational_space_inertia_against_numpy(arm):
    path, robot_data, weld, end = arm
    plant = load(dc, path, robot_data, weld)
    k, n = plant.kernels(), plant.num_velocities()
    frame = plant.GetFrameByName(end)
    L, M, Minv, J = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n)), np.zeros((6, n))
    JMinv, Lam, x, X = np.zeros((6, n)), np.zeros((6, 6)), np.zeros(n), np.zeros((6, n))
    rng = np.random.default_rng(1)
    for q in states(plant):
        k.mass_matrix(q, M)
        k.mass_matrix_cholesky(q, L)
        k.jacobian(q, frame, J)
        b = rng.normal(size=n)
        linalg.cholesky_solve(L, b, x)
        np.testing.assert_allclose(M @ x, b, atol=1e-10)
        linalg.cholesky_solve(L, J, X)                    # rows: X = J M⁻¹
        np.testing.assert_allclose(X, np.linalg.solve(M, J.T).T, rtol=1e-9, atol=1e-9)
        np.copyto(x, b)
        linalg.cholesky_solve(L, x, x)                    # in place
        np.testing.assert_allclose(M @ x, b, atol=1e-10)
        linalg.cholesky_inverse(L, Minv)
        np.testing.assert_allclose(Minv @ M, np.eye(n), atol=1e-9)
        linalg.operational_space_inertia(L, J, JMinv, Lam)
        A = J @ np.linalg.solve(M, J.T)
        np.testing.assert_allclose(JMinv, np.linalg.solve(M, J.T).T, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(Lam @ A, np.eye(6), atol=1e-8)
        linalg.operational_space_inertia(L, J[3:], JMinv[3:], Lam[:3, :3].copy())   # a translational task
        linalg.operational_space_inertia(L, J, JMinv, Lam, damping=0.1)
        np.testing.assert_allclose(Lam, np.linalg.inv(A + 0.01 * np.eye(6)), rtol=1e-9, atol=1e-9)
    C = np.zeros((n, n))
    linalg.cholesky(M, C)
    np.testing.assert_allclose(C, np.linalg.cholesky(M), atol=1e-12)
    linalg.cholesky(M, M)                                 # in place
    np.testing.assert_allclose(M, C, atol=0)


def test_damped_pseudo_inverse_against_numpy():
    rng = np.random.default_rng(2)
    for k, n in ((6, 7), (3, 7), (7, 6), (1, 1), (6, 6)):
        J = rng.normal(size=(k, n))
        out = np.zeros((n, k))
        linalg.damped_pseudo_inverse(J, 0.0, out)
        np.testing.assert_allclose(out, np.linalg.pinv(J), atol=1e-10)
        linalg.damped_pseudo_inverse(J, 0.3, out)
        np.testing.assert_allclose(out, J.T @ np.linalg.inv(J @ J.T + 0.09 * np.eye(k)), atol=1e-10)
    J = np.zeros((2, 4))
    J[0, 0] = J[1, 0] = 1.0                              # rank 1: the damping keeps it bounded
    out = np.zeros((4, 2))
    with pytest.raises(DynamicsError, match="lost rank; pass damping > 0"):
        linalg.damped_pseudo_inverse(J, 0.0, out)
    linalg.damped_pseudo_inverse(J, 0.01, out)
    np.testing.assert_allclose(out, J.T @ np.linalg.inv(J @ J.T + 1e-4 * np.eye(2)), atol=1e-8)


ANGLES = [0.0, 1e-300, 1e-12, 1e-6, 0.3, 2.0, np.pi - 1e-4, np.pi - 1e-7, np.pi - 1e-10, np.pi]


def rotations(seed=3):
    """Rotations about random axes at each of ANGLES (near 0 and near π included), and random ones."""
    rng = np.random.default_rng(seed)
    for angle in ANGLES:
        for _ in range(5):
            axis = rng.normal(size=3)
            yield Rotation.from_rotvec(angle * axis / np.linalg.norm(axis))
    yield from Rotation.random(50, random_state=seed)


def same_rotation_vector(w, expected):
    """w equals the expected rotation vector; at θ = π, w and −w are the same rotation."""
    if np.linalg.norm(expected) > np.pi - 1e-9:
        assert min(np.abs(w - expected).max(), np.abs(w + expected).max()) < 1e-8, (w, expected)
    else:
        np.testing.assert_allclose(w, expected, rtol=1e-9, atol=1e-14)


def test_rotation_vector_and_error_against_scipy_and_pydrake():
    try:
        from pydrake.math import RotationMatrix as DrakeRotation
    except ImportError:
        DrakeRotation = None
    w, X = np.zeros(3), np.eye(4)
    for r in rotations():
        R = r.as_matrix()
        theta = linalg.rotation_vector(R, w)
        same_rotation_vector(w, r.as_rotvec())
        assert theta == pytest.approx(r.magnitude(), abs=1e-12)
        X[:3, :3] = R
        linalg.rotation_vector(X, w)                     # a pose's rotation
        same_rotation_vector(w, r.as_rotvec())
        if DrakeRotation is not None:
            aa = DrakeRotation(R).ToAngleAxis()
            same_rotation_vector(w, aa.angle() * aa.axis())
    rng = np.random.default_rng(4)
    e = np.zeros(6)
    for r_e, r_g in zip(Rotation.random(40, random_state=5), rotations(6)):
        g = r_g * r_e                                     # G is E turned by r_g, in W
        theta = linalg.rotation_error(r_e.as_matrix(), g.as_matrix(), w)
        same_rotation_vector(w, r_g.as_rotvec())
        assert theta == pytest.approx(r_g.magnitude(), abs=1e-12)
        X_WE, X_WG = np.eye(4), np.eye(4)
        X_WE[:3, :3], X_WG[:3, :3] = r_e.as_matrix(), g.as_matrix()
        X_WE[:3, 3], X_WG[:3, 3] = rng.normal(size=3), rng.normal(size=3)
        linalg.pose_error(X_WE, X_WG, e)
        same_rotation_vector(e[:3], r_g.as_rotvec())
        np.testing.assert_allclose(e[3:], X_WG[:3, 3] - X_WE[:3, 3], atol=0)


def test_the_helpers_allocate_nothing(iiwa):
    k, n = iiwa.kernels(), 7
    q = np.array([0.1, 0.5, -0.2, -1.1, 0.3, 0.7, 0.2])
    frame = iiwa.GetFrameByName("iiwa_link_7")
    L, Minv, J, JMinv, Lam, P = np.zeros((n, n)), np.zeros((n, n)), np.zeros((6, n)), np.zeros((6, n)), \
        np.zeros((6, 6)), np.zeros((n, 6))
    b, x, w, e, X, G = np.ones(n), np.zeros(n), np.zeros(3), np.zeros(6), np.eye(4), np.eye(4)
    P7 = np.zeros((n, n))
    k.jacobian(q, frame, J)
    k.frame_pose(q, frame, X)
    calls = {
        "mass_matrix_cholesky": lambda: k.mass_matrix_cholesky(q, L),
        "mass_matrix_inverse": lambda: k.mass_matrix_inverse(q, Minv),
        "mass_matrix_ldlt": lambda: k.mass_matrix_ldlt(q, P7),
        "ldlt_solve": lambda: k.ldlt_solve(P7, b, x),
        "ldlt_solve rows": lambda: k.ldlt_solve(P7, J, JMinv),
        "cholesky_solve": lambda: linalg.cholesky_solve(L, b, x),
        "cholesky_solve rows": lambda: linalg.cholesky_solve(L, J, JMinv),
        "cholesky_inverse": lambda: linalg.cholesky_inverse(L, Minv),
        "operational_space_inertia": lambda: linalg.operational_space_inertia(L, J, JMinv, Lam, 0.01),
        "damped_pseudo_inverse": lambda: linalg.damped_pseudo_inverse(J, 0.01, P),
        "rotation_vector": lambda: linalg.rotation_vector(X, w),
        "rotation_error": lambda: linalg.rotation_error(X, G, w),
        "pose_error": lambda: linalg.pose_error(X, G, e),
    }
    for name, call in calls.items():
        call()
        measured, frame_only = net_and_peak(call, 2000)
        assert measured == frame_only, name


@pytest.mark.parametrize("call, message", [
    (lambda k, L: k.mass_matrix_cholesky(np.zeros(7), np.zeros((7, 6))), r"out must have shape \(7, 7\), got \(7, 6\)"),
    (lambda k, L: k.mass_matrix_inverse(np.zeros(7, np.float32), np.zeros((7, 7))), "q must have dtype float64"),
    (lambda k, L: linalg.cholesky_solve(L, np.zeros(6), np.zeros(6)), r"B must have shape \(7,\), got \(6,\)"),
    (lambda k, L: k.mass_matrix_ldlt(np.zeros(6), L), r"q must have shape \(7,\), got \(6,\)"),
    (lambda k, L: k.ldlt_solve(L, np.zeros((2, 7)), np.zeros(7)), r"out must have shape \(2, 7\), got \(7,\)"),
    (lambda k, L: k.ldlt_solve(L, [0.0] * 7, np.zeros(7)), "B must be a numpy float64 array, got list"),
    (lambda k, L: linalg.cholesky_solve(L, np.zeros((3, 7)), np.zeros((7, 3))), r"out must have shape \(3, 7\)"),
    (lambda k, L: linalg.cholesky_solve([[1.0]], np.zeros(1), np.zeros(1)), "L must be a 2-d numpy float64 array"),
    (lambda k, L: linalg.operational_space_inertia(L, np.zeros((3, 7)), np.zeros((3, 7)), np.zeros((6, 6))),
     r"Lambda must have shape \(3, 3\)"),
    (lambda k, L: linalg.operational_space_inertia(L, np.zeros((6, 7)).T, np.zeros((6, 7)), np.zeros((6, 6))),
     r"J must have shape \(7, 7\)"),
    (lambda k, L: linalg.rotation_vector(np.eye(4)[:3], np.zeros(3)),
     r"R must be a rotation matrix \(3, 3\) or a pose \(4, 4\), got \(3, 4\)"),
    (lambda k, L: linalg.rotation_error(np.eye(3), np.eye(3), np.zeros(3, int)), "out must have dtype float64"),
    (lambda k, L: linalg.pose_error(np.eye(4), np.eye(4)[::1, ::-1], np.zeros(6)), "X_WG must be C-contiguous"),
    (lambda k, L: linalg.damped_pseudo_inverse(np.zeros((6, 7)), -1.0, np.zeros((7, 6))), "damping must be >= 0"),
    (lambda k, L: linalg.damped_pseudo_inverse(np.zeros((6, 7)), 0.1, np.zeros((6, 7))),
     r"out must have shape \(7, 6\)"),
    (lambda k, L: linalg.cholesky_inverse(L, np.zeros((7, 7)).T[::2]), r"out must have shape \(7, 7\)"),
])
def test_bad_arguments_are_named(iiwa, call, message):
    k = iiwa.kernels()
    L = np.eye(7)
    with pytest.raises(ValueError, match=message):
        call(k, L)


def test_a_singular_task_or_matrix_is_a_dynamics_error_naming_the_fix(iiwa):
    k = iiwa.kernels()
    L, J, JMinv, Lam = np.zeros((7, 7)), np.zeros((6, 7)), np.zeros((6, 7)), np.zeros((6, 6))
    q = np.zeros(7)                                     # the stretched arm: its Jacobian loses rank
    k.mass_matrix_cholesky(q, L)
    k.jacobian(q, iiwa.GetFrameByName("iiwa_link_7"), J)
    with pytest.raises(DynamicsError, match="J M⁻¹ Jᵀ is singular .* pass damping > 0"):
        linalg.operational_space_inertia(L, J, JMinv, Lam)
    linalg.operational_space_inertia(L, J, JMinv, Lam, damping=0.1)
    assert np.all(np.isfinite(Lam))
    with pytest.raises(DynamicsError, match=r"A is not positive definite \(pivot 1\)"):
        linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]), np.zeros((2, 2)))
