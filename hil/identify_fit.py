"""The estimates of `hil identify` from its rows (hil.identify.Regression): least squares, then
physically consistent.

Weighted least squares (Gautier's): an ordinary fit, each joint's residual standard deviation σ_j,
then the fit again with every row of joint j divided by σ_j. Its standard errors are
√diag(σ² (AᵀA)⁻¹) of the weighted rows (the rows are filtered, so neighbouring residuals correlate:
read them as a lower bound). The prediction error is the RMS of y − A θ on the held-out rows, per
joint, beside the model's alone (θ = 0: no payload, no friction).

Physical consistency (Wensing, Kim, Slotine 2018): a body's 10 parameters are those of a mass
distribution if and only if its pseudo-inertia

    J(π) = [ ½ tr(I_Fo) 𝟙 − I_Fo   m p_FoFcm ]
           [ (m p_FoFcm)ᵀ          m         ]  ⪰ 0

(I_Fo the rotational inertia about Fo). The consistent estimate minimises the same weighted squares
with J ⪰ 0 (each body's, in the base mode) and b_v, b_c >= 0: a semidefinite program, modelled with
cvxpy and solved by Clarabel (an interior-point conic solver; or SCS, first-order), on the
R factor of the rows' QR (‖A θ − y‖² = ‖R θ − Qᵀ y‖² + const), so its size does not grow with the
log. In the base mode the rank-deficient regressor is regularised towards the model's parameters
(the unidentifiable directions keep the prior's values) and the base parameters are reported: the
independent columns of a pivoted QR of A, β = π₁ + R₁₁⁻¹ R₁₂ π₂.
"""
from __future__ import annotations

import numpy as np

from dynamics_cy.errors import HilstackError

PRIOR_WEIGHT = 1e-6     # base mode: the prior's weight, relative to the mean squared column norm
RANK_TOL = 1e-8         # base mode: a column is dependent below this share of the largest |R_ii|


class IdentifyError(HilstackError, RuntimeError):
    """The estimate cannot be made (a missing solver, a failed solve)."""


def lstsq(A, y) -> np.ndarray:
    """The least-squares (minimum-norm when rank-deficient) solution: LAPACK's gelsy, a pivoted QR."""
    from scipy.linalg import lstsq as solve
    return solve(A, y, lapack_driver="gelsy", check_finite=False)[0]


def weighted(A, y, joint, n: int) -> tuple:
    """(θ, σ_j, the weighted rows' Aw, yw): the two-step weighted least squares."""
    theta = lstsq(A, y)
    r = y - A @ theta
    sigma = np.array([np.sqrt(np.mean(r[joint == j] ** 2)) if np.any(joint == j) else 1.0 for j in range(n)])
    sigma = np.maximum(sigma, 1e-9)
    w = 1.0 / sigma[joint]
    Aw, yw = A * w[:, None], y * w
    return lstsq(Aw, yw), sigma, Aw, yw


def standard_errors(Aw, yw, theta) -> tuple:
    """(standard errors, covariance) of the weighted fit θ."""
    dof = max(len(yw) - len(theta), 1)
    s2 = float(np.sum((yw - Aw @ theta) ** 2)) / dof
    cov = s2 * np.linalg.pinv(Aw.T @ Aw)
    return np.sqrt(np.maximum(np.diag(cov), 0.0)), cov


def pseudo_inertia(pi) -> np.ndarray:
    """J(π) (4×4) of 10 parameters [m, h (= m p_FoFcm), I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] (numbers)."""
    I = inertia_matrix(pi[4:10])
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
    J[:3, 3] = J[3, :3] = pi[1:4]
    J[3, 3] = pi[0]
    return J


def inertia_matrix(p) -> np.ndarray:
    """The symmetric 3×3 of [xx, xy, yy, xz, yz, zz]."""
    xx, xy, yy, xz, yz, zz = p
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def _cvxpy():
    try:
        import cvxpy as cp
    except ImportError:
        raise IdentifyError("physically consistent identification needs cvxpy: pip install 'hilstack[identify]' "
                            "(or --unconstrained for plain least squares)") from None
    return cp


def _pseudo_inertia_expr(cp, x):
    """J(π) as a cvxpy expression of the 10-vector x."""
    m, h = x[0], x[1:4]
    xx, xy, yy, xz, yz, zz = (x[i] for i in range(4, 10))
    tr = 0.5 * (xx + yy + zz)
    return cp.bmat([[tr - xx, -xy, -xz, h[0]], [-xy, tr - yy, -yz, h[1]], [-xz, -yz, tr - zz, h[2]],
                    [h[0], h[1], h[2], m]])


