"""The station file configs/station/two_iiwas_wsg.yaml (two iiwas at their own base poses, each with a WSG
behind a wrist F/T sensor, a table and a box): in lockstep one loop picks both boxes up and places each 40 cm
further in its arm's base frame; each arm's WSG is commanded by its own trajectory's track on its own channels;
the simulated station's viewer messages (decoded with lcm-gen's classes) load both cells as one scene and draw
each box from its start to its target, with both cells' pad contacts during the carry. `hil demo --config`
runs the station over UDP, drawn by `hil sim` alone."""
import json

import lcm
import numpy as np
import pytest

from drivers.station import load_station
from hil.station import make_station_lockstep
from messages.drake import (
    lcmt_contact_results_for_viz,
    lcmt_schunk_wsg_command,
    lcmt_viewer_draw,
    lcmt_viewer_load_robot,
)
from tests.hil.test_station_iiwa_wsg import run_demo

STATION = "configs/station/two_iiwas_wsg.yaml"
# each box's start and target in W: iiwa_wsg.yaml's (0.55, ∓0.2, 0.125) in A, moved by the arm's X_WA
BOXES = {"left": ([0.55, 0.4, 0.125], [0.55, 0.8, 0.125]), "right": ([0.65, -0.4, 0.125], [0.65, -0.8, 0.125])}
CARRY = (6.2, 8.0)          # s: the boxes lifted and moving


@pytest.fixture(scope="module")
def station_run():
    station = load_station(STATION, {"lcm": {"url": "memq://"}})
    lc = lcm.LCM("memq://")
    seen = {c: [] for c in ("DRAKE_VIEWER_LOAD_ROBOT", "DRAKE_VIEWER_DRAW", "CONTACT_RESULTS",
                            "LEFT_SCHUNK_WSG_COMMAND", "RIGHT_SCHUNK_WSG_COMMAND", "SCHUNK_WSG_COMMAND")}
    for channel in seen:
        lc.subscribe(channel, lambda c, d: seen[c].append(d))
    loop, sim = make_station_lockstep(station, {"memq://": lc})
    sim.publish_status()
    try:
        summary = loop.run(11.0)
    finally:
        loop.close()
        sim.close()
    lc.handle_timeout(0)
    return summary, seen


def test_one_loop_runs_both_cells_each_gripper_on_its_own_channels(station_run):
    summary, seen = station_run
    assert summary["final_state"] == "RUNNING" and not summary["faults"]
    assert not seen["SCHUNK_WSG_COMMAND"]
    for arm in ("left", "right"):
        widths = [lcmt_schunk_wsg_command.decode(d).target_position_mm
                  for d in seen[f"{arm.upper()}_SCHUNK_WSG_COMMAND"]]
        assert widths == [100.0, 0.0, 100.0]        # the track: open, close on the box, open over the target
        assert summary["arms"][arm]["gripper"]["received"] > 200


def test_the_scene_holds_both_cells_and_draws_each_box_to_its_target(station_run):
    _, seen = station_run
    names = [link.name for link in lcmt_viewer_load_robot.decode(seen["DRAKE_VIEWER_LOAD_ROBOT"][-1]).link]
    for arm in ("left", "right"):
        assert {f"{arm}::iiwa14::iiwa_link_7", f"{arm}::box::box", f"{arm}::table::table"} <= set(names)
        assert any(n.startswith(f"{arm}::") and n.endswith("::right_finger") for n in names)
    draws = [lcmt_viewer_draw.decode(d) for d in seen["DRAKE_VIEWER_DRAW"]]
    assert len(draws) == pytest.approx(11.0 * 60, rel=0.05)

    def at(draw, name):
        return np.array(draw.position[list(draw.link_name).index(name)])
    for arm, (start, target) in BOXES.items():
        np.testing.assert_allclose(at(draws[0], f"{arm}::box::box"), start, atol=2e-3)
        np.testing.assert_allclose(at(draws[-1], f"{arm}::box::box"), target, atol=0.01)
    np.testing.assert_allclose(at(draws[-1], "right::iiwa14::iiwa_link_0"), [1.2, -0.6, 0.0], atol=1e-6)


def test_both_cells_pad_contacts_are_in_one_message_during_the_carry(station_run):
    _, seen = station_run
    carry = [m for m in (lcmt_contact_results_for_viz.decode(d) for d in seen["CONTACT_RESULTS"])
             if CARRY[0] <= m.timestamp * 1e-6 <= CARRY[1]]
    assert len(carry) > 60
    for m in carry:
        pairs = {(c.body1_name.split("(")[0], c.body2_name.split("(")[0]) for c in m.point_pair_contact_info}
        for arm in ("left", "right"):
            assert any(f"{arm}::box" in pair and any(f"{arm}::" in b and "finger" in b for b in pair)
                       for pair in pairs), (arm, pairs)


def test_hil_demo_runs_the_station_drawn_by_the_simulator(multicast_url):
    out, draws = run_demo(STATION, multicast_url, lambda draw: list(draw.link_name))
    assert out.returncode in (0, 3), out.stderr          # (3: a loaded machine's late status, as a desktop's)
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(summary["arms"]) == {"left", "right"} and summary["station"]["ticks"] >= 1000
    assert len(draws) > 60 and all("left::box::box" in names and "right::box::box" in names for names in draws)
