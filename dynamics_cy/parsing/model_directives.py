"""Model directives: Drake's YAML format for assembling a scene of models (multibody/parsing/
model_directives.h, process_model_directives.cc, detail_dmd_parser.cc), the format of Drake's
hardware_sim scenarios and ``*.dmd.yaml`` files.

    directives:
    - add_model: {name: iiwa, file: package://drake_models/iiwa_description/urdf/iiwa14_no_collision.urdf,
                  default_joint_positions: {iiwa_joint_2: [0.1]}}
    - add_weld: {parent: world, child: iiwa::base}
    - add_frame: {name: iiwa::tool, X_PF: {base_frame: iiwa::iiwa_link_7, translation: [0, 0, 0.1],
                                          rotation: !Rpy {deg: [0, 0, 90]}}}

The structs are Drake's (``ModelDirectives``, ``ModelDirective``, ``AddModel``, ``AddModelInstance``,
``AddFrame``, ``AddWeld``, ``AddCollisionFilterGroup``, ``AddDirectives``; poses are ``Transform``:
base_frame, translation and a rotation ``!Rpy {deg: [r, p, y]}``, ``!AngleAxis {angle_deg, axis}``,
``!Identity {}``), and so are the names: ``instance::frame`` scoped names, a namespace prefixed to
everything an included file (``add_directives`` with ``model_namespace``) names, except ``world``.
Only deterministic poses are accepted (Drake's directives refuse distributions too).

The functions here add through the parser they are handed and never import the Parser:
ProcessModelDirectives, which builds one when given none, is in process.py.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field

import numpy as np
import yaml

from ..errors import ParseError
from ..joints_more import QuaternionFloatingJoint
from ..spatial_math import RigidTransform
from ..tree import FixedOffsetFrame
from .collision_filter_groups import GroupResolver
from .common import _file_type
from .directive_types import (
    AddCollisionFilterGroup,
    AddDirectives,
    AddFrame,
    AddModel,
    AddModelInstance,
    AddWeld,
    AngleAxis,
    Identity,
    Rpy,
    Transform,
)
from .scoped_names import GetScopedFrameByName, join_scoped_name, split_scoped_name

__all__ = ["AddCollisionFilterGroup", "AddDirectives", "AddFrame", "AddModel", "AddModelInstance", "AddWeld",
           "FlattenModelDirectives", "LoadModelDirectives", "LoadModelDirectivesFromString", "ModelDirective",
           "ModelDirectives", "ModelInstanceInfo", "Transform"]

_KINDS = ("add_model", "add_model_instance", "add_frame", "add_weld", "add_collision_filter_group", "add_directives")


@dataclass
class ModelDirective:
    """One directive: exactly one of its fields is set."""
    add_model: AddModel | None = None
    add_model_instance: AddModelInstance | None = None
    add_frame: AddFrame | None = None
    add_weld: AddWeld | None = None
    add_collision_filter_group: AddCollisionFilterGroup | None = None
    add_directives: AddDirectives | None = None

    def IsValid(self) -> bool:
        return _problem(self) is None


@dataclass
class ModelDirectives:
    directives: list[ModelDirective] = field(default_factory=list)

    def IsValid(self) -> bool:
        return all(d.IsValid() for d in self.directives)


class ModelInstanceInfo:
    """What ProcessModelDirectives added: a model's name, file and instance, and the weld that placed it
    (parent_frame_name, child_frame_name, X_PC; empty until an add_weld welds a frame of it)."""
    __slots__ = ("model_name", "model_path", "parent_frame_name", "child_frame_name", "X_PC", "model_instance")

    def __init__(self, model_name="", model_path="", parent_frame_name="", child_frame_name="", X_PC=None,
                 model_instance=None):
        self.model_name, self.model_path = model_name, model_path
        self.parent_frame_name, self.child_frame_name = parent_frame_name, child_frame_name
        self.X_PC = RigidTransform() if X_PC is None else X_PC
        self.model_instance = model_instance

    def __repr__(self) -> str:
        return (f"ModelInstanceInfo(model_name={self.model_name!r}, model_path={self.model_path!r}, "
                f"parent_frame_name={self.parent_frame_name!r}, child_frame_name={self.child_frame_name!r}, "
                f"model_instance={self.model_instance!r})")


# --- validity (Drake's IsValid, with its messages) ----------------------------------------------
def _problem(d: ModelDirective) -> str | None:
    kinds = [k for k in _KINDS if getattr(d, k) is not None]
    if len(kinds) != 1:
        return ("directive: Specify one of `add_model`, `add_model_instance`, `add_frame`, "
                "`add_collision_filter_group`, or `add_directives`")
    kind, value = kinds[0], getattr(d, kinds[0])
    if kind == "add_model":
        if not value.file:
            return "add_model: `file` must be non-empty"
        if not value.name:
            return "add_model: `name` must be non-empty"
    elif kind == "add_model_instance" and not value.name:
        return "add_model_instance: `name` must be non-empty"
    elif kind == "add_frame":
        if not value.name:
            return "add_frame: `name` must be non-empty"
        if not value.X_PF.base_frame:
            return "add_frame: `X_PF.base_frame` must be defined"
    elif kind == "add_weld":
        if not value.parent:
            return "add_weld: `parent` must be non-empty"
        if not value.child:
            return "add_weld: `child` must be non-empty"
        if value.X_PC is not None and value.X_PC.base_frame:
            return "add_weld: `X_PC` must not specify a `base_frame`; the pose is always in the parent frame."
    elif kind == "add_collision_filter_group":
        if not value.name:
            return "add_collision_filter_group: `name` must be non-empty"
        if not value.members and not value.member_groups:
            return "add_collision_filter_group: at least one of `members` or `member_groups` must be non-empty"
    elif kind == "add_directives" and not value.file:
        return "add_directives: `file` must be non-empty"
    return None


# --- YAML ----------------------------------------------------------------------------------------
class _Tagged:
    def __init__(self, tag: str, value):
        self.tag, self.value = tag, value


class _Loader(yaml.SafeLoader):
    """YAML with Drake's tags (!Rpy, !AngleAxis, !Identity, ...) kept as (tag, value)."""


