"""benchmarks/bench_mass_matrix.py: Pinocchio gets the same states as dynamics_cy (its M equals ours on the
joints' block, a floating base's layout converted), and without a C++ compiler the script still measures
the rest, its C++ row saying why."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bench_dynamics  # noqa: E402
import bench_mass_matrix  # noqa: E402


def test_pinocchio_states_give_our_mass_matrix_on_a_floating_humanoid():
    pytest.importorskip("pinocchio")
    if not bench_dynamics.ROBOT_DATA.is_dir():
        pytest.skip("example-robot-data is not installed")
    m = bench_dynamics.Model(*bench_dynamics.model_specs(None, "G1")[0])
    pin, model = bench_dynamics.load_pinocchio(m)
    pqs = bench_mass_matrix.pinocchio_states(m, model)
    blocks = bench_mass_matrix.joint_blocks(m, model)
    assert len(blocks[0]) == m.nv - 6
    k, M = m.plant.kernels(), np.zeros((m.nv, m.nv))
    for q, pq in zip((s[0] for s in m.states), pqs):
        assert np.isclose(np.linalg.norm(pq[3:7]), 1.0)            # Pinocchio's [x y z qx qy qz qw]
        k.mass_matrix(q, M)
        Mp = pin.crba(model, model.createData(), pq)
        bench_mass_matrix.check_same("G1", M, np.triu(Mp) + np.triu(Mp, 1).T, blocks)
    with pytest.raises(RuntimeError, match="differ"):                # the check does compare
        bench_mass_matrix.check_same("G1", M, np.triu(Mp) + np.triu(Mp, 1).T + 1e-3, blocks)


def test_without_a_compiler_the_cpp_row_says_why_and_the_rest_is_measured(tmp_path):
    out = tmp_path / "mm.json"
    env = {**os.environ, "CXX": "no-such-compiler",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(BENCHMARKS / "bench_mass_matrix.py"), "--only", "iiwa", "--rounds",
                           "1", "--batches", "1", "--calls", "10", "--py-calls", "10", "--json", str(out)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = {r["name"]: r for r in json.loads(out.read_text())["tables"][0]["rows"]}
    assert rows["Pinocchio C++ loop"]["why"] == "not measured: no C++ compiler (no-such-compiler not found)"
    assert rows["dynamics_cy compiled loop"]["us"] > 0 and rows["dynamics_cy from Python"]["us"] > 0
    assert "ratio" not in rows["dynamics_cy compiled loop"]
