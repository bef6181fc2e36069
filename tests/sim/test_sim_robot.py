"""The simulated robot on LCM (memq://, one process): lockstep stepping, the status it reports, the
driver firmware (torque, position, velocity commands, gravity compensation, command expiry)."""
import itertools
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.sim import SimulatedRobot, load_sim_config
from messages import lcmt_contact_results_for_viz, lcmt_panda_status
from messages.channels import Channels
from messages.codec import CommandEncoder, StatusDecoder
from messages.validation import MessageDecoder

N = 7
Q0 = np.array([0.1, 0.6, -0.3, -1.1, 0.2, 0.9, 0.1])


class Controller:
    """The controller's side in lockstep: decode every status, encode and publish commands, drain LCM."""

    def __init__(self, lc, protocol="iiwa", fields=("torque",), n=N, channels=None):
        channels = channels or Channels.for_robot(protocol)
        self.lc, self.status = lc, StatusDecoder(protocol, n, channels.status)
        self.command = CommandEncoder(protocol, n, fields=fields, channel=channels.command)
        self.received = []
        lc.subscribe(channels.status, self._on_status)

    def _on_status(self, channel, data):
        assert self.status.decode(data), self.status.last_error
        self.received.append(bytes(data))

    def drain(self):
        while self.lc.handle_timeout(0) > 0:
            pass

    def send(self, **arrays):
        """One command (utime = the last status's); returns how many statuses came back."""
        before = len(self.received)
        self.command.encode_or_raise(self.status.utime, **arrays)
        self.command.publish(self.lc)
        self.drain()
        return len(self.received) - before


def robot(plant, lc, protocol="iiwa", **sim):
    sim.setdefault("initial_positions", Q0.tolist())
    r = SimulatedRobot(plant, load_sim_config(sim), protocol, Channels.for_robot(protocol), lc)
    return r


def gravity(plant, q):
    tau_g = np.zeros(plant.num_velocities())
    plant.kernels().gravity(np.asarray(q, dtype=float), tau_g)
    return tau_g


# --- lockstep ---------------------------------------------------------------------------------------------
def test_each_command_advances_one_step_and_returns_one_status(iiwa, memq):
    r = robot(iiwa, memq)
    c = Controller(memq)
    r.publish_status()
    c.drain()
    assert len(c.received) == 1 and c.status.utime == 0
    np.testing.assert_array_equal(c.status.position_measured, Q0)
    for i in range(1, 6):
        assert c.send(torque=-gravity(iiwa, c.status.position_measured)) == 1
        assert c.status.utime == 1000 * i
    assert (r.physics.steps, r.time_ns, r.commands_received, r.statuses_published) == (5, 5_000_000, 5, 6)


def closed_loop(plant, steps=1000):
    """Computed torque (kp 100/s², kd 20/s) against the robot in lockstep; the status bytes, final error."""
    import lcm
    lc = lcm.LCM("memq://")
    r = robot(plant, lc, integrator="rk4")
    c = Controller(lc)
    r.publish_status()
    c.drain()
    goal, k, tau = Q0 + 0.2, plant.kernels(), np.zeros(N)
    for _ in range(steps):
        q, v = c.status.position_measured, c.status.velocity_estimated
        k.inverse_dynamics(q, v, 100.0 * (goal - q) - 20.0 * v, tau)
        c.send(torque=tau + plant.GetDampingVector() * v)
    return c.received, c.status.position_measured - goal


def test_lockstep_is_deterministic_and_controls_the_arm(iiwa):
    first, error = closed_loop(iiwa)
    second, _ = closed_loop(iiwa)
    assert first == second and len(first) == 1001
    assert np.abs(error).max() < 1e-3


def test_status_reports_the_clamped_torque_with_the_iiwas_signs(iiwa, memq):
    """iiwa: torque_commanded and torque_measured are the negated actuator torque, after the effort clamp;
    position_commanded echoes q in torque-only mode."""
    r = robot(iiwa, memq)
    c = Controller(memq)
    tau = np.array([10.0, -500.0, 3.0, 0.0, -1.0, 2.0, 100.0])          # joints 2 and 7 beyond 320 and 40
    c.send(torque=tau)
    clamped = np.clip(tau, -iiwa.GetEffortUpperLimits(), iiwa.GetEffortUpperLimits())
    np.testing.assert_array_equal(c.status.torque_commanded, -clamped)
    np.testing.assert_array_equal(c.status.torque_measured, -clamped)
    np.testing.assert_array_equal(r.physics.u_applied, clamped)
    np.testing.assert_array_equal(c.status.position_commanded, c.status.position_measured)
    np.testing.assert_array_equal(c.status.position_measured, r.physics.q)
    np.testing.assert_array_equal(c.status.velocity_estimated, r.physics.v)
    np.testing.assert_array_equal(c.status.torque_external, 0.0)


