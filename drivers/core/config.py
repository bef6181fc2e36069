"""The run config: one YAML file for `hil run`, `hil sim`, `hil demo`, `hil viz`, validated at start.

Top-level sections (in the config reference docs/gen/config_reference.py generates from these
dataclasses): robot, lcm, channels, loop, controller, trajectory, safety, telemetry, sensors, viz, sim,
serial, servo_bus. Paths are relative to the config file's folder.
"""
from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Optional, Union

import yaml
from annotated_types import Ge, Gt, Le, Len, Lt

from messages.channels import DEFAULT_LCM_URL, GRIPPER_CHANNELS

from .paths import CONFIGS, package_map
from .schema import ConfigError, Fraction, Help, NonNegative, Positive, Rate, Timeout, load, merge, read_yaml


@dataclass
class KukaDriverConfig:
    """robot.kuka_driver: what the loop keeps behind drake-iiwa-driver's kuka_driver (robot.driver
    kuka_driver, or auto when the first status is kuka_driver's)."""
    # s after the first status before the first command: kuka_driver aborts on a command within its
    # --start_command_guard (0.25 s)
    start_guard: NonNegative = 0.3


@dataclass
class PayloadConfig:
    """A rigid load on a frame F of the arm: robot.payload (the controller's model: gravity compensation and
    the model-based laws carry it) or sim.payload (the simulated robot only)."""

    mass: NonNegative = 0.0          # kg; 0: no payload
    com: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # m, p_FBcm in F
    # kg·m² about Bcm, in F: Ixx Iyy Izz (and Ixy Ixz Iyz); physically valid
    inertia: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    frame: Optional[str] = None                   # F; default: robot.end_effector, else the model's last frame


@dataclass
class BasePoseConfig:
    """robot.base_pose: X_WA, where the robot's base A stands in the world (a station's arms side by side)."""
    xyz: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # m, p_WA
    rpy: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # rad, R_WA


@dataclass
class RobotConfig:
    # URDF or SDF file, or a package:// URI (e.g. package://example-robot-data/robots/...), parsed as Drake
    # parses it; protocol floating_base: a dynamics_cy.planning.legged_models preset (go2, g1)
    model: Annotated[str, Help("URDF or SDF file of the robot, or a legged preset")]
    # iiwa, panda: Drake's LCM status/command types; floating_base: a legged robot
    # (lcmt_hil_floating_base_status / lcmt_hil_joint_command; controller.type whole_body, docs/wbc.md)
    protocol: Literal["iiwa", "panda", "floating_base"] = "iiwa"
    weld: Optional[str] = None            # a frame to weld to the world, if the model does not
    end_effector: Optional[str] = None    # frame used by Cartesian control (default: the last frame)
    # What the command message carries (docs/hil.md, Commands): torque, position_and_torque (iiwa),
    # position, velocity (panda); the positions are q_d while RUNNING, else the held measured q.
    command: Literal["torque", "position_and_torque", "position", "velocity"] = "torque"
    # The driver in front of the robot: drake_sim (Drake's simulated drivers, `hil sim`'s default),
    # kuka_driver or franka_driver (the real ones): sets the start guard and the command's clock.
    # auto: an iiwa's driver is told from its first status (kuka_driver's utime −1 or NaN
    # joint_position_ipo: its start guard is kept), a Panda's is taken for drake_sim.
    driver: Literal["auto", "drake_sim", "kuka_driver", "franka_driver"] = "auto"
    # the keys of one driver, used behind it: kuka_driver's start guard (franka_driver's command stamp on
    # its wall clock and Drake's simulated drivers take none)
    kuka_driver: KukaDriverConfig = field(default_factory=KukaDriverConfig)
    velocity_gain: NonNegative = 10.0   # 1/s: v_cmd = v_d + gain (q_d − q)
    # package name -> folder or package.xml (whose <name> must be that name; relative paths from the
    # config's folder), added to the map (drivers.core.paths.package_map: Drake's default map and the
    # installed packages, e.g. example-robot-data, ROS_PACKAGE_PATH) that resolves package:// URIs of
    # robot.model and of its meshes; an entry replaces a remote package of Drake's default map (a local
    # copy of drake_models, for an offline lab)
    package_map: dict[str, str] = field(default_factory=dict)
    # the joints the protocol drives, in its order; every other movable joint is welded at position 0
    # (a Panda's fingers). None: the model's actuated joints, or every movable joint if it has no
    # <transmission> (an actuator with the joint's URDF effort limit; docs/real_robots.md, Any arm)
    actuated_joints: Optional[list[str]] = None
    # a load the controller's model carries (a tool, a gripper; `hil identify --out` writes it): added to the
    # inertia of F's body on the compiled model every law shares (drivers.core.robot.attach_payload)
    payload: Optional[PayloadConfig] = None
    # the base welded to the world at X_WA (in the controller's model and the simulated plant alike): a URDF's
    # joints from its `world` link are moved by X_WA, else robot.weld's frame is welded at X_WA; None: as modelled
    base_pose: Optional[BasePoseConfig] = None


