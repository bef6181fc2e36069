"""MultibodyPlant's constraints (AddCouplerConstraint, AddDistanceConstraint, AddBallConstraint,
AddWeldConstraint, ids, removal, context parameters) and their parsing (<mimic>, <drake:mimic>,
<drake:ball_constraint>): each scenario runs on dynamics_cy and, when installed, on pydrake, and the
two must agree (counts, ids, errors and their messages)."""
import logging
import math

import numpy as np
import pytest

import dynamics_cy as dc

try:
    import pydrake.math as pd_math
    import pydrake.multibody.parsing as pd_parsing
    import pydrake.multibody.plant as pd_plant
    import pydrake.multibody.tree as pd_tree
except ImportError:
    pd_plant = None

INERTIA = (1.0, [0.0, 0.0, 0.0])
LIBS = ["ours"] + (["pydrake"] if pd_plant is not None else [])


class Lib:
    """One of the two implementations, under the same names."""

    def __init__(self, which: str):
        if which == "ours":
            self.plant, self.tree, self.math, self.parsing = dc, dc, dc, dc
        else:
            self.plant, self.tree, self.math, self.parsing = pd_plant, pd_tree, pd_math, pd_parsing

    def box(self):
        return self.tree.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.2, 0.3)

    def pendulums(self, time_step=0.01, approximation=None):
        """Two bodies A, B on revolute joints about y, A at the origin, B at x = 1; world welded nowhere."""
        p = self.plant.MultibodyPlant(time_step)
        if approximation is not None:
            p.set_discrete_contact_approximation(getattr(self.plant.DiscreteContactApproximation, approximation))
        A, B = p.AddRigidBody("A", self.box()), p.AddRigidBody("B", self.box())
        jA = p.AddJoint(self.tree.RevoluteJoint("jA", p.world_frame(), A.body_frame(), [0, 1, 0]))
        F = p.AddFrame(self.tree.FixedOffsetFrame("F", p.world_frame(), self.math.RigidTransform([1.0, 0, 0])))
        jB = p.AddJoint(self.tree.RevoluteJoint("jB", F, B.body_frame(), [0, 1, 0]))
        return p, A, B, jA, jB


def both(fn):
    """fn(Lib) on each implementation; the results, ours first."""
    return [fn(Lib(w)) for w in LIBS]


def outcome(call):
    try:
        return call()
    except Exception as e:          # the error, by the builtin it is (ours derive from it) and message
        kind = next(k for k in (RuntimeError, ValueError, TypeError, Exception) if isinstance(e, k))
        return f"{kind.__name__}: {e}"


def agree(results):
    assert all(r == results[0] for r in results), results
    return results[0]


def test_add_count_ids_and_remove():
    def run(L):
        p, A, B, jA, jB = L.pendulums()
        ids = [p.AddCouplerConstraint(joint0=jA, joint1=jB, gear_ratio=-2.0, offset=0.5),
               p.AddDistanceConstraint(body_A=A, p_AP=[0, 0, -1], body_B=B, p_BQ=[0, 0, -1], distance=1.0),
               p.AddBallConstraint(body_A=A, p_AP=[0.5, 0, 0], body_B=B),
               p.AddWeldConstraint(body_A=A, X_AP=L.math.RigidTransform(), body_B=p.world_body(),
                                   X_BQ=L.math.RigidTransform())]
        assert len(set(ids)) == 4 and all(i.is_valid() for i in ids) and ids[0] == ids[0] and ids[0] != ids[1]
        assert ids[0] < ids[1] and repr(ids[0]) == f"<MultibodyConstraintId value={ids[0].get_value()}>"
        before = [p.num_constraints(), sorted(ids) == sorted(p.GetConstraintIds())]
        p.RemoveConstraint(id=ids[1])
        again = outcome(lambda: p.RemoveConstraint(ids[1]))
        p.Finalize()
        after = outcome(lambda: p.RemoveConstraint(ids[0]))
        return before, p.num_constraints(), again.replace(str(ids[1].get_value()), "N"), after, \
            len(p.GetConstraintIds())
    assert agree(both(run)) == ([4, True], 3, "RuntimeError: RemoveConstraint(): The constraint id N does not match "
                                "any constraint registered with this plant. Note that this method does not check "
                                "constraints registered with DeformableModel.",
                                "RuntimeError: Post-finalize calls to 'RemoveConstraint()' are not allowed; calls to "
                                "this method must happen before Finalize().", 3)


