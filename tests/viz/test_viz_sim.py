"""Viewer messages from the simulated plant: the HIL loop in lockstep with the config's viz section
enabled (the simulator publishes from its own state), one publisher per robot, the ground of the
contact model in the load message, and the counters in the run summary. Real LCM (memq://)."""
from pathlib import Path

import lcm
import numpy as np

from drivers.core.config import channels_for
from drivers.core.robot import build_plant
from drivers.core.schema import read_yaml
from drivers.run_config import load_config
from drivers.sim import SimulatedRobot, load_sim_config
from drivers.sim.contact import GROUND_COLOR
from drivers.viz import ViewerBridge, load_robot_message
from hil.lockstep import make_lockstep, run_lockstep
from hil.telemetry import format_summary
from messages import lcmt_viewer_draw, lcmt_viewer_geometry_data, lcmt_viewer_load_robot

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "configs" / "demo.yaml"
GROUND = REPO / "configs" / "sim" / "iiwa_ground.yaml"
LOAD, DRAW = "DRAKE_VIEWER_LOAD_ROBOT", "DRAKE_VIEWER_DRAW"


class ViewerMessages:
    """The load and draw messages published on `lc` from now on, decoded as they are handled."""

    def __init__(self, lc):
        self.lc, self.loads, self.draws = lc, [], []
        lc.subscribe(LOAD, lambda channel, data: self.loads.append(lcmt_viewer_load_robot.decode(data)))
        lc.subscribe(DRAW, lambda channel, data: self.draws.append(lcmt_viewer_draw.decode(data)))

    def drain(self):
        while self.lc.handle_timeout(0) > 0:
            pass
        return self


def demo_config(viz):
    """configs/demo.yaml with its viz section replaced (a mapping or a bool)."""
    return load_config(DEMO, {"viz": viz})


def link_7_position(plant, q):
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, q)
    return plant.EvalBodyPoseInWorld(context, plant.GetBodyByName("iiwa_link_7")).translation()


