"""Force elements with Drake's names and force laws: LinearSpringDamper, RevoluteSpring, PrismaticSpring,
DoorHinge (with DoorHingeConfig) and LinearBushingRollPitchYaw.

Each element adds its forces in MultibodyPlant.CalcForceElementsContribution (so in CalcForwardDynamics
and the simulated plant, drivers.sim) and its energy terms in CalcPotentialEnergy, CalcConservativePower
and CalcNonConservativePower, as Drake does: ``CalcAndAddForceContribution(context, forces)``,
``CalcPotentialEnergy(context)``, ``CalcConservativePower(context)`` (= -dV/dt) and
``CalcNonConservativePower(context)``. Parameters Drake keeps in the context (a RevoluteSpring's
stiffness and nominal angle, a bushing's constants) are the element's defaults in a new context and
changed per context with the Set* methods.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .errors import GimbalLockError
from .joints import PrismaticJoint, RevoluteJoint
from .spatial_math import Quaternion, RotationMatrix, SpatialForce, matrix_to_rpy
from .tree import ForceElement, Frame, RigidBody

__all__ = ["DoorHinge", "DoorHingeConfig", "LinearBushingRollPitchYaw", "LinearSpringDamper", "PrismaticSpring",
           "RevoluteSpring"]


def _vec3(value, what: str) -> np.ndarray:
    v = np.array(value, dtype=float).reshape(-1)
    if v.shape != (3,):
        raise ValueError(f"{what} must have 3 elements, got {np.shape(value)}")
    return v


def _nonnegative(value: float, what: str) -> float:
    if not value >= 0:
        raise ValueError(f"{what} must be non-negative, got {value}")
    return float(value)


def _check_element_plant(element, owner, what: str, plant) -> None:
    if owner._plant is not plant:
        raise RuntimeError(f"{type(element).__name__}: the {what} '{owner.name()}' does not belong to this plant")


class _ParameterizedElement(ForceElement):
    """A force element with parameters the context holds (Drake's numeric parameters): the defaults in a
    new context, per context after Set*."""

    def _get(self, context, name: str):
        self.GetParentPlant()._check_context(context)
        return context._parameters.get((self, name), self._defaults[name]).copy()

    def _set(self, context, name: str, value) -> None:
        self.GetParentPlant()._check_context(context)
        context._parameters[(self, name)] = np.array(value, dtype=float).reshape(np.shape(self._defaults[name]))


class LinearSpringDamper(ForceElement):
    """A spring-damper between point P of body A and point Q of body B: with ℓ = ‖p_WQ − p_WP‖ and
    r̂ = (p_WQ − p_WP)/ℓ, the force on A at P is f_AP = (k (ℓ − ℓ₀) + c ℓ̇) r̂ and on B at Q is −f_AP;
    V = ½ k (ℓ − ℓ₀)². ℓ is Drake's soft norm √(‖p_PQ‖² + (ε ℓ₀)²) (ε the machine epsilon), and a
    spring shorter than ε ℓ₀ raises."""

    def __init__(self, bodyA: RigidBody, p_AP, bodyB: RigidBody, p_BQ, free_length: float, stiffness: float,
                 damping: float):
        if not free_length > 0:
            raise ValueError(f"LinearSpringDamper: free_length must be positive, got {free_length}")
        super().__init__(bodyA.model_instance())
        self._A, self._B = bodyA, bodyB
        self._p_AP, self._p_BQ = _vec3(p_AP, "p_AP"), _vec3(p_BQ, "p_BQ")
        self._free_length = float(free_length)
        self._stiffness = _nonnegative(stiffness, "LinearSpringDamper: stiffness")
        self._damping = _nonnegative(damping, "LinearSpringDamper: damping")

    def _check_plant(self, plant) -> None:
        _check_element_plant(self, self._A, "body", plant)
        _check_element_plant(self, self._B, "body", plant)

    def bodyA(self) -> RigidBody:
        return self._A

    def bodyB(self) -> RigidBody:
        return self._B

    def p_AP(self) -> np.ndarray:
        return self._p_AP.copy()

    def p_BQ(self) -> np.ndarray:
        return self._p_BQ.copy()

    def free_length(self) -> float:
        return self._free_length

    def stiffness(self) -> float:
        return self._stiffness

    def damping(self) -> float:
        return self._damping

    def _kinematics(self, context, with_rate: bool):
        """(p_AoP_W, p_BoQ_W, ℓ, r̂, ℓ̇ or None)."""
        plant = self.GetParentPlant()
        X_WA, X_WB = plant.EvalBodyPoseInWorld(context, self._A), plant.EvalBodyPoseInWorld(context, self._B)
        p_AoP_W, p_BoQ_W = X_WA.rotation() @ self._p_AP, X_WB.rotation() @ self._p_BQ
        p_PQ_W = X_WB.translation() + p_BoQ_W - X_WA.translation() - p_AoP_W
        eps2 = (np.finfo(float).eps * self._free_length) ** 2
        x2 = float(p_PQ_W @ p_PQ_W)
        if x2 < eps2:
            raise RuntimeError("LinearSpringDamper: the spring's length became nearly zero (a non-physical "
                               "configuration for a finite free-length spring); revisit the model")
        length = np.sqrt(x2 + eps2)
        r = p_PQ_W / length
        if not with_rate:
            return p_AoP_W, p_BoQ_W, length, r, None
        v_WP = plant.EvalBodySpatialVelocityInWorld(context, self._A).Shift(p_AoP_W).translational()
        v_WQ = plant.EvalBodySpatialVelocityInWorld(context, self._B).Shift(p_BoQ_W).translational()
        return p_AoP_W, p_BoQ_W, length, r, float((v_WQ - v_WP) @ r)

    def CalcAndAddForceContribution(self, context, forces) -> None:
        """Adds f_AP at P to A and −f_AP at Q to B, as F_Ao_W = [p_AoP_W × f_AP; f_AP] and F_Bo_W."""
        p_AoP_W, p_BoQ_W, length, r, rate = self._kinematics(context, True)
        f = (self._stiffness * (length - self._free_length) + self._damping * rate) * r
        forces._body_forces[int(self._A.index())] += np.r_[np.cross(p_AoP_W, f), f]
        forces._body_forces[int(self._B.index())] -= np.r_[np.cross(p_BoQ_W, f), f]

    def CalcPotentialEnergy(self, context) -> float:
        """V = ½ k (ℓ − ℓ₀)²."""
        length = self._kinematics(context, False)[2]
        return 0.5 * self._stiffness * (length - self._free_length) ** 2

    def CalcConservativePower(self, context) -> float:
        """Pc = −dV/dt = −k (ℓ − ℓ₀) ℓ̇."""
        _, _, length, _, rate = self._kinematics(context, True)
        return -self._stiffness * (length - self._free_length) * rate

    def CalcNonConservativePower(self, context) -> float:
        """Pnc = −c ℓ̇²."""
        rate = self._kinematics(context, True)[4]
        return -self._damping * rate * rate


class _JointSpring(ForceElement):
    """A force element acting on one single-dof joint of a plant."""

    _joint_type: type

    def __init__(self, joint):
        if not isinstance(joint, self._joint_type):
            raise TypeError(f"{type(self).__name__} takes a {self._joint_type.__name__}, got {type(joint).__name__}")
        super().__init__(joint.model_instance())
        self._joint = joint

    def _check_plant(self, plant) -> None:
        _check_element_plant(self, self._joint, "joint", plant)

    def joint(self):
        return self._joint

    def _state(self, context) -> tuple[float, float]:
        """(q, v) of the joint."""
        self.GetParentPlant()._check_context(context)
        j = self._joint
        return float(context._q[j.position_start()]), float(context._v[j.velocity_start()])

    def CalcAndAddForceContribution(self, context, forces) -> None:
        """Adds the joint's generalized force τ(q, v)."""
        forces._tau[self._joint.velocity_start()] += self._torque(context)

    def CalcConservativePower(self, context) -> float:
        """Pc = τ_spring(q) q̇."""
        return self._spring_torque(context) * self._state(context)[1]


class RevoluteSpring(_JointSpring, _ParameterizedElement):
    """A torsional spring on a revolute joint: τ = k (θ₀ − θ), V = ½ k (θ₀ − θ)²; k and θ₀ are context
    parameters (defaults from the constructor)."""

    _joint_type = RevoluteJoint

    def __init__(self, joint: RevoluteJoint, nominal_angle: float, stiffness: float):
        super().__init__(joint)
        self._defaults = {"nominal_angle": np.array(float(nominal_angle)),
                          "stiffness": np.array(_nonnegative(stiffness, "RevoluteSpring: stiffness"))}

    def default_nominal_angle(self) -> float:
        return float(self._defaults["nominal_angle"])

    def default_stiffness(self) -> float:
        return float(self._defaults["stiffness"])

    def GetNominalAngle(self, context) -> float:
        return float(self._get(context, "nominal_angle"))

    def SetNominalAngle(self, context, nominal_angle: float) -> None:
        self._set(context, "nominal_angle", nominal_angle)

    def GetStiffness(self, context) -> float:
        return float(self._get(context, "stiffness"))

    def SetStiffness(self, context, stiffness: float) -> None:
        self._set(context, "stiffness", _nonnegative(stiffness, "RevoluteSpring: stiffness"))

    def _spring_torque(self, context) -> float:
        return self.GetStiffness(context) * (self.GetNominalAngle(context) - self._state(context)[0])

    _torque = _spring_torque

    def CalcPotentialEnergy(self, context) -> float:
        return 0.5 * self.GetStiffness(context) * (self.GetNominalAngle(context) - self._state(context)[0]) ** 2

    def CalcNonConservativePower(self, context) -> float:
        return 0.0


class PrismaticSpring(_JointSpring):
    """A linear spring on a prismatic joint: f = k (x₀ − x), V = ½ k (x₀ − x)²."""

    _joint_type = PrismaticJoint

    def __init__(self, joint: PrismaticJoint, nominal_position: float, stiffness: float):
        super().__init__(joint)
        self._nominal_position = float(nominal_position)
        self._stiffness = _nonnegative(stiffness, "PrismaticSpring: stiffness")

    def nominal_position(self) -> float:
        return self._nominal_position

    def stiffness(self) -> float:
        return self._stiffness

    def _spring_torque(self, context) -> float:
        return self._stiffness * (self._nominal_position - self._state(context)[0])

    _torque = _spring_torque

    def CalcPotentialEnergy(self, context) -> float:
        return 0.5 * self._stiffness * (self._nominal_position - self._state(context)[0]) ** 2

    def CalcNonConservativePower(self, context) -> float:
        return 0.0


@dataclasses.dataclass
class DoorHingeConfig:
    """DoorHinge's parameters (Drake's defaults: a dishwasher door). Angles in rad, torques in N·m."""

    spring_zero_angle_rad: float = -1.5     # qs₀: the spring's zero angle, outward from closed
    spring_constant: float = 1.5            # k_ts (N·m/rad)
    dynamic_friction_torque: float = 3.0    # k_df
    static_friction_torque: float = 2.0     # k_sf
    viscous_friction: float = 1.0           # k_vf (N·m·s/rad)
    catch_width: float = 0.02               # qc₀
    catch_torque: float = 15.0              # k_c
    motion_threshold: float = 0.001         # k_q̇₀ (rad/s): the friction's smoothing speed


def _curves(t: float, x: float) -> tuple[float, float, float]:
    """s = tanh(x/t), singlet = 1 − s², doublet = 2 s (1 − s²)."""
    if not t > 0:
        raise ValueError(f"DoorHinge: the curve width must be positive, got {t}")
    s = np.tanh(x / t)
    return s, 1.0 - s * s, 2.0 * s * (1.0 - s * s)


class DoorHinge(_JointSpring):
    """Drake's empirical door hinge on a revolute joint, closed at q = 0 and opening toward q > 0:
    τ = τ_ts + τ_c + τ_df + τ_sf + τ_vf with τ_ts = −k_ts (q − qs₀), τ_c = k_c doublet(qc₀/2, q − qc₀/2),
    τ_df = −k_df s(k_q̇₀, q̇), τ_sf = −k_sf doublet(k_q̇₀, q̇), τ_vf = −k_vf q̇ (s = tanh(x/t),
    doublet = 2 s (1 − s²)). With motion_threshold = 0 the frictional torque is +k_vf q̇, as in Drake."""

    _joint_type = RevoluteJoint

    def __init__(self, joint: RevoluteJoint, config: DoorHingeConfig):
        super().__init__(joint)
        for name in ("spring_constant", "dynamic_friction_torque", "static_friction_torque", "viscous_friction",
                     "catch_width", "motion_threshold"):
            _nonnegative(getattr(config, name), f"DoorHinge: config.{name}")
        self._config = dataclasses.replace(config)

    def config(self) -> DoorHingeConfig:
        return self._config

    def CalcHingeFrictionalTorque(self, angular_rate: float) -> float:
        c = self._config
        if c.motion_threshold == 0:
            return c.viscous_friction * angular_rate
        s, _, doublet = _curves(c.motion_threshold, angular_rate)
        return -(c.dynamic_friction_torque * s + c.static_friction_torque * doublet + c.viscous_friction * angular_rate)

    def CalcHingeSpringTorque(self, angle: float) -> float:
        c = self._config
        spring = -c.spring_constant * (angle - c.spring_zero_angle_rad)
        if c.catch_width == 0:
            return spring
        center = c.catch_width / 2
        return c.catch_torque * _curves(center, angle - center)[2] + spring

    def CalcHingeTorque(self, angle: float, angular_rate: float) -> float:
        return self.CalcHingeFrictionalTorque(angular_rate) + self.CalcHingeSpringTorque(angle)

    def _spring_torque(self, context) -> float:
        return self.CalcHingeSpringTorque(self._state(context)[0])

    def _torque(self, context) -> float:
        return self.CalcHingeTorque(*self._state(context))

    def CalcPotentialEnergy(self, context) -> float:
        """V(q) = ½ k_ts ((q − qs₀)² − qs₀²) + k_c (qc₀/2) (singlet(q − qc₀/2) − singlet(−qc₀/2)), zero at
        q = 0: the integral of −(τ_ts + τ_c)."""
        c, q = self._config, self._state(context)[0]
        energy = 0.5 * c.spring_constant * ((q - c.spring_zero_angle_rad) ** 2 - c.spring_zero_angle_rad ** 2)
        if c.catch_width != 0:
            center = c.catch_width / 2
            energy += c.catch_torque * center * (_curves(center, q - center)[1] - _curves(center, -center)[1])
        return energy

    def CalcNonConservativePower(self, context) -> float:
        """q̇ τ_friction(q̇)."""
        rate = self._state(context)[1]
        return rate * self.CalcHingeFrictionalTorque(rate)


class LinearBushingRollPitchYaw(_ParameterizedElement):
    """Drake's quasi-symmetric bushing between frame A (on link L0) and frame C (on link L1). With
    [q₀ q₁ q₂] the roll-pitch-yaw angles of R_AC, B the frame halfway between A and C (R_AB is R_AC's
    half rotation, Bo halfway between Ao and Co) and p_AoCo = [x y z]_B:
    gimbal torques τ = −(k₀₁₂ ∘ q + d₀₁₂ ∘ q̇), torque on C t_Cp_A = Nᵀ τ (q̇ = N w_AC_A),
    force on C f_C_B = −(kxyz ∘ [x y z] + dxyz ∘ [ẋ ẏ ż]) at Bo; A gets −t and −f at Bo.
    The four constant triples are context parameters. As in Drake, the energy and power methods raise
    (not implemented), and a pitch within Drake's gimbal-lock tolerance raises GimbalLockError."""

    _COS_PITCH_TOLERANCE = 0.008        # Drake's RollPitchYaw gimbal-lock tolerance on |cos(pitch)|

    def __init__(self, frameA: Frame, frameC: Frame, torque_stiffness_constants, torque_damping_constants,
                 force_stiffness_constants, force_damping_constants):
        super().__init__(frameC.model_instance())
        self._frameA, self._frameC = frameA, frameC
        self._defaults = {}
        for name, value in (("torque_stiffness", torque_stiffness_constants),
                            ("torque_damping", torque_damping_constants),
                            ("force_stiffness", force_stiffness_constants),
                            ("force_damping", force_damping_constants)):
            v = _vec3(value, f"LinearBushingRollPitchYaw: {name}_constants")
            if not np.all(v >= 0):
                raise ValueError(f"LinearBushingRollPitchYaw: {name}_constants must be non-negative, got {v}")
            self._defaults[name] = v

    def _check_plant(self, plant) -> None:
        _check_element_plant(self, self._frameA, "frame", plant)
        _check_element_plant(self, self._frameC, "frame", plant)

    def link0(self) -> RigidBody:
        return self._frameA.body()

    def link1(self) -> RigidBody:
        return self._frameC.body()

    def frameA(self) -> Frame:
        return self._frameA

    def frameC(self) -> Frame:
        return self._frameC

    def torque_stiffness_constants(self) -> np.ndarray:
        return self._defaults["torque_stiffness"].copy()

    def torque_damping_constants(self) -> np.ndarray:
        return self._defaults["torque_damping"].copy()

    def force_stiffness_constants(self) -> np.ndarray:
        return self._defaults["force_stiffness"].copy()

    def force_damping_constants(self) -> np.ndarray:
        return self._defaults["force_damping"].copy()

    def GetTorqueStiffnessConstants(self, context) -> np.ndarray:
        return self._get(context, "torque_stiffness")

    def GetTorqueDampingConstants(self, context) -> np.ndarray:
        return self._get(context, "torque_damping")

    def GetForceStiffnessConstants(self, context) -> np.ndarray:
        return self._get(context, "force_stiffness")

    def GetForceDampingConstants(self, context) -> np.ndarray:
        return self._get(context, "force_damping")

    def SetTorqueStiffnessConstants(self, context, torque_stiffness) -> None:
        self._set(context, "torque_stiffness", torque_stiffness)

    def SetTorqueDampingConstants(self, context, torque_damping) -> None:
        self._set(context, "torque_damping", torque_damping)

    def SetForceStiffnessConstants(self, context, force_stiffness) -> None:
        self._set(context, "force_stiffness", force_stiffness)

    def SetForceDampingConstants(self, context, force_damping) -> None:
        self._set(context, "force_damping", force_damping)

    @staticmethod
    def half_rotation(R_AC: np.ndarray) -> np.ndarray:
        """R_AB: the rotation by half of R_AC's angle about its axis, from q_AC = [w, v] (w >= 0):
        q_AB = [e₀, v/(2 e₀)] with e₀ = √((w + 1)/2)."""
        q_AC = RotationMatrix(R_AC).ToQuaternion().wxyz()
        if q_AC[0] < 0:
            q_AC = -q_AC
        e0 = np.sqrt(0.5 * (q_AC[0] + 1.0))
        return Quaternion(e0, *(q_AC[1:] / (2.0 * e0))).rotation()

    def _rpy_rate_matrix(self, rpy: np.ndarray) -> np.ndarray:
        """N with q̇ = N w_AC_A; GimbalLockError near pitch = ±π/2."""
        r, p, y = rpy
        cp = np.cos(p)
        if abs(cp) < self._COS_PITCH_TOLERANCE:
            raise GimbalLockError(
                f"LinearBushingRollPitchYaw: pitch angle p = {np.degrees(p):g} degrees is within "
                f"{np.degrees(np.pi / 2 - np.arccos(self._COS_PITCH_TOLERANCE)):g} degrees of gimbal lock "
                "(p ≈ ±π/2), where the bushing's roll-pitch-yaw rates are singular; align the bushing's frames "
                "or choose stiffness and damping that keep the pitch away from ±π/2")
        sy, cy, tp = np.sin(y), np.cos(y), np.tan(p)
        return np.array([[cy / cp, sy / cp, 0.0], [-sy, cy, 0.0], [cy * tp, sy * tp, 1.0]])

    def _wrench_on_A(self, context):
        """(F_Ao_A, X_AC): the bushing's spatial force on frame A about Ao, in A."""
        X_AC = self._frameC.CalcPose(context, self._frameA)
        V_AC_A = self._frameC.CalcSpatialVelocity(context, self._frameA, self._frameA)
        R_AC, p_AoCo_A = X_AC.rotation().matrix(), X_AC.translation()
        w_AC_A, v_ACo_A = V_AC_A.rotational(), V_AC_A.translational()
        rpy = matrix_to_rpy(R_AC)
        N = self._rpy_rate_matrix(rpy)
        k012, d012 = self.GetTorqueStiffnessConstants(context), self.GetTorqueDampingConstants(context)
        tau = -(k012 * rpy + d012 * (N @ w_AC_A))
        R_AB = self.half_rotation(R_AC)
        xyz = R_AB.T @ p_AoCo_A
        xyz_dt = R_AB.T @ (v_ACo_A - np.cross(0.5 * w_AC_A, p_AoCo_A))     # the derivative in B, in B
        f_C_B = -(self.GetForceStiffnessConstants(context) * xyz + self.GetForceDampingConstants(context) * xyz_dt)
        t_Ap_A, f_Ap_A = -(N.T @ tau), -(R_AB @ f_C_B)
        return SpatialForce(t_Ap_A, f_Ap_A).Shift(-0.5 * p_AoCo_A), X_AC

    def CalcBushingSpatialForceOnFrameA(self, context) -> SpatialForce:
        """F_A_A: the bushing's spatial force on frame A, about Ao, expressed in A."""
        return self._wrench_on_A(context)[0]

    def CalcBushingSpatialForceOnFrameC(self, context) -> SpatialForce:
        """F_C_C: the bushing's spatial force on frame C, about Co, expressed in C."""
        F_Ao_A, X_AC = self._wrench_on_A(context)
        F_Co_A = (-F_Ao_A).Shift(X_AC.translation())
        R_CA = X_AC.rotation().matrix().T
        return SpatialForce(R_CA @ F_Co_A.rotational(), R_CA @ F_Co_A.translational())

    def CalcAndAddForceContribution(self, context, forces) -> None:
        """Adds the wrench on A to link L0 and its opposite (same line of action) to link L1."""
        plant = self.GetParentPlant()
        F_Ao_A = self._wrench_on_A(context)[0]
        R_WA = self._frameA.CalcRotationMatrixInWorld(context).matrix()
        F_Ao_W = SpatialForce(R_WA @ F_Ao_A.rotational(), R_WA @ F_Ao_A.translational())
        p_WAo = self._frameA.CalcPoseInWorld(context).translation()
        p_WL0 = plant.EvalBodyPoseInWorld(context, self.link0()).translation()
        p_WL1 = plant.EvalBodyPoseInWorld(context, self.link1()).translation()
        F_L0_W = F_Ao_W.Shift(p_WL0 - p_WAo)
        forces._body_forces[int(self.link0().index())] += F_L0_W.get_coeffs()
        forces._body_forces[int(self.link1().index())] -= F_L0_W.Shift(p_WL1 - p_WL0).get_coeffs()

    def _not_implemented(self, method: str):
        raise RuntimeError(f"LinearBushingRollPitchYaw::{method}() is not implemented, as in Drake (its issues "
                           "#12982 and #12752): the bushing's energy is not defined here")

    def CalcPotentialEnergy(self, context) -> float:
        self._not_implemented("CalcPotentialEnergy")

    def CalcConservativePower(self, context) -> float:
        self._not_implemented("CalcConservativePower")

    def CalcNonConservativePower(self, context) -> float:
        self._not_implemented("CalcNonConservativePower")
