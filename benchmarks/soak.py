"""Soak: `hil run` against `hil sim` at 1 kHz over UDP multicast (ttl=0) for a long time, both as the
user starts them, with their memory, open files and threads sampled from outside (/proc) all along.

Memory must be bounded by design: the loop's tick statistics are streaming histograms and its plot
trace a fixed number of rows (hil.telemetry), so RSS at the end should equal RSS at the start. The
loop's deadline misses are shown beside those of a bare loop that only waits on the same clock for
--floor seconds (the machine's floor), per million ticks.

    nice python benchmarks/soak.py [--minutes 60] [--sample 10] [--floor 60] [--json PATH]
    chrt -f 30 python benchmarks/soak.py ...      # both processes under SCHED_FIFO (inherited)
    python benchmarks/soak.py --from-json benchmarks/results/soak.json   # the tables of a saved run again

The results file (benchmarks/results/soak.json unless --json or --no-json) holds the tables and,
under "data", every sample and the loop's summary.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import record  # noqa: E402

from benchmarks.bench_loop import bare_loop  # noqa: E402
from drivers.run_config import load_config  # noqa: E402
from hil.telemetry import fault_count  # noqa: E402
from messages.channels import private_lcm_url  # noqa: E402

CONFIG = REPO / "configs" / "demo.yaml"


def sample(pid: int) -> dict | None:
    """RSS [MB], open file descriptors and threads of process `pid` (None once it has exited)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if "VmRSS" not in fields:                  # exiting (a zombie has no memory left)
        return None
    return {"rss_mb": int(fields["VmRSS"].split()[0]) / 1024, "fds": fds, "threads": int(fields["Threads"])}


def scheduling() -> str:
    """How this process (and so the two it starts) is scheduled: 'SCHED_FIFO 30' or 'nice 0'."""
    if os.sched_getscheduler(0) == os.SCHED_FIFO:
        return f"SCHED_FIFO {os.sched_getparam(0).sched_priority}"
    return f"nice {os.nice(0)}"


def soak(minutes: float, every_s: float, floor_s: float, config: Path) -> dict:
    url = private_lcm_url()
    duration = minutes * 60
    hil = [sys.executable, "-m", "hil"]
    sim = subprocess.Popen([*hil, "sim", str(config), "--no-viz", "--lcm-url", url, "--duration",
                            str(duration + 60)], cwd=REPO, stdout=subprocess.DEVNULL)
    time.sleep(2.0)
    run = subprocess.Popen([*hil, "run", str(config), "--lcm-url", url, "--duration", str(duration), "--json",
                            "--quiet"], cwd=REPO, stdout=subprocess.PIPE, text=True)
    samples = {"loop": [], "sim": []}
    start = time.monotonic()
    try:
        while run.poll() is None:
            t = round(time.monotonic() - start, 1)
            for name, proc in (("loop", run), ("sim", sim)):
                s = sample(proc.pid)
                if s is not None:
                    samples[name].append({"t_s": t, **s})
            time.sleep(every_s)
        summary = json.loads(run.stdout.read().strip().splitlines()[-1])
    finally:
        for proc in (run, sim):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)
    cfg = load_config(config)
    period_ns = round(1e9 / cfg.loop.rate_hz)
    bare = bare_loop(floor_s, period_ns, int(cfg.loop.spin_us * 1e3))
    budget = cfg.loop.deadline_budget_us
    return {"minutes": minutes, "scheduling": scheduling(), "summary": summary, "samples": samples, "budget_us": budget,
            "bare": {"ticks": int(bare.size), "misses": int((bare > budget).sum()),
                     "p99_us": float(sorted(bare)[int(0.99 * bare.size)]), "max_us": float(bare.max())}}


def tables(r: dict) -> list[record.Table]:
    """The tables of a soak run's result (as soak() returns it)."""
    s, bare = r["summary"], r["bare"]
    per_m = 1e6 / max(1, s["ticks"])
    run = record.Table(f"`hil run` vs `hil sim`, 1 kHz over UDP multicast (ttl=0), {r['minutes']:g} min, "
                       f"configs/demo.yaml, under {r.get('scheduling', 'nice')}", [
                           record.Column("ticks", "{ticks}"), record.Column("rate Hz", "{rate}"),
                           record.Column("misses (> %g µs)" % r["budget_us"], "{misses}"),
                           record.Column("per million ticks", "{per_million:.0f}"),
                           record.Column("bare loop floor per million", "{bare_per_million:.0f} ({bare_ticks} ticks)"),
                           record.Column("lateness p99 µs", "{p99}"), record.Column("p99.9", "{p99_9}"),
                           record.Column("max", "{max:.0f}"), record.Column("faults", "{faults}"),
                           record.Column("final state", "{final_state}", align="left")])
    run.add(ticks=s["ticks"], rate=s["rate_hz"]["achieved"], misses=s["deadline_misses"],
            per_million=s["deadline_misses"] * per_m, bare_per_million=bare["misses"] * 1e6 / bare["ticks"],
            bare_ticks=bare["ticks"], p99=s["lateness_us"]["p99"], p99_9=s["lateness_us"]["p99.9"],
            max=s["lateness_us"]["max"], faults=fault_count(s), final_state=s["final_state"])
    processes = record.Table("Memory, open files and threads, sampled from /proc", [
        record.Column("process", "{name}", align="left"), record.Column("RSS start MB", "{rss_start:.1f}"),
        record.Column("RSS end MB", "{rss_end:.1f}"), record.Column("RSS max MB", "{rss_max:.1f}"),
        record.Column("fds start → end", "{fds_start} → {fds_end}", align="left"),
        record.Column("threads start → end", "{threads_start} → {threads_end}", align="left"),
        record.Column("samples", "{samples}")])
    for name, rows in r["samples"].items():
        if len(rows) < 3:
            continue
        first, last = rows[1], rows[-1]            # rows[0]: the process is still importing
        processes.add(name="`hil run` (loop)" if name == "loop" else "`hil sim`", rss_start=first["rss_mb"],
                      rss_end=last["rss_mb"], rss_max=max(x["rss_mb"] for x in rows), fds_start=first["fds"],
                      fds_end=last["fds"], threads_start=first["threads"], threads_end=last["threads"],
                      samples=len(rows))
    return [run, processes]


def main(argv=None) -> int:
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--minutes", type=float, default=60.0, help="length of the run (default 60)")
    ap.add_argument("--sample", type=float, default=10.0, metavar="S", help="seconds between samples (default 10)")
    ap.add_argument("--floor", type=float, default=60.0, metavar="S", help="seconds of the bare loop (default 60)")
    ap.add_argument("--config", type=Path, default=CONFIG, help="run config (default configs/demo.yaml)")
    ap.add_argument("--from-json", metavar="FILE", help="print the tables of a saved run; run nothing")
    args = ap.parse_args(argv)
    if args.from_json:
        try:
            saved = json.loads(Path(args.from_json).read_text())
            shown = saved["tables"] if "format" in saved else [t.to_json() for t in tables(saved)]
            text = "\n\n".join(record.markdown(t) for t in shown)
        except (OSError, ValueError, KeyError, TypeError) as e:
            ap.exit(2, f"soak: {args.from_json}: not a saved soak run ({e})\n")
        print(text)
        return 0
    rec = record.Record(__file__, __doc__, args, "Soak", peers=("lcm",))
    result = soak(args.minutes, args.sample, args.floor, args.config)
    rec.data = result
    for t in tables(result):
        rec.tables.append(t)
        rec.show(t)
    rec.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
