"""The feet of a legged run config, ``controller.whole_body.contacts`` (docs/wbc.md, Run configs):
each a frame of the model with a contact point or a rectangular sole; absent, the model preset's
feet (dynamics_cy.planning.legged_models.LEGGED). Validated like every config section, with errors naming the
key (``controller.whole_body.contacts[1].sole.width``), and against the model's frames."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Optional

from annotated_types import Len

from drivers.core.schema import ConfigError, Help, Positive, load
from dynamics_cy.planning.legged_models import Foot, FootError, load_legged

Vector3 = Annotated[list[float], Len(3, 3)]

KEY = "controller.whole_body.contacts"


@dataclass
class SoleSpec:
    length: Annotated[Positive, Help("m, the sole's extent along the frame's x")]
    width: Annotated[Positive, Help("m, the sole's extent along the frame's y")]
    center: Vector3 = field(default_factory=lambda: [0.0, 0.0, 0.0])   # p_FS, m in F


@dataclass
class FootSpec:
    frame: Annotated[str, Help("the name of a frame of the model")]
    point: Optional[Vector3] = None  # p_FC, m in F
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
