"""The robot the loop drives: its plant from the config and how its joints map to the protocol."""
from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from dynamics_cy import (
    Box,
    CoulombFriction,
    Cylinder,
    MultibodyPlant,
    Parser,
    RigidTransform,
    RollPitchYaw,
    RotationalInertia,
    SpatialInertia,
    UnitInertia,
)
from dynamics_cy.errors import DynamicsError, ModelError
from dynamics_cy.parsing.urdf import add_simple_transmissions

from .config import RobotConfig
from .paths import CONFIGS, package_map
from .schema import ConfigError


@dataclass
class Robot:
    plant: MultibodyPlant
    protocol: str
    joint_names: list[str]        # the actuated joints, in the order of the protocol's arrays
    end_effector: object          # a Frame
    contacts: list = field(default_factory=list)   # a legged robot's feet (drivers.legged_contacts)
    q0: object = None             # a legged robot's standing positions

    @property
    def n(self) -> int:
        return len(self.joint_names)


def parse_model(cfg: RobotConfig, *, simulated: bool = False, without: str | None = None):
    """The config's model parsed (with cfg.weld welded to the world), not finalized.

    The controller's plant is parsed as Drake parses it (a nonphysical inertia is replaced, with a
    warning). The simulated robot's plant (`simulated`) is the physics the tests trust, so there a
    nonphysical inertia is an error naming the file, line and link. `without` (a link of a URDF model,
    e.g. the Panda's panda_hand): that link's subtree is left out and returned as a model of its own,
    (plant, HandSplit) (split_subtree)."""
    plant = MultibodyPlant(0.0)
    split = None
    try:
        parser = Parser(plant, package_map(cfg.package_map), nonphysical_inertia="error" if simulated else "warn")
        root = None
        if without is not None:
            root = ET.parse(cfg.model).getroot()
            split = split_subtree(root, without)
        urdf = cfg.model.lower().endswith(".urdf")
        X_WA = None if cfg.base_pose is None else \
            RigidTransform(RollPitchYaw(*cfg.base_pose.rpy), np.asarray(cfg.base_pose.xyz, dtype=float))
        if X_WA is not None and urdf and not cfg.weld:
            try:
                root = ET.parse(cfg.model).getroot() if root is None else root
            except (ET.ParseError, OSError):
                root = None                             # the parser reports it, with the line
            if root is not None and not _move_base(root, X_WA):
                raise ConfigError("robot.base_pose", "the model has no joint from its 'world' link: name the "
                                                     "base frame to weld at the pose in robot.weld")
        text = _actuated_urdf(cfg, root) if urdf else None
        if text is None and cfg.actuated_joints is not None and not cfg.model.lower().endswith(".urdf"):
            raise ConfigError("robot.actuated_joints", "applies to URDF models (an SDF names its actuators "
                                                       "by effort limits: 0 means none)")
        if text is None:
            parser.AddModels(cfg.model)
        else:
            parser._parse(text, "urdf", cfg.model)      # AddModels of the rewritten file, errors naming it
    except ModelError as e:          # ParseError names the file, line and element
        hint = " (the simulated robot needs physical inertias)" if simulated and "inertia" in str(e) else ""
        raise ConfigError("robot.model", f"the model cannot be used: {e}{hint}") from None
    if cfg.weld:
        if not plant.HasFrameNamed(cfg.weld):
            raise ConfigError("robot.weld", f"the model has no frame named '{cfg.weld}'")
        plant.WeldFrames(plant.world_frame(), plant.GetFrameByName(cfg.weld),
                         RigidTransform() if X_WA is None else X_WA)
    elif X_WA is not None and not urdf:
        raise ConfigError("robot.base_pose", "needs robot.weld (the base frame to weld at the pose) for a "
                                             "model that is not a URDF")
    return plant if without is None else (plant, split)


