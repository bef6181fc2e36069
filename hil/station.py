"""Several arms in one control loop: one clock, one tick for all, each arm its own safety (docs/station.md).

    station = drivers.station.load_station("configs/station/two_iiwas.yaml")
    loop = StationLoop(station, lc, Mode.LOCKSTEP, sim=SimulatedStation.from_station(station, lc))
    summary = loop.run(3.0)          # {"arms": {name: the arm's loop summary}, "station": ..., ...}

Each arm is a hil.loop.ControlLoop (its hardware on its own channels, its law, trajectory, safety state
machine, telemetry and summary) on the station's one LCM and one clock. A station tick is: the clock's
wait, once; every arm's tick, in the station's order (each reads the statuses waiting: any arm's
status read during the tick is stamped with this tick); the station's fault policy; then, in lockstep,
the simulated station's step (hil.lockstep's scheduler, for all the arms at once). Deterministic in
lockstep, and allocation-free in steady state as each arm's tick is.

One arm's fault stops that arm's commands (its safe command, as a lone loop's); `station.on_fault`
says what the others do: `stop_all` moves every other arm to FAULT [STATION] on the next tick (their
safe commands) and latches every arm, the faulted one too, until the station is restarted;
`continue_others` lets them carry on.
"""
from __future__ import annotations

import logging

import lcm

from drivers.core.clock import LockstepClock, RealTimeClock
from drivers.core.schema import ConfigError
from messages.enums import SafetyState

from .hardware import robot_for
from .lifecycle import Mode
from .loop import ControlLoop, run_ticks
from .process import RealtimeProcess

log = logging.getLogger(__name__)


class StationClock:
    """The station's clock as each arm sees it: the tick's (start, lateness) taken once by the station
    (`wait_station`), handed to every arm's wait(); now_ns() is the station's clock."""

    def __init__(self, clock):
        self.clock, self.tick = clock, (0, 0)

    def start(self) -> int:
        return self.clock.t0 if isinstance(self.clock, RealTimeClock) else self.clock.t

    def now_ns(self) -> int:
        return self.clock.now_ns()

    def wait_station(self) -> None:
        self.tick = self.clock.wait()

    def wait(self) -> tuple[int, int]:
        return self.tick

    @property
    def skipped(self) -> int:
        return self.clock.skipped


