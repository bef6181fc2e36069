"""Finalize-time topology: the spanning forest, coordinate assignment and the flat model arrays.

The ordering is Drake's: a depth-first forest under the world, children in joint-index order.
The world's subtrees come in this order: bodies joined to the world by a user joint (joint order),
then trees not connected to the world (by root body index), then lone bodies (by body index). Each
root not connected to the world gets a QuaternionFloatingJoint named after its body.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ModelError
from .joints import PrismaticJoint, RevoluteJoint, WeldJoint
from .joints_more import QuaternionFloatingJoint
from .spatial_math import RigidTransform, RotationMatrix
from .tree import FixedOffsetFrame


def inboard_joints(bodies, joints) -> dict:
    """body index -> the joint whose child it is; raises on a body with two parents."""
    inboard = {}
    for j in joints:
        b = int(j.child_body().index())
        if b == 0:
            raise ModelError(f"joint '{j.name()}' has the world as its child; the world cannot move")
        if b in inboard:
            raise ModelError(
                f"body '{j.child_body().name()}' is the child of two joints, '{inboard[b].name()}' and "
                f"'{j.name()}': kinematic loops and bodies with two parents are not supported")
        inboard[b] = j
    return inboard


def mobilizer_frames(plant, j) -> list:
    """The frames Drake's joint j adds as it builds its mobilizer at Finalize: a weld whose X_FM is not
    exactly the identity, '<joint>_<F>_F' at X_FM in F; a revolute or prismatic joint whose axis is not
    exactly +x, +y or +z, '<joint>_<F>_F' on F and '<joint>_<M>_M' on M, both rotated by
    RotationMatrix.MakeFromOneUnitVector(axis, 2) so that their z is the axis. A name already taken
    in the joint's model instance gets '_' prefixed, as Drake's MakeUniqueOffsetFrameName does."""
    taken = set()

    def frame(name, parent, X):
        while name in taken or plant.HasFrameNamed(name, j.model_instance()):
            name = "_" + name
        taken.add(name)
        return FixedOffsetFrame(name, parent, X, j.model_instance())
    F, M = j.frame_on_parent(), j.frame_on_child()
    if isinstance(j, WeldJoint) and not j.X_FM().IsExactlyIdentity():
        return [frame(f"{j.name()}_{F.name()}_F", F, j.X_FM())]
    if isinstance(j, (RevoluteJoint, PrismaticJoint)) and 1.0 not in j._axis():
        X = RigidTransform(RotationMatrix.MakeFromOneUnitVector(j._axis(), 2), np.zeros(3))
        return [frame(f"{j.name()}_{F.name()}_F", F, X), frame(f"{j.name()}_{M.name()}_M", M, X)]
    return []


def plan_forest(plant):
    """Returns (floating bodies to give a free joint, bodies in depth-first order)."""
    bodies, joints = plant._bodies, plant._joints
    inboard = inboard_joints(bodies, joints)
    children = {i: [] for i in range(len(bodies))}
    for j in joints:   # joint-index order
        children[int(j.parent_body().index())].append(int(j.child_body().index()))

    def root_of(b: int) -> int:
        seen = set()
        while b in inboard:
            if b in seen:
                names = " -> ".join(bodies[k].name() for k in seen)
                raise ModelError(f"the joints form a cycle through bodies {names}: kinematic loops are not supported")
            seen.add(b)
            b = int(inboard[b].parent_body().index())
        return b

    roots = sorted({root_of(b) for b in range(1, len(bodies))} - {0})
    with_joints = [r for r in roots if children[r]]
    lone = [r for r in roots if not children[r]]
    order = [0]
    # Depth-first, children in joint order, with an explicit stack (a chain of any length).
    stack = list(reversed(children[0] + with_joints + lone))
    while stack:
        b = stack.pop()
        order.append(b)
        stack.extend(reversed(children[b]))
    return with_joints + lone, order


def floating_joint_for(plant, body) -> QuaternionFloatingJoint:
    """The free joint Drake adds for a root body: named after the body, made unique in its instance."""
    name = body.name()
    taken = {j.name() for j in plant._joints if j.model_instance() == body.model_instance()}
    while name in taken:
        name = "_" + name
    return QuaternionFloatingJoint(name, plant.world_frame(), body.body_frame())


@dataclass(frozen=True)
class ModelArrays:
    """What the compiled Model (_model.pyx) is built from, in node order (node 0 is the world).

    Per node t: parent node, joint type code, first q and v index, number of velocities, X_PF (joint
    frame F on the parent node), X_MB (node frame on the joint frame M) and the joint's parameters (4
    per node: its unit axis â and, for a screw, the lead ℓ = pitch/(2π)). Per frame
    and per body: the node it sits on and its fixed pose on that node, X_NF and X_NB; per body its own
    inertia about Bo in B (mass, first moment m p_BoBcm, rotational inertia), which the Model sums per
    node. Rotations are (n, 3, 3), translations (n, 3). For the joint reaction forces: per body its
    inboard body (-1 for the world), the bodies in a depth-first order (inboard before outboard), and
    per joint (JointIndex) its child body C and X_CJc, the pose of its frame on the child.
    """
    nb: int
    nq: int
    nv: int
    nf: int
    nbodies: int
    node_joint: list
    parent: list
    jtype: list
    qs: list
    vs: list
    nvj: list
    R_PF: np.ndarray
    p_PF: np.ndarray
    R_MB: np.ndarray
    p_MB: np.ndarray
    axis: np.ndarray
    frame_node: list
    R_NF: np.ndarray
    p_NF: np.ndarray
    body_node: list
    R_NB: np.ndarray
    p_NB: np.ndarray
    body_mass: np.ndarray
    body_mcom: np.ndarray
    body_I: np.ndarray
    gravity: np.ndarray
    armature: np.ndarray
    body_parent: list
    body_order: list
    nj: int
    joint_child: list
    R_CJ: np.ndarray
    p_CJ: np.ndarray


def compile_arrays(plant, order, inboard) -> ModelArrays:
    """The flat arrays of the compiled Model. Nodes are the world and the bodies with a moving inboard
    joint, in the depth-first `order`; a welded body is placed on its nearest moving ancestor."""
    bodies = plant._bodies
    node_of, X_NB = {0: 0}, {0: RigidTransform()}
    nodes = [0]
    for b in order[1:]:
        j = inboard[b]
        P = int(j.parent_body().index())
        X_PF = j.frame_on_parent().GetFixedPoseInBodyFrame() @ j._X_FM_default()
        X_MB = j.frame_on_child().GetFixedPoseInBodyFrame().inverse()
        if j.num_velocities() == 0:
            node_of[b], X_NB[b] = node_of[P], X_NB[P] @ X_PF @ X_MB
        else:
            node_of[b], X_NB[b] = len(nodes), RigidTransform()
            nodes.append(b)
    nb = len(nodes)
    cols = {k: [0] for k in ("parent", "jtype", "qs", "vs", "nvj")}
    R_PF, p_PF = np.tile(np.eye(3), (nb, 1, 1)), np.zeros((nb, 3))
    R_MB, p_MB = np.tile(np.eye(3), (nb, 1, 1)), np.zeros((nb, 3))
    axis = np.zeros((nb, 4))
    for t, b in enumerate(nodes[1:], start=1):
        j = inboard[b]
        P = int(j.parent_body().index())
        X_NF = X_NB[P] @ j.frame_on_parent().GetFixedPoseInBodyFrame()
        X_MB = j.frame_on_child().GetFixedPoseInBodyFrame().inverse()
        R_PF[t], p_PF[t] = X_NF.rotation().matrix(), X_NF.translation()
        R_MB[t], p_MB[t] = X_MB.rotation().matrix(), X_MB.translation()
        axis[t, :3], axis[t, 3] = j._axis(), j._lead()
        for k, value in (("parent", node_of[P]), ("jtype", j._type_code), ("qs", j._q_start),
                         ("vs", j._v_start), ("nvj", j.num_velocities())):
            cols[k].append(value)
    inertias = [body.default_spatial_inertia() for body in bodies]
    frames = plant._frames
    X_NF = [X_NB[int(f.body().index())] @ f.GetFixedPoseInBodyFrame() for f in frames]
    X_CJ = [j.frame_on_child().GetFixedPoseInBodyFrame() for j in plant._joints]
    return ModelArrays(
        node_joint=[""] + [inboard[b].name() for b in nodes[1:]],
        nb=nb, nq=plant._nq, nv=plant._nv, nf=len(frames), nbodies=len(bodies), **cols,
        R_PF=R_PF, p_PF=p_PF, R_MB=R_MB, p_MB=p_MB, axis=axis,
        frame_node=[node_of[int(f.body().index())] for f in frames],
        R_NF=np.array([X.rotation().matrix() for X in X_NF]), p_NF=np.array([X.translation() for X in X_NF]),
        body_node=[node_of[b] for b in range(len(bodies))],
        R_NB=np.array([X_NB[b].rotation().matrix() for b in range(len(bodies))]),
        p_NB=np.array([X_NB[b].translation() for b in range(len(bodies))]),
        body_mass=np.array([M.get_mass() for M in inertias]),
        body_mcom=np.array([M.get_mass() * M.get_com() for M in inertias]),
        body_I=np.array([M.CalcRotationalInertia().CopyToFullMatrix3() for M in inertias]),
        gravity=plant._gravity.gravity_vector(), armature=reflected_inertias(plant),
        body_parent=[-1] + [int(inboard[b].parent_body().index()) for b in range(1, len(bodies))],
        body_order=list(order), nj=len(X_CJ), joint_child=[int(j.child_body().index()) for j in plant._joints],
        R_CJ=np.array([X.rotation().matrix() for X in X_CJ]).reshape(-1, 3, 3),
        p_CJ=np.array([X.translation() for X in X_CJ]).reshape(-1, 3))


def reflected_inertias(plant) -> np.ndarray:
    """Per velocity, the reflected inertia ρ² I_r of the actuators driving it (Drake's
    JointActuator::calc_reflected_inertia), which Drake adds to M's diagonal."""
    armature = np.zeros(plant._nv)
    for a in plant._actuators:
        armature[a.joint()._v_start] += a.default_reflected_inertia()
    return armature
