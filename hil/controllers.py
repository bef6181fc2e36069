"""Controllers on dynamics_cy's kernels. Each writes the joint torque τ into a preallocated array.

With e = q_d − q and ė = v_d − v (τ_g is the generalized force of gravity, so −τ_g compensates it):

- gravity_compensation: τ = −τ_g
- joint_pd:             τ = Kp e + Kd ė − τ_g
- computed_torque:      τ = M(q) (a_d + Kp e + Kd ė) + C(q, v) v − τ_g + d∘v   (Kp in 1/s², Kd in 1/s)
- joint_impedance:      τ = M(q) a_d + C(q, v) v − τ_g + d∘v + K e + D ė      (K in N·m/rad, D in N·m·s/rad)
- cartesian_impedance:  τ = Jᵀ (K_x e_x + D_x (V_d − J v)) − τ_g − d v, with e_x the pose error of the
  end-effector frame E to its goal G = E(q_d) (a rotation vector and a translation, in W:
  dynamics_cy.linalg.pose_error, the same compiled code).
- whole_body:           a legged robot's τ from the whole-body QP (hil.legged, docs/wbc.md).

With controller.friction_compensation the joint and Cartesian laws add τ_f = b_v∘v + b_c∘tanh(v/ε)
(the friction `hil identify` estimates); computed_torque and joint_impedance then add no d∘v of their
own (b_v holds the whole viscous friction) and b_v is capped as d is (cap_damping).

The model-based laws use the model's full inverse dynamics, joint damping d included (as the
plant's force elements do), so a perfect model tracks exactly. That + d∘v is a positive velocity
feedback computed from a status held for a status period T: it destabilizes a joint once d·T > 2m
(m its inertia), e.g. the iiwa's link 7 (m ≈ 10⁻³ kg·m², d = 0.5) behind a 200 Hz driver, where it
drove joint 7 into VELOCITY_LIMIT within 0.2 s even with Kp = Kd = 0. cap_damping() (called by the
loop once it has measured T) limits the compensated d to m/T.

Gains and the loop period. The loop samples q, v every T and holds the torque over T. For one joint
of inertia m (m_i = 1 / (M(q)⁻¹)_ii, the inertia it sees with every other joint free, as the loop's
cap uses; q the model's default positions) under τ = −kp q − kd v, with a = kp T²/m and b = kd T/m:

- exactly, as a real joint integrates a held torque (zero-order hold), the state maps by
  A = [[1 − a/2, T (1 − b/2)], [−a/T, 1 − b]]: trace 2 − a/2 − b, det 1 − b + a/2; by Jury's test
  it is stable iff 0 < a < 2b and b < 2, i.e. kd < 2m/T and kp < 2 kd/T;
- as the simulator steps it (semi-implicit Euler, h = T): A = [[1 − a, T (1 − b)], [−a/T, 1 − b]],
  det 1 − b, stable iff 0 < b < 2 and a + 2b < 4, i.e. kp T² + 2 kd T < 4m.

Both are unstable, whatever the other gain, once kd ≥ 2m/T (a pole at or beyond −1: each sample's
velocity feedback overshoots) or kp ≥ 4m/T² (ωT ≥ 2). The joint's viscous friction d (continuous,
what the law leaves of the model's: + d∘v compensation and friction_compensation taken off) moves
the exact bounds to kd < d·coth(dT/2m) and kp < 4d / (T (1 − e^(−dT/m))) (the same Jury test on the
held torque's exact map with α = e^(−dT/m); 2m/T and 4m/T² as d → 0: gain_bounds). joint_pd and
joint_impedance (gains in N·m/rad, N·m·s/rad) and computed_torque (in 1/s², 1/s: m = 1, d = 0, the
law cancels M and d) refuse gains beyond them at configure (StableJointLaw: a ConfigError naming the
key, the joint, the value and the bound; the loop's start-up line warns of gains beyond them at the
measured status period). The bound holds at the inertia of the default positions; a distal joint's
(the dangerous ones) hardly changes with q.

Each is an ordinary user of the public API (hil.controller_api): a `Controller` whose Params are
read from the controller section's own keys (kp, kd, cartesian_*), on_configure() checks the gains
and allocates, update(state, command) writes command.tau and allocates nothing. A user's law is
named in a config by import path, `controller.type: "package.module:Name"` (controller_class).
"""
from __future__ import annotations