def _tagged(loader, tag_suffix, node):
    if isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_scalar(node)
    return _Tagged(tag_suffix, value)


_Loader.add_multi_constructor("!", _tagged)


def _fields(what: str, data, allowed: tuple[str, ...]) -> dict:
    if data is None:
        return {}
    if isinstance(data, _Tagged):
        raise ValueError(f"{what}: unexpected tag !{data.tag}")
    if not isinstance(data, dict):
        raise ValueError(f"{what}: expected a mapping, got {type(data).__name__}")
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise ValueError(f"{what}: unknown key '{unknown[0]}' (known: {', '.join(allowed)})")
    return data


def _vector(what: str, value, n: int | None = None) -> np.ndarray:
    if isinstance(value, _Tagged):
        if value.tag != "Deterministic":
            raise ValueError(f"{what}: !{value.tag} is a distribution; directives take deterministic values only")
        value = _fields(what, value.value, ("value",)).get("value")
    v = np.atleast_1d(np.asarray(value, dtype=float))
    if v.ndim != 1 or (n is not None and v.size != n):
        raise ValueError(f"{what}: expected {n or 'a list of'} numbers, got {value!r}")
    return v


def _rotation(what: str, data):
    if data is None:
        return Identity()
    if not isinstance(data, _Tagged):
        _fields(what, data, ())          # an untagged rotation is Drake's first alternative, Identity
        return Identity()
    if data.tag == "Identity":
        _fields(what, data.value or {}, ())
        return Identity()
    if data.tag == "Rpy":
        return Rpy(deg=_vector(f"{what}.deg", _fields(what, data.value, ("deg",)).get("deg", [0, 0, 0]), 3))
    if data.tag == "AngleAxis":
        f = _fields(what, data.value, ("angle_deg", "axis"))
        return AngleAxis(angle_deg=float(_vector(f"{what}.angle_deg", f.get("angle_deg", 0.0), 1)[0]),
                         axis=_vector(f"{what}.axis", f.get("axis", [0, 0, 1]), 3))
    raise ValueError(f"{what}: !{data.tag} is not a deterministic rotation (!Rpy, !AngleAxis or !Identity)")


def _transform(what: str, data) -> Transform:
    f = _fields(what, data, ("base_frame", "translation", "rotation"))
    return Transform(base_frame=f.get("base_frame"),
                     translation=_vector(f"{what}.translation", f.get("translation", [0, 0, 0]), 3),
                     rotation=_rotation(f"{what}.rotation", f.get("rotation")))


