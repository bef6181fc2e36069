"""The public controller API: what a user's control law sees and writes, once per tick.

    from hil import Controller

    class Admittance(Controller):
        @dataclass
        class Params:                      # validated from the config's controller.params
            stiffness: float = 50.0

        def on_configure(self):            # allocate here (self.plant, self.kernels, self.n, self.params)
            self.tau_g = np.zeros(self.n)

        def update(self, state, command):  # once per tick; allocates nothing
            self.kernels.gravity(state.q, self.tau_g)
            np.negative(self.tau_g, out=command.tau)

A control law is a `Controller` subclass (the lifecycle hooks of hil.lifecycle, after ros2_control's
controllers) or a plain function `law(state, command)` (libfranka's callback style, wrapped by
`FunctionController`). `state` (a `State`) holds read-only arrays that the loop refreshes in place
every tick; `command` (a `Command`) holds the preallocated arrays the law writes. Saturation, rate
limits, the safe command and the safety state machine stay outside the law (hil.safety).

Sign conventions are MultibodyPlant's whatever the protocol: τ is the generalized force on the
robot's joints, τ_ext = Σ J_Bᵀ F_B the generalized force the environment applies (the iiwa reports it
so; the Panda's tau_ext_hat_filtered and the iiwa's measured and commanded torques are negated on
the wire, and the loop undoes that).
"""
from __future__ import annotations

import dataclasses
import difflib

import numpy as np

from drivers.core.schema import ConfigError, load
from dynamics_cy.errors import HilstackError

from .lifecycle import Lifecycle


class ControllerFault(HilstackError, RuntimeError):
    """Raise it from a law's update() to stop the robot on purpose, for a condition the law detects
    (a foot lost, no solution): the loop latches a CONTROLLER fault whose reason is the message, sends
    the safe command and logs one line, without the traceback an error in a law gets."""


class RebindError(HilstackError, AttributeError):
    """A law assigned a new array to one of State's or Command's (`command.tau = -tau_g`): the loop
    keeps the arrays it made and sends command.tau's, so a new one would be silently ignored."""


def _refuse_rebind(what: str, current, value, why: str, fix: str) -> None:
    if value is current:            # `command.tau += x`: numpy's in-place add, the same array back
        return
    raise RebindError(f"{what} cannot be rebound: {why} (got {_described(value)}, it is "
                      f"{current.dtype}{current.shape}); {fix}")


def _described(value) -> str:
    """'ndarray float32 of shape (3,)', 'list of shape (7,)': what a law handed over."""
    dtype = getattr(value, "dtype", None)
    return f"{type(value).__name__}{'' if dtype is None else f' {dtype}'} of shape {np.shape(value)}"