import dataclasses
import importlib
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from drivers.core import _control
from drivers.core.config import ControllerConfig, FrictionCompensationConfig
from drivers.core.schema import ConfigError, NonNegative
from drivers.sim.physics import joint_inertias

from .controller_api import Controller, FunctionController
from .legged import WholeBody


def gains(values: list[float], n: int, key: str) -> np.ndarray:
    """A per-joint gain vector from a scalar (one value) or n values."""
    a = np.array(values, dtype=float)
    if a.size == 1:
        a = np.full(n, a[0])
    if a.shape != (n,):
        raise ConfigError(key, f"needs 1 or {n} values (one per joint), got {a.size}")
    if np.any(a < 0) or not np.all(np.isfinite(a)):
        raise ConfigError(key, f"gains must be finite and non-negative, got {a.tolist()}")
    return a


DEFAULT_KP, DEFAULT_KD = [100.0], [20.0]     # JointGains' unset gains, before the per-joint caps


@dataclass
class JointGains:
    """controller.kp, controller.kd (drivers.core.config.ControllerConfig's; None: DEFAULT_KP, DEFAULT_KD
    capped per joint at half the stability bound); friction_compensation."""
    kp: list[float] | None = None
    kd: list[float] | None = None
    friction_compensation: FrictionCompensationConfig | None = None


@dataclass
class CartesianGains:
    """controller.cartesian_stiffness, cartesian_damping ([rotational; translational]), nullspace_damping;
    friction_compensation."""
    cartesian_stiffness: list[float] = field(default_factory=lambda: [30.0, 30.0, 30.0, 500.0, 500.0, 500.0])
    cartesian_damping: list[float] = field(default_factory=lambda: [3.0, 3.0, 3.0, 40.0, 40.0, 40.0])
    nullspace_damping: NonNegative = 1.0
    friction_compensation: FrictionCompensationConfig | None = None


class FrictionCompensated(Controller):
    """The built-ins' friction compensation (controller.friction_compensation): on_configure's
    `configure_friction()` reads it; `add_friction(v, tau)` adds τ_f = b_v∘v + b_c∘tanh(v/ε), allocation-free."""

    friction = None

    def configure_friction(self) -> None:
        fc = self.params.friction_compensation
        if fc is None:
            return
        key = "controller.friction_compensation"
        self.friction_viscous = gains(fc.viscous or [0.0], self.n, f"{key}.viscous")
        self.friction_coulomb = gains(fc.coulomb or [0.0], self.n, f"{key}.coulomb")
        self.friction_epsilon = float(fc.smoothing)
        self.friction = fc
        if self.adds_bias:
            self.neg_damping[:] = 0.0          # b_v holds the model's joint damping too

    def add_friction(self, v, tau) -> None:
        if self.friction is not None:
            _control.friction(v, self.friction_viscous, self.friction_coulomb, self.friction_epsilon, tau)

    def cap_damping(self, inertia, period_ns: int) -> list[int]:
        """Controller.cap_damping, and b_v <= m_i / T likewise (a velocity feedback from a held status)."""
        capped = super().cap_damping(inertia, period_ns)
        if self.friction is not None:
            cap = np.asarray(inertia) / (period_ns * 1e-9)
            capped = sorted(set(capped) | {int(i) for i in np.flatnonzero(self.friction_viscous > cap)})
            np.minimum(self.friction_viscous, cap, out=self.friction_viscous)
        return capped


class JointLaw(FrictionCompensated):
    """The joint-space built-ins: per-joint gains Kp, Kd and the buffers they share."""

    Params = JointGains

    def on_configure(self) -> None:
        n = self.n
        self.kp = gains(DEFAULT_KP if self.params.kp is None else self.params.kp, n, "controller.kp")
        self.kd = gains(DEFAULT_KD if self.params.kd is None else self.params.kd, n, "controller.kd")
        self.tau_g, self.acc, self.zero = np.zeros(n), np.zeros(n), np.zeros(n)
        self.configure_friction()


def gain_bounds(m, d, T: float) -> tuple[np.ndarray, np.ndarray]:
    """(kp_max, kd_max) per joint: beyond either a joint of inertia m and viscous friction d ≥ 0 under
    a torque held over T is unstable whatever the other gain (the module docstring):
    kp_max = 4d / (T (1 − e^(−dT/m))), kd_max = d coth(dT/2m); 4m/T², 2m/T without friction."""
    m, d = np.asarray(m, dtype=float), np.maximum(np.asarray(d, dtype=float), 0.0)
    x = d * T / m
    small = x < 1e-9
    x = np.where(small, 1.0, x)
    return (np.where(small, 4 * m / T ** 2, 4 * d / (T * -np.expm1(-x))),
            np.where(small, 2 * m / T, d / np.tanh(x / 2)))


