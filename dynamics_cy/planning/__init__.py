"""dynamics_cy.planning: inverse kinematics, time-optimal path parameterization and multibody optimization on
dynamics_cy, with the names and semantics of pydrake.solvers, pydrake.multibody.inverse_kinematics,
pydrake.multibody.optimization and pydrake.trajectories, and whole-body control for floating-base
robots (whole_body: the per-tick QP assembled in _wbc_qp and solved by DAQP), and GlobalInverseKinematics,
a mixed-integer program Solve hands to HiGHS or SCIP (mixed_integer_solve). See docs/planning.md and
docs/wbc.md.

    from dynamics_cy.planning import InverseKinematics, Solve
    ik = InverseKinematics(plant)
    ik.AddPositionConstraint(frame_E, [0, 0, 0], plant.world_frame(), p_WG, p_WG)
    ik.AddOrientationConstraint(plant.world_frame(), R_WG, frame_E, RotationMatrix(), 0.0)
    ik.prog().SetInitialGuess(ik.q(), q0)
    result = Solve(ik.prog())
    q = result.GetSolution(ik.q()) if result.is_success() else None
"""
from .cartesian import plan_cartesian_move
from .collision import CollisionCandidates, DistanceConstraint
from .distance import CalcSignedDistance, SignedDistance
from .fast_ik import DampedLeastSquaresIK
from .global_inverse_kinematics import GlobalInverseKinematics
from .inverse_kinematics import InverseKinematics
from .kinematic_constraints import *  # its __all__: the pose, gaze, angle, distance and quaternion constraints
from .kinematic_costs import AngleBetweenVectorsCost, OrientationCost, PositionCost
from .minimum_distance import (
                        ExponentiallySmoothedHingeLoss,
                        MinimumDistanceConstraint,
                        MinimumDistanceLowerBoundConstraint,
                        MinimumDistanceUpperBoundConstraint,
                        QuadraticallySmoothedHingeLoss,
)
from .mixed_integer_optimization import (
                        AddBilinearProductMcCormickEnvelopeSos2,
                        AddLogarithmicSos2Constraint,
                        AddSos2Constraint,
                        IntervalBinning,
)
from .mixed_integer_rotation import MixedIntegerRotationConstraintGenerator
from .multibody_constraints import (
                        CentroidalMomentumConstraint,
                        ContactWrenchFromForceInWorldFrameEvaluator,
                        QuaternionEulerIntegrationConstraint,
                        SpatialVelocityConstraint,
)
from .program import (
                        Binding,
                        BoundingBoxConstraint,
                        Constraint,
                        Cost,
                        EvaluatorBase,
                        LinearConstraint,
                        LinearCost,
                        LinearEqualityConstraint,
                        LorentzConeConstraint,
                        MathematicalProgram,
                        QuadraticCost,
                        RotatedLorentzConeConstraint,
                        Variable,
)
from .program_result import MathematicalProgramResult, SolutionResult, SolverId
from .solve import Solve
from .static_equilibrium import (
                        ContactWrench,
                        StaticEquilibriumConstraint,
                        StaticEquilibriumProblem,
                        StaticFrictionConeComplementarityConstraint,
)
from .toppra import CalcGridPointsOptions, PathConstraint, Toppra, ToppraDiscretization
from .trajectories import PathParameterizedTrajectory, PiecewisePolynomial

__all__ = [name for name in dir() if not name.startswith("_")]
