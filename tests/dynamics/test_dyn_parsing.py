"""URDF and SDFormat parsing: features, Drake's conventions, and errors that name file and element."""
import logging

import numpy as np
import pytest

from dynamics_cy import (
    Box,
    Capsule,
    Cylinder,
    FrameIndex,
    Mesh,
    MultibodyPlant,
    PackageMap,
    ParseError,
    Parser,
    RollPitchYaw,
    Sphere,
)


def parse(text, kind="urdf", finalize=True, **options):
    plant = MultibodyPlant(0.0)
    parser = Parser(plant, **options)
    instances = parser.AddModelsFromString(text, kind)
    if finalize:
        plant.Finalize()
    return plant, parser, instances


def link(name, mass=1.0, xyz="0 0 0", rpy="0 0 0", inertia="0.1 0.2 0.3"):
    ixx, iyy, izz = inertia.split()
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def robot(*parts, name="r"):
    return f'<robot name="{name}" xmlns:drake="http://drake.mit.edu">' + "".join(parts) + "</robot>"


def test_default_iiwa_model(iiwa):
    assert (iiwa.num_positions(), iiwa.num_actuators(), iiwa.num_bodies()) == (7, 7, 12)
    np.testing.assert_array_equal(iiwa.GetEffortUpperLimits(), [320, 320, 176, 176, 110, 40, 40])
    np.testing.assert_array_equal(iiwa.GetAccelerationUpperLimits(), [8.57, 8.57, 8.74, 11.36, 12.23, 15.72, 15.72])
    np.testing.assert_allclose(iiwa.GetVelocityUpperLimits()[:2], [1.4835298641951802] * 2)
    np.testing.assert_array_equal(iiwa.GetDampingVector(), [0.5] * 7)
    assert iiwa.GetBodyByName("iiwa_link_3").default_mass() == 3.5
    assert iiwa.GetJointByName("iiwa_joint_2").frame_on_parent().name() == "iiwa_joint_2_parent"
    assert iiwa.GetModelInstanceName(iiwa.GetBodyByName("base").model_instance()) == "iiwa14"
    assert not iiwa.GetBodyByName("base").is_floating_base_body()      # welded through the URDF's world link
    assert iiwa.num_visual_geometries() == 8 and iiwa.num_collision_geometries() == 8
    visual = iiwa.GetVisualGeometriesForBody(iiwa.GetBodyByName("iiwa_link_1"))[0]
    assert isinstance(visual.shape, Cylinder) and visual.shape.radius() == 0.075
    np.testing.assert_allclose(visual.diffuse_color, [1.0, 0.423529, 0.039216, 1.0])


def test_inertial_origin_with_rotation():
    text = robot(link("a", 2.0, xyz="0.1 0.2 0.3", rpy="0.3 -0.2 0.5", inertia="0.1 0.2 0.25"))
    plant, _, _ = parse(text)
    M = plant.GetBodyByName("a").default_spatial_inertia()
    R = RollPitchYaw(0.3, -0.2, 0.5).ToRotationMatrix().matrix()
    c = np.array([0.1, 0.2, 0.3])
    I_Bo = R @ np.diag([0.1, 0.2, 0.25]) @ R.T + 2.0 * (c @ c * np.eye(3) - np.outer(c, c))
    assert M.get_mass() == 2.0
    np.testing.assert_allclose(M.get_com(), c)
    np.testing.assert_allclose(M.CalcRotationalInertia().CopyToFullMatrix3(), I_Bo, atol=1e-15)


def joint(name, jtype, parent, child, extra="", xyz="0 0 0", rpy="0 0 0"):
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{extra}</joint>')


