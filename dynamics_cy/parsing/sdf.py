"""An SDFormat subset into a MultibodyPlant, following Drake's SDFormat semantics.

Supported: <model> (also inside <world>) with <pose>, <static>, <link> (<pose>, <inertial>, <visual>,
<collision>), <frame attached_to>, <joint> of type revolute, continuous, prismatic, fixed, ball, screw
(<screw_thread_pitch>), universal (<axis2>) with <pose> (relative to the child link by default),
<axis> (<xyz expressed_in>, <limit>, <dynamics>). Poses may name a frame with relative_to. Links
without a parent joint become free bodies at their pose. Revolute, prismatic and screw joints get an
actuator unless their effort limit is 0.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ParseError
from ..geometry import Box, Capsule, CoulombFriction, Cylinder, HalfSpace, Mesh, Sphere
from ..inertia import SpatialInertia
from ..joints import PrismaticJoint, RevoluteJoint, WeldJoint
from ..joints_more import BallRpyJoint, ScrewJoint, UniversalJoint
from ..plant_config import DiscreteContactSolver
from ..spatial_math import Quaternion, RigidTransform, RollPitchYaw, RotationMatrix
from ..tree import FixedOffsetFrame
from .common import ModelParser
from .xml_source import XmlSource

MODEL_FRAME = "__model__"
SDF_INF = 1e15  # SDFormat's default limits (±1e16) mean "no limit"


class SdfParser(ModelParser):
    def __init__(self, plant, xml: XmlSource, base_dir: str | None, options):
        super().__init__(plant, xml, base_dir, options)

    def parse(self) -> list:
        root = self.xml.root
        if root.tag != "sdf":
            raise self.xml.error(root, f"an SDFormat file's root element must be <sdf>, got <{root.tag}>")
        models = root.findall("model") + [m for w in root.findall("world") for m in w.findall("model")]
        if not models:
            raise self.xml.error(root, "no <model> found")
        instances = [self._model(m) for m in models]
        self.report_unresolved()
        return instances

    # --- poses and the frame graph ------------------------------------------------------------
    def _pose(self, element) -> tuple[RigidTransform, str | None]:
        pose = element.find("pose") if element is not None else None
        if pose is None:
            return RigidTransform(), None
        v = self.xml.floats(pose, pose.text or "0 0 0 0 0 0", None, "pose")
        degrees = pose.get("degrees", "false").lower() == "true"
        if pose.get("rotation_format", "euler_rpy") == "quat_xyzw":
            if v.size != 7:
                raise self.xml.error(pose, f"a quat_xyzw pose has 7 numbers, got {v.size}")
            X = RigidTransform(Quaternion(v[6], v[3], v[4], v[5]).normalized(), v[:3])
        else:
            if v.size != 6:
                raise self.xml.error(pose, f"a pose has 6 numbers (x y z roll pitch yaw), got {v.size}")
            rpy = np.deg2rad(v[3:]) if degrees else v[3:]
            X = RigidTransform(RollPitchYaw(rpy), v[:3])
        return X, pose.get("relative_to") or None

    def _resolve_frames(self, model) -> None:
        """X_MF (model frame M) and the attached link of every named frame."""
        self.rel: dict[str, tuple[RigidTransform, str, object]] = {MODEL_FRAME: (RigidTransform(), None, model)}
        for link in model.findall("link"):
            X, rel = self._pose(link)
            self.rel[link.get("name")] = (X, rel or MODEL_FRAME, link)
        for joint in model.findall("joint"):
            X, rel = self._pose(joint)
            child = (joint.findtext("child") or "").strip()
            self.rel[joint.get("name")] = (X, rel or child, joint)
        for frame in model.findall("frame"):
            attached = frame.get("attached_to") or MODEL_FRAME
            X, rel = self._pose(frame)
            self.rel[frame.get("name")] = (X, rel or attached, frame)
        self.X_M: dict[str, RigidTransform] = {}
        for name in self.rel:
            self._X_M(name)

    def _X_M(self, name: str) -> RigidTransform:
        """X_M of frame `name`: up its `relative_to` chain to a resolved frame, then down (a loop, not
        recursion, so a chain of any length resolves)."""
        chain: list[str] = []
        while name not in self.X_M:
            if name not in self.rel:
                raise self.xml.error(self.rel[chain[-1]][2] if chain else None, f"unknown frame '{name}'")
            if name in chain:
                raise self.xml.error(self.rel[name][2], f"pose graph cycle: {' -> '.join(chain + [name])}")
            chain.append(name)
            X, rel, _ = self.rel[name]
            if rel is None:
                self.X_M[name] = X
                chain.pop()
                break
            name = rel
        for child in reversed(chain):
            X, rel, _ = self.rel[child]
            self.X_M[child] = self.X_M[rel] @ X
        return self.X_M[chain[0] if chain else name]

    def _link_of(self, name: str, model) -> str:
        """The link a frame is attached to (a loop over its attachment chain)."""
        seen: list[str] = []
        while True:
            if name == MODEL_FRAME:
                canonical = model.get("canonical_link") or (model.find("link").get("name")
                                                            if model.find("link") is not None else None)
                if canonical is None:
                    raise self.xml.error(model, "a model needs at least one link")
                return canonical
            el = self.rel[name][2]
            if el.tag == "link":
                return name
            if name in seen:
                raise self.xml.error(el, f"frame attachment cycle through '{name}'")
            seen.append(name)
            name = (el.findtext("child") or "").strip() if el.tag == "joint" else el.get("attached_to") or MODEL_FRAME

    # --- model -------------------------------------------------------------------------------
    def _model(self, model):
        name = model.get("name")
        if not name:
            raise self.xml.error(model, "<model> needs a name attribute")
        self.instance = self.add_model_instance(model, name)
        self._resolve_frames(model)
        X_WM, _ = self._pose(model)
        self.X_WM = X_WM
        bodies = {}
        for link in model.findall("link"):
            lname = link.get("name")
            if not lname:
                raise self.xml.error(link, "<link> needs a name attribute")
            if lname in bodies:
                raise self.xml.error(link, f"duplicate link name '{lname}'")
            try:
                bodies[lname] = self.plant.AddRigidBody(lname, self.instance, self._inertia(link))
            except ParseError:
                raise
            except (RuntimeError, ValueError) as e:
                raise self.xml.error(link, str(e)) from None
        bodies["world"] = self.plant.world_body()
        self.plant.AddFrame(FixedOffsetFrame(MODEL_FRAME, bodies[self._link_of(MODEL_FRAME, model)].body_frame(),
                                             self._X_link(self._link_of(MODEL_FRAME, model)).inverse(), self.instance))
        has_parent = set()
        for joint in model.findall("joint"):
            has_parent.add(self._joint(joint, bodies, model))
        for joint in model.findall("joint"):          # after every joint, as Drake's ParseMimicTag
            if joint.find("drake:mimic") is not None:
                self._mimic(joint, joint.find("drake:mimic"))
        for frame in model.findall("frame"):          # after the joints' frames, in Drake's order
            fname = frame.get("name")
            link = self._link_of(fname, model)
            self.plant.AddFrame(FixedOffsetFrame(fname, bodies[link].body_frame(),
                                                 self._X_link(link).inverse() @ self.X_M[fname], self.instance))
        if model.findtext("static", "false").strip() == "true":
            self._weld_static(model, bodies, X_WM)
        else:
            for lname, body in bodies.items():
                if lname != "world" and lname not in has_parent:
                    self.plant.SetDefaultFloatingBaseBodyPose(body, X_WM @ self._X_link(lname))
        for link in model.findall("link"):
            self._geometry(link, bodies[link.get("name")])
        self.record_collision_filter_groups(model)
        for node in model.findall("drake:ball_constraint"):
            self._ball_constraint(node)
        return self.instance

    # --- constraints -------------------------------------------------------------------------
    def _mimic(self, joint, mimic) -> None:
        """Drake's <drake:mimic joint= multiplier= offset=>: AddCouplerConstraint(joint, mimicked,
        multiplier, offset), with Drake's checks; ignored with its warning on a discrete TAMSI plant."""
        name, other = joint.get("name"), mimic.get("joint")
        if self.plant.is_discrete() and self.plant.get_discrete_contact_solver() != DiscreteContactSolver.kSap:
            self.warn(joint, f"Joint '{name}' specifies a drake:mimic element that will be ignored. Mimic elements "
                             "are currently only supported by MultibodyPlant with a discrete time step and using "
                             "DiscreteContactSolver::kSap, or by continuous time plants using the CENIC integrator.")
            return
        problem = None
        if other is None:
            problem = "is missing the required 'joint' attribute."
        elif not self.plant.HasJointNamed(other, self.instance):
            problem = f"specifies joint '{other}' which does not exist."
        elif other == name:
            problem = f"specifies joint '{other}'. Joints cannot mimic themselves."
        else:
            problem = next((f"is missing the required '{a}' attribute." for a in ("multiplier", "offset")
                            if mimic.get(a) is None), None)
        if problem:
            raise self.xml.error(mimic, f"Joint '{name}' drake:mimic element {problem}")
        joint0, joint1 = self.plant.GetJointByName(name, self.instance), self.plant.GetJointByName(other, self.instance)
        if joint0.num_velocities() != 1 or joint1.num_velocities() != 1:
            self.warn(mimic, f"Drake only supports the drake:mimic element for single-dof joints. The joint '{name}' "
                             f"(with {joint0.num_velocities()} dofs) is attempting to mimic joint '{other}' (with "
                             f"{joint1.num_velocities()} dofs). The drake:mimic element will be ignored.")
            return
        self.plant.AddCouplerConstraint(joint0, joint1, self.xml.attr_float(mimic, "multiplier"),
                                        self.xml.attr_float(mimic, "offset"))

    def _ball_constraint(self, node) -> None:
        """Drake's <drake:ball_constraint>: AddBallConstraint from <drake:ball_constraint_body_A>name</…>,
        <…_p_AP>x y z</…>, <…_body_B>, <…_p_BQ>, with Drake's errors."""
        def child(tag):
            el = node.find(tag)
            if el is None:
                raise self.xml.error(node, f"<{node.tag}>: Unable to find the <{tag}> child tag.")
            return el

        def body(tag):
            name = (child(tag).text or "").strip()
            if not self.plant.HasBodyNamed(name, self.instance):
                raise self.xml.error(node, f"<{node.tag}>: Body '{name}' specified for <{tag}> does not exist in "
                                           "the model.")
            return self.plant.GetBodyByName(name, self.instance)

        body_A, body_B = body("drake:ball_constraint_body_A"), body("drake:ball_constraint_body_B")
        p_AP, p_BQ = (self.xml.floats(child(t), child(t).text, 3, f"<{t}>")
                      for t in ("drake:ball_constraint_p_AP", "drake:ball_constraint_p_BQ"))
        try:
            self.plant.AddBallConstraint(body_A, p_AP, body_B, p_BQ)
        except RuntimeError as e:
            raise self.xml.error(node, str(e)) from None

    def _weld_static(self, model, bodies: dict, X_WM: RigidTransform) -> None:
        """Drake's static model: fixed joints only; in link order, each link not yet welded to the world
        (through the model's fixed joints) gets a weld 'sdformat_model_static_world_welds_to_<link>'.
        Where that link is not the root of its fixed-joint tree Drake reverses the fixed joint; this tree
        has no reversed joints, so the root is welded instead (same poses, the root's name)."""
        parent = {}
        for joint in model.findall("joint"):
            if joint.get("type") != "fixed":
                raise self.xml.error(model, "Only fixed joints are permitted in static models.")
            parent[joint.findtext("child", "").strip()] = joint.findtext("parent", "").strip()

        def root(name):
            while name in parent:
                name = parent[name]
            return name
        welded = {"world"}
        world = self.plant.world_frame()
        for link in model.findall("link"):
            top = root(link.get("name"))
            if top not in welded:
                welded.add(top)
                self.plant.AddJoint(WeldJoint(f"sdformat_model_static_{world.name()}_welds_to_{top}", world,
                                              bodies[top].body_frame(), X_WM @ self._X_link(top)))

    def _X_link(self, lname: str) -> RigidTransform:
        return self.X_M[lname]

    def _inertia(self, link) -> SpatialInertia:
        inertial = link.find("inertial")
        if inertial is None:
            return SpatialInertia()
        X, rel = self._pose(inertial)
        if rel:
            raise self.xml.error(inertial, "relative_to on an inertial pose is not supported")
        m = self.xml.text_float(inertial, "mass", 1.0)
        el = inertial.find("inertia")
        # SDFormat's defaults: ixx = iyy = izz = 1, products 0 (also for a missing <inertia>)
        f = {k: self.xml.text_float(el, k, 1.0 if k in ("ixx", "iyy", "izz") else 0.0) if el is not None
             else (1.0 if k in ("ixx", "iyy", "izz") else 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        I = np.array([[f["ixx"], f["ixy"], f["ixz"]], [f["ixy"], f["iyy"], f["iyz"]],
                      [f["ixz"], f["iyz"], f["izz"]]])
        return self.body_inertia(m, X, I, el if el is not None else inertial, link.get("name"))

    # --- joints ------------------------------------------------------------------------------
    def _joint(self, joint, bodies: dict, model) -> str:
        name, jtype = joint.get("name"), joint.get("type")
        if not name:
            raise self.xml.error(joint, "<joint> needs a name attribute")
        pname, cname = (joint.findtext("parent") or "").strip(), (joint.findtext("child") or "").strip()
        for what, ln in (("parent", pname), ("child", cname)):
            if ln not in bodies:
                raise self.xml.error(joint, f"joint '{name}': {what} link '{ln}' is not defined")
        if cname == "world":
            raise self.xml.error(joint, f"joint '{name}': the world cannot be a child link")
        X_MJ = self.X_M[name]
        X_MP = self.X_WM.inverse() if pname == "world" else self._X_link(pname)
        X_MC = self._X_link(cname)
        axis, lower, upper, effort, velocity, damping = self._axis(joint, name, X_MJ)
        if jtype == "universal":
            X_MJ = X_MJ @ self._universal_frame(joint, name, X_MJ, axis)
        try:
            F = self.plant.AddFrame(FixedOffsetFrame(f"{name}_parent", bodies[pname].body_frame(),
                                                     X_MP.inverse() @ X_MJ, self.instance))
            M = self.plant.AddFrame(FixedOffsetFrame(f"{name}_child", bodies[cname].body_frame(),
                                                     X_MC.inverse() @ X_MJ, self.instance))
            if jtype in ("revolute", "continuous"):
                lims = (-np.inf, np.inf) if jtype == "continuous" else (lower, upper)
                j = RevoluteJoint(name, F, M, axis, *lims, damping)
            elif jtype == "prismatic":
                j = PrismaticJoint(name, F, M, axis, lower, upper, damping)
            elif jtype == "fixed":
                j = WeldJoint(name, F, M, RigidTransform())
            elif jtype == "ball":
                j = BallRpyJoint(name, F, M, damping)
            elif jtype == "screw":   # <screw_thread_pitch>: m per revolution, right-handed, as Drake's ScrewJoint
                j = ScrewJoint(name, F, M, axis, self.xml.text_float(joint, "screw_thread_pitch", 1.0), damping)
            elif jtype == "universal":
                j = UniversalJoint(name, F, M, damping)
            else:
                raise self.xml.error(joint, f"joint '{name}' has unsupported type '{jtype}' (revolute, continuous, "
                                            "prismatic, fixed, ball, screw, universal)")
            if jtype != "screw" and j.num_velocities() == 1 and np.isfinite(velocity):
                j.set_velocity_limits([-velocity], [velocity])
            self.plant.AddJoint(j)
            if jtype in ("revolute", "continuous", "prismatic", "screw") and effort != 0:
                actuator = self.plant.AddJointActuator(name, j, np.inf if effort < 0 else effort)
                for tag, setter in (("drake:rotor_inertia", actuator.set_default_rotor_inertia),
                                    ("drake:gear_ratio", actuator.set_default_gear_ratio)):
                    if joint.find(tag) is not None:      # as Drake: <drake:rotor_inertia>1.5</...> in <joint>
                        setter(self.xml.floats(joint.find(tag), joint.find(tag).text, 1, tag)[0])
        except ParseError:
            raise
        except (RuntimeError, ValueError) as e:
            raise self.xml.error(joint, str(e)) from None
        return cname

    def _universal_frame(self, joint, name: str, X_MJ: RigidTransform, axis) -> RigidTransform:
        """X_JI: Drake's universal joint turns about F's x then M's y, so F and M sit at the joint frame J
        turned to I = [x̂ ŷ x̂×ŷ] (x̂ = <axis>, ŷ = <axis2>, orthogonal), on the parent and the child."""
        x = axis / np.linalg.norm(axis)
        y = self._axis(joint, name, X_MJ, "axis2")[0]
        y = y / np.linalg.norm(y)
        if abs(x @ y) > 1e-10:
            raise self.xml.error(joint, f"axis and axis2 must be orthogonal for joint '{name}'")
        return RigidTransform(RotationMatrix(np.column_stack([x, y, np.cross(x, y)])), np.zeros(3))

    def _axis(self, joint, name: str, X_MJ: RigidTransform, tag: str = "axis"):
        """The joint's <axis> (or <axis2>): the unit-free axis in J, limits, effort, velocity, damping."""
        lower, upper, effort, velocity, damping = -np.inf, np.inf, -1.0, np.inf, 0.0
        axis_el = joint.find(tag)
        if axis_el is None:
            if joint.get("type") in ("revolute", "continuous", "prismatic", "screw", "universal"):
                raise self.xml.error(joint, f"joint '{name}' needs an <{tag}>")
            return np.array([0.0, 0.0, 1.0]), lower, upper, effort, velocity, damping
        xyz = axis_el.find("xyz")
        axis = self.xml.floats(xyz, xyz.text if xyz is not None else "0 0 1", 3, "axis xyz")
        if np.linalg.norm(axis) < 1e-12:
            raise self.xml.error(axis_el, f"joint '{name}': the axis must be non-zero")
        expressed = xyz.get("expressed_in") if xyz is not None else None
        if expressed:
            if expressed not in self.X_M:
                raise self.xml.error(xyz, f"joint '{name}': expressed_in names an unknown frame '{expressed}'")
            axis = X_MJ.rotation().inverse() @ (self.X_M[expressed].rotation() @ axis)
        limit = axis_el.find("limit")
        if limit is not None:
            lower = self.xml.text_float(limit, "lower", -np.inf)
            upper = self.xml.text_float(limit, "upper", np.inf)
            lower = -np.inf if lower <= -SDF_INF else lower
            upper = np.inf if upper >= SDF_INF else upper
            effort = self.xml.text_float(limit, "effort", -1.0)
            velocity = self.xml.text_float(limit, "velocity", -1.0)
            velocity = np.inf if velocity < 0 else velocity
            if lower > upper:
                raise self.xml.error(limit, f"joint '{name}': lower limit {lower} exceeds upper limit {upper}")
        dyn = axis_el.find("dynamics")
        if dyn is not None:
            damping = self.xml.text_float(dyn, "damping", 0.0)
            if damping < 0:
                raise self.xml.error(dyn, f"joint '{name}': damping {damping} is negative")
        return axis, lower, upper, effort, velocity, damping

    # --- geometry ----------------------------------------------------------------------------
    def _shape(self, geometry, owner):
        if geometry is None:
            raise self.xml.error(owner, "missing <geometry>")
        children = list(geometry)
        if len(children) != 1:
            raise self.xml.error(geometry, f"<geometry> must hold exactly one shape, got {len(children)}")
        s = children[0]
        try:
            if s.tag == "box":
                return Box(*self.xml.floats(s.find("size"), s.findtext("size"), 3, "box size"))
            if s.tag == "sphere":
                return Sphere(self.xml.text_float(s, "radius"))
            if s.tag == "cylinder":
                return Cylinder(self.xml.text_float(s, "radius"), self.xml.text_float(s, "length"))
            if s.tag in ("capsule", "drake:capsule"):
                return Capsule(self.xml.text_float(s, "radius"), self.xml.text_float(s, "length"))
            if s.tag == "plane":
                return HalfSpace()
            if s.tag == "mesh":
                uri = (s.findtext("uri") or "").strip()
                if not uri:
                    raise self.xml.error(s, "<mesh> needs a <uri>")
                scale = self.xml.floats(s, s.findtext("scale") or "1 1 1", 3, "mesh scale")
                return Mesh(self.mesh_path(uri), scale)
        except (ValueError, RuntimeError) as e:
            raise self.xml.error(s, str(e)) from None
        raise self.xml.error(s, f"unsupported geometry <{s.tag}> (box, sphere, cylinder, capsule, plane, mesh)")

    def _geometry(self, link, body) -> None:
        lname = link.get("name")
        for role in ("visual", "collision"):
            for k, g in enumerate(link.findall(role)):
                shape = self._shape(g.find("geometry"), g)
                X, rel = self._pose(g)
                X_BG = X if not rel else self._X_link(lname).inverse() @ self.X_M[rel] @ X
                name = g.get("name") or f"{lname}_{role}{'' if k == 0 else k}"
                try:
                    if role == "visual":
                        diffuse = g.find("material/diffuse")
                        rgba = self.xml.floats(diffuse, diffuse.text, None, "diffuse") if diffuse is not None \
                            else np.array([0.9, 0.9, 0.9, 1.0])
                        if rgba.size == 3:
                            rgba = np.r_[rgba, 1.0]
                        self.plant.RegisterVisualGeometry(body, X_BG, shape, name, rgba)
                    else:
                        self.plant.RegisterCollisionGeometry(body, X_BG, shape, name, self._friction(g))
                except ParseError:
                    raise
                except (RuntimeError, ValueError) as e:
                    raise self.xml.error(g, str(e)) from None

    def _friction(self, collision) -> CoulombFriction:
        props = collision.find("drake:proximity_properties")
        if props is not None:
            mu_s = props.find("drake:mu_static")
            mu_d = props.find("drake:mu_dynamic")
            s = float(self.xml.floats(mu_s, mu_s.text, 1, "mu_static")[0]) if mu_s is not None else None
            d = float(self.xml.floats(mu_d, mu_d.text, 1, "mu_dynamic")[0]) if mu_d is not None else None
        else:
            mu = collision.find("surface/friction/ode/mu")
            s = d = float(self.xml.floats(mu, mu.text, 1, "mu")[0]) if mu is not None else None
        s, d = (d if s is None else s), (s if d is None else d)
        return CoulombFriction(1.0 if s is None else s, 1.0 if d is None else d)


def parse_sdf(plant, text: str, source: str | None, options) -> list:
    xml = XmlSource(text, source)
    base_dir = str(Path(source).resolve().parent) if source else None
    return SdfParser(plant, xml, base_dir, options).parse()
