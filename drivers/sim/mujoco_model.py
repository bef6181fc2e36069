"""The MuJoCo model of a finalized dynamics_cy plant (sim.engine: mujoco), and the map between the two
engines' coordinates.

    model, coords = build_model(plant, config, contact)     # mujoco.MjModel, Coordinates

Built from the plant, not from its file, so whatever the plant became carries over (payloads, welds,
robot.actuated_joints, SDFormat models, the legged presets' foot spheres): per body B (our body
frame is MuJoCo's body frame), in the plant's tree order,

- the pose in its parent P at q = 0, X_PB = X_PF X_FM(0) X_MB (F, M the joint's frames on P and B);
- the spatial inertia: mass m, p_BoBcm_B and the central inertia I_Bcm = I_Bo − m (|c|² 1 − c cᵀ) by its
  principal moments and axes (each at least MIN_INERTIA, as MuJoCo needs);
- its inboard joint: revolute → hinge, prismatic → slide (axis R_BM â_F through p_BM, the position
  limits when sim.joint_limits.enabled, damping = sim.joint_damping or the model's, frictionloss =
  sim.joint_friction, armature = the actuators' reflected inertia), quaternion_floating → free, weld →
  none (MuJoCo welds a body without joints to its parent); other types are a ConfigError;
- a motor per actuator (gear 1, ctrlrange ± the effort limit when finite), in the actuators' order;
- the plant's constraints as MuJoCo equalities (`_equalities`): a coupler q₀ = ρ q₁ + Δq as a joint
  equality (polycoef [Δq, ρ]), a ball as a connect (anchor p_AP in A, p_BQ in B), a weld as a weld
  (anchor p_BQ in B, relpose p_AP and R_AB = R_AP R_BQᵀ), a distance constraint as a spatial tendon
  between sites at P and Q: held at d₀ by a tendon equality when rigid, a tendon spring (stiffness k,
  damping c, spring length d₀) when compliant; the equalities' solref [2h, 1] and solimp
  EQUALITY_SOLIMP, as stiff as MuJoCo's soft constraints go stably;
- the collision geometries and pairs our engine uses (drivers.sim.contact.ContactModel: the same
  filters), as explicit contact pairs of condim 3 whose friction is the pair's combined static μ,
  and a ground plane at contact.ground.height.

Coordinates (MultibodyPlant's ↔ MuJoCo's): a 1-dof joint's q and v are the same numbers; a free
body's q = [qw qx qy qz, p_WBo] is qpos = [p_WBo, qw qx qy qz], and its v = [ω_WB_W; v_WBo_W] is
qvel = [v_WBo_W; R_WBᵀ ω_WB_W]. So qvel = T v, and by power (τ·v = τ_mj·qvel) τ = Tᵀ τ_mj, M = Tᵀ M_mj T.
"""
from __future__ import annotations

import numpy as np

from drivers.core.schema import ConfigError
from dynamics_cy import Box, Capsule, Cylinder, RigidTransform, Sphere
from dynamics_cy.topology import reflected_inertias

from .config import SimConfig, per_joint

GROUND = "ground"
"""The name of the ground plane's geom."""

MIN_INERTIA = 1e-12
"""kg and kg·m²: the least mass and principal moment of a body (MuJoCo refuses a moving body without
them, e.g. a point mass on a hinge or a massless link between two joints)."""


def _quat(R) -> np.ndarray:
    import mujoco
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R, dtype=float).ravel())
    return q


def _geom(body, index: int, g) -> None:
    """Collision geometry g (a GeometryInstance) as geom `g{index}` of the spec body, colliding only in pairs."""
    import mujoco
    s = g.shape
    if isinstance(s, Sphere):
        kind, size = mujoco.mjtGeom.mjGEOM_SPHERE, [s.radius(), 0, 0]
    elif isinstance(s, Box):
        kind, size = mujoco.mjtGeom.mjGEOM_BOX, [s.width() / 2, s.depth() / 2, s.height() / 2]
    elif isinstance(s, (Capsule, Cylinder)):
        kind = mujoco.mjtGeom.mjGEOM_CAPSULE if isinstance(s, Capsule) else mujoco.mjtGeom.mjGEOM_CYLINDER
        size = [s.radius(), s.length() / 2, 0]
    else:                                     # ContactModel has refused every other shape
        raise AssertionError(type(s).__name__)
    body.add_geom(name=f"g{index}", type=kind, size=size, pos=g.X_BG.translation(),
                  quat=_quat(g.X_BG.rotation().matrix()), contype=0, conaffinity=0, condim=3)


