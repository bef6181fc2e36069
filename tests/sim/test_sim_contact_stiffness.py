"""The contact stiffness checked against the light bodies it pushes (drivers.sim.contact_check): h √(n k/m)
with m the effective mass 1/λ_max(J M⁻¹ Jᵀ) at the geometry, the coupler constraints enforced; a warning
naming sim.contact.stiffness above 1. Closed forms: a free box's effective mass at its centre is its mass;
the WSG's finger, coupled to the other by the <mimic> (q₀ = −q₁), moves both (2 × 50 g) along its slide."""
import math
import warnings

import numpy as np
import pytest

from drivers.core.config import RobotConfig
from drivers.core.paths import DEFAULT_ROBOT
from drivers.core.robot import build_plant
from drivers.sim import load_sim_config
from drivers.sim.contact import ContactModel
from drivers.sim.contact_check import ContactStiffnessWarning, coupled_inverse, effective_mass, stiffness_ratio

IIWA = RobotConfig(str(DEFAULT_ROBOT), end_effector="iiwa_link_ee")
ARM = [f"iiwa_link_{i}" for i in range(8)]
# the arm's links (cylinders) out of contact: the pads and the box touch
EXCLUDE = [[a, b] for i, a in enumerate(ARM) for b in ARM[i + 1:] + ["body", "left_finger", "right_finger", "box"]]


def station(stiffness=None):
    contact = {"enabled": True, "between_bodies": True, "ground": {"enabled": False},
               "exclude": EXCLUDE}
    if stiffness is not None:
        contact["stiffness"] = stiffness
    cfg = load_sim_config({"gripper": {"type": "wsg50"}, "contact": contact,
                           "objects": [{"name": "box", "size": [0.05, 0.05, 0.05], "mass": 0.2,
                                        "xyz": [0.5, 0.0, 0.3]}]})
    return build_plant(IIWA, simulated=True, gripper=cfg.gripper, objects=cfg.objects), cfg.contact


def test_the_effective_masses_are_the_free_boxs_and_both_coupled_fingers():
    plant, _ = station()
    context = plant.CreateDefaultContext()
    Minv = coupled_inverse(plant, context)
    box = plant.GetCollisionGeometriesForBody(plant.GetBodyByName("box"))[0]
    pad = plant.GetCollisionGeometriesForBody(plant.GetBodyByName("right_finger"))[0]
    assert effective_mass(plant, context, Minv, box) == pytest.approx(0.2, rel=1e-9)
    assert effective_mass(plant, context, Minv, pad) == pytest.approx(0.1, rel=1e-6)
    uncoupled = np.linalg.inv(plant.CalcMassMatrix(context))                 # one finger alone: its 50 g
    assert effective_mass(plant, context, uncoupled, pad) == pytest.approx(0.05, rel=1e-6)


def test_the_default_stiffness_on_the_wsgs_fingers_is_named_as_unstable():
    plant, contact = station()                                              # the default 10⁵ N/m
    with pytest.warns(ContactStiffnessWarning, match=r"sim\.contact\.stiffness: 100000 N/m on '(left|right)_finger_pad'"
                                                     r".*0\.1 kg, 4 points.*= 2\.00.*unstable.*at most 2\.5e\+04"):
        model = ContactModel(plant, contact)
    assert model.stiffness_ratio == pytest.approx(0.001 * math.sqrt(4 * 1e5 / 0.1))


def test_the_grasping_stiffness_passes_and_the_suggested_bound_is_h_omega_one():
    plant, contact = station(2.0e4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ContactStiffnessWarning)
        model = ContactModel(plant, contact)
    assert model.stiffness_ratio == pytest.approx(0.001 * math.sqrt(4 * 2e4 / 0.1))        # 0.89
    assert stiffness_ratio(0.1 / (4 * 0.001 ** 2), 0.001, 4, 0.1) == pytest.approx(1.0)
    with pytest.warns(ContactStiffnessWarning, match="chatters"):
        ContactModel(*station(5.0e4))                                                       # 1.41
