"""The loop's steady state allocates nothing but Python scalars (checked with tracemalloc).

Every buffer is preallocated; what a tick may allocate is a handful of ints and floats (clock
readings, counters) and, when a message arrives, the bytes object lcm-python creates for it.
A single numpy temporary of the joint vector (≥ 168 B) breaks the bounds below.
"""
import threading
import tracemalloc

import lcm
import numpy as np
import pytest

from drivers.core.robot import load_robot
from drivers.run_config import load_config
from hil.loop import ControlLoop
from messages.codec import StatusEncoder, WsgStatusEncoder
from tests.alloc import traced_snapshots

SCALARS_PEAK, SCALARS_MEDIAN = 384, 256     # bytes: about a dozen (resp. eight) live scalar objects


def transient_peaks(fn, n: int) -> list[int]:
    """Bytes allocated at the peak of each call, above what was live before it."""
    peaks = []
    tracemalloc.start(1)
    try:
        for _ in range(n):
            live = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            fn()
            peaks.append(tracemalloc.get_traced_memory()[1] - live)
    finally:
        tracemalloc.stop()
    return peaks


JOINT_GAINS = {"kp": [300, 300, 200, 200, 50, 30, 10], "kd": [20, 20, 10, 10, 3, 2, 0.5]}   # N·m/rad, N·m·s/rad
"""The joint-space laws' gains (demo.yaml's are computed_torque's, in 1/s², 1/s: unstable as N·m·s/rad)."""


def make_loop(controller, **safety):
    gains = JOINT_GAINS if controller in ("joint_pd", "joint_impedance") else {}
    cfg = load_config("configs/demo.yaml", {
        "viz": False, "controller": {"type": controller, **gains}, "safety": safety,
        "trajectory": {"type": "quintic", "goal": [0.2, 0.3, 0.1, -1.0, 0.1, 0.5, 0.2], "duration": 10.0}})
    lc = lcm.LCM("memq://")
    loop = ControlLoop(cfg, load_robot(cfg.robot), lc, mode="lockstep", trace_every=1).configure()
    loop.activate()
    status = StatusEncoder("iiwa", 7)
    status.encode(0, position_measured=np.array([0.0, 0.5, 0.0, -1.0, 0.0, 0.6, 0.0]),
                  velocity_estimated=np.zeros(7))
    return loop, lc, status.tobytes()


CONTROLLERS = ["computed_torque", "joint_impedance", "cartesian_impedance", "gravity_compensation", "joint_pd"]


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_a_tick_allocates_only_scalars(controller):
    """Ticks with no message waiting (a long status timeout keeps the loop RUNNING): controller,
    trajectory, safety, saturation, command encode and publish, telemetry, statistics, trace."""
    loop, lc, data = make_loop(controller, status_timeout_periods=10**6)
    lc.publish("IIWA_STATUS", data)
    for _ in range(300):
        loop.update()
    assert loop.safety.state.name == "RUNNING"
    peaks = transient_peaks(loop.update, 3000)
    assert loop.telemetry.published >= 300 and loop.hardware.commands.sent >= 3000
    assert max(peaks) <= SCALARS_PEAK and np.median(peaks) <= SCALARS_MEDIAN, (max(peaks), np.median(peaks))


PHASE_PEAK = 128       # bytes: at most four scalar objects


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_each_phase_of_a_tick_allocates_at_most_a_few_scalars(controller):
    """The tick's phases one by one, on the loop's own buffers: a numpy temporary in any of them
    (≥ 168 B) would exceed the bound."""
    loop, lc, data = make_loop(controller, status_timeout_periods=10**6)
    lc.publish("IIWA_STATUS", data)
    for _ in range(300):
        loop.update()
    t = [10**9]
    rec, saf = loop.recorder, loop.safety
    phases = {
        "trajectory": lambda: loop.trajectory.sample(t[0], loop.q_d, loop.v_d, loop.a_d),
        "controller": lambda: loop.controller.update(loop.state, loop.cmd),
        "safety check": lambda: saf.check(400, 0, True, loop.q, loop.v, 0.0),
        "saturation": lambda: saf.limit(loop.tau, loop.tau_cmd),
        "command": lambda: loop.hardware.write(12345678, loop.tau_cmd, loop.cmd.q, loop.cmd.v, True),
        "statistics": lambda: (rec.record(10**9, 1000, 5000), rec.track(loop.q, loop.q_d),
                               rec.trace(1.5, loop.q, loop.q_d, loop.tau_cmd)),
        "telemetry": lambda: loop.telemetry.maybe_publish(0, 10**6, rec, saf, 10**6, 0, loop.q, loop.v, loop.q_d,
                                                          loop.tau_cmd),
    }
    for name, phase in phases.items():
        for _ in range(50):
            phase()
        worst = max(transient_peaks(phase, 500))
        assert worst <= PHASE_PEAK, f"{name}: {worst} B"


