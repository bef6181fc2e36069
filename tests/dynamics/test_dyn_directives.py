"""Model directives (Drake's YAML scene format): loading, the structs, processing with scoped names and
namespaces, flattening, and a Drake example (iiwa7 + WSG) against pydrake's bodies, frames and poses."""
import copy
import os
from pathlib import Path

import numpy as np
import pytest

from dynamics_cy import (
    AddCollisionFilterGroup,
    AddDirectives,
    AddFrame,
    AddModel,
    AddModelInstance,
    AddWeld,
    FlattenModelDirectives,
    FrameIndex,
    LoadModelDirectives,
    LoadModelDirectivesFromString,
    ModelDirective,
    ModelDirectives,
    ModelInstanceInfo,
    MultibodyPlant,
    PackageMap,
    ParseError,
    Parser,
    ProcessModelDirectives,
    RigidTransform,
    RollPitchYaw,
)

ARM = """<robot name='arm'><link name='base'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1'
 ixy='0' ixz='0' iyz='0'/></inertial></link><link name='l1'><inertial><mass value='1'/><inertia ixx='0.1'
 iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>
<joint name='j1' type='revolute'><parent link='base'/><child link='l1'/><origin xyz='0 0 0.5'/><axis xyz='0 0 1'/>
 <limit lower='-2' upper='2' effort='10'/></joint></robot>"""

BOX = """<sdf version='1.7'><model name='box'><link name='body'><inertial><mass>1</mass></inertial></link>
<frame name='top' attached_to='body'><pose>0 0 0.1 0 0 0</pose></frame></model></sdf>"""

SUB = """directives:
- add_model: {name: arm, file: package://scene/arm.urdf, default_joint_positions: {j1: [0.3]}}
- add_weld: {parent: world, child: arm::base, X_PC: {translation: [1, 0, 0], rotation: !Rpy {deg: [0, 0, 90]}}}
- add_frame:
    name: tool                     # unscoped: lands in its base frame's model instance
    X_PF: {base_frame: arm::l1, translation: [0, 0, 0.2], rotation: !AngleAxis {angle_deg: 90, axis: [1, 0, 0]}}
- add_model:
    name: box
    file: package://scene/box.sdf
    default_free_body_pose: {body: {base_frame: arm::tool, translation: [0, 0, 0.05]}}
- add_collision_filter_group: {name: gripper, members: [arm::l1, box::body]}
"""

TOP = """directives:
- add_directives: {file: package://scene/sub.dmd.yaml}
- add_model_instance: {name: left}
- add_directives: {file: package://scene/sub.dmd.yaml, model_namespace: left}
- add_frame: {name: left::marker, X_PF: {base_frame: left::arm::tool, translation: [0.1, 0, 0]}}
"""


@pytest.fixture
def scene(tmp_path):
    (tmp_path / "package.xml").write_text("<package format='3'><name>scene</name></package>")
    (tmp_path / "arm.urdf").write_text(ARM)
    (tmp_path / "box.sdf").write_text(BOX)
    (tmp_path / "sub.dmd.yaml").write_text(SUB)
    (tmp_path / "top.dmd.yaml").write_text(TOP)
    return tmp_path


def parser_for(scene, plant):
    parser = Parser(plant)
    parser.package_map().PopulateFromFolder(str(scene))
    return parser


