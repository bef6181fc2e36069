"""What the `hil` command prints for a user to read: warnings in one line, joints by name, the files it
writes, the summary's figures (real processes)."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

SCENARIOS = Path(__file__).parents[2] / "configs" / "scenarios"


def hil(*args, timeout=120, cwd=None):
    return subprocess.run([sys.executable, "-m", "hil", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)


@pytest.mark.parametrize("name", ["collision_wrist_to_table", "collision_wrist_to_base"])
def test_the_shipped_gripper_scenarios_do_not_warn_about_their_contact_stiffness(name):
    result = hil("sim", str(SCENARIOS / f"{name}.yaml"), "--duration", "0.05", "--no-viz", "--lcm-url", "memq://")
    assert result.returncode == 0, result.stderr
    assert "stiffness" not in result.stderr and "arning" not in result.stderr, result.stderr


def test_a_warning_is_printed_once_in_one_line_without_a_source_line(tmp_path):
    data = yaml.safe_load(open(SCENARIOS / "collision_wrist_to_table.yaml"))
    del data["sim"]["contact"]["stiffness"]                # the default 10⁵ N/m on the WSG's 50 g fingers
    data["robot"]["model"] = str(SCENARIOS.parent / data["robot"]["model"])
    (tmp_path / "stiff.yaml").write_text(yaml.safe_dump(data))
    result = hil("sim", str(tmp_path / "stiff.yaml"), "--duration", "0.05", "--no-viz", "--lcm-url", "memq://")
    assert result.returncode == 0, result.stderr
    lines = [x for x in result.stderr.splitlines() if "stiffness" in x]
    assert len(lines) == 1 and lines[0].startswith("hil: warning: sim.contact.stiffness: 100000 N/m on "), \
        result.stderr
    assert "ContactStiffnessWarning" not in result.stderr and ".py:" not in result.stderr, result.stderr


def test_faults_and_the_summary_name_the_joints_as_the_model_does():
    import hil

    def shove(state, command):              # joint 3 (iiwa_joint_4) driven hard: VELOCITY_LIMIT on it
        command.tau[:] = 0.0
        command.tau[3] = 150.0

    summary = hil.run("configs/demo.yaml", shove, duration=1.0, overrides={"viz": False,
                                                                             "safety": {"recover": False}})
    assert summary["joints"] == [f"iiwa_joint_{i}" for i in range(1, 8)]
    fault = summary["faults"][0]
    assert fault["fault"] == "VELOCITY_LIMIT" and fault["reason"].startswith("iiwa_joint_4 at "), fault


def test_a_scenarios_failed_criterion_names_the_worst_joint(tmp_path):
    data = yaml.safe_load(open(SCENARIOS / "joint_pd_quintic.yaml"))
    data["robot"]["model"] = str(SCENARIOS.parent / data["robot"]["model"])
    data["scenario"]["criteria"] = {"max_torque": 1e-6}
    data["scenario"].pop("golden", None)
    (tmp_path / "tight.yaml").write_text(yaml.safe_dump(data))
    result = hil("regress", str(tmp_path / "tight.yaml"), "--report", str(tmp_path / "r.json"))
    assert result.returncode == 1
    assert "max_torque: iiwa_joint_" in result.stdout, result.stdout


# --- item 11: plots and summaries ----------------------------------------------------------------------
CONFIGS = SCENARIOS.parent


def _png_height(path) -> int:
    import struct
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">I", head[20:24])[0]


def test_a_cell_with_a_gripper_an_ft_sensor_and_objects_plots_a_panel_for_each(tmp_path):
    from drivers.run_config import load_config
    from hil.lockstep import make_lockstep, run_closed
    from hil.telemetry import plot
    loop, sim = make_lockstep(load_config(CONFIGS / "station/iiwa_wsg.yaml", {"viz": False}))
    run_closed(loop, sim, 1.0)
    rec = loop.recorder
    assert set(rec.followed) == {"gripper", "gripper_sent", "wrench", "sim_q", "tau_measured"}
    assert [name for name, _ in rec.objects] == ["box"]           # the free box (the table is welded)
    r = rec.trace_rows
    box_z = rec.followed["sim_q"][:r, rec.objects[0][1] + 2]
    assert abs(box_z[-1] - box_z[0]) < 1e-3 and box_z[0] > 0.1  # resting on the table
    assert np.all(np.isfinite(rec.followed["wrench"][r // 2:r]))
    plot(rec, str(tmp_path / "cell.png"), title="cell")
    assert _png_height(tmp_path / "cell.png") == 7 * 3 * 90        # q, error, τ, timing + F/T, gripper, objects


def test_in_position_mode_the_torque_panel_shows_the_measured_torque():
    from drivers.run_config import load_config
    from hil.lockstep import make_lockstep, run_closed
    loop, sim = make_lockstep(load_config(CONFIGS / "demo.yaml", {"viz": False, "robot": {"command": "position"}}))
    run_closed(loop, sim, 0.5)
    rec = loop.recorder
    assert rec.traced_torque == "measured"
    tau = rec.trace_tau[:rec.trace_rows]
    assert np.abs(tau[-1]).max() > 0.1                     # the torque the driver measured: not zeros


def test_a_laws_metrics_are_in_the_summary_and_its_text():
    import hil
    from hil.telemetry import format_summary

    class Peak(hil.Controller):
        def on_configure(self):
            self.peak = np.zeros(self.n)

        def update(self, state, command):
            command.tau[:] = 0.0
            np.maximum(self.peak, np.abs(state.v), out=self.peak)

        def metrics(self):
            return {"peak_speed": self.peak, "ticks_seen": np.int64(3)}

    class Broken(Peak):
        def metrics(self):
            return {"object": object()}

    summary = hil.run("configs/demo.yaml", Peak(), duration=0.2, overrides={"viz": False})
    m = summary["controller_metrics"]
    assert len(m["peak_speed"]) == 7 and m["ticks_seen"] == 3
    assert "controller metrics: {\"peak_speed\": [" in format_summary(summary)
    bad = hil.run("configs/demo.yaml", Broken(), duration=0.05, overrides={"viz": False})["controller_metrics"]
    assert "cannot hold" in bad["error"]


def test_a_run_whose_law_never_ran_says_so_without_none():
    import hil
    from hil.telemetry import format_summary
    q0 = [0.0, 2.2, 0.0, -1.2, 0.0, 0.8, 0.0]              # iiwa_joint_2 beyond its limit (2.09): FAULT at INIT
    summary = hil.run("configs/demo.yaml", duration=0.2, overrides={"viz": False, "sim": {"initial_positions": q0}})
    assert summary["faults"][0]["fault"] == "JOINT_LIMIT" and "iiwa_joint_2" in summary["faults"][0]["reason"]
    text = format_summary(summary)
    assert "the law never ran" in text and "None" not in text, text
    assert "tracking error rad  — (no RUNNING tick)" in text and "rms [0.0" not in text, text   # not zeros


def test_the_last_telemetry_message_says_the_loop_ended():
    import lcm

    from drivers.run_config import load_config
    from hil.lockstep import make_lockstep, run_closed
    from messages import lcmt_hil_telemetry
    from messages.enums import ControllerState
    lc = lcm.LCM("memq://")
    seen = []
    lc.subscribe("HIL_TELEMETRY", lambda channel, data: seen.append(lcmt_hil_telemetry.decode(data)))
    loop, sim = make_lockstep(load_config(CONFIGS / "demo.yaml", {"viz": False}), lc)
    run_closed(loop, sim, 0.3)
    while lc.handle_timeout(0) > 0:
        pass
    assert seen[-2].controller_state == ControllerState.RUNNING
    last = seen[-1]
    assert last.controller_state == ControllerState.STOPPED
    assert last.fault_text.startswith("the loop ended (final state RUNNING)"), last.fault_text


def test_a_log_record_ends_the_live_status_line_first(capsys):
    import logging

    from drivers.run_config import load_config
    from hil.lockstep import make_lockstep, run_closed
    from hil.progress import StatusLine
    loop, sim = make_lockstep(load_config(CONFIGS / "demo.yaml", {"viz": False}))
    run_closed(loop, sim, 0.05)
    live = StatusLine("always")
    handler = logging.StreamHandler()
    handler.addFilter(live)
    log = logging.getLogger("test_live_line")
    log.addHandler(handler)
    try:
        live(loop)
        assert not capsys.readouterr().out.endswith("\n")          # the live line, rewritten in place
        log.warning("RUNNING -> FAULT")
        out = capsys.readouterr()
        assert out.out == "\n" and "RUNNING -> FAULT" in out.err   # the line ended before the record
        live.close()
        assert capsys.readouterr().out == ""                       # ended once
    finally:
        log.removeHandler(handler)


def test_a_station_demo_names_its_plots_and_explains_its_tick_counts(multicast_url, tmp_path):
    result = hil("demo", "--config", str(CONFIGS / "station/two_iiwas.yaml"), "--duration", "1", "--lcm-url",
                 multicast_url, "--plot", str(tmp_path / "station.png"), "--quiet", cwd=tmp_path)
    assert result.returncode in (0, 3), result.stderr
    for arm in ("left", "right"):
        assert (tmp_path / f"station_{arm}.png").stat().st_size > 10_000
        assert f"station_{arm}.png (arm {arm})" in result.stdout, result.stdout
    assert "the station counts every tick from its start" in result.stdout, result.stdout


def test_export_prints_what_it_wrote_and_json_on_request(tmp_path):
    from hil.regress import run_scenario
    r = run_scenario(SCENARIOS / "joint_pd_quintic.yaml", logs=str(tmp_path))
    out = tmp_path / "run.mcap"
    text = hil("export", r["log"], "--mcap", str(out))
    assert text.returncode == 0 and text.stdout.startswith(f"hil export: {out}: "), text.stdout
    assert "IIWA_STATUS" in text.stdout and "{" not in text.stdout
    as_json = hil("export", r["log"], "--mcap", str(out), "--json")
    import json
    assert json.loads(as_json.stdout)["messages"]["IIWA_STATUS"] > 2000


def test_a_run_stopped_before_its_first_tick_prints_no_none():
    from drivers.run_config import load_config
    from hil.lockstep import make_lockstep, run_closed
    from hil.telemetry import format_summary
    loop, sim = make_lockstep(load_config(CONFIGS / "demo.yaml", {"viz": False}))
    summary = run_closed(loop, sim, 1.0, stop=lambda: True)           # Ctrl-C at once
    assert summary["ticks"] == 0 and summary["rate_hz"]["achieved"] is None
    text = format_summary(summary)
    assert "None" not in text and "rate — Hz" in text and "the law never ran" in text, text


def test_hil_report_of_a_gripper_run_plots_the_gripper_panel(tmp_path):
    """`hil report --plot` of a run log with a gripper: the gripper's panel from its logged statuses and
    commands (and the F/T sensor's), beside the joints', and the status count in the report."""
    import hil
    log, png = tmp_path / "cell.lcmlog", tmp_path / "cell.png"
    hil.run(CONFIGS / "station/iiwa_wsg.yaml", duration=1.0, overrides={"viz": False, "telemetry": {"log": str(log)}})
    p = subprocess.run([sys.executable, "-m", "hil", "report", str(log), "--plot", str(png), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    gripper = json.loads(p.stdout)["gripper"]
    assert gripper["channel"] == "SCHUNK_WSG_STATUS" and gripper["count"] >= 15, gripper   # 20 Hz for 1 s
    assert _png_height(png) == 6 * 3 * 90          # q, error, τ, timing + F/T, gripper


def test_a_regress_plot_is_titled_with_its_scenario_and_outcome(tmp_path):
    """Text stands well above the first panel's frame: the title (the plots had none; the frame's top
    row was the first ink but for its own tick label, which straddles it)."""
    from PIL import Image

    from hil.regress import run_scenario
    r = run_scenario(SCENARIOS / "computed_torque_waypoints.yaml", plots=str(tmp_path))
    assert r["passed"] and Path(r["plot"]).name == "computed_torque_waypoints.png", r
    gray = np.asarray(Image.open(r["plot"]).convert("L"))
    ink = gray < 100
    first_ink = np.flatnonzero(ink.any(axis=1))[0]
    frame = np.flatnonzero(ink.mean(axis=1) > 0.5)[0]  # the first panel's top edge spans the width
    assert frame - first_ink > 15, f"nothing above the first panel (ink from row {first_ink}, frame {frame})"
