"""The `sim:` section of a run config (SimConfig) and the few other keys the standalone runner reads.

Every key, its unit and default is in the config reference generated from these dataclasses
(docs/gen/config_reference.py). `load_sim_config(mapping)` validates a mapping (the YAML section) into a
SimConfig (a loaded run config's `cfg.sim`, drivers.run_config); `SimConfig.validate()` runs the
cross-field checks again on a config built in code. Errors are drivers.core.schema.ConfigError naming
the key, e.g. `sim.faults[1].delay: is required for a latency fault`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional

import numpy as np
from annotated_types import Len

from drivers.core.config import PayloadConfig
from drivers.core.schema import ConfigError, Help, NonNegative, Positive, load

from .real_drivers import FrankaDriverConfig, KukaDriverConfig

FaultType = Literal["latency", "drop_status", "duplicate_status", "freeze_sensor", "sensor_noise",
                    "joint_unresponsive", "silent", "bad_command", "gripper_silent"]
Corruption = Literal["garbage", "truncated", "fingerprint", "non_finite", "joint_count"]

# The parameters each fault type takes; the first of a tuple is required, "|" means exactly one of.
_FAULT_PARAMETERS = {
    "latency": ("delay",),
    "drop_status": ("probability|every",),
    "duplicate_status": ("probability|every",),
    "freeze_sensor": ("", "joints"),
    "sensor_noise": ("position_std|velocity_std", "joints"),
    "joint_unresponsive": ("joints",),
    "silent": (),
    "bad_command": ("", "corruption"),
    "gripper_silent": (),
}
_OPTIONAL_PARAMETERS = ("delay", "probability", "every", "joints", "position_std", "velocity_std", "corruption")


@dataclass
class FaultSpec:
    """One injected fault, active while start <= t < stop (seconds of simulated time)."""

    type: Annotated[FaultType, Help("one of " + ", ".join(_FAULT_PARAMETERS))]
    start: NonNegative = 0.0                      # s of simulated time
    stop: Optional[float] = None                  # None: until the end of the run
    delay: Optional[float] = None                 # latency: s, a whole number of status periods
    probability: Optional[float] = None           # drop/duplicate_status: chance per status message
    every: Optional[int] = None                   # drop/duplicate_status: every k-th status message
    joints: Optional[list[Any]] = None            # protocol joint names or 0-based indices
    position_std: Optional[float] = None          # sensor_noise: rad (m for prismatic joints)
    velocity_std: Optional[float] = None          # sensor_noise: rad/s
    corruption: Optional[Corruption] = None       # bad_command: what is wrong with the message


@dataclass
class FrictionConfig:
    # a floor's (rubber on dry concrete or wood: 0.6–0.85 static, docs/sim.md), combined with each
    # geometry's as Drake combines them
    static: NonNegative = 0.8
    dynamic: NonNegative = 0.7                    # at most static


@dataclass
class GroundConfig:
    enabled: bool = True                          # a ground under the robot (with contact.enabled)
    height: float = 0.0                           # m: the ground is the half space z <= height in W
    friction: FrictionConfig = field(default_factory=FrictionConfig)


@dataclass
class ContactConfig:
    enabled: bool = False                         # point contact: the ground and, with between_bodies, the bodies
    ground: GroundConfig = field(default_factory=GroundConfig)
    stiffness: Positive = 1e5             # N/m per contact point (a hard rubber pad's, docs/sim.md)
    dissipation: NonNegative = 2.0        # s/m, Hunt–Crossley
    stiction_tolerance: Positive = 1e-4   # m/s
    between_bodies: bool = False                  # also contacts between the model's bodies
    exclude: list[list[str]] = field(default_factory=list)   # [[body, body], [body]]: pairs, bodies never in contact
    publish_rate: NonNegative = 60.0      # Hz of CONTACT_RESULTS; 0: off


@dataclass
class JointLimitsConfig:
    enabled: bool = True                          # springs and dampers at the model's joint limits
    stiffness: Any = None                         # N·m/rad: number or one per joint; None: automatic
    damping: Any = None                           # N·m·s/rad: number or one per joint; None: automatic


@dataclass
class PositionControlConfig:
    kp: Any = 1000.0                              # 1/s²: number or one per protocol joint
    kd: Any = None                                # 1/s: number or one per joint; None: 2 √kp


@dataclass
class PushSpec:
    """An external wrench on a body B of the arm (docs/sim.md, Pushes) on the steps that start in
    [start, start + duration): F_Bq_W = [torque; force], in W, applied at the point Bq (p_BoBq_B = point)."""

    body: Annotated[str, Help("the body (or frame) B pushed, by name")]
    duration: Annotated[float, Help("seconds of simulated time, at least one time_step")]
    force: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])    # N, f in W
    torque: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # N·m, τ in W
    start: NonNegative = 0.0                      # s of simulated time
    point: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])    # m, p_BoBq_B


@dataclass
class FtSensorConfig:
    """A wrist force/torque sensor in a weld of the model, published as lcmt_force_torque
    (drivers/sim/ft_sensor.py, docs/sim.md)."""

    enabled: bool = False                         # publish the sensor's readings
    joint: str = "iiwa_joint_ee"                  # the weld the sensor sits in (parent: flange, child: tool)
    frame: Optional[str] = None                   # the sensor frame S, fixed on the weld's child; None: its frame Jc
    channel: str = "FT_SENSOR"                    # the lcmt_force_torque channel
    publish_rate: Positive = 1000.0               # Hz, a whole number of steps per message
    bias: Annotated[list[float], Len(6, 6)] = field(default_factory=lambda: [0.0] * 6)   # N, N·m: fx fy fz tx ty tz
    force_std: NonNegative = 0.0                  # N, Gaussian noise per axis
    torque_std: NonNegative = 0.0                 # N·m, Gaussian noise per axis
    cutoff: NonNegative = 0.0                     # Hz, first-order low-pass; 0: none
    seed: int = 0                                 # of the noise


GRIPPER_TYPES = ("wsg50", "franka_hand")


@dataclass
class GripperConfig:
    """A gripper welded to the arm's flange in the simulated plant, behind its driver's LCM protocol
    (drivers/sim/gripper.py, docs/sim.md, Grippers)."""

    type: Optional[Literal["wsg50", "franka_hand"]] = None   # the driver model; None: no gripper
    # URDF/SDF; wsg50 default: configs/robots/schunk_wsg_50.urdf; "robot": the robot's own model holds it (the
    # Panda's hand in example-robot-data's panda.urdf): the subtree from `base` is split off as the gripper
    model: Optional[str] = None
    attach_to: Optional[str] = None               # the arm's frame A it is welded to; default: robot.end_effector
    xyz: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # m, p_AG in A
    rpy: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # rad, R_AG
    base: Optional[str] = None                    # its frame G welded to A; default: body (wsg50), panda_hand
    # the two finger joints [q0, q1] (Drake's left, right); default: the type's
    fingers: Optional[Annotated[list[str], Len(2, 2)]] = None
    command_channel: Optional[str] = None         # default: SCHUNK_WSG_COMMAND / PANDA_HAND_COMMAND
    status_channel: Optional[str] = None          # default: SCHUNK_WSG_STATUS / PANDA_HAND_STATUS
    kp: Positive = 2000.0                         # N/m on the width (Drake's law; its default 200 clamps 10 N at 5 cm)
    kd: NonNegative = 20.0                        # N·s/m on the width's rate


@dataclass
class ObjectSpec:
    """A box or cylinder added to the simulated plant (not the controller's): free (a graspable part) or
    welded to the world (a table, an obstacle), with its collision geometry (drivers.core.robot.add_objects,
    docs/sim.md)."""

    name: Annotated[str, Help("the body's name, unique in the plant")]
    shape: Literal["box", "cylinder"] = "box"     # the solid: a box (size) or a cylinder along Bz (radius, length)
    size: Optional[Annotated[list[float], Len(3, 3)]] = None   # m: a box's edges along its x y z (box only)
    radius: Optional[Positive] = None             # m: a cylinder's radius (cylinder only)
    length: Optional[Positive] = None             # m: a cylinder's length along Bz, centred at Bo (cylinder only)
    mass: Positive = 1.0                          # kg: the solid's inertia (a welded one's does not matter)
    xyz: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # m, p_WB
    rpy: Annotated[list[float], Len(3, 3)] = field(default_factory=lambda: [0.0, 0.0, 0.0])   # rad, R_WB
    welded: bool = False                          # welded to the world at (xyz, rpy); else free, starting there
    friction: FrictionConfig = field(default_factory=FrictionConfig)   # of its collision box


@dataclass
class MujocoConfig:
    """MuJoCo's own settings, with sim.engine: mujoco (docs/sim.md, MuJoCo as the plant)."""

    cone: Literal["pyramidal", "elliptic"] = "pyramidal"   # the friction cone (MuJoCo's default: pyramidal)
    # implicitfast (MuJoCo's recommended): joint damping and other velocity-dependent forces implicit,
    # at Euler's cost, as our semi-implicit Euler treats joint damping; rk4 is not offered (it has no
    # step1/step2 split, which the pushes and the contact torque need)
    integrator: Literal["euler", "implicitfast", "implicit"] = "implicitfast"
    impratio: Positive = 1.0                      # frictional-to-normal constraint impedance ratio (MuJoCo's 1)
    # [timeconst s, dampratio] of every contact; None: MuJoCo's default [0.02, 1]
    solref: Optional[Annotated[list[float], Len(2, 2)]] = None
    # [dmin, dmax, width m, midpoint, power] of every contact; None: MuJoCo's default [0.9, 0.95, 0.001, 0.5, 2]
    solimp: Optional[Annotated[list[float], Len(5, 5)]] = None


@dataclass
class SimConfig:
    # the physics: our integrator (hilstack) or MuJoCo's (mujoco: pip install 'hilstack[mujoco]')
    engine: Literal["hilstack", "mujoco"] = "hilstack"
    mujoco: MujocoConfig = field(default_factory=MujocoConfig)   # MuJoCo's settings (engine: mujoco)
    time_step: Positive = 0.001          # s, a whole number of ns
    integrator: Literal["semi_implicit_euler", "rk4"] = "semi_implicit_euler"   # the fixed-step integrator
    # nq values (a free body's: qw qx qy qz x y z), default: the model's
    initial_positions: Optional[list[float]] = None
    initial_velocities: Optional[list[float]] = None                    # nv, default: zero
    joints: Optional[list[str]] = None            # protocol joints; default: the actuated joints, in velocity order
    status_period: Optional[float] = None         # s, a whole number of steps; None: every step
    utime: Literal["sim", "wall"] = "sim"         # status utime: simulated time or the wall clock
    gravity_compensation: Literal["none", "internal"] = "none"   # internal: the firmware adds −τ_g(q), as a real iiwa's
    # the arrays a command must carry (drake_sim); default: iiwa any, panda [torque]
    control_mode: Optional[list[Literal["position", "velocity", "torque"]]] = None
    position_control: PositionControlConfig = field(default_factory=PositionControlConfig)
    joint_limits: JointLimitsConfig = field(default_factory=JointLimitsConfig)
    command_timeout: Positive = 0.1      # s without a valid command
    # with no commander (before the first valid command, and command_timeout after the last): hold: the
    # firmware holds the arm where it is, gravity included (as Drake's simulated drivers, kuka_driver and
    # franka_driver do, docs/sim.md); damping: −safe_damping∘v; zero_torque: nothing ([− τ_g if internal])
    safe_command: Literal["hold", "zero_torque", "damping"] = "hold"
    brakes: bool = False                          # hold the joints still (q kept, v = 0) until the first valid command
    safe_damping: Any = None                      # N·m·s/rad: number or one per joint; None: m_i/(2h) per joint
    contact: ContactConfig = field(default_factory=ContactConfig)
    payload: PayloadConfig = field(default_factory=PayloadConfig)   # the simulated robot's (robot.payload: the model's)
    ft_sensor: FtSensorConfig = field(default_factory=FtSensorConfig)   # a wrist force/torque sensor
    gripper: GripperConfig = field(default_factory=GripperConfig)      # a gripper on the flange
    objects: list[ObjectSpec] = field(default_factory=list)           # boxes in the plant: parts, tables
    joint_damping: Any = None                     # N·m·s/rad: number or one per velocity; None: the model's
    # N·m Coulomb (static = dynamic): number or one per velocity; None: none (URDF <dynamics friction> is
    # ignored, as Drake does)
    joint_friction: Any = None
    faults: list[FaultSpec] = field(default_factory=list)
    pushes: list[PushSpec] = field(default_factory=list)
    seed: int = 0                                 # of every random fault
    # Which driver stands in front of the arm: Drake's simulated drivers (drake_sim) or the real
    # drivers as their sources define them, with their flags (drivers.sim.real_drivers).
    driver: Literal["drake_sim", "kuka_driver", "franka_driver"] = "drake_sim"
    kuka_driver: KukaDriverConfig = field(default_factory=KukaDriverConfig)
    franka_driver: FrankaDriverConfig = field(default_factory=FrankaDriverConfig)

    @property
    def time_step_ns(self) -> int:
        return round(self.time_step * 1e9)

    def steps(self, seconds: float, key: str) -> int:
        """`seconds` as a whole number (>= 1) of steps; ConfigError naming `key` if it is not one."""
        n = round(seconds / self.time_step)
        if n < 1 or not math.isclose(n * self.time_step, seconds, rel_tol=1e-9, abs_tol=1e-12):
            raise ConfigError(key, f"must be a positive multiple of time_step ({self.time_step:g} s), got {seconds:g}")
        return n

    def stepper(self) -> str:
        """What steps the plant, for start lines: our integrator's name, or MuJoCo's."""
        return self.integrator if self.engine == "hilstack" else f"MuJoCo {self.mujoco.integrator}"

    def validate(self, path: str = "sim") -> "SimConfig":
        """Cross-field checks that need no model; returns self."""
        ns = self.time_step * 1e9
        if self.time_step <= 0 or not math.isclose(ns, round(ns), abs_tol=1e-6):
            raise ConfigError(f"{path}.time_step", f"must be a positive whole number of nanoseconds, "
                                                   f"got {self.time_step!r}")
        if self.status_period is not None:
            self.steps(self.status_period, f"{path}.status_period")
        if self.command_timeout < self.time_step:
            raise ConfigError(f"{path}.command_timeout", f"must be at least one time_step ({self.time_step:g} s)")
        friction = self.contact.ground.friction
        if friction.dynamic > friction.static:
            raise ConfigError(f"{path}.contact.ground.friction.dynamic",
                              f"must be <= static ({friction.static:g}), got {friction.dynamic:g}")
        for i, pair in enumerate(self.contact.exclude):
            if len(pair) not in (1, 2):
                raise ConfigError(f"{path}.contact.exclude[{i}]", f"must be a pair of body names or one body (out of "
                                                                  f"contact altogether), got {pair!r}")
        if len(self.payload.inertia) not in (3, 6):
            raise ConfigError(f"{path}.payload.inertia", f"must have 3 entries (Ixx Iyy Izz) or 6 (and Ixy Ixz Iyz), "
                                                         f"got {len(self.payload.inertia)}")
        if self.ft_sensor.enabled:
            self.steps(1.0 / self.ft_sensor.publish_rate, f"{path}.ft_sensor.publish_rate")
        if self.gripper.type is None and self.gripper != GripperConfig():
            raise ConfigError(f"{path}.gripper.type", f"is required with the other {path}.gripper keys "
                                                      f"(one of {', '.join(GRIPPER_TYPES)})")
        if self.gripper.type == "franka_hand" and self.gripper.model is None:
            raise ConfigError(f"{path}.gripper.model", "is required for franka_hand (a URDF of the hand alone, or "
                                                       "'robot': the hand inside the robot's own model)")
        if self.control_mode is not None and not self.control_mode:
            raise ConfigError(f"{path}.control_mode", "must name at least one of position, velocity, torque")
        if self.driver != "drake_sim":
            for key in ("control_mode", "status_period"):
                if getattr(self, key) is not None:
                    raise ConfigError(f"{path}.{key}", f"belongs to driver drake_sim; the {self.driver} "
                                                       f"settings are under {path}.{self.driver}")
        if self.driver == "kuka_driver":
            self.steps(self.kuka_driver.time_step, f"{path}.kuka_driver.time_step")
        _check_engine(self, path)
        for i, fault in enumerate(self.faults):
            _check_fault(self, fault, f"{path}.faults[{i}]")
        for i, push in enumerate(self.pushes):
            _check_push(self, push, f"{path}.pushes[{i}]")
        _check_objects(self.objects, f"{path}.objects")
        return self


def _check_objects(objects: list[ObjectSpec], key: str) -> None:
    """Unique names, each shape's dimensions (and only those), positive finite edges, friction dynamic <= static."""
    seen = set()
    for i, obj in enumerate(objects):
        if obj.name in seen:
            raise ConfigError(f"{key}[{i}].name", f"{obj.name!r} is given twice")
        seen.add(obj.name)
        given = {k for k in ("size", "radius", "length") if getattr(obj, k) is not None}
        needed = {"size"} if obj.shape == "box" else {"radius", "length"}
        for k in sorted(needed - given):
            raise ConfigError(f"{key}[{i}].{k}", f"a {obj.shape} needs {' and '.join(sorted(needed))}")
        for k in sorted(given - needed):
            raise ConfigError(f"{key}[{i}].{k}", f"is not a {obj.shape}'s dimension (a {obj.shape} has "
                                                 f"{' and '.join(sorted(needed))})")
        if obj.shape == "cylinder":
            if not (math.isfinite(obj.radius) and math.isfinite(obj.length)):
                raise ConfigError(f"{key}[{i}]", f"radius and length must be finite, got {obj.radius}, {obj.length}")
        elif len(obj.size) != 3 or not all(math.isfinite(x) and x > 0 for x in obj.size):
            raise ConfigError(f"{key}[{i}].size", f"must be 3 finite edges > 0 (m), got {obj.size!r}")
        if obj.friction.dynamic > obj.friction.static:
            raise ConfigError(f"{key}[{i}].friction.dynamic",
                              f"must be <= static ({obj.friction.static:g}), got {obj.friction.dynamic:g}")


def _check_engine(cfg: SimConfig, path: str) -> None:
    """The keys one engine does not honour: sim.mujoco without MuJoCo; with MuJoCo, our integrator's and
    contact model's parameters (MuJoCo's counterparts are under sim.mujoco)."""
    if cfg.engine != "mujoco":
        if cfg.mujoco != MujocoConfig():
            raise ConfigError(f"{path}.mujoco", "applies with engine: mujoco")
        return
    ours = ContactConfig()
    limits = "belongs to our engine's limit springs; MuJoCo's joint limits are its soft constraints"
    unsupported = [("integrator", cfg.integrator == "rk4", "rk4 is our engine's; MuJoCo's is mujoco.integrator"),
                   ("joint_limits.stiffness", cfg.joint_limits.stiffness is not None, limits),
                   ("joint_limits.damping", cfg.joint_limits.damping is not None, limits)]
    unsupported += [(f"contact.{key}", getattr(cfg.contact, key) != getattr(ours, key), "belongs to our point "
                     "contact; MuJoCo's contact softness is mujoco.solref and mujoco.solimp")
                    for key in ("stiffness", "dissipation", "stiction_tolerance")]
    for key, given, why in unsupported:
        if given:
            raise ConfigError(f"{path}.{key}", f"{why} (engine: mujoco)")


def _check_fault(cfg: SimConfig, fault: FaultSpec, key: str) -> None:
    spec = _FAULT_PARAMETERS[fault.type]
    allowed = {name for entry in spec for name in entry.split("|") if name}
    for name in _OPTIONAL_PARAMETERS:
        if getattr(fault, name) is not None and name not in allowed:
            raise ConfigError(f"{key}.{name}", f"is not a parameter of a {fault.type} fault"
                                               + (f" (it takes {', '.join(sorted(allowed))})" if allowed else ""))
    if spec and spec[0]:
        given = [name for name in spec[0].split("|") if getattr(fault, name) is not None]
        if not given:
            raise ConfigError(f"{key}.{spec[0].split('|')[0]}", f"is required for a {fault.type} fault"
                              if "|" not in spec[0] else
                              f"a {fault.type} fault needs {' or '.join(spec[0].split('|'))}")
        if fault.type in ("drop_status", "duplicate_status") and len(given) > 1:
            raise ConfigError(f"{key}.every", "give probability or every, not both")
    if fault.stop is not None and fault.stop <= fault.start:
        raise ConfigError(f"{key}.stop", f"must be after start ({fault.start:g} s), got {fault.stop:g}")
    if fault.delay is not None:
        cfg.steps(fault.delay, f"{key}.delay")
    if fault.probability is not None and not 0 < fault.probability <= 1:
        raise ConfigError(f"{key}.probability", f"must be in (0, 1], got {fault.probability!r}")
    if fault.every is not None and fault.every < 1:
        raise ConfigError(f"{key}.every", f"must be >= 1, got {fault.every!r}")
    for name in ("position_std", "velocity_std"):
        value = getattr(fault, name)
        if value is not None and not (np.isfinite(value) and value >= 0):
            raise ConfigError(f"{key}.{name}", f"must be >= 0, got {value!r}")
    if fault.joints is not None:
        if not fault.joints:
            raise ConfigError(f"{key}.joints", "must name at least one joint")
        for j, joint in enumerate(fault.joints):
            if isinstance(joint, bool) or not isinstance(joint, (int, str)):
                raise ConfigError(f"{key}.joints[{j}]", f"must be a joint name or a 0-based index, got {joint!r}")


def _check_push(cfg: SimConfig, push: PushSpec, key: str) -> None:
    """What pydantic checks for a loaded mapping, again for a config built in code, and the duration."""
    for name in ("force", "torque", "point"):
        value = getattr(push, name)
        if len(value) != 3:
            raise ConfigError(f"{key}.{name}", f"must have 3 entries, got {len(value)}")
        for j, x in enumerate(value):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise ConfigError(f"{key}.{name}[{j}]", f"must be a finite number, got {x!r}")
    if not (math.isfinite(push.start) and push.start >= 0):
        raise ConfigError(f"{key}.start", f"must be a finite number >= 0, got {push.start!r}")
    if not (math.isfinite(push.duration) and push.duration >= cfg.time_step):
        raise ConfigError(f"{key}.duration", f"must be at least one time_step ({cfg.time_step:g} s), "
                                             f"got {push.duration!r}")


def load_sim_config(data: dict | None, path: str = "sim") -> SimConfig:
    """The validated SimConfig of the `sim:` mapping of a run config (None: all defaults)."""
    return load(SimConfig, data, path).validate(path)


def per_joint(value, n: int, key: str, default: np.ndarray | None = None) -> np.ndarray:
    """A config value that is a number or a list of n numbers (or None: `default`), as n floats >= 0."""
    if value is None:
        return np.array(default, dtype=float)
    values = [value] * n if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if not isinstance(values, (list, tuple)) or len(values) != n:
        raise ConfigError(key, f"must be a number or a list of {n} numbers, got {value!r}")
    out = np.empty(n)
    for i, x in enumerate(values):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not (np.isfinite(x) and x >= 0):
            raise ConfigError(f"{key}[{i}]" if values is value else key, f"must be a finite number >= 0, got {x!r}")
        out[i] = x
    return out
