"""Legged scenarios in `hil regress` (hil.legged_scenario): the shipped files validate, bad files are
rejected naming the key (exit 2), and one short scenario runs through the CLI."""
import subprocess
import sys
from pathlib import Path

import pytest

from drivers.core.schema import ConfigError
from dynamics_cy.planning.legged_models import example_robot_data_root
from hil.legged_scenario import load_legged_scenario
from tests.wbc.viewer import hil_viewer_messages

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((REPO / "configs" / "scenarios").glob("legged_*.yaml"))


def test_shipped_scenarios_validate():
    assert len(SCENARIOS) >= 5
    for path in SCENARIOS:
        run, spec = load_legged_scenario(path)
        assert run.robot in ("go2", "g1") and spec.duration > 0


@pytest.mark.parametrize("text, key", [
    ("legged: {robot: spot}\nscenario: {duration: 1}", "legged.robot"),
    ("legged: {robot: go2, mu: -1}\nscenario: {duration: 1}", "legged.mu"),
    ("legged: {robot: go2, events: [{at: 1}]}\nscenario: {duration: 1}", "legged.events[0]"),
    ("legged: {robot: go2, events: [{at: 1, push: [1, 2]}]}\nscenario: {duration: 1}", "legged.events[0].push"),
    ("legged: {robot: go2, weights: {postur: 1}}\nscenario: {duration: 1}", "legged.weights.postur"),
    ("legged: {robot: go2}", "scenario"),
    ("legged: {robot: go2}\nscenario: {duration: 1, criteria: {drift: 1}}", "scenario.criteria.drift"),
])
def test_bad_scenarios_name_the_key(tmp_path, text, key):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_legged_scenario(path)
    assert e.value.key == key, str(e.value)
    out = subprocess.run([sys.executable, "-m", "hil", "regress", str(path), "--report", str(tmp_path / "r.json")],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 2 and key in out.stderr and "Traceback" not in out.stderr


def test_regress_runs_a_legged_scenario(tmp_path):
    if example_robot_data_root() is None:
        pytest.skip("example-robot-data is not installed")
    path = tmp_path / "stand.yaml"
    path.write_text("legged: {robot: go2}\nscenario: {duration: 1.0, criteria: {settle: 0.3, max_base_drift: 0.001,"
                    " feet_in_contact: true}}\n")
    out = subprocess.run([sys.executable, "-m", "hil", "regress", str(path), "--report", str(tmp_path / "r.json")],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| stand | PASS | 1.0 |" in out.stdout


def test_demo_draws_the_robot_and_its_contact_forces(multicast_url):
    """`hil demo --config configs/legged/go2_demo.yaml` in its own process, real time on a ttl=0
    multicast group: what Meldis reads arrives, decoded by Drake's own message classes when
    installed: the robot's load and draw messages and four foot contacts carrying its weight."""
    if example_robot_data_root() is None:
        pytest.skip("example-robot-data is not installed")
    got, out = hil_viewer_messages(multicast_url, "demo", "--config", "configs/legged/go2_demo.yaml",
                                   "--duration", "1.5", "--lcm-url", multicast_url)
    assert "fault: none" in out
    assert got["load"] and {link.name.split("::")[-1] for link in got["load"][0].link} >= {"base", "FL_calf", "RR_foot"}
    assert len(got["draw"]) > 20
    last = got["contact"][-1]
    assert last.num_point_pair_contacts == 4
    mass = 15.0                              # Go2's total mass is about 15-16 kg
    assert sum(abs(c.contact_force[2]) for c in last.point_pair_contact_info) > 9.81 * mass
