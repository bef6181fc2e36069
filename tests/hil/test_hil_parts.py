"""The loop's parts on their own: controllers, trajectories, safety, config."""
from pathlib import Path

import lcm
import numpy as np
import pytest
import yaml
from scipy.spatial.transform import Rotation

from drivers.core import _control
from drivers.core.config import ControllerConfig, SafetyConfig, TrajectoryConfig
from drivers.core.paths import CONFIGS
from drivers.core.robot import load_robot
from drivers.core.schema import ConfigError
from drivers.run_config import load_config
from dynamics_cy import JacobianWrtVariable, linalg
from hil.controller_api import Command, State
from hil.controllers import make_controller
from hil.safety import SafetyMonitor
from hil.trajectories import make_trajectory
from messages import lcmt_hil_estop, lcmt_hil_joint_plan, lcmt_robot_state
from messages.enums import FaultCode, SafetyState

DEMO = "configs/demo.yaml"


@pytest.fixture
def robot():
    return load_robot(load_config(DEMO).robot)


def state(seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, 7), rng.normal(size=7), rng.uniform(-1, 1, 7), rng.normal(size=7),
            rng.normal(size=7))


def test_joint_space_controllers_match_their_laws(robot):
    plant = robot.plant
    q, v, q_d, v_d, a_d = state(0)
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, q)
    plant.SetVelocities(ctx, v)
    M, Cv, tau_g = plant.CalcMassMatrix(ctx), plant.CalcBiasTerm(ctx), plant.CalcGravityGeneralizedForces(ctx)
    d = plant.GetDampingVector()
    kp, kd = np.arange(1.0, 8.0) * 10, np.arange(7.0, 0.0, -1.0)      # (the wrist's kd below 2m/T)
    e, ed = q_d - q, v_d - v
    expected = {
        "gravity_compensation": -tau_g,
        "joint_pd": kp * e + kd * ed - tau_g,
        "computed_torque": M @ (a_d + kp * e + kd * ed) + Cv - tau_g + d * v,
        "joint_impedance": M @ a_d + Cv - tau_g + d * v + kp * e + kd * ed,
    }
    law_state, command = State.of(7, q=q, v=v, q_d=q_d, v_d=v_d, a_d=a_d), Command(7)
    for kind, tau in expected.items():
        make_controller(plant, ControllerConfig(type=kind, kp=list(kp), kd=list(kd))).update(law_state, command)
        np.testing.assert_allclose(command.tau, tau, atol=1e-10, err_msg=kind)


def test_cartesian_impedance_holds_at_the_goal_and_pulls_toward_it(robot):
    plant, ee = robot.plant, robot.end_effector
    ctl = make_controller(plant, ControllerConfig(type="cartesian_impedance", nullspace_damping=0.0), ee)
    q = np.array([0.1, 0.5, -0.2, -1.1, 0.3, 0.7, 0.2])
    command = Command(7)
    out = command.tau
    ctl.update(State.of(7, q=q, q_d=q), command)
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, q)
    np.testing.assert_allclose(out, -plant.CalcGravityGeneralizedForces(ctx), atol=1e-10)
    # a goal displaced along +x: the task-space force F = K e, mapped by Jᵀ
    q_goal = q + np.array([0.0, 0.05, 0.0, 0.0, 0.0, 0.0, 0.0])
    ctl.update(State.of(7, q=q, q_d=q_goal), command)
    plant.SetPositions(ctx, q_goal)
    p_goal = plant.CalcRelativeTransform(ctx, plant.world_frame(), ee).translation()
    plant.SetPositions(ctx, q)
    p = plant.CalcRelativeTransform(ctx, plant.world_frame(), ee).translation()
    J = plant.CalcJacobianSpatialVelocity(ctx, JacobianWrtVariable.kV, ee, np.zeros(3), plant.world_frame(),
                                          plant.world_frame())
    tau_task = out + plant.CalcGravityGeneralizedForces(ctx)
    # the task torque is Jᵀ F with F = K e: recover F and compare its translational part to K (p_G − p)
    F = np.linalg.lstsq(J.T, tau_task, rcond=None)[0]
    np.testing.assert_allclose(F[3:], ctl.K[3:] * (p_goal - p), rtol=1e-6, atol=1e-9)


