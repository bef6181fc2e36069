"""End to end: Drake's Meldis in a subprocess (LCM on a ttl=0 multicast URL, Meshcat on localhost)
receives our messages; its Meshcat scene, read back from Meshcat's /download page, holds the
robot's geometry at our poses and, from the simulator's contact results, the contact force arrows; and the
collision guard's capsules and nearest pair."""
import base64
import contextlib
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import lcm
import numpy as np
import pytest

pytest.importorskip("pydrake.visualization.meldis", reason="pydrake (with Meldis) is not installed (pip install drake)")

from drivers.sim.config import ContactConfig, GroundConfig  # noqa: E402
from drivers.sim.contact import ContactModel  # noqa: E402
from drivers.sim.contact_lcm import ContactResultsPublisher  # noqa: E402
from drivers.viz import ViewerBridge, VizConfig  # noqa: E402
from dynamics_cy import BodyIndex  # noqa: E402

LINK = "/DRAKE_VIEWER/2/plant/iiwa14/iiwa_link_{}"
ARROW = "/CONTACT_RESULTS/point/{}+{}"     # body1_name, body2_name
# Each iiwa link's visual (three.js geometry type and sizes), from configs/robots/iiwa14.urdf.
VISUALS = [("CylinderGeometry", 0.11, 0.15), ("CylinderGeometry", 0.075, 0.20), ("CylinderGeometry", 0.075, 0.20),
           ("CylinderGeometry", 0.07, 0.20), ("CylinderGeometry", 0.07, 0.18), ("CylinderGeometry", 0.065, 0.20),
           ("SphereGeometry", 0.07, None), ("CylinderGeometry", 0.045, 0.04)]


def unpack_msgpack(data: bytes, i: int = 0):
    """(value, next index) of the MessagePack value at data[i]: the subset Meshcat's commands use."""
    t = data[i]
    i += 1
    if t <= 0x7F or t >= 0xE0:
        return (t if t <= 0x7F else t - 0x100), i
    if 0x80 <= t <= 0x9F or t in (0xDC, 0xDD, 0xDE, 0xDF):
        if t <= 0x9F:
            n = t & 0x0F
        else:
            size = 2 if t in (0xDC, 0xDE) else 4
            n, i = int.from_bytes(data[i:i + size], "big"), i + size
        is_map = t <= 0x8F or t in (0xDE, 0xDF)
        items = []
        for _ in range(2 * n if is_map else n):
            value, i = unpack_msgpack(data, i)
            items.append(value)
        return (dict(zip(items[::2], items[1::2])) if is_map else items), i
    if 0xA0 <= t <= 0xBF or t in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6):
        if t <= 0xBF:
            n = t & 0x1F
        else:
            size = {0xD9: 1, 0xDA: 2, 0xDB: 4, 0xC4: 1, 0xC5: 2, 0xC6: 4}[t]
            n, i = int.from_bytes(data[i:i + size], "big"), i + size
        raw = bytes(data[i:i + n])
        return (raw.decode() if t <= 0xDB and t not in (0xC4, 0xC5, 0xC6) else raw), i + n
    if t in (0xC0, 0xC2, 0xC3):
        return {0xC0: None, 0xC2: False, 0xC3: True}[t], i
    formats = {0xCA: ">f", 0xCB: ">d", 0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q",
               0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}
    if t in formats:
        return struct.unpack_from(formats[t], data, i)[0], i + struct.calcsize(formats[t])
    if 0xD4 <= t <= 0xD8 or t in (0xC7, 0xC8, 0xC9):   # ext: typed arrays
        if t >= 0xD4:
            n = 1 << (t - 0xD4)
        else:
            size = {0xC7: 1, 0xC8: 2, 0xC9: 4}[t]
            n, i = int.from_bytes(data[i:i + size], "big"), i + size
        return ("ext", data[i], bytes(data[i + 1:i + 1 + n])), i + 1 + n
    raise ValueError(f"MessagePack type byte 0x{t:02x} at {i - 1} is not supported")


