"""A small MathematicalProgram with pydrake.solvers' names and semantics.

Decision variables are `Variable` objects (numpy object arrays of them, as pydrake's symbolic
variables). Evaluators map x ∈ ℝⁿ to y ∈ ℝᵐ; instead of Drake's AutoDiff they give explicit
gradients:

    y = evaluator.Eval(x)                    # (m,)
    y, dy_dx = evaluator.EvalWithGradient(x)  # (m,), (m, n)

A Constraint adds bounds lower_bound() ≤ y ≤ upper_bound(); a Cost has m = 1. A Binding ties an
evaluator to the program's variables it reads, in order.
"""
from __future__ import annotations

import itertools

import numpy as np

from .autodiff import seeded, value_and_gradient


class Variable:
    """A scalar decision variable: a name and a unique id (pydrake.symbolic.Variable)."""

    __slots__ = ("_name", "_id")
    _ids = itertools.count()

    def __init__(self, name: str):
        self._name = str(name)
        self._id = next(Variable._ids)

    def get_name(self) -> str:
        return self._name

    def get_id(self) -> int:
        return self._id

    def __repr__(self) -> str:
        return self._name


def _as_vector(values, n: int | None, what: str) -> np.ndarray:
    a = np.asarray(values, dtype=float).reshape(-1)
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{what} has {a.shape[0]} elements; expected {n}")
    return a


