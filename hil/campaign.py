"""Campaigns: one base scenario, thousands of variations of its keys, each reproducible from its seed.

    campaign:
      base: scenarios/joint_pd_quintic.yaml    # a regression scenario (relative to this file or configs/)
      seed: 1                                  # run k of the campaign has the seed  seed + k
      set: {sim.payload.frame: iiwa_link_7}    # optional: keys set in every run, before vary
      runs: 1000                               # default for -n
      duration: 1.0                            # optional: overrides scenario.duration (s)
      vary:                                    # dotted keys of the base scenario file
        sim.payload.mass: {uniform: [0.0, 3.0]}                      # kg at the end effector
        sim.joint_damping: {uniform: [0.0, 0.5]}                     # N·m·s/rad, every joint
        controller.kp: {normal: {mean: 1.0, std: 0.05}, mode: scale} # per joint: kp_i · x_i
        sim.initial_positions: {normal: {std: 0.02}, mode: add}      # q0_i + x_i
        sim.faults[0].delay: {choice: [0.001, 0.002, 0.005]}
        safety.max_tracking_error: {grid: [0.03, 0.05]}

Run k draws every distribution from numpy's default_rng(seed + k), in the order of the keys; the grid
keys instead take the (k mod G)-th point of the product of their values (G points). A key whose base
value is a list gets one independent draw per entry (`per_element: false`: one draw for all), and
`mode` says how a draw x combines with the base value b: set (x), add (b + x), scale (b · x).
`round: r` rounds a draw to a multiple of r (e.g. a latency to whole 1 ms steps), `min`/`max` clip
it. Unless `sim.seed` is varied, each run's sim.seed is its own seed, so random faults differ too.
docs/campaign.md has the reference.
"""
from __future__ import annotations

import copy
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import numpy as np
from annotated_types import Ge, Len

from drivers.core.config import resolve
from drivers.core.schema import ConfigError, Help, NonNegative, Positive, load, merge, read_yaml

from .scenario import Scenario, ScenarioSpec, load_scenario

KIND = ("uniform", "normal", "choice", "grid")


@dataclass
class Normal:
    std: NonNegative               # the standard deviation
    mean: float = 0.0              # the mean (with mode add: 0 draws around the base value)


@dataclass
class Distribution:
    """Exactly one of uniform, normal, choice, grid."""

    uniform: Optional[Annotated[list[float], Len(2, 2)]] = None   # [low, high): drawn uniformly
    normal: Optional[Normal] = None                  # drawn normally
    choice: Optional[list[Any]] = None               # one of the values (any YAML: numbers, lists, fault mappings)
    weights: Optional[list[float]] = None            # choice: probabilities (normalized), default equal
    # not random: the grid keys together take the points of their product in turn (run k: the k mod G-th)
    grid: Optional[list[Any]] = None
    mode: Literal["set", "add", "scale"] = "set"     # how a draw x combines with the base value b: x, b + x, b · x
    per_element: bool = True                         # list base values: one draw per entry (false: one for all)
    size: Optional[Annotated[int, Ge(1)]] = None   # a list of this many (no base value)
    round: Optional[Positive] = None                 # a draw rounded to a multiple of this
    min: Optional[float] = None                      # a draw clipped to at least this
    max: Optional[float] = None                      # a draw clipped to at most this

    @property
    def kind(self) -> str:
        return next(k for k in KIND if getattr(self, k) is not None)


@dataclass
class CampaignSpec:
    # a regression scenario (link: sim), relative to the campaign file, else to configs/
    base: Annotated[str, Help("the base scenario file")]
    vary: dict[str, Distribution] = field(default_factory=dict)   # dotted key of the base scenario → distribution
    seed: int = 0                                        # run k (k = 0 … n−1) has the seed seed + k
    set: dict[str, Any] = field(default_factory=dict)    # dotted keys set in every run, before `vary`
    runs: Annotated[int, Ge(1)] = 100                    # runs when -n is not given
    duration: Optional[Positive] = None                  # s of simulated time per run; None: the scenario's
    description: str = ""                                # shown in the report


