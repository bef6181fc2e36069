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
