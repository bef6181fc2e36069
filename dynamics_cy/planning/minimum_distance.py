"""Minimum-distance constraints on q (pydrake.multibody.inverse_kinematics'
MinimumDistanceLowerBoundConstraint and MinimumDistanceUpperBoundConstraint, and the seed's
MinimumDistanceConstraint), over the plant's collision candidate pairs.

How the distances are computed: Drake asks SceneGraph (FCL, plus its own closed forms for spheres) for
the signed distances of the candidate pairs within the influence distance; ours needs no SceneGraph.
The pairs are collision.CollisionCandidates(plant) (the pairs Drake's default filters leave) and each
pair's signed distance φᵢ(q) and its gradient n̂ᵀ(Jv_WCa - Jv_WCb) come from distance.py: exact for
spheres, capsules, boxes and half spaces (sphere/capsule pairs while their cores are apart), and for
cylinders the distance of the circumscribed 16-sided prism (never above the cylinder's, at most 2% of
its radius below). Meshes are not supported. A bounding-ball test skips pairs that cannot be within
the influence distance before any exact distance is computed.

Both constraints follow Drake's formulation: with d_inf = bound + influence_distance_offset, each pair
within d_inf gives the penalty pᵢ = φ((φᵢ - d_inf)/(d_inf - bound)) / φ(-1) (φ the penalty function,
default QuadraticallySmoothedHingeLoss), so pᵢ = 0 at d_inf and 1 at the bound; the N candidate
pairs' penalties (the pairs beyond d_inf at 0) are combined with α = 100 into

    lower bound:  SoftOverMax(p) = log(Σ exp(α pᵢ)) / α ≤ 1          (every φᵢ ≥ bound)
    upper bound:  SoftUnderMax(p) = Σ pᵢ exp(α pᵢ) / Σ exp(α pᵢ) ≥ 1   (some φᵢ ≤ bound)

A plant with no candidate pairs gives the constant 0 (lower) or 2 (upper): always satisfied, as Drake.

Our addition: the lower bound's `capsules=` (a planning.capsules.CapsuleModel, e.g. the collision guard's,
hil.collision_guard.capsule_model) puts the bound on that model's pairs (its capsules, boxes and planes,
by the compiled distances) instead of the plant's collision geometry: a configuration the planner
accepts with bound ≥ the guard's stop distance is one the guard lets through.
"""
from __future__ import annotations

import numpy as np

from .capsules import CapsulePairs
from .collision import CollisionCandidates, GeometryPairs
from .kinematics import frame_kinematics
from .program import Constraint

_ALPHA = 100.0


def QuadraticallySmoothedHingeLoss(x: float, compute_grad: bool = True) -> tuple[float, float | None]:
    """φ(x) = 0 for x ≥ 0, x²/2 for -1 < x < 0, -x - ½ for x ≤ -1; returns (φ, dφ/dx or None), the
    form of pydrake's penalty_function(x, compute_grad)."""
    phi, dphi = (0.0, 0.0) if x >= 0 else (0.5 * x * x, x) if x > -1 else (-0.5 - x, -1.0)
    return phi, (dphi if compute_grad else None)


def ExponentiallySmoothedHingeLoss(x: float, compute_grad: bool = True) -> tuple[float, float | None]:
    """φ(x) = -x e^(1/x) for x < 0, 0 otherwise; returns (φ, dφ/dx or None)."""
    if x >= 0:
        return 0.0, (0.0 if compute_grad else None)
    e = np.exp(1.0 / x)
    return -x * e, (e * (1.0 / x - 1.0) if compute_grad else None)


def _soft_over_max(v: np.ndarray) -> tuple[float, np.ndarray]:
    """log(Σ exp(α vᵢ)) / α and its gradient (the softmax weights)."""
    top = v.max()
    e = np.exp(_ALPHA * (v - top))
    s = e.sum()
    return top + np.log(s) / _ALPHA, e / s


def _soft_under_max(v: np.ndarray) -> tuple[float, np.ndarray]:
    """Σ vᵢ wᵢ with wᵢ = exp(α vᵢ) / Σ exp(α vⱼ), and its gradient wᵢ (1 + α (vᵢ - y))."""
    e = np.exp(_ALPHA * (v - v.max()))
    w = e / e.sum()
    y = float(w @ v)
    return y, w * (1.0 + _ALPHA * (v - y))


