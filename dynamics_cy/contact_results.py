"""Contact results with Drake's names (pydrake.multibody.plant.ContactResults, PointPairContactInfo,
DeformableContactInfo, pydrake.geometry.PenetrationAsPointPair): what a simulator reports about point
contacts."""
from __future__ import annotations

import numpy as np

from .tree import BodyIndex


def _vec3(value) -> np.ndarray:
    return np.array(value, dtype=float).reshape(3)


class PenetrationAsPointPair:
    """Geometry A and B penetrating: witness points Ca on A and Cb on B (in W), the unit normal nhat_BA_W
    pointing from B into A, and the penetration depth >= 0."""

    def __init__(self, id_A, id_B, p_WCa, p_WCb, nhat_BA_W, depth: float):
        self.id_A, self.id_B = id_A, id_B
        self.p_WCa, self.p_WCb, self.nhat_BA_W = _vec3(p_WCa), _vec3(p_WCb), _vec3(nhat_BA_W)
        self.depth = float(depth)

    def __repr__(self) -> str:
        return f"PenetrationAsPointPair(id_A={self.id_A!r}, id_B={self.id_B!r}, depth={self.depth:g})"


class PointPairContactInfo:
    """One point contact between bodies A and B: the force f_Bc_W on B at the contact point C, p_WC,
    the separation speed along nhat_BA_W (positive when separating) and the slip speed (>= 0)."""

    def __init__(self, bodyA_index, bodyB_index, f_Bc_W, p_WC, separation_speed: float, slip_speed: float,
                 point_pair: PenetrationAsPointPair):
        self._A, self._B = BodyIndex(int(bodyA_index)), BodyIndex(int(bodyB_index))
        self._f, self._p = _vec3(f_Bc_W), _vec3(p_WC)
        self._separation_speed, self._slip_speed = float(separation_speed), float(slip_speed)
        self._point_pair = point_pair

    def bodyA_index(self) -> BodyIndex:
        return self._A

    def bodyB_index(self) -> BodyIndex:
        return self._B

    def contact_force(self) -> np.ndarray:
        return self._f.copy()

    def contact_point(self) -> np.ndarray:
        return self._p.copy()

    def separation_speed(self) -> float:
        return self._separation_speed

    def slip_speed(self) -> float:
        return self._slip_speed

    def point_pair(self) -> PenetrationAsPointPair:
        return self._point_pair

    def __repr__(self) -> str:
        return (f"PointPairContactInfo(bodyA={int(self._A)}, bodyB={int(self._B)}, f_Bc_W={self._f.tolist()}, "
                f"p_WC={self._p.tolist()}, depth={self._point_pair.depth:g})")


class DeformableContactInfo:
    """The contact of a deformable geometry (id_A) with another (id_B): the contact surface mesh in W
    and F_Ac_W, the spatial force on A at the surface's centroid C, in W. A record type of Drake's
    ContactResults; the simulated plant has no deformable bodies, so it reports none."""

    def __init__(self, id_A, id_B, contact_mesh_W, F_Ac_W):
        self._id_A, self._id_B, self._mesh, self._F = id_A, id_B, contact_mesh_W, F_Ac_W

    def id_A(self):
        return self._id_A

    def id_B(self):
        return self._id_B

    def contact_mesh(self):
        return self._mesh

    def F_Ac_W(self):
        return self._F

    def __copy__(self) -> "DeformableContactInfo":
        return DeformableContactInfo(self._id_A, self._id_B, self._mesh, self._F)

    def __repr__(self) -> str:
        return f"DeformableContactInfo(id_A={self._id_A!r}, id_B={self._id_B!r}, F_Ac_W={self._F!r})"


class ContactResults:
    """The point contacts of one state of a simulation (there are no hydroelastic or deformable ones:
    the simulated plant computes point contact)."""

    def __init__(self, point_pairs=(), plant=None):
        self._pairs = list(point_pairs)
        self._plant = plant

    def plant(self):
        """The plant that computed these results, or None (a default-constructed ContactResults)."""
        return self._plant

    def set_plant(self, plant) -> None:
        self._plant = plant

    def SelectHydroelastic(self, selector) -> "ContactResults":
        """A copy keeping the hydroelastic contacts ``selector`` accepts (none here) and every point pair."""
        return ContactResults(self._pairs, self._plant)

    def num_deformable_contacts(self) -> int:
        return 0

    def hydroelastic_contact_info(self, i: int):
        raise IndexError(f"hydroelastic contact {i} is out of range: there are none (point contact only)")

    def deformable_contact_info(self, i: int):
        raise IndexError(f"deformable contact {i} is out of range: there are none (point contact only)")

    def num_point_pair_contacts(self) -> int:
        return len(self._pairs)

    def point_pair_contact_info(self, i: int) -> PointPairContactInfo:
        if not 0 <= i < len(self._pairs):
            raise IndexError(f"point pair contact {i} is out of range [0, {len(self._pairs)})")
        return self._pairs[i]

    def num_hydroelastic_contacts(self) -> int:
        return 0

    def AddContactInfo(self, point_pair_info: PointPairContactInfo) -> None:
        self._pairs.append(point_pair_info)

    def Clear(self) -> None:
        self._pairs.clear()
