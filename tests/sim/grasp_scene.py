"""The grasp scene of docs/sim.md "Grasping", shared by tests/sim/test_sim_grasp.py and
benchmarks/bench_grasp.py: the Schunk WSG 50 (configs/robots/schunk_wsg_50.urdf, its left finger
coupled to the right by the URDF's <mimic>) hanging fingers-down from a prismatic z joint (the lift),
above a free 5 cm cube resting on the ground, or (shape "cylinder") a free cylinder 5 cm across and 7 cm
tall standing on a table box (its top at z = 0, the ground off); a scripted pick: close on the object
with the WSG's 40 N, lift 10 cm, carry (hold), lower, release, retreat. `run_grasp(engine)` runs it
and measures slip, chatter, the place error and the step time."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from drivers.core.paths import CONFIGS
from drivers.sim import load_sim_config
from drivers.sim.physics import make_physics
from dynamics_cy import (
    Box,
    CoulombFriction,
    Cylinder,
    FixedOffsetFrame,
    MultibodyPlant,
    Parser,
    PrismaticJoint,
    RigidTransform,
    RollPitchYaw,
    SpatialInertia,
    UnitInertia,
)

G = 9.81
CUBE = 0.05                  # edge, m
CUBE_MASS = 0.2              # kg (the cylinder's too)
CYLINDER = (0.025, 0.07)     # radius, length (m): upright, its generator against the pads (line contact)
TABLE = (0.3, 0.3, 0.05)     # the cylinder's table: a welded box, its top at z = 0
GRIP_FORCE = 40.0            # N: each finger's actuator at its effort limit, the WSG's default force
LIFT = 0.10                  # m
H = 0.001
PAD_CLEARANCE = 0.005        # the pads' lower ends above the ground
OPEN = 0.035                 # the right finger's open position (the left at −OPEN)
# The lift joint's origin: the gripper's body frame, fingers down (Gy = −Wz), pads from PAD_CLEARANCE up.
Z0 = PAD_CLEARANCE + 0.075 + 0.03625
# Phases (s): settle open, close (width ramp), lift, carry, lower, release, retreat.
T_CLOSE, T_LIFT, T_CARRY, T_LOWER, T_RELEASE, T_RETREAT, T_END = 0.1, 0.4, 1.2, 2.2, 3.0, 3.4, 3.8
KP_LIFT, KD_LIFT = 20000.0, 400.0
KP_FINGER, KD_FINGER = 4000.0, 20.0
GRASP_STIFFNESS = 2e4        # N/m per point: h √(n k/m) < 1 for the WSG's 50 g fingers on 4 points (docs/sim.md)


def grasp_plant(cube_mu: float = 0.8, pad_mu: float = 1.0, shape: str = "box") -> MultibodyPlant:
    """The WSG on its lift above the cube or cylinder (body "cube"; finalized): positions [lift z,
    fingers…, the object's 7]."""
    plant = MultibodyPlant(0.0)
    wsg = Parser(plant).AddModels(str(CONFIGS / "robots" / "schunk_wsg_50.urdf"))[0]
    body = plant.GetBodyByName("body", wsg)
    for name in ("left_finger", "right_finger"):
        finger = plant.GetBodyByName(name, wsg)
        for g in plant.GetCollisionGeometriesForBody(finger):
            g.friction = CoulombFriction(pad_mu, pad_mu)
    F = plant.AddFrame(FixedOffsetFrame("lift_origin", plant.world_frame(), RigidTransform([0.0, 0.0, Z0])))
    M = plant.AddFrame(FixedOffsetFrame("lift_mount", body.body_frame(),
                                        RigidTransform(RollPitchYaw(-np.pi / 2, 0.0, 0.0), np.zeros(3)).inverse()))
    lift = plant.AddJoint(PrismaticJoint("lift", F, M, [0.0, 0.0, 1.0]))
    plant.AddJointActuator("lift", lift, 500.0)
    if shape == "cylinder":
        geometry, unit = Cylinder(*CYLINDER), UnitInertia.SolidCylinder(*CYLINDER, [0.0, 0.0, 1.0])
        table = plant.AddRigidBody("table", plant.AddModelInstance("table"),
                                   SpatialInertia(10.0, np.zeros(3), UnitInertia.SolidBox(*TABLE)))
        plant.WeldFrames(plant.world_frame(), table.body_frame(), RigidTransform([0.0, 0.0, -TABLE[2] / 2]))
        plant.RegisterCollisionGeometry(table, RigidTransform(), Box(*TABLE), "table",
                                        CoulombFriction(cube_mu, cube_mu))
    else:
        geometry, unit = Box(CUBE, CUBE, CUBE), UnitInertia.SolidBox(CUBE, CUBE, CUBE)
    cube = plant.AddRigidBody("cube", plant.AddModelInstance("cube"), SpatialInertia(CUBE_MASS, np.zeros(3), unit))
    plant.RegisterCollisionGeometry(cube, RigidTransform(), geometry, "cube_collision",
                                    CoulombFriction(cube_mu, cube_mu))
    plant.Finalize()
    return plant


def smooth(t: float, t0: float, t1: float) -> float:
    """0 before t0, 1 after t1, the quintic smooth step between."""
    x = min(max((t - t0) / (t1 - t0), 0.0), 1.0)
    return x * x * x * (10.0 + x * (6.0 * x - 15.0))


@dataclass
class GraspResult:
    engine: str
    slip_mm: float             # max |p_FO − p_FO(grasped)| over lift, carry and lower (O: cube, F: right finger)
    drop_mm: float             # the cube's height below the lift's command at the carry's end
    force_mean: float          # the mean pad–cube normal force over the carry, N
    chatter: float             # std of that force over the carry / its mean
    place_mm: float            # |p_WO − p_WO(start)| after release
    place_deg: float           # the cube's rotation from its start after release
    step_us: float             # median µs per step (of 1 ms)
    q_final: np.ndarray


def scene_config(engine: str, shape: str = "box", **sim):
    base = {"engine": engine, "contact": {"enabled": True, "between_bodies": True,
                                          "ground": {"enabled": shape != "cylinder"}}}
    if engine == "mujoco":
        base["mujoco"] = {"cone": "elliptic"}
    base["contact"].update(sim.pop("contact", {}))
    base.update(sim)
    return load_sim_config(base)


def run_grasp(engine: str = "hilstack", shape: str = "box", **sim) -> GraspResult:
    """The pick of the cube (shape "box") or the cylinder on `engine` (hilstack or mujoco); `sim` overrides
    keys of the sim config."""
    plant = grasp_plant(shape=shape)
    physics = make_physics(plant, scene_config(engine, shape, **sim))
    half = CYLINDER[1] / 2 if shape == "cylinder" else CUBE / 2
    lift = plant.GetJointByName("lift")
    right, left = plant.GetJointByName("right_finger_sliding_joint"), plant.GetJointByName("left_finger_sliding_joint")
    cube = plant.GetBodyByName("cube")
    iz, ir, il = lift.position_start(), right.position_start(), left.position_start()
    vz, vr = lift.velocity_start(), right.velocity_start()
    ic = cube.floating_positions_start()
    actuators = {plant.get_joint_actuator(a).joint().name(): i for i, a in enumerate(plant.GetJointActuatorIndices())}
    az, ar, al = actuators["lift"], actuators["right_finger_sliding_joint"], actuators["left_finger_sliding_joint"]
    q, v = physics.q.copy(), np.zeros(plant.num_velocities())
    q[ir], q[il] = OPEN, -OPEN
    q[ic:ic + 7] = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, half]
    physics.set_state(q, v)
    m_lifted = plant.CalcTotalMass(plant.CreateDefaultContext()) - CUBE_MASS
    u = np.zeros(plant.num_actuators())
    contact = physics.contact.point_contact if engine == "hilstack" else None
    cube_index, finger_index = int(cube.index()), int(plant.GetBodyByName("right_finger").index())
    p0 = physics.q[ic + 4:ic + 7].copy()
    offset, slip, forces, times = None, 0.0, [], []
    for n in range(round(T_END / H)):
        t = n * H
        z_d = LIFT * (smooth(t, T_LIFT, T_CARRY) - smooth(t, T_LOWER, T_RELEASE) + smooth(t, T_RETREAT, T_END))
        w_d = OPEN - (OPEN + 0.01) * (smooth(t, T_CLOSE, T_LIFT) - smooth(t, T_RELEASE, T_RETREAT))
        u[az] = KP_LIFT * (z_d - physics.q[iz]) - KD_LIFT * physics.v[vz] + m_lifted * G
        u[ar] = KP_FINGER * (w_d - physics.q[ir]) - KD_FINGER * physics.v[vr]
        u[al] = -u[ar]
        t0 = time.perf_counter_ns()
        physics.step(u)
        times.append(time.perf_counter_ns() - t0)
        p_rel = physics.q[ic + 4:ic + 7] - np.array([physics.q[ir], 0.0, physics.q[iz]])
        if T_LIFT - 0.02 <= t < T_LIFT:
            offset = p_rel.copy()
        elif T_LIFT <= t < T_RELEASE and offset is not None:
            slip = max(slip, float(np.linalg.norm(p_rel - offset)))
        if T_CARRY + 0.2 <= t < T_LOWER:
            forces.append(_pad_force(physics, contact, cube_index, finger_index))
        if abs(t - (T_LOWER - H)) < H / 2:
            drop = LIFT + half - physics.q[ic + 6]
    qw = physics.q[ic]
    forces = np.array(forces)
    return GraspResult(engine, 1e3 * slip, 1e3 * drop, float(forces.mean()), float(forces.std() / forces.mean()),
                       1e3 * float(np.linalg.norm(physics.q[ic + 4:ic + 7] - p0)),
                       float(np.degrees(2 * np.arccos(min(1.0, abs(qw))))),
                       float(np.median(times)) / 1e3, physics.q.copy())


def _pad_force(physics, contact, cube_index: int, finger_index: int) -> float:
    """The normal force between the right pad and the cube in the last step (N)."""
    total = 0.0
    for a, b, fn in _ours(contact) if contact is not None else _results(physics.contact_results()):
        if {a, b} == {cube_index, finger_index}:
            total += abs(fn)
    return total


def _ours(c):
    """(body A, body B, normal force) of our recorded contacts, without building ContactResults."""
    for i in range(c.num_contacts):
        yield int(c.body_A[i]), int(c.body_B[i]), float(np.dot(c.f_Bc_W[i], c.nhat_BA_W[i]))


def _results(results):
    for i in range(results.num_point_pair_contacts()):
        info = results.point_pair_contact_info(i)
        yield (int(info.bodyA_index()), int(info.bodyB_index()),
               float(np.dot(info.contact_force(), info.point_pair().nhat_BA_W)))
