"""`hil regress [DIR]`: every scenario in DIR in lockstep, checked against its criteria and golden
outcome; a progress bar, a table, a JSON report, plots and logs on request, exit 1 on a failure.

A `sim` scenario runs the loop and the simulated robot in one process over memq:// LCM (deterministic,
faster than real time). A `serial` scenario runs the real chain: the simulated board on a pty and the
serial driver as processes of their own (`hil serial-device`, `hil serial`) on a private UDP multicast
group, with the board in lockstep (one period per COMMAND) and the loop waiting for each status, so
its outcome is as deterministic as the sim's. A `servo` scenario (servo_*.yaml) runs the servo chain
the same way: simulated Dynamixel or Feetech servos on a pty driving the plant and the servo-bus
driver (`hil servo-bus-device`, `hil servo-bus`), the driver one SYNC READ + SYNC WRITE per command
and the bus one period per SYNC READ. A legged scenario (legged_*.yaml) runs whole-body control
(hil.legged_scenario). With -j N the scenarios run in N processes.

A scenario whose robot model is not installed (a `package://` model of a package the package map
does not find, a legged preset without example-robot-data) is skipped with one line saying what to
install (missing_model), never failing the suite. Golden files are read from the scenario's folder,
or from `golden_dir` where it holds one; updates go to `golden_dir` when given (the shipped
scenarios of an installed package are read-only: the command line asks for --golden-dir there).
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import logging
import multiprocessing
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from drivers.core.paths import CONFIGS, package_map
from drivers.core.schema import ConfigError, read_yaml

from .progress import ProgressBar
from .scenario import Scenario, check, compare_golden, load_scenario, outcome, read_golden, write_golden
from .telemetry import fault_count

DEFAULT_DIR = CONFIGS / "scenarios"


def find_scenarios(target: str | Path, pattern: str | None = None) -> list[Path]:
    """The scenario files at `target` (a file, or the *.yaml in a folder), those whose name contains
    `pattern` when given."""
    target = Path(target)
    paths = [target] if target.is_file() else sorted(target.glob("*.yaml"))
    return [p for p in paths if pattern is None or pattern in p.stem]


def missing_model(path: str | Path) -> str | None:
    """What the scenario's robot model needs that is not installed, as one line (what to install), or
    None: the package of a `package://NAME/...` model that the package map (robot.package_map
    included) does not find, or example-robot-data for a legged preset."""
    data = read_yaml(path)
    if "legged" in data:
        from dynamics_cy.planning.legged_models import example_robot_data_root
        return None if example_robot_data_root() is not None else \
            "its robot is a preset of example-robot-data, not installed (pip install hilstack[models])"
    robot = data.get("robot") if isinstance(data.get("robot"), dict) else {}
    model = str(robot.get("model", ""))
    if not model.startswith("package://"):
        return None
    name = model[len("package://"):].split("/")[0]
    try:
        found = package_map(robot.get("package_map"), Path(path).parent).Contains(name)
    except (RuntimeError, TypeError, AttributeError):
        return None                      # a bad package_map is the config check's to report
    hint = " (pip install hilstack[models])" if name == "example-robot-data" else ""
    return None if found else f"its model is in the package '{name}', which is not installed{hint}"


def skipped_result(path: Path, why: str) -> dict:
    """The result of a scenario not run: it passes nothing and fails nothing."""
    return {"name": path.stem, "file": str(path), "passed": True, "skipped": why, "error": None, "checks": [],
            "golden": None, "wall_s": 0.0}


def run_scenario(path: str | Path, plots: str | None = None, logs: str | None = None,
                 update_golden: bool = False, verbose: bool = False, golden_dir: str | None = None) -> dict:
    """Runs one scenario; its result (never raises: a crash is a failed result with the traceback).
    The loop's and the simulator's warnings are silenced unless `verbose` (the result has them), during
    the run only: the loggers' levels are restored after it."""
    loggers = [logging.getLogger(name) for name in ("hil", "drivers")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.INFO if verbose else logging.ERROR)
    try:
        return _run_scenario(path, plots, logs, update_golden, golden_dir)
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _run_scenario(path, plots, logs, update_golden, golden_dir) -> dict:
    """run_scenario's work, the loggers' levels set."""
    t0 = time.monotonic()
    result = {"name": Path(path).stem, "file": str(path), "passed": False, "error": None, "checks": [],
              "golden": None}
    try:
        from .legged_scenario import is_legged_scenario, run_legged_scenario
        if is_legged_scenario(path):            # a legged robot under whole-body control (docs/wbc.md)
            name = Path(path).stem
            if logs:
                result["log"] = str(Path(logs).resolve() / f"{name}.lcmlog")
                Path(logs).mkdir(parents=True, exist_ok=True)
            if plots:
                result["plot"] = str(Path(plots) / f"{name}.png")
                Path(plots).mkdir(parents=True, exist_ok=True)
            result["summary"], result["checks"], spec = run_legged_scenario(path, log=result.get("log"),
                                                                            plot=result.get("plot"))
            result.update(description=spec.description, duration_s=spec.duration, link="sim",
                          passed=all(c["passed"] for c in result["checks"]),
                          wall_s=round(time.monotonic() - t0, 3))
            return result
        from .station_scenario import is_station_scenario
        if is_station_scenario(path):           # several arms in one loop (docs/station.md)
            from .station_scenario import check_station, load_station_scenario, run_station_scenario, station_outcome
            sc = load_station_scenario(path)
            result.update(description=sc.spec.description, link="sim", duration_s=sc.spec.duration)
            if logs and len(sc.station.buses) == 1:       # (one log records one bus)
                result["log"] = str(Path(logs).resolve() / f"{sc.name}.lcmlog")
                for cfg in sc.station.arms.values():
                    cfg.telemetry.log = result["log"]
            summary, loop = run_station_scenario(sc)
            result["summary"] = summary
            result["checks"] = check_station(sc.spec, summary, loop.period_ns * 1e-9)
            now, plots = station_outcome(loop), None      # (each arm's trace: hil.testing.simulate_station)
        else:
            sc = load_scenario(path)
            result.update(description=sc.spec.description, link=sc.spec.link, duration_s=sc.spec.duration)
            if logs:
                sc.cfg.telemetry.log = str(Path(logs).resolve() / f"{sc.name}.lcmlog")
                result["log"] = sc.cfg.telemetry.log
            summary, loop = _run_chain(sc) if sc.spec.link in ("serial", "servo") else _run_sim(sc)
            result["summary"] = summary
            result["checks"] = check(sc.spec, summary, loop.period_ns * 1e-9) + summary.pop("object_checks", [])
            now = outcome(loop, summary.get("objects"))
        result["outcome"] = now
        if sc.spec.golden is not None:
            result["golden"] = _golden(sc, now, update_golden, golden_dir)
        result["passed"] = all(c["passed"] for c in result["checks"]) and \
            (result["golden"] is None or not result["golden"]["diffs"])
        if plots:
            from .telemetry import plot
            Path(plots).mkdir(parents=True, exist_ok=True)
            result["plot"] = str(Path(plots) / f"{sc.name}.png")
            plot(loop.recorder, result["plot"], title=f"{sc.name}: {'PASS' if result['passed'] else 'FAIL'}, "
                                                       f"final state {summary['final_state']} ({sc.spec.description})")
    except Exception as e:                                  # the report says what failed
        result["error"] = f"{type(e).__name__}: {e}"
        result["traceback"] = traceback.format_exc()
    result["wall_s"] = round(time.monotonic() - t0, 3)
    return result


