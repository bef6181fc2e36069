"""MuJoCo as the simulated plant (sim.engine: mujoco, drivers.sim.mujoco_physics): the generated model's
dynamics against our kernels and against MuJoCo's own URDF importer, the coordinate conventions by
finite differences, closed forms (free fall, a pendulum's energy, a sliding box's μ), contact forces,
pushes and the external torque, allocation, and the configs MuJoCo cannot honour."""
import re
import sys

import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.sim import SimulatedRobot, load_sim_config
from drivers.sim.contact_lcm import ContactResultsPublisher
from drivers.sim.physics import make_physics
from dynamics_cy import MultibodyPlant, Quaternion, RollPitchYaw, RotationMatrix
from tests.alloc import net_and_peak
from tests.plants import parsed

mujoco = pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'hilstack[mujoco]')")

G, H = 9.81, 1e-3


def physics(plant, **sim):
    return make_physics(plant, load_sim_config({"engine": "mujoco", **sim}))


def legged(name):
    from dynamics_cy.planning.legged_models import load_legged
    return load_legged(name, simulation=True)


def panda_plant():
    from drivers.core.robot import build_plant
    from hil.running import load
    from hil.testing import config_path
    return build_plant(load(config_path("panda")).robot, simulated=True)


def random_state(plant, rng):
    """q near the default (unit quaternions), v of unit scale."""
    q = plant.GetDefaultPositions() + 0.5 * rng.normal(size=plant.num_positions())
    for j in (plant.get_joint(i) for i in range(plant.num_joints())):
        if j.type_name() == "quaternion_floating":
            s = j.position_start()
            q[s:s + 4] /= np.linalg.norm(q[s:s + 4])
    return q, rng.normal(size=plant.num_velocities())


def mujoco_dynamics(model, data, coordinates, q, v):
    """(M, bias) of MuJoCo at (q, v) in our coordinates: Tᵀ M_mj T and Tᵀ qfrc_bias (qvel = T v)."""
    nv = len(v)
    coordinates.to_mujoco(q, v, data.qpos, data.qvel)
    mujoco.mj_forward(model, data)
    M = np.zeros((nv, nv))
    mujoco.mj_fullM(model, data, M)
    T = coordinates.velocity_map(data.qpos)
    return T.T @ M @ T, T.T @ data.qfrc_bias


def assert_same_dynamics(plant, model, coordinates, tol=1e-10, states=5):
    """M(q) and C(q, v) v − τ_g(q) (our inverse dynamics at v̇ = 0) against MuJoCo's at random states."""
    k, nv, rng = plant.kernels(), plant.num_velocities(), np.random.default_rng(7)
    data = mujoco.MjData(model)
    for _ in range(states):
        q, v = random_state(plant, rng)
        M, bias = np.zeros((nv, nv)), np.zeros(nv)
        k.mass_matrix(q, M)
        k.inverse_dynamics(q, v, np.zeros(nv), bias)
        M_mj, bias_mj = mujoco_dynamics(model, data, coordinates, q, v)
        np.testing.assert_allclose(M_mj, M, rtol=0, atol=tol * max(1.0, np.abs(M).max()))
        np.testing.assert_allclose(bias_mj, bias, rtol=0, atol=tol * max(1.0, np.abs(bias).max()))


# --- the generated model ------------------------------------------------------------------------------
@pytest.mark.parametrize("robot", ["iiwa", "panda", "go2", "g1"])
def test_mass_matrix_and_bias_equal_our_kernels(robot, iiwa_urdf, request):
    if robot != "iiwa":
        request.getfixturevalue("robot_data")
    plant = parsed(iiwa_urdf) if robot == "iiwa" else panda_plant() if robot == "panda" else legged(robot)[0]
    p = physics(plant, contact={"enabled": robot in ("go2", "g1")})
    assert type(p).__name__ == "MujocoPhysics" and p.model.nv == plant.num_velocities()
    assert_same_dynamics(plant, p.model, p.coordinates)


def urdf_without_geometry(path) -> str:
    return re.sub(r"<(visual|collision)\b.*?</\1>", "", path.read_text(), flags=re.S)