def test_rotation_error_is_the_rotation_vector():
    X = np.eye(4)
    for axis, angle in (([0, 0, 1], 0.3), ([1, 2, -1], 2.0), ([0, 1, 0], 1e-12), ([1, 0, 0], np.pi)):
        a = np.array(axis, float) / np.linalg.norm(axis)
        from dynamics_cy.spatial_math import RotationMatrix
        K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
        G = np.eye(4)
        G[:3, :3] = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
        J = np.zeros((6, 1))
        out = np.zeros(1)
        th = _control.cartesian_impedance(X, J, np.zeros(1), G, np.zeros(6), np.ones(6), np.zeros(6),
                                          np.zeros(1), 0.0, out)
        assert th == pytest.approx(angle, abs=1e-9)
        assert RotationMatrix(G[:3, :3])


def test_cartesian_impedance_pulls_along_the_rotation_axis_at_half_a_turn():
    """At π (and 1e-10 rad short of it) about an axis off the coordinate axes, the built-in's rotational
    spring pulls along ±θ n, the rotation vector (dynamics_cy.linalg.pose_error's, the same code), not
    along |n_i|."""
    axis = np.array([1.0, -1.0, 0.5]) / 1.5
    for angle in (np.pi, np.pi - 1e-10):
        G = np.eye(4)
        G[:3, :3] = Rotation.from_rotvec(angle * axis).as_matrix()
        F = np.zeros(6)                           # with J = I, v = 0, K = 1, D = 0: τ = F = e
        _control.cartesian_impedance(np.eye(4), np.eye(6), np.zeros(6), G, np.zeros(6), np.ones(6), np.zeros(6),
                                     np.zeros(6), 0.0, F)
        assert abs(F[:3] @ axis) == pytest.approx(angle, abs=1e-8)
        assert np.linalg.norm(F[:3]) == pytest.approx(angle, abs=1e-8)
    rng, e = np.random.default_rng(0), np.zeros(6)
    for r in Rotation.random(20, random_state=1):
        X, G = np.eye(4), np.eye(4)
        X[:3, :3], X[:3, 3], G[:3, 3] = r.as_matrix(), rng.normal(size=3), rng.normal(size=3)
        G[:3, :3] = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
        _control.cartesian_impedance(X, np.eye(6), np.zeros(6), G, np.zeros(6), np.ones(6), np.zeros(6),
                                     np.zeros(6), 0.0, F)
        linalg.pose_error(X, G, e)
        np.testing.assert_array_equal(F, e)


def test_quintic_move_and_waypoints(robot):
    plant = robot.plant
    goal = [0.5, 0.2, -0.3, -1.0, 0.4, 0.5, 0.1]
    traj = make_trajectory(TrajectoryConfig(type="quintic", goal=goal, duration=2.0), plant, robot.joint_names,
                           None, 1_000_000)
    q0 = np.zeros(7)
    traj.start(q0, 0)
    q_d, v_d, a_d = np.zeros(7), np.zeros(7), np.zeros(7)
    for t, s in ((0.0, 0.0), (1.0, 0.5), (2.0, 1.0), (5.0, 1.0)):
        traj.sample(int(t * 1e9), q_d, v_d, a_d)
        np.testing.assert_allclose(q_d, s * np.array(goal), atol=1e-12)
    traj.sample(int(1e9), q_d, v_d, a_d)
    np.testing.assert_allclose(v_d, 15 / 8 / 2.0 * np.array(goal), atol=1e-12)    # ṡ(½) = 15/8 / T
    with pytest.raises(ConfigError, match=r"trajectory.goal: iiwa_joint_4 goal -3.5 rad is outside"):
        make_trajectory(TrajectoryConfig(type="quintic", goal=[0, 0, 0, -3.5, 0, 0, 0]), plant, robot.joint_names,
                        None, 1_000_000)
    cfg = load_config(DEMO).trajectory
    wp = make_trajectory(cfg, plant, robot.joint_names, None, 1_000_000)
    wp.start(q0, 0)
    ends = np.cumsum([w.duration for w in cfg.waypoints])
    for w, end in zip(cfg.waypoints, ends):
        wp.sample(int(end * 1e9) - 1, q_d, v_d, a_d)
        np.testing.assert_allclose(q_d, w.q, atol=1e-9)
    wp.sample(int((ends[-1] + 2.0) * 1e9), q_d, v_d, a_d)     # looping: back at the start after 2 s
    np.testing.assert_allclose(q_d, q0, atol=1e-9)


