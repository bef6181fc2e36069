"""End to end: Drake's Meldis in a subprocess (LCM on a ttl=0 multicast URL, Meshcat on localhost)
receives our messages; its Meshcat scene, read back from Meshcat's /download page, holds the
robot's geometry at our poses and, from the simulator's contact results, the contact force arrows."""
import time
from pathlib import Path

import lcm
import numpy as np
import pytest

pytest.importorskip("pydrake.visualization.meldis", reason="pydrake (with Meldis) is not installed (pip install drake)")

from drivers.sim.config import ContactConfig, GroundConfig  # noqa: E402
from drivers.sim.contact import ContactModel  # noqa: E402
from drivers.sim.contact_lcm import ContactResultsPublisher  # noqa: E402
from drivers.viz import ViewerBridge, VizConfig  # noqa: E402
from hil.lockstep import run_closed  # noqa: E402
from tests.viz.meldis import meldis, scene_with, transform  # noqa: E402

LINK = "/DRAKE_VIEWER/2/plant/iiwa14/iiwa_link_{}"
ARROW = "/CONTACT_RESULTS/point/{}+{}"     # body1_name, body2_name
# Each iiwa link's visual (three.js geometry type and sizes), from configs/robots/iiwa14.urdf.
VISUALS = [("CylinderGeometry", 0.11, 0.15), ("CylinderGeometry", 0.075, 0.20), ("CylinderGeometry", 0.075, 0.20),
           ("CylinderGeometry", 0.07, 0.20), ("CylinderGeometry", 0.07, 0.18), ("CylinderGeometry", 0.065, 0.20),
           ("SphereGeometry", 0.07, None), ("CylinderGeometry", 0.045, 0.04)]


def sim_contacts(plant, q, ground_height):
    """The simulator's contact results publisher (drivers.sim) for the arm at q pressed into a ground
    at ground_height."""
    contact = ContactModel(plant, ContactConfig(ground=GroundConfig(height=ground_height)))
    n = plant.num_bodies()
    X_WB = np.zeros((n, 4, 4))
    plant.kernels().body_poses(q, X_WB)
    contact.point_contact.evaluate(X_WB, np.zeros((n, 6)), np.zeros((n, 6)))
    return ContactResultsPublisher(contact, "CONTACT_RESULTS")


def test_meldis_draws_the_robot_at_our_poses_and_the_contact_force(iiwa, multicast_url):
    lc = lcm.LCM(multicast_url)
    # load_period_s brings a viewer started after the bridge up to date: the first load is sent
    # before Meldis exists.
    bridge = ViewerBridge(iiwa, lc, config=VizConfig(load_period_s=0.5))
    q = np.array([0.4, 0.6, -0.3, -1.4, 0.2, 0.9, 0.5])
    assert bridge.tick(time.monotonic_ns(), q, 0)
    contacts = sim_contacts(iiwa, q, ground_height=0.45)
    points = {}                              # Meldis draws one arrow per pair of bodies
    for info in contacts.message(0).point_pair_contact_info:
        points.setdefault(ARROW.format(info.body1_name, info.body2_name), []).append(info)
    assert len(points) == 3                  # iiwa_link_1, 2 and 7 against the ground
    # Meldis moves link paths on every draw, loaded or not: wait for the geometry too.
    expected = [("set_transform", LINK.format(k)) for k in range(8)] + [
        ("set_object", f"{LINK.format(k)}/0") for k in range(8)] + [("set_object", f"{a}/cylinder") for a in points]

    def publish():
        now = time.monotonic()
        bridge.tick(time.monotonic_ns(), q, int(now * 1e6))
        contacts.publish(lc, int(now * 1e6))
        time.sleep(0.01)

    with meldis(multicast_url) as port:
        scene = scene_with(port, expected, publish, timeout=60, period=0.5)
    assert bridge.loads >= 2
    context = iiwa.CreateDefaultContext()
    iiwa.SetPositions(context, q)
    for k, (kind, radius, height) in enumerate(VISUALS):
        link = LINK.format(k)
        assert ("set_object", f"{link}/0") in scene, f"Meldis has no {link}; its scene: {sorted(p for _, p in scene)}"
        X_WB = transform(scene, link)
        expected_X_WB = iiwa.EvalBodyPoseInWorld(context, iiwa.GetBodyByName(f"iiwa_link_{k}")).GetAsMatrix4()
        np.testing.assert_allclose(X_WB, expected_X_WB, atol=1e-6, err_msg=link)
        geometry = scene["set_object", f"{link}/0"]["object"]["geometries"][0]
        assert geometry["type"] == kind, link
        if kind == "SphereGeometry":
            assert geometry["radius"] == pytest.approx(radius, rel=1e-6)
        else:
            assert (geometry["radiusTop"], geometry["height"]) == (pytest.approx(radius, rel=1e-6),
                                                                    pytest.approx(height, rel=1e-6))
    for arrow, infos in points.items():
        assert ("set_object", f"{arrow}/cylinder") in scene, f"no arrow {arrow}: {sorted(p for _, p in scene)}"
        X_WC = transform(scene, arrow)
        # The arrow starts at one of the pair's contact points and points along its force.
        info = min(infos, key=lambda i: np.linalg.norm(X_WC[:3, 3] - i.contact_point))
        np.testing.assert_allclose(X_WC[:3, 3], info.contact_point, atol=1e-9, err_msg=arrow)
        f = np.asarray(info.contact_force)
        np.testing.assert_allclose(X_WC[:3, 2], f / np.linalg.norm(f), atol=1e-9, err_msg=arrow)
        assert scene["set_property", f"{arrow}/cylinder"]["value"][2] > 0


