"""A station's arms with their own devices (drivers.station, hil.station, drivers.sim.station): each arm's
gripper and F/T sensor on its own channels (the arm's prefix on the drivers' defaults), in the loop and in
the simulated plant alike; each arm's gripper commanded by its own trajectory's gripper track."""
import pytest

from drivers.core.config import gripper_channels
from drivers.core.paths import CONFIGS
from drivers.core.schema import ConfigError
from drivers.station import parse_station
from hil.station import make_station_lockstep
from messages.drake import lcmt_force_torque, lcmt_schunk_wsg_command, lcmt_schunk_wsg_status
from tests.hil.test_station_scene import run

Q0 = [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
BASE = {"robot": {"model": "robots/iiwa14.urdf", "end_effector": "iiwa_link_ee", "command": "position_and_torque"},
        "lcm": {"url": "memq://"}, "viz": False,
        "controller": {"type": "gravity_compensation", "robot_compensates_gravity": True},
        "gripper": {"type": "wsg50"},
        "sensors": {"ft": {"enabled": True}},
        "sim": {"gravity_compensation": "internal", "initial_positions": Q0 + [-0.025, 0.025],
                "gripper": {"type": "wsg50", "attach_to": "iiwa_link_ee_kuka", "xyz": [0, 0, 0.045]},
                "ft_sensor": {"enabled": True, "joint": "iiwa_joint_ee"}}}


def track(*widths):
    """Waypoints holding Q0, each segment's start commanding the next width (m)."""
    return {"type": "waypoints", "waypoints": [{"q": Q0, "duration": 0.5, "gripper": {"width": w}} for w in widths]}


def two_arms(**right):
    return parse_station({**BASE, "station": {"arms": [{"name": "left", "trajectory": track(0.08, 0.02)},
                                                        {"name": "right", "trajectory": track(0.05), **right}]}},
                         CONFIGS, "s.yaml")


def test_each_arm_devices_channels_carry_its_prefix_in_the_loop_and_in_the_sim():
    s = two_arms()
    for name in ("left", "right"):
        cfg, p = s.arms[name], name.upper() + "_"
        assert (cfg.gripper.status_channel, cfg.gripper.command_channel) == \
            (p + "SCHUNK_WSG_STATUS", p + "SCHUNK_WSG_COMMAND")
        assert (cfg.sim.gripper.status_channel, cfg.sim.gripper.command_channel) == \
            (p + "SCHUNK_WSG_STATUS", p + "SCHUNK_WSG_COMMAND")
        assert cfg.sensors.ft.channel == cfg.sim.ft_sensor.channel == p + "FT_SENSOR"
    # a channel the arm names is kept; no prefix (an arm on its own bus): the drivers' own names
    named = two_arms(gripper={"status_channel": "WSG_R_STATUS"}, sim={"gripper": {"status_channel": "WSG_R_STATUS"}})
    assert named.arms["right"].gripper.status_channel == named.arms["right"].sim.gripper.status_channel == \
        "WSG_R_STATUS"
    own = two_arms(channels={"prefix": ""}, lcm={"url": "memq://right"})
    g = own.arms["right"].gripper
    assert gripper_channels(g.type, g.status_channel, g.command_channel) == ("SCHUNK_WSG_STATUS", "SCHUNK_WSG_COMMAND")
    assert own.arms["right"].sensors.ft.channel == "FT_SENSOR"


def test_two_arms_on_one_gripper_channel_are_refused_naming_the_arm():
    with pytest.raises(ConfigError) as e:
        two_arms(gripper={"command_channel": "LEFT_SCHUNK_WSG_COMMAND"},
                 sim={"gripper": {"command_channel": "LEFT_SCHUNK_WSG_COMMAND"}})
    assert "s.yaml: station.arms[1].gripper.command_channel" in str(e.value) and "arm 'left'" in str(e.value)


def test_each_arm_gripper_follows_its_own_track_on_its_own_channels():
    """Lockstep, 1.2 s: the left WSG is commanded 80 mm then 20 mm, the right one 50 mm, each by its own
    trajectory's track on its own command channel; each simulated WSG reports its own width on its own status
    channel, and each arm's loop reads that width; each sensor on its own channel."""
    decoders = {"SCHUNK_WSG_COMMAND": lcmt_schunk_wsg_command.decode,
                "SCHUNK_WSG_STATUS": lcmt_schunk_wsg_status.decode, "FT_SENSOR": lcmt_force_torque.decode}
    loop, sim, summary, raw = run(two_arms(), 1.2, [p + kind for p in ("LEFT_", "RIGHT_", "") for kind in decoders])
    seen = {c: [decoders[c.removeprefix("LEFT_").removeprefix("RIGHT_")](d) for d in data]
            for c, data in raw.items() if data}
    assert summary["final_state"] == "RUNNING", summary["faults"]
    assert not any(c.startswith(("SCHUNK", "FT_")) for c in seen)          # nothing on the unprefixed ones
    assert [m.target_position_mm for m in seen["LEFT_SCHUNK_WSG_COMMAND"]] == [80.0, 20.0]
    assert [m.target_position_mm for m in seen["RIGHT_SCHUNK_WSG_COMMAND"]] == [50.0]
    for name, width in (("left", 20.0), ("right", 50.0)):
        status = seen[f"{name.upper()}_SCHUNK_WSG_STATUS"][-1]
        assert status.actual_position_mm == pytest.approx(width, abs=0.5)
        arm = loop.arms[name]
        assert arm.gripper.status[0] == pytest.approx(width * 1e-3, abs=5e-4)
        assert summary["arms"][name]["gripper"]["command_channel"] == f"{name.upper()}_SCHUNK_WSG_COMMAND"
        assert len(seen[f"{name.upper()}_FT_SENSOR"]) > 1000
        assert sim.robots[name].gripper is not None


def test_a_station_run_log_records_every_arm_and_each_arm_run_info(tmp_path):
    """telemetry.log of a station (lockstep, memq://): every arm's status, command, gripper and telemetry
    traffic in one log, and each arm's run-info (its config at the start, its summary at the end) on its own
    run-info channel; read_run_info without a channel keeps to the first arm's."""
    import json

    import yaml

    from hil.runlog import read_run_info
    from messages.logs import read_events
    log = tmp_path / "station.lcmlog"
    s = two_arms()
    for cfg in s.arms.values():
        cfg.telemetry.log = str(log)
    _, _, summary, _ = run(s, 0.6)
    assert summary["log"] == str(log)
    channels = {e.channel for e in read_events(log)}
    for p in ("LEFT_", "RIGHT_"):
        assert {p + "IIWA_STATUS", p + "IIWA_COMMAND", p + "SCHUNK_WSG_COMMAND", p + "SCHUNK_WSG_STATUS",
                p + "HIL_TELEMETRY", p + "FT_SENSOR"} <= channels
    for name in ("left", "right"):
        start, end = read_run_info(log, f"{name.upper()}_HIL_RUN_INFO")
        assert yaml.safe_load(start.config_yaml)["channels"] == {"prefix": f"{name.upper()}_"}
        assert json.loads(end.summary_json)["ticks"] == summary["arms"][name]["ticks"]
    start, end = read_run_info(log)
    assert yaml.safe_load(start.config_yaml)["channels"]["prefix"] == "LEFT_" and \
        json.loads(end.summary_json)["gripper"]["command_channel"] == "LEFT_SCHUNK_WSG_COMMAND"


def test_a_station_on_two_buses_is_not_logged_into_one(tmp_path):
    s = two_arms(channels={"prefix": ""}, lcm={"url": "memq://right"})
    for cfg in s.arms.values():
        cfg.telemetry.log = str(tmp_path / "x.lcmlog")
    loop, sim = make_station_lockstep(s)
    try:
        with pytest.raises(ConfigError, match="telemetry.log: one log records one LCM bus"):
            loop.run(0.1)
    finally:
        loop.close()
        sim.close()


def test_hil_regress_logs_a_station_scenario(tmp_path):
    """`hil regress --logs` of a station scenario: its run log, each arm's end run-info with its summary."""
    import json

    from hil.regress import run_scenario
    from hil.runlog import read_run_info
    result = run_scenario("configs/scenarios/station_two_iiwas_continue.yaml", logs=str(tmp_path))
    assert result["passed"], result["checks"]
    for name, state in (("left", "RUNNING"), ("right", "FAULT")):
        _, end = read_run_info(result["log"], f"{name.upper()}_HIL_RUN_INFO")
        assert json.loads(end.summary_json)["final_state"] == state
