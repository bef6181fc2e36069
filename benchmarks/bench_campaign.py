"""Campaign throughput: N short scenarios (default 1,000 runs of 0.5 s simulated) sequentially, on the
process pool and on Ray's local cluster, then on Ray's multi-node test cluster (ray.cluster_utils)
with 1 and 2 one-CPU nodes. Prints a markdown table: runs/s, simulated s per wall s, the median run's
wall and CPU time, how busy the workers were (Σ run wall / (wall × workers): what the engine's
start-up, scheduling and result traffic leave), the engine's overhead per run (wall × workers / N −
the mean run wall) and the rate as a share of workers × the sequential rate. On a shared machine the
runs themselves slow down when other processes take the cores (median run wall vs CPU); the busy
share and the overhead per run are the engine's own figures.

    python benchmarks/bench_campaign.py [-n 1000] [--duration 0.5] [--skip-cluster] [--json PATH]
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import record  # noqa: E402

from hil.campaign import load_campaign  # noqa: E402
from hil.campaign_run import collect, default_workers, ray_available  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def campaign_file(folder: Path, duration: float) -> Path:
    p = folder / "bench.yaml"
    p.write_text(yaml.safe_dump({"campaign": {
        "base": str(REPO / "configs/scenarios/joint_pd_quintic.yaml"), "seed": 0, "duration": duration,
        "vary": {"sim.payload.mass": {"uniform": [0.0, 1.5]},
                 "controller.kp": {"normal": {"mean": 1.0, "std": 0.05}, "mode": "scale"}}}}))
    return p


def measure(campaign, n: int, engine: str, workers: int, address=None) -> dict:
    t0 = time.perf_counter()
    rows, _, _ = collect(campaign, range(n), engine, workers, address=address)
    wall = time.perf_counter() - t0
    assert len(rows) == n and all(r["error"] is None for r in rows), [r["error"] for r in rows if r["error"]][:3]
    return {"wall": wall, "rate": n / wall, "sim": sum(r["sim_s"] for r in rows) / wall,
            "run_s": sorted(r["wall_s"] for r in rows)[n // 2], "cpu_s": sorted(r["cpu_s"] for r in rows)[n // 2],
            "busy": sum(r["wall_s"] for r in rows)}


def main(argv=None) -> None:
    ap = record.parser(__file__, __doc__)
    ap.add_argument("-n", type=int, default=1000, help="runs per engine (default 1000)")
    ap.add_argument("--duration", type=float, default=0.5, help="simulated seconds per run (default 0.5)")
    ap.add_argument("--skip-cluster", action="store_true", help="not Ray's multi-node test cluster")
    args = ap.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "Campaigns", peers=("ray",))
    cores = default_workers()
    with tempfile.TemporaryDirectory() as tmp:
        campaign = load_campaign(campaign_file(Path(tmp), args.duration))
        results = {}
        seq = results["sequential"] = measure(campaign, args.n, "sequential", 1)
        results[f"process pool ({cores})"] = measure(campaign, args.n, "pool", cores)
        if ray_available():
            results[f"Ray local ({cores} CPUs)"] = measure(campaign, args.n, "ray", cores)
            if not args.skip_cluster:
                import ray
                from ray.cluster_utils import Cluster
                for nodes in (1, 2):
                    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
                    for _ in range(nodes - 1):
                        cluster.add_node(num_cpus=1)
                    try:
                        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
                        results[f"Ray test cluster, {nodes} × 1-CPU node"] = measure(campaign, args.n, "ray", nodes)
                    finally:
                        ray.shutdown()
                        cluster.shutdown()
    table = rec.table(f"{args.n} runs of {args.duration:g} s simulated ({campaign.base.name}, payload and gains "
                      f"varied); {cores} workers", [
                          record.Column("engine", "{engine}", align="left"), record.Column("wall s", "{wall:.1f}"),
                          record.Column("runs/s", "{rate:.1f}"), record.Column("sim s per wall s", "{sim:.1f}"),
                          record.Column("median run wall / CPU ms", "{run_ms:.0f} / {cpu_ms:.0f}"),
                          record.Column("workers busy", "{busy:.0%}"),
                          record.Column("overhead per run ms", "{overhead_ms:.1f}"),
                          record.Column("vs workers × sequential", "{scaling:.0%} of {workers} ×")])
    for name, r in results.items():
        workers = 1 if name == "sequential" else (int(name.split(",")[1].split("×")[0]) if "cluster" in name
                                                  else cores)
        table.add(engine=name, wall=r["wall"], rate=r["rate"], sim=r["sim"], run_ms=r["run_s"] * 1e3,
                  cpu_ms=r["cpu_s"] * 1e3, busy=r["busy"] / (r["wall"] * workers),
                  overhead_ms=(r["wall"] * workers - r["busy"]) / args.n * 1e3,
                  scaling=r["rate"] / (workers * seq["rate"]), workers=workers)
    rec.show(table)
    rec.save()


if __name__ == "__main__":
    main()