@dataclass
class LcmConfig:
    url: str = DEFAULT_LCM_URL     # LCM's URL: udpm:// multicast (ttl=0: this machine only), memq:// in one process


@dataclass
class LoopConfig:
    rate_hz: Rate = 1000.0                 # ticks per second
    deadline_budget_us: Positive = 200.0   # lateness above it is a miss
    spin_us: NonNegative = 300.0           # sleep until deadline - spin, then spin
    duration: Optional[Positive] = None    # seconds; None runs until stopped
    start_timeout: Timeout = 5.0         # wait this long for the first status
    cpus: Optional[list[int]] = None          # pin the loop's process to these CPUs (sched_setaffinity)
    priority: Optional[Annotated[int, Ge(1), Le(99)]] = None   # SCHED_FIFO priority (root, CAP_SYS_NICE or ulimit -r)
    lock_memory: bool = False                 # mlockall: no page faults in the loop (root, CAP_IPC_LOCK, ulimit -l)
    gc: Literal["on", "off"] = "off"          # Python's cyclic garbage collector during the run


Gains = list[float]


@dataclass
class WholeBodyConfig:
    """controller.type whole_body (dynamics_cy.planning.whole_body, docs/wbc.md): the QP's contact model and weights."""
    mu: Positive = 0.6               # friction coefficient: no foot is asked for more than μ f_n
    # faces of a point foot's pyramid inscribed in its friction cone (4: the inner pyramid)
    friction_facets: Annotated[int, Ge(3)] = 8
    f_min: NonNegative = 0.0         # N, least normal force on a foot in contact
    # N·m: one limit or one per actuated joint, tightening the model's (URDF effort); None: the model's
    effort_limit: Optional[Union[Positive, list[Positive]]] = None
    weights: Any = field(default_factory=dict)   # dynamics_cy.planning.whole_body.WholeBodyWeights fields
    # the feet (drivers.legged_contacts): [{frame, point: [x, y, z]} or {frame, sole: {center, length,
    # width}}]; None: the preset's
    contacts: Any = None
    foot_loss_ticks: Annotated[int, Ge(1)] = 5    # statuses in a row of a foot loss (docs/wbc.md): safe state
    # a foot reporting no contact is lost when the QP asks it for more than this share of m g / feet
    foot_loss_load: NonNegative = 0.5
    safe_damping: NonNegative = 2.0  # N·m·s/rad of the safe (damping) command


BUILTIN_CONTROLLERS = ("gravity_compensation", "joint_pd", "computed_torque", "joint_impedance",
                       "cartesian_impedance", "whole_body")


@dataclass
class FrictionCompensationConfig:
    """controller.friction_compensation: the built-in laws add τ_f = b_v∘v + b_c∘tanh(v/ε), the joints'
    identified friction (`hil identify --out`); the model-based laws then drop their own d∘v (the model's
    joint damping, which b_v includes), and b_v is capped as that damping is (hil.controllers)."""
    viscous: list[NonNegative] = field(default_factory=list)   # N·m·s/rad, b_v: one per joint (or one for all)
    coulomb: list[NonNegative] = field(default_factory=list)   # N·m, b_c: one per joint (or one for all)
    smoothing: Positive = 0.01       # rad/s, ε of the smooth sign tanh(v/ε)


