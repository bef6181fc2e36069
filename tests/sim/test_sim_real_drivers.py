"""The simulated plant behind the real drivers' behaviour (sim.driver: kuka_driver, franka_driver),
checked against what kuka_driver.cc and franka_driver.cc do, read through lcm-gen's classes (the
controller's side here is independent of messages.codec)."""
import math

import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.sim import SimulatedRobot, load_sim_config
from drivers.sim.real_drivers import KUKA_EXT_TRQ_SCALE, LOCKSTEP_EPOCH_US
from messages.channels import Channels
from messages.drake import lcmt_iiwa_command, lcmt_iiwa_status, lcmt_panda_command, lcmt_panda_status

Q0 = [0.1, 0.6, -0.3, -1.1, 0.2, 0.9, 0.1]


class Peer:
    """A controller on the same memq LCM that keeps every status (lcm-gen decoded)."""

    def __init__(self, lc, protocol):
        self.lc, self.protocol = lc, protocol
        self.channels = Channels.for_robot(protocol)
        self.statuses = []
        status_type = lcmt_iiwa_status if protocol == "iiwa" else lcmt_panda_status
        lc.subscribe(self.channels.status, lambda c, data: self.statuses.append(status_type.decode(data)))

    def drain(self):
        while self.lc.handle_timeout(0) > 0:
            pass

    def iiwa(self, utime, position=None, torque=None):
        msg = lcmt_iiwa_command()
        msg.utime = utime
        msg.num_joints, msg.joint_position = (len(position), list(position)) if position is not None else (0, [])
        msg.num_torques, msg.joint_torque = (len(torque), list(torque)) if torque is not None else (0, [])
        self.lc.publish(self.channels.command, msg.encode())
        self.drain()

    def panda(self, utime, mode, position=(), velocity=(), torque=()):
        msg = lcmt_panda_command()
        msg.utime, msg.control_mode_expected = utime, mode
        msg.num_joint_position, msg.joint_position = len(position), list(position)
        msg.num_joint_velocity, msg.joint_velocity = len(velocity), list(velocity)
        msg.num_joint_torque, msg.joint_torque = len(torque), list(torque)
        self.lc.publish(self.channels.command, msg.encode())
        self.drain()


def make(plant, lc, protocol, driver, **flags):
    sim = {"initial_positions": Q0, "driver": driver, driver: flags}
    return SimulatedRobot(plant, load_sim_config(sim), protocol, Channels.for_robot(protocol), lc), Peer(lc, protocol)


def run(robot, peer, seconds):
    for _ in range(round(seconds / robot.config.time_step)):
        robot.tick()
    peer.drain()


# --- kuka_driver ---------------------------------------------------------------------------------------

def test_kuka_status_every_time_step_utime_minus_one_until_synchronised_then_the_wall_clock(iiwa, memq):
    robot, peer = make(iiwa, memq, "iiwa", "kuka_driver")
    run(robot, peer, 1.2)
    s = peer.statuses
    assert len(s) == 240                                   # 200 Hz: --time_step 0.005
    assert all(m.utime == -1 for m in s[:199])             # TimeSyncFilter(200)
    assert [m.utime for m in s[199:201]] == [LOCKSTEP_EPOCH_US + 1_000_000, LOCKSTEP_EPOCH_US + 1_005_000]
    # joint_position_ipo is NaN outside COMMANDING (0.5 s of monitoring), the command position after
    assert all(math.isnan(x) for m in s[:99] for x in m.joint_position_ipo)
    assert all(math.isfinite(x) for m in s[101:] for x in m.joint_position_ipo)
    # no command: the position held is the one at which COMMANDING began
    assert np.allclose(s[-1].joint_position_measured, Q0, atol=1e-3)


def test_kuka_velocity_is_the_drivers_low_pass_filtered_finite_difference(iiwa, memq):
    robot, peer = make(iiwa, memq, "iiwa", "kuka_driver", torque_only=True, monitoring=0.0, time_step=0.001,
                       start_command_guard=0.0)
    run(robot, peer, 0.002)
    for k in range(60):                                    # a torque pulse on joint 1 moves the arm
        peer.iiwa(k, torque=[8.0 if k < 30 else 0.0] + [0.0] * 6)
    alpha = 1 - 0.001 / (0.001 + 1 / (2 * math.pi * 40))
    filtered = np.zeros(7)
    q = [np.array(m.joint_position_measured) for m in peer.statuses]
    for i in range(1, len(q)):
        filtered = alpha * filtered + (1 - alpha) * (q[i] - q[i - 1]) / 0.001
        assert np.allclose(peer.statuses[i].joint_velocity_estimated, filtered, atol=1e-12)
    assert abs(filtered[0]) > 1e-2


