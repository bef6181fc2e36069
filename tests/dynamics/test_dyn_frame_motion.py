"""Frames' relative velocities and their accelerations (Frame.CalcSpatialAcceleration[InWorld],
CalcRelativeSpatialVelocity[InWorld], CalcRelativeSpatialAcceleration[InWorld]): against pydrake on the same
model at random states, and against finite differences of the frames' velocities along the motion."""
import numpy as np
import pytest

import dynamics_cy as dc

URDF = """<?xml version="1.0"?>
<robot name="chain">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.2" izz="0.15" ixy="0.01" ixz="0" iyz="0"/>
    </inertial></link>
  <link name="l1"><inertial><origin xyz="0.1 0.02 0.2"/><mass value="1.5"/>
    <inertia ixx="0.05" iyy="0.04" izz="0.03" ixy="0" ixz="0.002" iyz="0"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0 0.1 0.15"/><mass value="0.8"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.01" ixy="0" ixz="0" iyz="0.001"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0.1 0 0.3" rpy="0.2 0 0.1"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/><dynamics damping="0.3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0.05 0.4"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
</robot>
"""
OFFSETS = {"F": ("l1", [0.1, -0.2, 0.3], [0.05, 0.2, -0.1]), "G": ("l2", [-0.3, 0.1, 0.6], [0.2, 0.0, 0.1]),
           "H": ("base", [0.4, 0.2, -0.1], [0.0, 0.3, 0.0])}


def build(lib, math):
    plant = lib.MultibodyPlant(0.0)
    lib.Parser(plant).AddModelsFromString(URDF, "urdf")
    for name, (body, rpy, p) in OFFSETS.items():
        X = math.RigidTransform(math.RollPitchYaw(np.array(rpy)), np.array(p))
        plant.AddFrame(lib.FixedOffsetFrame(name, plant.GetFrameByName(body), X))
    plant.Finalize()
    return plant


def state(plant, rng):
    q = rng.normal(size=plant.num_positions())
    q[:4] /= np.linalg.norm(q[:4])
    return q, rng.normal(size=plant.num_velocities())


def frames(plant):
    return [plant.world_frame()] + [plant.GetFrameByName(n) for n in ("F", "G", "H", "l2")]


def motions(plant, ctx):
    """Every frame's accelerations and relative velocities and accelerations against every other, as arrays."""
    out = []
    fs = frames(plant)
    for C in fs:
        out.append(C.CalcSpatialAccelerationInWorld(ctx).get_coeffs())
        for B in fs:
            out.append(C.CalcRelativeSpatialVelocityInWorld(ctx, B).get_coeffs())
            out.append(C.CalcRelativeSpatialAccelerationInWorld(ctx, B).get_coeffs())
            for M in fs[:3]:
                out.append(C.CalcSpatialAcceleration(ctx, B, M).get_coeffs())
                out.append(C.CalcRelativeSpatialVelocity(ctx, B, M, fs[-1]).get_coeffs())
                out.append(C.CalcRelativeSpatialAcceleration(ctx, B, M, fs[-1]).get_coeffs())
    return np.array(out)


def test_frame_motions_match_pydrake():
    pytest.importorskip("pydrake")
    from pydrake import math as pmath
    from pydrake.multibody import parsing, tree
    from pydrake.multibody import plant as pplant

    class Drake:
        MultibodyPlant, Parser, FixedOffsetFrame = pplant.MultibodyPlant, parsing.Parser, tree.FixedOffsetFrame
    ours, theirs = build(dc, dc), build(Drake, pmath)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, v = state(ours, rng)
        a, b = ours.CreateDefaultContext(), theirs.CreateDefaultContext()
        for plant, ctx in ((ours, a), (theirs, b)):
            plant.SetPositions(ctx, q)
            plant.SetVelocities(ctx, v)
        np.testing.assert_allclose(motions(ours, a), motions(theirs, b), rtol=1e-9, atol=1e-9)


def test_acceleration_is_the_rate_of_the_velocity_along_the_motion():
    """A_MF_E = d/dt V_MF_E (E = M) along the free motion (q̇ = N v, v̇ from the forward dynamics), by central
    differences; the relative forms are differences of the absolute ones."""
    plant = build(dc, dc)
    assert plant.num_positions() == 9                 # a free base (quaternion) and two revolute joints
    ctx = plant.CreateDefaultContext()
    q, v = state(plant, np.random.default_rng(3))
    fs = frames(plant)

    plant.SetPositions(ctx, q)
    plant.SetVelocities(ctx, v)
    vdot = plant.CalcForwardDynamics(ctx, np.zeros(plant.num_velocities()))
    qdot = plant.MapVelocityToQDot(ctx, v)
    h = 1e-6

    def velocities(sign):
        c = plant.CreateDefaultContext()
        plant.SetPositions(c, q + sign * h * qdot)
        plant.SetVelocities(c, v + sign * h * vdot)
        return {(i, j): fs[i].CalcSpatialVelocity(c, fs[j], fs[j]).get_coeffs()
                for i in range(len(fs)) for j in range(len(fs))}

    plus, minus = velocities(1), velocities(-1)
    for (i, j), V in plus.items():
        A = fs[i].CalcSpatialAcceleration(ctx, fs[j], fs[j]).get_coeffs()
        np.testing.assert_allclose(A, (V - minus[(i, j)]) / (2 * h), atol=2e-6, err_msg=f"{i} in {j}")
        rel = fs[i].CalcRelativeSpatialAcceleration(ctx, fs[j], fs[0], fs[0]).get_coeffs()
        np.testing.assert_allclose(rel, fs[i].CalcSpatialAccelerationInWorld(ctx).get_coeffs()
                                   - fs[j].CalcSpatialAccelerationInWorld(ctx).get_coeffs(), atol=1e-12)
