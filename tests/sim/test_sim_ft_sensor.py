"""The simulated wrist force/torque sensor (drivers.sim.ft_sensor): an iiwa holding a tool still reads
its weight m g (and the moment p × m g) within 1%; the noise has the configured statistics and is
deterministic per seed; the low-pass follows 1 − e^{−2π f_c t} after a step in the load; the message
decodes with lcm-gen's class over memq://; an update allocates nothing."""
import lcm
import numpy as np
import pytest

from drivers.sim.config import FtSensorConfig, SimConfig
from drivers.sim.ft_sensor import ForceTorqueSensor
from drivers.sim.physics import Physics
from dynamics_cy import MultibodyPlant, Parser, RigidTransform, SpatialInertia, UnitInertia
from messages.drake import lcmt_force_torque
from tests.alloc import net_and_peak
from tests.conftest import IIWA_URDF

MASS, P_COM = 2.0, np.array([0.01, -0.02, 0.1])       # the tool's, p_SoTcm in S = iiwa_link_ee_kuka
Q = np.array([0.2, 0.6, -0.3, -1.3, 0.4, 0.9, -0.5])


def arm_with_tool():
    plant = MultibodyPlant(0.0)
    iiwa = Parser(plant).AddModels(str(IIWA_URDF))[0]
    tool = plant.AddRigidBody("tool", iiwa, SpatialInertia(MASS, P_COM, UnitInertia(0.02, 0.02, 0.01, 0, 0, 0)))
    plant.WeldFrames(plant.GetFrameByName("iiwa_link_ee_kuka"), tool.body_frame(), RigidTransform())
    plant.Finalize()
    return plant, tool


def holding(**sensor):
    """(plant, physics, sensor, u): the arm at Q with the tool, u its gravity compensation."""
    plant, tool = arm_with_tool()
    physics = Physics(plant, SimConfig(initial_positions=list(Q)))
    sensor = ForceTorqueSensor(plant, physics, FtSensorConfig(enabled=True, **sensor))
    u = np.zeros(7)
    plant.kernels().gravity(physics.q, u)
    return plant, physics, sensor, -u


def run(physics, sensor, u, steps, lc=None):
    out = np.zeros((steps, 6))
    for k in range(steps):
        physics.step(u)
        sensor.update(physics.time_ns, lc)
        out[k] = sensor.wrench
    return out


def expected_weight(plant):
    """[τ; f] in S of the tool held still: f_S = −m g (what holds it up), τ = p_SoTcm × f_S."""
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, Q)
    R_WS = plant.GetFrameByName("iiwa_link_ee_kuka").CalcPoseInWorld(ctx).rotation().matrix()
    f = R_WS.T @ (-MASS * plant.gravity_field().gravity_vector())
    return np.r_[np.cross(P_COM, f), f]


def test_a_tool_held_still_reads_its_weight_within_one_percent():
    plant, physics, sensor, u = holding()
    w = run(physics, sensor, u, 200)[-1]
    F = expected_weight(plant)
    assert np.linalg.norm(physics.v) < 1e-3
    assert np.linalg.norm(w[3:] - F[3:]) < 0.01 * MASS * 9.81
    assert np.linalg.norm(w[:3] - F[:3]) < 0.01 * np.linalg.norm(F[:3])


def test_noise_statistics_and_bias_and_seeded_determinism():
    bias = [1.0, -2.0, 0.5, 0.1, 0.0, -0.2]
    plant, physics, sensor, u = holding(force_std=0.5, torque_std=0.02, bias=bias, seed=7)
    w = run(physics, sensor, u, 4000)
    F = expected_weight(plant) + np.r_[bias[3:], bias[:3]]
    err = w[200:] - F
    np.testing.assert_allclose(err.std(axis=0), [0.02] * 3 + [0.5] * 3, rtol=0.06)
    assert np.all(np.abs(err.mean(axis=0)) < 4 * np.r_[[0.02] * 3, [0.5] * 3] / np.sqrt(3800))
    again = holding(force_std=0.5, torque_std=0.02, bias=bias, seed=7)
    np.testing.assert_array_equal(run(*again[1:], 4000), w)


def test_low_pass_step_response():
    """The tool's mass doubles at a step (held still by the new gravity compensation): the reading
    moves from F₁ to F₂ as F₁ + (F₂ − F₁)(1 − e^{−2π f_c t})."""
    fc = 20.0
    plant, physics, sensor, u = holding(cutoff=fc)
    F1 = run(physics, sensor, u, 300)[-1]
    tool = plant.GetBodyByName("tool")
    plant.compiled_model().set_body_inertia(int(tool.index()), 2 * MASS, P_COM,
                                            2 * MASS * UnitInertia(0.02, 0.02, 0.01, 0, 0, 0).CopyToFullMatrix3())
    g = np.zeros(7)
    plant.kernels().gravity(physics.q, g)
    w = run(physics, sensor, -g, 100)
    F2 = 2 * F1
    t = 1e-3 * np.arange(1, 101)
    predicted = F1 + np.outer(1 - np.exp(-2 * np.pi * fc * t), F2 - F1)
    np.testing.assert_allclose(w, predicted, atol=0.01 * np.abs(F1).max())


def test_the_message_decodes_with_lcm_gens_class_over_memq():
    lc = lcm.LCM("memq://")
    got = []
    lc.subscribe("FT_SENSOR", lambda _, data: got.append(lcmt_force_torque.decode(data)))
    plant, physics, sensor, u = holding(publish_rate=100.0)
    w = run(physics, sensor, u, 50, lc)
    while lc.handle_timeout(0) > 0:
        pass
    assert [m.timestamp for m in got] == [10, 20, 30, 40, 50]
    last = got[-1]
    np.testing.assert_array_equal([last.fx, last.fy, last.fz, last.tx, last.ty, last.tz], np.r_[w[-1, 3:], w[-1, :3]])


def test_an_update_allocates_nothing():
    """In the sensor frame Jc with the low-pass and bias; the noise (numpy's generator) and another
    sensor frame (np.dot) allocate transiently (docs/sim.md)."""
    plant, physics, sensor, u = holding(bias=[0.1] * 6, cutoff=50.0)
    times = iter(list(range(10**9, 10**9 + 3000)))     # the ints made before measuring

    def step():
        physics.step(u)
        sensor.update(next(times))
    step()
    work, frame = net_and_peak(step, 1000)
    assert work == frame, f"1000 updates allocated {work} (net, peak) bytes; the call alone {frame}"


def test_the_sensor_must_sit_in_a_weld():
    plant, _ = arm_with_tool()
    physics = Physics(plant, SimConfig())
    with pytest.raises(ValueError, match="weld"):
        ForceTorqueSensor(plant, physics, FtSensorConfig(enabled=True, joint="iiwa_joint_4"))