@dataclass
class ControllerConfig:
    # a built-in law (BUILTIN_CONTROLLERS) or a user's, by import path "package.module:Name" (a
    # hil.Controller subclass or a function law(state, command); docs/controllers.md)
    type: str = "computed_torque"
    # a user law's Params (validated by hil); the built-ins take theirs in this section (kp, kd, cartesian_*)
    params: dict[str, Any] = field(default_factory=dict)
    # 1/s² (computed torque) or N·m/rad, one value for all joints or one per joint; unset: 100, capped per
    # joint at half its stability bound at the loop period (docs/controllers.md, Gains and the loop period)
    kp: Gains | None = None
    # 1/s or N·m·s/rad, likewise; unset: 20, capped per joint at half its stability bound (the iiwa's
    # light wrist gets less: 20 on every joint is refused there)
    kd: Gains | None = None
    # [rotational N·m/rad; translational N/m]
    cartesian_stiffness: Annotated[list[float], Len(6, 6)] = field(
        default_factory=lambda: [30.0, 30.0, 30.0, 500.0, 500.0, 500.0])
    cartesian_damping: Annotated[list[float], Len(6, 6)] = field(   # [rotational N·m·s/rad; translational N·s/m]
        default_factory=lambda: [3.0, 3.0, 3.0, 40.0, 40.0, 40.0])
    nullspace_damping: NonNegative = 1.0    # N·m·s/rad: cartesian_impedance's joint damping d (τ −= d v)
    robot_compensates_gravity: bool = False   # the robot adds gravity compensation itself (e.g. a real iiwa)
    # µs the law's update() may take per tick; None: half the loop period
    budget_us: Optional[Positive] = None
    # this many consecutive ticks over budget_us are a CONTROLLER fault (real time; lockstep counts them)
    overrun_limit: Annotated[int, Ge(1)] = 10
    whole_body: WholeBodyConfig = field(default_factory=WholeBodyConfig)   # type whole_body
    # the built-in joint and Cartesian laws: add the identified joint friction (None: none)
    friction_compensation: Optional[FrictionCompensationConfig] = None


@dataclass
class GripperPoint:
    """A waypoint's gripper command (the trajectory's gripper track), sent as the move to it begins."""
    width: NonNegative               # m between the fingers
    force: Optional[Positive] = None  # N, the grip-force limit; None: gripper.force


@dataclass
class Waypoint:
    q: list[float]             # the joint positions, rad (m for prismatic joints)
    duration: Positive = 2.0   # seconds to reach it from the previous one
    # the gripper's command from this segment's start (needs the gripper section); None: unchanged
    gripper: Optional[GripperPoint] = None


@dataclass
class ExcitationConfig:
    """trajectory.excitation: per joint a finite Fourier series q_j(t) = q0_j + w(t) Σ_l (a_jl sin(ω_f l t)
    − b_jl cos(ω_f l t)) / (ω_f l), ω_f = 2π base_frequency, ramped in and out by w (docs/hil.md, Excitation)."""
    base_frequency: Annotated[float, Gt(0), Le(10)] = 0.1    # Hz, f_f: the series' period is 1/f_f
    harmonics: Annotated[int, Ge(1), Le(20)] = 5    # L: the highest frequency is L·f_f (band-limited)
    periods: Annotated[int, Ge(1)] = 1              # the series runs this many periods, periods/f_f s
    ramp: Positive = 1.0    # s of the smooth (quintic) window at each end: starts and stops at rest
    q0: Optional[list[float]] = None   # the centre, rad; none: the position at start
    seed: Annotated[int, Ge(0)] = 0    # of the random initial coefficients
    optimize: bool = True   # minimise the regressor's condition number (offline, at setup)
    iterations: Annotated[int, Ge(1)] = 40   # optimize: at most this many L-BFGS-B iterations
    samples: Annotated[int, Ge(10)] = 100    # optimize: regressor samples over the series
    # optimize: the payload block at this frame (none: the end effector's) with the joint friction columns
    frame: Optional[str] = None
    acceleration_limit: Positive = 5.0   # rad/s², every joint, when the model gives none
    position_margin: NonNegative = 0.05  # rad kept inside the joint limits (beyond safety.position_margin)


