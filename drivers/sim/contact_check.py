"""The contact stiffness against the lightest body it pushes: the contact springs are explicit (docs/sim.md,
Time integration), so n points of stiffness k on a body of effective mass m are a spring of rate
ω = √(n k/m) integrated at the step h. Above h ω ≈ 1 the contact chatters (the WSG's 50 g fingers at the
default 10⁵ N/m: h ω = 2.8, the pads bounce at every other step), and from h ω = 2 the explicit spring is
unstable. The effective mass is the body's at its geometry's origin Go in the worst direction, at the
default configuration: m = 1 / λ_max(J M⁻¹ Jᵀ), J = the Jacobian of p_WGo with respect to v, M⁻¹ with the
coupler constraints enforced, so the WSG's finger on its slide is both coupled fingers' mass (0.1 kg: the
default 10⁵ N/m gives h ω = 2.0, 5·10⁴ N/m 1.4, the grasping scenarios' 2·10⁴ N/m 0.89) and a link of an
arm has the chain's inertia behind it.

`check_stiffness` warns (ContactStiffnessWarning, naming the key sim.contact.stiffness, the body, h ω and
the stiffness that gives h ω = 1) for the geometry with the largest h ω above 1.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from dynamics_cy import JacobianWrtVariable
from dynamics_cy.errors import HilstackError

POINTS = {"Sphere": 1, "Capsule": 2, "Box": 4, "Cylinder": 4}
"""Contact points a shape's flat contact holds (a box's face: its 4 corners)."""


class ContactStiffnessWarning(HilstackError, UserWarning):
    """The contact stiffness is too stiff for a light body at the time step: it chatters or diverges."""


def coupled_inverse(plant, context) -> np.ndarray:
    """M⁻¹ with the coupler constraints (q₀ = ρ q₁ + Δq: a mimic joint) enforced: N (Nᵀ M N)⁻¹ Nᵀ, v = N u,
    u the velocities without each coupler's v₀ (v₀ = ρ v₁). Coupled fingers move together: their mass is
    both fingers'."""
    M = plant.CalcMassMatrix(context)
    nv = M.shape[0]
    specs = list(plant.get_coupler_constraint_specs().values()) if hasattr(plant, "get_coupler_constraint_specs") \
        else []
    N = np.eye(nv)
    dependent = []
    for spec in specs:
        v0 = plant.get_joint(spec.joint0_index).velocity_start()
        v1 = plant.get_joint(spec.joint1_index).velocity_start()
        N[v0] = 0.0
        N[v0, v1] = spec.gear_ratio
        dependent.append(v0)
    N = np.delete(N, dependent, axis=1)
    return N @ np.linalg.inv(N.T @ M @ N) @ N.T


def effective_mass(plant, context, Minv: np.ndarray, geometry) -> float:
    """1 / λ_max(J M⁻¹ Jᵀ) of the geometry's origin Go on its body (kg; inf if Go cannot move)."""
    body = plant.get_body(geometry.body_index)
    J = plant.CalcJacobianTranslationalVelocity(context, JacobianWrtVariable.kV, body.body_frame(),
                                                geometry.X_BG.translation(), plant.world_frame(), plant.world_frame())
    mobility = float(np.linalg.eigvalsh(J @ Minv @ J.T)[-1])
    return 1.0 / mobility if mobility > 1e-12 else math.inf


def stiffness_ratio(stiffness: float, time_step: float, points: int, mass: float) -> float:
    """h √(n k/m): the explicit contact spring's h ω."""
    return time_step * math.sqrt(points * stiffness / mass)


def check_stiffness(plant, geometries, touching, stiffness: float, time_step: float, path: str) -> float:
    """The largest h √(n k/m) over `touching` (indices into `geometries`, those that can touch something);
    a ContactStiffnessWarning when it exceeds 1 (the `hil` command prints it as one line). Returns it (0 when
    nothing touches)."""
    if not touching:
        return 0.0
    context = plant.CreateDefaultContext()
    Minv = coupled_inverse(plant, context)
    worst, what = 0.0, None
    for i in sorted(touching):
        g = geometries[i]
        n = POINTS.get(type(g.shape).__name__, 1)
        m = effective_mass(plant, context, Minv, g)
        x = stiffness_ratio(stiffness, time_step, n, m)
        if x > worst:
            worst, what = x, (g, n, m)
    if worst > 1.0:
        g, n, m = what
        body = plant.get_body(g.body_index).name()
        state = "is unstable (h ω ≥ 2)" if round(worst, 9) >= 2.0 else "chatters (h ω > 1)"
        text = (f"{path}.stiffness: {stiffness:g} N/m on '{g.name}' of body '{body}' (effective mass {m:.3g} kg, "
                f"{n} points) at h = {time_step:g} s gives h √(n k/m) = {worst:.2f}: the explicit contact {state}; "
                f"at most {m / (n * time_step ** 2):.3g} N/m keeps it below 1 (docs/sim.md, Grasping)")
        warnings.warn(ContactStiffnessWarning(text), stacklevel=3)
    return worst
