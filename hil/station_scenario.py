"""A station's regression scenario: a station file (drivers.station) with a `scenario:` section whose
criteria are per arm, run in lockstep (hil.station) by `hil regress` and hil.testing.

    scenario:
      description: two iiwas, the right one's joint 1 stops answering at 1 s
      duration: 3.0
      arms:                          # hil.scenario's Criteria, on each arm's own summary
        left: {final_state: RUNNING, trips: [], summary: {commanding: true}}
        right: {final_state: FAULT, trips: [{fault: CONTROLLER, at: 1.0, within_ms: 500}]}
      station: {station.stopped_by: null}      # any figure of the station's summary, as criteria.summary
      golden: {file: golden/station_two_iiwas.json}

The golden outcome is each arm's hil.scenario.outcome, its keys prefixed by the arm's name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from drivers.core.schema import ConfigError, Help, Positive
from drivers.station import Station, parse_station

from .scenario import Criteria, GoldenSpec, check, check_trips, outcome, read_scenario


@dataclass
class StationScenarioSpec:
    duration: Annotated[Positive, Help("seconds of simulated time")]
    description: str = ""                                   # shown in the report
    arms: dict[str, Criteria] = field(default_factory=dict)   # arm name -> what must hold of its summary
    # figures of the station's summary by dotted path (e.g. station.stopped_by): a value, or {min, max}
    station: dict[str, Any] = field(default_factory=dict)
    golden: GoldenSpec | None = None                        # None: no golden comparison


@dataclass
class StationScenario:
    name: str
    path: Path
    spec: StationScenarioSpec
    station: Station

    @property
    def golden_path(self) -> Path | None:
        return None if self.spec.golden is None else (self.path.parent / self.spec.golden.file).resolve()


def load_station_scenario(path: str | Path) -> StationScenario:
    """The validated station scenario of a YAML file; errors name the file and the key."""
    path = Path(path)
    spec, data = read_scenario(path, StationScenarioSpec, "a station file")
    data.setdefault("viz", False)
    station = parse_station(data, path.resolve().parent, str(path))
    for name in spec.arms:
        if name not in station.arms:
            raise ConfigError(f"scenario.arms.{name}", f"no such arm; the station's: {', '.join(station.arms)}",
                              str(path))
    for name, criteria in spec.arms.items():
        check_trips(criteria, f"scenario.arms.{name}", path)
    return StationScenario(path.stem, path, spec, station)


class _Only:
    """hil.scenario.check's spec: just the criteria."""

    def __init__(self, criteria: Criteria):
        self.criteria = criteria


def check_station(spec: StationScenarioSpec, summary: dict, period_s: float) -> list[dict]:
    """Each arm's criteria on its summary (named `arm.criterion`), then the station's figures."""
    out = []
    for name, criteria in spec.arms.items():
        for c in check(_Only(criteria), summary["arms"][name], period_s):
            out.append({**c, "name": f"{name}.{c['name']}"})
    out += check(_Only(Criteria(summary=spec.station)), summary, period_s)
    return out


def station_outcome(loop) -> dict:
    """Each arm's outcome (hil.scenario.outcome) under `arm.key`."""
    return {f"{name}.{key}": value for name, arm in loop.arms.items() for key, value in outcome(arm).items()}


def run_station_scenario(sc: StationScenario):
    """(summary, StationLoop) of the scenario run in lockstep: the station loop and its simulated arms."""
    from .lockstep import run_closed
    from .station import make_station_lockstep
    loop, sim = make_station_lockstep(sc.station)
    return run_closed(loop, sim, sc.spec.duration), loop


def is_station_scenario(path: str | Path) -> bool:
    """Whether the scenario file at `path` is a station's (has a `station:` section)."""
    from drivers.station import is_station
    return is_station(path)
