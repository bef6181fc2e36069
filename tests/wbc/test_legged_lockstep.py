"""Whole-body torque control in the loop, in lockstep over real LCM (memq://): the simulated
legged robot (drivers.sim.legged, ground contact with friction) and the loop (hil.loop) with
whole-body control (hil.legged) on Go2 and G1: standing, shifting the CoM and back, a push, and
the faults that go to the safe state (the foot-loss rule: test_foot_loss.py)."""
import numpy as np
import pytest

from drivers.sim.config import load_sim_config
from dynamics_cy.planning.legged_models import example_robot_data_root
from dynamics_cy.planning.whole_body import WholeBodyWeights
from hil.legged_scenario import LeggedRig
from messages import lcmt_hil_joint_command
from messages.channels import FLOATING_BASE_STATUS, JOINT_COMMAND
from messages.enums import FaultCode


class Rig(LeggedRig):
    """LeggedRig recording the commands the controller sends."""

    def __init__(self, name, sim=None, **controller):
        if example_robot_data_root() is None:
            pytest.skip("example-robot-data is not installed")
        super().__init__(name, sim, **controller)
        self.commands = []
        self.lc.subscribe(JOINT_COMMAND, lambda ch, data: self.commands.append(lcmt_hil_joint_command.decode(data)))


@pytest.mark.parametrize("name", ["go2", "g1"])
def test_stands_still(name):
    rig = Rig(name).run(0.5)
    settled = rig.base()                   # after the spheres settle into the penalty contact
    rig.run(1.5)
    assert rig.fault is None
    assert np.linalg.norm(rig.base() - settled) < 1e-4
    assert np.linalg.norm(rig.base() - rig.q0[4:7]) < 1e-3
    status = rig.robot.msg
    assert all(status.contact)
    mass = sum(rig.plant.get_body(b).default_mass() for b in range(rig.plant.num_bodies()))
    assert sum(f[2] for f in status.contact_force) == pytest.approx(9.81 * mass, rel=1e-3)


COM_SHIFTS = {   # robot: (posture weights, CoM shift, tolerance); the posture competes with the CoM
    "go2": (1e-4, [0.03, 0.02, 0.0], 1e-3),                         # 3.6 cm towards the front-left foot
    "g1": ([1e-3] * 12 + [1.0] * 17, [0.0, 0.05, 0.0], 1.5e-3),     # legs nearly free, waist and arms held
}


@pytest.mark.parametrize("name", ["go2", "g1"])
def test_com_shift_and_back(name):
    """The CoM target moved in a 1 s ramp and back (every foot keeps at least 5 N): the CoM gets
    within 1 mm (G1: 1.5 mm, 3% of the shift: the legs' posture weight pulls back) of each target and
    no foot lifts. On G1 a uniformly low posture weight lets the light wrist joints run free and the
    simulation diverges, as does a leg weight of 3e-4: per-joint weights hold the upper body."""
    posture, shift, tol = COM_SHIFTS[name]
    rig = Rig(name, weights=WholeBodyWeights(posture=posture), f_min=5.0).run(0.3)
    start, shift = rig.com(), np.array(shift)
    for a, b in ((0.0, 1.0), (1.0, 0.0)):
        for s in np.linspace(a, b, 101)[1:]:
            rig.law.wbc.com_target = start + s * shift
            rig.run(0.01)
        rig.run(0.5)
        np.testing.assert_allclose(rig.com(), start + b * shift, atol=tol)
        assert rig.fault is None and all(rig.robot.msg.contact)


def test_push_recovery():
    """5 N·s lateral (50 N for 0.1 s) on the base: no foot slips or lifts, the base comes back."""
    rig = Rig("go2").run(0.5)
    before = rig.base()
    rig.robot.push([0.0, 50.0, 0.0], 0.1)
    rig.run(0.1)
    assert np.linalg.norm(rig.base() - before) > 1e-3            # it was pushed
    rig.run(2.0)
    assert rig.fault is None and all(rig.robot.msg.contact)
    assert np.linalg.norm(rig.base() - before) < 1e-3


