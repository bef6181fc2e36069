"""The simulated plant's physics: a fixed-step integrator over dynamics_cy's articulated-body dynamics.

    physics = Physics(plant, SimConfig(integrator="rk4"))
    physics.step(u)                 # one step under actuation u (one entry per actuator), allocation-free
    physics.q, physics.v            # the state (live arrays), physics.time_ns = steps · time_step
    physics.push("iiwa_link_7", F_Bq_W, start_ns, stop_ns)   # an external wrench on the steps in [start, stop)

Forces on the generalized coordinates during a step (all held over the step):

    τ = B clamp(u, ±u_max)∘e − d∘v − τ_f + τ_limits(q, v) + τ_e(q, v) + Σ_B J_Bᵀ F_Bo_W (contact)
        + Σ J_Bqᵀ F_Bq_W (pushes)

with B the actuation matrix, u_max the actuators' effort limits, e the actuator enable mask (a
joint_unresponsive fault clears it), d the joint damping (sim.joint_damping, default the model's),
τ_f,i ∈ fᵢ ∂|vᵢ| the joint Coulomb friction (sim.joint_friction f, default 0: a joint sticks while
the other torques on it stay within ±fᵢ), and one-sided joint-limit springs on the 1-dof joints:
below the lower limit τ = max(0, k (q_lower − q) − c v), above the upper limit
τ = min(0, k (q_upper − q) − c v), and the pushes (sim.pushes, Physics.push) acting at the step's start,
their generalized force taken there, and τ_e the model's force elements (springs, dampers, door hinges,
bushings: drivers.sim._forces, with their default parameters), explicit at each evaluation's (q, v).
Gravity is the model's. v̇ solves M(q) v̇ + C(q, v) v − τ_g(q) = τ (ABA). Semi-implicit Euler:
v* = v + h v̇(q, v) with the contact damping and friction linearly implicit, then the joint damping
and friction fully implicit, M (v⁺ − v*) = −h (D v⁺ + τ_f(v⁺)) (stick-slip solved exactly each step,
as Drake's discrete plant for the damping; Stepper),
q⁺ = q + h N(q) v⁺. RK4: the classical four stages on ẋ = [N(q) v; v̇] with explicit contact forces
whose damping is bounded (docs/sim.md, Contact) and explicit joint damping (Drake's continuous
plant), then the implicit friction as a split. Free-body quaternions
are renormalized after each step. The plant's constraints (coupler, distance, ball, weld) act as Drake's
SAP solver makes them act: one impulse per step on the velocities, before q is updated (Euler; after the
RK4 step, for the next), drivers.sim._constraints and docs/sim.md, Constraints.
"""
from __future__ import annotations

import numpy as np

from drivers.core.schema import ConfigError
from dynamics_cy import ContactResults

from ._forces import ForceElements
from ._physics import Stepper
from .config import SimConfig, per_joint
from .constraints import make_constraints
from .contact import ContactModel

ONE_DOF = ("revolute", "prismatic")


def joint_inertias(plant, q) -> np.ndarray:
    """m_i = 1 / (M(q)⁻¹)_ii: the inertia each velocity sees with every other joint free (nv)."""
    nv = plant.num_velocities()
    M = np.zeros((nv, nv))
    plant.kernels().mass_matrix(np.asarray(q, dtype=float), M)
    return 1.0 / np.diag(np.linalg.inv(M))


