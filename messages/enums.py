"""IntEnums of the hilmsg constants, so code can say SafetyState.FAULT.

The values are defined once, in the .lcm sources; these enums are built from
the generated classes.
"""
from enum import IntEnum

from messages.hilmsg import lcmt_hil_joint_plan, lcmt_hil_safety_event, lcmt_hil_telemetry


def _constants(name, message_type, prefix=""):
    members = {key[len(prefix):]: value for key, value in vars(message_type).items()
               if key.isupper() and key.startswith(prefix) and isinstance(value, int)}
    return IntEnum(name, members, module=__name__)


SafetyState = _constants("SafetyState", lcmt_hil_safety_event, "SAFETY_")
"""INIT, RUNNING, FAULT, SAFE_STOP: the loop's safety state machine."""

FaultCode = _constants("FaultCode", lcmt_hil_safety_event, "FAULT_")
"""Why the loop left RUNNING: NONE, STATUS_TIMEOUT, STATUS_INVALID, ..."""

ControllerState = _constants("ControllerState", lcmt_hil_telemetry, "CONTROLLER_")
"""IDLE, RUNNING, HOLDING, STOPPED."""

PlanInterpolation = _constants("PlanInterpolation", lcmt_hil_joint_plan)
"""FIRST_ORDER_HOLD, CUBIC_HERMITE, QUINTIC_HERMITE."""
