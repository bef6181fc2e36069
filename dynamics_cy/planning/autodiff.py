"""Forward-mode automatic differentiation for Python callables in a MathematicalProgram.

Drake evaluates a cost or constraint given as a Python function twice over: with float arrays for
values and with arrays of AutoDiffXd for gradients. Ours does the same with `Dual`, a scalar that
carries its gradient: f is called with x as a numpy object array of Duals seeded with ∂xᵢ/∂x = eᵢ,
and ∂f/∂x is read from the Duals it returns. A function written for pydrake's AutoDiffXd works
unchanged when it uses arithmetic, comparisons, numpy on object arrays (np.sin, np.sqrt, np.exp,
np.arctan2, ..., which call the methods of the same names), `.value()` and `.derivatives()`;
like AutoDiffXd, a Dual refuses float(), so math.sin(x[0]) raises instead of losing the gradient.
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np


class Dual:
    """v + dᵀε: a value v and its gradient d (an array over the seeded variables)."""

    __slots__ = ("_v", "_d")

    def __init__(self, value: float, derivatives):
        self._v = float(value)
        self._d = derivatives

    def value(self) -> float:
        return self._v

    def derivatives(self) -> np.ndarray:
        return self._d

    def __repr__(self) -> str:
        return f"Dual({self._v!r}, {self._d!r})"

    # --- arithmetic (with another Dual or a real number; numpy handles arrays elementwise) -------
    def __add__(self, o):
        if isinstance(o, Dual):
            return Dual(self._v + o._v, self._d + o._d)
        return Dual(self._v + o, self._d) if isinstance(o, Real) else NotImplemented

    __radd__ = __add__

    def __sub__(self, o):
        if isinstance(o, Dual):
            return Dual(self._v - o._v, self._d - o._d)
        return Dual(self._v - o, self._d) if isinstance(o, Real) else NotImplemented

    def __rsub__(self, o):
        return Dual(o - self._v, -self._d) if isinstance(o, Real) else NotImplemented

    def __mul__(self, o):
        if isinstance(o, Dual):
            return Dual(self._v * o._v, o._v * self._d + self._v * o._d)
        return Dual(self._v * o, self._d * o) if isinstance(o, Real) else NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, o):
        if isinstance(o, Dual):
            return Dual(self._v / o._v, (self._d * o._v - self._v * o._d) / (o._v * o._v))
        return Dual(self._v / o, self._d / o) if isinstance(o, Real) else NotImplemented

    def __rtruediv__(self, o):
        return Dual(o / self._v, -o * self._d / (self._v * self._v)) if isinstance(o, Real) else NotImplemented

    def __neg__(self):
        return Dual(-self._v, -self._d)

    def __pos__(self):
        return self

    def __abs__(self):
        return self if self._v >= 0 else -self

    def __pow__(self, o):
        if isinstance(o, Dual):
            return (self.log() * o).exp()
        if not isinstance(o, Real):
            return NotImplemented
        if o == 0:
            return Dual(1.0, 0.0 * self._d)
        return Dual(self._v ** o, o * self._v ** (o - 1) * self._d)

    def __rpow__(self, o):
        if not isinstance(o, Real):
            return NotImplemented
        v = o ** self._v
        return Dual(v, v * math.log(o) * self._d)

    # --- comparisons (on values, as AutoDiffXd) ---------------------------------------------
    def __lt__(self, o):
        return self._v < _value_of(o)

    def __le__(self, o):
        return self._v <= _value_of(o)

    def __gt__(self, o):
        return self._v > _value_of(o)

    def __ge__(self, o):
        return self._v >= _value_of(o)

    def __eq__(self, o):
        return self._v == _value_of(o)

    def __ne__(self, o):
        return self._v != _value_of(o)

    __hash__ = None

    # --- the functions numpy calls on object arrays ----------------------------------------------
    def _chain(self, value: float, slope: float) -> Dual:
        return Dual(value, slope * self._d)

    def sin(self):
        return self._chain(math.sin(self._v), math.cos(self._v))

    def cos(self):
        return self._chain(math.cos(self._v), -math.sin(self._v))

    def tan(self):
        t = math.tan(self._v)
        return self._chain(t, 1.0 + t * t)

    def arcsin(self):
        return self._chain(math.asin(self._v), 1.0 / math.sqrt(1.0 - self._v * self._v))

    def arccos(self):
        return self._chain(math.acos(self._v), -1.0 / math.sqrt(1.0 - self._v * self._v))

    def arctan(self):
        return self._chain(math.atan(self._v), 1.0 / (1.0 + self._v * self._v))

    def arctan2(self, x):
        """atan2(self, x): ∂ = (x dy - y dx) / (x² + y²)."""
        y, xv = self._v, _value_of(x)
        r2 = y * y + xv * xv
        d = xv * self._d - (y * x._d if isinstance(x, Dual) else 0.0)
        return Dual(math.atan2(y, xv), d / r2)

    def sinh(self):
        return self._chain(math.sinh(self._v), math.cosh(self._v))

    def cosh(self):
        return self._chain(math.cosh(self._v), math.sinh(self._v))

    def tanh(self):
        t = math.tanh(self._v)
        return self._chain(t, 1.0 - t * t)

    def exp(self):
        e = math.exp(self._v)
        return self._chain(e, e)

    def log(self):
        return self._chain(math.log(self._v), 1.0 / self._v)

    def sqrt(self):
        s = math.sqrt(self._v)
        return self._chain(s, 0.5 / s)

    def square(self):
        return self._chain(self._v * self._v, 2.0 * self._v)

    def absolute(self):
        return abs(self)


def _value_of(o):
    return o.value() if isinstance(o, Dual) else o


def seeded(x: np.ndarray) -> np.ndarray:
    """x (n,) as an object array of Duals with ∂xᵢ/∂x = eᵢ."""
    n = x.shape[0]
    eye = np.eye(n)
    out = np.empty(n, dtype=object)
    out[:] = [Dual(x[i], eye[i]) for i in range(n)]
    return out


def value_and_gradient(y: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(values (m,), ∂y/∂x (m, n)) of a flat array whose entries are Duals or plain numbers (constants)."""
    values, grad = np.empty(y.shape[0]), np.zeros((y.shape[0], n))
    for i, yi in enumerate(y):
        if isinstance(yi, Dual):
            values[i], grad[i] = yi.value(), yi.derivatives()
        else:
            values[i] = float(yi)
    return values, grad
