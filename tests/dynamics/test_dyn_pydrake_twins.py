"""What pydrake's own tests compare between their objects and ours: the deprecation warnings of the
floating-base methods Drake renamed (counted as pydrake's catch_drake_warnings counts them, outside pytest's
warning filters), and our enums equal to pydrake's members."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import dynamics_cy as dc
from dynamics_cy import planning as dp

mp = pytest.importorskip("pydrake.solvers", reason="pydrake is not installed (pip install drake)")
REPO = Path(__file__).resolve().parents[2]

# A user's module (not __main__, where Python shows a plain DeprecationWarning anyway), counting each
# deprecated call's warnings as catch_drake_warnings does: record all, "always" for pydrake's class only.
USER_MODULE = '''
import warnings
from pydrake.common.deprecation import DrakeDeprecationWarning


def count(m, RigidTransform):
    p = m.MultibodyPlant(0.0)
    body = p.AddRigidBody("body")
    p.Finalize()
    mi = body.model_instance()
    calls = [lambda: p.SetDefaultFreeBodyPose(body=body, X_PB=RigidTransform([1.0, 2.0, 3.0])),
             lambda: p.GetDefaultFreeBodyPose(body=body),
             lambda: p.HasUniqueFreeBaseBody(model_instance=mi),
             lambda: p.GetUniqueFreeBaseBodyOrThrow(model_instance=mi)]
    out = []
    for call in calls + calls:                      # twice: each block counts its own call
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DrakeDeprecationWarning)
            call()
        out.append([[c.category.__name__, issubclass(c.category, DeprecationWarning), str(c.message)]
                    for c in caught])
    return out


def main():
    import dynamics_cy
    import pydrake.math
    import pydrake.multibody.plant
    return {"ours": count(dynamics_cy, dynamics_cy.RigidTransform),
            "pydrake": count(pydrake.multibody.plant, pydrake.math.RigidTransform)}
'''


def test_deprecated_free_body_methods_warn_as_pydrake_counts_them(tmp_path):
    (tmp_path / "user_lab.py").write_text(USER_MODULE)
    run = subprocess.run([sys.executable, "-c", "import json, user_lab; print(json.dumps(user_lab.main()))"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={"PYTHONPATH": f"{REPO}:{tmp_path}", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert [len(w) for w in seen["ours"]] == [1] * 8, seen["ours"]
    assert seen["ours"] == seen["pydrake"]          # the class's name, a DeprecationWarning, pydrake's text
    assert issubclass(dc.DrakeDeprecationWarning, DeprecationWarning)


def test_our_enums_equal_pydrakes_members():
    from pydrake.geometry import HydroelasticContactRepresentation
    from pydrake.multibody import optimization, plant
    from pydrake.multibody.fem import ForceDensityType
    options = dp.GlobalInverseKinematics.Options()
    assert options.approach == mp.MixedIntegerRotationConstraintGenerator.Approach.kBilinearMcCormick
    assert options.interval_binning == mp.IntervalBinning.kLogarithmic
    assert options.interval_binning != mp.IntervalBinning.kLinear
    pairs = [(dp.IntervalBinning, mp.IntervalBinning), (dp.SolutionResult, mp.SolutionResult),
             (dp.MixedIntegerRotationConstraintGenerator.Approach, mp.MixedIntegerRotationConstraintGenerator.Approach),
             (dp.ToppraDiscretization, optimization.ToppraDiscretization), (dc.ContactModel, plant.ContactModel),
             (dc.DiscreteContactApproximation, plant.DiscreteContactApproximation),
             (dc.DiscreteContactSolver, plant.DiscreteContactSolver),
             (dc.HydroelasticContactRepresentation, HydroelasticContactRepresentation),
             (dc.ForceDensityType, ForceDensityType)]
    for ours, theirs in pairs:
        for name, member in ours.__members__.items():
            twin = getattr(theirs, name)
            assert member == twin and hash(member) == hash(twin), (name, member, twin)
            assert {member: name}[twin] == name
            assert all(member != getattr(theirs, n) for n in theirs.__members__ if int(getattr(theirs, n)) != int(twin))
        assert len({m.value for m in ours}) == len(ours)             # one member per value, as pydrake's
    assert dc.ContactModel.kPoint == 1 and str(dc.ContactModel.kPoint) == "ContactModel.kPoint"
    assert dp.IntervalBinning.kLinear != 1 and dp.IntervalBinning.kLinear != "kLinear"
