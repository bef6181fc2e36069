"""The feet of a legged run config, ``controller.whole_body.contacts`` (docs/wbc.md, Run configs):
each a frame of the model with a contact point or a rectangular sole; absent, the model preset's
feet (planning.legged_models.LEGGED). Validated like every config section, with errors naming the
key (``controller.whole_body.contacts[1].sole.width``), and against the model's frames."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from planning.legged_models import Foot, FootError, load_legged

from .schema import ConfigError, load

KEY = "controller.whole_body.contacts"


@dataclass
class SoleSpec:
    center: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0], metadata={"len": 3})   # p_FS, m in F
    length: float = field(default=0.0, metadata={"min": 0, "exclusive": True})    # m, along F's x
    width: float = field(default=0.0, metadata={"min": 0, "exclusive": True})     # m, along F's y


@dataclass
class FootSpec:
    frame: str = field(metadata={"help": "the name of a frame of the model"})
    point: Optional[list[float]] = field(default=None, metadata={"len": 3})      # p_FC, m in F
    sole: Optional[SoleSpec] = None


def feet_of_spec(spec) -> list[Foot] | None:
    """The Foot list of a contacts section (None: the preset's); ConfigError naming a bad key."""
    if spec is None:
        return None
    if not isinstance(spec, list) or not spec:
        raise ConfigError(KEY, "must be a list of feet ({frame: NAME, point: [x, y, z]} or "
                               "{frame: NAME, sole: {center: [x, y, z], length: L, width: W}})")
    feet = []
    for i, item in enumerate(spec):
        key = f"{KEY}[{i}]"
        foot = load(FootSpec, item, key)
        if (foot.point is None) == (foot.sole is None):
            raise ConfigError(key, "give a point or a sole (one of them)")
        if foot.sole is not None and not (foot.sole.length > 0 and foot.sole.width > 0):
            raise ConfigError(f"{key}.sole", "needs a positive length and width")
        feet.append(Foot(foot.frame, point=tuple(foot.point)) if foot.point is not None else
                    Foot(foot.frame, sole_center=tuple(foot.sole.center), length=foot.sole.length,
                         width=foot.sole.width))
    soles = [f.frame for f in feet if f.point is None]
    for i, f in enumerate(feet):
        if f.frame in soles and sum(g.frame == f.frame for g in feet) > 1:
            raise ConfigError(f"{KEY}[{i}].frame", f"frame {f.frame!r} has a sole and another foot: one sole per "
                                                   f"frame, and no points beside it")
    return feet


def check_feet(model: str, spec) -> None:
    """The contacts section fits `model` (its frames exist): ConfigError naming the key otherwise."""
    feet = feet_of_spec(spec)
    if feet is None:
        return
    try:
        load_legged(model, feet=feet)
    except FootError as e:
        raise ConfigError(f"{KEY}[{e.index}].{e.field}" if e.field else KEY, str(e)) from None


def legged_feet(cfg) -> list[Foot] | None:
    """The run config's feet (None: the preset's)."""
    return feet_of_spec(cfg.controller.whole_body.contacts)
