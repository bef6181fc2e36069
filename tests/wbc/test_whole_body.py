"""The whole-body QP (dynamics_cy.planning.whole_body) on Go2 (4 point feet) and G1 (2 soles): its solution
satisfies the equations of motion and the contacts, holds the friction pyramids, the soles' contact
wrench cones and torque limits, and agrees with PlaCo's DynamicsSolver on the same robot, state and
tasks (point feet on Go2, planar contacts on G1)."""
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from dynamics_cy.planning.legged_models import LEGGED, example_robot_data_root, load_legged
from dynamics_cy.planning.whole_body import ContactPoint, ContactSurface, WholeBodyController, WholeBodyWeights

REPO = Path(__file__).resolve().parents[2]
PLACO_PYTHON = REPO / ".venv-placo" / "bin" / "python"
TOL = 1e-9


@pytest.fixture(scope="module", params=["go2", "g1"])
def robot(request):
    if example_robot_data_root() is None:
        pytest.skip("example-robot-data is not installed")
    return (request.param, *load_legged(request.param))


def perturbed(q0, nv, seed):
    rng = np.random.default_rng(seed)
    q = q0.copy()
    q[7:] += 0.05 * rng.normal(size=nv - 6)
    q[4:7] += 0.01 * rng.normal(size=3)
    q[:4] += 0.02 * rng.normal(size=4)
    q[:4] /= np.linalg.norm(q[:4])
    return q, 0.3 * rng.normal(size=nv)


def in_cone(c, grp, lam, tol):
    """A point's friction cone ‖f_t‖ ≤ μ f_n (flat ground: f_n = f_z); a sole's wrench cone (Caron
    et al. 2015, in closed form, for corner forces in their inner pyramids μ/√2: CoP inside the
    rectangle, |f_x|, |f_y| ≤ μ f_z / √2, τ_min ≤ τ_z ≤ τ_max), whose net force is in the cone too."""
    if not grp.flat:
        return lam[2] >= c.f_min - tol and np.hypot(lam[0], lam[1]) <= c.mu * lam[2] + tol
    (tx, ty, tz, fx, fy, fz), X, Y, mu = lam, grp.half_length, grp.half_width, c.mu / np.sqrt(2)
    t_max = mu * (X + Y) * fz - abs(Y * fx + mu * tx) - abs(X * fy + mu * ty)
    t_min = -mu * (X + Y) * fz + abs(Y * fx - mu * tx) + abs(X * fy - mu * ty)
    return (fz >= c.f_min - tol and abs(fx) <= mu * fz + tol and abs(fy) <= mu * fz + tol
            and np.hypot(fx, fy) <= c.mu * fz + tol
            and abs(tx) <= Y * fz + tol and abs(ty) <= X * fz + tol and t_min - tol <= tz <= t_max + tol)


def check_solution(c, q, v):
    """EoM, contact accelerations, cones, unilateral normals and torque limits of the solution."""
    np.testing.assert_allclose(c.eom_residual(), 0.0, atol=TOL * max(1.0, np.abs(c.h).max()))
    for gi, grp in enumerate(c.groups):
        if not c.active[gi]:
            np.testing.assert_allclose(grp.lam, 0.0, atol=TOL)
            continue
        if grp.flat:          # the foot's spatial acceleration is zero
            J, Jdot_v = np.zeros((6, c.nv)), np.zeros(6)
            c.k.frame_jacobian_bias(q, v, grp.frame, J, Jdot_v)
        else:
            J, Jdot_v = np.zeros((3, c.nv)), np.zeros(3)
            c.k.points_jacobian_bias(q, v, [grp.frame], grp.p[None], J, Jdot_v)
        np.testing.assert_allclose(J @ c.vdot + Jdot_v, 0.0, atol=TOL * 1e3)
        assert in_cone(c, grp, grp.lam, TOL), (grp.name, grp.lam)
    assert np.all(np.abs(c.tau) <= c.effort_limits + TOL)


