"""What the URDF and SDFormat parsers share: options, diagnostics and inertia checks."""
from __future__ import annotations

import logging

import numpy as np

from ..inertia import RotationalInertia, SpatialInertia, UnitInertia, inertia_problem
from ..spatial_math import RigidTransform
from .xml_source import XmlSource

log = logging.getLogger("dynamics_cy.parsing")
WATER_DENSITY = 1000.0  # kg/m³


def central_inertia(mass: float, X_BBi: RigidTransform, I_BBcm_Bi: np.ndarray) -> SpatialInertia:
    """M_BBo_B of a body of `mass` whose inertia frame Bi (origin at the centre of mass) is at X_BBi
    and whose rotational inertia about Bcm, expressed in Bi, is I_BBcm_Bi."""
    if mass == 0:
        return SpatialInertia(0.0, X_BBi.translation(), UnitInertia(), skip_validity_check=True)
    R = X_BBi.rotation().matrix()
    I_Bo_B = RotationalInertia(R @ I_BBcm_Bi @ R.T).ShiftFromCenterOfMass(mass, -X_BBi.translation())
    return SpatialInertia(mass, X_BBi.translation(), UnitInertia(I_Bo_B.CopyToFullMatrix3() / mass),
                          skip_validity_check=True)


class ModelParser:
    """Base of the format parsers: the plant, the document, the options and the diagnostics."""

    def __init__(self, plant, xml: XmlSource, base_dir: str | None, options):
        self.plant, self.xml, self.base_dir = plant, xml, base_dir
        self.package_map, self.diagnostics = options.package_map(), options.diagnostics
        self.lenient_inertia = options.nonphysical_inertia == "warn"

    def warn(self, element, message: str) -> None:
        text = str(self.xml.error(element, message))
        self.diagnostics.append(text)
        log.warning(text)

    def body_inertia(self, mass: float, X_BBi: RigidTransform, I: np.ndarray, element,
                     link_name: str) -> SpatialInertia:
        """M_BBo_B from a parsed <inertial>. A rotational inertia no physical body has (or a massless
        link with rotational inertia) is an error; when lenient it is replaced, as Drake does, by a
        solid sphere of water density with the link's mass (1 kg if massless) at the centre of mass."""
        problem = inertia_problem(I)
        if problem is None and mass == 0 and np.any(I):
            problem = "is non-zero on a massless link"
        if problem is None:
            return central_inertia(mass, X_BBi, I)
        message = f"link '{link_name}': the rotational inertia {problem}"
        if not self.lenient_inertia:
            raise self.xml.error(element, message + " (Parser(..., nonphysical_inertia='warn') accepts it)")
        self.warn(element, message + "; replaced by a solid sphere of water density")
        m = mass if mass > 0 else 1.0
        radius = np.cbrt(3.0 * m / (4.0 * np.pi * WATER_DENSITY))
        return central_inertia(m, X_BBi, 0.4 * m * radius**2 * np.eye(3))