def _golden(sc: Scenario, now: dict, update: bool, golden_dir: str | None = None) -> dict:
    """Compares with (or, `update`, writes) the scenario's golden file: in `golden_dir` when given (read
    from there when it has one, else from the scenario's folder), else the scenario's own."""
    path = sc.golden_path
    if golden_dir is not None:
        mine = Path(golden_dir).resolve() / path.name
        if update or mine.is_file():
            path = mine
    if update:
        write_golden(path, now)
        return {"file": str(path), "diffs": [], "updated": True}
    try:
        golden = read_golden(path)
    except ConfigError as e:                      # missing or unreadable: a failure that says what to do
        return {"file": str(path), "diffs": [str(e)], "updated": False}
    return {"file": str(path), "diffs": compare_golden(golden, now, sc.spec.golden.rtol, sc.spec.golden.atol),
            "updated": False}


class HandTracker:
    """The end effector's position error |p_WE(q_d) − p_WE(q)| over the RUNNING ticks (on_tick; the
    robot is the loop's, known at the first tick)."""

    def __init__(self):
        self.k = None
        self.X, self.X_d = np.zeros((4, 4)), np.zeros((4, 4))
        self.sumsq, self.max, self.count = 0.0, 0.0, 0

    def __call__(self, loop) -> None:
        if self.k is None:
            self.k, self.frame = loop.robot.plant.kernels(), loop.robot.end_effector
        if loop.safety.state.name != "RUNNING":
            return
        self.k.frame_pose(loop.q, self.frame, self.X)
        self.k.frame_pose(loop.q_d, self.frame, self.X_d)
        e = float(np.linalg.norm(self.X_d[:3, 3] - self.X[:3, 3]))
        self.sumsq, self.max, self.count = self.sumsq + e * e, max(self.max, e), self.count + 1

    def summary(self) -> dict:
        return {"rms": float(np.sqrt(self.sumsq / self.count)) if self.count else 0.0, "max": self.max,
                "ticks": self.count}


def _run_sim(sc: Scenario):
    from .lockstep import start_lockstep
    from .scenario_objects import ObjectTracker
    loop, sim = start_lockstep(sc.cfg, sc.spec.start_order, sc.spec.lead, trace_every=1)
    hand, objects = HandTracker(), ObjectTracker(sc.spec.criteria)

    def on_tick(loop_):
        hand(loop_)
        if objects.active:
            objects(loop_)
    try:
        summary = loop.run(sc.spec.duration, on_tick=on_tick)
    finally:
        loop.close()
        sim.close()
    summary["hand_position_error_m"] = hand.summary()
    if objects.active:
        summary["objects"] = objects.summary()
        summary["object_checks"] = objects.check()
    return summary, loop