def _move_base(root, X_WA: RigidTransform) -> bool:
    """Each joint of the URDF `root` from its `world` link moved by X_WA (origin X_WJ := X_WA X_WJ, in
    place); whether there was one."""
    moved = False
    for joint in root.findall("joint"):
        if joint.find("parent").get("link") != "world":
            continue
        origin = joint.find("origin")
        if origin is None:
            origin = ET.SubElement(joint, "origin")
        xyz = [float(x) for x in origin.get("xyz", "0 0 0").split()]
        rpy = [float(x) for x in origin.get("rpy", "0 0 0").split()]
        X = X_WA @ RigidTransform(RollPitchYaw(*rpy), np.asarray(xyz))
        origin.set("xyz", " ".join(repr(float(x)) for x in X.translation()))
        origin.set("rpy", " ".join(repr(float(x)) for x in RollPitchYaw(X.rotation()).vector()))
        moved = True
    return moved


@dataclass
class HandSplit:
    """A URDF subtree cut from the robot's model (split_subtree): its own URDF text (its movable joints
    actuated, a <mimic> kept), the link it hung from and X_PG, the cut joint's origin."""
    text: str
    parent: str
    X_PG: RigidTransform


def split_subtree(root, base: str) -> HandSplit:
    """Removes from the URDF `root` (in place) the link `base`, everything below it and the fixed joint
    above it; returns them as a model of their own. ConfigError if `base` is not a link hung by a joint."""
    above = next((j for j in root.findall("joint") if j.find("child").get("link") == base), None)
    if above is None:
        raise ConfigError("sim.gripper.base", f"the robot's model has no link '{base}' below a joint to split off")
    links, joints = {base}, []
    grown = True
    while grown:
        grown = False
        for j in root.findall("joint"):
            if j not in joints and j.find("parent").get("link") in links:
                joints.append(j)
                links.add(j.find("child").get("link"))
                grown = True
    hand = ET.Element("robot", name=base)
    for link in root.findall("link"):
        if link.get("name") in links:
            root.remove(link)
            hand.append(link)
    for j in joints:
        root.remove(j)
        hand.append(j)
    root.remove(above)
    names = {j.get("name") for j in joints}
    for t in root.findall("transmission"):
        if any(tj.get("name") in names for tj in t.findall("joint")):
            root.remove(t)
    add_simple_transmissions(hand, [j.get("name") for j in joints if j.get("type") in MOVABLE])
    origin = above.find("origin")
    xyz = [float(x) for x in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()]
    rpy = [float(x) for x in (origin.get("rpy", "0 0 0") if origin is not None else "0 0 0").split()]
    return HandSplit(ET.tostring(hand, encoding="unicode"), above.find("parent").get("link"),
                     RigidTransform(RollPitchYaw(*rpy), np.asarray(xyz)))


def build_plant(cfg: RobotConfig, payload=None, parsed: MultibodyPlant | None = None, *,
                simulated: bool = False, gripper=None, objects=()) -> MultibodyPlant:
    """The plant of the config's model (welding cfg.weld to the world if given), finalized. `payload`
    (drivers.core.config.PayloadConfig, the simulated robot's): a rigid body of that mass, CoM and
    central inertia welded to its frame (default: cfg.end_effector, else the model's last frame).
    `parsed`: parse_model(cfg) done before, copied instead of parsing the file again. `simulated`:
    parsed strictly (parse_model), and a joint whose outboard bodies have no mass or inertia to move is
    an error (Drake's simulator stops on it at its first step). `gripper` (drivers.sim.config.GripperConfig,
    the simulated robot's): its model parsed and welded to the arm (add_gripper). `objects`
    (drivers.sim.config.ObjectSpec, the simulated robot's sim.objects): boxes and cylinders added (add_objects)."""
    own = gripper is not None and gripper.type is not None and gripper.model == "robot"
    if own:             # the robot's model holds the gripper: split off, its fingers free (simulated only)
        plant, split = parse_model(cfg, simulated=simulated, without=gripper.base or GRIPPER_BASE[gripper.type])
    else:
        plant = copy.deepcopy(parsed) if parsed is not None else parse_model(cfg, simulated=simulated)
    if payload is not None and payload.mass > 0:
        _add_payload(plant, payload, cfg.end_effector)
    if own:
        add_gripper(plant, gripper, cfg.end_effector, cfg.package_map, split)
    elif gripper is not None and gripper.type is not None:
        add_gripper(plant, gripper, cfg.end_effector, cfg.package_map)
    add_objects(plant, objects)
    try:
        plant.Finalize()
    except ModelError as e:
        raise ConfigError("robot.model", f"the model cannot be used: {e}") from None
    if simulated:
        try:
            plant.CalcForwardDynamics(plant.CreateDefaultContext(), np.zeros(plant.num_velocities()))
        except DynamicsError as e:
            raise ConfigError("robot.model", f"{cfg.model}: the simulated robot cannot move it: {e}") from None
    return plant


