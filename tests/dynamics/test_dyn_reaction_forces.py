"""Joint reaction forces (MultibodyPlant.CalcReactionForces, Kernels.reaction_forces): against pydrake's
reaction_forces port on the iiwa with a payload welded to its flange at random states, and against the
statics of a hanging payload (f = m g, τ = p × m g)."""
import logging

import numpy as np
import pytest

import dynamics_cy as dc
from tests.alloc import net_and_peak
from tests.conftest import IIWA_URDF

MASS, P_COM = 1.7, np.array([0.02, -0.01, 0.08])     # the payload's mass and p_PoPcm_P
X_7P = ((0.3, -0.2, 0.5), (0.01, 0.02, 0.05))        # rpy, p of the payload's frame P on iiwa_link_7


def build(lib, math, tree):
    plant = lib.MultibodyPlant(0.0)
    iiwa = lib.Parser(plant).AddModels(str(IIWA_URDF))[0]
    payload = plant.AddRigidBody("payload", iiwa, tree.SpatialInertia(
        MASS, P_COM, tree.UnitInertia(0.02, 0.025, 0.015, 0.001, 0.0, 0.0005)))
    X = math.RigidTransform(math.RollPitchYaw(np.array(X_7P[0])), np.array(X_7P[1]))
    plant.WeldFrames(plant.GetFrameByName("iiwa_link_7"), payload.body_frame(), X)
    plant.Finalize()
    return plant


def ours():
    return build(dc, dc, dc)


def drake():
    from pydrake import math
    from pydrake.multibody import parsing, plant, tree
    logging.getLogger("drake").setLevel(logging.ERROR)

    class Lib:
        MultibodyPlant, Parser = plant.MultibodyPlant, parsing.Parser
    return build(Lib, math, tree)


def test_matches_pydrake_reaction_forces_port():
    pytest.importorskip("pydrake")
    theirs, mine = drake(), ours()
    rng = np.random.default_rng(3)
    names = [mine.get_joint(dc.JointIndex(j)).name() for j in range(mine.num_joints())]
    for _ in range(5):
        q, v, u = rng.normal(size=7), rng.normal(size=7), 20 * rng.normal(size=7)
        ctx = theirs.CreateDefaultContext()
        theirs.SetPositions(ctx, q)
        theirs.SetVelocities(ctx, v)
        theirs.get_actuation_input_port().FixValue(ctx, u)
        vdot = theirs.get_generalized_acceleration_output_port().Eval(ctx)
        expected = theirs.get_reaction_forces_output_port().Eval(ctx)
        by_name = {theirs.get_joint(j).name(): expected[k].get_coeffs()      # no removed joints: ordinal = index
                   for k, j in enumerate(theirs.GetJointIndices())}
        mctx = mine.CreateDefaultContext()
        mine.SetPositions(mctx, q)
        mine.SetVelocities(mctx, v)
        got = mine.CalcReactionForces(mctx, vdot)
        assert len(got) == len(by_name)
        for name, F in zip(names, got):
            scale = max(1.0, np.abs(by_name[name]).max())
            np.testing.assert_allclose(F.get_coeffs(), by_name[name], atol=1e-9 * scale, err_msg=name)


def weld_row(plant) -> int:
    return [plant.get_joint(dc.JointIndex(j)).child_body().name() for j in range(plant.num_joints())].index("payload")


def test_hanging_payload_statics():
    """At rest, the weld holds the payload up: on P at Po, f = −m g and τ = p_PoPcm × f, both in P."""
    plant = ours()
    k = plant.kernels()
    q = np.array([0.3, 0.9, -0.4, -1.2, 0.5, 0.8, -0.6])
    out = np.zeros((plant.num_joints(), 6))
    k.reaction_forces(q, np.zeros(7), np.zeros(7), out)
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, q)
    R_WP = plant.GetBodyByName("payload").EvalPoseInWorld(ctx).rotation().matrix()
    f_P = R_WP.T @ (-MASS * plant.gravity_field().gravity_vector())
    F = out[weld_row(plant)]
    np.testing.assert_allclose(F[3:], f_P, atol=1e-12)
    np.testing.assert_allclose(F[:3], np.cross(P_COM, f_P), atol=1e-12)
    facade = plant.CalcReactionForces(ctx, np.zeros(7))[weld_row(plant)].get_coeffs()
    np.testing.assert_allclose(facade, F, atol=1e-14)


def test_applied_force_on_the_payload_is_carried_by_the_weld():
    """A force F_app on the payload, gravity balanced by it: the weld then carries nothing."""
    plant = ours()
    k = plant.kernels()
    q = np.array([0.1, -0.5, 0.7, 1.1, -0.3, 0.4, 0.2])
    ctx = plant.CreateDefaultContext()
    plant.SetPositions(ctx, q)
    X_WP = plant.GetBodyByName("payload").EvalPoseInWorld(ctx)
    f = -MASS * plant.gravity_field().gravity_vector()
    forces = np.zeros((plant.num_bodies(), 6))
    p_WoPcm = X_WP.translation() + X_WP.rotation().matrix() @ P_COM
    forces[plant.GetBodyByName("payload").index()] = np.r_[np.cross(p_WoPcm - X_WP.translation(), f), f]
    out = np.zeros((plant.num_joints(), 6))
    k.reaction_forces(q, np.zeros(7), np.zeros(7), out, forces)
    np.testing.assert_allclose(out[weld_row(plant)], 0.0, atol=1e-12)


def test_reaction_forces_kernel_allocates_nothing():
    plant = ours()
    k = plant.kernels()
    q, v, a = np.full(7, 0.2), np.full(7, 0.1), np.full(7, -0.3)
    out = np.zeros((plant.num_joints(), 6))
    forces = np.zeros((plant.num_bodies(), 6))
    measured, frame = net_and_peak(lambda: k.reaction_forces(q, v, a, out, forces))
    assert measured == frame
