"""What the parsers share: the format a file's name says, and the URDF and SDFormat parsers' options,
diagnostics and inertia checks."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..inertia import RotationalInertia, SpatialInertia, UnitInertia, inertia_problem
from ..spatial_math import RigidTransform
from .xml_source import XmlSource

log = logging.getLogger("dynamics_cy.parsing")
WATER_DENSITY = 1000.0  # kg/m³
_DIRECTIVES = ("dmd.yaml", "dmd.yml")


def _file_type(file_name: str) -> str:
    """The format a file's name says: "dmd.yaml" for model directives, else its extension."""
    lower = file_name.lower()
    for kind in _DIRECTIVES:
        if lower.endswith("." + kind):
            return "dmd.yaml"
    return Path(file_name).suffix


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
        self.plant, self.xml, self.base_dir, self.options = plant, xml, base_dir, options
        self.package_map, self.diagnostics = options.package_map(), options.diagnostics
        self.unresolved: list[tuple[str, str]] = []       # (mesh URI, why it does not resolve)
        self.strict_inertia = options.nonphysical_inertia == "error"
        self.strict = options.strict

    def add_model_instance(self, element, name: str):
        """The model instance of a model named `name` in its file, named as the Parser names it (its
        model_name_prefix or a directive's namespace, a directive's name, auto-renaming)."""
        try:
            return self.plant.AddModelInstance(self.options._model_name(name))
        except RuntimeError as e:
            raise self.xml.error(element, str(e)) from None

    def record_collision_filter_groups(self, container) -> None:
        """The model's <drake:collision_filter_group>s, scoped by the model instance's name, recorded for
        Parser.GetCollisionFilterGroups (URDF names in attributes, SDFormat as text)."""
        model = self.plant.GetModelInstanceName(self.instance)
        for group in container.findall("drake:collision_filter_group"):
            if (group.get("ignore") or "").strip().lower() in ("true", "1"):
                continue
            if not group.get("name"):
                raise self.xml.error(group, "<drake:collision_filter_group> needs a name attribute")

            def names(tag, attribute, group=group):
                out = []
                for el in group.findall(tag):
                    name = el.get(attribute) if el.get(attribute) is not None else (el.text or "").strip()
                    if not name:
                        raise self.xml.error(el, f"<{tag}> names nothing")
                    out.append((el, name))
                return out
            members = names("drake:member", "link")
            for el, link in members:
                if not self.plant.HasBodyNamed(link, self.instance):
                    raise self.xml.error(el, f"collision filter group '{group.get('name')}': member '{link}' is "
                                             f"not a link of model '{model}'")
            scoped = f"{model}::{group.get('name')}"
            try:
                self.options._collision_resolver.add_group(
                    scoped, [f"{model}::{link}" for _, link in members],
                    [f"{model}::{g}" for _, g in names("drake:member_group", "name")])
            except ValueError as e:
                raise self.xml.error(group, str(e)) from None
            for _, ignored in names("drake:ignored_collision_filter_group", "name"):
                self.options._collision_resolver.add_pair(scoped, f"{model}::{ignored}")

    def warn(self, element, message: str, drake_warns: bool = True) -> None:
        """A diagnostic (logged and kept in parser.diagnostics); an error under SetStrictParsing() where
        Drake warns too (not for what only this parser tells: what it records but does not model)."""
        if self.strict and drake_warns:
            raise self.xml.error(element, message)
        text = str(self.xml.error(element, message))
        self.diagnostics.append(text)
        log.warning(text)

    def warn_unsupported_element(self, node, tag: str) -> None:
        """Drake's warning for a documented child element it ignores."""
        child = node.find(tag)
        if child is not None:
            self.warn(child, f"The tag '{tag}' found as a child of '{node.tag}' is currently unsupported and "
                             "will be ignored.")

    def warn_unsupported_attribute(self, node, attribute: str) -> None:
        """Drake's warning for a documented attribute it ignores."""
        if node.get(attribute) is not None:
            self.warn(node, f"The attribute '{attribute}' found in a '{node.tag}' tag is currently unsupported "
                            "and will be ignored.")

    def mesh_path(self, url: str) -> str:
        """The file a mesh URI names; an unresolved one is kept as written and reported once, at the end."""
        path, error = self.package_map._resolve(url, self.base_dir)
        if error:
            self.unresolved.append((url, error))
            return url
        return path

    def report_unresolved(self) -> None:
        """One warning for all the mesh URIs that did not resolve: how many, the first few, and why."""
        if not self.unresolved:
            return
        n, first = len(self.unresolved), self.unresolved[0][1]
        shown = ", ".join(url for url, _ in self.unresolved[:3]) + (", ..." if n > 3 else "")
        self.warn(self.xml.root, f"{n} mesh URI{'s' if n > 1 else ''} did not resolve and stay as written "
                                 f"({shown}); the first: {first} (add the package with "
                                 "parser.package_map().Add(name, path) or PopulateFromFolder)")

    def body_inertia(self, mass: float, X_BBi: RigidTransform, I: np.ndarray, element,
                     link_name: str) -> SpatialInertia:
        """M_BBo_B from a parsed <inertial>: mass m, inertia frame Bi at X_BBi, I = I_BBcm_Bi.

        Drake's ParseSpatialInertia (detail_common.cc), step for step: an I that is not a rotational
        inertia (Drake's CouldBePhysicallyValid), a negative mass, or a massless link with non-zero
        I is replaced by a solid sphere of water density centred at Bcm, of mass m (1 kg when m is
        not positive), with a warning naming the link; a massless link with zero I is massless.
        With Parser(..., nonphysical_inertia="error") each of these is a ParseError instead."""
        problem = inertia_problem(I)
        if problem is None and mass == 0 and not np.any(I):
            return SpatialInertia(0.0, np.zeros(3), UnitInertia(), skip_validity_check=True)
        if problem is not None:
            problem = f"the rotational inertia {problem}"
        elif not mass > 0:
            problem = f"mass {mass:g} is not positive, but the rotational inertia is non-zero" if mass == 0 \
                else f"mass {mass:g} is negative"
        else:
            R = X_BBi.rotation().matrix()
            re_expressed = inertia_problem(R @ I @ R.T)   # Drake re-checks I_BBcm_B (round-off)
            if re_expressed is None:
                return central_inertia(mass, X_BBi, I)
            problem = f"the rotational inertia re-expressed in the link frame {re_expressed}"
        message = f"link '{link_name}': {problem}"
        if self.strict_inertia:
            raise self.xml.error(element, message + " (Parser(..., nonphysical_inertia='warn') accepts it, "
                                                    "as Drake does, replacing it by a sphere)")
        m = mass if mass > 0 else 1.0
        radius = np.cbrt(3.0 / (4.0 * np.pi) * m / WATER_DENSITY)
        sphere = SpatialInertia.SolidSphereWithDensity(WATER_DENSITY, radius)
        self.warn(element, message + f"; replaced, as Drake does, by a solid sphere of water density of "
                                     f"{sphere.get_mass():g} kg at the centre of mass")
        I_sphere = sphere.CalcRotationalInertia().CopyToFullMatrix3()
        return central_inertia(sphere.get_mass(), RigidTransform(X_BBi.translation()), I_sphere)
