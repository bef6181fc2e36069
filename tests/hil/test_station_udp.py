"""A station over UDP multicast (ttl=0), two processes: `hil sim` of the station file simulates both arms
on their own channels, `hil run` of it drives both with one tick; an arm faulted in the simulator stops
the station (on_fault stop_all) and `hil run` exits 3."""
import json
import subprocess
import sys

from tests.hil.processes import spawn

STATION = "configs/station/two_iiwas.yaml"


def run_pair(url: str, station: str = STATION) -> tuple:
    sim = spawn("sim", station, "--lcm-url", url, "--duration", "6")
    try:
        run = spawn("run", station, "--lcm-url", url, "--duration", "3", "--json")
        run_out, run_err = run.communicate(timeout=60)
        sim_out, sim_err = sim.communicate(timeout=60)
    finally:
        for p in (sim,):
            if p.poll() is None:
                p.kill()
    assert sim.returncode == 0, sim_out + sim_err
    assert run_out.strip(), f"no summary from `hil run` (exit {run.returncode}): {run_err}"
    return run.returncode, json.loads(run_out.strip().splitlines()[-1]), sim_out


def test_two_arms_run_over_udp_in_one_loop(multicast_url):
    code, summary, sim_out = run_pair(multicast_url)
    assert "status LEFT_IIWA_STATUS, command LEFT_IIWA_COMMAND" in sim_out
    assert "status RIGHT_IIWA_STATUS, command RIGHT_IIWA_COMMAND" in sim_out
    assert code in (0, 3), summary["faults"]          # a stall of this shared machine may trip the watchdog
    for name in ("left", "right"):
        arm = summary["arms"][name]
        assert arm["status"]["commands_sent"] > 2000 and arm["status"]["exit_command_sent"]
        if code == 0:
            assert arm["final_state"] == "RUNNING" and max(arm["tracking_error_rad"]["max"]) < 0.02


def test_two_arms_behind_one_kuka_driver_over_udp(multicast_url):
    """station.layout num_robots: `hil sim` is one kuka_driver --num_robots 2 (one 14-joint status on
    IIWA_STATUS), `hil run` splits it for the arms and joins their commands into one."""
    code, summary, sim_out = run_pair(multicast_url, "configs/station/two_iiwas_kuka_driver.yaml")
    assert "one kuka_driver --num_robots 2: status IIWA_STATUS (14 joints), command IIWA_COMMAND" in sim_out
    assert "joints 7..13 of the driver's" in sim_out and "the driver ended" not in sim_out
    bus = summary["kuka_driver"]
    assert bus["statuses_received"] > 500 and bus["commands_sent"] > 400 and bus["statuses_rejected"] == 0
    assert code in (0, 3), summary["faults"]
    for arm in summary["arms"].values():
        # kuka_driver's 200 Hz, told from 250 Hz or 1 kHz (the learned period moves by some µs on a
        # loaded machine: 5.011 ms was seen)
        assert abs(arm["status"]["period_ms"] - 5.0) < 0.25 and arm["status"]["exit_command_sent"]
        if code == 0:
            assert max(arm["tracking_error_rad"]["max"]) < 0.02


def test_one_arm_silent_stops_the_station(multicast_url, tmp_path):
    """The right arm's simulator stops publishing at 1 s: its STATUS_TIMEOUT, then the left arm's
    FAULT [STATION] on the next tick; both send their safe commands to the end; exit 3."""
    station = tmp_path / "s.yaml"
    station.write_text(open(STATION).read().replace(
        "    - name: right\n", "    - name: right\n      sim: {faults: [{type: silent, start: 1.0}]}\n").replace(
        "status_timeout_periods: 10 ", "status_timeout_periods: 100 "))    # 100 ms: past this machine's stalls
    code, summary, _ = run_pair(multicast_url, str(station))
    left, right = summary["arms"]["left"], summary["arms"]["right"]
    assert code == 3 and summary["station"]["stopped_by"] == "right", summary["faults"]
    assert right["faults"][0]["fault"] == "STATUS_TIMEOUT" and not right["commanding"]
    assert left["faults"][-1]["fault"] == "STATION" and left["final_state"] == "FAULT"
    assert left["faults"][-1]["tick"] == right["faults"][0]["tick"] + 1
    assert left["status"]["exit_command_sent"] and right["status"]["exit_command_sent"]


def test_a_bad_station_file_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text(open(STATION).read().replace("- name: right", "- name: left"))
    for command in ("sim", "run"):
        out = subprocess.run([sys.executable, "-m", "hil", command, str(bad), "--duration", "1"], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 2 and "station.arms[1].name: 'left' names two arms" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr


def test_two_arms_on_buses_of_their_own_over_udp(tmp_path):
    """Drake's way: each arm on a multicast group port of its own under IIWA_STATUS / IIWA_COMMAND;
    `hil sim` and `hil run` of the station each listen on both."""
    from messages.channels import private_lcm_url
    from tests.conftest import _multicast_problem
    urls = [private_lcm_url(), private_lcm_url()]
    problem = _multicast_problem(urls[0])
    if problem or urls[0] == urls[1]:
        import pytest
        pytest.skip(problem or "the same port twice")
    station = tmp_path / "s.yaml"
    text = open(STATION).read()
    for name, url in zip(("left", "right"), urls):
        text = text.replace(f"    - name: {name}\n",
                            f"    - name: {name}\n      lcm: {{url: \"{url}\"}}\n      channels: {{prefix: \"\"}}\n")
    station.write_text(text)
    code, summary, sim_out = run_pair(urls[0], str(station))
    assert f"status IIWA_STATUS, command IIWA_COMMAND on {urls[0]}" in sim_out
    assert f"status IIWA_STATUS, command IIWA_COMMAND on {urls[1]}" in sim_out
    assert code in (0, 3), summary["faults"]
    for arm in summary["arms"].values():
        assert arm["status"]["commands_sent"] > 2000 and arm["status"]["foreign_commands"] == 0