@dataclass
class Campaign:
    name: str
    path: Path
    spec: CampaignSpec
    base: Scenario
    keys: dict[str, list]          # parsed dotted keys: "sim.faults[0].delay" -> ["sim", "faults", 0, "delay"]
    grid: list[tuple]              # the points of the grid keys' product, in key order
    base_data: dict                # the base file's mapping (its scenario: section as written), `set` applied

    @property
    def grid_keys(self) -> list[str]:
        return [k for k, d in self.spec.vary.items() if d.kind == "grid"]

    def run_seed(self, index: int) -> int:
        return self.spec.seed + index

    def variation(self, seed: int) -> dict[str, Any]:
        """{key: value} of the run with this seed (the values set into the base scenario)."""
        rng = np.random.default_rng(seed)
        point = dict(zip(self.grid_keys, self.grid[(seed - self.spec.seed) % len(self.grid)]))
        out = {}
        for key, dist in self.spec.vary.items():
            base = _get(self.base_data, self.keys[key], key, dist.mode != "set")
            out[key] = point[key] if key in point else _draw(dist, base, rng)
            if dist.mode != "set":
                out[key] = _combine(dist.mode, base, out[key])
        return out

    def scenario_data(self, seed: int) -> dict:
        """The scenario file's mapping for the run with this seed (what `--write-scenario` saves)."""
        data = copy.deepcopy(self.base_data)
        for key, value in self.variation(seed).items():
            _set(data, self.keys[key], value, key)
        if "sim.seed" not in self.keys and isinstance(data.get("sim"), dict):
            data["sim"]["seed"] = seed
        data["scenario"].pop("golden", None)       # a variation has no stored outcome
        if self.spec.duration is not None:
            data["scenario"]["duration"] = self.spec.duration
        return data

    def scenario(self, seed: int) -> Scenario:
        """The validated scenario of the run with this seed; errors name the campaign and the seed."""
        try:
            return scenario_from_data(self.scenario_data(seed), self.base.path, f"{self.base.name}@{seed}")
        except ConfigError as e:
            raise ConfigError(e.key, f"{message(e)} (in the variation with seed {seed}; "
                                     f"campaign.vary sets {', '.join(self.spec.vary)})", str(self.path)) from None


def message(e: ConfigError) -> str:
    """The error's text without its source and key."""
    text, prefix = str(e), (f"{e.source}: " if e.source else "") + (f"{e.key}: " if e.key else "")
    return text[len(prefix):] if text.startswith(prefix) else text


def scenario_from_data(data: dict, path: Path, name: str) -> Scenario:
    """A Scenario from a scenario file's mapping whose relative paths are relative to `path`'s folder."""
    from drivers.run_config import parse_config
    data = copy.deepcopy(data)
    spec = load(ScenarioSpec, data.pop("scenario"), "scenario")
    cfg = parse_config(data, path.resolve().parent, str(path))
    return Scenario(name, path, spec, cfg, data)


_KEY = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*|\[\d+\])*")
_TOKEN = re.compile(r"([A-Za-z_]\w*)|\[(\d+)\]")


def parse_key(key: str) -> list:
    """'sim.faults[0].delay' -> ['sim', 'faults', 0, 'delay']; ConfigError for anything else."""
    if not _KEY.fullmatch(key):
        raise ConfigError(f"campaign.vary.{key}", "is not a dotted key like sim.payload.mass or sim.faults[0].delay")
    return [m.group(1) if m.group(1) else int(m.group(2)) for m in _TOKEN.finditer(key)]


def _get(data, parts: list, key: str, required: bool):
    node = data
    for p in parts:
        if isinstance(p, int):
            if not isinstance(node, list) or p >= len(node):
                raise ConfigError(f"campaign.vary.{key}", f"the base scenario has no item [{p}] there")
            node = node[p]
        elif isinstance(node, dict) and p in node:
            node = node[p]
        else:
            if required:
                raise ConfigError(f"campaign.vary.{key}", "mode add/scale needs a value in the base scenario, "
                                                          "which has none")
            return None
    return node


def _set(data: dict, parts: list, value, key: str) -> None:
    node = data
    for p, nxt in zip(parts, parts[1:]):
        if isinstance(p, int):
            if not isinstance(node, list) or p >= len(node):
                raise ConfigError(f"campaign.vary.{key}", f"the base scenario has no item [{p}] there")
            node = node[p]
            continue
        if not isinstance(node, dict):
            raise ConfigError(f"campaign.vary.{key}", f"'{p}' is inside a value that is not a mapping")
        if node.get(p) is None:
            if isinstance(nxt, int):
                raise ConfigError(f"campaign.vary.{key}", f"the base scenario has no list at '{p}'")
            node[p] = {}
        node = node[p]
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise ConfigError(f"campaign.vary.{key}", f"the base scenario has no item [{last}] there")
    elif not isinstance(node, dict):
        raise ConfigError(f"campaign.vary.{key}", f"'{last}' is inside a value that is not a mapping")
    both = isinstance(value, dict) and isinstance(node, dict) and isinstance(node.get(last), dict)
    node[last] = merge(node[last], value) if both else value       # (drivers.core.schema.merge's rule)


