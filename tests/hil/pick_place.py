"""The iiwa + WSG 50 pick-and-place of issue 28 (item 6), shared by tests/hil/test_pick_place.py: a 5 cm,
0.2 kg box on a table (`sim.objects`), the WSG welded to iiwa_link_7 (`sim.gripper`) and in the loop
(`gripper`), and `PickPlace`, a user's hil.Controller that tracks joint waypoints (solved once by IK, before
the run) with a joint PD plus −τ_g and writes the WSG's command (command.gripper) at each phase change.
The robot compensates gravity (as the real iiwa: sim.gravity_compensation internal, of the simulated
plant: arm, WSG and all), and the law still writes the whole torque: the loop takes its own −τ_g (the
arm's, from the controller's plant) out again (controller.robot_compensates_gravity).
A PD alone would leave the arm sagging under its own weight.

The loop sends command.gripper to the WSG's driver when it changes (hil.gripper): one message per phase.
"""
from __future__ import annotations

import numpy as np

import hil
from dynamics_cy import RollPitchYaw, RotationMatrix
from dynamics_cy.planning import InverseKinematics, Solve

BOX = 0.05                                   # m, edge
BOX_MASS = 0.2                               # kg
TABLE_TOP = 0.10                             # m
BOX_START = np.array([0.55, -0.20, TABLE_TOP + BOX / 2])
BOX_TARGET = np.array([0.55, 0.20, TABLE_TOP + BOX / 2])
GRIP_FORCE = 40.0                            # N, the WSG's default
# X_7G: the WSG's body frame G on iiwa_link_7 (its fingers along z₇); Q: the grasp point between the pads.
R_7G = RotationMatrix(RollPitchYaw(np.pi / 2, 0.0, np.pi / 2))
p_7G = np.array([0.0, 0.0, 0.09])
p_GQ = np.array([0.0, 0.09, 0.0])
# R_WG: fingers down (Gy = −Wz), closing along Wy (Gx = Wy).
R_WG = RotationMatrix(np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]))
ABOVE = 0.12                                 # m, the approach and retreat height above a grasp
LIFT = 0.12

# The arm's links (cylinders and a sphere) stay out of contact: the grasp is the WSG's and the objects'.
ARM = [f"iiwa_link_{i}" for i in range(8)]
ARM_PAIRS = [[a, b] for i, a in enumerate(ARM) for b in ARM[i + 1:] + ["body", "left_finger", "right_finger",
                                                                      "table", "box"]]

CONFIG = {
    "robot": {"model": "robots/iiwa14.urdf", "protocol": "iiwa", "end_effector": "iiwa_link_ee"},
    "lcm": {"url": "memq://"},
    "loop": {"rate_hz": 1000, "duration": None},
    "trajectory": {"type": "hold"},
    "controller": {"robot_compensates_gravity": True},
    "gripper": {"type": "wsg50"},
    "viz": False,
    "sim": {
        "gravity_compensation": "internal",
        "gripper": {"type": "wsg50", "attach_to": "iiwa_link_7", "xyz": p_7G.tolist(),
                    "rpy": [float(np.pi / 2), 0.0, float(np.pi / 2)]},
        "contact": {"enabled": True, "between_bodies": True, "stiffness": 2.0e4, "ground": {"enabled": False},
                    "exclude": ARM_PAIRS},
        "objects": [
            {"name": "table", "size": [0.5, 0.8, TABLE_TOP], "xyz": [0.55, 0.0, TABLE_TOP / 2], "welded": True},
            {"name": "box", "size": [BOX] * 3, "mass": BOX_MASS, "xyz": BOX_START.tolist()},
        ],
    },
}


