"""The robot the loop drives: its plant from the config and how its joints map to the protocol."""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from dynamics_cy import MultibodyPlant, Parser, RotationalInertia, SpatialInertia

from .config import RobotConfig
from .schema import ConfigError


@dataclass
class Robot:
    plant: MultibodyPlant
    protocol: str
    joint_names: list[str]        # the actuated joints, in the order of the protocol's arrays
    end_effector: object          # a Frame

    @property
    def n(self) -> int:
        return len(self.joint_names)


def parse_model(cfg: RobotConfig) -> MultibodyPlant:
    """The config's model parsed (with cfg.weld welded to the world), not finalized."""
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(cfg.model)
    if cfg.weld:
        if not plant.HasFrameNamed(cfg.weld):
            raise ConfigError("robot.weld", f"the model has no frame named '{cfg.weld}'")
        plant.WeldFrames(plant.world_frame(), plant.GetFrameByName(cfg.weld))
    return plant


def build_plant(cfg: RobotConfig, payload=None, parsed: MultibodyPlant | None = None) -> MultibodyPlant:
    """The plant of the config's model (welding cfg.weld to the world if given), finalized. `payload`
    (drivers.sim.config.PayloadConfig, the simulated robot's): a rigid body of that mass, CoM and
    central inertia welded to its frame (default: cfg.end_effector, else the model's last frame).
    `parsed`: parse_model(cfg) done before, copied instead of parsing the file again."""
    plant = copy.deepcopy(parsed) if parsed is not None else parse_model(cfg)
    if payload is not None and payload.mass > 0:
        _add_payload(plant, payload, cfg.end_effector)
    plant.Finalize()
    return plant


def _add_payload(plant: MultibodyPlant, payload, end_effector: str | None) -> None:
    """M_BBo_B = (m, p_BoBcm, I_Bcm) of a body B whose frame is the flange frame F (welded, X_FB = I)."""
    name = payload.frame or end_effector
    if name is not None and not plant.HasFrameNamed(name):
        raise ConfigError("sim.payload.frame", f"the model has no frame named '{name}'")
    frame = plant.GetFrameByName(name) if name else plant.get_frame(plant.num_frames() - 1)
    I = RotationalInertia(*payload.inertia)
    if not I.CouldBePhysicallyValid():
        raise ConfigError("sim.payload.inertia", f"{payload.inertia} is not a physically valid inertia (moments "
                                                 "and products must satisfy the triangle inequalities)")
    body = plant.AddRigidBody("hil_payload", frame.model_instance(),
                              SpatialInertia.MakeFromCentralInertia(payload.mass, payload.com, I))
    plant.WeldFrames(frame, body.body_frame())


def load_robot(cfg: RobotConfig) -> Robot:
    """The plant and joint map; the loop drives fully actuated fixed-base arms whose actuators are in
    velocity order (as for the iiwa and Panda)."""
    plant = build_plant(cfg)
    nv, nu = plant.num_velocities(), plant.num_actuators()
    if plant.GetFloatingBaseBodies():
        raise ConfigError("robot.model", "the model has a floating base; weld its root with robot.weld "
                                         "(the loop drives fixed-base arms)")
    if nu != nv or not np.array_equal(plant.MakeActuationMatrix(), np.eye(nv)):
        raise ConfigError("robot.model", f"the loop needs one actuator per joint in joint order; the model has "
                                         f"{nv} velocities and {nu} actuators")
    joints = sorted((a.joint() for a in plant._actuators), key=lambda j: j.velocity_start())
    if cfg.end_effector:
        if not plant.HasFrameNamed(cfg.end_effector):
            raise ConfigError("robot.end_effector", f"the model has no frame named '{cfg.end_effector}'")
        ee = plant.GetFrameByName(cfg.end_effector)
    else:
        ee = plant.get_frame(plant.num_frames() - 1)
    return Robot(plant, cfg.protocol, [j.name() for j in joints], ee)
