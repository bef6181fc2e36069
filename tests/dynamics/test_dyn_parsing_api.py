"""Parser's pydrake API: AddModels' keyword forms, URLs, model names (prefix, auto-renaming), collision
filter groups, frames by scoped name; each against pydrake where it is installed."""
import os
from pathlib import Path

import pytest

from dynamics_cy import (
    CollisionFilterGroups,
    FrameIndex,
    GetScopedFrameByName,
    GetScopedFrameByNameMaybe,
    ModelInstanceIndex,
    MultibodyPlant,
    PackageMap,
    ParseError,
    Parser,
)

URDF = """<robot name='r' xmlns:drake='http://drake.mit.edu'><link name='a'/><link name='b'/><link name='c'/>
<joint name='j' type='fixed'><parent link='a'/><child link='b'/></joint>
<joint name='k' type='revolute'><parent link='b'/><child link='c'/><axis xyz='0 0 1'/></joint>
<drake:collision_filter_group name='g1'><drake:member link='a'/><drake:member link='b'/>
  <drake:ignored_collision_filter_group name='g2'/></drake:collision_filter_group>
<drake:collision_filter_group name='g2'><drake:member link='c'/><drake:member_group name='g1'/>
  </drake:collision_filter_group>
<drake:collision_filter_group name='skipped' ignore='true'><drake:member link='c'/></drake:collision_filter_group>
<drake:collision_filter_group name='g4'><drake:member link='c'/>
  <drake:ignored_collision_filter_group name='g4'/></drake:collision_filter_group>
</robot>"""

SDF = """<sdf version='1.7' xmlns:drake='http://drake.mit.edu'><model name='m'>
<link name='a'/><link name='b'><pose>0 0 1 0 0 0</pose></link>
<frame name='tip' attached_to='b'><pose relative_to='b'>0 0 0.5 0 0 0</pose></frame>
<joint name='j' type='revolute'><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz></axis></joint>
<drake:collision_filter_group name='g1'><drake:member>a</drake:member><drake:member>b</drake:member>
  <drake:ignored_collision_filter_group>g1</drake:ignored_collision_filter_group></drake:collision_filter_group>
</model></sdf>"""


def pydrake_parsing():
    return pytest.importorskip("pydrake.multibody.parsing", reason="pydrake is not installed (pip install drake)")


@pytest.fixture
def package(tmp_path):
    (tmp_path / "package.xml").write_text("<package format='3'><name>my_models</name></package>")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "r.urdf").write_text(URDF)
    (tmp_path / "models" / "m.sdf").write_text(SDF)
    return tmp_path


def names(plant, instances):
    return [plant.GetModelInstanceName(i) for i in instances]


def test_add_models_keyword_forms(package):
    for call in (lambda p: p.AddModels(str(package / "models" / "r.urdf")),
                 lambda p: p.AddModels(file_name=package / "models" / "m.sdf"),
                 lambda p: p.AddModels(url="package://my_models/models/r.urdf"),
                 lambda p: p.AddModels(file_contents=SDF, file_type="sdf"),
                 lambda p: p.AddModelsFromString(file_contents=URDF, file_type="urdf")):
        plant = MultibodyPlant(0.0)
        parser = Parser(plant)
        parser.package_map().AddPackageXml(str(package / "package.xml"))
        result = call(parser)
        assert isinstance(result, list) and isinstance(result[0], ModelInstanceIndex)
        assert names(plant, result) in (["r"], ["m"])
    parser = Parser(MultibodyPlant(0.0))
    with pytest.raises(TypeError, match="exactly one"):
        parser.AddModels()
    with pytest.raises(TypeError, match="exactly one"):
        parser.AddModels(str(package / "models" / "r.urdf"), url="package://my_models/models/r.urdf")
    with pytest.raises(TypeError, match="file_type"):
        parser.AddModels(file_contents=URDF)


def test_add_models_from_url(package):
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    parser.package_map().Add("my_models", str(package))
    assert names(plant, parser.AddModelsFromUrl(url="package://my_models/models/r.urdf")) == ["r"]
    assert names(plant, parser.AddModelsFromUrl(f"file://{package}/models/m.sdf")) == ["m"]
    with pytest.raises(ParseError, match="unknown package 'nowhere'"):
        parser.AddModelsFromUrl("package://nowhere/r.urdf")
    with pytest.raises(ParseError, match="does not exist"):
        parser.AddModelsFromUrl("package://my_models/models/none.urdf")


def test_drakes_own_model_by_url():
    """package://drake resolves through Drake's default map (pydrake's share/, or DRAKE_RESOURCE_ROOT)."""
    pm = PackageMap()
    if not pm.Contains("drake"):
        pytest.skip("no Drake resources (pip install drake)")
    url = "package://drake/multibody/benchmarks/acrobot/acrobot.sdf"
    try:
        pm.ResolveUrl(url)
    except RuntimeError:
        pytest.skip(f"{url} is not in this Drake's resources")
    plant = MultibodyPlant(0.0)
    assert names(plant, Parser(plant).AddModels(url=url)) == ["acrobot"]


