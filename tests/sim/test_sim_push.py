"""Pushes (sim.pushes, SimulatedRobot.push): an external wrench on a body of the simulated arm acts in the
physics and appears in the status's torque_external with each robot's sign (Drake's
manipulation/README: the iiwa reports J_Bqᵀ F_Bq_W as is, the panda negated), checked against the
Jacobian of the facade and of pydrake, the closed-form first step, a stiffness controller's deflection,
the push's window and the real drivers' external-torque limits."""
import math

import lcm
import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.sim import SimConfig, SimulatedRobot, load_sim_config
from drivers.sim.config import PushSpec
from dynamics_cy import JacobianWrtVariable
from messages.channels import Channels
from messages.codec import CommandEncoder, StatusDecoder
from tests.alloc import net_and_peak

N = 7
H = 1e-3
Q0 = np.array([0.1, 0.6, -0.3, -1.1, 0.2, 0.9, 0.1])
BODY = "iiwa_link_7"
P = np.array([0.02, -0.01, 0.05])                     # p_BoBq_B (m)
F = np.array([0.3, -0.2, 0.5, 4.0, -3.0, 6.0])        # F_Bq_W = [τ; f] (N·m, N)
SIGN = {"iiwa": 1.0, "panda": -1.0}                   # torque_external = SIGN · J_Bqᵀ F_Bq_W
OMEGA = 250.0                                         # rad/s: the stiffness test's PD, settled within 1.5 s


def push_spec(F_Bq_W=F, start=0.0, duration=1.0, body=BODY, point=P) -> dict:
    return {"body": body, "torque": list(F_Bq_W[:3]), "force": list(F_Bq_W[3:]), "point": list(point),
            "start": start, "duration": duration}


class Controller:
    """The controller's side in lockstep: the newest status decoded, torque commands (zero by default)."""

    def __init__(self, lc, protocol="iiwa"):
        channels = Channels.for_robot(protocol)
        self.lc, self.status = lc, StatusDecoder(protocol, N, channels.status)
        self.command = CommandEncoder(protocol, N, fields=("torque",), channel=channels.command)
        lc.subscribe(channels.status, lambda channel, data: self.status.decode(data))

    def drain(self):
        while self.lc.handle_timeout(0) > 0:
            pass

    def send(self, torque=np.zeros(N)):
        self.command.encode_or_raise(self.status.utime, torque=torque)
        self.command.publish(self.lc)
        self.drain()


def robot(plant, lc, protocol="iiwa", **sim):
    """The arm at Q0 with the firmware's gravity compensation (a zero torque command holds it)."""
    sim = {"initial_positions": Q0.tolist(), "gravity_compensation": "internal", **sim}
    r = SimulatedRobot(plant, load_sim_config(sim), protocol, Channels.for_robot(protocol), lc)
    c = Controller(lc, protocol)
    r.publish_status()
    c.drain()
    return r, c


def J_Bq(plant, q, body=BODY, point=P) -> np.ndarray:
    """J_V_WBq_W (6 × nv) by the facade's CalcJacobianSpatialVelocity."""
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, q)
    return plant.CalcJacobianSpatialVelocity(context, JacobianWrtVariable.kV, plant.GetFrameByName(body), point,
                                             plant.world_frame(), plant.world_frame())


# --- τ_ext = ± J_Bqᵀ F_Bq_W ------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", ["iiwa", "panda"])
def test_torque_external_is_the_pushs_generalized_force_with_the_robots_sign(iiwa, memq, protocol):
    """Every status while the push acts: torque_external = SIGN J_Bq(q)ᵀ F_Bq_W at the q of the step's
    start (the previous status), to 1e-9; the arm moves under it."""
    r, c = robot(iiwa, memq, protocol, pushes=[push_spec()])
    for _ in range(50):
        q = c.status.position_measured.copy()
        c.send()
        expected = SIGN[protocol] * J_Bq(iiwa, q).T @ F
        np.testing.assert_allclose(c.status.torque_external, expected, rtol=0, atol=1e-9)
    assert np.abs(expected).max() > 1.0 and np.abs(c.status.position_measured - Q0).max() > 1e-3
    np.testing.assert_array_equal(r.plant_state()["tau_external"], SIGN[protocol] * c.status.torque_external)