def test_standing_still_holds_the_weight(robot):
    name, plant, contacts, q = robot
    c = WholeBodyController(plant, contacts)
    v = np.zeros(plant.num_velocities())
    assert c.solve(q, v)
    check_solution(c, q, v)
    mass = sum(plant.get_body(b).default_mass() for b in range(plant.num_bodies()))
    p, J, Jdv = np.empty(3), np.empty((3, plant.num_velocities())), np.empty(3)
    c.k.center_of_mass(q, v, p, J, Jdv)
    a_com = J @ c.vdot + Jdv
    # Newton: Σ λ = m (a_com − g), and the robot barely moves (the targets are where it stands)
    forces = sum(c.force_W(gi) for gi in range(len(c.groups)))
    np.testing.assert_allclose(forces, mass * (a_com - plant.gravity_field().gravity_vector()), atol=1e-8 * mass * 9.81)
    # (the force regularisation ε_f ‖f‖² trades a little sag against the weight it carries)
    assert np.abs(a_com).max() < 2e-3 and np.abs(c.vdot).max() < 2e-2


def test_moving_states_and_a_lifted_foot(robot):
    name, plant, contacts, q0 = robot
    c = WholeBodyController(plant, contacts, mu=0.8, effort_limits=200.0)
    for seed in range(4):
        q, v = perturbed(q0, plant.num_velocities(), seed)
        c.active[:] = True
        c.active[0] = seed % 2 == 1          # every other state with a foot in the air
        assert c.solve(q, v), f"seed {seed}: DAQP exit flag {c.status}"
        check_solution(c, q, v)


def test_torque_limits_bind(robot):
    name, plant, contacts, q = robot
    free = WholeBodyController(plant, contacts)
    v = np.zeros(plant.num_velocities())
    assert free.solve(q, v)
    limit = 0.8 * np.abs(free.tau).max()
    c = WholeBodyController(plant, contacts, effort_limits=limit)
    if c.solve(q, v):
        check_solution(c, q, v)
        assert np.abs(c.tau).max() == pytest.approx(limit, rel=1e-9)


def test_a_failed_first_solve_then_a_good_one(robot_data):
    """Inconsistent bounds (f_min > f_max) fail DAQP's setup: solve() says False with a negative exit
    flag; once the bounds are consistent the next tick sets DAQP up again and solves."""
    plant, contacts, q = load_legged("go2", robot_data)
    c = WholeBodyController(plant, contacts, f_min=10.0, f_max=5.0)
    v = np.zeros(plant.num_velocities())
    assert not c.solve(q, v) and c.status < 0
    c.f_min = 0.0
    assert c.solve(q, v) and c.status == 1
    check_solution(c, q, v)


def test_per_joint_posture_weights(robot_data):
    """One weight per joint: equal weights give the scalar weight's solution; a joint weighted 1e4
    times the others tracks its posture acceleration kp (q* − q) − kd v an order of magnitude closer
    than the others do (the CoM and base tasks, weight 1, still compete with it)."""
    plant, contacts, q0 = load_legged("go2", robot_data)
    q, v = perturbed(q0, plant.num_velocities(), 5)
    scalar = WholeBodyController(plant, contacts, weights=WholeBodyWeights(posture=1e-2))
    per_joint = WholeBodyController(plant, contacts, weights=WholeBodyWeights(posture=[1e-2] * 12))
    for c in (scalar, per_joint):
        c.hold(q0)
        assert c.solve(q, v)
    np.testing.assert_array_equal(per_joint.tau, scalar.tau)
    w = np.full(12, 1e-4)
    w[4] = 1.0
    c = WholeBodyController(plant, contacts, weights=WholeBodyWeights(posture=w))
    c.hold(q0)
    assert c.solve(q, v)
    wb = c.w
    a = wb.posture_kp * (q0[7:] - q[7:]) - wb.posture_kd * v[6:]
    err = np.abs(c.vdot[6:] - a)
    assert err[4] < 0.1 * np.median(np.delete(err, 4))


