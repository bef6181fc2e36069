"""Agreement with pydrake and Pinocchio on real robot models (skipped when they are absent).

The models are the default iiwa14 and URDFs from example-robot-data: arms and floating-base
quadrupeds and humanoids, checked in depth; and the sweep: every URDF and SDF file of
example-robot-data, loaded here exactly when pydrake loads it, with gravity, mass matrix and
inverse dynamics equal to pydrake's and Pinocchio's. Agreement is required to 1e-8 relative; it is
~1e-14 in practice.
"""
import logging
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
import pytest

import dynamics_cy as dc
from dynamics_cy import JacobianWrtVariable

RTOL = 1e-8
ARMS = ["panda_description/urdf/panda.urdf", "ur_description/urdf/ur5_robot.urdf", "z1_description/urdf/z1.urdf",
        "xarm_description/urdf/xarm7.urdf", "baxter_description/urdf/baxter.urdf"]
FLOATING = ["solo_description/robots/solo12.urdf", "anymal_c_simple_description/urdf/anymal.urdf",
            "a1_description/urdf/a1.urdf", "go2_description/urdf/go2.urdf", "romeo_description/urdf/romeo.urdf",
            "talos_data/robots/talos_full_v2.urdf", "g1_description/urdf/g1_29dof_rev_1_0.urdf",
            "bolt_description/robots/bolt.urdf", "tiago_pro_description/robots/tiago_pro.urdf"]


def relerr(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(1e-300, float(np.max(np.abs(b)))))


def parse_ours(path, robot_data=None):
    """(plant, parser) for the model at `path`, finalized, with Drake's default parsing policy."""
    plant = dc.MultibodyPlant(0.0)
    parser = dc.Parser(plant)
    if robot_data is not None:
        parser.package_map().Add("example-robot-data", str(robot_data))
    parser.AddModels(str(path))
    plant.Finalize()
    return plant, parser


def load_ours(path, robot_data=None):
    return parse_ours(path, robot_data)[0]


def load_drake(path, robot_data=None):
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant
    logging.getLogger("drake").setLevel(logging.ERROR)
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    if robot_data is not None:
        parser.package_map().Add("example-robot-data", str(robot_data))
    parser.AddModels(str(path))
    plant.Finalize()
    return plant


def random_state(plant, seed):
    rng = np.random.default_rng(seed)
    q = plant.GetDefaultPositions() + rng.normal(size=plant.num_positions()) * 0.5
    for j in plant._joints:
        if j.type_name() == "quaternion_floating":
            s = j.position_start()
            q[s:s + 4] /= np.linalg.norm(q[s:s + 4])
    n = plant.num_velocities()
    return q, rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)


def subtree_mass(plant, joint):
    """The mass of every body the joint moves."""
    bodies, stack = [], [joint.child_body()]
    while stack:
        b = stack.pop()
        bodies.append(b)
        stack += [j.child_body() for j in plant._joints if j.parent_body() is b]
    return sum(b.default_mass() for b in bodies)


def check_forward_dynamics(ours, context, tau, inverse_dynamics):
    """v̇ = FD(τ) gives back τ through the peer's inverse dynamics; a model whose FD is singular must
    name a joint that moves no mass."""
    try:
        vdot = ours.CalcForwardDynamics(context, tau)
    except RuntimeError as e:
        joint = str(e).split("joint '")[1].split("'")[0]
        assert "singular" in str(e) and subtree_mass(ours, ours.GetJointByName(joint)) == 0
        return
    assert relerr(inverse_dynamics(vdot), tau) < RTOL


