"""MultibodyPlant's state access: default positions, the context's q and v (whole plant and per model
instance, from and into arrays), free-body poses, limits, the actuation matrix and the maps between q̇
and v. A mixin of MultibodyPlant (plant.py); pydrake's names and semantics.
"""
from __future__ import annotations

import numpy as np

from .context import Context
from .joints import QUATERNION_FLOATING, Joint
from .spatial_math import RigidTransform, SpatialVelocity
from .tree import RigidBody


class PlantStateAccess:
    """The state, limits and kinematic maps of MultibodyPlant (which provides the model it reads)."""

    # ------------------------------------------------------------------------------------------
    # State
    # ------------------------------------------------------------------------------------------
    def GetDefaultPositions(self) -> np.ndarray:
        self._throw_if_not_finalized("GetDefaultPositions")
        q = np.zeros(self._nq)
        for j in self._joints:
            q[j._q_start:j._q_start + j.num_positions()] = j.default_positions()
        return q

    def SetDefaultPositions(self, *args, **kwargs) -> None:
        """SetDefaultPositions(q) or SetDefaultPositions(model_instance, q_instance), positional or by
        Drake's keywords; after Finalize, with finite values."""
        self._throw_if_not_finalized("SetDefaultPositions")
        given = dict(zip(("model_instance", "q_instance") if len(args) == 2 or "q_instance" in kwargs
                         else ("q",), args)) | kwargs
        if set(given) == {"q"}:
            q = self._vector(given["q"], self._nq, "q")
            joints = self._joints
        elif set(given) == {"model_instance", "q_instance"}:
            idx = self._q_index(given["model_instance"])
            q = self.GetDefaultPositions()
            q[idx] = self._vector(given["q_instance"], idx.size, "q of the model instance")
            joints = self._instance_filter(self._joints, given["model_instance"])
        else:
            raise TypeError(f"SetDefaultPositions(q) or (model_instance, q_instance), got {sorted(given)}")
        if not np.all(np.isfinite(q)):
            raise ValueError("SetDefaultPositions(): the positions must be finite")
        for j in joints:
            j.set_default_positions(q[j._q_start:j._q_start + j.num_positions()])

    def CreateDefaultContext(self) -> Context:
        if not self._finalized:
            raise RuntimeError("MultibodyPlant cannot SetDefaultParameters or CreateDefaultContext until after "
                               "MultibodyPlant::Finalize() has been called.")
        return Context(self, self.GetDefaultPositions(), np.zeros(self._nv))

    def SetDefaultState(self, context: Context, state=None) -> None:
        context._x[:] = np.r_[self.GetDefaultPositions(), np.zeros(self._nv)]

    def _check_context(self, context: Context) -> None:
        if not isinstance(context, Context) or context._plant is not self:
            raise RuntimeError("the context was not created by this plant (use plant.CreateDefaultContext())")

    @staticmethod
    def _vector(value, n: int, what: str) -> np.ndarray:
        a = np.asarray(value, dtype=float).reshape(-1)
        if a.shape != (n,):
            raise ValueError(f"{what} has {a.shape[0]} elements; expected {n}")
        return a

    def _q_index(self, model_instance) -> np.ndarray:
        return np.array([i for j in self._instance_filter(self._joints_in_v_order(), model_instance)
                         for i in range(j._q_start, j._q_start + j.num_positions())], dtype=int)

    def _v_index(self, model_instance) -> np.ndarray:
        return np.array([i for j in self._instance_filter(self._joints_in_v_order(), model_instance)
                         for i in range(j._v_start, j._v_start + j.num_velocities())], dtype=int)

    def GetPositions(self, context: Context, model_instance=None) -> np.ndarray:
        self._check_context(context)
        return context._q.copy() if model_instance is None else context._q[self._q_index(model_instance)]

    def GetVelocities(self, context: Context, model_instance=None) -> np.ndarray:
        self._check_context(context)
        return context._v.copy() if model_instance is None else context._v[self._v_index(model_instance)]

    def GetPositionsAndVelocities(self, context: Context, model_instance=None) -> np.ndarray:
        return np.r_[self.GetPositions(context, model_instance), self.GetVelocities(context, model_instance)]

    def GetMutablePositions(self, context: Context) -> np.ndarray:
        self._check_context(context)
        return context.get_mutable_positions()

    def GetMutableVelocities(self, context: Context) -> np.ndarray:
        self._check_context(context)
        return context.get_mutable_velocities()

    def GetMutablePositionsAndVelocities(self, context: Context) -> np.ndarray:
        self._check_context(context)
        return context.get_mutable_state_vector()

    def SetPositions(self, context: Context, *args) -> None:
        """SetPositions(context, q) or SetPositions(context, model_instance, q_instance)."""
        self._check_context(context)
        if len(args) == 1:
            context._q[:] = self._vector(args[0], self._nq, "q")
        else:
            idx = self._q_index(args[0])
            context._q[idx] = self._vector(args[1], idx.size, "q of the model instance")

    def SetVelocities(self, context: Context, *args) -> None:
        """SetVelocities(context, v) or SetVelocities(context, model_instance, v_instance)."""
        self._check_context(context)
        if len(args) == 1:
            context._v[:] = self._vector(args[0], self._nv, "v")
        else:
            idx = self._v_index(args[0])
            context._v[idx] = self._vector(args[1], idx.size, "v of the model instance")

    def SetPositionsAndVelocities(self, context: Context, *args) -> None:
        self._check_context(context)
        if len(args) == 1:
            context._x[:] = self._vector(args[0], self._nq + self._nv, "[q; v]")
        else:
            nqi = self._q_index(args[0]).size
            x = np.asarray(args[1], dtype=float).reshape(-1)
            self.SetPositions(context, args[0], x[:nqi])
            self.SetVelocities(context, args[0], x[nqi:])

    def GetPositionsFromArray(self, model_instance, q) -> np.ndarray:
        return self._vector(q, self._nq, "q")[self._q_index(model_instance)]

    def GetVelocitiesFromArray(self, model_instance, v) -> np.ndarray:
        return self._vector(v, self._nv, "v")[self._v_index(model_instance)]

    def SetPositionsInArray(self, model_instance, q_instance, q) -> None:
        idx = self._q_index(model_instance)
        q[idx] = self._vector(q_instance, idx.size, "q of the model instance")

    def SetVelocitiesInArray(self, model_instance, v_instance, v) -> None:
        idx = self._v_index(model_instance)
        v[idx] = self._vector(v_instance, idx.size, "v of the model instance")

    def GetActuationFromArray(self, model_instance, u) -> np.ndarray:
        u = self._vector(u, len(self._actuators), "u")
        return u[[a.input_start() for a in self._instance_filter(self._actuators, model_instance)]]

    def SetActuationInArray(self, model_instance, u_instance, u) -> None:
        idx = [a.input_start() for a in self._instance_filter(self._actuators, model_instance)]
        u[idx] = self._vector(u_instance, len(idx), "u of the model instance")

    def SetFreeBodyPose(self, context: Context, body: RigidBody, X_WB: RigidTransform) -> None:
        j = self._free_joint(body, "SetFreeBodyPose")
        j.SetPose(context, X_WB)

    def GetFreeBodyPose(self, context: Context, body: RigidBody) -> RigidTransform:
        return self._free_joint(body, "GetFreeBodyPose").GetPose(context)

    def SetFreeBodySpatialVelocity(self, body: RigidBody, V_WB: SpatialVelocity, context: Context) -> None:
        j = self._free_joint(body, "SetFreeBodySpatialVelocity")
        j.SetVelocities(context, V_WB.get_coeffs())

    def _free_joint(self, body: RigidBody, method: str):
        self._throw_if_not_finalized(method)
        j = self._inboard.get(int(body.index()))
        if j is None or j._type_code != QUATERNION_FLOATING or not j.parent_body().is_world_body():
            raise RuntimeError(f"{method}(): body '{body.name()}' is not a free body")
        return j

    # ------------------------------------------------------------------------------------------
    # Limits and maps
    # ------------------------------------------------------------------------------------------
    def _stack(self, method: str, in_q: bool, getter) -> np.ndarray:
        """Per-joint vectors stacked in q order (in_q) or v order."""
        self._throw_if_not_finalized(method)
        out = np.empty(self._nq if in_q else self._nv)
        for j in self._joints:
            start, count = (j._q_start, j.num_positions()) if in_q else (j._v_start, j.num_velocities())
            out[start:start + count] = getter(j)
        return out

    def GetPositionLowerLimits(self) -> np.ndarray:
        return self._stack("GetPositionLowerLimits", True, Joint.position_lower_limits)

    def GetPositionUpperLimits(self) -> np.ndarray:
        return self._stack("GetPositionUpperLimits", True, Joint.position_upper_limits)

    def GetVelocityLowerLimits(self) -> np.ndarray:
        return self._stack("GetVelocityLowerLimits", False, Joint.velocity_lower_limits)

    def GetVelocityUpperLimits(self) -> np.ndarray:
        return self._stack("GetVelocityUpperLimits", False, Joint.velocity_upper_limits)

    def GetAccelerationLowerLimits(self) -> np.ndarray:
        return self._stack("GetAccelerationLowerLimits", False, Joint.acceleration_lower_limits)

    def GetAccelerationUpperLimits(self) -> np.ndarray:
        return self._stack("GetAccelerationUpperLimits", False, Joint.acceleration_upper_limits)

    def GetEffortLowerLimits(self) -> np.ndarray:
        return -self.GetEffortUpperLimits()

    def GetEffortUpperLimits(self) -> np.ndarray:
        self._throw_if_not_finalized("GetEffortUpperLimits")
        return np.array([a.effort_limit() for a in self._actuators])

    def GetDampingVector(self) -> np.ndarray:
        """Joint damping coefficients d (nv), so that the damping force is -d ∘ v."""
        self._throw_if_not_finalized("GetDampingVector")
        return self._damping.copy()

    def _context_damping(self, context: Context) -> np.ndarray:
        """d (nv) of this context: each joint's GetDampingVector(context)."""
        d = self._damping
        for (element, name), value in context._parameters.items():
            if name == "damping" and isinstance(element, Joint):
                d = d.copy() if d is self._damping else d
                d[element._v_start:element._v_start + value.shape[0]] = value
        return d

    def _context_reflected_inertia_change(self, context: Context) -> np.ndarray | None:
        """Per velocity, ρ² I_r of this context's actuator parameters minus the compiled defaults; None
        when the context sets none."""
        changed = {element for (element, name) in context._parameters if name in ("rotor_inertia", "gear_ratio")}
        if not changed:
            return None
        delta = np.zeros(self._nv)
        for a in changed:
            delta[a.joint()._v_start] += a.gear_ratio(context) ** 2 * a.rotor_inertia(context) \
                - a.default_reflected_inertia()
        return delta

    def MakeActuationMatrix(self) -> np.ndarray:
        """B (nv x nu) with τ_actuation = B u."""
        B = np.zeros((self.num_velocities(), len(self._actuators)))
        for a in self._actuators:
            B[a.joint()._v_start, a.input_start()] = 1.0
        return B

    def MakeActuationMatrixPseudoinverse(self):
        """B⁺ (nu x nv, scipy.sparse.csc_matrix): B is a selection matrix (each actuator drives one dof),
        so B⁺ = Bᵀ, as Drake builds it."""
        from scipy import sparse  # on first use: importing dynamics_cy stays light
        B = self.MakeActuationMatrix()
        return sparse.csc_matrix(B.T)

    def MapVelocityToQDot(self, context: Context, v) -> np.ndarray:
        self._check_context(context)
        return self._tree.map_velocity_to_qdot(context._q.copy(), self._vector(v, self._nv, "v").copy())

    def MakeVelocityToQDotMap(self, context: Context) -> np.ndarray:
        """N(q) (nq x nv) with q̇ = N v."""
        self._check_context(context)
        return np.column_stack([self.MapVelocityToQDot(context, e) for e in np.eye(self._nv)]) \
            if self._nv else np.zeros((self._nq, 0))

    def MakeQDotToVelocityMap(self, context: Context) -> np.ndarray:
        """N⁺(q) (nv x nq) with v = N⁺ q̇."""
        self._check_context(context)
        return self._tree.qdot_to_velocity_map(context._q)

    def MapQDotToVelocity(self, context: Context, qdot) -> np.ndarray:
        return self.MakeQDotToVelocityMap(context) @ self._vector(qdot, self._nq, "qdot")
