"""The run config: one YAML file for `hil run`, `hil sim`, `hil demo`, `hil viz`, validated at start.

Top-level sections (each documented in docs/hil.md): robot, lcm, channels, loop, controller,
trajectory, safety, telemetry, viz, sim, serial, servo_bus. Paths are relative to the config file's folder.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

import yaml

from messages.channels import DEFAULT_LCM_URL

from .paths import CONFIGS, package_map
from .schema import RATE_HZ, TIMEOUT_S, ConfigError, load, read_yaml

POSITIVE = {"min": 0, "exclusive": True}
NONNEGATIVE = {"min": 0}


@dataclass
class RobotConfig:
    # URDF or SDF file; protocol floating_base: a planning.legged_models preset (go2, g1)
    model: str = field(metadata={"help": "URDF or SDF file of the robot, or a legged preset"})
    # floating_base: a legged robot (lcmt_hil_floating_base_status / lcmt_hil_joint_command, docs/wbc.md)
    protocol: Literal["iiwa", "panda", "floating_base"] = "iiwa"
    weld: Optional[str] = None            # a frame to weld to the world, if the model does not
    end_effector: Optional[str] = None    # frame used by Cartesian control (default: the last frame)
    # What the command message carries (docs/hil.md, Commands): torque, position_and_torque (iiwa),
    # position, velocity (panda); the positions are q_d while RUNNING, else the held measured q.
    command: Literal["torque", "position_and_torque", "position", "velocity"] = "torque"
    # The driver in front of the robot: drake_sim (Drake's simulated drivers, `hil sim`'s default),
    # kuka_driver or franka_driver (the real ones): sets the start guard and the command's clock.
    driver: Literal["drake_sim", "kuka_driver", "franka_driver"] = "drake_sim"
    velocity_gain: float = field(default=10.0, metadata={"min": 0})   # 1/s: v_cmd = v_d + gain (q_d − q)
    # package name -> folder or package.xml, added to the default map (installed packages, e.g.
    # example-robot-data) that resolves package:// URIs of robot.model and of its meshes
    package_map: dict[str, str] = field(default_factory=dict)
    # the joints the protocol drives, in its order; every other movable joint is welded at position 0
    # (a Panda's fingers). None: the model's actuated joints, or every movable joint if it has no
    # <transmission> (an actuator with the joint's URDF effort limit)
    actuated_joints: Optional[list[str]] = None


@dataclass
class LcmConfig:
    url: str = DEFAULT_LCM_URL


@dataclass
class LoopConfig:
    rate_hz: float = field(default=1000.0, metadata=RATE_HZ)
    deadline_budget_us: float = field(default=200.0, metadata=POSITIVE)   # lateness above it is a miss
    spin_us: float = field(default=300.0, metadata=NONNEGATIVE)           # sleep until deadline - spin, then spin
    duration: Optional[float] = field(default=None, metadata=POSITIVE)    # seconds; None runs until stopped
    start_timeout: float = field(default=5.0, metadata=TIMEOUT_S)         # wait this long for the first status
    # s after the first status before the first command; None: 0.3 for robot.driver kuka_driver (its
    # --start_command_guard is 0.25 s), else 0
    start_guard: Optional[float] = field(default=None, metadata=NONNEGATIVE)
    cpus: Optional[list[int]] = None          # pin the loop's process to these CPUs (sched_setaffinity)
    priority: Optional[int] = field(default=None, metadata={"min": 1, "max": 99})   # SCHED_FIFO priority
    lock_memory: bool = False                 # mlockall: no page faults in the loop
    gc: Literal["on", "off"] = "off"          # Python's cyclic garbage collector during the run


Gains = list[float]


@dataclass
class WholeBodyConfig:
    """controller.type whole_body (planning.whole_body, docs/wbc.md): the QP's contact model and weights."""
    mu: float = field(default=0.6, metadata=POSITIVE)               # friction coefficient of the pyramids
    f_min: float = field(default=0.0, metadata=NONNEGATIVE)         # N, least normal force on a foot in contact
    effort_limit: Optional[float] = field(default=None, metadata=POSITIVE)   # N·m, every joint (None: none)
    weights: Any = field(default_factory=dict)                     # planning.whole_body.WholeBodyWeights fields
    contacts: Any = None                                           # the feet (hil.legged_contacts); None: the preset's
    foot_loss_ticks: int = field(default=5, metadata={"min": 1})    # statuses without contact: safe state
    safe_damping: float = field(default=2.0, metadata=NONNEGATIVE)  # N·m·s/rad of the safe (damping) command


