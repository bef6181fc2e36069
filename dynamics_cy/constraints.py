"""MultibodyPlant's constraints, with Drake's names and semantics: coupler, distance, ball and weld
constraints (``AddCouplerConstraint`` …), their specifications, ids, removal, and the per-context
active status and distance parameters. A mixin of MultibodyPlant (plant.py).

Each constraint is a holonomic equation g(q) = 0 between two joints or two bodies:

- coupler: q₀ − ρ q₁ − Δq = 0 for single-dof joints 0 and 1 (gear ratio ρ, offset Δq in q₀'s units);
- distance: ‖p_PQ‖ − d₀ = 0 for a point P of body A and Q of body B; with a finite stiffness k and
  damping c it is a spring f = −k (‖p_PQ‖ − d₀) − c ḋ along p̂_PQ instead;
- ball: p_PQ_W = 0 (points P on A and Q on B coincide);
- weld: X_PQ = I (frames P on A and Q on B coincide).

As in Drake, constraints are added before Finalize, only to a plant whose discrete solver is SAP when
it is discrete (TAMSI refuses them), and a continuous plant accepts them. The plant's dynamics
functions (mass matrix, inverse and forward dynamics) ignore them, as Drake's do; the simulated plant
(drivers.sim) enforces them, as Drake's SAP solver does (docs/sim.md, "Constraints").
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from .errors import ModelError
from .spatial_math import RigidTransform, _vec3
from .tree import BodyIndex, JointIndex

_TAMSI_HINT = ("Use set_discrete_contact_approximation() to set a model approximation that uses the SAP "
               "solver instead (kSap, kSimilar, or kLagged).")


class MultibodyConstraintId:
    """A constraint's unique identifier (Drake's Identifier): made by get_new_id(), compared and hashed by
    value."""

    __slots__ = ("_value",)
    _counter = itertools.count(1)

    def __init__(self, *args, **kwargs):
        raise TypeError("MultibodyConstraintId: No constructor defined! Use MultibodyConstraintId.get_new_id().")

    @classmethod
    def get_new_id(cls) -> "MultibodyConstraintId":
        new = object.__new__(cls)
        new._value = next(cls._counter)
        return new

    def get_value(self) -> int:
        return self._value

    def is_valid(self) -> bool:
        return self._value > 0

    def __eq__(self, other) -> bool:
        return isinstance(other, MultibodyConstraintId) and self._value == other._value

    def __ne__(self, other) -> bool:
        return not self == other

    def __lt__(self, other: "MultibodyConstraintId") -> bool:
        return self._value < other._value

    def __hash__(self) -> int:
        return hash((MultibodyConstraintId, self._value))

    def __repr__(self) -> str:
        return f"<MultibodyConstraintId value={self._value}>"


class DistanceConstraintParams:
    """The parameters of a distance constraint between point P of body A and point Q of body B: the free
    length d₀ (m, > 0), stiffness k (N/m, > 0; ∞ for a rigid rod) and damping c (N·s/m, >= 0); the
    constraint force on B at Q is f = (−k (d − d₀) − c ḋ) p̂_PQ, with d = ‖p_PQ‖. Without arguments:
    an invalid set, as Drake's default constructor."""

    __slots__ = ("_bodyA", "_p_AP", "_bodyB", "_p_BQ", "_distance", "_stiffness", "_damping")

    def __init__(self, bodyA=None, p_AP=None, bodyB=None, p_BQ=None, distance=None, stiffness=None, damping=None):
        args = (bodyA, p_AP, bodyB, p_BQ, distance, stiffness, damping)
        if all(a is None for a in args):
            self._bodyA = self._bodyB = BodyIndex(-1)
            self._p_AP, self._p_BQ = np.zeros(3), np.zeros(3)
            self._distance = self._stiffness = self._damping = 0.0
            return
        if any(a is None for a in args):
            raise TypeError("DistanceConstraintParams(): pass all of bodyA, p_AP, bodyB, p_BQ, distance, "
                            "stiffness, damping, or none")
        if not BodyIndex(bodyA).is_valid():
            raise ModelError("Invalid index for body A.")
        if not BodyIndex(bodyB).is_valid():
            raise ModelError("Invalid index for body B.")
        if int(bodyA) == int(bodyB):
            raise ModelError("Body indexes are equal.")
        if not distance > 0.0:
            raise ModelError("Distance must be strictly positive.")
        if not stiffness > 0.0:
            raise ModelError("Stiffness must be strictly positive.")
        if not damping >= 0.0:
            raise ModelError("Damping must be positive or zero.")
        self._bodyA, self._bodyB = BodyIndex(bodyA), BodyIndex(bodyB)
        self._p_AP, self._p_BQ = _vec3(p_AP, "p_AP"), _vec3(p_BQ, "p_BQ")
        self._distance, self._stiffness, self._damping = float(distance), float(stiffness), float(damping)

    def bodyA(self) -> BodyIndex:
        return self._bodyA

    def bodyB(self) -> BodyIndex:
        return self._bodyB

    def p_AP(self) -> np.ndarray:
        return self._p_AP.copy()

    def p_BQ(self) -> np.ndarray:
        return self._p_BQ.copy()

    def distance(self) -> float:
        return self._distance

    def stiffness(self) -> float:
        return self._stiffness

    def damping(self) -> float:
        return self._damping

    def __repr__(self) -> str:
        return (f"DistanceConstraintParams(bodyA={self._bodyA!r}, p_AP={self._p_AP.tolist()}, bodyB={self._bodyB!r}, "
                f"p_BQ={self._p_BQ.tolist()}, distance={self._distance}, stiffness={self._stiffness}, "
                f"damping={self._damping})")


