"""Affine expressions over decision variables, for building linear and cone constraints the way Drake
writes them with symbolic expressions (pydrake.symbolic is not ours to use):

    R = as_affine(prog.NewContinuousVariables(3, 3, "R"))    # object array of Affine
    p_WQ = as_affine(p_WBo) + R @ p_BQ                       # numpy arithmetic on object arrays
    add_linear(prog, p_WQ, lb, ub)                           # one LinearConstraint over the variables it uses

An `Affine` is Σᵢ cᵢ xᵢ + c₀: a dict {Variable: cᵢ} and a constant. Only affine arithmetic is defined
(sums, differences, products and quotients with numbers); a product of two expressions raises.
"""
from __future__ import annotations

from numbers import Real

import numpy as np

from .program import Binding, MathematicalProgram, Variable


class Affine:
    """Σᵢ cᵢ xᵢ + c₀ over decision variables xᵢ."""

    __slots__ = ("terms", "const")

    def __init__(self, terms: dict | None = None, const: float = 0.0):
        self.terms = {} if terms is None else terms
        self.const = float(const)

    @staticmethod
    def of(value) -> Affine:
        if isinstance(value, Affine):
            return value
        if isinstance(value, Variable):
            return Affine({value: 1.0})
        if isinstance(value, Real):
            return Affine(None, float(value))
        raise TypeError(f"not an affine expression: {value!r}")

    def __add__(self, other):
        o = Affine.of(other)
        terms = dict(self.terms)
        for v, c in o.terms.items():
            terms[v] = terms.get(v, 0.0) + c
        return Affine(terms, self.const + o.const)

    __radd__ = __add__

    def __neg__(self):
        return Affine({v: -c for v, c in self.terms.items()}, -self.const)

    def __sub__(self, other):
        return self + (-Affine.of(other))

    def __rsub__(self, other):
        return Affine.of(other) + (-self)

    def __mul__(self, k):
        if not isinstance(k, Real):
            raise TypeError(f"an affine expression can only be scaled by a number, not {type(k).__name__}")
        k = float(k)
        return Affine({v: k * c for v, c in self.terms.items()}, k * self.const)

    __rmul__ = __mul__

    def __truediv__(self, k):
        return self * (1.0 / float(k))

    def is_constant(self) -> bool:
        return not any(self.terms.values())

    def __repr__(self) -> str:
        parts = [f"{c:g}*{v!r}" for v, c in self.terms.items() if c]
        return " + ".join(parts + [f"{self.const:g}"]) if self.const or not parts else " + ".join(parts)


def as_affine(values) -> np.ndarray:
    """An object array of Affine of the same shape as values (Variables, numbers or Affines)."""
    a = np.asarray(values, dtype=object)
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = Affine.of(a[idx])
    return out


def to_matrix(exprs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, c, x) with exprs = A x + c, x the variables the expressions use (in first-use order)."""
    flat = [Affine.of(e) for e in np.asarray(exprs, dtype=object).reshape(-1)]
    index: dict[Variable, int] = {}
    for e in flat:
        for v, c in e.terms.items():
            if c and v not in index:
                index[v] = len(index)
    A = np.zeros((len(flat), len(index)))
    for r, e in enumerate(flat):
        for v, c in e.terms.items():
            if c:
                A[r, index[v]] += c
    x = np.empty(len(index), dtype=object)
    x[:] = list(index)
    return A, np.array([e.const for e in flat]), x


def add_linear(prog: MathematicalProgram, exprs, lb, ub) -> Binding:
    """lb ≤ exprs ≤ ub (elementwise) as one LinearConstraint."""
    A, c, x = to_matrix(exprs)
    if x.shape[0] == 0:
        raise ValueError("add_linear: the expressions are constant")
    n = A.shape[0]
    lo = np.broadcast_to(np.asarray(lb, dtype=float).reshape(-1), (n,))
    hi = np.broadcast_to(np.asarray(ub, dtype=float).reshape(-1), (n,))
    return prog.AddLinearConstraint(A, lo - c, hi - c, x)


def add_linear_equality(prog: MathematicalProgram, exprs, value=0.0) -> Binding:
    """exprs = value (elementwise) as one LinearEqualityConstraint."""
    A, c, x = to_matrix(exprs)
    if x.shape[0] == 0:
        raise ValueError("add_linear_equality: the expressions are constant")
    b = np.broadcast_to(np.asarray(value, dtype=float).reshape(-1), (A.shape[0],))
    return prog.AddLinearEqualityConstraint(A, b - c, x)


def add_lorentz_cone(prog: MathematicalProgram, exprs) -> Binding:
    """z = exprs in the Lorentz cone z₀ ≥ ‖z₁…‖."""
    A, c, x = to_matrix(exprs)
    return prog.AddLorentzConeConstraint(A, c, x)


def add_rotated_lorentz_cone(prog: MathematicalProgram, exprs) -> Binding:
    """z = exprs in the rotated Lorentz cone z₀z₁ ≥ ‖z₂…‖², z₀, z₁ ≥ 0."""
    A, c, x = to_matrix(exprs)
    return prog.AddRotatedLorentzConeConstraint(A, c, x)


def add_linear_cost(prog: MathematicalProgram, expr) -> Binding:
    """The cost expr (an affine expression)."""
    A, c, x = to_matrix([expr])
    return prog.AddLinearCost(A[0], float(c[0]), x)
