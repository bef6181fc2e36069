"""Gripper driver models: what the real grippers' drivers do with their LCM messages, without physics.

Each model takes the command stream (lcmt_schunk_wsg_command), the time and the fingers' measured
state from a physics layer, and gives the target the mechanism should follow (`target`: width, its
rate, the grip-force bound) and the status the real driver would publish (lcmt_schunk_wsg_status):

- drivers.grippers.wsg          the Schunk WSG 50 behind drake-schunk-driver (SCHUNK_WSG_*)
- drivers.grippers.franka_hand  the Franka Hand behind drake-franka-driver's hand driver (PANDA_HAND_*)
- drivers.grippers.mechanism    the target's conventions, the setpoint profile, Drake's WSG PD law

The model of the WSG 50 itself is configs/robots/schunk_wsg_50.urdf. See docs/grippers.md.
"""
from drivers.grippers.franka_hand import FrankaHandDriverConfig, FrankaHandDriverModel, FrankaHandLimits
from drivers.grippers.mechanism import TrapezoidProfile, schunk_wsg_pd_force
from drivers.grippers.wsg import WsgDriverConfig, WsgDriverModel, WsgLimits

__all__ = ["FrankaHandDriverConfig", "FrankaHandDriverModel", "FrankaHandLimits", "TrapezoidProfile",
           "WsgDriverConfig", "WsgDriverModel", "WsgLimits", "schunk_wsg_pd_force"]
