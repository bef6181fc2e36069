"""URDF into a MultibodyPlant, following Drake's URDF parser.

A link named ``world`` is the world body (declared or not, as in Drake). Each joint gets a frame on its parent named
``<joint>_parent`` at the joint origin; the child frame is the child link's frame. Actuators come
from SimpleTransmissions, with the effort limit of the joint (a zero limit skips the actuator). A
floating joint is ignored with a warning, as Drake does: its child stays a free body.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ParseError
from ..geometry import Box, Capsule, CoulombFriction, Cylinder, Mesh, Sphere
from ..inertia import SpatialInertia
from ..joints import PrismaticJoint, RevoluteJoint, WeldJoint
from ..joints_more import PlanarJoint
from ..plant_config import DiscreteContactSolver
from ..spatial_math import RigidTransform, RollPitchYaw, RotationMatrix
from ..tree import FixedOffsetFrame
from .common import ModelParser
from .xml_source import XmlSource

DEFAULT_RGBA = np.array([0.9, 0.9, 0.9, 1.0])
# Drake's URDF extensions read here; the children of <drake:proximity_properties> other than the
# friction coefficients are contact parameters of Drake's solvers and are ignored quietly.
DRAKE_READ = {"drake:capsule", "drake:proximity_properties", "drake:mu_static", "drake:mu_dynamic",
              "drake:rotor_inertia", "drake:gear_ratio", "drake:collision_filter_group", "drake:member",
              "drake:member_group", "drake:ignored_collision_filter_group", "drake:ball_constraint",
              "drake:ball_constraint_body_A", "drake:ball_constraint_p_AP", "drake:ball_constraint_body_B",
              "drake:ball_constraint_p_BQ"}
DRAKE_IGNORED_WHY = {
    "drake:controller_gains": "Drake's discrete plant PD-controls such actuators; here actuation is torque",
}


def _rotation_z_to(axis: np.ndarray) -> RotationMatrix:
    """The smallest rotation taking +z to the unit vector `axis` (how a planar joint's plane is placed)."""
    z = np.array([0.0, 0.0, 1.0])
    c = float(z @ axis)
    if c < -1 + 1e-12:
        return RotationMatrix.MakeXRotation(np.pi)
    k = np.cross(z, axis)
    s = np.linalg.norm(k)
    if s < 1e-12:
        return RotationMatrix()
    k /= s
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return RotationMatrix(np.eye(3) + s * K + (1 - c) * K @ K)



def add_simple_transmissions(root, joints) -> None:
    """Appends to a URDF's <robot> element (xml.etree) one SimpleTransmission per joint named in
    `joints`, with an actuator `<joint>_motor`: parsed, each gives the joint an actuator with its
    <limit effort> (a model written without transmissions, actuated as Drake would parse it)."""
    import xml.etree.ElementTree as ET
    for name in joints:
        t = ET.SubElement(root, "transmission", name=f"{name}_trans")
        ET.SubElement(t, "type").text = "transmission_interface/SimpleTransmission"
        ET.SubElement(t, "joint", name=name)
        ET.SubElement(t, "actuator", name=f"{name}_motor")

class UrdfParser(ModelParser):
    """Parses one URDF document into a plant (use through Parser.AddModels)."""

    def __init__(self, plant, xml: XmlSource, base_dir: str | None, options):
        super().__init__(plant, xml, base_dir, options)
        self.materials: dict[str, np.ndarray] = {}
        self.links: dict[str, object] = {}

    def parse(self):
        root = self.xml.root
        if root.tag != "robot":
            raise self.xml.error(root, f"a URDF's root element must be <robot>, got <{root.tag}>")
        self.warn_unsupported_attribute(root, "version")
        name = root.get("name")
        if not name:
            raise self.xml.error(root, "<robot> needs a name attribute")
        for m in root.findall("material"):
            self.materials[m.get("name", "")] = self._material_rgba(m)
        self.instance = self.add_model_instance(root, name)
        self._drake_extensions(root)
        geometry = []
        for link in root.findall("link"):
            geometry.append((link, self._link(link)))
        joint_info = {}
        joints = []
        for joint in root.findall("joint"):
            if joint.get("type") == "floating":
                self._floating(joint)
                continue
            joint_info[joint.get("name")] = self._joint(joint)
            joints.append(joint)
        self._check_no_loops(joints)
        for joint in root.findall("joint"):       # after every joint, as Drake's ParseMimicTag
            if joint.find("mimic") is not None:
                self._mimic(joint, joint.find("mimic"))
        for t in root.findall("transmission"):
            self._transmission(t, joint_info)
        for link, body in geometry:
            self._geometry(link, body)
        self.record_collision_filter_groups(root)
        for node in root.findall("drake:ball_constraint"):
            self._ball_constraint(node)
        self.report_unresolved()
        return self.instance

    def _drake_extensions(self, root) -> None:
        """One warning per <drake:...> element kind not modelled here (the model still loads, as its
        dynamics without them); <drake:joint> would change the tree, so it is an error."""
        contact = {c for p in root.iter("drake:proximity_properties") for c in p.iter()}
        seen: dict[str, list] = {}
        for el in root.iter():
            if isinstance(el.tag, str) and el.tag.startswith("drake:") and el.tag not in DRAKE_READ \
                    and el not in contact:
                seen.setdefault(el.tag, []).append(el)
        for tag, elements in seen.items():
            if tag == "drake:joint":
                raise self.xml.error(elements[0], f"<drake:joint name='{elements[0].get('name')}' "
                                                  f"type='{elements[0].get('type')}'> is not supported")
            why = DRAKE_IGNORED_WHY.get(tag, "it is not modelled here")
            self.warn(elements[0], f"{len(elements)} <{tag}> element{'s' if len(elements) > 1 else ''} ignored: "
                                   f"{why}", drake_warns=False)

    # --- links -------------------------------------------------------------------------------
    def _origin(self, element) -> RigidTransform:
        o = element.find("origin") if element is not None else None
        if o is None:
            return RigidTransform()
        xyz = self.xml.floats(o, o.get("xyz", "0 0 0"), 3, "origin xyz")
        rpy = self.xml.floats(o, o.get("rpy", "0 0 0"), 3, "origin rpy")
        return RigidTransform(RollPitchYaw(rpy), xyz)

    def _link(self, link):
        self.warn_unsupported_attribute(link, "type")
        name = link.get("name")
        if not name:
            raise self.xml.error(link, "<link> needs a name attribute")
        if name in self.links:
            raise self.xml.error(link, f"duplicate link name '{name}'")
        if name == "world":
            if link.find("inertial") is not None:
                self.warn(link, 'A URDF file declared the "world" link and then attempted to assign mass '
                                "properties (via the <inertial> tag). Only geometries, <collision> and <visual>, "
                                "can be assigned to the world link. The <inertial> tag is being ignored.")
            self.links[name] = self.plant.world_body()
            return self.links[name]
        M = self._inertia(link.find("inertial"), name)
        try:
            body = self.plant.AddRigidBody(name, self.instance, M)
        except RuntimeError as e:
            raise self.xml.error(link, str(e)) from None
        self.links[name] = body
        return body

    def _inertia(self, inertial, link_name: str) -> SpatialInertia:
        if inertial is None:
            return SpatialInertia()
        X = self._origin(inertial)
        mass_el = inertial.find("mass")                 # as Drake: a missing mass or moment is 0
        m = self.xml.attr_float(mass_el, "value", 0.0) if mass_el is not None else 0.0
        I = np.zeros((3, 3))
        inertia_el = inertial.find("inertia")
        if inertia_el is not None:
            f = {k: self.xml.attr_float(inertia_el, k, 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            I = np.array([[f["ixx"], f["ixy"], f["ixz"]], [f["ixy"], f["iyy"], f["iyz"]],
                          [f["ixz"], f["iyz"], f["izz"]]])
        return self.body_inertia(m, X, I, inertia_el if inertia_el is not None else inertial, link_name)

    # --- geometry ----------------------------------------------------------------------------
    def _material_rgba(self, material) -> np.ndarray | None:
        color = material.find("color")
        if color is not None:
            return self.xml.floats(color, color.get("rgba"), 4, "color rgba")
        name = material.get("name")
        if name in self.materials:
            return self.materials[name]
        return None

    def _shape(self, geometry_el, owner):
        if geometry_el is None:
            raise self.xml.error(owner, "missing <geometry>")
        children = [c for c in geometry_el if isinstance(c.tag, str)]
        if len(children) != 1:
            raise self.xml.error(geometry_el, f"<geometry> must hold exactly one shape, got {len(children)}")
        s = children[0]
        try:
            if s.tag == "box":
                return Box(*self.xml.floats(s, s.get("size"), 3, "box size"))
            if s.tag == "sphere":
                return Sphere(self.xml.attr_float(s, "radius"))
            if s.tag == "cylinder":
                return Cylinder(self.xml.attr_float(s, "radius"), self.xml.attr_float(s, "length"))
            if s.tag in ("capsule", "drake:capsule"):
                return Capsule(self.xml.attr_float(s, "radius"), self.xml.attr_float(s, "length"))
            if s.tag == "mesh":
                url = s.get("filename")
                if not url:
                    raise self.xml.error(s, "<mesh> needs a filename")
                scale = self.xml.floats(s, s.get("scale", "1 1 1"), 3, "mesh scale")
                return Mesh(self.mesh_path(url), scale)
        except ValueError as e:
            raise self.xml.error(s, str(e)) from None
        raise self.xml.error(s, f"unsupported geometry <{s.tag}> (box, sphere, cylinder, capsule, mesh)")

    def _geometry(self, link, body) -> None:
        for role in ("visual", "collision"):
            for k, g in enumerate(link.findall(role)):
                shape = self._shape(g.find("geometry"), g)
                X_BG = self._origin(g)
                name = g.get("name") or f"{link.get('name')}_{role}{'' if k == 0 else k}"
                try:
                    if role == "visual":
                        mat = g.find("material")
                        rgba = self._material_rgba(mat) if mat is not None else None
                        self.plant.RegisterVisualGeometry(body, X_BG, shape, name,
                                                          DEFAULT_RGBA if rgba is None else rgba)
                    else:
                        self.plant.RegisterCollisionGeometry(body, X_BG, shape, name, self._friction(g))
                except (RuntimeError, ValueError) as e:
                    raise self.xml.error(g, str(e)) from None

    def _friction(self, collision) -> CoulombFriction:
        props = collision.find("drake:proximity_properties")
        if props is None:
            return CoulombFriction()
        mu_s = props.find("drake:mu_static")
        mu_d = props.find("drake:mu_dynamic")
        s = self.xml.attr_float(mu_s, "value") if mu_s is not None else None
        d = self.xml.attr_float(mu_d, "value") if mu_d is not None else None
        s = d if s is None else s
        d = s if d is None else d
        try:
            return CoulombFriction(1.0 if s is None else s, 1.0 if d is None else d)
        except ValueError as e:
            raise self.xml.error(props, str(e)) from None

    # --- joints ------------------------------------------------------------------------------
    def _link_ref(self, joint, tag: str):
        el = joint.find(tag)
        name = el.get("link") if el is not None else None
        if not name:
            raise self.xml.error(joint, f"joint '{joint.get('name')}' needs <{tag} link=...>")
        if name == "world":         # the world, declared as a link or not (Drake's GetBodyForElement)
            return self.plant.world_body()
        if name not in self.links:
            raise self.xml.error(el, f"joint '{joint.get('name')}': {tag} link '{name}' is not defined")
        return self.links[name]

    def _joint(self, joint):
        self.warn_unsupported_element(joint, "calibration")
        self.warn_unsupported_element(joint, "safety_controller")
        name, jtype = joint.get("name"), joint.get("type")
        if not name:
            raise self.xml.error(joint, "<joint> needs a name attribute")
        parent, child = self._link_ref(joint, "parent"), self._link_ref(joint, "child")
        if child.index() == 0:
            raise self.xml.error(joint, f"joint '{name}': the world cannot be a child link")
        X_PJ = self._origin(joint)
        axis_el = joint.find("axis")
        axis = self.xml.floats(axis_el, axis_el.get("xyz", "1 0 0"), 3, "axis xyz") if axis_el is not None \
            else np.array([1.0, 0.0, 0.0])
        if jtype in ("revolute", "continuous", "prismatic", "planar") and np.linalg.norm(axis) < 1e-12:
            raise self.xml.error(axis_el, f"joint '{name}': the axis must be non-zero")
        limit = joint.find("limit")
        lower = upper = velocity = accel = None
        effort = np.inf
        if limit is not None:
            lower = self.xml.attr_float(limit, "lower", -np.inf, allow_inf=True)
            upper = self.xml.attr_float(limit, "upper", np.inf, allow_inf=True)
            velocity = self.xml.attr_float(limit, "velocity", np.inf, allow_inf=True)
            effort = self.xml.attr_float(limit, "effort", np.inf, allow_inf=True)
            accel = self.xml.attr_float(limit, "drake:acceleration", np.inf, allow_inf=True)
            if lower > upper:
                raise self.xml.error(limit, f"joint '{name}': lower limit {lower} exceeds upper limit {upper}")
            if velocity < 0 or effort < 0 or accel < 0:
                raise self.xml.error(limit, f"joint '{name}': velocity, effort and acceleration limits must be "
                                            "non-negative")
        dyn = joint.find("dynamics")
        damping = self.xml.attr_float(dyn, "damping", 0.0) if dyn is not None else 0.0
        if damping < 0:
            raise self.xml.error(dyn, f"joint '{name}': damping {damping} is negative")
        if dyn is not None and self.xml.attr_float(dyn, "friction", 0.0) != 0.0:
            self.warn(dyn, f"joint '{name}': non-zero joint friction is ignored (as Drake does)")
        if dyn is not None and dyn.get("coulomb_window") is not None:
            self.warn(dyn, f"joint '{name}': the 'coulomb_window' attribute is ignored (as Drake does)")
        try:
            F = self.plant.AddFrame(FixedOffsetFrame(f"{name}_parent", parent.body_frame(), X_PJ, self.instance))
            M = child.body_frame()
            if jtype == "revolute":
                j = RevoluteJoint(name, F, M, axis, -np.inf if lower is None else lower,
                                  np.inf if upper is None else upper, damping)
            elif jtype == "continuous":
                j = RevoluteJoint(name, F, M, axis, -np.inf, np.inf, damping)
            elif jtype == "prismatic":
                j = PrismaticJoint(name, F, M, axis, -np.inf if lower is None else lower,
                                   np.inf if upper is None else upper, damping)
            elif jtype == "fixed":
                j = WeldJoint(name, F, M, RigidTransform())
            elif jtype == "planar":
                R = RigidTransform(_rotation_z_to(axis / np.linalg.norm(axis)), np.zeros(3))
                F2 = self.plant.AddFrame(FixedOffsetFrame(f"{name}_plane", F, R, self.instance))
                M2 = self.plant.AddFrame(FixedOffsetFrame(f"{name}_child", M, R, self.instance))
                j = PlanarJoint(name, F2, M2, [damping] * 3)
            else:
                raise self.xml.error(joint, f"joint '{name}' has unknown type '{jtype}' (revolute, continuous, "
                                            "prismatic, fixed, floating, planar)")
            if velocity is not None and j.num_velocities() == 1:
                j.set_velocity_limits([-velocity], [velocity])
            if accel is not None and j.num_velocities() == 1:
                j.set_acceleration_limits([-accel], [accel])
            self.plant.AddJoint(j)
        except ParseError:
            raise
        except (RuntimeError, ValueError) as e:
            raise self.xml.error(joint, str(e)) from None
        return j, effort

    def _floating(self, joint) -> None:
        """Drake ignores a floating joint: its child stays a free body, whose joint Finalize names after it."""
        self._link_ref(joint, "parent")
        child = self._link_ref(joint, "child")
        self.warn(joint, f"joint '{joint.get('name')}' of type floating is ignored, as Drake does; "
                         f"'{child.name()}' stays a free body")

    def _check_no_loops(self, joints) -> None:
        """Each link has at most one parent joint (checked by the plant); following parents must end."""
        parent = {j.find("child").get("link"): j for j in joints}
        for start in parent:
            seen, link = set(), start
            while link in parent:
                if link in seen:
                    raise self.xml.error(parent[link], f"the joints form a kinematic loop through link '{link}'; "
                                                       "loops are not supported")
                seen.add(link)
                link = parent[link].find("parent").get("link")

    def _mimic(self, joint, mimic) -> None:
        """Drake's <mimic>: a coupler constraint q_joint = multiplier · q_mimicked + offset
        (AddCouplerConstraint(joint, mimicked, multiplier, offset)), with Drake's checks in its order;
        ignored with Drake's warning on a discrete plant whose solver is not SAP (TAMSI)."""
        name, other = joint.get("name"), mimic.get("joint")
        if self.plant.is_discrete() and self.plant.get_discrete_contact_solver() != DiscreteContactSolver.kSap:
            self.warn(mimic, f"Joint '{name}' specifies a mimic element that will be ignored. Mimic elements are "
                             "currently only supported by MultibodyPlant with a discrete time step and using "
                             "DiscreteContactSolver::kSap, or by continuous time plants using the CENIC integrator.")
            return
        if not other:
            raise self.xml.error(mimic, f"Joint '{name}' mimic element is missing the required 'joint' attribute.")
        if not self.plant.HasJointNamed(other, self.instance):
            raise self.xml.error(mimic, f"Joint '{name}' mimic element specifies joint '{other}' which does not "
                                        "exist.")
        if other == name:
            raise self.xml.error(mimic, f"Joint '{name}' mimic element specifies joint '{other}'. Joints cannot "
                                        "mimic themselves.")
        multiplier = self.xml.attr_float(mimic, "multiplier", 1.0)
        offset = self.xml.attr_float(mimic, "offset", 0.0)
        if not self.plant.HasJointNamed(name, self.instance):      # a floating joint, which Drake drops
            self.warn(mimic, f"Drake only supports the mimic element for single-dof joints. The mimic element "
                             f"in joint '{name}' will be ignored.")
            return
        joint0 = self.plant.GetJointByName(name, self.instance)
        joint1 = self.plant.GetJointByName(other, self.instance)
        n0, n1 = joint0.num_velocities(), joint1.num_velocities()
        if n0 != n1:
            raise self.xml.error(mimic, f"Joint '{name}' which has {n0} DOF cannot mimic joint '{other}' which "
                                        f"has {n1} DOF.")
        if n0 != 1:
            self.warn(mimic, f"Drake only supports the mimic element for single-dof joints. The joint '{name}' "
                             f"(with {n0} dofs) is attempting to mimic joint '{other}' (with {n1} dofs). The "
                             "mimic element will be ignored.")
            return
        self.plant.AddCouplerConstraint(joint0, joint1, multiplier, offset)

    def _ball_constraint(self, node) -> None:
        """Drake's <drake:ball_constraint>: AddBallConstraint from its children <drake:ball_constraint_body_A
        name=…/>, <…_p_AP value="x y z"/>, <…_body_B name=…/>, <…_p_BQ value=…/>, with Drake's errors."""
        def child(tag):
            el = node.find(tag)
            if el is None:
                raise self.xml.error(node, f"Unable to find the <{tag}> tag")
            return el

        def body(tag):
            el = child(tag)
            name = el.get("name")
            if name is None:
                raise self.xml.error(el, f"Unable to read the 'name' attribute for the <{tag}> tag")
            if not self.plant.HasBodyNamed(name, self.instance):
                raise self.xml.error(el, f"Body: {name} specified for <{tag}> does not exist in the model.")
            return self.plant.GetBodyByName(name, self.instance)

        def vector(tag):
            el = child(tag)
            try:
                return self.xml.floats(el, el.get("value"), 3, f"<{tag}> value")
            except ParseError:
                raise self.xml.error(node, f"Unable to read the 'value' attribute for the <{tag}> tag") from None

        body_A, body_B = body("drake:ball_constraint_body_A"), body("drake:ball_constraint_body_B")
        p_AP, p_BQ = vector("drake:ball_constraint_p_AP"), vector("drake:ball_constraint_p_BQ")
        try:
            self.plant.AddBallConstraint(body_A, p_AP, body_B, p_BQ)
        except RuntimeError as e:
            raise self.xml.error(node, str(e)) from None

    def _mechanical_reduction(self, node) -> None:
        """Drake's warning for a <mechanicalReduction> other than 1 (it models none)."""
        child = node.find("mechanicalReduction")
        text = child.text if child is not None else None
        if not text:
            return
        try:
            if [float(x) for x in text.split()] == [1.0]:
                return
        except ValueError:
            pass
        self.warn(child, f"A '{node.tag}' element contains a mechanicalReduction element with a value '{text}' "
                         "other than the default of 1. MultibodyPlant does not currently support non-default "
                         "mechanical reductions.")

    def _transmission(self, t, joint_info: dict) -> None:
        for tag in ("leftActuator", "rightActuator", "flexJoint", "rollJoint", "gap_joint", "passive_joint",
                    "use_simulated_gripper_joint"):
            self.warn_unsupported_element(t, tag)
        self._mechanical_reduction(t)
        ttype = t.get("type") or (t.findtext("type") or "").strip()
        if "SimpleTransmission" not in ttype:
            self.warn(t, f"transmission '{t.get('name')}' of type '{ttype}' is ignored (only SimpleTransmission)")
            return
        joint_el, actuator_el = t.find("joint"), t.find("actuator")
        if joint_el is None or actuator_el is None:
            raise self.xml.error(t, "a transmission needs a <joint> and an <actuator>")
        self._mechanical_reduction(actuator_el)
        jname = joint_el.get("name")
        if jname not in joint_info:
            raise self.xml.error(joint_el, f"transmission '{t.get('name')}' names an undefined joint '{jname}'")
        joint, effort = joint_info[jname]
        if joint.num_velocities() != 1:
            self.warn(t, f"skipping transmission: joint '{jname}' is a {joint.type_name()} joint; actuators "
                         "drive single-dof joints")
            return
        if effort == 0:
            self.warn(t, f"skipping transmission: joint '{jname}' has a zero effort limit")
            return
        name = actuator_el.get("name") or t.get("name")
        try:
            actuator = self.plant.AddJointActuator(name, joint, effort)
        except (RuntimeError, ValueError) as e:
            raise self.xml.error(t, str(e)) from None
        for tag, setter in (("drake:rotor_inertia", actuator.set_default_rotor_inertia),
                            ("drake:gear_ratio", actuator.set_default_gear_ratio)):
            el = actuator_el.find(tag)
            if el is not None:
                if el.get("value") is None:
                    raise self.xml.error(el, f'joint actuator {name}\'s {tag} does not have a "value" attribute!')
                setter(self.xml.attr_float(el, "value"))


def parse_urdf(plant, text: str, source: str | None, options):
    xml = XmlSource(text, source)
    base_dir = str(Path(source).resolve().parent) if source else None
    return UrdfParser(plant, xml, base_dir, options).parse()