@pytest.mark.parametrize("robot", ["iiwa", "go2"])
def test_mujocos_own_urdf_importer_gives_the_same_dynamics(robot, iiwa_urdf, request):
    """A cross-check of the converter: MuJoCo parses the URDF itself (visuals and collisions removed, a
    free joint added for the Go2) and its M and bias, mapped to our coordinates by joint name, equal ours."""
    from drivers.sim.mujoco_model import Coordinates
    if robot == "iiwa":
        plant, path = parsed(iiwa_urdf), iiwa_urdf
    else:
        root = request.getfixturevalue("robot_data")
        from dynamics_cy.planning.legged_models import LEGGED
        plant, path = legged("go2")[0], root / "robots" / LEGGED["go2"].urdf
    spec = mujoco.MjSpec.from_string(urdf_without_geometry(path))
    if robot == "go2":
        spec.body("base").add_freejoint(name="base")
    model = spec.compile()
    assert model.nv == plant.num_velocities()
    assert_same_dynamics(plant, model, Coordinates(plant, model))


def test_free_joint_coordinates_by_finite_differences(robot_data):
    """MuJoCo's free joint: qpos = [p_WBo, qw qx qy qz], qvel = [v_WBo_W, ω_B]; ours: q = [quaternion, p],
    v = [ω_W, v_WBo_W]. Over a step of 1 µs, (q⁺ − q)/h = N(q) v⁺ (N our kernels' q̇ map), and the
    base's rotation changes by h [ω_W]× R."""
    plant, _, q0 = legged("go2")
    p = physics(plant, initial_positions=q0.tolist(), time_step=1e-6)
    rng = np.random.default_rng(3)
    q, v = random_state(plant, rng)
    p.set_state(q, v)
    p.step(np.zeros(12))
    qdot = np.zeros(plant.num_positions())
    plant.kernels().map_velocity_to_qdot(q, p.v, qdot)
    np.testing.assert_allclose((p.q - q) / 1e-6, qdot, rtol=0, atol=1e-4)
    R0, R1 = Quaternion(q[:4]).rotation(), Quaternion(p.q[:4]).rotation()
    w = p.v[:3]
    skew = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    np.testing.assert_allclose((R1 - R0) / 1e-6, skew @ R0, rtol=0, atol=1e-4)


def test_free_fall_and_spin():
    """A free body: semi-implicit Euler's p0 + v0 t + ½ g t (t + h) exactly; a spin about a principal
    axis at constant rate."""
    from dynamics_cy import RotationalInertia, SpatialInertia
    plant = MultibodyPlant(0.0)
    plant.AddRigidBody("body", SpatialInertia.MakeFromCentralInertia(3.0, np.zeros(3), RotationalInertia(0.05, 0.08,
                                                                                                         0.11)))
    plant.Finalize()
    R0 = RotationMatrix(RollPitchYaw(0.2, -0.3, 0.4))
    w = 2.5 * R0.matrix()[:, 2]
    q0 = np.concatenate([R0.ToQuaternion().wxyz(), [0.1, -0.2, 1.5]])
    v0 = np.concatenate([w, [0.4, 0.3, 2.0]])
    p = physics(plant, initial_positions=q0.tolist(), initial_velocities=v0.tolist())
    for _ in range(1000):
        p.step(None)
    t, g = 1.0, np.array([0, 0, -G])
    np.testing.assert_allclose(p.q[4:], q0[4:] + v0[3:] * t + 0.5 * g * t * (t + H), rtol=0, atol=1e-10)
    np.testing.assert_allclose(p.v, np.concatenate([w, v0[3:] + g * t]), rtol=0, atol=1e-10)
    expected = R0.multiply(RotationMatrix.MakeZRotation(2.5 * t)).ToQuaternion().wxyz()
    np.testing.assert_allclose(p.q[:4] * np.sign(p.q[0] * expected[0]), expected, atol=1e-6)


def test_pendulum_energy_is_bounded(make_double_pendulum, total_energy):
    """MuJoCo's semi-implicit integrator keeps an undamped double pendulum's energy bounded over 10 s."""
    plant = make_double_pendulum()
    p = physics(plant, initial_positions=[1.3, -0.7], initial_velocities=[0.5, -1.5])
    e0 = total_energy(plant, p.q, p.v)
    errors = []
    for _ in range(100):
        for _ in range(100):
            p.step(None)
        errors.append(abs(total_energy(plant, p.q, p.v) - e0))
    assert max(errors) / abs(e0) < 3e-2 and max(errors[50:]) < 3 * max(errors[:50])