@dataclass(frozen=True)
class CouplerConstraintSpec:
    """q₀ = ρ q₁ + Δq between the single-dof joints joint0_index (q₀) and joint1_index (q₁)."""

    joint0_index: JointIndex
    joint1_index: JointIndex
    gear_ratio: float
    offset: float
    id: MultibodyConstraintId


@dataclass(frozen=True)
class BallConstraintSpec:
    """p_PQ_W = 0 for point P of body_A (p_AP) and Q of body_B (p_BQ; None before Finalize when it is to be
    computed from the default configuration)."""

    body_A: BodyIndex
    p_AP: np.ndarray
    body_B: BodyIndex
    p_BQ: np.ndarray | None
    id: MultibodyConstraintId


@dataclass(frozen=True)
class WeldConstraintSpec:
    """X_PQ = I for frame P of body_A (X_AP) and frame Q of body_B (X_BQ)."""

    body_A: BodyIndex
    X_AP: RigidTransform
    body_B: BodyIndex
    X_BQ: RigidTransform
    id: MultibodyConstraintId


KINDS = ("coupler", "distance", "ball", "weld")


class PlantConstraints:
    """The constraint API of MultibodyPlant (Drake's "Constraints" group)."""

    def _init_constraints(self) -> None:
        # by kind, in id order (Drake's std::maps); distance constraints are stored as their default params
        self._constraints: dict[str, dict] = {kind: {} for kind in KINDS}

    # ------------------------------------------------------------------------------------------
    # Counts and ids
    # ------------------------------------------------------------------------------------------
    def num_constraints(self) -> int:
        return sum(len(c) for c in self._constraints.values())

    def num_coupler_constraints(self) -> int:
        return len(self._constraints["coupler"])

    def num_distance_constraints(self) -> int:
        return len(self._constraints["distance"])

    def num_ball_constraints(self) -> int:
        return len(self._constraints["ball"])

    def num_weld_constraints(self) -> int:
        return len(self._constraints["weld"])

    def GetConstraintIds(self) -> list[MultibodyConstraintId]:
        """Every constraint's id: the couplers', then the distance, ball and weld constraints', as Drake."""
        return [i for kind in KINDS for i in self._constraints[kind]]

    def _specs(self, kind: str, id):
        specs = self._constraints[kind]
        if id is None:
            return dict(specs)
        if id not in specs:
            raise RuntimeError(f"get_{kind}_constraint_specs(): {id!r} is not the id of a {kind} constraint of "
                               "this plant")
        return specs[id]

    def get_coupler_constraint_specs(self, id: MultibodyConstraintId | None = None):
        """The coupler constraint `id`'s CouplerConstraintSpec; without id, all of them by id."""
        return self._specs("coupler", id)

    def get_ball_constraint_specs(self, id: MultibodyConstraintId | None = None):
        """The ball constraint `id`'s BallConstraintSpec; without id, all of them by id."""
        return self._specs("ball", id)

    def get_weld_constraint_specs(self, id: MultibodyConstraintId | None = None):
        """The weld constraint `id`'s WeldConstraintSpec; without id, all of them by id."""
        return self._specs("weld", id)

    # ------------------------------------------------------------------------------------------
    # Adding and removing
    # ------------------------------------------------------------------------------------------
    def _check_can_add(self, method: str, kind: str, elements, what: str = "body") -> None:
        """Drake's checks (before Finalize, not TAMSI), and that the elements are this plant's."""
        self._throw_if_finalized(method)
        if self.is_discrete() and int(self.get_discrete_contact_approximation()) == 0:        # kTamsi
            raise RuntimeError(f"Currently this MultibodyPlant is set to use the TAMSI solver. TAMSI does not "
                               f"support {kind} constraints. {_TAMSI_HINT}")
        for e in elements:
            if getattr(e, "_plant", None) is not self:
                name = e.name() if callable(getattr(e, "name", None)) else repr(e)
                raise RuntimeError(f"{method}(): {what} '{name}' does not belong to this plant")

    @staticmethod
    def _check_distinct(body_A, body_B, kind: str, what: str, prefix: str = "") -> None:
        if body_A.index() == body_B.index():
            raise RuntimeError(f"{prefix}Invalid set of parameters for constraint between bodies '{body_A.name()}' "
                               f"and '{body_B.name()}'. For a {kind} constraint, {what} P and Q must be on two "
                               "distinct bodies, i.e. body_A != body_B must be satisfied.")

    def AddCouplerConstraint(self, joint0, joint1, gear_ratio: float, offset: float = 0.0) -> MultibodyConstraintId:
        """q₀ = ρ q₁ + Δq between single-dof joints (q₀ of joint0, q₁ of joint1, ρ = gear_ratio, Δq = offset)."""
        self._check_can_add("AddCouplerConstraint", "coupler", (joint0, joint1), "joint")
        if joint0.num_velocities() != 1 or joint1.num_velocities() != 1:
            raise RuntimeError(f"Coupler constraints can only be defined on single-DOF joints. However joint "
                               f"'{joint0.name()}' has {joint0.num_velocities()} DOFs and joint '{joint1.name()}' "
                               f"has {joint1.num_velocities()} DOFs.")
        id = MultibodyConstraintId.get_new_id()
        self._constraints["coupler"][id] = CouplerConstraintSpec(joint0.index(), joint1.index(), float(gear_ratio),
                                                                 float(offset), id)
        return id

    def AddDistanceConstraint(self, body_A, p_AP, body_B, p_BQ, distance: float, stiffness: float = math.inf,
                              damping: float = 0.0) -> MultibodyConstraintId:
        """‖p_PQ‖ = distance for point P (p_AP in A) and Q (p_BQ in B); a spring-damper of free length
        `distance` when the stiffness is finite (DistanceConstraintParams)."""
        self._check_can_add("AddDistanceConstraint", "distance", (body_A, body_B))
        params = DistanceConstraintParams(body_A.index(), p_AP, body_B.index(), p_BQ, distance, stiffness, damping)
        id = MultibodyConstraintId.get_new_id()
        self._constraints["distance"][id] = params
        return id

    def AddBallConstraint(self, body_A, p_AP, body_B, p_BQ=None) -> MultibodyConstraintId:
        """Point P (p_AP in A) and Q (p_BQ in B) coincide; without p_BQ, Finalize sets it to where P is in B
        in the default configuration."""
        self._check_can_add("AddBallConstraint", "ball", (body_A, body_B))
        self._check_distinct(body_A, body_B, "ball", "points")
        id = MultibodyConstraintId.get_new_id()
        self._constraints["ball"][id] = BallConstraintSpec(
            body_A.index(), _vec3(p_AP, "p_AP"), body_B.index(), None if p_BQ is None else _vec3(p_BQ, "p_BQ"), id)
        return id

    def AddWeldConstraint(self, body_A, X_AP, body_B, X_BQ) -> MultibodyConstraintId:
        """Frame P (X_AP in A) and Q (X_BQ in B) coincide."""
        self._check_can_add("AddWeldConstraint", "weld", (body_A, body_B))
        self._check_distinct(body_A, body_B, "weld", "frames", "AddWeldConstraint(): ")
        id = MultibodyConstraintId.get_new_id()
        self._constraints["weld"][id] = WeldConstraintSpec(body_A.index(), RigidTransform(X_AP), body_B.index(),
                                                           RigidTransform(X_BQ), id)
        return id

    def RemoveConstraint(self, id: MultibodyConstraintId) -> None:
        self._throw_if_finalized("RemoveConstraint")
        for specs in self._constraints.values():
            if id in specs:
                del specs[id]
                return
        raise RuntimeError(f"RemoveConstraint(): The constraint id {getattr(id, '_value', id)} does not match any "
                           "constraint registered with this plant. Note that this method does not check constraints "
                           "registered with DeformableModel.")

    def _finalize_constraints(self) -> None:
        """Ball constraints given without p_BQ: p_BQ = where P is in B in the default configuration."""
        pending = [(id, s) for id, s in self._constraints["ball"].items() if s.p_BQ is None]
        if not pending:
            return
        context = self.CreateDefaultContext()
        for id, s in pending:
            p_BQ = self.CalcPointsPositions(context, self.get_body(s.body_A).body_frame(), s.p_AP,
                                            self.get_body(s.body_B).body_frame()).reshape(3)
            self._constraints["ball"][id] = BallConstraintSpec(s.body_A, s.p_AP, s.body_B, p_BQ, id)

    # ------------------------------------------------------------------------------------------
    # Per-context parameters: active status and distance parameters
    # ------------------------------------------------------------------------------------------
    def _new_constraint_parameters(self) -> tuple[dict, dict]:
        """A new context's (active status by id: all True, distance parameters by id: the defaults)."""
        return {i: True for i in self.GetConstraintIds()}, dict(self._constraints["distance"])

    def _constraint_status(self, context, id, method: str) -> dict:
        self._throw_if_not_finalized(method)
        self._check_context(context)
        if id not in context._constraint_active:
            raise RuntimeError(f"{method}(): {id!r} is not the id of a constraint of this plant")
        return context._constraint_active

    def GetConstraintActiveStatus(self, context, id: MultibodyConstraintId) -> bool:
        return self._constraint_status(context, id, "GetConstraintActiveStatus")[id]

    def SetConstraintActiveStatus(self, context, id: MultibodyConstraintId, status: bool) -> None:
        self._constraint_status(context, id, "SetConstraintActiveStatus")[id] = bool(status)

    def GetDefaultDistanceConstraintParams(self) -> dict:
        """The distance constraints' parameters as added, by id."""
        return dict(self._constraints["distance"])

    def _distance_id(self, id) -> None:
        if id not in self._constraints["distance"]:
            raise RuntimeError(f"The constraint id {getattr(id, '_value', id)} does not match any distance "
                               "constraint registered with this plant. ")

    def GetDistanceConstraintParams(self, context, id: MultibodyConstraintId | None = None):
        """The parameters stored in `context`: of the distance constraint `id`, or all of them by id."""
        self._check_context(context)
        if id is None:
            return dict(context._distance_params)
        self._distance_id(id)
        return context._distance_params[id]

    def SetDistanceConstraintParams(self, context, id: MultibodyConstraintId, params: DistanceConstraintParams) -> None:
        """Stores `params` in `context` for the distance constraint `id`."""
        if context is None:
            raise RuntimeError("SetDistanceConstraintParams(): context must not be None")
        self._check_context(context)
        self._distance_id(id)
        for which, b in (("A", params.bodyA()), ("B", params.bodyB())):
            if not 0 <= int(b) < self.num_bodies():
                raise RuntimeError(f"Index {int(b)} provided for body {which} does not correspond to a rigid body "
                                   "in this MultibodyPlant.")
        context._distance_params[id] = params
