"""LCM channel names and the default LCM URL.

The Drake channels default to the names Drake's drivers, DrakeVisualizer,
ContactResultsToLcm and Meldis use. `Channels` bundles the names one robot's
loop uses; `Channels.for_robot` derives them for a robot kind and an optional
prefix, which keeps several robots on one LCM bus apart.
"""
import dataclasses
import random
import socket

DEFAULT_LCM_URL = "udpm://239.255.76.67:7667?ttl=0"
"""LCM's default multicast group with ttl=0: messages stay on this host."""


def private_lcm_url() -> str:
    """LCM's multicast group with ttl=0 on a free port of its own, so concurrent runs (tests, `hil
    demo`, `hil regress`'s chains, benchmarks) do not cross-talk: a random port no socket on this host
    is bound to (LCM binds with SO_REUSEADDR, so a bind without it fails on a port in use). The port is
    below the kernel's ephemeral range (ip_local_port_range): a port the kernel hands to some socket
    without SO_REUSEADDR would make LCM's bind fail with "Address already in use"."""
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    for _ in range(50):
        port = random.randint(10000, max(10001, low - 1))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.bind(("", port))
            except OSError:
                continue                    # in use: another session's LCM, or any other socket
        return f"udpm://239.255.76.67:{port}?ttl=0"
    raise OSError(f"no free UDP port for a private LCM URL: 50 random ports of 10000..{low - 1} are all in use")

# Drake's drivers and simulated drivers.
IIWA_STATUS = "IIWA_STATUS"
IIWA_COMMAND = "IIWA_COMMAND"
PANDA_STATUS = "PANDA_STATUS"
PANDA_COMMAND = "PANDA_COMMAND"
# Grippers (lcmt_schunk_wsg_command / lcmt_schunk_wsg_status): drake-schunk-driver's and Drake's
# SchunkWsgDriver defaults, and drake-franka-driver's hand driver (--lcm_command_channel/--lcm_status_channel).
SCHUNK_WSG_STATUS = "SCHUNK_WSG_STATUS"
SCHUNK_WSG_COMMAND = "SCHUNK_WSG_COMMAND"
PANDA_HAND_STATUS = "PANDA_HAND_STATUS"
PANDA_HAND_COMMAND = "PANDA_HAND_COMMAND"
GRIPPER_CHANNELS = {"wsg": (SCHUNK_WSG_STATUS, SCHUNK_WSG_COMMAND),
                    "panda_hand": (PANDA_HAND_STATUS, PANDA_HAND_COMMAND)}
"""(status, command) channel of each gripper kind."""
FT_SENSOR = "FT_SENSOR"          # lcmt_force_torque of a wrist force/torque sensor

# drake_visualizer / Meldis. DrakeVisualizer appends "_ILLUSTRATION",
# "_PROXIMITY" or "_PERCEPTION" to the first three when its
# use_role_channel_suffix parameter is set.
DRAKE_VIEWER_LOAD_ROBOT = "DRAKE_VIEWER_LOAD_ROBOT"
DRAKE_VIEWER_DRAW = "DRAKE_VIEWER_DRAW"
DRAKE_VIEWER_DEFORMABLE = "DRAKE_VIEWER_DEFORMABLE"
DRAKE_VIEWER_STATUS = "DRAKE_VIEWER_STATUS"      # lcmt_viewer_command from drake_visualizer
CONTACT_RESULTS = "CONTACT_RESULTS"

# This project's (hilmsg types).
HIL_TELEMETRY = "HIL_TELEMETRY"
HIL_SAFETY = "HIL_SAFETY"
HIL_ESTOP = "HIL_ESTOP"
HIL_PLAN = "HIL_PLAN"
DRIVER_HEALTH = "DRIVER_HEALTH"
HIL_RUN_INFO = "HIL_RUN_INFO"          # lcmt_hil_run_info: a run's config and summary, for its log
FLOATING_BASE_STATUS = "FLOATING_BASE_STATUS"    # lcmt_hil_floating_base_status (legged robots)
JOINT_COMMAND = "JOINT_COMMAND"                  # lcmt_hil_joint_command (legged robots)

_ROBOT_CHANNELS = {"iiwa": (IIWA_STATUS, IIWA_COMMAND), "panda": (PANDA_STATUS, PANDA_COMMAND),
                   "floating_base": (FLOATING_BASE_STATUS, JOINT_COMMAND)}


@dataclasses.dataclass(frozen=True)
class Channels:
    """The channels one robot's HIL loop, driver and viewer bridge use."""

    status: str = IIWA_STATUS
    command: str = IIWA_COMMAND
    viewer_load_robot: str = DRAKE_VIEWER_LOAD_ROBOT
    viewer_draw: str = DRAKE_VIEWER_DRAW
    viewer_status: str = DRAKE_VIEWER_STATUS
    contact_results: str = CONTACT_RESULTS
    telemetry: str = HIL_TELEMETRY
    safety: str = HIL_SAFETY
    estop: str = HIL_ESTOP
    plan: str = HIL_PLAN
    driver_health: str = DRIVER_HEALTH
    run_info: str = HIL_RUN_INFO

    @classmethod
    def for_robot(cls, kind="iiwa", prefix="", **overrides):
        """Channels for a robot of `kind` ("iiwa", "panda" or "floating_base": a legged robot).

        `prefix` is prepended to the robot's own channels (status, command,
        telemetry, safety, plan, driver_health, run_info), e.g. "LEFT_" gives
        "LEFT_IIWA_STATUS". The viewer and contact channels keep Drake's names
        (Meldis listens on those) and the e-stop stays cell-wide; any field can
        be set explicitly with a keyword, e.g. viewer_draw="DRAKE_VIEWER_DRAW_ILLUSTRATION".
        """
        if kind not in _ROBOT_CHANNELS:
            raise ValueError(f"unknown robot kind {kind!r}; expected one of {sorted(_ROBOT_CHANNELS)}")
        unknown = overrides.keys() - {field.name for field in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"unknown channel key(s) {sorted(unknown)}; "
                             f"expected 'prefix' or some of {[field.name for field in dataclasses.fields(cls)]}")
        status, command = _ROBOT_CHANNELS[kind]
        names = {
            "status": prefix + status,
            "command": prefix + command,
            "telemetry": prefix + HIL_TELEMETRY,
            "safety": prefix + HIL_SAFETY,
            "plan": prefix + HIL_PLAN,
            "driver_health": prefix + DRIVER_HEALTH,
            "run_info": prefix + HIL_RUN_INFO,
        }
        names.update(overrides)
        return cls(**names)