def _strings(what: str, value) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what}: expected a list of names")
    return list(value)


def _directive(i: int, data) -> ModelDirective:
    what = f"directives[{i}]"
    f = _fields(what, data, _KINDS)
    d = ModelDirective()
    for kind, value in f.items():
        w = f"{what}.{kind}"
        if kind == "add_model":
            v = _fields(w, value, ("file", "name", "default_joint_positions", "default_free_body_pose"))
            setattr(d, kind, AddModel(
                file=str(v.get("file", "")), name=str(v.get("name", "")),
                default_joint_positions={j: _vector(f"{w}.default_joint_positions.{j}", q)
                                         for j, q in (v.get("default_joint_positions") or {}).items()},
                default_free_body_pose={b: _transform(f"{w}.default_free_body_pose.{b}", X)
                                        for b, X in (v.get("default_free_body_pose") or {}).items()}))
        elif kind == "add_model_instance":
            setattr(d, kind, AddModelInstance(name=str(_fields(w, value, ("name",)).get("name", ""))))
        elif kind == "add_frame":
            v = _fields(w, value, ("name", "X_PF"))
            setattr(d, kind, AddFrame(name=str(v.get("name", "")), X_PF=_transform(f"{w}.X_PF", v.get("X_PF"))))
        elif kind == "add_weld":
            v = _fields(w, value, ("parent", "child", "X_PC"))
            setattr(d, kind, AddWeld(parent=str(v.get("parent", "")), child=str(v.get("child", "")),
                                     X_PC=None if v.get("X_PC") is None else _transform(f"{w}.X_PC", v["X_PC"])))
        elif kind == "add_collision_filter_group":
            v = _fields(w, value, ("name", "members", "member_groups", "model_namespace",
                                   "ignored_collision_filter_groups"))
            setattr(d, kind, AddCollisionFilterGroup(
                name=str(v.get("name", "")), model_namespace=v.get("model_namespace"),
                members=_strings(f"{w}.members", v.get("members")),
                member_groups=_strings(f"{w}.member_groups", v.get("member_groups")),
                ignored_collision_filter_groups=_strings(f"{w}.ignored_collision_filter_groups",
                                                         v.get("ignored_collision_filter_groups"))))
        else:
            v = _fields(w, value, ("file", "model_namespace"))
            setattr(d, kind, AddDirectives(file=str(v.get("file", "")), model_namespace=v.get("model_namespace")))
    return d


def _load(text: str, source: str | None) -> ModelDirectives:
    try:
        data = yaml.load(text, Loader=_Loader)          # a SafeLoader, with Drake's tags
        top = _fields("model directives", data, ("directives",))
        items = top.get("directives") or []
        if not isinstance(items, list):
            raise ValueError("directives: expected a list")
        directives = ModelDirectives([_directive(i, item) for i, item in enumerate(items)])
    except yaml.YAMLError as e:
        raise ParseError(f"malformed YAML: {e}", source) from None
    except ValueError as e:
        raise ParseError(str(e), source) from None
    for d in directives.directives:
        problem = _problem(d)
        if problem:
            raise ParseError(problem, source)
    return directives


def LoadModelDirectives(filename) -> ModelDirectives:
    """The directives of a YAML file (a str or path-like); ParseError naming the file if it is not one."""
    path = os.fspath(filename)
    if not os.path.exists(path):
        raise ParseError(f"No such file {path} during LoadModelDirectives", path)
    with open(path) as f:
        return _load(f.read(), path)


def LoadModelDirectivesFromString(model_directives: str) -> ModelDirectives:
    return _load(model_directives, None)


# --- processing ----------------------------------------------------------------------------------
def _dmd_join(namespace: str, name: str) -> str:
    """Drake's DmdScopedNameJoin: 'world' is never scoped."""
    return name if name == "world" else join_scoped_name(namespace, name)


def _resolve_file(parser, uri: str) -> str:
    path, error = parser.package_map()._resolve(uri, None)
    if error:
        raise ParseError(error, uri)
    return path


def _has_body(plant, instance_name: str, body: str) -> bool:
    if not instance_name:
        return plant.HasBodyNamed(body)
    return plant.HasModelInstanceNamed(instance_name) and \
        plant.HasBodyNamed(body, plant.GetModelInstanceByName(instance_name))