def test_errors_as_drake():
    def run(L):
        p, A, B, jA, jB = L.pendulums()
        free = L.tree.QuaternionFloatingJoint
        C = p.AddRigidBody("C", L.box())
        jC = p.AddJoint(free("jC", p.world_frame(), C.body_frame()))
        X = L.math.RigidTransform()
        errors = [outcome(lambda: p.AddCouplerConstraint(jA, jC, 1.0)),
                  outcome(lambda: p.AddBallConstraint(A, [0, 0, 0], A)),
                  outcome(lambda: p.AddWeldConstraint(B, X, B, X)),
                  outcome(lambda: p.AddDistanceConstraint(A, [0, 0, 0], B, [0, 0, 0], 0.0)),
                  outcome(lambda: p.AddDistanceConstraint(A, [0, 0, 0], B, [0, 0, 0], 1.0, 0.0)),
                  outcome(lambda: p.AddDistanceConstraint(A, [0, 0, 0], B, [0, 0, 0], 1.0, 1.0, -1.0)),
                  outcome(lambda: p.AddDistanceConstraint(A, [0, 0, 0], A, [0, 0, 0], 1.0))]
        p.AddCouplerConstraint(jA, jB, 1.0)
        errors.append(outcome(lambda: p.set_discrete_contact_approximation(
            L.plant.DiscreteContactApproximation.kTamsi)))
        errors.append(outcome(lambda: p.RemoveJoint(jC)).split(" in order")[0])
        tamsi, A2, B2, jA2, jB2 = L.pendulums(approximation="kTamsi")
        errors += [outcome(lambda: tamsi.AddCouplerConstraint(jA2, jB2, 1.0)),
                   outcome(lambda: tamsi.AddBallConstraint(A2, [0, 0, 0], B2)).split(" TAMSI does")[0]]
        p.Finalize()
        errors.append(outcome(lambda: p.AddBallConstraint(A, [0, 0, 0], B)))
        return errors
    errors = agree(both(run))
    assert errors[0].startswith("RuntimeError: Coupler constraints can only be defined on single-DOF joints. However "
                                "joint 'jA' has 1 DOFs and joint 'jC' has 6 DOFs.")
    assert errors[3:7] == ["RuntimeError: Distance must be strictly positive.",
                           "RuntimeError: Stiffness must be strictly positive.",
                           "RuntimeError: Damping must be positive or zero.", "RuntimeError: Body indexes are equal."]
    assert "TAMSI does not support constraints" in errors[7] and "1 user-added constraints" in errors[8]
    assert "TAMSI does not support coupler constraints" in errors[9]
    assert errors[-1].startswith("RuntimeError: Post-finalize calls to 'AddBallConstraint()'")


def test_continuous_plant_accepts_constraints():
    """Drake accepts constraints on a continuous plant (its CENIC integrator, and here drivers.sim, use them)."""
    agree(both(lambda L: (lambda p: (p[0].AddCouplerConstraint(p[3], p[4], 1.0), p[0].num_constraints())[1])(
        L.pendulums(time_step=0.0))))


def test_distance_constraint_params():
    def run(L):
        Params = L.plant.DistanceConstraintParams
        p, A, B, jA, jB = L.pendulums()
        id = p.AddDistanceConstraint(A, [0, 0, -1], B, [0, 0.5, -1], 1.0, stiffness=1e4, damping=20.0)
        ball = p.AddBallConstraint(A, [0, 0, 0], B, [1, 0, 0])
        p.Finalize()
        c = p.CreateDefaultContext()
        default = p.GetDefaultDistanceConstraintParams()[id]
        got = p.GetDistanceConstraintParams(c, id)
        new = Params(B.index(), [1, 2, 3], A.index(), [4, 5, 6], 2.0, math.inf, 0.0)
        p.SetDistanceConstraintParams(context=c, id=id, params=new)
        fresh = p.CreateDefaultContext()
        bad = Params(B.index(), [1, 2, 3], L.tree.BodyIndex(9), [4, 5, 6], 2.0, 1.0, 0.0)
        return ([int(default.bodyA()), int(default.bodyB()), *default.p_AP(), *default.p_BQ(), default.distance(),
                 default.stiffness(), default.damping()], int(got.bodyA()), got.damping(),
                list(p.GetDistanceConstraintParams(c)) == [id], p.GetDistanceConstraintParams(c, id).distance(),
                p.GetDistanceConstraintParams(fresh, id).distance(),
                outcome(lambda: p.SetDistanceConstraintParams(c, id, bad)),
                outcome(lambda: p.GetDistanceConstraintParams(c, ball)).replace(str(ball.get_value()), "N"))
    assert agree(both(run)) == (
        [1, 2, 0, 0, -1, 0, 0.5, -1, 1.0, 1e4, 20.0], 1, 20.0, True, 2.0, 1.0,
        "RuntimeError: Index 9 provided for body B does not correspond to a rigid body in this MultibodyPlant.",
        "RuntimeError: The constraint id N does not match any distance constraint registered with this plant. ")
    empty = dc.DistanceConstraintParams()
    assert not empty.bodyA().is_valid() and empty.distance() == 0.0