# --- contact ------------------------------------------------------------------------------------------
def test_a_resting_box_carries_its_weight_and_reports_as_drake(make_box):
    """A 2 kg box on the ground: Σ f_Bc_W of the contacts (the force on the ground) = −m g, normals +z from
    the ground into the box; the box's contact force (contact_forces), τ_contact's force rows and the LCM
    message (Drake's body names) agree."""
    plant = make_box(mass=2.0)
    p = physics(plant, initial_positions=[1, 0, 0, 0, 0, 0, 0.025], contact={"enabled": True})
    for _ in range(1000):
        p.step(None)
    results = p.contact_results()
    infos = [results.point_pair_contact_info(i) for i in range(results.num_point_pair_contacts())]
    assert len(infos) == 4 and all(int(c.bodyA_index()) == 1 and int(c.bodyB_index()) == 0 for c in infos)
    f_ground = sum(c.contact_force() for c in infos)
    np.testing.assert_allclose(f_ground, [0, 0, -2.0 * G], atol=1e-6)
    for c in infos:
        np.testing.assert_allclose(c.point_pair().nhat_BA_W, [0, 0, 1], atol=1e-12)
        assert 0 < c.point_pair().depth < 1e-3 and abs(c.separation_speed()) < 1e-6
    touching, force = np.zeros(1, dtype=bool), np.zeros((1, 3))
    p.contact_forces([1], touching, force)
    assert touching[0]
    np.testing.assert_allclose(force[0], [0, 0, 2.0 * G], atol=1e-6)
    np.testing.assert_allclose(p.tau_contact[3:], [0, 0, 2.0 * G], atol=1e-6)
    msg = ContactResultsPublisher(p.contact, "CONTACT_RESULTS").message(p.time_ns // 1000)
    assert msg.num_point_pair_contacts == 4
    assert {(i.body1_name, i.body2_name) for i in msg.point_pair_contact_info} == {("box(1)", "world(0)")}


@pytest.mark.parametrize("mu_box, mu_ground", [(0.5, 1.0), (0.4, 0.4)])
def test_a_sliding_box_stops_after_v2_over_2_mu_g(make_box, mu_box, mu_ground):
    """The pair's friction is the combined μ = 2 μ_a μ_b / (μ_a + μ_b), as our engine's: a box sliding at
    v0 stops within 5 % of v0² / (2 μ g) (MuJoCo's soft contact slips a little while it sticks)."""
    mu = 2 * mu_box * mu_ground / (mu_box + mu_ground)
    plant = make_box(mu=mu_box)
    p = physics(plant, initial_positions=[1, 0, 0, 0, 0, 0, 0.025], initial_velocities=[0, 0, 0, 1.0, 0, 0],
                contact={"enabled": True, "ground": {"friction": {"static": mu_ground, "dynamic": mu_ground}}})
    for _ in range(2000):
        p.step(None)
    assert abs(p.v[3]) < 1e-3
    assert p.q[4] == pytest.approx(1.0 / (2 * mu * G), rel=0.05)


def test_the_contact_torque_excludes_limits_and_friction_loss(iiwa_urdf):
    """With joint friction (MuJoCo's friction-loss rows) and a limit active (joint 7 driven into it),
    τ_contact is still the contact rows' Jᵀ λ: the arm pressed on a ground at 0.35 m; τ_contact =
    Σ J_Aᵀ (−f_Bc_W) at p_WC of contact_results, at the step's start state."""
    plant = parsed(iiwa_urdf)
    p = physics(plant, initial_positions=[0, 1.4, 0, -0.6, 0, 1.2, 3.0], joint_friction=0.5,
                contact={"enabled": True, "ground": {"height": 0.35}})
    u = np.array([0, 0, 0, 0, 0, 0, 2.0])                    # joint 7 driven into its upper limit
    for _ in range(200):
        p.step(u)
    q_start = p.q.copy()
    p.step(u)
    assert p.data.nf > 0 and p.data.nl > 0 and p.data.ncon > 0
    expected, k, J = np.zeros(7), plant.kernels(), np.zeros((6, 7))
    results = p.contact_results()
    for c in (results.point_pair_contact_info(i) for i in range(results.num_point_pair_contacts())):
        body = plant.get_body(c.bodyA_index()).body_frame()
        k.jacobian(q_start, body, J)
        X = np.zeros((4, 4))
        k.frame_pose(q_start, body, X)
        r = c.contact_point() - X[:3, 3]
        f = -c.contact_force()
        expected += J.T @ np.concatenate([np.cross(r, f), f])
    np.testing.assert_allclose(p.tau_contact, expected, rtol=0, atol=1e-9 * np.abs(expected).max())


# --- pushes and the external torque --------------------------------------------------------------------
def test_a_push_is_j_transpose_f_and_moves_as_m_inverse(iiwa_urdf):
    """F_Bq_W at Bq of iiwa_link_7 from rest, gravity compensated: tau_external = J_Bqᵀ F_Bq_W at the step's
    start (our kernels' Jacobian), and the first step's Δv = h (M + hD)⁻¹ J_Bqᵀ F."""
    plant = parsed(iiwa_urdf)
    q0 = np.array([0.1, 0.6, -0.3, -1.1, 0.2, 0.9, 0.1])
    p = physics(plant, initial_positions=q0.tolist())
    P, F = np.array([0.02, -0.01, 0.05]), np.array([0.3, -0.2, 0.5, 4.0, -3.0, 6.0])
    p.push("iiwa_link_7", F, 0, 10_000_000, P)
    k, B = plant.kernels(), plant.GetFrameByName("iiwa_link_7")
    tau_g, X, J, M = np.zeros(7), np.zeros((4, 4)), np.zeros((6, 7)), np.zeros((7, 7))
    for step in range(12):
        q = p.q.copy()
        k.gravity(q, tau_g)
        k.frame_pose(q, B, X)
        k.jacobian(q, B, J)
        r = X[:3, :3] @ P
        JtF = J.T @ np.concatenate([F[:3] + np.cross(r, F[3:]), F[3:]])
        v = p.v.copy()
        p.step(-tau_g)
        expected = JtF if step < 10 else np.zeros(7)
        np.testing.assert_allclose(p.tau_external, expected, rtol=0, atol=1e-9)
        if step == 0:
            k.mass_matrix(q, M)
            D = np.diag(plant.GetDampingVector())
            np.testing.assert_allclose(p.v - v, H * np.linalg.solve(M + H * D, JtF), rtol=1e-6, atol=1e-9)


def test_a_push_on_a_free_base_matches_our_engine(robot_data):
    """The Go2's base pushed off the ground (no contact) by a force and a torque at a point off its origin:
    MuJoCo's velocity change over 20 ms equals our engine's (the free joint's torque and twist conversions)."""
    plant, _, q0 = legged("go2")
    F = np.array([0.5, -1.0, 0.3, 20.0, -30.0, 10.0])
    runs = []
    for engine in ("hilstack", "mujoco"):
        p = make_physics(plant, load_sim_config({"engine": engine, "initial_positions": q0.tolist(),
                                                 "joint_damping": 0.0}))
        p.push("base", F, 0, 20_000_000, (0.1, 0.05, -0.02))
        for _ in range(20):
            p.step(np.zeros(12))
        runs.append((p.v.copy(), p.tau_external.copy()))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=0, atol=1e-4 * np.abs(runs[0][0]).max())
    np.testing.assert_allclose(runs[1][1], runs[0][1], rtol=0, atol=1e-6)