class Coordinates:
    """Index maps between the plant's (q, v) and MuJoCo's (qpos, qvel), joints matched by name.

    q_of, v_of: q = qpos[q_of], and v = qvel[v_of] but for the free bodies' angular velocities, which
    are rotated: ω_WB_W = R_WB ω_B (`free`: per free body its v index, qvel index of ω_B, qpos index
    of its quaternion, MuJoCo body id)."""

    def __init__(self, plant, model):
        import mujoco
        nq, nv = plant.num_positions(), plant.num_velocities()
        self.q_of, self.v_of = np.zeros(nq, dtype=np.intp), np.zeros(nv, dtype=np.intp)
        self.free = []
        for i in range(plant.num_joints()):
            j = plant.get_joint(i)
            if j.num_velocities() == 0:
                continue
            mj = model.joint(j.name())
            a, b, s, t = int(mj.qposadr[0]), int(mj.dofadr[0]), j.position_start(), j.velocity_start()
            if j.type_name() == "quaternion_floating":
                self.q_of[s:s + 4], self.q_of[s + 4:s + 7] = range(a + 3, a + 7), range(a, a + 3)
                self.v_of[t:t + 3], self.v_of[t + 3:t + 6] = range(b + 3, b + 6), range(b, b + 3)
                self.free.append((t, b + 3, a + 3, int(mj.bodyid[0])))
            else:
                self.q_of[s], self.v_of[t] = a, b
        self.qpos_of = np.argsort(self.q_of)        # qpos = q[qpos_of]
        self.qvel_of = np.argsort(self.v_of)        # qvel = v[qvel_of] but for the free bodies' ω
        self._mujoco = mujoco

    def to_mujoco(self, q, v, qpos, qvel) -> None:
        """qpos, qvel of the plant's q, v (q's quaternions as they are)."""
        np.take(q, self.qpos_of, out=qpos)
        np.take(v, self.qvel_of, out=qvel)
        for t, w, quat, _ in self.free:               # ω_B = R_WBᵀ ω_W: rotate by the conjugate quaternion
            conj = qpos[quat:quat + 4] * [1.0, -1.0, -1.0, -1.0]
            self._mujoco.mju_rotVecQuat(qvel[w:w + 3], np.array(v[t:t + 3], dtype=float), conj)

    def from_mujoco(self, qpos, qvel, q, v, views) -> None:
        """q, v of qpos, qvel; views: per free body (ω_B in qvel, its quaternion in qpos, ω_W in v), views
        made once (free_views), so this allocates nothing."""
        qpos.take(self.q_of, out=q)
        qvel.take(self.v_of, out=v)
        for w_B, quat, w_W in views:
            self._mujoco.mju_rotVecQuat(w_W, w_B, quat)

    def free_views(self, qpos, qvel, v) -> list:
        """The (ω_B, quaternion, ω_W) views from_mujoco rotates, on these arrays."""
        return [(qvel[w:w + 3], qpos[quat:quat + 4], v[t:t + 3]) for t, w, quat, _ in self.free]

    def force_views(self, tau_mj, xquat, tau) -> list:
        """Per free body (its torque in B from tau_mj, R_WB as xquat's row, its torque in W in tau): the
        views generalized_force rotates."""
        return [(tau_mj[w:w + 3], xquat[body], tau[t:t + 3]) for t, w, _, body in self.free]

    def generalized_force(self, tau_mj, tau, views) -> None:
        """τ = Tᵀ τ_mj: the same numbers for 1-dof joints; a free body's [τ_W; f_W] from [f_W; τ_B] with
        τ_W = R_WB τ_B (R_WB the state's at which τ_mj was taken, in `views`)."""
        tau_mj.take(self.v_of, out=tau)
        for tau_B, quat, tau_W in views:
            self._mujoco.mju_rotVecQuat(tau_W, tau_B, quat)

    def applied_views(self, tau, qfrc, qpos) -> list:
        """Per free body (its torque in W in tau, in B in qfrc, its quaternion in qpos, a 4-buffer for the
        conjugate): the views force_to_mujoco rotates."""
        return [(tau[t:t + 3], qfrc[w:w + 3], qpos[quat:quat + 4], np.zeros(4)) for t, w, quat, _ in self.free]

    def force_to_mujoco(self, tau, qfrc, views) -> None:
        """τ_mj = T τ (so that τ_mjᵀ qvel = τᵀ v, as T⁻ᵀ = T): the same numbers for 1-dof joints; a free
        body's [f_W; τ_B] from [τ_W; f_W] with τ_B = R_WBᵀ τ_W. Allocates nothing."""
        tau.take(self.qvel_of, out=qfrc)
        for tau_W, tau_B, quat, conj in views:
            self._mujoco.mju_negQuat(conj, quat)
            self._mujoco.mju_rotVecQuat(tau_B, tau_W, conj)

    def velocity_map(self, qpos) -> np.ndarray:
        """T (nv × nv) at qpos: qvel = T v."""
        nv = len(self.v_of)
        T = np.zeros((nv, nv))
        T[self.v_of, np.arange(nv)] = 1.0
        for t, w, quat, _ in self.free:
            R = np.zeros(9)
            self._mujoco.mju_quat2Mat(R, qpos[quat:quat + 4])
            T[w:w + 3, t:t + 3] = R.reshape(3, 3).T
        return T


