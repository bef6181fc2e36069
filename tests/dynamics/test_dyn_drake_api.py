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