def _draw(d: Distribution, base, rng: np.random.Generator):
    """One draw (a list of draws, one per entry of a list base value, when per_element)."""
    n = d.size or (len(base) if isinstance(base, list) else None)
    size = n if d.per_element else None
    if d.kind == "uniform":
        x = rng.uniform(d.uniform[0], d.uniform[1], size)
    elif d.kind == "normal":
        x = rng.normal(d.normal.mean, d.normal.std, size)
    else:
        p = None if d.weights is None else np.asarray(d.weights, dtype=float) / np.sum(d.weights)
        picks = rng.choice(len(d.choice), size=size, p=p)
        return [d.choice[i] for i in picks] if size is not None else \
            (d.choice[int(picks)] if n is None else [d.choice[int(picks)]] * n)
    if d.round is not None:
        x = np.round(np.asarray(x) / d.round) * d.round
    if d.min is not None or d.max is not None:
        x = np.clip(x, d.min, d.max)
    return np.asarray(x).tolist() if size is not None or n is None else [float(x)] * n


def _combine(mode: str, base, x):
    b = np.asarray(base, dtype=float)
    out = b + np.asarray(x, dtype=float) if mode == "add" else b * np.asarray(x, dtype=float)
    return out.tolist()


def _check_distribution(key: str, d: Distribution, where: str) -> None:
    given = [k for k in KIND if getattr(d, k) is not None]
    if len(given) != 1:
        raise ConfigError(f"campaign.vary.{key}", f"needs exactly one of {', '.join(KIND)}"
                          + (f", got {', '.join(given)}" if given else ""), where)
    kind = given[0]
    if kind == "uniform" and not d.uniform[0] <= d.uniform[1]:
        raise ConfigError(f"campaign.vary.{key}.uniform", f"needs low <= high, got {d.uniform}", where)
    if kind in ("choice", "grid") and not getattr(d, kind):
        raise ConfigError(f"campaign.vary.{key}.{kind}", "needs at least one value", where)
    if d.weights is not None:
        if kind != "choice":
            raise ConfigError(f"campaign.vary.{key}.weights", "only goes with choice", where)
        w = np.asarray(d.weights, dtype=float)
        if len(w) != len(d.choice) or np.any(w < 0) or not w.sum() > 0:
            raise ConfigError(f"campaign.vary.{key}.weights", f"needs {len(d.choice)} numbers >= 0, not all zero",
                              where)
    if kind in ("choice", "grid") and d.mode != "set":
        values = getattr(d, kind)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise ConfigError(f"campaign.vary.{key}.mode", f"{d.mode} needs numbers in {kind}", where)
    if kind == "grid" and d.mode != "set":
        raise ConfigError(f"campaign.vary.{key}.mode", "a grid sets its values (mode: set)", where)
    if d.min is not None and d.max is not None and d.min > d.max:
        raise ConfigError(f"campaign.vary.{key}.min", f"must be <= max ({d.max:g})", where)


def load_campaign(path: str | Path) -> Campaign:
    """The validated campaign of a YAML file: its keys exist or may be set, and its first run's (and
    every grid point's) variation is a valid scenario. Errors name the file and the key."""
    path = Path(path)
    data = read_yaml(path)
    if set(data) != {"campaign"}:
        extra = sorted(set(data) - {"campaign"})
        raise ConfigError(extra[0] if extra else "campaign", "unknown top-level key (a campaign file has one "
                          "section, campaign:)" if extra else "is required", str(path))
    try:
        spec = load(CampaignSpec, data["campaign"], "campaign")
    except ConfigError as e:
        raise ConfigError(e.key, message(e), str(path)) from None
    base_path = resolve(spec.base, path.resolve().parent)
    if not base_path.is_file():
        raise ConfigError("campaign.base", f"no such scenario file '{spec.base}'", str(path))
    try:
        base = load_scenario(base_path)
    except ConfigError as e:
        raise ConfigError("campaign.base", f"the base scenario is not valid: {e}", str(path)) from None
    keys = {}
    for key, dist in spec.vary.items():
        _check_distribution(key, dist, str(path))
        try:
            keys[key] = parse_key(key)
        except ConfigError as e:
            raise ConfigError(e.key, message(e), str(path)) from None
        if keys[key][0] == "scenario":
            raise ConfigError(f"campaign.vary.{key}", "the scenario section is not varied (its criteria judge "
                                                      "every run; campaign.duration sets the duration)", str(path))
    grid = list(itertools.product(*(d.grid for d in spec.vary.values() if d.kind == "grid")))
    data = {**base.data, "scenario": read_yaml(base_path)["scenario"]}
    for key, value in spec.set.items():
        try:
            parts = parse_key(key)
            if parts[0] == "scenario":
                raise ConfigError(f"campaign.set.{key}", "the scenario section is not changed by a campaign")
            _set(data, parts, copy.deepcopy(value), key)
        except ConfigError as e:
            raise ConfigError(e.key.replace("campaign.vary.", "campaign.set."), message(e), str(path)) from None
    campaign = Campaign(path.stem, path, spec, base, keys, grid, data)
    for k in range(len(grid)):
        campaign.scenario(campaign.run_seed(k))
    return campaign