def compare_with_drake(ours, drake):
    from pydrake.multibody.tree import JacobianWrtVariable as DJ
    from pydrake.multibody.tree import MultibodyForces as DForces
    assert (ours.num_positions(), ours.num_velocities()) == (drake.num_positions(), drake.num_velocities())
    for j in ours._joints:       # same state layout, joint by joint
        dj = drake.GetJointByName(j.name(), drake.GetModelInstanceByName(ours.GetModelInstanceName(j.model_instance())))
        assert (j.position_start(), j.velocity_start(), j.type_name()) == \
            (dj.position_start(), dj.velocity_start(), dj.type_name()), j.name()
    c, d = ours.CreateDefaultContext(), drake.CreateDefaultContext()
    np.testing.assert_array_equal(ours.GetPositions(c), drake.GetPositions(d))
    for seed in range(3):
        q, v, vdot, tau = random_state(ours, seed)
        ours.SetPositions(c, q)
        ours.SetVelocities(c, v)
        drake.SetPositions(d, q)
        drake.SetVelocities(d, v)
        assert relerr(ours.CalcMassMatrix(c), drake.CalcMassMatrix(d)) < RTOL
        assert relerr(ours.CalcBiasTerm(c), drake.CalcBiasTerm(d)) < RTOL
        assert relerr(ours.CalcGravityGeneralizedForces(c), drake.CalcGravityGeneralizedForces(d)) < RTOL
        f, df = dc.MultibodyForces(ours), DForces(drake)
        ours.CalcForceElementsContribution(c, f)
        drake.CalcForceElementsContribution(d, df)
        np.testing.assert_allclose(f.generalized_forces(), df.generalized_forces(), atol=1e-12)
        assert relerr(ours.CalcInverseDynamics(c, vdot, f), drake.CalcInverseDynamics(d, vdot, df)) < RTOL
        check_forward_dynamics(ours, c, tau, lambda vd: drake.CalcInverseDynamics(d, vd, df))
        assert ours.CalcPotentialEnergy(c) == pytest.approx(drake.CalcPotentialEnergy(d), rel=RTOL, abs=1e-10)
        assert ours.CalcKineticEnergy(c) == pytest.approx(drake.CalcKineticEnergy(d), rel=RTOL)
        assert relerr(ours.CalcCenterOfMassPositionInWorld(c), drake.CalcCenterOfMassPositionInWorld(d)) < RTOL
        p = np.array([0.1, -0.2, 0.3])
        assert relerr(ours.CalcSpatialMomentumInWorldAboutPoint(c, p).get_coeffs(),
                      drake.CalcSpatialMomentumInWorldAboutPoint(d, p).get_coeffs()) < RTOL
        assert relerr(ours.MapVelocityToQDot(c, v), drake.MapVelocityToQDot(d, v)) < RTOL
        A, dA = ours.CalcSpatialAccelerationsFromVdot(c, vdot), drake.CalcSpatialAccelerationsFromVdot(d, vdot)
        assert max(relerr(a.get_coeffs(), da.get_coeffs()) for a, da in zip(A, dA) if np.any(da.get_coeffs())) < RTOL
        frames = [ours.get_frame(i) for i in range(ours.num_frames())]
        for f_b in frames[1:]:
            d_b = drake.GetFrameByName(f_b.name(), drake.GetModelInstanceByName(
                ours.GetModelInstanceName(f_b.model_instance())))
            X, dX = ours.CalcRelativeTransform(c, ours.world_frame(), f_b), drake.CalcRelativeTransform(
                d, drake.world_frame(), d_b)
            np.testing.assert_allclose(X.GetAsMatrix4(), dX.GetAsMatrix4(), atol=1e-12)
        for f_b in frames[1::max(1, len(frames) // 6)]:
            d_b = drake.GetFrameByName(f_b.name(), drake.GetModelInstanceByName(
                ours.GetModelInstanceName(f_b.model_instance())))
            for wrt, dwrt in ((JacobianWrtVariable.kV, DJ.kV), (JacobianWrtVariable.kQDot, DJ.kQDot)):
                J = ours.CalcJacobianSpatialVelocity(c, wrt, f_b, p, ours.world_frame(), f_b)
                dJ = drake.CalcJacobianSpatialVelocity(d, dwrt, d_b, p, drake.world_frame(), d_b)
                np.testing.assert_allclose(J, dJ, atol=1e-10)


def test_iiwa_matches_drake(iiwa_urdf):
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    compare_with_drake(load_ours(iiwa_urdf), load_drake(iiwa_urdf))


@pytest.mark.parametrize("model", ARMS + FLOATING)
def test_example_robot_data_matches_drake(model, robot_data):
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    path = robot_data / "robots" / model
    compare_with_drake(load_ours(path, robot_data), load_drake(path, robot_data))


# --- Pinocchio ------------------------------------------------------------------------------------
class PinocchioMap:
    """Maps our (q, v, τ) to Pinocchio's for the same URDF: joints matched by name; a free base is
    [x y z qx qy qz qw] with v = [v_B; w_B] in the base frame; continuous joints are [cos θ, sin θ]."""

    def __init__(self, ours, model):
        self.ours, self.model = ours, model
        self.free = next((j for j in ours._joints if j.type_name() == "quaternion_floating"), None)

    def q(self, q):
        qp = np.zeros(self.model.nq)
        for jid in range(1, self.model.njoints):
            jm, name = self.model.joints[jid], self.model.names[jid]
            if jm.shortname() == "JointModelFreeFlyer":
                s = self.free.position_start()
                w, x, y, z = q[s:s + 4]
                qp[jm.idx_q:jm.idx_q + 7] = np.r_[q[s + 4:s + 7], x, y, z, w]
                continue
            s = self.ours.GetJointByName(name).position_start()
            qp[jm.idx_q:jm.idx_q + jm.nq] = [np.cos(q[s]), np.sin(q[s])] if jm.nq == 2 else q[s]
        return qp

    def T(self, q):
        """v_pin = T v_ours."""
        T = np.zeros((self.model.nv, self.ours.num_velocities()))
        for jid in range(1, self.model.njoints):
            jm, name = self.model.joints[jid], self.model.names[jid]
            if jm.shortname() == "JointModelFreeFlyer":
                s = self.free.position_start()
                R = dc.Quaternion(q[s:s + 4]).rotation()
                vs = self.free.velocity_start()
                T[jm.idx_v:jm.idx_v + 3, vs + 3:vs + 6] = R.T
                T[jm.idx_v + 3:jm.idx_v + 6, vs:vs + 3] = R.T
            else:
                T[jm.idx_v, self.ours.GetJointByName(name).velocity_start()] = 1.0
        return T


def load_pinocchio(path, floating):
    pin = pytest.importorskip("pinocchio", reason="Pinocchio is not installed (pip install pin)")
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else \
        pin.buildModelFromUrdf(str(path))
    return pin, model


def compare_with_pinocchio(ours, path):
    pin, model = load_pinocchio(path, floating=bool(ours.GetFloatingBaseBodies()))
    data = model.createData()
    m = PinocchioMap(ours, model)
    assert model.nv == ours.num_velocities()
    c = ours.CreateDefaultContext()
    for seed in range(3):
        q, v, vdot, tau = random_state(ours, seed)
        ours.SetPositions(c, q)
        ours.SetVelocities(c, v)
        qp, T = m.q(q), m.T(q)
        vp = T @ v
        # v̇_pin differs from T v̇ by Ṫ v for the free base: d/dt (Rᵀ v_W) = Rᵀ a_W - w_B x v_B
        bias = np.zeros(model.nv)
        if m.free is not None:
            vb = vp[:6]
            bias[:3] = -np.cross(vb[3:], vb[:3])
        Mp = pin.crba(model, data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert relerr(ours.CalcMassMatrix(c), T.T @ Mp @ T) < RTOL
        assert relerr(ours.CalcGravityGeneralizedForces(c), -T.T @ pin.computeGeneralizedGravity(model, data, qp)) \
            < RTOL
        k, out = ours.kernels(), np.zeros(ours.num_velocities())
        k.inverse_dynamics(q, v, vdot, out)
        assert relerr(out, T.T @ pin.rnea(model, data, qp, vp, T @ vdot + bias)) < RTOL
        # CalcForwardDynamics includes joint damping -d∘v; Pinocchio's RNEA has none
        check_forward_dynamics(ours, c, tau, lambda vd: T.T @ pin.rnea(model, data, qp, vp, T @ vd + bias)
                               + ours.GetDampingVector() * v)
        pin.framesForwardKinematics(model, data, qp)
        for fid, frame in enumerate(model.frames):
            if ours.HasFrameNamed(frame.name) and frame.name != "universe":
                X = ours.CalcRelativeTransform(c, ours.world_frame(), ours.GetFrameByName(frame.name))
                np.testing.assert_allclose(X.GetAsMatrix4(), data.oMf[fid].homogeneous, atol=1e-12)
        name = model.frames[len(model.frames) - 1].name
        if ours.HasFrameNamed(name):
            fid = model.getFrameId(name)
            Jp = pin.computeFrameJacobian(model, data, qp, fid, pin.LOCAL_WORLD_ALIGNED)
            J = ours.CalcJacobianSpatialVelocity(c, JacobianWrtVariable.kV, ours.GetFrameByName(name), np.zeros(3),
                                                 ours.world_frame(), ours.world_frame())
            np.testing.assert_allclose(J, np.vstack([Jp[3:], Jp[:3]]) @ T, atol=1e-10)


def test_iiwa_matches_pinocchio(iiwa_urdf):
    compare_with_pinocchio(load_ours(iiwa_urdf), iiwa_urdf)


@pytest.mark.parametrize("model", ARMS[:4] + ["solo_description/robots/solo12.urdf", "a1_description/urdf/a1.urdf",
                                              "talos_data/robots/talos_full_v2.urdf",
                                              "romeo_description/urdf/romeo.urdf"])
def test_example_robot_data_matches_pinocchio(model, robot_data):
    path = robot_data / "robots" / model
    compare_with_pinocchio(load_ours(path, robot_data), path)


# --- The sweep: every model file in example-robot-data ----------------------------------------------
CAUSES = ("mimic", "loop", "name attribute", "gearbox", "inertia", "transmission", "does not exist")


def causes(message: str, rel: str) -> set:
    """The refusal causes a parser's message names (the words both parsers use for them), file name aside."""
    text = message.replace(rel, "").lower()
    return {c for c in CAUSES if c in text}


@dataclass
class SweepEntry:
    ours: object = None           # plant, or the refusal message
    drake: object = None
    pin: object = None            # (pinocchio, model), or the refusal message
    replaced: bool = False        # Drake's policy replaced a nonphysical inertia


def attempt(load):
    try:
        return load()
    except Exception as e:        # a refusal, recorded with its message
        return f"{type(e).__name__}: {e}"


@pytest.fixture(scope="module")
def sweep(robot_data):
    """Each model file parsed once by us, pydrake and Pinocchio (URDF only)."""
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    pin = pytest.importorskip("pinocchio", reason="Pinocchio is not installed (pip install pin)")
    quiet = logging.getLogger("dynamics_cy")
    level, quiet.level = quiet.level, logging.ERROR      # the parsers' warnings are the models', not ours
    files = sorted(p.relative_to(robot_data / "robots").as_posix() for p in (robot_data / "robots").rglob("*")
                   if p.suffix in (".urdf", ".sdf"))
    entries = {}
    for rel in files:
        path = robot_data / "robots" / rel
        e = SweepEntry(drake=attempt(lambda: load_drake(path, robot_data)))
        parsed = attempt(lambda: parse_ours(path, robot_data))
        if isinstance(parsed, str):
            e.ours = parsed
        else:
            e.ours = parsed[0]
            e.replaced = any("replaced, as Drake does" in d for d in parsed[1].diagnostics)
        if path.suffix == ".urdf":
            floating = not isinstance(e.ours, str) and bool(e.ours.GetFloatingBaseBodies())
            e.pin = attempt(lambda: (pin, pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
                                     if floating else pin.buildModelFromUrdf(str(path))))
        entries[rel] = e
    quiet.setLevel(level)
    return entries


def test_sweep_loads_a_model_exactly_when_pydrake_does(sweep):
    assert len(sweep) >= 70
    for rel, e in sweep.items():
        ours_ok, drake_ok = not isinstance(e.ours, str), not isinstance(e.drake, str)
        assert ours_ok == drake_ok, f"{rel}: ours {e.ours if not ours_ok else 'loads'}, pydrake " \
                                    f"{e.drake if not drake_ok else 'loads'}"
        if not ours_ok:            # both refuse: for the same cause
            assert causes(e.ours, rel) and causes(e.ours, rel) == causes(e.drake, rel), f"{rel}:\n{e.ours}\n{e.drake}"


def test_sweep_strict_parsing_refuses_what_pydrakes_refuses(sweep, robot_data):
    """Under SetStrictParsing every warning is an error: a model loads here exactly when it loads in
    pydrake, i.e. both warn on the same models (Drake's warnings for what it ignores included)."""
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    def strict(make_plant, make_parser, path):
        plant = make_plant(0.0)
        parser = make_parser(plant)
        parser.SetStrictParsing()
        parser.package_map().Add("example-robot-data", str(robot_data))
        return attempt(lambda: parser.AddModels(str(path)))
    quiet = logging.getLogger("dynamics_cy")
    level, quiet.level = quiet.level, logging.ERROR
    differ, loaded = [], 0
    for rel in sweep:
        path = robot_data / "robots" / rel
        ours = not isinstance(strict(dc.MultibodyPlant, dc.Parser, path), str)
        theirs = not isinstance(strict(MultibodyPlant, Parser, path), str)
        loaded += ours
        if ours != theirs:
            differ.append(f"{rel}: ours {'loads' if ours else 'refuses'}, pydrake {'loads' if theirs else 'refuses'}")
    quiet.setLevel(level)
    assert not differ and loaded >= 30, differ


def dynamics_errors(ours, peer_M, peer_g, peer_id, seeds=(0, 1)):
    """Max relative errors of M (the facade's and the kernel's), τ_g and inverse dynamics against a
    peer's at random states."""
    c, k = ours.CreateDefaultContext(), ours.kernels()
    n = ours.num_velocities()
    err = 0.0
    for seed in seeds:
        q, v, vdot, _ = random_state(ours, seed)
        ours.SetPositions(c, q)
        ours.SetVelocities(c, v)
        tau, M = np.zeros(n), np.zeros((n, n))
        k.inverse_dynamics(q, v, vdot, tau)
        k.mass_matrix(q, M)
        Mp = peer_M(q)
        err = max(err, relerr(ours.CalcMassMatrix(c), Mp), relerr(M, Mp), relerr(ours.CalcGravityGeneralizedForces(c),
                  peer_g(q)), relerr(tau, peer_id(q, v, vdot)))
    return err


def check_layout_and_frames(ours, drake):
    """The same counts, joints at the same coordinates with the same damping, the same frames in the same
    order (those Drake's joints add at Finalize included), at the same poses in a random state."""
    from pydrake.multibody.tree import FrameIndex
    for j in ours._joints:
        dj = drake.GetJointByName(j.name(), drake.GetModelInstanceByName(ours.GetModelInstanceName(j.model_instance())))
        assert (j.position_start(), j.velocity_start()) == (dj.position_start(), dj.velocity_start()), j.name()
    counts = ("num_bodies", "num_joints", "num_actuators", "num_model_instances", "num_positions", "num_velocities")
    assert [getattr(ours, n)() for n in counts] == [getattr(drake, n)() for n in counts]
    damping = np.zeros(drake.num_velocities())
    for j in map(drake.get_joint, drake.GetJointIndices()):
        damping[j.velocity_start():j.velocity_start() + j.num_velocities()] = j.default_damping_vector()
    np.testing.assert_array_equal(ours.GetDampingVector(), damping)
    frames = [ours.get_frame(i) for i in range(ours.num_frames())]
    theirs = [drake.get_frame(FrameIndex(i)) for i in range(drake.num_frames())]
    assert [f.name() for f in frames] == [f.name() for f in theirs]
    c, d = ours.CreateDefaultContext(), drake.CreateDefaultContext()
    q = random_state(ours, 3)[0]
    ours.SetPositions(c, q)
    drake.SetPositions(d, q)
    for f, df in zip(frames, theirs):
        np.testing.assert_allclose(ours.CalcRelativeTransform(c, ours.world_frame(), f).GetAsMatrix4(),
                                   drake.CalcRelativeTransform(d, drake.world_frame(), df).GetAsMatrix4(),
                                   atol=1e-12, err_msg=f.name())


def drake_errors(ours, drake):
    d = drake.CreateDefaultContext()

    def at(q, v=None):
        drake.SetPositions(d, q)
        drake.SetVelocities(d, np.zeros(drake.num_velocities()) if v is None else v)
        return d

    def inverse_dynamics(q, v, vdot):
        from pydrake.multibody.tree import MultibodyForces
        f = MultibodyForces(drake)
        drake.CalcForceElementsContribution(at(q, v), f)
        f.mutable_generalized_forces()[:] = 0.0       # gravity only: our kernel leaves damping to the caller
        return drake.CalcInverseDynamics(d, vdot, f)
    return dynamics_errors(ours, lambda q: drake.CalcMassMatrix(at(q)),
                           lambda q: drake.CalcGravityGeneralizedForces(at(q)), inverse_dynamics)


def test_sweep_dynamics_match_pydrake(sweep):
    compared = [rel for rel, e in sweep.items() if not isinstance(e.ours, str) and not isinstance(e.drake, str)]
    assert len(compared) >= 60
    for rel in compared:
        check_layout_and_frames(sweep[rel].ours, sweep[rel].drake)
    worst = {rel: drake_errors(sweep[rel].ours, sweep[rel].drake) for rel in compared}
    assert max(worst.values()) < RTOL, {rel: err for rel, err in worst.items() if err >= RTOL}


def pinocchio_errors(ours, pin, model):
    data, m = model.createData(), PinocchioMap(ours, model)

    def mass_matrix(q):
        T, Mp = m.T(q), pin.crba(model, data, m.q(q))
        return T.T @ (np.triu(Mp) + np.triu(Mp, 1).T) @ T

    def inverse_dynamics(q, v, vdot):
        T = m.T(q)
        vp, bias = T @ v, np.zeros(model.nv)
        if m.free is not None:        # d/dt (Rᵀ v_W) = Rᵀ a_W − w_B × v_B
            bias[:3] = -np.cross(vp[3:6], vp[:3])
        return T.T @ pin.rnea(model, data, m.q(q), vp, T @ vdot + bias)
    return dynamics_errors(ours, mass_matrix, lambda q: -m.T(q).T @ pin.computeGeneralizedGravity(model, data, m.q(q)),
                           inverse_dynamics)


def with_our_inertias(path, ours) -> str:
    """The URDF at `path` with every link's <inertial> as we parsed it (m, Bcm, I_BBcm_B): for models
    whose inertias Drake's policy replaced, so that Pinocchio, which keeps them as written, computes
    with the same bodies (the replacement itself is checked against pydrake)."""
    root = ET.parse(path).getroot()
    for link in root.iter("link"):
        name = link.get("name")
        if name == "world" or not ours.HasBodyNamed(name):
            continue
        body = ours.GetBodyByName(name)
        m, p = body.default_mass(), body.default_com()
        I = body.default_rotational_inertia().ShiftToCenterOfMass(m, p).CopyToFullMatrix3() if m > 0 else \
            np.zeros((3, 3))
        for old in link.findall("inertial"):
            link.remove(old)
        inertial = ET.SubElement(link, "inertial")
        ET.SubElement(inertial, "origin", xyz=" ".join(repr(float(x)) for x in p), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=repr(float(m)))
        ET.SubElement(inertial, "inertia", **{k: repr(float(I[i, j])) for k, (i, j) in dict(
            ixx=(0, 0), ixy=(0, 1), ixz=(0, 2), iyy=(1, 1), iyz=(1, 2), izz=(2, 2)).items()})
    return ET.tostring(root, encoding="unicode")


def test_sweep_dynamics_match_pinocchio(sweep, robot_data):
    compared = [rel for rel, e in sweep.items() if not isinstance(e.ours, str)
                and not isinstance(e.pin, (str, type(None)))]
    assert len(compared) >= 60
    worst = {}
    for rel in compared:
        e = sweep[rel]
        pin, model = e.pin
        if e.replaced:
            text = with_our_inertias(robot_data / "robots" / rel, e.ours)
            model = pin.buildModelFromXML(text, pin.JointModelFreeFlyer()) if e.ours.GetFloatingBaseBodies() else \
                pin.buildModelFromXML(text)
        worst[rel] = pinocchio_errors(e.ours, pin, model)
    assert max(worst.values()) < RTOL, {rel: err for rel, err in worst.items() if err >= RTOL}


def test_sweep_summary(sweep):
    """The README's table (pytest -s prints it): models, and how many each implementation loads."""
    def loaded(attr):
        return sum(not isinstance(getattr(e, attr), (str, type(None))) for e in sweep.values())
    urdf = [e for rel, e in sweep.items() if rel.endswith(".urdf")]
    both = sum(not isinstance(e.ours, str) and not isinstance(e.drake, str) for e in sweep.values())
    pin = sum(not isinstance(e.ours, str) and not isinstance(e.pin, (str, type(None))) for e in sweep.values())
    print(f"\nmodels {len(sweep)} ({len(urdf)} URDF), pydrake loads {loaded('drake')}, Pinocchio loads "
          f"{loaded('pin')} (URDF only), we load {loaded('ours')}; compared with pydrake {both}, with Pinocchio "
          f"{pin} (inertias replaced by Drake's policy: {sum(e.replaced for e in sweep.values())})")
    assert loaded("ours") == loaded("drake") == both