def test_streamed_plans_and_states_over_lcm(robot):
    lc = lcm.LCM("memq://")
    names = robot.joint_names
    traj = make_trajectory(TrajectoryConfig(type="stream", channel="PLAN", stream_type="joint_plan"), robot.plant,
                           names, lc, 1_000_000)
    traj.start(np.full(7, 0.1), 0)
    q_d, v_d, a_d = np.zeros(7), np.zeros(7), np.zeros(7)
    traj.sample(0, q_d, v_d, a_d)
    np.testing.assert_allclose(q_d, 0.1)
    plan = lcmt_hil_joint_plan()
    plan.plan_id, plan.interpolation, plan.num_joints, plan.joint_names = 1, plan.CUBIC_HERMITE, 7, names
    plan.num_knots, plan.knot_time_us = 3, [0, 1_000_000, 2_000_000]
    plan.position = [[0.0] * 7, [0.5] * 7, [1.0] * 7]
    plan.velocity = [[0.0] * 7, [0.5] * 7, [0.0] * 7]
    plan.acceleration = [[0.0] * 7] * 3
    lc.publish("PLAN", plan.encode())
    lc.handle_timeout(0)
    traj.sample(5_000_000_000, q_d, v_d, a_d)           # the plan starts on receipt (start_utime = 0)
    np.testing.assert_allclose(q_d, 0.0)
    traj.sample(6_000_000_000, q_d, v_d, a_d)
    np.testing.assert_allclose(q_d, 0.5)
    np.testing.assert_allclose(v_d, 0.5)
    traj.sample(9_000_000_000, q_d, v_d, a_d)          # after the end: hold the last knot
    np.testing.assert_allclose(q_d, 1.0)
    np.testing.assert_allclose(v_d, 0.0)
    plan.knot_time_us = [0, 0, 1]                      # invalid: rejected, counted, plan kept as it was
    lc.publish("PLAN", plan.encode())
    lc.handle_timeout(0)
    assert traj.rejected == 1
    states = make_trajectory(TrajectoryConfig(type="stream", channel="STATE"), robot.plant, names, lc, 1_000_000)
    msg = lcmt_robot_state()
    msg.num_joints, msg.joint_name, msg.joint_position = 7, names, [0.25] * 7
    lc.publish("STATE", msg.encode())
    lc.handle_timeout(0)
    states.sample(0, q_d, v_d, a_d)
    np.testing.assert_allclose(q_d, 0.25)


def monitor(robot, lc=None, **kw):
    return SafetyMonitor(robot.plant, SafetyConfig(**kw), 1_000_000, lc, "ESTOP" if lc else None)


