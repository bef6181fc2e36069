"""Drake's scalar-template names (``MultibodyPlant_``, ``RigidBody_``, ``SpatialInertia_``, ...).

pydrake binds each multibody class once per scalar type T (float, AutoDiffXd, Expression) and names
the family ``X_``; ``X_[float]`` is ``X``. dynamics_cy computes in double only, so here ``X_[float]``
(or ``X_[None]``, the default, or ``X_[np.float64]``) is our ``X`` and every other scalar raises a
``TypeError`` saying so. One helper, ``TemplateClass``, serves every family.

Drake's pickles name the instantiation (``CoulombFriction_[float]`` before Drake 1.13,
``CoulombFriction_𝓣float𝓤`` since); ``resolve_instantiation_name`` maps both to our class, and
dynamics_cy's module ``__getattr__`` uses it, so such pickles load once their module is ours.
"""
from __future__ import annotations

import re

import numpy as np

_FLOAT_NAMES = ("float", "double", "np.float64", "float64")
# X_[float] (Drake <= 1.12) or X_𝓣float𝓤 (Drake >= 1.13): the names Drake's pickles refer to.
_INSTANTIATION = re.compile(r"^(?P<family>\w+_)(?:\[(?P<p1>[\w.]+)\]|𝓣(?P<p2>[\w.]+)𝓤)$")


def _scalar_name(T) -> str:
    return getattr(T, "__name__", repr(T))


class TemplateClass:
    """A scalar-template family with only its double instantiation: ``X_[float]`` is ``X``."""

    def __init__(self, name: str, cls: type, module: str = "dynamics_cy"):
        self.name = name
        self._cls = cls
        self._module = module
        self.param_list = [(float,)]

    def _check(self, param) -> type:
        T = param[0] if isinstance(param, tuple) and len(param) == 1 else param
        if T is None or T is float or T is np.float64:
            return self._cls
        raise TypeError(f"{self.name}[{_scalar_name(T)}]: dynamics_cy computes in double only, so "
                        f"{self.name}[float] (= {self._cls.__name__}) is the one instantiation; "
                        "for AutoDiffXd or Expression use pydrake's own")

    def __getitem__(self, param) -> type:
        return self._check(param)

    def get_instantiation(self, param=None):
        """(the class, (float,)), as pydrake's TemplateClass.get_instantiation returns."""
        return self._check(param), (float,)

    def get_param_set(self, instantiation) -> set:
        return {(float,)} if instantiation is self._cls else set()

    def is_instantiation(self, obj) -> bool:
        return obj is self._cls

    def is_subclass_of_instantiation(self, obj):
        """The param (float,) if ``obj`` is (a subclass of) the instantiation, else None."""
        return (float,) if isinstance(obj, type) and issubclass(obj, self._cls) else None

    def get_module_name(self) -> str:
        return self._module

    def __call__(self, *args, **kwargs):
        """Constructs the double instantiation (pydrake deduces T from the arguments; here it is float)."""
        if not args and not kwargs:
            raise TypeError(f"{self.name}: incompatible function arguments for template: "
                            "Cannot call without arguments")
        return self._cls(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<TemplateClass {self._module}.{self.name}>"


def make_templates(classes: dict[str, type], module: str = "dynamics_cy") -> dict[str, TemplateClass]:
    """{'X_': TemplateClass} for each {'X_': X} (the family's name maps to its double class)."""
    return {name: TemplateClass(name, cls, module) for name, cls in classes.items()}


def resolve_instantiation_name(name: str, templates: dict[str, TemplateClass]):
    """The class a pickled instantiation name refers to (``X_[float]``, ``X_𝓣float𝓤``), or None."""
    m = _INSTANTIATION.match(name)
    if m is None or m["family"] not in templates:
        return None
    param = m["p1"] or m["p2"]
    if param not in _FLOAT_NAMES:
        return None
    return templates[m["family"]]._cls