def consistent(Aw, yw, n_inertial: int, n: int, prior=None, solver: str = "clarabel") -> np.ndarray:
    """θ minimising ‖Aw θ − yw‖² with every 10-parameter block of the first n_inertial columns'
    pseudo-inertia ⪰ 0 and the friction (the last 2n) >= 0; `prior` (n_inertial,): regularised
    towards it (base mode); `solver`: cvxpy's name of the conic solver (clarabel, scs)."""
    cp = _cvxpy()
    R = np.linalg.qr(Aw, mode="r")
    z = np.linalg.lstsq(R.T, Aw.T @ yw, rcond=None)[0]          # Qᵀ y from Rᵀ z = Aᵀ y
    scale = np.sqrt(np.mean(np.sum(R ** 2, axis=0)))
    theta = cp.Variable(Aw.shape[1])
    cost = cp.sum_squares((R @ theta - z) / scale)
    if prior is not None:
        cost += PRIOR_WEIGHT * cp.sum_squares(theta[:n_inertial] - prior)
    cons = [theta[n_inertial:] >= 0]
    for b in range(0, n_inertial, 10):
        J = _pseudo_inertia_expr(cp, theta[b:b + 10])
        cons.append(0.5 * (J + J.T) >> 0)
    problem = cp.Problem(cp.Minimize(cost), cons)
    name = solver.upper()
    if name not in cp.installed_solvers():
        raise IdentifyError(f"cvxpy has no {solver} solver here (installed: {', '.join(cp.installed_solvers())}): "
                            f"pip install {solver}")
    try:
        problem.solve(solver=name)
    except cp.error.SolverError as e:
        raise IdentifyError(f"the consistent fit failed in {solver}: {e}") from None
    if theta.value is None or problem.status not in ("optimal", "optimal_inaccurate"):
        raise IdentifyError(f"the consistent fit ended {problem.status} in {solver}")
    return np.asarray(theta.value, dtype=float)


def base_parameters(A, n_inertial: int) -> tuple:
    """(independent column indices, K) with the base parameters β = π[independent] + K π[dependent]
    of the inertial columns of A (a pivoted QR)."""
    from scipy.linalg import qr
    _, R, P = qr(A[:, :n_inertial], mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    r = int(np.sum(d > RANK_TOL * d[0]))
    K = np.linalg.solve(R[:r, :r], R[:r, r:])
    return P[:r], P[r:], K


def fit(reg, consistent_fit: bool = True, prior=None, solver: str = "clarabel") -> dict:
    """The estimate of a Regression: θ (consistent when asked), standard errors, per-joint σ and
    the held-out prediction RMS per joint (model alone, least squares, the estimate)."""
    theta_ls, sigma, Aw, yw = weighted(reg.A, reg.y, reg.joint, reg.n)
    se, cov = standard_errors(Aw, yw, theta_ls)
    out = {"theta_ls": theta_ls, "se": se, "cov": cov, "sigma": sigma}
    if reg.bodies:
        indep, dep, K = base_parameters(Aw, reg.n_inertial)
        out["base"] = (indep, dep, K)
        Ab = np.hstack([Aw[:, indep], Aw[:, reg.n_inertial:]])
        beta = lstsq(Ab, yw)
        out["beta_ls"], out["beta_se"] = beta, standard_errors(Ab, yw, beta)[0]
    theta = consistent(Aw, yw, reg.n_inertial, reg.n, prior if reg.bodies else None, solver) if consistent_fit \
        else theta_ls
    out["theta"] = theta
    out["rms_model"] = _rms(reg.y_test, reg.joint_test, reg.n) if not reg.bodies else None
    out["rms_ls"] = _rms(reg.y_test - reg.A_test @ theta_ls, reg.joint_test, reg.n)
    out["rms"] = _rms(reg.y_test - reg.A_test @ theta, reg.joint_test, reg.n)
    out["rms_fit"] = _rms(reg.y - reg.A @ theta, reg.joint, reg.n)
    return out


def _rms(r, joint, n: int) -> np.ndarray:
    return np.array([np.sqrt(np.mean(r[joint == j] ** 2)) if np.any(joint == j) else np.nan for j in range(n)])


def payload(pi, cov=None) -> dict:
    """The payload of 10 parameters π_F: mass, com p_FoFcm_F, the central inertia I_Fcm_F (3×3),
    and the standard errors of the mass and the com from `cov` (10×10, delta method)."""
    m, h = float(pi[0]), np.asarray(pi[1:4], dtype=float)
    c = h / m if m > 0 else np.zeros(3)
    I_Fo = inertia_matrix(pi[4:10])
    I_cm = I_Fo - m * (c @ c * np.eye(3) - np.outer(c, c))
    out = {"mass": m, "com": c, "inertia": I_cm, "inertia_Fo": I_Fo}
    if cov is not None and m > 0:
        G = np.hstack([-h[:, None] / m ** 2, np.eye(3) / m])       # ∂c/∂(m, h)
        out["mass_se"] = float(np.sqrt(cov[0, 0]))
        out["com_se"] = np.sqrt(np.maximum(np.diag(G @ cov[:4, :4] @ G.T), 0.0))
    return out
