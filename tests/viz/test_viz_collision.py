"""The collision guard in Meldis (drivers.viz.collision): the capsules' load message, the draws of their
bodies and the nearest pair's witness frames, decoded; and through the loop with the viewer bridge on."""
import lcm
import numpy as np
import pytest

from drivers.core.config import CollisionConfig
from drivers.core.robot import load_robot
from drivers.core.schema import load
from drivers.run_config import load_config
from drivers.viz.collision import DRAW_CHANNEL, LOAD_CHANNEL, PAIR_CHANNEL
from hil.collision_guard import CollisionGuard
from messages import lcmt_viewer_draw, lcmt_viewer_geometry_data, lcmt_viewer_load_robot

BOX, CAPSULE = lcmt_viewer_geometry_data.BOX, lcmt_viewer_geometry_data.CAPSULE


@pytest.fixture(scope="module")
def plant():
    return load_robot(load_config("configs/demo.yaml", {"viz": False}).robot).plant


def received(lc, channel, kind):
    out = []
    lc.subscribe(channel, lambda c, data: out.append(kind.decode(data)))
    return out


def test_capsules_bodies_and_the_nearest_pair(plant):
    cfg = load(CollisionConfig, {"capsules": [{"name": "gripper", "frame": "iiwa_link_7", "p0": [0, 0, 0.1],
                                               "p1": [0, 0, 0.2], "radius": 0.085}],
                                 "boxes": [{"name": "table", "size": [0.8, 1.2, 0.1], "xyz": [0.7, 0, 0.05]}],
                                 "planes": [{"name": "wall", "normal": [-1, 0, 0], "point": [1.2, 0, 0]}]},
               "safety.collision")
    guard = CollisionGuard(plant, cfg)
    lc = lcm.LCM("memq://")
    loads, draws = received(lc, LOAD_CHANNEL, lcmt_viewer_load_robot), received(lc, DRAW_CHANNEL, lcmt_viewer_draw)
    pairs = received(lc, PAIR_CHANNEL, lcmt_viewer_draw)
    guard.show_in(lc)
    q = np.array([0.0, 1.0, 0.0, -1.2, 0.0, 1.0, 0.0])
    guard.check(q)
    guard.draw(2_000_000)
    while lc.handle_timeout(0):
        pass
    (message,), (draw,), (pair,) = loads, draws, pairs
    world = message.link[0]
    assert world.name == "world" and [g.type for g in world.geom] == [BOX, BOX]
    assert world.geom[0].float_data == pytest.approx([0.8, 1.2, 0.1])
    capsules = [g for link in message.link[1:] for g in link.geom]
    assert len(capsules) == len(guard.model.capsules) and all(g.type == CAPSULE for g in capsules)
    gripper = message.link[-1].geom[-1]
    assert gripper.float_data == pytest.approx([0.085, 0.1]) and gripper.position == pytest.approx([0, 0, 0.15])
    assert draw.link_name == [link.name for link in message.link[1:]] and draw.timestamp == 2000
    b7 = plant.GetBodyByName("iiwa_link_7").index()
    assert draw.position[-1] == pytest.approx(guard.X_WB[int(b7), :3, 3], abs=1e-6)
    k = guard.nearest
    assert pair.position[0] == pytest.approx(guard.p_WCa[k], abs=1e-6)
    assert pair.position[1] == pytest.approx(guard.p_WCb[k], abs=1e-6)
    w, x, y, z = pair.quaternion[0]          # the frames' z axis along n̂
    z_axis = [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)]
    assert z_axis == pytest.approx(guard.nhat[k], abs=1e-6)


def test_the_draws_quaternions_equal_the_rotation_matrices():
    """wxyz (Shepperd, on each of its four branches, and at 180°) against RotationMatrix.ToQuaternion, w >= 0;
    z_along's frame has its z axis on n, for n = ±Ẑ too."""
    from drivers.viz.collision import wxyz, z_along
    from dynamics_cy import RollPitchYaw, RotationMatrix
    rng = np.random.default_rng(7)
    rotations = [RotationMatrix(RollPitchYaw(*rng.uniform(-np.pi, np.pi, 3))).matrix() for _ in range(50)]
    rotations += [np.diag(d) for d in ([1.0, -1, -1], [-1.0, 1, -1], [-1.0, -1, 1])] + [np.eye(3)]
    for R in rotations:
        expected = RotationMatrix(R).ToQuaternion().wxyz()
        expected = -expected if expected[0] < 0 else expected
        q = wxyz(R.tolist())
        assert q[0] >= 0
        assert np.allclose(q, expected, atol=1e-12) or (q[0] < 1e-12 and np.allclose(q, -expected, atol=1e-12))
    for n in [[0, 0, 1.0], [0, 0, -1.0], [1.0, 0, 0], *(v / np.linalg.norm(v) for v in rng.normal(size=(20, 3)))]:
        w, x, y, z = z_along(np.asarray(n))
        z_axis = [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)]
        assert z_axis == pytest.approx(n, abs=1e-12)