def _payload_frame_and_inertia(plant: MultibodyPlant, payload, end_effector: str | None, key: str) -> tuple:
    """(F, I_Bcm) of a payload config, ConfigError naming `key`.frame or `key`.inertia."""
    name = payload.frame or end_effector
    if name is not None and not plant.HasFrameNamed(name):
        raise ConfigError(f"{key}.frame", f"the model has no frame named '{name}'")
    frame = plant.GetFrameByName(name) if name else plant.get_frame(plant.num_frames() - 1)
    if len(payload.inertia) not in (3, 6):
        raise ConfigError(f"{key}.inertia", f"must have 3 entries (Ixx Iyy Izz) or 6 (and Ixy Ixz Iyz), "
                                            f"got {len(payload.inertia)}")
    I = RotationalInertia(*payload.inertia)
    if not I.CouldBePhysicallyValid():
        raise ConfigError(f"{key}.inertia", f"{payload.inertia} is not a physically valid inertia (moments "
                                            "and products must satisfy the triangle inequalities)")
    return frame, I


def attach_payload(plant: MultibodyPlant, payload, end_effector: str | None = None,
                   key: str = "robot.payload") -> None:
    """Adds the payload (a PayloadConfig: m, p_FoPcm_F, I_Pcm_F on frame F) to the inertia of F's body B
    on the plant's compiled model, which every kernels object shares (Model.set_body_inertia): with
    X_BF = (R, p), p_BoPcm_B = p + R p_FoPcm_F and I_PBo_B = R I_Pcm_F Rᵀ + m (|d|² 𝟙 − d dᵀ), d =
    p_BoPcm_B, added to B's (m_B, m_B p_BoBcm_B, I_BBo_B)."""
    if payload is None or payload.mass <= 0:
        return
    frame, I = _payload_frame_and_inertia(plant, payload, end_effector, key)
    body = frame.body()
    X_BF = frame.GetFixedPoseInBodyFrame()
    R, p = X_BF.rotation().matrix(), X_BF.translation()
    m = payload.mass
    d = p + R @ np.asarray(payload.com, dtype=float)
    I_P = R @ I.CopyToFullMatrix3() @ R.T + m * (d @ d * np.eye(3) - np.outer(d, d))
    M_B = body.default_spatial_inertia()
    m_B = M_B.get_mass()
    total = m_B + m
    com = (m_B * M_B.get_com() + m * d) / total
    plant.compiled_model().set_body_inertia(int(body.index()), total, com,
                                            M_B.CalcRotationalInertia().CopyToFullMatrix3() + I_P)


def _add_payload(plant: MultibodyPlant, payload, end_effector: str | None) -> None:
    """M_BBo_B = (m, p_BoBcm, I_Bcm) of a body B whose frame is the flange frame F (welded, X_FB = I)."""
    frame, I = _payload_frame_and_inertia(plant, payload, end_effector, "sim.payload")
    body = plant.AddRigidBody("hil_payload", frame.model_instance(),
                              SpatialInertia.MakeFromCentralInertia(payload.mass, payload.com, I))
    plant.WeldFrames(frame, body.body_frame())


