"""The whole-body law's foot-loss rule (hil.legged) on both plants, ours and MuJoCo (sim.engine:
mujoco), in lockstep through the loop: a robot rocking back from a push lifts its unloaded feet for
tens of milliseconds and is not faulted (it recovers); a robot lifted off the ground, and a foot
pulled off it while the QP stands on it, latch the fault within 50 ms and the drives damp."""
import numpy as np
import pytest

from drivers.sim.config import load_sim_config
from dynamics_cy.planning.legged_models import example_robot_data_root
from hil.legged_scenario import LeggedRig
from messages import lcmt_hil_joint_command
from messages.channels import JOINT_COMMAND

pytestmark = pytest.mark.skipif(example_robot_data_root() is None, reason="example-robot-data is not installed")


@pytest.fixture(params=["hilstack", "mujoco"])
def engine(request):
    if request.param == "mujoco":
        pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'hilstack[mujoco]')")
    return request.param


class Rig(LeggedRig):
    """A LeggedRig on `engine` recording per tick each foot's contact flag and the commands sent."""

    def __init__(self, name, engine, **controller):
        super().__init__(name, load_sim_config({"engine": engine}), **controller)
        self.flags, self.commands = [], []
        self.lc.subscribe(JOINT_COMMAND, lambda ch, data: self.commands.append(lcmt_hil_joint_command.decode(data)))

    def watch(self, seconds):
        """Runs `seconds`, recording the contact flags; returns the milliseconds until a fault (or None)."""
        for ms in range(int(round(seconds * 1e3))):
            self.run(0.001)
            self.flags.append(tuple(self.robot.msg.contact))
            if self.fault is not None:
                return ms
        return None

    def longest_off(self) -> int:
        """The longest run of statuses in which some foot reported no contact."""
        longest = 0
        for foot in np.array(self.flags, dtype=bool).T:
            run = 0
            for touching in foot:
                run = 0 if touching else run + 1
                longest = max(longest, run)
        return longest

    def damps(self) -> bool:
        last = self.commands[-1]
        return last.num_pd == last.num_joints and max(last.kp) == 0 and min(last.kd) > 0 and not any(last.tau)


def test_a_robot_rocking_back_from_a_push_keeps_going(engine):
    """9 N·s sideways on the Go2: its right feet leave the ground for far longer than foot_loss_ticks
    (5) while it rocks on its left feet, the QP asking them for little; no fault, and it comes back
    to its height. With foot_loss_load 0 (a foot lost whenever the QP asks it for anything) the same
    push latches the fault, as the old rule did."""
    rig = Rig("go2", engine).run(0.5)
    z0 = rig.base()[2]
    rig.robot.push([0.0, 90.0, 0.0], 0.1)
    assert rig.watch(2.5) is None
    assert rig.longest_off() > 20 and all(rig.robot.msg.contact)
    assert abs(rig.base()[2] - z0) < 3e-3
    strict = Rig("go2", engine, foot_loss_load=0.0).run(0.5)
    strict.robot.push([0.0, 90.0, 0.0], 0.1)
    assert strict.watch(1.0) is not None and "lost contact" in strict.fault and strict.damps()


def test_a_robot_lifted_off_the_ground_faults_within_50_ms(engine):
    """400 N upwards on the Go2's base for 0.2 s (2.5 times its weight): every foot leaves the ground;
    the law faults ("every foot lost contact") before any joint limit and the drives damp."""
    rig = Rig("go2", engine).run(0.5)
    rig.robot.push([0.0, 0.0, 400.0], 0.2)
    ms = rig.watch(0.2)
    assert ms is not None and ms < 50 and "every foot lost contact" in rig.fault
    rig.run(0.01)
    assert rig.damps()


def test_a_foot_pulled_off_the_ground_faults_within_50_ms(engine):
    """400 N upwards on the G1's right ankle for 0.3 s: the sole leaves the ground while the QP stands
    on it (about 180 N asked): that foot is lost, the law faults and the drives damp."""
    rig = Rig("g1", engine).run(0.5)
    physics = rig.robot.physics
    physics.push("right_ankle_roll_link", [0, 0, 0, 0, 0, 400.0], physics.time_ns, physics.time_ns + 300_000_000)
    ms = rig.watch(0.3)
    assert ms is not None and ms < 50, rig.fault
    assert "foot right_ankle_roll_link lost contact" in rig.fault and "asks it for" in rig.fault
    rig.run(0.01)
    assert rig.damps()
