"""Mixed-integer modelling helpers with pydrake.solvers' names: interval binning, special ordered sets of
type 2 (SOS2) with a linear or logarithmic number of binaries (Vielma & Nemhauser 2011) and the
piecewise McCormick envelope of a bilinear product.

SOS2 on λ ∈ ℝⁿ⁺¹ (breakpoints φ₀ < … < φₙ, interval k = [φₖ, φₖ₊₁]): Σλ = 1, λ ≥ 0 and only the two
λ of one interval are non-zero, so x = φᵀλ lies on the piecewise-linear interpolation.
"""
from __future__ import annotations

import numpy as np

from dynamics_cy.enums import DrakeEnum

from .affine import Affine, add_linear, add_linear_equality, as_affine
from .program import MathematicalProgram


class IntervalBinning(DrakeEnum):
    """How binaries say which interval a variable is in: ⌈log₂ n⌉ of them in reflected Gray code
    (kLogarithmic) or one per interval (kLinear)."""

    kLogarithmic = 0
    kLinear = 1

    def __repr__(self) -> str:
        return f"IntervalBinning.{self.name}"

    __str__ = __repr__


def CeilLog2(n: int) -> int:
    """⌈log₂ n⌉ for n ≥ 1."""
    if n < 1:
        raise ValueError(f"CeilLog2: n must be >= 1, got {n}")
    return (n - 1).bit_length()


def CalculateReflectedGrayCodes(num_digits: int) -> np.ndarray:
    """(2ᵏ, k) 0/1 matrix: row i is i in reflected Gray code (i xor i>>1), most significant digit first."""
    i = np.arange(2 ** num_digits)
    g = i ^ (i >> 1)
    return ((g[:, None] >> np.arange(num_digits - 1, -1, -1)[None, :]) & 1).astype(int)


def _sos2_common(prog: MathematicalProgram, lam) -> np.ndarray:
    lam = as_affine(lam).reshape(-1)
    add_linear(prog, lam, 0.0, 1.0)
    add_linear_equality(prog, [sum(lam, Affine())], 1.0)
    return lam


def _add_logarithmic_sos2(prog: MathematicalProgram, lam, y) -> None:
    """Interval m is coded by y = Gray(m). A breakpoint may be non-zero only if y agrees, digit by digit,
    with a code of one of its (at most two) adjacent intervals: for digit j, the breakpoints whose adjacent
    intervals all have digit 1 sum to ≤ yⱼ, those whose adjacent intervals all have digit 0 to ≤ 1 − yⱼ.
    Adjacent Gray codes differ in one digit, so y picks exactly the two breakpoints of one interval."""
    lam = _sos2_common(prog, lam)
    y = as_affine(y).reshape(-1)
    n_interval = lam.shape[0] - 1
    k = CeilLog2(n_interval)
    if y.shape[0] != k:
        raise ValueError(f"logarithmic SOS2 on {lam.shape[0]} lambdas needs {k} binaries, got {y.shape[0]}")
    codes = CalculateReflectedGrayCodes(k)[:n_interval]
    rows, lo, hi = [], [], []
    for j in range(k):
        ones, zeros = Affine(), Affine()
        for i in range(lam.shape[0]):
            adjacent = codes[max(i - 1, 0):min(i, n_interval - 1) + 1, j]
            if np.all(adjacent == 1):
                ones = ones + lam[i]
            elif np.all(adjacent == 0):
                zeros = zeros + lam[i]
        rows += [ones - y[j], zeros + y[j]]
        lo += [-np.inf, -np.inf]
        hi += [0.0, 1.0]
    add_linear(prog, rows, lo, hi)


def AddLogarithmicSos2Constraint(prog: MathematicalProgram, lambdas, binary_variable_name: str = "y") -> np.ndarray:
    """SOS2 on lambdas with ⌈log₂(n − 1)⌉ new binaries y (n = len(lambdas)); returns y. If y is interval m
    in reflected Gray code, only λₘ and λₘ₊₁ may be non-zero."""
    n = np.asarray(lambdas, dtype=object).size
    if n < 2:
        raise ValueError(f"AddLogarithmicSos2Constraint: needs at least 2 lambdas, got {n}")
    y = prog.NewBinaryVariables(CeilLog2(n - 1), binary_variable_name)
    _add_logarithmic_sos2(prog, lambdas, y)
    return y


def AddSos2Constraint(prog: MathematicalProgram, lambdas, y) -> None:
    """SOS2 on lambdas with one binary per interval: yᵢ = 1 ⇒ only λᵢ, λᵢ₊₁ may be non-zero; Σy = 1."""
    lam = as_affine(lambdas).reshape(-1)
    y = as_affine(y).reshape(-1)
    if lam.shape[0] != y.shape[0] + 1:
        raise ValueError(f"AddSos2Constraint: {lam.shape[0]} lambdas need {lam.shape[0] - 1} binaries, "
                         f"got {y.shape[0]}")
    lam = _sos2_common(prog, lam)
    n = y.shape[0]
    rows = [lam[i] - (y[max(i - 1, 0)] if i else 0.0) - (y[i] if i < n else 0.0) for i in range(n + 1)]
    add_linear(prog, rows, -np.inf, 0.0)
    add_linear_equality(prog, [sum(y, Affine())], 1.0)


def add_sos2(prog: MathematicalProgram, lambdas, y, binning: IntervalBinning) -> None:
    """SOS2 on lambdas with the given binaries, coded as binning says."""
    if binning == IntervalBinning.kLogarithmic:
        _add_logarithmic_sos2(prog, lambdas, y)
    else:
        AddSos2Constraint(prog, lambdas, y)


def AddBilinearProductMcCormickEnvelopeSos2(prog: MathematicalProgram, x, y, w, phi_x, phi_y, Bx, By,
                                            binning: IntervalBinning) -> np.ndarray:
    """w ≈ x·y: (x, y, w) in the tetrahedron (convex hull of w = xy) over the grid cell Bx, By select,
    through λ ∈ [0, 1]^(mx × my): x = Σλᵢⱼφˣᵢ, y = Σλᵢⱼφʸⱼ, w = Σλᵢⱼφˣᵢφʸⱼ, with the row sums and column
    sums of λ SOS2 on Bx and By. Returns λ. Bx, By are not declared binary here (the caller's)."""
    phi_x, phi_y = np.asarray(phi_x, dtype=float).reshape(-1), np.asarray(phi_y, dtype=float).reshape(-1)
    lam = prog.NewContinuousVariables(phi_x.shape[0], phi_y.shape[0], "lambda")
    prog.AddBoundingBoxConstraint(0.0, 1.0, lam.reshape(-1))
    L = as_affine(lam)
    add_linear_equality(prog, [Affine.of(x) - phi_x @ L @ np.ones(phi_y.shape[0]),
                               Affine.of(y) - np.ones(phi_x.shape[0]) @ L @ phi_y,
                               Affine.of(w) - phi_x @ L @ phi_y], 0.0)
    add_sos2(prog, L.sum(axis=1), Bx, binning)
    add_sos2(prog, L.sum(axis=0), By, binning)
    return lam


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0
