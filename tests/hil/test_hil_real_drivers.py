"""The loop against the real drivers' behaviour (the simulated plant's sim.driver), each shipped
config of configs/real/ in both start orders, in lockstep (memq): no driver abort, no loop fault,
holding within 1 mrad and tracking the waypoint move; the exit-path safe command; a second commander."""
from pathlib import Path

import lcm
import numpy as np
import pytest
import yaml

from drivers.core.config import channels_for
from drivers.core.robot import build_plant, load_robot
from drivers.run_config import load_config, parse_config
from drivers.sim import SimulatedRobot
from hil.lockstep import start_lockstep
from hil.loop import ControlLoop
from messages.codec import CommandDecoder
from messages.drake import lcmt_iiwa_command

CASES = ["kuka_position_torque", "kuka_torque_only", "franka_torque", "franka_velocity", "franka_position"]
Q0 = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0])
Q1 = np.array([0.2, 0.7, 0.1, -1.1, 0.1, 0.9, 0.1])


def start(name, order, trajectory=None, lead_s=1.0, **overrides):
    """(loop, sim, lc) of configs/real/NAME.yaml started in `order` (hil.lockstep.start_lockstep), its
    sections' keys replaced by `overrides`."""
    cfg = load_config(f"configs/real/{name}.yaml", {"viz": False, **({"trajectory": trajectory} if trajectory else {}),
                                                    **overrides})
    lc = lcm.LCM("memq://")
    loop, sim = start_lockstep(cfg, order, lead_s, lc)
    return loop, sim, lc


def run(loop, seconds, on_tick=None):
    return loop.run(seconds, on_tick=on_tick)


@pytest.mark.parametrize("order", ["loop_first", "driver_first"])
@pytest.mark.parametrize("name", CASES)
def test_the_loop_holds_and_tracks_behind_each_real_driver_mode(name, order):
    loop, sim, _ = start(name, order, {"type": "hold"})
    drift = [0.0]

    def track(lp):
        if lp.safety.commanding:
            drift[0] = max(drift[0], float(np.max(np.abs(lp.q - Q0))))
    summary = run(loop, 2.0, track)
    assert sim.exited is None, sim.exited
    assert summary["final_state"] == "RUNNING" and summary["faults"] == [], summary["transitions"]
    assert drift[0] < 1e-3, drift
    assert "first status" in summary["startup"]

    loop, sim, _ = start(name, order)
    summary = run(loop, 5.0)
    assert sim.exited is None, sim.exited
    assert summary["final_state"] == "RUNNING" and summary["faults"] == [], summary["transitions"]
    assert np.max(summary["tracking_error_rad"]["max"]) < 0.02, summary["tracking_error_rad"]
    np.testing.assert_allclose(loop.q, Q0, atol=2e-3)              # there and back again


def test_kuka_startup_waits_the_guard_bridges_utime_minus_one_and_learns_200_hz():
    loop, sim, _ = start("kuka_position_torque", "loop_first", {"type": "hold"}, lead_s=0.1)
    summary = run(loop, 2.0)
    assert sim.exited is None and sim.commands_received > 0
    assert summary["status"]["period_ms"] == pytest.approx(5.0)
    assert summary["status"]["clock_jumps"] == 1                  # −1 → the host's wall clock, bridged
    assert "utime -1: the driver is synchronising its clock" in summary["startup"]
    assert "waiting 0.3 s (robot.kuka_driver.start_guard)" in summary["startup"]
    assert "status timeout 15.0 ms" in summary["startup"]
    # the trajectory clock ran on across the switch: 2 s of robot time for 2 s of run, no 1.7e9 s jump
    assert 1.9e9 < loop.hardware.timing.robot_ns < 2.6e9


def test_without_the_guard_the_kuka_driver_aborts():
    """What the issue measured: a loop that commands 5 ms after the first status kills the driver."""
    cfg = load_config("configs/real/kuka_position_torque.yaml",
                      {"viz": False, "robot": {"kuka_driver": {"start_guard": 0.0}}})
    lc = lcm.LCM("memq://")
    sim = SimulatedRobot(build_plant(cfg.robot), cfg.sim, "iiwa", channels_for(cfg), lc)
    loop = ControlLoop(cfg, load_robot(cfg.robot), lc, mode="lockstep", sim=sim).configure()
    sim.publish_status()
    loop.run(0.5)
    assert sim.exited.message == "First command received within guard time.  Aborting."


