"""The regression scenarios (configs/scenarios) pass, and `hil regress` fails loudly when they should not."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from drivers.core.schema import ConfigError
from hil.regress import find_scenarios, format_table, run_scenario
from hil.scenario import compare_golden, load_scenario

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "configs" / "scenarios"


def failures(result: dict) -> str:
    lines = [result.get("error") or "", result.get("traceback") or ""]
    lines += [f"{c['name']}: measured {c['measured']}, limit {c['limit']}" for c in result["checks"] if not c["passed"]]
    lines += (result["golden"] or {}).get("diffs", [])
    return "\n".join(x for x in lines if x)


@pytest.mark.parametrize("path", find_scenarios(SCENARIOS), ids=lambda p: p.stem)
def test_scenario_passes(path):
    result = run_scenario(path)
    assert result["passed"], failures(result)


def test_the_scenarios_cover_the_controllers_contact_each_fault_and_the_serial_chain():
    import typing

    from drivers.core.config import BUILTIN_CONTROLLERS
    from drivers.sim.config import FaultType
    from hil.legged_scenario import is_legged_scenario  # legged robots: tests/wbc/test_legged_scenarios.py
    from hil.station_scenario import is_station_scenario  # several arms: tests/hil/test_station.py
    scenarios = [load_scenario(p) for p in find_scenarios(SCENARIOS)
                 if not is_legged_scenario(p) and not is_station_scenario(p)]
    controllers = {s.cfg.controller.type for s in scenarios}
    if any(is_legged_scenario(p) for p in find_scenarios(SCENARIOS)):
        controllers.add("whole_body")           # the legged scenarios run it (hil.legged.WholeBody)
    faults = {f.type for s in scenarios for f in s.cfg.sim.faults}
    assert {c for c in controllers if ":" not in c} == set(BUILTIN_CONTROLLERS)     # besides users' laws
    assert faults == set(typing.get_args(FaultType))
    assert any(s.cfg.sim.contact.enabled for s in scenarios)
    trips = {t.fault for s in scenarios for t in (s.spec.criteria.trips or [])}
    assert "COLLISION_IMMINENT" in trips                                 # the collision guard
    assert any(s.spec.link == "serial" for s in scenarios)
    link_faults = {f["type"] for s in scenarios if s.spec.link == "serial"
                   for f in s.data["serial"]["device"].get("faults", [])}
    # the link's corruptions; silent, unplug and board_fault run on the wall clock (tests/serial covers them)
    assert link_faults == {"bit_flip", "drop_byte", "truncate", "garbage", "split"}
    assert all(s.spec.golden is not None for s in scenarios)
    # each real driver's mode (configs/real) in both start orders, the exit-path safe command checked
    real = {(s.cfg.sim.driver, str(s.cfg.sim.kuka_driver.torque_only if s.cfg.robot.protocol == "iiwa"
                                   else s.cfg.robot.command), s.spec.start_order)
            for s in scenarios if s.cfg.sim.driver != "drake_sim"
            and s.spec.criteria.summary.get("status.exit_command_sent") is True}
    assert real == {(d, m, o) for d, m in (("kuka_driver", "False"), ("kuka_driver", "True"),
                                           ("franka_driver", "torque"), ("franka_driver", "velocity"),
                                           ("franka_driver", "position"))
                    for o in ("loop_first", "driver_first")}
    # and the Panda itself (example-robot-data's, configs/arms) in each franka_driver mode, both orders
    panda = {(s.cfg.robot.command, s.spec.start_order) for s in scenarios if "panda_description" in s.cfg.robot.model
             and s.spec.criteria.summary.get("status.exit_command_sent") is True}
    assert panda == {(m, o) for m in ("torque", "velocity", "position") for o in ("loop_first", "driver_first")}


def copy_scenario(tmp_path, name: str, edit=None) -> Path:
    """configs/scenarios/NAME.yaml (and its golden file) in tmp_path, with edit(data) applied."""
    data = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    if edit:
        edit(data)
    (tmp_path / "golden").mkdir(exist_ok=True)
    shutil.copy(SCENARIOS / "golden" / f"{name}.json", tmp_path / "golden")
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_criterion_that_does_not_hold_fails_with_its_figures(tmp_path):
    def tighten(d):
        d["scenario"]["criteria"]["tracking_rms"] = 1e-6
        d["scenario"]["criteria"]["max_torque"] = [320, 320, 176, 176, 110, 40, 0.1]
        d["scenario"]["golden"] = None
    r = run_scenario(copy_scenario(tmp_path, "computed_torque_waypoints", tighten))
    failed = {c["name"]: c for c in r["checks"] if not c["passed"]}
    assert not r["passed"] and set(failed) == {"tracking_rms", "max_torque"}
    assert failed["max_torque"]["detail"].startswith("iiwa_joint_7: 0.45")      # joint 6, by its name
    assert "tracking_rms: iiwa_joint_7" in format_table([r])            # the worst joint


def test_missing_and_unexpected_trips_fail(tmp_path):
    def expect_wrong(d):
        d["scenario"]["criteria"]["trips"] = [{"fault": "STATUS_TIMEOUT", "at": 2.5, "within_ms": 4}]
        d["scenario"]["golden"] = None
    r = run_scenario(copy_scenario(tmp_path, "fault_silent", expect_wrong))
    trips = next(c for c in r["checks"] if c["name"] == "trips")
    assert not trips["passed"]
    assert trips["detail"] == ("missing: STATUS_TIMEOUT within 4 ms of 2.5 s; "
                               "unexpected: STATUS_TIMEOUT at 1.502 s")


def test_a_change_in_behaviour_fails_the_golden_comparison_with_a_readable_diff(tmp_path):
    def softer(d):
        d["controller"]["kp"] = [300]
    r = run_scenario(copy_scenario(tmp_path, "computed_torque_waypoints", softer))
    assert all(c["passed"] for c in r["checks"])           # still within its criteria...
    diffs = r["golden"]["diffs"]                            # ...but not what it was
    assert not r["passed"] and diffs
    assert any(d.startswith("tracking_rms_rad[0]: golden 3.4265e-05, now ") for d in diffs), diffs


def test_golden_comparison_reports_transitions_and_shapes():
    g = {"ticks": 10, "x": [1.0, 2.0], "transitions": ["tick 0: INIT -> RUNNING: first valid status"]}
    now = {"ticks": 10, "x": [1.0, 2.0 + 1e-12], "transitions": g["transitions"]}
    assert compare_golden(g, now, 1e-6, 1e-9) == []
    now = {"ticks": 11, "x": [1.0], "transitions": g["transitions"] + ["tick 5: RUNNING -> FAULT [ESTOP]: e"]}
    diffs = compare_golden(g, now, 1e-6, 1e-9)
    assert diffs[0] == "ticks: golden 10, now 11 (+10.00%)"
    assert "transitions differ:" in diffs[1] and "+tick 5: RUNNING -> FAULT [ESTOP]: e" in diffs[1]
    assert diffs[2] == "x: golden has 2 values, now 1"


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("scenario"), "scenario: is required"),
    (lambda d: d["scenario"].pop("duration"), "scenario.duration: is required (seconds of simulated time)"),
    (lambda d: d["scenario"]["criteria"].update(tracking_rms="small"),
     "scenario.criteria.tracking_rms: must be a number or a list of numbers, got 'small'"),
    (lambda d: d["scenario"]["criteria"].update(trips=[{"fault": "STATUS_TIMOUT", "at": 1}]),
     "scenario.criteria.trips[0].fault: unknown fault 'STATUS_TIMOUT'"),
    (lambda d: d["scenario"].update(link="can"), "scenario.link: must be one of 'sim', 'serial', 'servo', got 'can'"),
    (lambda d: d["controller"].update(kp="x"), "controller.kp: must be a list"),
])
def test_bad_scenario_files_name_the_key(tmp_path, edit, message):
    path = copy_scenario(tmp_path, "computed_torque_waypoints", edit)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        load_scenario(path)


def hil(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hil", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def short(d):
    d["scenario"]["duration"] = 2.0
    d["scenario"]["golden"] = None


def test_regress_cli_runs_in_parallel_and_writes_report_plots_and_logs(tmp_path):
    for name in ("computed_torque_waypoints", "fault_silent"):
        copy_scenario(tmp_path, name, short)
    out = tmp_path / "out"
    p = hil("regress", tmp_path, "-j", 2, "--report", out / "report.json", "--plots", out / "plots",
            "--logs", out / "logs")
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.loads((out / "report.json").read_text())
    assert (report["passed"], report["failed"]) == (2, 0)
    assert [s["name"] for s in report["scenarios"]] == ["computed_torque_waypoints", "fault_silent"]
    assert "| computed_torque_waypoints | PASS | 2.0 |" in p.stdout and "2 passed, 0 failed" in p.stdout
    for name in ("computed_torque_waypoints", "fault_silent"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 10_000
        assert (out / "logs" / f"{name}.lcmlog").stat().st_size > 100_000
    assert "[2/2]" in p.stderr                                      # the progress lines
    # the log replays against the scenario file itself (its scenario section is ignored)...
    log, scenario = out / "logs" / "computed_torque_waypoints.lcmlog", tmp_path / "computed_torque_waypoints.yaml"
    p = hil("replay", log, "--config", scenario)
    assert p.returncode == 0 and "PASS" in p.stdout, p.stdout + p.stderr
    data = yaml.safe_load(scenario.read_text())                     # ...and catches a change of gains
    data["controller"]["kp"] = [300]
    scenario.write_text(yaml.safe_dump(data))
    p = hil("replay", log, "--config", scenario)
    assert p.returncode == 1 and "FAIL" in p.stdout, p.stdout + p.stderr


def test_regress_cli_exit_status(tmp_path):
    def failing(d):
        short(d)
        d["scenario"]["criteria"]["tracking_max"] = 1e-9
    copy_scenario(tmp_path, "computed_torque_waypoints", failing)
    p = hil("regress", tmp_path, "--report", tmp_path / "r.json")
    assert p.returncode == 1 and "| computed_torque_waypoints | FAIL |" in p.stdout
    assert "tracking_max: iiwa_joint_" in p.stdout
    (tmp_path / "broken.yaml").write_text("robot: {model: robots/iiwa14.urdf}\nscenario: {duration: -1}\n")
    p = hil("regress", tmp_path, "--report", tmp_path / "r.json")
    assert p.returncode == 2 and "broken.yaml: scenario.duration: must be > 0, got -1" in p.stderr
    p = hil("regress", tmp_path, "-k", "nothing-matches", "--report", tmp_path / "r.json")
    assert p.returncode == 2 and "no scenarios" in p.stderr


def test_a_scenario_whose_model_is_not_installed_is_skipped_with_what_to_install(tmp_path):
    """A `package://` model of a package nobody installed: that scenario is skipped with one line, the
    others run, the suite passes (exit 0), the table and the report say SKIP."""
    def elsewhere(d):
        short(d)
        d["robot"]["model"] = "package://no-such-robot-models/robots/arm.urdf"
    copy_scenario(tmp_path, "joint_pd_quintic", elsewhere)
    copy_scenario(tmp_path, "gravity_compensation_hold", short)
    p = hil("regress", tmp_path, "--report", tmp_path / "r.json")
    assert p.returncode == 0, p.stdout + p.stderr
    assert ("hil regress: skipping joint_pd_quintic: its model is in the package 'no-such-robot-models', "
            "which is not installed") in p.stderr
    assert "| joint_pd_quintic | SKIP |" in p.stdout and "1 passed, 0 failed, 1 skipped" in p.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert (report["passed"], report["failed"], report["skipped"]) == (1, 0, 1)


def test_golden_dir_takes_the_updates_and_leaves_the_scenarios_golden_files(tmp_path):
    """--update-golden --golden-dir DIR writes DIR/NAME.json, not the scenario's own golden file; a run
    with --golden-dir compares with it; a changed outcome in DIR is a golden failure."""
    path = copy_scenario(tmp_path, "joint_pd_quintic", lambda d: d["scenario"].update(duration=2.0))
    own = (tmp_path / "golden" / "joint_pd_quintic.json").read_bytes()
    mine = tmp_path / "mine"
    p = hil("regress", path, "--update-golden", "--golden-dir", mine, "--report", tmp_path / "r.json")
    assert p.returncode == 0 and "| updated |" in p.stdout, p.stdout + p.stderr
    assert (tmp_path / "golden" / "joint_pd_quintic.json").read_bytes() == own
    p = hil("regress", path, "--golden-dir", mine, "--report", tmp_path / "r.json")
    assert p.returncode == 0 and "| same |" in p.stdout, p.stdout + p.stderr
    golden = json.loads((mine / "joint_pd_quintic.json").read_text())
    golden["torque_max_nm"] = [x * 2 for x in golden["torque_max_nm"]]
    (mine / "joint_pd_quintic.json").write_text(json.dumps(golden))
    p = hil("regress", path, "--golden-dir", mine, "--report", tmp_path / "r.json")
    assert p.returncode == 1 and "golden: torque_max_nm" in p.stdout, p.stdout + p.stderr


def test_legged_scenarios_write_their_logs_and_plots(tmp_path):
    """--logs and --plots reach the legged scenarios too; the log is a legged run's (hil report reads it)."""
    from dynamics_cy.planning.legged_models import example_robot_data_root
    if example_robot_data_root() is None:
        pytest.skip("example-robot-data is not installed")
    p = hil("regress", SCENARIOS / "legged_go2_stand.yaml", "--report", tmp_path / "r.json",
            "--logs", tmp_path / "logs", "--plots", tmp_path / "plots")
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "plots" / "legged_go2_stand.png").stat().st_size > 10_000
    report = hil("report", tmp_path / "logs" / "legged_go2_stand.lcmlog", "--json")
    assert report.returncode == 0 and json.loads(report.stdout)["protocol"] == "floating_base", report.stderr