def test_meldis_draws_the_panda_with_its_meshes(multicast_url):
    """The Panda of example-robot-data (configs/arms): Meldis loads each link's visual mesh (COLLADA,
    resolved from its package:// URI) and its Meshcat holds that file's bytes at our link poses."""
    pytest.importorskip("cmeel", reason="example-robot-data is not installed (make test installs it)")
    import xml.etree.ElementTree as ET

    from drivers.core.config import channels_for
    from drivers.core.robot import load_robot
    from drivers.run_config import load_config
    cfg = load_config("configs/arms/panda_torque.yaml", {"viz": False})
    robot = load_robot(cfg.robot)
    description = Path(cfg.robot.model).parents[1]          # .../robots/panda_description
    meshes = {}                                              # link -> its visual's file, from the URDF
    for link in ET.parse(cfg.robot.model).getroot().iter("link"):
        mesh = link.find("visual/geometry/mesh")
        if mesh is not None:
            uri = mesh.get("filename")
            meshes[link.get("name")] = description / uri.split("/panda_description/", 1)[1]
    assert len(meshes) == 11                     # link0..7, hand, two fingers
    lc = lcm.LCM(multicast_url)
    bridge = ViewerBridge(robot.plant, lc, channels_for(cfg), VizConfig(load_period_s=0.5))
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.6, 0.8])
    path = "/DRAKE_VIEWER/2/plant/panda/{}"
    expected = [("set_object", f"{path.format(link)}/0") for link in meshes]

    def publish():
        bridge.tick(time.monotonic_ns(), q, int(time.monotonic() * 1e6))
        time.sleep(0.02)

    with meldis(multicast_url) as port:
        scene = scene_with(port, expected, publish)
    context = robot.plant.CreateDefaultContext()
    robot.plant.SetPositions(context, q)
    for link, mesh in meshes.items():
        key = ("set_object", f"{path.format(link)}/0")
        assert key in scene, f"Meldis has no {link}; its scene: {sorted(p for _, p in scene)}"
        geometry = scene[key]["object"]["geometries"][0]
        assert (geometry["type"], geometry["format"]) == ("_meshfile_geometry", "dae"), link
        data = geometry["data"]
        assert (data.encode() if isinstance(data, str) else data) == mesh.read_bytes(), link
        X_WB = transform(scene, path.format(link))
        expected_X_WB = robot.plant.EvalBodyPoseInWorld(context, robot.plant.GetBodyByName(link)).GetAsMatrix4()
        np.testing.assert_allclose(X_WB, expected_X_WB, atol=1e-6, err_msg=link)


def test_meldis_draws_the_go2_standing_with_its_foot_forces(multicast_url):
    """Issue 18: the Go2 of example-robot-data standing under whole-body control (lockstep,
    hil.legged_scenario.LeggedRig) with the simulator's viewer and contact results on a multicast
    group: Meldis's scene holds the ground, every link of the Go2 at the simulated poses and one
    force arrow per foot, at the foot, along the force on the world (the feet carry the robot)."""
    pytest.importorskip("cmeel", reason="example-robot-data is not installed (make test installs it)")
    from hil.legged_scenario import LeggedRig
    rig = LeggedRig("go2", lcm_url=multicast_url, viz=VizConfig(load_period_s=0.5))
    plant = rig.plant
    path = "/DRAKE_VIEWER/2/plant/go2_description/{}"
    legs = ("FL", "FR", "RL", "RR")
    links = ["base"] + [f"{leg}_{part}" for leg in legs for part in ("hip", "thigh", "calf", "foot")]
    arrows = [f"/CONTACT_RESULTS/point/{leg}_foot(2)+world(0)" for leg in legs]
    expected = [("set_object", "/DRAKE_VIEWER/0/world/0")] + [
        ("set_object", f"{path.format(link)}/0") for link in links] + [("set_object", f"{a}/cylinder") for a in arrows]

    def stand():
        rig.run(0.02)                        # 20 lockstep steps of standing; the sim draws and publishes
        time.sleep(0.01)

    with meldis(multicast_url) as port:
        scene = scene_with(port, expected, stand)
    missing = [key for key in expected if key not in scene]
    assert not missing, f"Meldis lacks {missing}; its scene: {sorted(p for _, p in scene)}"
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, rig.robot.physics.q)            # standing still: the drawn pose is this one
    for link in links:
        X_WB = transform(scene, path.format(link))
        expected_X_WB = plant.EvalBodyPoseInWorld(context, plant.GetBodyByName(link)).GetAsMatrix4()
        np.testing.assert_allclose(X_WB, expected_X_WB, atol=2e-3, err_msg=link)
    for arrow in arrows:
        X_WC = transform(scene, arrow)
        foot = plant.EvalBodyPoseInWorld(context, plant.GetBodyByName(arrow.split("/")[-1].split("(")[0]))
        assert np.linalg.norm(X_WC[:2, 3] - foot.translation()[:2]) < 0.02, arrow      # at the foot
        assert X_WC[2, 2] < -0.9, arrow        # the force on body 2 (the world): the foot presses it down
        assert scene["set_property", f"{arrow}/cylinder"]["value"][2] > 0


