"""A station: several arms in one control loop and one simulated cell (docs/station.md).

A station file is a run config whose `station:` section lists the arms. Every other top-level section
is what the arms share: `loop`, `telemetry` and `viz` are the station's alone; `robot`, `lcm`,
`channels`, `controller`, `trajectory`, `safety`, `sensors` and `sim` are each arm's defaults, which an
arm's own sections override key by key (drivers.core.schema.merge: nested mappings merged, lists replaced, as for
overrides). Each arm is then validated as a whole run config (drivers.run_config), its errors named
`station.arms[i].<key>`:

    robot: {model: robots/iiwa14.urdf, end_effector: iiwa_link_ee}      # both arms' defaults
    controller: {type: computed_torque, kp: [400], kd: [40]}
    station:
      on_fault: stop_all            # one arm's fault: every arm gets its safe command (continue_others: only it)
      arms:
        - {name: left, sim: {initial_positions: [0, 0.6, 0, -1.2, 0, 0.8, 0]}}
        - {name: right, trajectory: {type: quintic, goal: [0.3, 0.6, 0, -1.2, 0, 0.8, 0], duration: 2}}

An arm's channels default to the prefix of its name in capitals (`LEFT_IIWA_STATUS`, `LEFT_IIWA_COMMAND`,
`LEFT_HIL_TELEMETRY`, ...: messages.channels.Channels.for_robot's prefix); the e-stop stays cell-wide.
An arm may be on an LCM bus of its own (its `lcm.url`, as Drake's IiwaDriver's lcm_bus keeps arms
apart under the same IIWA_STATUS / IIWA_COMMAND). The arms step together: one loop period, one
simulated time step and one driver for all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

from annotated_types import Len

from drivers.core.config import RunConfig, channels_for, gripper_channels
from drivers.core.schema import ConfigError, Help, load, merge, read_yaml
from messages.channels import FT_SENSOR

from .run_config import OWN_CHANNELS, device_channels, parse_config

ARM_SECTIONS = ("robot", "lcm", "channels", "controller", "trajectory", "safety", "sensors", "gripper", "sim")
"""The sections an arm may set (over the station's defaults)."""
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


@dataclass
class ArmSpec:
    """One arm of station.arms: its name and its sections over the station's."""

    # its summary's key and, in capitals, its channels' prefix (left: LEFT_IIWA_STATUS)
    name: Annotated[str, Help("the arm's name, e.g. left")]
    robot: dict[str, Any] = field(default_factory=dict)        # over the station's robot section
    # over the station's lcm section: an arm on an LCM bus of its own (as Drake's IiwaDriver lcm_bus)
    lcm: dict[str, Any] = field(default_factory=dict)
    # the arm's channels (messages.channels.Channels keys, or prefix); None: prefix NAME_ in capitals
    channels: Optional[dict[str, str]] = None
    controller: dict[str, Any] = field(default_factory=dict)   # over the station's controller section
    trajectory: dict[str, Any] = field(default_factory=dict)   # over the station's trajectory section
    safety: dict[str, Any] = field(default_factory=dict)       # over the station's safety section
    sensors: dict[str, Any] = field(default_factory=dict)      # over the station's sensors section
    gripper: dict[str, Any] = field(default_factory=dict)      # over the station's gripper section (the loop's)
    sim: dict[str, Any] = field(default_factory=dict)          # over the station's sim section (its fault injection)


@dataclass
class StationSpec:
    """station: the arms and the policy the station applies when one of them faults."""

    arms: Annotated[list[ArmSpec], Len(min_length=1, max_length=16), Help("the arms, [{name, ...}]")]
    # what the other arms do when one faults: stop_all (each gets its safe command, FAULT [STATION], and
    # every arm stays in FAULT until the station is restarted) or continue_others (they carry on)
    on_fault: Literal["stop_all", "continue_others"] = "stop_all"
    # per_arm: each arm on its own status and command channels (its channels); num_robots: one
    # kuka_driver --num_robots N in front of every arm (iiwas, sim.driver kuka_driver): one lcmt_iiwa_status
    # of 7·N joints on `status` (arm i's at [7i, 7i + 7), in the arms' order), one command of 7·N on `command`
    layout: Literal["per_arm", "num_robots"] = "per_arm"
    status: str = "IIWA_STATUS"      # layout num_robots: kuka_driver's --lcm_status_channel
    command: str = "IIWA_COMMAND"    # layout num_robots: kuka_driver's --lcm_command_channel


@dataclass
class Station:
    """A validated station: its spec and each arm's whole run config, in the spec's order."""

    spec: StationSpec
    arms: dict[str, RunConfig]
    source: str

    @property
    def first(self) -> RunConfig:
        """The first arm's config: the station's shared sections (loop, telemetry) are its."""
        return next(iter(self.arms.values()))

    @property
    def buses(self) -> list[str]:
        """The LCM URLs the arms are on, each once, in the arms' order."""
        return list(dict.fromkeys(cfg.lcm.url for cfg in self.arms.values()))


def is_station(path: str | Path) -> bool:
    """Whether the YAML file at `path` is a station file (has a `station:` section)."""
    try:
        return "station" in read_yaml(path)
    except (ConfigError, OSError):
        return False


def parse_station(data: dict, base: Path, source: str, overrides: dict | None = None) -> Station:
    """The validated Station of a station file's mapping (relative paths from `base`); `overrides`
    (section → keys, as load_config's) apply to the shared sections. A scenario's `scenario:`
    section is not the station's (hil.station_scenario reads it)."""
    data = merge({k: v for k, v in data.items() if k != "scenario"}, overrides)
    section = data.pop("station")
    if isinstance(section, dict) and section.get("arms") == []:
        raise ConfigError("station.arms", "needs at least one arm", source)
    try:
        spec = load(StationSpec, section, "station")
    except ConfigError as e:
        raise ConfigError(e.key, str(e).split(": ", 1)[-1], source) from None
    arms: dict[str, RunConfig] = {}
    for i, arm in enumerate(spec.arms):
        key = f"station.arms[{i}]"
        if not _NAME.fullmatch(arm.name):
            raise ConfigError(f"{key}.name", f"{arm.name!r} must start with a letter and hold letters, digits and _",
                              source)
        if arm.name in arms:
            raise ConfigError(f"{key}.name", f"{arm.name!r} names two arms", source)
        own = {s: getattr(arm, s) for s in ARM_SECTIONS if s != "channels"}
        own["channels"] = arm.channels if arm.channels is not None else {"prefix": f"{arm.name.upper()}_"}
        merged = merge(data, own)
        _prefix_devices(merged, merged.get("channels", {}).get("prefix", ""))
        try:
            arms[arm.name] = parse_config(merged, base, source)
        except ConfigError as e:
            raise ConfigError(f"{key}.{e.key}" if e.key else key, str(e).split(": ", 2)[-1], source) from None
    _check_together(list(arms.items()), source)
    if spec.layout == "num_robots":
        _check_num_robots(spec, list(arms.items()), source)
    return Station(spec, arms, source)


DEVICE_CHANNELS = (("gripper", "status_channel", 0), ("gripper", "command_channel", 1),
                   ("sim.gripper", "status_channel", 0), ("sim.gripper", "command_channel", 1),
                   ("sensors.ft", "channel", None), ("sim.ft_sensor", "channel", None))
"""An arm's device channels the arm's prefix applies to: (section, key, index in the gripper's
(status, command) pair of its driver's defaults, or None: the F/T sensor's FT_SENSOR)."""


def _prefix_devices(data: dict, prefix: str) -> None:
    """The arm's prefix on each device channel (DEVICE_CHANNELS) its merged sections leave unset: the
    driver's default after the prefix (LEFT_SCHUNK_WSG_COMMAND, LEFT_FT_SENSOR), as the arm's own
    channels get it. A channel the station or the arm names is kept."""
    if not prefix:
        return
    for path, key, index in DEVICE_CHANNELS:
        section = data
        for part in path.split("."):
            section = section.get(part) if isinstance(section, dict) else None
        if not isinstance(section, dict) or section.get(key) is not None:
            continue
        if index is None:
            section[key] = prefix + FT_SENSOR
        elif section.get("type") in ("wsg50", "franka_hand"):
            section[key] = prefix + gripper_channels(section["type"])[index]


def load_station(path: str | Path, overrides: dict | None = None) -> Station:
    """The validated Station of the station file at `path` (drivers.core.schema's YAML rules)."""
    return parse_station(read_yaml(path), Path(path).resolve().parent, str(path), overrides)


def _check_together(arms: list[tuple[str, RunConfig]], source: str) -> None:
    """The arms step together: on one LCM bus their own channels differ, and one simulated time step,
    driver and driver period serve them all."""
    seen: dict[tuple[str, str], str] = {}
    for i, (name, cfg) in enumerate(arms):
        ch = channels_for(cfg)
        own = [("channels", f"{what} channel", getattr(ch, what)) for what in OWN_CHANNELS]
        for key, what, channel in own + device_channels(cfg):
            if (cfg.lcm.url, channel) in seen:
                raise ConfigError(f"station.arms[{i}].{key}", f"arm {name!r}'s {what} {channel} is arm "
                                                              f"{seen[cfg.lcm.url, channel]!r}'s too on "
                                                              f"{cfg.lcm.url}: give each arm its own "
                                                              f"(channels.prefix, or name it) or its own bus "
                                                              f"(lcm.url)", source)
            seen[cfg.lcm.url, channel] = name
    _, first = arms[0]
    for i, (name, cfg) in enumerate(arms[1:], 1):
        for key, mine, theirs in (("sim.time_step", cfg.sim.time_step, first.sim.time_step),
                                  ("sim.driver", cfg.sim.driver, first.sim.driver),
                                  ("sim.kuka_driver.time_step", cfg.sim.kuka_driver.time_step,
                                   first.sim.kuka_driver.time_step)):
            if mine != theirs:
                raise ConfigError(f"station.arms[{i}].{key}", f"{mine!r} differs from arm {arms[0][0]!r}'s {theirs!r}: "
                                                              "the arms step together", source)


def _check_num_robots(spec: StationSpec, arms: list[tuple[str, RunConfig]], source: str) -> None:
    """layout num_robots: every arm an iiwa behind kuka_driver (the loop's robot.driver kuka_driver or
    auto, the simulated sim.driver kuka_driver); the combined channels are none of an arm's own."""
    if spec.status == spec.command:
        raise ConfigError("station.command", f"{spec.command} is the status channel too", source)
    for i, (name, cfg) in enumerate(arms):
        if cfg.lcm.url != arms[0][1].lcm.url:
            raise ConfigError(f"station.arms[{i}].lcm.url", f"layout num_robots is one driver on one bus: "
                                                            f"{arms[0][1].lcm.url}, not {cfg.lcm.url}", source)
        if cfg.robot.protocol != "iiwa":
            raise ConfigError(f"station.arms[{i}].robot.protocol", f"layout num_robots is kuka_driver's: iiwa arms "
                                                                   f"only, got {cfg.robot.protocol}", source)
        if cfg.robot.driver not in ("kuka_driver", "auto"):
            raise ConfigError(f"station.arms[{i}].robot.driver", f"layout num_robots is kuka_driver's, not "
                                                                 f"{cfg.robot.driver}", source)
        if cfg.sim.driver != "kuka_driver":
            raise ConfigError(f"station.arms[{i}].sim.driver", "layout num_robots simulates kuka_driver "
                                                               f"--num_robots: sim.driver kuka_driver, got "
                                                               f"{cfg.sim.driver}", source)
        ch = channels_for(cfg)
        if {ch.status, ch.command} & {spec.status, spec.command}:
            raise ConfigError(f"station.arms[{i}].channels", f"arm {name!r}'s own status and command channels "
                                                             f"must differ from the driver's {spec.status} / "
                                                             f"{spec.command}", source)
