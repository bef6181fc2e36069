"""Inputs for the bad-input tests: a good run config (with sim, serial and scenario sections) as text,
its bad variants by class, and a real run log recorded in lockstep with its corruptions."""
from __future__ import annotations

import copy
import dataclasses
import typing
from pathlib import Path

from tests.conftest import IIWA_URDF

IIWA_JOINTS = tuple(f"iiwa_joint_{k}" for k in range(1, 8))
UNPARSEABLE_URDF = """<robot name="bad"><link name="a"/>
<joint name="j" type="revolute"><parent link="a"/><child link="nowhere"/><axis xyz="0 0 1"/></joint></robot>"""


def good_config(model: str | Path = IIWA_URDF, rate: str = "1000", port: str = "/tmp/hil-reliability-none") -> str:
    return f"""\
robot: {{model: {model}, protocol: iiwa, end_effector: iiwa_link_ee}}
loop:
  rate_hz: {rate}
  start_timeout: 0.5
controller: {{type: gravity_compensation}}
sim:
  initial_positions: [0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0]
serial:
  port: {port}
  device: {{lockstep: true}}
scenario:
  duration: 0.1
  criteria: {{final_state: RUNNING}}
servo_bus:
{servo_bus(port + "-servo")}"""


def servo_bus(port: str, rate: str = "500", joints: tuple = IIWA_JOINTS, **keys: str) -> str:
    """A servo_bus section (indented) of seven Dynamixel XM430s, one per iiwa joint."""
    lines = [f"  port: {port}", f"  rate: {rate}", *(f"  {k}: {v}" for k, v in keys.items()), "  joints:"]
    joints = [f"    - {{joint: {j}, id: {i + 1}, model: XM430-W350}}" for i, j in enumerate(joints)]
    return "\n".join(lines + joints) + "\n"


def servo_config(**keys: str) -> str:
    """The good config with its servo_bus section replaced by servo_bus(**keys)."""
    return good_config().split("servo_bus:")[0] + "servo_bus:\n" + servo_bus("/tmp/hil-reliability-servo", **keys)