def test_meldis_draws_the_station_carrying_the_box_with_the_grip_forces(multicast_url):
    """Issue 28: the one-arm station (configs/station/iiwa_wsg.yaml: the iiwa, the WSG behind the wrist
    F/T sensor, the table, the box) picks the box up in lockstep, its simulated plant publishing the viewer
    messages and the contact results on a multicast group. Paused at two instants of the carry, Meldis's
    scene holds the WSG, the table and the box, the box where the plant has it (moved between the two
    reads, lifted above the table), and a force arrow for each finger on the box, at the box, along the
    grip (the fingers close along Wy). While paused, the plant's draw and contact results of the instant are
    sent again (as its own bridge and publisher send them), so a datagram Meldis dropped under the
    lockstep's traffic is made up."""
    from drivers.run_config import load_config
    from drivers.viz import DrawPublisher, link_name
    from hil.lockstep import make_lockstep
    cfg = load_config("configs/station/iiwa_wsg.yaml",
                      {"lcm": {"url": multicast_url}, "viz": {"enabled": True, "load_period_s": 0.5}})
    # lockstep over UDP: the loop waits for each status (its own and the WSG's and the sensor's are sent
    # together), as it does for a device in another process
    lc = lcm.LCM(multicast_url)
    loop, sim = make_lockstep(cfg, lc, status_wait_s=5.0)
    plant = sim.physics.plant
    draw, contact_results = DrawPublisher(plant, lc), ContactResultsPublisher(sim.physics.contact, "CONTACT_RESULTS")

    def path(name):
        body = plant.GetBodyByName(name)
        return f"/DRAKE_VIEWER/{int(body.model_instance())}/" + link_name(plant, body).replace("::", "/")

    shown = {name: path(name) for name in ("body", "left_finger", "right_finger", "table", "box")}
    box = plant.GetBodyByName("box")
    reads = []                                   # (X_WB of the box in the plant, Meldis's scene)

    def read(port):
        context = plant.CreateDefaultContext()
        plant.SetPositions(context, sim.physics.q)
        X_WBox = plant.EvalBodyPoseInWorld(context, box).GetAsMatrix4()
        contacts = contact_results.message(0)
        arrows = {ARROW.format(i.body1_name, i.body2_name) for i in contacts.point_pair_contact_info}
        grip = {a for a in arrows if "box" in a and "finger" in a}
        assert len(grip) == 2, arrows        # each finger on the box, nothing else on it during the carry
        expected = [("set_object", f"{p}/0") for p in shown.values()] + [("set_object", f"{a}/cylinder") for a in grip]

        utime = sim.physics.time_ns // 1000

        def again():
            draw.publish(sim.physics.q, utime)
            contact_results.publish(lc, utime)
            time.sleep(0.05)

        def current(scene):                  # Meldis has drawn this instant (the box within 10 µm)
            return np.linalg.norm(transform(scene, shown["box"])[:3, 3] - X_WBox[:3, 3]) < 1e-5

        reads.append((X_WBox, grip, scene_with(port, expected, again, period=0.5, ready=current)))

    with meldis(multicast_url) as port:
        instants = iter((6.4e9, 7.8e9))      # ns of simulated time: the carry is 6.1 s to 8.1 s
        due = [next(instants)]

        def on_tick(loop_):
            if due[0] is not None and sim.physics.time_ns >= due[0]:
                read(port)
                due[0] = next(instants, None)

        summary = run_closed(loop, sim, 8.0, on_tick=on_tick)
    assert summary["final_state"] == "RUNNING", summary["faults"]
    assert len(reads) == 2
    for X_WBox, grip, scene in reads:
        missing = [p for p in shown.values() if ("set_object", f"{p}/0") not in scene]
        assert not missing, f"Meldis lacks {missing}; its scene: {sorted(p for _, p in scene)}"
        np.testing.assert_allclose(transform(scene, shown["box"]), X_WBox, atol=1e-5)     # float32 poses
        assert X_WBox[2, 3] > 0.125 + 0.05                     # lifted off the table
        for arrow in grip:
            X_WC = transform(scene, arrow)
            assert np.linalg.norm(X_WC[:3, 3] - X_WBox[:3, 3]) < 0.05, arrow   # on the 5 cm box
            assert abs(X_WC[1, 2]) > 0.9, arrow                                # along the grip, Wy
            assert scene["set_property", f"{arrow}/cylinder"]["value"][2] > 0
    (X_1, _, _), (X_2, _, _) = reads
    assert np.linalg.norm(X_2[:3, 3] - X_1[:3, 3]) > 0.1      # carried between the reads
