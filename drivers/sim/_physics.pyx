# cython: language_level=3
"""The simulator's fixed-step integrator (Stepper), its scheduled external wrenches (Pushes) and the
joint maps between a robot's protocol joints and the plant's coordinates. Works on arrays preallocated
at construction and allocates nothing per step; the dynamics come from dynamics_cy's kernels
(plant.kernels()) and the contact forces from drivers.sim._contact. Set up from drivers.sim.physics,
which documents the model; docs/sim.md has the equations.
"""
cimport numpy as cnp

from drivers.sim._constraints cimport Constraints
from drivers.sim._contact cimport PointContact
from drivers.sim._forces cimport ForceElements
from dynamics_cy._arrays cimport f64, f64_data, f64_flat, i32_data, owned_f64, owned_i32
from dynamics_cy._linalg cimport cholesky, cholesky_solve
from libc.math cimport fabs, sqrt
from libc.string cimport memcpy, memset

import numpy as np

cnp.import_array()


# ---------------------------------------------------------------------------------------------
# Joint dissipation: implicit viscous damping and Coulomb friction
# ---------------------------------------------------------------------------------------------
cdef int coulomb_solve(const double* A, const double* b, const double* f, double* x, int n,
                       double tol, int max_sweeps) noexcept nogil:
    """x ← argmin ½ xᵀA x − bᵀx + Σ fᵢ|xᵢ| (A SPD, f >= 0) by exact coordinate minimization from the
    given x: xᵢ = S(bᵢ − Σ_{j≠i} Aᵢⱼ xⱼ, fᵢ) / Aᵢᵢ with S(r, t) = sign(r) max(|r| − t, 0). The objective
    is strictly convex, so the sweeps converge to its unique minimizer (Luo & Tseng 1992); stops when
    no coordinate moves more than tol. Returns the sweeps taken."""
    cdef int i, j, sweep
    cdef double r, xi, change
    for sweep in range(1, max_sweeps + 1):
        change = 0.0
        for i in range(n):
            r = b[i]
            for j in range(n):
                if j != i:
                    r -= A[i * n + j] * x[j]
            xi = (r - f[i]) / A[i * n + i] if r > f[i] else ((r + f[i]) / A[i * n + i] if r < -f[i] else 0.0)
            if fabs(xi - x[i]) > change:
                change = fabs(xi - x[i])
            x[i] = xi
        if change <= tol:
            return sweep
    return max_sweeps


# ---------------------------------------------------------------------------------------------
# Pushes: scheduled external wrenches
# ---------------------------------------------------------------------------------------------
cdef inline void add_wrench(const double* X_WB, const double* J, const double* p_BoBq_B, const double* F_Bq_W,
                            double* tau, int nv) noexcept nogil:
    """tau += J_Bqᵀ F_Bq_W for the spatial force F_Bq_W = [τ; f] (in W) at the point Bq fixed in frame B,
    from X_WB (4×4) and J (6×nv) = J_V_WB_W at Bo: F shifted to Bo is F_Bo_W = [τ + p_BoBq_W × f; f],
    p_BoBq_W = R_WB p_BoBq_B, and J_Bqᵀ F_Bq_W = Jᵀ F_Bo_W."""
    cdef double r[3]
    cdef double F[6]
    cdef int i, k
    for i in range(3):
        r[i] = X_WB[4 * i] * p_BoBq_B[0] + X_WB[4 * i + 1] * p_BoBq_B[1] + X_WB[4 * i + 2] * p_BoBq_B[2]
    F[0] = F_Bq_W[0] + r[1] * F_Bq_W[5] - r[2] * F_Bq_W[4]
    F[1] = F_Bq_W[1] + r[2] * F_Bq_W[3] - r[0] * F_Bq_W[5]
    F[2] = F_Bq_W[2] + r[0] * F_Bq_W[4] - r[1] * F_Bq_W[3]
    F[3], F[4], F[5] = F_Bq_W[3], F_Bq_W[4], F_Bq_W[5]
    for k in range(nv):
        for i in range(6):
            tau[k] += J[i * nv + k] * F[i]