def build_model(plant, config: SimConfig, contact=None, path: str = "sim"):
    """(mujoco.MjModel, Coordinates) of `plant` under `config` (see the module doc); contact: the
    plant's drivers.sim.contact.ContactModel (None: no contact)."""
    import mujoco
    spec = mujoco.MjSpec()
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.compiler.autolimits = False
    spec.compiler.degree = False                        # hinge ranges in radians
    spec.compiler.boundmass = spec.compiler.boundinertia = MIN_INERTIA
    mj = config.mujoco
    option = spec.option
    option.timestep = config.time_step
    option.gravity = plant.gravity_field().gravity_vector()
    option.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{mj.integrator.upper()}")
    option.cone = getattr(mujoco.mjtCone, f"mjCONE_{mj.cone.upper()}")
    option.impratio = mj.impratio
    option.disableflags |= mujoco.mjtDisableBit.mjDSBL_AUTORESET   # a diverged step raises (MujocoPhysics.step)
    nv = plant.num_velocities()
    damping = per_joint(config.joint_damping, nv, f"{path}.joint_damping", plant.GetDampingVector())
    friction = per_joint(config.joint_friction, nv, f"{path}.joint_friction", np.zeros(nv))
    armature = reflected_inertias(plant)
    joints = [plant.get_joint(i) for i in range(plant.num_joints())]
    names = [j.name() for j in joints if j.num_velocities()]
    if len(set(names)) < len(names):
        raise ConfigError(f"{path}.engine", "MuJoCo needs the moving joints' names unique; the model repeats "
                                            f"{sorted({n for n in names if names.count(n) > 1})}")
    inboard = {int(j.child_body().index()): j for j in joints}
    bodies = {0: spec.worldbody}
    order = sorted(range(1, plant.num_bodies()), key=lambda b: _depth(inboard, b))
    for b in order:                                     # parents before children
        j, body = inboard[b], plant.get_body(b)
        X_PF = j.frame_on_parent().GetFixedPoseInBodyFrame()
        X_MB = j.frame_on_child().GetFixedPoseInBodyFrame().inverse()
        kind = j.type_name()
        if kind not in ("revolute", "prismatic", "weld", "quaternion_floating"):
            raise ConfigError(f"{path}.engine", f"joint {j.name()!r} is {kind}; MuJoCo takes revolute, prismatic, "
                                                "weld and quaternion_floating joints")
        X_PB = X_PF @ (j.X_FM() if kind == "weld" else RigidTransform()) @ X_MB
        if kind == "quaternion_floating":
            if int(j.parent_body().index()) != 0 or not _identity(X_PB):
                raise ConfigError(f"{path}.engine", f"free joint {j.name()!r}: MuJoCo's free joint needs the "
                                                    "world as parent and coinciding joint and body frames")
            X_PB = RigidTransform()
        M = body.default_spatial_inertia()
        m, c = M.get_mass(), M.get_com()
        I_cm = M.CalcRotationalInertia().CopyToFullMatrix3() - m * (c @ c * np.eye(3) - np.outer(c, c))
        moments, axes = np.linalg.eigh(I_cm)            # I_cm = R diag(moments) Rᵀ, R a rotation
        axes[:, 2] *= np.sign(np.linalg.det(axes))
        node = bodies[int(j.parent_body().index())].add_body(
            name=body.name(), pos=X_PB.translation(), quat=_quat(X_PB.rotation().matrix()), mass=m, ipos=c,
            inertia=np.maximum(moments, 0.0), iquat=_quat(axes), explicitinertial=True)
        bodies[b] = node
        if kind == "quaternion_floating":
            node.add_freejoint(name=j.name())
        elif kind != "weld":
            k, X_BM = j.velocity_start(), X_MB.inverse()
            lo, hi = j.position_lower_limits()[0], j.position_upper_limits()[0]
            limited = config.joint_limits.enabled and (np.isfinite(lo) or np.isfinite(hi))
            node.add_joint(name=j.name(), type=mujoco.mjtJoint.mjJNT_HINGE if kind == "revolute" else
                           mujoco.mjtJoint.mjJNT_SLIDE, pos=X_BM.translation(),
                           axis=X_BM.rotation().matrix() @ (j.revolute_axis() if kind == "revolute"
                                                                 else j.translation_axis()),
                           limited=mujoco.mjtLimited.mjLIMITED_TRUE if limited else mujoco.mjtLimited.mjLIMITED_FALSE,
                           range=[max(lo, -1e10), min(hi, 1e10)] if limited else [0.0, 0.0],
                           damping=damping[k], frictionloss=friction[k], armature=armature[k])
    actuators = sorted((plant.get_joint_actuator(i) for i in plant.GetJointActuatorIndices()),
                       key=lambda a: a.input_start())
    for a in actuators:
        limit = a.effort_limit()
        spec.add_actuator(name=a.name(), trntype=mujoco.mjtTrn.mjTRN_JOINT, target=a.joint().name(),
                          ctrllimited=mujoco.mjtLimited.mjLIMITED_TRUE if np.isfinite(limit) else
                          mujoco.mjtLimited.mjLIMITED_FALSE,
                          ctrlrange=[-limit, limit] if np.isfinite(limit) else [0.0, 0.0])
    if contact is not None:
        _contacts(spec, bodies, contact, config)
    rigid_distances = _equalities(spec, bodies, plant, config)
    try:
        model = spec.compile()
    except ValueError as e:
        raise ConfigError(f"{path}.engine", f"MuJoCo cannot compile the model: {e}") from None
    _equality_data(model, plant, rigid_distances)
    return model, Coordinates(plant, model)


