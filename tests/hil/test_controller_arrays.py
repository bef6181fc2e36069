"""State's and Command's arrays are the loop's: a law that rebinds one (`command.tau = -tau_g`) would
send nothing, so rebinding is refused with the fix named, a CONTROLLER fault on the law's first
tick, in lockstep and in real time; a function law that returns its torque keeps working."""
import textwrap
import time

import numpy as np
import pytest

import hil
from hil import RebindError
from tests.hil.processes import spawn

REPO_CONFIG = "configs/demo.yaml"
HOLD = {"trajectory": {"type": "hold"}, "viz": False, "loop": {"duration": None}}


class Rebinding(hil.Controller):
    """Gravity compensation written the way that sends nothing: command.<name> = a new array."""
    target, value = "tau", None

    def on_configure(self):
        self.tau_g, self.calls = np.zeros(self.n), 0

    def update(self, state, command):
        self.calls += 1
        self.kernels.gravity(state.q, self.tau_g)
        setattr(command, self.target, -self.tau_g if self.value is None else self.value)


@pytest.mark.parametrize("value, got", [
    (None, "got ndarray float64 of shape (7,)"),                          # the right shape and dtype: still ignored
    (np.zeros(3), "got ndarray float64 of shape (3,)"),                   # a wrong shape
    (np.zeros(7, dtype=np.float32), "got ndarray float32 of shape (7,)"),   # a wrong dtype
    ([0.0] * 7, "got list of shape (7,)"),
])
def test_rebinding_command_tau_faults_on_the_first_tick_naming_the_fix(value, got):
    law = Rebinding()
    law.value = value
    summary = hil.run(REPO_CONFIG, law, duration=0.3, overrides=HOLD)
    assert law.calls == 1, summary["faults"]                   # the law's first tick, and no other
    assert summary["final_state"] == "FAULT" and [f["fault"] for f in summary["faults"]] == ["CONTROLLER"]
    reason = summary["faults"][0]["reason"]
    assert reason.startswith("RebindError: command.tau cannot be rebound") and got in reason, reason
    assert "out=command.tau" in reason and "np.copyto(command.tau, x)" in reason and "command.tau[:] = x" in reason
    assert summary["status"]["exit_command_sent"]


@pytest.mark.parametrize("target", ["q", "v", "gripper"])
def test_every_command_array_refuses_rebinding(target):
    law = Rebinding()
    law.target = target
    summary = hil.run(REPO_CONFIG, law, duration=0.3, overrides=HOLD)
    assert law.calls == 1 and f"command.{target} cannot be rebound" in summary["faults"][0]["reason"]


def test_state_arrays_cannot_be_rebound_and_in_place_writes_still_work():
    state, command = hil.State.of(7), hil.Command(7)
    for name in hil.State.ARRAYS:
        with pytest.raises(RebindError, match=rf"state\.{name} cannot be rebound: .*np\.copyto\(self\.mine, "
                                              rf"state\.{name}\)"):
            setattr(state, name, np.zeros(7))
    state.tick = 5                                              # the scalars are no arrays
    assert state.tick == 5
    tau = command.tau
    command.tau[:] = 1.0
    command.tau += 1.0                                          # numpy's in-place add: the same array
    np.multiply(command.tau, 2.0, out=command.tau)
    assert command.tau is tau and np.all(tau == 4.0)
    assert issubclass(RebindError, hil.HilstackError) and issubclass(RebindError, AttributeError)

    class Keeps(hil.Controller):
        def update(self, state, command):
            state.q = state.q.copy()

    summary = hil.run(REPO_CONFIG, Keeps(), duration=0.3, overrides=HOLD)
    assert "RebindError: state.q cannot be rebound" in summary["faults"][0]["reason"]


def test_a_function_law_returning_its_torque_keeps_working_and_a_wrong_shape_is_named():
    def hold(state, command):
        return np.zeros(7)                   # the arm's damping safe command holds nothing: zero torque
    summary = hil.run(REPO_CONFIG, hold, duration=0.3, overrides=HOLD)
    assert summary["final_state"] == "RUNNING" and not summary["faults"], summary["faults"]

    def short(state, command):
        return np.zeros(3)
    summary = hil.run(REPO_CONFIG, short, duration=0.3, overrides=HOLD)
    reason = summary["faults"][0]["reason"]
    assert "returned ndarray float64 of shape (3,); command.tau takes 7 torques" in reason, reason


LAW = '''
import numpy as np
from hil import Controller

class Rebind(Controller):
    def on_configure(self):
        self.tau_g = np.zeros(self.n)

    def update(self, state, command):
        self.kernels.gravity(state.q, self.tau_g)
        command.tau = -self.tau_g
'''


def test_in_real_time_the_rebinding_law_faults_at_once_and_the_cli_prints_its_traceback_once(tmp_path,
                                                                                             multicast_url):
    """`hil sim` and `hil run` of a user's config as two processes: the fault names the fix, and the
    law's traceback is printed once (the log's), its frames the user's only."""
    (tmp_path / "mylaws.py").write_text(LAW)
    (tmp_path / "robot.yaml").write_text(textwrap.dedent(f"""\
        robot: {{model: robots/iiwa14.urdf}}
        controller: {{type: "mylaws:Rebind"}}
        lcm: {{url: "{multicast_url}"}}
        trajectory: {{type: hold}}
        safety: {{status_timeout_periods: 10, recover: true}}
        viz: false
        sim: {{initial_positions: [0.2, 0.6, -0.1, -1.1, 0.1, 0.8, 0.0]}}
        """))
    sim = spawn("sim", "robot.yaml", "--duration", "30", "--no-viz", cwd=tmp_path)
    try:
        time.sleep(1.5)
        run = spawn("run", "robot.yaml", "--duration", "2", "--quiet", cwd=tmp_path)
        out, err = run.communicate(timeout=120)
    finally:
        sim.kill()
        sim.communicate(timeout=30)
    assert run.returncode == 3, out + err
    text = out + err
    assert "final state FAULT; faults: CONTROLLER at tick" in out, out
    assert "RebindError: command.tau cannot be rebound" in out and "command.tau[:] = x" in out, out
    assert text.count("Traceback (most recent call last)") == 1, text
    assert 'mylaws.py", line 11, in update' in err and "command.tau = -self.tau_g" in err, err
    assert "hil/loop.py" not in text and "controller_guard.py" not in text and "controller_api.py" not in text, text
    assert "the law's traceback: logged as it happened" in out, out
