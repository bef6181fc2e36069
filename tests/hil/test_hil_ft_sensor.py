"""A wrist force/torque sensor in the loop (sensors.ft, hil.ft_sensor): a user's hil.Controller reads
State.wrench as [τ; f], equal to the simulated sensor's lcmt_force_torque (decoded here with lcm-gen's
class) and, for the iiwa holding a payload still, to the payload's weight within 1%; NaN without a
sensor, before the first reading and once it is stale; the tick stays allocation-free; the run log
holds the readings and `hil report` reads and plots them."""
import lcm
import numpy as np
import pytest

import hil
from drivers.core.schema import ConfigError
from hil.ft_sensor import WrenchSensor
from hil.report import format_report, plot_log, read_log
from messages.codec import ForceTorqueEncoder
from messages.drake import lcmt_force_torque
from tests.hil.test_hil_alloc import PHASE_PEAK, transient_peaks

REPO_CONFIG = "configs/demo.yaml"
MASS, COM = 3.0, [0.01, -0.02, 0.08]          # the payload's, p_SoPcm in S = iiwa_link_ee_kuka
Q0 = [0.2, 0.6, -0.3, -1.3, 0.4, 0.9, -0.5]
SENSOR = {"trajectory": {"type": "hold"}, "viz": False, "loop": {"duration": None},
          "sensors": {"ft": {"enabled": True}},
          "sim": {"initial_positions": Q0, "ft_sensor": {"enabled": True},
                  "payload": {"mass": MASS, "com": COM, "inertia": [0.01, 0.01, 0.01], "frame": "iiwa_link_ee_kuka"}}}


class Hold(hil.Controller):
    """Gravity compensation of the controller's model (no payload) and a PD at the start pose;
    keeps a copy of the wrench it saw at its last update."""

    def on_configure(self):
        self.tau_g, self.tmp = np.zeros(self.n), np.zeros(self.n)
        self.kp = np.full(self.n, 100.0)                                       # N·m/rad
        self.kd = np.array([20.0, 20.0, 10.0, 10.0, 2.0, 1.0, 0.5])       # N·m·s/rad: kd·T < 2m per joint
        self.seen, self.q = np.zeros(6), np.zeros(self.n)
        self.has_wrench = None

    def update(self, state, command):
        self.kernels.gravity(state.q, self.tau_g)
        np.subtract(state.q_d, state.q, out=command.tau)
        np.multiply(command.tau, self.kp, out=command.tau)
        np.multiply(state.v, self.kd, out=self.tmp)
        np.subtract(command.tau, self.tmp, out=command.tau)
        np.subtract(command.tau, self.tau_g, out=command.tau)
        np.copyto(self.seen, state.wrench)
        np.copyto(self.q, state.q)
        self.has_wrench = state.has_wrench


def expected_weight(q):
    """[τ; f] in S of the payload held still: f_S = R_SW (−m g), what holds it up; τ = p_SoPcm × f_S."""
    plant = hil.make_law(REPO_CONFIG, Hold(), overrides=SENSOR).plant
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, q)
    R_WS = plant.GetFrameByName("iiwa_link_ee_kuka").CalcPoseInWorld(ctx).rotation().matrix()
    f = R_WS.T @ (-MASS * plant.gravity_field().gravity_vector())
    return np.r_[np.cross(COM, f), f]


def test_a_users_law_reads_the_sensors_messages_and_the_payloads_weight_within_one_percent():
    published, compared = [], []

    def on_tick(loop):
        if not published:
            loop.lc.subscribe("FT_SENSOR", lambda _, data: published.append(lcmt_force_torque.decode(data)))
        elif loop.safety.commanding:       # the law saw this tick's newest message: [tx ty tz fx fy fz]
            m = published[-1]
            compared.append((law.seen.copy(), [m.tx, m.ty, m.tz, m.fx, m.fy, m.fz]))

    law = Hold()
    summary = hil.run(REPO_CONFIG, law, duration=1.5, overrides=SENSOR, on_tick=on_tick)
    assert summary["final_state"] == "RUNNING" and summary["ft_sensor"]["received"] > 1400
    assert law.has_wrench and len(compared) > 1000
    for seen, message in compared:
        np.testing.assert_array_equal(seen, message)
    expected = expected_weight(law.q)
    np.testing.assert_allclose(np.linalg.norm(law.seen[3:]), MASS * 9.81, rtol=1e-2)
    np.testing.assert_allclose(law.seen, expected, rtol=0, atol=1e-2 * np.linalg.norm(expected))


def test_without_a_sensor_the_wrench_is_nan_and_has_wrench_false():
    law = Hold()
    hil.run(REPO_CONFIG, law, duration=0.1, overrides={**SENSOR, "sensors": {}})
    assert law.has_wrench is False and np.isnan(law.seen).all()
    assert hil.State.of(7).has_wrench is False and np.isnan(hil.State.of(7).wrench).all()
    assert hil.State.of(7).wrench_age == np.inf


