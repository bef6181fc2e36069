"""The public controller API as a user meets it: a law in a directory of its own, named in a config by
import path or passed from Python; its parameters validated with the config error contract; a law
that raises, overruns its budget or allocates is caught and reported; the built-ins pass the same
allocation check."""
import logging
import subprocess
import sys
import textwrap
import time
import tracemalloc  # noqa: F401  (conftest: the signal timeout for the allocation checks)
from dataclasses import dataclass

import numpy as np
import pytest

import hil
from drivers.core.schema import ConfigError
from hil.controllers import controller_class

REPO_CONFIG = "configs/demo.yaml"
HOLD = {"trajectory": {"type": "hold"}, "viz": False, "loop": {"duration": None}}

LAWS = '''
from dataclasses import dataclass
import numpy as np
from hil import Controller

class Hold(Controller):
    """PD around the trajectory plus gravity, gains as arrays: allocation-free."""
    @dataclass
    class Params:
        kp: float = 100.0
        kd: float = 1.0         # kd·T < 2m for the iiwa's light wrist (hil.controllers says why)

    def on_configure(self):
        self.kp, self.kd = np.full(self.n, self.params.kp), np.full(self.n, self.params.kd)
        self.tau_g, self.tmp = np.zeros(self.n), np.zeros(self.n)

    def update(self, state, command):
        self.kernels.gravity(state.q, self.tau_g)
        np.subtract(state.q_d, state.q, out=command.tau)
        np.multiply(command.tau, self.kp, out=command.tau)
        np.multiply(state.v, self.kd, out=self.tmp)
        np.subtract(command.tau, self.tmp, out=command.tau)
        np.subtract(command.tau, self.tau_g, out=command.tau)

class Allocating(Hold):
    def update(self, state, command):
        super().update(state, command)
        command.tau += 0.0 * state.v          # a temporary array every tick

class Keeping(Hold):
    def on_configure(self):
        super().on_configure()
        self.history = []

    def update(self, state, command):
        super().update(state, command)
        self.history.append(state.q.copy())   # kept: grows every tick
'''


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A user's directory outside the repository: mylaws.py and a config naming its law."""
    (tmp_path / "mylaws.py").write_text(LAWS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_config(folder, controller: str) -> str:
    path = folder / "robot.yaml"
    path.write_text(textwrap.dedent(f"""\
        robot: {{model: robots/iiwa14.urdf}}
        controller: {controller}
        trajectory: {{type: hold}}
        viz: false
        sim: {{initial_positions: [0.2, 0.6, -0.1, -1.1, 0.1, 0.8, 0.0]}}
        """))
    return str(path)


def hil_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hil", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_a_law_named_by_import_path_runs_from_the_users_directory_and_allocates_nothing(lab):
    config = write_config(lab, '{type: "mylaws:Hold", params: {kp: 150.0}}')
    run = hil_cli("run", config, "--check-alloc", "--duration", "1", cwd=lab)
    assert run.returncode == 0, run.stderr
    assert "mylaws:Hold: update() allocated nothing" in run.stdout
    summary = hil.run(config, duration=1.0)
    assert summary["controller"] == "mylaws:Hold" and summary["final_state"] == "RUNNING"
    assert max(summary["tracking_error_rad"]["max"]) < 2e-3          # a stiff PD holds the arm
    timing = summary["controller_timing"]
    assert timing["update_us"]["p50"] > 0 and timing["errors"] == 0


def test_an_allocating_law_is_reported_with_exit_1_and_its_line(lab):
    config = write_config(lab, '{type: "mylaws:Allocating"}')
    run = hil_cli("run", config, "--check-alloc", "--duration", "1", cwd=lab)
    assert run.returncode == 1, run.stderr
    assert "update() allocated on" in run.stdout and "per tick" in run.stdout
    line = LAWS.splitlines().index("        command.tau += 0.0 * state.v          # a temporary array every tick") + 1
    where = f"mylaws.py:{line} (update): "
    assert f"  allocates at {where}" in run.stdout and "B: command.tau += 0.0 * state.v" in run.stdout, run.stdout
    assert run.stdout.count("allocates at") == 1, run.stdout        # that line alone: the others allocate nothing
    report = hil.check_allocations(config, duration=0.5)
    sites = report["allocating_lines"]             # (this process may have imported an earlier test's mylaws.py)
    assert len(sites) == 1 and where in sites[0] and sites[0].endswith("B: command.tau += 0.0 * state.v          # a "
                                                                       "temporary array every tick"), sites


def test_the_kept_bytes_are_named_by_the_laws_line(lab):
    run = hil_cli("run", write_config(lab, '{type: "mylaws:Keeping"}'), "--check-alloc", "--duration", "1", cwd=lab)
    assert run.returncode == 1, run.stderr
    line = LAWS.splitlines().index("        self.history.append(state.q.copy())   # kept: grows every tick") + 1
    assert f"  allocates at mylaws.py:{line} (update): " in run.stdout, run.stdout
    assert f"  kept: mylaws.py:{line}: +" in run.stdout and "blocks: self.history.append" in run.stdout, run.stdout


@pytest.mark.parametrize("controller, message", [
    ('{type: "mylaws:Hold", params: {kpp: 1.0}}', "controller.params.kpp: unknown key (did you mean 'kp'?)"),
    ('{type: "mylaws:Hold", params: {kp: "stiff"}}', "controller.params.kp: must be a number"),
    ('{type: "nolaws:Hold"}', "controller.type: no module named 'nolaws'"),
    ('{type: "mylaws:Hodl"}', "controller.type: module 'mylaws'"),
    ('{type: computed_torqe}',
     "controller.type: unknown controller 'computed_torqe' (did you mean 'computed_torque'?)"),
    ('{type: joint_pd, params: {kp: 1.0}}', "controller.params: the built-in joint_pd takes its keys"),
])
def test_a_bad_controller_is_exit_2_naming_the_file_and_key(lab, controller, message):
    config = write_config(lab, controller)
    run = hil_cli("run", config, "--duration", "1", cwd=lab)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"robot.yaml: {message}" in run.stderr, run.stderr


def test_a_module_that_fails_to_import_is_named_with_why(lab):
    (lab / "broken.py").write_text("import numpy\nraise RuntimeError('calibration file missing')\n")
    with pytest.raises(ConfigError, match=r"controller.type: importing module 'broken' failed: RuntimeError: "
                                          r"calibration file missing"):
        controller_class("broken:Law")
    (lab / "notalaw.py").write_text("class Law:\n    pass\n")
    with pytest.raises(ConfigError, match="neither a hil.Controller subclass nor a function"):
        controller_class("notalaw:Law")


def test_a_function_law_in_libfrankas_style_and_a_controller_instance_from_python():
    calls = []

    def zero_gravity(state, command):           # libfranka's callback: state in, torques out
        calls.append(state.t)
        return 0.0 * state.q           # a new array (allocates): zero torque, the robot holds gravity

    summary = hil.run(REPO_CONFIG, zero_gravity, duration=0.2, overrides=HOLD)
    assert summary["controller"].endswith("zero_gravity") and len(calls) > 100
    assert calls == sorted(calls) and calls[-1] - calls[0] == pytest.approx(0.001 * (len(calls) - 1))

    @dataclass
    class Gains:
        scale: float = 1.0

    class Scaled(hil.Controller):
        Params = Gains

        def on_configure(self):
            self.tau_g = np.zeros(self.n)

        def update(self, state, command):
            self.kernels.gravity(state.q, self.tau_g)
            np.negative(self.tau_g, out=command.tau)

    summary = hil.run(REPO_CONFIG, Scaled({"scale": 2.0}), duration=0.5, overrides=HOLD)
    assert summary["final_state"] == "RUNNING" and summary["controller"].endswith("Scaled")
    with pytest.raises(ConfigError, match="controller.params.scael: unknown key"):
        hil.run(REPO_CONFIG, Scaled({"scael": 2.0}), duration=0.1, overrides=HOLD)


def test_a_law_that_raises_is_a_fault_with_its_traceback_logged_once(caplog):
    class Faulty(hil.Controller):
        def update(self, state, command):
            if state.tick >= 100:
                raise KeyError("gain table has no entry for this joint")
            command.tau.fill(0.0)

    summary = hil.run(REPO_CONFIG, Faulty(), duration=0.5, overrides=HOLD)
    assert summary["final_state"] == "FAULT"
    assert [f["fault"] for f in summary["faults"]] == ["CONTROLLER"]
    assert "KeyError: 'gain table has no entry" in summary["faults"][0]["reason"]
    error = summary["controller_timing"]["error"]
    assert error.startswith("Traceback") and "in update" in error and "raise KeyError" in error
    logged = [r.getMessage() for r in caplog.records if "the controller raised" in r.getMessage()]
    assert len(logged) == 1 and logged[0].endswith(error)
    # the law's frames only: the first is its update(), none is the loop's or the guard's
    frames = [line for line in error.splitlines() if line.startswith("  File ")]
    assert frames[0].endswith("in update") and len(frames) == 1, error
    assert summary["status"]["exit_command_sent"]


def test_a_law_that_faults_on_purpose_stops_the_robot_with_its_reason_and_no_traceback(caplog):
    """hil.ControllerFault from update(): a CONTROLLER fault whose reason is the message, the safe
    command, one log line (a law's bug gets its traceback, above)."""
    class Guarded(hil.Controller):
        def update(self, state, command):
            if state.tick >= 100:
                raise hil.ControllerFault("the gripper reports a dropped part")
            command.tau.fill(0.0)

    caplog.set_level(logging.WARNING, logger="hil")
    summary = hil.run(REPO_CONFIG, Guarded(), duration=0.5, overrides=HOLD)
    assert summary["final_state"] == "FAULT" and summary["status"]["exit_command_sent"]
    assert [(f["fault"], f["reason"]) for f in summary["faults"]] == \
        [("CONTROLLER", "the gripper reports a dropped part")]
    assert summary["controller_timing"]["error"] == "the gripper reports a dropped part"
    logged = [r.message for r in caplog.records if "the controller" in r.message]
    assert len(logged) == 1 and "Traceback" not in logged[0] and "dropped part" in logged[0]
    assert issubclass(hil.ControllerFault, hil.HilstackError) and issubclass(hil.ControllerFault, RuntimeError)


def test_a_law_over_its_budget_faults_after_the_overrun_limit():
    class Slow(hil.Controller):
        def update(self, state, command):
            end = time.perf_counter() + 0.002          # 2 ms, over a 1 kHz loop's 0.5 ms default budget
            while time.perf_counter() < end:
                pass

    from hil.lockstep import make_lockstep
    from hil.running import load
    loop, sim = make_lockstep(load(REPO_CONFIG, {**HOLD, "controller": {"overrun_limit": 5}}), controller=Slow(),
                              fault_on_overrun=True)
    sim.publish_status()
    summary = loop.run(0.1)
    assert [f["fault"] for f in summary["faults"]] == ["CONTROLLER"]
    assert "over budget" in summary["faults"][0]["reason"] and "5 ticks in a row" in summary["faults"][0]["reason"]
    assert summary["controller_timing"]["overruns"] == 5 and summary["controller_timing"]["budget_us"] == 500
    # lockstep by default: overruns counted, no fault (the run stays deterministic)
    summary = hil.run(REPO_CONFIG, Slow(), duration=0.05, overrides=HOLD)
    assert summary["faults"] == [] and summary["controller_timing"]["overruns"] >= 40


@pytest.mark.parametrize("kind", ["gravity_compensation", "joint_pd", "computed_torque", "joint_impedance",
                                  "cartesian_impedance"])
def test_the_built_in_laws_pass_the_allocation_check(kind):
    gains = {"kp": [100.0], "kd": [1.0]} if kind in ("joint_pd", "joint_impedance") else {}   # N·m/rad: stable
    report = hil.check_allocations(REPO_CONFIG, duration=0.5, overrides={**HOLD, "controller": {"type": kind, **gains}})
    assert report["ticks"] > 400 and not report["allocates"], report


@pytest.mark.parametrize("robot", ["go2", "g1"])
def test_the_whole_body_law_passes_the_allocation_check(robot, robot_data):
    """Its QP (kernels, compiled assembly, DAQP) and its foot-loss count allocate nothing per tick, as
    `hil run configs/legged/go2.yaml --check-alloc` reports."""
    from drivers.core.paths import CONFIGS
    report = hil.check_allocations(CONFIGS / "legged" / f"{robot}.yaml", duration=0.5)
    assert report["ticks"] > 400 and not report["allocates"] and report["final_state"] == "RUNNING", report


def test_the_state_is_read_only_and_torques_are_in_the_plants_signs():
    seen = {}

    class Probe(hil.Controller):
        def update(self, state, command):
            if "q" not in seen:
                seen["q"] = state.q
                seen["tau_commanded"] = state.tau_commanded.copy()
            command.tau[:] = 1.0

    hil.run(REPO_CONFIG, Probe(), duration=0.05, overrides=HOLD)
    with pytest.raises(ValueError, match="read-only"):
        seen["q"][0] = 1.0
    q = np.zeros(7)
    state = hil.State.of(7, q=q, t=1.5)
    assert state.t == 1.5 and not state.q.flags.writeable


def test_the_users_law_runs_in_a_regression_scenario_and_a_campaign(lab):
    (lab / "scenarios").mkdir()
    (lab / "scenarios" / "hold.yaml").write_text(textwrap.dedent("""\
        robot: {model: robots/iiwa14.urdf}
        controller: {type: "mylaws:Hold", params: {kp: 120.0}}
        trajectory: {type: hold}
        sim: {initial_positions: [0.2, 0.6, -0.1, -1.1, 0.1, 0.8, 0.0]}
        scenario:
          description: the lab's law holds the arm
          duration: 0.5
          criteria: {final_state: RUNNING, trips: [], tracking_rms: 5.0e-2}
        """))
    regress = hil_cli("regress", "scenarios", cwd=lab)
    assert regress.returncode == 0 and "1 passed, 0 failed" in regress.stdout, regress.stdout + regress.stderr
    (lab / "campaign.yaml").write_text(textwrap.dedent("""\
        campaign:
          description: the lab's law under payloads
          base: scenarios/hold.yaml
          runs: 4
          vary: {sim.payload.mass: {uniform: [0.0, 1.0]}}
        """))
    campaign = hil_cli("campaign", "campaign.yaml", "--engine", "pool", "-j", "2", "--out", "out", "--quiet", cwd=lab)
    assert campaign.returncode == 0, campaign.stderr
    import json
    summary = json.loads((lab / "out" / "summary.json").read_text())
    assert summary["finished"] == 4 and summary["errors"] == 0, summary


HOOKS = '''
from hil import Controller

class BadConfigure(Controller):
    def on_configure(self):
        raise RuntimeError("calibration table missing")
    def update(self, state, command):
        command.tau[:] = 0.0

class BadActivate(Controller):
    def on_activate(self):
        raise ValueError("no gains for this tool")
    def update(self, state, command):
        command.tau[:] = 0.0

def raises(state, command):
    raise RuntimeError("boom")
'''


def test_a_law_whose_hooks_raise_is_a_config_error_or_a_fault_never_a_traceback(lab):
    (lab / "hooks.py").write_text(HOOKS)
    run = hil_cli("run", write_config(lab, '{type: "hooks:BadConfigure"}'), "--duration", "1", cwd=lab)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert ("robot.yaml: controller.type: hooks:BadConfigure failed to configure: RuntimeError: calibration "
            "table missing" in run.stderr)
    summary = hil.run(write_config(lab, '{type: "hooks:BadActivate"}'), duration=0.2)
    assert [f["fault"] for f in summary["faults"]] == ["CONTROLLER"]
    assert "on_activate: ValueError: no gains for this tool" in summary["faults"][0]["reason"]
    assert summary["status"]["exit_command_sent"]
    check = hil_cli("run", write_config(lab, '{type: "hooks:raises"}'), "--check-alloc", "--duration", "0.5", cwd=lab)
    assert check.returncode == 3 and "the run faulted: CONTROLLER at tick 0: RuntimeError: boom" in check.stdout


def test_a_user_law_refuses_the_built_ins_keys(lab):
    run = hil_cli("run", write_config(lab, '{type: "mylaws:Hold", kp: [5.0]}'), "--duration", "1", cwd=lab)
    assert run.returncode == 2
    assert "controller.kp: is a key of the built-in laws; mylaws:Hold takes its parameters under controller.params" \
        in run.stderr


def test_params_as_a_pydantic_model_and_a_law_with_its_own_init():
    from pydantic import BaseModel, Field

    class Gains(BaseModel):
        gain: float = Field(1.0, gt=0)

    class Scaled(hil.Controller):
        Params = Gains

        def __init__(self, label):             # no super().__init__(): the defaults
            self.label = label

        def update(self, state, command):
            command.tau[:] = 0.0

    assert Scaled.validate_params({"gain": 2.5}).gain == 2.5
    with pytest.raises(ConfigError, match=r"controller.params.gain: Input should be greater than 0"):
        Scaled.validate_params({"gain": -1})
    with pytest.raises(ConfigError, match=r"controller.params.gian: unknown key \(did you mean 'gain'\?\)"):
        Scaled.validate_params({"gian": 1})
    summary = hil.run(REPO_CONFIG, Scaled("mine"), duration=0.05, overrides=HOLD)
    assert summary["controller"].endswith("Scaled") and summary["controller_timing"]["errors"] == 0


def test_make_law_builds_the_configs_law_as_the_loop_does_and_takes_states_you_make(robot_data, tmp_path,
                                                                                    monkeypatch):
    """hil.make_law from outside the repository: the Go2's whole_body law, fed the standing state it
    makes, gives the torques of the same QP built by hand on the same plant (and holds every foot
    inside its friction cone); an arm's config with a user's law gets states of its n joints; a
    state array of the wrong size is refused naming it."""
    from dynamics_cy.planning.whole_body import WholeBodyController
    from hil.testing import config_path
    monkeypatch.chdir(tmp_path)
    law = hil.make_law(config_path("go2"))
    law.activate()
    state, command = law.new_state(), law.new_command()
    assert state.q.shape == (19,) and state.v.shape == (18,) and command.tau.shape == (12,)
    assert list(state.contact.names) == ["FL_foot", "FR_foot", "RL_foot", "RR_foot"] and state.contact.in_contact.all()
    law.update(state, command)
    by_hand = WholeBodyController(law.plant, law.contacts, mu=law.params.mu, weights=law.wbc.w)
    assert by_hand.solve(law.q0, np.zeros(18))
    np.testing.assert_allclose(command.tau, by_hand.tau, atol=1e-9)
    assert law.wbc.friction_excess() <= 1e-9 and np.abs(command.tau).max() > 1.0
    seen = []
    arm = hil.make_law(config_path("iiwa"), lambda s, c: seen.append(s.q.copy()))
    arm.activate()
    arm.update(arm.new_state(q=np.full(7, 0.1)), arm.new_command())
    np.testing.assert_array_equal(seen[0], np.full(7, 0.1))
    with pytest.raises(ValueError, match="q needs 7 values"):
        arm.new_state(q=np.zeros(6))
    with pytest.raises(TypeError, match="unknown arrays"):
        arm.new_state(qd=np.zeros(7))


def test_every_keyword_of_the_python_entry_points_is_documented():
    """hil.run's, hil.check_allocations' and hil.make_law's keywords (on_tick among them) are named in
    docs/controllers.md, whose example of on_tick (recording a trajectory) tests/test_docs_examples.py runs."""
    import inspect
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "docs" / "controllers.md").read_text()
    for entry in (hil.run, hil.check_allocations, hil.make_law):
        for name, p in inspect.signature(entry).parameters.items():
            if p.kind is p.KEYWORD_ONLY:
                assert f"{name}=" in page, f"docs/controllers.md does not name {entry.__name__}'s {name}="
    assert "on_tick=record" in page