def test_every_urdf_joint_type_and_its_attributes():
    text = robot(link("world"), link("a"), link("b"), link("c"), link("d"), link("e"), link("f"),
                 joint("rev", "revolute", "world", "a", '<axis xyz="0 2 0"/><limit lower="-1" upper="2" effort="5" '
                       'velocity="3" drake:acceleration="7"/><dynamics damping="0.4" friction="0.1"/>'),
                 joint("cont", "continuous", "a", "b", '<axis xyz="1 0 0"/><limit lower="-1" upper="1"/>'),
                 joint("pri", "prismatic", "b", "c", '<axis xyz="0 0 1"/><limit lower="-0.1" upper="0.2"/>'),
                 joint("fix", "fixed", "c", "d", xyz="0 0 0.5"),
                 joint("float", "floating", "world", "e"),
                 joint("plane", "planar", "world", "f", '<axis xyz="1 0 0"/>'),
                 '<transmission name="t"><type>transmission_interface/SimpleTransmission</type>'
                 '<joint name="rev"/><actuator name="motor"/></transmission>')
    plant, parser, _ = parse(text)
    rev, cont, pri = (plant.GetJointByName(n) for n in ("rev", "cont", "pri"))
    assert rev.type_name() == "revolute" and rev.revolute_axis().tolist() == [0, 1, 0]
    assert (rev.position_lower_limit(), rev.position_upper_limit(), rev.default_damping()) == (-1, 2, 0.4)
    assert rev.velocity_upper_limit() == 3 and rev.acceleration_lower_limit() == -7
    assert cont.position_lower_limits().tolist() == [-np.inf]
    assert pri.type_name() == "prismatic" and pri.position_upper_limits().tolist() == [0.2]
    assert plant.GetJointByName("fix").type_name() == "weld"
    assert not plant.HasJointNamed("float") and plant.GetJointByName("e").type_name() == "quaternion_floating"
    assert plant.GetJointByName("plane").type_name() == "planar"
    assert plant.num_actuators() == 1 and plant.GetJointActuatorByName("motor").effort_limit() == 5
    assert any("friction" in d for d in parser.diagnostics)
    # the planar joint moves f in the plane normal to its axis (the world's y-z plane)
    ctx = plant.CreateDefaultContext()
    plane = plant.GetJointByName("plane")
    plane.set_pose(ctx, [0.3, -0.4], 0.0)
    p = plant.EvalBodyPoseInWorld(ctx, plant.GetBodyByName("f")).translation()
    assert p[0] == pytest.approx(0.0, abs=1e-15) and np.hypot(p[1], p[2]) == pytest.approx(0.5)


def test_a_joint_may_name_the_world_as_parent_without_declaring_it():
    # Drake's acrobot.urdf is written so: <parent link="world"/> with no <link name="world"/>
    undeclared = robot(link("a"), link("b"),
                       joint("shoulder", "revolute", "world", "a", '<origin xyz="0 0.15 0"/><axis xyz="0 1 0"/>'),
                       joint("elbow", "revolute", "a", "b", '<origin xyz="0 0 -1"/><axis xyz="0 1 0"/>'))
    declared = undeclared.replace(link("a"), '<link name="world"/>' + link("a"), 1)
    frames = []
    for text in (undeclared, declared):
        plant, parser, _ = parse(text)
        assert (plant.num_bodies(), plant.num_joints(), plant.num_positions()) == (3, 2, 2)
        shoulder = plant.GetJointByName("shoulder")
        assert shoulder.parent_body().index() == plant.world_body().index()
        assert shoulder.frame_on_parent().name() == "shoulder_parent"
        assert not plant.GetBodyByName("a").is_floating_base_body() and parser.diagnostics == []
        frames.append([(f.name(), int(f.model_instance()), f.body().name())
                       for f in (plant.get_frame(FrameIndex(i)) for i in range(plant.num_frames()))])
    assert frames[0] == frames[1]
    # the world is still no child
    with pytest.raises(ParseError, match="the world cannot be a child link"):
        parse(robot(link("a"), joint("j", "fixed", "a", "world")))


def test_mimic_is_a_coupler_constraint():
    text = robot('<link name="world"/>', link("a"), link("b"), link("c"),
                 joint("j1", "revolute", "world", "a", '<axis xyz="0 0 1"/>'),
                 joint("j2", "revolute", "a", "b",
                       '<axis xyz="0 0 1"/><mimic joint="j1" multiplier="-2" offset="0.1"/>'),
                 joint("j3", "revolute", "b", "c", '<axis xyz="0 0 1"/><mimic joint="j1"/>'))
    plant, parser, _ = parse(text)
    specs = list(plant.get_coupler_constraint_specs().values())
    assert [plant.get_joint(s.joint0_index).name() for s in specs] == ["j2", "j3"]
    assert (specs[0].gear_ratio, specs[0].offset, specs[1].gear_ratio) == (-2.0, 0.1, 1.0)
    assert not parser.diagnostics                   # as Drake: nothing to say, also when strict
    strict = Parser(MultibodyPlant(0.0))
    strict.SetStrictParsing()
    strict.AddModelsFromString(text, "urdf")


