"""The whole run config: core.config's schema and rules, plus the sections the packages above core
own, so that a bad key anywhere fails at start: `viz` (viz.VizConfig), `sim` (drivers.sim.config),
`serial` (drivers.serial.config), `servo_bus` (drivers.serial.servo_config) and, for robot.protocol
floating_base, the legged preset and the whole-body weights (planning). Every entry point that reads a
run config (`hil`, `python -m drivers.sim`, the tests) loads it here."""
from __future__ import annotations

from pathlib import Path

from core import config
from core.config import RunConfig, check_timeout
from core.schema import ConfigError, load
from viz import viz_config


def _check_legged(cfg: RunConfig) -> None:
    """protocol floating_base: a legged preset, torque commands, the whole_body controller, its weights."""
    from planning.legged_contacts import check_feet
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
    check_feet(cfg.robot.model, cfg.controller.whole_body.contacts)


def check_sections(cfg: RunConfig) -> None:
    """The sections core does not own, checked now so that a bad key fails at start; each timeout
    they hold is at least one loop period."""
    if cfg.robot.protocol == "floating_base":
        _check_legged(cfg)
    viz_config(cfg)
    if cfg.sim is not None:
        from .sim.config import load_sim_config
        load_sim_config(cfg.sim, "sim")
    if cfg.serial is not None:
        from .serial.config import load_serial_config
        check_timeout(cfg, "serial.command_timeout", load_serial_config(cfg.serial, "serial").command_timeout)
    if cfg.servo_bus is not None:
        from .serial.servo_config import load_servo_config
        check_timeout(cfg, "servo_bus.command_timeout",
                      load_servo_config(cfg.servo_bus, "servo_bus").command_timeout)


def load_config(path: str | Path, overrides: dict | None = None) -> RunConfig:
    """The validated RunConfig of a YAML file, every section checked; `overrides` replace top-level
    sections' keys."""
    return config.load_config(path, overrides, sections=check_sections)


def parse_config(data: dict, base: Path, source: str, overrides: dict | None = None) -> RunConfig:
    """The validated RunConfig of a config mapping (core.config.parse_config), every section checked."""
    return config.parse_config(data, base, source, overrides, sections=check_sections)