@pytest.mark.parametrize("protocol", ["iiwa", "panda"])
def test_torque_external_matches_pydrake(iiwa, iiwa_urdf, memq, protocol):
    """The same push through pydrake's MultibodyPlant: J_Bqᵀ F_Bq_W of the same URDF at the status's q."""
    pydrake = pytest.importorskip("pydrake.all", reason="pydrake is not installed")
    dp = pydrake.MultibodyPlant(0.0)
    pydrake.Parser(dp).AddModels(str(iiwa_urdf))
    dp.Finalize()
    context = dp.CreateDefaultContext()
    r, c = robot(iiwa, memq, protocol, pushes=[push_spec()])
    for _ in range(30):
        q = c.status.position_measured.copy()
        c.send()
    dp.SetPositions(context, q)
    J = dp.CalcJacobianSpatialVelocity(context, pydrake.JacobianWrtVariable.kV, dp.GetFrameByName(BODY), P,
                                       dp.world_frame(), dp.world_frame())
    np.testing.assert_allclose(c.status.torque_external, SIGN[protocol] * J.T @ F, rtol=0, atol=1e-9)


# --- the push moves the arm -------------------------------------------------------------------------------
@pytest.mark.parametrize("damping", [0.0, None])
def test_the_first_step_of_a_push_is_the_closed_form(iiwa, memq, damping):
    """From rest under gravity compensation alone, semi-implicit Euler with the implicit joint damping D:
    v₁ = h (M + h D)⁻¹ J_Bqᵀ F_Bq_W (D = 0: v̇ = M⁻¹ Jᵀ F). The pushed point moves along the force: its
    spatial velocity does positive work on F (V_WBq · F_Bq_W > 0), and after 0.1 s the point has moved
    along f."""
    F_push = np.array([0.0, 0.0, 0.0, 4.0, -3.0, 6.0])
    r, c = robot(iiwa, memq, pushes=[push_spec(F_push)],
                 **({} if damping is None else {"joint_damping": damping}))
    J = J_Bq(iiwa, Q0)
    context = iiwa.CreateDefaultContext()
    iiwa.SetPositions(context, Q0)
    M = iiwa.CalcMassMatrix(context)
    D = np.diag(iiwa.GetDampingVector() if damping is None else np.full(N, damping))
    c.send()
    v1 = H * np.linalg.solve(M + H * D, J.T @ F_push)
    np.testing.assert_allclose(c.status.velocity_estimated, v1, rtol=1e-9, atol=1e-12)
    assert (J @ c.status.velocity_estimated) @ F_push > 0
    X = np.zeros((4, 4))
    k = iiwa.kernels()

    def p_WBq(q):
        k.frame_pose(np.asarray(q, dtype=float), iiwa.GetFrameByName(BODY), X)
        return X[:3, :3] @ P + X[:3, 3]

    for _ in range(100):
        c.send()
    assert (p_WBq(c.status.position_measured) - p_WBq(Q0)) @ F_push[3:] > 1e-3 * np.linalg.norm(F_push[3:])


