"""pydrake's API beside dynamics_cy's, part 2: the scalar-template names (X_[float]), pickles Drake wrote,
and the small methods a pydrake user calls. Each test checks dynamics_cy, then pydrake when installed."""
import io
import pickle

import numpy as np
import pytest

import dynamics_cy as dc

try:
    import pydrake.multibody.plant as pd_plant
    import pydrake.multibody.tree as pd_tree
except ImportError:
    pd_plant = pd_tree = None
needs_pydrake = pytest.mark.skipif(pd_plant is None, reason="pydrake is not installed")

FAMILIES = ["MultibodyPlant_", "MultibodyForces_", "ContactResults_", "PointPairContactInfo_", "CoulombFriction_",
            "RigidBody_", "Body_", "Frame_", "RigidBodyFrame_", "FixedOffsetFrame_", "JointActuator_", "Joint_",
            "RevoluteJoint_", "PrismaticJoint_", "WeldJoint_", "BallRpyJoint_", "PlanarJoint_",
            "QuaternionFloatingJoint_", "RotationalInertia_", "UnitInertia_", "SpatialInertia_",
            "UniformGravityFieldElement_"]


def pydrake_name(name: str):
    for m in (pd_plant, pd_tree):
        if hasattr(m, name):
            return getattr(m, name)
    raise AttributeError(name)


@pytest.mark.parametrize("family", FAMILIES)
def test_template_float_instantiation_is_the_class(family):
    t = getattr(dc, family)
    cls = getattr(dc, "RigidBody" if family == "Body_" else family[:-1])
    assert t[float] is cls and t[None] is cls and t[np.float64] is cls and t[(float,)] is cls
    assert t.get_instantiation(float) == (cls, (float,)) and t.param_list == [(float,)]
    assert t.is_instantiation(cls) and not t.is_instantiation(object)
    assert family in dc.__all__
    if pd_plant is not None:                       # the same family exists in pydrake, float is its class
        theirs = pydrake_name(family)
        assert theirs[float].__name__ == cls.__name__ or family == "Body_"


@pytest.mark.parametrize("scalar", ["AutoDiffXd", "Expression", int])
def test_template_other_scalars_raise_type_error(scalar):
    T = scalar if isinstance(scalar, type) else type(scalar, (), {})
    with pytest.raises(TypeError, match=r"MultibodyPlant_\[.*\]: dynamics_cy computes in double only"):
        dc.MultibodyPlant_[T]


def test_template_call_constructs_the_float_class():
    f = dc.CoulombFriction_(0.5, 0.25)
    assert isinstance(f, dc.CoulombFriction_[float]) and f.static_friction() == 0.5
    with pytest.raises(TypeError):
        dc.CoulombFriction_()


@needs_pydrake
def test_template_other_scalars_with_pydrake_types():
    from pydrake.autodiffutils import AutoDiffXd
    from pydrake.symbolic import Expression
    for T in (AutoDiffXd, Expression):
        with pytest.raises(TypeError, match="double only"):
            dc.SpatialInertia_[T]
        pydrake_name("SpatialInertia_")[T]          # pydrake has them: ours says to use pydrake's


class _AsDynamicsCy(pickle.Unpickler):
    """Unpickles data Drake wrote with pydrake's multibody modules resolved to dynamics_cy."""

    def find_class(self, module, name):
        if module.startswith("pydrake.multibody."):
            return getattr(dc, name)
        return super().find_class(module, name)


def drake_style_pickle(obj, module: str, name: str) -> bytes:
    """obj pickled (protocol 2: a text GLOBAL opcode) as if its class were module.name."""
    data = pickle.dumps(obj, protocol=2)
    cls = type(obj)
    old = f"c{cls.__module__}\n{cls.__qualname__}\n".encode()
    assert old in data
    return data.replace(old, f"c{module}\n{name}\n".encode())


@pytest.mark.parametrize("name", ["CoulombFriction_[float]", "CoulombFriction_𝓣float𝓤", "CoulombFriction"])
def test_coulomb_friction_pickled_by_drake_loads(name):
    data = drake_style_pickle(dc.CoulombFriction(0.5, 0.25), "pydrake.multibody.plant", name)
    obj = _AsDynamicsCy(io.BytesIO(data)).load()
    assert isinstance(obj, dc.CoulombFriction_[float])
    assert (obj.static_friction(), obj.dynamic_friction()) == (0.5, 0.25)
    assert getattr(dc, "CoulombFriction_[float]") is dc.CoulombFriction
    with pytest.raises(AttributeError):
        getattr(dc, "CoulombFriction_[AutoDiffXd]")


