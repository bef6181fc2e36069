"""The scipy.optimize example of docs/planning.md ("Evaluators in scipy.optimize"), run exactly as written."""
import re
from pathlib import Path

import numpy as np

DOC = Path(__file__).resolve().parents[2] / "docs" / "planning.md"


def example_code() -> str:
    text = DOC.read_text()
    section = text[text.index("### Evaluators in scipy.optimize"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_scipy_example_satisfies_the_constraint(iiwa):
    code = example_code()
    assert "NonlinearConstraint" in code and "EvalWithGradient" in code
    namespace = {"plant": iiwa}  # "the iiwa of the first example" (the same URDF, parsed and finalized)
    exec(compile(code, str(DOC), "exec"), namespace)
    res, c, q_nom = namespace["res"], namespace["c"], namespace["q_nom"]
    assert res.success
    assert not c.CheckSatisfied(q_nom, 1e-3)  # the start is outside the box: the optimizer had to move
    assert c.CheckSatisfied(res.x, 1e-9)
    lo, hi = iiwa.GetPositionLowerLimits(), iiwa.GetPositionUpperLimits()
    assert np.all(res.x >= lo) and np.all(res.x <= hi)
    y = c.Eval(res.x)  # the closest configuration puts the end effector on the box's boundary
    assert np.min(np.minimum(y - c.lower_bound(), c.upper_bound() - y)) < 1e-8
    # a local minimum: the cost gradient is a combination of the active rows' gradients (KKT, λ of one sign)
    active = np.minimum(y - c.lower_bound(), c.upper_bound() - y) < 1e-8
    J = c.EvalWithGradient(res.x)[1][active]
    g = 2 * (res.x - q_nom)
    lam = np.linalg.lstsq(J.T, g, rcond=None)[0]
    assert np.linalg.norm(g - J.T @ lam) < 1e-5 * max(1.0, np.linalg.norm(g))