def test_a_held_arm_carries_the_push_in_its_external_torque(iiwa_urdf):
    plant = parsed(iiwa_urdf)
    p = physics(plant, initial_positions=[0.1, 0.6, -0.3, -1.1, 0.2, 0.9, 0.1])
    q = p.q.copy()
    p.push("iiwa_link_7", [0, 0, 0, 0, 0, -20.0], 0, 5_000_000)
    for _ in range(3):
        p.hold()
    assert p.steps == 3 and p.time_ns == 3_000_000 and np.array_equal(p.q, q) and not p.v.any()
    assert np.abs(p.tau_external).max() > 1.0


def test_faults_and_the_effort_clamp_act_on_the_actuators(iiwa_urdf):
    plant = parsed(iiwa_urdf)
    p = physics(plant, initial_positions=[0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0])
    p.actuator_enabled[2] = 0.0
    p.step(np.full(7, 1e4))
    np.testing.assert_array_equal(p.u_commanded, plant.GetEffortUpperLimits())
    assert p.u_applied[2] == 0.0 and p.u_applied[3] == p.u_commanded[3]


def test_a_step_allocates_nothing(iiwa_urdf):
    """The arm falling onto the ground, in contact: 1000 steps keep nothing but the step count (a Python
    int), and their transient objects stay under 1 kB (without limits, friction loss or a push: the
    documented exceptions)."""
    plant = parsed(iiwa_urdf)
    p = physics(plant, initial_positions=[0, 1.4, 0, -0.6, 0, 1.2, 0], joint_limits={"enabled": False},
                contact={"enabled": True, "ground": {"height": 0.35}})
    u = np.zeros(7)
    for _ in range(100):
        p.step(u)
    assert p.data.ncon > 0
    (net, peak), frame = net_and_peak(lambda: p.step(u))
    assert net <= 32 and peak < 1024, f"1000 steps allocated {net, peak} (net, peak) bytes; the call alone {frame}"


