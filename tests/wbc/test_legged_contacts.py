"""The feet of a legged run config (controller.whole_body.contacts, drivers.legged_contacts): the
presets written out give the preset's controller and simulation, a custom sole reaches both the
QP's wrench cone and the simulator's collision spheres, and bad entries exit naming the key."""
import subprocess
import sys

import numpy as np
import pytest
import yaml

from drivers.core.paths import CONFIGS
from drivers.core.schema import ConfigError
from drivers.run_config import load_config, parse_config
from dynamics_cy.planning.legged_models import example_robot_data_root
from dynamics_cy.planning.whole_body import ContactSurface
from hil.lockstep import make_lockstep

pytestmark = pytest.mark.skipif(example_robot_data_root() is None, reason="example-robot-data is not installed")
ROOT = CONFIGS.parent
G1_SOLE = {"center": [0.035, 0.0, -0.035], "length": 0.17, "width": 0.05}


def legged(model, contacts, tmp_path):
    data = {"robot": {"model": model, "protocol": "floating_base"},
            "controller": {"type": "whole_body", "whole_body": {"contacts": contacts}}}
    return parse_config(data, tmp_path, "legged.yaml")


def test_the_g1_preset_written_out(tmp_path):
    """Two soles of the preset's size: the same controller (the same torques standing) and the same
    collision spheres and standing height as the preset's 4 corner points per foot."""
    cfg = legged("g1", [{"frame": f"{s}_ankle_roll_link", "sole": G1_SOLE} for s in ("left", "right")], tmp_path)
    ours, preset = make_lockstep(cfg)[0].robot, make_lockstep(load_config(CONFIGS / "legged" / "g1.yaml"))[0].robot
    assert all(isinstance(c, ContactSurface) for c in ours.contacts)
    np.testing.assert_allclose(ours.q0, preset.q0, atol=1e-12)
    (a, b) = (make_lockstep(c)[0].controller.wbc for c in (cfg, load_config(CONFIGS / "legged" / "g1.yaml")))
    assert [(g.name, g.half_length, g.half_width) for g in a.groups] == \
        [(g.name, pytest.approx(g.half_length), pytest.approx(g.half_width)) for g in b.groups]
    v = np.zeros(ours.plant.num_velocities())
    assert a.solve(ours.q0, v) and b.solve(preset.q0, v)
    np.testing.assert_allclose(a.tau, b.tau, rtol=1e-12, atol=1e-8)   # one QP, its sole built two ways: round-off
    assert ours.plant.num_collision_geometries() == preset.plant.num_collision_geometries() == 8


def test_a_narrower_sole_reaches_the_controller_and_the_simulator(tmp_path):
    """A 12 cm sole: its wrench cone's half length and 4 corner spheres 6 cm either side of its centre;
    the Go2 with its points written out stands in lockstep."""
    sole = dict(G1_SOLE, length=0.12)
    cfg = legged("g1", [{"frame": f"{s}_ankle_roll_link", "sole": sole} for s in ("left", "right")], tmp_path)
    loop = make_lockstep(cfg)[0]
    assert [g.half_length for g in loop.controller.wbc.groups] == [pytest.approx(0.06)] * 2
    body = loop.robot.plant.GetBodyByName("left_ankle_roll_link")
    spheres = loop.robot.plant.GetCollisionGeometriesForBody(body)
    xs = sorted({round(float(g.X_BG.translation()[0]), 6) for g in spheres})
    assert len(spheres) == 4 and len(xs) == 2 and xs[1] - xs[0] == pytest.approx(0.12)
    go2 = legged("go2", [{"frame": f"{leg}_foot", "point": [0, 0, 0]} for leg in ("FL", "FR", "RL", "RR")],
                 tmp_path)
    loop, sim = make_lockstep(go2)
    sim.publish_status()
    summary = loop.run(0.3)
    assert summary["faults"] == [] and summary["feet_in_contact"] and np.linalg.norm(sim.physics.v[3:6]) < 0.05


@pytest.mark.parametrize("contacts, key, text", [
    ([{"frame": "FL_fot", "point": [0, 0, 0]}], "controller.whole_body.contacts[0].frame", "did you mean 'FL_foot'"),
    ([{"frame": "FL_foot"}], "controller.whole_body.contacts[0]", "a point or a sole"),
    ([{"frame": "FL_foot", "point": [0, 0, 0], "sole": G1_SOLE}], "controller.whole_body.contacts[0]", "one of"),
    ([{"point": [0, 0, 0]}], "controller.whole_body.contacts[0].frame", "required"),
    ([{"frame": "FL_foot", "point": [0, 0]}], "controller.whole_body.contacts[0].point", ""),
    ([{"frame": "FL_foot", "sole": dict(G1_SOLE, width=0.0)}], "controller.whole_body.contacts[0].sole.width", ""),
    ([{"frame": "FL_foot", "sole": G1_SOLE}, {"frame": "FL_foot", "point": [0, 0, 0]}],
     "controller.whole_body.contacts[0].frame", "one sole per frame"),
    ([{"frame": "FL_foot", "point": [0, 0, 0], "mu": 0.5}], "controller.whole_body.contacts[0].mu", "unknown key"),
    ({"frame": "FL_foot"}, "controller.whole_body.contacts", "a list of feet"),
])
def test_bad_contacts_name_the_key(contacts, key, text, tmp_path):
    with pytest.raises(ConfigError) as e:
        legged("go2", contacts, tmp_path)
    assert key in str(e.value) and text in str(e.value)


def test_the_cli_exits_2_naming_the_key(tmp_path):
    cfg = yaml.safe_load(open(CONFIGS / "legged" / "go2.yaml"))
    cfg["controller"]["whole_body"]["contacts"] = [{"frame": "FL_foot", "point": [0, 0, 0]},
                                                   {"frame": "hind_foot", "point": [0, 0, 0]}]
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(cfg))
    out = subprocess.run([sys.executable, "-m", "hil", "run", str(tmp_path / "bad.yaml"), "--duration", "0.1"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2 and "controller.whole_body.contacts[1].frame" in out.stderr + out.stdout
    assert "Traceback" not in out.stderr