@pytest.mark.parametrize("name", ["RotationalInertia_[float]", "RotationalInertia_𝓣float𝓤"])
def test_rotational_inertia_pickled_by_drake_loads(name):
    I = dc.RotationalInertia(0.13, 0.1, 0.05, -0.02, -0.03, -0.06)
    obj = _AsDynamicsCy(io.BytesIO(drake_style_pickle(I, "pydrake.multibody.tree", name))).load()
    assert isinstance(obj, dc.RotationalInertia)
    np.testing.assert_array_equal(obj.get_moments(), [0.13, 0.1, 0.05])
    np.testing.assert_array_equal(obj.get_products(), [-0.02, -0.03, -0.06])


@needs_pydrake
@pytest.mark.parametrize("make", [
    lambda m: m.CoulombFriction(0.5, 0.25),
    lambda m: m.RotationalInertia(0.13, 0.1, 0.05, -0.02, -0.03, -0.06),
    lambda m: m.UnitInertia(1.0, 2.0, 2.5),
    lambda m: m.SpatialInertia.SolidBoxWithMass(2.0, 0.1, 0.2, 0.3),
])
def test_pydrake_pickles_load_as_ours_and_ours_round_trip(make):
    import types
    theirs = make(types.SimpleNamespace(**{n: pydrake_name(n) for n in
                                           ("CoulombFriction", "RotationalInertia", "UnitInertia", "SpatialInertia")}))
    ours = _AsDynamicsCy(io.BytesIO(pickle.dumps(theirs))).load()
    assert type(ours).__name__ == type(theirs).__name__ and type(ours).__module__.startswith("dynamics_cy")
    assert ours.__getstate__().__repr__() == make(dc).__getstate__().__repr__()
    again = pickle.loads(pickle.dumps(ours))
    assert repr(again) == repr(ours)


def both(build):
    """build(module namespace) for dynamics_cy and, if installed, pydrake: {name: result}."""
    out = {"dynamics_cy": build(dc)}
    if pd_plant is not None:
        import types

        import pydrake.geometry
        import pydrake.math
        import pydrake.multibody.math
        mods = (pd_plant, pd_tree, pydrake.math, pydrake.geometry, pydrake.multibody.math)
        names = {n for m in mods for n in dir(m) if not n.startswith("_")}
        out["pydrake"] = build(types.SimpleNamespace(**{n: next(getattr(m, n) for m in mods if hasattr(m, n))
                                                        for n in names}))
    return out


def outcome(call):
    try:
        return call()
    except Exception as e:          # noqa: BLE001 (the class of the error is what is compared)
        return type(e).__name__


def same_on_both(build):
    results = both(build)
    if "pydrake" in results:
        assert results["dynamics_cy"] == results["pydrake"]
    return results["dynamics_cy"]


def test_contact_settings_are_drakes():
    def build(m):
        out = []
        for dt in (0.0, 0.1):
            p = m.MultibodyPlant(dt)
            out += [str(p.get_contact_model()), str(p.get_discrete_contact_approximation()),
                    str(p.get_discrete_contact_solver()), p.get_sap_near_rigid_threshold(),
                    str(p.get_contact_surface_representation()), p.get_adjacent_bodies_collision_filters(),
                    str(m.MultibodyPlant.GetDefaultContactSurfaceRepresentation(dt))]
        p = m.MultibodyPlant(0.1)
        for model in (m.ContactModel.kHydroelastic, m.ContactModel.kPoint, m.ContactModel.kHydroelasticsOnly,
                      m.ContactModel.kPointContactOnly, m.ContactModel.kHydroelasticWithFallback):
            p.set_contact_model(model)
            out.append((str(p.get_contact_model()), int(p.get_contact_model())))
        for a in ("kTamsi", "kSap", "kSimilar", "kLagged"):
            p.set_discrete_contact_approximation(getattr(m.DiscreteContactApproximation, a))
            out.append((str(p.get_discrete_contact_approximation()), str(p.get_discrete_contact_solver())))
        p.set_sap_near_rigid_threshold(near_rigid_threshold=0.03)
        p.set_adjacent_bodies_collision_filters(value=False)
        p.set_contact_surface_representation(m.HydroelasticContactRepresentation.kTriangle)
        out += [p.get_sap_near_rigid_threshold(), p.get_adjacent_bodies_collision_filters(),
                str(p.get_contact_surface_representation())]
        p.Finalize()
        out += [outcome(lambda: p.set_contact_model(m.ContactModel.kPoint)),
                outcome(lambda: p.set_discrete_contact_approximation(m.DiscreteContactApproximation.kSap)),
                outcome(lambda: p.set_adjacent_bodies_collision_filters(True)),
                outcome(lambda: p.set_sap_near_rigid_threshold(0.1)),
                outcome(lambda: p.set_contact_surface_representation(m.HydroelasticContactRepresentation.kPolygon))]
        return out
    same_on_both(build)
    # Drake aborts (a failed C++ condition) where ours raises:
    with pytest.raises(RuntimeError, match="discrete"):
        dc.MultibodyPlant(0.0).set_discrete_contact_approximation(dc.DiscreteContactApproximation.kSap)
    with pytest.raises(ValueError, match=">= 0"):
        dc.MultibodyPlant(0.1).set_sap_near_rigid_threshold(-1.0)


