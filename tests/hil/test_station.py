"""Several arms in one loop (hil.station, drivers.station, drivers.sim.station): the station file's rules,
one tick for all in lockstep, per-arm safety and the station's fault policy, allocation-free ticks."""
import lcm
import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.run_config import load_config
from drivers.station import load_station, parse_station
from hil.lockstep import make_lockstep
from hil.station import StationLoop, make_station_lockstep
from hil.testing import simulate_station
from messages.codec import StatusEncoder
from messages.enums import SafetyState
from tests.hil.test_hil_alloc import SCALARS_MEDIAN, SCALARS_PEAK, transient_peaks

SCENARIO = "configs/scenarios/station_two_iiwas_continue.yaml"
STATION = "configs/station/two_iiwas.yaml"
BASE = {"robot": {"model": "robots/iiwa14.urdf", "end_effector": "iiwa_link_ee"},
        "controller": {"type": "computed_torque", "kp": [400], "kd": [40], "robot_compensates_gravity": True},
        "sim": {"gravity_compensation": "internal", "initial_positions": [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]}}


def station(arms, **more):
    from drivers.core.paths import CONFIGS
    return parse_station({**BASE, **more, "station": {"arms": arms}}, CONFIGS, "s.yaml")


# --- the station file ---------------------------------------------------------------------------------
def test_each_arm_is_a_whole_run_config_with_its_own_channels():
    s = load_station(STATION)
    left, right = s.arms["left"], s.arms["right"]
    assert s.spec.on_fault == "stop_all"
    from drivers.core.config import channels_for
    assert (channels_for(left).status, channels_for(left).command) == ("LEFT_IIWA_STATUS", "LEFT_IIWA_COMMAND")
    assert channels_for(right).telemetry == "RIGHT_HIL_TELEMETRY" and channels_for(right).estop == "HIL_ESTOP"
    # the shared sections are both arms'; the right arm's own trajectory replaces the waypoints
    assert left.controller == right.controller and left.controller.kp == [400]
    assert left.trajectory.waypoints[0].q[0] == 0.6 and right.trajectory.waypoints[0].q[0] == -0.6
    assert right.trajectory.loop is True            # merged key by key: the shared `loop: true` stays


@pytest.mark.parametrize("arms, more, key, words", [
    ([{"name": "a", "controler": {}}], {}, "station.arms[0].controler", "did you mean 'controller'"),
    ([{"name": "a", "controller": {"kp": ["x"]}}], {}, "station.arms[0].controller.kp[0]", "number"),
    ([{"name": "a"}, {"name": "a"}], {}, "station.arms[1].name", "names two arms"),
    ([{"name": "left arm"}], {}, "station.arms[0].name", "letters, digits"),
    ([{"name": "a", "channels": {"prefix": "X_"}}, {"name": "b", "channels": {"prefix": "X_"}}], {},
     "station.arms[1].channels", "X_IIWA_STATUS is arm 'a'"),
    ([{"name": "a"}, {"name": "b", "sim": {"time_step": 0.002}}], {}, "station.arms[1].sim.time_step", "together"),
    ([{"name": "a", "loop": {"rate_hz": 500}}], {}, "station.arms[0].loop", "unknown key"),
    ([], {}, "station.arms", "at least one arm"),
])
def test_a_bad_station_names_the_arm_and_the_key(arms, more, key, words):
    with pytest.raises(ConfigError) as e:
        station(arms, **more)
    assert f"s.yaml: {key}" in str(e.value) and words in str(e.value), str(e.value)


# --- lockstep: one tick for all, per-arm safety ---------------------------------------------------------
def test_an_arm_of_a_station_runs_as_it_runs_alone():
    """The arms share a clock and an LCM, nothing else: the left arm of the scenario (continue_others,
    the right arm faulted) moves exactly as its own run config does in a lone lockstep loop."""
    run = simulate_station(SCENARIO, duration=2.0)
    s = load_station(SCENARIO)
    loop, sim = make_lockstep(s.arms["left"])
    try:
        sim.publish_status()
        alone = loop.run(2.0)
    finally:
        loop.close()
        sim.close()
    left = run.arms["left"]
    assert alone["ticks"] == left.summary["ticks"] == 2000
    np.testing.assert_array_equal(sim.plant_state()["q"], left.plant_q)
    assert alone["tracking_error_rad"] == left.summary["tracking_error_rad"]
    assert run.arms["right"].final_state == "FAULT" and left.final_state == "RUNNING"


def test_the_faulted_arm_gets_its_safe_command_and_continue_others_lets_the_other_on():
    """The right arm's joint 1 stops answering at 1 s: its tracking guard trips, and from then on every
    command it sends is its damping safe command τ = −d∘v (the robot adds −τ_g itself), rate-limited;
    the left arm keeps tracking its waypoints."""
    loop, sim = make_station_lockstep(load_station(SCENARIO))
    right, left = loop.arms["right"], loop.arms["left"]
    checked = 0
    try:
        sim.publish_status()
        loop.activate()
        while loop.tick_index < 3000:
            loop.update()
            if right.safety.state == SafetyState.FAULT:
                np.testing.assert_allclose(right.tau, -right.safety.damping * right.vj, rtol=0, atol=1e-12)
                checked += 1
    finally:
        loop.close()
        sim.close()
    sent = right.hardware.commands.sent
    assert checked > 1500 and sent == 3001         # commands every tick (the safe one), and the exit command
    assert right.safety.fault.name == "CONTROLLER" and left.safety.state == SafetyState.RUNNING
    assert sim.robots["right"].commands_received == sim.robots["left"].commands_received
    assert np.allclose(right.tau_cmd, -right.safety.damping * right.vj, atol=1e-6)   # settled on it
    assert max(left.recorder.maxabs) < 5e-3