def test_a_sensor_configured_but_silent_gives_nan():
    law = Hold()
    summary = hil.run(REPO_CONFIG, law, duration=0.1, overrides={**SENSOR, "sim": {**SENSOR["sim"], "ft_sensor": {}}})
    assert law.has_wrench and np.isnan(law.seen).all() and summary["ft_sensor"]["received"] == 0


def test_a_reading_older_than_the_timeout_is_nan_until_the_next():
    lc = lcm.LCM("memq://")
    sensor = WrenchSensor(lc, "FT", timeout_s=0.005)
    encoder = ForceTorqueEncoder("FT")
    lc.publish("FT", bytes(encoder.encode_or_raise(7, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)))
    lc.handle_timeout(0)
    sensor.update(1_000_000)
    np.testing.assert_array_equal(sensor.wrench, [4, 5, 6, 1, 2, 3])
    assert sensor.stamp_ms == 7 and sensor.age_s == 0.0
    sensor.update(6_000_000)                         # 5 ms: still valid
    assert np.isfinite(sensor.wrench).all() and sensor.age_s == pytest.approx(0.005)
    sensor.update(6_000_001)
    assert np.isnan(sensor.wrench).all() and sensor.stale == 1
    lc.publish("FT", bytes(encoder.encode_or_raise(8, -1.0, 0.0, 0.0, 0.0, 0.0, 0.5)))
    lc.handle_timeout(0)
    sensor.update(7_000_000)
    np.testing.assert_array_equal(sensor.wrench, [0, 0, 0.5, -1, 0, 0])
    lc.publish("FT", b"garbage")
    lc.handle_timeout(0)
    assert sensor.rejected == 1
    sensor.close()


def test_the_tick_with_the_sensor_allocates_nothing():
    """The law reading state.wrench passes `hil run --check-alloc`'s check; the sensor's part of a tick
    (a message decoded, then the update) allocates at most a few scalars (tests/hil/test_hil_alloc's bound)."""
    report = hil.check_allocations(REPO_CONFIG, Hold(), duration=0.5, overrides=SENSOR)
    assert report["ticks"] > 400 and not report["allocates"] and report["final_state"] == "RUNNING", report
    sensor = WrenchSensor(lcm.LCM("memq://"), "FT", timeout_s=0.01)
    data = bytes(ForceTorqueEncoder("FT").encode_or_raise(7, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0))
    t = [0]

    def tick():
        t[0] += 1_000_000
        sensor._on_message("FT", data)
        sensor.update(t[0])

    for _ in range(300):
        tick()
    assert max(transient_peaks(tick, 2000)) <= PHASE_PEAK


def test_a_timeout_under_one_loop_period_or_another_channel_than_the_sims_is_a_config_error():
    with pytest.raises(ConfigError, match="sensors.ft.timeout"):
        hil.run(REPO_CONFIG, Hold(), duration=0.1,
                overrides={**SENSOR, "sensors": {"ft": {"enabled": True, "timeout": 0.0005}}})
    with pytest.raises(ConfigError, match="sensors.ft.channel: 'OTHER' is not where the simulated sensor publishes"):
        hil.run(REPO_CONFIG, Hold(), duration=0.1,
                overrides={**SENSOR, "sensors": {"ft": {"enabled": True, "channel": "OTHER"}}})


def test_the_run_log_holds_the_readings_and_the_report_reads_and_plots_them(tmp_path):
    log = tmp_path / "run.lcmlog"
    law = Hold()
    hil.run(REPO_CONFIG, law, duration=0.5, overrides={**SENSOR, "telemetry": {"log": str(log)}})
    r, traces = read_log(log)
    w = r["wrench"]
    assert w["channel"] == "FT_SENSOR" and w["count"] >= 495 and w["rejected"] == 0 and w["rate_hz"] == 1000.0
    t, W = traces["wrench"]
    assert W.shape == (w["count"], 6)
    np.testing.assert_array_equal(W[-1], law.seen)             # the last reading, as the law saw it: [τ; f]
    assert w["force_max_n"] == pytest.approx(np.linalg.norm(W[:, 3:], axis=1).max(), abs=1e-5)
    assert "wrench   " in format_report(r) and "on FT_SENSOR" in format_report(r)
    plot_log(traces, str(tmp_path / "plot.png"), r["deadline_budget_us"])
    assert (tmp_path / "plot.png").stat().st_size > 10_000


def test_a_log_of_a_run_without_the_sensor_reports_no_wrench(tmp_path):
    log = tmp_path / "run.lcmlog"
    hil.run(REPO_CONFIG, Hold(), duration=0.1, overrides={**SENSOR, "sensors": {}, "telemetry": {"log": str(log)}})
    r, traces = read_log(log)
    assert r["wrench"] is None and traces["wrench"] is None and "wrench" not in format_report(r)