EQUALITY_SOLIMP = [0.95, 0.99, 0.001, 0.5, 2.0]
"""The constraints' impedance: 95-99 % of each constraint's force enforced (MuJoCo's default: 90-95 %)."""


def _equalities(spec, bodies: dict, plant, config: SimConfig) -> list:
    """The plant's constraints as equalities (and tendons) of the spec; returns the rigid distance
    constraints as (equality name, d₀), whose tendon length _equality_data sets once compiled."""
    import mujoco
    eq, obj = mujoco.mjtEq, mujoco.mjtObj
    soft = {"solref": [2 * config.time_step, 1.0], "solimp": EQUALITY_SOLIMP}
    name = lambda b: "world" if int(b) == 0 else plant.get_body(b).name()          # noqa: E731
    rigid = []
    for k, (id, c) in enumerate(plant.get_coupler_constraint_specs().items()):
        spec.add_equality(name=f"coupler{k}", type=eq.mjEQ_JOINT, objtype=obj.mjOBJ_JOINT,
                          name1=plant.get_joint(c.joint0_index).name(), name2=plant.get_joint(c.joint1_index).name(),
                          data=[c.offset, c.gear_ratio] + [0.0] * 10, **soft)
    for k, (id, c) in enumerate(plant.get_ball_constraint_specs().items()):
        spec.add_equality(name=f"ball{k}", type=eq.mjEQ_CONNECT, objtype=obj.mjOBJ_BODY, name1=name(c.body_A),
                          name2=name(c.body_B), data=[*c.p_AP, *c.p_BQ] + [0.0] * 6, **soft)
    for k, (id, c) in enumerate(plant.get_weld_constraint_specs().items()):
        R_AB = c.X_AP.rotation().matrix() @ c.X_BQ.rotation().matrix().T
        spec.add_equality(name=f"weld{k}", type=eq.mjEQ_WELD, objtype=obj.mjOBJ_BODY, name1=name(c.body_A),
                          name2=name(c.body_B), data=[*c.X_BQ.translation(), *c.X_AP.translation(), *_quat(R_AB),
                                                      1.0, 0.0], **soft)
    for k, (id, c) in enumerate(plant.GetDefaultDistanceConstraintParams().items()):
        for site, b, p in (("P", c.bodyA(), c.p_AP()), ("Q", c.bodyB(), c.p_BQ())):
            bodies[int(b)].add_site(name=f"distance{k}_{site}", pos=p)
        rigid_tendon = not np.isfinite(c.stiffness())
        tendon = spec.add_tendon(name=f"distance{k}", **({} if rigid_tendon else {
            "stiffness": c.stiffness(), "damping": c.damping(), "springlength": [c.distance(), c.distance()]}))
        tendon.wrap_site(f"distance{k}_P")
        tendon.wrap_site(f"distance{k}_Q")
        if rigid_tendon:
            spec.add_equality(name=f"distance{k}", type=eq.mjEQ_TENDON, objtype=obj.mjOBJ_TENDON,
                              name1=f"distance{k}", **soft)
            rigid.append((f"distance{k}", c.distance()))
    return rigid


