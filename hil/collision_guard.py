"""The 1 kHz self-collision and workspace guard (safety.collision; docs/hil.md, Collision guard).

The model (dynamics_cy.planning.capsules): capsules fitted to the robot's collision geometry (each with
its fit's margin), extra capsules on named frames (a gripper), the workspace's boxes and planes, and
the pairs to check. Every tick `check(q)` computes every pair's signed distance φ and witnesses in the
compiled core (dynamics_cy._capsules, from Kernels.body_poses): allocation-free.

The policy, per pair k with its margins stop_k ≤ warn_k:
- φ_k < stop_k: FAULT COLLISION_IMMINENT naming the pair (SafetyMonitor's check; the safe command goes out,
  and the fault holds while the pair stays below stop_k);
- φ_k < warn_k (every such pair): with ḋ_k = ∂φ_k/∂q v = n̂ᵀ(Jv_WCa − Jv_WCb) v the approach rate, a
  force f_k along n̂ at the witnesses, τ += Σ_k f_k (∂φ_k/∂q)ᵀ, with s_k = (warn_k − φ_k)/(warn_k − stop_k)
  ∈ [0, 1]:

      damping:    f_k = c s_k max(0, −ḋ_k)                      (the approach is slowed, full at stop)
      repulsive:  f_k = k (warn_k − φ_k) + c s_k max(0, −ḋ_k)    (also pushed apart)

  f_k ≤ max_force (dynamics_cy._capsules.WarningPolicy); the command is then saturated and rate-limited
  as every command. A wrist nearing the base and the table at once is slowed along both normals.
"""
from __future__ import annotations

import logging

import numpy as np
from dynamics_cy._capsules import WarningPolicy

from drivers.core.config import CollisionConfig
from drivers.core.schema import ConfigError
from dynamics_cy import BodyIndex, RigidTransform, RollPitchYaw
from dynamics_cy.planning.capsules import BoxSpec, CapsuleModel, CapsuleSpec, PlaneSpec

log = logging.getLogger(__name__)


def capsule_model(plant, cfg: CollisionConfig) -> CapsuleModel:
    """The guard's capsule model of `plant` from safety.collision (fitted capsules, the extra capsules on
    their frames, boxes, planes, allowed pairs)."""
    extra = []
    for i, c in enumerate(cfg.capsules):
        if not plant.HasFrameNamed(c.frame):
            raise ConfigError(f"safety.collision.capsules[{i}].frame", f"the robot's model has no frame {c.frame!r}")
        frame = plant.GetFrameByName(c.frame)
        X_BF = frame.GetFixedPoseInBodyFrame().GetAsMatrix4()
        p0, p1 = (X_BF[:3, :3] @ np.asarray(p, dtype=float) + X_BF[:3, 3] for p in (c.p0, c.p1))
        extra.append(CapsuleSpec(c.name, int(frame.body().index()), p0, p1, float(c.radius)))
    boxes = [BoxSpec(b.name, RigidTransform(RollPitchYaw(*b.rpy), np.asarray(b.xyz, dtype=float)).GetAsMatrix4(),
                     np.asarray(b.size, dtype=float)) for b in cfg.boxes]
    planes = []
    for p in cfg.planes:
        n = np.asarray(p.normal, dtype=float)
        n = n / np.linalg.norm(n)
        planes.append(PlaneSpec(p.name, n, float(n @ np.asarray(p.point, dtype=float))))
    model = CapsuleModel.from_plant(plant, extra, boxes, planes, [tuple(a) for a in cfg.allowed], fit=cfg.fit,
                                    skip_within_joints=cfg.skip_within_joints)
    known = {c.name for c in model.capsules} | {plant.get_body(BodyIndex(c.body)).name() for c in model.capsules} \
        | {b.name for b in boxes} | {p.name for p in planes}
    for i, pair in enumerate(cfg.allowed):
        unknown = [name for name in pair if name not in known]
        if unknown:
            raise ConfigError(f"safety.collision.allowed[{i}]", f"{unknown[0]!r} is no capsule, body, box or plane "
                              f"of the guard's model")
    return model