# In a serial scenario the board steps once per command and the loop waits this long for each status:
# long enough that a busy machine does not make a tick run on a stale status (the run is deterministic),
# short enough that a status lost to an injected link fault costs little.
def _run_chain(sc: Scenario):
    """The loop against the scenario's serial or servo chain (hil.chain), the hand error tracked."""
    from .chain import run_chain
    hand = HandTracker()
    summary, loop = run_chain(sc.cfg, sc.spec.link, sc.spec.duration, on_tick=hand)
    summary["hand_position_error_m"] = hand.summary()
    return summary, loop


# --- running many ---------------------------------------------------------------------------------------
class Progress:
    """hil.progress's bar on a terminal (stderr); elsewhere (a CI log) one line per finished scenario."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.stream = total, 0, stream or sys.stderr
        self.bar = ProgressBar(total, "scenario", file=self.stream)

    def update(self, result: dict) -> None:
        self.done += 1
        mark = "PASS" if result["passed"] else ("ERROR" if result["error"] else "FAIL")
        if self.bar.shown:
            self.bar.update(1, not result["passed"], f"{mark} {result['name']}")
            return
        self.stream.write(f"[{self.done:{len(str(self.total))}d}/{self.total}] {mark:5s} {result['name']} "
                          f"({result['wall_s']:.1f} s)\n")
        self.stream.flush()

    def close(self) -> None:
        self.bar.close()


def run_all(paths: list[Path], jobs: int = 1, plots: str | None = None, logs: str | None = None,
            update_golden: bool = False, progress: Progress | None = None, verbose: bool = False,
            golden_dir: str | None = None) -> list[dict]:
    """Runs the scenarios (in `jobs` processes when > 1); results in the order of `paths`."""
    progress = progress or Progress(len(paths))
    results: dict[Path, dict] = {}
    try:
        if jobs <= 1:
            for p in paths:
                results[p] = run_scenario(p, plots, logs, update_golden, verbose, golden_dir)
                progress.update(results[p])
        else:
            with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
                futures = {pool.submit(run_scenario, str(p), plots, logs, update_golden, verbose, golden_dir): p
                           for p in paths}
                for f in cf.as_completed(futures):
                    results[futures[f]] = f.result()
                    progress.update(results[futures[f]])
    finally:
        progress.close()
    return [results[p] for p in paths]


def _first_failure(r: dict) -> str:
    if r.get("skipped"):
        return f"skipped: {r['skipped']}"
    if r["error"]:
        return r["error"]
    for c in r["checks"]:
        if not c["passed"]:
            return f"{c['name']}: " + (c.get("detail") or f"{c['measured']} vs {c['limit']}")
    if r["golden"] and r["golden"]["diffs"]:
        return f"golden: {r['golden']['diffs'][0].splitlines()[0]}" + \
            (f" (+{len(r['golden']['diffs']) - 1} more)" if len(r["golden"]["diffs"]) > 1 else "")
    return ""


def format_table(results: list[dict]) -> str:
    rows = ["| scenario | result | sim s | wall s | tracking rms max mrad | tracking max mrad | max |τ| N·m | trips "
            "| golden | first failure |", "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in results:
        s = r.get("summary")
        mark = "SKIP" if r.get("skipped") else "PASS" if r["passed"] else ("ERROR" if r["error"] else "FAIL")
        golden = "—" if r["golden"] is None else ("updated" if r["golden"]["updated"] else
                                                  ("same" if not r["golden"]["diffs"] else
                                                   f"{len(r['golden']['diffs'])} diffs"))
        if s is None:
            figures = "| | | | "
        else:
            e = s["tracking_error_rad"]
            figures = (f"| {max(e['rms'] or [0]) * 1e3:.3f} | {max(e['max'] or [0]) * 1e3:.3f} | "
                       f"{max(s['torque_max_nm'] or [0]):.1f} | {fault_count(s)} ")
        rows.append(f"| {r['name']} | {mark} | {r.get('duration_s', '')} | {r['wall_s']:.1f} {figures}| {golden} | "
                    f"{_first_failure(r)} |")
    failed, skipped = sum(not r["passed"] for r in results), sum(bool(r.get("skipped")) for r in results)
    rows.append(f"\n{len(results) - failed - skipped} passed, {failed} failed"
                + (f", {skipped} skipped (their models are not installed)" if skipped else ""))
    return "\n".join(rows)


def write_report(results: list[dict], path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    skipped = sum(bool(r.get("skipped")) for r in results)
    Path(path).write_text(json.dumps({"passed": sum(r["passed"] for r in results) - skipped,
                                      "failed": sum(not r["passed"] for r in results), "skipped": skipped,
                                      "scenarios": results}, indent=1) + "\n")