@dataclass
class TrajectoryConfig:
    # docs/hil.md, Trajectories
    type: Literal["hold", "quintic", "waypoints", "stream", "cartesian", "excitation"] = "hold"
    goal: Optional[list[float]] = None          # quintic: joint goal
    duration: Positive = 2.0                    # quintic: seconds to the goal
    waypoints: list[Waypoint] = field(default_factory=list)   # waypoints: the joint positions to pass
    loop: bool = False                          # waypoints: go back to the start and repeat
    channel: Optional[str] = None               # stream: lcmt_robot_state or lcmt_hil_joint_plan channel
    stream_type: Literal["robot_state", "joint_plan"] = "robot_state"   # stream: the channel's message type
    goal_position: Optional[Annotated[list[float], Len(3, 3)]] = None   # cartesian: p_WG
    goal_rpy: Optional[Annotated[list[float], Len(3, 3)]] = None        # cartesian: R_WG
    velocity_scale: Annotated[float, Gt(0), Lt(1)] = 0.5   # cartesian: of the joint velocity limits
    acceleration_scale: Fraction = 0.5          # cartesian: of the joint acceleration limits
    effort_scale: Optional[Fraction] = None     # cartesian: also keep the torque within this share of the effort limits
    excitation: ExcitationConfig = field(default_factory=ExcitationConfig)   # excitation: the Fourier series


@dataclass
class CollisionCapsule:
    """A capsule of the guard's model fixed in a named frame F (a gripper, a tool): the segment
    [p0, p1] in F grown by `radius`."""
    name: Annotated[str, Help("named in the events and the allowed pairs")]
    frame: Annotated[str, Help("a frame of the robot's model, e.g. iiwa_link_ee")]
    p0: Annotated[list[float], Len(3, 3)]         # m, p_FP0 in F
    p1: Annotated[list[float], Len(3, 3)]         # m, p_FP1 in F
    radius: Positive                              # m


@dataclass
class CollisionBox:
    """A box fixed in the world the robot's capsules are checked against (a table, a wall)."""
    name: Annotated[str, Help("named in the events and the allowed pairs")]
    size: Annotated[list[Positive], Len(3, 3)]    # m: the box's edges along its x y z
    xyz: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # m, p_WB
    rpy: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # rad, R_WB


@dataclass
class CollisionPlane:
    """A plane of the world: the obstacle is the half space below it, n̂·(x − point) ≤ 0 (a floor, a wall)."""
    name: Annotated[str, Help("named in the events and the allowed pairs")]
    normal: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 1.0])   # towards free space
    point: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])    # m, a point on it

    def __post_init__(self):
        if not any(self.normal):
            raise ValueError(f"plane {self.name!r}: normal must not be zero")


@dataclass
class CollisionPairPolicy:
    """Margins of the pairs that involve both names (capsule, body, box or plane names)."""
    pair: Annotated[list[str], Len(2, 2)]         # [name, name], either order
    warn_distance: Optional[NonNegative] = None   # m; default: the guard's
    stop_distance: Optional[NonNegative] = None   # m; default: the guard's


@dataclass
class CollisionConfig:
    """safety.collision: the self-collision and workspace guard (hil.collision_guard, docs/hil.md,
    Collision guard): capsules fitted to the model's collision geometry, checked every tick."""
    enabled: bool = True              # check every tick (a model without collision geometry has nothing to check)
    warn_distance: NonNegative = 0.04     # m: below it the approach is limited (policy)
    stop_distance: NonNegative = 0.01     # m: below it FAULT COLLISION_IMMINENT and the safe command
    policy: Literal["damping", "repulsive", "none"] = "damping"   # below warn_distance, along the witness normal
    damping: NonNegative = 300.0      # N·s/m against the approach speed, full at stop_distance (both policies)
    stiffness: NonNegative = 2000.0   # N/m, repulsive: a spring from warn_distance
    max_force: Positive = 60.0        # N: the policy's force along the normal at most
    skip_within_joints: Annotated[int, Ge(1)] = 2   # bodies at most this many joints apart are not checked
    fit: bool = True                  # capsules fitted to the model's collision geometry (else only `capsules`)
    capsules: list[CollisionCapsule] = field(default_factory=list)       # extra capsules, e.g. a gripper's
    boxes: list[CollisionBox] = field(default_factory=list)              # the workspace's boxes: tables, walls
    planes: list[CollisionPlane] = field(default_factory=list)           # the workspace's planes
    allowed: list[Annotated[list[str], Len(2, 2)]] = field(default_factory=list)   # pairs never checked
    pairs: list[CollisionPairPolicy] = field(default_factory=list)       # margins per pair

    def __post_init__(self):
        if self.stop_distance > self.warn_distance:
            raise ValueError(f"stop_distance {self.stop_distance} must not exceed warn_distance {self.warn_distance}")


@dataclass
class SafetyConfig:
    status_timeout_periods: Annotated[int, Ge(1)] = 3   # status periods (learned at start) with none: STATUS_TIMEOUT
    on_fault: Literal["zero_torque", "damping"] = "damping"   # the safe command
    damping: Gains = field(default_factory=lambda: [5.0])               # N·m·s/rad in damping mode
    torque_rate_limit: Positive = 5000.0  # N·m/s
    effort_scale: Fraction = 1.0         # of the model's effort limits: the torque saturation
    position_margin: NonNegative = 0.02  # rad inside the joint limits
    velocity_scale: Positive = 1.0       # of the model's velocity limits
    max_tracking_error: Optional[Positive] = None  # rad
    recover: bool = False        # return to RUNNING when the fault clears (status comes back)
    recover_after_periods: Annotated[int, Ge(1)] = 50   # ticks in a row clear of the cause, every joint at rest
    recover_max_speed: Positive = 0.2   # rad/s, every joint: resume only near rest
    collision: CollisionConfig = field(default_factory=CollisionConfig)   # the self-collision and workspace guard


@dataclass
class TelemetryConfig:
    rate_hz: Rate = 100.0   # at most loop.rate_hz
    log: Optional[str] = None     # record the run's LCM traffic to this lcm-logger file (relative: to the cwd)


@dataclass
class FtSensorConfig:
    """sensors.ft: a wrist force/torque sensor whose Drake lcmt_force_torque the loop reads into the
    law's State.wrench ([τ; f] in the sensor frame; docs/controllers.md, The state)."""
    enabled: bool = False        # read the sensor (off: State.wrench is NaN, has_wrench False)
    channel: str = "FT_SENSOR"   # its lcmt_force_torque channel (`hil sim`'s sim.ft_sensor.channel)
    # s since the newest reading arrived after which it is stale: State.wrench NaN until the next
    timeout: Timeout = 0.05


@dataclass
class SensorsConfig:
    ft: FtSensorConfig = field(default_factory=FtSensorConfig)   # the wrist force/torque sensor


@dataclass
class GripperLinkConfig:
    """gripper: a gripper beside the arm behind its driver's LCM (Drake's lcmt_schunk_wsg_command and
    _status; drake-schunk-driver, franka_hand_driver): its status in State.gripper, Command.gripper sent
    when it changes (hil.gripper; docs/controllers.md, The gripper)."""
    type: Optional[Literal["wsg50", "franka_hand"]] = None   # the driver in front of it; None: no gripper
    command_channel: Optional[str] = None   # default SCHUNK_WSG_COMMAND / PANDA_HAND_COMMAND
    status_channel: Optional[str] = None    # default SCHUNK_WSG_STATUS / PANDA_HAND_STATUS
    force: Positive = 40.0                  # N: the grip-force limit of a track point that names none
    # s since the newest status after which the gripper's link is lost (a DRIVER_LINK fault); None: 4 of
    # its driver's status periods (the WSG's 50 ms: 0.2 s; the hand's 100 ms: 0.4 s)
    timeout: Optional[Timeout] = None
    start_timeout: Timeout = 5.0            # s from the loop's start to the first status (the hand homes first)