@pytest.mark.parametrize("protocol", ["iiwa", "panda"])
def test_a_stiffness_controller_deflects_by_the_external_torque(iiwa, memq, protocol):
    """Drake's convention (manipulation/README): the external torque is positive where it deflects a
    stiffness controller positively. A joint PD (kp = m ω², kd = 2 m ω, ω = OMEGA) on Q0 under a constant push
    settles where kp (q − Q0) = J_Bq(q)ᵀ F_Bq_W = SIGN · torque_external; feeding the true external torque
    (SIGN · reported) forward cancels the push (no deflection), the opposite sign doubles it."""
    deflection = {}
    for feed in (0.0, 1.0, -1.0):
        lc = lcm.LCM("memq://")
        r, c = robot(iiwa, lc, protocol, pushes=[push_spec(duration=10.0)])
        kp, kd = r.joint_inertia * OMEGA ** 2, 2 * r.joint_inertia * OMEGA
        for _ in range(1500):
            q, v = c.status.position_measured, c.status.velocity_estimated
            c.send(-kp * (q - Q0) - kd * v - feed * SIGN[protocol] * c.status.torque_external)
        q = c.status.position_measured
        deflection[feed] = q - Q0
        if feed == 0.0:
            np.testing.assert_allclose(kp * (q - Q0), J_Bq(iiwa, q).T @ F, rtol=1e-6, atol=1e-9)
            np.testing.assert_allclose(SIGN[protocol] * c.status.torque_external, kp * (q - Q0),
                                       rtol=1e-6, atol=1e-9)
    size = np.abs(deflection[0.0]).max()
    assert size > 1e-3
    assert np.abs(deflection[1.0]).max() < 1e-6 * size
    np.testing.assert_allclose(deflection[-1.0], 2 * deflection[0.0], rtol=0.05, atol=0.01 * size)


# --- when it acts -------------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", ["iiwa", "panda"])
def test_the_push_acts_on_the_steps_in_its_window_only(iiwa, memq, protocol):
    """A push over [10, 30) ms acts on the steps that start there: in free space torque_external is exactly
    zero in the statuses up to 10 ms and from 31 ms on, the push's in between; pushed at t = 40 ms for
    5 ms by push(), again."""
    r, c = robot(iiwa, memq, protocol, pushes=[push_spec(start=0.010, duration=0.020)])
    acting = []
    for _ in range(60):
        q = c.status.position_measured.copy()
        c.send()
        if r.time_ns == 40_000_000:
            r.push(BODY, F, 0.005, p_BoBq_B=P)
        on = np.any(c.status.torque_external != 0.0)
        acting.append(on)
        if on:
            np.testing.assert_allclose(c.status.torque_external, SIGN[protocol] * J_Bq(iiwa, q).T @ F, atol=1e-9)
    utimes = np.arange(1, 61)
    np.testing.assert_array_equal(acting, ((utimes > 10) & (utimes <= 30)) | ((utimes > 40) & (utimes <= 45)))


@pytest.mark.parametrize("protocol", ["iiwa", "panda"])
def test_with_contact_the_external_torque_is_contact_plus_push(iiwa, memq, protocol):
    """The arm lying on the ground and pushed on link 4 for 20 ms: torque_external = SIGN (τ_contact +
    J_Bqᵀ F_Bq_W) while pushed and SIGN τ_contact (exactly) before and after."""
    F_push = np.array([0.0, 0.0, 0.0, 0.0, 30.0, 0.0])
    r, c = robot(iiwa, memq, protocol, initial_positions=[0, 1.2, 0, -1.6, 0, 1.4, 0],
                 gravity_compensation="none", contact={"enabled": True, "ground": {"height": 0.1}},
                 pushes=[push_spec(F_push, start=0.05, duration=0.02, body="iiwa_link_4", point=[0, 0, 0])])
    for step in range(100):
        q = c.status.position_measured.copy()
        c.send()
        tau_contact = r.physics.tau_contact
        if 50 <= step < 70:
            push = J_Bq(iiwa, q, "iiwa_link_4", np.zeros(3)).T @ F_push
            np.testing.assert_allclose(c.status.torque_external, SIGN[protocol] * (tau_contact + push), atol=1e-9)
            assert np.abs(push).max() > 1.0
        else:
            np.testing.assert_array_equal(c.status.torque_external, SIGN[protocol] * tau_contact)
        assert np.abs(tau_contact).max() > 1.0