GRIPPER_BASE = {"wsg50": "body", "franka_hand": "panda_hand"}


def add_gripper(plant: MultibodyPlant, gripper, end_effector: str | None = None, packages=None,
                split: HandSplit | None = None) -> None:
    """Parses the gripper's model into `plant` (not finalized) and welds its frame G (gripper.base) to the
    arm's frame A (gripper.attach_to, default end_effector) at X_AG = (rpy, xyz). `split` (model "robot":
    the gripper cut from the robot's own model): that model, welded where it hung (X_PG). ConfigError
    naming the sim.gripper key at fault."""
    if split is not None:
        instance = Parser(plant, package_map(packages), nonphysical_inertia="error").AddModelsFromString(
            split.text, "urdf")[0]
        plant.WeldFrames(plant.GetFrameByName(split.parent),
                         plant.GetFrameByName(gripper.base or GRIPPER_BASE[gripper.type], instance), split.X_PG)
        return
    model = gripper.model or (str(CONFIGS / "robots" / "schunk_wsg_50.urdf") if gripper.type == "wsg50" else None)
    name = gripper.attach_to or end_effector
    if name is None or not plant.HasFrameNamed(name):
        raise ConfigError("sim.gripper.attach_to", f"the model has no frame named {name!r}" if name else
                          "names no frame and robot.end_effector is not set")
    A = plant.GetFrameByName(name)
    try:
        instance = Parser(plant, package_map(packages), nonphysical_inertia="error").AddModels(model)[0]
    except ModelError as e:
        raise ConfigError("sim.gripper.model", f"the model cannot be used: {e}") from None
    base = gripper.base or GRIPPER_BASE[gripper.type]
    if not plant.HasFrameNamed(base, instance):
        raise ConfigError("sim.gripper.base", f"the gripper's model has no frame named {base!r}")
    X_AG = RigidTransform(RollPitchYaw(*gripper.rpy), np.asarray(gripper.xyz, dtype=float))
    plant.WeldFrames(A, plant.GetFrameByName(base, instance), X_AG)


OBJECT_COLORS = {True: (0.55, 0.45, 0.35, 1.0), False: (0.95, 0.55, 0.1, 1.0)}
"""The viewer's rgba of a welded object (a table) and of a free one (a part)."""


def add_objects(plant: MultibodyPlant, objects) -> None:
    """Each object (drivers.sim.config.ObjectSpec) as a body B of its own model instance with a solid
    box's or cylinder's inertia (about Bo, the cylinder along Bz), a collision box or cylinder of its size
    and friction at Bo and the same shape as visual geometry (for the viewer, OBJECT_COLORS); a welded one
    is welded to the world
    at X_WB = (rpy, xyz), a free one gets X_WB as its default pose (plant not finalized). ConfigError
    naming sim.objects[i].name if the plant has that body already."""
    for i, obj in enumerate(objects):
        if plant.HasBodyNamed(obj.name):
            raise ConfigError(f"sim.objects[{i}].name", f"the plant has a body named {obj.name!r} already")
        if obj.shape == "cylinder":
            shape = Cylinder(obj.radius, obj.length)
            unit = UnitInertia.SolidCylinder(obj.radius, obj.length, [0.0, 0.0, 1.0])
        else:
            shape, unit = Box(*obj.size), UnitInertia.SolidBox(*obj.size)
        inertia = SpatialInertia(obj.mass, np.zeros(3), unit)
        body = plant.AddRigidBody(obj.name, plant.AddModelInstance(obj.name), inertia)
        plant.RegisterCollisionGeometry(body, RigidTransform(), shape, f"{obj.name}_collision",
                                        CoulombFriction(obj.friction.static, obj.friction.dynamic))
        plant.RegisterVisualGeometry(body, RigidTransform(), shape, f"{obj.name}_visual",
                                     OBJECT_COLORS[obj.welded])
        X_WB = RigidTransform(RollPitchYaw(*obj.rpy), np.asarray(obj.xyz, dtype=float))
        if obj.welded:
            plant.WeldFrames(plant.world_frame(), body.body_frame(), X_WB)
        else:
            plant.SetDefaultFloatingBaseBodyPose(body, X_WB)


