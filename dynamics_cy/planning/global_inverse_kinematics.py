"""GlobalInverseKinematics: inverse kinematics as a mixed-integer convex program (Dai, Izatt & Tedrake,
IJRR 2019), with pydrake.multibody.inverse_kinematics.GlobalInverseKinematics' names and semantics.

The decision variables are every body's pose, R_WB and p_WBo, not q. Joints are linear constraints
between a body and its parent (a revolute joint keeps its axis, R_WC R_CJc k = R_WP R_PJp k, and its
origin, p_WP + R_WP p_PJp = p_WC + R_WC p_CJc; a weld fixes X_PC), each moving body's R_WB is in a
mixed-integer relaxation of SO(3) (MixedIntegerRotationConstraintGenerator) and, unless
Options.linear_constraint_only, in the convex hull constraints ‖rᵢ‖ ≤ 1, ‖rᵢ ± rⱼ‖ ≤ √2. Position,
orientation and region constraints are linear in (R_WB, p_WBo), so the program is a mixed-integer linear
(linear_constraint_only, no posture cost) or second-order-cone program, solved to global optimality by
Solve (HiGHS or SCIP, see mixed_integer_solve). Infeasible means the kinematic constraints are infeasible;
a solution approximately satisfies them, with an error that shrinks as num_intervals_per_half_axis grows.
ReconstructGeneralizedPositionSolution projects the body poses back onto the joints.

Supported joints: revolute, weld, and a floating base (quaternion or roll-pitch-yaw). Body 0 is the world.
"""
from __future__ import annotations

import numpy as np

from dynamics_cy import BodyIndex, RigidTransform, RollPitchYaw, RotationMatrix
from dynamics_cy.errors import HilstackError, ModelError

from .affine import (
    Affine,
    add_linear,
    add_linear_cost,
    add_linear_equality,
    add_lorentz_cone,
    add_rotated_lorentz_cone,
    as_affine,
)
from .mixed_integer_optimization import IntervalBinning
from .mixed_integer_rotation import (
    AddRotationMatrixOrthonormalSocpConstraint,
    MixedIntegerRotationConstraintGenerator,
    NewRotationMatrixVars,
)
from .program import Binding, MathematicalProgram
from .solve import Solve


class GlobalInverseKinematicsError(HilstackError, RuntimeError):
    """A bad argument or an impossible request to GlobalInverseKinematics (Drake raises RuntimeError)."""


def _pose(X) -> tuple[np.ndarray, np.ndarray]:
    X = RigidTransform(X)
    return X.rotation().matrix(), X.translation()


def _axis_angle(k, theta) -> np.ndarray:
    """Rodrigues: R = I + sin θ K + (1 − cos θ) K², K = [k]×."""
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(theta) * K + (1 - np.cos(theta)) * K @ K


def _project_to_axis_rotation(M, k, lower, upper) -> float:
    """argmin over θ ∈ [lower, upper] of ‖R(k, θ) − M‖_F: maximize tr(R(k, θ)ᵀM) = a sin θ + b cos θ + c."""
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    a, b = np.trace(K.T @ M), -np.trace((K @ K).T @ M)
    best = np.arctan2(a, b)
    candidates = [c for c in (lower, upper) if np.isfinite(c)]
    if np.isfinite(lower):
        best += 2 * np.pi * np.ceil((lower - best) / (2 * np.pi))      # the first copy ≥ lower
    elif np.isfinite(upper):
        best -= 2 * np.pi * np.ceil((best - upper) / (2 * np.pi))      # the last copy ≤ upper
    if lower <= best <= upper:
        candidates.append(best)
    return float(max(candidates, key=lambda t: a * np.sin(t) + b * np.cos(t)))


def _project_to_so3(M) -> np.ndarray:
    U, _, Vt = np.linalg.svd(M)
    return U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt


class GlobalInverseKinematics:
    """Global IK on a finalized dynamics_cy MultibodyPlant (see the module docstring)."""

    class Options:
        """num_intervals_per_half_axis, approach, interval_binning: the SO(3) relaxation (see
        MixedIntegerRotationConstraintGenerator); linear_constraint_only: only mixed-integer linear
        constraints (a looser relaxation, faster to solve; the joint limits become linear too)."""

        def __init__(self):
            self.num_intervals_per_half_axis = 2
            self.approach = MixedIntegerRotationConstraintGenerator.Approach.kBilinearMcCormick
            self.interval_binning = IntervalBinning.kLogarithmic
            self.linear_constraint_only = False

        def __repr__(self) -> str:
            return (f"GlobalInverseKinematics.Options(num_intervals_per_half_axis={self.num_intervals_per_half_axis}, "
                    f"approach={self.approach!r}, interval_binning={self.interval_binning!r}, "
                    f"linear_constraint_only={self.linear_constraint_only})")

    class Polytope3D:
        """{x ∈ ℝ³ : A x ≤ b}, A of shape (n, 3)."""

        def __init__(self, A, b):
            self.A = np.asarray(A, dtype=float).reshape(-1, 3)
            self.b = np.asarray(b, dtype=float).reshape(-1)
            if self.A.shape[0] != self.b.shape[0]:
                raise ValueError(f"Polytope3D: A has {self.A.shape[0]} rows and b {self.b.shape[0]}")

        def __repr__(self) -> str:
            return f"GlobalInverseKinematics.Polytope(A={self.A}, b={self.b})"

    def __init__(self, plant, options: Options | None = None):
        if not plant.is_finalized():
            raise GlobalInverseKinematicsError("GlobalInverseKinematics: the plant must be finalized")
        options = GlobalInverseKinematics.Options() if options is None else options
        self._plant, self._prog = plant, MathematicalProgram()
        nb = plant.num_bodies()
        self._lower, self._upper = np.full(plant.num_positions(), -np.inf), np.full(plant.num_positions(), np.inf)
        self._joint = {}                 # child body index -> its inboard joint
        for j in plant.GetJointIndices():
            joint = plant.get_joint(j)
            self._joint[int(joint.child_body().index())] = joint
        self._welded = self._welded_to_world()
        self._context = plant.CreateDefaultContext()
        generator = MixedIntegerRotationConstraintGenerator(options.approach, options.num_intervals_per_half_axis,
                                                            options.interval_binning)
        self._R, self._p = [None] * nb, [None] * nb
        for i in range(1, nb):
            name = plant.get_body(BodyIndex(i)).name()
            self._p[i] = self._prog.NewContinuousVariables(3, f"{name}_pos")
            self._R[i] = self._prog.NewContinuousVariables(3, 3, f"{name}_R") if i in self._welded else \
                NewRotationMatrixVars(self._prog, f"{name}_R")
        q_lower, q_upper = plant.GetPositionLowerLimits(), plant.GetPositionUpperLimits()
        for i in range(1, nb):
            body = plant.get_body(BodyIndex(i))
            if i in self._welded:
                R_WB, p_WB = self._world_pose(i)
                self._prog.AddBoundingBoxConstraint(R_WB.reshape(-1), R_WB.reshape(-1), self._R[i].reshape(-1))
                self._prog.AddBoundingBoxConstraint(p_WB, p_WB, self._p[i])
                continue
            if not options.linear_constraint_only:
                AddRotationMatrixOrthonormalSocpConstraint(self._prog, self._R[i])
            if body.is_floating_base_body():
                generator.AddToProgram(self._R[i], self._prog)
                continue
            joint = self._joint[i]
            P = int(joint.parent_body().index())
            R_PJp, p_PJp = _pose(joint.frame_on_parent().GetFixedPoseInBodyFrame())
            R_CJc, p_CJc = _pose(joint.frame_on_child().GetFixedPoseInBodyFrame())
            (R_WP, p_WP), (R_WC, p_WC) = self._pose_vars(P), self._pose_vars(i)
            kind = joint.type_name()
            if kind == "weld":
                R_JpJc, p_JpJc = _pose(joint.X_FM())
                R_PC = R_PJp @ R_JpJc @ R_CJc.T
                p_PC = p_PJp + R_PJp @ (p_JpJc - R_JpJc @ R_CJc.T @ p_CJc)
                add_linear_equality(self._prog, p_WP + R_WP @ p_PC - p_WC)
                add_linear_equality(self._prog, (R_WP @ R_PC - R_WC).T.reshape(-1))
            elif kind == "revolute":
                generator.AddToProgram(self._R[i], self._prog)
                k = np.asarray(joint.revolute_axis(), dtype=float)
                add_linear_equality(self._prog, R_WC @ (R_CJc @ k) - R_WP @ (R_PJp @ k))
                add_linear_equality(self._prog, p_WP + R_WP @ p_PJp - p_WC - R_WC @ p_CJc)
                s = joint.position_start()
                self.AddJointLimitConstraint(BodyIndex(i), q_lower[s], q_upper[s], options.linear_constraint_only)
            else:
                raise ModelError(f"GlobalInverseKinematics: joint '{joint.name()}' is a {kind} joint; only revolute "
                                 "and weld joints (and a floating base) are supported")

    # --- structure ---------------------------------------------------------------------------
    def _welded_to_world(self) -> set[int]:
        """The bodies rigidly fixed to the world through weld joints (the world excluded)."""
        welded, changed = {0}, True
        while changed:
            changed = False
            for child, joint in self._joint.items():
                parent = int(joint.parent_body().index())
                if joint.type_name() == "weld" and (parent in welded) != (child in welded):
                    welded |= {parent, child}
                    changed = True
        return welded - {0}

    def _world_pose(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        X = self._plant.CalcRelativeTransform(self._context, self._plant.world_frame(),
                                              self._plant.get_body(BodyIndex(i)).body_frame())
        return X.rotation().matrix(), X.translation()

    def _pose_vars(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(R_WB, p_WBo) as affine expressions; the world's are constants."""
        if i == 0:
            return as_affine(np.eye(3)), as_affine(np.zeros(3))
        return as_affine(self._R[i]), as_affine(self._p[i])

    def _check_body(self, body_index) -> int:
        i = int(body_index)
        if not 0 < i < self._plant.num_bodies():
            raise GlobalInverseKinematicsError(f"body index {i} out of range: bodies 1 to "
                                               f"{self._plant.num_bodies() - 1} have pose variables (0 is the world)")
        return i

    def prog(self) -> MathematicalProgram:
        return self._prog

    def get_mutable_prog(self) -> MathematicalProgram:
        return self._prog

    def body_rotation_matrix(self, body_index) -> np.ndarray:
        """The 3×3 decision variables of R_WB."""
        return self._R[self._check_body(body_index)]

    def body_position(self, body_index) -> np.ndarray:
        """The 3 decision variables of p_WBo."""
        return self._p[self._check_body(body_index)]

    def _p_WQ(self, i: int, p_BQ) -> np.ndarray:
        return as_affine(self._p[i]) + as_affine(self._R[i]) @ np.asarray(p_BQ, dtype=float).reshape(3)

    # --- constraints and costs ---------------------------------------------------------------
    def AddWorldPositionConstraint(self, body_index, p_BQ, box_lb_F, box_ub_F, X_WF=None) -> Binding:
        """box_lb_F ≤ p_FQ = R_WFᵀ(p_WBo + R_WB p_BQ − p_WFo) ≤ box_ub_F (X_WF default identity)."""
        i = self._check_body(body_index)
        R_WF, p_WF = _pose(RigidTransform() if X_WF is None else X_WF)
        return add_linear(self._prog, R_WF.T @ (self._p_WQ(i, p_BQ) - p_WF), box_lb_F, box_ub_F)

    def AddWorldRelativePositionConstraint(self, body_index_B, p_BQ, body_index_A, p_AP, box_lb_F, box_ub_F,
                                           X_WF=None) -> Binding:
        """box_lb_F ≤ R_WFᵀ(p_WQ − p_WP) ≤ box_ub_F for Q fixed to B and P fixed to A."""
        b, a = self._check_body(body_index_B), self._check_body(body_index_A)
        R_WF, _ = _pose(RigidTransform() if X_WF is None else X_WF)
        return add_linear(self._prog, R_WF.T @ (self._p_WQ(b, p_BQ) - self._p_WQ(a, p_AP)), box_lb_F, box_ub_F)

    def AddWorldOrientationConstraint(self, body_index, desired_orientation, angle_tol: float) -> Binding:
        """The angle θ between R_WB and the desired orientation is at most angle_tol:
        2 cos(angle_tol) + 1 ≤ trace(R_desired R_WBᵀ) ≤ 3 (no bound for angle_tol ≥ π)."""
        i = self._check_body(body_index)
        R_d = RotationMatrix(desired_orientation).matrix()
        lb = 2 * np.cos(angle_tol) + 1 if angle_tol < np.pi else -1.0
        return add_linear(self._prog, [(as_affine(self._R[i]) * R_d).sum()], lb, 3.0)

    def AddPostureCost(self, q_desired, body_position_cost, body_orientation_cost) -> None:
        """Σᵢ body_position_cost(i) ‖p_WBo(i) − p_WBo_desired(i)‖ + body_orientation_cost(i) (1 − cos θᵢ),
        θᵢ the angle between R_WB(i) and its orientation at q_desired; the norms are slack variables
        "p_WBo_error" in Lorentz cones, cos θᵢ = (trace(R_desired R_WBᵀ) − 1)/2."""
        nb = self._plant.num_bodies()
        pos, ori = (np.asarray(c, dtype=float).reshape(-1) for c in (body_position_cost, body_orientation_cost))
        for name, c in (("body_position_cost", pos), ("body_orientation_cost", ori)):
            if c.shape[0] != nb:
                raise GlobalInverseKinematicsError(f"{name} should have {nb} rows, got {c.shape[0]}")
            if np.any(c[1:] < 0):
                i = int(np.flatnonzero(c[1:] < 0)[0]) + 1
                raise GlobalInverseKinematicsError(f"{name}({i}) is negative")
        context = self._plant.CreateDefaultContext()
        self._plant.SetPositions(context, np.asarray(q_desired, dtype=float))
        err = self._prog.NewContinuousVariables(nb - 1, "p_WBo_error")
        cost = as_affine(err).sum()
        for i in range(1, nb):
            X = self._plant.CalcRelativeTransform(context, self._plant.world_frame(),
                                                  self._plant.get_body(BodyIndex(i)).body_frame())
            p_err = float(pos[i]) * (as_affine(self._p[i]) - X.translation())
            add_lorentz_cone(self._prog, [Affine.of(err[i - 1]), *p_err])
            cost = cost + float(ori[i]) * (1 - ((as_affine(self._R[i]) * X.rotation().matrix()).sum() - 1) / 2)
        add_linear_cost(self._prog, cost)

    def BodyPointInOneOfRegions(self, body_index, p_BQ, region_vertices) -> np.ndarray:
        """p_WQ ∈ ConvexHull(region_vertices[i]) for one i: p_WQ = Σᵢ Vᵢwᵢ, wᵢ ≥ 0, Σwᵢ = zᵢ, Σz = 1 with
        binaries z (returned; zᵢ = 1 for the region Q is in). Each region is 3 × (≥ 3 vertices)."""
        i = self._check_body(body_index)
        regions = [np.asarray(V, dtype=float).reshape(3, -1) for V in region_vertices]
        name = self._plant.get_body(BodyIndex(i)).name()
        z = self._prog.NewBinaryVariables(len(regions), f"z_{name}")
        p_WQ = as_affine(np.zeros(3))
        for r, V in enumerate(regions):
            if V.shape[1] < 3:
                raise GlobalInverseKinematicsError(f"Each region should have at least 3 vertices; region {r} has "
                                                   f"{V.shape[1]}")
            w = self._prog.NewContinuousVariables(V.shape[1], f"w_{name}_region_{r}")
            add_linear(self._prog, [as_affine(w).sum() - z[r]], 0.0, 0.0)
            self._prog.AddBoundingBoxConstraint(0.0, 1.0, w)
            p_WQ = p_WQ + V @ as_affine(w)
        add_linear(self._prog, [as_affine(z).sum()], 1.0, 1.0)
        add_linear_equality(self._prog, self._p_WQ(i, p_BQ) - p_WQ)
        return z

    def BodySphereInOneOfPolytopes(self, body_index, p_BQ, radius: float, polytopes) -> np.ndarray:
        """The sphere of the given radius about Q (fixed to B) inside one of the bounded polytopes
        Aᵢx ≤ bᵢ: p_WQ = Σᵢ yᵢ, Aᵢyᵢ ≤ (bᵢ − ‖Aᵢ rows‖ r) zᵢ, Σz = 1, binaries z (returned)."""
        i = self._check_body(body_index)
        if not radius >= 0:
            raise GlobalInverseKinematicsError(f"BodySphereInOneOfPolytopes: radius must be >= 0, got {radius}")
        polytopes = [GlobalInverseKinematics.Polytope3D(p.A, p.b) for p in polytopes]
        z = self._prog.NewBinaryVariables(len(polytopes), "z")
        self._prog.AddLinearEqualityConstraint(np.ones((1, len(polytopes))), [1.0], z)
        y = self._prog.NewContinuousVariables(3, len(polytopes), "y")
        Y = as_affine(y)
        add_linear_equality(self._prog, self._p_WQ(i, p_BQ) - Y.sum(axis=1))
        for k, P in enumerate(polytopes):
            margin = P.b - np.linalg.norm(P.A, axis=1) * radius
            add_linear(self._prog, P.A @ Y[:, k] - margin * Affine.of(z[k]), -np.inf, 0.0)
        return z

    def AddJointLimitConstraint(self, body_index, joint_lower_bound: float, joint_upper_bound: float,
                                linear_constraint_approximation: bool = False) -> None:
        """Limits the revolute joint into body_index to [lower, upper], where tighter than the limits so far:
        with β = θ − (lower + upper)/2 and α = (upper − lower)/2 < π, ‖R_WC R_CJc v − R_WP R_PJp R(k, mid) v‖
        ≤ 2 sin(α/2) for four unit v ⟂ k (Lorentz cones, or their 26-plane outer approximation when
        linear_constraint_approximation); with the parent welded to the world also trace R(k, β) ≥ 1 + 2cos α
        and, not linear, Vᵀ sym(R(k, β)) V − cos α I ⪰ 0 (a rotated Lorentz cone)."""
        if joint_lower_bound > joint_upper_bound:
            raise GlobalInverseKinematicsError("The joint lower bound should be no larger than the upper bound.")
        i = int(body_index)
        body = self._plant.get_body(BodyIndex(i))
        if body.is_floating_base_body():
            raise GlobalInverseKinematicsError("The body is floating, do not use AddJointLimitConstraint(), impose "
                                               "the bounds on R_WB and p_WB directly.")
        joint = self._joint.get(i)
        if joint is None:
            raise GlobalInverseKinematicsError(f"The body {body.name()} is not the child of any joint in the plant.")
        if joint.num_velocities() == 0:
            raise GlobalInverseKinematicsError("Cannot impose joint limits for a fixed joint.")
        if joint.type_name() != "revolute":
            raise ModelError(f"GlobalInverseKinematics: joint limits on a {joint.type_name()} joint are not supported")
        s = joint.position_start()
        tightened = joint_lower_bound > self._lower[s] or joint_upper_bound < self._upper[s]
        self._lower[s], self._upper[s] = max(self._lower[s], joint_lower_bound), min(self._upper[s], joint_upper_bound)
        alpha = (self._upper[s] - self._lower[s]) / 2
        if not tightened or not alpha < np.pi:
            return
        P = int(joint.parent_body().index())
        k = np.asarray(joint.revolute_axis(), dtype=float)
        R_PJp, _ = _pose(joint.frame_on_parent().GetFixedPoseInBodyFrame())
        R_CJc, _ = _pose(joint.frame_on_child().GetFixedPoseInBodyFrame())
        v0 = np.cross(k, [1.0, 0.0, 0.0])
        if np.linalg.norm(v0) < np.sqrt(2) / 2:
            v0 = np.cross(k, [0.0, 1.0, 0.0])
        v0 /= np.linalg.norm(v0)
        v1 = np.cross(k, v0)
        v1 /= np.linalg.norm(v1)
        R_mid = _axis_angle(k, (self._lower[s] + self._upper[s]) / 2)
        R_WC, R_WP = self._pose_vars(i)[0], self._pose_vars(P)[0]
        c = 2 * np.sin(alpha / 2)
        for v in (v0, v1, (v0 + v1) / np.sqrt(2), (v0 - v1) / np.sqrt(2)):
            d = R_WC @ (R_CJc @ v) - R_WP @ (R_PJp @ R_mid @ v)
            if linear_constraint_approximation:
                _add_bounded_norm_polyhedron(self._prog, d, c)
            else:
                add_lorentz_cone(self._prog, [Affine(None, c), *d])
        if P == 0 or P in self._welded:
            R_WPd, _ = self._world_pose(P)
            R_beta = (R_WPd @ R_PJp @ R_mid).T @ R_WC @ R_CJc        # R(k, β), affine in R_WC
            if not linear_constraint_approximation:
                V = np.column_stack([v0, v1])
                M = V.T @ ((R_beta + R_beta.T) / 2) @ V - np.cos(alpha) * np.eye(2)
                add_rotated_lorentz_cone(self._prog, [M[0, 0], M[1, 1], M[1, 0]])
            add_linear(self._prog, [np.trace(R_beta)], 1 + 2 * np.cos(alpha), np.inf)

    # --- initial guess and solution ----------------------------------------------------------
    def SetInitialGuess(self, q) -> None:
        """Sets an initial guess for every variable, binaries included: the program solved with each body's
        pose fixed to its pose at q (raises if that is infeasible)."""
        context = self._plant.CreateDefaultContext()
        self._plant.SetPositions(context, np.asarray(q, dtype=float))
        fixed = []
        try:
            for i in range(1, self._plant.num_bodies()):
                X = self._plant.CalcRelativeTransform(context, self._plant.world_frame(),
                                                      self._plant.get_body(BodyIndex(i)).body_frame())
                R = X.rotation().matrix().reshape(-1)
                fixed.append(self._prog.AddBoundingBoxConstraint(X.translation(), X.translation(), self._p[i]))
                fixed.append(self._prog.AddBoundingBoxConstraint(R, R, self._R[i].reshape(-1)))
            result = Solve(self._prog)
        finally:
            for b in fixed:
                self._prog.RemoveConstraint(b)
        if not result.is_success():
            raise GlobalInverseKinematicsError(
                "SetInitialGuess tried to solve a variant of your IK problem, but failed "
                f"({result.get_solution_result().name}: {result.get_solver_details().get('status')}).")
        self._prog.SetInitialGuessForAllVariables(result.GetSolution())

    def ReconstructGeneralizedPositionSolution(self, result) -> np.ndarray:
        """q whose poses best match the solution's: from the root outwards, a floating base's R_WB projected
        onto SO(3), a revolute joint's angle the rotation about its axis (within its limits) closest to
        R_JpJc = R_PJpᵀ R_WPᵀ R_WC R_CJc, with R_WP the parent's reconstructed orientation. Call it on a
        successful result only."""
        plant = self._plant
        q = np.zeros(plant.num_positions())
        R_rec = {0: np.eye(3)}

        def visit(i: int) -> np.ndarray:
            if i in R_rec:
                return R_rec[i]
            body = plant.get_body(BodyIndex(i))
            R_WC = np.asarray(result.GetSolution(self._R[i]), dtype=float)
            if body.is_floating_base_body():
                R = _project_to_so3(R_WC)
                s, p = body.floating_positions_start(), result.GetSolution(self._p[i])
                if body.has_quaternion_dofs():        # q = [qw qx qy qz x y z]
                    q[s:s + 4], q[s + 4:s + 7] = RotationMatrix(R).ToQuaternion().wxyz(), p
                else:                                 # q = [roll pitch yaw x y z]
                    q[s:s + 3], q[s + 3:s + 6] = RollPitchYaw(RotationMatrix(R)).vector(), p
            elif i in self._welded:
                R = self._world_pose(i)[0]
            else:
                joint = self._joint[i]
                R_WP = visit(int(joint.parent_body().index()))
                R_PJp, _ = _pose(joint.frame_on_parent().GetFixedPoseInBodyFrame())
                R_CJc, _ = _pose(joint.frame_on_child().GetFixedPoseInBodyFrame())
                if joint.type_name() == "revolute":
                    k, s = np.asarray(joint.revolute_axis(), dtype=float), joint.position_start()
                    theta = _project_to_axis_rotation(R_PJp.T @ R_WP.T @ R_WC @ R_CJc, k, self._lower[s],
                                                      self._upper[s])
                    q[s] = theta
                    R = R_WP @ R_PJp @ _axis_angle(k, theta) @ R_CJc.T
                elif joint.type_name() == "weld":
                    R = R_WP @ R_PJp @ _pose(joint.X_FM())[0] @ R_CJc.T
                else:
                    raise ModelError(f"GlobalInverseKinematics: cannot reconstruct a {joint.type_name()} joint")
            R_rec[i] = R
            return R

        for i in range(1, plant.num_bodies()):
            visit(i)
        return q


def _add_bounded_norm_polyhedron(prog: MathematicalProgram, x, c: float) -> None:
    """‖x‖ ≤ c relaxed to the tangent planes |xᵢ| ≤ c, |xᵢ ± xⱼ| ≤ √2 c, |x₀ ± x₁ ± x₂| ≤ √3 c."""
    rows = list(x) + [x[i] + x[j] for i, j in ((0, 1), (0, 2), (1, 2))] + \
        [x[i] - x[j] for i, j in ((0, 1), (0, 2), (1, 2))] + \
        [x[0] + x[1] + x[2], x[0] + x[1] - x[2], x[0] - x[1] + x[2], x[0] - x[1] - x[2]]
    bound = np.r_[np.full(3, c), np.full(6, np.sqrt(2) * c), np.full(4, np.sqrt(3) * c)]
    add_linear(prog, rows, -bound, bound)