def yaml_classes(good: str, top: str, again: str) -> dict[str, tuple[str | bytes, str]]:
    """The bad-YAML classes of any file: not UTF-8, not YAML, `again` repeating the key `top`, an
    unsafe tag, not a mapping."""
    return {"not_utf8": (good.encode() + b"# caf\xe9\n", "not UTF-8"),
            "not_yaml": (f"{top}: [unclosed\n", "not valid YAML at line"),
            "duplicate_key": (good + again, f"duplicate key '{top}'"),
            "python_tag": (good + "tag: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
            "not_a_mapping": (f"- {top}\n", "the top level must be a mapping")}


def bad_configs(folder: Path) -> dict[str, tuple[Path, str]]:
    """{class: (config file, text the one-line error must contain)}: every class of bad config."""
    (folder / "unparseable.urdf").write_text(UNPARSEABLE_URDF)
    (folder / "model.txt").write_text(IIWA_URDF.read_text())
    good = good_config()
    texts: dict[str, tuple[str | bytes, str]] = {
        **yaml_classes(good, "loop", "loop:\n  rate_hz: 500\n"),
        "unknown_key": (good.replace("  start_timeout", "  rat_hz: 3\n  start_timeout"), "loop.rat_hz: unknown key"),
        "wrong_type": (good_config(rate="fast"), "loop.rate_hz: must be a number"),
        "infinite_rate": (good_config(rate=".inf"), "loop.rate_hz: must be a finite number"),
        "unachievable_rate": (good_config(rate="1e12"), "loop.rate_hz: must be <= 10000"),
        "missing_section": ("loop: {rate_hz: 1000}\nscenario: {duration: 0.1}\n", "robot: is required"),
        "no_model_file": (good_config(model=folder / "nope.urdf"), "robot.model: no such model file"),
        "unparseable_model": (good_config(model=folder / "unparseable.urdf"),
                              "unparseable.urdf:2 (<child>): joint 'j': child link 'nowhere'"),
        "unknown_model_format": (good_config(model=folder / "model.txt"), "unknown model format '.txt'"),
        "servo_unknown_model": (servo_config().replace("XM430-W350}", "XM999}", 1),
                                "servo_bus.joints[0].model: unknown"),
        "servo_bad_baudrate": (servo_config(baudrate="1234"), "servo_bus.baudrate: 1234 is no dynamixel baud rate"),
        "servo_infinite_rate": (servo_config(rate=".inf"), "servo_bus.rate: must be a finite number"),
        "servo_unachievable_rate": (servo_config(rate="1e12"), "servo_bus.rate: must be <= 10000"),
        "servo_timeouts": (servo_config(read_timeout="0.5", link_timeout="0.2"),
                           "servo_bus.link_timeout: must be longer than read_timeout"),
        "servo_timeout_below_cycle": (servo_config(command_timeout="0.001"),
                                      "servo_bus.command_timeout: must be at least one cycle, 1/rate = 0.002 s"),
        "start_timeout_below_period": (good.replace("start_timeout: 0.5", "start_timeout: 0.0005"),
                                       "loop.start_timeout: must be at least one loop period, 1/loop.rate_hz = 0.001"),
        "unmeasurable_timeout": (good.replace("  device:", "  stale_timeout: 1.0e-6\n  device:"),
                                 "serial.stale_timeout: must be >= 0.0001, got 1e-06 (a timeout shorter than one"),
        "infinite_timeout": (good.replace("  device:", "  link_timeout: .inf\n  device:"),
                             "serial.link_timeout: must be a finite number"),
        "command_timeout_below_period": (good.replace("  device:", "  command_timeout: 0.0002\n  device:"),
                                         "serial.command_timeout: must be at least one loop period"),
    }
    return _write(folder, texts)


GOOD_LEGGED = """\
legged:
  robot: go2
  f_min: 5.0
  events:
    - {at: 0.2, com_shift: [0.01, 0.0, 0.0], ramp: 0.5}
    - {at: 0.5, push: [0.0, 20.0, 0.0], duration: 0.1}
scenario:
  duration: 0.1
  criteria: {settle: 0.05, feet_in_contact: true}
"""


def bad_legged(folder: Path) -> dict[str, tuple[Path, str]]:
    """{class: (legged scenario file, text the one-line error must contain)}."""
    good = GOOD_LEGGED
    texts: dict[str, tuple[str | bytes, str]] = {
        **yaml_classes(good, "legged", "legged: {robot: g1}\n"),
        "unknown_top_key": (good + "loop: {rate_hz: 1}\n", "loop: unknown key"),
        "unknown_key": (good.replace("  f_min", "  fmin: 1\n  f_min"), "legged.fmin: unknown key"),
        "unknown_robot": (good.replace("go2", "spot"), "legged.robot: unknown robot 'spot'"),
        "wrong_type": (good.replace("f_min: 5.0", "f_min: strong"), "legged.f_min: must be a number"),
        "infinite": (good.replace("f_min: 5.0", "f_min: .inf"), "legged.f_min: must be a finite number"),
        "both_event_kinds": (good.replace("ramp: 0.5}", "ramp: 0.5, push: [1, 0, 0]}"),
                             "legged.events[0]: needs exactly one of push, com_shift"),
        "short_push": (good.replace("[0.0, 20.0, 0.0]", "[20.0]"), "legged.events[1].push: must be 3 finite"),
        "negative_time": (good.replace("at: 0.2", "at: -1"), "legged.events[0].at: must be >= 0"),
        "no_scenario": (good.split("scenario:")[0], "scenario: is required"),
        "zero_duration": (good.replace("duration: 0.1\n", "duration: 0\n"), "scenario.duration: must be > 0"),
        "sim_key": (good.replace("  f_min", "  sim: {time_stp: 0.001}\n  f_min"), "legged.sim.time_stp: unknown key"),
    }
    return _write(folder, texts)


def bad_campaigns(folder: Path, base: Path) -> dict[str, tuple[Path, str]]:
    """{class: (campaign file, text the one-line error must contain)}; `base`: a good scenario file."""
    (folder / "bad_base.yaml").write_text("robot: {model: nope.urdf}\nscenario: {duration: 1}\n")
    good = f"campaign:\n  base: {base}\n  runs: 4\n  vary:\n    sim.joint_damping: {{uniform: [0.0, 1.0]}}\n"
    texts: dict[str, tuple[str | bytes, str]] = {
        **yaml_classes(good, "campaign", "campaign: {base: x}\n"),
        "extra_section": (good + "loop: {rate_hz: 1}\n", "loop: unknown top-level key"),
        "unknown_key": (good.replace("  runs", "  rnus: 3\n  runs"), "campaign.rnus: unknown key"),
        "wrong_type": (good.replace("runs: 4", "runs: many"), "campaign.runs: must be an integer"),
        "no_base": (good.replace(str(base), str(folder / "nope.yaml")), "campaign.base: no such scenario file"),
        "bad_base": (good.replace(str(base), str(folder / "bad_base.yaml")), "campaign.base: the base scenario"),
        "bad_key": (good.replace("sim.joint_damping", "sim..x"), "is not a dotted key"),
        "two_kinds": (good.replace("[0.0, 1.0]}", "[0.0, 1.0], grid: [1, 2]}"), "needs exactly one of"),
        "low_above_high": (good.replace("[0.0, 1.0]", "[1.0, 0.0]"), "needs low <= high"),
        "not_in_base": (good.replace("sim.joint_damping", "sim.nope.x"), "sim.nope: unknown key"),
        "infinite": (good.replace("[0.0, 1.0]", "[0.0, .inf]"), "must be a finite number"),
    }
    return _write(folder, texts)


def _write(folder: Path, texts: dict) -> dict[str, tuple[Path, str]]:
    """Each text as folder/CLASS.yaml, plus a missing file: {class: (path, message)}."""
    out = {"missing_file": (folder / "absent.yaml", "no such config file")}
    for name, (text, message) in texts.items():
        path = folder / f"{name}.yaml"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        out[name] = (path, message)
    return out


def bad_logs(run_log: Path, folder: Path) -> dict[str, tuple[Path, str]]:
    """{class: (log file, text the one-line error must contain)}: every class of unusable log."""
    data = run_log.read_bytes()
    status = data.index(b"IIWA_STATUS")
    body = data.index(b"HIL_RUN_INFO") + len(b"HIL_RUN_INFO") + 8     # the run-info after its fingerprint
    variants = {
        "not_a_log": (b"robot: {}\n", "not an LCM log"),
        "empty": (b"", "the file is empty"),
        "channel_not_utf8": (data[:status] + b"\xff" + data[status + 1:], "not UTF-8"),
        "corrupt_run_info": (data[:body] + b"\xff" * 24 + data[body + 24:], "HIL_RUN_INFO"),
    }
    out = {"missing_file": (folder / "absent.lcmlog", "no such log file")}
    for name, (content, message) in variants.items():
        path = folder / f"{name}.lcmlog"
        path.write_bytes(content)
        out[name] = (path, message)
    return out


# --- fuzzing ---------------------------------------------------------------------------------------
def key_paths(cls, prefix=()) -> list[tuple]:
    """Every key path of a config dataclass, nested dataclasses included."""
    out = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        out.append(prefix + (f.name,))
        tp = hints[f.name]
        inner = [a for a in typing.get_args(tp) if dataclasses.is_dataclass(a)] or [tp]
        if dataclasses.is_dataclass(inner[0]):
            out += key_paths(inner[0], prefix + (f.name,))
    return out


ODD = [None, True, False, 0, -1, 1, 2 ** 70, 1e400, -1e400, 1e-320, "", "x", "1000", [], [1, "a"], [[1.0]] * 3,
       {}, {"a": 1}, {"rate_hz": 1}, [None], "\u00e9\x00", list(range(40)), [0.1] * 7]


def key_edits(paths: list[tuple]):
    """A strategy of one to four edits of a config mapping at these key paths: set to a value of an odd
    type or range, an unknown key beside it, or deleted (apply_edits applies them)."""
    from hypothesis import strategies as st
    edit = st.one_of(
        st.tuples(st.just("set"), st.sampled_from(paths), st.sampled_from(ODD)),
        st.tuples(st.just("unknown"), st.sampled_from(paths), st.sampled_from(["rate", "kp ", "Loop", "x_y", "1"])),
        st.tuples(st.just("delete"), st.sampled_from(paths), st.just(None)),
    )
    return st.lists(edit, min_size=1, max_size=4)


def apply_edits(data: dict, edits) -> dict:
    for kind, path, value in edits:
        if kind == "set":
            data = _set(data, path, value)
        elif kind == "unknown":
            data = _set(data, path[:-1] + (value,), 1)
        else:
            data = _delete(data, path)
    return data


def _set(data: dict, path: tuple, value) -> dict:
    data = copy.deepcopy(data)
    node = data
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value
    return data


def _delete(data: dict, path: tuple) -> dict:
    data = copy.deepcopy(data)
    node = data
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return data
    node.pop(path[-1], None)
    return data


def load_or_error(loader, folder: Path, content: bytes):
    """loader(a file of `content`): its result, or the ConfigError it raised, which must name the file;
    anything else escapes (and fails the fuzzer)."""
    from drivers.core.schema import ConfigError
    path = folder / "fuzz.yaml"
    path.write_bytes(content)
    try:
        return loader(path)
    except ConfigError as e:
        assert "fuzz.yaml" in str(e), e
        return e


def fuzz_settings(examples: int):
    """Hypothesis settings for the suite: a fixed budget of examples, reproducible (derandomized), no
    example database written into the worktree."""
    from hypothesis import HealthCheck, settings
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00",
               b"\x00\x00\x00\x00", b"\x7f\xf8\x00\x00\x00\x00\x00\x00"]


