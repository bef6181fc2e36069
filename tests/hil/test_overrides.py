"""One merge rule for every config layer (drivers.core.schema.merge): overrides on a config (hil.run,
the fixtures) and a station's sections merge nested mappings at every depth and replace lists whole."""
import hil
from drivers.core.paths import CONFIGS
from drivers.station import load_station
from hil.running import load
from hil.testing import merged

TABLE = CONFIGS / "scenarios" / "collision_wrist_to_table.yaml"


def test_a_nested_override_keeps_the_rest_of_its_section():
    cfg = load(TABLE, {"safety": {"collision": {"policy": "none"}}})
    collision = cfg.safety.collision
    assert collision.policy == "none"
    assert [b.name for b in collision.boxes] == ["table"]          # the table and the tool capsule stay
    assert [c.name for c in collision.capsules] == ["gripper"]
    assert cfg.safety.damping == [5, 5, 5, 5, 2, 2, 0.5]


def test_an_override_of_one_param_keeps_the_others():
    cfg = load(TABLE, {"controller": {"params": {"kp": [10] * 7}}})
    params = cfg.controller.params
    assert params["kp"] == [10] * 7
    assert params["target"] == [0.0, 1.4, 0.0, -1.0, 0.0, 1.0, 0.0]
    assert params["kd"] == [60, 60, 20, 40, 3, 6, 0.5]


def test_a_list_is_replaced_whole():
    wall = {"name": "wall", "size": [0.1, 1.0, 1.0], "xyz": [-0.6, 0.0, 0.5]}
    cfg = load(TABLE, {"safety": {"collision": {"boxes": [wall]}}})
    assert [b.name for b in cfg.safety.collision.boxes] == ["wall"]
    assert [c.name for c in cfg.safety.collision.capsules] == ["gripper"]


def test_the_fixtures_layers_and_a_station_merge_the_same_way():
    layers = merged({"safety": {"collision": {"policy": "none", "boxes": [1]}}},
                    {"safety": {"collision": {"boxes": [2], "damping": 10.0}}})
    assert layers == {"safety": {"collision": {"policy": "none", "boxes": [2], "damping": 10.0}}}
    station = load_station(CONFIGS / "station" / "two_iiwas.yaml",
                           {"safety": {"collision": {"policy": "none"}}})
    for arm in station.arms.values():
        assert arm.safety.collision.policy == "none"
        assert arm.safety.collision.warn_distance == 0.04


def test_the_collision_guard_still_stops_the_hand_above_the_table_with_policy_none():
    """The issue's run: with the policy off, the guard's table still trips COLLISION_IMMINENT, naming
    the tool capsule and the table (the whole section used to vanish: the hand went into the table)."""
    summary = hil.run(TABLE, duration=4.0, overrides={"safety": {"collision": {"policy": "none"}},
                                                      "telemetry": {"log": None}, "viz": False})
    assert summary["final_state"] == "FAULT"
    assert [f["fault"] for f in summary["faults"]] == ["COLLISION_IMMINENT"]
    assert summary["faults"][0]["reason"].startswith("gripper / table")


def test_a_campaign_set_of_a_mapping_merges_into_the_base_scenario(tmp_path):
    import yaml

    from hil.campaign import load_campaign
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"campaign": {"base": str(TABLE), "runs": 1,
                                                 "set": {"safety.collision": {"policy": "none"},
                                                         "controller.params": {"kp": [10] * 7}}}}))
    cfg = load_campaign(path).scenario(1).cfg
    assert cfg.safety.collision.policy == "none" and [b.name for b in cfg.safety.collision.boxes] == ["table"]
    assert cfg.controller.params["kp"] == [10] * 7 and cfg.controller.params["kd"] == [60, 60, 20, 40, 3, 6, 0.5]