class Physics:
    """State and fixed-step integration of `plant` (finalized, continuous) per `config`.

    Automatic joint-limit gains (joint_limits.stiffness/damping left out): k = m/(2h)² and
    c = m/(2h) with m from joint_inertias at the initial state, i.e. a limit contact at a natural
    frequency of 1/(2h) with damping ratio 1/2: stable under both integrators for up to 4× less
    inertia than at the start.
    """

    def __init__(self, plant, config: SimConfig | None = None, path: str = "sim"):
        config = (config or SimConfig()).validate(path)
        if not plant.is_finalized():
            raise ValueError("Physics needs a finalized plant (call plant.Finalize())")
        if config.engine != "hilstack":
            raise ConfigError(f"{path}.engine", f"Physics is the hilstack engine; make_physics builds "
                                                f"{config.engine}'s")
        self.plant, self.config = plant, config
        self.time_step_ns = config.time_step_ns
        nv = plant.num_velocities()
        q0, v0 = initial_state(plant, config, path)
        joints = [plant.get_joint(i) for i in range(plant.num_joints())]
        quaternions = [j.position_start() for j in joints if j.type_name() == "quaternion_floating"]
        actuators = sorted((plant.get_joint_actuator(i) for i in plant.GetJointActuatorIndices()),
                           key=lambda a: a.input_start())
        m = joint_inertias(plant, q0) if nv else np.zeros(0)
        h = config.time_step
        limited = [j for j in joints if j.type_name() in ONE_DOF and config.joint_limits.enabled
                   and (np.isfinite(j.position_lower_limits()[0]) or np.isfinite(j.position_upper_limits()[0]))]
        k = per_joint(config.joint_limits.stiffness, nv, f"{path}.joint_limits.stiffness", m / (2 * h) ** 2)
        c = per_joint(config.joint_limits.damping, nv, f"{path}.joint_limits.damping", m / (2 * h))
        limits = [(j.position_lower_limits()[0], j.position_upper_limits()[0], k[j.velocity_start()],
                   c[j.velocity_start()]) for j in limited]
        self.contact = None
        if config.contact.enabled:
            self.contact = ContactModel(plant, config.contact, h, f"{path}.contact")
        self.constraints = make_constraints(plant, h)
        """The plant's constraints (drivers.sim.constraints.Constraints: impulses, set_active), or None."""
        self.stepper = Stepper(
            plant.kernels(), h, config.integrator == "rk4",
            per_joint(config.joint_damping, nv, f"{path}.joint_damping", plant.GetDampingVector()),
            per_joint(config.joint_friction, nv, f"{path}.joint_friction", np.zeros(nv)),
            plant.GetEffortUpperLimits(),
            [a.joint().velocity_start() for a in actuators],
            [j.position_start() for j in limited], [j.velocity_start() for j in limited],
            limits or np.zeros((0, 4)), quaternions,
            all(j.type_name() in ONE_DOF + ("weld",) for j in joints),
            self.contact.point_contact if self.contact else None,
            [int(plant.get_body(b).body_frame().index()) for b in range(plant.num_bodies())], self.constraints,
            ForceElements(plant, plant.kernels()) if plant.num_force_elements() > 1 else None)
        self.stepper.set_state(q0, v0)
        self.step, self.hold = self.stepper.step, self.stepper.hold
        """step(u): one step under actuation u (num_actuators; None without actuators) and the pushes.
        hold(): one step held still (q kept, v = 0), the pushes in tau_external only (Stepper.hold)."""
        schedule_pushes(self, config, path)
        self.q, self.v = self.stepper.q, self.stepper.v
        self.u_commanded, self.u_applied = self.stepper.u_commanded, self.stepper.u_applied
        """Actuation of the last step: clamped to the effort limits; then masked by actuator_enabled."""
        self.actuator_enabled = self.stepper.actuator_enabled
        self.tau_contact = self.stepper.tau_contact
        """Σ J_Bᵀ F_Bo_W of the contact forces at the start of the last step (nv)."""
        self.tau_external = self.stepper.tau_external
        """tau_contact + Σ J_Bqᵀ F_Bq_W of the pushes of the last step (nv): what the robot reports as external."""

    def push(self, frame: str, F_Bq_W, start_ns: int, stop_ns: int, p_BoBq_B=(0.0, 0.0, 0.0)) -> None:
        """Pushes the spatial force F_Bq_W = [τ; f] (N·m, N, in W) at the point Bq of the frame named `frame`
        (a body's or any frame; p_BoBq_B in m, in B) on the steps that start in [start_ns, stop_ns)
        (Stepper's Pushes). ValueError for an unknown frame, or values not finite or of the wrong size."""
        B, F, p = check_push(self.plant, frame, F_Bq_W, p_BoBq_B)
        h = self.time_step_ns                    # steps k with start <= k h < stop: ceil(start/h) <= k < ceil(stop/h)
        self.stepper.pushes.add(int(B.index()), p, F, -(-start_ns // h), -(-stop_ns // h))

    @property
    def steps(self) -> int:
        return self.stepper.steps

    @property
    def time_ns(self) -> int:
        """Simulated time: steps · time_step, in integer nanoseconds."""
        return self.stepper.steps * self.time_step_ns

    def set_state(self, q, v, steps: int = 0) -> None:
        self.stepper.set_state(np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(v, dtype=float), steps)

    def contact_results(self) -> ContactResults:
        """The contacts of the last step, at its start state (empty without contact)."""
        return self.contact.contact_results() if self.contact else ContactResults()

    def contact_forces(self, bodies, touching: np.ndarray, force: np.ndarray) -> None:
        """Per body index of `bodies`: touched by a contact of the last step, and the net contact force on it (W)."""
        c = self.contact.point_contact if self.contact else None
        body_forces(((c.body_A[i], c.body_B[i], c.f_Bc_W[i]) for i in range(c.num_contacts)) if c else (),
                    bodies, touching, force)


def body_forces(contacts, bodies, touching: np.ndarray, force: np.ndarray) -> None:
    """touching[k]: a contact of `contacts` ((body A, body B, f_Bc_W), f_Bc_W the force on B) involves
    bodies[k]; force[k]: the net contact force on it (f_Bc_W on B, −f_Bc_W on A)."""
    touching[:], force[:] = False, 0.0
    for A, B, f in contacts:
        for k, body in enumerate(bodies):
            if body == A or body == B:
                touching[k] = True
                force[k] += f if body == B else -f


def make_physics(plant, config: SimConfig | None = None, path: str = "sim"):
    """The physics of `plant` per config.engine: Physics (hilstack) or drivers.sim.mujoco_physics.MujocoPhysics
    (mujoco; ConfigError naming {path}.engine when the mujoco package is missing)."""
    config = (config or SimConfig()).validate(path)
    if config.engine == "hilstack":
        return Physics(plant, config, path)
    if not plant.is_finalized():
        raise ValueError("MujocoPhysics needs a finalized plant (call plant.Finalize())")
    try:
        import mujoco  # noqa: F401
    except ImportError:
        raise ConfigError(f"{path}.engine", "mujoco needs the mujoco package: pip install 'hilstack[mujoco]'") from None
    from .mujoco_physics import MujocoPhysics
    return MujocoPhysics(plant, config, path)


def initial_state(plant, config: SimConfig, path: str) -> tuple[np.ndarray, np.ndarray]:
    """(q0, v0) of sim.initial_positions / initial_velocities (default: the model's, zero), the free bodies'
    quaternions normalized; ConfigError naming the key of a wrong size, non-finite value or zero quaternion."""
    q0 = _initial(config.initial_positions, plant.GetDefaultPositions(), f"{path}.initial_positions", "positions")
    v0 = _initial(config.initial_velocities, np.zeros(plant.num_velocities()), f"{path}.initial_velocities",
                  "velocities")
    for j in (plant.get_joint(i) for i in range(plant.num_joints())):
        if j.type_name() == "quaternion_floating":
            s = j.position_start()
            norm = np.linalg.norm(q0[s:s + 4])
            if not norm > 0:
                raise ConfigError(f"{path}.initial_positions", f"the quaternion at q[{s}:{s + 4}] is zero")
            q0[s:s + 4] /= norm
    return q0, v0


def _initial(value, default: np.ndarray, key: str, what: str) -> np.ndarray:
    if value is None:
        return np.array(default, dtype=float)
    x = np.array(value, dtype=float)
    if x.shape != default.shape:
        raise ConfigError(key, f"must have {default.size} entries (the model's {what}), got {len(value)}")
    if not np.all(np.isfinite(x)):
        raise ConfigError(key, "must be finite")
    return x


def check_push(plant, frame: str, F_Bq_W, p_BoBq_B):
    """(the frame B named `frame`, F_Bq_W, p_BoBq_B as float arrays) of a push; ValueError for an unknown
    frame, or values not finite or of the wrong size."""
    if not plant.HasFrameNamed(frame):
        bodies = [plant.get_body(b).name() for b in range(plant.num_bodies())]
        raise ValueError(f"{frame!r} is not a body or frame of the model (bodies: {bodies})")
    try:
        B = plant.GetFrameByName(frame)
    except RuntimeError as e:                # the name is in several model instances
        raise ValueError(str(e)) from None
    F, p = np.array(F_Bq_W, dtype=float), np.array(p_BoBq_B, dtype=float)
    if F.shape != (6,) or not np.all(np.isfinite(F)):
        raise ValueError(f"F_Bq_W must be 6 finite numbers [τ; f], got {F_Bq_W!r}")
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ValueError(f"p_BoBq_B must be 3 finite numbers, got {p_BoBq_B!r}")
    return B, F, p


def schedule_pushes(physics, config: SimConfig, path: str) -> None:
    """physics.push of each of config.pushes; ConfigError naming {path}.pushes[i].body for a bad one."""
    for i, push in enumerate(config.pushes):
        start = round(push.start * 1e9)
        try:
            physics.push(push.body, [*push.torque, *push.force], start, start + round(push.duration * 1e9), push.point)
        except ValueError as e:
            raise ConfigError(f"{path}.pushes[{i}].body", str(e)) from None
