"""The generated types: import style, Drake compatibility, own types' fingerprints."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import messages
from messages.registry import fingerprint, type_for_fingerprint
from messages.testing import random_message

REPO = Path(__file__).resolve().parents[2]

# Changing a hilmsg type changes its wire format: update the value here on purpose.
PINNED_HIL_FINGERPRINTS = {
    "lcmt_hil_driver_health": 0x9dd161eef5dba2ff,
    "lcmt_hil_estop": 0x84bffefb3e57d1fb,
    "lcmt_hil_floating_base_status": 0x9b95d02ec5723e39,
    "lcmt_hil_joint_command": 0xc5838bfdd91d0b72,
    "lcmt_hil_joint_plan": 0xa9730459269674f0,
    "lcmt_hil_run_info": 0xf6e6bf5cefa52450,
    "lcmt_hil_safety_event": 0x728c4225dc32026c,
    "lcmt_hil_telemetry": 0x9e375c6119f0ddee,
}

REQUIRED_DRAKE_TYPES = {
    "lcmt_iiwa_status", "lcmt_iiwa_command", "lcmt_panda_status", "lcmt_panda_command",
    "lcmt_robot_state", "lcmt_viewer_load_robot", "lcmt_viewer_link_data",
    "lcmt_viewer_geometry_data", "lcmt_viewer_draw", "lcmt_viewer_command", "lcmt_contact_results_for_viz",
    "lcmt_point_pair_contact_info_for_viz", "lcmt_hydroelastic_contact_surface_for_viz",
    "lcmt_hydroelastic_quadrature_per_point_data_for_viz", "lcmt_quaternion", "lcmt_point",
    "lcmt_force_torque", "lcmt_schunk_wsg_command", "lcmt_schunk_wsg_status",
}


def _drake_class(message_type):
    drake = pytest.importorskip("drake", reason="pydrake (pip install drake) is not installed")
    return getattr(drake, message_type.__name__)


def _constants(message_type):
    return {key: value for key, value in vars(message_type).items()
            if not key.startswith("_") and isinstance(value, int)}


def test_import_gives_classes_like_drake():
    from messages import lcmt_hil_telemetry, lcmt_iiwa_status
    assert isinstance(lcmt_iiwa_status, type)
    assert lcmt_iiwa_status is messages.drake.lcmt_iiwa_status
    assert isinstance(lcmt_hil_telemetry, type)
    assert {cls.__name__ for cls in messages.DRAKE_TYPES} == REQUIRED_DRAKE_TYPES
    assert set(messages.__all__) >= REQUIRED_DRAKE_TYPES | set(PINNED_HIL_FINGERPRINTS)


@pytest.mark.parametrize("message_type", messages.DRAKE_TYPES, ids=lambda cls: cls.__name__)
def test_same_definition_and_fingerprint_as_drake(message_type):
    drake_type = _drake_class(message_type)
    assert fingerprint(message_type) == fingerprint(drake_type)
    assert message_type.__slots__ == drake_type.__slots__
    assert message_type.__dimensions__ == drake_type.__dimensions__
    assert ([name.rsplit(".", 1)[-1] for name in message_type.__typenames__]
            == [name.rsplit(".", 1)[-1] for name in drake_type.__typenames__])
    assert _constants(message_type) == _constants(drake_type)


@pytest.mark.parametrize("message_type", messages.DRAKE_TYPES, ids=lambda cls: cls.__name__)
def test_round_trip_with_drake(message_type, rng):
    drake_type = _drake_class(message_type)
    for _ in range(20):
        ours = random_message(message_type, rng).encode()
        assert drake_type.decode(ours).encode() == ours
        theirs = random_message(drake_type, rng).encode()
        assert message_type.decode(theirs).encode() == theirs
        assert ours[:8] == theirs[:8]


@pytest.mark.parametrize("message_type", messages.HIL_TYPES, ids=lambda cls: cls.__name__)
def test_hil_types_are_pinned_and_round_trip(message_type, rng):
    assert fingerprint(message_type) == PINNED_HIL_FINGERPRINTS[message_type.__name__]
    for _ in range(20):
        data = random_message(message_type, rng).encode()
        assert message_type.decode(data).encode() == data


def test_fingerprint_lookup():
    for message_type in messages.MESSAGE_TYPES:
        assert type_for_fingerprint(message_type().encode()) is message_type
        assert type_for_fingerprint(fingerprint(message_type)) is message_type
    assert type_for_fingerprint(b"\0" * 8) is None


def test_nested_types_resolve_in_an_installed_copy(tmp_path, rng):
    """Generated code imports its nested types as `messages.drake.X`; that must work
    from an installed copy of the package, with neither the repo nor cwd on sys.path."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "messages", site / "messages",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    data = {name: random_message(getattr(messages, name), rng, max_length=3).encode().hex()
            for name in ("lcmt_viewer_load_robot", "lcmt_contact_results_for_viz")}
    script = (
        "import sys, messages\n"
        f"assert messages.__file__.startswith({str(site)!r}), messages.__file__\n"
        f"for name, hexdata in {data!r}.items():\n"
        "    raw = bytes.fromhex(hexdata)\n"
        "    assert getattr(messages, name).decode(raw).encode() == raw\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_enums_come_from_the_lcm_constants():
    from messages.enums import ControllerState, FaultCode, PlanInterpolation, SafetyState
    event = messages.lcmt_hil_safety_event
    assert [state.name for state in SafetyState] == ["INIT", "RUNNING", "FAULT", "SAFE_STOP"]
    assert SafetyState.SAFE_STOP == event.SAFETY_SAFE_STOP
    assert FaultCode.ESTOP == event.FAULT_ESTOP and FaultCode.NONE == 0
    assert ControllerState.RUNNING == messages.lcmt_hil_telemetry.CONTROLLER_RUNNING
    assert PlanInterpolation.CUBIC_HERMITE == messages.lcmt_hil_joint_plan.CUBIC_HERMITE
