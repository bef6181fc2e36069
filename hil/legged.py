"""The built-in law of a legged robot: whole-body torque control (controller.type whole_body, docs/wbc.md),
an ordinary user of the public API (hil.controller_api) on the loop's floating base.

    WholeBody: each tick one dynamics_cy.planning.whole_body QP on (q, v) of the floating base; τ its joint torques.

On activation (the safety enters RUNNING) the targets hold the robot where it is (the CoM, the base
pose, the posture, the feet); change them on ``law.wbc`` (``com_target``, ``active``, ...). The law
faults (it raises hil.ControllerFault: the loop sends the safe command, the drives' damping, and
latches) when the QP has no solution, when the status names no contact for one of its feet, or when
a foot is lost.

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
from dynamics_cy.planning._wbc_qp import FootLoss

from drivers.core.config import WholeBodyConfig
from drivers.core.schema import ConfigError, load
from dynamics_cy.planning.whole_body import WholeBodyController, WholeBodyWeights, qp_status_text

from .controller_api import Controller, ControllerFault


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
        if isinstance(p.effort_limit, list) and len(p.effort_limit) != self.n:
            raise ConfigError("controller.whole_body.effort_limit", f"needs one limit or {self.n} (one per actuated "
                                                                    f"joint), got {len(p.effort_limit)}")
        self.wbc = WholeBodyController(self.plant, self.contacts, mu=p.mu, f_min=p.f_min,
                                       effort_limits=p.effort_limit, weights=weights,
                                       friction_facets=p.friction_facets)
        weight = -self.plant.CalcTotalMass(self.plant.CreateDefaultContext()) * \
            self.plant.gravity_field().gravity_vector()[2]
        self.loss_force = p.foot_loss_load * weight / len(self.wbc.groups)   # N: asked of a foot it may lose
        self.feet: FootLoss | None = None                # bound to the contact state it first sees
        self._contact = None
        self.hold_pending = True

    def on_activate(self) -> None:
        """The targets are set anew from the first state: the robot held where it is."""
        self.hold_pending = True
        if self.feet is not None:
            self.feet.reset()

    def update(self, state, command) -> None:
        if self.hold_pending:
            self.wbc.hold(state.q)
            self.hold_pending = False
        if state.contact is not None:
            self._check_feet(state.contact)
        if not self.wbc.solve(state.q, state.v):
            raise ControllerFault(f"whole-body QP not solved ({qp_status_text(self.wbc.status)})")
        np.copyto(command.tau, self.wbc.tau)

    def _check_feet(self, contact) -> None:
        """The foot-loss check (the module's rule, counted by dynamics_cy.planning._wbc_qp.FootLoss):
        raises for a lost foot or a robot off the ground. Short on purpose: this frame runs every tick
        (a larger one, with the binding and the messages inline, allocated 8 B a tick)."""
        if contact is not self._contact:                 # the first status (or another state object)
            self._bind_feet(contact)
        gi = self.feet.update()
        if gi >= 0:
            self._lost(gi)

    def _bind_feet(self, contact) -> None:
        names = list(contact.names)
        missing = [g.name for g in self.wbc.groups if g.name not in names]
        if missing:
            raise ControllerFault(f"the status reports no contact for foot {', '.join(missing)}")
        order = [names.index(g.name) for g in self.wbc.groups]
        self.feet = FootLoss(self.wbc, contact.in_contact, order, self.loss_force, self.params.foot_loss_ticks)
        self._contact = contact

    def _lost(self, gi: int) -> None:
        if gi == len(self.wbc.groups):
            raise ControllerFault(f"every foot lost contact for {self.feet.ticks(gi)} ticks: the robot is off the "
                                  f"ground")
        asked = self.wbc.normal_forces(np.zeros(len(self.wbc.groups)))[gi]
        raise ControllerFault(f"foot {self.wbc.groups[gi].name} lost contact for {self.feet.ticks(gi)} ticks while the "
                           f"whole-body QP asks it for {asked:.0f} N")