def test_geometry_materials_and_package_urls(tmp_path):
    pkg = tmp_path / "my_robot"
    (pkg / "meshes").mkdir(parents=True)
    (pkg / "package.xml").write_text("<package><name>my_robot</name></package>")
    (pkg / "meshes" / "arm.obj").write_text("v 0 0 0\n")
    text = robot(
        '<material name="blue"><color rgba="0 0 1 1"/></material>',
        '<link name="a"><visual><geometry><box size="1 2 3"/></geometry><material name="blue"/></visual>'
        '<visual name="ball"><origin xyz="0 0 1"/><geometry><sphere radius="0.5"/></geometry>'
        '<material name="red"><color rgba="1 0 0 0.5"/></material></visual>'
        '<visual><geometry><mesh filename="package://my_robot/meshes/arm.obj" scale="2 2 2"/></geometry></visual>'
        '<collision><geometry><capsule radius="0.1" length="0.4"/></geometry>'
        '<drake:proximity_properties><drake:mu_static value="0.8"/><drake:mu_dynamic value="0.5"/>'
        '</drake:proximity_properties></collision>'
        '<collision><geometry><cylinder radius="0.2" length="1"/></geometry></collision></link>')
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    parser.package_map().PopulateFromFolder(str(tmp_path))
    parser.AddModelsFromString(text, "urdf")
    body = plant.GetBodyByName("a")
    box, ball, mesh = plant.GetVisualGeometriesForBody(body)
    assert isinstance(box.shape, Box) and box.shape.size().tolist() == [1, 2, 3]
    assert box.diffuse_color.tolist() == [0, 0, 1, 1]
    assert isinstance(ball.shape, Sphere) and ball.name == "ball" and ball.X_BG.translation().tolist() == [0, 0, 1]
    assert ball.diffuse_color.tolist() == [1, 0, 0, 0.5]
    assert isinstance(mesh.shape, Mesh) and mesh.shape.filename() == str(pkg / "meshes" / "arm.obj")
    assert mesh.shape.scale() == 2.0
    capsule, cylinder = plant.GetCollisionGeometriesForBody(body)
    assert isinstance(capsule.shape, Capsule) and capsule.friction.static_friction() == 0.8
    assert capsule.friction.dynamic_friction() == 0.5 and isinstance(cylinder.shape, Cylinder)


def test_package_map_resolution_and_errors(tmp_path):
    pm = PackageMap.MakeEmpty()
    pm.Add("p", str(tmp_path))
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "y.stl").write_text("solid\n")
    assert pm.ResolveUrl("package://p/x/y.stl") == str(tmp_path / "x" / "y.stl")
    assert pm.ResolveUrl("x/y.stl", str(tmp_path)) == str(tmp_path / "x" / "y.stl")
    for url, message in (("package://p/x/z.stl", "which does not exist"), ("package://q/a.obj", "unknown package 'q'"),
                         ("http://p/a.obj", "unsupported scheme"), ("a.obj", "invalid when parsing a string")):
        with pytest.raises(RuntimeError, match=message):
            pm.ResolveUrl(url)
    with pytest.raises(RuntimeError, match="package 'q' is not known"):
        pm.GetPath("q")
    with pytest.raises(RuntimeError, match="does not exist"):
        pm.Add("r", str(tmp_path / "missing"))
    with pytest.raises(RuntimeError, match="already contains package 'p'"):
        pm.Add("p", str(tmp_path / "x"))


def test_unresolved_meshes_are_reported_once():
    meshes = "".join(f'<visual><geometry><mesh filename="package://nowhere/m{i}.obj"/></geometry></visual>'
                     for i in range(40))
    plant, parser, _ = parse(robot(f'<link name="a">{meshes}</link>'), finalize=False)
    assert len(parser.diagnostics) == 1
    assert "40 mesh URIs did not resolve" in parser.diagnostics[0] and "package://nowhere/m2.obj, ..." in \
        parser.diagnostics[0] and "unknown package 'nowhere'" in parser.diagnostics[0]
    shapes = plant.GetVisualGeometriesForBody(plant.GetBodyByName("a"))
    assert [g.shape.filename() for g in shapes][:2] == ["package://nowhere/m0.obj", "package://nowhere/m1.obj"]