@pytest.mark.parametrize("controller", CONTROLLERS[:2])
def test_receiving_statuses_leaves_nothing_behind(controller):
    """With a status every tick: no transient beyond lcm-python's bytes of the message, and no growth."""
    loop, lc, data = make_loop(controller)

    def tick():
        lc.publish("IIWA_STATUS", data)
        loop.update()

    for _ in range(300):
        tick()
    lc.subscribe("OTHER", lambda channel, message: None)      # what receiving one such message costs
    receive = max(transient_peaks(lambda: (lc.publish("OTHER", data), lc.handle_timeout(0)), 500))
    peaks = transient_peaks(tick, 3000)
    before, after = traced_snapshots(tick, 3000, warmup=300)   # live counters: traced objects
    # (threading.py: the waits of threads an earlier test left behind, e.g. a process pool's manager; the
    # tick starts and waits for no thread)
    harness = [tracemalloc.Filter(False, __file__), tracemalloc.Filter(False, tracemalloc.__file__),
               tracemalloc.Filter(False, threading.__file__)]
    # A counter that passes 256 leaves Python's small-int cache: one new int object, not growth.
    grown = [d for d in after.filter_traces(harness).compare_to(before.filter_traces(harness), "lineno")
             if d.count_diff > 1 or d.size_diff > 64]
    assert loop.hardware.timing.received >= 6000 and loop.safety.state.name == "RUNNING"
    assert max(peaks) <= receive + SCALARS_PEAK, (max(peaks), receive)
    assert grown == []


# The collision guard's policy acting every tick: a table box and a warning distance that every pair is
# within, a stop distance none is below (the gripper's capsule on the flange as a user would give it).
GUARD = {"collision": {"warn_distance": 1.0, "stop_distance": 0.0, "policy": "repulsive",
                       "capsules": [{"name": "gripper", "frame": "iiwa_link_7", "p0": [0, 0, 0.1], "p1": [0, 0, 0.2],
                                     "radius": 0.05}],
                       "boxes": [{"name": "table", "size": [0.8, 1.2, 0.1], "xyz": [0.7, 0.0, -0.3]}]}}


@pytest.mark.parametrize("controller", CONTROLLERS[:2])
def test_the_collision_guard_allocates_only_scalars(controller):
    """The guard's check (every pair's distance) and its warning policy (the bodies' Jacobians and every
    pair's force along its witness normal) in every tick, the whole tick and the phases alone."""
    loop, lc, data = make_loop(controller, status_timeout_periods=10**6, **GUARD)
    lc.publish("IIWA_STATUS", data)
    for _ in range(300):
        loop.update()
    guard = loop.collision
    assert loop.safety.state.name == "RUNNING" and guard.warn_ticks >= 250 and len(guard.model.pairs) > 20
    peaks = transient_peaks(loop.update, 3000)
    assert max(peaks) <= SCALARS_PEAK and np.median(peaks) <= SCALARS_MEDIAN, (max(peaks), np.median(peaks))
    # the policy's arithmetic is a handful of Python floats (d, ḋ, s, f): at most eight scalar objects
    for name, phase, bound in (("check", lambda: guard.check(loop.q), PHASE_PEAK),
                               ("policy", lambda: guard.shape(loop.q, loop.v, loop.tau), 2 * PHASE_PEAK)):
        worst = max(transient_peaks(phase, 500))
        assert worst <= bound, f"{name}: {worst} B"


def test_a_tick_with_a_gripper_allocates_only_scalars():
    """The gripper in the loop (hil.gripper) with a status every tick: its status decoded into State.gripper,
    the waypoints' gripper track, the law's command compared with the last sent (and sent when it changes,
    a message per change: the phase below), no growth."""
    waypoints = [{"q": [0.1, 0.5, 0.0, -1.0, 0.0, 0.6, 0.0], "duration": 100.0, "gripper": {"width": 0.05}}]
    cfg = load_config("configs/demo.yaml", {
        "viz": False, "controller": {"type": "joint_pd", **JOINT_GAINS}, "safety": {"status_timeout_periods": 10**6},
        "gripper": {"type": "wsg50", "timeout": 10.0}, "trajectory": {"type": "waypoints", "waypoints": waypoints}})
    lc = lcm.LCM("memq://")
    loop = ControlLoop(cfg, load_robot(cfg.robot), lc, mode="lockstep", trace_every=1).configure()
    loop.activate()
    status = StatusEncoder("iiwa", 7)
    status.encode(0, position_measured=np.array([0.0, 0.5, 0.0, -1.0, 0.0, 0.6, 0.0]), velocity_estimated=np.zeros(7))
    wsg = WsgStatusEncoder("SCHUNK_WSG_STATUS")
    data, grip = status.tobytes(), bytes(wsg.encode_or_raise(0, 50.0, -40.0, 0.0))

    def tick():
        lc.publish("IIWA_STATUS", data)
        lc.publish("SCHUNK_WSG_STATUS", grip)
        loop.update()

    for _ in range(300):
        tick()
    assert loop.safety.state.name == "RUNNING" and loop.gripper.commands == 1 and loop.state.gripper[2] == 40.0
    lc.subscribe("OTHER", lambda channel, message: None)
    receive = max(transient_peaks(lambda: (lc.publish("OTHER", data), lc.handle_timeout(0)), 500))
    peaks = transient_peaks(tick, 2000)
    assert max(peaks) <= 2 * receive + SCALARS_PEAK, (max(peaks), receive)
    link, cmd = loop.gripper, loop.cmd
    phases = {"gripper status": lambda: link.update(10**9), "gripper track": lambda: link.track(loop.trajectory, cmd),
              "gripper write (unchanged)": lambda: link.write(10**9, cmd, True)}
    for name, phase in phases.items():
        assert max(transient_peaks(phase, 500)) <= PHASE_PEAK, name
