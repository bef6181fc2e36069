"""Allocation-free encoders and decoders for the 1 kHz path.

    StatusDecoder(kind="iiwa", num_joints=7, channel=None)      status -> arrays (HIL loop)
    CommandEncoder(kind="iiwa", num_joints=7, fields=None, channel=None)
                                                                 arrays -> command (HIL loop)
    CommandDecoder(kind="iiwa", num_joints=7, channel=None)     command -> arrays (driver, sim)
    StatusEncoder(kind="iiwa", num_joints=7, channel=None)      arrays -> status (driver, sim)
    RobotStateDecoder(joint_names=None, num_joints=None, channel=None)
    RobotStateEncoder(joint_names, channel=None)                 lcmt_robot_state
    TelemetryEncoder(num_joints, controller_name, channel=None)  lcmt_hil_telemetry (HIL loop)
    WsgCommandEncoder / WsgCommandDecoder, WsgStatusEncoder / WsgStatusDecoder
                                                                 lcmt_schunk_wsg_* (WSG, Panda hand)
    ForceTorqueEncoder / ForceTorqueDecoder                      lcmt_force_torque

kind is "iiwa" (lcmt_iiwa_*) or "panda" (lcmt_panda_*). Decoders own their
output arrays and expose them as attributes; `decode(data) -> bool` never
raises for a bad message. Encoders write into a buffer they own; `encode(...)`
returns a read-only memoryview of it (None if the input is invalid) and
`publish(lc, channel=None) -> bool` sends the last good message without a
copy. Both keep `last_error` (a messages.errors.MessageError, built on
access), `counters` ({counter name: count}) and `ok_count`, and offer
`decode_or_raise` / `encode_or_raise` for code outside the loop.

Bytes on the wire are identical to the lcm-gen classes' encode(). Not
thread-safe: one object per thread.
"""
try:
    from messages._codec import (
        ERROR_NAMES,
        CommandDecoder,
        CommandEncoder,
        ForceTorqueDecoder,
        ForceTorqueEncoder,
        RobotStateDecoder,
        RobotStateEncoder,
        StatusDecoder,
        StatusEncoder,
        TelemetryEncoder,
        WsgCommandDecoder,
        WsgCommandEncoder,
        WsgStatusDecoder,
        WsgStatusEncoder,
    )
except ImportError as error:  # pragma: no cover - depends on the build
    raise ImportError(
        "messages._codec is not built; run `python setup.py build_ext --inplace` "
        "(make build) or `cythonize -i -3 messages/_codec.pyx`") from error

__all__ = ["ERROR_NAMES", "CommandDecoder", "CommandEncoder", "ForceTorqueDecoder", "ForceTorqueEncoder",
           "RobotStateDecoder", "RobotStateEncoder", "StatusDecoder", "StatusEncoder", "TelemetryEncoder",
           "WsgCommandDecoder", "WsgCommandEncoder", "WsgStatusDecoder", "WsgStatusEncoder"]