def test_stop_all_stops_the_other_arm_on_the_next_tick():
    run = simulate_station("configs/scenarios/station_two_iiwas_stop_all.yaml", duration=3.0)
    left, right = run.arms["left"], run.arms["right"]
    assert run.stopped_by == "right" and run.final_state == "FAULT"
    trip = right.faults[0]["tick"]
    assert left.faults == [{**left.faults[0], "tick": trip + 1, "fault": "STATION"}]
    assert "arm 'right' faulted (CONTROLLER" in left.faults[0]["reason"]
    k = np.flatnonzero(left.safety != SafetyState.RUNNING)[0]
    assert np.all(left.safety[k:] == SafetyState.FAULT)              # latched to the end
    # from then on the left arm's law is out: its safe command slows it to rest
    assert np.abs(left.v[-1]).max() < 1e-2 and np.abs(left.tau[-1]).max() < 0.1


def test_a_station_run_is_deterministic():
    a = simulate_station(SCENARIO, duration=1.5)
    b = simulate_station(SCENARIO, duration=1.5)
    for name in a.arms:
        np.testing.assert_array_equal(a.arms[name].q, b.arms[name].q)
        np.testing.assert_array_equal(a.arms[name].tau, b.arms[name].tau)


def test_an_arm_without_status_is_named():
    s = load_station(STATION, {"lcm": {"url": "memq://"}})
    loop, sim = make_station_lockstep(s)
    try:
        sim.robots["left"].publish_status()            # the right arm's simulator never speaks (it steps
        with pytest.raises(TimeoutError, match=r"arm\(s\) right"):
            loop.run(1.0)                              # only once it has published a first status)
    finally:
        loop.close()


# --- allocation-free ------------------------------------------------------------------------------------
def test_a_station_tick_allocates_only_scalars():
    """Both arms' ticks in one update, no message waiting: what one arm's tick may allocate, twice."""
    s = load_station(STATION, {"lcm": {"url": "memq://"}, "safety": {"status_timeout_periods": 10**6},
                               "trajectory": {"type": "quintic", "loop": False, "waypoints": [],
                                              "goal": [0.2, 0.3, 0.1, -1.0, 0.1, 0.5, 0.2], "duration": 10.0}})
    lc = lcm.LCM("memq://")
    loop = StationLoop(s, lc, "lockstep").configure()
    loop.activate()
    status = StatusEncoder("iiwa", 7)
    status.encode(0, position_measured=np.array([0.0, 0.5, 0.0, -1.0, 0.0, 0.6, 0.0]), velocity_estimated=np.zeros(7))
    for arm in loop.arms.values():
        lc.publish(arm.channels.status, status.tobytes())
    for _ in range(300):
        loop.update()
    assert all(a.safety.state == SafetyState.RUNNING for a in loop.arms.values())
    peaks = transient_peaks(loop.update, 3000)
    loop.close()
    assert max(peaks) <= 2 * SCALARS_PEAK and np.median(peaks) <= 2 * SCALARS_MEDIAN, (max(peaks), np.median(peaks))


def test_the_lone_configs_still_load():
    """A station's arm config is an ordinary run config: dump and reload it as one."""
    import tempfile

    from drivers.core.config import dump_config
    cfg = load_station(STATION).arms["right"]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(dump_config(cfg))
    assert load_config(f.name).trajectory == cfg.trajectory


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["scenario"]["arms"].update(middle={"final_state": "RUNNING"}),
     "scenario.arms.middle: no such arm; the station's: left, right"),
    (lambda d: d["scenario"]["arms"]["right"].update(trips=[{"fault": "STATOIN", "at": 1}]),
     "scenario.arms.right.trips[0].fault: unknown fault 'STATOIN'"),
    (lambda d: d["scenario"]["arms"]["left"].update(final_state="DONE"), "scenario.arms.left.final_state: must be"),
])
def test_a_bad_station_scenario_names_the_key(tmp_path, edit, message):
    import yaml

    from hil.scenario import load_scenario
    from hil.station_scenario import load_station_scenario
    data = yaml.safe_load(open(SCENARIO).read())
    edit(data)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[").replace("]", r"\]")):
        load_station_scenario(path)
    with pytest.raises(ConfigError, match="station: makes it a station's scenario"):
        load_scenario(SCENARIO)