SDF = """<?xml version="1.0"?>
<sdf version="1.9">
  <model name="arm">
    <link name="base"><pose>0 0 0.1 0 0 0</pose>
      <inertial><mass>3</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      <visual name="v"><geometry><cylinder><radius>0.1</radius><length>0.2</length></cylinder></geometry>
        <material><diffuse>0.2 0.3 0.4 1</diffuse></material></visual>
      <collision name="c"><geometry><box><size>0.1 0.2 0.3</size></box></geometry>
        <surface><friction><ode><mu>0.6</mu></ode></friction></surface></collision>
    </link>
    <link name="upper"><pose relative_to="base">0 0 0.5 0 0 0</pose>
      <inertial><pose>0 0 0.2 0 0 0</pose><mass>2</mass>
        <inertia><ixx>0.05</ixx><iyy>0.05</iyy><izz>0.01</izz></inertia></inertial></link>
    <link name="hand"><pose relative_to="upper">0 0 0.4 0 0 0</pose>
      <inertial><mass>0.5</mass><inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz></inertia></inertial></link>
    <link name="box"><pose>1 0 0 0 0 1.5707963267948966</pose>
      <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial></link>
    <joint name="anchor" type="fixed"><parent>world</parent><child>base</child></joint>
    <joint name="shoulder" type="revolute"><parent>base</parent><child>upper</child>
      <axis><xyz expressed_in="__model__">0 1 0</xyz>
        <limit><lower>-1</lower><upper>1.5</upper><effort>50</effort><velocity>2</velocity></limit>
        <dynamics><damping>0.3</damping></dynamics></axis></joint>
    <joint name="wrist" type="ball"><parent>upper</parent><child>hand</child><pose>0 0 -0.05 0 0 0</pose></joint>
    <frame name="tool" attached_to="hand"><pose relative_to="hand">0 0 0.1 0 0 0</pose></frame>
  </model>
</sdf>"""


def test_sdformat_subset():
    plant, _, (instance,) = parse(SDF, "sdf")
    assert plant.GetModelInstanceName(instance) == "arm"
    shoulder, wrist = plant.GetJointByName("shoulder"), plant.GetJointByName("wrist")
    assert shoulder.revolute_axis().tolist() == [0, 1, 0] and shoulder.position_upper_limit() == 1.5
    assert shoulder.default_damping() == 0.3 and shoulder.velocity_upper_limit() == 2
    assert plant.GetJointActuatorByName("shoulder").effort_limit() == 50
    assert wrist.type_name() == "ball_rpy" and wrist.num_velocities() == 3
    assert plant.GetBodyByName("box").is_floating_base_body()
    ctx = plant.CreateDefaultContext()
    X = plant.CalcRelativeTransform(ctx, plant.world_frame(), plant.GetFrameByName("tool"))
    np.testing.assert_allclose(X.translation(), [0, 0, 1.1], atol=1e-15)
    # the wrist joint frame sits 0.05 below the hand origin, on both sides of the joint
    np.testing.assert_allclose(plant.CalcRelativeTransform(ctx, plant.GetFrameByName("upper"),
                                                           wrist.frame_on_parent()).translation(), [0, 0, 0.35])
    np.testing.assert_allclose(plant.GetFreeBodyPose(ctx, plant.GetBodyByName("box")).translation(), [1, 0, 0])
    visual = plant.GetVisualGeometriesForBody(plant.GetBodyByName("base"))[0]
    assert visual.diffuse_color.tolist() == [0.2, 0.3, 0.4, 1]
    collision = plant.GetCollisionGeometriesForBody(plant.GetBodyByName("base"))[0]
    assert collision.friction.static_friction() == 0.6
    shoulder.set_angle(ctx, 0.5)
    R = plant.EvalBodyPoseInWorld(ctx, plant.GetBodyByName("upper")).rotation()
    assert R.IsNearlyEqualTo(RollPitchYaw(0, 0.5, 0).ToRotationMatrix(), 1e-15)


