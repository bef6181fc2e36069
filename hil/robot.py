"""The robot the loop drives: its plant from the config and how its joints map to the protocol."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynamics_cy import MultibodyPlant, Parser
from dynamics_cy.errors import DynamicsError, ModelError

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


def build_plant(cfg: RobotConfig, *, simulated: bool = False) -> MultibodyPlant:
    """The plant of the config's model (welding cfg.weld to the world if given), finalized.

    The controller's plant is parsed as Drake parses it (a nonphysical inertia is replaced, with a
    warning). The simulated robot's plant (`simulated`) is the physics the tests trust, so there a
    nonphysical inertia is an error naming the file, line and link, and so is a joint whose outboard
    bodies have no mass or inertia to move (Drake's simulator stops on it at its first step)."""
    plant = MultibodyPlant(0.0)
    try:
        Parser(plant, nonphysical_inertia="error" if simulated else "warn").AddModels(cfg.model)
        if cfg.weld:
            if not plant.HasFrameNamed(cfg.weld):
                raise ConfigError("robot.weld", f"the model has no frame named '{cfg.weld}'")
            plant.WeldFrames(plant.world_frame(), plant.GetFrameByName(cfg.weld))
        plant.Finalize()
    except ModelError as e:          # ParseError names the file, line and element
        hint = " (the simulated robot needs physical inertias)" if simulated and "inertia" in str(e) else ""
        raise ConfigError("robot.model", f"the model cannot be used: {e}{hint}") from None
    if simulated:
        try:
            plant.CalcForwardDynamics(plant.CreateDefaultContext(), np.zeros(plant.num_velocities()))
        except DynamicsError as e:
            raise ConfigError("robot.model", f"{cfg.model}: the simulated robot cannot move it: {e}") from None
    return plant


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
