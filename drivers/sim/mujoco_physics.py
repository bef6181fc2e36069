"""MuJoCo as the simulated plant's physics (sim.engine: mujoco): the interface of drivers.sim.physics.Physics
over mujoco.mj_step, so the simulated robots, their drivers, faults, pushes and contact reports run on an
independent engine. The model is generated from the plant (drivers.sim.mujoco_model); q, v, the torques
and the contact results are in MultibodyPlant's conventions.

    physics = make_physics(plant, SimConfig(engine="mujoco"))     # drivers.sim.physics.make_physics
    physics.step(u)                 # one mj_step1 / pushes / mj_step2 under actuation u
    physics.q, physics.v            # the state (live arrays), as Physics's

Per step: u is clamped to the effort limits (u_commanded), masked by actuator_enabled (u_applied) and
becomes MuJoCo's ctrl; mj_step1 computes the start state's kinematics and contacts; the pushes acting in
the step go into xfrc_applied at the body's CoM, F_Bcm_W = [f; τ + p_BcmBq_W × f] (MuJoCo's order
[force; torque]), their generalized force J_Bqᵀ F_Bq_W by mj_applyFT; the model's force elements'
generalized force τ_e(q, v) at the start state (drivers.sim._forces) goes into qfrc_applied (T τ_e in
MuJoCo's coordinates), held over the step; mj_step2 solves the constraints
and integrates. tau_contact = Tᵀ J_cᵀ λ_c, the contact rows of the constraint force λ (MuJoCo orders
them last: equality, friction loss, limits, contacts), in our coordinates (mujoco_model: τ = Tᵀ τ_mj).

Allocation: mj_step1/mj_step2 allocate nothing and q, v, the torques are written into preallocated
arrays through views made once; a step keeps nothing but its new step count (a Python int) and makes
no more than a few hundred bytes of transient Python objects; a step with an active joint limit,
friction loss or equality also makes numpy views of MuJoCo's variable-size constraint force, and a
pushed step a few 3-vectors. contact_results() and contact_forces() allocate (meant for the status
and ~60 Hz messages).
"""
from __future__ import annotations

import numpy as np

from dynamics_cy import ContactResults, PenetrationAsPointPair, PointPairContactInfo
from dynamics_cy.errors import DynamicsError

from ._forces import ForceElements
from .config import SimConfig
from .contact import ContactModel
from .mujoco_model import build_model
from .physics import body_forces, check_push, initial_state, schedule_pushes


class MujocoContact:
    """MuJoCo's contacts of the last step (mujoco's model and data) as ours: `model` is the ContactModel
    whose geometries, pairs and friction the MuJoCo model was built with (drivers.sim.mujoco_model)."""

    def __init__(self, contact: ContactModel, mujoco, model, data):
        self.model, self.mujoco, self.m, self.d = contact, mujoco, model, data
        self.body_names = contact.body_names
        """Bodies as Drake's ContactResultsToLcmSystem names them: name(model instance index)."""
        self._a_first = set(contact.pairs)
        self._geom = [model.geom(f"g{i}").id for i in range(len(contact.geometries))]
        self._ours = np.full(model.ngeom, -1)            # MuJoCo geom id → index in model.geometries (-1: ground)
        self._ours[self._geom] = range(len(self._geom))
        self._force = np.zeros(6)

    def contact(self, i: int):
        """MuJoCo's contact i as ours: (geometry A, geometry B or -1 for the ground, f_Bc_W, nhat_BA_W, p_WC,
        depth). MuJoCo's normal n₁₂ (the frame's first row) points from geom1 into geom2 and the force its
        contact frame carries acts on geom2: f₂ = frameᵀ [fₙ, f_t1, f_t2]."""
        con = self.d.contact[i]
        g1, g2 = (int(self._ours[g]) for g in con.geom)
        self.mujoco.mj_contactForce(self.m, self.d, i, self._force)
        frame = con.frame.reshape(3, 3)
        f2 = frame.T @ self._force[:3]
        if g2 < 0 or (g1 >= 0 and (g1, g2) in self._a_first):     # A = geom1, B = geom2
            return g1, g2, f2, -frame[0], con.pos.copy(), -con.dist
        return g2, g1, -f2, frame[0].copy(), con.pos.copy(), -con.dist

    def _body(self, g: int) -> int:
        return 0 if g < 0 else self.model.geometries[g].body_index

    def contact_results(self) -> ContactResults:
        """The contacts of the last step, at its start state, as Drake's ContactResults (allocates)."""
        results, m, d = ContactResults(), self.m, self.d
        names = self.model.geometry_name
        for i in range(d.ncon):
            a, b, f, n, p, depth = self.contact(i)
            v_rel = np.zeros(3)
            for g, sign in ((a, 1.0), (b, -1.0)):           # v_ACo − v_BCo, from MuJoCo's body velocities
                body = int(m.geom_bodyid[self._geom[g]]) if g >= 0 else 0
                if body:
                    V = np.zeros(6)
                    self.mujoco.mj_objectVelocity(m, d, self.mujoco.mjtObj.mjOBJ_BODY, body, V, 0)
                    v_rel += sign * (V[3:] + np.cross(V[:3], p - d.xipos[body]))
            vn = float(v_rel @ n)
            pair = PenetrationAsPointPair(names(a), names(b), p - 0.5 * depth * n, p + 0.5 * depth * n, n, depth)
            results.AddContactInfo(PointPairContactInfo(self._body(a), self._body(b), f, p, vn,
                                                        float(np.linalg.norm(v_rel - vn * n)), pair))
        return results

    def bodies_forces(self):
        """(body A, body B, f_Bc_W) of each contact of the last step."""
        for i in range(self.d.ncon):
            a, b, f, *_ = self.contact(i)
            yield self._body(a), self._body(b), f


