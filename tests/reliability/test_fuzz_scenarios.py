"""Fuzzing the files beside run configs: campaign files (hil campaign) and legged scenarios (hil demo
--config, hil regress), as test_fuzz_configs does run configs (whose servo_bus section it covers):
keys of every section set to values of the wrong type, unknown and deleted keys, mutated bytes.
Property: the loader returns or raises ConfigError naming the file, never anything else."""
from __future__ import annotations

import yaml
from hypothesis import given

from drivers.core.schema import parse_yaml
from hil.campaign import CampaignSpec, Distribution, load_campaign
from hil.legged_scenario import LeggedEvent, LeggedRun, LeggedScenarioSpec, load_legged_scenario
from tests.conftest import REPO
from tests.reliability.inputs import (
    GOOD_LEGGED,
    apply_edits,
    fuzz_settings,
    key_edits,
    key_paths,
    load_or_error,
    mutations,
)

BASE_SCENARIO = REPO / "configs" / "scenarios" / "joint_pd_quintic.yaml"
CAMPAIGN = f"""\
campaign:
  base: {BASE_SCENARIO}
  runs: 4
  seed: 3
  duration: 0.5
  set: {{controller.kd: [1, 1, 1, 1, 1, 1, 1]}}
  vary:
    sim.joint_damping: {{uniform: [0.0, 1.0], round: 0.1}}
    sim.payload.mass: {{grid: [0.0, 0.5]}}
    controller.kp: {{normal: {{mean: 1.0, std: 0.05}}, mode: scale, min: 0.5}}
    controller.kd: {{choice: [1.0, 2.0], weights: [1, 3]}}
"""
LEGGED = parse_yaml(GOOD_LEGGED, "legged.yaml")
LEGGED_PATHS = key_paths(LeggedRun, ("legged",)) + key_paths(LeggedEvent, ("legged", "events", 0)) \
    + key_paths(LeggedScenarioSpec, ("scenario",))
CAMPAIGN_PATHS = key_paths(CampaignSpec, ("campaign",)) + [
    ("campaign", "vary", key) + p for key in ("sim.joint_damping", "controller.kp", "sim.nope[3]")
    for p in key_paths(Distribution)] + [("campaign", "set", "sim.time_step"), ("campaign", "vary", "scenario.x")]


def test_the_seeds_are_good(tmp_path):
    assert load_campaign(_write(tmp_path, CAMPAIGN)).spec.runs == 4
    assert load_legged_scenario(_write(tmp_path, GOOD_LEGGED))[0].robot == "go2"


def _write(tmp_path, text: str):
    path = tmp_path / "good.yaml"
    path.write_text(text)
    return path


@fuzz_settings(150)
@given(edits=key_edits(CAMPAIGN_PATHS))
def test_campaign_wrong_types_unknown_and_missing_keys(tmp_path_factory, edits):
    text = yaml.safe_dump(apply_edits(parse_yaml(CAMPAIGN, "c"), edits), allow_unicode=True)
    load_or_error(load_campaign, tmp_path_factory.mktemp("c"), text.encode())


@fuzz_settings(100)
@given(mutate=mutations())
def test_campaign_mutated_bytes(tmp_path_factory, mutate):
    load_or_error(load_campaign, tmp_path_factory.mktemp("c"), mutate(CAMPAIGN.encode()))


@fuzz_settings(150)
@given(edits=key_edits(LEGGED_PATHS))
def test_legged_scenario_wrong_types_unknown_and_missing_keys(tmp_path_factory, edits):
    text = yaml.safe_dump(apply_edits(LEGGED, edits), allow_unicode=True)
    load_or_error(load_legged_scenario, tmp_path_factory.mktemp("c"), text.encode())


@fuzz_settings(100)
@given(mutate=mutations())
def test_legged_scenario_mutated_bytes(tmp_path_factory, mutate):
    load_or_error(load_legged_scenario, tmp_path_factory.mktemp("c"), mutate(GOOD_LEGGED.encode()))
