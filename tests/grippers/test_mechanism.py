"""The mechanism's conventions and laws against pydrake's manipulation.schunk_wsg systems, and the
setpoint profile against its closed forms."""
import random

import numpy as np
import pytest

from drivers.grippers import TrapezoidProfile, WsgLimits, schunk_wsg_pd_force
from drivers.grippers.mechanism import DRAKE_DEFAULT_FORCE_LIMIT

manipulation = pytest.importorskip("pydrake.manipulation", reason="pydrake is not installed")


def test_pd_law_is_drakes_schunk_wsg_pd_controller():
    from pydrake.manipulation import SchunkWsgPositionController
    controller = SchunkWsgPositionController()
    pd = controller.GetSubsystemByName("wsg_controller")
    context = pd.CreateDefaultContext()
    rng = random.Random(5)
    for _ in range(50):
        q0, q1, v0, v1 = -rng.uniform(0, 0.055), rng.uniform(0, 0.055), rng.uniform(-1, 1), rng.uniform(-1, 1)
        wd, wdd, limit = rng.uniform(0, 0.11), rng.uniform(-0.4, 0.4), rng.uniform(1, 80)
        pd.GetInputPort("desired_state").FixValue(context, [wd, wdd])
        pd.GetInputPort("state").FixValue(context, [q0, q1, v0, v1])
        pd.GetInputPort("force_limit").FixValue(context, [limit])
        theirs = pd.GetOutputPort("generalized_force").Eval(context)
        ours = schunk_wsg_pd_force(q0, q1, v0, v1, wd, wdd, limit)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
        grip = pd.GetOutputPort("grip_force").Eval(context)[0]
        assert abs(ours[0] - ours[1]) == pytest.approx(grip) and grip <= limit + 1e-12
    default = pd.CreateDefaultContext()                         # force_limit unconnected: Drake's default
    pd.GetInputPort("desired_state").FixValue(default, [0.0, 0.0])
    pd.GetInputPort("state").FixValue(default, [-0.05, 0.05, -5.0, 5.0])     # saturated
    np.testing.assert_allclose(pd.GetOutputPort("generalized_force").Eval(default),
                               schunk_wsg_pd_force(-0.05, 0.05, -5.0, 5.0, 0.0, 0.0))
    assert pd.GetOutputPort("grip_force").Eval(default)[0] == DRAKE_DEFAULT_FORCE_LIMIT
    with pytest.raises(ValueError, match="force_limit"):
        schunk_wsg_pd_force(0, 0, 0, 0, 0, 0, 0.0)


def test_drakes_finger_signs_and_width():
    from pydrake.manipulation import GetSchunkWsgOpenPosition, MakeMultibodyStateToWsgStateSystem
    q_open = GetSchunkWsgOpenPosition()                         # q₀ < 0 < q₁ when open
    assert q_open[0] < 0 < q_open[1] and q_open[1] - q_open[0] == pytest.approx(WsgLimits().stroke_mm / 1000, abs=2e-4)
    width = MakeMultibodyStateToWsgStateSystem()                # width = q₁ − q₀
    wc = width.CreateDefaultContext()
    width.get_input_port().FixValue(wc, [-0.02, 0.03, -0.1, 0.2])
    np.testing.assert_allclose(width.get_output_port().Eval(wc), [0.05, 0.3])



@pytest.mark.parametrize("p0, v0, p1", [(0.11, 0.0, 0.02), (0.0, 0.0, 0.001), (0.05, 0.3, 0.06),
                                        (0.05, -0.3, 0.06), (0.05, 0.42, 0.02), (0.03, 0.0, 0.03)])
def test_profile_respects_its_limits_and_ends_at_rest_on_target(p0, v0, p1):
    vmax, amax, h = 0.42, 5.0, 1e-5
    profile = TrapezoidProfile(vmax, amax, p0)
    profile.plan(0.0, p0, v0, p1)
    ts = np.arange(0.0, profile.end + 0.01, h)
    ps, vs = np.empty_like(ts), np.empty_like(ts)
    for i, t in enumerate(ts):
        profile.evaluate(t)
        ps[i], vs[i] = profile.position, profile.velocity
    assert (ps[0], vs[0]) == pytest.approx((p0, v0))
    assert (ps[-1], vs[-1]) == (p1, 0.0)
    assert np.abs(vs).max() <= max(vmax, abs(v0)) + 1e-12
    assert np.abs(np.diff(vs) / h).max() <= amax * (1 + 1e-9)
    np.testing.assert_allclose(np.diff(ps) / h, 0.5 * (vs[1:] + vs[:-1]), atol=amax * h)   # v is dp/dt
    if v0 == 0.0 and p0 != p1:                                  # rest to rest: the time-optimal duration
        d = abs(p1 - p0)
        expected = d / vmax + vmax / amax if d >= vmax ** 2 / amax else 2 * np.sqrt(d / amax)
        assert profile.end == pytest.approx(expected)


def test_replanning_from_the_profiles_own_state_continues_the_same_motion():
    a, b = TrapezoidProfile(0.42, 5.0, 0.11), TrapezoidProfile(0.42, 5.0, 0.11)
    a.plan(0.0, 0.11, 0.0, 0.02)
    b.plan(0.0, 0.11, 0.0, 0.02)
    for t in (0.05, 0.1, 0.2, 0.25):
        b.evaluate(t)
        b.plan(t, b.position, b.velocity, 0.02)
    assert b.end == pytest.approx(a.end)
    for t in np.linspace(0.25, 0.35, 11):
        a.evaluate(t)
        b.evaluate(t)
        assert (b.position, b.velocity) == pytest.approx((a.position, a.velocity), abs=1e-12)
