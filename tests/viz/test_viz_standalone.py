"""`hil viz`: a robot status channel turned into viewer messages, in-process over memq:// and as
`hil viz CONFIG` in a subprocess over ttl=0 multicast."""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import lcm
import numpy as np
import pytest

from drivers.core.config import channels_for
from drivers.core.schema import ConfigError
from drivers.run_config import load_config
from drivers.viz.standalone import StatusViewer, run
from messages import lcmt_viewer_draw, lcmt_viewer_load_robot
from messages.codec import StatusEncoder

REPO = Path(__file__).resolve().parents[2]
MS = 1_000_000


class Clock:
    def __init__(self):
        self.now_ns = 0

    def __call__(self):
        return self.now_ns


class ViewerMessages:
    """The load and draw messages published on `lc` from now on, decoded."""

    def __init__(self, lc):
        self.loads, self.draws = [], []
        lc.subscribe("DRAKE_VIEWER_LOAD_ROBOT",
                     lambda channel, data: self.loads.append(lcmt_viewer_load_robot.decode(data)))
        lc.subscribe("DRAKE_VIEWER_DRAW", lambda channel, data: self.draws.append(lcmt_viewer_draw.decode(data)))


def link_7_position(plant, q):
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, q)
    return plant.EvalBodyPoseInWorld(context, plant.GetBodyByName("iiwa_link_7")).translation()


@pytest.mark.parametrize("protocol", ["iiwa", "panda"])
def test_statuses_become_rate_limited_draws(iiwa, protocol):
    lc, clock = lcm.LCM("memq://"), Clock()
    viewer = StatusViewer(iiwa, lc, protocol, clock=clock)
    received = ViewerMessages(lc)
    status = StatusEncoder(protocol, 7, channel=f"{protocol.upper()}_STATUS")
    rng = np.random.default_rng(3)
    sent = []
    for k in range(20):                    # 200 Hz statuses for 100 ms; 60 Hz slots
        clock.now_ns = 5 * k * MS
        q = rng.uniform(-1, 1, 7)
        status.encode(1_000_000 + 5000 * k, position_measured=q)
        status.publish(lc)
        sent.append(q)
        while lc.handle_timeout(0):
            pass
    loads, draws = received.loads, received.draws
    assert len(loads) == 1 and len(draws) == 6 == viewer.bridge.draws
    assert [d.timestamp for d in draws] == [1000, 1020, 1035, 1055, 1070, 1085]   # slot 3 is 50.000001 ms
    for draw in draws:
        k = (draw.timestamp - 1000) // 5
        np.testing.assert_allclose(draw.position[7], link_7_position(iiwa, sent[k]), atol=1e-6)
    viewer.close()


def test_invalid_statuses_are_dropped_and_counted(iiwa):
    lc, clock = lcm.LCM("memq://"), Clock()
    viewer = StatusViewer(iiwa, lc, clock=clock)
    six = StatusEncoder("iiwa", 6, channel="IIWA_STATUS")
    six.encode(0, position_measured=np.zeros(6))
    six.publish(lc)
    lc.publish("IIWA_STATUS", b"\x00" * 40)
    seven = StatusEncoder("iiwa", 7, channel="IIWA_STATUS")
    seven.encode(0, position_measured=np.zeros(7))
    seven.publish(lc)
    while lc.handle_timeout(0):
        pass
    counters = viewer.status.counters
    assert (counters["joint_count"], counters["fingerprint"], viewer.status.ok_count) == (1, 1, 1)
    assert viewer.bridge.draws == 1
    viewer.close()


def test_fewer_status_joints_than_positions_keep_the_default_positions(iiwa):
    lc, clock = lcm.LCM("memq://"), Clock()
    StatusViewer(iiwa, lc, num_joints=5, clock=clock)
    received = ViewerMessages(lc)
    status = StatusEncoder("iiwa", 5, channel="IIWA_STATUS")
    status.encode(0, position_measured=np.full(5, 0.3))
    status.publish(lc)
    while lc.handle_timeout(0):
        pass
    (draw,) = received.draws
    np.testing.assert_allclose(draw.position[7], link_7_position(iiwa, [0.3] * 5 + [0, 0]), atol=1e-6)
    with pytest.raises(ValueError, match="the status has 8 joints but the model has only 7 positions"):
        StatusViewer(iiwa, lc, num_joints=8)