class StationLoop:
    """The loop of a drivers.station.Station: its arms' ControlLoops ticked together, on `lc` (one LCM for
    every arm, or a mapping of each bus's URL, station.buses, to its LCM).

    `sim`: a drivers.sim.station.SimulatedStation on the same (memq://) LCM, stepped after each tick
    (lockstep), or None (real time against `hil sim` of the station, or real arms). `controllers`: a
    law per arm name to run instead of its config's controller.type; `loop_options`: ControlLoop's
    (check_alloc, fault_on_overrun, trace_every)."""

    def __init__(self, station, lc, mode: Mode | str = Mode.REALTIME, sim=None, controllers: dict | None = None,
                 robots: dict | None = None, **loop_options):
        self.station, self.mode, self.sim = station, Mode(mode), sim
        self.buses = lc if isinstance(lc, dict) else {url: lc for url in station.buses}
        first = station.first
        self.period_ns = int(round(1e9 / first.loop.rate_hz))
        self.clock = LockstepClock(self.period_ns) if self.mode is Mode.LOCKSTEP else \
            RealTimeClock(self.period_ns, int(first.loop.spin_us * 1e3))
        self.arm_clock = StationClock(self.clock)
        self.policy = station.spec.on_fault
        # layout num_robots: the arms' hardware on a private LCM, one kuka_driver's two channels on lc
        private = lcm.LCM("memq://") if station.spec.layout == "num_robots" else None
        self.arms: dict[str, ControlLoop] = {
            name: ControlLoop(cfg, (robots or {}).get(name) or robot_for(cfg), self.buses[cfg.lcm.url], self.mode,
                              controller=(controllers or {}).get(name), clock=self.arm_clock, hardware_lc=private,
                              **loop_options)
            for name, cfg in station.arms.items()}
        self.bus = None
        if private is not None:
            from .station_bus import NumRobotsBridge
            self.bus = NumRobotsBridge(station, self.buses[station.first.lcm.url], private, self.arms)
        self._loops = list(self.arms.values())
        self.stopped_by: str | None = None     # stop_all: the arm whose fault stopped the station
        self.tick_index = 0
        self.process: list[str] = []
        self._process: RealtimeProcess | None = None
        self._configured = self._active = False

    # --- lifecycle --------------------------------------------------------------------------------
    def configure(self) -> "StationLoop":
        """Every arm CONFIGURED (allocated, subscribed)."""
        if not self._configured:
            for arm in self._loops:
                arm.configure()
            self._configured = True
        return self

    def activate(self) -> None:
        """Real time: the station's process settings (loop.*), once; every arm ACTIVE; the clock starts."""
        self.configure()
        if self._active:
            return
        if self.mode is Mode.REALTIME:
            self._process = RealtimeProcess(self.station.first.loop).__enter__()
            self.process = self._process.applied
        for arm in self._loops:
            arm.activate()
        self.clock.start()
        self._active = True

    def deactivate(self) -> None:
        """Every arm's exit command (its safe command, positions held), the process settings undone."""
        if not self._active:
            return
        self._active = False
        try:
            for arm in self._loops:
                arm.deactivate()
            if self.bus is not None:
                self.bus.flush()            # the arms' exit commands, as one
        finally:
            process, self._process = self._process, None
            if process is not None:
                process.__exit__(None, None, None)

    def close(self) -> None:
        """Every arm FINALIZED (unsubscribed); an ACTIVE station is deactivated first."""
        self.deactivate()
        for arm in self._loops:
            arm.close()
        if self.bus is not None:
            self.bus.close()

    # --- one tick ---------------------------------------------------------------------------------
    def update(self) -> None:
        """One station tick: the clock, every arm's tick, the fault policy, then (lockstep) the simulated
        station's step. Allocation-free in steady state; raises nothing (a failure is an arm's FAULT)."""
        self.arm_clock.wait_station()
        k = self.tick_index
        for arm in self._loops:
            arm.hardware.tick = k           # a status any arm's read handles this tick is this tick's
        if self.bus is not None:
            self.bus.read()                 # the driver's one status, as each arm's
        for arm in self._loops:
            arm._tick()
        if self.policy == "stop_all" and self.stopped_by is None:
            self._stop_all()
        if self.bus is not None:
            self.bus.flush()                # the arms' commands, as the driver's one
        self.tick_index = k + 1
        if self.sim is not None:
            self.sim.step_lockstep()

    def _stop_all(self) -> None:
        """on_fault stop_all: once an arm is in FAULT, every other arm to FAULT [STATION], and every arm
        (the faulted one too, whatever its safety.recover) latched there."""
        for name, arm in self.arms.items():
            if arm.safety.state == SafetyState.FAULT:
                self.stopped_by = name
                arm.safety.controller_latched = True
                why = f"station.on_fault stop_all: arm {name!r} faulted ({arm.safety.fault.name}: " \
                      f"{arm.safety.fault_text})"
                for other in self._loops:
                    if other is not arm and other.safety.state != SafetyState.FAULT:
                        other._transition(other.safety.station_stopped(other.tick_index, why),
                                          self.arm_clock.tick[0])
                return

    # --- running ----------------------------------------------------------------------------------
    @property
    def started(self) -> bool:
        """Whether every arm has had its first status."""
        return all(arm.hardware.timing.last_tick >= 0 for arm in self._loops)

    @property
    def waiting(self) -> list[str]:
        """The arms still without a first status."""
        return [name for name, arm in self.arms.items() if arm.hardware.timing.last_tick < 0]

    def run(self, duration_s: float | None = None, stop=None, on_tick=None) -> dict:
        """configure, activate, update until `duration_s` of loop time after every arm's first status,
        `stop()`, or (real time) no status from some arm within loop.start_timeout (TimeoutError naming
        it); deactivate on every exit path. `on_tick(station)` after each tick once started. With
        telemetry.log set (the arms on one bus), every arm's traffic is recorded there, each arm's run-info
        on its own run-info channel (hil.runlog). Returns the summary."""
        first = self.station.first
        if first.telemetry.log and len(self.buses) > 1:
            raise ConfigError("telemetry.log", f"one log records one LCM bus; the station's arms are on "
                                               f"{len(self.buses)}: record each with lcm-logger", self.station.source)
        self.configure()
        duration_s = first.loop.duration if duration_s is None else duration_s
        limit = None if duration_s is None else int(round(duration_s * 1e9 / self.period_ns))

        def ticks():
            self.activate()
            run_ticks(self, first.loop.start_timeout, limit, stop, on_tick, lambda: self.started,
                      lambda: f"no valid status from arm(s) {', '.join(self.waiting)} within "
                              f"{first.loop.start_timeout} s (is `hil sim` of the station running on "
                              f"{', '.join(self.station.buses)}?)",
                      lambda: f"the simulator sent no status for arm(s) {', '.join(self.waiting)}")
        from .runlog import run_logged
        return run_logged(first, self.buses[first.lcm.url], self.mode, lambda: self.clock.now_ns() // 1000,
                          ticks, self.deactivate, self.summary, arms=self.station.arms)

    def summary(self) -> dict:
        """{"arms": each arm's loop summary (with `commanding`: whether its law commanded at the end),
        "station": {on_fault, stopped_by, ticks, arms}, "final_state": the worst arm's, the arms' tracking
        errors and torques joint after joint, deadline misses and faults (each with its arm) together,
        "sim": the simulated station's}."""
        arms = {}
        for name, arm in self.arms.items():
            arms[name] = {**arm.summary(), "commanding": arm.safety.commanding}
        order = ("SAFE_STOP", "FAULT", "INIT", "RUNNING")
        worst = min((a["final_state"] for a in arms.values()), key=order.index)
        counts: dict[str, int] = {}
        for a in arms.values():
            for kind, count in a["fault_counts"].items():
                counts[kind] = counts.get(kind, 0) + count
        return {"station": {"on_fault": self.policy, "stopped_by": self.stopped_by, "ticks": self.tick_index,
                            "arms": list(arms), "process": self.process},
                "final_state": worst,
                # every arm's joints in the station's order (arm after arm), as one robot's would be
                "tracking_error_rad": {key: [x for a in arms.values() for x in a["tracking_error_rad"][key]]
                                       for key in ("rms", "max")},
                "torque_max_nm": [x for a in arms.values() for x in a["torque_max_nm"]],
                "deadline_misses": sum(a["deadline_misses"] for a in arms.values()),
                "faults": [{**f, "arm": name} for name, a in arms.items() for f in a["faults"]],
                "fault_counts": counts,
                "arms": arms,
                **({"kuka_driver": self.bus.summary()} if self.bus is not None else {}),
                **({"sim": self.sim.summary()} if self.sim is not None else {})}