def test_load_gives_drakes_structs(scene):
    d = LoadModelDirectives(scene / "sub.dmd.yaml")          # a path, or a str
    assert LoadModelDirectives(str(scene / "sub.dmd.yaml")).directives[0] == d.directives[0]
    kinds = [next(k for k in ("add_model", "add_weld", "add_frame", "add_collision_filter_group")
                  if getattr(x, k) is not None) for x in d.directives]
    assert kinds == ["add_model", "add_weld", "add_frame", "add_model", "add_collision_filter_group"]
    m = d.directives[0].add_model
    assert (m.name, m.file) == ("arm", "package://scene/arm.urdf")
    np.testing.assert_array_equal(m.default_joint_positions["j1"], [0.3])
    X = d.directives[1].add_weld.X_PC.GetDeterministicValue()
    assert X.IsNearlyEqualTo(RigidTransform(RollPitchYaw(0, 0, np.pi / 2), [1, 0, 0]), 1e-15)
    f = d.directives[2].add_frame
    assert f.X_PF.base_frame == "arm::l1"
    np.testing.assert_allclose(f.X_PF.GetDeterministicValue().rotation().matrix(),
                               [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-15)
    assert d.directives[4].add_collision_filter_group.members == ["arm::l1", "box::body"]
    text = "directives:\n- add_model:\n    name: new_model\n    file: base.sdf\n"
    assert LoadModelDirectivesFromString(model_directives=text).directives[0].add_model.file == "base.sdf"


@pytest.mark.parametrize("text, message", [
    ("directives:\n- add_model: {name: a}", "`file` must be non-empty"),
    ("directives:\n- add_frame: {name: f, X_PF: {translation: [0, 0, 0]}}", "`X_PF.base_frame` must be defined"),
    ("directives:\n- add_weld: {parent: world, child: a::b, X_PC: {base_frame: x}}", "must not specify a `base_frame`"),
    ("directives:\n- {add_model_instance: {name: a}, add_directives: {file: x}}", "Specify one of"),
    ("directives:\n- add_model: {name: a, file: b, colour: red}", "unknown key 'colour'"),
    ("directives:\n- add_frame: {name: f, X_PF: {base_frame: world, rotation: !Uniform {}}}", "not a deterministic"),
    ("directives:\n- add_collision_filter_group: {name: g}", "at least one of `members` or `member_groups`"),
    ("directives: [", "malformed YAML"),
])
def test_invalid_directives_are_refused_as_drake_refuses_them(text, message):
    with pytest.raises(ParseError, match=message):
        LoadModelDirectivesFromString(text)


def test_structs_repr_and_copy():
    for dut, shown in ((AddCollisionFilterGroup(name="foo"), "foo"), (AddDirectives(file="package://f/b.dmd.yaml"),
                       "b.dmd.yaml"), (AddFrame(name="foo"), "foo"), (AddModel(file="package://f/bar.sdf"), "bar.sdf"),
                       (AddModelInstance(name="foo"), "foo"), (AddWeld(parent="foo"), "foo"),
                       (ModelDirective(add_model=None), "add_model"),
                       (ModelDirectives(directives=[ModelDirective()]), "add_model")):
        assert shown in repr(dut)
        assert copy.copy(dut) == dut and copy.deepcopy(dut) == dut
    assert not ModelDirective().IsValid() and ModelDirective(add_model_instance=AddModelInstance("a")).IsValid()
    for field in ("model_name", "model_path", "parent_frame_name", "child_frame_name", "X_PC", "model_instance"):
        assert hasattr(ModelInstanceInfo, field) and hasattr(ModelInstanceInfo(), field)


def test_process_scopes_names_and_places_models(scene):
    plant = MultibodyPlant(0.0)
    parser = parser_for(scene, plant)
    added = ProcessModelDirectives(LoadModelDirectives(scene / "top.dmd.yaml"), parser=parser)
    assert [i.model_name for i in added] == ["arm", "box", "left::arm", "left::box"]
    assert [(i.parent_frame_name, i.child_frame_name) for i in added][::2] == [("world", "base")] * 2
    assert added[0].model_path == str(scene / "arm.urdf")
    for name in ("arm", "box", "left", "left::arm", "left::box"):
        assert plant.HasModelInstanceNamed(name)
    tool = plant.GetFrameByName("tool", plant.GetModelInstanceByName("left::arm"))
    assert plant.GetFrameByName("marker", plant.GetModelInstanceByName("left")).parent_frame().name() == "tool"
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    q = plant.GetPositions(ctx, plant.GetModelInstanceByName("left::arm"))
    np.testing.assert_array_equal(q, [0.3])
    # the arm: base at (1, 0, 0) turned 90° about z; l1 0.5 above, turned by j1 = 0.3; tool 0.2 above l1
    X_WT = plant.CalcRelativeTransform(ctx, plant.world_frame(), tool)
    expected = RigidTransform(RollPitchYaw(0, 0, np.pi / 2 + 0.3), [1, 0, 0.5]) @ \
        RigidTransform(RollPitchYaw(np.pi / 2, 0, 0), [0, 0, 0.2])
    assert X_WT.IsNearlyEqualTo(expected, 1e-14)
    # the box's default free body pose is measured from arm::tool: a floating joint from it
    box = plant.GetBodyByName("body", plant.GetModelInstanceByName("box"))
    X_WB = plant.EvalBodyPoseInWorld(ctx, box)
    assert X_WB.IsNearlyEqualTo(expected @ RigidTransform([0, 0, 0.05]), 1e-14)
    groups = parser.GetCollisionFilterGroups().groups()
    assert groups == {"gripper": {"arm::l1", "box::body"}, "left::gripper": {"left::arm::l1", "left::box::body"}}


def test_process_with_plant_and_add_models_of_a_dmd_file(scene):
    plant = MultibodyPlant(0.0)
    parser = parser_for(scene, plant)
    added = ProcessModelDirectives(directives=LoadModelDirectives(scene / "sub.dmd.yaml"), plant=plant, parser=parser)
    assert [i.model_name for i in added] == ["arm", "box"]
    with pytest.raises(ValueError, match="not the parser's plant"):
        ProcessModelDirectives(LoadModelDirectives(scene / "sub.dmd.yaml"), plant=MultibodyPlant(0.0), parser=parser)
    plant = MultibodyPlant(0.0)
    instances = parser_for(scene, plant).AddModels(scene / "sub.dmd.yaml")
    assert [plant.GetModelInstanceName(i) for i in instances] == ["arm", "box"]


def test_process_errors_name_the_cause(scene):
    plant = MultibodyPlant(0.0)
    parser = parser_for(scene, plant)
    with pytest.raises(ParseError, match="Namespace 'nowhere' does not exist as model instance"):
        ProcessModelDirectives(LoadModelDirectivesFromString(
            "directives:\n- add_directives: {file: package://scene/sub.dmd.yaml, model_namespace: nowhere}"),
            parser=parser)
    with pytest.raises(ParseError, match="unknown package 'missing'"):
        ProcessModelDirectives(LoadModelDirectivesFromString(
            "directives:\n- add_model: {name: a, file: package://missing/a.urdf}"), parser=parser)
    with pytest.raises(RuntimeError, match="nothing"):
        ProcessModelDirectives(LoadModelDirectivesFromString(
            "directives:\n- add_weld: {parent: world, child: nothing::base}"), parser=parser)


def test_flatten_inlines_included_files_with_their_namespace(scene):
    directives = LoadModelDirectives(scene / "top.dmd.yaml")
    flat = FlattenModelDirectives(directives=directives,
                                  package_map=parser_for(scene, MultibodyPlant(0.0)).package_map())
    assert not any(d.add_directives for d in flat.directives)
    models = [d.add_model.name for d in flat.directives if d.add_model]
    frames = [d.add_frame.name for d in flat.directives if d.add_frame]
    welds = [(d.add_weld.parent, d.add_weld.child) for d in flat.directives if d.add_weld]
    assert models == ["arm", "box", "left::arm", "left::box"]
    assert frames == ["arm::tool", "left::arm::tool", "left::marker"]
    assert welds == [("world", "arm::base"), ("world", "left::arm::base")]
    # the flattened directives build the same plant
    plants = []
    for d in (directives, flat):
        plant = MultibodyPlant(0.0)
        ProcessModelDirectives(d, parser=parser_for(scene, plant))
        plant.Finalize()
        ctx = plant.CreateDefaultContext()
        plants.append([(f.name(), plant.GetModelInstanceName(f.model_instance()),
                        plant.CalcRelativeTransform(ctx, plant.world_frame(), f).GetAsMatrix4())
                       for f in (plant.get_frame(FrameIndex(i)) for i in range(plant.num_frames()))])
    assert [x[:2] for x in plants[0]] == [x[:2] for x in plants[1]]
    assert all(np.allclose(a[2], b[2], atol=1e-14) for a, b in zip(*plants))


def drake_example():
    """Drake's manipulation/util/test/iiwa7_wsg.dmd.yaml and the package://drake_models it names, where
    this machine has them (a Drake checkout at DRAKE_RESOURCE_ROOT, drake_models in Drake's cache)."""
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    root = os.environ.get("DRAKE_RESOURCE_ROOT")
    path = Path(root or "/nonexistent") / "drake" / "manipulation" / "util" / "test" / "iiwa7_wsg.dmd.yaml"
    if not path.is_file():
        pytest.skip("Drake's iiwa7_wsg.dmd.yaml is not here (set DRAKE_RESOURCE_ROOT to a Drake checkout)")
    try:
        PackageMap().ResolveUrl("package://drake_models/iiwa_description/sdf/iiwa7_no_collision.sdf")
    except RuntimeError as e:
        pytest.skip(f"drake_models is not available offline: {e}")
    return path


def test_a_drake_example_gives_pydrakes_bodies_frames_and_poses():
    path = drake_example()
    from pydrake.multibody import parsing as drake_parsing
    from pydrake.multibody import plant as drake_plant
    from pydrake.multibody import tree as drake_tree

    def scene(plant, parsing, frame_index):
        added = parsing.ProcessModelDirectives(parsing.LoadModelDirectives(str(path)), parser=parsing.Parser(plant))
        plant.Finalize()
        ctx = plant.CreateDefaultContext()
        frames = [plant.get_frame(frame_index(i)) for i in range(plant.num_frames())]
        return ([(a.model_name, a.parent_frame_name, a.child_frame_name, a.X_PC.GetAsMatrix4()) for a in added],
                [(f.name(), f.body().name(), plant.GetModelInstanceName(f.model_instance())) for f in frames],
                [plant.CalcRelativeTransform(ctx, plant.world_frame(), f).GetAsMatrix4() for f in frames],
                (plant.num_bodies(), plant.num_joints(), plant.num_positions(), plant.num_actuators()))

    import dynamics_cy
    ours = scene(MultibodyPlant(0.0), dynamics_cy, FrameIndex)
    theirs = scene(drake_plant.MultibodyPlant(0.0), drake_parsing, drake_tree.FrameIndex)
    assert [a[:3] for a in ours[0]] == [a[:3] for a in theirs[0]] == \
        [("iiwa7", "world", "iiwa_link_0"), ("schunk_wsg", "schunk_wsg_on_iiwa", "body")]
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a[3], b[3], atol=1e-14)
    assert ours[3] == theirs[3]
    assert ours[1] == theirs[1]                              # frames: names, bodies, instances, in order
    for name, X, Y in zip(ours[1], ours[2], theirs[2]):
        np.testing.assert_allclose(X, Y, atol=1e-12, err_msg=str(name))