def test_active_status_lives_in_the_context():
    def run(L):
        p, A, B, jA, jB = L.pendulums()
        ids = [p.AddCouplerConstraint(jA, jB, 1.0), p.AddBallConstraint(A, [0, 0, 0], B, [-1, 0, 0])]
        p.Finalize()
        c, d = p.CreateDefaultContext(), p.CreateDefaultContext()
        p.SetConstraintActiveStatus(context=c, id=ids[0], status=False)
        clone = c.Clone()
        p.SetConstraintActiveStatus(c, ids[0], True)
        return [p.GetConstraintActiveStatus(context=x, id=i) for x in (c, d, clone) for i in ids]
    assert agree(both(run)) == [True, True, True, True, False, True]


def test_ball_without_p_BQ_is_satisfied_in_the_default_configuration():
    """Finalize sets p_BQ so that Q is where P is, in the default configuration (ours: the spec; both: the
    count), as Drake does."""
    p, A, B, jA, jB = Lib("ours").pendulums()
    jA.set_default_angle(0.3)
    id = p.AddBallConstraint(A, [0.5, 0.0, 0.2], B)
    assert p.get_ball_constraint_specs(id).p_BQ is None
    p.Finalize()
    c = p.CreateDefaultContext()
    spec = p.get_ball_constraint_specs(id)
    p_WP = p.CalcPointsPositions(c, A.body_frame(), spec.p_AP, p.world_frame())
    p_WQ = p.CalcPointsPositions(c, B.body_frame(), spec.p_BQ, p.world_frame())
    np.testing.assert_allclose(p_WP, p_WQ, atol=1e-15)
    assert list(p.get_ball_constraint_specs()) == [id]
    with pytest.raises(RuntimeError, match="is not the id of a coupler constraint"):
        p.get_coupler_constraint_specs(id)


def test_specs_accept_pydrake_values():
    pytest.importorskip("pydrake")
    p, A, B, jA, jB = Lib("ours").pendulums()
    X = pd_math.RigidTransform(pd_math.RollPitchYaw(0.1, 0.2, 0.3), [1.0, 2.0, 3.0])
    id = p.AddWeldConstraint(A, X, B, pd_math.RigidTransform())
    cid = p.AddCouplerConstraint(jA, jB, 1.2, 3.4)
    spec = p.get_weld_constraint_specs(id)
    np.testing.assert_allclose(spec.X_AP.GetAsMatrix4(), X.GetAsMatrix4())
    coupler = p.get_coupler_constraint_specs(cid)
    assert (coupler.joint0_index, coupler.joint1_index, coupler.gear_ratio, coupler.offset) == \
        (jA.index(), jB.index(), 1.2, 3.4)
    assert [p.num_coupler_constraints(), p.num_distance_constraints(), p.num_ball_constraints(),
            p.num_weld_constraints()] == [1, 0, 0, 1]


# --- parsing ---------------------------------------------------------------------------------
def _urdf(extra: str = "", mimic: str = '<mimic joint="j1" multiplier="-2" offset="0.1"/>') -> str:
    link = '<link name="{0}"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" ' \
           'iyz="0"/></inertial></link>'
    return f"""<robot name="r">{link.format('a')}{link.format('b')}{link.format('c')}
      <joint name="j1" type="revolute"><parent link="world"/><child link="a"/><axis xyz="0 0 1"/></joint>
      <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="1 0 0"/>{mimic}</joint>
      <joint name="j3" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/></joint>{extra}</robot>"""


def _parse(L, text: str, file_type: str, time_step=0.0, approximation=None):
    p = L.plant.MultibodyPlant(time_step)
    if approximation:
        p.set_discrete_contact_approximation(getattr(L.plant.DiscreteContactApproximation, approximation))
    return p, outcome(lambda: L.parsing.Parser(p).AddModels(file_contents=text, file_type=file_type))


@pytest.mark.parametrize("time_step, approximation, count", [(0.0, None, 1), (0.01, "kSap", 1), (0.01, None, 1),
                                                              (0.01, "kTamsi", 0)])
def test_urdf_mimic_is_a_coupler_constraint(time_step, approximation, count, caplog):
    caplog.set_level(logging.WARNING)
    results = both(lambda L: _parse(L, _urdf(), "urdf", time_step, approximation)[0].num_constraints())
    assert agree(results) == count
    p, _ = _parse(Lib("ours"), _urdf(), "urdf", time_step, approximation)
    if count:
        (spec,) = p.get_coupler_constraint_specs().values()
        assert (p.get_joint(spec.joint0_index).name(), p.get_joint(spec.joint1_index).name(), spec.gear_ratio,
                spec.offset) == ("j2", "j1", -2.0, 0.1)
    else:
        assert "Joint 'j2' specifies a mimic element that will be ignored" in caplog.text