cdef class Pushes:
    """External wrenches on frames of the plant, each acting on a range of steps [first, end): the spatial
    force F_Bq_W = [τ; f] (N·m, N, in W) at the point Bq fixed in frame B (p_BoBq_B, m, in B). In a step
    it acts in, its generalized force J_Bqᵀ F_Bq_W (J_Bq = J_V_WBq_W) is taken at the step's start state
    and held over the step, as the actuation is. add() makes each push's pose and Jacobian buffers, so
    apply() allocates nothing. drivers.sim.physics.Physics.push adds them by frame name."""

    cdef object _frame_pose, _jacobian      # the kernels' bound methods
    cdef list _frames, _poses, _jacobians   # per push: its frame index, X_WB (4, 4), J (6, nv)
    cdef object _steps, _wrenches           # per push: [first, end) (int64); [p_BoBq_B; F_Bq_W] (9)
    cdef readonly int count, nv

    def __init__(self, kernels):
        self._frame_pose, self._jacobian, self.nv = kernels.frame_pose, kernels.jacobian, kernels.nv
        self._frames, self._poses, self._jacobians = [], [], []
        self._steps, self._wrenches = np.zeros((0, 2), dtype=np.int64), np.zeros((0, 9))
        self.count = 0

    def add(self, int frame, p_BoBq_B, F_Bq_W, long long first, long long end):
        """A push on the frame of index `frame`, acting in the steps first <= k < end."""
        self._frames.append(frame)
        self._poses.append(np.eye(4))
        self._jacobians.append(np.zeros((6, self.nv)))
        self._steps = np.vstack([self._steps, np.array([[first, end]], dtype=np.int64)])
        self._wrenches = np.vstack([self._wrenches, np.concatenate([owned_f64(p_BoBq_B, (3,)),
                                                                    owned_f64(F_Bq_W, (6,))]).reshape(1, 9)])
        self.count += 1                     # last: a step running in another thread sees a whole push

    cdef int apply(self, long long step, object q, double* tau) except -1:
        """tau += J_Bqᵀ F_Bq_W at q of every push acting in `step`."""
        cdef int i, n = self.count                                      # first: the arrays hold >= n pushes
        cdef object steps = self._steps, wrenches = self._wrenches     # held while the kernels run
        cdef const cnp.int64_t* k = <const cnp.int64_t*>cnp.PyArray_DATA(<cnp.ndarray>steps)
        cdef const double* w = f64_data(wrenches)
        for i in range(n):
            if k[2 * i] <= step < k[2 * i + 1]:
                X = self._poses[i]
                J = self._jacobians[i]
                self._frame_pose(q, self._frames[i], X)
                self._jacobian(q, self._frames[i], J)
                add_wrench(f64_data(X), f64_data(J), w + 9 * i, w + 9 * i + 3, tau, self.nv)
        return 0


