"""The built-in law of a legged robot: whole-body torque control (controller.type whole_body, docs/wbc.md),
an ordinary user of the public API (hil.controller_api) on the loop's floating base.

    WholeBody: each tick one dynamics_cy.planning.whole_body QP on (q, v) of the floating base; τ its joint torques.

On activation (the safety enters RUNNING) the targets hold the robot where it is (the CoM, the base
pose, the posture, the feet); change them on ``law.wbc`` (``com_target``, ``active``, ...). The law
faults (it raises: the loop sends the safe command, the drives' damping, and latches) when the QP
has no solution, when the status names no contact for one of its feet, or when a foot it holds in
contact reports none for ``foot_loss_ticks`` ticks in a row after it has touched once.
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
        self.foot_of_group: np.ndarray | None = None     # each group's index in state.contact
        self.hold_pending = True

    def on_activate(self) -> None:
        """The targets are set anew from the first state: the robot held where it is."""
        self.hold_pending = True
        self.touched[:] = False
        self.lost[:] = 0

    def update(self, state, command) -> None:
        if state.contact is not None:
            self._check_feet(state.contact)
        if self.hold_pending:
            self.wbc.hold(state.q)
            self.hold_pending = False
        if not self.wbc.solve(state.q, state.v):
            raise RuntimeError(f"whole-body QP not solved ({qp_status_text(self.wbc.status)})")
        np.copyto(command.tau, self.wbc.tau)

    def _check_feet(self, contact) -> None:
        """The foot-loss check: a foot held in contact (active, touched once) reporting none for
        foot_loss_ticks ticks in a row raises."""
        if self.foot_of_group is None:
            names = list(contact.names)
            missing = [g.name for g in self.wbc.groups if g.name not in names]
            if missing:
                raise RuntimeError(f"the status reports no contact for foot {', '.join(missing)}")
            self.foot_of_group = np.array([names.index(g.name) for g in self.wbc.groups])
        limit = self.params.foot_loss_ticks
        for gi, fi in enumerate(self.foot_of_group):
            touching = bool(contact.in_contact[fi])
            self.touched[gi] |= touching
            held = self.wbc.active[gi] and self.touched[gi]
            self.lost[gi] = self.lost[gi] + 1 if held and not touching else 0
            if self.lost[gi] >= limit:
                raise RuntimeError(f"foot {self.wbc.groups[gi].name} lost contact for {self.lost[gi]} ticks")
