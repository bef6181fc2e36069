"""The nine bad inputs of issue 15, each reproduced: before the fix each ended in a traceback or was
silently accepted; now each is a documented error naming what is wrong."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from drivers.core.config import RobotConfig
from drivers.core.schema import ConfigError, parse_yaml
from drivers.run_config import load_config
from tests.reliability.inputs import good_config

HAVE_DRAKE = importlib.util.find_spec("pydrake") is not None


def _config(tmp_path, text: str | bytes):
    path = tmp_path / "c.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return load_config(path)


# 1. rates and periods: finite, positive, achievable ---------------------------------------------------
@pytest.mark.parametrize("rate, message", [(".inf", "must be a finite number, got inf"),
                                           ("-.inf", "must be a finite number"),
                                           ("1e12", "must be <= 10000"), ("1.0e+12", "must be <= 10000"),
                                           ("0", "must be > 0"), (".nan", "must be a finite number")])
def test_loop_rate_must_be_finite_positive_and_achievable(tmp_path, rate, message):
    with pytest.raises(ConfigError, match="loop.rate_hz: " + message):
        _config(tmp_path, good_config(rate=rate))


def test_telemetry_and_serial_rates_are_bounded_too(tmp_path):
    with pytest.raises(ConfigError, match=r"telemetry.rate_hz: must be at most loop.rate_hz \(500\)"):
        _config(tmp_path, good_config(rate="500") + "telemetry: {rate_hz: 1000}\n")
    with pytest.raises(ConfigError, match="serial.device.state_rate: must be <= 10000"):
        _config(tmp_path, good_config().replace("lockstep: true", "lockstep: true, state_rate: 1e12"))
    with pytest.raises(ConfigError, match="serial.heartbeat_period: must be >= 0.0001, got 1e-09"):
        _config(tmp_path, good_config().replace("  device:", "  heartbeat_period: 1.0e-9\n  device:"))
    with pytest.raises(ConfigError, match="loop.start_timeout: must be a finite number"):
        _config(tmp_path, good_config().replace("start_timeout: 0.5", "start_timeout: .inf"))
    assert _config(tmp_path, good_config(rate="2.5e3")).loop.rate_hz == 2500.0   # YAML 1.2 float


# 2. a model that does not parse: a ConfigError naming robot.model and the model's line ----------------
@pytest.mark.parametrize("name, text, simulated, message", [
    # Drake's policy (issue 17): the controller's plant takes a negative mass with a warning; the
    # simulated robot's does not.
    ("neg.urdf", '<robot name="r"><link name="a"><inertial><mass value="-1"/><inertia ixx="1" iyy="1" izz="1" '
                 'ixy="0" ixz="0" iyz="0"/></inertial></link></robot>', True, r"neg.urdf:1 \(<inertia>\): .*negative"),
    ("arm.txt", "<robot/>", False, "unknown model format '.txt'"),
    ("loop.urdf", '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="fixed"><parent link="a"/>'
                  '<child link="a"/></joint></robot>', False, "robot.model: the model cannot be used"),
    ("bad.urdf", '<robot name="r"><link name="a">', False, "bad.urdf:1: malformed XML"),
])
def test_a_model_that_does_not_parse_is_a_config_error(tmp_path, name, text, simulated, message):
    from drivers.core.robot import build_plant
    (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError, match=message) as e:
        build_plant(RobotConfig(model=str(tmp_path / name)), simulated=simulated)
    assert e.value.key == "robot.model"


# 3. a config that is not UTF-8 ------------------------------------------------------------------------
def test_a_config_that_is_not_utf8_names_the_line_and_byte(tmp_path):
    with pytest.raises(ConfigError, match=r"c.yaml: not UTF-8 text: byte 0xe9 at line 3"):
        _config(tmp_path, b"robot:\n  model: x.urdf\n# caf\xe9\n")
    assert parse_yaml("\ufeffloop: {rate_hz: 5}".encode(), "bom.yaml") == {"loop": {"rate_hz": 5}}   # a BOM is fine


# 4. duplicate keys, at any depth; a merge key may still be overridden ----------------------------------
def test_duplicate_keys_are_rejected_naming_the_key_and_both_lines():
    with pytest.raises(ConfigError, match=r"d.yaml: duplicate key 'loop' at line 3, column 1 \(first at line 1\)"):
        parse_yaml("loop: {rate_hz: 1000}\nrobot: {model: x}\nloop: {rate_hz: 500}\n", "d.yaml")
    with pytest.raises(ConfigError, match=r"duplicate key 'kp' at line 3"):
        parse_yaml("controller:\n  kp: [1]\n  kp: [2]\n", "d.yaml")
    merged = parse_yaml("base: &b {kp: [1], kd: [2]}\ncontroller:\n  <<: *b\n  kp: [3]\n", "m.yaml")
    assert merged["controller"] == {"kp": [3], "kd": [2]}


def test_yaml_tags_beyond_the_safe_ones_are_rejected():
    with pytest.raises(ConfigError, match="not valid YAML at line 1.*could not determine a constructor"):
        parse_yaml("x: !!python/object/apply:os.system ['true']\n", "t.yaml")


# 5. a run log whose channel name is not UTF-8 ---------------------------------------------------------
def test_a_log_event_whose_channel_is_not_utf8_is_a_value_error_naming_its_offset(run_log, tmp_path):
    from messages.logs import read_events
    data = run_log.read_bytes()
    at = data.index(b"IIWA_STATUS")
    bad = tmp_path / "bad.lcmlog"
    bad.write_bytes(data[:at] + b"\xff" + data[at + 1:])
    with pytest.raises(ValueError, match=r"bad.lcmlog: the event at byte \d+ is corrupt: a channel name that is not"):
        list(read_events(bad))


def test_our_log_reader_reads_what_lcm_eventlog_reads(run_log, tmp_path):
    """read_events is ours (lcm.EventLog prints to stderr and stops or skips silently at corruption):
    on a whole log it gives lcm.EventLog's events exactly, and it ends a cut-short log quietly."""
    import lcm

    from messages.logs import read_events
    ours = [(e.eventnum, e.timestamp, e.channel, e.data) for e in read_events(run_log)]
    log = lcm.EventLog(str(run_log), "r")
    theirs = [(e.eventnum, e.timestamp, e.channel, e.data) for e in log]
    log.close()
    assert ours == theirs and len(ours) > 500
    data = run_log.read_bytes()
    cut = tmp_path / "cut.lcmlog"
    cut.write_bytes(data[:len(data) // 2])
    assert [e[3] for e in ours[:len(list(read_events(cut)))]] == [e.data for e in read_events(cut)]
    long = tmp_path / "long.lcmlog"                  # the first event's data length made huge
    long.write_bytes(data[:24] + b"\x7f\xff\xff\xff" + data[28:])
    with pytest.raises(ValueError, match=r"long.lcmlog: the event at byte 0 is corrupt: its length runs past"):
        list(read_events(long))


# 6. short serial headers ------------------------------------------------------------------------------
def test_short_frames_and_headers_are_header_errors():
    from drivers.serial.codec import FrameDecoder, read_header
    from drivers.serial.errors import HeaderError
    for call in (lambda: FrameDecoder(7).decode(b""), lambda: read_header(b"\xaa\x55"),
                 lambda: read_header(b"\xaa\x55\x01\x01\x00\x00\x00\x00", 1), lambda: FrameDecoder(7).decode(b"\xaa")):
        with pytest.raises(HeaderError, match="short header"):
            call()


# 7. a chain of 1,000 links ----------------------------------------------------------------------------
def _chain_urdf(n: int) -> str:
    links = "".join(f'<link name="l{i}"><inertial><origin xyz="0 0 0.05"/><mass value="0.1"/><inertia ixx="1e-3" '
                    f'iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>' for i in range(n + 1))
    joints = "".join(f'<joint name="j{i}" type="revolute"><parent link="l{i}"/><child link="l{i + 1}"/>'
                     f'<origin xyz="0 0 0.1"/><axis xyz="{i % 2} {(i + 1) % 2} 0"/></joint>' for i in range(n))
    return f'<robot name="chain">{links}{joints}</robot>'


def test_a_urdf_chain_of_1000_links_finalizes_and_matches_drake():
    from dynamics_cy import MultibodyPlant, Parser
    n = 1000
    ours = MultibodyPlant(0.0)
    Parser(ours).AddModelsFromString(_chain_urdf(n), "urdf")
    ours.Finalize()
    assert ours.num_velocities() == n + 6          # a free base, as Drake gives a model not welded to the world
    if not HAVE_DRAKE:
        pytest.skip("pydrake is not installed: the 1,000-link chain finalized, not cross-checked")
    from pydrake.multibody.parsing import Parser as DParser
    from pydrake.multibody.plant import MultibodyPlant as DPlant
    drake = DPlant(0.0)
    DParser(drake).AddModelsFromString(_chain_urdf(n), "urdf")
    drake.Finalize()
    q = np.random.default_rng(0).uniform(-0.1, 0.1, ours.num_positions())
    q[:4] = [1, 0, 0, 0]
    c, d = ours.CreateDefaultContext(), drake.CreateDefaultContext()
    ours.SetPositions(c, q)
    drake.SetPositions(d, q)
    np.testing.assert_allclose(ours.CalcGravityGeneralizedForces(c), drake.CalcGravityGeneralizedForces(d),
                               rtol=1e-9, atol=1e-9)


def test_an_sdf_frame_chain_of_1000_resolves_without_recursion():
    from dynamics_cy import MultibodyPlant, Parser
    frames = "".join(f'<frame name="f{i}" attached_to="{"base" if i == 0 else f"f{i - 1}"}">'
                     f'<pose relative_to="{"base" if i == 0 else f"f{i - 1}"}">0.001 0 0 0 0 0</pose></frame>'
                     for i in range(1000))
    sdf = (f'<sdf version="1.9"><model name="m"><link name="base"><inertial><mass>1</mass></inertial></link>'
           f'{frames}</model></sdf>')
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModelsFromString(sdf, "sdf")
    plant.Finalize()
    X = plant.GetFrameByName("f999").GetFixedPoseInBodyFrame()
    np.testing.assert_allclose(X.translation(), [1.0, 0, 0], atol=1e-12)


# 8. lenient encodings lcm-gen accepts: rejected and counted as "malformed" -----------------------------
def test_decode_message_rejects_what_lcm_gen_silently_accepts():
    from messages import lcmt_hil_estop
    from messages.errors import MalformedError
    from messages.validation import MessageDecoder, decode_message
    m = lcmt_hil_estop()
    m.utime, m.latched, m.source, m.reason = 1, True, "pendant", "stop"
    good = m.encode()
    end = len(good)
    cases = {"latched": (16, 2, "a boolean is 0 or 1"), "reason": (end - 1, ord("x"), "ends in its NUL"),
             "source": (21, 0xFF, "is UTF-8"), "source ": (22, 0, "no NUL before its end")}
    decoder = MessageDecoder(lcmt_hil_estop, "ESTOP")
    for field, (offset, byte, message) in cases.items():
        bad = bytearray(good)
        bad[offset] = byte
        lenient = lcmt_hil_estop.decode(bytes(bad))          # lcm-gen's own decode() accepts every one
        assert lenient.utime == 1
        with pytest.raises(MalformedError, match=message) as e:
            decode_message(lcmt_hil_estop, bytes(bad), "ESTOP")
        assert e.value.field == field.strip()
        assert decoder.decode(bytes(bad)) is None
    assert decoder.counters["malformed"] == len(cases)
    assert decode_message(lcmt_hil_estop, good).reason == "stop"


def test_strings_in_nested_arrays_are_checked_with_their_path():
    from messages import lcmt_viewer_geometry_data, lcmt_viewer_link_data, lcmt_viewer_load_robot
    from messages.errors import MalformedError
    from messages.validation import decode_message
    g = lcmt_viewer_geometry_data()
    g.type, g.position, g.quaternion, g.color, g.string_data = 1, [0.0] * 3, [1.0, 0, 0, 0], [1.0] * 4, "mesh.obj"
    link = lcmt_viewer_link_data()
    link.name, link.robot_num, link.num_geom, link.geom = "base", 0, 1, [g]
    msg = lcmt_viewer_load_robot()
    msg.num_links, msg.link = 1, [link]
    data = bytearray(msg.encode())
    data[data.index(b"mesh.obj")] = 0xC3          # a UTF-8 lead byte without its continuation
    with pytest.raises(MalformedError) as e:
        decode_message(lcmt_viewer_load_robot, bytes(data))
    assert e.value.field == "link[0].geom[0].string_data"


# 9. one exception type per fault, whichever kernel -----------------------------------------------------
def _plant(module, massless: bool, ball: bool):
    """One body on a revolute or roll-pitch-yaw joint, in our API or pydrake's (`module`: a function of
    the class name)."""
    plant = module("MultibodyPlant")(0.0)
    M = module("SpatialInertia")(0.0, [0, 0, 0], module("UnitInertia")(0, 0, 0)) if massless else \
        module("SpatialInertia")(1.0, [0, 0, 0], module("UnitInertia").SolidSphere(0.1))
    body = plant.AddRigidBody("b", M)
    plant.AddJoint(module("BallRpyJoint")("j", plant.world_frame(), body.body_frame()) if ball else
                   module("RevoluteJoint")("j", plant.world_frame(), body.body_frame(), [0, 0, 1.0]))
    plant.Finalize()
    return plant


def ours(name):
    import dynamics_cy
    return getattr(dynamics_cy, name)


def drakes(name):
    import pydrake.multibody.plant
    import pydrake.multibody.tree
    return getattr(pydrake.multibody.plant, name, None) or getattr(pydrake.multibody.tree, name)


def test_a_singular_articulated_inertia_is_one_exception_type_in_every_kernel():
    from dynamics_cy import DynamicsError, SingularInertiaError
    plant = _plant(ours, massless=True, ball=False)
    ctx, k = plant.CreateDefaultContext(), plant.kernels()
    with pytest.raises(SingularInertiaError, match="joint 'j' is singular"):
        plant.CalcForwardDynamics(ctx, np.zeros(1))
    with pytest.raises(SingularInertiaError, match="joint 'j' is singular"):
        k.forward_dynamics(np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1))
    assert issubclass(SingularInertiaError, DynamicsError) and issubclass(DynamicsError, RuntimeError)


def test_gimbal_lock_is_one_exception_type_in_every_kernel():
    from dynamics_cy import GimbalLockError
    plant = _plant(ours, massless=False, ball=True)
    ctx, k = plant.CreateDefaultContext(), plant.kernels()
    q = np.array([0.1, np.pi / 2, 0.2])
    plant.SetPositions(ctx, q)
    with pytest.raises(GimbalLockError, match="gimbal lock"):
        plant.MapVelocityToQDot(ctx, np.ones(3))
    with pytest.raises(GimbalLockError, match="gimbal lock"):
        k.map_velocity_to_qdot(q, np.ones(3), np.zeros(3))


@pytest.mark.skipif(not HAVE_DRAKE, reason="pydrake is not installed")
def test_drake_raises_runtime_error_for_the_same_faults():
    """Our types derive from RuntimeError, which is what Drake raises for both faults."""
    plant = _plant(drakes, massless=False, ball=True)
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, [0.1, np.pi / 2, 0.2])
    with pytest.raises(RuntimeError, match="pitch angle takes values near π/2"):
        plant.MapVelocityToQDot(ctx, np.ones(3))
    plant = _plant(drakes, massless=True, ball=False)
    with pytest.raises(RuntimeError, match="is not positive-definite"):
        plant.EvalTimeDerivatives(plant.CreateDefaultContext())


def test_the_1khz_robot_state_decoder_rejects_the_same_names():
    """Found by the fuzzer: the codec's lcmt_robot_state decoder took names with a NUL inside."""
    from messages import lcmt_robot_state
    from messages.codec import RobotStateDecoder
    m = lcmt_robot_state()
    m.utime, m.num_joints, m.joint_name, m.joint_position = 5, 2, ["a1", "é2"], [0.5, -0.5]
    good = m.encode()
    decoder = RobotStateDecoder(num_joints=2)
    assert decoder.decode(good) and list(decoder.position) == [0.5, -0.5]
    at = good.index("é".encode())
    for offset, byte in ((at + 2, 0), (at, 0xFF), (at + 1, 0x41), (at, 0xED)):   # NUL, lead, continuation, surrogate
        bad = bytearray(good)
        bad[offset] = byte
        assert not decoder.decode(bytes(bad)), (offset, byte)
    assert decoder.counters["malformed"] == 4