@pytest.mark.parametrize("protocol", ["iiwa", "panda"])
def test_torque_external_is_the_contact_torque(iiwa, memq, protocol):
    """Σ J_Bᵀ F of the ground contact, as each robot reports it (panda negated, iiwa as is)."""
    r = robot(iiwa, memq, protocol, initial_positions=[0, 1.2, 0, -1.6, 0, 1.4, 0],
              contact={"enabled": True, "ground": {"height": 0.1}})
    c = Controller(memq, protocol)
    c.send(torque=np.zeros(N))
    assert np.abs(r.physics.tau_contact).max() > 1.0
    sign = 1.0 if protocol == "iiwa" else -1.0
    np.testing.assert_array_equal(c.status.torque_external, sign * r.physics.tau_contact)
    if protocol == "panda":
        np.testing.assert_array_equal(c.status.torque_commanded, 0.0)


def test_gravity_compensation_internal_holds_a_zero_torque_arm(iiwa, memq):
    """Like the real iiwa's firmware: a zero torque command holds the arm; without it, the arm falls."""
    for mode, moves in (("internal", False), ("none", True)):
        import lcm
        lc = lcm.LCM("memq://")
        r = robot(iiwa, lc, gravity_compensation=mode)
        c = Controller(lc)
        for _ in range(500):
            c.send(torque=np.zeros(N))
        drift = np.abs(r.physics.q - Q0).max()
        assert (drift > 0.1) if moves else (drift < 1e-12), mode
    np.testing.assert_allclose(-c.status.torque_commanded, 0.0)


def test_position_command_runs_the_inverse_dynamics_pd(iiwa, memq):
    """u = ID(q, v, kp (q_cmd − q) + kd (v_d − v)) + d∘v (v_d = 0 for the first command), clamped to the
    effort limits; then it converges."""
    r = robot(iiwa, memq, position_control={"kp": 400.0})
    c = Controller(memq, fields=("position",))
    goal = Q0 + np.array([0.3, -0.2, 0.1, 0.25, -0.3, 0.2, 0.4])
    q, v = r.physics.q.copy(), r.physics.v.copy()
    c.send(position=goal)
    expected = np.zeros(N)
    iiwa.kernels().inverse_dynamics(q, v, 400.0 * (goal - q) - 40.0 * v, expected)
    effort = iiwa.GetEffortUpperLimits()
    np.testing.assert_allclose(-c.status.torque_commanded, np.clip(expected + 0.5 * v, -effort, effort), rtol=1e-12)
    assert np.abs(expected).max() > 320                                 # the clamp mattered
    np.testing.assert_array_equal(c.status.position_commanded, goal)
    for _ in range(1500):
        c.send(position=goal)
    np.testing.assert_allclose(c.status.position_measured, goal, atol=2e-3)


def test_position_commands_along_a_trajectory_feed_forward_their_velocity(iiwa, memq):
    """Consecutive position commands give v_d by finite difference (as Drake's SimIiwaDriver): tracking
    a ramp then lags by far less than without it."""
    robot(iiwa, memq, position_control={"kp": 100.0})
    c = Controller(memq, fields=("position",))
    rate = np.full(N, 0.3)
    for i in range(1, 601):
        c.send(position=Q0 + rate * i * 1e-3)
    lag = Q0 + rate * 0.6 - c.status.position_measured
    assert np.abs(lag).max() < 2e-4        # half a step of the ramp; a PD on position alone: kd·rate/kp = 0.06 rad
    np.testing.assert_allclose(c.status.velocity_estimated, rate, atol=1e-2)


def test_panda_velocity_mode(iiwa, memq):
    robot(iiwa, memq, "panda", control_mode=["velocity"], position_control={"kp": 100.0})
    c = Controller(memq, "panda", fields=("velocity",))
    target = np.array([0.2, -0.1, 0.1, 0.2, -0.2, 0.3, 0.1])
    for _ in range(400):
        c.send(velocity=target)
    np.testing.assert_allclose(c.status.velocity_estimated, target, atol=1e-3)
    assert c.status.control_mode == 2 and c.status.robot_mode == lcmt_panda_status.kMove
    assert c.status.control_command_success_rate == 1.0
    np.testing.assert_array_equal(c.status.velocity_commanded, target)


def test_panda_rejects_commands_for_another_control_mode(iiwa, memq):
    r = robot(iiwa, memq, "panda")                                     # torque mode (the default)
    c = Controller(memq, "panda", fields=("position",))
    assert c.send(position=Q0) == 0
    assert (r.physics.steps, r.commands_rejected, r.rejected_by) == (0, 1, {"control_mode": 1})


