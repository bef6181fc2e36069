"""A scenario's criteria on what the simulated plant holds beside the robot (hil.scenario): an object's final
position, its slip in the gripper during a carry, and the wrist force/torque reading against the contact
force the plant applied. Measured from the simulated plant's own state on each tick (`on_tick`, lockstep:
the loop's `sim`), never from the robot's status.

    object_position: {object: box, position: [0.55, 0.2, 0.125], tolerance: 0.01}
        |p_WO − target| at the end, O the object's body origin (m)
    object_slip: {object: box, frame: right_finger, start: 4.8, stop: 8.1, max: 0.001}
        the largest |p_FO(t) − p_FO(start)| over start ≤ t ≤ stop (s of simulated time), F a frame of the
        gripper: how far the object moved in the grip (m)
    ft_force: {after: 2.0, rtol: 0.01}
        over t ≥ after, the loop's State.wrench force (the sensor's message, through the loop), expressed in
        W, against the force the weld holds quasi-statically, f = −Σ f_c − m g: the contact forces f_c (normal,
        damping and friction) the contact model applied on the bodies beyond the sensor's weld, and their
        weight; the largest |f_sensor − f| / |f| (a wrist sensor reads its tool's weight too)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
from annotated_types import Len

from drivers.core.schema import ConfigError, NonNegative, Positive


@dataclass
class ObjectPosition:
    """The object's origin must end within `tolerance` of `position` (W)."""
    object: str                                    # a body of sim.objects
    position: Annotated[list[float], Len(3, 3)]    # m, the target p_WO
    tolerance: Positive                            # m


@dataclass
class ObjectSlip:
    """The object may move at most `max` in `frame` (a gripper's) from `start` to `stop`."""
    object: str                                    # a body of sim.objects
    frame: str                                     # a frame of the simulated plant, e.g. the gripper's finger
    start: NonNegative                             # s of simulated time: the grip closed
    stop: Positive                                 # s: the carry's end
    max: Positive                                  # m
    every: Annotated[int, NonNegative] = 10        # ticks between samples


@dataclass
class ForceMatch:
    """The F/T reading's force against the weld's quasi-static force, from `after` on."""
    after: NonNegative                             # s of simulated time: the push has settled
    rtol: Positive = 0.01                          # of |f|