@pytest.mark.parametrize("before_first_status", [False, True])
def test_kuka_a_command_within_the_start_guard_aborts_the_driver(iiwa, memq, before_first_status):
    robot, peer = make(iiwa, memq, "iiwa", "kuka_driver")
    if not before_first_status:                            # the loop started first: a command at 5 ms
        run(robot, peer, 0.005)
    count = len(peer.statuses)
    peer.iiwa(7, position=Q0, torque=[0.0] * 7)
    assert robot.exited is not None and robot.exited.status == 134
    assert robot.exited.message == "First command received within guard time.  Aborting."
    run(robot, peer, 0.1)
    assert len(peer.statuses) == count                     # the process is gone
    assert robot.summary()["exit"]["status"] == 134


def test_kuka_the_guard_ends_250_ms_after_the_first_status(iiwa, memq):
    robot, peer = make(iiwa, memq, "iiwa", "kuka_driver")
    robot.publish_status()                                 # the first status at 0
    run(robot, peer, 0.245)                                # the last at 245 ms: still inside
    peer.iiwa(1, position=Q0)
    assert robot.exited is not None
    robot.close()
    robot2, peer2 = make(iiwa, memq, "iiwa", "kuka_driver")
    robot2.publish_status()
    run(robot2, peer2, 0.25)
    peer2.iiwa(1, position=Q0)
    assert robot2.exited is None and robot2.commands_received == 1


def test_kuka_default_mode_a_command_without_positions_stops_the_driver(iiwa, memq):
    robot, peer = make(iiwa, memq, "iiwa", "kuka_driver")
    run(robot, peer, 0.3)
    peer.iiwa(1, torque=[0.0] * 7)
    assert robot.exited is not None and "0 joint positions" in robot.exited.message


def test_kuka_default_mode_tracks_positions_adds_torques_and_ignores_utime_minus_one(iiwa, memq):
    robot, peer = make(iiwa, memq, "iiwa", "kuka_driver", monitoring=0.0)
    run(robot, peer, 0.3)
    target = np.array(Q0) + 0.05
    peer.iiwa(-1, position=target)                         # lcm_command_.utime == -1: "no command"
    run(robot, peer, 0.5)
    assert np.allclose(peer.statuses[-1].joint_position_measured, Q0, atol=1e-3)
    for _ in range(200):                                   # the lockstep step: one status per command
        peer.iiwa(5, position=target, torque=[0.0] * 7)
    assert np.allclose(peer.statuses[-1].joint_position_measured, target, atol=1e-3)
    assert np.allclose(peer.statuses[-1].joint_position_commanded, target)
    assert len(peer.statuses) == 60 + 1 + 100 + 200         # one status (5 ms) per command in lockstep
    # beyond the joint limit less 1°: clamped as ApplyJointLimits does
    far = target.copy()
    far[1] = 3.0
    peer.iiwa(5, position=far)
    assert peer.statuses[-1].joint_position_commanded[1] == pytest.approx(math.radians(119))
    # FRI POSITION client mode: the torques are not applied
    robot3, peer3 = make(iiwa, memq, "iiwa", "kuka_driver", monitoring=0.0, client_command_mode="position",
                        time_step=0.001)
    run(robot3, peer3, 0.3)
    peer3.iiwa(5, position=Q0, torque=[5.0] * 7)
    robot4, peer4 = make(iiwa, memq, "iiwa", "kuka_driver", monitoring=0.0, time_step=0.001)
    run(robot4, peer4, 0.3)
    peer4.iiwa(5, position=Q0, torque=[5.0] * 7)
    assert np.allclose(robot4.plant_state()["u_commanded"] - robot3.plant_state()["u_commanded"], 5.0, atol=1e-6)


def test_kuka_commands_arriving_together_move_the_setpoint_once_per_fri_cycle(iiwa, memq):
    """A stall of either process delivers queued commands microseconds apart. kuka_driver's command()
    reads the newest command once per FRI cycle, so the setpoint, and the interpolator's velocity,
    change once a cycle by what the commands moved: a 0.2 rad/s ramp with three commands read 10 µs
    apart stays near 0.2 rad/s (differentiated over the receipt times, 1 mrad in 10 µs was a
    100 rad/s feed-forward that flung joint 0 past its velocity limit)."""
    robot, peer = make(iiwa, memq, "iiwa", "kuka_driver", monitoring=0.0)
    run(robot, peer, 0.3)
    step = np.array([1e-3] + [0.0] * 6)                    # 1 mrad per 5 ms command: 0.2 rad/s on joint 0
    for k in range(20):
        peer.iiwa(5, position=np.array(Q0) + k * step, torque=[0.0] * 7)
    now = robot.wall_us()
    for i, k in enumerate(range(20, 23)):                  # queued during a stall, read together
        msg = lcmt_iiwa_command()
        msg.utime, msg.num_joints, msg.joint_position = 5, 7, list(np.array(Q0) + k * step)
        assert robot.driver.on_command(msg.encode(), now + 10 * i)
    robot.advance()
    for k in range(23, 60):
        peer.iiwa(5, position=np.array(Q0) + k * step, torque=[0.0] * 7)
    v0 = [m.joint_velocity_estimated[0] for m in peer.statuses[-40:]]
    assert 0.15 < max(v0) < 0.5, max(v0)                   # the ramp's 0.2 rad/s, a cycle of 0.6 at most
    assert peer.statuses[-1].joint_position_commanded[0] == pytest.approx(Q0[0] + 59e-3)


