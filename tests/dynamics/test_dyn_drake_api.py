"""Code ported from pydrake gives the same model: constructor overloads, URDF floating joints, the frames
WeldFrames adds, CalcNonConservativePower. Each test checks dynamics_cy, then pydrake when installed."""
import logging
from types import SimpleNamespace

import numpy as np
import pytest

import dynamics_cy as dc

NAMES = ("MultibodyPlant", "Parser", "RevoluteJoint", "PrismaticJoint", "FixedOffsetFrame", "SpatialInertia",
         "MultibodyForces", "RigidTransform", "RollPitchYaw", "FrameIndex")
INF = np.inf


def apis() -> dict:
    """The same names from dynamics_cy and, if it is installed, from pydrake."""
    out = {"dynamics_cy": SimpleNamespace(**{n: getattr(dc, n) for n in NAMES})}
    try:
        import pydrake.math
        import pydrake.multibody.parsing
        import pydrake.multibody.plant
        import pydrake.multibody.tree
    except ImportError:
        return out
    logging.getLogger("drake").setLevel(logging.ERROR)
    mods = (pydrake.math, pydrake.multibody.parsing, pydrake.multibody.plant, pydrake.multibody.tree)
    out["pydrake"] = SimpleNamespace(**{n: next(getattr(m, n) for m in mods if hasattr(m, n)) for n in NAMES})
    return out


def each_api(build) -> dict:
    return {name: build(m) for name, m in apis().items()}


# (args, kwargs) after the axis for joints j1 and j2, and the damping, lower and upper limits they give
REVOLUTE_FORMS = {
    "damping positional": ((((0.7,), {}), ((0.3,), {})), ([0.7, 0.3], [-INF, -INF], [INF, INF])),
    "damping keyword": ((((), {"damping": 0.7}), ((), {"damping": 0.3})), ([0.7, 0.3], [-INF, -INF], [INF, INF])),
    "limits positional": ((((-1.0, 2.0), {}), ((-0.5, 0.5, 0.3), {})), ([0.0, 0.3], [-1.0, -0.5], [2.0, 0.5])),
    "limits keyword": ((((), {"pos_lower_limit": -1.0, "pos_upper_limit": 2.0, "damping": 0.7}),
                        ((-0.5,), {"pos_upper_limit": 0.5})), ([0.7, 0.0], [-1.0, -0.5], [2.0, 0.5])),
}


def revolute_pair(m, forms):
    """Two boxes on revolute joints about y, the joints built with the given constructor arguments."""
    plant = m.MultibodyPlant(0.0)
    M = m.SpatialInertia.SolidBoxWithMass(2.0, 0.1, 0.2, 0.3)
    b1, b2 = plant.AddRigidBody("b1", M), plant.AddRigidBody("b2", M)
    F = plant.AddFrame(m.FixedOffsetFrame("F", b1.body_frame(), m.RigidTransform([0.1, 0.0, -0.4])))
    axis = np.array([0.0, 1.0, 0.0])
    (a1, k1), (a2, k2) = forms
    j1 = plant.AddJoint(m.RevoluteJoint("j1", plant.world_frame(), b1.body_frame(), axis, *a1, **k1))
    j2 = plant.AddJoint(m.RevoluteJoint("j2", F, b2.body_frame(), axis, *a2, **k2))
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, [0.3, -0.2])
    plant.SetVelocities(ctx, [1.5, -0.8])
    forces = m.MultibodyForces(plant)
    plant.CalcForceElementsContribution(ctx, forces)
    tau = plant.CalcInverseDynamics(ctx, np.array([0.4, -1.1]), forces)
    return ([j1.default_damping(), j2.default_damping()], plant.GetPositionLowerLimits().tolist(),
            plant.GetPositionUpperLimits().tolist(), tau)


@pytest.mark.parametrize("form", REVOLUTE_FORMS)
def test_revolute_joint_constructor_overloads_match_drake(form):
    forms, expected = REVOLUTE_FORMS[form]
    results = each_api(lambda m: revolute_pair(m, forms))
    ours = results["dynamics_cy"]
    assert tuple(ours[:3]) == expected
    undamped = revolute_pair(apis()["dynamics_cy"], (((), {}), ((), {})))[3]
    np.testing.assert_allclose(ours[3] - undamped, np.multiply(expected[0], [1.5, -0.8]), atol=1e-12)   # +d∘v
    if "pydrake" in results:
        drake = results["pydrake"]
        assert ours[:3] == drake[:3]
        np.testing.assert_allclose(ours[3], drake[3], rtol=1e-12)


