"""Configuration derivatives of world-frame motion and force quantities of a multibody tree, for
analytic gradients of the evaluators that depend on J(q) v or J(q)ᵀ F.

Sⱼ(q) = [wⱼ; v_Oⱼ] (6 x nv) is the world twist, taken at the world origin O, that a unit vⱼ gives the
bodies moved by dof j: a body's twist is V_B = Σⱼ anc[B, j] Sⱼ vⱼ, and the velocity of a point P fixed to
B is v_O + w × p_WP. Derivatives are along the motion directions θⱼ (dθ = N⁺(q) dq, so ∂/∂q = ∂/∂θ N⁺):
moving dof j carries rigidly every body it moves and every later axis, so

    ∂Sᵢ/∂θⱼ = prec[j, i] Sⱼ × Sᵢ        (spatial cross product of motion vectors)

where prec[j, i] says that dof j moves the axis of dof i: dof j's joint child is an ancestor of (or is)
the parent body of dof i's joint, or, inside a quaternion-floating joint (v = [w_WB; v_WBo]), j is a
translation and i a rotation (the rotations turn about axes through Bo). Supported joints: revolute,
prismatic, weld and quaternion-floating.
"""
from __future__ import annotations

import numpy as np

from dynamics_cy import BodyIndex, JointIndex
from dynamics_cy.spatial_math import skew

from .kinematics import FrameKinematics

_SUPPORTED = {"revolute", "prismatic", "weld", "quaternion_floating"}


class TreeMotion:
    """S(q), anc (bodies x nv) and prec (nv x nv) for one plant; call update(kin) at each q."""

    def __init__(self, plant):
        nb, nv = plant.num_bodies(), plant.num_velocities()
        parent = [-1] * nb
        joints = [plant.get_joint(JointIndex(i)) for i in range(plant.num_joints())]
        for j in joints:
            if j.type_name() not in _SUPPORTED:
                raise ValueError(f"joint '{j.name()}' of type {j.type_name()} is not supported here "
                                 f"(supported: {', '.join(sorted(_SUPPORTED))})")
            parent[int(j.child_body().index())] = int(j.parent_body().index())

        def ancestors(b: int) -> set:
            out = set()
            while b >= 0:
                out.add(b)
                b = parent[b]
            return out

        chains = [ancestors(b) for b in range(nb)]
        self.dof_body = np.zeros(nv, dtype=int)
        dof_parent = np.zeros(nv, dtype=int)
        translation = np.zeros(nv, dtype=bool)
        self._joint_of = np.zeros(nv, dtype=int)
        for k, j in enumerate(joints):
            vs, n = j.velocity_start(), j.num_velocities()
            self.dof_body[vs:vs + n] = int(j.child_body().index())
            dof_parent[vs:vs + n] = int(j.parent_body().index())
            self._joint_of[vs:vs + n] = k
            if j.type_name() == "quaternion_floating":
                translation[vs + 3:vs + 6] = True
        self.anc = np.array([[self.dof_body[j] in chains[b] for j in range(nv)] for b in range(nb)], dtype=bool)
        self.prec = np.array([[self.dof_body[j] in chains[dof_parent[i]]
                               or (self._joint_of[j] == self._joint_of[i] and translation[j] and not translation[i])
                               for i in range(nv)] for j in range(nv)], dtype=bool)
        self._frames = {b: plant.get_body(BodyIndex(b)).body_frame() for b in set(self.dof_body.tolist())}
        self.nv = nv
        self.S = np.zeros((6, nv))
        self._q = None

    def update(self, kin: FrameKinematics) -> None:
        """S at the configuration of kin."""
        if self._q is not None and np.array_equal(self._q, kin.q):
            return
        self._q = kin.q.copy()
        for b, frame in self._frames.items():
            cols = self.dof_body == b
            J, p = kin.jacobian_v(frame)[:, cols], kin.pose(frame)[:3, 3]
            self.S[:3, cols] = J[:3]
            self.S[3:, cols] = J[3:] + np.cross(p, J[:3].T).T  # v_O = v_Bo + p_WBo × w

    def point_jacobian(self, body: int, p_WP: np.ndarray) -> np.ndarray:
        """Jv_WP (3 x nv) of a point P fixed to body at p_WP: anc (v_O + w × p)."""
        return (self.S[3:] - skew(p_WP) @ self.S[:3]) * self.anc[body]

    def twist(self, body: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """V_B = [w_WB; v_O] of body at velocities v, and ∂V_B/∂θ (6 x nv)."""
        a = self.anc[body] * v
        V = self.S @ a
        U = (self.prec * a[None, :]) @ self.S.T  # row j: Σᵢ prec[j, i] aᵢ Sᵢ
        W, Vo = self.S[:3].T, self.S[3:].T
        dV = np.hstack([np.cross(W, U[:, :3]), np.cross(W, U[:, 3:]) + np.cross(Vo, U[:, :3])]).T
        return V, dV

    def force(self, body: int, p_WP: np.ndarray, f_W: np.ndarray, dp_WP: np.ndarray) -> np.ndarray:
        """∂τ/∂θ (nv x nv) of τ = Jv_WPᵀ f for a constant world force f at P on body, where P moves as
        ∂p_WP/∂θ = dp_WP (3 x nv). With F_O = [p × f; f]: ∂τᵢ/∂θⱼ = anc[body, i] (prec[j, i] (Sⱼ × Sᵢ)·F_O
        + wᵢ·(∂p/∂θⱼ × f))."""
        W, Vo = self.S[:3].T, self.S[3:].T
        n = np.cross(p_WP, f_W)
        A = np.cross(W, n) + np.cross(Vo, f_W)  # (Sⱼ × Sᵢ)·F_O = wⱼ·(wᵢ × n + v_Oᵢ × f) + v_Oⱼ·(wᵢ × f)
        B = np.cross(W, f_W)
        C = (W @ A.T + Vo @ B.T) * self.prec  # C[j, i]
        return self.anc[body][:, None] * (C.T + np.cross(f_W, W) @ dp_WP)