def test_the_hil_station_fixture_runs_a_station_with_a_law_per_arm(hil_station):
    """A law per arm by name (gravity compensation on the left: it stays where it starts), the other
    arm's config's (computed torque along its waypoints)."""
    from hil.controllers import GravityCompensation
    run = hil_station(STATION, {"left": GravityCompensation}, duration=0.5, overrides={"lcm": {"url": "memq://"}})
    left, right = run.arms["left"], run.arms["right"]
    assert run.final_state == "RUNNING" and left.summary["controller"] != right.summary["controller"]
    assert np.abs(left.q - left.q[0]).max() < 1e-3 < np.abs(right.q - right.q[0]).max()


def test_hil_regress_runs_a_station_scenario_against_its_golden(tmp_path, capsys):
    """`hil regress FILE` on a station scenario: its per-arm checks and golden in the table, exit 0; a
    changed outcome is a golden difference named by arm (exit 1)."""
    import json
    import shutil

    import yaml

    from hil.cli import main
    report = tmp_path / "r.json"
    assert main(["regress", "configs/scenarios/station_two_iiwas_stop_all.yaml", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "| station_two_iiwas_stop_all | PASS |" in out and "| same |" in out
    result = json.loads(report.read_text())["scenarios"][0]
    assert {c["name"] for c in result["checks"]} >= {"left.final_state", "right.trips", "summary.station.stopped_by"}
    data = yaml.safe_load(open("configs/scenarios/station_two_iiwas_stop_all.yaml").read())
    data["station"]["arms"][1]["sim"]["faults"][0]["start"] = 1.5           # the fault later: another outcome
    (tmp_path / "golden").mkdir()
    shutil.copy("configs/scenarios/golden/station_two_iiwas_stop_all.json", tmp_path / "golden")
    changed = tmp_path / "station_two_iiwas_stop_all.yaml"
    changed.write_text(yaml.safe_dump(data))
    assert main(["regress", str(changed), "--report", str(report)]) == 1
    diffs = json.loads(report.read_text())["scenarios"][0]["golden"]["diffs"]
    assert any(d.startswith("left.transitions differ") for d in diffs), diffs


def test_stop_all_keeps_a_recovering_arm_stopped_too():
    """With safety.recover, the faulted arm would return to RUNNING once at rest (continue_others shows
    it); under stop_all the station stays stopped: both arms in FAULT to the end."""
    path = "configs/scenarios/station_two_iiwas_{}.yaml"
    keys = {"safety": {"recover": True, "recover_after_periods": 50}}
    alone = simulate_station(path.format("continue"), duration=3.0, overrides=keys)
    stopped = simulate_station(path.format("stop_all"), duration=3.0, overrides=keys)
    assert "recovered from CONTROLLER" in " ".join(alone.arms["right"].transitions)
    assert alone.final_state == "RUNNING"
    assert [a.final_state for a in stopped.arms.values()] == ["FAULT", "FAULT"]
    assert not any("recovered" in t for a in stopped.arms.values() for t in a.transitions)


def test_arms_on_buses_of_their_own_use_drakes_channel_names():
    """As Drake's hardware_sim keeps IiwaDrivers apart by lcm_bus: each arm on its own LCM URL under the
    same IIWA_STATUS / IIWA_COMMAND; in lockstep each bus is its own memq:// LCM, and the arms run as
    they run on one bus with prefixed channels."""
    data = {**BASE, "trajectory": {"type": "quintic", "goal": [0.3, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0], "duration": 1.0},
            "station": {"arms": [{"name": "a", "channels": {"prefix": ""}, "lcm": {"url": "udpm://239.255.76.67:7701"}},
                                 {"name": "b", "channels": {"prefix": ""}, "lcm": {"url": "udpm://239.255.76.67:7702"}}]}}
    from drivers.core.config import channels_for
    from drivers.core.paths import CONFIGS
    s = parse_station(data, CONFIGS, "s.yaml")
    assert s.buses == ["udpm://239.255.76.67:7701", "udpm://239.255.76.67:7702"]
    assert {channels_for(c).status for c in s.arms.values()} == {"IIWA_STATUS"}
    loop, sim = make_station_lockstep(s)
    assert loop.arms["a"].lc is not loop.arms["b"].lc and len(sim.lcs) == 2
    from hil.lockstep import run_closed
    summary = run_closed(loop, sim, 1.5)
    assert [a["final_state"] for a in summary["arms"].values()] == ["RUNNING", "RUNNING"]
    assert all(a["status"]["foreign_commands"] == 0 for a in summary["arms"].values())
    same_bus = station([{"name": "a"}, {"name": "b"}], trajectory=data["trajectory"])
    together = simulate_station_of(same_bus, 1.5)
    assert summary["arms"]["a"]["tracking_error_rad"] == together["arms"]["a"]["tracking_error_rad"]
    data["station"]["arms"][1]["lcm"]["url"] = "udpm://239.255.76.67:7701"      # the same bus: a clash
    with pytest.raises(ConfigError, match=r"station.arms\[1\].channels: .* IIWA_STATUS is arm 'a''s too on"):
        parse_station(data, CONFIGS, "s.yaml")


def simulate_station_of(s, duration: float) -> dict:
    from hil.lockstep import run_closed
    loop, sim = make_station_lockstep(s)
    return run_closed(loop, sim, duration)
