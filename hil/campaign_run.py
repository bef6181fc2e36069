"""Running a campaign's variations: one run (`run_one`), a batch on a worker (`run_batch`) and the
engines that spread batches over workers: sequential, a local process pool (concurrent.futures) or
Ray (a local embedded cluster by `ray.init()`, or an existing one by its address).

Every run is a lockstep sim scenario, so its figures depend on its seed alone: the engines give the
same per-seed rows (tests/hil/test_campaign_engines.py). A worker loads each model once (the loop's
Robot and the simulated plant are cached per worker, keyed by the model and, for the plant, the
payload) and runs a batch of seeds per task, so scheduling costs one round trip per batch.
"""
from __future__ import annotations

import concurrent.futures as cf
import functools
import logging
import math
import multiprocessing
import os
import signal
import time
import traceback
from typing import Callable, Iterable

import numpy as np

from .campaign import Campaign
from .scenario import check
from .telemetry import fault_count

ENGINES = ("ray", "pool", "sequential")


@functools.lru_cache(maxsize=4)
def _robot(model: str, weld, end_effector, protocol: str, command: str):
    from drivers.core.config import RobotConfig
    from drivers.core.robot import load_robot
    return load_robot(RobotConfig(model, protocol, weld, end_effector, command))


@functools.lru_cache(maxsize=4)
def _parsed(model: str, weld):
    from drivers.core.config import RobotConfig
    from drivers.core.robot import parse_model
    return parse_model(RobotConfig(model, weld=weld))


@functools.lru_cache(maxsize=4)
def _plant(model: str, weld, end_effector, payload: tuple):
    """The simulated plant with this payload: the parsed model copied (a varied payload costs a copy
    and a Finalize, ~3 ms for the iiwa, not a parse), the same payload reused."""
    from drivers.core.config import RobotConfig
    from drivers.core.robot import build_plant
    from drivers.sim.config import PayloadConfig
    mass, com, inertia, frame = payload
    return build_plant(RobotConfig(model, weld=weld, end_effector=end_effector),
                       PayloadConfig(mass, list(com), list(inertia), frame), _parsed(model, weld))