def test_safety_state_machine(robot):
    s = monitor(robot, recover=True, recover_after_periods=2, max_tracking_error=0.1)
    q, v = np.zeros(7), np.zeros(7)
    assert s.check(0, 0, False, q, v, 0.0) is None and s.state == SafetyState.INIT
    assert s.check(1, 0, True, q, v, 0.0).state == SafetyState.RUNNING
    t = s.check(2, 3, False, q, v, 0.0)
    assert t.state == SafetyState.FAULT and t.fault == FaultCode.STATUS_TIMEOUT and "3 periods" in t.text
    assert s.check(3, 0, True, q, v, 0.0) is None
    assert s.check(4, 0, True, q, v, 0.0).state == SafetyState.RUNNING   # recovered after 2 clear ticks
    q_bad = q.copy()
    q_bad[3] = -2.2
    t = s.check(5, 0, True, q_bad, v, 0.0)
    assert t.fault == FaultCode.JOINT_LIMIT and "joint 3" in t.text
    s2 = monitor(robot)
    s2.check(0, 0, True, q, v, 0.0)
    v_bad = v.copy()
    v_bad[6] = 10.0
    assert s2.check(1, 0, True, q, v_bad, 0.0).fault == FaultCode.VELOCITY_LIMIT
    assert s2.check(2, 0, True, q, v, 0.0) is None and s2.state == SafetyState.FAULT   # no recover: latched
    s3 = monitor(robot, max_tracking_error=0.1)
    s3.check(0, 0, True, q, v, 0.0)
    assert s3.check(1, 0, True, q, v, 0.2).fault == FaultCode.CONTROLLER
    nan = q.copy()
    nan[0] = np.nan
    s4 = monitor(robot)
    s4.check(0, 0, True, q, v, 0.0)
    assert s4.check(1, 0, True, nan, v, 0.0).fault == FaultCode.STATUS_INVALID


def test_estop_latches_safe_stop_and_release_restarts(robot):
    lc = lcm.LCM("memq://")
    s = monitor(robot, lc)
    q = v = np.zeros(7)
    s.check(0, 0, True, q, v, 0.0)
    msg = lcmt_hil_estop()
    msg.latched, msg.source, msg.reason = True, "pendant", "test"
    lc.publish("ESTOP", msg.encode())
    lc.handle_timeout(0)
    t = s.check(1, 0, True, q, v, 0.0)
    assert t.state == SafetyState.SAFE_STOP and t.fault == FaultCode.ESTOP and "pendant" in t.text
    msg.latched = False
    lc.publish("ESTOP", msg.encode())
    lc.handle_timeout(0)
    assert s.check(2, 0, True, q, v, 0.0).state == SafetyState.INIT
    assert s.check(3, 0, True, q, v, 0.0).state == SafetyState.RUNNING
    lc.publish("ESTOP", b"garbage")                    # unreadable: treated as pressed
    lc.handle_timeout(0)
    assert s.check(4, 0, True, q, v, 0.0).state == SafetyState.SAFE_STOP


def test_saturation_and_rate_limit_and_safe_commands(robot):
    s = monitor(robot, torque_rate_limit=1000.0, on_fault="damping", damping=[2.0])
    out = np.zeros(7)
    s.limit(np.full(7, 3.0), out)                   # the first command is only saturated
    np.testing.assert_allclose(out, 3.0)
    hit = s.limit(np.full(7, 10.0), out)            # then 1000 N·m/s × 1 ms = 1 N·m per tick
    np.testing.assert_allclose(out, 4.0)
    assert hit == 0
    for _ in range(400):
        s.limit(np.full(7, 1000.0), out)
    np.testing.assert_allclose(out, [320, 320, 176, 176, 110, 40, 40])    # the iiwa's effort limits
    assert s.saturated_ticks > 0
    s.safe_command(np.arange(7.0), out)
    np.testing.assert_allclose(out, -2.0 * np.arange(7.0))
    s.safe_command(np.full(7, np.nan), out)
    np.testing.assert_allclose(out, 0.0)