def make_station_lockstep(station, lc=None, controllers: dict | None = None, **loop_options):
    """(StationLoop, SimulatedStation) on `lc` (default: a new memq:// LCM per bus of the station, so
    arms on buses of their own hear nothing of each other), CONFIGURED, each arm's first status not yet
    published (sim.publish_status()). The loop period must equal the simulated status period, as
    hil.lockstep's."""
    from drivers.sim.station import SimulatedStation
    lc = lc or {url: lcm.LCM("memq://") for url in station.buses}
    first = station.first
    period_ns = int(round(1e9 / first.loop.rate_hz))
    key, step = ("sim.kuka_driver.time_step", first.sim.kuka_driver.time_step) \
        if first.sim.driver == "kuka_driver" else ("sim.time_step", first.sim.time_step)
    if round(step * 1e9) != period_ns:
        raise ConfigError(key, f"{step} s must equal the loop period 1/loop.rate_hz = {period_ns * 1e-9:g} s in "
                               f"lockstep", station.source)
    sim = SimulatedStation.from_station(station, lc)
    loop = StationLoop(station, lc, Mode.LOCKSTEP, sim=sim, controllers=controllers, **loop_options).configure()
    return loop, sim


def format_station_summary(summary: dict) -> str:
    """Each arm's summary (hil.telemetry.format_summary) under its name, then the station's line."""
    from .telemetry import format_summary
    s = summary["station"]
    lines = []
    for name, arm in summary["arms"].items():
        lines.append(f"== arm {name} ==")
        lines.append(format_summary(arm))
    lines.append(f"station: {len(s['arms'])} arms, {s['ticks']} ticks, on_fault {s['on_fault']}"
                 + (f", stopped by arm {s['stopped_by']!r}" if s["stopped_by"] else "")
                 + f"; final state {summary['final_state']}")
    lines.append("  (the station counts every tick from its start, the wait for each arm's first status and "
                 "its driver's start guard included; an arm counts the ticks after those: "
                 + ", ".join(f"{name} {arm['ticks']}" for name, arm in summary["arms"].items()) + ")")
    if summary.get("plot"):
        lines.append("plots: " + ", ".join(f"{path} (arm {name})" for name, path in summary["plot"].items()))
    return "\n".join(lines)