def unstable_gains(law, kp, kd, inertia, friction, period: float, units,
                   what: str = "loop period") -> tuple[str, str] | None:
    """(key, text) of the gain beyond gain_bounds at `period`, the worst joint named first; None if none."""
    m, d, T = np.asarray(inertia, dtype=float), np.maximum(friction, 0.0), period
    names = law.joint_names or [f"joint {i}" for i in range(law.n)]
    kp_max, kd_max = gain_bounds(m, d, T)
    for key, gain, bound, rule, unit in (("controller.kd", kd, kd_max, ("2m/T", "d·coth(dT/2m)"), units[1]),
                                         ("controller.kp", kp, kp_max, ("4m/T²", "4d/(T(1 − e^(−dT/m)))"),
                                          units[0])):
        bad = [int(i) for i in np.flatnonzero(gain >= bound)]
        if not bad:
            continue
        w = max(bad, key=lambda i: gain[i] / bound[i])
        others = [f"{names[i]} ({gain[i]:g} ≥ {bound[i]:.4g})" for i in bad if i != w]
        where = "" if units[1] == "1/s" else f", m = {m[w]:.4g} kg·m² its inertia" + (
            f", d = {d[w]:g} N·m·s/rad its viscous friction" if d[w] > 0 else "")
        return key, (f"{gain[w]:g} {unit} on {names[w]} is unstable at the {what} T = {T * 1e3:g} ms: it must be "
                     f"below {rule[bool(d[w] > 0)]} = {bound[w]:.4g} {unit}{where}"
                     + (f"; also {', '.join(others)}" if others else "")
                     + " (docs/controllers.md, Gains and the loop period)")
    return None


class StableJointLaw(JointLaw):
    """A joint law whose gains are checked against the loop period at configure, and against the
    status period once the loop has measured it (gains_warning). `unit_inertia`: the gains are
    accelerations (computed_torque's 1/s², 1/s), so m = 1 and d = 0 (the law cancels M and d)."""

    unit_inertia = False

    def _unstable(self, q, period: float, what: str = "loop period"):
        units = ("1/s²", "1/s") if self.unit_inertia else ("N·m/rad", "N·m·s/rad")
        return unstable_gains(self, self.kp, self.kd, *self._inertia_friction(q), period, units, what)

    def _inertia_friction(self, q):
        """(m, d) per joint: the inertia the gains act on and the viscous friction the law leaves."""
        if self.unit_inertia:
            return np.ones(self.n), np.zeros(self.n)
        d = self.plant.GetDampingVector()[self.nv - self.n:] + (self.neg_damping if self.adds_bias else 0.0)
        if self.friction is not None:
            d = d - self.friction_viscous       # compensated: what is left of the joint's friction
        return joint_inertias(self.plant, q)[self.nv - self.n:], d

    def on_configure(self) -> None:
        super().on_configure()
        q = self.q0 if self.q0 is not None else self.plant.GetDefaultPositions()
        if self.params.kp is None or self.params.kd is None:      # the defaults, within half the bounds
            kp_max, kd_max = gain_bounds(*self._inertia_friction(q), self.period)
            if self.params.kd is None:
                np.minimum(self.kd, 0.5 * kd_max, out=self.kd)
            if self.params.kp is None:       # (and half the exact map's kp < 2 kd / T)
                np.minimum(self.kp, np.minimum(0.5 * kp_max, self.kd / self.period), out=self.kp)
        found = self._unstable(q, self.period)
        if found is not None:
            raise ConfigError(*found)

    def gains_warning(self, q, period_ns: int) -> str | None:
        """The gains checked again at the measured q and status period (the loop's start-up line)."""
        found = self._unstable(q, period_ns * 1e-9, "status period")
        return None if found is None else f"{found[0]}: {found[1]}"


class GravityCompensation(JointLaw):
    name = "gravity_compensation"

    def update(self, state, command) -> None:
        self.kernels.gravity(state.q, self.tau_g)
        _control.damping(state.v, self.zero, self.tau_g, -1.0, command.tau)
        self.add_friction(state.v, command.tau)


class JointPD(StableJointLaw):
    name = "joint_pd"

    def update(self, state, command) -> None:
        self.kernels.gravity(state.q, self.tau_g)
        _control.pd(state.q, state.v, state.q_d, state.v_d, self.kp, self.kd, self.tau_g, -1.0, command.tau)
        self.add_friction(state.v, command.tau)