@pytest.mark.parametrize("order", ["loop_first", "driver_first"])
def test_a_config_that_does_not_name_the_driver_keeps_kuka_drivers_guard(order):
    """robot.driver left out (auto) behind kuka_driver: the loop tells it from its first status (utime −1
    until its clock is synchronised, NaN ipo positions before FRI commands) and waits the guard; the
    driver does not abort, in either start order (a driver up for 1 s is past its guard and synchronised:
    no wait then)."""
    data = yaml.safe_load(open("configs/real/kuka_position_torque.yaml"))
    del data["robot"]["driver"]
    cfg = parse_config(data, Path("configs/real").resolve(), "auto.yaml",
                       {"viz": False, "trajectory": {"type": "hold"}})
    assert cfg.robot.driver == "auto" and cfg.robot.kuka_driver.start_guard == 0.3
    loop, sim = start_lockstep(cfg, order, 1.0, lcm.LCM("memq://"))
    summary = run(loop, 1.0)
    assert sim.exited is None and sim.commands_received > 0
    assert ("waiting 0.3 s (robot.kuka_driver.start_guard)" in summary["startup"]) == (order == "loop_first")
    assert summary["final_state"] == "RUNNING" and summary["faults"] == []


def test_auto_behind_drakes_simulated_driver_sends_from_the_first_status():
    cfg = load_config("configs/demo.yaml", {"viz": False})
    assert cfg.robot.driver == "auto"
    loop, sim = start_lockstep(cfg, "together", 1.0, lcm.LCM("memq://"))
    run(loop, 0.05)
    assert loop.hardware.guard_ns == 0 and sim.commands_received >= 49


@pytest.mark.parametrize("name", CASES)
def test_the_exit_command_is_the_documented_safe_command(name):
    loop, sim, lc = start(name, "driver_first", {"type": "hold"})
    got = []
    lc.subscribe(loop.channels.command, lambda c, data: got.append(bytes(data)))

    class Boom(Exception):
        pass

    ticks = [0]

    def explode(lp):
        ticks[0] += 1
        if ticks[0] == 300:
            raise Boom()
    with pytest.raises(Boom):                 # an exception out of the run: still the safe command
        run(loop, 2.0, explode)
    q, v = loop.q.copy(), loop.v.copy()       # the state it left from
    while lc.handle_timeout(0) > 0:
        pass
    assert loop.hardware.commands.exit_sent
    d = CommandDecoder(loop.robot.protocol, 7)
    assert d.decode(got[-1]), d.last_error
    if loop.hardware.commands.send_q:
        np.testing.assert_allclose(d.position, q)                  # hold where it is
    if loop.hardware.commands.send_v:
        assert not d.velocity.any()
    if loop.hardware.commands.send_tau:
        expect = -loop.cfg.safety.damping[0] * v
        np.testing.assert_allclose(d.torque, expect, atol=1e-9)    # damping; the robot holds gravity
    assert sim.exited is None


def test_a_second_commander_is_a_fault_naming_it():
    loop, sim, lc = start("kuka_torque_only", "driver_first", {"type": "hold"})
    other = lcmt_iiwa_command()
    other.utime, other.num_joints, other.joint_position = 5, 7, list(Q0)
    other.num_torques, other.joint_torque = 7, [0.0] * 7

    def intruder(lp):
        if lp.tick_index == 500:
            lc.publish(lp.channels.command, other.encode())
    summary = run(loop, 1.0, intruder)
    assert summary["final_state"] == "FAULT" and summary["status"]["foreign_commands"] == 1
    assert "second commander: a command on IIWA_COMMAND that this loop did not send" in summary["transitions"][-1]
    # garbage on the channel commands nothing: no fault
    loop, sim, lc = start("kuka_torque_only", "driver_first", {"type": "hold"})

    def garbage(lp):
        if lp.tick_index == 500:
            lc.publish(lp.channels.command, b"\x00" * 40)
    summary = run(loop, 1.0, garbage)
    assert summary["final_state"] == "RUNNING" and summary["status"]["foreign_commands"] == 0


