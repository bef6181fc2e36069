"""Mixed-integer convex relaxations of SO(3) (Dai, Izatt & Tedrake, "Global inverse kinematics via
mixed-integer convex optimization", IJRR 2019), with pydrake.solvers' names.

R = [r₁ r₂ r₃] ∈ SO(3) ⇔ rᵢᵀrᵢ = 1, rᵢᵀrⱼ = 0, r₁ × r₂ = r₃ (and the same for the rows). Each entry's
range [−1, 1] is cut into 2N intervals at φₖ = −1 + k/N; binaries say which interval each Rᵢⱼ is in
(SOS2 on λᵢⱼ with Rᵢⱼ = φᵀλᵢⱼ). kBilinearMcCormick then

- replaces ‖r‖² = 1 by the tangent planes Σₐ(2φₐxₐ − φₐ²) ≤ 1 at every grid point and Σₖφₖ²λₖ ≥ 1
  (the chord above x² on the active interval), for every row and column;
- replaces each bilinear product Rₐ·R_b of two entries by w in the piecewise McCormick envelope over
  the active grid cell, and imposes orthogonality and the cross products linearly in w;
- adds cuts on the sign binaries: two columns (rows) are never in the same or opposite orthant, the
  signs of a cross product follow from its factors' where they are implied, and (N a power of two,
  N ≥ 2) no row or column has all three entries in [−½, ½].

Every rotation matrix satisfies the relaxation (with binaries chosen from its entries); the relaxed set
shrinks towards SO(3) as N grows.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np
from scipy.spatial import ConvexHull

from dynamics_cy.enums import DrakeEnum
from dynamics_cy.errors import HilstackError

from .affine import Affine, add_linear, add_linear_equality, add_lorentz_cone, add_rotated_lorentz_cone, as_affine
from .mixed_integer_optimization import (
    AddBilinearProductMcCormickEnvelopeSos2,
    AddLogarithmicSos2Constraint,
    AddSos2Constraint,
    IntervalBinning,
    is_power_of_two,
)
from .program import MathematicalProgram


class UnsupportedApproachError(HilstackError, NotImplementedError):
    """A relaxation approach this implementation does not provide."""


class MixedIntegerRotationConstraintGenerator:
    """Adds a mixed-integer relaxation of R ∈ SO(3) to a program (see the module docstring). One
    generator may be applied to many matrices."""

    class Approach(DrakeEnum):
        kBoxSphereIntersection = 0
        kBilinearMcCormick = 1
        kBoth = 2

        def __repr__(self) -> str:
            return f"Approach.{self.name}"

        __str__ = __repr__

    class ReturnType:
        """`B_[i][j]`: the binaries of Rᵢⱼ's interval; `lambda_[i][j]`: its SOS2 weights, Rᵢⱼ = φᵀλ."""

        def __init__(self, B, lam):
            self.B_, self.lambda_ = B, lam

    def __init__(self, approach: Approach, num_intervals_per_half_axis: int, interval_binning: IntervalBinning):
        Approach = MixedIntegerRotationConstraintGenerator.Approach
        approach, interval_binning = Approach(approach), IntervalBinning(interval_binning)
        if approach != Approach.kBilinearMcCormick:
            raise UnsupportedApproachError(
                f"MixedIntegerRotationConstraintGenerator: {approach!r} is not implemented here; "
                "use Approach.kBilinearMcCormick")
        n = int(num_intervals_per_half_axis)
        if n < 1:
            raise ValueError(f"num_intervals_per_half_axis must be >= 1, got {num_intervals_per_half_axis}")
        self._approach, self._n, self._binning = approach, n, interval_binning
        self._phi = np.linspace(-1.0, 1.0, 2 * n + 1)

    def phi(self) -> np.ndarray:
        """The interval ends φ (2N + 1 of them, from −1 to 1)."""
        return self._phi.copy()

    def phi_nonnegative(self) -> np.ndarray:
        """φ₊ = [0, 1/N, …, 1]."""
        return self._phi[self._n:].copy()

    def approach(self) -> Approach:
        return self._approach

    def num_intervals_per_half_axis(self) -> int:
        return self._n

    def interval_binning(self) -> IntervalBinning:
        return self._binning

    def AddToProgram(self, R, prog: MathematicalProgram) -> ReturnType:
        """Adds the relaxation of R ∈ SO(3) (R a 3×3 array of the program's variables)."""
        R = np.asarray(R, dtype=object)
        if R.shape != (3, 3):
            raise ValueError(f"AddToProgram: R must be 3x3, got shape {R.shape}")
        n, phi = self._n, self._phi
        B = [[None] * 3 for _ in range(3)]
        lam = [[None] * 3 for _ in range(3)]
        for i, j in itertools.product(range(3), range(3)):
            lam[i][j] = prog.NewContinuousVariables(2 * n + 1, f"lambda[{i}][{j}]")
            add_linear_equality(prog, [Affine.of(R[i, j]) - phi @ as_affine(lam[i][j])], 0.0)
            if self._binning == IntervalBinning.kLogarithmic:
                B[i][j] = AddLogarithmicSos2Constraint(prog, lam[i][j])
            else:
                B[i][j] = prog.NewBinaryVariables(2 * n, f"B[{i}][{j}]")
                AddSos2Constraint(prog, lam[i][j], B[i][j])
        self._add_sign_cuts(prog, B)
        for k in range(3):
            _add_unit_length_relaxation(prog, phi, [lam[k][c] for c in range(3)])
            _add_unit_length_relaxation(prog, phi, [lam[r][k] for r in range(3)])
        _add_bilinear_orthonormality(prog, R, phi, B, self._binning)
        return MixedIntegerRotationConstraintGenerator.ReturnType(B, lam)

    def _add_sign_cuts(self, prog, B) -> None:
        """Bpos(i, j) = 1 ⇒ Rᵢⱼ ≥ 0, = 0 ⇒ Rᵢⱼ ≤ 0; cuts on Bpos (and on the [−½, ½] digit)."""
        n = self._n
        if self._binning == IntervalBinning.kLogarithmic:
            if not is_power_of_two(n):
                return                      # no binary digit is the sign
            Bpos = as_affine([[B[i][j][0] for j in range(3)] for i in range(3)])
        else:
            # Bpos = B(N) ∨ … ∨ B(2N−1), the intervals above 0
            bpos = prog.NewContinuousVariables(3, 3, "Bpos")
            prog.AddBoundingBoxConstraint(0.0, 1.0, bpos.reshape(-1))
            Bpos = as_affine(bpos)
            rows = []
            for i, j in itertools.product(range(3), range(3)):
                upper = as_affine(B[i][j][n:])
                rows.append(Bpos[i, j] - upper.sum())
                rows += [u - Bpos[i, j] for u in upper]
            add_linear(prog, rows, -np.inf, 0.0)
        for M in (Bpos, Bpos.T):
            _add_not_in_same_or_opposite_orthant(prog, M)
            _add_cross_product_implied_signs(prog, M)
        if self._binning == IntervalBinning.kLogarithmic and n >= 2:
            # digit 1 = 1 ⇔ |Rᵢⱼ| ≤ ½; a unit row or column cannot have all three there
            half = as_affine([[B[i][j][1] for j in range(3)] for i in range(3)])
            add_linear(prog, list(half.sum(axis=0)) + list(half.sum(axis=1)), -np.inf, 2.0)