def _default_free_body_pose(plant, instance, parent, child_name: str, X_PC) -> None:
    """Drake's ApplyAddModelDefaultFreeBodyPose: the body's default pose in the world when the parent is
    the world and the child is its body frame, else a quaternion floating joint from the parent."""
    if child_name:
        child = plant.GetFrameByName(child_name, instance)
    else:
        bodies = plant.GetBodyIndices(instance)
        if len(bodies) != 1:
            raise ParseError(f"Model instance '{plant.GetModelInstanceName(instance)}' cannot use an empty frame name "
                             f"for its default_free_body_pose in add_model because it has {len(bodies)} (not 1) "
                             "bodies.")
        child = plant.get_body(bodies[0]).body_frame()
    offset = child.GetFixedPoseInBodyFrame()
    if parent.index() == plant.world_frame().index() and np.array_equal(offset.GetAsMatrix4(), np.eye(4)):
        plant.SetDefaultFloatingBaseBodyPose(child.body(), X_PC)
        return
    name = child.body().name()
    while plant.HasJointNamed(name, instance):
        name = "_" + name
    joint = plant.AddJoint(QuaternionFloatingJoint(name, parent, child))
    joint.SetDefaultPose(X_PC)


def _process(parser, directives: ModelDirectives, namespace: str, added: list, resolver: GroupResolver) -> None:
    plant = parser.plant()

    def frame(name: str):
        return GetScopedFrameByName(plant, _dmd_join(namespace, name))

    for d in directives.directives:
        if d.add_model is not None:
            m = d.add_model
            path = _resolve_file(parser, m.file)
            instance = _add_one_model(parser, path, m.name, namespace)
            for joint, q in m.default_joint_positions.items():
                plant.GetJointByName(joint, instance).set_default_positions(np.asarray(q, dtype=float))
            for child, pose in m.default_free_body_pose.items():
                base = pose.base_frame or "world"
                parent = plant.world_frame() if base == "world" else frame(base)
                _default_free_body_pose(plant, instance, parent, child, pose.GetDeterministicValue())
            added.append(ModelInstanceInfo(model_name=join_scoped_name(namespace, m.name), model_path=path,
                                           model_instance=instance))
        elif d.add_model_instance is not None:
            saved = parser._namespace
            parser._namespace = namespace
            try:
                plant.AddModelInstance(parser._model_name(d.add_model_instance.name))
            finally:
                parser._namespace = saved
        elif d.add_frame is not None:
            f = d.add_frame
            scope, element = split_scoped_name(f.name)
            instance = plant.GetModelInstanceByName(join_scoped_name(namespace, scope)) if scope else None
            plant.AddFrame(FixedOffsetFrame(element, frame(f.X_PF.base_frame), f.X_PF.GetDeterministicValue(),
                                            instance))
        elif d.add_weld is not None:
            w = d.add_weld
            parent, child = frame(w.parent), frame(w.child)
            X_PC = w.X_PC.GetDeterministicValue() if w.X_PC is not None else None
            if X_PC is None:
                plant.WeldFrames(parent, child)
            else:
                plant.WeldFrames(parent, child, X_PC)
            infos = [i for i in added if i.model_instance == child.model_instance()]
            if not infos:
                raise ParseError(f"add_weld: the child '{w.child}' is not in a model these directives added")
            for info in infos:
                info.parent_frame_name, info.child_frame_name = parent.name(), child.name()
                info.X_PC = X_PC if X_PC is not None else info.X_PC
        elif d.add_collision_filter_group is not None:
            g = d.add_collision_filter_group
            scope = namespace or g.model_namespace or ""
            if scope:
                plant.GetModelInstanceByName(scope)            # the plant's error if it does not exist
            for member in g.members:
                ns, body = split_scoped_name(join_scoped_name(scope, member))
                if not _has_body(plant, ns, body):
                    raise ParseError(f"add_collision_filter_group '{g.name}': member '{member}' is not a body")
            full = join_scoped_name(scope, g.name)
            resolver.add_group(full, [join_scoped_name(scope, m) for m in g.members],
                               [join_scoped_name(scope, m) for m in g.member_groups])
            for ignored in g.ignored_collision_filter_groups:
                resolver.add_pair(full, join_scoped_name(scope, ignored))
        else:
            sub = d.add_directives
            new_namespace = join_scoped_name(namespace, sub.model_namespace or "")
            if new_namespace and not plant.HasModelInstanceNamed(new_namespace):
                raise ParseError(f"Namespace '{new_namespace}' does not exist as model instance")
            _process(parser, LoadModelDirectives(_resolve_file(parser, sub.file)), new_namespace, added, resolver)


