"""The built-in law of a legged robot: whole-body torque control (controller.type whole_body, docs/wbc.md),
an ordinary user of the public API (hil.controller_api) on the loop's floating base.

    WholeBody: each tick one dynamics_cy.planning.whole_body QP on (q, v) of the floating base; τ its joint torques.

On activation (the safety enters RUNNING) the targets hold the robot where it is (the CoM, the base
pose, the posture, the feet); change them on ``law.wbc`` (``com_target``, ``active``, ...). The law
faults (it raises: the loop sends the safe command, the drives' damping, and latches) when the QP
has no solution, when the status names no contact for one of its feet, or when a foot is lost.

The foot-loss rule (docs/wbc.md, Foot loss), over the feet the law holds in contact that have
touched once: for ``foot_loss_ticks`` statuses in a row

- a foot reports no contact while the QP asks it for more than ``foot_loss_load`` of its share of
  the weight (m g / feet), in normal force: the ground the QP stands on is not there; or
- no foot reports contact: the robot is off the ground.

A lightly loaded foot that leaves the ground for a while, on soft contact or while the robot rocks
back from a push onto its other feet, is not lost: the QP asks it for little, and the robot stands
on the others.
"""
from __future__ import annotations

import numpy as np

from drivers.core.config import WholeBodyConfig
from drivers.core.schema import load
from dynamics_cy.planning.whole_body import WholeBodyController, WholeBodyWeights, qp_status_text

from .controller_api import Controller


class WholeBody(Controller):
    """τ from the whole-body QP (dynamics_cy.planning.whole_body.WholeBodyController) each tick. Params: the
    config's controller.whole_body section."""

    name = "whole_body"
    Params = WholeBodyConfig

    def on_configure(self) -> None:
        p = self.params
        if not self.contacts:
            raise ValueError("whole_body needs the robot's feet (a legged robot: robot.protocol floating_base)")
        weights = load(WholeBodyWeights, dict(p.weights), "controller.whole_body.weights")
        self.wbc = WholeBodyController(self.plant, self.contacts, mu=p.mu, f_min=p.f_min,
                                       effort_limits=p.effort_limit, weights=weights,
                                       friction_facets=p.friction_facets)
        groups = len(self.wbc.groups)
        self.touched, self.lost = np.zeros(groups, dtype=bool), np.zeros(groups, dtype=np.int64)
        self.airborne = 0
        weight = -self.plant.CalcTotalMass(self.plant.CreateDefaultContext()) * \
            self.plant.gravity_field().gravity_vector()[2]
        self.loss_force = p.foot_loss_load * weight / groups     # N: the QP's force on a foot it may lose
        self.foot_of_group: np.ndarray | None = None     # each group's index in state.contact
        self.hold_pending = True

    def on_activate(self) -> None:
        """The targets are set anew from the first state: the robot held where it is."""
        self.hold_pending = True
        self.touched[:] = False
        self.lost[:] = 0
        self.airborne = 0

    def update(self, state, command) -> None:
        if self.hold_pending:
            self.wbc.hold(state.q)
            self.hold_pending = False
        if state.contact is not None:
            self._check_feet(state.contact)
        if not self.wbc.solve(state.q, state.v):
            raise RuntimeError(f"whole-body QP not solved ({qp_status_text(self.wbc.status)})")
        np.copyto(command.tau, self.wbc.tau)

    def _check_feet(self, contact) -> None:
        """The foot-loss check (the module's rule): raises for a lost foot."""
        if self.foot_of_group is None:
            names = list(contact.names)
            missing = [g.name for g in self.wbc.groups if g.name not in names]
            if missing:
                raise RuntimeError(f"the status reports no contact for foot {', '.join(missing)}")
            self.foot_of_group = np.array([names.index(g.name) for g in self.wbc.groups])
        limit, wbc = self.params.foot_loss_ticks, self.wbc
        held = off = 0
        for gi, fi in enumerate(self.foot_of_group):
            touching = bool(contact.in_contact[fi])
            self.touched[gi] |= touching
            if not (wbc.active[gi] and self.touched[gi]):
                self.lost[gi] = 0
                continue
            held += 1
            off += not touching
            asked = wbc.normal_force(gi)          # the last solution's: what the command relied on
            self.lost[gi] = self.lost[gi] + 1 if not touching and asked > self.loss_force else 0
            if self.lost[gi] >= limit:
                raise RuntimeError(f"foot {wbc.groups[gi].name} lost contact for {self.lost[gi]} ticks while the "
                                   f"whole-body QP asks it for {asked:.0f} N")
        self.airborne = self.airborne + 1 if held and off == held else 0
        if self.airborne >= limit:
            raise RuntimeError(f"every foot lost contact for {self.airborne} ticks: the robot is off the ground")
