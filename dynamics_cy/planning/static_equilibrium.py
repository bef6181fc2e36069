"""StaticEquilibriumProblem (pydrake.multibody.optimization): find q, u and contact forces λᵢ with

    0 = τ_g(q) + B u + Σᵢ (Jv_WCbᵢᵀ - Jv_WCaᵢᵀ) λᵢ            (generalized forces balance)
    λᵢ in the friction cone of pair i, φᵢ(q) ≥ 0, 0 ≤ (n̂ᵢᵀλᵢ) φᵢ(q) ≤ ε  (complementarity)
    q within the joint limits (unit quaternions for floating bodies), u within the effort limits

for every collision candidate pair (A, B) not ignored: λᵢ is the force from A on B, applied at B's
witness point Cb (and -λᵢ on A at Ca); n̂ᵢ = -n̂_BA points from A to B.

Gradients with respect to q are exact for spheres, capsules and boxes on a half space (the ground),
whose witness points are core points offset along the constant normal; for other pairs (cylinders,
or two moving bodies) the contact normal and the witness points' offsets from the cores are held
fixed in the gradient (see dynamics_cy.planning.distance).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynamics_cy import CalcContactFrictionFromSurfaceProperties, Mesh, SpatialForce

from .collision import CollisionCandidates, GeometryPairs
from .distance import core_radius
from .kinematic_constraints import AddUnitQuaternionConstraintOnPlant
from .kinematics import frame_kinematics
from .multibody_constraints import ContactWrenchFromForceInWorldFrameEvaluator
from .program import Constraint, MathematicalProgram
from .tree_derivatives import TreeMotion


@dataclass
class ContactWrench:
    """The wrench F_Cb_W from body A on body B, applied at the point Cb (p_WCb_W)."""

    bodyA_index: int
    bodyB_index: int
    p_WCb_W: np.ndarray
    F_Cb_W: SpatialForce


class _ContactGeometry:
    """Witness points, their core points and Jacobians for the contact pairs at one q."""

    def __init__(self, plant, context, pairs):
        self.pairs = GeometryPairs(frame_kinematics(plant, context), pairs)
        self.tree = TreeMotion(plant)
        self.body = [(ga.body_index, gb.body_index) for ga, gb in pairs]
        self.radius = [(core_radius(ga.shape), core_radius(gb.shape)) for ga, gb in pairs]

    def update(self, q: np.ndarray) -> None:
        self.pairs.kin.update(q)
        self.tree.update(self.pairs.kin)

    def distance(self, k: int):
        return self.pairs.distance(k)


class StaticEquilibriumConstraint(Constraint):
    """τ_g(q) + B u + Σᵢ (Jv_WCbᵢᵀ - Jv_WCaᵢᵀ) λᵢ = 0 on [q; u; λ₁; …; λₖ] (nv rows)."""

    def __init__(self, plant, contact: _ContactGeometry):
        self._c = contact
        self._nq, self._nv, self._nu = plant.num_positions(), plant.num_velocities(), plant.num_actuators()
        self._B = plant.MakeActuationMatrix()
        self._g = plant.gravity_field().gravity_vector()
        bodies = [plant.get_body(b) for b in range(1, plant.num_bodies())]
        self._bodies = [(int(body.index()), body.body_frame(), body.default_mass(), body.default_com())
                        for body in bodies if body.default_mass() > 0]
        self._k = plant.kernels()
        n = self._nq + self._nu + 3 * len(contact.body)
        super().__init__(self._nv, n, np.zeros(self._nv), np.zeros(self._nv))

    def _eval(self, x, with_gradient):
        c, nq, nu = self._c, self._nq, self._nu
        q, u, lam = x[:nq], x[nq:nq + nu], x[nq + nu:].reshape(-1, 3)
        c.update(q)
        tree = c.tree
        y = np.empty(self._nv)
        self._k.gravity(np.ascontiguousarray(q), y)
        y += self._B @ u
        d_theta = np.zeros((self._nv, self._nv))
        d_lam = np.zeros((self._nv, lam.size))
        if with_gradient:
            for b, frame, m, com in self._bodies:
                X = c.pairs.kin.pose(frame)
                p = X[:3, :3] @ com + X[:3, 3]
                d_theta += tree.force(b, p, m * self._g, tree.point_jacobian(b, p))
        for k, (f, (ba, bb), (ra, rb)) in enumerate(zip(lam, c.body, c.radius)):
            sd = c.distance(k)
            Ja, Jb = tree.point_jacobian(ba, sd.p_WCa), tree.point_jacobian(bb, sd.p_WCb)
            y += (Jb - Ja).T @ f
            if with_gradient:
                n = sd.nhat_BA_W
                core_a, core_b = sd.p_WCa + ra * n, sd.p_WCb - rb * n
                d_theta += tree.force(bb, sd.p_WCb, f, tree.point_jacobian(bb, core_b)) \
                    - tree.force(ba, sd.p_WCa, f, tree.point_jacobian(ba, core_a))
                d_lam[:, 3 * k:3 * k + 3] = (Jb - Ja).T
        if not with_gradient:
            return y, None
        Np = c.pairs.kin.qdot_to_v()
        return y, np.hstack([d_theta if Np is None else d_theta @ Np, self._B, d_lam])


class StaticFrictionConeComplementarityConstraint(Constraint):
    """For one contact pair, on [q; λ; α; β]:
        (1 + μ²)(n̂ᵀλ)² - λᵀλ ≥ 0,  n̂ᵀλ - α = 0,  φ(q) - β = 0,  0 ≤ αβ ≤ ε
    with α, β ≥ 0 bounded separately (Drake's StaticFrictionConeComplementarityNonlinearConstraint)."""

    def __init__(self, contact: _ContactGeometry, pair_index: int, mu: float, complementarity_tolerance: float = 0.0):
        self._c, self._k, self._mu2 = contact, pair_index, float(mu) ** 2
        self._nq = contact.pairs.kin.nq
        super().__init__(4, self._nq + 5, [0.0, 0.0, 0.0, 0.0], [np.inf, 0.0, 0.0, complementarity_tolerance])

    def UpdateComplementarityTolerance(self, tol: float) -> None:
        self.UpdateUpperBound(np.r_[np.inf, 0.0, 0.0, tol])

    def _eval(self, x, with_gradient):
        nq = self._nq
        q, lam, alpha, beta = x[:nq], x[nq:nq + 3], x[nq + 3], x[nq + 4]
        self._c.update(q)
        sd = self._c.distance(self._k)
        n = -sd.nhat_BA_W
        fn = n @ lam
        y = np.array([(1 + self._mu2) * fn * fn - lam @ lam, fn - alpha, sd.distance - beta, alpha * beta])
        if not with_gradient:
            return y, None
        J = np.zeros((4, nq + 5))
        J[0, nq:nq + 3] = 2 * (1 + self._mu2) * fn * n - 2 * lam
        J[1, nq:nq + 3], J[1, nq + 3] = n, -1.0
        J[2, :nq], J[2, nq + 4] = self._c.pairs.distance_gradient(self._k, sd), -1.0
        J[3, nq + 3], J[3, nq + 4] = beta, alpha
        return y, J


class StaticEquilibriumProblem:
    """The program above on plant (finalized, with collision geometry) and its context.
    ignored_collision_pairs: pairs (GeometryInstance, GeometryInstance), either order, to leave out
    (they get neither non-penetration nor a contact force). Pairs with a Mesh must be ignored."""

    def __init__(self, plant, context, ignored_collision_pairs=()):
        ignored = {frozenset((id(a), id(b))) for a, b in ignored_collision_pairs}
        pairs = [p for p in CollisionCandidates(plant) if frozenset(map(id, p)) not in ignored]
        for ga, gb in pairs:
            if isinstance(ga.shape, Mesh) or isinstance(gb.shape, Mesh):
                raise ValueError(f"StaticEquilibriumProblem: the pair ('{ga.name}', '{gb.name}') has a Mesh, which "
                                 "dynamics_cy.planning.distance does not support; pass it in ignored_collision_pairs")
        self._plant, self._pairs = plant, pairs
        self._contact = _ContactGeometry(plant, context, pairs)
        prog = self._prog = MathematicalProgram()
        self._q = prog.NewContinuousVariables(plant.num_positions(), "q")
        self._u = prog.NewContinuousVariables(plant.num_actuators(), "u")
        prog.AddBoundingBoxConstraint(plant.GetPositionLowerLimits(), plant.GetPositionUpperLimits(), self._q)
        AddUnitQuaternionConstraintOnPlant(plant, self._q, prog)
        if plant.num_actuators():
            prog.AddBoundingBoxConstraint(plant.GetEffortLowerLimits(), plant.GetEffortUpperLimits(), self._u)
        self._lambda, self._wrench, self._complementarity = [], [], []
        for k, (ga, gb) in enumerate(pairs):
            lam = prog.NewContinuousVariables(3, f"lambda{k}")
            ab = prog.NewContinuousVariables(2, f"alpha_beta{k}")
            prog.AddBoundingBoxConstraint(0.0, np.inf, ab)
            mu = CalcContactFrictionFromSurfaceProperties(ga.friction, gb.friction).static_friction()
            con = StaticFrictionConeComplementarityConstraint(self._contact, k, mu)
            prog.AddConstraint(con, np.r_[self._q, lam, ab])
            self._lambda.append(lam)
            self._wrench.append(ContactWrenchFromForceInWorldFrameEvaluator(plant, context, (ga, gb)))
            self._complementarity.append(con)
        prog.AddConstraint(StaticEquilibriumConstraint(plant, self._contact),
                           np.concatenate([self._q, self._u] + self._lambda))

    def prog(self) -> MathematicalProgram:
        return self._prog

    def get_mutable_prog(self) -> MathematicalProgram:
        return self._prog

    def q_vars(self):
        return self._q

    def u_vars(self):
        return self._u

    def contact_pairs(self) -> list:
        """The (GeometryInstance A, GeometryInstance B) pairs that carry a contact force (our addition)."""
        return list(self._pairs)

    def UpdateComplementarityTolerance(self, tol: float) -> None:
        """Relaxes every complementarity constraint to 0 ≤ αβ ≤ tol."""
        for con in self._complementarity:
            con.UpdateComplementarityTolerance(tol)

    def GetContactWrenchSolution(self, result) -> list[ContactWrench]:
        q = result.GetSolution(self._q)
        self._contact.update(q)
        out = []
        for k, ((ga, gb), lam, wrench) in enumerate(zip(self._pairs, self._lambda, self._wrench)):
            F = wrench.Eval(np.r_[q, result.GetSolution(lam)])
            out.append(ContactWrench(ga.body_index, gb.body_index, self._contact.distance(k).p_WCb, SpatialForce(F)))
        return out