def test_status_joints_come_from_the_viz_section(tmp_path, iiwa):
    config = load_config(write_config(tmp_path, "robot: {model: robots/iiwa14.urdf}\nviz: {status_joints: 5}\n"))
    lc, clock = lcm.LCM("memq://"), Clock()
    viewer = StatusViewer(iiwa, lc, viz=config.viz, clock=clock)
    received = ViewerMessages(lc)
    for n in (5, 7):
        status = StatusEncoder("iiwa", n, channel="IIWA_STATUS")
        status.encode(0, position_measured=np.full(n, 0.3))
        status.publish(lc)
    while lc.handle_timeout(0):
        pass
    assert (viewer.num_joints, viewer.status.ok_count, viewer.rejected) == (5, 1, 1)
    (draw,) = received.draws
    np.testing.assert_allclose(draw.position[7], link_7_position(iiwa, [0.3] * 5 + [0, 0]), atol=1e-6)
    viewer.close()
    too_many = load_config(write_config(tmp_path, "robot: {model: robots/iiwa14.urdf}\nviz: {status_joints: 8}\n"))
    with pytest.raises(ConfigError, match="viz.status_joints: the status has 8 joints but the model has only 7"):
        StatusViewer(iiwa, lc, viz=too_many.viz)
    with pytest.raises(ConfigError, match="viz.status_joints: must be >= 1, got 0"):
        load_config(write_config(tmp_path, "robot: {model: robots/iiwa14.urdf}\nviz: {status_joints: 0}\n"))


def test_rejected_statuses_are_warned_about_first_then_periodically(iiwa, caplog):
    """A 6-joint status for a 7-position model (as a 7-joint Panda status for a URDF with fingers):
    the first rejection is a warning naming the reason and the key to set, then one every 10 s."""
    lc, clock = lcm.LCM("memq://"), Clock()
    viewer = StatusViewer(iiwa, lc, clock=clock)
    six = StatusEncoder("iiwa", 6, channel="IIWA_STATUS")
    six.encode(0, position_measured=np.zeros(6))
    with caplog.at_level("WARNING", logger="drivers.viz.standalone"):
        for k in range(26):                           # one a second for 25 s
            clock.now_ns = k * 1000 * MS
            six.publish(lc)
            while lc.handle_timeout(0):
                pass
    warnings = [r.getMessage() for r in caplog.records if r.name == "drivers.viz.standalone"]
    assert len(warnings) == 3 and viewer.rejected == 26 and viewer.bridge.draws == 0
    assert warnings[0] == ("hil viz: rejected status #1 (1 since the last warning): IIWA_STATUS (lcmt_iiwa_status): "
                           "num_joints has 6 joints but the model has 7; the viewer expects 7 joints "
                           "(viz.status_joints, default the model's 7 positions): set viz.status_joints: 6")
    assert warnings[1].startswith("hil viz: rejected status #11 (10 since the last warning): ")
    assert warnings[2].startswith("hil viz: rejected status #21 (10 since the last warning): ")
    eight = StatusEncoder("iiwa", 8, channel="IIWA_STATUS")
    eight.encode(0, position_measured=np.zeros(8))
    eight.publish(lc)
    lc.handle_timeout(0)
    assert viewer.reason().endswith("and the model has only 7 positions: is robot.model this robot's?")
    viewer.close()


def test_run_serves_for_the_duration(iiwa):
    lc = lcm.LCM("memq://")
    received = ViewerMessages(lc)
    status = StatusEncoder("iiwa", 7, channel="IIWA_STATUS")
    status.encode(42_000, position_measured=np.full(7, 0.2))
    publisher = threading.Timer(0.1, status.publish, (lc,))   # once run() is listening
    publisher.start()
    start = time.monotonic()
    viewer = run(iiwa, lc, duration_s=0.3)
    publisher.join()
    assert 0.3 <= time.monotonic() - start < 2.0
    while lc.handle_timeout(0):
        pass
    assert (viewer.status.ok_count, viewer.bridge.draws, viewer.bridge.loads) == (1, 1, 1)
    assert [d.timestamp for d in received.draws] == [42]


