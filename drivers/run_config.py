"""The whole run config: drivers.core.config's schema and rules, plus the sections the packages above core
own, validated once into their dataclasses on the RunConfig: `viz` (drivers.viz.VizConfig), `sim`
(drivers.sim.config.SimConfig), `serial` (drivers.serial.config.SerialConfig), `servo_bus`
(drivers.serial.servo_config.ServoBusConfig) and, for robot.protocol floating_base, the legged preset
and the whole-body weights (planning). Every entry point that reads a run config (`hil`, `hil.run`, the
fixtures, the tests) loads it here, and its users read the typed sections."""
from __future__ import annotations

from pathlib import Path

from drivers.core import config
from drivers.core.config import RunConfig, check_timeout
from drivers.core.schema import ConfigError, load
from drivers.viz import load_viz_config


def _check_legged(cfg: RunConfig) -> None:
    """protocol floating_base: a legged preset, torque commands, whole_body (or a user's law), its weights."""
    from drivers.legged_contacts import check_feet
    from dynamics_cy.planning.legged_models import LEGGED
    from dynamics_cy.planning.whole_body import WholeBodyWeights
    if cfg.robot.model not in LEGGED:
        raise ConfigError("robot.model", f"protocol floating_base takes a legged preset, one of {', '.join(LEGGED)}; "
                                         f"got {cfg.robot.model!r}")
    if cfg.controller.type != "whole_body" and ":" not in cfg.controller.type:
        raise ConfigError("controller.type", f"protocol floating_base runs whole_body or a law of yours by import "
                                             f"path ('package.module:Name'); {cfg.controller.type!r} is an arm's law")
    if cfg.robot.command != "torque":
        raise ConfigError("robot.command", "protocol floating_base commands torque")
    if cfg.trajectory.type != "hold":
        raise ConfigError("trajectory.type", "protocol floating_base holds the standing pose (hold)")
    if not isinstance(cfg.controller.whole_body.weights, dict):
        raise ConfigError("controller.whole_body.weights", "must be a mapping of WholeBodyWeights fields")
    load(WholeBodyWeights, cfg.controller.whole_body.weights, "controller.whole_body.weights")
    check_feet(cfg.robot.model, cfg.controller.whole_body.contacts)


def load_sections(cfg: RunConfig) -> None:
    """Replaces the sections core keeps as read by their validated dataclasses, so that a bad key
    fails at start and no user parses a section again: `viz` a VizConfig (absent: off), `sim` a
    SimConfig (absent: the defaults), `serial` a SerialConfig and `servo_bus` a ServoBusConfig
    (absent: None). Each timeout they hold is at least one loop period."""
    from .sim.config import load_sim_config
    if cfg.robot.protocol == "floating_base":
        _check_legged(cfg)
    cfg.viz = load_viz_config(cfg.viz)
    cfg.sim = load_sim_config(cfg.sim)
    ft, sim_ft = cfg.sensors.ft, cfg.sim.ft_sensor
    if ft.enabled and sim_ft.enabled and ft.channel != sim_ft.channel:
        raise ConfigError("sensors.ft.channel", f"{ft.channel!r} is not where the simulated sensor publishes "
                                                f"(sim.ft_sensor.channel {sim_ft.channel!r})")
    _check_gripper_channels(cfg)
    _check_device_channels(cfg)
    if cfg.serial is not None:
        from .serial.config import load_serial_config
        cfg.serial = load_serial_config(cfg.serial)
        check_timeout(cfg, "serial.command_timeout", cfg.serial.command_timeout)
    if cfg.servo_bus is not None:
        from .serial.servo_config import load_servo_config
        cfg.servo_bus = load_servo_config(cfg.servo_bus)
        check_timeout(cfg, "servo_bus.command_timeout", cfg.servo_bus.command_timeout)