def test_auto_renaming_and_model_name_prefix():
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    assert parser.GetAutoRenaming() is False
    parser.AddModelsFromString(URDF, "urdf")
    with pytest.raises(ParseError, match="'r'"):
        parser.AddModelsFromString(URDF, "urdf")
    parser.SetAutoRenaming(value=True)
    assert parser.GetAutoRenaming()
    assert names(plant, parser.AddModelsFromString(URDF, "urdf")) == ["r_1"]
    assert names(plant, parser.AddModelsFromString(URDF, "urdf")) == ["r_2"]
    assert names(plant, Parser(plant, model_name_prefix="left").AddModelsFromString(URDF, "urdf")) == ["left::r"]
    assert names(plant, Parser(plant, "right").AddModelsFromString(SDF, "sdf")) == ["right::m"]  # pydrake's overload
    assert plant.HasFrameNamed("tip", plant.GetModelInstanceByName("right::m"))
    try:
        pa = pydrake_parsing()
    except pytest.skip.Exception:
        return
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    theirs = DrakePlant(0.0)
    p = pa.Parser(theirs)
    p.AddModelsFromString(URDF, "urdf")
    p.SetAutoRenaming(True)
    got = p.AddModelsFromString(URDF, "urdf") + p.AddModelsFromString(URDF, "urdf")
    assert [theirs.GetModelInstanceName(i) for i in got] == ["r_1", "r_2"]


EXPECTED_GROUPS = {
    "r::g1": {"r::a", "r::b"}, "r::g2": {"r::a", "r::b", "r::c"}, "r::g4": {"r::c"}, "m::g1": {"m::a", "m::b"}}
EXPECTED_PAIRS = {("r::g1", "r::g2"), ("r::g4", "r::g4"), ("m::g1", "m::g1")}


def test_collision_filter_groups_are_recorded_as_drake_records_them():
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    assert parser.GetCollisionFilterGroups().empty()
    parser.AddModelsFromString(URDF, "urdf")
    parser.AddModelsFromString(SDF, "sdf")
    groups = parser.GetCollisionFilterGroups()
    assert groups.groups() == EXPECTED_GROUPS and groups.exclusion_pairs() == EXPECTED_PAIRS
    assert not [d for d in parser.diagnostics if "collision_filter" in d]     # recorded, not ignored
    try:
        pa = pydrake_parsing()
    except pytest.skip.Exception:
        return
    from pydrake.geometry import SceneGraph
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    theirs, scene_graph = DrakePlant(0.0), SceneGraph()      # the plant keeps a pointer: keep it alive
    theirs.RegisterAsSourceForSceneGraph(scene_graph)        # Drake records groups only with a SceneGraph
    p = pa.Parser(theirs)
    p.AddModelsFromString(URDF, "urdf")
    p.AddModelsFromString(SDF, "sdf")
    assert str(p.GetCollisionFilterGroups()) == str(groups)
    assert p.GetCollisionFilterGroups().groups() == groups.groups()


@pytest.mark.parametrize("body, message", [
    ("<drake:member link='nowhere'/>", "member 'nowhere' is not a link"),
    ("<drake:member link='a'/><drake:member_group name='ghost'/>", "'r::ghost' is not defined"),
    ("<drake:member link='a'/><drake:ignored_collision_filter_group name='ghost'/>", "'r::ghost' is not defined"),
])
def test_bad_collision_filter_groups_are_errors(body, message):
    text = f"<robot name='r' xmlns:drake='x'><link name='a'/><drake:collision_filter_group name='g'>{body}" \
           "</drake:collision_filter_group></robot>"
    with pytest.raises(ParseError, match=message):
        Parser(MultibodyPlant(0.0)).AddModelsFromString(text, "urdf")


def test_collision_filter_groups_class():
    dut = CollisionFilterGroups()
    assert dut.empty()
    dut.AddGroup(name="a", members={"b", "c"})
    dut.AddExclusionPair(pair=("e", "d"))
    assert dut.groups() == {"a": {"b", "c"}} and dut.exclusion_pairs() == {("d", "e")}
    assert str(dut) == "\nCollision filter groups:\n    a\n        b\n        c\nCollision filter exclusion pairs:\n" \
                       "    d, e\n"
    with pytest.raises(RuntimeError, match="already defined"):
        dut.AddGroup("a", {"x"})


def test_scoped_frame_names():
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    parser.AddModelsFromString(SDF, "sdf")
    Parser(plant, model_name_prefix="left").AddModelsFromString(SDF, "sdf")
    assert GetScopedFrameByName(plant, "world").index() == plant.world_frame().index()
    tip = GetScopedFrameByName(plant, "left::m::tip")
    assert tip.name() == "tip" and plant.GetModelInstanceName(tip.model_instance()) == "left::m"
    assert GetScopedFrameByNameMaybe(plant, "m::nowhere") is None
    assert GetScopedFrameByNameMaybe(plant, "nobody::tip") is None
    with pytest.raises(RuntimeError, match="multiple model instances"):   # as Drake: an ambiguous name
        GetScopedFrameByNameMaybe(plant, "tip")
    with pytest.raises(RuntimeError):
        GetScopedFrameByName(plant, "nobody::tip")


def test_sdformat_frames_follow_the_joints_frames_as_in_drake():
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModelsFromString(SDF, "sdf")
    ours = [plant.get_frame(FrameIndex(i)).name() for i in range(plant.num_frames())]
    assert ours == ["world", "a", "b", "__model__", "j_parent", "j_child", "tip"]
    try:
        pa = pydrake_parsing()
    except pytest.skip.Exception:
        return
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    from pydrake.multibody.tree import FrameIndex as DrakeFrameIndex
    theirs = DrakePlant(0.0)
    pa.Parser(theirs).AddModelsFromString(SDF, "sdf")
    assert ours == [theirs.get_frame(DrakeFrameIndex(i)).name() for i in range(theirs.num_frames())]


def test_path_like_file_names(package):
    plant = MultibodyPlant(0.0)
    assert names(plant, Parser(plant).AddModels(Path(package) / "models" / "r.urdf")) == ["r"]
    assert os.path.isfile(package / "models" / "r.urdf")