def test_gravity_field_is_force_element_zero_and_unique():
    def build(m):
        p = m.MultibodyPlant(0.0)
        g = p.get_force_element(m.ForceElementIndex(0))
        out = [p.num_force_elements(), repr(g), g is p.gravity_field(), int(g.index()), int(g.model_instance()),
               outcome(lambda: p.AddForceElement(m.UniformGravityFieldElement())),
               isinstance(m.UniformGravityFieldElement.kDefaultStrength, float),
               p.is_gravity_enabled(m.default_model_instance()), outcome(lambda: p.is_gravity_enabled(
                   m.ModelInstanceIndex(5)))]
        p.Finalize()
        out.append(outcome(lambda: p.AddForceElement(m.UniformGravityFieldElement())))
        return out
    same_on_both(build)
    p = dc.MultibodyPlant(0.0)
    p.set_gravity_enabled(dc.default_model_instance(), True)
    with pytest.raises(NotImplementedError, match="not supported"):
        p.set_gravity_enabled(dc.default_model_instance(), False)


def test_floating_base_queries_and_default_pose():
    def build(m):
        p = m.MultibodyPlant(0.01)
        mi = p.AddModelInstance("robot")
        body = p.AddRigidBody("body", mi, m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
        other = p.AddRigidBody("other", mi, m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
        p.AddJoint(m.RevoluteJoint("j", body.body_frame(), other.body_frame(), [0.0, 0.0, 1.0]))
        out = [outcome(lambda: p.HasUniqueFloatingBaseBody(mi)),
               outcome(lambda: p.GetUniqueFloatingBaseBodyOrThrow(mi))]
        p.SetDefaultFloatingBaseBodyPose(body=body, X_WB=m.RigidTransform([1.0, 2.0, 3.0]))
        out.append(p.GetDefaultFloatingBaseBodyPose(body=body).GetAsMatrix4().tolist())
        p.Finalize()
        out += [p.HasUniqueFloatingBaseBody(model_instance=mi), p.GetUniqueFloatingBaseBodyOrThrow(mi).name(),
                p.HasUniqueFloatingBaseBody(m.world_model_instance()),
                outcome(lambda: p.GetUniqueFloatingBaseBodyOrThrow(m.world_model_instance())),
                p.GetDefaultFloatingBaseBodyPose(p.world_body()).GetAsMatrix4().tolist()]
        p.SetDefaultFloatingBaseBodyPose(body, m.RigidTransform([1.0, 2.0, 4.0]))
        out += [p.GetDefaultFloatingBaseBodyPose(body).GetAsMatrix4().tolist(),
                p.GetPositions(p.CreateDefaultContext()).tolist()]
        return out
    assert same_on_both(build)[-1] == [1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 4.0, 0.0]


@pytest.mark.parametrize("old, new, args", [
    ("HasUniqueFreeBaseBody", "HasUniqueFloatingBaseBody", "mi"),
    ("GetUniqueFreeBaseBodyOrThrow", "GetUniqueFloatingBaseBodyOrThrow", "mi"),
    ("SetDefaultFreeBodyPose", "SetDefaultFloatingBaseBodyPose", "body, X"),
    ("GetDefaultFreeBodyPose", "GetDefaultFloatingBaseBodyPose", "body")])
def test_free_base_names_are_deprecated_as_in_drake(old, new, args):
    p = dc.MultibodyPlant(0.0)
    body = p.AddRigidBody("body", dc.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
    p.Finalize()
    env = {"mi": dc.default_model_instance(), "body": body, "X": dc.RigidTransform([0.0, 0.0, 1.0])}
    with pytest.warns(DeprecationWarning, match=f"Use {new}"):
        old_result = eval(f"p.{old}({args})", {"p": p, **env})      # noqa: S307
    assert repr(old_result) == repr(eval(f"p.{new}({args})", {"p": p, **env}))   # noqa: S307


def test_has_joint_and_actuator_and_world_frame_index():
    def build(m):
        p = m.MultibodyPlant(0.0)
        body = p.AddRigidBody("body", m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
        j = p.AddJoint(m.PrismaticJoint("joint", p.world_frame(), body.body_frame(), [0.0, 0.0, 1.0]))
        a = p.AddJointActuator("a", j, 1.0)
        return [p.has_joint(joint_index=j.index()), p.has_joint(m.JointIndex(3)),
                p.has_joint_actuator(actuator_index=a.index()), p.has_joint_actuator(m.JointActuatorIndex(1)),
                repr(m.world_frame_index()), m.world_frame_index() == m.FrameIndex(0)]
    assert same_on_both(build) == [True, False, True, False, "FrameIndex(0)", True]


def test_rigid_body_and_fixed_offset_frame_keyword_forms():
    def build(m):
        body = m.RigidBody(body_name="b", M_BBo_B=m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
        p = m.MultibodyPlant(0.0)
        b = p.AddRigidBody("b", m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
        X = m.RigidTransform(m.RollPitchYaw(0.1, 0.2, 0.3), [0.1, 0.2, 0.3])
        F = p.AddFrame(m.FixedOffsetFrame(name="F", bodyB=b, X_BF=X))
        G = p.AddFrame(m.FixedOffsetFrame(name="G", P=F, X_PF=X, model_instance=None))
        p.AddJoint(m.RevoluteJoint("j", p.world_frame(), b.body_frame(), [0.0, 1.0, 0.0]))
        p.Finalize()
        ctx = p.CreateDefaultContext()
        p.SetPositions(ctx, [0.7])
        p.SetVelocities(ctx, [1.3])
        R = m.RotationMatrix(m.RollPitchYaw(-0.2, 0.1, 0.4))
        return [body.name(), F.body().name(), int(G.model_instance()),
                G.CalcRotationMatrixInBodyFrame(context=ctx).matrix().round(12).tolist(),
                G.CalcPoseInBodyFrame(ctx).GetAsMatrix4().round(12).tolist(),
                G.GetFixedOffsetPoseInBody(X_FQ=X).GetAsMatrix4().round(12).tolist(),
                G.CalcOffsetPoseInBody(ctx, X).GetAsMatrix4().round(12).tolist(),
                G.GetFixedRotationMatrixInBody(R_FQ=R).matrix().round(12).tolist(),
                G.CalcOffsetRotationMatrixInBody(ctx, R).matrix().round(12).tolist(),
                G.CalcRotationMatrix(ctx, frame_M=F).matrix().round(12).tolist(),
                G.EvalAngularVelocityInWorld(ctx).round(12).tolist(),
                G.CalcAngularVelocity(ctx, measured_in_frame=p.world_frame(), expressed_in_frame=G).round(12).tolist()]
    same_on_both(build)
    with pytest.raises(TypeError):
        dc.RigidBody()


def full(x):
    M = x.CopyToFullMatrix6() if hasattr(x, "CopyToFullMatrix6") else x.CopyToFullMatrix3()
    return np.asarray(M).round(12).tolist()


def test_rotational_and_unit_inertia_forms_and_operators():
    def build(m):
        RI, UI = m.RotationalInertia, m.UnitInertia
        I = RI(Ixx=1.0, Iyy=2.0, Izz=2.5, Ixy=0.1, Ixz=0.2, Iyz=0.3)
        p = [0.1, 0.2, 0.3]
        nan = RI(1.0, 1.0, 1.0)
        nan.SetToNaN()
        zero = RI(Ixx=1.0, Iyy=1.0, Izz=1.0)
        zero.SetZero()
        out = [full(RI(Ixx=1.0, Iyy=2.0, Izz=3.0)), full(I), full(RI(mass=2.0, p_PQ_E=p)),
               full(RI.TriaxiallySymmetric(I_triaxial=2.0)), full(UI.TriaxiallySymmetric(2.0)),
               full(UI(I=RI(1.0, 2.0, 3.0))), full(UI(Ixx=1.0, Iyy=2.0, Izz=2.5)),
               I.rows(), I.cols(), I[0, 1], I[2, 2], I.Trace(), I.CalcMaximumPossibleMomentOfInertia(),
               I.IsNearlyEqualTo(other=I, precision=0.0), I.IsNearlyEqualTo(I * 1.001, 1e-4),
               I.IsNearlyEqualTo(I * 1.001, 1e-2), nan.IsNaN(), I.IsNaN(), zero.IsZero(), I.IsZero(),
               I.CalcPrincipalMomentsOfInertia().round(12).tolist(),
               I.CalcPrincipalMomentsAndAxesOfInertia()[0].round(12).tolist(),
               full(I.ShiftFromCenterOfMass(mass=1.0, p_BcmQ_E=p)), full(I.ShiftToCenterOfMass(mass=1.0, p_QBcm_E=p)),
               full(I.ShiftToThenAwayFromCenterOfMass(mass=1.0, p_PBcm_E=[0.1, 0, 0], p_QBcm_E=[0, 0.2, 0])),
               full(I + I), full(I - I), full(I * 2.0), full(2.0 * I), full(I / 2.0), (I * p).round(12).tolist(),
               type(I * 2.0).__name__, type(UI(1.0, 1.0, 1.0) * 2.0).__name__,
               RI(-1.0, 2.0, 3.0).CouldBePhysicallyValid(),
               full(UI(1.0, 2.0, 2.5).ShiftFromCenterOfMass(p_BcmQ_E=p)),
               full(UI(1.0, 2.0, 2.5).ShiftToCenterOfMass(p_QBcm_E=p)),
               full(I.ReExpress(R_AE=m.RotationMatrix(m.RollPitchYaw(0.1, 0.2, 0.3))))]
        J = RI(1.0, 2.0, 2.5)
        J += I
        J -= I
        J *= 2.0
        J /= 4.0
        out += [full(J), type(J).__name__]
        for bad in (lambda: I[0], lambda: I[0.0, 0.0], lambda: I[0, 0, 0]):
            out.append(outcome(bad) not in ("", None))
        return out
    same_on_both(build)
    assert not dc.RotationalInertia().CopyToFullMatrix3().any()       # zero here; NaN in Drake
    I = dc.RotationalInertia(1.0, 2.0, 2.5)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        I[0]
    with pytest.raises(TypeError, match="Unable to cast"):
        I[0.0, 0.0]
    with pytest.raises(IndexError, match=r"Expected \[i,j\]"):
        I[0, 0, 0]
    moments, R = I.CalcPrincipalMomentsAndAxesOfInertia()       # axes: a rotation diagonalising I
    np.testing.assert_allclose(R.matrix().T @ I.CopyToFullMatrix3() @ R.matrix(), np.diag(moments), atol=1e-12)


def test_unit_inertia_shapes_are_drakes():
    def build(m):
        UI, z = m.UnitInertia, [0.0, 0.0, 1.0]
        u = np.array([1.0, 2.0, 2.0]) / 3.0
        return [full(UI.PointMass(p_FQ=[1, 2, 3])), full(UI.SolidEllipsoid(a=1, b=2, c=3)),
                full(UI.SolidSphere(r=1.5)), full(UI.HollowSphere(r=1.5)), full(UI.SolidBox(Lx=1, Ly=2, Lz=3)),
                full(UI.SolidCube(L=2)), full(UI.SolidCylinder(radius=1.5, length=2, unit_vector=u)),
                full(UI.SolidCapsule(radius=1, length=2, unit_vector=z)),
                full(UI.SolidCylinderAboutEnd(radius=0.1, length=0.4, unit_vector=u)),
                full(UI.AxiallySymmetric(moment_parallel=1, moment_perpendicular=2, unit_vector=u)),
                full(UI.StraightLine(moment_perpendicular=1.5, unit_vector=z)),
                full(UI.ThinRod(length=1.5, unit_vector=u)),
                outcome(lambda: UI.SolidCylinder(radius=1, length=2, unit_vector=[0, 0, 2]))]
    out = both(build)
    ours = out["dynamics_cy"]
    assert ours[-1] == "ValueError"                # Drake raises RuntimeError: our invalid arguments are ValueError
    if "pydrake" in out:
        assert out["pydrake"][-1] == "RuntimeError"
        for a, b in zip(ours[:-1], out["pydrake"][:-1]):
            np.testing.assert_allclose(a, b, atol=1e-12)


def test_spatial_inertia_factories_and_api_are_drakes():
    def build(m):
        S, z = m.SpatialInertia, [0.0, 0.0, 1.0]
        u = np.array([2.0, 1.0, 2.0]) / 3.0
        made = [S.SolidBoxWithDensity(density=1000, lx=0.1, ly=0.2, lz=0.3),
                S.SolidBoxWithMass(mass=0.123, lx=0.1, ly=0.2, lz=0.3),
                S.SolidCubeWithDensity(density=1000, length=0.4),
                S.SolidCapsuleWithDensity(density=1000, radius=0.1, length=0.4, unit_vector=z),
                S.SolidCapsuleWithMass(mass=0.123, radius=0.1, length=0.4, unit_vector=u),
                S.SolidCylinderWithDensity(density=1000, radius=0.1, length=0.4, unit_vector=u),
                S.SolidCylinderWithMass(mass=0.123, radius=0.1, length=0.4, unit_vector=z),
                S.SolidCylinderWithDensityAboutEnd(density=1000, radius=0.1, length=0.4, unit_vector=u),
                S.SolidCylinderWithMassAboutEnd(mass=0.123, radius=0.1, length=0.4, unit_vector=z),
                S.ThinRodWithMass(mass=2, length=0.3, unit_vector=u),
                S.ThinRodWithMassAboutEnd(mass=2, length=0.3, unit_vector=u),
                S.SolidEllipsoidWithDensity(density=1000, a=0.2, b=0.3, c=0.4),
                S.SolidEllipsoidWithMass(mass=0.123, a=0.2, b=0.3, c=0.4),
                S.SolidSphereWithDensity(density=1000, radius=0.5), S.SolidSphereWithMass(mass=2, radius=0.5),
                S.HollowSphereWithDensity(area_density=2, radius=0.5), S.HollowSphereWithMass(mass=2, radius=0.5)]
        M = S.MakeFromCentralInertia(mass=1.3, p_PScm_E=[0.1, -0.2, 0.3],
                                     I_SScm_E=m.RotationalInertia(Ixx=2.0, Iyy=2.3, Izz=2.4))
        abc, X = M.CalcPrincipalSemiDiametersAndPoseForSolidEllipsoid()
        A = M * m.SpatialAcceleration([1.0, 2, 3, 4, 5, 6])
        L = M * m.SpatialVelocity([1.0, 2, 3, 4, 5, 6])
        N = M
        N += M
        nan = S.SolidBoxWithMass(1.0, 1.0, 1.0, 1.0)
        nan.SetNaN()
        return [full(x) for x in made] + [
            full(M), abc.round(12).tolist(), X.GetAsMatrix4().round(12).tolist(),
            type(A).__name__, A.get_coeffs().round(12).tolist(), type(L).__name__, L.get_coeffs().round(12).tolist(),
            full(N), S.Zero().IsZero(), M.IsZero(), S.NaN().IsNaN(), S.NaN().IsZero(), S.Zero().IsNaN(),
            nan.IsNaN(), repr(S.Zero()), np.isnan(S.NaN().get_mass()),
            outcome(lambda: S.SolidBoxWithDensity(-1, 1, 1, 1)) != "ok"]
    out = both(build)
    if "pydrake" in out:
        for a, b in zip(out["dynamics_cy"], out["pydrake"]):
            if isinstance(a, list):
                np.testing.assert_allclose(a, b, atol=1e-12)
            else:
                assert a == b
    with pytest.raises(ValueError, match="density is not positive"):
        dc.SpatialInertia.SolidBoxWithDensity(-1.0, 1.0, 1.0, 1.0)


def test_scoped_name_is_drakes():
    def build(m):
        S = m.ScopedName
        d = S.Parse(scoped_name="foo::bar")
        out = [repr(S()), repr(S(namespace_name="foo", element_name="bar")), repr(S("a::b", "c")), repr(S("", "c")),
               repr(S.Make(namespace_name="foo", element_name="bar")), repr(S.Make("a::b", "c")),
               S.Make("a", "b::c"), S.Make("a", ""), S.Make("a::", "c"),
               repr(S.Join(name1="foo", name2="bar")), repr(S.Join("a::b", "c::d")), repr(S.Join("", "c")),
               repr(S.Join("a", "")), repr(S.Parse("a::b::c")), repr(S.Parse("c")), repr(S.Parse("::c")),
               repr(S.Parse("a::")), d.get_namespace(), d.get_element(), d.get_full(), d.to_string(),
               S().get_full(), S("", "c").get_full(),
               outcome(lambda: S("a", "b::c")), outcome(lambda: S("::a", "b")), outcome(lambda: d.set_element("a::b")),
               outcome(lambda: d.set_namespace("::x"))]
        d.set_namespace("robot1")
        d.set_element("torso")
        out += [str(d), repr(d), repr(copy.copy(d))]
        return out
    import copy
    same_on_both(build)
    with pytest.raises(RuntimeError, match="mis-placed delimiters"):
        dc.ScopedName("a", "b::c")


def test_calc_spatial_inertia_of_shapes_and_meshes_is_drakes(tmp_path):
    # a closed, outward-wound tetrahedron and a unit cube (as quads) in .obj files
    tet = tmp_path / "tet.obj"
    tet.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    cube = tmp_path / "cube.obj"
    cube.write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
                    "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n")

    def build(m):
        shapes = [m.Box(1, 2, 3), m.Sphere(0.5), m.Cylinder(0.1, 0.4), m.Capsule(0.1, 0.4),
                  m.Mesh(str(tet), 2.0), m.Mesh(str(cube), 0.5)]
        if hasattr(m, "Ellipsoid"):                    # pydrake's shape; ours takes pydrake's too (below)
            shapes.append(m.Ellipsoid(0.1, 0.2, 0.3))
        out = [full(m.CalcSpatialInertia(shape=s, density=2.5)) for s in shapes]
        out.append(outcome(lambda: m.CalcSpatialInertia(m.HalfSpace(), 1.0)))
        return out
    out = both(build)
    assert out["dynamics_cy"][-1] == "ValueError"
    np.testing.assert_allclose(out["dynamics_cy"][-2][3][3], 2.5 * 0.125, rtol=1e-12)   # the cube's mass
    if "pydrake" in out:
        import pydrake.geometry as pg
        ours, theirs = out["dynamics_cy"], out["pydrake"]
        for a, b in zip(ours[:-1], theirs[:-2]):
            np.testing.assert_allclose(a, b, atol=1e-12)
        assert theirs[-1] == "ValueError"
        np.testing.assert_allclose(full(dc.CalcSpatialInertia(pg.Ellipsoid(0.1, 0.2, 0.3), 2.5)), theirs[-2],
                                   atol=1e-12)
        np.testing.assert_allclose(full(dc.CalcSpatialInertia(pg.Box(1, 2, 3), density=2.5)), theirs[0], atol=1e-12)
        mesh = pg.TriangleSurfaceMesh(triangles=(pg.SurfaceTriangle(v0=0, v1=1, v2=2),),
                                      vertices=((0, 0, 1), (1, 0, 0), (0, 1, 0)))
        np.testing.assert_allclose(full(dc.CalcSpatialInertia(mesh=mesh, density=2.5)),
                                   full(pd_tree.CalcSpatialInertia(mesh=mesh, density=2.5)), atol=1e-12)


def test_contact_results_plant_and_selection():
    def build(m):
        r = m.ContactResults()
        return [r.plant() is None, r.num_point_pair_contacts(), r.num_hydroelastic_contacts(),
                r.num_deformable_contacts(), r.SelectHydroelastic(selector=lambda _: True).num_point_pair_contacts()]
    assert same_on_both(build) == [True, 0, 0, 0, 0]
    info = dc.PointPairContactInfo(dc.BodyIndex(0), dc.BodyIndex(1), [0, 0, 1.0], [0, 0, 0], 0.0, 0.0, None)
    plant = dc.MultibodyPlant(0.0)
    r = dc.ContactResults([info], plant)
    selected = r.SelectHydroelastic(lambda _: False)
    assert r.plant() is plant and selected.plant() is plant and selected.point_pair_contact_info(0) is info


def test_set_default_positions_per_model_instance():
    def build(m):
        p = m.MultibodyPlant(0.0)
        M = m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1)
        a, b = p.AddModelInstance("a"), p.AddModelInstance("b")
        for mi in (a, b):
            body = p.AddRigidBody("body", mi, M)
            p.AddJoint(m.RevoluteJoint("j", p.world_frame(), body.body_frame(), [0.0, 0.0, 1.0]))
        out = [outcome(lambda: p.SetDefaultPositions([0.1, 0.2]))]
        p.Finalize()
        p.SetDefaultPositions(model_instance=b, q_instance=[0.7])
        out.append(p.GetDefaultPositions().tolist())
        p.SetDefaultPositions(q=[0.3, 0.4])
        p.SetDefaultPositions(a, [0.5])
        out += [p.GetDefaultPositions().tolist(), p.GetPositions(p.CreateDefaultContext()).tolist()]
        return out
    assert same_on_both(build)[1:] == [[0.0, 0.7], [0.5, 0.4], [0.5, 0.4]]
    p = dc.MultibodyPlant(0.0)
    body = p.AddRigidBody("body", dc.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1))
    p.AddJoint(dc.RevoluteJoint("j", p.world_frame(), body.body_frame(), [0.0, 0.0, 1.0]))
    p.Finalize()
    with pytest.raises(ValueError, match="expected 1"):              # Drake aborts (a failed condition)
        p.SetDefaultPositions(dc.default_model_instance(), [0.5, 0.6])
    with pytest.raises(ValueError, match="finite"):
        p.SetDefaultPositions([np.nan])


def test_remove_joint_and_actuator_as_drake():
    def build(m):
        p = m.MultibodyPlant(0.0)
        M = m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.1, 0.1)
        b, c = p.AddRigidBody("b", M), p.AddRigidBody("c", M)
        j = p.AddJoint(m.PrismaticJoint("j", p.world_frame(), b.body_frame(), [0.0, 0.0, 1.0]))
        k = p.AddJoint(m.RevoluteJoint("k", b.body_frame(), c.body_frame(), [0.0, 0.0, 1.0]))
        a, a2 = p.AddJointActuator("a", j, 1.0), p.AddJointActuator("a2", k, 1.0)
        out = [outcome(lambda: p.RemoveJoint(j))]
        p.RemoveJointActuator(actuator=a)
        out += [p.num_actuators(), p.GetJointActuatorIndices(), p.has_joint_actuator(actuator_index=a.index()),
                outcome(lambda: p.get_joint_actuator(m.JointActuatorIndex(0)))]
        p.RemoveJoint(joint=j)
        out += [p.num_joints(), p.GetJointIndices(), p.HasJointNamed("j"), p.has_joint(j.index()),
                outcome(lambda: p.get_joint(m.JointIndex(0))), outcome(lambda: p.GetJointByName("j")),
                outcome(lambda: p.RemoveJoint(j))]
        j2 = p.AddJoint(m.PrismaticJoint("j", p.world_frame(), b.body_frame(), [0.0, 1.0, 0.0]))
        p.Finalize()
        out += [int(j2.index()), p.num_joints(), p.GetJointIndices(), p.num_positions(), a2.input_start(),
                p.num_actuators(), p.MakeActuationMatrix().tolist(), outcome(lambda: p.RemoveJointActuator(a2)),
                [p.get_joint(i).name() for i in p.GetJointIndices()]]
        return out
    out = same_on_both(build)
    assert out[5:7] == [1, [dc.JointIndex(1)]] and out[-1] == ["k", "j"]


def test_removing_a_joint_leaves_a_free_body_as_drake():
    def build(m):
        p = m.MultibodyPlant(0.0)
        mi = p.AddModelInstance("instance")
        body = p.AddRigidBody(name="body", model_instance=mi)
        joint = p.AddJoint(m.PrismaticJoint("joint", p.world_frame(), body.body_frame(), [0, 0, 1]))
        p.RemoveJoint(joint=joint)
        p.Finalize()
        return [p.GetJointIndices(), p.get_joint(m.JointIndex(1)).type_name(), p.num_positions()]
    assert same_on_both(build) == [[dc.JointIndex(1)], "quaternion_floating", 7]


def test_body_context_methods_are_drakes():
    def build(m):
        p = m.MultibodyPlant(0.0)
        b = p.AddRigidBody("b", m.SpatialInertia(2.0, [0.1, -0.2, 0.3], m.UnitInertia(0.5, 0.6, 0.7)))
        c = p.AddRigidBody("c", m.SpatialInertia.SolidBoxWithMass(1.0, 0.1, 0.2, 0.3))
        p.AddJoint(m.RevoluteJoint("j", b.body_frame(), c.body_frame(), [0.0, 1.0, 0.0], damping=0.3))
        p.Finalize()
        ctx = p.CreateDefaultContext()
        p.SetPositions(ctx, [0.9, 0.1, 0.2, np.sqrt(1 - 0.86), 0.5, 0.6, 0.7, 0.4])
        p.SetVelocities(ctx, [0.1, -0.2, 0.3, 1.0, 2.0, 3.0, -0.7])
        out = [b.get_mass(context=ctx), b.CalcCenterOfMassInBodyFrame(ctx).tolist(),
               full(b.CalcSpatialInertiaInBodyFrame(ctx)),
               [b.floating_position_suffix(i) for i in range(7)], [b.floating_velocity_suffix(i) for i in range(6)]]
        for body in (b, c):
            out += [body.CalcCenterOfMassTranslationalVelocityInWorld(context=ctx).round(10).tolist(),
                    body.EvalSpatialAccelerationInWorld(ctx).get_coeffs().round(9).tolist(),
                    body.CalcCenterOfMassTranslationalAccelerationInWorld(ctx).round(9).tolist()]
        return out
    same_on_both(build)
