"""InverseKinematics: a MathematicalProgram over the generalized positions q, with the constraint and
cost methods of pydrake.multibody.inverse_kinematics.InverseKinematics. Solve it with
dynamics_cy.planning.Solve.

A quadratic cost on q - q_nominal is added through the program, as in Drake:
    ik.prog().AddQuadraticErrorCost(W, q_nominal, ik.q())
"""
from __future__ import annotations

from .collision import DistanceConstraint
from .kinematic_constraints import (
    AddUnitQuaternionConstraintOnPlant,
    AngleBetweenVectorsConstraint,
    GazeTargetConstraint,
    OrientationConstraint,
    PointToLineDistanceConstraint,
    PointToPointDistanceConstraint,
    PolyhedronConstraint,
    PositionConstraint,
)
from .kinematic_costs import AngleBetweenVectorsCost, OrientationCost, PositionCost
from .minimum_distance import (
    MinimumDistanceConstraint,
    MinimumDistanceLowerBoundConstraint,
    MinimumDistanceUpperBoundConstraint,
)
from .program import Binding, MathematicalProgram


class InverseKinematics:
    """IK on a finalized dynamics_cy MultibodyPlant. The program holds q (nq variables) with, by default,
    the joint-limit bounding box (with_joint_limits) and, for quaternion-floating joints, zᵀz = 1 with
    -1 ≤ z ≤ 1 and an initial guess [1 0 0 0]. Every constraint evaluates on the IK's plant context.

    Unlike Drake, collision constraints need no SceneGraph: they use the plant's collision geometry
    (see dynamics_cy.planning.minimum_distance for how the distances are computed)."""

    def __init__(self, plant, plant_context=None, with_joint_limits: bool = True):
        if not plant.is_finalized():
            raise RuntimeError("InverseKinematics: the plant must be finalized")
        self._plant = plant
        self._context = plant.CreateDefaultContext() if plant_context is None else plant_context
        plant.GetPositions(self._context)  # raises unless the context belongs to the plant
        self._prog = MathematicalProgram()
        self._q = self._prog.NewContinuousVariables(plant.num_positions(), "q")
        if with_joint_limits:
            self._prog.AddBoundingBoxConstraint(plant.GetPositionLowerLimits(), plant.GetPositionUpperLimits(),
                                                self._q)
        AddUnitQuaternionConstraintOnPlant(plant, self._q, self._prog)

    def q(self):
        """The decision variables of the generalized positions (numpy object array of Variable)."""
        return self._q

    def q_vars(self):
        """The same variables as q() (the name StaticEquilibriumProblem uses)."""
        return self._q

    def prog(self) -> MathematicalProgram:
        return self._prog

    def get_mutable_prog(self) -> MathematicalProgram:
        return self._prog

    def context(self):
        return self._context

    def get_mutable_context(self):
        return self._context

    def _add(self, constraint) -> Binding:
        return self._prog.AddConstraint(constraint, self._q)

    def _add_cost(self, cost) -> Binding:
        return self._prog.AddCost(cost, self._q)

    def AddPositionConstraint(self, frameB, p_BQ, *args, **kwargs) -> Binding:
        """p_AQ_lower ≤ p_AQ ≤ p_AQ_upper for the point Q fixed to frame B. Drake's two overloads:
        (frameB, p_BQ, frameA, p_AQ_lower, p_AQ_upper) and (frameB, p_BQ, frameAbar, X_AbarA, p_AQ_lower,
        p_AQ_upper), the latter measuring in the frame A fixed to Ā at X_ĀA (PositionConstraint)."""
        return self._add(PositionConstraint(self._plant, *args, frameB=frameB, p_BQ=p_BQ,
                                            plant_context=self._context, **kwargs))

    def AddPositionCost(self, frameA, p_AP, frameB, p_BQ, C) -> Binding:
        """The cost (p_AP - p_AQ)ᵀ C (p_AP - p_AQ) for P fixed to A and Q fixed to B, in A."""
        return self._add_cost(PositionCost(self._plant, frameA, p_AP, frameB, p_BQ, C, self._context))

    def AddOrientationConstraint(self, frameAbar, R_AbarA, frameBbar, R_BbarB, theta_bound: float) -> Binding:
        """angle(R_AB) ≤ θ_bound, imposed as trace(R_AB) ≥ 2 cos θ_bound + 1."""
        return self._add(OrientationConstraint(self._plant, frameAbar, R_AbarA, frameBbar, R_BbarB, theta_bound,
                                               self._context))

    def AddOrientationCost(self, frameAbar, R_AbarA, frameBbar, R_BbarB, c: float) -> Binding:
        """The cost c (1 - cos θ), θ the angle between frames A and B."""
        return self._add_cost(OrientationCost(self._plant, frameAbar, R_AbarA, frameBbar, R_BbarB, c, self._context))

    def AddGazeTargetConstraint(self, frameA, p_AS, n_A, frameB, p_BT, cone_half_angle: float) -> Binding:
        """The point T fixed to B lies in the cone about n_A from S (fixed to A) of the given half angle."""
        return self._add(GazeTargetConstraint(self._plant, frameA, p_AS, n_A, frameB, p_BT, cone_half_angle,
                                              self._context))

    def AddAngleBetweenVectorsConstraint(self, frameA, na_A, frameB, nb_B, angle_lower: float,
                                         angle_upper: float) -> Binding:
        """angle_lower ≤ angle(na, nb) ≤ angle_upper."""
        return self._add(AngleBetweenVectorsConstraint(self._plant, frameA, na_A, frameB, nb_B, angle_lower,
                                                       angle_upper, self._context))

    def AddAngleBetweenVectorsCost(self, frameA, na_A, frameB, nb_B, c: float) -> Binding:
        """The cost c (1 - cos θ), θ the angle between na (fixed to A) and nb (fixed to B)."""
        return self._add_cost(AngleBetweenVectorsCost(self._plant, frameA, na_A, frameB, nb_B, c, self._context))

    def AddPointToPointDistanceConstraint(self, frame1, p_B1P1, frame2, p_B2P2, distance_lower: float,
                                          distance_upper: float) -> Binding:
        """distance_lower ≤ |p_P1P2| ≤ distance_upper."""
        return self._add(PointToPointDistanceConstraint(self._plant, frame1, p_B1P1, frame2, p_B2P2,
                                                        distance_lower, distance_upper, self._context))

    def AddPointToLineDistanceConstraint(self, frame_point, p_B1P, frame_line, p_B2Q, n_B2, distance_lower: float,
                                         distance_upper: float) -> Binding:
        """distance_lower ≤ distance(P, L) ≤ distance_upper, P fixed to frame_point, the line L through Q along n
        fixed to frame_line (imposed on the squared distance)."""
        return self._add(PointToLineDistanceConstraint(self._plant, frame_point, p_B1P, frame_line, p_B2Q, n_B2,
                                                       distance_lower, distance_upper, self._context))

    def AddPolyhedronConstraint(self, frameF, frameG, p_GP, A, b) -> Binding:
        """A [p_FP1; ...; p_FPn] ≤ b for the points (columns of p_GP) fixed to frame G, in F."""
        return self._add(PolyhedronConstraint(self._plant, frameF, frameG, p_GP, A, b, self._context))

    def AddMinimumDistanceLowerBoundConstraint(self, bound: float, influence_distance_offset: float = 0.01, *,
                                               capsules=None) -> Binding:
        """Every collision candidate pair at least `bound` apart (see MinimumDistanceLowerBoundConstraint);
        with `capsules` (a planning.capsules.CapsuleModel, our addition) every pair of that model instead."""
        return self._add(MinimumDistanceLowerBoundConstraint(self._plant, bound, self._context,
                                                             influence_distance_offset=influence_distance_offset,
                                                             capsules=capsules))

    def AddMinimumDistanceUpperBoundConstraint(self, bound: float, influence_distance_offset: float) -> Binding:
        """Some collision candidate pair at most `bound` apart (see MinimumDistanceUpperBoundConstraint)."""
        return self._add(MinimumDistanceUpperBoundConstraint(self._plant, bound, self._context,
                                                             influence_distance_offset))

    def AddMinimumDistanceConstraint(self, minimum_distance: float,
                                     influence_distance_offset: float = 1.0) -> Binding:
        """Every collision candidate pair at least minimum_distance apart (see MinimumDistanceConstraint)."""
        return self._add(MinimumDistanceConstraint(self._plant, minimum_distance, self._context,
                                                   influence_distance_offset=influence_distance_offset))

    def AddDistanceConstraint(self, geometry_pair, distance_lower: float, distance_upper: float) -> Binding:
        """distance_lower ≤ φ ≤ distance_upper for a pair of collision GeometryInstances."""
        return self._add(DistanceConstraint(self._plant, geometry_pair, self._context, distance_lower,
                                            distance_upper))