def _add_unit_length_relaxation(prog, phi, lambdas) -> None:
    """x = (φᵀλ₀, φᵀλ₁, φᵀλ₂) with ‖x‖ = 1 relaxed: the tangent planes of x² at the grid points,
    Σₐ 2φ_{kₐ}xₐ − φ_{kₐ}² ≤ 1 for every (k₀, k₁, k₂), and Σₖ φₖ²(λ₀ₖ + λ₁ₖ + λ₂ₖ) ≥ 1."""
    L = [as_affine(l) for l in lambdas]
    x = [phi @ l for l in L]
    rows = []
    for a, b, c in itertools.product(phi, repeat=3):
        e = x[0] * (2 * a) + x[1] * (2 * b) + x[2] * (2 * c) - (a * a + b * b + c * c)
        if not e.is_constant():
            rows.append(e)
    add_linear(prog, rows, -np.inf, 1.0)
    add_linear(prog, [(phi * phi) @ (L[0] + L[1] + L[2])], 1.0, np.inf)


def _add_bilinear_orthonormality(prog, R, phi, B, binning) -> None:
    """For the 36 products of two distinct entries, w ≈ Rₐ·R_b in the McCormick envelope; then
    cᵢᵀcⱼ = 0, rᵢᵀrⱼ = 0, cᵢ × cⱼ = cₖ and rᵢ × rⱼ = rₖ (i, j, k cyclic) are linear in w."""
    W = {}
    flat = [(a % 3, a // 3) for a in range(9)]      # column-major, as R's columns stacked
    for a, b in itertools.combinations(range(9), 2):
        (ra, ca), (rb, cb) = flat[a], flat[b]
        w = prog.NewContinuousVariables(1, f"R({ra},{ca})*R({rb},{cb})")[0]
        AddBilinearProductMcCormickEnvelopeSos2(prog, R[ra, ca], R[rb, cb], w, phi, phi, B[ra][ca], B[rb][cb],
                                                binning)
        W[(ra, ca, rb, cb)] = W[(rb, cb, ra, ca)] = Affine.of(w)

    def prod(e1, e2):
        return W[e1 + e2]

    zero_rows = []
    for i, j in itertools.combinations(range(3), 2):
        zero_rows.append(sum((prod((r, i), (r, j)) for r in range(3)), Affine()))     # columns i, j
        zero_rows.append(sum((prod((i, c), (j, c)) for c in range(3)), Affine()))     # rows i, j
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        for m in range(3):
            m1, m2 = (m + 1) % 3, (m + 2) % 3
            zero_rows.append(prod((m1, i), (m2, j)) - prod((m2, i), (m1, j)) - Affine.of(R[m, k]))
            zero_rows.append(prod((i, m1), (j, m2)) - prod((i, m2), (j, m1)) - Affine.of(R[k, m]))
    add_linear_equality(prog, zero_rows, 0.0)


def _add_not_in_same_or_opposite_orthant(prog, Bpos) -> None:
    """Orthogonal columns are never both in one orthant, nor in opposite ones: of the six sign
    indicators that would put them there, at most five hold."""
    rows = []
    for c0, c1 in itertools.combinations(range(3), 2):
        for orthant in range(8):
            same, opposite = Affine(), Affine()
            for axis in range(3):
                a, b = Bpos[axis, c0], Bpos[axis, c1]
                if orthant & (1 << axis):
                    same, opposite = same + a + b, opposite + a + (1 - b)
                else:
                    same, opposite = same + (1 - a) + (1 - b), opposite + (1 - a) + b
            rows += [same, opposite]
    add_linear(prog, rows, -np.inf, 5.0)


@functools.cache
def _cross_product_sign_hull() -> tuple[np.ndarray, np.ndarray]:
    """H-representation A v ≤ b of the convex hull of the sign patterns v = (aᵢ, bⱼ, aⱼ, bᵢ, cₖ) ∈ {0, 1}⁵
    consistent with cₖ = aᵢbⱼ − aⱼbᵢ: when both products have one strict sign (aᵢ = bⱼ and aⱼ ≠ bᵢ: cₖ ≥ 0;
    aᵢ ≠ bⱼ and aⱼ = bᵢ: cₖ ≤ 0), cₖ's indicator must agree. Computed with qhull."""
    points = []
    for v in itertools.product((0, 1), repeat=5):
        positive = v[0] == v[1] and v[2] != v[3]
        negative = v[0] != v[1] and v[2] == v[3]
        if not (positive and v[4] == 0 or negative and v[4] == 1):
            points.append(v)
    eq = ConvexHull(np.array(points, dtype=float)).equations        # n·v + d ≤ 0, one per simplex
    scale = np.abs(eq[:, :5]).max(axis=1, keepdims=True)
    facets = np.unique(np.round(eq / scale, 9), axis=0)
    return facets[:, :5], -facets[:, 5]


def _add_cross_product_implied_signs(prog, Bpos) -> None:
    A, b = _cross_product_sign_hull()
    rows, ub = [], []
    for col0 in range(3):
        col1, col2 = (col0 + 1) % 3, (col0 + 2) % 3
        for i in range(3):
            j, k = (i + 1) % 3, (i + 2) % 3
            v = [Bpos[i, col0], Bpos[j, col1], Bpos[j, col0], Bpos[i, col1], Bpos[k, col2]]
            rows += [sum((vi * float(a) for vi, a in zip(v, row) if a), Affine()) for row in A]
            ub += list(b)
    add_linear(prog, rows, -np.inf, ub)


def NewRotationMatrixVars(prog: MathematicalProgram, name: str = "R") -> np.ndarray:
    """A 3×3 matrix of new variables with −1 ≤ Rᵢⱼ ≤ 1 and −1 ≤ trace(R) ≤ 3 (true on SO(3))."""
    R = prog.NewContinuousVariables(3, 3, name)
    prog.AddBoundingBoxConstraint(-1.0, 1.0, R.reshape(-1))
    add_linear(prog, [as_affine(np.diag(R)).sum()], -1.0, 3.0)
    return R


def AddRotationMatrixOrthonormalSocpConstraint(prog: MathematicalProgram, R) -> None:
    """The convex constraints SO(3) implies: ‖rᵢ‖² ≤ 1 for every row and column (rotated Lorentz cones
    [1, 1, rᵢ]) and ‖rᵢ ± rⱼ‖ ≤ √2 for every pair of rows and of columns (Lorentz cones)."""
    Ra = as_affine(R)
    vectors = [Ra[:, i] for i in range(3)] + [Ra[i, :] for i in range(3)]
    one, root2 = Affine(None, 1.0), Affine(None, np.sqrt(2.0))
    for v in vectors:
        add_rotated_lorentz_cone(prog, [one, one, *v])
    for group in (vectors[:3], vectors[3:]):
        for u, v in itertools.combinations(group, 2):
            add_lorentz_cone(prog, [root2, *(u + v)])
            add_lorentz_cone(prog, [root2, *(u - v)])