def write_config(folder, text):
    (folder / "robots").mkdir(exist_ok=True)
    (folder / "robots" / "iiwa14.urdf").write_text((REPO / "configs" / "robots" / "iiwa14.urdf").read_text())
    path = folder / "viz.yaml"
    path.write_text(text)
    return path


def test_config_resolves_the_model_and_names_bad_keys(tmp_path):
    path = write_config(tmp_path, "robot: {model: robots/iiwa14.urdf, protocol: panda}\n"
                                  "channels: {status: LEFT_PANDA_STATUS}\nviz: {draw_rate_hz: 30}\n"
                                  "controller: {type: gravity_compensation}\n")
    config = load_config(path)
    assert config.robot.model == str(tmp_path / "robots" / "iiwa14.urdf")
    assert channels_for(config).status == "LEFT_PANDA_STATUS"
    assert config.viz.draw_rate_hz == 30.0 and config.lcm.url.endswith("?ttl=0")
    for text, error in [
        ("robot: {protocol: iiwa}", r"viz.yaml: robot.model: is required"),
        ("robot: {model: robots/iiwa14.urdf, protocol: ur5}", r"robot.protocol: must be one of 'iiwa', 'panda'"),
        ("robot: {model: robots/iiwa14.urdf}\nviz: {draw_rate: 5}", r"viz.draw_rate: unknown key"),
        ("robot: {model: robots/iiwa14.urdf}\nchannels: {stat: X}", r"channels: unknown channel key\(s\) \['stat'\]"),
        ("robot: {model: robots/missing.urdf}", r"robot.model: no such model file 'robots/missing.urdf'"),
    ]:
        with pytest.raises(ConfigError, match=error):
            load_config(write_config(tmp_path, text))


def test_hil_viz_serves_a_status_channel(tmp_path, multicast_url, iiwa):
    config = write_config(tmp_path, f"robot: {{model: robots/iiwa14.urdf}}\nlcm: {{url: '{multicast_url}'}}\n"
                                    "viz: {draw_rate_hz: 20}\n")
    process = subprocess.Popen([sys.executable, "-m", "hil", "viz", str(config), "--duration", "4"],
                               cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lc = lcm.LCM(multicast_url)
        draws = []
        lc.subscribe("DRAKE_VIEWER_DRAW", lambda channel, data: draws.append(lcmt_viewer_draw.decode(data)))
        status = StatusEncoder("iiwa", 7, channel="IIWA_STATUS")
        six = StatusEncoder("iiwa", 6, channel="IIWA_STATUS")
        six.encode(0, position_measured=np.zeros(6))
        q = np.array([0.1, 0.5, -0.3, -1.2, 0.2, 0.7, 0.0])
        deadline = time.monotonic() + 30
        while len(draws) < 5 and time.monotonic() < deadline and process.poll() is None:
            six.publish(lc)                            # rejected: warned about once (then every 10 s)
            status.encode(int(time.monotonic() * 1e6), position_measured=q)
            status.publish(lc)
            lc.handle_timeout(5)
        output, _ = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, output
    assert len(draws) >= 5, output
    np.testing.assert_allclose(draws[-1].position[7], link_7_position(iiwa, q), atol=1e-6)
    assert "hil viz:" in output and "draws" in output and "loads" in output
    assert "WARNING drivers.viz.standalone: hil viz: rejected status #1 (1 since the last warning): IIWA_STATUS " \
           "(lcmt_iiwa_status): num_joints has 6 joints but the model has 7" in output


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_hil_viz_stops_on_a_signal_with_its_summary(tmp_path, multicast_url, sig):
    """Ctrl-C or SIGTERM interrupts the wait for LCM (select's EINTR): `hil viz` stops, prints its
    counters and exits 0, no traceback."""
    config = write_config(tmp_path, f"robot: {{model: robots/iiwa14.urdf}}\nlcm: {{url: '{multicast_url}'}}\n")
    process = subprocess.Popen([sys.executable, "-m", "hil", "viz", str(config)], cwd=REPO,
                               env=dict(os.environ, PYTHONPATH=str(REPO)),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = process.stdout.readline()
        assert first.startswith("hil viz:"), first
        time.sleep(0.5)                                 # in the loop, waiting for LCM (or on its way)
        process.send_signal(sig)
        output, _ = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0 and "Traceback" not in output, output
    assert output.startswith("statuses 0 ") and "draws 0" in output, output