def test_kuka_torque_only_gravity_by_the_cabinet_expiry_engages_the_holding_controller(iiwa, memq):
    robot, peer = make(iiwa, memq, "iiwa", "kuka_driver", torque_only=True, time_step=0.001, monitoring=0.0)
    run(robot, peer, 0.3)
    for k in range(200):                                   # zero torque: the cabinet holds gravity
        peer.iiwa(k, torque=[0.0] * 7)
    assert np.allclose(peer.statuses[-1].joint_position_measured, Q0, atol=1e-6)
    for k in range(100):                                   # a push on joint 1, then silence
        peer.iiwa(k, torque=[3.0] + [0.0] * 6)
    last = len(peer.statuses)
    assert peer.statuses[-1].joint_position_measured[0] > Q0[0] + 1e-3
    assert robot.driver_log == []
    run(robot, peer, 1.0)
    assert robot.driver_log == ["Torque command expiration! Engaging holding controller."]
    at_expiry = np.array(peer.statuses[last + 50].joint_position_measured)     # 50 ms after the last command
    held = np.array(peer.statuses[-1].joint_position_measured)
    assert abs(held[0] - at_expiry[0]) < 0.01 and np.allclose(peer.statuses[-1].joint_velocity_estimated, 0, atol=1e-3)
    peer.iiwa(1, torque=[0.0] * 7)
    assert robot.driver_log[-1] == "Received fresh command. Resuming nominal control."
    # a command with positions only carries no torque: the holding controller stays on
    assert robot.exited is None


def test_kuka_external_torque_above_its_limit_ends_the_driver(iiwa, memq):
    robot, _ = make(iiwa, memq, "iiwa", "kuka_driver")
    limit = 60.0 * np.array(KUKA_EXT_TRQ_SCALE)
    assert robot.driver.status(0, 0, np.zeros(7), 0.99 * limit) == -1 and robot.exited is None
    tau = np.zeros(7)
    tau[6] = 6.01                                          # joint 7: 60 × 0.1
    assert robot.driver.status(5_000_000, 0, np.zeros(7), tau) is None
    assert robot.exited.status == 134 and robot.exited.message == "Robot0 is in an unsafe state."


# --- franka_driver -------------------------------------------------------------------------------------

VELOCITY, POSITION, TORQUE = (lcmt_panda_status.CONTROL_MODE_VELOCITY, lcmt_panda_status.CONTROL_MODE_POSITION,
                              lcmt_panda_status.CONTROL_MODE_TORQUE)


def test_franka_default_velocity_mode_dies_on_a_torque_command(iiwa, memq):
    robot, peer = make(iiwa, memq, "panda", "franka_driver")
    robot.publish_status()
    peer.drain()
    assert peer.statuses[0].utime == LOCKSTEP_EPOCH_US and peer.statuses[0].robot_mode == lcmt_panda_status.kMove
    peer.panda(peer.statuses[-1].utime, TORQUE, torque=[0.0] * 7)
    assert robot.exited.status == 0                        # ControlLoop catches, recovers, main returns 0
    assert robot.exited.message.startswith(
        "[error] Control loop exception: [Failure at franka-driver/franka_driver.cc:377 in DoVelocityControl(): "
        "condition 'command_->control_mode_expected == drake::lcmt_panda_status::CONTROL_MODE_VELOCITY' failed.]")


def test_franka_velocity_mode_moves_and_expires_on_the_wall_clock(iiwa, memq):
    robot, peer = make(iiwa, memq, "panda", "franka_driver")
    robot.publish_status()
    peer.drain()
    v = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2]
    for _ in range(300):
        peer.panda(peer.statuses[-1].utime, VELOCITY, velocity=v)
    assert peer.statuses[-1].joint_velocity[6] == pytest.approx(0.2, abs=0.01)
    # a command whose utime is more than expire_sec from the driver's wall clock is dropped
    peer.panda(peer.statuses[-1].utime - 150_000, VELOCITY, velocity=v)
    assert robot.driver_log == ["[warning] Resetting state velocity command to zero"]
    run(robot, peer, 0.3)
    assert abs(peer.statuses[-1].joint_velocity[6]) < 1e-3
    peer.panda(peer.statuses[-1].utime, VELOCITY, velocity=v[:6])    # 6 velocities
    assert "Received command with unexpected num_joint_velocity" in robot.exited.message


