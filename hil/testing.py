"""A control law run against the simulated robot for a test, and what the run did, tick by tick.

    from hil.testing import config_path, simulate

    run = simulate(config_path("iiwa"), MyLaw(), duration=2.0, overrides={"trajectory": {"type": "hold"}})
    assert run.final_state == "RUNNING" and abs(run.q - run.q[0]).max() < 1e-3

The run is hil.lockstep's: the loop and the simulated robot in one process over memq:// LCM, the
plant stepped once per command, deterministic. The pytest fixtures (hil.pytest_plugin, docs/testing.md)
are thin wrappers of this module; it does not import pytest.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from drivers.core.paths import CONFIGS
from drivers.core.schema import merge
from messages.enums import SafetyState

# The shipped robot configs by name: (file under configs/, the distribution its model needs or None).
ROBOTS = {
    "iiwa": ("demo.yaml", None),                                  # the iiwa14 behind Drake's simulated driver
    "panda": ("arms/panda_torque.yaml", "example-robot-data"),    # example-robot-data's Panda, franka_driver
    "go2": ("legged/go2.yaml", "example-robot-data"),             # the Unitree Go2 standing (floating base)
    "g1": ("legged/g1.yaml", "example-robot-data"),               # the Unitree G1 humanoid standing on two soles
    "dxl_arm": ("servo/dxl_arm.yaml", None),                      # 3 Dynamixel XM430s behind `hil servo-bus`
    "iiwa_wsg": ("station/iiwa_wsg.yaml", None),                  # the iiwa + WSG 50 + wrist F/T picking a box
}

# The driver stand-ins (drivers.sim.real_drivers) and the protocol each speaks (None: the config's).
DRIVERS = {"drake_sim": None, "kuka_driver": "iiwa", "franka_driver": "panda"}


def config_path(name: str) -> Path:
    """The path of the shipped config of robot `name` (ROBOTS); KeyError listing the names."""
    if name not in ROBOTS:
        raise KeyError(f"no shipped robot config {name!r}; known: {', '.join(ROBOTS)}")
    return CONFIGS / ROBOTS[name][0]


def missing_module(name: str) -> str | None:
    """The distribution robot `name`'s model needs when it is not installed, else None (example-robot-data
    installs no importable module: its models are found where dynamics_cy.planning.legged_models looks)."""
    from dynamics_cy.planning.legged_models import example_robot_data_root
    needs = ROBOTS[name][1]
    return needs if needs is not None and example_robot_data_root() is None else None


def driver_overrides(cfg, driver: str) -> dict:
    """The keys that put `driver`'s stand-in in front of the simulated arm of `cfg`, commanded in
    torque: drake_sim as the config has it (sim.gravity_compensation matching
    controller.robot_compensates_gravity), kuka_driver --torque_only (the iiwa protocol, FRI at the
    loop period), franka_driver --control_mode=torque (the panda protocol). The real drivers add −τ_g
    themselves, so controller.robot_compensates_gravity is set for them (the law still writes the
    whole torque: the loop takes −τ_g out)."""
    if driver not in DRIVERS:
        raise ValueError(f"driver must be one of {', '.join(DRIVERS)}, got {driver!r}")
    robot = {"driver": driver, "command": "torque", **({"protocol": DRIVERS[driver]} if DRIVERS[driver] else {})}
    section = {"driver": driver, "control_mode": None, "status_period": None}
    gravity = True
    if driver == "drake_sim":
        gravity = cfg.controller.robot_compensates_gravity
        section["gravity_compensation"] = "internal" if gravity else "none"
    elif driver == "kuka_driver":
        section["kuka_driver"] = {**asdict(cfg.sim.kuka_driver), "torque_only": True, "time_step": 1 / cfg.loop.rate_hz}
    else:
        section["franka_driver"] = {**asdict(cfg.sim.franka_driver), "control_mode": "torque"}
    return {"robot": robot, "sim": section, "controller": {"robot_compensates_gravity": gravity}}


def merged(*layers: dict | None) -> dict:
    """Config overrides, later layers merged on earlier ones (drivers.core.schema.merge: nested
    mappings key by key, lists and values replaced)."""
    out: dict = {}
    for layer in layers:
        out = merge(out, layer)
    return out


class Recorder:
    """The loop's on_tick callback: each tick's robot clock, measured q and v (the plant's: nq, nv),
    desired q, torque sent, external torque (MultibodyPlant's signs; n joints), safety state and gripper
    status (State.gripper: NaN without one), into arrays for `ticks` ticks, allocated at the first (the
    loop's sizes)."""

    def __init__(self, ticks: int):
        self.ticks, self.k, self.t = ticks, 0, None

    def _allocate(self, loop) -> None:
        ticks, n = self.ticks, loop.n
        self.t = np.zeros(ticks)
        self.q, self.v = np.zeros((ticks, loop.q.size)), np.zeros((ticks, loop.v.size))
        self.q_d, self.tau, self.tau_external = (np.zeros((ticks, n)) for _ in range(3))
        self.safety = np.zeros(ticks, dtype=np.int8)
        self.gripper = np.full((ticks, 3), np.nan)

    def __call__(self, loop) -> None:
        if self.t is None:
            self._allocate(loop)
        k = self.k
        self.t[k] = loop.hardware.timing.robot_ns * 1e-9
        self.q[k] = loop.q
        self.v[k] = loop.v
        self.q_d[k] = loop.q_d
        self.tau[k] = loop.tau_cmd
        self.tau_external[k] = loop.hardware.tau_external
        self.safety[k] = loop.safety.state
        self.gripper[k] = loop.state.gripper
        self.k = k + 1


@dataclass
class SimRun:
    """A lockstep run, one row per tick after the first status (N ticks, n joints).

    t (N,)                  the robot's clock (s), as State.t (franka_driver's is its host's wall clock)
    q, v (N, n)             measured joint positions (rad) and velocities (rad/s), as the law saw them
                            (a floating base: the plant's (N, nq) and (N, nv), the base first)
    q_d (N, n)              the trajectory's desired positions (held while not RUNNING)
    tau (N, n)              the torque sent (N·m): the law's after saturation and rate limit, or the safe
                            command; without −τ_g where the robot compensates gravity itself
    tau_external (N, n)     the robot's external torque Σ J_Bᵀ F_B (N·m, MultibodyPlant's signs: State's)
    safety (N,)             the safety state after the tick (messages.enums.SafetyState values)
    gripper (N, 3)          the gripper's status as the law saw it, [w m, ẇ m/s, f N] (NaN: no gripper, none yet)
    summary                 the loop's summary (what `hil run --json` prints)
    config                  the RunConfig that ran; plant, end_effector: the robot's model and frame
    plant_q                 the simulated plant's true q at the end (no sensor fault on it)
    sim_plant               the simulated plant (the robot, its gripper and the objects: plant_q's), or None
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    q_d: np.ndarray
    tau: np.ndarray
    tau_external: np.ndarray
    safety: np.ndarray
    summary: dict
    config: object
    plant: object
    end_effector: object
    plant_q: np.ndarray
    gripper: np.ndarray = None
    sim_plant: object = None

    def object_position(self, name: str) -> np.ndarray:
        """p_WO of a body of the simulated plant (a sim.objects box, a gripper's finger) at the end, from
        plant_q (the plant's own state, not a status)."""
        if self.sim_plant is None:
            raise ValueError("the run's simulated plant is in another process (a serial or servo chain)")
        context = self.sim_plant.CreateDefaultContext()
        self.sim_plant.SetPositions(context, self.plant_q)
        return self.sim_plant.GetBodyByName(name).EvalPoseInWorld(context).translation().copy()

    @property
    def elapsed(self) -> np.ndarray:
        """(N,) seconds since the first status (the simulated time of sim.pushes and sim.faults)."""
        return self.t - self.t[0]

    @property
    def final_state(self) -> str:
        """The safety state at the end: "RUNNING", "FAULT", "INIT" or "SAFE_STOP"."""
        return self.summary["final_state"]

    @property
    def faults(self) -> list[dict]:
        """The loop's faults, [{"tick", "utime", "fault" (e.g. "CONTROLLER"), "reason"}]."""
        return self.summary["faults"]

    @property
    def transitions(self) -> list[str]:
        """The safety transitions, 'tick N: RUNNING -> FAULT [CONTROLLER]: ...'."""
        return self.summary["transitions"]

    @property
    def error(self) -> str | None:
        """The traceback of the first exception the law raised, or None."""
        return self.summary["controller_timing"].get("error")

    @property
    def allocations(self) -> dict | None:
        """What the law's update allocated (hil.check_allocations' report) when checked, else None."""
        return self.summary["controller_timing"].get("allocations")

    @property
    def injected(self) -> list[dict]:
        """The simulated robot's injected faults (sim.faults): type, window and how often applied."""
        return self.summary["sim"]["faults"]

    @property
    def running(self) -> np.ndarray:
        """(N,) bool: the law commanded at that tick (the safety state was RUNNING)."""
        return self.safety == SafetyState.RUNNING

    def frame_positions(self, frame=None) -> np.ndarray:
        """(N, 3) p_WF of `frame` (a name or Frame; default the end effector) at each tick's measured q."""
        if isinstance(frame, str):
            frame = self.plant.GetFrameByName(frame)
        frame = self.end_effector if frame is None else frame
        kernels, X = self.plant.kernels(), np.zeros((4, 4))
        out = np.zeros((len(self.q), 3))
        for row, q in zip(out, self.q):
            kernels.frame_pose(q, frame, X)
            row[:] = X[:3, 3]
        return out


def simulate(config, controller=None, *, duration: float = 2.0, driver: str | None = None, pushes=(), payload=None,
             faults=None, overrides: dict | None = None, check_alloc: bool = False) -> SimRun:
    """Runs `controller` (a hil.Controller instance or class, or a function law(state, command); None:
    the one the config's controller.type names) on `config` (a path, a mapping or a RunConfig) in
    lockstep against its simulated robot for `duration` s of the robot's clock. `driver`: the stand-in
    in front of the arm (DRIVERS; driver_overrides), None: the config's. `pushes`, `payload`, `faults`:
    the sim section's keys (a payload may be a mass in kg). `overrides`: sections' keys, as hil.run's
    (the driver's keys win). `check_alloc`: measure what update() allocates (SimRun.allocations). The
    viewer is off (nobody sees memq://)."""
    from .chain import CHAINS, link_of, run_chain
    from .lockstep import make_lockstep, run_closed
    from .running import load
    cfg = load(config, overrides)
    keys = {}
    if pushes:
        keys["pushes"] = [dict(p) for p in pushes]
    if payload is not None:
        keys["payload"] = {"mass": float(payload)} if isinstance(payload, (int, float)) else dict(payload)
    if faults is not None:
        keys["faults"] = [dict(f) for f in faults]
    link = link_of(cfg)
    if link is not None and driver:
        raise ValueError(f"driver={driver!r} puts a stand-in in front of the simulated robot; this config's robot is "
                         f"behind its {link} chain, whose driver is `hil {CHAINS[link][3]}`")
    cfg = load(cfg, merged(driver_overrides(cfg, driver) if driver else None, {"sim": keys, "viz": False}))
    record = Recorder(int(round(duration * cfg.loop.rate_hz)))
    if link is not None:            # the device and its driver in processes of their own (hil.chain)
        summary, loop = run_chain(cfg, link, duration, controller=controller, on_tick=record, check_alloc=check_alloc)
        plant_q, sim_plant = loop.q.copy(), None     # (the plant is in the device's process: its last measured q)
    else:
        loop, sim = make_lockstep(cfg, controller=controller, check_alloc=check_alloc)
        summary = run_closed(loop, sim, duration, on_tick=record)
        plant_q, sim_plant = sim.plant_state()["q"], sim.physics.plant
    k = record.k
    if record.t is None:
        record._allocate(loop)
    return SimRun(record.t[:k], record.q[:k], record.v[:k], record.q_d[:k], record.tau[:k],
                  record.tau_external[:k], record.safety[:k], summary, cfg, loop.robot.plant,
                  loop.robot.end_effector, plant_q, record.gripper[:k], sim_plant)


def allocation_problem(run: SimRun) -> str | None:
    """What the law's update allocated, as `hil run --check-alloc` words it, if it allocated; else None
    (also when the run was not checked or the law never ran)."""
    from .running import format_allocations
    report = run.allocations
    if report is None or not report["ticks"] or not report["allocates"]:
        return None
    return format_allocations(report, run.summary["controller"])


@dataclass
class StationRun:
    """A station's lockstep run (hil.station): each arm's SimRun by name, and the station's summary
    (`summary["station"]`: on_fault, stopped_by; `summary["arms"]`: each arm's, as SimRun.summary)."""

    arms: dict
    summary: dict

    @property
    def final_state(self) -> str:
        """The worst arm's safety state at the end (SAFE_STOP, FAULT, INIT, RUNNING in that order)."""
        return self.summary["final_state"]

    @property
    def stopped_by(self) -> str | None:
        """on_fault stop_all: the arm whose fault stopped the station, else None."""
        return self.summary["station"]["stopped_by"]


def simulate_station(config, controllers: dict | None = None, *, duration: float = 2.0,
                     overrides: dict | None = None) -> StationRun:
    """Runs a station file (drivers.station; a path) in lockstep against its simulated arms for
    `duration` s: `controllers` a law per arm name instead of its controller.type, `overrides` the
    shared sections' keys (the arms' own still win). Each arm's rows as simulate's."""
    from drivers.station import load_station

    from .lockstep import run_closed
    from .station import make_station_lockstep
    station = load_station(config, merged(overrides, {"viz": False}))
    rate = station.first.loop.rate_hz
    records = {name: Recorder(int(round(duration * rate))) for name in station.arms}
    loop, sim = make_station_lockstep(station, controllers=controllers)

    def record(st):
        for name, arm in st.arms.items():
            records[name](arm)
    summary = run_closed(loop, sim, duration, on_tick=record)
    arms = {}
    for name, arm in loop.arms.items():
        r = records[name]
        if r.t is None:
            r._allocate(arm)
        k = r.k
        arms[name] = SimRun(r.t[:k], r.q[:k], r.v[:k], r.q_d[:k], r.tau[:k], r.tau_external[:k], r.safety[:k],
                            {**summary["arms"][name], "sim": summary["sim"][name]}, arm.cfg, arm.robot.plant,
                            arm.robot.end_effector, sim.robots[name].plant_state()["q"])
    return StationRun(arms, summary)