# --- the real drivers' limits ------------------------------------------------------------------------------
@pytest.mark.parametrize("driver, protocol, f_W, forces, period_ns, message", [
    ("kuka_driver", "iiwa", [0, 0, 1], (50.0, 150.0), 5_000_000, "Robot0 is in an unsafe state."),
    ("franka_driver", "panda", [0, 1, 0], (100.0, 300.0), 1_000_000, "motion aborted by reflex"),
])
def test_the_real_drivers_stop_on_a_push_above_their_external_torque_limit(iiwa, driver, protocol, f_W, forces,
                                                                           period_ns, message):
    """kuka_driver checks |joint_torque_external| against ext_trq_limit (60 N·m on joint 2) at every status,
    also while FRI monitors and the arm is held; franka_driver's collision behaviour (joint_torque_limit
    100 N·m) is a reflex. A push at link 7's origin of 150 N (iiwa: 99 N·m on joint 2) or 300 N (panda:
    201 N·m on joint 1) from 10 ms ends the driver at the first status after; one of a third does not."""
    for force in forces:
        sim = {"initial_positions": Q0.tolist(), "driver": driver,
               "pushes": [push_spec([0, 0, 0, *(force * np.array(f_W))], 0.01, 0.05, point=[0, 0, 0])]}
        r = SimulatedRobot(iiwa, load_sim_config(sim), protocol, Channels.for_robot(protocol), lcm.LCM("memq://"))
        while r.exited is None and r.time_ns < 100_000_000:
            r.tick()
        assert (r.exited is None) == (force == forces[0]), force
    assert r.time_ns == 10_000_000 + period_ns and message in r.exited.message
    if driver == "kuka_driver":                             # held: the push loaded the arm, it did not move it
        np.testing.assert_array_equal(r.physics.q, Q0)


# --- setup, errors, allocation ---------------------------------------------------------------------------
def test_push_config_errors_name_the_key(iiwa, memq):
    def load(**push):
        return load_sim_config({"pushes": [{"body": BODY, "duration": 0.1, **push}]})

    with pytest.raises(ConfigError, match=r"sim.pushes\[0\].forse: .*force"):
        load(forse=[1.0, 0.0, 0.0])
    with pytest.raises(ConfigError, match=r"sim.pushes\[0\].force\[0\]"):
        load(force=[math.inf, 0.0, 0.0])
    with pytest.raises(ConfigError, match=r"sim.pushes\[0\].torque\[2\]: must be a finite number, got nan"):
        SimConfig(pushes=[PushSpec(BODY, 0.1, torque=[0.0, 0.0, math.nan])]).validate()
    with pytest.raises(ConfigError, match=r"sim.pushes\[0\].point"):
        load(point=[0.0, 0.0])
    with pytest.raises(ConfigError, match=r"sim.pushes\[0\].duration: must be at least one time_step"):
        load(duration=0.0005)
    with pytest.raises(ConfigError, match=r"sim.pushes\[0\].duration"):
        load_sim_config({"pushes": [{"body": BODY}]})
    with pytest.raises(ConfigError, match=r"sim.pushes\[1\].body: 'iiwa_link_9' is not a body or frame of the "
                                          r"model \(bodies: \[.*'iiwa_link_7'"):
        robot(iiwa, memq, pushes=[push_spec(), push_spec(body="iiwa_link_9")])


def test_push_api_errors(iiwa, memq):
    r, _ = robot(iiwa, memq)
    with pytest.raises(ValueError, match="'hand' is not a body or frame"):
        r.push("hand", F, 0.1)
    with pytest.raises(ValueError, match=r"F_Bq_W must be 6 finite numbers"):
        r.push(BODY, F[3:], 0.1)
    with pytest.raises(ValueError, match=r"F_Bq_W must be 6 finite numbers"):
        r.push(BODY, [0, 0, 0, math.nan, 0, 0], 0.1)
    with pytest.raises(ValueError, match=r"duration must be at least one time_step"):
        r.push(BODY, F, 0.0)
    assert r.physics.stepper.pushes.count == 0


def test_a_pushed_step_allocates_nothing(iiwa, memq):
    """Physics.step with a push acting allocates nothing, not even transiently (RK4: the push at the start)."""
    r, c = robot(iiwa, memq, pushes=[push_spec(duration=10.0)], integrator="rk4")
    u = np.zeros(N)
    step = r.physics.step
    step(u)
    work, frame = net_and_peak(lambda: step(u))
    assert work == frame, f"1000 steps allocated {work} (net, peak) bytes; the call alone {frame}"
    assert np.abs(r.physics.tau_external).max() > 1.0