def _as_bounds(lb, ub, n: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    lo = np.broadcast_to(np.asarray(lb, dtype=float).reshape(-1), (n,)).copy()
    hi = np.broadcast_to(np.asarray(ub, dtype=float).reshape(-1), (n,)).copy()
    if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
        raise ValueError(f"{what}: bounds must satisfy lower <= upper, got {lo} and {hi}")
    return lo, hi


class EvaluatorBase:
    """y = f(x), x ∈ ℝⁿ (num_vars), y ∈ ℝᵐ (num_outputs), with dy/dx. Subclasses implement
    `_eval(x, with_gradient) -> (y, dy_dx or None)`."""

    def __init__(self, num_outputs: int, num_vars: int, description: str = ""):
        self._num_outputs, self._num_vars = int(num_outputs), int(num_vars)
        self._description = description

    def num_outputs(self) -> int:
        return self._num_outputs

    def num_vars(self) -> int:
        return self._num_vars

    def get_description(self) -> str:
        return self._description

    def set_description(self, description: str) -> None:
        self._description = str(description)

    def _eval(self, x: np.ndarray, with_gradient: bool):
        raise NotImplementedError

    def Eval(self, x) -> np.ndarray:
        return self._eval(_as_vector(x, self._num_vars, f"{type(self).__name__}.Eval x"), False)[0]

    def EvalWithGradient(self, x) -> tuple[np.ndarray, np.ndarray]:
        """(y, dy/dx) with dy/dx of shape (num_outputs, num_vars)."""
        return self._eval(_as_vector(x, self._num_vars, f"{type(self).__name__}.EvalWithGradient x"), True)

    def __repr__(self) -> str:
        d = f" '{self._description}'" if self._description else ""
        return f"<{type(self).__name__}{d} {self._num_outputs} outputs, {self._num_vars} vars>"


class Constraint(EvaluatorBase):
    """lower_bound() ≤ f(x) ≤ upper_bound(); rows with equal bounds are equalities."""

    def __init__(self, num_constraints: int, num_vars: int, lb, ub, description: str = ""):
        super().__init__(num_constraints, num_vars, description)
        self._lb, self._ub = _as_bounds(lb, ub, num_constraints, type(self).__name__)

    def num_constraints(self) -> int:
        return self._num_outputs

    def lower_bound(self) -> np.ndarray:
        return self._lb.copy()

    def upper_bound(self) -> np.ndarray:
        return self._ub.copy()

    def set_bounds(self, lower_bound, upper_bound) -> None:
        self._lb, self._ub = _as_bounds(lower_bound, upper_bound, self._num_outputs, type(self).__name__)

    def UpdateLowerBound(self, new_lb) -> None:
        self.set_bounds(new_lb, self._ub)

    def UpdateUpperBound(self, new_ub) -> None:
        self.set_bounds(self._lb, new_ub)

    def violation(self, y) -> np.ndarray:
        """max(lb - y, y - ub, 0) per row (our addition; Drake leaves this to the solvers)."""
        y = np.asarray(y, dtype=float)
        return np.maximum(np.maximum(self._lb - y, y - self._ub), 0.0)

    def CheckSatisfied(self, x, tol: float = 1e-6) -> bool:
        return bool(np.all(self.violation(self.Eval(x)) <= tol))

    def feasibility_residual(self, x) -> tuple[np.ndarray, np.ndarray]:
        """(r, ∂r/∂x) for Solve's feasibility phase (our addition): r = 0 exactly where the constraint
        holds, |r| grows with the violation, and rows that must stay satisfied (equalities) keep their
        gradient. Default: r = y - clip(y, lb, ub), gradient rows of strictly satisfied inequalities zeroed.
        Subclasses override it with a better-conditioned residual of the same zero set."""
        y, dy = self.EvalWithGradient(x)
        r = y - np.minimum(np.maximum(y, self._lb), self._ub)
        return r, dy * ((self._lb == self._ub) | (r != 0.0))[:, None]


class LinearConstraint(Constraint):
    """lb ≤ A x ≤ ub."""

    def __init__(self, A, lb, ub, description: str = ""):
        A = np.atleast_2d(np.asarray(A, dtype=float))
        super().__init__(A.shape[0], A.shape[1], lb, ub, description)
        self._A = A

    def GetDenseA(self) -> np.ndarray:
        return self._A.copy()

    def _eval(self, x, with_gradient):
        return self._A @ x, (self._A if with_gradient else None)


class LinearEqualityConstraint(LinearConstraint):
    """A x = b."""

    def __init__(self, Aeq, beq, description: str = ""):
        b = np.asarray(beq, dtype=float).reshape(-1)
        super().__init__(Aeq, b, b, description)


class BoundingBoxConstraint(LinearConstraint):
    """lb ≤ x ≤ ub."""

    def __init__(self, lb, ub, description: str = ""):
        n = np.broadcast(np.asarray(lb).reshape(-1), np.asarray(ub).reshape(-1)).shape[0]
        super().__init__(np.eye(n), lb, ub, description)

    def _eval(self, x, with_gradient):
        return x.copy(), (self._A if with_gradient else None)


class Cost(EvaluatorBase):
    """A scalar cost f(x)."""

    def __init__(self, num_vars: int, description: str = ""):
        super().__init__(1, num_vars, description)


class LinearCost(Cost):
    """aᵀx + b."""

    def __init__(self, a, b: float = 0.0, description: str = ""):
        self._a = np.asarray(a, dtype=float).reshape(-1)
        self._b = float(b)
        super().__init__(self._a.shape[0], description)

    def a(self) -> np.ndarray:
        return self._a.copy()

    def b(self) -> float:
        return self._b

    def _eval(self, x, with_gradient):
        return np.array([self._a @ x + self._b]), (self._a[None, :] if with_gradient else None)


class QuadraticCost(Cost):
    """½ xᵀQx + bᵀx + c."""

    def __init__(self, Q, b, c: float = 0.0, description: str = ""):
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        self._Q = 0.5 * (Q + Q.T)
        self._b = _as_vector(b, Q.shape[0], "QuadraticCost b")
        self._c = float(c)
        super().__init__(Q.shape[0], description)

    def Q(self) -> np.ndarray:
        return self._Q.copy()

    def b(self) -> np.ndarray:
        return self._b.copy()

    def c(self) -> float:
        return self._c

    def _eval(self, x, with_gradient):
        Qx = self._Q @ x
        y = np.array([0.5 * x @ Qx + self._b @ x + self._c])
        return y, ((Qx + self._b)[None, :] if with_gradient else None)


class _BindingType(type):
    """Binding[C] is the binding class of evaluator type C, as pydrake's template: Binding[C](c, v) binds
    a C, and isinstance(b, Binding[C]) holds when b's evaluator is a C (a Binding[LinearConstraint] is
    usable as a Binding[Constraint], as pydrake converts it implicitly)."""

    _typed: dict = {}

    def __getitem__(cls, evaluator_type):
        if cls is not Binding:
            raise TypeError(f"{cls.__name__} is already a Binding of one evaluator type")
        if not (isinstance(evaluator_type, type) and issubclass(evaluator_type, EvaluatorBase)):
            raise TypeError(f"Binding[...] takes an evaluator class, got {evaluator_type!r}")
        typed = _BindingType._typed.get(evaluator_type)
        if typed is None:
            typed = _BindingType._typed[evaluator_type] = _BindingType(
                f"Binding[{evaluator_type.__name__}]", (Binding,), {"__slots__": (), "_type": evaluator_type,
                                                                    "__module__": Binding.__module__})
        return typed

    def __instancecheck__(cls, obj):
        t = cls.__dict__.get("_type")
        if t is None:
            return type.__instancecheck__(cls, obj)
        return type.__instancecheck__(Binding, obj) and isinstance(obj.evaluator(), t)


class Binding(metaclass=_BindingType):
    """An evaluator bound to decision variables (pydrake.solvers.Binding): Binding[C](c, v), or
    Binding[C](binding) to view another binding as one of C."""

    __slots__ = ("_evaluator", "_variables")
    _type = EvaluatorBase

    def __init__(self, c, v=None):
        if v is None:
            if not isinstance(c, Binding):
                raise TypeError(f"{type(self).__name__}(c, v) binds an evaluator to variables; "
                                f"{type(self).__name__}(binding) views a binding; got {type(c).__name__} alone")
            c, v = c.evaluator(), c.variables()
        if not isinstance(c, self._type):
            raise TypeError(f"{type(self).__name__} binds a {self._type.__name__}, got {type(c).__name__}")
        v = np.asarray(v, dtype=object).reshape(-1)
        if v.shape[0] != c.num_vars():
            raise ValueError(f"{type(c).__name__} takes {c.num_vars()} variables; {v.shape[0]} were given")
        self._evaluator, self._variables = c, v

    def evaluator(self) -> EvaluatorBase:
        return self._evaluator

    def variables(self) -> np.ndarray:
        return self._variables

    def __eq__(self, other) -> bool:
        return isinstance(other, Binding) and self._evaluator is other._evaluator and \
            len(self._variables) == len(other._variables) and all(a is b for a, b in zip(self._variables,
                                                                                         other._variables))

    def __hash__(self) -> int:
        return hash((id(self._evaluator), tuple(id(x) for x in self._variables)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._evaluator!r} on {list(self._variables)}>"


class PyFunctionConstraint(Constraint):
    """lb ≤ func(x) ≤ ub for a Python function of x (m = len(lb)); see dynamics_cy.planning.autodiff for
    how its gradient is taken. func gets a float array for values and an object array of Duals for
    gradients, and returns an array of m values (1-D or 2-D), as Drake requires."""

    def __init__(self, num_vars: int, func, lb, ub, description: str = ""):
        lb = np.asarray(lb, dtype=float).reshape(-1)
        super().__init__(lb.shape[0], num_vars, lb, ub, description)
        self._func = func

    def _eval(self, x, with_gradient):
        return _call(self, x, with_gradient, vector=True)


class PyFunctionCost(Cost):
    """A cost given as a Python function of x returning a scalar (0-dimensional), as Drake requires."""

    def __init__(self, num_vars: int, func, description: str = ""):
        super().__init__(num_vars, description)
        self._func = func

    def _eval(self, x, with_gradient):
        return _call(self, x, with_gradient, vector=False)


def _call(evaluator, x: np.ndarray, with_gradient: bool, vector: bool):
    """Calls a PyFunction evaluator's function on x (floats, or Duals for the gradient) and checks the
    shape of what it returns."""
    y = np.asarray(evaluator._func(seeded(x) if with_gradient else x.copy()))
    m = evaluator.num_outputs()
    if (y.ndim in (1, 2) if vector else y.ndim == 0) and y.size == m:
        if not with_gradient:
            return y.astype(float).reshape(-1), None
        return value_and_gradient(y.reshape(-1), x.shape[0])
    shape = "of .ndim 1 or 2 (a vector)" if vector else "of .ndim 0 (a scalar)"
    raise RuntimeError(f"{type(evaluator).__name__}: the function must return an array {shape} and .size {m}; "
                       f"got .ndim {y.ndim} and .size {y.size}")


def _overload(method: str, args: tuple, kwargs: dict, *signatures: tuple) -> tuple[int, dict]:
    """The first of signatures (tuples of parameter names; a trailing "description" is optional) that takes
    args and kwargs: (its index, the arguments by name)."""
    for k, names in enumerate(signatures):
        required = len(names) - (names[-1] == "description")
        if len(args) > len(names) or not set(kwargs) <= set(names[len(args):]):
            continue
        bound = dict(zip(names, args), **kwargs)
        if all(n in bound for n in names[:required]):
            return k, bound
    forms = " or ".join(f"{method}({', '.join(names)})" for names in signatures)
    raise TypeError(f"{method}: incompatible arguments; call it as {forms}")


class MathematicalProgram:
    """Decision variables, costs and constraints; solve it with `dynamics_cy.planning.Solve`."""

    def __init__(self):
        self._vars: list[Variable] = []
        self._index: dict[Variable, int] = {}
        self._guess = np.zeros(0)
        self._bbox: list[Binding] = []
        self._linear: list[Binding] = []
        self._linear_eq: list[Binding] = []
        self._generic: list[Binding] = []
        self._costs: list[Binding] = []

    # --- variables ---------------------------------------------------------------------------
    def NewContinuousVariables(self, rows: int, cols=None, name: str = "x") -> np.ndarray:
        """rows (or rows x cols) new variables named name(i) (or name(i,j)); initial guess NaN."""
        if isinstance(cols, str):
            cols, name = None, cols
        shape = (int(rows),) if cols is None else (int(rows), int(cols))
        labels = [f"{name}({i})" for i in range(shape[0])] if cols is None else \
            [f"{name}({i},{j})" for i in range(shape[0]) for j in range(shape[1])]
        new = [Variable(s) for s in labels]
        for v in new:
            self._index[v] = len(self._vars)
            self._vars.append(v)
        self._guess = np.r_[self._guess, np.full(len(new), np.nan)]
        out = np.empty(len(new), dtype=object)
        out[:] = new
        return out.reshape(shape)

    def num_vars(self) -> int:
        return len(self._vars)

    def decision_variables(self) -> np.ndarray:
        out = np.empty(len(self._vars), dtype=object)
        out[:] = self._vars
        return out

    def decision_variable(self, i: int) -> Variable:
        return self._vars[i]

    def FindDecisionVariableIndex(self, var: Variable) -> int:
        try:
            return self._index[var]
        except KeyError:
            raise ValueError(f"{var!r} is not a decision variable of this program") from None

    def FindDecisionVariableIndices(self, vars) -> np.ndarray:
        return np.array([self.FindDecisionVariableIndex(v) for v in np.asarray(vars, dtype=object).reshape(-1)],
                        dtype=int)

    # --- constraints -------------------------------------------------------------------------
    def _add_constraint(self, b: Binding) -> Binding:
        self.FindDecisionVariableIndices(b.variables())
        e = b.evaluator()
        target = self._bbox if isinstance(e, BoundingBoxConstraint) else \
            self._linear_eq if isinstance(e, LinearEqualityConstraint) else \
            self._linear if isinstance(e, LinearConstraint) else self._generic
        target.append(b)
        return b

    def AddConstraint(self, *args, **kwargs) -> Binding:
        """AddConstraint(binding), AddConstraint(constraint, vars), or AddConstraint(func, lb, ub, vars,
        description="") for a Python function lb ≤ func(x) ≤ ub (PyFunctionConstraint) → Binding[Constraint]."""
        k, a = _overload("AddConstraint", args, kwargs, ("binding",), ("constraint", "vars"),
                         ("func", "lb", "ub", "vars", "description"))
        if k == 0:
            return self._add_constraint(Binding[Constraint](a["binding"]))
        if k == 1:
            return self._add_constraint(Binding[Constraint](a["constraint"], a["vars"]))
        v = np.asarray(a["vars"], dtype=object).reshape(-1)
        return self._add_constraint(Binding[Constraint](
            PyFunctionConstraint(v.shape[0], a["func"], a["lb"], a["ub"], a.get("description", "")), v))

    def AddBoundingBoxConstraint(self, lb, ub, vars) -> Binding:
        v = np.asarray(vars, dtype=object).reshape(-1)
        lo, hi = _as_bounds(lb, ub, v.shape[0], "AddBoundingBoxConstraint")
        return self._add_constraint(Binding[BoundingBoxConstraint](BoundingBoxConstraint(lo, hi), v))

    def AddLinearConstraint(self, A, lb, ub, vars) -> Binding:
        return self._add_constraint(Binding[LinearConstraint](LinearConstraint(A, lb, ub), vars))

    def AddLinearEqualityConstraint(self, Aeq, beq, vars) -> Binding:
        return self._add_constraint(Binding[LinearEqualityConstraint](LinearEqualityConstraint(Aeq, beq), vars))

    def bounding_box_constraints(self) -> list[Binding]:
        return list(self._bbox)

    def linear_constraints(self) -> list[Binding]:
        return list(self._linear)

    def linear_equality_constraints(self) -> list[Binding]:
        return list(self._linear_eq)

    def generic_constraints(self) -> list[Binding]:
        return list(self._generic)

    def GetAllConstraints(self) -> list[Binding]:
        return self._generic + self._bbox + self._linear + self._linear_eq

    # --- costs -------------------------------------------------------------------------------
    def _add_cost(self, b: Binding) -> Binding:
        self.FindDecisionVariableIndices(b.variables())
        self._costs.append(b)
        return b

    def AddCost(self, *args, **kwargs) -> Binding:
        """AddCost(binding), AddCost(obj, vars) for a Cost, or AddCost(func, vars, description="") for a
        Python function returning a scalar (PyFunctionCost) → Binding[Cost]."""
        first = args[0] if args else kwargs.get("func")
        if callable(first) and not isinstance(first, (EvaluatorBase, Binding)):
            _, a = _overload("AddCost", args, kwargs, ("func", "vars", "description"))
            v = np.asarray(a["vars"], dtype=object).reshape(-1)
            return self._add_cost(Binding[Cost](PyFunctionCost(v.shape[0], a["func"], a.get("description", "")), v))
        k, a = _overload("AddCost", args, kwargs, ("binding",), ("obj", "vars"))
        return self._add_cost(Binding[Cost](a["binding"]) if k == 0 else Binding[Cost](a["obj"], a["vars"]))

    def AddLinearCost(self, a, b, vars=None) -> Binding:
        """AddLinearCost(a, b, vars) or AddLinearCost(a, vars): aᵀx + b."""
        if vars is None:
            b, vars = 0.0, b
        return self._add_cost(Binding[LinearCost](LinearCost(a, b), vars))

    def AddQuadraticCost(self, Q, b, vars, is_convex=None) -> Binding:
        """½ xᵀQx + bᵀx (is_convex is accepted for pydrake compatibility and not needed)."""
        return self._add_cost(Binding[QuadraticCost](QuadraticCost(Q, b), vars))

    def AddQuadraticErrorCost(self, Q, x_desired, vars) -> Binding:
        """(x - x_d)ᵀ Q (x - x_d) = ½ xᵀ(2Q)x - 2 x_dᵀQ x + x_dᵀQ x_d."""
        Q = np.atleast_2d(np.asarray(Q, dtype=float))
        Qs = 0.5 * (Q + Q.T)
        xd = _as_vector(x_desired, Q.shape[0], "AddQuadraticErrorCost x_desired")
        return self._add_cost(Binding[QuadraticCost](QuadraticCost(2 * Qs, -2 * Qs @ xd, xd @ Qs @ xd), vars))

    def GetAllCosts(self) -> list[Binding]:
        return list(self._costs)

    # --- initial guess and evaluation --------------------------------------------------------
    def SetInitialGuess(self, vars, values) -> None:
        idx = self.FindDecisionVariableIndices(vars)
        self._guess[idx] = _as_vector(values, idx.shape[0], "SetInitialGuess values")

    def SetInitialGuessForAllVariables(self, values) -> None:
        self._guess[:] = _as_vector(values, self.num_vars(), "SetInitialGuessForAllVariables values")

    def GetInitialGuess(self, vars):
        """The initial guess of one variable (float) or an array of them (NaN where unset)."""
        if isinstance(vars, Variable):
            return float(self._guess[self.FindDecisionVariableIndex(vars)])
        v = np.asarray(vars, dtype=object)
        return self._guess[self.FindDecisionVariableIndices(v)].reshape(v.shape)

    def initial_guess(self) -> np.ndarray:
        return self._guess.copy()

    def GetBindingVariableValues(self, binding: Binding, prog_var_vals) -> np.ndarray:
        x = _as_vector(prog_var_vals, self.num_vars(), "prog_var_vals")
        return x[self.FindDecisionVariableIndices(binding.variables())]

    def EvalBinding(self, binding: Binding, prog_var_vals) -> np.ndarray:
        return binding.evaluator().Eval(self.GetBindingVariableValues(binding, prog_var_vals))

    def CheckSatisfied(self, bindings, prog_var_vals, tol: float = 1e-6) -> bool:
        bs = [bindings] if isinstance(bindings, Binding) else bindings
        return all(b.evaluator().CheckSatisfied(self.GetBindingVariableValues(b, prog_var_vals), tol) for b in bs)

    def __repr__(self) -> str:
        return (f"<MathematicalProgram {self.num_vars()} vars, {len(self.GetAllConstraints())} constraints, "
                f"{len(self._costs)} costs>")
