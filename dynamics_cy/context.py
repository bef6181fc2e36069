"""Context (the state x = [q; v] and time) and MultibodyForces, as in Drake."""
from __future__ import annotations

import numpy as np

from .spatial_math import SpatialForce


class Context:
    """State of one MultibodyPlant: time, q (nq) and v (nv), and its parameters: the constraints' active
    status and distance parameters. Create with plant.CreateDefaultContext()."""

    def __init__(self, plant, q: np.ndarray, v: np.ndarray):
        self._plant = plant
        self._x = np.concatenate([q, v]).astype(float)
        self._nq = q.shape[0]
        self._time = 0.0
        self._constraint_active, self._distance_params = plant._new_constraint_parameters()
        self._parameters = {}       # Drake's context parameters set away from their defaults: {(element, name): array}

    @property
    def _q(self) -> np.ndarray:
        return self._x[:self._nq]

    @property
    def _v(self) -> np.ndarray:
        return self._x[self._nq:]

    def get_time(self) -> float:
        return self._time

    def SetTime(self, time_sec: float) -> None:
        self._time = float(time_sec)

    def num_continuous_states(self) -> int:
        return 0 if self._plant.is_discrete() else self._x.shape[0]

    def num_discrete_state_groups(self) -> int:
        return 1 if self._plant.is_discrete() else 0

    def get_mutable_positions(self) -> np.ndarray:
        return self._x[:self._nq]

    def get_mutable_velocities(self) -> np.ndarray:
        return self._x[self._nq:]

    def get_mutable_state_vector(self) -> np.ndarray:
        return self._x

    def Clone(self) -> "Context":
        c = Context(self._plant, self._q, self._v)
        c._time = self._time
        c._constraint_active, c._distance_params = dict(self._constraint_active), dict(self._distance_params)
        c._parameters = {k: v.copy() for k, v in self._parameters.items()}
        return c

    def __repr__(self) -> str:
        return f"<Context time={self._time} q={self._q} v={self._v}>"


class MultibodyForces:
    """Applied forces: generalized forces (nv) and a spatial force F_Bo_W per body."""

    def __init__(self, plant):
        plant._throw_if_not_finalized("MultibodyForces")
        self._tau = np.zeros(plant.num_velocities())
        self._body_forces = np.zeros((plant.num_bodies(), 6))

    def SetZero(self) -> None:
        self._tau[:] = 0.0
        self._body_forces[:] = 0.0

    def num_velocities(self) -> int:
        return self._tau.shape[0]

    def num_bodies(self) -> int:
        return self._body_forces.shape[0]

    def generalized_forces(self) -> np.ndarray:
        return self._tau.copy()

    def mutable_generalized_forces(self) -> np.ndarray:
        return self._tau

    def body_forces(self) -> list:
        """F_Bo_W of every body, by BodyIndex."""
        return [SpatialForce(f) for f in self._body_forces]

    def AddInForces(self, addend: "MultibodyForces") -> None:
        if addend._tau.shape != self._tau.shape or addend._body_forces.shape != self._body_forces.shape:
            raise ValueError("AddInForces: the forces belong to plants of different sizes")
        self._tau += addend._tau
        self._body_forces += addend._body_forces

    def CheckHasRightSizeForModel(self, plant) -> bool:
        return self._tau.shape[0] == plant.num_velocities() and self._body_forces.shape[0] == plant.num_bodies()
