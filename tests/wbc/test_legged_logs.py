"""`hil report` and `hil replay` of a floating-base run's log: a real lockstep run of the Go2 config
through the loop (hil.loop) recorded with telemetry.log (an lcm EventLog), read back independently with
lcm.EventLog and the generated message classes, and through the CLI."""
import json
import subprocess
import sys

import lcm
import numpy as np
import pytest
import yaml

from drivers.core.paths import CONFIGS
from drivers.run_config import load_config
from dynamics_cy.planning.legged_models import example_robot_data_root
from hil.legged_log import first_fault
from hil.lockstep import make_lockstep
from messages import lcmt_hil_floating_base_status, lcmt_hil_joint_command
from tests.wbc.viewer import hil_viewer_messages

pytestmark = pytest.mark.skipif(example_robot_data_root() is None, reason="example-robot-data is not installed")
ROOT = CONFIGS.parent


def record(path, seconds, push_at=None):
    """A lockstep run of configs/legged/go2.yaml logged to `path`; a 30 N·s lateral push (300 N for
    0.1 s) at step `push_at` makes feet leave the ground and a knee reach its limit (a fault)."""
    cfg = load_config(CONFIGS / "legged" / "go2.yaml", {"telemetry": {"log": str(path)}, "viz": {"enabled": False}})
    loop, sim = make_lockstep(cfg, lcm.LCM("memq://"))

    def on_tick(lp):
        if push_at is not None and sim.physics.steps == push_at:
            sim.push([0.0, 300.0, 0.0], 0.1)
    sim.publish_status()
    return loop.run(seconds, on_tick=on_tick)


def hil(*args):
    return subprocess.run([sys.executable, "-m", "hil", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def logged(path):
    """The statuses and commands of the log, decoded with lcm's own EventLog."""
    statuses, commands = [], []
    for e in lcm.EventLog(str(path), "r"):
        if e.channel == "FLOATING_BASE_STATUS":
            statuses.append(lcmt_hil_floating_base_status.decode(e.data))
        elif e.channel == "JOINT_COMMAND":
            commands.append(lcmt_hil_joint_command.decode(e.data))
    return statuses, commands


@pytest.fixture(scope="module")
def standing(tmp_path_factory):
    path = tmp_path_factory.mktemp("legged") / "go2.lcmlog"
    summary = record(path, 0.5)
    assert first_fault(summary) is None
    return path


@pytest.fixture(scope="module")
def pushed(tmp_path_factory):
    path = tmp_path_factory.mktemp("legged") / "go2_push.lcmlog"
    summary = record(path, 0.5, push_at=100)
    assert first_fault(summary) is not None      # a knee at its limit or a foot lost: the safe state
    return path


def test_report_of_a_standing_run(standing, tmp_path):
    out = hil("report", standing, "--json", "--plot", tmp_path / "go2.png")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    statuses, commands = logged(standing)
    assert r["protocol"] == "floating_base" and r["mode"] == "lockstep"
    assert r["status"]["count"] == len(statuses) == 500 and r["command"]["count"] == len(commands)
    assert r["status"]["robot_clock"]["rate_hz"] == pytest.approx(1000.0)
    first, last = np.array(statuses[0].base_position), np.array(statuses[-1].base_position)
    np.testing.assert_allclose(r["base"]["first_position"], first, atol=1e-6)
    np.testing.assert_allclose(r["base"]["last_position"], last, atol=1e-6)
    assert r["base"]["drift_m"] == pytest.approx(np.linalg.norm(last - first), abs=1e-7)
    assert r["base"]["drift_m"] < 1e-3 and r["base"]["max_tilt_rad"] < 0.01
    for i, foot in enumerate(statuses[0].contact_names):
        share = np.mean([s.contact[i] for s in statuses])
        assert r["contacts"][foot]["in_contact"] == pytest.approx(share, abs=1e-4) and share > 0.99
        assert r["contacts"][foot]["liftoffs"] == 0
    tau = np.abs([c.tau for c in commands]).max(axis=0)
    np.testing.assert_allclose(r["command"]["torque_max_nm"], tau, atol=1e-5)
    assert r["command"]["safe_commands"] == 0 and r["fault"] is None
    assert r["recorded_summary"]["ticks"] == 500
    assert (tmp_path / "go2.png").stat().st_size > 10_000
    text = hil("report", standing)
    assert text.returncode == 0 and "floating base" in text.stdout and "FL_foot: in contact" in text.stdout


def test_report_of_a_fault(pushed):
    r = json.loads(hil("report", pushed, "--json").stdout)
    statuses, commands = logged(pushed)
    assert r["fault"] is not None and r["fault"] == r["recorded_summary"]["faults"][0]["reason"]
    safe = [c for c in commands if c.num_pd and not any(c.tau) and not any(c.kp) and min(c.kd) > 0]
    assert r["command"]["safe_commands"] == len(safe) > 0
    assert any(f["liftoffs"] > 0 for f in r["contacts"].values())
    assert r["base"]["drift_m"] > 0.05


@pytest.mark.parametrize("which", ["standing", "pushed"])
def test_replay_reproduces_the_commands(which, request):
    """The same config (the log's own) gives the same commands bit for bit, the fault included."""
    path = request.getfixturevalue(which)
    out = hil("replay", path, "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    r = json.loads(out.stdout)
    assert r["passed"] and r["commands"] == len(logged(path)[1]) >= 499 and max(r["max_diff_nm"]) == 0.0
    assert r["fault"]["match"] and (r["fault"]["recorded"] is None) == (which == "standing")


def test_replay_with_other_gains_differs(standing, tmp_path):
    """Another posture weight changes the torques from the first command on: exit 1, FAIL, the first
    mismatch named."""
    from hil.replay import log_config
    cfg = yaml.safe_load(open(CONFIGS / "legged" / "go2.yaml"))
    cfg["controller"]["whole_body"]["weights"] = {"posture": 1.0e-2}
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(cfg))
    assert log_config(standing).controller.whole_body.weights == {"posture": 1.0e-4}
    out = hil("replay", standing, "--config", tmp_path / "other.yaml")
    assert out.returncode == 1 and "FAIL" in out.stdout and "first: command" in out.stdout


def test_replay_draws_for_the_viewer(standing, multicast_url):
    """`hil replay LOG --viz URL` in its own process: the robot's load and draw messages (decoded by
    Drake's own classes when installed) at the log's base positions, and the logged contact results,
    on a private ttl=0 multicast group, paced to the log's 0.5 s."""
    got, out = hil_viewer_messages(multicast_url, "replay", standing, "--viz", multicast_url)
    assert "PASS" in out and "drawn for the viewer" in out
    assert got["load"] and {link.name.split("::")[-1] for link in got["load"][0].link} >= {"base", "RR_foot"}
    assert 20 <= len(got["draw"]) <= 40                    # 60 Hz over the log's 0.5 s
    statuses, _ = logged(standing)
    base = [i for i, name in enumerate(got["draw"][-1].link_name) if name.endswith("::base")][0]
    np.testing.assert_allclose(got["draw"][-1].position[base], statuses[-1].base_position, atol=2e-3)
    assert got["contact"] and got["contact"][-1].num_point_pair_contacts == 4


def test_viz_draws_legged_logs_only(standing):
    """--viz with an arm's config (protocol iiwa) is refused naming the flag, before any replay."""
    from drivers.core.schema import ConfigError
    from hil.replay import replay
    with pytest.raises(ConfigError, match="--viz"):
        replay(standing, load_config(CONFIGS / "demo.yaml"), viz_url="memq://")
