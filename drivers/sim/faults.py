"""Fault injection for the simulated robot, from SimConfig.faults (docs/sim.md lists the types).

Times are integer nanoseconds of simulated time; a fault is active while start <= t < stop, with t
the start of the step for faults on the actuators and the command channel, and the status's own
time for faults on the status. Every random choice comes from numpy's Generator seeded with
SimConfig.seed, so a lockstep run is reproducible. A robot without faults never calls in here.
"""
from __future__ import annotations

import typing

import numpy as np

from drivers.core.schema import ConfigError
from messages import lcmt_iiwa_command, lcmt_iiwa_status, lcmt_panda_command, lcmt_panda_status

from .config import FaultType, SimConfig

STATUS_FIELDS = ("position_measured", "velocity_estimated", "position_commanded", "torque_measured",
                 "torque_commanded", "torque_external", "velocity_commanded")
"""The per-joint arrays of a status, in the order the latency ring stores them."""


def corrupted_commands(protocol: str, n: int, control_mode: int, rng: np.random.Generator) -> dict[str, bytes]:
    """One malformed command message of each corruption kind (a valid one is all-zero torques)."""
    def command(joints: int, value: float = 0.0) -> bytes:
        if protocol == "iiwa":
            msg = lcmt_iiwa_command()
            msg.num_torques, msg.joint_torque = joints, [value] * joints
        else:
            msg = lcmt_panda_command()
            msg.control_mode_expected = control_mode
            for bit, name in ((1, "joint_position"), (2, "joint_velocity"), (4, "joint_torque")):
                if control_mode & bit:
                    setattr(msg, f"num_{name}", joints)
                    setattr(msg, name, [value] * joints)
        return msg.encode()

    valid = command(n)
    status = (lcmt_iiwa_status if protocol == "iiwa" else lcmt_panda_status)._get_packed_fingerprint()
    return {"garbage": rng.bytes(len(valid)), "truncated": valid[:len(valid) // 2],
            "fingerprint": status + valid[8:], "non_finite": command(n, float("nan")),
            "joint_count": command(n + 1)}


class FaultInjector:
    """The configured faults of one simulated robot with n protocol joints.

    `actuators[i]`: the actuator index of protocol joint i; `status_period_ns`: the status period;
    `control_mode`: the command control-mode bits the robot runs (for malformed commands).
    """

    def __init__(self, config: SimConfig, protocol: str, joint_names: list[str], actuators: np.ndarray,
                 status_period_ns: int, control_mode: int, path: str = "sim"):
        self.specs, n = config.faults, len(joint_names)
        self.rng = np.random.default_rng(config.seed)
        h = config.time_step_ns
        self.windows = []
        self.counts = [0] * len(self.specs)
        for i, f in enumerate(self.specs):
            start = round(f.start * 1e9)
            stop = round(f.stop * 1e9) if f.stop is not None else (start + h if f.type == "bad_command" else None)
            self.windows.append((start, stop))
        self.by_type = by_type = {kind: tuple(i for i, f in enumerate(self.specs) if f.type == kind)
                                  for kind in typing.get_args(FaultType)}

        def mask(i: int) -> np.ndarray:
            """Boolean mask of the protocol joints fault i names (all when it names none)."""
            m = np.zeros(n, dtype=bool)
            for j, joint in enumerate(self.specs[i].joints or range(n)):
                if isinstance(joint, str):
                    if joint not in joint_names:
                        raise ConfigError(f"{path}.faults[{i}].joints[{j}]", f"{joint!r} is not one of the protocol's "
                                                                             f"joints {joint_names}")
                    joint = joint_names.index(joint)
                if not 0 <= joint < n:
                    raise ConfigError(f"{path}.faults[{i}].joints[{j}]", f"index {joint} is out of range [0, {n})")
                m[joint] = True
            return m

        self.masks = {i: mask(i) for i in range(len(self.specs)) if self.specs[i].joints is not None
                      or self.specs[i].type in ("freeze_sensor", "sensor_noise")}
        # Sensor faults: frozen values captured when a freeze starts; noise scales per joint.
        self.sensor = bool(by_type["freeze_sensor"] or by_type["sensor_noise"])
        self.q_meas, self.v_meas, self.noise = np.zeros(n), np.zeros(n), np.zeros(n)
        self.frozen = {i: (np.zeros(n), np.zeros(n)) for i in by_type["freeze_sensor"]}
        self.was_active = [False] * len(self.specs)
        self.std = {i: (self.masks[i] * (self.specs[i].position_std or 0.0),
                        self.masks[i] * (self.specs[i].velocity_std or 0.0)) for i in by_type["sensor_noise"]}
        # Actuators.
        self.unresponsive = [(i, actuators[self.masks[i]]) for i in by_type["joint_unresponsive"]]
        self.bad_commands = [(i, (self.specs[i].corruption or "garbage")) for i in by_type["bad_command"]]
        self.messages = corrupted_commands(protocol, n, control_mode, self.rng) if self.bad_commands else {}
        self.actuation = bool(self.unresponsive or self.bad_commands)
        # Transmission: latency ring of whole status records, then silence, drops and duplicates.
        delays = {}
        for i in by_type["latency"]:
            steps = round(self.specs[i].delay * 1e9)
            if steps % status_period_ns:
                raise ConfigError(f"{path}.faults[{i}].delay", f"must be a multiple of the status period "
                                                               f"({status_period_ns / 1e9:g} s)")
            delays[i] = steps // status_period_ns
        self.delays = delays
        self.depth = max(delays.values(), default=-1) + 1
        self.ring = np.zeros((self.depth, len(STATUS_FIELDS), n))
        self.slots = [tuple(self.ring[k, f] for f in range(len(STATUS_FIELDS))) for k in range(self.depth)]
        self.ring_utime = [0] * self.depth
        self.head = self.filled = 0
        self.transmission = bool(by_type["silent"] or by_type["drop_status"]
                                 or by_type["duplicate_status"])
        self.sent = {i: 0 for i in by_type["drop_status"] + by_type["duplicate_status"]}

    def active(self, i: int, t_ns: int) -> bool:
        start, stop = self.windows[i]
        return start <= t_ns and (stop is None or t_ns < stop)

    def before_step(self, t_ns: int, enabled: np.ndarray) -> bytes | None:
        """Sets the actuator enable mask for the step starting at t_ns; returns a malformed command to
        put on the command channel, if one is due."""
        if self.unresponsive:
            enabled.fill(1.0)
            for i, actuators in self.unresponsive:
                if self.active(i, t_ns):
                    enabled[actuators] = 0.0
                    self.counts[i] += 1
        for i, corruption in self.bad_commands:
            if self.active(i, t_ns):
                self.counts[i] += 1
                return self.messages[corruption]
        return None

    def measure(self, t_ns: int, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sensors' q and v at t_ns: frozen joints hold their value from when the freeze started,
        then noisy joints get Gaussian noise."""
        np.copyto(self.q_meas, q)
        np.copyto(self.v_meas, v)
        for i in self.by_type["freeze_sensor"]:
            on = self.active(i, t_ns)
            fq, fv = self.frozen[i]
            if on and not self.was_active[i]:
                np.copyto(fq, q)
                np.copyto(fv, v)
            self.was_active[i] = on
            if on:
                np.copyto(self.q_meas, fq, where=self.masks[i])
                np.copyto(self.v_meas, fv, where=self.masks[i])
                self.counts[i] += 1
        for i in self.by_type["sensor_noise"]:
            if self.active(i, t_ns):
                std_q, std_v = self.std[i]
                self.rng.standard_normal(out=self.noise)
                self.noise *= std_q
                self.q_meas += self.noise
                self.rng.standard_normal(out=self.noise)
                self.noise *= std_v
                self.v_meas += self.noise
                self.counts[i] += 1
        return self.q_meas, self.v_meas

    def delay(self, t_ns: int, utime: int, fields: tuple) -> tuple[int, tuple]:
        """Stores this status record and returns the one to send: as old as the active latency says
        (the oldest stored while fewer are stored)."""
        slot = self.slots[self.head]
        for dst, src in zip(slot, fields):
            np.copyto(dst, src)
        self.ring_utime[self.head] = utime
        self.filled = min(self.filled + 1, self.depth)
        lag = 0
        for i, steps in self.delays.items():
            if self.active(i, t_ns):
                lag = max(lag, steps)
                self.counts[i] += 1
        k = (self.head - min(lag, self.filled - 1)) % self.depth
        self.head = (self.head + 1) % self.depth
        return self.ring_utime[k], self.slots[k]

    def copies(self, t_ns: int) -> int:
        """How many times to send the status due at t_ns: 0 (silent or dropped), 1, or 2 (duplicated)."""
        for i in self.by_type["silent"]:
            if self.active(i, t_ns):
                self.counts[i] += 1
                return 0
        copies = 1
        for kind, result in (("drop_status", 0), ("duplicate_status", 2)):
            for i in self.by_type[kind]:
                if self.active(i, t_ns):
                    f = self.specs[i]
                    self.sent[i] += 1
                    hit = (self.sent[i] % f.every == 0) if f.every else (self.rng.random() < f.probability)
                    if hit:
                        self.counts[i] += 1
                        if result == 0:
                            return 0
                        copies = 2
        return copies

    def gripper_silent(self, t_ns: int) -> bool:
        """The gripper's driver publishes no status at t_ns (its link lost; the gripper keeps executing)."""
        for i in self.by_type["gripper_silent"]:
            if self.active(i, t_ns):
                self.counts[i] += 1
                return True
        return False

    def silent(self, t_ns: int) -> bool:
        return any(self.active(i, t_ns) for i in self.by_type["silent"])

    def summary(self) -> list[dict]:
        """Per fault: its type, window (s; a one-off bad_command lasts one step) and how many steps or
        messages it affected."""
        return [{"type": f.type, "start": start / 1e9, "stop": None if stop is None else stop / 1e9,
                 "applied": self.counts[i]} for i, (f, (start, stop)) in enumerate(zip(self.specs, self.windows))]