class CollisionGuard:
    """The guard of one fixed-base robot (plant q = the joints' q): check(q) every tick, shape(q, v, tau)
    on the controller's command, summary() for the run's summary."""

    def __init__(self, plant, cfg: CollisionConfig):
        if plant.num_positions() != plant.num_velocities() or plant.num_velocities() != plant.num_actuated_dofs():
            raise ConfigError("safety.collision", "the guard supports fixed-base robots whose joints are all actuated "
                              "(set safety.collision.enabled: false)")
        self.cfg, self.model = cfg, capsule_model(plant, cfg)
        self.names = [self.model.pair_name(k) for k in range(len(self.model.pairs))]
        self.kernel = self.model.distances()
        self.kernels = plant.kernels()
        n, nv = len(self.model.pairs), plant.num_velocities()
        self.X_WB = np.zeros((plant.num_bodies(), 4, 4))
        self.distance, self.nhat = np.full(n, np.inf), np.zeros((n, 3))
        self.p_WCa, self.p_WCb = np.zeros((n, 3)), np.zeros((n, 3))
        self.warn, self.stop = self._margins(plant)
        # The bodies' Jacobians J_V_WB_W at Bo, those of the bodies in a warned pair refreshed each tick
        # (views and frame indices made once: indexing a list allocates nothing).
        self.J = np.zeros((plant.num_bodies(), 6, nv))
        moving = sorted({c.body for c in self.model.capsules})
        self._jacobians = [(b, int(plant.get_body(BodyIndex(b)).body_frame().index()), self.J[b]) for b in moving]
        self.policy = WarningPolicy([self.model.pair_bodies(k) for k in range(n)], self.distance, self.warn,
                                    self.stop, self.p_WCa, self.p_WCb, self.nhat, self.X_WB, self.J,
                                    cfg.damping, cfg.stiffness, cfg.max_force, cfg.policy == "repulsive") if n else None
        self.nearest = -1                 # the pair nearest its stop margin at the last check
        self.warn_events = self.warn_ticks = self.stop_ticks = 0
        self.min_distance, self.min_pair = np.inf, ""
        self.first_warning = ""
        self.viewer = None                # drivers.viz.collision.CollisionViewer, once show_in() is called
        self._plant = plant

    def show_in(self, lc) -> None:
        """Draw the capsules and the nearest pair in Meldis over `lc` at each draw() (drivers.viz.collision)."""
        from drivers.viz.collision import CollisionViewer
        self.viewer = CollisionViewer(self._plant, self.model, lc)

    def draw(self, utime: int, bridge_loads: int = 0) -> None:
        """The bodies' poses and the pair nearest its stop distance at the last check (outside the tick's
        measured time: it allocates, as the viewer bridge's draws do); the model again whenever the viewer
        bridge's count of loads sent (`bridge_loads`) has changed, so a Meldis started later gets it too."""
        if self.viewer is not None:
            self.viewer.publish(self.X_WB, self.nearest, self.p_WCa[self.nearest], self.p_WCb[self.nearest],
                                self.nhat[self.nearest], utime, bridge_loads)

    def _margins(self, plant) -> tuple[np.ndarray, np.ndarray]:
        """warn_k, stop_k of every pair: the guard's, or those of the last `pairs` entry naming it."""
        cfg, model = self.cfg, self.model
        n = len(model.pairs)
        warn, stop = np.full(n, float(cfg.warn_distance)), np.full(n, float(cfg.stop_distance))
        used = set()
        for k in range(n):
            (name_a, name_b), (a, b) = model.pair_names(k), model.pair_bodies(k)
            names_a = {name_a, plant.get_body(BodyIndex(a)).name()}
            names_b = {name_b} | ({plant.get_body(BodyIndex(b)).name()} if b >= 0 else set())
            for i, p in enumerate(cfg.pairs):
                x, y = p.pair
                if (x in names_a and y in names_b) or (y in names_a and x in names_b):
                    used.add(i)
                    warn[k] = cfg.warn_distance if p.warn_distance is None else p.warn_distance
                    stop[k] = cfg.stop_distance if p.stop_distance is None else p.stop_distance
                    if stop[k] > warn[k]:
                        raise ConfigError(f"safety.collision.pairs[{i}]", f"{self.names[k]}: stop_distance "
                                          f"{stop[k]} exceeds warn_distance {warn[k]}")
        unused = [i for i in range(len(cfg.pairs)) if i not in used]
        if unused:
            i = unused[0]
            raise ConfigError(f"safety.collision.pairs[{i}].pair", f"{cfg.pairs[i].pair} names no checked pair "
                              f"(capsule, body, box or plane names; checked: {', '.join(self.names[:6])}, ...)")
        return warn, stop

    def check(self, q) -> bool:
        """Every pair's φ at q; True when a pair is below its stop distance (text() names it)."""
        if not self.names:
            return False
        self.kernels.body_poses(q, self.X_WB)
        self.kernel.compute(self.X_WB, self.distance, self.p_WCa, self.p_WCb, self.nhat)
        k = self.nearest = self.kernel.nearest(self.distance, self.stop)
        d = self.distance[k]
        if d < self.min_distance:
            self.min_distance, self.min_pair = float(d), self.names[k]
        if d < self.stop[k]:
            self.stop_ticks += 1
            return True
        return False

    def text(self) -> str:
        """The pair below its stop distance, its distance and the witness normal."""
        k = self.nearest
        n = self.nhat[k]
        return (f"{self.names[k]} at {self.distance[k] * 1e3:.1f} mm (stop {self.stop[k] * 1e3:.1f} mm; "
                f"normal [{n[0]:.3f}, {n[1]:.3f}, {n[2]:.3f}])")

    def shape(self, q, v, tau) -> None:
        """The warning zone's policy on the command τ from every pair inside its zone (after check(q))."""
        if not self.names:
            return
        policy = self.policy
        if not policy.zone():
            return
        self.warn_ticks += 1
        if policy.entered:                          # events: pairs entering their warning zone
            self._entered()
        if self.cfg.policy == "none":
            return
        need = policy.need
        for b, frame, J in self._jacobians:
            if need[b]:
                self.kernels.jacobian(q, frame, J)
        policy.apply(v, tau)

    def _entered(self) -> None:
        """Count and log the pairs that entered their warning zone at this tick's zone()."""
        for k in np.flatnonzero(self.policy.inside == 2):
            d, warn = self.distance[k] * 1e3, self.warn[k] * 1e3
            self.warn_events += 1
            log.info("collision guard: %s at %.1f mm, inside its warning distance %.1f mm (policy %s)",
                     self.names[k], d, warn, self.cfg.policy)
            if not self.first_warning:
                self.first_warning = f"{self.names[k]} at {d:.1f} mm (warn {warn:.1f} mm)"

    def summary(self) -> dict:
        """What the run's summary says of the guard (its `collision` section)."""
        model = self.model
        return {"pairs": len(model.pairs), "capsules": len(model.capsules),
                **({"viewer_draws": self.viewer.draws} if self.viewer is not None else {}),
                "fit_margin_max_m": round(max((c.margin for c in model.capsules), default=0.0), 4),
                "min_distance_m": None if not np.isfinite(self.min_distance) else round(self.min_distance, 4),
                "min_pair": self.min_pair, "warnings": self.warn_events, "warning_ticks": self.warn_ticks,
                "first_warning": self.first_warning, "stop_ticks": self.stop_ticks,
                "unfitted": list(model.skipped)}


def make_guard(plant, cfg: CollisionConfig) -> CollisionGuard | None:
    """The guard, or None when safety.collision.enabled is false, the robot is not a fixed-base arm, or
    its model has nothing to check."""
    if not cfg.enabled or plant.num_positions() != plant.num_velocities() \
            or plant.num_velocities() != plant.num_actuated_dofs():
        return None
    guard = CollisionGuard(plant, cfg)
    if not guard.names:
        return None
    model = guard.model
    log.info("collision guard: %d capsules (fit margin up to %.1f mm), %d boxes, %d planes, %d pairs%s",
             len(model.capsules), 1e3 * max((c.margin for c in model.capsules), default=0.0), len(model.boxes),
             len(model.planes), len(model.pairs), f"; not fitted: {model.skipped}" if model.skipped else "")
    return guard