class _MinimumDistance(Constraint):
    """The candidate pairs' penalties combined by a smooth function (see the module docstring)."""

    _smooth = staticmethod(_soft_over_max)
    _empty_value = 0.0

    def __init__(self, plant, bound: float, plant_context, penalty_function, influence_distance_offset: float,
                 lb: float, ub: float, capsules=None):
        name = type(self).__name__
        if not np.isfinite(bound):
            raise ValueError(f"{name}: bound must be finite, got {bound}")
        if not (np.isfinite(influence_distance_offset) and influence_distance_offset > 0):
            raise ValueError(f"{name}: influence_distance_offset must be finite and > 0, got "
                             f"{influence_distance_offset}")
        kin = frame_kinematics(plant, plant_context)
        self._pairs = CapsulePairs(kin, capsules) if capsules is not None else \
            GeometryPairs(kin, CollisionCandidates(plant))
        self._bound = float(bound)
        self._d_inf = self._bound + float(influence_distance_offset)
        self._penalty = penalty_function or QuadraticallySmoothedHingeLoss
        self._scale = 1.0 / self._penalty(-1.0, False)[0]
        super().__init__(1, plant.num_positions(), lb, ub)

    def distance_bound(self) -> float:
        return self._bound

    def influence_distance(self) -> float:
        return self._d_inf

    def _eval(self, x, with_gradient):
        P = self._pairs
        n = len(P.pairs)
        if n == 0:
            return np.array([self._empty_value]), (np.zeros((1, x.shape[0])) if with_gradient else None)
        P.kin.update(x)
        width = self._d_inf - self._bound
        penalties, grads = np.zeros(n), []
        k = 0
        for i in range(n):
            if P.lower_bound(i) >= self._d_inf:
                continue
            sd = P.distance(i)
            if sd.distance >= self._d_inf:
                continue
            phi, dphi = self._penalty((sd.distance - self._d_inf) / width, with_gradient)
            penalties[k] = phi * self._scale
            k += 1
            if with_gradient:
                grads.append(dphi * self._scale / width * P.distance_gradient(i, sd))
        y, weights = self._smooth(penalties)  # the pairs beyond d_inf are the zeros after the first k
        if not with_gradient:
            return np.array([y]), None
        return np.array([y]), (weights[:k] @ np.array(grads) if k else np.zeros(x.shape[0]))[None, :]


class MinimumDistanceLowerBoundConstraint(_MinimumDistance):
    """Every collision candidate pair at least `bound` apart: SoftOverMax(p) ≤ 1 (see the module docstring).
    penalty_function(x, compute_grad) -> (φ, dφ/dx or None), default QuadraticallySmoothedHingeLoss."""

    def __init__(self, plant, bound: float, plant_context, penalty_function=None,
                 influence_distance_offset: float = 0.01, *, capsules=None):
        super().__init__(plant, bound, plant_context, penalty_function, influence_distance_offset, -np.inf, 1.0,
                         capsules)


class MinimumDistanceUpperBoundConstraint(_MinimumDistance):
    """Some collision candidate pair at most `bound` apart (the smallest distance ≤ bound, not every one):
    SoftUnderMax(p) ≥ 1. Only pairs within the influence distance pull: a larger offset than the lower
    bound's lets farther pairs take part, as Drake advises."""

    _smooth = staticmethod(_soft_under_max)
    _empty_value = 2.0

    def __init__(self, plant, bound: float, plant_context, influence_distance_offset: float,
                 penalty_function=None):
        super().__init__(plant, bound, plant_context, penalty_function, influence_distance_offset, 1.0, np.inf)


class MinimumDistanceConstraint(MinimumDistanceLowerBoundConstraint):
    """The seed's (an older Drake's) form of the lower bound: the same value, bounds [0, 1] (the value is
    positive), influence_distance_offset 1.0 by default and at least one candidate pair required."""

    def __init__(self, plant, minimum_distance: float, plant_context, penalty_function=None,
                 influence_distance_offset: float = 1.0):
        super().__init__(plant, minimum_distance, plant_context, penalty_function, influence_distance_offset)
        if not self._pairs.pairs:
            raise ValueError("MinimumDistanceConstraint: the plant has no collision candidate pairs "
                             "(register collision geometry on at least two unfiltered bodies)")
        self.set_bounds(0.0, 1.0)

    def minimum_distance(self) -> float:
        return self._bound
