"""The station file configs/station/iiwa_wsg.yaml (the iiwa, the WSG behind a wrist F/T sensor, a table and a
box): in lockstep the loop picks the box up and places it, and the simulated plant's viewer messages (decoded
with lcm-gen's classes) load the table, the box and the WSG, draw the box moving to its target, and publish
the contact forces between the pads and the box during the carry; the sensor reads the WSG and the box
hanging from it. `hil demo --config` draws the cell from `hil sim` alone (every draw has the box)."""
import subprocess
import sys
import threading

import lcm
import numpy as np
import pytest

from hil.lockstep import make_lockstep
from hil.running import load
from messages.drake import lcmt_contact_results_for_viz, lcmt_viewer_draw, lcmt_viewer_load_robot

STATION = "configs/station/iiwa_wsg.yaml"
START, TARGET = np.array([0.55, -0.20, 0.125]), np.array([0.55, 0.20, 0.125])
CARRY = (6.2, 8.0)          # s: the box lifted and moving (the lift ends at 6.1 s, the carry at 8.1 s)


def short(name: str) -> str:
    return name.split("::")[-1].split("(")[0]


@pytest.fixture(scope="module")
def station_run():
    cfg = load(STATION, {"lcm": {"url": "memq://"}})
    lc = lcm.LCM("memq://")
    loads, draws, contacts = [], [], []
    lc.subscribe("DRAKE_VIEWER_LOAD_ROBOT", lambda c, d: loads.append(lcmt_viewer_load_robot.decode(d)))
    lc.subscribe("DRAKE_VIEWER_DRAW", lambda c, d: draws.append(lcmt_viewer_draw.decode(d)))
    lc.subscribe("CONTACT_RESULTS", lambda c, d: contacts.append(lcmt_contact_results_for_viz.decode(d)))
    loop, sim = make_lockstep(cfg, lc)
    wrench = []

    def on_tick(lp):
        t = sim.physics.time_ns * 1e-9
        if CARRY[0] <= t <= CARRY[1] or sim.physics.steps == 8100:      # the carry, and its end at rest
            wrench.append(lp.state.wrench.copy())
    sim.publish_status()
    try:
        summary = loop.run(11.0, on_tick=on_tick)
    finally:
        loop.close()
        sim.close()
    lc.handle_timeout(0)
    return summary, loads, draws, contacts, np.array(wrench), sim


def test_the_viewer_loads_the_table_the_box_and_the_wsg(station_run):
    _, loads, _, _, _, _ = station_run
    links = {short(link.name): link for link in loads[0].link}
    assert {"table", "box", "body", "left_finger", "right_finger"} <= set(links)
    box = links["box"].geom[0]
    assert box.type == box.BOX and list(box.float_data) == pytest.approx([0.05, 0.05, 0.05])


def test_the_box_is_drawn_moving_to_its_target(station_run):
    summary, _, draws, _, _, _ = station_run
    poses = [dict(zip(map(short, d.link_name), d.position)) for d in draws]
    first, last = np.array(poses[0]["box"]), np.array(poses[-1]["box"])
    assert np.linalg.norm(first - START) < 1e-3 and np.linalg.norm(last - TARGET) < 0.01
    heights = [p["box"][2] for p in poses]
    assert max(heights) > START[2] + 0.1                              # lifted 12 cm on the way
    assert summary["final_state"] == "RUNNING" and summary["gripper"]["commands_sent"] == 3


def test_the_contact_forces_between_the_pads_and_the_box_are_published(station_run):
    _, _, _, contacts, _, _ = station_run
    carry = [c for c in contacts if CARRY[0] <= c.timestamp * 1e-6 <= CARRY[1]]
    assert carry
    for message in carry:
        pads = [p for p in message.point_pair_contact_info
                if {short(p.body1_name), short(p.body2_name)} & {"left_finger", "right_finger"}
                and "box" in (short(p.body1_name), short(p.body2_name))]
        total = np.sum([np.abs(p.contact_force) for p in pads], axis=0)
        assert len(pads) >= 2 and np.linalg.norm(total) > 20.0         # the 40 N grip, on both pads


def test_the_wrist_sensor_reads_the_wsg_and_the_box_hanging_from_its_pads(station_run):
    """|f| = (m_WSG + m_box) g = (1.2 + 0.2) 9.81 N within 5 % through the carry's slow moves and within 0.1 %
    at its end, at rest (the box's weight reaches the WSG through the pads' friction)."""
    summary, _, _, _, wrench, _ = station_run
    assert summary["ft_sensor"]["received"] > 10000 and summary["ft_sensor"]["stale"] == 0
    force = np.linalg.norm(wrench[:, 3:], axis=1)
    assert force == pytest.approx(np.full(len(force), 1.4 * 9.81), rel=0.05)
    assert force[-1] == pytest.approx(1.4 * 9.81, rel=1e-3)


def run_demo(config: str, url: str, names) -> tuple:
    """(the finished `hil demo --config config --json` process, names(draw) of each draw message heard)."""
    lc, draws = lcm.LCM(url), []
    lc.subscribe("DRAKE_VIEWER_DRAW", lambda c, d: draws.append(names(lcmt_viewer_draw.decode(d))))
    stop = threading.Event()
    thread = threading.Thread(target=lambda: [lc.handle_timeout(50) for _ in iter(stop.is_set, True)], daemon=True)
    thread.start()
    try:
        return subprocess.run([sys.executable, "-m", "hil", "demo", "--config", config, "--lcm-url", url,
                               "--duration", "2", "--json"], capture_output=True, text=True, timeout=120), draws
    finally:
        stop.set()
        thread.join(1.0)


def test_hil_demo_draws_the_cell_from_the_simulator_alone(multicast_url):
    out, draws = run_demo(STATION, multicast_url, lambda draw: [short(n) for n in draw.link_name])
    assert out.returncode in (0, 3), out.stderr
    assert len(draws) > 60 and all("box" in names and "right_finger" in names for names in draws)
