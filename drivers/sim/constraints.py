"""The plant's constraints for the simulated plant: drivers.sim._constraints.Constraints set up from a
finalized plant's coupler, distance, ball and weld constraints (their default parameters: all active, the
distance constraints' parameters as added), as Drake's SAP driver takes them from the plant.

    constraints = make_constraints(plant, time_step)      # None without constraints
    constraints.set_active(id, False)                     # as MultibodyPlant.SetConstraintActiveStatus
"""
from __future__ import annotations

import numpy as np

from dynamics_cy.errors import ModelError

from ._constraints import KINDS
from ._constraints import Constraints as _Compiled


def _anchored(plant, b: int) -> bool:
    """Body b is the world or welded to it through weld joints only (it has no degrees of freedom)."""
    body = plant.get_body(b)
    while int(body.index()) != 0:
        joint = body.inboard_joint()
        if joint.num_velocities():
            return False
        body = joint.parent_body()
    return True


class Constraints(_Compiled):
    """The compiled constraints, with their MultibodyConstraintIds (in the order they are solved)."""

    def set_active(self, id, status: bool) -> None:
        """Activates (True) or deactivates a constraint by its MultibodyConstraintId from the next step."""
        if id not in self.ids:
            raise ValueError(f"{id!r} is not a constraint of this plant (its ids: {self.ids})")
        self.active[self.ids.index(id)] = 1.0 if status else 0.0


def make_constraints(plant, time_step: float) -> Constraints | None:
    """The Constraints of a finalized plant (None when it has none); ModelError, with Drake's message, for a
    ball, distance or weld constraint between two bodies that are both welded to the world."""
    rows = []
    for id, s in plant.get_coupler_constraint_specs().items():
        j0, j1 = plant.get_joint(s.joint0_index), plant.get_joint(s.joint1_index)
        rows.append((id, "coupler", (j0.position_start(), j1.position_start(), j0.velocity_start(),
                                     j1.velocity_start()), (s.gear_ratio, s.offset)))
    for id, p in plant.GetDefaultDistanceConstraintParams().items():
        rows.append((id, "distance", (p.bodyA(), p.bodyB(), 0, 0),
                     (*p.p_AP(), *p.p_BQ(), p.distance(), p.stiffness(), p.damping())))
    for id, s in plant.get_ball_constraint_specs().items():
        rows.append((id, "ball", (s.body_A, s.body_B, 0, 0), (*s.p_AP, *s.p_BQ)))
    for id, s in plant.get_weld_constraint_specs().items():
        rows.append((id, "weld", (s.body_A, s.body_B, 0, 0),
                     (*s.X_AP.rotation().matrix().ravel(), *s.X_AP.translation(),
                      *s.X_BQ.rotation().matrix().ravel(), *s.X_BQ.translation())))
    if not rows:
        return None
    for id, kind, (A, B, _, _), _ in rows:
        if kind != "coupler" and _anchored(plant, int(A)) and _anchored(plant, int(B)):
            raise ModelError(f"Creating a {kind} constraint between bodies '{plant.get_body(A).name()}' and "
                             f"'{plant.get_body(B).name()}' where both are welded to the world is not allowed.")
    reals = np.zeros((len(rows), 24))
    for i, (_, _, _, values) in enumerate(rows):
        reals[i, :len(values)] = values
    constraints = Constraints(plant.kernels(), time_step, [KINDS[kind] for _, kind, _, _ in rows],
                              [[int(x) for x in ints] for _, _, ints, _ in rows], reals,
                              [int(plant.get_body(b).body_frame().index()) for b in range(plant.num_bodies())])
    constraints.ids = [id for id, _, _, _ in rows]
    return constraints