@pytest.mark.parametrize("text, kind, message, element", [
    (robot(link("a"), joint("j", "hinge", "a", "b")), "urdf", "joint 'j'.*child link 'b' is not defined", "<child>"),
    (robot(link("a"), link("b"), joint("j", "hinge", "a", "b")), "urdf", "unknown type 'hinge'", "<joint name='j'>"),
    (robot(link("a"), joint("j", "revolute", "ghost", "a")), "urdf", "parent link 'ghost' is not defined", "<parent"),
    (robot(link("a", mass="nan")), "urdf", "must be finite", "<mass>"),
    (robot(link("a", xyz="0 0")), "urdf", "origin xyz must have 3 numbers", "<origin>"),
    (robot(link("a"), link("a")), "urdf", "duplicate link name 'a'", "<link name='a'>"),
    (robot(link("a"), link("b"), link("c"), joint("j1", "revolute", "a", "b", '<axis xyz="0 0 1"/>'),
           joint("j2", "revolute", "c", "b", '<axis xyz="0 0 1"/>')), "urdf", "child of two joints",
     "<joint name='j2'>"),
    (robot(link("a"), link("b"), joint("j", "revolute", "a", "b", '<axis xyz="0 0 0"/>')), "urdf",
     "axis must be non-zero", "<axis>"),
    (robot(link("a"), link("b"), joint("j", "revolute", "a", "b", '<limit lower="1" upper="-1"/>')), "urdf",
     "lower limit 1.0 exceeds upper limit -1.0", "<limit>"),
    ("<robot name='r'><link name='a'>", "urdf", "malformed XML", ""),
    ("<model/>", "urdf", "root element must be <robot>", "<model>"),
    ('<robot><link name="a"/></robot>', "urdf", "needs a name attribute", "<robot>"),
    ('<sdf version="1.9"><model name="m"><link name="a"/><joint name="j" type="gearbox"><parent>world</parent>'
     '<child>a</child><axis><xyz>0 0 1</xyz></axis></joint></model></sdf>', "sdf", "unsupported type 'gearbox'",
     "<joint"),
    ('<sdf version="1.9"><model name="m"><link name="a"><pose relative_to="b"/></link>'
     '<link name="b"><pose relative_to="a"/></link></model></sdf>', "sdf", "pose graph cycle", ""),
])
def test_bad_models_name_the_source_and_element(text, kind, message, element):
    with pytest.raises(ParseError, match=message) as info:
        parse(text, kind)
    assert str(info.value).startswith("<string>")
    assert element in str(info.value)


def test_kinematic_loop_in_a_file_is_rejected(tmp_path):
    path = tmp_path / "loop.urdf"
    path.write_text(robot(link("a"), link("b"), joint("ab", "revolute", "a", "b", '<axis xyz="0 0 1"/>'),
                          joint("ba", "revolute", "b", "a", '<axis xyz="0 0 1"/>')))
    plant = MultibodyPlant(0.0)
    with pytest.raises(ParseError, match=r"loop.urdf:1 \(<joint name='(ab|ba)'>\): .*kinematic loop"):
        Parser(plant).AddModels(str(path))


def test_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "bad.urdf"
    path.write_text(robot("\n", link("a"), "\n", link("b", mass=-2.0)))
    with pytest.raises(ParseError, match=r"bad\.urdf:3 \(<inertia>\): link 'b': mass -2 is negative"):
        Parser(MultibodyPlant(0.0), nonphysical_inertia="error").AddModels(str(path))
    with pytest.raises(ParseError, match="no such model file"):
        Parser(MultibodyPlant(0.0)).AddModels(str(tmp_path / "missing.urdf"))
    with pytest.raises(ParseError, match="unknown model format 'obj'"):
        Parser(MultibodyPlant(0.0)).AddModelsFromString("", "obj")


@pytest.mark.parametrize("mass, inertia, message", [
    (-1, "0.1 0.2 0.3", "link 'a': mass -1 is negative"),
    (1, "1 1 3", "link 'a': the rotational inertia .* do not satisfy the triangle inequality"),
    (1, "-1 1 1", "link 'a': the rotational inertia .* are invalid since at least one is negative"),
    (0, "0.1 0.1 0.1", "link 'a': mass 0 is not positive, but the rotational inertia is non-zero"),
])
def test_strict_parsing_rejects_nonphysical_inertia(mass, inertia, message):
    with pytest.raises(ParseError, match=message) as info:
        parse(robot(link("a", mass=mass, inertia=inertia)), nonphysical_inertia="error")
    assert "<inertia>" in str(info.value)
    plant, parser, _ = parse(robot(link("a", mass=mass, inertia=inertia)))     # the default: Drake's policy
    assert plant.GetBodyByName("a").default_mass() > 0 and len(parser.diagnostics) == 1