# --- command expiry and the safe command -------------------------------------------------------------------
@pytest.mark.parametrize("safe", ["damping", "zero_torque"])
def test_expired_command_gives_the_safe_command(iiwa, memq, safe):
    """Without a valid command for command_timeout, the driver applies −d_safe∘v (or zero torque)."""
    r = robot(iiwa, memq, command_timeout=0.005, safe_command=safe, safe_damping=3.0)
    c = Controller(memq)
    tau = np.array([5.0, 20.0, 2.0, 8.0, 0.5, 0.5, 0.1])
    c.send(torque=tau)
    for i in range(8):                           # simulated time passes without commands (the loop stalled)
        v = r.physics.v.copy()
        r.tick()
        c.drain()
        expected = tau if (i + 1) * 1_000_000 <= 5_000_000 else (-3.0 * v if safe == "damping" else 0 * v)
        np.testing.assert_allclose(-c.status.torque_commanded, expected, rtol=1e-12, atol=1e-15)
    assert r.physics.steps == 9


def test_with_no_commander_the_firmware_holds_the_arm(iiwa, memq):
    """The default (safe_command: hold, gravity_compensation: none, no brakes): before the first command
    the arm holds its initial pose, and command_timeout after the last it holds where the commands
    stopped, gravity included, as Drake's simulated driver and the real drivers do."""
    r = robot(iiwa, memq)
    c = Controller(memq)
    r.publish_status()
    c.drain()
    for _ in range(2000):                        # 2 s before any controller connects
        r.tick()
    c.drain()
    assert np.abs(r.physics.q - Q0).max() < 1e-6
    np.testing.assert_allclose(c.status.position_commanded, Q0)     # the latched pose, as Drake reports it
    push = np.array([3.0, 3.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    for _ in range(50):                          # a law that moves the arm, then exits
        c.send(torque=push - gravity(iiwa, c.status.position_measured))
    assert np.abs(r.physics.q - Q0).max() > 1e-3
    for _ in range(500):                         # the last command for command_timeout, then the hold
        r.tick()
    q_held = r.physics.q.copy()
    for _ in range(3000):
        r.tick()
    assert np.abs(r.physics.v).max() < 1e-6
    assert np.abs(r.physics.q - q_held).max() < 1e-4    # held: without the hold it falls to a joint limit


def test_automatic_safe_damping_is_stable(iiwa, memq):
    """With the automatic safe damping (the joint inertia over 2h), a moving arm is braked, not kicked."""
    r = robot(iiwa, memq, initial_velocities=[1.0, -1.0, 1.5, 1.0, 2.0, -2.0, 3.0], gravity_compensation="internal",
              safe_command="damping")
    for _ in range(300):
        r.tick()
    assert np.abs(r.physics.v).max() < 1e-3


# --- joint maps, status period, utime, contact results -----------------------------------------------------
def test_protocol_joints_in_another_order(iiwa, memq):
    names = [f"iiwa_joint_{i}" for i in range(7, 0, -1)]
    r = robot(iiwa, memq, joints=names)
    c = Controller(memq)
    tau = np.zeros(N)
    tau[0] = 1.0                                                         # protocol joint 0 is iiwa_joint_7
    c.send(torque=tau - gravity(iiwa, r.physics.q)[::-1])
    np.testing.assert_array_equal(c.status.position_measured, r.physics.q[::-1])
    assert r.physics.u_applied[6] == pytest.approx(1.0 - gravity(iiwa, Q0)[6], abs=1e-12)


def test_a_model_with_more_actuators_than_protocol_joints(iiwa, memq):
    """Six protocol joints on the seven-actuator iiwa: the seventh actuator gets nothing (but gravity
    compensation, which the firmware applies to the protocol's joints only, leaves it out too)."""
    joints = [f"iiwa_joint_{i}" for i in range(1, 7)]
    r = robot(iiwa, memq, joints=joints, gravity_compensation="internal")
    c = Controller(memq, n=6)
    tau = np.linspace(-1, 1, 6)
    c.send(torque=tau)
    np.testing.assert_allclose(r.physics.u_commanded[:6], tau - gravity(iiwa, Q0)[:6], rtol=1e-12)
    assert r.physics.u_commanded[6] == 0.0
    np.testing.assert_array_equal(c.status.position_measured, r.physics.q[:6])
    assert r.joint_names == joints


def test_status_period_and_wall_clock_utime(iiwa, memq):
    robot(iiwa, memq, status_period=0.003, utime="wall")
    c = Controller(memq)
    counts = [c.send(torque=np.zeros(N)) for _ in range(9)]
    assert counts == [0, 0, 1] * 3
    assert abs(c.status.utime - time.time() * 1e6) < 5e6


def test_contact_results_are_published_at_their_rate(iiwa, memq):
    r = robot(iiwa, memq, initial_positions=[0, 1.2, 0, -1.6, 0, 1.4, 0],
              contact={"enabled": True, "ground": {"height": 0.037}, "publish_rate": 100.0})   # 0.2 mm deep
    c = Controller(memq)
    decoder = MessageDecoder(lcmt_contact_results_for_viz, "CONTACT_RESULTS")
    messages = []
    memq.subscribe("CONTACT_RESULTS", lambda channel, data: messages.append(decoder.decode_or_raise(data)))
    for _ in range(50):                             # zero torque: the arm rests on the ground
        c.send(torque=np.zeros(N))
    assert [m.timestamp for m in messages] == [0, 10_000, 20_000, 30_000, 40_000]
    assert all(m.num_point_pair_contacts > 0 for m in messages)
    for info in messages[-1].point_pair_contact_info:
        assert info.body1_name.startswith("iiwa_link_") and info.body1_name.endswith("(2)")
        assert info.body2_name == "world(0)" and info.normal == (0.0, 0.0, 1.0) and info.contact_force[2] < 0
    s = r.summary()
    assert s["contact_results_published"] == s["contact_results_with_contact"] == 5
    largest = max(np.linalg.norm(info.contact_force) for m in messages for info in m.point_pair_contact_info)
    assert s["contact_max_force_n"] == pytest.approx(largest, rel=1e-6)


def test_plant_state(iiwa, memq):
    r = robot(iiwa, memq, contact={"enabled": True})
    Controller(memq).send(torque=np.ones(N))
    state = r.plant_state()
    assert state["time_ns"] == 1_000_000
    np.testing.assert_array_equal(state["q"], r.physics.q)
    np.testing.assert_array_equal(state["u_applied"], np.ones(N))
    assert state["contact_results"].num_point_pair_contacts() == 0
    state["q"][0] = 99.0
    assert r.physics.q[0] != 99.0


def test_lockstep_tick_allocates_nothing_in_steady_state(iiwa, memq):
    """1000 command → step → status round trips keep no memory (counters replace their ints in place), and
    the transient peak stays at a few Python ints."""
    r = robot(iiwa, memq)
    command = CommandEncoder("iiwa", N, fields=("torque",))
    data = command.encode_or_raise(0, torque=np.zeros(N)).tobytes()

    def ticks(count):
        for _ in count:
            memq.publish("IIWA_COMMAND", data)
            while memq.handle_timeout(0) > 0:
                pass

    status = StatusDecoder("iiwa", N)
    memq.subscribe("IIWA_STATUS", lambda channel, d: status.decode(d))
    tracemalloc.start()
    try:
        ticks(itertools.repeat(None, 300))       # counters past the small-int cache, and traced
        before = tracemalloc.take_snapshot()
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        ticks(itertools.repeat(None, 1000))
        current, peak = tracemalloc.get_traced_memory()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    sim = str(Path(r.__class__.__module__.replace(".", "/")).parent)
    kept = sum(s.size_diff for s in after.compare_to(before, "lineno") if sim in s.traceback[0].filename)
    assert kept <= 0, f"{kept} bytes kept in drivers/sim"
    assert current - start <= 64 and peak - start < 2048, f"net {current - start}, peak {peak - start} bytes"
    assert status.ok_count == 1300 and r.physics.steps == 1300


# --- configuration errors ----------------------------------------------------------------------------------
def test_setup_errors_name_the_key(iiwa, memq):
    with pytest.raises(ConfigError, match=r"sim.joints\[1\]: 'elbow' is not an actuated joint"):
        robot(iiwa, memq, joints=["iiwa_joint_1", "elbow"])
    with pytest.raises(ConfigError, match=r"sim.position_control.kp: must be a number or a list of 7"):
        robot(iiwa, memq, position_control={"kp": [1.0, 2.0]})
    with pytest.raises(ConfigError, match=r"sim.safe_damping\[2\]: must be a finite number >= 0"):
        robot(iiwa, memq, safe_damping=[1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="protocol must be 'iiwa' or 'panda'"):
        SimulatedRobot(iiwa, None, "ur5")


def test_brakes_hold_the_arm_until_the_first_command(iiwa, memq):
    """sim.brakes: the arm does not sag before a controller connects; time runs on."""
    r = robot(iiwa, memq, brakes=True, initial_positions=[0.3, 0.8, 0.0, -1.0, 0.0, 0.5, 0.0])
    q0 = r.physics.q.copy()
    for _ in range(200):
        r.tick()
    np.testing.assert_array_equal(r.physics.q, q0)
    assert r.physics.time_ns == 200 * 1_000_000
    c = Controller(memq)
    c.send(torque=np.zeros(N))          # the first command releases the brakes: now it falls
    for _ in range(200):
        r.tick()
    assert np.max(np.abs(r.physics.q - q0)) > 1e-3