def test_config_errors_name_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("robot: {model: robots/iiwa14.urdf}\nloop: {rate_hz: -5}\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: loop.rate_hz: must be > 0"):
        load_config(bad)
    bad.write_text("robot: {model: robots/iiwa14.urdf}\ncontroler: {}\n")
    with pytest.raises(ConfigError, match=r"controler: unknown key \(did you mean 'controller'\?\)"):
        load_config(bad)
    bad.write_text("robot: {model: nowhere.urdf}\n")
    with pytest.raises(ConfigError, match="robot.model: no such model file 'nowhere.urdf'"):
        load_config(bad)
    bad.write_text("robot: {model: robots/iiwa14.urdf}\ncontroller: {kp: [1, 2]}\n")
    with pytest.raises(ConfigError, match=r"controller.kp: needs 1 or 7 values"):
        make_controller(load_robot(load_config(bad).robot).plant, load_config(bad).controller)
    bad.write_text("robot: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML at line"):
        load_config(bad)


def test_summary_groups_repeated_faults_by_kind():
    from hil.telemetry import _faults
    trips = [{"tick": t, "fault": "STATUS_TIMEOUT", "reason": f"no valid status for 3 periods @{t}"}
             for t in (10, 20, 30)] + [{"tick": 40, "fault": "VELOCITY_LIMIT", "reason": "joint 3 fast"}]
    assert _faults([]) == "none"
    assert _faults(trips) == ("STATUS_TIMEOUT ×3 (first at tick 10: no valid status for 3 periods @10); "
                              "VELOCITY_LIMIT at tick 40: joint 3 fast")


@pytest.mark.parametrize("path", sorted(str(p.relative_to(CONFIGS)) for p in CONFIGS.rglob("*.yaml")
                                        if p.parent.name != "campaigns"                     # test_campaign.py
                                        and "legged" not in yaml.safe_load(p.read_text())))   # tests/wbc: legged
def test_every_config_round_trips_through_its_dump(path):
    """dump_config (what a run log stores) reads back to the same config."""
    import yaml

    from drivers.core.config import dump_config
    from drivers.run_config import parse_config
    from drivers.station import parse_station
    data = yaml.safe_load((CONFIGS / path).read_text())
    data.pop("scenario", None)
    configs = parse_station(data, (CONFIGS / path).parent, path).arms.values() if "station" in data \
        else [parse_config(data, (CONFIGS / path).parent, path)]        # a station: each arm's (docs/station.md)
    for cfg in configs:
        again = parse_config(yaml.safe_load(dump_config(cfg)), Path("/"), path)
        assert again == cfg


def test_a_loaded_config_holds_its_sections_typed(tmp_path):
    """drivers.run_config validates viz, sim, serial and servo_bus once into their dataclasses: an
    absent sim is the defaults, an absent viz is off, an absent serial or servo_bus is None."""
    from drivers.serial.config import SerialConfig
    from drivers.serial.servo_config import ServoBusConfig
    from drivers.sim.config import SimConfig
    from drivers.viz import VizConfig
    bare = tmp_path / "bare.yaml"
    bare.write_text("robot: {model: robots/iiwa14.urdf}\n")
    cfg = load_config(bare)
    assert (cfg.sim, cfg.viz, cfg.serial, cfg.servo_bus) == (SimConfig(), VizConfig(enabled=False), None, None)
    serial = load_config(CONFIGS / "serial" / "iiwa.yaml", {"viz": True})
    assert isinstance(serial.serial, SerialConfig) and serial.serial.device.state_rate == 1000.0
    assert serial.viz == VizConfig() and serial.sim.initial_positions == yaml.safe_load(
        (CONFIGS / "serial" / "iiwa.yaml").read_text())["sim"]["initial_positions"]
    servo = load_config(CONFIGS / "servo" / "so101.yaml")
    assert isinstance(servo.servo_bus, ServoBusConfig) and [j.id for j in servo.servo_bus.joints] == [1, 2, 3, 4, 5, 6]
