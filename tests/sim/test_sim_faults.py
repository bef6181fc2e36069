"""Every fault the simulated robot can inject, each against a fault-free run of the same commands."""
import lcm
import numpy as np
import pytest

from drivers.core.schema import ConfigError
from drivers.sim import SimulatedRobot, load_sim_config
from messages.channels import Channels
from messages.codec import CommandEncoder, StatusDecoder

N = 7
MS = 1000          # status utime per millisecond


class Run:
    """The iiwa (gravity compensated, a sinusoidal torque so every joint moves) in lockstep for `steps`
    commands; every status as (utime, q, v, torque_commanded, torque_measured, bytes), and the true q."""

    def __init__(self, iiwa, faults=(), steps=60, seed=0, protocol="iiwa", **sim):
        self.lc = lc = lcm.LCM("memq://")
        config = load_sim_config({"gravity_compensation": "internal", "faults": list(faults), "seed": seed,
                                  "initial_positions": [0.1, 0.6, -0.3, -1.1, 0.2, 0.9, 0.1], **sim})
        self.robot = SimulatedRobot(iiwa, config, protocol, Channels.for_robot(protocol), lc)
        decoder = StatusDecoder(protocol, N)
        self.statuses, self.truth = [], {}
        lc.subscribe(self.robot.channels.status, lambda channel, data: self._status(decoder, data))
        command = CommandEncoder(protocol, N, fields=("torque",), channel=self.robot.channels.command)
        self.robot.publish_status()
        self._drain()
        for i in range(steps):
            command.encode_or_raise(i, torque=0.3 * np.sin(0.05 * i + np.arange(N)))
            command.publish(lc)
            self._drain()

    def _drain(self):
        while self.lc.handle_timeout(0) > 0:
            pass
        self.truth[self.robot.time_ns // 1000] = self.robot.physics.q.copy()

    def _status(self, d, data):
        assert d.decode(data), d.last_error
        self.statuses.append((d.utime, d.position_measured.copy(), d.velocity_estimated.copy(),
                              d.torque_commanded.copy(), d.torque_measured.copy(), bytes(data)))

    def utimes(self):
        return [s[0] for s in self.statuses]

    def by_utime(self):
        return {s[0]: s for s in self.statuses}


def fault(kind, start, stop=None, **parameters):
    return {"type": kind, "start": start, "stop": stop, **parameters}


@pytest.fixture
def reference(iiwa):
    return Run(iiwa)


def test_latency_delays_whole_status_messages(iiwa, reference):
    """Between 10 and 30 ms each status is the one of 5 ms earlier, its own utime included."""
    run = Run(iiwa, [fault("latency", 0.010, 0.030, delay=0.005)])
    ref = reference.by_utime()
    assert len(run.statuses) == len(reference.statuses) == 61
    for k, (sent, ref_status) in enumerate(zip(run.statuses, reference.statuses)):
        t_ms = k                                    # the k-th status is published at k ms
        expected = ref[(t_ms - 5) * MS] if 10 <= t_ms < 30 else ref_status
        assert sent[5] == expected[5], t_ms
    assert run.robot.faults.summary()[0]["applied"] == 20


def test_drop_status_every_third(iiwa, reference):
    run = Run(iiwa, [fault("drop_status", 0.010, 0.020, every=3)])
    missing = sorted(set(reference.utimes()) - set(run.utimes()))
    assert missing == [12 * MS, 15 * MS, 18 * MS]
    assert run.robot.statuses_published == 61 - 3
    assert run.robot.physics.steps == 60               # the plant keeps stepping


def test_drop_status_at_random_is_seeded(iiwa):
    first = Run(iiwa, [fault("drop_status", 0.0, probability=0.3)], steps=200, seed=7)
    again = Run(iiwa, [fault("drop_status", 0.0, probability=0.3)], steps=200, seed=7)
    other = Run(iiwa, [fault("drop_status", 0.0, probability=0.3)], steps=200, seed=8)
    assert first.utimes() == again.utimes() != other.utimes()
    dropped = 201 - len(first.statuses)
    assert 40 <= dropped <= 80                         # binomial(201, 0.3): mean 60, std 6.5


def test_duplicate_status(iiwa, reference):
    run = Run(iiwa, [fault("duplicate_status", 0.020, 0.030, every=2)])
    utimes = run.utimes()
    doubled = sorted(u for u in set(utimes) if utimes.count(u) == 2)
    assert doubled == [21 * MS, 23 * MS, 25 * MS, 27 * MS, 29 * MS]
    assert [s[5] for s in run.statuses if s[0] == 23 * MS][0] == reference.by_utime()[23 * MS][5]
    assert len(run.statuses) == 61 + 5


def test_freeze_sensor_holds_chosen_joints(iiwa, reference):
    """Joints 1 and iiwa_joint_4 report their 10 ms position and velocity until 30 ms; the rest stay live."""
    run = Run(iiwa, [fault("freeze_sensor", 0.010, 0.030, joints=[1, "iiwa_joint_4"])])
    ref = reference.by_utime()
    frozen, live = [1, 3], [0, 2, 4, 5, 6]
    for utime, q, v, *_ in run.statuses:
        if 10 * MS <= utime < 30 * MS:
            np.testing.assert_array_equal(q[frozen], ref[10 * MS][1][frozen])
            np.testing.assert_array_equal(v[frozen], ref[10 * MS][2][frozen])
            np.testing.assert_array_equal(q[live], ref[utime][1][live])
        else:
            np.testing.assert_array_equal(q, ref[utime][1])
    assert np.abs(ref[29 * MS][1][frozen] - ref[10 * MS][1][frozen]).max() > 1e-6    # they did move


def test_sensor_noise_is_gaussian_with_the_configured_std(iiwa):
    run = Run(iiwa, [fault("sensor_noise", 0.0, position_std=0.01, velocity_std=0.1)], steps=1000, seed=3)
    errors = np.array([s[1] - run.truth[s[0]] for s in run.statuses[1:]])
    assert errors.shape == (1000, N)
    assert errors.std() == pytest.approx(0.01, rel=0.05)
    assert abs(errors.mean()) < 0.01 * 4 / np.sqrt(errors.size)
    again = Run(iiwa, [fault("sensor_noise", 0.0, position_std=0.01, velocity_std=0.1)], steps=20, seed=3)
    assert [s[5] for s in again.statuses] == [s[5] for s in run.statuses[:21]]


def test_joint_unresponsive_ignores_its_torque(iiwa, reference):
    """Joint 2 produces no torque between 10 and 40 ms: torque_measured is 0 there while
    torque_commanded still shows the command; it moves only passively (gravity is compensated on
    the other joints only through their own motors)."""
    run = Run(iiwa, [fault("joint_unresponsive", 0.010, 0.040, joints=["iiwa_joint_2"])])
    for utime, q, v, commanded, measured, _ in run.statuses[1:]:
        step_start = utime - MS
        if 10 * MS <= step_start < 40 * MS:
            assert measured[1] == 0.0 and commanded[1] != 0.0
            np.testing.assert_array_equal(np.delete(measured, 1), np.delete(commanded, 1))
        else:
            np.testing.assert_array_equal(measured, commanded)
    assert abs(run.by_utime()[40 * MS][1][1] - reference.by_utime()[40 * MS][1][1]) > 1e-4    # it sagged
    assert run.robot.physics.actuator_enabled.tolist() == [1.0] * N


def test_silent_plant_sends_nothing_but_keeps_running(iiwa):
    run = Run(iiwa, [fault("silent", 0.010, 0.025)], contact={"enabled": True, "publish_rate": 1000.0})
    contact = []
    run.lc.subscribe("CONTACT_RESULTS", lambda channel, data: contact.append(data))
    utimes = run.utimes()
    assert utimes == [t * MS for t in range(61) if not 10 <= t < 25]
    assert run.robot.physics.steps == 60 and run.robot.commands_received == 60
    assert run.robot.faults.summary() == [{"type": "silent", "start": 0.01, "stop": 0.025, "applied": 15}]


@pytest.mark.parametrize("corruption, counter", [("garbage", "fingerprint"), ("truncated", "truncated"),
                                                 ("fingerprint", "fingerprint"), ("non_finite", "non_finite"),
                                                 ("joint_count", "joint_count")])
def test_bad_command_is_rejected_and_the_last_valid_command_kept(iiwa, reference, corruption, counter):
    """A malformed command appears on the command channel at 20 ms: the driver rejects and counts it, does
    not step for it, and keeps applying the last valid command (the run matches the fault-free one)."""
    run = Run(iiwa, [fault("bad_command", 0.020, corruption=corruption)])
    assert run.robot.commands_rejected == 1 and run.robot.rejected_by == {counter: 1}
    assert run.robot.physics.steps == 60 and run.robot.commands_received == 60
    assert [s[5] for s in run.statuses] == [s[5] for s in reference.statuses]


def test_bad_command_repeats_over_a_window_and_panda_too(iiwa):
    run = Run(iiwa, [fault("bad_command", 0.010, 0.015, corruption="non_finite")], protocol="panda")
    assert run.robot.rejected_by == {"non_finite": 5} and run.robot.physics.steps == 60


def test_faults_are_reported_in_the_summary(iiwa):
    run = Run(iiwa, [fault("drop_status", 0.0, 0.010, every=2), fault("joint_unresponsive", 0.005, 0.008, joints=[6])])
    assert run.robot.summary()["faults"] == [
        {"type": "drop_status", "start": 0.0, "stop": 0.01, "applied": 5},
        {"type": "joint_unresponsive", "start": 0.005, "stop": 0.008, "applied": 3}]


@pytest.mark.parametrize("spec, key, message", [
    ({"type": "latency"}, "sim.faults[0].delay", "is required for a latency fault"),
    ({"type": "latency", "delay": 0.0015}, "sim.faults[0].delay", "must be a positive multiple of time_step"),
    ({"type": "latency", "delay": 0.002, "probability": 0.5}, "sim.faults[0].probability",
     "is not a parameter of a latency fault"),
    ({"type": "drop_status"}, "sim.faults[0].probability", "a drop_status fault needs probability or every"),
    ({"type": "drop_status", "probability": 0.5, "every": 2}, "sim.faults[0].every", "not both"),
    ({"type": "drop_status", "probability": 1.5}, "sim.faults[0].probability", r"must be in \(0, 1\]"),
    ({"type": "duplicate_status", "every": 0}, "sim.faults[0].every", "must be >= 1"),
    ({"type": "silent", "start": 2.0, "stop": 1.0}, "sim.faults[0].stop", "must be after start"),
    ({"type": "silent", "start": -1.0}, "sim.faults[0].start", "must be >= 0"),
    ({"type": "joint_unresponsive"}, "sim.faults[0].joints", "is required for a joint_unresponsive fault"),
    ({"type": "sensor_noise"}, "sim.faults[0].position_std", "needs position_std or velocity_std"),
    ({"type": "sensor_noise", "velocity_std": -1.0}, "sim.faults[0].velocity_std", "must be >= 0"),
    ({"type": "freeze_sensor", "joints": [True]}, r"sim.faults\[0\].joints\[0\]", "must be a joint name or"),
    ({"type": "bad_command", "corruption": "zap"}, "sim.faults[0].corruption", "must be one of"),
    ({"type": "meteor"}, "sim.faults[0].type", "must be one of"),
    ({"type": "silent", "when": 1.0}, "sim.faults[0].when", "unknown key"),
])
def test_invalid_fault_specs_name_the_key(spec, key, message):
    with pytest.raises(ConfigError, match=message) as error:
        load_sim_config({"faults": [spec]})
    assert error.value.key.replace("\\", "") == key.replace("\\", "")


def test_fault_joints_are_checked_against_the_protocol(iiwa):
    with pytest.raises(ConfigError, match=r"sim.faults\[0\].joints\[1\]: 'elbow' is not one of the protocol's"):
        Run(iiwa, [fault("freeze_sensor", 0.0, joints=[0, "elbow"])])
    with pytest.raises(ConfigError, match=r"sim.faults\[0\].joints\[0\]: index 7 is out of range \[0, 7\)"):
        Run(iiwa, [fault("joint_unresponsive", 0.0, joints=[7])])
    with pytest.raises(ConfigError, match=r"sim.faults\[0\].delay: must be a multiple of the status period"):
        Run(iiwa, [fault("latency", 0.0, delay=0.003)], status_period=0.002)