def test_bad_arguments(robot_data):
    plant, contacts, q = load_legged("go2", robot_data)
    with pytest.raises(ValueError, match="at least one contact"):
        WholeBodyController(plant, [])
    with pytest.raises(ValueError, match="mu must be positive"):
        WholeBodyController(plant, contacts, mu=0.0)
    with pytest.raises(ValueError, match="effort_limits must be one positive limit"):
        WholeBodyController(plant, contacts, effort_limits=-1.0)
    with pytest.raises(ValueError, match="weights.posture must be one non-negative weight or 12"):
        WholeBodyController(plant, contacts, weights=WholeBodyWeights(posture=[1.0] * 11))
    from dynamics_cy import MultibodyPlant, Parser
    arm = MultibodyPlant(0.0)
    Parser(arm).AddModels(str(REPO / "configs" / "robots" / "iiwa14.urdf"))
    arm.Finalize()
    with pytest.raises(ValueError, match="free \\(floating\\) joint"):
        WholeBodyController(arm, [ContactPoint(arm.GetFrameByName("iiwa_link_7"))])


def placo_solve(problem: dict) -> dict:
    out = subprocess.run([str(PLACO_PYTHON), str(Path(__file__).with_name("placo_solve.py"))],
                         input=json.dumps(problem), capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


def placo_problem(plant, contacts, q, weights, mu, name, repeat=0):
    """PlaCo's version of our problem: point contacts, or planar contacts for ContactSurfaces."""
    joints = {j.name(): float(q[j.position_start()]) for j in plant._joints if j.num_positions() == 1}
    points = [c.frame.name() for c in contacts if isinstance(c, ContactPoint)]
    planar = [[c.frame.name(), c.length, c.width] for c in contacts if isinstance(c, ContactSurface)]
    return {"urdf": str(example_robot_data_root() / "robots" / LEGGED[name].urdf),
            "package_root": str(example_robot_data_root()),
            "q_base": [*q[4:7], *q[1:4], q[0]], "joints": joints, "contacts": points, "planar_contacts": planar,
            "mu": mu, "weights": weights, "repeat": repeat}


def placo_available() -> bool:
    """PlaCo imports in its environment (made by `make placo-env`)."""
    return PLACO_PYTHON.exists() and subprocess.run([str(PLACO_PYTHON), "-c", "import placo"],
                                                    capture_output=True, timeout=60).returncode == 0


@pytest.mark.skipif(not placo_available(), reason="PlaCo's environment is absent (make placo-env)")
@pytest.mark.parametrize("name", ["go2", "g1"])
def test_agrees_with_placo_dynamics_solver(robot_data, name):
    """Standing, every foot in contact, targets where it stands: the minimum-torque force
    distribution with CoM and posture tasks; PlaCo solves the same QP in Pinocchio's coordinates.
    Go2: 4 unilateral point contacts. G1: a 0.17 m x 0.05 m sole on each ankle roll frame, our
    wrench cone against PlaCo's planar contact (the same rows but for our yaw-torque bound, which
    standing does not reach); PlaCo's wrench is [f; m] in the foot frame, ours [m; f]."""
    plant, contacts, q = load_legged(name, robot_data)
    if name == "g1":
        frames = list(dict.fromkeys(c.frame.name() for c in contacts))
        contacts = [ContactSurface(plant.GetFrameByName(f), np.zeros(3), 0.17, 0.05) for f in frames]
    weights = {"com": 1.0, "posture": 1.0, "torque": 1e-3, "forces": 1e-5, "regularization": 1e-9}
    reg = weights["regularization"]
    c = WholeBodyController(plant, contacts, mu=0.5, weights=WholeBodyWeights(
        com=weights["com"], base_orientation=0.0, posture=weights["posture"], torque=weights["torque"],
        vdot_regularization=reg, force_regularization=weights["forces"] + reg, moment_regularization=reg))
    v = np.zeros(plant.num_velocities())
    assert c.solve(q, v)
    check_solution(c, q, v)
    theirs = placo_solve(placo_problem(plant, contacts, q, weights, 0.5, name))
    assert theirs["success"]
    ours = {j.name(): c.tau[j.velocity_start() - 6] for j in plant._joints if j.num_velocities() == 1}
    tau_theirs = np.array([theirs["tau"][n] for n in ours])
    np.testing.assert_allclose(np.array(list(ours.values())), tau_theirs, atol=1e-9 * np.abs(tau_theirs).max())
    lam_theirs = np.concatenate([np.r_[w[3:], w[:3]] if len(w) == 6 else w for w in theirs["forces"]])
    np.testing.assert_allclose(c.lam, lam_theirs, atol=1e-9 * np.abs(c.lam).max())


def test_sole_rows_are_the_contact_wrench_cone_of_four_corners(robot_data):
    """The 17 rows of a sole (G1's: 0.17 m x 0.05 m, off the frame origin) are the wrench cone of
    four corner forces in their inner pyramids (|f_x|, |f_y| ≤ μ f_z/√2, inscribed in the friction
    cone): every corner force's wrench at S satisfies them, each
    row is reached by one of the 16 extreme rays (4 corners x 4 pyramid edges), and a wrench outside
    any one row is outside the closed form."""
    plant, contacts, q = load_legged("g1", robot_data)
    c = WholeBodyController(plant, contacts, mu=0.7)
    grp = c.groups[0]
    assert grp.flat and [grp.half_length, grp.half_width] == pytest.approx([0.085, 0.025])
    np.testing.assert_allclose(grp.p, [0.035, 0.0, -0.035], atol=1e-12)
    rows = c.C[grp.ineq:grp.ineq + 16, grp.var:grp.var + 6]
    X, Y, mu = grp.half_length, grp.half_width, c.mu / np.sqrt(2)
    rays = []
    for x in (X, -X):
        for y in (Y, -Y):
            for fx, fy in [(mu, mu), (mu, -mu), (-mu, mu), (-mu, -mu)]:
                f = np.array([fx, fy, 1.0])
                rays.append(np.r_[np.cross([x, y, 0.0], f), f])      # [τ; f] at S
    values = rows @ np.array(rays).T
    assert values.max() < 1e-12                                    # every corner force is inside
    np.testing.assert_allclose(values.max(axis=1), 0.0, atol=1e-12)   # every row is a face
    rng = np.random.default_rng(1)
    for _ in range(200):                                           # the closed form agrees inside and out
        w = np.array(rays).T @ rng.random(16) + 0.02 * rng.normal(size=6)
        assert in_cone(c, grp, w, 0.0) == bool(np.all(rows @ w <= 0.0) and w[5] >= c.f_min)


def test_four_corner_points_are_a_sole(robot_data):
    """Four ContactPoints at a rectangle's corners give the ContactSurface of that rectangle (the
    same solution); other point sets on one frame are refused, naming the frame."""
    plant, contacts, q = load_legged("g1", robot_data)
    frames = list(dict.fromkeys(c.frame for c in contacts))
    soles = [ContactSurface(f, np.array([0.035, 0.0, -0.035]), 0.17, 0.05) for f in frames]
    v = np.zeros(plant.num_velocities())
    a, b = WholeBodyController(plant, contacts), WholeBodyController(plant, soles)
    assert a.solve(q, v) and b.solve(q, v)
    np.testing.assert_allclose(a.tau, b.tau, rtol=1e-12, atol=1e-8)   # one QP, its sole built two ways: round-off
    with pytest.raises(ValueError, match="3 contact points on frame left_ankle_roll_link"):
        WholeBodyController(plant, contacts[:3])
    with pytest.raises(ValueError, match="positive length and width"):
        WholeBodyController(plant, [ContactSurface(frames[0], np.zeros(3), 0.1, 0.0)])


def test_rotation_log_is_the_rotation_vector():
    from dynamics_cy.planning._wbc_qp import rotation_log
    from scipy.spatial.transform import Rotation
    rng, out = np.random.default_rng(3), np.empty(3)
    for theta in (0.0, 1e-9, 0.3, 2.0, np.pi - 1e-7, np.pi):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        R = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()           # log(R* Rᵀ), R* = E R
        X = np.eye(4)
        X[:3, :3] = R
        rotation_log(Rotation.from_rotvec(theta * axis).as_matrix() @ R, X, out)
        if theta > np.pi - 1e-6:            # ±π k̂ are the same rotation
            out *= np.sign(out @ axis)
        np.testing.assert_allclose(out, theta * axis, atol=1e-6)


def test_reduction_against_the_kkt_system():
    """dynamics_cy.planning._wbc_reduce on a random equality-constrained QP: the least-distance problem's
    unconstrained optimum y = −f, expanded, is the solution of the KKT system [H Aᵀ; A 0] (numpy),
    and the reduced rows C_r z + C x_p reproduce C x."""
    from dynamics_cy.planning._wbc_reduce import Reduction
    rng = np.random.default_rng(7)
    n, m, k, first = 12, 5, 4, 8
    L = rng.normal(size=(n, n))
    H, g = L @ L.T + n * np.eye(n), rng.normal(size=n)
    A, b, C = rng.normal(size=(m, n)), rng.normal(size=m), rng.normal(size=(k, n))
    l, u = np.full(k, -1e30), np.full(k, 1e30)
    nr = n - m
    out = dict(H_r=np.zeros((nr, nr)), g_r=np.zeros(nr), C_r=np.zeros((k, nr)), l_r=np.zeros(k), u_r=np.zeros(k),
               M=np.zeros((k, nr)), f=np.zeros(nr), y=np.zeros(nr), z=np.zeros(nr), x=np.zeros(n))
    red = Reduction(H, g, A, b, C, l, u, *out.values(), first)
    assert red.reduce() == 0
    np.copyto(out["y"], -out["f"])
    red.expand()
    kkt = np.linalg.solve(np.block([[H, A.T], [A, np.zeros((m, m))]]), np.r_[-g, b])
    np.testing.assert_allclose(out["x"], kkt[:n], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(A @ out["x"], b, atol=1e-12)
    R = np.linalg.cholesky(out["H_r"]).T
    np.testing.assert_allclose(out["M"] @ R, out["C_r"], atol=1e-12)
    np.testing.assert_allclose(out["H_r"], out["H_r"].T, atol=0)
    A[3] = A[0] + 2 * A[1]                    # a dependent row: no reduction
    assert red.reduce() == -1


def test_dependent_contacts_are_reported(robot_data):
    """Two point feet at the same point give dependent contact rows: solve() is False with status
    DEGENERATE (the caller's safe state), not a wrong answer."""
    from dynamics_cy.planning.whole_body import DEGENERATE, qp_status_text
    plant, contacts, q = load_legged("go2", robot_data)
    c = WholeBodyController(plant, contacts + [ContactPoint(contacts[0].frame, contacts[0].p_FC + 0.0)])
    assert not c.solve(q, np.zeros(plant.num_velocities())) and c.status == DEGENERATE
    assert "linearly dependent" in qp_status_text(c.status)


def test_targets_read_as_copies(robot):
    """A target read from the controller is a copy: saved, it does not move when the controller's does."""
    name, plant, contacts, q = robot
    c = WholeBodyController(plant, contacts)
    v = np.zeros(plant.num_velocities())
    assert c.solve(q, v)
    saved = c.com_target
    c.com_target = saved + [0.0, 0.02, 0.0]
    np.testing.assert_allclose(c.com_target - saved, [0.0, 0.02, 0.0])
    posture = c.q_posture
    posture[:] = 0.0                       # writing into a read copy changes nothing
    assert np.abs(c.q_posture).max() > 0


@pytest.mark.parametrize("name", ["go2", "g1"])
def test_one_standing_posture_for_the_controller_and_the_simulator(name, robot_data):
    """load_legged gives the controller's model and the simulator's the same standing q: the feet on
    the ground, not a point foot's radius into it."""
    _, _, q = load_legged(name, robot_data)
    _, _, q_sim = load_legged(name, robot_data, simulation=True)
    np.testing.assert_array_equal(q, q_sim)


def test_a_point_foot_pyramid_is_inscribed_in_its_friction_cone(robot_data):
    """A point foot's N rows in its contact frame: the pyramid's edges lie on the cone ‖f_t‖ = μ f_n
    (each edge on two faces), every force the rows admit is inside the cone, and its faces touch
    the cone (N = 4: the inner pyramid, μ/√2 along t̂₁). On sloped ground the same holds about the
    ground's normal."""
    plant, contacts, q = load_legged("go2", robot_data)
    rng = np.random.default_rng(7)
    for facets, normal in ((4, (0, 0, 1)), (8, (0, 0, 1)), (16, (0, 0, 1)), (8, (0.2, -0.1, 1.0))):
        c = WholeBodyController(plant, contacts, mu=0.6, friction_facets=facets, ground_normal=normal)
        grp = c.groups[0]
        rows = c.C[grp.ineq:grp.ineq + facets, grp.var:grp.var + 3]
        normal_row = c.C[grp.ineq + facets, grp.var:grp.var + 3]
        t1, t2, n = c.R_WC.T
        np.testing.assert_allclose(normal_row, np.asarray(normal) / np.linalg.norm(normal), atol=1e-15)
        for k in range(facets):                     # the edges: on the cone, two faces active
            th = 2 * np.pi * (k + 0.5) / facets
            f = 0.6 * (np.cos(th) * t1 + np.sin(th) * t2) + n
            values = rows @ f
            assert values.max() < 1e-12 and np.sum(np.abs(values) < 1e-12) == 2
        f = rng.normal(size=(20000, 3))
        inside = np.all(f @ rows.T <= 0.0, axis=1) & (f @ n > 0)
        ratio = np.linalg.norm(f[inside] - np.outer(f[inside] @ n, n), axis=1) / (0.6 * (f[inside] @ n))
        assert ratio.max() <= 1.0 + 1e-12 and ratio.max() > np.cos(np.pi / facets)
        along_t1 = 0.6 * np.cos(np.pi / facets) * t1 + n     # a face's midpoint: on that face
        assert rows[0] @ along_t1 == pytest.approx(0.0, abs=1e-12)


def test_a_lateral_demand_meets_the_cone_not_the_box(robot_data):
    """A CoM acceleration the feet cannot give (2 g sideways): the QP asks the loaded feet for as
    much tangential force as their pyramid allows and never more than μ f_n (the world-axes box
    asked √2 μ f_n of its corners); a finer pyramid gets closer to the cone along its faces."""
    plant, contacts, q = load_legged("go2", robot_data)
    v = np.zeros(plant.num_velocities())

    def usage(c, d=None):       # ‖f_t‖ / (μ f_n) of the most loaded foot, or its tangential force along d
        f = max((g.lam for g in c.groups), key=lambda lam: lam[2])
        return (np.hypot(f[0], f[1]) if d is None else f[:2] @ d) / (c.mu * f[2])

    for facets in (4, 8, 16):
        c = WholeBodyController(plant, contacts, mu=0.6, friction_facets=facets,
                                weights=WholeBodyWeights(base_orientation=0.0, posture=1e-4))
        c.hold(q)
        for a_ff in ([20.0, 20.0, 0.0], [0.0, 20.0, 0.0]):     # the diagonal; along t̂₂
            c.com_acceleration_ff = a_ff
            assert c.solve(q, v)
            check_solution(c, q, v)
            assert c.friction_excess() <= 1e-9
            d = np.array(a_ff[:2]) / np.linalg.norm(a_ff[:2])
            if facets == 4 and a_ff[0]:     # an edge of the inner pyramid: on the cone
                assert usage(c) == pytest.approx(1.0, abs=1e-6)
            else:                           # the middle of a face: f_t·d ≤ μ cos(π/N) f_n binds
                assert usage(c, d) == pytest.approx(np.cos(np.pi / facets), abs=1e-6)


def test_torque_limits_are_the_models_and_can_only_be_tightened(robot_data):
    """The URDF's effort limits (Go2: 23.7 N·m hips and thighs, 45.43 N·m knees) bound the QP by
    default; a given limit tightens them joint by joint and never loosens them."""
    plant, contacts, q = load_legged("go2", robot_data)
    urdf = np.array([23.7, 23.7, 45.43] * 4)
    np.testing.assert_array_equal(WholeBodyController(plant, contacts).effort_limits, urdf)
    np.testing.assert_array_equal(WholeBodyController(plant, contacts, effort_limits=30.0).effort_limits,
                                  np.minimum(urdf, 30.0))
    np.testing.assert_array_equal(WholeBodyController(plant, contacts, effort_limits=1e3).effort_limits, urdf)
    per_joint = np.arange(1.0, 13.0)
    np.testing.assert_array_equal(WholeBodyController(plant, contacts, effort_limits=per_joint).effort_limits,
                                  per_joint)
    with pytest.raises(ValueError, match="12 \\(one per actuated joint\\)"):
        WholeBodyController(plant, contacts, effort_limits=[1.0, 2.0])