def test_lockstep_with_viz_draws_the_plant_at_60_hz_of_simulated_time():
    lc = lcm.LCM("memq://")
    received = ViewerMessages(lc)
    loop, sim = make_lockstep(demo_config({"enabled": True, "draw_rate_hz": 60.0, "load_period_s": 2.0}), lc)
    assert sim.viewer is not None and loop.viz is None          # the plant publishes, the loop does not
    q_at_ms = {0: sim.physics.q.copy()}

    def record(loop):
        q_at_ms[sim.time_ns // 1_000_000] = sim.physics.q.copy()

    sim.publish_status()
    summary = loop.run(3.0, on_tick=record)
    end_ms = sim.time_ns // 1_000_000
    received.drain()                     # delivers the loop's exit command too: the plant steps once more
    record(loop)
    draws, seconds = received.draws, sim.time_ns * 1e-9
    assert seconds > 2.99
    # ~60 draws per simulated second: slots every 16.67 ms from t = 0 on the 1 ms steps.
    assert abs(len(draws) - 60 * seconds) <= 1.5, (len(draws), seconds)
    stamps = np.array([d.timestamp for d in draws])
    assert stamps[0] == 0 and set(np.diff(stamps)) <= {16, 17}
    # The load goes before the first draw and again after load_period_s (2 s) of simulated time.
    assert len(received.loads) == sim.viewer.loads == 2
    assert received.loads[0].encode() == load_robot_message(sim.physics.plant).encode()
    # Each draw is the plant's own state at its simulated time (the arm moves along the waypoints).
    link_7 = [name.endswith("iiwa_link_7") for name in draws[0].link_name].index(True)
    plant = sim.physics.plant
    for draw in draws:
        np.testing.assert_allclose(draw.position[link_7], link_7_position(plant, q_at_ms[draw.timestamp]),
                                   atol=1e-6)
    moved = np.linalg.norm(np.subtract(draws[-1].position[link_7], draws[0].position[link_7]))
    assert moved > 0.05, moved
    # The counters reach the run's summary (under the simulator's) and its text.
    drawn = sum(1 for d in draws if d.timestamp <= end_ms)     # those of the run, before its exit command
    assert summary["sim"]["viz"] == {"draws": drawn, "loads": 2, "requests": 0, "rejected": 0, "errors": 0}
    text = format_summary(summary)
    assert f"viz (simulated plant): draws {drawn}, loads 2, viewer requests 0, rejected q 0, " \
           "send errors 0" in text
    assert '"viz"' not in text.split("\nsim: ", 1)[1].split("\n", 1)[0]     # not twice


def test_a_bridge_given_to_the_loop_is_the_only_publisher():
    lc = lcm.LCM("memq://")
    received = ViewerMessages(lc)
    cfg = demo_config(True)
    bridge = ViewerBridge(build_plant(cfg.robot), lc, channels_for(cfg), cfg.viz)
    summary, loop, sim = run_lockstep(cfg, 1.0, lc=lc, viz=bridge)
    received.drain()
    assert sim.viewer is None and "viz" not in summary["sim"]
    assert len(received.draws) == bridge.draws == 60 and len(received.loads) == bridge.loads == 1
    # What the loop would add to its summary (hil/loop.py: "viz": self.viz.summary()) formats too.
    summary["viz"] = bridge.summary()
    assert "\nviz: draws 60, loads 1, viewer requests 0, rejected q 0, send errors 0" in format_summary(summary)


def test_lockstep_without_viz_publishes_no_viewer_messages():
    lc = lcm.LCM("memq://")
    received = ViewerMessages(lc)
    summary, loop, sim = run_lockstep(demo_config(False), 0.5, lc=lc)
    received.drain()
    assert sim.viewer is None and received.draws == [] and received.loads == []
    assert "viz" not in summary["sim"] and "viz" not in format_summary(summary)


def ground_sim(contact: dict, lc):
    cfg = load_config(GROUND, {"lcm": {"url": "memq://"}})
    sim_section = read_yaml(GROUND)["sim"]
    sim_section["contact"] = {**sim_section["contact"], **contact}
    return SimulatedRobot(build_plant(cfg.robot), load_sim_config(sim_section), "iiwa", lcm=lc, viz=cfg.viz)


def test_the_ground_of_the_contact_model_is_in_the_load_message():
    lc = lcm.LCM("memq://")
    received = ViewerMessages(lc)
    sim = ground_sim({}, lc)
    sim.publish_status()
    for _ in range(20):
        sim.tick()
    received.drain()
    (load,) = received.loads
    world, robot = load.link[0], load.link[1:]
    assert (world.name, world.robot_num, world.num_geom) == ("world", 0, 1)
    ground = world.geom[0]
    assert ground.type == lcmt_viewer_geometry_data.BOX and list(ground.float_data) == [50.0, 50.0, 1.0]
    # The box's top face is the plane z = contact.ground.height (0.037 m in iiwa_ground.yaml).
    np.testing.assert_allclose(ground.position, [0.0, 0.0, 0.037 - 0.5], atol=1e-12)
    np.testing.assert_allclose(ground.quaternion, [1, 0, 0, 0])
    np.testing.assert_allclose(ground.color, GROUND_COLOR, atol=1e-7)
    # The robot's links are the plant's, and the draws carry only them (the world link is anchored).
    assert [link.encode() for link in robot] == [link.encode() for link in
                                                 load_robot_message(sim.physics.plant).link]
    assert len(received.draws) == 2 and received.draws[0].num_links == len(robot)

    for contact in ({"ground": {"enabled": False}}, {"enabled": False}):
        lc = lcm.LCM("memq://")
        received = ViewerMessages(lc)
        ground_sim(contact, lc).publish_status()
        (load,) = received.drain().loads
        assert [link.name for link in load.link] == [link.name for link in robot], contact