def run_one(campaign: Campaign, seed: int, log: str | None = None, on_tick: Callable | None = None) -> dict:
    """The row of the run with this seed (never raises: a failure to run is a row with `error`)."""
    from .lockstep import make_lockstep
    from .regress import HandTracker
    t0, c0 = time.perf_counter(), time.process_time()
    row = {"seed": seed, "passed": False, "error": None}
    try:
        sc = campaign.scenario(seed)
        cfg, r = sc.cfg, sc.cfg.robot
        if sc.spec.link != "sim":
            raise ValueError("a campaign runs sim scenarios (scenario.link: sim)")
        if log:
            cfg.telemetry.log = log
        p = cfg.sim.payload
        plant = _plant(r.model, r.weld, r.end_effector, (p.mass, tuple(p.com), tuple(p.inertia), p.frame))
        loop, sim = make_lockstep(cfg, plant=plant, robot=_robot(r.model, r.weld, r.end_effector, r.protocol,
                                                                   r.command))
        hand = HandTracker()
        sim.publish_status()
        tick = hand if on_tick is None else (lambda lp: (hand(lp), on_tick(lp)))
        try:
            summary = loop.run(sc.spec.duration, on_tick=tick)
        finally:
            loop.close()            # else the LCM and its two file descriptors live on: ~500 runs hit FD_SETSIZE
            sim.close()
        summary["hand_position_error_m"] = hand.summary()
        checks = check(sc.spec, summary, loop.period_ns * 1e-9)
        row.update(_figures(summary, checks, sc.spec.duration))
        row["passed"] = all(c["passed"] for c in checks)
        row["checks"] = checks
    except Exception as e:                               # the row says what failed
        row["error"] = f"{type(e).__name__}: {e}"
        row["traceback"] = traceback.format_exc()
    row["wall_s"], row["cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    return row


def _figures(summary: dict, checks: list[dict], duration: float) -> dict:
    e = summary["tracking_error_rad"]
    hand = summary.get("hand_position_error_m") or {}
    out = {"sim_s": duration, "ticks": summary["ticks"],
           "tracking_rms_rad": max(e["rms"] or [0.0]), "tracking_max_rad": max(e["max"] or [0.0]),
           "torque_max_nm": max(summary["torque_max_nm"] or [0.0]),
           "hand_rms_m": hand.get("rms"), "hand_max_m": hand.get("max"),
           "trips": fault_count(summary), "first_trip": summary["faults"][0]["fault"] if summary["faults"] else "",
           "final_state": summary["final_state"], "severity": severity(checks)}
    for c in checks:
        out[f"pass.{c['name']}"] = bool(c["passed"])
    return out


def severity(checks: list[dict]) -> float:
    """max over the numeric criteria of measured / limit (worst joint); inf when a non-numeric one
    (final state, trips, summary figures) fails. > 1 means failed."""
    worst = 0.0
    for c in checks:
        m, lim = c["measured"], c["limit"]
        try:
            ratio = np.max(np.asarray(m, dtype=float) / np.maximum(np.asarray(lim, dtype=float), 1e-300))
        except (TypeError, ValueError):
            ratio = 0.0 if c["passed"] else math.inf
        if not c["passed"]:
            ratio = max(float(ratio), 1.0 + 1e-12)
        worst = max(worst, float(ratio))
    return worst


def run_batch(campaign: Campaign, seeds: list[int]) -> list[dict]:
    """The rows of these seeds, run one after the other in this process (a worker's task)."""
    for name in ("hil", "drivers"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return [run_one(campaign, s) for s in seeds]


def failed_rows(seeds: list[int], error: str) -> list[dict]:
    return [{"seed": s, "passed": False, "error": error} for s in seeds]


def batches(seeds: list[int], workers: int, size: int | None = None) -> list[list[int]]:
    """`seeds` in batches: `size` each, or by default ~8 batches per worker (at most 50 runs each),
    so the last batches finish close together and each costs one scheduling round trip."""
    size = size or max(1, min(50, math.ceil(len(seeds) / (8 * max(1, workers)))))
    return [seeds[i:i + size] for i in range(0, len(seeds), size)]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # Ctrl-C is the parent's: it keeps what finished


def run_engine(campaign: Campaign, seeds: list[int], engine: str, workers: int, on_rows: Callable,
               address: str | None = None, batch: int | None = None, on_start: Callable | None = None) -> None:
    """Runs the seeds on the engine, calling on_rows(rows) as each batch finishes (and on_start(n)
    with the number of workers once the engine is up: a Ray cluster's CPUs). KeyboardInterrupt stops
    it: pending batches are cancelled and the finished rows have been delivered."""
    on_start = on_start or (lambda n: None)
    if engine == "sequential":
        on_start(1)
        for s in seeds:
            on_rows(run_batch(campaign, [s]))
    elif engine == "pool":
        on_start(workers)
        _run_pool(campaign, batches(seeds, workers, batch), workers, on_rows)
    elif engine == "ray":
        _run_ray(campaign, seeds, workers, on_rows, address, batch, on_start)
    else:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")


def _run_pool(campaign: Campaign, parts: list[list[int]], workers: int, on_rows: Callable) -> None:
    ctx = multiprocessing.get_context("spawn")
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_ignore_sigint)
    try:
        futures = {pool.submit(run_batch, campaign, part): part for part in parts}
        for f in cf.as_completed(futures):
            try:
                rows = f.result()
            except Exception as e:            # the worker died (e.g. killed): its runs are errors
                rows = failed_rows(futures[f], f"the worker running this batch failed: {type(e).__name__}: {e}")
            on_rows(rows)
    except KeyboardInterrupt:
        # The workers ignore SIGINT and the pool would run the batches already queued to them before
        # the process could exit (a Ctrl-C'd campaign wrote its report, then hung at full CPU): stop them.
        for child in ctx.active_children():
            child.terminate()
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _run_ray(campaign: Campaign, seeds: list[int], workers: int, on_rows: Callable, address: str | None,
             batch: int | None, on_start: Callable) -> None:
    import ray
    started = not ray.is_initialized()
    if started:
        kwargs = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False}
        if address is None:
            kwargs["num_cpus"] = workers
        try:
            ray.init(address=address, **kwargs)
        except ConnectionError as e:
            from drivers.core.schema import ConfigError
            raise ConfigError("", f"--address {address}: no Ray cluster to join ({e}); start one with "
                                  "`ray start --head`, or leave out --address for a local one") from None
    try:
        total = int(ray.cluster_resources().get("CPU", workers))
        on_start(total)
        task = ray.remote(num_cpus=1, max_retries=0)(run_batch)
        ref = ray.put(campaign)
        parts = {task.remote(ref, part): part for part in batches(seeds, total, batch)}
        pending = list(parts)
        try:
            while pending:            # with a timeout: a blocking ray.wait does not see Ctrl-C
                done, pending = ray.wait(pending, num_returns=1, timeout=0.2)
                for ref in done:
                    try:
                        rows = ray.get(ref)
                    except ray.exceptions.RayError as e:
                        if isinstance(e, ray.exceptions.TaskCancelledError) or "KeyboardInterrupt" in str(e):
                            raise KeyboardInterrupt from None    # Ctrl-C reached the worker first
                        rows = failed_rows(parts[ref], f"the Ray task running this batch failed: {e}")
                    on_rows(rows)
        except KeyboardInterrupt:
            for p in pending:
                ray.cancel(p, force=True)
            raise
    finally:
        if started:
            ray.shutdown()


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def collect(campaign: Campaign, seeds: Iterable[int], engine: str, workers: int, progress=None,
            address: str | None = None, batch: int | None = None) -> tuple[list[dict], bool, int]:
    """(rows sorted by seed, interrupted, workers used): every finished run, also when Ctrl-C stopped
    the campaign."""
    rows: list[dict] = []
    used = [workers]

    def on_rows(new: list[dict]) -> None:
        rows.extend(new)
        if progress is not None:
            progress(new)

    interrupted = False
    try:
        run_engine(campaign, list(seeds), engine, workers, on_rows, address, batch, lambda n: used.__setitem__(0, n))
    except KeyboardInterrupt:
        interrupted = True
    return sorted(rows, key=lambda r: r["seed"]), interrupted, used[0]
