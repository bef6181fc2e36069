"""The loop closed around the simulated robot: lockstep (deterministic) in one process, and real time
over UDP multicast in two processes."""
import copy
import gc

import numpy as np
import pytest

from drivers.run_config import load_config
from hil.lockstep import make_lockstep, run_lockstep
from messages.channels import private_lcm_url

DEMO = "configs/demo.yaml"


def config(**sections):
    """The demo config with `sections`' keys set; the controller carries gravity (the simulated arm
    does not compensate it), so the dynamics are exercised whole."""
    overrides = {"sim": {"gravity_compensation": "none"}, "controller": {"robot_compensates_gravity": False}}
    for section, values in sections.items():
        overrides[section] = {**overrides.get(section, {}), **values}
    return load_config(DEMO, {"viz": False, **overrides})


def test_gravity_compensation_holds_the_iiwa_still():
    q0 = [0.3, 0.7, -0.4, -1.2, 0.5, 0.9, -0.2]
    cfg = config(controller={"type": "gravity_compensation"}, trajectory={"type": "hold"},
                 sim={"initial_positions": q0})
    drift = [0.0]

    def track(loop):
        drift[0] = max(drift[0], float(np.max(np.abs(loop.q - q0))))
    summary, loop, sim = run_lockstep(cfg, 10.0, on_tick=track)
    assert summary["final_state"] == "RUNNING" and summary["faults"] == []
    assert drift[0] < 1e-3 and np.max(np.abs(sim.plant_state()["q"] - q0)) < 1e-3, drift
    assert summary["ticks"] == 10_000


def test_computed_torque_tracks_a_quintic_move():
    cfg = config(controller={"type": "computed_torque"},
                 trajectory={"type": "quintic", "goal": [0.8, 0.4, -0.5, -1.4, 0.6, 0.8, 0.5], "duration": 2.0})
    summary, loop, sim = run_lockstep(cfg, 3.0)
    rms = np.array(summary["tracking_error_rad"]["rms"])
    assert summary["final_state"] == "RUNNING"
    assert np.all(rms < 1e-3), rms
    np.testing.assert_allclose(sim.plant_state()["q"], cfg.trajectory.goal, atol=1e-3)


def test_the_damping_safe_command_holds_the_arm_against_gravity():
    """The robot goes silent at 0.2 s and the loop stays in FAULT (no recovery): the damping safe
    command includes −τ_g, so the arm stays put; zero torque drops it."""
    q0 = [0.3, 0.7, -0.4, -1.2, 0.5, 0.9, -0.2]
    drift = {}
    for on_fault in ("damping", "zero_torque"):
        cfg = config(trajectory={"type": "hold"}, safety={"on_fault": on_fault, "recover": False},
                     sim={"initial_positions": q0, "faults": [{"type": "silent", "start": 0.2, "stop": 0.25}]})
        summary, loop, sim = run_lockstep(cfg, 1.5)
        assert summary["final_state"] == "FAULT" and [f["fault"] for f in summary["faults"]] == ["STATUS_TIMEOUT"]
        drift[on_fault] = np.max(np.abs(sim.plant_state()["q"] - q0))
    assert drift["damping"] < 2e-3 and drift["zero_torque"] > 0.1, drift


def test_lockstep_is_deterministic():
    cfg = config(trajectory={"type": "quintic", "goal": [0.5, 0.2, 0.1, -1.0, 0.2, 0.4, 0.3], "duration": 1.0})
    a, _, sim_a = run_lockstep(copy.deepcopy(cfg), 1.5)
    b, _, sim_b = run_lockstep(copy.deepcopy(cfg), 1.5)
    assert a["tracking_error_rad"] == b["tracking_error_rad"]
    np.testing.assert_array_equal(sim_a.plant_state()["q"], sim_b.plant_state()["q"])