@dataclass
class ControllerConfig:
    type: Literal["gravity_compensation", "joint_pd", "computed_torque", "joint_impedance",
                  "cartesian_impedance", "whole_body"] = "computed_torque"
    kp: Gains = field(default_factory=lambda: [100.0])     # 1/s² (computed torque) or N·m/rad
    kd: Gains = field(default_factory=lambda: [20.0])      # 1/s or N·m·s/rad
    cartesian_stiffness: list[float] = field(default_factory=lambda: [30.0, 30.0, 30.0, 500.0, 500.0, 500.0],
                                             metadata={"len": 6})   # [rotational N·m/rad; translational N/m]
    cartesian_damping: list[float] = field(default_factory=lambda: [3.0, 3.0, 3.0, 40.0, 40.0, 40.0],
                                           metadata={"len": 6})
    nullspace_damping: float = field(default=1.0, metadata=NONNEGATIVE)
    robot_compensates_gravity: bool = False   # the robot adds gravity compensation itself (e.g. a real iiwa)
    whole_body: WholeBodyConfig = field(default_factory=WholeBodyConfig)   # type whole_body


@dataclass
class Waypoint:
    q: list[float]
    duration: float = field(default=2.0, metadata=POSITIVE)   # seconds to reach it from the previous one


@dataclass
class TrajectoryConfig:
    type: Literal["hold", "quintic", "waypoints", "stream", "cartesian"] = "hold"
    goal: Optional[list[float]] = None          # quintic: joint goal
    duration: float = field(default=2.0, metadata=POSITIVE)
    waypoints: list[Waypoint] = field(default_factory=list)
    loop: bool = False                          # waypoints: go back to the start and repeat
    channel: Optional[str] = None               # stream: lcmt_robot_state or lcmt_hil_joint_plan channel
    stream_type: Literal["robot_state", "joint_plan"] = "robot_state"
    goal_position: Optional[list[float]] = field(default=None, metadata={"len": 3})   # cartesian: p_WG
    goal_rpy: Optional[list[float]] = field(default=None, metadata={"len": 3})        # cartesian: R_WG
    velocity_scale: float = field(default=0.5, metadata={"min": 0, "max": 1, "exclusive": True, "max_exclusive": True})
    acceleration_scale: float = field(default=0.5, metadata={"min": 0, "max": 1, "exclusive": True})
    effort_scale: Optional[float] = field(default=None, metadata={"min": 0, "max": 1, "exclusive": True})


@dataclass
class SafetyConfig:
    status_timeout_periods: int = field(default=3, metadata={"min": 1})
    on_fault: Literal["zero_torque", "damping"] = "damping"
    damping: Gains = field(default_factory=lambda: [5.0])               # N·m·s/rad in damping mode
    torque_rate_limit: float = field(default=5000.0, metadata=POSITIVE)  # N·m/s
    effort_scale: float = field(default=1.0, metadata={"min": 0, "max": 1, "exclusive": True})
    position_margin: float = field(default=0.02, metadata=NONNEGATIVE)  # rad inside the joint limits
    velocity_scale: float = field(default=1.0, metadata=POSITIVE)       # of the model's velocity limits
    max_tracking_error: Optional[float] = field(default=None, metadata=POSITIVE)  # rad
    recover: bool = False        # return to RUNNING when the fault clears (status comes back)
    recover_after_periods: int = field(default=50, metadata={"min": 1})
    recover_max_speed: float = field(default=0.2, metadata=POSITIVE)   # rad/s: resume only near rest


@dataclass
class TelemetryConfig:
    rate_hz: float = field(default=100.0, metadata=RATE_HZ)   # at most loop.rate_hz
    log: Optional[str] = None     # record the run's LCM traffic to this lcm-logger file