def _check_gripper_channels(cfg: RunConfig) -> None:
    """The loop's gripper (gripper) is the simulated one (sim.gripper) when both are named: same driver,
    same channels."""
    loop, sim = cfg.gripper, cfg.sim.gripper
    if loop.type is None or sim.type is None:
        return
    if loop.type != sim.type:
        raise ConfigError("gripper.type", f"{loop.type!r} is not the simulated gripper (sim.gripper.type {sim.type!r})")
    ours = config.gripper_channels(loop.type, loop.status_channel, loop.command_channel)
    theirs = config.gripper_channels(sim.type, sim.status_channel, sim.command_channel)
    for key, a, b in zip(("status_channel", "command_channel"), ours, theirs):
        if a != b:
            raise ConfigError(f"gripper.{key}", f"{a!r} is not the simulated gripper's (sim.gripper.{key} {b!r})")


OWN_CHANNELS = ("status", "command", "telemetry", "safety", "plan", "driver_health", "run_info")
"""The arm's own channels (messages.channels.Channels' fields) no device may speak on."""


def device_channels(cfg: RunConfig) -> list[tuple[str, str, str]]:
    """(key, what, channel) of the arm's gripper and F/T sensor in the loop, those it has."""
    out = []
    if cfg.gripper.type is not None:
        status, command = config.gripper_channels(cfg.gripper.type, cfg.gripper.status_channel,
                                                  cfg.gripper.command_channel)
        out += [("gripper.status_channel", "gripper status channel", status),
                ("gripper.command_channel", "gripper command channel", command)]
    if cfg.sensors.ft.enabled:
        out.append(("sensors.ft.channel", "F/T sensor channel", cfg.sensors.ft.channel))
    return out


def _check_device_channels(cfg: RunConfig) -> None:
    """Each device has channels of its own: none is the arm's own (its status, command, ...) or another
    device's in the loop; a WSG command on IIWA_COMMAND would be a message of the wrong type there. The
    simulated devices (sim.gripper, sim.ft_sensor) are the loop's when both are named (checked above)."""
    ch = config.channels_for(cfg)
    own = {getattr(ch, what): f"the arm's {what} channel (channels.{what})" for what in OWN_CHANNELS}
    simulated = []
    if cfg.sim.gripper.type is not None:
        status, command = config.gripper_channels(cfg.sim.gripper.type, cfg.sim.gripper.status_channel,
                                                  cfg.sim.gripper.command_channel)
        simulated += [("sim.gripper.status_channel", "simulated gripper's status channel", status),
                      ("sim.gripper.command_channel", "simulated gripper's command channel", command)]
    if cfg.sim.ft_sensor.enabled:
        simulated.append(("sim.ft_sensor.channel", "simulated F/T sensor's channel", cfg.sim.ft_sensor.channel))
    seen = dict(own)
    for key, what, channel in device_channels(cfg):
        if channel in seen:
            raise ConfigError(key, f"the {what} {channel} is {seen[channel]} too: give each its own")
        seen[channel] = f"the {what}"
    for key, what, channel in simulated:
        if channel in own:
            raise ConfigError(key, f"the {what} {channel} is {own[channel]} too: give each its own")


_NEEDED = {"serial": "the board's port and the link settings (docs/serial_protocol.md)",
           "servo_bus": "the bus port, protocol and joints (docs/servo_bus.md)"}


def required(cfg: RunConfig, section: str):
    """The run config's `serial` or `servo_bus` section, for a command that needs it; a ConfigError
    naming the section when the config has none."""
    value = getattr(cfg, section)
    if value is None:
        raise ConfigError(section, f"is required: {_NEEDED[section]}")
    return value


def load_config(path: str | Path, overrides: dict | None = None) -> RunConfig:
    """The validated RunConfig of a YAML file, every section typed (load_sections); `overrides` replace
    top-level sections' keys."""
    return config.load_config(path, overrides, sections=load_sections)


def parse_config(data: dict, base: Path, source: str, overrides: dict | None = None) -> RunConfig:
    """The validated RunConfig of a config mapping (drivers.core.config.parse_config), every section typed."""
    return config.parse_config(data, base, source, overrides, sections=load_sections)