class JumpAfter:
    """Holds the start position, then q_d jumps by `jump` at `after_s` of robot time: what a stall makes
    of a trajectory sampled on the robot's clock (its clock leaps, q_d with it)."""

    error = None

    def __init__(self, jump: float, after_s: float):
        self.jump, self.after_ns = jump, int(after_s * 1e9)
        self.q0, self.t0 = np.zeros(7), 0

    def start(self, q, t_ns: int) -> None:
        self.q0[:], self.t0 = q, t_ns

    def sample(self, t_ns: int, q_d, v_d, a_d) -> None:
        q_d[:] = self.q0 + (self.jump if t_ns - self.t0 >= self.after_ns else 0.0)
        v_d[:] = a_d[:] = 0.0


@pytest.mark.parametrize("limited", [True, False])
def test_a_jump_of_the_setpoint_reaches_the_driver_at_most_at_the_velocity_limit(limited):
    """Position setpoints move at most v_max·T per command (v_max the safety's velocity limits, T the
    loop period): a 20 mrad leap of q_d (a robot-clock jump after a stall) becomes a ramp, which the
    driver's position interpolator does not turn into a velocity spike; sent as a step (the limit
    lifted), kuka_driver's position mode swings joint 4 past its velocity limit."""
    loop, sim, _ = start("kuka_position_torque", "driver_first", {"type": "hold"})
    loop.trajectory = JumpAfter(0.02, 0.2)
    if not limited:
        loop.hardware.commands.q_step[:] = np.inf
        assert [f["fault"] for f in run(loop, 1.0)["faults"]] == ["VELOCITY_LIMIT"]
        return
    sent = []
    summary = run(loop, 1.0,
                  on_tick=lambda lp: sent.append(lp.hardware.commands.q_cmd.copy()) if lp.safety.commanding else None)
    assert summary["faults"] == [], summary["faults"]
    q_cmd = np.array(sent)
    step = np.abs(np.diff(q_cmd, axis=0))
    v_max_T = loop.safety.v_hi * loop.period_ns * 1e-9
    assert np.all(step <= v_max_T + 1e-12), step.max(axis=0)            # never more than v_max·T
    assert np.all(step.max(axis=0) >= 0.99 * v_max_T)                   # the leap was ramped at v_max
    np.testing.assert_allclose(q_cmd[-1], q_cmd[0] + 0.02, atol=1e-9)   # and the setpoint got there


@pytest.mark.parametrize("name", ["kuka_position_torque", "kuka_torque_only", "franka_velocity"])
def test_a_status_gap_mid_move_faults_holds_and_recovers_smoothly(name):
    """Statuses lost for 60 ms in the middle of the waypoint move (sim.faults silent), with
    safety.status_timeout_periods 10 and recover: true: STATUS_TIMEOUT, the hold, recovery, the move
    finished; no other fault, and the positions sent never step more than v_max·T."""
    gap = {"type": "silent", "start": 2.0, "stop": 2.06}
    loop, sim, _ = start(name, "driver_first", safety={"status_timeout_periods": 10, "recover": True},
                         sim={"faults": [gap]})
    sent = []
    summary = run(loop, 8.0, on_tick=lambda lp: sent.append(lp.hardware.commands.q_cmd.copy())
                  if lp.hardware.commands.sent else None)
    assert sim.exited is None, sim.exited
    assert [f["fault"] for f in summary["faults"]] == ["STATUS_TIMEOUT"], summary["transitions"]
    assert summary["final_state"] == "RUNNING", summary["transitions"]
    assert any("recovered from STATUS_TIMEOUT" in t for t in summary["transitions"])
    assert np.max(summary["tracking_error_rad"]["max"]) < 0.02, summary["tracking_error_rad"]
    np.testing.assert_allclose(loop.q, Q0, atol=2e-3)              # the move restarted and ended
    if loop.hardware.commands.send_q:
        step = np.abs(np.diff(np.array(sent), axis=0))
        assert np.all(step <= loop.hardware.commands.q_step + 1e-12), step.max(axis=0)
