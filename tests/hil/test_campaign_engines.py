"""The engines give the same per-seed rows: sequential in this process, a process pool (batches of
different sizes) and Ray (a local cluster, and Ray's multi-node test cluster); skipped without Ray."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hil.campaign import load_campaign
from hil.campaign_run import batches, collect

REPO = Path(__file__).resolve().parents[2]
TIMING = ("wall_s", "cpu_s")          # the only figures that are not the seed's


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    p = tmp_path_factory.mktemp("c") / "c.yaml"
    p.write_text(yaml.safe_dump({"campaign": {
        "base": str(REPO / "configs/scenarios/fault_sensor_noise.yaml"), "seed": 40, "duration": 1.5, "vary": {
            "sim.payload.mass": {"uniform": [0.0, 2.0]},
            "sim.faults[0].position_std": {"uniform": [0.0005, 0.003]},
            "sim.joint_damping": {"choice": [0.0, 0.5, 1.0]},
            "controller.kp": {"grid": [[300], [400]]}}}}))
    return load_campaign(p)


def rows_by_seed(rows):
    return {r["seed"]: {k: v for k, v in r.items() if k not in TIMING + ("traceback",)} for r in rows}


@pytest.fixture(scope="module")
def sequential(campaign):
    rows, interrupted, _ = collect(campaign, range(40, 46), "sequential", 1)
    assert not interrupted and all(r["error"] is None for r in rows), rows
    return rows_by_seed(rows)


def test_batches_cover_every_seed_once():
    seeds = list(range(1000))
    parts = batches(seeds, 2)
    assert sum(parts, []) == seeds and len(parts) == 20 and max(map(len, parts)) == 50     # capped at 50
    assert batches(seeds, 64)[0] == [0, 1] and len(batches(list(range(5)), 2, size=2)) == 3


def test_pool_gives_the_sequential_rows(campaign, sequential):
    for batch in (1, 4):
        rows, _, _ = collect(campaign, range(40, 46), "pool", 2, batch=batch)
        assert rows_by_seed(rows) == sequential
    assert len({r["tracking_rms_rad"] for r in sequential.values()}) == 6     # the variations differ


def test_ray_local_gives_the_sequential_rows(campaign, sequential):
    pytest.importorskip("ray")
    rows, _, _ = collect(campaign, range(40, 46), "ray", 2, batch=2)
    assert rows_by_seed(rows) == sequential


def test_ray_multi_node_cluster_gives_the_sequential_rows(campaign, sequential):
    pytest.importorskip("ray")
    import ray
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    try:
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        rows, _, _ = collect(campaign, range(40, 46), "ray", 2, batch=1)
        assert rows_by_seed(rows) == sequential
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_cli_address_joins_an_existing_cluster(campaign, sequential, tmp_path):
    """`hil campaign --address ADDR` runs on the cluster at ADDR (here Ray's test cluster, 2 nodes)."""
    pytest.importorskip("ray")
    import csv

    from ray.cluster_utils import Cluster

    from hil.cli import main
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    try:
        code = main(["campaign", str(campaign.path), "-n", "6", "--address", cluster.address,
                     "--out", str(tmp_path), "--quiet"])
    finally:
        cluster.shutdown()
    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert code in (0, 1) and [int(r["seed"]) for r in rows] == list(range(40, 46))
    assert [float(r["tracking_rms_rad"]) for r in rows] == [sequential[s]["tracking_rms_rad"] for s in range(40, 46)]
