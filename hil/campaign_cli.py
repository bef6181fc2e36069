"""`hil campaign FILE` and `hil export LOG --mcap OUT`: their options and commands (hil.cli lists them)."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from drivers.core.schema import ConfigError

from .cli_table import Command, arg
from .progress import ProgressBar


def cmd_campaign(args) -> int:
    """Thousands of variations of a scenario on Ray or a process pool: pass rates, worst seeds, table, plots.

    Runs N variations of a campaign's base scenario in lockstep (run k has the seed campaign.seed + k
    and draws its values from it), checks each against the scenario's criteria and writes a report
    to --out: summary.json, results.csv/.parquet, distributions.png, tracking_error.png. Ctrl-C stops
    and keeps what finished. Exit 0 when every run passes, 1 when one fails, 2 for a bad campaign
    file. docs/campaign.md describes the files."""
    from .campaign import load_campaign
    from .campaign_run import default_workers, ray_available
    campaign = load_campaign(args.file)
    if args.seed is not None:
        return _one(campaign, args)
    if args.log or args.write_scenario:
        raise ConfigError("", "--log and --write-scenario go with --seed (one run)")
    n = campaign.spec.runs if args.runs is None else args.runs
    workers = default_workers() if args.jobs is None else args.jobs
    for name, value in (("-n", n), ("-j", workers), ("--batch", 1 if args.batch is None else args.batch)):
        if value < 1:
            raise ConfigError("", f"{name} must be at least 1, got {value}")
    engine = args.engine or ("ray" if ray_available() else "pool")
    if engine == "ray" and not ray_available():
        raise ConfigError("", "--engine ray needs Ray (pip install ray); --engine pool runs without it")
    if args.address and engine != "ray":
        raise ConfigError("", "--address is a Ray cluster's: it goes with --engine ray")
    out = Path(args.out or f"campaign-out/{campaign.name}")
    return run_campaign(campaign, n, engine, workers, out, args.address, args.batch, not args.quiet)


def run_campaign(campaign, n: int, engine: str, workers: int, out: Path, address=None, batch=None,
                 bar: bool = True) -> int:
    from .campaign_report import format_summary, summarize, write_report
    from .campaign_run import collect
    seeds = [campaign.run_seed(k) for k in range(n)]
    progress = ProgressBar(n, "run", bar)
    print(f"hil campaign: {n} runs of {campaign.base.name} on {engine}"
          + (f" at {address}" if address else f" ({workers} workers)") + f"; report in {out}", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        rows, interrupted, workers = collect(campaign, seeds, engine, workers,
                                             lambda new: progress.update(len(new), sum(not r["passed"] for r in new)),
                                             address, batch)
    finally:
        progress.close()
    summary = summarize(campaign, rows, n, time.perf_counter() - t0, engine, workers, interrupted)
    summary = write_report(campaign, rows, summary, out)
    print(format_summary(summary))
    print(f"report: {out / 'summary.json'}")
    if interrupted:
        return 130
    return 0 if rows and all(r["passed"] for r in rows) else 1


def _one(campaign, args) -> int:
    import yaml

    from .campaign_report import first_failure
    from .campaign_run import run_one
    seed = args.seed
    print(f"hil campaign: {campaign.path} seed {seed} (run {seed - campaign.spec.seed}); the variation:")
    print(yaml.safe_dump(campaign.variation(seed), sort_keys=False, default_flow_style=None).rstrip())
    if args.write_scenario:
        data = campaign.scenario_data(seed)
        data["scenario"]["description"] = (f"{campaign.name} seed {seed}: "
                                           + (data["scenario"].get("description") or campaign.base.name))
        target = Path(args.write_scenario)
        target.parent.mkdir(parents=True, exist_ok=True)
        if data.get("robot", {}).get("model"):       # relative to the new file's folder
            data["robot"]["model"] = os.path.relpath(campaign.base.cfg.robot.model, target.resolve().parent)
        target.write_text(f"# From campaign {campaign.path}, seed {seed}: {campaign.base.path} with the values "
                          f"above.\n" + yaml.safe_dump(data, sort_keys=False, default_flow_style=None))
        print(f"scenario: {target} (hil regress {target})")
    row = run_one(campaign, seed, str(Path(args.log).resolve()) if args.log else None)
    if row["error"]:
        print(f"ERROR {row['error']}", file=sys.stderr)
        return 1
    for c in row["checks"]:
        print(f"  {'PASS' if c['passed'] else 'FAIL'} {c['name']}: " + (c.get("detail") or
                                                                       f"{c['measured']} vs {c['limit']}"))
    print(("PASS" if row["passed"] else f"FAIL ({first_failure(row)})")
          + f"; tracking rms {row['tracking_rms_rad'] * 1e3:.3f} mrad, max {row['tracking_max_rad'] * 1e3:.3f} mrad"
          + (f"; log: {args.log}" if args.log else ""))
    return 0 if row["passed"] else 1


def cmd_export(args) -> int:
    from .mcap_export import export_mcap
    counts = export_mcap(args.log, args.mcap)
    if args.json:
        print(json.dumps({"mcap": args.mcap, "messages": counts}))
        return 0
    skipped = counts.pop("skipped")
    print(f"hil export: {args.mcap}: {sum(counts.values()):,} messages on {len(counts)} channels; skipped "
          + (", ".join(f"{n:,} ({why})" for why, n in skipped.items()) if skipped else "none"))
    for channel, n in sorted(counts.items(), key=lambda x: -x[1]):
        print(f"  {channel:24s} {n:>9,}")
    return 0


CAMPAIGN = Command("campaign", cmd_campaign, "FILE [-n N]", (
    arg("file", help="campaign file (YAML)"),
    arg("-n", "--runs", type=int, metavar="N", help="how many variations (default: campaign.runs)"),
    arg("--engine", choices=("ray", "pool", "sequential"),
        help="where the runs go (default: ray when it is installed, else pool)"),
    arg("-j", "--jobs", type=int, metavar="N",
        help="workers of the pool, or CPUs of the local Ray cluster (default: this machine's cores)"),
    arg("--address", metavar="ADDR",
        help="an existing Ray cluster ('auto', or HEAD_IP:6379); default: a local one for this run"),
    arg("--batch", type=int, metavar="N", help="runs per task (default: ~8 tasks per worker)"),
    arg("--out", metavar="DIR", help="report folder (default: campaign-out/NAME)"),
    arg("--seed", type=int, metavar="S", help="run only the variation with this seed, and print it"),
    arg("--log", metavar="FILE.lcmlog", help="with --seed: record the run's LCM traffic"),
    arg("--write-scenario", metavar="FILE.yaml", help="with --seed: write the variation as a regression scenario file"),
    arg("--quiet", action="store_true", help="no progress bar")),
    epilog="examples:\n  hil campaign configs/campaigns/joint_pd_payload.yaml -n 10000\n"
           "  hil campaign FILE -n 10000 --address auto          # on the Ray cluster `ray start` made\n"
           "  hil campaign FILE --seed 1234 --log run.lcmlog     # one run again, from its seed\n"
           "  hil campaign FILE --seed 1234 --write-scenario configs/scenarios/payload_1234.yaml")

EXPORT_ARGS = (arg("log", help="an LCM log"),
               arg("--mcap", required=True, metavar="OUT.mcap", help="the MCAP file to write"),
               arg("--json", action="store_true", help="print what was written as one JSON object"))