def _readonly(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


class State:
    """What the law sees at a tick (read-only views, refreshed in place by the loop, that cannot be rebound:
    RebindError; copy what you keep).

    q, v                  the measured generalized positions and velocities, MultibodyPlant's: an arm's
                          joints (rad, rad/s); a legged robot's base first (q: quaternion wxyz and
                          p_WB, v: ω_WB and v_WB in W, as the free body's) and then its joints
    tau_measured          the torque the (actuated) joints measure (N·m)
    tau_commanded         the torque the robot reports as commanded (N·m)
    tau_external          the robot's estimate of the external joint torque Σ J_Bᵀ F_B (N·m);
                          zeros where the protocol carries none (has_tau_external False)
    t                     the robot's clock (s): the newest status's time, continuous across restarts
    period                the loop period (s)
    tick                  the loop's tick count
    q_d, v_d, a_d         the trajectory's desired positions, velocities, accelerations at t
    wrench                a wrist force/torque sensor's F_S = [τ; f] (N·m, N; Drake's SpatialForce order:
                          tx ty tz fx fy fz) in its frame S, from the newest lcmt_force_torque on
                          sensors.ft.channel; NaN without a sensor (has_wrench False), before its first
                          reading, and while the newest is older than sensors.ft.timeout
    wrench_age            s since the newest reading arrived (inf before the first, or without a sensor)
    gripper               the gripper's status [w, ẇ, f]: width between the fingers (m), its rate (m/s,
                          positive opening), grip force |f| (N) from the newest lcmt_schunk_wsg_status on
                          gripper.status_channel; NaN without a gripper (has_gripper False), before its
                          first status and while the newest is older than gripper.timeout
    gripper_age           s since the newest gripper status arrived (inf before the first, or no gripper)
    contact               the feet's contact as the robot reports it (a ContactState), else None
    """

    __slots__ = ("q", "v", "tau_measured", "tau_commanded", "tau_external", "has_tau_external", "clock", "period",
                 "tick", "q_d", "v_d", "a_d", "wrench", "has_wrench", "_ft", "contact", "gripper", "has_gripper",
                 "_grip")
    ARRAYS = frozenset(("q", "v", "tau_measured", "tau_commanded", "tau_external", "q_d", "v_d", "a_d", "wrench",
                        "gripper"))

    def __init__(self, q, v, tau_measured, tau_commanded, tau_external, q_d, v_d, a_d, period: float,
                 has_tau_external: bool = True, ft=None, clock=None, contact=None, gripper=None):
        arrays = dict(q=q, v=v, tau_measured=tau_measured, tau_commanded=tau_commanded, tau_external=tau_external,
                      q_d=q_d, v_d=v_d, a_d=a_d, wrench=np.full(6, np.nan) if ft is None else ft.wrench,
                      gripper=np.full(3, np.nan) if gripper is None else gripper.status)
        for name, array in arrays.items():
            object.__setattr__(self, name, _readonly(array))
        self.has_tau_external = has_tau_external
        self.clock = RobotTime() if clock is None else clock     # anything with robot_ns (ns)
        self.period, self.tick = float(period), 0
        self._ft, self.has_wrench = ft, ft is not None     # ft: hil.ft_sensor.WrenchSensor (wrench, age_s)
        self.contact = contact
        self._grip, self.has_gripper = gripper, gripper is not None   # hil.gripper.GripperLink (status, age_s)

    def __setattr__(self, name, value):
        """The arrays are the loop's, refreshed in place: rebinding one is a RebindError (the loop's own
        per-tick write, state.tick, goes through the slot, not here)."""
        if name in State.ARRAYS:
            _refuse_rebind(f"state.{name}", getattr(self, name), value,
                           "the loop refreshes its own array in place each tick",
                           f"it is read-only: copy what you keep into an array of your own "
                           f"(np.copyto(self.mine, state.{name}))")
        object.__setattr__(self, name, value)

    @classmethod
    def of(cls, n: int, period: float = 1e-3, t: float = 0.0, **arrays) -> "State":
        """A state of n joints outside the loop (tests, benchmarks): the arrays named (q=..., v=...,
        tau_external=..., q_d=...) copied, every other one zeros."""
        names = ("q", "v", "tau_measured", "tau_commanded", "tau_external", "q_d", "v_d", "a_d")
        unknown = set(arrays) - set(names)
        if unknown:
            raise TypeError(f"State.of: unknown arrays {sorted(unknown)}; known: {', '.join(names)}")
        state = cls(*(np.array(arrays.get(name, np.zeros(n)), dtype=float) for name in names), period=period)
        state.clock.robot_ns = round(t * 1e9)
        return state

    @property
    def t(self) -> float:
        """The robot's clock (s) at the newest status."""
        return self.clock.robot_ns * 1e-9

    @property
    def wrench_age(self) -> float:
        """Seconds since the newest force/torque reading arrived, at this tick (inf: none yet, or no sensor)."""
        return np.inf if self._ft is None else self._ft.age_s

    @property
    def gripper_age(self) -> float:
        """Seconds since the newest gripper status arrived, at this tick (inf: none yet, or no gripper)."""
        return np.inf if self._grip is None else self._grip.age_s


class ContactState:
    """The contacts a legged robot reports with each status, refreshed in place: `names` (the feet, in
    the status's order, known from the first status), `in_contact` (bool, one per foot) and `force`
    (the force on each foot from the ground, N, in W: one row per foot)."""

    __slots__ = ("names", "in_contact", "force")

    def __init__(self, names=()):
        self.names = tuple(names)
        self.in_contact = np.zeros(len(self.names), dtype=bool)
        self.force = np.zeros((len(self.names), 3))


class RobotTime:
    """The robot's clock in ns, for a State outside the loop (in the loop: hil.hardware's status timing)."""

    __slots__ = ("robot_ns",)

    def __init__(self, robot_ns: int = 0):
        self.robot_ns = robot_ns


class Command:
    """What the law writes at a tick: `tau` (N·m: every joint, every tick; it holds the previous tick's
    values, not zeros), and for the position and
    velocity command modes `q` (rad) and `v` (rad/s), which the loop fills with the trajectory's q_d
    and v_d + gain (q_d − q) before calling the law (overwrite them to command other setpoints).
    `gripper` [w m, f N]: the gripper's target width and grip-force limit, kept between ticks (NaN: none
    yet); the loop sends it to the gripper's driver when it changes (hil.gripper), and the trajectory's
    gripper track writes it as a segment that names one begins. Write into the arrays (`command.tau[:] = ...`,
    `out=command.tau`): rebinding one raises RebindError, since the loop sends its own."""

    __slots__ = ("tau", "q", "v", "gripper")

    def __init__(self, n: int):
        for name, array in (("tau", np.zeros(n)), ("q", np.zeros(n)), ("v", np.zeros(n)),
                            ("gripper", np.full(2, np.nan))):
            object.__setattr__(self, name, array)

    def __setattr__(self, name, value):
        """The arrays are the loop's, sent after update(): rebinding one is a RebindError naming the fix
        (raised in a law's update(), a CONTROLLER fault on that tick)."""
        _refuse_rebind(f"command.{name}", getattr(self, name), value, "the loop sends the array it made, not a new one",
                       f"write into it: out=command.{name} of a numpy function, np.copyto(command.{name}, x) "
                       f"or command.{name}[:] = x")


class Controller(Lifecycle):
    """Base of every control law, the built-in ones included.

    Subclass it and write `update(self, state, command)`; optionally `on_configure()` (allocate: the
    model is known), `on_activate()` (the safety enters RUNNING: reset per-run state) and
    `on_deactivate()` (it leaves RUNNING). Declare the law's parameters as a nested dataclass `Params`;
    a config's `controller.params` is validated into it (unknown keys, types and bounds reported with
    the file and key), or pass `params=` (an instance or a mapping) when building the law in Python.

    Available from on_configure on: `plant` (the shared, read-only model's MultibodyPlant), `kernels`
    (the law's own allocation-free dynamics_cy Kernels), `n` (the actuated joints: command.tau's
    size), `nq`, `nv` (the plant's positions and velocities: state.q's and state.v's sizes; an arm's
    are n), `joint_names`, `end_effector` (the frame Cartesian laws use), `contacts` (a legged
    robot's feet: drivers.legged_contacts' contact points and surfaces), `q0` (a legged robot's
    standing positions, else None), `period` (s), `params`.

    `adds_bias`: the law's τ includes C(q, v) v + d∘v (a model-based law); behind a driver that runs
    its own inverse dynamics (robot.command position_and_torque) the loop subtracts it.
    """

    name = ""
    Params = None
    adds_bias = False

    def __init__(self, params=None):
        self._params_in = params

    @classmethod
    def display_name(cls) -> str:
        return cls.name or f"{cls.__module__}:{cls.__qualname__}"

    @classmethod
    def validate_params(cls, data, key: str = "controller.params"):
        """`data` (a mapping, an instance of Params, or None) as an instance of Params; a ConfigError
        naming `key` and the field for anything wrong."""
        if cls.Params is None:
            if data:
                raise ConfigError(key, f"{cls.display_name()} takes no parameters (it declares no Params), "
                                       f"got {sorted(data)}")
            return None
        if isinstance(data, cls.Params):
            return data
        if dataclasses.is_dataclass(cls.Params):
            return load(cls.Params, data, key)
        return _load_model(cls.Params, data, key)

    def bind(self, plant, *, period: float, joint_names=None, end_effector=None, contacts=(), q0=None) -> "Controller":
        """Attaches the law to the robot (the loop does this before configure()); returns self."""
        self.plant, self.period = plant, float(period)
        self.kernels = plant.kernels()
        self.nq, self.nv = plant.num_positions(), plant.num_velocities()
        self.joint_names = list(joint_names or [])
        self.n = len(self.joint_names) or self.nv
        self.end_effector, self.contacts = end_effector, list(contacts)
        self.q0 = None if q0 is None else np.array(q0, dtype=float)
        self.neg_damping = -plant.GetDampingVector()[self.nv - self.n:]
        self.params = self.validate_params(getattr(self, "_params_in", None))   # (an __init__ without super())
        self.name = self.display_name() if not self.name else self.name
        return self

    def new_state(self, **arrays) -> State:
        """A State shaped for this bound law, outside the loop (tests, notebooks): the arrays named
        (q, v: nq and nv; tau_measured, ..., q_d, v_d, a_d: n) copied, q else the plant's default
        positions (a legged robot: the config's standing pose when built by hil.make_law), every
        other array zeros; a legged robot's `contact` has its feet, all in contact, no force."""
        names = ("q", "v", "tau_measured", "tau_commanded", "tau_external", "q_d", "v_d", "a_d")
        unknown = set(arrays) - set(names)
        if unknown:
            raise TypeError(f"new_state: unknown arrays {sorted(unknown)}; known: {', '.join(names)}")
        q0 = self.q0
        sizes = dict(q=self.nq, v=self.nv)
        values = []
        for name in names:
            default = (self.plant.GetDefaultPositions() if q0 is None else q0) if name == "q" else \
                np.zeros(sizes.get(name, self.n))
            value = np.array(arrays.get(name, default), dtype=float)
            if value.shape != (sizes.get(name, self.n),):
                raise ValueError(f"new_state: {name} needs {sizes.get(name, self.n)} values, got {value.shape}")
            values.append(value)
        contact = None
        if self.contacts:
            feet = [c.frame.name() for c in self.contacts]
            contact = ContactState(dict.fromkeys(feet))
            contact.in_contact[:] = True
        return State(*values, period=self.period, contact=contact)

    def new_command(self) -> Command:
        """A Command for this bound law (its n joints)."""
        return Command(self.n)

    def update(self, state: State, command: Command) -> None:
        """The law: write command.tau (and command.q / command.v in those modes); allocate nothing."""
        raise NotImplementedError(f"{type(self).__name__}.update(state, command)")

    def metrics(self) -> dict:
        """The law's own figures of the run, {name: a number, string, list or mapping}: called once when
        the loop's summary is made (after the run, never in the tick), shown as the summary's
        `controller_metrics` (its text, --json, hil regress's report and `scenario.criteria.summary`
        `controller_metrics.NAME`). Default: none."""
        return {}

    def cap_damping(self, inertia, period_ns: int) -> list[int]:
        """Limits the compensated joint damping to d_i <= m_i / T (T the status period), for laws that
        add d∘v (hil.controllers' docstring says why); returns the joints capped."""
        cap = np.asarray(inertia) / (period_ns * 1e-9)
        capped = [int(i) for i in np.flatnonzero(-self.neg_damping > cap)] if self.adds_bias else []
        np.maximum(self.neg_damping, -cap, out=self.neg_damping)
        return capped


class FunctionController(Controller):
    """A plain function as a law: `law(state, command)` writes command.tau (allocation-free), or
    returns the torque (an array of n values, copied into command.tau; returning a new array each
    tick allocates)."""

    def __init__(self, law, name: str | None = None):
        super().__init__()
        if not callable(law):
            raise TypeError(f"a control law must be callable, got {type(law).__name__}")
        self.law = law
        self.name = name or f"{getattr(law, '__module__', '?')}:{getattr(law, '__qualname__', repr(law))}"

    def update(self, state: State, command: Command) -> None:
        tau = self.law(state, command)
        if tau is not None:
            try:
                np.copyto(command.tau, tau)
            except (TypeError, ValueError) as e:       # a wrong shape or a dtype that does not cast
                raise ValueError(f"{self.name} returned {_described(tau)}; command.tau takes {self.n} torques "
                                 f"(float64): {e}") from None


def _load_model(model, data, key: str):
    """A pydantic model's instance from a mapping, with drivers.core.schema's error contract (unknown keys
    refused with a did-you-mean, the first error named by its key)."""
    from pydantic import ValidationError
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(key, f"must be a mapping of keys, got {data!r}")
    known = list(model.model_fields)
    for name in data:
        if name not in known:
            close = difflib.get_close_matches(str(name), known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(known)})"
            raise ConfigError(f"{key}.{name}", f"unknown key{hint}")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        error = e.errors(include_url=False)[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"{key}.{where}" if where else key, error["msg"]) from None
