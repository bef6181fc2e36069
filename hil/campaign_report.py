"""A campaign's results: pass rate per criterion, the worst runs with their seeds and the command that
reruns each, a table of every run (Parquet with pyarrow, and CSV), a JSON summary and PNG plots
(each varied key's distribution, pass and fail stacked; the tracking-error histograms)."""
from __future__ import annotations

import csv
import json
import math
import shlex
from pathlib import Path

import numpy as np

from .campaign import Campaign

FIGURES = ("tracking_rms_rad", "tracking_max_rad", "torque_max_nm", "hand_rms_m", "hand_max_m")


def rerun_command(campaign: Campaign, seed: int) -> str:
    return f"hil campaign {shlex.quote(str(campaign.path))} --seed {seed}"


def table_rows(campaign: Campaign, rows: list[dict]) -> list[dict]:
    """One flat row per run: its figures and its varied values (list values as key[i] columns)."""
    out = []
    for r in rows:
        flat = {k: v for k, v in r.items() if k not in ("checks", "traceback")}
        for key, value in campaign.variation(r["seed"]).items():
            if isinstance(value, list):
                flat.update({f"var.{key}[{i}]": v for i, v in enumerate(value)})
            else:
                flat[f"var.{key}"] = value
        out.append(flat)
    return out


def summarize(campaign: Campaign, rows: list[dict], requested: int, wall_s: float, engine: str,
              workers: int, interrupted: bool, worst: int = 10) -> dict:
    ran = [r for r in rows if r["error"] is None]
    names = sorted({k[5:] for r in ran for k in r if k.startswith("pass.")})
    criteria = {}
    for name in names:
        judged = [r[f"pass.{name}"] for r in ran if f"pass.{name}" in r]
        criteria[name] = {"runs": len(judged), "passed": int(sum(judged)),
                          "pass_rate": sum(judged) / len(judged) if judged else None}
    ranked = sorted(rows, key=lambda r: (r["error"] is None, -r.get("severity", math.inf), r["seed"]))
    figures = {}
    for key in FIGURES:
        x = np.array([r[key] for r in ran if r.get(key) is not None], dtype=float)
        if x.size:
            p50, p95, p99 = np.percentile(x, [50, 95, 99])
            figures[key] = {"min": float(x.min()), "p50": float(p50), "p95": float(p95), "p99": float(p99),
                            "max": float(x.max())}
    sim_s = sum(r.get("sim_s", 0.0) for r in ran)
    return {
        "campaign": str(campaign.path), "base": str(campaign.base.path), "seed": campaign.spec.seed,
        "description": campaign.spec.description, "engine": engine, "workers": workers,
        "requested": requested, "finished": len(rows), "interrupted": interrupted,
        "errors": len(rows) - len(ran), "passed": sum(r["passed"] for r in rows),
        "pass_rate": sum(r["passed"] for r in rows) / len(rows) if rows else None,
        "criteria": criteria, "figures": figures,
        "wall_s": wall_s, "runs_per_s": len(rows) / wall_s if wall_s > 0 else None,
        "sim_s_per_wall_s": sim_s / wall_s if wall_s > 0 else None,
        "worst": [{"seed": r["seed"], "passed": r["passed"], "severity": r.get("severity"),
                   "first_failure": first_failure(r), "rerun": rerun_command(campaign, r["seed"])}
                  for r in ranked[:worst]],
    }


def first_failure(r: dict) -> str:
    if r["error"]:
        return r["error"]
    for c in r.get("checks", []):
        if not c["passed"]:
            return f"{c['name']}: " + (c.get("detail") or f"{c['measured']} vs {c['limit']}")
    return ""


def format_summary(s: dict) -> str:
    lines = [f"campaign {s['campaign']}: {s['finished']}/{s['requested']} runs"
             + (" (interrupted)" if s["interrupted"] else "")
             + f" on {s['engine']} ({s['workers']} workers) in {s['wall_s']:.1f} s"
             + (f", {s['runs_per_s']:.1f} runs/s, {s['sim_s_per_wall_s']:.1f} sim s per wall s" if s["runs_per_s"]
                else ""),
             f"passed {s['passed']}/{s['finished']}" + (f" ({s['pass_rate']:.1%})" if s["pass_rate"] is not None
                                                         else "") + f", errors {s['errors']}",
             "", "| criterion | runs | passed | pass rate |", "|---|---:|---:|---:|"]
    for name, c in s["criteria"].items():
        rate = f"{c['pass_rate']:.1%}" if c["pass_rate"] is not None else "—"
        lines.append(f"| {name} | {c['runs']} | {c['passed']} | {rate} |")
    lines += ["", "worst runs:"]
    for w in s["worst"]:
        mark = "PASS" if w["passed"] else "FAIL"
        sev = "" if w["severity"] is None else f" severity {w['severity']:.3g}"
        lines.append(f"  seed {w['seed']} {mark}{sev} {w['first_failure']}\n    rerun: {w['rerun']}")
    return "\n".join(lines)


def write_table(rows: list[dict], out: Path) -> list[str]:
    """results.csv, and results.parquet when pyarrow is installed; the files written."""
    written = []
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, columns)
        w.writeheader()
        w.writerows(rows)
    written.append(str(out / "results.csv"))
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return written
    pq.write_table(pa.Table.from_pylist(rows, schema=None), out / "results.parquet")
    written.append(str(out / "results.parquet"))
    return written


def plot(campaign: Campaign, flat: list[dict], out: Path) -> list[str]:
    """distributions.png (each varied number: pass / fail histograms) and tracking_error.png."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ok = [r for r in flat if r["error"] is None]
    passed = np.array([r["passed"] for r in ok], dtype=bool)
    written = []
    cols = [k for k in dict.fromkeys(k for r in ok for k in r) if k.startswith("var.")
            and all(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for r in ok)]
    if cols and ok:
        n = len(cols)
        w = min(4, n)
        fig, axes = plt.subplots(math.ceil(n / w), w, figsize=(4 * w, 3 * math.ceil(n / w)), squeeze=False)
        for ax, key in zip(axes.flat, cols):
            x = np.array([r[key] for r in ok], dtype=float)
            ax.hist([x[passed], x[~passed]], bins=30, stacked=True, label=["pass", "fail"],
                    color=["tab:green", "tab:red"])
            ax.set_title(key[4:], fontsize=9)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=8)
        fig.suptitle(f"{campaign.name}: varied values of {len(ok)} runs")
        fig.tight_layout(rect=(0, 0, 1, 0.97))
        fig.savefig(out / "distributions.png", dpi=80)
        plt.close(fig)
        written.append(str(out / "distributions.png"))
    if ok:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
        for ax, key, title in zip(axes, ("tracking_rms_rad", "tracking_max_rad"),
                                  ("tracking error RMS (worst joint)", "tracking error max (worst joint)")):
            x = np.array([r[key] for r in ok], dtype=float) * 1e3
            ax.hist([x[passed], x[~passed]], bins=40, stacked=True, label=["pass", "fail"],
                    color=["tab:green", "tab:red"])
            ax.set_xlabel("mrad")
            ax.set_title(title, fontsize=10)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "tracking_error.png", dpi=80)
        plt.close(fig)
        written.append(str(out / "tracking_error.png"))
    return written


def write_report(campaign: Campaign, rows: list[dict], summary: dict, out: str | Path) -> dict:
    """Writes the table, plots and summary.json into `out`; returns the summary with the file list."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    flat = table_rows(campaign, rows)
    files = write_table(flat, out) if flat else []
    files += plot(campaign, flat, out)
    summary = {**summary, "files": files + [str(out / "summary.json")]}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary
