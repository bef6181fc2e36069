"""MultibodyPlant's algorithms: kinematics (poses, velocities, accelerations, Jacobians) and dynamics
(mass matrix, bias, gravity, inverse and forward dynamics, energy, momentum, centre of mass) on the
compiled model through the facade's workspace. A mixin of MultibodyPlant (plant.py); pydrake's names,
argument order and sign conventions.
"""
from __future__ import annotations

import numpy as np

from .context import Context, MultibodyForces
from .spatial_math import RigidTransform, SpatialAcceleration, SpatialForce, SpatialMomentum, SpatialVelocity
from .tree import Frame, RigidBody


class JacobianWrtVariable:
    """Whether a Jacobian is with respect to q̇ (kQDot) or v (kV)."""

    kQDot = "kQDot"
    kV = "kV"


class PlantAlgorithms:
    """The Calc*/Eval* methods of MultibodyPlant (which provides the compiled model and the workspace)."""

    # ------------------------------------------------------------------------------------------
    # Kinematics
    # ------------------------------------------------------------------------------------------
    def _update(self, context: Context, with_v: bool = False) -> None:
        """Brings the facade workspace up to date with the context (cached on the state values)."""
        self._check_context(context)
        key, x = self._ws_key, context._x.tobytes()
        if key is not None and key[0] is context and (key[2] or not with_v) and key[1] == x:
            return
        self._tree.update(context._q, context._v if with_v else None)
        self._ws_key = (context, x, with_v)
        self._body_poses = self._body_velocities = None

    @property
    def _R_WB(self) -> np.ndarray:
        """R_WB of every body (nbodies, 3, 3) for the last _update(), computed on first use."""
        if self._body_poses is None:
            self._body_poses = self._tree.body_poses()
        return self._body_poses[0]

    @property
    def _p_WB(self) -> np.ndarray:
        self._R_WB  # noqa: B018 (computes both poses)
        return self._body_poses[1]

    @property
    def _V_WB(self) -> np.ndarray:
        """V_WB_W of every body (nbodies, 6) for the last _update(context, with_v=True)."""
        if self._body_velocities is None:
            self._body_velocities = self._tree.body_velocities()
        return self._body_velocities

    def _pose_of_body(self, b: int) -> RigidTransform:
        return RigidTransform._trusted(self._R_WB[b].copy(), self._p_WB[b].copy())

    def EvalBodyPoseInWorld(self, context: Context, body_B: RigidBody) -> RigidTransform:
        self._update(context)
        return self._pose_of_body(int(body_B.index()))

    def EvalBodySpatialVelocityInWorld(self, context: Context, body_B: RigidBody) -> SpatialVelocity:
        self._update(context, with_v=True)
        return SpatialVelocity(self._V_WB[int(body_B.index())])

    def _frame_pose_in_world(self, context: Context, frame: Frame) -> RigidTransform:
        if frame._plant is not self:
            raise RuntimeError(f"frame '{frame.name()}' does not belong to this plant")
        self._update(context)
        if any(name == "X_PF" for _, name in context._parameters):   # poses set by SetPoseInParentFrame
            return self._pose_of_body(int(frame.body().index())) @ frame.CalcPoseInBodyFrame(context)
        X = self._tree.frame_pose_world(frame._index)
        return RigidTransform._trusted(X[:3, :3], X[:3, 3])

    def CalcRelativeTransform(self, context: Context, frame_A: Frame, frame_B: Frame) -> RigidTransform:
        """X_AB."""
        X_WB = self._frame_pose_in_world(context, frame_B)
        return X_WB if frame_A._index == 0 else self._frame_pose_in_world(context, frame_A).inverse() @ X_WB

    def CalcPointsPositions(self, context: Context, frame_B: Frame, p_BQi, frame_A: Frame) -> np.ndarray:
        """p_AQi (3 x n) for points Qi given in frame B (3 x n or 3)."""
        p = np.asarray(p_BQi, dtype=float)
        pts = p.reshape(3, -1) if p.ndim == 2 else p.reshape(3, 1)
        return self.CalcRelativeTransform(context, frame_A, frame_B) @ pts

    def _frame_spatial_velocity_in_world(self, context: Context, frame: Frame) -> SpatialVelocity:
        self._update(context, with_v=True)
        V = self._V_WB[int(frame.body().index())]
        p_BoFo_W = self._pose_of_body(int(frame.body().index())).rotation() @ \
            frame.CalcPoseInBodyFrame(context).translation()
        return SpatialVelocity(V[:3], V[3:] + np.cross(V[:3], p_BoFo_W))

    def _frame_spatial_velocity(self, context: Context, frame_B: Frame, frame_M: Frame,
                                frame_E: Frame) -> SpatialVelocity:
        """V_MB_E: the spatial velocity of frame B measured in frame M, expressed in E."""
        V_WB = self._frame_spatial_velocity_in_world(context, frame_B).get_coeffs()
        V_WM = self._frame_spatial_velocity_in_world(context, frame_M).get_coeffs()
        p_MoBo_W = self._frame_pose_in_world(context, frame_B).translation() - \
            self._frame_pose_in_world(context, frame_M).translation()
        w = V_WB[:3] - V_WM[:3]
        v = V_WB[3:] - V_WM[3:] - np.cross(V_WM[:3], p_MoBo_W)
        R_EW = self._frame_pose_in_world(context, frame_E).rotation().inverse().matrix()
        return SpatialVelocity(R_EW @ w, R_EW @ v)

    def _frame_spatial_acceleration_in_world(self, context: Context, frame_F: Frame) -> SpatialAcceleration:
        """A_WF_W = A_WB_W shifted to Fo: [α_WB; a_WBo + α_WB × p + w_WB × (w_WB × p)], p = p_BoFo_W."""
        body = frame_F.body()
        A = body.EvalSpatialAccelerationInWorld(context).get_coeffs()
        w = body.EvalSpatialVelocityInWorld(context).rotational()
        p = self._frame_pose_in_world(context, frame_F).translation() - body.EvalPoseInWorld(context).translation()
        return SpatialAcceleration(A[:3], A[3:] + np.cross(A[:3], p) + np.cross(w, np.cross(w, p)))

    def _frame_spatial_acceleration(self, context: Context, frame_F: Frame, frame_M: Frame,
                                    frame_E: Frame) -> SpatialAcceleration:
        """A_MF_E from A_WF = A_WM composed with the motion of F in M: α_MF = α_WF − α_WM − w_WM × w_MF and
        a_M_Fo = a_W_Fo − a_W_Mc − 2 w_WM × v_M_Fo, Mc the point of M at Fo, all in W, then expressed in E."""
        A_WF = self._frame_spatial_acceleration_in_world(context, frame_F).get_coeffs()
        A_WM = self._frame_spatial_acceleration_in_world(context, frame_M).get_coeffs()
        w_WM = self._frame_spatial_velocity_in_world(context, frame_M).rotational()
        V_MF = self._frame_spatial_velocity(context, frame_F, frame_M, self.world_frame()).get_coeffs()
        p = self._frame_pose_in_world(context, frame_F).translation() - \
            self._frame_pose_in_world(context, frame_M).translation()
        alpha = A_WF[:3] - A_WM[:3] - np.cross(w_WM, V_MF[:3])
        a_Mc = A_WM[3:] + np.cross(A_WM[:3], p) + np.cross(w_WM, np.cross(w_WM, p))
        a = A_WF[3:] - a_Mc - 2.0 * np.cross(w_WM, V_MF[3:])
        R_EW = self._frame_pose_in_world(context, frame_E).rotation().inverse().matrix()
        return SpatialAcceleration(R_EW @ alpha, R_EW @ a)

    def CalcSpatialAccelerationsFromVdot(self, context: Context, known_vdot) -> list[SpatialAcceleration]:
        """A_WB (expressed in W) of every body, by BodyIndex, for v̇ = known_vdot."""
        self._update(context, with_v=True)
        A = self._tree.body_accelerations(self._vector(known_vdot, self._nv, "known_vdot").copy())
        return [SpatialAcceleration(a) for a in A]

    # --- Jacobians -----------------------------------------------------------------------------
    def _point_jacobian(self, context: Context, body_index: int, p_WQ: np.ndarray) -> np.ndarray:
        self._update(context)
        return self._tree.point_jacobian_world(body_index, p_WQ)

    def _jacobian_wrt(self, J: np.ndarray, with_respect_to, context: Context) -> np.ndarray:
        if with_respect_to == JacobianWrtVariable.kV:
            return J
        if with_respect_to == JacobianWrtVariable.kQDot:
            return J @ self.MakeQDotToVelocityMap(context)
        raise ValueError(f"with_respect_to must be JacobianWrtVariable.kV or kQDot, got {with_respect_to!r}")

    def CalcJacobianSpatialVelocity(self, context: Context, with_respect_to, frame_B: Frame, p_BoBp_B,
                                    frame_A: Frame, frame_E: Frame) -> np.ndarray:
        """Js_V_ABp_E (6 x nv or 6 x nq): V_ABp_E = Js ṡ for the point Bp fixed in frame B."""
        X_WB = self._frame_pose_in_world(context, frame_B)
        p_WBp = X_WB @ np.asarray(p_BoBp_B, dtype=float).reshape(3)
        J = self._point_jacobian(context, int(frame_B.body().index()), p_WBp)
        if not frame_A.body().is_world_body():
            J = J - self._point_jacobian(context, int(frame_A.body().index()), p_WBp)
        if frame_E._index != 0:
            R_EW = self._frame_pose_in_world(context, frame_E).rotation().inverse().matrix()
            J = np.vstack([R_EW @ J[:3], R_EW @ J[3:]])
        return self._jacobian_wrt(J, with_respect_to, context)

    def CalcJacobianTranslationalVelocity(self, context: Context, with_respect_to, frame_B: Frame, p_BoBi_B,
                                          frame_A: Frame, frame_E: Frame) -> np.ndarray:
        """Js_v_ABi_E (3n x nv or 3n x nq) for n points Bi (3 x n, or 3) fixed in frame B."""
        pts = np.asarray(p_BoBi_B, dtype=float)
        pts = pts.reshape(3, -1) if pts.ndim == 2 else pts.reshape(3, 1)
        return np.vstack([self.CalcJacobianSpatialVelocity(context, with_respect_to, frame_B, pts[:, i],
                                                           frame_A, frame_E)[3:] for i in range(pts.shape[1])])

    def CalcJacobianAngularVelocity(self, context: Context, with_respect_to, frame_B: Frame, frame_A: Frame,
                                    frame_E: Frame) -> np.ndarray:
        """Js_w_AB_E (3 x nv or 3 x nq)."""
        return self.CalcJacobianSpatialVelocity(context, with_respect_to, frame_B, np.zeros(3), frame_A,
                                                frame_E)[:3]

    def CalcJacobianCenterOfMassTranslationalVelocity(self, context: Context, *args) -> np.ndarray:
        """(context[, model_instances], with_respect_to, frame_A, frame_E) -> Js_v_ACcm_E (3 x nv or nq),
        the Jacobian of the velocity of the centre of mass Ccm measured in A, expressed in E."""
        model_instances, (with_respect_to, frame_A, frame_E) = (None, args) if len(args) == 3 else \
            (args[0], args[1:])
        idx = self._bodies_of(model_instances)
        m = sum(self._bodies[i].default_mass() for i in idx)
        if not m > 0:
            raise RuntimeError("CalcJacobianCenterOfMassTranslationalVelocity(): the total mass must be "
                               "greater than zero")
        p_WCcm = self.CalcCenterOfMassPositionInWorld(context, model_instances)
        J = sum(self._bodies[i].default_mass() * self._point_jacobian(
            context, i, self._pose_of_body(i) @ self._bodies[i].default_com())[3:] for i in idx) / m
        if not frame_A.body().is_world_body():
            J = J - self._point_jacobian(context, int(frame_A.body().index()), p_WCcm)[3:]
        R_EW = self._frame_pose_in_world(context, frame_E).rotation().inverse().matrix()
        return self._jacobian_wrt(R_EW @ J, with_respect_to, context)

    def CalcCenterOfMassTranslationalVelocityInWorld(self, context: Context, model_instances=None) -> np.ndarray:
        """v_WCcm, the velocity of the centre of mass in W."""
        args = (JacobianWrtVariable.kV, self.world_frame(), self.world_frame())
        J = self.CalcJacobianCenterOfMassTranslationalVelocity(context, *((model_instances,) + args
                                                                          if model_instances else args))
        return J @ context._v

    def CalcBiasSpatialAcceleration(self, context: Context, with_respect_to, frame_B: Frame, p_BoBp_B,
                                    frame_A: Frame, frame_E: Frame) -> SpatialAcceleration:
        """AsBias_ABp_E = J̇s ṡ: the spatial acceleration of point Bp fixed in B when s̈ = 0.
        Measured in the world frame A = W (other frames A raise ValueError)."""
        if not frame_A.body().is_world_body() or not frame_A.is_body_frame():
            raise ValueError("CalcBiasSpatialAcceleration: only frame_A = world is supported")
        if with_respect_to != JacobianWrtVariable.kV:
            raise ValueError("CalcBiasSpatialAcceleration: only JacobianWrtVariable.kV is supported")
        b = int(frame_B.body().index())
        A = self.CalcSpatialAccelerationsFromVdot(context, np.zeros(self._nv))[b].get_coeffs()
        w = self._V_WB[b][:3]
        r = self._frame_pose_in_world(context, frame_B) @ np.asarray(p_BoBp_B, float).reshape(3) - self._p_WB[b]
        a = A[3:] + np.cross(A[:3], r) + np.cross(w, np.cross(w, r))
        R_EW = self._frame_pose_in_world(context, frame_E).rotation().inverse().matrix()
        return SpatialAcceleration(R_EW @ A[:3], R_EW @ a)

    def CalcBiasTranslationalAcceleration(self, context: Context, with_respect_to, frame_B: Frame, p_BoBi_B,
                                          frame_A: Frame, frame_E: Frame) -> np.ndarray:
        """aBias_ABi_E (3 x n) for n points Bi (3 x n) fixed in B, measured in A = W."""
        pts = np.asarray(p_BoBi_B, dtype=float)
        pts = pts.reshape(3, -1) if pts.ndim == 2 else pts.reshape(3, 1)
        return np.column_stack([self.CalcBiasSpatialAcceleration(context, with_respect_to, frame_B, pts[:, i],
                                                                 frame_A, frame_E).translational()
                                for i in range(pts.shape[1])])

    # ------------------------------------------------------------------------------------------
    # Dynamics
    # ------------------------------------------------------------------------------------------
    @staticmethod
    def _body_forces_or_none(forces: MultibodyForces) -> np.ndarray | None:
        return forces._body_forces if forces._body_forces.any() else None

    def CalcMassMatrix(self, context: Context) -> np.ndarray:
        """M(q), the actuators' reflected inertias ρ² I_r (this context's) on its diagonal."""
        self._update(context)
        M = self._tree.mass_matrix()
        delta = self._context_reflected_inertia_change(context)
        if delta is not None:
            M[np.diag_indices(self._nv)] += delta
        return M

    def CalcMassMatrixViaInverseDynamics(self, context: Context) -> np.ndarray:
        """M column by column: M e_i = ID(q, v = 0, v̇ = e_i) without gravity."""
        self._update(context)
        M = np.column_stack([self._tree.inverse_dynamics(e, False, False) for e in np.eye(self._nv)]) \
            if self._nv else np.zeros((0, 0))
        delta = self._context_reflected_inertia_change(context)
        if delta is not None:
            M[np.diag_indices(self._nv)] += delta
        return M

    def CalcBiasTerm(self, context: Context) -> np.ndarray:
        """C(q, v) v."""
        self._update(context, with_v=True)
        return self._tree.inverse_dynamics(None, True, False)

    def CalcGravityGeneralizedForces(self, context: Context) -> np.ndarray:
        """τ_g(q), the generalized force of gravity; gravity compensation is -τ_g."""
        self._update(context)
        return self._tree.gravity_forces()

    def CalcInverseDynamics(self, context: Context, known_vdot, external_forces: MultibodyForces) -> np.ndarray:
        """M v̇ + C v - τ_app - Σ J_Bᵀ F_app_Bo_W. Gravity counts only if the caller put it in the forces
        (CalcForceElementsContribution), as in Drake."""
        self._update(context, with_v=True)
        vdot = self._vector(known_vdot, self._nv, "known_vdot").copy()
        tau = self._tree.inverse_dynamics(vdot, True, False, self._body_forces_or_none(external_forces))
        delta = self._context_reflected_inertia_change(context)
        if delta is not None:
            tau += delta * vdot
        return tau - external_forces._tau

    # Identification (additions beyond Drake): the regressor of the inertial parameters
    def _regressor_kernels(self):
        if getattr(self, "_reg_kernels", None) is None:
            self._reg_kernels = self.kernels()
        return self._reg_kernels

    def CalcInverseDynamicsRegressor(self, context: Context, known_vdot, frame: Frame | None = None) -> np.ndarray:
        """Y with M v̇ + C v − τ_g = Y π (gravity included, reflected inertia not): (nv, 10 num_bodies)
        for π stacking each body's 10 parameters by BodyIndex (GetDefaultInertialParameters), or
        (nv, 10) for a payload rigidly attached at ``frame`` with its parameters about Fo in F."""
        self._check_context(context)
        vdot = self._vector(known_vdot, self._nv, "known_vdot")
        k = self._regressor_kernels()
        if frame is None:
            Y = np.zeros((self._nv, 10 * self.num_bodies()))
            k.torque_regressor(context._q, context._v, vdot, Y)
        else:
            Y = np.zeros((self._nv, 10))
            k.payload_regressor(context._q, context._v, vdot, frame, Y)
        return Y

    def CalcJointFrictionRegressor(self, context: Context, epsilon: float = 1e-2) -> np.ndarray:
        """[diag(v), diag(tanh(v/ε))] (nv, 2 nv): joint friction τ_f = Y [b_v; b_c] (viscous, Coulomb)."""
        self._check_context(context)
        Y = np.zeros((self._nv, 2 * self._nv))
        self._regressor_kernels().friction_regressor(np.ascontiguousarray(context._v, dtype=float), Y, float(epsilon))
        return Y

    def GetDefaultInertialParameters(self) -> np.ndarray:
        """π (10 num_bodies): per BodyIndex [m, m p_BoBcm_B, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] of
        I_BBo_B, from the default spatial inertias (Pinocchio's Inertia.toDynamicParameters order)."""
        pi = np.zeros(10 * self.num_bodies())
        for b in range(1, self.num_bodies()):
            M = self._bodies[b].default_spatial_inertia()
            m, mc, I = M.get_mass(), M.get_mass() * M.get_com(), M.CalcRotationalInertia().CopyToFullMatrix3()
            pi[10 * b:10 * b + 10] = [m, *mc, I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]
        return pi

    def CalcReactionForces(self, context: Context, known_vdot,
                           external_forces: MultibodyForces | None = None) -> list[SpatialForce]:
        """F_CJc_Jc of every joint, by ordinal: the spatial force the joint applies on its child body C at
        the origin of its child frame Jc, expressed in Jc (the convention of Drake's reaction_forces port),
        for the context's (q, v), the accelerations known_vdot, gravity and external_forces' body forces.
        An addition beyond Drake, which has only the port (evaluated at its own forward dynamics): with
        v̇ from the same forces, the two agree. The backward pass of Newton–Euler: F_C = Σ over C's
        outboard subtree of (M_B A_WB + V_WB ×* M_B V_WB − F_app_B), so welds carry their load too."""
        self._update(context, with_v=True)
        vdot = self._vector(known_vdot, self._nv, "known_vdot")
        F = self._tree.reaction_forces(vdot, None if external_forces is None
                                       else self._body_forces_or_none(external_forces))
        return [SpatialForce(row[:3].copy(), row[3:].copy()) for row in F]

    def CalcForceElementsContribution(self, context: Context, forces: MultibodyForces) -> None:
        """Overwrites forces with those of the force elements: gravity on every body (at its centre of
        mass), joint damping -d ∘ v (d: the context's, Joint.GetDampingVector) and the plant's other force
        elements (springs, dampers, bushings)."""
        self._update(context)
        forces.SetZero()
        g = self._gravity.gravity_vector()
        for b, body in enumerate(self._bodies):
            m = body.default_mass()
            if m == 0:
                continue
            p_BoBcm_W = self._R_WB[b] @ body.default_com()
            forces._body_forces[b] = np.r_[np.cross(p_BoBcm_W, m * g), m * g]
        forces._tau[:] = -self._context_damping(context) * context._v
        self._add_force_elements(context, forces)

    def _add_force_elements(self, context: Context, forces: MultibodyForces) -> None:
        """Adds the forces of every force element but gravity (element 0)."""
        for element in self._force_elements[1:]:
            element.CalcAndAddForceContribution(context, forces)

    def CalcGeneralizedForces(self, context: Context, forces: MultibodyForces) -> np.ndarray:
        """τ + Σ_B J_Bᵀ F_Bo_W: the generalized forces of ``forces`` (nv)."""
        self._update(context)
        if not forces.CheckHasRightSizeForModel(self):
            raise ValueError("CalcGeneralizedForces: the forces were made for a plant of another size")
        tau = forces._tau.copy()
        body_forces = self._body_forces_or_none(forces)
        if body_forces is not None:
            tau -= self._tree.inverse_dynamics(None, False, False, body_forces)
        return tau

    def CalcForwardDynamics(self, context: Context, tau) -> np.ndarray:
        """v̇ with CalcInverseDynamics(context, v̇, force elements) = tau: M v̇ = tau + τ_g - d∘v - C v + τ_e,
        τ_e the other force elements' (CalcForceElementsContribution without gravity); d and M's reflected
        inertias are the context's. (Drake has no public method for this; it is the acceleration its
        continuous plant integrates.)"""
        tau = self._vector(tau, self._nv, "tau") - self._context_damping(context) * context._v
        body_forces = None
        if len(self._force_elements) > 1:
            elements = MultibodyForces(self)
            self._add_force_elements(context, elements)
            tau = tau + elements._tau
            body_forces = self._body_forces_or_none(elements)
        self._update(context, with_v=True)
        delta = self._context_reflected_inertia_change(context)
        if delta is not None:   # the compiled ABA has the default inertias: M v̇ = τ - (ID at v̇ = 0)
            rhs = tau - self._tree.inverse_dynamics(np.zeros(self._nv), True, True, body_forces)
            return np.linalg.solve(self.CalcMassMatrix(context), rhs)
        return self._tree.forward_dynamics(tau.copy(), True, body_forces)

    # --- energy, momentum, centre of mass ------------------------------------------------------
    def CalcPotentialEnergy(self, context: Context) -> float:
        """V = -Σ m_B g · p_WBcm + Σ V_e, the force elements' (springs)."""
        self._update(context)
        g = self._gravity.gravity_vector()
        V = float(-sum(b.default_mass() * (g @ (self._pose_of_body(i) @ b.default_com()))
                       for i, b in enumerate(self._bodies) if b.default_mass() > 0))
        return V + sum(e.CalcPotentialEnergy(context) for e in self._force_elements[1:])

    def CalcKineticEnergy(self, context: Context) -> float:
        """½ vᵀ M v."""
        v = context._v
        return float(0.5 * v @ self.CalcMassMatrix(context) @ v)

    def CalcConservativePower(self, context: Context) -> float:
        """Pc = -dV/dt = τ_g · v + Σ Pc_e (the force elements')."""
        Pc = float(self.CalcGravityGeneralizedForces(context) @ context._v)
        return Pc + sum(e.CalcConservativePower(context) for e in self._force_elements[1:])

    def CalcNonConservativePower(self, context: Context) -> float:
        """Σ Pnc_e over the force elements, as Drake (gravity's is 0, a damper's −c ℓ̇²). Joint damping is
        not a force element, so its power -vᵀ(d ∘ v) is not included (nor is actuation)."""
        self._check_context(context)
        return float(sum(e.CalcNonConservativePower(context) for e in self._force_elements[1:]))

    def _bodies_of(self, model_instances) -> list[int]:
        if model_instances is None:
            return list(range(1, len(self._bodies)))
        chosen = {int(self._check_instance(m)) for m in model_instances}
        return [i for i, b in enumerate(self._bodies) if i > 0 and int(b.model_instance()) in chosen]

    def CalcTotalMass(self, context: Context, model_instances=None) -> float:
        self._check_context(context)
        return float(sum(self._bodies[i].default_mass() for i in self._bodies_of(model_instances)))

    def CalcCenterOfMassPositionInWorld(self, context: Context, model_instances=None) -> np.ndarray:
        self._update(context)
        idx = self._bodies_of(model_instances)
        m = sum(self._bodies[i].default_mass() for i in idx)
        if not m > 0:
            raise RuntimeError("CalcCenterOfMassPositionInWorld(): the system's total mass must be greater "
                               "than zero")
        return sum(self._bodies[i].default_mass() * (self._pose_of_body(i) @ self._bodies[i].default_com())
                   for i in idx) / m

    def CalcSpatialMomentumInWorldAboutPoint(self, context: Context, *args) -> SpatialMomentum:
        """(context[, model_instances], p_WoP_W) -> L_WS_P_W, the spatial momentum about P."""
        model_instances, p_WoP_W = (None, args[0]) if len(args) == 1 else args
        self._update(context, with_v=True)
        p_P = np.asarray(p_WoP_W, dtype=float).reshape(3)
        L = np.zeros(6)
        for i in self._bodies_of(model_instances):
            body = self._bodies[i]
            m = body.default_mass()
            R, p_WBo, V = self._R_WB[i], self._p_WB[i], self._V_WB[i]
            c_W = R @ body.default_com()
            I_W = R @ body.default_rotational_inertia().CopyToFullMatrix3() @ R.T
            lin = m * (V[3:] + np.cross(V[:3], c_W))
            ang = I_W @ V[:3] + m * np.cross(c_W, V[3:])
            L += np.r_[ang + np.cross(p_WBo - p_P, lin), lin]
        return SpatialMomentum(L)

    def __repr__(self) -> str:
        state = f"nq={self._nq}, nv={self._nv}" if self._finalized else "not finalized"
        return f"<MultibodyPlant bodies={len(self._bodies)} joints={len(self._joints)} {state}>"