class ComputedTorque(StableJointLaw):
    name = "computed_torque"
    adds_bias = True
    unit_inertia = True

    def update(self, state, command) -> None:
        q, v = state.q, state.v
        _control.pd(q, v, state.q_d, state.v_d, self.kp, self.kd, state.a_d, 1.0, self.acc)
        self.kernels.inverse_dynamics(q, v, self.acc, command.tau)
        _control.damping(v, self.neg_damping, command.tau, 1.0, command.tau)          # + d∘v
        self.add_friction(v, command.tau)


class JointImpedance(StableJointLaw):
    name = "joint_impedance"
    adds_bias = True

    def update(self, state, command) -> None:
        q, v = state.q, state.v
        self.kernels.inverse_dynamics(q, v, state.a_d, self.acc)
        _control.damping(v, self.neg_damping, self.acc, 1.0, self.acc)   # + d∘v
        _control.pd(q, v, state.q_d, state.v_d, self.kp, self.kd, self.acc, 1.0, command.tau)
        self.add_friction(v, command.tau)


class CartesianImpedance(FrictionCompensated):
    name = "cartesian_impedance"
    Params = CartesianGains

    def on_configure(self) -> None:
        p, n = self.params, self.n
        self.K = np.array(p.cartesian_stiffness, dtype=float)
        self.D = np.array(p.cartesian_damping, dtype=float)
        if self.K.shape != (6,) or self.D.shape != (6,):
            raise ConfigError("controller.cartesian_stiffness", "stiffness and damping take 6 values each")
        if np.any(self.K < 0) or np.any(self.D < 0):
            raise ConfigError("controller.cartesian_stiffness", "stiffness and damping must be non-negative")
        if self.end_effector is None:
            raise ConfigError("robot.end_effector", "cartesian_impedance needs the end-effector frame")
        self.joint_damping = p.nullspace_damping
        self.tau_g = np.zeros(n)
        self.X, self.X_goal = np.zeros((4, 4)), np.zeros((4, 4))
        self.J, self.J_goal = np.zeros((6, n)), np.zeros((6, n))
        self.V_goal = np.zeros(6)
        self.configure_friction()

    def update(self, state, command) -> None:
        q, q_d = state.q, state.q_d             # (two at a time: four would build a tuple)
        frame, k = self.end_effector, self.kernels
        k.frame_pose(q_d, frame, self.X_goal)
        k.jacobian(q_d, frame, self.J_goal)
        np.dot(self.J_goal, state.v_d, out=self.V_goal)
        k.frame_pose(q, frame, self.X)
        k.jacobian(q, frame, self.J)
        k.gravity(q, self.tau_g)
        _control.cartesian_impedance(self.X, self.J, state.v, self.X_goal, self.V_goal, self.K, self.D, self.tau_g,
                                     self.joint_damping, command.tau)
        self.add_friction(state.v, command.tau)


BUILTIN_KEYS = ("kp", "kd", "cartesian_stiffness", "cartesian_damping", "nullspace_damping", "friction_compensation")
BUILTINS = {c.name: c for c in (GravityCompensation, JointPD, ComputedTorque, JointImpedance, CartesianImpedance,
                                WholeBody)}