def _add_one_model(parser, path: str, name: str, namespace: str):
    """The one model instance of a model file, named `namespace::name` (Drake's AddModel with a name)."""
    saved = parser._namespace
    parser._namespace, parser._name_override = namespace, name
    try:
        kind = _file_type(path)
        if kind == "dmd.yaml":
            raise ParseError(f"'{path}' is a model directives data source; it is always an error to pass a model "
                             "directives source to a single-model parser method. Use AddModels() instead.", path)
        with open(path) as f:
            instances = parser._parse(f.read(), kind, path)
    finally:
        parser._namespace, parser._name_override = saved, None
    if len(instances) != 1:
        raise ParseError(f"add_model '{name}': the file has {len(instances)} models; add_model takes one", path)
    return instances[0]


def _add_directives_models(parser, text: str, source: str | None) -> list:
    """Parser.AddModels of a .dmd.yaml file or string: its models' instances (the namespace is the
    parser's model_name_prefix, as Drake's)."""
    directives = _load(text, source)
    added: list[ModelInstanceInfo] = []
    resolver = GroupResolver()
    try:
        _process(parser, directives, parser._prefix, added, resolver)
        resolver.resolve(parser._collision_groups)
    except ValueError as e:
        raise ParseError(str(e), source) from None
    return [info.model_instance for info in added]


def FlattenModelDirectives(directives: ModelDirectives, package_map) -> ModelDirectives:
    """The directives with every add_directives replaced by what its file says, names scoped by its
    model_namespace (Drake's FlattenModelDirectives)."""
    out = ModelDirectives()
    _flatten(directives, package_map, out, "")
    return out


def _flatten(directives: ModelDirectives, package_map, out: ModelDirectives, namespace: str) -> None:
    for d in directives.directives:
        r = ModelDirective()
        if d.add_directives is not None:
            sub = d.add_directives
            path, error = package_map._resolve(sub.file, None)
            if error:
                raise ParseError(error, sub.file)
            _flatten(LoadModelDirectives(path), package_map, out,
                     _dmd_join(namespace, sub.model_namespace) if sub.model_namespace is not None else namespace)
            continue
        if d.add_weld is not None:
            r.add_weld = copy.deepcopy(d.add_weld)
            if namespace:
                r.add_weld.parent = _dmd_join(namespace, d.add_weld.parent)
                r.add_weld.child = _dmd_join(namespace, d.add_weld.child)
        elif d.add_model is not None:
            r.add_model = copy.deepcopy(d.add_model)
            r.add_model.name = _dmd_join(namespace, d.add_model.name) if namespace else d.add_model.name
        elif d.add_model_instance is not None:
            r.add_model_instance = AddModelInstance(name=_dmd_join(namespace, d.add_model_instance.name)
                                                    if namespace else d.add_model_instance.name)
        elif d.add_frame is not None:
            r.add_frame = copy.deepcopy(d.add_frame)
            if namespace:
                r.add_frame.name = _dmd_join(namespace, d.add_frame.name)
                r.add_frame.X_PF.base_frame = _dmd_join(namespace, d.add_frame.X_PF.base_frame)
            scope, element = split_scoped_name(d.add_frame.name)
            if not scope:           # an unscoped frame lands in its base frame's model instance
                base_scope, _ = split_scoped_name(d.add_frame.X_PF.base_frame)
                r.add_frame.name = _dmd_join(namespace, _dmd_join(base_scope, element))
        else:
            g = d.add_collision_filter_group
            if not namespace:
                r.add_collision_filter_group = copy.deepcopy(g)
            else:
                full_ns, name = split_scoped_name(_dmd_join(namespace, _dmd_join(g.model_namespace or "", g.name)))
                r.add_collision_filter_group = AddCollisionFilterGroup(
                    name=name, model_namespace=full_ns or None, members=list(g.members),
                    ignored_collision_filter_groups=list(g.ignored_collision_filter_groups))
        out.directives.append(r)