@pytest.mark.parametrize("args, kwargs", [((), {"pos_lower_limit": -1.0}), ((-1.0,), {"damping": 0.2}),
                                          ((-1.0, 1.0, 0.1, 2.0), {})])
def test_revolute_joint_rejects_what_drake_rejects(args, kwargs):
    for m in apis().values():
        plant = m.MultibodyPlant(0.0)
        b = plant.AddRigidBody("b", m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
        with pytest.raises(TypeError):
            m.RevoluteJoint("j", plant.world_frame(), b.body_frame(), [0.0, 0.0, 1.0], *args, **kwargs)


def test_prismatic_joint_fifth_argument_is_the_lower_limit():
    def build(m):
        plant = m.MultibodyPlant(0.0)
        b = plant.AddRigidBody("b", m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
        j = m.PrismaticJoint("j", plant.world_frame(), b.body_frame(), [0.0, 0.0, 1.0], -0.5)
        k = m.PrismaticJoint("k", plant.world_frame(), b.body_frame(), [0.0, 0.0, 1.0], damping=0.3)
        return [(x.position_lower_limits().tolist(), x.position_upper_limits().tolist(), x.default_damping())
                for x in (j, k)]

    results = each_api(build)
    assert results["dynamics_cy"] == [([-0.5], [INF], 0.0), ([-INF], [INF], 0.3)]
    assert len({repr(r) for r in results.values()}) == 1


FLOATING_URDF = """<robot name="r">
  <link name="world"/>
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <link name="l2"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <joint name="base_float" type="floating"><parent link="world"/><child link="base"/>
    <origin xyz="1 2 3" rpy="0.1 0.2 0.3"/></joint>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="l2_float" type="floating"><parent link="l1"/><child link="l2"/></joint>
</robot>"""


def test_urdf_floating_joint_is_ignored_as_drake_does():
    """The child of a floating joint is a free body whose joint is named after it, at the identity pose."""
    def build(m):
        plant = m.MultibodyPlant(0.0)
        m.Parser(plant).AddModelsFromString(FLOATING_URDF, "urdf")
        plant.Finalize()
        joints = [plant.get_joint(i) for i in plant.GetJointIndices()]
        return ([(j.name(), j.type_name(), j.position_start(), j.frame_on_parent().name()) for j in joints],
                [plant.HasJointNamed(n) for n in ("base_float", "l2_float", "base", "l2")],
                [plant.get_frame(m.FrameIndex(i)).name() for i in range(plant.num_frames())],
                plant.GetDefaultPositions().tolist())

    results = each_api(build)
    joints, named, frames, q0 = results["dynamics_cy"]
    assert joints == [("j1", "revolute", 7, "j1_parent"), ("base", "quaternion_floating", 0, "world"),
                      ("l2", "quaternion_floating", 8, "world")]
    assert named == [False, False, True, True] and "base_float_parent" not in frames
    assert q0 == [1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    if "pydrake" in results:
        assert results["dynamics_cy"] == results["pydrake"]


def test_weld_frames_adds_drake_frame_for_non_identity_pose():
    """At Finalize each weld with X_FM ≠ I gets a frame '<joint>_<F>_F' (X_FM in F), in forest order."""
    def build(m):
        plant = m.MultibodyPlant(0.0)
        M = m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.2, 0.3)
        b = {n: plant.AddRigidBody(n, M) for n in "abcde"}
        other = plant.AddModelInstance("other")
        b.update({n: plant.AddRigidBody(n, other, M) for n in "fg"})
        X = m.RigidTransform(m.RollPitchYaw(0.1, 0.2, 0.3), [1.0, 2.0, 3.0])
        fo = plant.AddFrame(m.FixedOffsetFrame("fo", b["a"].body_frame(), m.RigidTransform([0.0, 0.0, 1.0])))
        plant.WeldFrames(b["a"].body_frame(), b["d"].body_frame(), X)
        plant.AddJoint(m.RevoluteJoint("rev", b["d"].body_frame(), b["e"].body_frame(), [0.0, 0.0, 1.0]))
        plant.WeldFrames(plant.world_frame(), b["c"].body_frame(), X)
        plant.WeldFrames(fo, b["b"].body_frame(), X)
        plant.WeldFrames(plant.world_frame(), b["a"].body_frame())                 # identity: no frame
        plant.WeldFrames(b["e"].body_frame(), b["f"].body_frame(), X)              # into another instance
        plant.WeldFrames(b["f"].body_frame(), b["g"].body_frame(), m.RigidTransform([1e-300, 0.0, 0.0]))
        plant.Finalize()
        ctx = plant.CreateDefaultContext()
        plant.SetPositions(ctx, [0.7])
        frames = [plant.get_frame(m.FrameIndex(i)) for i in range(plant.num_frames())]
        return [(f.name(), f.body().name(), int(f.model_instance()), f.GetFixedPoseInBodyFrame().GetAsMatrix4(),
                 plant.CalcRelativeTransform(ctx, plant.world_frame(), f).GetAsMatrix4()) for f in frames]

    results = each_api(build)
    ours = results["dynamics_cy"]
    assert [f[:3] for f in ours[8:]] == [("fo", "a", 1), ("world_welds_to_c_world_F", "world", 1),
                                         ("a_welds_to_d_a_F", "a", 1), ("e_welds_to_f_e_F", "e", 2),
                                         ("f_welds_to_g_f_F", "f", 2), ("fo_welds_to_b_fo_F", "a", 1)]
    np.testing.assert_allclose(ours[-1][3][:3, 3], [1.0, 2.0, 4.0], rtol=1e-15)   # X_A,fo X_FM
    if "pydrake" in results:
        drake = results["pydrake"]
        assert [f[:3] for f in ours] == [f[:3] for f in drake]
        for f, d in zip(ours, drake):
            np.testing.assert_allclose(f[3], d[3], atol=1e-15)
            np.testing.assert_allclose(f[4], d[4], atol=1e-12)


def test_non_conservative_power_is_zero_as_in_drake(iiwa_urdf):
    """Drake sums the power of its force elements; joint damping is not one, so its power -vᵀ(d∘v) is
    left out although CalcForceElementsContribution applies the damping torque."""
    def build(m):
        plant = m.MultibodyPlant(0.0)
        m.Parser(plant).AddModels(str(iiwa_urdf))
        plant.Finalize()
        ctx = plant.CreateDefaultContext()
        rng = np.random.default_rng(0)
        plant.SetPositions(ctx, rng.uniform(-1, 1, 7))
        plant.SetVelocities(ctx, rng.uniform(-1, 1, 7))
        forces = m.MultibodyForces(plant)
        plant.CalcForceElementsContribution(ctx, forces)
        v = plant.GetVelocities(ctx)
        return plant.CalcNonConservativePower(ctx), forces.generalized_forces(), v

    results = each_api(build)
    power, tau_damping, v = results["dynamics_cy"]
    assert power == 0.0
    np.testing.assert_allclose(tau_damping, -0.5 * v, rtol=1e-15)                # iiwa14.urdf: damping 0.5
    if "pydrake" in results:
        assert results["pydrake"][0] == 0.0
        np.testing.assert_allclose(tau_damping, results["pydrake"][1], rtol=1e-15)


def test_a_joint_that_moves_no_mass_finalizes_as_in_drake():
    """Drake's Finalize checks no inertia: a massless terminal body on a revolute joint finalizes and
    its M is singular; Drake's simulator stops at its first step, CalcForwardDynamics here raises
    naming the joint."""
    text = """<robot name="r"><link name="a"><inertial><mass value="1"/>
      <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"/>
      <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>"""

    def build(m):
        plant = m.MultibodyPlant(0.0)
        m.Parser(plant).AddModelsFromString(text, "urdf")
        plant.Finalize()
        return plant, plant.CalcMassMatrix(plant.CreateDefaultContext())
    results = each_api(build)
    plant, M = results["dynamics_cy"]
    assert M[6, 6] == 0.0
    with pytest.raises(RuntimeError, match="joint 'j' is singular"):
        plant.CalcForwardDynamics(plant.CreateDefaultContext(), np.zeros(7))
    if "pydrake" in results:
        from pydrake.systems.analysis import Simulator
        drake, dM = results["pydrake"]
        np.testing.assert_array_equal(M, dM)
        with pytest.raises(RuntimeError, match="connects body a to body b is not positive-definite"):
            Simulator(drake).AdvanceTo(0.001)


ROTOR_URDF = """<robot name="r" xmlns:drake="http://drake.mit.edu">
{links}
<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.4" rpy="0.1 0.2 0"/>
<axis xyz="0 0 1"/><limit effort="10"/></joint>
<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0 0.4"/>
<axis xyz="0.3 1 0"/><limit effort="10"/></joint>
<transmission name="t1"><type>SimpleTransmission</type><joint name="j1"/><actuator name="m1">
<drake:rotor_inertia value="0.02"/><drake:gear_ratio value="50"/></actuator></transmission>
<transmission name="t2"><type>SimpleTransmission</type><joint name="j2"/><actuator name="m2">
<drake:rotor_inertia value="0.5"/></actuator></transmission>
</robot>""".format(links="".join(
    f'<link name="{n}"><inertial><origin xyz="0.1 0.02 0.3"/><mass value="1.5"/><inertia ixx="0.1" '
    f'iyy="0.12" izz="0.05" ixy="0.01" ixz="0" iyz="0"/></inertial></link>' for n in "abc"))


def parsed_by_both(text: str, kind: str):
    """(ours, pydrake's) plants of the same model text, finalized; skips without pydrake."""
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    from pydrake.multibody.parsing import Parser as DrakeParser
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    ours, drake = dc.MultibodyPlant(0.0), DrakePlant(0.0)
    dc.Parser(ours).AddModelsFromString(text, kind)
    DrakeParser(drake).AddModelsFromString(text, kind)
    ours.Finalize()
    drake.Finalize()
    return ours, drake


def test_reflected_rotor_inertia_is_drakes():
    """<drake:rotor_inertia> and <drake:gear_ratio>: ρ² I_r on M's diagonal for the actuated joint, in
    the mass matrix, inverse dynamics and forward dynamics (a floating base, so the free joint's
    block is coupled to it), as pydrake computes them."""
    ours, drake = parsed_by_both(ROTOR_URDF, "urdf")
    from pydrake.multibody.tree import MultibodyForces as DrakeForces
    for a, b in zip(map(ours.get_joint_actuator, ours.GetJointActuatorIndices()),
                    map(drake.get_joint_actuator, drake.GetJointActuatorIndices())):
        assert (a.default_rotor_inertia(), a.default_gear_ratio(), a.default_reflected_inertia()) == \
            (b.default_rotor_inertia(), b.default_gear_ratio(), b.default_reflected_inertia())
    c, d, k = ours.CreateDefaultContext(), drake.CreateDefaultContext(), ours.kernels()
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = rng.normal(size=ours.num_positions())
        q[:4] /= np.linalg.norm(q[:4])
        v, vdot = rng.normal(size=ours.num_velocities()), rng.normal(size=ours.num_velocities())
        ours.SetPositions(c, q)
        ours.SetVelocities(c, v)
        drake.SetPositions(d, q)
        drake.SetVelocities(d, v)
        M = drake.CalcMassMatrix(d)
        forces = DrakeForces(drake)
        drake.CalcForceElementsContribution(d, forces)
        tau = drake.CalcInverseDynamics(d, vdot, forces)
        np.testing.assert_allclose(ours.CalcMassMatrix(c), M, rtol=0, atol=1e-12 * np.abs(M).max())
        np.testing.assert_allclose(ours.CalcMassMatrixViaInverseDynamics(c), M, rtol=0, atol=1e-12 * np.abs(M).max())
        out, vdot_ours = np.zeros_like(v), np.zeros_like(v)
        k.inverse_dynamics(q, v, vdot, out)
        np.testing.assert_allclose(out, tau, rtol=0, atol=1e-12 * np.abs(tau).max())
        k.forward_dynamics(q, v, out, vdot_ours)
        np.testing.assert_allclose(vdot_ours, vdot, rtol=0, atol=1e-10)
    assert M[6, 6] > 50.0      # the 2500 · 0.02 = 50 kg·m² of j1's rotor is in it
    with pytest.raises(RuntimeError, match="before Finalize"):
        ours.get_joint_actuator(ours.GetJointActuatorIndices()[0]).set_default_rotor_inertia(1.0)


ROTOR_SDF = """<sdf version="1.9"><model name="m">
<link name="a"><inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.2</iyy><izz>0.25</izz></inertia></inertial></link>
<link name="b"><pose>0 0 0.5 0 0 0</pose><inertial><mass>1</mass><pose>0.1 0 0 0 0 0</pose>
<inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
<joint name="w" type="fixed"><parent>world</parent><child>a</child></joint>
<joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 1 0</xyz></axis>
<drake:rotor_inertia>1.5</drake:rotor_inertia><drake:gear_ratio>30</drake:gear_ratio></joint>
</model></sdf>"""


def test_sdformat_rotor_inertia_and_gear_ratio_are_drakes():
    ours, drake = parsed_by_both(ROTOR_SDF, "sdf")
    a, b = ours.GetJointActuatorByName("j"), drake.GetJointActuatorByName("j")
    assert (a.default_rotor_inertia(), a.default_gear_ratio()) == (b.default_rotor_inertia(), b.default_gear_ratio())
    np.testing.assert_allclose(ours.CalcMassMatrix(ours.CreateDefaultContext()),
                               drake.CalcMassMatrix(drake.CreateDefaultContext()), rtol=1e-14)