def _equality_data(model, plant, rigid_distances: list) -> None:
    """After compiling: each connect's anchor in body 2 is p_BQ (MuJoCo computes it at qpos0), and each rigid
    distance holds its tendon at d₀ (MuJoCo's tendon equality: L − L(qpos0) = data[0])."""
    for k, c in enumerate(plant.get_ball_constraint_specs().values()):
        model.eq_data[model.equality(f"ball{k}").id, 3:6] = c.p_BQ
    for name, distance in rigid_distances:
        model.eq_data[model.equality(name).id, :5] = [distance - model.tendon_length0[model.tendon(name).id], 0, 0,
                                                      0, 0]


def _contacts(spec, bodies, contact, config: SimConfig) -> None:
    """The geometries as geoms, the ground, and one pair per pair our engine checks, μ its combined static."""
    import mujoco
    mj = config.mujoco
    for i, g in enumerate(contact.geometries):
        _geom(bodies[g.body_index], i, g)
    extra = {**({"solref": mj.solref} if mj.solref is not None else {}),
             **({"solimp": mj.solimp} if mj.solimp is not None else {})}
    pairs = [(i, -1, mu) for i, mu in zip(contact.ground, contact.ground_friction)]
    pairs += [(a, b, mu) for (a, b), mu in zip(contact.pairs, contact.pair_friction)]
    if contact.ground:
        spec.worldbody.add_geom(name=GROUND, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1],
                                pos=[0, 0, config.contact.ground.height], contype=0, conaffinity=0)
    for a, b, (mu, _) in pairs:
        spec.add_pair(geomname1=f"g{a}", geomname2=GROUND if b < 0 else f"g{b}", condim=3,
                      friction=[mu, mu, 0.0, 0.0, 0.0], **extra)


def _depth(inboard: dict, b: int) -> int:
    d = 0
    while b:
        b, d = int(inboard[b].parent_body().index()), d + 1
    return d


def _identity(X) -> bool:
    return np.allclose(X.GetAsMatrix4(), np.eye(4), atol=1e-12)