def test_nonphysical_inertia_is_replaced_by_a_water_sphere_by_default():
    text = robot(link("a", mass=2.0, inertia="0.001 0.001 0.01"))
    plant, parser, _ = parse(text)
    M = plant.GetBodyByName("a").default_spatial_inertia()
    radius = np.cbrt(3 * 2.0 / (4 * np.pi * 1000.0))          # a water sphere of the link's mass
    np.testing.assert_allclose(M.CalcRotationalInertia().get_moments(), [0.4 * 2.0 * radius**2] * 3)
    assert any("triangle inequality" in d for d in parser.diagnostics)


def test_drake_extensions_not_modelled_are_named_once():
    text = robot(link("a"), link("b"), link("c"),
                 joint("j", "revolute", "a", "b", '<axis xyz="0 0 1"/>'),
                 joint("k", "revolute", "b", "c", '<axis xyz="0 0 1"/>'),
                 *(f'<transmission name="t{j}"><type>transmission_interface/SimpleTransmission</type>'
                   f'<joint name="{j}"/><actuator name="m{j}"><drake:rotor_inertia value="0.1"/>'
                   f'<drake:gear_ratio value="100"/><drake:controller_gains p="1" d="2"/></actuator>'
                   '</transmission>' for j in "jk"),
                 '<link name="d"><collision><geometry><sphere radius="1"/></geometry><drake:proximity_properties>'
                 '<drake:hydroelastic_modulus value="1e7"/><drake:mu_static value="0.5"/></drake:proximity_properties>'
                 '</collision></link>')
    plant, parser, _ = parse(text)
    assert plant.num_actuators() == 2
    assert [plant.get_joint_actuator(a).default_reflected_inertia() for a in plant.GetJointActuatorIndices()] == \
        pytest.approx([1000.0, 1000.0])                         # read: 100² · 0.1
    notes = [d for d in parser.diagnostics if "<drake:" in d]
    assert len(notes) == 1 and "2 <drake:controller_gains> elements ignored" in notes[0]
    with pytest.raises(ParseError, match="joint actuator m's drake:rotor_inertia does not have a \"value\""):
        parse(robot(link("a"), link("b"), joint("j", "revolute", "a", "b", '<axis xyz="0 0 1"/>'),
                    '<transmission name="t"><type>SimpleTransmission</type><joint name="j"/><actuator name="m">'
                    '<drake:rotor_inertia/></actuator></transmission>'))
    with pytest.raises(ParseError, match="<drake:joint name='u' type='universal'> is not supported"):
        parse(robot(link("a"), '<drake:joint name="u" type="universal"/>'))


def test_strict_parsing_makes_warnings_errors_as_in_drake():
    text = robot(link("a", mass=1, inertia="1 1 3"))
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    parser.SetStrictParsing()
    with pytest.raises(ParseError, match="link 'a': the rotational inertia .* triangle inequality"):
        parser.AddModelsFromString(text, "urdf")
    drake = pytest.importorskip("pydrake.multibody.parsing", reason="pydrake is not installed (pip install drake)")
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    drake_plant = DrakePlant(0.0)
    theirs = drake.Parser(drake_plant)
    theirs.SetStrictParsing()
    with pytest.raises(RuntimeError, match="triangle inequality"):
        theirs.AddModelsFromString(text, "urdf")