class ObjectTracker:
    """on_tick for hil.regress: the criteria above measured on the loop's simulated robot (`loop.sim`)."""

    def __init__(self, criteria):
        self.position, self.slip, self.force = criteria.object_position, criteria.object_slip, criteria.ft_force
        self.sim = None
        self.slip_max, self.offsets = 0.0, None
        self.force_error, self.force_samples, self.force_n = 0.0, 0, 0.0

    @property
    def active(self) -> bool:
        return any(c is not None for c in (self.position, self.slip, self.force))

    def _setup(self, loop) -> None:
        sim = self.sim = loop.sim
        if sim is None or not hasattr(sim, "physics"):
            raise ConfigError("scenario.criteria", "object and force criteria need the simulated plant (link: sim)")
        plant = self.plant = sim.physics.plant
        self.context = plant.CreateDefaultContext()
        for key, spec in (("object_position", self.position), ("object_slip", self.slip)):
            if spec is not None and not plant.HasBodyNamed(spec.object):
                raise ConfigError(f"scenario.criteria.{key}.object", f"the simulated plant has no body {spec.object!r}")
        if self.slip is not None and not plant.HasFrameNamed(self.slip.frame):
            raise ConfigError("scenario.criteria.object_slip.frame", f"the simulated plant has no frame "
                                                                      f"{self.slip.frame!r}")
        if self.force is not None:
            self._setup_force(loop)

    def _setup_force(self, loop) -> None:
        if loop.ft is None or getattr(self.sim, "ft_sensor", None) is None:
            raise ConfigError("scenario.criteria.ft_force", "needs sensors.ft and sim.ft_sensor enabled")
        plant, sensor = self.plant, self.sim.ft_sensor
        weld = plant.GetJointByName(sensor.config.joint)
        parent = {int(j.child_body().index()): int(j.parent_body().index())
                  for j in (plant.get_joint(i) for i in plant.GetJointIndices())}
        root = int(weld.child_body().index())

        def below(b: int) -> bool:
            while b != root and b in parent:
                b = parent[b]
            return b == root
        bodies = [b for b in range(plant.num_bodies()) if below(b)]
        self.bodies = bodies
        self.mass = sum(plant.get_body(b).default_mass() for b in bodies)
        self.touching, self.contact = np.zeros(len(bodies), dtype=bool), np.zeros((len(bodies), 3))
        self.gravity = np.asarray(plant.gravity_field().gravity_vector(), dtype=float)
        self.sensor_frame = plant.GetFrameByName(sensor.config.frame) if sensor.config.frame else weld.frame_on_child()

    def __call__(self, loop) -> None:
        if self.sim is None:
            self._setup(loop)
        physics = self.sim.physics
        t = physics.time_ns * 1e-9
        k = physics.steps
        if self.slip is not None and self.slip.start <= t <= self.slip.stop and k % max(self.slip.every, 1) == 0:
            p = self._p(self.plant.GetFrameByName(self.slip.frame), self.slip.object)
            if self.offsets is None:
                self.offsets = p
            self.slip_max = max(self.slip_max, float(np.linalg.norm(p - self.offsets)))
        if self.force is not None and t >= self.force.after and np.isfinite(loop.ft.wrench[3]):
            self._force(loop, physics)

    def _p(self, frame, name: str) -> np.ndarray:
        """p_FO_F: the object's origin in `frame`, from the plant's state."""
        plant = self.plant
        plant.SetPositions(self.context, self.sim.physics.q)
        return plant.CalcRelativeTransform(self.context, frame, plant.GetBodyByName(name).body_frame()) \
            .translation().copy()

    def _force(self, loop, physics) -> None:
        plant = self.plant
        physics.contact_forces(self.bodies, self.touching, self.contact)
        expected = -self.contact.sum(axis=0) - self.mass * self.gravity
        plant.SetPositions(self.context, physics.q)
        R_WS = self.sensor_frame.CalcPoseInWorld(self.context).rotation().matrix()
        measured = R_WS @ loop.ft.wrench[3:]
        size = float(np.linalg.norm(expected))
        self.force_n = max(self.force_n, size)
        self.force_error = max(self.force_error, float(np.linalg.norm(measured - expected)) / max(size, 1e-9))
        self.force_samples += 1

    def summary(self) -> dict:
        out = {}
        if self.position is not None and self.sim is not None:
            p = self._p(self.plant.world_frame(), self.position.object)
            out["object_final_position_m"] = p.tolist()
            out["object_position_error_m"] = float(np.linalg.norm(p - np.asarray(self.position.position)))
        if self.slip is not None:
            out["object_slip_max_m"] = self.slip_max
        if self.force is not None:
            out["ft_force"] = {"relative_error_max": self.force_error, "samples": self.force_samples,
                               "force_max_n": self.force_n}
        return out

    def check(self) -> list[dict]:
        """Each criterion as {name, measured, limit, passed} (hil.scenario.check's form)."""
        s, out = self.summary(), []
        if self.position is not None:
            e = s.get("object_position_error_m")
            out.append({"name": "object_position", "measured": e, "limit": self.position.tolerance,
                        "passed": e is not None and e <= self.position.tolerance,
                        "detail": f"{self.position.object} at {s.get('object_final_position_m')}"})
        if self.slip is not None:
            out.append({"name": "object_slip", "measured": self.slip_max, "limit": self.slip.max,
                        "passed": self.offsets is not None and self.slip_max <= self.slip.max})
        if self.force is not None:
            out.append({"name": "ft_force", "measured": self.force_error, "limit": self.force.rtol,
                        "passed": self.force_samples > 0 and self.force_error <= self.force.rtol,
                        "detail": f"{self.force_samples} readings, |f| up to {self.force_n:.2f} N"})
        return out