def mutations():
    """A strategy of functions bytes -> bytes: one to four random edits (bit flip, overwrite with an
    interesting value, delete, insert, duplicate a slice, truncate)."""
    from hypothesis import strategies as st
    position = st.floats(0, 1)
    edit = st.one_of(
        st.tuples(st.just("flip"), position, st.integers(0, 7)),
        st.tuples(st.just("set"), position, st.sampled_from(INTERESTING)),
        st.tuples(st.just("delete"), position, st.integers(1, 16)),
        st.tuples(st.just("insert"), position, st.binary(min_size=1, max_size=16)),
        st.tuples(st.just("repeat"), position, st.integers(1, 64)),
        st.tuples(st.just("truncate"), position, st.just(0)),
    )
    return st.lists(edit, min_size=1, max_size=4).map(lambda edits: lambda data: _apply(data, edits))


def _apply(data: bytes, edits) -> bytes:
    out = bytearray(data)
    for kind, where, arg in edits:
        i = min(int(where * len(out)), max(0, len(out) - 1))
        if kind == "flip" and out:
            out[i] ^= 1 << arg
        elif kind == "set":
            out[i:i + len(arg)] = arg
        elif kind == "delete":
            del out[i:i + arg]
        elif kind == "insert":
            out[i:i] = arg
        elif kind == "repeat":
            out[i:i] = out[i:i + arg]
        elif kind == "truncate":
            del out[i:]
    return bytes(out)