def meshcat_scene(port: int) -> dict:
    """{(command type, path): command} of the scene Meshcat at `port` serves on /download."""
    html = urllib.request.urlopen(f"http://localhost:{port}/download", timeout=10).read().decode()
    scene = {}
    for chunk in re.findall(r"data:application/octet-binary;base64,([A-Za-z0-9+/=]+)", html):
        command, _ = unpack_msgpack(base64.b64decode(chunk))
        scene[command["type"], command.get("path")] = command
    return scene


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def meldis(lcm_url: str):
    """`python -m pydrake.visualization.meldis` listening on lcm_url, Meshcat on a free localhost port;
    yields the port. Always stopped."""
    port = free_tcp_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pydrake.visualization.meldis", "--host", "localhost", "--port", str(port),
         "--idle-timeout", "0"],
        env=dict(os.environ, LCM_DEFAULT_URL=lcm_url), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, ready = [], threading.Event()

    def read():
        for line in process.stdout:
            lines.append(line)
            if "Meshcat listening" in line:
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not ready.wait(90) or process.poll() is not None:
            pytest.fail("Meldis did not start:\n" + "".join(lines))
        yield port
        assert process.poll() is None, "Meldis exited:\n" + "".join(lines)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(5)


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
    with meldis(multicast_url) as port:
        deadline, scene, next_read = time.monotonic() + 60, {}, 0.0
        while time.monotonic() < deadline:
            now = time.monotonic()
            bridge.tick(time.monotonic_ns(), q, int(now * 1e6))
            contacts.publish(lc, int(now * 1e6))
            if now > next_read:
                scene, next_read = meshcat_scene(port), now + 0.5
                if all(key in scene for key in expected):
                    break
            time.sleep(0.01)
    assert bridge.loads >= 2
    context = iiwa.CreateDefaultContext()
    iiwa.SetPositions(context, q)
    for k, (kind, radius, height) in enumerate(VISUALS):
        link = LINK.format(k)
        assert ("set_object", f"{link}/0") in scene, f"Meldis has no {link}; its scene: {sorted(p for _, p in scene)}"
        X_WB = np.array(scene["set_transform", link]["matrix"]).reshape(4, 4).T   # three.js is column-major
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
        X_WC = np.array(scene["set_transform", arrow]["matrix"]).reshape(4, 4).T
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
    with meldis(multicast_url) as port:
        deadline, scene, next_read = time.monotonic() + 90, {}, 0.0
        while time.monotonic() < deadline:
            now = time.monotonic()
            bridge.tick(time.monotonic_ns(), q, int(now * 1e6))
            if now > next_read:
                scene, next_read = meshcat_scene(port), now + 1.0
                if all(key in scene for key in expected):
                    break
            time.sleep(0.02)
    context = robot.plant.CreateDefaultContext()
    robot.plant.SetPositions(context, q)
    for link, mesh in meshes.items():
        key = ("set_object", f"{path.format(link)}/0")
        assert key in scene, f"Meldis has no {link}; its scene: {sorted(p for _, p in scene)}"
        geometry = scene[key]["object"]["geometries"][0]
        assert (geometry["type"], geometry["format"]) == ("_meshfile_geometry", "dae"), link
        data = geometry["data"]
        assert (data.encode() if isinstance(data, str) else data) == mesh.read_bytes(), link
        X_WB = np.array(scene["set_transform", path.format(link)]["matrix"]).reshape(4, 4).T
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
    with meldis(multicast_url) as port:
        deadline, scene, next_read = time.monotonic() + 90, {}, 0.0
        while time.monotonic() < deadline:
            rig.run(0.02)                    # 20 lockstep steps of standing; the sim draws and publishes
            now = time.monotonic()
            if now > next_read:
                scene, next_read = meshcat_scene(port), now + 1.0
                if all(key in scene for key in expected):
                    break
            time.sleep(0.01)
    missing = [key for key in expected if key not in scene]
    assert not missing, f"Meldis lacks {missing}; its scene: {sorted(p for _, p in scene)}"
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, rig.robot.physics.q)            # standing still: the drawn pose is this one
    for link in links:
        X_WB = np.array(scene["set_transform", path.format(link)]["matrix"]).reshape(4, 4).T
        expected_X_WB = plant.EvalBodyPoseInWorld(context, plant.GetBodyByName(link)).GetAsMatrix4()
        np.testing.assert_allclose(X_WB, expected_X_WB, atol=2e-3, err_msg=link)
    for arrow in arrows:
        X_WC = np.array(scene["set_transform", arrow]["matrix"]).reshape(4, 4).T
        foot = plant.EvalBodyPoseInWorld(context, plant.GetBodyByName(arrow.split("/")[-1].split("(")[0]))
        assert np.linalg.norm(X_WC[:2, 3] - foot.translation()[:2]) < 0.02, arrow      # at the foot
        assert X_WC[2, 2] < -0.9, arrow        # the force on body 2 (the world): the foot presses it down
        assert scene["set_property", f"{arrow}/cylinder"]["value"][2] > 0