# ---------------------------------------------------------------------------------------------
# The integrator
# ---------------------------------------------------------------------------------------------
cdef class Stepper:
    """Advances (q, v) by one fixed step h under actuation u (one entry per actuator).

    Generalized forces: τ = B clamp(u, ±u_max)∘e + τ_applied + τ_limits(q, v) (− d∘v with RK4) + the force
    elements' joint torques, plus the contact forces and the elements' spring-damper and bushing forces as
    body forces (the elements explicit in both integrators, at each evaluation's (q, v)); τ_applied (`tau_applied`) is the `pushes`' J_Bqᵀ F_Bq_W at the step's start,
    held over the step; v̇ from the articulated-body algorithm. Semi-implicit Euler: v* = v + h v̇ with the
    contact springs at (q, v) and the contact damping and friction linearly implicit
    (PointContact.spring/damp); the joint damping d and Coulomb friction f are then fully implicit
    (`_dissipate`): v⁺ = argmin ½ (v⁺ − v*)ᵀ M (v⁺ − v*) + ½ h v⁺ᵀ D v⁺ + h Σ fᵢ |v⁺ᵢ|, i.e.
    M (v⁺ − v*) = −h D v⁺ − h τ_f with τ_f,i ∈ fᵢ ∂|v⁺ᵢ| (stick or slip, exactly), as Drake's discrete
    solvers treat joint damping ((M + hD) v⁺ = M v*); then q⁺ = q + h N(q) v⁺. RK4 on ẋ = [N(q) v; v̇(q, v)] with explicit
    contact forces, their damping capped (PointContact.bound) and the joint damping explicit (as
    Drake's continuous plant), then the implicit friction alone (a first-order split at the new q:
    its Δv on v and, as a ramp over the step, ½ h N(q) Δv on q, so a stuck joint stays exactly put).
    Quaternions are renormalized after
    the step. e is `actuator_enabled` (1 or 0 per actuator). Joint-limit springs act on 1-dof joints
    outside [lower, upper]: τ = k (lower − q) − c v, kept >= 0 (and mirrored at the upper limit).
    """

    # the kernels' bound methods (plant.kernels(): allocation-free, GIL released)
    cdef object _forward_dynamics, _calc_body_poses, _calc_body_velocities, _map_qdot, _calc_jacobian
    cdef object _calc_mass_matrix
    cdef object _frames, _jacobian_rows, _k_qdot_rows
    cdef object _tau, _vdot, _qdot, _q_stage, _v_stage, _body_forces, _body_poses, _body_velocities, _mass
    cdef readonly int nq, nv, nu, nb, num_limits
    cdef readonly double h                  # the time step (s)
    cdef readonly bint rk4
    cdef bint qdot_is_v
    cdef readonly long long steps
    cdef readonly object q, v, u_commanded, u_applied, actuator_enabled, tau_contact, tau_applied, tau_external
    cdef readonly object contact, constraints, elements
    cdef readonly Pushes pushes
    cdef PointContact _contact
    cdef Constraints _constraints
    cdef ForceElements _elements
    cdef dict _arrays                       # the numpy arrays the pointers below point into, by name
    # C views of the state, the actuation and the workspace arrays (named as their numpy arrays)
    cdef double* c_q
    cdef double* c_v
    cdef double* c_u_commanded
    cdef double* c_u_applied
    cdef double* c_enabled                  # actuator_enabled
    cdef double* c_tau_contact
    cdef double* c_tau_applied
    cdef double* c_tau_external             # tau_contact + tau_applied of the last step
    cdef double* c_tau                      # generalized forces of the actuators, the pushes and the limits
    cdef double* c_vdot
    cdef double* c_qdot
    cdef double* c_q_stage                  # an RK4 stage's (q, v); the Euler step's v*
    cdef double* c_v_stage
    cdef double* c_k_qdot                   # the RK4 slopes, 4 rows
    cdef double* c_k_vdot
    cdef double* c_body_forces
    cdef double* c_body_poses
    cdef double* c_body_velocities
    cdef double* c_jacobians
    cdef double* c_mass                     # M(q) (+ h D in _dissipate)
    cdef double* c_dv                       # a velocity change (contact damping; h f in _dissipate)
    cdef double* damping
    cdef double* friction
    cdef double* c_factor                   # the Cholesky factor of M + h D
    cdef double* c_momentum                 # M v
    cdef bint dissipative
    cdef readonly int sweeps
    cdef double* effort
    cdef int* act_v
    cdef int* lim_q
    cdef int* lim_v
    cdef double* lim
    cdef int* quat_q
    cdef int num_quats

    def __init__(self, kernels, double time_step, bint rk4, damping, friction, effort_limits, actuator_dofs,
                 limit_q, limit_v, limits, quaternion_starts, bint qdot_is_v, contact=None, body_frames=None,
                 constraints=None, elements=None):
        """kernels: plant.kernels(); damping d (N·m·s/rad) and Coulomb friction f (N·m) (nv); effort_limits and actuator_dofs (the v index each
        actuator drives) (nu); limit_q, limit_v (q and v index of each limited 1-dof joint) and limits
        (rows [lower, upper, stiffness, damping]); quaternion_starts: q index of each free body's qw;
        qdot_is_v: N(q) = I; contact: a PointContact or None, with body_frames the frame index of each
        body's frame (for the Jacobians that bound the contact damping); constraints: the plant's
        constraints (a drivers.sim._constraints.Constraints) or None; elements: the model's force
        elements (a drivers.sim._forces.ForceElements) or None."""
        self._forward_dynamics, self._map_qdot = kernels.forward_dynamics, kernels.map_velocity_to_qdot
        self._calc_jacobian, self._calc_mass_matrix = kernels.jacobian, kernels.mass_matrix
        self._calc_body_poses, self._calc_body_velocities = kernels.body_poses, kernels.body_spatial_velocities
        self.nq, self.nv, self.nb = kernels.nq, kernels.nv, kernels.num_bodies
        self.nu = len(effort_limits)
        self.h, self.rk4, self.qdot_is_v = time_step, rk4, qdot_is_v
        self.num_limits, self.num_quats = len(limit_q), len(quaternion_starts)
        cdef int nq = self.nq, nv = self.nv, nb = self.nb
        self.q, self.v = np.zeros(nq), np.zeros(nv)
        self.u_commanded, self.u_applied = np.zeros(self.nu), np.zeros(self.nu)
        self.actuator_enabled, self.tau_contact = np.ones(self.nu), np.zeros(nv)
        self.tau_applied, self.tau_external = np.zeros(nv), np.zeros(nv)
        own = self._arrays = dict(
            damping=owned_f64(damping, (nv,)), friction=owned_f64(friction, (nv,)),
            effort=owned_f64(effort_limits, (self.nu,)), act_v=owned_i32(actuator_dofs, (self.nu,)),
            lim_q=owned_i32(limit_q, (self.num_limits,)), lim_v=owned_i32(limit_v, (self.num_limits,)),
            lim=owned_f64(limits, (self.num_limits, 4)), quat_q=owned_i32(quaternion_starts, (self.num_quats,)),
            factor=np.zeros((nv, nv)), momentum=np.zeros(nv), tau=np.zeros(nv), vdot=np.zeros(nv),
            qdot=np.zeros(nq), dv=np.zeros(nv), q_stage=np.zeros(nq), v_stage=np.zeros(nv),
            k_qdot=np.zeros((4, nq)), k_vdot=np.zeros((4, nv)), body_forces=np.zeros((nb, 6)),
            body_poses=np.zeros((nb, 4, 4)), body_velocities=np.zeros((nb, 6)), jacobians=np.zeros((nb, 6, nv)),
            mass=np.zeros((nv, nv)))
        self.damping, self.friction = f64_data(own["damping"]), f64_data(own["friction"])
        self.effort, self.act_v = f64_data(own["effort"]), i32_data(own["act_v"])
        self.lim_q, self.lim_v, self.lim = i32_data(own["lim_q"]), i32_data(own["lim_v"]), f64_data(own["lim"])
        self.quat_q = i32_data(own["quat_q"])
        self.c_factor, self.c_momentum = f64_data(own["factor"]), f64_data(own["momentum"])
        self.dissipative = bool((not rk4 and np.any(own["damping"])) or np.any(own["friction"]))
        self.sweeps = 0
        self._k_qdot_rows = tuple(own["k_qdot"][i] for i in range(4))
        self._jacobian_rows = tuple(own["jacobians"][b] for b in range(nb))
        self._frames = list(body_frames) if body_frames is not None else []
        self.c_q, self.c_v = f64_data(self.q), f64_data(self.v)
        self.c_u_commanded, self.c_u_applied = f64_data(self.u_commanded), f64_data(self.u_applied)
        self.c_enabled, self.c_tau_contact = f64_data(self.actuator_enabled), f64_data(self.tau_contact)
        self.c_tau_applied, self.c_tau_external = f64_data(self.tau_applied), f64_data(self.tau_external)
        self.c_tau, self.c_vdot, self.c_qdot = f64_data(own["tau"]), f64_data(own["vdot"]), f64_data(own["qdot"])
        self.c_dv, self.c_q_stage, self.c_v_stage = f64_data(own["dv"]), f64_data(own["q_stage"]), \
            f64_data(own["v_stage"])
        self.c_k_qdot, self.c_k_vdot = f64_data(own["k_qdot"]), f64_data(own["k_vdot"])
        self.c_body_forces, self.c_body_poses = f64_data(own["body_forces"]), f64_data(own["body_poses"])
        self.c_body_velocities, self.c_jacobians = f64_data(own["body_velocities"]), f64_data(own["jacobians"])
        self.c_mass = f64_data(own["mass"])
        self._tau, self._vdot, self._qdot = own["tau"], own["vdot"], own["qdot"]
        self._q_stage, self._v_stage, self._mass = own["q_stage"], own["v_stage"], own["mass"]
        self._body_forces, self._body_poses, self._body_velocities = own["body_forces"], own["body_poses"], \
            own["body_velocities"]
        if contact is not None and ((<PointContact?>contact).num_bodies != self.nb
                                    or contact.num_velocities != self.nv or len(self._frames) != self.nb):
            raise ValueError(f"contact is set up for {contact.num_bodies} bodies and {contact.num_velocities} "
                             f"velocities with {len(self._frames)} body frames; the plant has {self.nb} and {self.nv}")
        self.contact = contact
        self._contact = contact
        self.constraints = constraints
        self._constraints = constraints
        self.elements = elements
        self._elements = elements
        self.pushes = Pushes(kernels)
        self.steps = 0

    @property
    def body_forces(self):
        """F_Bo_W of the contact and force elements at the last evaluation (num_bodies, 6), live."""
        return self._body_forces

    def set_state(self, q, v, long long steps=0):
        """Sets q (nq), v (nv) and the step count (simulated time = steps · h)."""
        memcpy(self.c_q, f64(q, self.nq, -1, False, "q"), self.nq * sizeof(double))
        memcpy(self.c_v, f64(v, self.nv, -1, False, "v"), self.nv * sizeof(double))
        self.steps = steps

    cdef int _forces(self, const double* cq, const double* cv) except -1:
        """_tau = B u_applied + τ_applied + τ_limits(q, v) (− d∘v with RK4)."""
        cdef int i, j
        cdef double x, t
        memcpy(self.c_tau, self.c_tau_applied, self.nv * sizeof(double))
        for i in range(self.nu):
            self.c_tau[self.act_v[i]] += self.c_u_applied[i]
        if self.rk4:
            for i in range(self.nv):
                self.c_tau[i] -= self.damping[i] * cv[i]
        for i in range(self.num_limits):
            x, j = cq[self.lim_q[i]], self.lim_v[i]
            if x < self.lim[4 * i]:
                t = self.lim[4 * i + 2] * (self.lim[4 * i] - x) - self.lim[4 * i + 3] * cv[j]
                if t > 0.0:
                    self.c_tau[j] += t
            elif x > self.lim[4 * i + 1]:
                t = self.lim[4 * i + 2] * (self.lim[4 * i + 1] - x) - self.lim[4 * i + 3] * cv[j]
                if t < 0.0:
                    self.c_tau[j] += t
        if self._elements is not None:
            self._elements.joint_torques(cq, cv, self.c_tau)
        return 0

    cdef int _element_loads(self, object q, object v, bint kinematics) except -1:
        """Adds the force elements' body forces at (q, v) to _body_forces; with `kinematics` (no contact
        evaluated them), first the bodies' poses and velocities, and _body_forces zeroed. 1 if any."""
        if self._elements is None or not self._elements.acts_on_bodies:
            return 0
        if kinematics:
            self._calc_body_poses(q, self._body_poses)
            self._calc_body_velocities(q, v, self._body_velocities)
            memset(self.c_body_forces, 0, 6 * self.nb * sizeof(double))
        self._elements.check(self._elements.body_forces(self.c_body_poses, self.c_body_velocities,
                                                        self.c_body_forces))
        return 1

    cdef int _contacts(self, object q, object v) except -1:
        """Detects the contacts at (q, v) and, if any, their Jacobians; returns how many."""
        cdef int n, j, b
        self._calc_body_poses(q, self._body_poses)
        self._calc_body_velocities(q, v, self._body_velocities)
        n = self._contact.detect(self.c_body_poses)
        if n:
            for j in range(self._contact.mark_bodies(n)):
                b = self._contact.d_marked[j]
                self._calc_jacobian(q, self._frames[b], self._jacobian_rows[b])
            self._calc_mass_matrix(q, self._mass)
            if self._contact.jacobians(n, self.c_body_poses, self.c_jacobians, self.c_mass):
                raise RuntimeError("the mass matrix is not positive definite")
        return n

    cdef int _derivative(self, object q, object v, const double* cq, const double* cv, object vdot,
                         bint record) except -1:
        """vdot = v̇(q, v) with explicit, capped contact forces (RK4); record: the step's contacts."""
        cdef int n, loads
        self._forces(cq, cv)
        if self._contact is None:
            loads = self._element_loads(q, v, True)
            self._forward_dynamics(q, v, self._tau, vdot, self._body_forces if loads else None)
            return 0
        n = self._contacts(q, v)
        if n:
            self._contact.bound(n)
        self._contact.apply(n, self.c_body_poses, self.c_body_velocities, self.c_body_forces, record)
        self._element_loads(q, v, False)
        self._forward_dynamics(q, v, self._tau, vdot, self._body_forces)
        if record:
            self._contact.generalized(n, self.c_tau_contact)
        return 0

    cdef int _euler_velocity(self) except -1:
        """v ← v + h v̇ with the contact springs explicit and the contact damping and friction linearly
        implicit (PointContact.spring / damp)."""
        cdef int i, n
        self._forces(self.c_q, self.c_v)
        if self._contact is None:
            self._forward_dynamics(self.q, self.v, self._tau, self._vdot,
                                   self._body_forces if self._element_loads(self.q, self.v, True) else None)
            for i in range(self.nv):
                self.c_v[i] += self.h * self.c_vdot[i]
            return 0
        n = self._contacts(self.q, self.v)
        self._contact.spring(n, self.c_body_poses, self.c_body_velocities, self.c_body_forces)
        self._element_loads(self.q, self.v, False)
        self._forward_dynamics(self.q, self.v, self._tau, self._vdot, self._body_forces)
        for i in range(self.nv):
            self.c_v_stage[i] = self.c_v[i] + self.h * self.c_vdot[i]
        if self.dissipative:                    # the joints' damping and friction on v* before the contacts'
            memcpy(self.c_v, self.c_v_stage, self.nv * sizeof(double))   # (after them it would move a gripper
            self._dissipate()                   # against the part it holds each step: a steady slip ∝ D q̇)
            memcpy(self.c_v_stage, self.c_v, self.nv * sizeof(double))
        if n:
            if self._contact.damp(n, self.c_body_poses, self.c_v_stage, self.c_dv, True):
                raise RuntimeError("the contact damping system is singular")
            self._contact.damping_forces(n, self.c_body_poses, self.c_body_velocities, self.c_body_forces)
            for i in range(self.nv):
                self.c_v_stage[i] += self.c_dv[i]
        else:
            self._contact.num_contacts = 0
        memcpy(self.c_v, self.c_v_stage, self.nv * sizeof(double))
        self._contact.generalized(n, self.c_tau_contact)
        return 0

    cdef int _dissipate(self) except -1:
        """v ← argmin ½ (v⁺ − v)ᵀ M (v⁺ − v) + ½ h v⁺ᵀ D v⁺ + h Σ fᵢ|v⁺ᵢ| with M = M(q): b = M v,
        A = M + hD; without friction v⁺ = A⁻¹ b (Cholesky), with it coordinate minimization from there
        (`coulomb_solve`, to 1e-12 of the largest speed)."""
        cdef int i, j, n = self.nv
        cdef bint coulomb = False
        cdef double s, vmax = 0.0
        self._calc_mass_matrix(self.q, self._mass)
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += self.c_mass[i * n + j] * self.c_v[j]
            self.c_momentum[i] = s
            if not self.rk4:
                self.c_mass[i * n + i] += self.h * self.damping[i]
            coulomb = coulomb or self.friction[i] > 0.0
        memcpy(self.c_factor, self.c_mass, n * n * sizeof(double))
        memcpy(self.c_v, self.c_momentum, n * sizeof(double))
        if cholesky(self.c_factor, n):
            raise RuntimeError("the mass matrix is not positive definite")
        cholesky_solve(self.c_factor, n, self.c_v)
        if coulomb:
            for i in range(n):
                self.c_dv[i] = self.h * self.friction[i]
                vmax = fabs(self.c_v[i]) if fabs(self.c_v[i]) > vmax else vmax
            self.sweeps = coulomb_solve(self.c_mass, self.c_momentum, self.c_dv, self.c_v, n, 1e-12 * (1.0 + vmax), 10000)
        return 0

    cdef int _constrain(self, bint factored) except -1:
        """v ← the constraints' impulse at q (Constraints.project) on A = M(q), + h D with the Euler step's
        implicit damping: the matrix and factor `_dissipate` left when `factored`, else made here."""
        cdef int n = self.nv
        if not factored:
            self._calc_mass_matrix(self.q, self._mass)
            memcpy(self.c_factor, self.c_mass, n * n * sizeof(double))
            if cholesky(self.c_factor, n):
                raise RuntimeError("the mass matrix is not positive definite")
        self._constraints.project(self.q, self.c_q, self.c_factor, self.c_mass, self.c_v)
        return 0

    cdef int _rates(self, object q, object v, const double* cv, double* qdot, object qdot_array) except -1:
        if self.qdot_is_v:
            memcpy(qdot, cv, self.nv * sizeof(double))
        else:
            self._map_qdot(q, v, qdot_array)
        return 0

    cdef int _push(self) except -1:
        """tau_applied = the pushes acting in this step, at its start."""
        memset(self.c_tau_applied, 0, self.nv * sizeof(double))
        if self.pushes.count:
            self.pushes.apply(self.steps, self.q, self.c_tau_applied)
        return 0

    def hold(self):
        """One step held still (brakes, a driver holding the arm): q kept, v = 0, steps + 1; tau_external =
        the last step's tau_contact + the pushes acting at this one's start (they load the arm, not move it)."""
        cdef int i
        self._push()
        for i in range(self.nv):
            self.c_tau_external[i] = self.c_tau_contact[i] + self.c_tau_applied[i]
        memset(self.c_v, 0, self.nv * sizeof(double))
        self.steps += 1

    def step(self, u):
        """One step under actuation u (nu; None when nu = 0) and the pushes: q, v advance by h, steps by 1;
        tau_external = tau_contact + tau_applied."""
        cdef const double* pu = f64(u, self.nu, -1, False, "u") if self.nu else NULL
        cdef int i, s
        cdef double x, w, norm
        cdef double* kq
        cdef double* kv
        for i in range(self.nu):
            x = pu[i]
            x = self.effort[i] if x > self.effort[i] else (-self.effort[i] if x < -self.effort[i] else x)
            self.c_u_commanded[i] = x
            self.c_u_applied[i] = x * self.c_enabled[i]
        self._push()
        if not self.rk4:
            self._euler_velocity()
            if self.dissipative and self._contact is None:
                self._dissipate()
            if self._constraints is not None:
                self._constrain(self.dissipative)
            self._rates(self.q, self.v, self.c_v, self.c_qdot, self._qdot)
            for i in range(self.nq):
                self.c_q[i] += self.h * self.c_qdot[i]
        else:
            kq, kv = self.c_k_qdot, self.c_k_vdot
            self._derivative(self.q, self.v, self.c_q, self.c_v, self._vdot, True)
            memcpy(kv, self.c_vdot, self.nv * sizeof(double))
            self._rates(self.q, self.v, self.c_v, kq, self._k_qdot_rows[0])
            for s in range(1, 4):
                w = self.h if s == 3 else 0.5 * self.h
                for i in range(self.nq):
                    self.c_q_stage[i] = self.c_q[i] + w * kq[(s - 1) * self.nq + i]
                for i in range(self.nv):
                    self.c_v_stage[i] = self.c_v[i] + w * kv[(s - 1) * self.nv + i]
                self._derivative(self._q_stage, self._v_stage, self.c_q_stage, self.c_v_stage, self._vdot, False)
                memcpy(kv + s * self.nv, self.c_vdot, self.nv * sizeof(double))
                self._rates(self._q_stage, self._v_stage, self.c_v_stage, kq + s * self.nq, self._k_qdot_rows[s])
            w = self.h / 6.0
            for i in range(self.nq):
                self.c_q[i] += w * (kq[i] + 2.0 * kq[self.nq + i] + 2.0 * kq[2 * self.nq + i] + kq[3 * self.nq + i])
            for i in range(self.nv):
                self.c_v[i] += w * (kv[i] + 2.0 * kv[self.nv + i] + 2.0 * kv[2 * self.nv + i] + kv[3 * self.nv + i])
            if self.dissipative:                      # Δv = the friction's; q⁺ += ½ h N(q⁺) Δv (a ramp)
                memcpy(self.c_v_stage, self.c_v, self.nv * sizeof(double))
                self._dissipate()
                for i in range(self.nv):
                    self.c_v_stage[i] = self.c_v[i] - self.c_v_stage[i]
                self._rates(self.q, self._v_stage, self.c_v_stage, self.c_qdot, self._qdot)
                for i in range(self.nq):
                    self.c_q[i] += 0.5 * self.h * self.c_qdot[i]
            if self._constraints is not None:           # at the new q, for the next step (docs/sim.md)
                self._constrain(False)
        for s in range(self.num_quats):
            i = self.quat_q[s]
            norm = sqrt(self.c_q[i] ** 2 + self.c_q[i + 1] ** 2 + self.c_q[i + 2] ** 2 + self.c_q[i + 3] ** 2)
            self.c_q[i] /= norm
            self.c_q[i + 1] /= norm
            self.c_q[i + 2] /= norm
            self.c_q[i + 3] /= norm
        for i in range(self.nv):
            self.c_tau_external[i] = self.c_tau_contact[i] + self.c_tau_applied[i]
        self.steps += 1


