"""The simulated station: several arms, each a SimulatedRobot behind its own channels, stepped together.

    station = SimulatedStation.from_station(drivers.station.load_station(path), lc)   # or {url: lc}
    station.publish_status()       # lockstep: every arm's first status
    station.step_lockstep()        # hil.station's scheduler, after the loop's tick: every arm one step
    station.run_realtime(duration) # `hil sim STATION`: one wall clock for all the arms

The arms do not touch (each has its own plant: no contact between them), so one step of the station is
one step of each arm, in the station's order, under the commands of the same tick. One LCM serves them
all: the messages waiting are handled once per step (each arm's command handler only stores its
command while scheduled), then every arm advances. With a driver (sim.driver) every arm runs its own
copy, as one driver process per arm does (kuka_driver started once per arm on its own channels with
--lcm_status_channel / --lcm_command_channel).
"""
from __future__ import annotations

import sys
import threading

from drivers.core.config import channels_for
from drivers.core.robot import build_plant

from .commanders import CommanderWatch
from .pacing import run_paced
from .robot import SimulatedRobot


class SimulatedStation:
    """The station's arms (`robots`, name → SimulatedRobot) on one LCM, stepped together."""

    def __init__(self, robots: dict[str, SimulatedRobot], lcs, bus=None):
        self.robots, self.lcs, self.bus = robots, list(lcs), bus
        for robot in robots.values():
            robot.scheduled = True               # stepped by step_lockstep / run_realtime only
        self._first = next(iter(robots.values()))
        self.viewer = None
        """The station's one scene (drivers.viz.ViewerBridge of every arm's plant), or None: show_on."""

    def show_on(self, lc, channels, viz) -> None:
        """Every arm's plant drawn as one scene on `lc` (Meldis resets its scene on each load message, so the
        arms share one): one lcmt_viewer_load_robot and one lcmt_viewer_draw of all their links, each arm's
        named by its name as the geometry source ("left::iiwa14::iiwa_link_0", drivers.viz.load.scene_parts),
        at their poses X_WB (the base poses included); and one lcmt_contact_results_for_viz of every arm's
        contacts (bodies named "left::box(3)"), which the arms no longer publish each on its own."""
        from drivers.viz import ViewerBridge
        from drivers.viz.load import scene_parts

        from .contact import ground_visual
        first = self._first.config
        ground = [ground_visual(first.contact.ground.height)] \
            if self._first.physics.contact is not None and first.contact.ground.enabled else ()
        self.viewer = ViewerBridge(scene_parts({n: r.physics.plant for n, r in self.robots.items()}), lc, channels,
                                   viz, anchored=ground)
        # each arm's physics.q, updated in place by its steps
        self._view_lc, self._contact_channel = lc, channels.contact_results
        self._qs = [r.physics.q for r in self.robots.values()]
        self._contacts = []
        for name, robot in self.robots.items():
            if robot._contact_publisher is not None:            # the station's message carries its contacts
                robot._contact_publisher.prefix = f"{name}::"
                self._contacts.append(robot._contact_publisher)
                robot._contact_publisher = None
        rate = first.contact.publish_rate
        self._contact_period_ns = round(1e9 / rate) if self._contacts and rate > 0 else 0
        self._contact_due = 0

    def _draw(self) -> None:
        """The scene's messages due at the station's time."""
        t = self._first.physics.time_ns
        self.viewer.tick(t, self._qs, t // 1000)
        if self._contact_period_ns and t >= self._contact_due:
            msg = None
            for part in self._contacts:
                msg = part.message(t // 1000, msg)
            self._view_lc.publish(self._contact_channel, msg.encode())
            for part in self._contacts:
                part.published += 1
            self._contact_due = (t // self._contact_period_ns + 1) * self._contact_period_ns

    @classmethod
    def from_station(cls, station, lc, plants: dict | None = None) -> "SimulatedStation":
        """Each arm of a drivers.station.Station simulated on its bus: `lc` one LCM for every arm, or a
        mapping of each bus's URL (station.buses) to its LCM; its plant built from its robot and sim
        sections, or taken from `plants` by name. With the station's viz enabled, every arm drawn in one
        scene on the first arm's bus (show_on)."""
        robots, spec, bus = {}, station.spec, None
        buses = lc if isinstance(lc, dict) else {url: lc for url in station.buses}
        if spec.layout == "num_robots":          # one kuka_driver for all (drivers.sim.kuka_bus), on one bus
            from .kuka_bus import KukaDriverBus
            bus = KukaDriverBus(buses[station.first.lcm.url], spec.status, spec.command, len(station.arms))
        for i, (name, cfg) in enumerate(station.arms.items()):
            sim = cfg.sim
            plant = (plants or {}).get(name) or build_plant(cfg.robot, sim.payload, simulated=True,
                                                             gripper=sim.gripper, objects=sim.objects)
            robots[name] = SimulatedRobot(plant, sim, cfg.robot.protocol, channels_for(cfg),
                                          buses[cfg.lcm.url] if bus is None else bus.port(i),
                                          path=f"station.arms[{i}].sim")
        if bus is not None:
            bus.robots = list(robots.values())
        station_sim = cls(robots, {id(x): x for x in buses.values()}.values(), bus)
        first = station.first
        if first.viz is not None and first.viz.enabled:
            station_sim.show_on(buses[first.lcm.url], channels_for(first), first.viz)
        return station_sim

    def _handle(self) -> None:
        for lc in self.lcs:
            while lc.handle_timeout(0) > 0:
                pass

    def publish_status(self) -> None:
        """Every arm's status of the current time, without stepping (lockstep: the first)."""
        for robot in self.robots.values():
            robot.publish_status()
        if self.bus is not None:
            self.bus.flush()
        if self.viewer is not None:
            self._draw()

    def step_lockstep(self) -> None:
        """The simulator's half of a station tick: the commands waiting are taken, then every arm advances
        once (one status period), command or not."""
        self._handle()
        for robot in self.robots.values():
            if robot.statuses_published or robot.physics.steps:
                robot.advance()
        if self.bus is not None:
            self.bus.flush()
        if self.viewer is not None:
            self._draw()

    def tick(self) -> None:
        """One time step of every arm (with one kuka_driver for all: then its status)."""
        for robot in self.robots.values():
            if robot.commanders is not None:
                robot.commanders.poll()          # its socket drained each step (SimulatedRobot.run_realtime's)
            robot.tick()
        if self.bus is not None:
            self.bus.flush()
        if self.viewer is not None:
            self._draw()

    @property
    def exited(self):
        """The first arm whose driver model ended, as (name, DriverExit), or None."""
        return next(((name, r.exited) for name, r in self.robots.items() if r.exited is not None), None)

    def summary(self) -> dict:
        """Each arm's SimulatedRobot.summary(), by name (and `kuka_driver`: the one driver's, if so)."""
        return {**{name: robot.summary() for name, robot in self.robots.items()},
                **({"kuka_driver": self.bus.summary()} if self.bus is not None else {})}

    def close(self) -> None:
        for robot in self.robots.values():
            robot.close()
        if self.bus is not None:
            self.bus.close()
        if self.viewer is not None:
            self.viewer.close()

    def viewer_summary(self) -> dict:
        """The scene's counters (ViewerBridge.summary, and contact_results_published), or {} without it."""
        if self.viewer is None:
            return {}
        return {"viz": {**self.viewer.summary(), "contact_results_published":
                        self._contacts[0].published if self._contacts else 0}}

    def run_realtime(self, duration: float | None = None, stop_event: threading.Event | None = None,
                     spin_us: float = 200.0) -> dict:
        """Every arm stepped on one wall clock (as SimulatedRobot.run_realtime steps one): the newest
        commands each step, until `duration` s of simulated time, stop_event, SIGINT/SIGTERM, or an arm's
        driver model ended. Returns {"arms": summaries, wall_time_s, real_time_factor, late_steps, ...}."""
        first = next(iter(self.robots.values()))
        period = first.config.time_step_ns
        steps0 = first.physics.steps
        end = None if duration is None else steps0 + round(duration * 1e9 / period)
        for robot in self.robots.values():
            robot._lockstep = False
        try:
            clock, wall = run_paced(period, spin_us, self.lcs, self.publish_status, self.tick, stop_event,
                                    lambda: (end is not None and first.physics.steps >= end) or self.exited is not None)
        finally:
            for robot in self.robots.values():
                robot._lockstep = True
        elapsed = (first.physics.steps - steps0) * period
        return {"arms": self.summary(), **self.viewer_summary(), "sim_time_s": first.physics.time_ns * 1e-9,
                "wall_time_s": wall * 1e-9,
                "real_time_factor": elapsed / max(wall, 1), "late_steps": clock.late,
                "max_lateness_us": clock.max_lateness / 1e3, "resyncs": clock.resyncs}


def run_station_sim(station, duration: float | None = None, stop_event=None, out=sys.stdout) -> dict:
    """`hil sim STATION`: the station's arms on its LCM in real time; prints a line per arm at the start
    and the summary at the end, and returns it."""
    from drivers.core.config import open_lcm

    from .realtime import format_summary
    sim = SimulatedStation.from_station(station, {url: open_lcm(url) for url in station.buses})
    for i, (name, robot) in enumerate(sim.robots.items()):
        cfg = station.arms[name]
        if sim.bus is None:                     # each arm commanded by one loop (drivers.sim.commanders)
            robot.commanders = CommanderWatch.open(cfg.lcm.url, robot.channels.command,
                                                   round(cfg.sim.command_timeout * 1e9))
        where = f"joints {7 * i}..{7 * i + 6} of the driver's" if sim.bus is not None else \
            f"status {robot.channels.status}, command {robot.channels.command}" + \
            (f" on {cfg.lcm.url}" if len(station.buses) > 1 else "")
        print(f"hil sim: arm {name}: {cfg.robot.model.rsplit('/', 1)[-1]} ({robot.n} joints), protocol "
              f"{cfg.robot.protocol}, {where}"
              + (f", driver {cfg.sim.driver}" if cfg.sim.driver != "drake_sim" else "")
              + (f", {len(cfg.sim.faults)} faults" if cfg.sim.faults else ""), file=out, flush=True)
    spec = station.spec
    print(f"hil sim: station of {len(sim.robots)} arms on {', '.join(station.buses)}, step "
          f"{station.first.sim.time_step * 1e3:g} ms"
          + (f"; one kuka_driver --num_robots {len(sim.robots)}: status {spec.status} ({7 * len(sim.robots)} "
             f"joints), command {spec.command}" if sim.bus is not None else ""), file=out, flush=True)
    if sim.viewer is not None:
        print(f"hil sim: the station's scene (every arm, {sim.viewer.load_message.num_links} links) on "
              f"{sim.viewer.channels.viewer_load_robot} / {sim.viewer.channels.viewer_draw} at "
              f"{station.first.viz.draw_rate_hz:g} Hz", file=out, flush=True)
    try:
        summary = sim.run_realtime(duration, stop_event)
    finally:
        sim.close()
    bus = summary["arms"].pop("kuka_driver", None)
    for name, arm in summary["arms"].items():
        arm = {**arm, **{k: summary[k] for k in ("wall_time_s", "real_time_factor", "late_steps",
                                                  "max_lateness_us", "resyncs")}}
        print(format_summary(arm).replace("hil sim:", f"hil sim: arm {name}:", 1), file=out, flush=True)
    if "viz" in summary:
        from drivers.viz.bridge import format_counters
        print(f"hil sim: viewer: {format_counters(summary['viz'])}", file=out, flush=True)
    if bus is not None:
        print(f"hil sim: kuka_driver --num_robots {bus['num_robots']}: {bus['statuses_published']} statuses on "
              f"{bus['status_channel']}, commands received {bus['commands_received']}, rejected "
              f"{bus['commands_rejected']}", file=out, flush=True)
        summary["kuka_driver"] = bus
    exited = sim.exited
    if exited is not None:
        summary["exit"] = {"arm": exited[0], "status": exited[1].status, "message": exited[1].message}
    return summary