def solve_arm(plant, p_WQ: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """The arm's q putting the grasp point Q at p_WQ with the fingers down (IK on the controller's plant)."""
    ik = InverseKinematics(plant)
    frame7 = plant.GetFrameByName("iiwa_link_7")
    p_7Q = R_7G.multiply(p_GQ) + p_7G
    ik.AddPositionConstraint(frame7, p_7Q, plant.world_frame(), p_WQ - 1e-5, p_WQ + 1e-5)
    ik.AddOrientationConstraint(plant.world_frame(), R_WG.multiply(R_7G.inverse()), frame7, RotationMatrix(), 1e-4)
    ik.prog().SetInitialGuess(ik.q(), guess)
    result = Solve(ik.prog())
    assert result.is_success(), f"IK failed for {p_WQ}"
    return result.GetSolution(ik.q())


def plan(plant) -> list:
    """[(t_end s, q at t_end, WSG width mm or None: no new command at the segment's start)]: from the
    upright start to above the box (3.5 s, inside the joints' velocity limits), down, close, lift, carry,
    lower, open, retreat, rest."""
    up = np.array([0.0, 0.0, ABOVE])
    lift = np.array([0.0, 0.0, LIFT])
    q = np.array([0.0, 0.6, 0.0, -1.6, 0.0, 0.9, 0.0])
    points = []
    for p in (BOX_START + up, BOX_START, BOX_START + lift, BOX_TARGET + lift, BOX_TARGET, BOX_TARGET + up):
        q = solve_arm(plant, p, q)
        points.append(q)
    pre, grasp, lifted, carried, placed, retreat = points
    return [(3.5, pre, 100.0), (4.5, grasp, None), (5.1, grasp, 0.0), (6.1, lifted, None), (8.1, carried, None),
            (9.1, placed, None), (9.6, placed, 100.0), (10.6, retreat, None), (11.0, retreat, None)]


class PickPlace(hil.Controller):
    """Quintic joint moves through `segments` (plan()) under τ = −τ_g(q) + a joint PD on (q_d − q, v_d − v) (and as
    command.q, command.v for the iiwa's position modes, which would else hold the trajectory's q_d); at a
    segment's start with a width, that width (mm → m) and GRIP_FORCE in command.gripper, which the loop
    sends to the WSG's driver."""

    def __init__(self, segments):
        super().__init__()
        self.segments = segments

    def on_configure(self):
        self.kp = np.array([800.0, 800.0, 400.0, 400.0, 100.0, 60.0, 30.0])
        self.kd = np.array([60.0, 60.0, 30.0, 30.0, 8.0, 5.0, 1.0])
        self.q_from, self.q_d, self.e, self.tau_g = (np.zeros(self.n) for _ in range(4))

    def on_activate(self):
        self.index, self.t_from, self.started = -1, 0.0, False

    def update(self, state, command):
        t = state.t
        if not self.started:                             # the first segment starts where the arm is
            self.q_from[:], self.t_from, self.started = state.q, t, True
        while self.index + 1 < len(self.segments) and (self.index < 0 or t >= self.segments[self.index][0]):
            if self.index >= 0:
                self.q_from[:], self.t_from = self.segments[self.index][1], self.segments[self.index][0]
            self.index += 1
            width = self.segments[self.index][2]
            if width is not None:
                command.gripper[0], command.gripper[1] = width * 1e-3, GRIP_FORCE
        t_end, q_to, _ = self.segments[self.index]
        x = min(max((t - self.t_from) / (t_end - self.t_from), 0.0), 1.0)
        s = x * x * x * (10.0 + x * (6.0 * x - 15.0))
        ds = 30.0 * x * x * (1.0 - x) * (1.0 - x) / (t_end - self.t_from) if 0.0 < x < 1.0 else 0.0
        np.subtract(q_to, self.q_from, out=self.q_d)
        np.multiply(self.q_d, ds, out=command.v)            # the position modes' setpoints: q_d, v_d
        self.q_d *= s
        self.q_d += self.q_from
        command.q[:] = self.q_d
        self.kernels.gravity(state.q, self.tau_g)          # the whole torque: −τ_g too (the loop takes it
        np.negative(self.tau_g, out=command.tau)            # out again, as the robot adds it itself)
        np.subtract(self.q_d, state.q, out=self.e)
        self.e *= self.kp
        command.tau += self.e
        np.subtract(command.v, state.v, out=self.e)
        self.e *= self.kd
        command.tau += self.e


def grasp_offsets(sim):
    """p_FO_F: the box's origin O in the right finger's frame F, from the simulated plant's state (facade)."""
    plant = sim.physics.plant
    context = plant.CreateDefaultContext()
    plant.SetPositions(context, sim.physics.q)
    X = plant.CalcRelativeTransform(context, plant.GetFrameByName("right_finger"),
                                    plant.GetBodyByName("box").body_frame())
    return X.translation().copy()