# ---------------------------------------------------------------------------------------------
# Joint maps (the robot's protocol joints ↔ the plant's coordinates)
# ---------------------------------------------------------------------------------------------
cdef const Py_ssize_t* _index(object index, Py_ssize_t n, Py_ssize_t bound) except? NULL:
    """The data of an intp array of n entries, each in [0, bound)."""
    if not cnp.PyArray_Check(index) or cnp.PyArray_TYPE(<cnp.ndarray>index) != cnp.NPY_INTP \
            or cnp.PyArray_SIZE(<cnp.ndarray>index) != n or not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>index):
        raise ValueError(f"index must be a C-contiguous intp array of {n} entries")
    cdef const Py_ssize_t* k = <const Py_ssize_t*>cnp.PyArray_DATA(<cnp.ndarray>index)
    cdef Py_ssize_t i
    for i in range(n):
        if k[i] < 0 or k[i] >= bound:
            raise IndexError(f"index[{i}] = {k[i]} is out of range [0, {bound})")
    return k


def gather(src, index, double scale, dst):
    """dst[i] = scale · src[index[i]] (float64 vectors, index intp)."""
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray?>dst), m = cnp.PyArray_SIZE(<cnp.ndarray?>src), i
    cdef const Py_ssize_t* k = _index(index, n, m)
    cdef const double* s = f64(src, m, -1, False, "src")
    cdef double* d = f64_flat(dst, n, "dst")
    for i in range(n):
        d[i] = scale * s[k[i]]


def scatter(src, index, dst):
    """dst[index[i]] = src[i] (float64 vectors, index intp)."""
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray?>src), m = cnp.PyArray_SIZE(<cnp.ndarray?>dst), i
    cdef const Py_ssize_t* k = _index(index, n, m)
    cdef const double* s = f64(src, n, -1, False, "src")
    cdef double* d = f64_flat(dst, m, "dst")
    for i in range(n):
        d[k[i]] = s[i]