def test_realtime_watchdog_trips_when_the_plant_goes_silent_and_recovers(tmp_path):
    """Two processes over UDP multicast (ttl=0): `hil sim` goes silent from 1.5 s to 2.0 s."""
    import subprocess
    import sys

    import lcm
    import yaml

    from drivers.core.robot import load_robot
    from hil.loop import ControlLoop

    url = private_lcm_url()
    data = yaml.safe_load(open(DEMO))
    data.update(viz=False, lcm={"url": url})
    data["trajectory"] = {"type": "hold"}
    data["safety"].update(recover=True, recover_after_periods=20, status_timeout_periods=3)
    data["sim"]["faults"] = [{"type": "silent", "start": 1.5, "stop": 2.0}]
    path = tmp_path / "silent.yaml"
    path.write_text(yaml.safe_dump(data))
    cfg = load_config(path)
    sim = subprocess.Popen([sys.executable, "-m", "hil", "sim", str(path), "--duration", "15"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ticks = []          # per tick: periods since the newest status, state after the tick, that status's utime

    def watch(loop):            # (the watchdog counts in status periods once the period is learned)
        hw = loop.hardware
        if hw.timing.clock.period_ns is not None:
            ticks.append((loop.tick_index - 1 - hw.timing.last_tick, loop.safety.state.name, hw.status.utime))

    try:
        loop = ControlLoop(cfg, load_robot(cfg.robot), lcm.LCM(url), mode="realtime").configure()
        summary = loop.run(3.5, on_tick=watch)
    finally:
        sim.terminate()
        out = sim.communicate(timeout=10)[0]
    timeouts = [f for f in summary["faults"] if f["fault"] == "STATUS_TIMEOUT"]
    assert timeouts and all("no valid status for 3 periods" in f["reason"] for f in timeouts), \
        (summary["transitions"], out)
    # The watchdog: no tick 3 or more periods after the newest status is anything but FAULT. (On a
    # loaded machine the simulator process also stalls for a few ms now and then: those count too.)
    stale = [(age, st, utime) for age, st, utime in ticks if age >= 3]
    assert stale and all(st == "FAULT" for _, st, _ in stale), [t for t in stale if t[1] != "FAULT"][:5]
    # The silent window (simulated 1.5 s to 2.0 s) was seen: ticks long after the last status before it...
    assert any(age >= 100 and abs(utime - 1_500_000) <= 2_000 for age, _, utime in stale), \
        sorted({utime for _, _, utime in stale})
    # ...and the loop resumed once statuses came back.
    assert any(st == "RUNNING" and utime >= 2_000_000 for _, st, utime in ticks), summary["transitions"]
    assert summary["process"] == ["garbage collector off"]      # the default loop.gc: off, undone after
    assert gc.isenabled()


def test_cartesian_goal_planned_with_ik_and_toppra_is_reached():
    """trajectory: cartesian: IK + TOPP-RA under the joint limits, then tracked by computed torque."""
    from drivers.core.robot import load_robot
    from dynamics_cy import RigidTransform, RollPitchYaw
    start = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
    robot = load_robot(load_config(DEMO).robot)        # the goal: where the hand is at a reachable q
    ctx = robot.plant.CreateDefaultContext()
    robot.plant.SetPositions(ctx, [0.5, 0.3, -0.4, -1.5, 0.4, 0.9, 0.6])
    X_goal = robot.plant.CalcRelativeTransform(ctx, robot.plant.world_frame(), robot.end_effector)
    goal_p, goal_rpy = X_goal.translation().tolist(), RollPitchYaw(X_goal.rotation()).vector().tolist()
    cfg = config(trajectory={"type": "cartesian", "goal_position": goal_p, "goal_rpy": goal_rpy},
                 sim={"initial_positions": start})
    summary, loop, sim = run_lockstep(cfg, 6.0)
    assert summary["final_state"] == "RUNNING" and loop.trajectory.error is None
    assert loop.trajectory.duration_ns > 0
    plant, ee = loop.robot.plant, loop.robot.end_effector
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, sim.plant_state()["q"])
    X = plant.CalcRelativeTransform(ctx, plant.world_frame(), ee)
    goal = RigidTransform(RollPitchYaw(goal_rpy), goal_p)
    np.testing.assert_allclose(X.translation(), goal.translation(), atol=1e-3)
    assert np.max(np.abs(X.rotation().matrix() - goal.rotation().matrix())) < 1e-2
    assert max(summary["tracking_error_rad"]["max"]) < 1e-2


def test_an_unplannable_cartesian_goal_is_a_fault_that_says_why():
    """A goal out of reach: the planner's error becomes a CONTROLLER fault that latches (recover: true does
    not retry it); the arm is held, not moved."""
    start = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
    cfg = config(trajectory={"type": "cartesian", "goal_position": [3.0, 0.0, 0.5]}, sim={"initial_positions": start})
    summary, loop, sim = run_lockstep(cfg, 0.5)
    assert summary["final_state"] == "FAULT"
    assert len(summary["faults"]) == 1, summary["faults"]
    fault = summary["faults"][0]
    assert fault["fault"] == "CONTROLLER" and "trajectory: plan_cartesian_move: no IK solution" in fault["reason"]
    assert np.max(np.abs(sim.plant_state()["q"] - start)) < 1e-3


@pytest.mark.parametrize("failure, reason", [("non-finite", "non-finite torque on iiwa_joint_3"),
                                             ("raises", "ZeroDivisionError: gain schedule")])
def test_a_failing_controller_faults_latches_and_the_arm_is_held(failure, reason):
    """From tick 300 the controller writes inf into joint 2's torque (the fault names it iiwa_joint_3), or
    raises: FAULT (CONTROLLER) naming why, no recovery (the demo config has recover: true), every command
    finite, the arm held."""
    q0 = [0.3, 0.7, -0.4, -1.2, 0.5, 0.9, -0.2]
    loop, sim = make_lockstep(config(trajectory={"type": "hold"}, sim={"initial_positions": q0}))
    update = loop.controller.update

    def broken(state, command):
        update(state, command)
        if loop.tick_index >= 300:
            if failure == "raises":
                raise ZeroDivisionError("gain schedule")
            command.tau[2] = np.inf

    loop.controller.update = broken
    worst = []
    sim.publish_status()
    summary = loop.run(1.0, on_tick=lambda *_: worst.append(np.max(np.abs(loop.tau_cmd))))
    assert summary["final_state"] == "FAULT"
    assert [(f["fault"], f["tick"]) for f in summary["faults"]] == [("CONTROLLER", 300)]
    assert reason in summary["faults"][0]["reason"]
    assert np.all(np.isfinite(worst)) and len(worst) == summary["ticks"]
    assert np.max(np.abs(sim.plant_state()["q"] - q0)) < 2e-3