@dataclass
class RunConfig:
    robot: RobotConfig
    lcm: LcmConfig = field(default_factory=LcmConfig)
    channels: dict[str, str] = field(default_factory=dict)
    loop: LoopConfig = field(default_factory=LoopConfig)
    controller: ControllerConfig = field(default_factory=ControllerConfig)
    trajectory: TrajectoryConfig = field(default_factory=TrajectoryConfig)
    safety: SafetyConfig = field(default_factory=SafetyConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    viz: Any = None                  # validated by hil.viz (true means its defaults)
    sim: Any = None                  # validated by drivers.sim
    serial: Any = None               # validated by drivers.serial
    servo_bus: Any = None            # validated by drivers.serial.servo_config
    source: Optional[str] = None     # the file it came from


def resolve(path: str, base: Path, packages: dict[str, str] | None = None) -> Path:
    """A path from a config: absolute, relative to the config's folder, or to the project's configs/;
    a package:// URI is resolved by hil.paths.package_map(packages) as Drake's PackageMap does."""
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


def _validate_legged(cfg: RunConfig) -> None:
    """protocol floating_base: a legged preset, torque commands, the whole_body controller, its weights."""
    from planning.legged_models import LEGGED
    from planning.whole_body import WholeBodyWeights
    if cfg.robot.model not in LEGGED:
        raise ConfigError("robot.model", f"protocol floating_base takes a legged preset, one of {', '.join(LEGGED)}; "
                                         f"got {cfg.robot.model!r}")
    if cfg.controller.type != "whole_body":
        raise ConfigError("controller.type", f"protocol floating_base needs whole_body, got {cfg.controller.type!r}")
    if cfg.robot.command != "torque":
        raise ConfigError("robot.command", "protocol floating_base commands torque")
    if cfg.trajectory.type != "hold":
        raise ConfigError("trajectory.type", "protocol floating_base holds the standing pose (hold)")
    if not isinstance(cfg.controller.whole_body.weights, dict):
        raise ConfigError("controller.whole_body.weights", "must be a mapping of WholeBodyWeights fields")
    load(WholeBodyWeights, cfg.controller.whole_body.weights, "controller.whole_body.weights")
    from .legged_contacts import check_feet
    check_feet(cfg.robot.model, cfg.controller.whole_body.contacts)


def _validate_sections(cfg: RunConfig) -> None:
    """The sections other packages own, checked now so that a bad key fails at start."""
    command, protocol = cfg.robot.command, cfg.robot.protocol
    if cfg.controller.type == "whole_body" and protocol != "floating_base":
        raise ConfigError("controller.type", "whole_body drives a legged robot: robot.protocol floating_base")
    if (command == "velocity" and protocol != "panda") or (command == "position_and_torque" and protocol != "iiwa"):
        raise ConfigError("robot.command", f"{command!r} is not a command of the {protocol} protocol (iiwa: torque, "
                                           "position, position_and_torque; panda: torque, position, velocity)")
    try:
        channels_for(cfg)
    except ValueError as e:
        raise ConfigError("channels", str(e)) from None
    viz_config(cfg)
    timeouts = {"loop.start_timeout": cfg.loop.start_timeout}     # each at least one loop period
    if cfg.sim is not None:
        from drivers.sim.config import load_sim_config
        load_sim_config(cfg.sim, "sim")
    if cfg.serial is not None:
        from drivers.serial.config import load_serial_config
        timeouts["serial.command_timeout"] = load_serial_config(cfg.serial, "serial").command_timeout
    if cfg.servo_bus is not None:
        from drivers.serial.servo_config import load_servo_config
        timeouts["servo_bus.command_timeout"] = load_servo_config(cfg.servo_bus, "servo_bus").command_timeout
    for key, value in timeouts.items():
        if value * cfg.loop.rate_hz < 1:
            raise ConfigError(key, f"must be at least one loop period, 1/loop.rate_hz = {1 / cfg.loop.rate_hz:g} s "
                                   f"(the loop can meet no shorter timeout), got {value:g}")


def load_config(path: str | Path, overrides: dict | None = None) -> RunConfig:
    """The validated RunConfig of a YAML file; `overrides` replace top-level sections' keys."""
    return parse_config(read_yaml(path), Path(path).resolve().parent, str(path), overrides)


def parse_config(data: dict, base: Path, source: str, overrides: dict | None = None) -> RunConfig:
    """The validated RunConfig of a config mapping whose relative paths are relative to `base`;
    errors name `source` (a file, or e.g. a log's run-info). A regression scenario's `scenario`
    section is not part of the run config (hil.scenario reads it), so a scenario file runs as is."""
    data = copy.deepcopy(data)
    for section, values in (overrides or {}).items():
        if isinstance(values, dict):
            data.setdefault(section, {}).update(values)
        else:
            data[section] = values
    try:
        cfg = load(RunConfig, {k: v for k, v in data.items() if k not in ("source", "scenario")})
        if cfg.viz is True or cfg.viz is False:
            cfg.viz = {"enabled": cfg.viz}
        try:
            packages = package_map(cfg.robot.package_map, base)
        except RuntimeError as e:
            raise ConfigError("robot.package_map", str(e)) from None
        cfg.robot.package_map = {n: packages.GetPath(n) for n in cfg.robot.package_map}
        legged = cfg.robot.protocol == "floating_base"
        model = resolve(cfg.robot.model, base, cfg.robot.package_map)
        if legged:
            _validate_legged(cfg)
        elif not model.is_file():
            raise ConfigError("robot.model", f"no such model file '{cfg.robot.model}' (looked in {base} and "
                                             f"{CONFIGS})")
        else:
            cfg.robot.model = str(model)
        if cfg.telemetry.rate_hz > cfg.loop.rate_hz:
            raise ConfigError("telemetry.rate_hz", f"must be at most loop.rate_hz ({cfg.loop.rate_hz:g}), "
                                                   f"got {cfg.telemetry.rate_hz:g}")
        if cfg.telemetry.log:
            cfg.telemetry.log = str(resolve(cfg.telemetry.log, base))
        _validate_sections(cfg)
    except ConfigError as e:
        raise ConfigError(e.key, str(e).split(": ", 1)[-1] if e.key else str(e), source) from None
    cfg.source = source
    return cfg


def dump_config(cfg: RunConfig) -> str:
    """The config as YAML that parse_config reads back to an equal RunConfig (paths absolute)."""
    data = dataclasses.asdict(cfg)
    data.pop("source")
    return yaml.safe_dump(data, sort_keys=False)


def viz_config(cfg: RunConfig):
    """The validated `viz:` section (hil.viz.VizConfig): `true` means its defaults, absent means off."""
    from .viz import VizConfig
    if cfg.viz is None:
        return VizConfig(enabled=False)
    return load(VizConfig, cfg.viz, "viz")


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