MOVABLE = ("revolute", "continuous", "prismatic")


def _actuated_urdf(cfg: RobotConfig, root=None) -> str | None:
    """The URDF's text with robot.actuated_joints applied, or None if it needs no change: every movable
    joint not named is welded at position 0 (its transmissions dropped), and a model without
    <transmission> gets a SimpleTransmission per driven joint (the parser gives it the joint's effort
    limit; a named list replaces the model's transmissions by one per named joint). ConfigError
    naming a joint the model does not have."""
    given = root
    try:
        root = ET.parse(cfg.model).getroot() if root is None else root
    except (ET.ParseError, OSError):
        return None                                     # the parser reports it, with the line
    joints = {j.get("name"): j for j in root.findall("joint") if j.get("type") in MOVABLE}
    named = cfg.actuated_joints
    for i, name in enumerate(named or ()):
        if name not in joints:
            raise ConfigError(f"robot.actuated_joints[{i}]", f"the model has no movable joint '{name}' "
                                                             f"(movable: {sorted(joints)})")
    transmissions = root.findall("transmission")
    if named is None and transmissions:
        return None if given is None else ET.tostring(root, encoding="unicode")
    driven = list(joints) if named is None else named
    for name, joint in joints.items():
        if name not in driven:
            joint.set("type", "fixed")
            for mimic in joint.findall("mimic"):
                joint.remove(mimic)
    for t in transmissions:
        root.remove(t)
    add_simple_transmissions(root, driven)
    return ET.tostring(root, encoding="unicode")


def actuated_joint_names(plant: MultibodyPlant) -> list[str]:
    """The actuated joints' names in velocity order (the protocol's arrays' order)."""
    return [j.name() for j in sorted((a.joint() for a in plant._actuators), key=lambda j: j.velocity_start())]


def joint_label(names, i: int) -> str:
    """Joint i (0-based, the protocol's order) as a user reads it: its name (`iiwa_joint_4` for 3), else
    `joint i` when the names are not known."""
    return names[i] if names is not None and 0 <= i < len(names) else f"joint {i}"


def joint_labels(names, indices) -> str:
    """Those joints as a user reads them, comma-separated (joint_label)."""
    return ", ".join(joint_label(names, int(i)) for i in indices)


def load_robot(cfg: RobotConfig) -> Robot:
    """The plant and joint map; the loop drives fully actuated fixed-base arms, one actuator per joint
    (in any order: the protocol's arrays are in velocity order, joint_names)."""
    plant = build_plant(cfg)
    nv, nu = plant.num_velocities(), plant.num_actuators()
    if plant.GetFloatingBaseBodies():
        raise ConfigError("robot.model", "the model has a floating base; weld its root with robot.weld "
                                         "(the loop drives fixed-base arms)")
    B = plant.MakeActuationMatrix()
    if nu != nv or not (np.isin(B, (0.0, 1.0)).all() and (B.sum(0) == 1).all() and (B.sum(1) == 1).all()):
        raise ConfigError("robot.model", f"the loop needs one actuator per joint; the model has "
                                         f"{nv} velocities and {nu} actuators")
    if cfg.end_effector:
        if not plant.HasFrameNamed(cfg.end_effector):
            raise ConfigError("robot.end_effector", f"the model has no frame named '{cfg.end_effector}'")
        ee = plant.GetFrameByName(cfg.end_effector)
    else:
        ee = plant.get_frame(plant.num_frames() - 1)
    attach_payload(plant, cfg.payload, cfg.end_effector)
    return Robot(plant, cfg.protocol, actuated_joint_names(plant), ee)