def test_meldis_draws_the_collision_guards_capsules_and_nearest_pair(iiwa, multicast_url):
    """The collision guard's Meldis layer (drivers.viz.collision) in Drake's own Meldis: on its proximity
    layer every capsule of the guard's model (link 6's fitted sphere too) at its body's pose, the table box
    on the world, and the nearest pair's witness frames at Ca and Cb, their z axes along n̂_BA_W. Meldis
    started after the guard gets the model from its periodic republish."""
    from drivers.core.config import CollisionConfig
    from drivers.core.schema import load
    from hil.collision_guard import CollisionGuard
    cfg = load(CollisionConfig, {"capsules": [{"name": "gripper", "frame": "iiwa_link_7", "p0": [0, 0, 0.1],
                                               "p1": [0, 0, 0.2], "radius": 0.085}],
                                 "boxes": [{"name": "table", "size": [0.8, 1.2, 0.1], "xyz": [0.7, 0, 0.05]}]},
               "safety.collision")
    guard = CollisionGuard(iiwa, cfg)
    guard.show_in(lcm.LCM(multicast_url))
    q = np.array([0.0, 0.8, 0.0, -1.2, 0.0, 0.8, 0.0])        # the gripper 4 cm above the table
    guard.check(q)
    k = guard.nearest
    assert guard.names[k] == "gripper / table" and 0.0 < guard.distance[k] < 0.1
    root, path = "/Collision Geometry", "/Collision Geometry/2/plant/iiwa14/{}"
    capsules = {}                                               # Meldis path of each capsule -> the capsule
    for body in sorted({c.body for c in guard.model.capsules}):
        mine = [c for c in guard.model.capsules if c.body == body]
        capsules.update({f"{path.format(iiwa.get_body(BodyIndex(body)).name())}/{j}": c for j, c in enumerate(mine)})
    pair = {"Ca": guard.p_WCa[k], "Cb": guard.p_WCb[k]}
    expected = [("set_object", p) for p in capsules] + [("set_object", f"{root}/0/world/0")] + [
        ("set_object", f"/DRAKE_DRAW_FRAMES/COLLISION/{name}/z-axis") for name in pair]
    with meldis(multicast_url) as port:
        deadline, scene, next_read, loads = time.monotonic() + 60, {}, 0.0, 0
        while time.monotonic() < deadline:
            now = time.monotonic()
            guard.draw(int(now * 1e6), bridge_loads=loads)      # as the loop does after each bridge draw
            if now > next_read:
                scene, next_read, loads = meshcat_scene(port), now + 0.5, loads + 1   # a bridge republish
                if all(key in scene for key in expected):
                    break
            time.sleep(0.01)
    missing = [key for key in expected if key not in scene]
    assert not missing, f"Meldis lacks {missing}; its scene: {sorted(p for _, p in scene)}"
    assert guard.viewer.loads >= 2

    def X(p):                                                   # three.js matrices are column-major
        return np.array(scene["set_transform", p]["matrix"]).reshape(4, 4).T

    segments = guard.kernel.segments_W()
    for geom, c in capsules.items():
        X_WB = X(geom.rsplit("/", 1)[0])
        np.testing.assert_allclose(X_WB, guard.X_WB[c.body], atol=1e-6, err_msg=geom)
        X_WG = X_WB @ X(geom)
        i = guard.model.capsules.index(c)
        p_WP0, p_WP1 = segments[i, :3], segments[i, 3:]
        np.testing.assert_allclose(X_WG[:3, 3], 0.5 * (p_WP0 + p_WP1), atol=1e-6, err_msg=geom)
        geometry = scene["set_object", geom]["object"]["geometries"][0]
        length = np.linalg.norm(p_WP1 - p_WP0)
        if length > 0:                                          # Meldis's capsule: its axis is the segment's
            assert geometry["type"] == "CapsuleGeometry", geom
            assert (geometry["radius"], geometry["height"]) == (pytest.approx(c.radius, rel=1e-6),
                                                                 pytest.approx(length, rel=1e-6))
            assert abs(X_WG[:3, 2] @ (p_WP1 - p_WP0)) == pytest.approx(length, rel=1e-6)
        else:                                                   # a fitted sphere (Drake's capsules have length)
            assert geometry["type"] == "SphereGeometry" and geometry["radius"] == pytest.approx(c.radius, rel=1e-6)
    table = scene["set_object", f"{root}/0/world/0"]["object"]["geometries"][0]
    assert table["type"] == "BoxGeometry"
    assert sorted((table["width"], table["height"], table["depth"])) == pytest.approx([0.1, 0.8, 1.2])
    np.testing.assert_allclose(X(f"{root}/0/world/0")[:3, 3], [0.7, 0.0, 0.05], atol=1e-9)
    for name, p_WC in pair.items():                             # the witness triads: at C, z along n̂
        X_WC = X(f"/DRAKE_DRAW_FRAMES/COLLISION/{name}")
        np.testing.assert_allclose(X_WC[:3, 3], p_WC, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(X_WC[:3, 2], guard.nhat[k], atol=1e-6, err_msg=name)
