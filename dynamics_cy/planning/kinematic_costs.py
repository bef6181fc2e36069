"""Kinematic costs on q, with the names and semantics of pydrake.multibody.inverse_kinematics'
PositionCost, OrientationCost and AngleBetweenVectorsCost: each evaluates the kinematic constraint of
the same geometry (as Drake does) and maps its value to a scalar cost, with the chain rule for the gradient.
"""
from __future__ import annotations

import numpy as np

from .kinematic_constraints import AngleBetweenVectorsConstraint, OrientationConstraint, PositionConstraint
from .program import Cost, _as_vector


class PositionCost(Cost):
    """(p_AP - p_AQ)ᵀ C (p_AP - p_AQ) for a point P fixed to A and a point Q fixed to B, measured and
    expressed in A."""

    def __init__(self, plant, frameA, p_AP, frameB, p_BQ, C, plant_context):
        p_AP = _as_vector(p_AP, 3, "p_AP")
        C = np.asarray(C, dtype=float)
        if C.shape != (3, 3):
            raise ValueError(f"PositionCost: C must be 3 x 3, got shape {C.shape}")
        self._p_AQ = PositionConstraint(plant, frameA, p_AP, p_AP, frameB, p_BQ, plant_context)
        self._p_AP, self._C = p_AP, C.copy()
        super().__init__(plant.num_positions())

    def _eval(self, x, with_gradient):
        p_AQ, J = self._p_AQ._eval(x, with_gradient)
        e = p_AQ - self._p_AP
        y = np.array([e @ self._C @ e])
        return y, ((e @ (self._C + self._C.T) @ J)[None, :] if with_gradient else None)


class OrientationCost(Cost):
    """c (1 - cos θ) with θ the angle between frames A (fixed to Ā, R_ĀA) and B (fixed to B̄, R_B̄B),
    computed as c (3 - trace(R_AB)) / 2."""

    def __init__(self, plant, frameAbar, R_AbarA, frameBbar, R_BbarB, c: float, plant_context):
        self._trace = OrientationConstraint(plant, frameAbar, R_AbarA, frameBbar, R_BbarB, 0.0, plant_context)
        self._c = float(c)
        super().__init__(plant.num_positions())

    def _eval(self, x, with_gradient):
        tr, dtr = self._trace._eval(x, with_gradient)
        y = 0.5 * self._c * (3.0 - tr)
        return y, (-0.5 * self._c * dtr if with_gradient else None)


class AngleBetweenVectorsCost(Cost):
    """c (1 - cos θ) with θ the angle between a (fixed to A) and b (fixed to B)."""

    def __init__(self, plant, frameA, a_A, frameB, b_B, c: float, plant_context):
        self._cos = AngleBetweenVectorsConstraint(plant, frameA, a_A, frameB, b_B, 0.0, np.pi, plant_context)
        self._c = float(c)
        super().__init__(plant.num_positions())

    def _eval(self, x, with_gradient):
        cos, dcos = self._cos._eval(x, with_gradient)
        return self._c * (1.0 - cos), (-self._c * dcos if with_gradient else None)