class MujocoPhysics:
    """The plant stepped by MuJoCo, with Physics's interface (drivers.sim.physics; make_physics builds
    it). `model`, `data`: MuJoCo's; `coordinates`: the map between the engines' (q, v)."""

    def __init__(self, plant, config: SimConfig, path: str = "sim"):
        import mujoco
        self.mujoco, self.plant, self.config = mujoco, plant, config
        self.time_step_ns = config.time_step_ns
        q0, v0 = initial_state(plant, config, path)
        contact = ContactModel(plant, config.contact, config.time_step, f"{path}.contact", check=False) \
            if config.contact.enabled else None
        self.model, self.coordinates = build_model(plant, config, contact, path)
        self.data = d = mujoco.MjData(self.model)
        self.contact = MujocoContact(contact, mujoco, self.model, d) if contact is not None else None
        nv, nu = plant.num_velocities(), plant.num_actuators()
        self.q, self.v = np.zeros(plant.num_positions()), np.zeros(nv)
        self.u_commanded, self.u_applied, self.actuator_enabled = np.zeros(nu), np.zeros(nu), np.ones(nu)
        """Actuation of the last step: clamped to the effort limits; then masked by actuator_enabled."""
        self.tau_contact, self.tau_external = np.zeros(nv), np.zeros(nv)
        """J_cᵀ λ_c of the last step's contacts (nv); tau_contact + the pushes' J_Bqᵀ F_Bq_W."""
        self._effort = plant.GetEffortUpperLimits()
        self._neg_effort = -self._effort
        self._qpos, self._qvel, self._ctrl, self._xfrc = d.qpos, d.qvel, d.ctrl, d.xfrc_applied
        self._qfrc_constraint, self._qfrc_applied = d.qfrc_constraint, d.qfrc_applied
        self._bad = [d.warning[w] for w in (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
                                            mujoco.mjtWarning.mjWARN_BADQACC)]
        self._tau_mj, self._push_mj, self._tau_push = np.zeros(nv), np.zeros(nv), np.zeros(nv)
        self._efc = np.zeros(64)
        c = self.coordinates
        self._state_views = c.free_views(d.qpos, d.qvel, self.v)
        self._contact_views = c.force_views(self._tau_mj, d.xquat, self.tau_contact)
        self._push_views = c.force_views(self._push_mj, d.xquat, self._tau_push)
        self._pushes = []                    # (MuJoCo body id, p_BoBq_B, F_Bq_W, first step, end step)
        self._elements = ForceElements(plant, plant.kernels()) if plant.num_force_elements() > 1 else None
        self._tau_elements = np.zeros(nv)
        self._element_views = c.applied_views(self._tau_elements, self._qfrc_applied, d.qpos)
        self.steps = 0
        self.set_state(q0, v0)
        schedule_pushes(self, config, path)

    @property
    def time_ns(self) -> int:
        """Simulated time: steps · time_step, in integer nanoseconds."""
        return self.steps * self.time_step_ns

    def set_state(self, q, v, steps: int = 0) -> None:
        self.q[:], self.v[:] = q, v
        self.coordinates.to_mujoco(self.q, self.v, self._qpos, self._qvel)
        self.data.qacc_warmstart[:] = 0.0
        self.steps = steps
        self.data.time = steps * self.config.time_step

    def push(self, frame: str, F_Bq_W, start_ns: int, stop_ns: int, p_BoBq_B=(0.0, 0.0, 0.0)) -> None:
        """As Physics.push: F_Bq_W = [τ; f] (W) at the point Bq of `frame` (p_BoBq_B in its frame) on the
        steps that start in [start_ns, stop_ns)."""
        B, F, p = check_push(self.plant, frame, F_Bq_W, p_BoBq_B)
        X_BF = B.GetFixedPoseInBodyFrame()
        body = self.model.body(B.body().name()).id
        h = self.time_step_ns
        self._pushes.append((body, X_BF.translation() + X_BF.rotation().matrix() @ p, F,
                             -(-start_ns // h), -(-stop_ns // h)))

    def _apply_pushes(self, step: int) -> bool:
        """xfrc_applied and _tau_push of the pushes acting in `step`, at the kinematics in data; whether any."""
        d, mj, pushed = self.data, self.mujoco, False
        self._xfrc[:] = 0.0
        self._push_mj[:] = 0.0
        for body, p_B, F, first, end in self._pushes:
            if first <= step < end:
                p_W = d.xpos[body] + d.xmat[body].reshape(3, 3) @ p_B
                self._xfrc[body, :3] += F[3:]
                self._xfrc[body, 3:] += F[:3] + np.cross(p_W - d.xipos[body], F[3:])
                mj.mj_applyFT(self.model, d, F[3:], F[:3], p_W, body, self._push_mj)
                pushed = True
        if pushed:
            self.coordinates.generalized_force(self._push_mj, self._tau_push, self._push_views)
        else:
            self._tau_push[:] = 0.0
        return pushed

    def step(self, u) -> None:
        """One step under actuation u (num_actuators; None without actuators) and the pushes; DynamicsError
        when MuJoCo finds q, v or v̇ not finite or huge (its automatic reset is off: the state stays)."""
        m, d, mj = self.model, self.data, self.mujoco
        if self.u_commanded.size:
            np.minimum(u, self._effort, out=self.u_commanded)
            np.maximum(self.u_commanded, self._neg_effort, out=self.u_commanded)
            np.multiply(self.u_commanded, self.actuator_enabled, out=self.u_applied)
            self._ctrl[:] = self.u_applied
        mj.mj_step1(m, d)
        if self._pushes:
            self._apply_pushes(self.steps)
        if self._elements is not None:
            self._elements.generalized(self.q, self.v, self._tau_elements)
            self.coordinates.force_to_mujoco(self._tau_elements, self._qfrc_applied, self._element_views)
        mj.mj_step2(m, d)
        for bad, what in zip(self._bad, ("positions", "velocities", "accelerations")):
            if bad.number:
                raise DynamicsError(f"MuJoCo's simulation diverged at t = {self.time_ns * 1e-9:.3f} s ({what} not "
                                    f"finite or huge at DOF {bad.lastinfo})")
        c0 = d.ne + d.nf + d.nl                  # the first contact row of the constraint force
        if c0 == 0:
            self._tau_mj[:] = self._qfrc_constraint
        else:
            n = d.nefc
            if n > self._efc.size:
                self._efc = np.zeros(2 * n)
            f = self._efc[:n]
            f[:c0] = 0.0
            f[c0:] = d.efc_force[c0:]
            mj.mj_mulJacTVec(m, d, self._tau_mj, f)
        self.coordinates.generalized_force(self._tau_mj, self.tau_contact, self._contact_views)
        self.coordinates.from_mujoco(self._qpos, self._qvel, self.q, self.v, self._state_views)
        np.add(self.tau_contact, self._tau_push, out=self.tau_external)
        self.steps += 1

    def hold(self) -> None:
        """One step held still (q kept, v = 0, the clock runs); tau_external = the last step's tau_contact + the
        pushes acting at this one's start (Stepper.hold)."""
        d, mj = self.data, self.mujoco
        if any(first <= self.steps < end for _, _, _, first, end in self._pushes):
            mj.mj_kinematics(self.model, d)
            mj.mj_comPos(self.model, d)
        self._apply_pushes(self.steps)
        np.add(self.tau_contact, self._tau_push, out=self.tau_external)
        self._qvel[:] = 0.0
        self.v[:] = 0.0
        self.steps += 1
        d.time = self.steps * self.config.time_step

    def contact_results(self) -> ContactResults:
        """The contacts of the last step, at its start state (empty without contact)."""
        return self.contact.contact_results() if self.contact else ContactResults()

    def contact_forces(self, bodies, touching: np.ndarray, force: np.ndarray) -> None:
        """Per body index of `bodies`: touched by a contact of the last step, and the net contact force on it (W)."""
        body_forces(self.contact.bodies_forces() if self.contact else (), bodies, touching, force)