def controller_class(kind: str, search=(), key: str = "controller.type"):
    """The law a config names: a built-in's class, or what "package.module:Name" names (a Controller
    subclass or a function). Modules are found as installed, else in the current directory and the
    folders in `search` (the config's); a ConfigError naming `key` and the module otherwise."""
    if kind in BUILTINS:
        return BUILTINS[kind]
    if ":" not in kind:
        raise ConfigError(key, f"unknown controller {kind!r}: a built-in ({', '.join(BUILTINS)}) or a "
                               "law's import path 'package.module:Name'")
    module_name, _, attr = kind.partition(":")
    try:
        module = _import(module_name, list(dict.fromkeys([Path.cwd(), *map(Path, search)])))
    except ConfigError as e:
        raise ConfigError(key, str(e).split(": ", 1)[-1]) from None
    except Exception as e:        # the module itself failed to import: name it and why
        raise ConfigError(key, f"importing module {module_name!r} failed: {type(e).__name__}: {e}") from None
    target = module
    for part in attr.split("."):
        if not hasattr(target, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            raise ConfigError(key, f"module {module_name!r} ({getattr(module, '__file__', '?')}) has no {attr!r} "
                                   f"(it defines: {', '.join(names[:12])})")
        target = getattr(target, part)
    if isinstance(target, type) and issubclass(target, Controller):
        return target
    if callable(target) and not isinstance(target, type):
        return target
    raise ConfigError(key, f"{kind!r} is neither a hil.Controller subclass nor a function law(state, command)")


def _import(module_name: str, folders: list[Path]):
    """importlib.import_module, else from the first of `folders` that holds the module's top-level
    package (the folder is appended to sys.path and left there for the module's own imports)."""
    prefixes = {".".join(module_name.split(".")[:i]) for i in range(1, module_name.count(".") + 2)}
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name not in prefixes:
            raise                        # the module was found; something it imports is missing
    top = module_name.split(".")[0]
    for folder in folders:
        if (folder / f"{top}.py").is_file() or (folder / top).is_dir():
            if str(folder) not in sys.path:
                sys.path.append(str(folder))
            importlib.invalidate_caches()
            return importlib.import_module(module_name)
    raise ConfigError("controller.type", f"no module named {module_name!r} (not installed, and not in "
                                         f"{', '.join(str(f) for f in folders)})")


def config_folders(cfg) -> list[Path]:
    """Where a run config's law is looked for besides the installed packages: the config's folder."""
    return [] if cfg.source is None else [Path(cfg.source).resolve().parent]


def law_params(cfg: ControllerConfig, law, named: bool):
    """The parameters the controller section gives `law` (a Controller subclass or a function): a
    built-in's Params from the section's own keys, a user's controller.params, a function's none.
    `named`: the config names the law, so the section's keys must fit it (ConfigError otherwise)."""
    is_class = isinstance(law, type) and issubclass(law, Controller)
    builtin = is_class and BUILTINS.get(law.name) is law
    if named:
        if builtin and cfg.params:
            raise ConfigError("controller.params", f"the built-in {cfg.type} takes its keys in the controller "
                                                   "section itself (kp, kd, cartesian_*), not under params")
        if not builtin:
            defaults = ControllerConfig()
            for key in BUILTIN_KEYS:
                if getattr(cfg, key) != getattr(defaults, key):
                    raise ConfigError(f"controller.{key}", f"is a key of the built-in laws; {cfg.type} takes "
                                                           "its parameters under controller.params")
        if not is_class and cfg.params:
            raise ConfigError("controller.params", f"{cfg.type} is a function: it takes no params")
    if builtin:                     # a built-in with a section of its own (whole_body) reads its keys there
        source = getattr(cfg, law.name) if dataclasses.is_dataclass(getattr(cfg, law.name, None)) else cfg
        return law.Params(**{f.name: getattr(source, f.name) for f in dataclasses.fields(law.Params)})
    return cfg.params if is_class else None


def make_controller(plant, cfg: ControllerConfig, end_effector=None, *, period: float = 1e-3, joint_names=None,
                    controller=None, search=(), contacts=(), q0=None) -> Controller:
    """The law, bound to the plant and configured: `controller` (a Controller instance, subclass or a
    function) if given, else the one cfg.type names, its parameters from cfg (law_params)."""
    law = controller if controller is not None else controller_class(cfg.type, search)
    name = law.display_name() if isinstance(law, type) and issubclass(law, Controller) else \
        getattr(law, "name", "") or getattr(law, "__qualname__", type(law).__name__)
    try:
        if isinstance(law, type) and issubclass(law, Controller):
            law = law(law_params(cfg, law, named=controller is None))
        elif not isinstance(law, Controller):
            law_params(cfg, law, named=controller is None)
            law = FunctionController(law)
        law.bind(plant, period=period, joint_names=joint_names, end_effector=end_effector, contacts=contacts, q0=q0)
        return law.configure()
    except ConfigError:
        raise
    except Exception as e:           # the law's __init__ or on_configure: one line naming where
        frame = traceback.extract_tb(e.__traceback__)[-1]
        raise ConfigError("controller.type", f"{name} failed to configure: {type(e).__name__}: {e} "
                                             f"({frame.filename}:{frame.lineno})") from None


def check_controller(cfg) -> None:
    """A run config's law found and its parameters valid, before anything starts (what make_controller
    checks, without building the law): a ConfigError naming controller.type or the key."""
    law = controller_class(cfg.controller.type, config_folders(cfg))
    params = law_params(cfg.controller, law, named=True)
    if isinstance(law, type):
        law.validate_params(params)