def test_franka_torque_mode_gravity_by_the_robot_damping_without_a_command(iiwa, memq):
    robot, peer = make(iiwa, memq, "panda", "franka_driver", control_mode="torque")
    robot.publish_status()
    peer.drain()
    for _ in range(300):
        peer.panda(peer.statuses[-1].utime, TORQUE, torque=[0.0] * 7)
    assert np.allclose(peer.statuses[-1].joint_position, Q0, atol=1e-9)
    for _ in range(50):
        peer.panda(peer.statuses[-1].utime, TORQUE, torque=[0.0] * 6 + [0.5])
    assert peer.statuses[-1].joint_velocity[6] > 0.05
    run(robot, peer, 0.5)                                  # expired after 0.1 s: −kd v (kd7 = 2.5)
    assert robot.driver_log == ["[warning] Torque command expiration! Engaging gravity compensation and "
                                "damping controller."]
    assert abs(peer.statuses[-1].joint_velocity[6]) < 1e-3
    peer.panda(peer.statuses[-1].utime, TORQUE, torque=[0.0] * 7, velocity=[0.0] * 7)
    assert "condition 'command_->num_joint_velocity == 0' failed." in robot.exited.message


def test_franka_position_mode_holds_the_last_command(iiwa, memq):
    robot, peer = make(iiwa, memq, "panda", "franka_driver", control_mode="position")
    robot.publish_status()
    peer.drain()
    target = np.array(Q0) + 0.03
    for _ in range(400):
        peer.panda(peer.statuses[-1].utime, POSITION, position=target)
    run(robot, peer, 0.5)                                  # expired: "Leaving ... at last known command"
    assert robot.driver_log == ["[warning] Leaving state position command at last known command"]
    assert np.allclose(peer.statuses[-1].joint_position, target, atol=1e-3)
    assert np.allclose(peer.statuses[-1].joint_position_desired, target)


def test_real_driver_config_errors_name_the_key(iiwa, memq):
    with pytest.raises(ConfigError, match="sim.control_mode"):
        load_sim_config({"driver": "franka_driver", "control_mode": ["torque"]})
    with pytest.raises(ConfigError, match="sim.kuka_driver.time_step"):
        load_sim_config({"driver": "kuka_driver", "time_step": 0.002, "kuka_driver": {"time_step": 0.005}})
    with pytest.raises(ConfigError, match="sim.franka_driver.control_mode"):
        load_sim_config({"driver": "franka_driver", "franka_driver": {"control_mode": "impedance"}})
    with pytest.raises(ConfigError, match="kuka_driver drives the iiwa protocol"):
        SimulatedRobot(iiwa, load_sim_config({"driver": "kuka_driver"}), "panda", lcm=memq)
    with pytest.raises(ConfigError, match="7 comma delimited values"):
        SimulatedRobot(iiwa, load_sim_config({"driver": "kuka_driver", "kuka_driver": {"joint_ext_trq_limit": [1]}}),
                       "iiwa", lcm=memq)


# --- as a process, in real time ----------------------------------------------------------------------

def test_kuka_driver_process_aborts_under_a_running_controller(tmp_path, multicast_url):
    """A controller already commanding when the driver starts (or restarts) kills it, as the real one."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    import lcm

    repo = Path(__file__).resolve().parents[2]
    path = tmp_path / "kuka.yaml"
    path.write_text(f"robot: {{model: {repo / 'configs/robots/iiwa14.urdf'}, protocol: iiwa}}\n"
                    f"lcm: {{url: \"{multicast_url}\"}}\nsim: {{driver: kuka_driver}}\n")
    lc = lcm.LCM(multicast_url)
    statuses = []
    lc.subscribe("IIWA_STATUS", lambda c, data: statuses.append(lcmt_iiwa_status.decode(data)))
    env = dict(os.environ, PYTHONPATH=str(repo))
    proc = subprocess.Popen([sys.executable, "-m", "hil", "sim", str(path), "--duration", "20"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        command = lcmt_iiwa_command()
        command.utime, command.num_joints, command.joint_position = 1, 7, [0.0] * 7
        end = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < end:
            lc.publish("IIWA_COMMAND", command.encode())      # a controller left running: 100 Hz
            lc.handle_timeout(10)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 134, (out, err)
    assert "First command received within guard time.  Aborting." in err
    assert "the driver ended (exit status 134)" in out
    assert all(s.utime == -1 for s in statuses)             # it never synchronised its clock
