"""ViewerBridge: rate limiting on a clock sequence, load republishing, viewer requests, faults,
counted by real LCM subscribers (memq://)."""
import itertools
import socket
import struct
import threading
import tracemalloc
from pathlib import Path

import lcm
import numpy as np
import pytest

from drivers.core.schema import ConfigError, load
from drivers.viz import DRAKE_VIEWER_STATUS, VIEWER_STARTED, ViewerBridge, VizConfig
from messages import lcmt_viewer_draw, lcmt_viewer_load_robot
from messages.channels import Channels

IIWA = Path(__file__).resolve().parents[2] / "configs" / "robots" / "iiwa14.urdf"
MS = 1_000_000
LOAD, DRAW = "DRAKE_VIEWER_LOAD_ROBOT", "DRAKE_VIEWER_DRAW"


class Recorder:
    """Everything published on `lc`, in order, as (channel, data)."""

    def __init__(self, lc):
        self.lc, self.events = lc, []
        lc.subscribe(".*", lambda channel, data: self.events.append((channel, data)))

    def take(self):
        while self.lc.handle_timeout(0):
            pass
        events, self.events = self.events, []
        return events

    def count(self, events, channel):
        return sum(1 for c, _ in events if c == channel)


def run_clock(bridge, times_ns, q):
    return [t for t in times_ns if bridge.tick(t, q, t // 1000)]


def test_publishes_at_the_draw_rate_on_a_1khz_clock(iiwa):
    lc = lcm.LCM("memq://")
    recorder = Recorder(lc)
    bridge = ViewerBridge(iiwa, lc, config=VizConfig(draw_rate_hz=60.0, load_period_s=0.25))
    start = 5_000 * MS
    published = run_clock(bridge, range(start, start + 1000 * MS, MS), np.zeros(7))
    events = recorder.take()
    # Slots every 16.67 ms: the first tick, then the first 1 ms tick at or after each slot.
    assert len(published) == 60
    assert published[0] == start
    assert set(np.diff(published)) <= {16 * MS, 17 * MS}
    assert recorder.count(events, DRAW) == bridge.draws == 60
    # Load at the first tick and every 0.25 s after it (at the next draw slot): 0, 0.25, 0.5, 0.75 s.
    assert recorder.count(events, LOAD) == bridge.loads == 4
    assert events[0][0] == LOAD and events[1][0] == DRAW   # the load precedes the first draw
    assert lcmt_viewer_load_robot.decode(events[0][1]).encode() == bridge.load_message.encode()


def test_a_late_loop_gets_one_draw_not_a_burst(iiwa):
    lc = lcm.LCM("memq://")
    bridge = ViewerBridge(iiwa, lc, config=VizConfig(draw_rate_hz=100.0, load_period_s=0))
    q = np.zeros(7)
    assert bridge.tick(0, q, 0)
    assert not bridge.tick(9 * MS, q, 0)
    assert bridge.tick(10 * MS, q, 0)
    assert bridge.tick(95 * MS, q, 0)          # 8 slots missed: one draw, next slot at 105 ms
    assert not bridge.tick(96 * MS, q, 0)
    assert not bridge.tick(104 * MS, q, 0)
    assert bridge.tick(105 * MS, q, 0)
    assert bridge.draws == 4 and bridge.loads == 1   # load_period_s = 0: only the first


def test_draw_message_carries_q_and_utime(iiwa):
    lc = lcm.LCM("memq://")
    recorder = Recorder(lc)
    bridge = ViewerBridge(iiwa, lc, Channels.for_robot("iiwa", viewer_draw="DRAKE_VIEWER_DRAW_ILLUSTRATION"))
    q = np.array([0.3, -0.2, 0.1, 0.5, -0.4, 0.2, 0.9])
    bridge.tick(0, q, 1_234_567)
    (_, load), (channel, data) = recorder.take()
    draw = lcmt_viewer_draw.decode(data)
    assert channel == "DRAKE_VIEWER_DRAW_ILLUSTRATION" and draw.timestamp == 1234
    context = iiwa.CreateDefaultContext()
    iiwa.SetPositions(context, q)
    np.testing.assert_allclose(
        draw.position[7], iiwa.EvalBodyPoseInWorld(context, iiwa.GetBodyByName("iiwa_link_7")).translation(), atol=1e-6)


def test_a_starting_drake_visualizer_gets_the_load_at_the_next_slot(iiwa):
    lc = lcm.LCM("memq://")
    recorder = Recorder(lc)
    bridge = ViewerBridge(iiwa, lc, config=VizConfig(draw_rate_hz=50.0, load_period_s=0))
    q = np.zeros(7)
    run_clock(bridge, range(0, 100 * MS, MS), q)
    assert bridge.loads == 1
    lc.publish(DRAKE_VIEWER_STATUS, VIEWER_STARTED)
    lc.publish(DRAKE_VIEWER_STATUS, VIEWER_STARTED)                  # two requests, one answer
    recorder.take()                                                   # the loop handles LCM
    assert bridge.requests == 2
    run_clock(bridge, range(100 * MS, 101 * MS, MS), q)
    events = recorder.take()
    assert [c for c, _ in events] == [LOAD, DRAW] and bridge.loads == 2
    # drake_visualizer acknowledges a load with another STATUS: answering it would loop forever.
    ack = VIEWER_STARTED[:9] + (26).to_bytes(4, "big") + b"successfully loaded robot\0"
    lc.publish(DRAKE_VIEWER_STATUS, ack)
    lc.publish(DRAKE_VIEWER_STATUS, b"garbage")
    recorder.take()
    run_clock(bridge, range(101 * MS, 200 * MS, MS), q)
    assert bridge.requests == 2 and bridge.loads == 2
    bridge.request_load()
    run_clock(bridge, range(200 * MS, 221 * MS, MS), q)
    assert bridge.loads == 3


def test_status_listening_can_be_off_and_closed(iiwa):
    lc = lcm.LCM("memq://")
    quiet = ViewerBridge(iiwa, lc, config=VizConfig(status_channel=""))
    listening = ViewerBridge(iiwa, lc)
    lc.publish(DRAKE_VIEWER_STATUS, VIEWER_STARTED)
    lc.handle_timeout(0)
    assert (quiet.requests, listening.requests) == (0, 1)
    listening.close()
    lc.publish(DRAKE_VIEWER_STATUS, VIEWER_STARTED)
    lc.handle_timeout(10)
    assert listening.requests == 1


def test_non_finite_q_is_counted_not_raised(iiwa):
    lc = lcm.LCM("memq://")
    recorder = Recorder(lc)
    bridge = ViewerBridge(iiwa, lc)
    assert not bridge.tick(0, np.full(7, np.nan), 0)
    assert (bridge.rejected, bridge.draws) == (1, 0)
    assert [c for c, _ in recorder.take()] == [LOAD]


def test_a_dropped_lcm_link_is_counted_not_raised(iiwa):
    """A real tcpq:// LCM whose server goes away: publish raises OSError inside lcm; tick() counts it."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def accept():
        connection, _ = server.accept()
        connection.settimeout(5)
        hello = b""
        try:
            while len(hello) < 8:
                chunk = connection.recv(8 - len(hello))
                if not chunk:
                    break
                hello += chunk
            magic, version = struct.unpack(">II", hello)
            connection.sendall(struct.pack(">II", magic - 1, version))   # LCM's tcpq server greeting
            accepted.append(connection)
        except (OSError, struct.error):
            connection.close()        # the client sees EOF rather than waiting forever

    server.settimeout(5)

    thread = threading.Thread(target=accept)
    thread.start()
    lc = lcm.LCM(f"tcpq://127.0.0.1:{server.getsockname()[1]}")
    thread.join(5)
    bridge = ViewerBridge(iiwa, lc, config=VizConfig(status_channel=""))
    assert bridge.tick(0, np.zeros(7), 0)
    accepted[0].shutdown(socket.SHUT_RDWR)
    accepted[0].close()
    server.close()
    for k in range(1, 4):
        bridge.tick(k * 100 * MS, np.zeros(7), 0)
    assert bridge.errors >= 2 and isinstance(bridge.last_error, OSError)
    assert bridge.draws == 1


def test_ticks_between_slots_and_publishing_ticks_do_not_grow_memory(iiwa):
    lc = lcm.LCM("memq://")
    lc.subscribe(".*", lambda channel, data: None)
    bridge = ViewerBridge(iiwa, lc, config=VizConfig(draw_rate_hz=100.0, load_period_s=0.05))
    q = np.zeros(7)
    clock = itertools.count(0, MS)
    tracemalloc.start()
    try:
        for now in itertools.islice(clock, 500):
            bridge.tick(now, q, 0)
            lc.handle_timeout(0)
        start, _ = tracemalloc.get_traced_memory()
        for now in itertools.islice(clock, 5000):
            bridge.tick(now, q, 0)
            lc.handle_timeout(0)
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert bridge.draws > 500
    assert end - start <= 128, f"{end - start} bytes kept after 5000 ticks"


def test_viz_config_section():
    assert load(VizConfig, None, "viz") == VizConfig(True, 60.0, 2.0, DRAKE_VIEWER_STATUS)
    assert not load(VizConfig, {"enabled": False}, "viz").enabled
    assert load(VizConfig, {"draw_rate_hz": 30, "load_period_s": 0}, "viz").draw_rate_hz == 30.0
    with pytest.raises(ConfigError, match=r"viz.draw_rate_hz: must be > 0, got 0"):
        load(VizConfig, {"draw_rate_hz": 0}, "viz")
    with pytest.raises(ConfigError, match=r"viz.load_period_s: must be >= 0"):
        load(VizConfig, {"load_period_s": -1}, "viz")
    with pytest.raises(ConfigError, match=r"viz.draw_rate: unknown key \(did you mean 'draw_rate_hz'\?\)"):
        load(VizConfig, {"draw_rate": 30}, "viz")