@pytest.mark.parametrize("mass, inertia, rpy", [
    (-2.0, "0.1 0.2 0.25", "0 0 0"), (0.0, "0.1 0.1 0.1", "0 0 0"), (0.0, "0 0 0", "0 0 0"),
    (1.5, "1 1 3", "0.3 0.2 0.1"), (1.5, "-1e-3 1 1", "0 0 0"), (1.5, "1 1 2.0000000000000004", "0 0 0"),
    (2.0, "0.1 0.2 0.25", "0.4 -0.3 1.2"), (1e-6, "1e-12 2e-12 2.5e-12", "0 0 0"),
])
def test_inertia_policy_gives_drakes_bodies(mass, inertia, rpy, caplog):
    """The body Drake's parser makes of each <inertial> (valid, replaced by the sphere, massless), and a
    warning exactly when Drake warns."""
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    from pydrake.multibody.parsing import Parser as DrakeParser
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    text = robot(link("a", mass=mass, xyz="0.1 -0.2 0.3", rpy=rpy, inertia=inertia))
    plant, parser, _ = parse(text)
    drake = DrakePlant(0.0)
    with caplog.at_level(logging.WARNING, logger="drake"):
        DrakeParser(drake).AddModelsFromString(text, "urdf")
    drake_warnings = [r for r in caplog.records if r.name == "drake" and "inertia" in r.getMessage()]
    drake.Finalize()
    ours, theirs = plant.GetBodyByName("a"), drake.GetBodyByName("a")
    assert ours.default_mass() == pytest.approx(theirs.default_mass(), rel=1e-14)
    np.testing.assert_allclose(ours.default_com(), theirs.default_com(), atol=1e-15)
    np.testing.assert_allclose(ours.default_rotational_inertia().CopyToFullMatrix3(),
                               theirs.default_rotational_inertia().CopyToFullMatrix3(), rtol=1e-12, atol=1e-18)
    assert len([d for d in parser.diagnostics if "replaced" in d]) == len(drake_warnings)


STATIC_SDF = """<?xml version="1.0"?>
<sdf version="1.9"><model name="table"><static>true</static><pose>1 2 0 0 0 0.5</pose>
  <link name="top"><pose>0.1 0 0.8 0.1 0 0</pose></link>
  <link name="leg"><pose>0 0 0.4 0 0 0</pose></link>
  <link name="lamp"><pose>0 0.3 1.0 0 0 0</pose></link>
  <joint name="leg_to_top" type="fixed"><parent>top</parent><child>leg</child></joint>
</model></sdf>"""


def test_static_sdformat_models_are_welded_as_drake_welds_them():
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    from pydrake.multibody.parsing import Parser as DrakeParser
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    from pydrake.multibody.tree import FrameIndex, JointIndex
    plant, _, _ = parse(STATIC_SDF, "sdf")
    drake = DrakePlant(0.0)
    DrakeParser(drake).AddModelsFromString(STATIC_SDF, "sdf")
    drake.Finalize()
    joints = [plant.get_joint(JointIndex(i)).name() for i in range(plant.num_joints())]
    assert joints == [drake.get_joint(JointIndex(i)).name() for i in range(drake.num_joints())]
    assert "sdformat_model_static_world_welds_to_top" in joints and plant.num_positions() == 0
    frames = [plant.get_frame(i).name() for i in range(plant.num_frames())]
    assert frames == [drake.get_frame(FrameIndex(i)).name() for i in range(drake.num_frames())]
    c, d = plant.CreateDefaultContext(), drake.CreateDefaultContext()
    for name in ("leg", "top", "lamp"):
        np.testing.assert_allclose(plant.EvalBodyPoseInWorld(c, plant.GetBodyByName(name)).GetAsMatrix4(),
                                   drake.EvalBodyPoseInWorld(d, drake.GetBodyByName(name)).GetAsMatrix4(), atol=1e-15)
    moving = STATIC_SDF.replace('type="fixed"', 'type="revolute"').replace(
        "<child>leg</child>", "<child>leg</child><axis><xyz>0 0 1</xyz></axis>")
    with pytest.raises(ParseError, match="Only fixed joints are permitted in static models."):
        parse(moving, "sdf")
    other = DrakePlant(0.0)                              # kept alive: pydrake's Parser holds a pointer
    with pytest.raises(RuntimeError, match="Only fixed joints are permitted in static models."):
        DrakeParser(other).AddModelsFromString(moving, "sdf")