def test_the_simulated_robot_speaks_its_protocol_on_mujoco(iiwa_urdf, memq, handle_all):
    from messages.channels import Channels
    from messages.codec import CommandEncoder, StatusDecoder
    plant = parsed(iiwa_urdf)
    r = SimulatedRobot(plant, load_sim_config({"engine": "mujoco", "gravity_compensation": "internal"}), "iiwa",
                       lcm=memq)
    ch = Channels.for_robot("iiwa")
    status, command = StatusDecoder("iiwa", 7, ch.status), CommandEncoder("iiwa", 7, fields=("torque",),
                                                                           channel=ch.command)
    memq.subscribe(ch.status, lambda c, d: status.decode(d))
    r.publish_status()
    handle_all(memq)
    q0 = status.position_measured.copy()
    for _ in range(200):
        command.encode(status.utime, torque=np.zeros(7))
        command.publish(memq)
        handle_all(memq)
    assert r.summary()["steps"] == 200 and status.utime == 200_000
    assert np.abs(status.position_measured - q0).max() < 1e-6      # the firmware's gravity compensation holds it
    r.close()


# --- configs ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sim, key", [
    ({"engine": "mujoco", "integrator": "rk4"}, "sim.integrator"),
    ({"engine": "mujoco", "contact": {"stiffness": 1e4}}, "sim.contact.stiffness"),
    ({"engine": "mujoco", "contact": {"dissipation": 1.0}}, "sim.contact.dissipation"),
    ({"engine": "mujoco", "joint_limits": {"stiffness": 100.0}}, "sim.joint_limits.stiffness"),
    ({"engine": "mujoco", "mujoco": {"cone": "round"}}, "sim.mujoco.cone"),
    ({"engine": "mujoco", "mujoco": {"integrator": "rk4"}}, "sim.mujoco.integrator"),
    ({"engine": "mujoco", "mujoco": {"solref": [0.02]}}, "sim.mujoco.solref"),
    ({"engine": "mujoco", "mujoco": {"cones": "elliptic"}}, "sim.mujoco.cones"),
    ({"engine": "mujoco", "mujoco": {"impratio": 0}}, "sim.mujoco.impratio"),
    ({"mujoco": {"cone": "elliptic"}}, "sim.mujoco"),
    ({"engine": "drake"}, "sim.engine"),
])
def test_bad_configs_name_the_key(sim, key):
    with pytest.raises(ConfigError) as e:
        load_sim_config(sim)
    assert e.value.key == key, str(e.value)


def test_unknown_key_suggests_the_spelling():
    with pytest.raises(ConfigError, match="did you mean 'cone'"):
        load_sim_config({"engine": "mujoco", "mujoco": {"cones": "elliptic"}})


def test_a_joint_mujoco_cannot_take_is_a_config_error():
    from dynamics_cy import BallRpyJoint, SpatialInertia, UnitInertia
    plant = MultibodyPlant(0.0)
    body = plant.AddRigidBody("ball", SpatialInertia(1.0, np.zeros(3), UnitInertia.SolidSphere(0.1)))
    plant.AddJoint(BallRpyJoint("ball_joint", plant.world_frame(), body.body_frame()))
    plant.Finalize()
    with pytest.raises(ConfigError, match="ball_rpy") as e:
        physics(plant)
    assert e.value.key == "sim.engine"


def test_missing_mujoco_is_a_config_error_naming_the_install(iiwa_urdf, monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)                 # import mujoco raises ImportError
    with pytest.raises(ConfigError, match=r"pip install 'hilstack\[mujoco\]'") as e:
        physics(parsed(iiwa_urdf))
    assert e.value.key == "sim.engine"


def test_welds_payloads_and_limits_carry_over(iiwa_urdf):
    """A payload (a welded body) and the world weld are in the model; limits are MuJoCo's when enabled."""
    from drivers.core.robot import build_plant
    from drivers.sim.config import PayloadConfig
    from hil.running import load
    from hil.testing import config_path
    cfg = load(config_path("iiwa"))
    plant = build_plant(cfg.robot, PayloadConfig(mass=2.0, com=[0, 0, 0.05], inertia=[0.01, 0.01, 0.01]),
                        simulated=True)
    p = physics(plant)
    assert p.model.body("hil_payload").mass[0] == 2.0 and p.model.body("hil_payload").weldid != 0
    assert_same_dynamics(plant, p.model, p.coordinates)
    assert p.model.jnt_limited.all()
    assert not physics(plant, joint_limits={"enabled": False}).model.jnt_limited.any()


def test_a_diverged_step_raises_and_keeps_the_state(make_double_pendulum):
    """MuJoCo's automatic reset is off: non-finite accelerations raise DynamicsError."""
    from dynamics_cy.errors import DynamicsError
    p = physics(make_double_pendulum(), initial_velocities=[1e12, -1e12])
    with pytest.raises(DynamicsError, match="diverged"):
        p.step(None)
