"""Inputs for the bad-input tests: a good run config (with sim, serial and scenario sections) as text,
its bad variants by class, and a real run log recorded in lockstep with its corruptions."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import IIWA_URDF

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
"""


def bad_configs(folder: Path) -> dict[str, tuple[Path, str]]:
    """{class: (config file, text the one-line error must contain)}: every class of bad config."""
    (folder / "unparseable.urdf").write_text(UNPARSEABLE_URDF)
    (folder / "model.txt").write_text(IIWA_URDF.read_text())
    good = good_config()
    texts: dict[str, tuple[str | bytes, str]] = {
        "not_utf8": (good.encode() + b"# caf\xe9\n", "not UTF-8"),
        "not_yaml": ("robot: [unclosed\n", "not valid YAML at line"),
        "duplicate_key": (good + "loop:\n  rate_hz: 500\n", "duplicate key 'loop'"),
        "python_tag": (good + "lcm: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
        "not_a_mapping": ("- robot\n- loop\n", "the top level must be a mapping"),
        "unknown_key": (good.replace("  start_timeout", "  rat_hz: 3\n  start_timeout"), "loop.rat_hz: unknown key"),
        "wrong_type": (good_config(rate="fast"), "loop.rate_hz: must be a number"),
        "infinite_rate": (good_config(rate=".inf"), "loop.rate_hz: must be a finite number"),
        "unachievable_rate": (good_config(rate="1e12"), "loop.rate_hz: must be <= 10000"),
        "missing_section": ("loop: {rate_hz: 1000}\nscenario: {duration: 0.1}\n", "robot: is required"),
        "no_model_file": (good_config(model=folder / "nope.urdf"), "robot.model: no such model file"),
        "unparseable_model": (good_config(model=folder / "unparseable.urdf"),
                              "unparseable.urdf:2 (<child>): joint 'j': child link 'nowhere'"),
        "unknown_model_format": (good_config(model=folder / "model.txt"), "unknown model format '.txt'"),
    }
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