def test_missing_mass_or_inertia_reads_as_zero_as_in_drake():
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    from pydrake.multibody.parsing import Parser as DrakeParser
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    for inertial in ('<inertial><inertia ixx="1" iyy="1" izz="1"/></inertial>',
                     '<inertial><mass value="2"/></inertial>', '<inertial><origin xyz="0 0 1"/></inertial>'):
        text = robot(f'<link name="a">{inertial}</link>')
        plant, parser, _ = parse(text)
        drake = DrakePlant(0.0)
        DrakeParser(drake).AddModelsFromString(text, "urdf")
        drake.Finalize()
        ours, theirs = plant.GetBodyByName("a"), drake.GetBodyByName("a")
        assert ours.default_mass() == pytest.approx(theirs.default_mass(), rel=1e-14), inertial
        np.testing.assert_allclose(ours.default_rotational_inertia().CopyToFullMatrix3(),
                                   theirs.default_rotational_inertia().CopyToFullMatrix3(), rtol=1e-12, atol=1e-18)


@pytest.mark.parametrize("mass, moments", [(1, (1, 1, 3)), (-1, (1, 1, 1)), (0, (1, 1, 1)), (0, (0, 0, 0))])
def test_sdformat_inertia_policy_is_drakes(mass, moments):
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    from pydrake.multibody.parsing import Parser as DrakeParser
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    text = (f'<sdf version="1.9"><model name="m"><link name="a"><inertial><pose>0.1 0 0 0 0 0</pose>'
            f'<mass>{mass}</mass><inertia><ixx>{moments[0]}</ixx><iyy>{moments[1]}</iyy><izz>{moments[2]}</izz>'
            '</inertia></inertial></link></model></sdf>')
    plant, _, _ = parse(text, "sdf")
    drake = DrakePlant(0.0)
    DrakeParser(drake).AddModelsFromString(text, "sdf")
    drake.Finalize()
    ours, theirs = plant.GetBodyByName("a"), drake.GetBodyByName("a")
    assert ours.default_mass() == pytest.approx(theirs.default_mass(), rel=1e-14)
    np.testing.assert_allclose(ours.default_rotational_inertia().CopyToFullMatrix3(),
                               theirs.default_rotational_inertia().CopyToFullMatrix3(), rtol=1e-12, atol=1e-18)


IGNORED_BY_DRAKE = """<robot name="r" version="1.0">
<link name="world">
<inertial><mass value="1"/></inertial></link>
<link name="a" type="ignored">
</link>
<link name="b"/>
<joint name="j1" type="revolute"><parent link="world"/><child link="a"/><axis xyz="0 0 1"/>
<calibration rising="0"/>
<safety_controller k_velocity="1"/>
<dynamics damping="0.1" coulomb_window="0.01"/>
<limit effort="3"/></joint>
<joint name="j2" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>
<transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
<joint name="j1"/><actuator name="m1">
<mechanicalReduction>50</mechanicalReduction></actuator>
<flexJoint name="x"/>
</transmission>
<transmission name="t2"><type>transmission_interface/SimpleTransmission</type>
<joint name="j2"/><actuator name="m2"><mechanicalReduction>1</mechanicalReduction></actuator>
<mechanicalReduction>-3</mechanicalReduction>
</transmission>
</robot>"""


def test_what_drake_ignores_with_a_warning_warns_here_on_the_same_lines(caplog):
    """Documented URDF tags and attributes Drake ignores (calibration, safety_controller, a link's
    type, the robot's version, coulomb_window, the PR2's transmission children), a mechanicalReduction
    other than 1 and <inertial> on the world: a warning on the same line as Drake's, so that
    SetStrictParsing refuses the same models (the Panda's safety_controller tags, the PR2's reductions)."""
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    from pydrake.multibody.parsing import Parser as DrakeParser
    from pydrake.multibody.plant import MultibodyPlant as DrakePlant
    plant, parser, _ = parse(IGNORED_BY_DRAKE)
    assert plant.num_actuators() == 2
    drake = DrakePlant(0.0)
    with caplog.at_level(logging.WARNING, logger="drake"):
        DrakeParser(drake).AddModelsFromString(IGNORED_BY_DRAKE, "urdf")
    theirs = sorted(int(r.getMessage().split(":")[1]) for r in caplog.records if r.name == "drake")
    ours = sorted(int(d.split(":")[1].split()[0]) for d in parser.diagnostics)
    assert len(theirs) == 9 and ours == theirs
    assert any("mechanicalReduction element with a value '50'" in d for d in parser.diagnostics)
    strict = Parser(MultibodyPlant(0.0))
    strict.SetStrictParsing()
    with pytest.raises(ParseError, match="version"):
        strict.AddModelsFromString(IGNORED_BY_DRAKE, "urdf")