@pytest.mark.parametrize("mimic, error", [
    ('<mimic/>', "Joint 'j2' mimic element is missing the required 'joint' attribute."),
    ('<mimic joint="nope"/>', "Joint 'j2' mimic element specifies joint 'nope' which does not exist."),
    ('<mimic joint="j2"/>', "Joint 'j2' mimic element specifies joint 'j2'. Joints cannot mimic themselves.")])
def test_urdf_mimic_errors(mimic, error):
    for r in both(lambda L: _parse(L, _urdf(mimic=mimic), "urdf")[1]):
        assert error in r


BALL_URDF = """<drake:ball_constraint><drake:ball_constraint_body_A name="a"/>
  <drake:ball_constraint_p_AP value="0 0 1"/><drake:ball_constraint_body_B name="c"/>
  <drake:ball_constraint_p_BQ value="1 0 0"/></drake:ball_constraint>"""


def test_urdf_ball_constraint():
    assert agree(both(lambda L: _parse(L, _urdf(BALL_URDF), "urdf")[0].num_constraints())) == 2
    p, _ = _parse(Lib("ours"), _urdf(BALL_URDF), "urdf")
    (spec,) = p.get_ball_constraint_specs().values()
    assert (p.get_body(spec.body_A).name(), p.get_body(spec.body_B).name()) == ("a", "c")
    np.testing.assert_array_equal(np.r_[spec.p_AP, spec.p_BQ], [0, 0, 1, 1, 0, 0])
    for r in both(lambda L: _parse(L, _urdf(BALL_URDF.replace('name="c"', 'name="zz"')), "urdf")[1]):
        assert "Body: zz specified for <drake:ball_constraint_body_B> does not exist in the model." in r


SDF = """<sdf version="1.9"><model name="m">
  <link name="a"/><link name="b"/>
  <joint name="j1" type="revolute"><parent>world</parent><child>a</child><axis><xyz>0 0 1</xyz></axis></joint>
  <joint name="j2" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz></axis>
    {mimic}</joint>
  <drake:ball_constraint><drake:ball_constraint_body_A>a</drake:ball_constraint_body_A>
    <drake:ball_constraint_p_AP>0 0 1</drake:ball_constraint_p_AP>
    <drake:ball_constraint_body_B>b</drake:ball_constraint_body_B>
    <drake:ball_constraint_p_BQ>1 0 0</drake:ball_constraint_p_BQ></drake:ball_constraint>
</model></sdf>"""


def test_sdf_mimic_and_ball_constraint():
    text = SDF.format(mimic='<drake:mimic joint="j1" multiplier="1.5" offset="0.2"/>')
    assert agree(both(lambda L: _parse(L, text, "sdf", 0.01)[0].num_constraints())) == 2
    p, _ = _parse(Lib("ours"), text, "sdf", 0.01)
    (coupler,) = p.get_coupler_constraint_specs().values()
    assert (coupler.gear_ratio, coupler.offset, p.get_joint(coupler.joint0_index).name()) == (1.5, 0.2, "j2")
    missing = SDF.format(mimic='<drake:mimic joint="j1" multiplier="1.5"/>')
    for r in both(lambda L: _parse(L, missing, "sdf", 0.01)[1]):
        assert "Joint 'j2' drake:mimic element is missing the required 'offset' attribute." in r


def test_panda_gripper_mimic_matches_pydrake(robot_data):
    """example-robot-data's Panda: panda_finger_joint2 mimics panda_finger_joint1 (multiplier 1)."""
    path = str(robot_data / "robots" / "panda_description" / "urdf" / "panda.urdf")

    def run(L):
        p = L.plant.MultibodyPlant(0.001)
        parser = L.parsing.Parser(p)
        parser.package_map().PopulateFromFolder(str(robot_data / "robots"))
        parser.AddModels(path)
        return p.num_constraints()
    assert agree(both(run)) == 1
    p = dc.MultibodyPlant(0.001)
    parser = dc.Parser(p)
    parser.package_map().PopulateFromFolder(str(robot_data / "robots"))
    parser.AddModels(path)
    (spec,) = p.get_coupler_constraint_specs().values()
    assert (p.get_joint(spec.joint0_index).name(), p.get_joint(spec.joint1_index).name(), spec.gear_ratio,
            spec.offset) == ("panda_finger_joint2", "panda_finger_joint1", 1.0, 0.0)