@dataclass
class RunConfig:
    robot: RobotConfig
    lcm: LcmConfig = field(default_factory=LcmConfig)
    # `prefix` (prepended to the robot's own channels, to keep several robots on one bus apart) and
    # overrides of messages.channels.Channels: status, command, telemetry, safety, estop, plan,
    # driver_health, run_info, viewer_load_robot, viewer_draw, viewer_status, contact_results
    channels: dict[str, str] = field(default_factory=dict)
    loop: LoopConfig = field(default_factory=LoopConfig)
    controller: ControllerConfig = field(default_factory=ControllerConfig)
    trajectory: TrajectoryConfig = field(default_factory=TrajectoryConfig)
    safety: SafetyConfig = field(default_factory=SafetyConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    sensors: SensorsConfig = field(default_factory=SensorsConfig)   # sensors beside the robot's status
    gripper: GripperLinkConfig = field(default_factory=GripperLinkConfig)   # a gripper beside the arm
    # The sections the packages above core own, as read; the `sections` of parse_config replaces them
    # by their dataclasses (drivers.run_config: drivers.viz.VizConfig, drivers.sim.config.SimConfig, a
    # SerialConfig or None, a ServoBusConfig or None).
    viz: Any = None
    sim: Any = None
    serial: Any = None
    servo_bus: Any = None
    source: Optional[str] = None     # the file it came from


def resolve(path: str, base: Path, packages: dict[str, str] | None = None) -> Path:
    """A path from a config: absolute, relative to the config's folder, or to the project's configs/;
    a package:// URI is resolved by drivers.core.paths.package_map(packages) as Drake's PackageMap does."""
    if "://" in path:
        try:
            return Path(package_map(packages, base).ResolveUrl(path))
        except RuntimeError as e:
            raise ConfigError("robot.model", str(e)) from None
    p = Path(path).expanduser()
    if p.is_absolute():
        return p
    for root in (base, CONFIGS):
        if (root / p).exists():
            return root / p
    return base / p


def _validate_core(cfg: RunConfig) -> None:
    """The cross-key rules of the sections core owns."""
    command, protocol = cfg.robot.command, cfg.robot.protocol
    kind = cfg.controller.type
    if kind not in BUILTIN_CONTROLLERS and (":" not in kind or not all(kind.partition(":")[::2])):
        close = difflib.get_close_matches(kind, BUILTIN_CONTROLLERS, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise ConfigError("controller.type", f"unknown controller {kind!r}{hint}: a built-in ("
                                             f"{', '.join(BUILTIN_CONTROLLERS)}) or a law's import path "
                                             "'package.module:Name'")
    if cfg.robot.driver in ("drake_sim", "franka_driver") and cfg.robot.kuka_driver != KukaDriverConfig():
        raise ConfigError("robot.kuka_driver", f"applies behind kuka_driver (robot.driver kuka_driver, or auto), "
                                               f"not {cfg.robot.driver}")
    if cfg.controller.type == "whole_body" and protocol != "floating_base":
        raise ConfigError("controller.type", "whole_body drives a legged robot: robot.protocol floating_base")
    if (command == "velocity" and protocol != "panda") or (command == "position_and_torque" and protocol != "iiwa"):
        raise ConfigError("robot.command", f"{command!r} is not a command of the {protocol} protocol (iiwa: torque, "
                                           "position, position_and_torque; panda: torque, position, velocity)")
    try:
        channels_for(cfg)
    except ValueError as e:
        raise ConfigError("channels", str(e)) from None
    check_timeout(cfg, "loop.start_timeout", cfg.loop.start_timeout)
    if cfg.sensors.ft.enabled:
        check_timeout(cfg, "sensors.ft.timeout", cfg.sensors.ft.timeout)
    _check_gripper(cfg)


def gripper_channels(kind: str, status: str | None = None, command: str | None = None) -> tuple[str, str]:
    """(status, command) channels of a gripper of `kind` (wsg50, franka_hand): the ones given, else its
    driver's defaults."""
    defaults = GRIPPER_CHANNELS["wsg" if kind == "wsg50" else "panda_hand"]
    return status or defaults[0], command or defaults[1]


def _check_gripper(cfg: RunConfig) -> None:
    """The gripper section's timeouts, and a gripper track only with a gripper."""
    if cfg.gripper.type is not None:
        if cfg.gripper.timeout is not None:
            check_timeout(cfg, "gripper.timeout", cfg.gripper.timeout)
        check_timeout(cfg, "gripper.start_timeout", cfg.gripper.start_timeout)
        return
    for i, point in enumerate(cfg.trajectory.waypoints):
        if point.gripper is not None:
            raise ConfigError(f"trajectory.waypoints[{i}].gripper", "commands a gripper: the gripper section "
                                                                     "needs its type (wsg50 or franka_hand)")


def check_timeout(cfg: RunConfig, key: str, value: float) -> None:
    """A ConfigError naming `key` if the timeout is shorter than one loop period."""
    if value * cfg.loop.rate_hz < 1:
        raise ConfigError(key, f"must be at least one loop period, 1/loop.rate_hz = {1 / cfg.loop.rate_hz:g} s "
                               f"(the loop can meet no shorter timeout), got {value:g}")


def load_config(path: str | Path, overrides: dict | None = None, *, sections: Callable[[RunConfig], None]) -> RunConfig:
    """The validated RunConfig of a YAML file with `overrides` merged in (drivers.core.schema.merge); `sections`
    as parse_config's."""
    return parse_config(read_yaml(path), Path(path).resolve().parent, str(path), overrides, sections=sections)


def parse_config(data: dict, base: Path, source: str, overrides: dict | None = None, *,
                 sections: Callable[[RunConfig], None]) -> RunConfig:
    """The validated RunConfig of a config mapping whose relative paths are relative to `base`;
    errors name `source` (a file, or e.g. a log's run-info). A regression scenario's `scenario`
    section is not part of the run config (hil.scenario reads it), so a scenario file runs as is.
    `sections(cfg)` validates the sections the packages above core own (viz, sim, serial, servo_bus, a
    legged robot's preset and weights) into their dataclasses on cfg and raises ConfigError:
    drivers.run_config passes its own."""
    data = merge(data, overrides)
    try:
        cfg = load(RunConfig, {k: v for k, v in data.items() if k not in ("source", "scenario")})
        try:
            packages = package_map(cfg.robot.package_map, base)
        except RuntimeError as e:
            raise ConfigError("robot.package_map", str(e)) from None
        cfg.robot.package_map = {n: packages.GetPath(n) for n in cfg.robot.package_map}
        model = resolve(cfg.robot.model, base, cfg.robot.package_map)
        if cfg.robot.protocol != "floating_base":      # else a legged preset's name (the sections check it)
            if not model.is_file():
                raise ConfigError("robot.model", f"no such model file '{cfg.robot.model}' (looked in {base} and "
                                                 f"{CONFIGS})")
            cfg.robot.model = str(model)
        if cfg.telemetry.rate_hz > cfg.loop.rate_hz:
            raise ConfigError("telemetry.rate_hz", f"must be at most loop.rate_hz ({cfg.loop.rate_hz:g}), "
                                                   f"got {cfg.telemetry.rate_hz:g}")
        if cfg.telemetry.log:           # an output: relative to the current directory, never the config's
            cfg.telemetry.log = str(Path(cfg.telemetry.log).expanduser().resolve())
        _validate_core(cfg)
        sections(cfg)
    except ConfigError as e:
        raise ConfigError(e.key, str(e).split(": ", 1)[-1] if e.key else str(e), source) from None
    cfg.source = source
    return cfg


def dump_config(cfg: RunConfig) -> str:
    """The config as YAML that parse_config reads back to an equal RunConfig (paths absolute)."""
    data = dataclasses.asdict(cfg)
    data.pop("source")
    return yaml.safe_dump(data, sort_keys=False)


def channels_for(cfg: RunConfig):
    """The robot's messages.channels.Channels: the protocol's defaults with the config's overrides."""
    from messages.channels import Channels
    return Channels.for_robot(cfg.robot.protocol, **cfg.channels)


def open_lcm(url: str):
    """lcm.LCM(url), or a ConfigError naming lcm.url when LCM cannot open it (unknown provider, bad
    address, no multicast route)."""
    import lcm
    try:
        return lcm.LCM(url)
    except RuntimeError as e:
        raise ConfigError("lcm.url", f"LCM cannot open {url!r} ({e}); e.g. udpm://239.255.76.67:7667?ttl=0 for "
                                     "processes on this machine, memq:// inside one") from None