@pytest.mark.parametrize("engine", ["hilstack", "mujoco"])
def test_a_push_never_asks_a_foot_beyond_its_cone_and_tight_torque_limits_bind(engine):
    """Every tick of a 5 N·s push, standing and recovering, on our plant and on MuJoCo: no foot is
    asked for more tangential force than μ f_n; with the joints limited to 7 N·m (a third of the
    Go2's 23.7 N·m hips) the QP's torques reach the limit and stay within it, and the robot still
    recovers. The loop's safety saturates to the URDF's limits (23.7 / 45.43 N·m)."""
    if engine == "mujoco":
        pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'hilstack[mujoco]')")
    rig = Rig("go2", load_sim_config({"engine": engine}), effort_limit=7.0).run(0.5)
    np.testing.assert_array_equal(rig.loop.safety.effort, [23.7, 23.7, 45.43] * 4)
    before, worst, tau_max = rig.base(), [-np.inf], np.zeros(12)

    def each_tick(r):
        worst[0] = max(worst[0], r.law.wbc.friction_excess())
        np.maximum(tau_max, np.abs(r.law.wbc.tau), out=tau_max)

    rig.robot.push([0.0, 50.0, 0.0], 0.1)
    rig.run(2.1, each_tick)
    back = 1e-3 if engine == "hilstack" else 3e-3     # MuJoCo's soft contact: the feet creep ~2 mm
    assert rig.fault is None and np.linalg.norm(rig.base() - before) < back
    assert worst[0] <= 1e-9
    assert tau_max.max() == pytest.approx(7.0, abs=1e-6) and np.all(tau_max <= 7.0 + 1e-6)


@pytest.mark.parametrize("engine", ["hilstack", "mujoco"])
def test_the_g1s_soles_stay_in_their_cones_through_a_push(engine):
    """Every tick of a 5 N·s push on the G1, on our plant and on MuJoCo: each sole's net force in its
    friction cone (its wrench in the corners' inner pyramids), and the robot recovers."""
    if engine == "mujoco":
        pytest.importorskip("mujoco", reason="mujoco is not installed (pip install 'hilstack[mujoco]')")
    rig = Rig("g1", load_sim_config({"engine": engine})).run(0.5)
    worst = [-np.inf]
    rig.robot.push([0.0, 50.0, 0.0], 0.1)
    rig.run(1.5, lambda r: worst.__setitem__(0, max(worst[0], r.law.wbc.friction_excess())))
    assert rig.fault is None and all(rig.robot.msg.contact) and worst[0] <= 1e-9


def test_unsolvable_qp_goes_to_the_safe_state():
    """Normal forces of at least 1 kN per foot with 1 N·m joints: no solution."""
    rig = Rig("go2", effort_limit=1.0, f_min=1000.0).run(0.05)
    assert rig.fault is not None and "QP" in rig.fault
    assert rig.commands[-1].num_pd == rig.commands[-1].num_joints


def test_statuses_of_another_robot_are_rejected_and_time_out_to_the_safe_state():
    """Statuses with a joint too many (another robot on the channel) are rejected, each counted; with
    no valid status for safety.status_timeout_periods the loop faults and the drives damp."""
    rig = Rig("go2").run(0.05)
    rig.loop.sim = None                        # the simulated robot stops (the scheduler steps it no more)
    wrong = rig.robot.msg
    wrong.num_joints += 1
    for name in ("joint_names", "joint_position", "joint_velocity", "joint_torque"):
        getattr(wrong, name).append("extra" if name == "joint_names" else 0.0)
    for _ in range(60):
        rig.lc.publish(FLOATING_BASE_STATUS, wrong.encode())
        rig.loop.update()
    assert rig.loop.hardware.timing.rejected == 60
    assert rig.loop.safety.fault == FaultCode.STATUS_TIMEOUT
    last = rig.commands[-1]
    assert last.num_pd == last.num_joints and max(last.kp) == 0 and min(last.kd) > 0 and not any(last.tau)
