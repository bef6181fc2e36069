"""The whole servo chain: simulated XM430 servos driving the simulated arm (drivers.sim physics) on a
pty, the servo-bus driver, and a stand-in loop on memq:// LCM that commands gravity compensation and
a joint impedance: the arm holds against gravity and moves to a target, and falls without them; the
same on a Koch-like mixed bus (XL430 in position mode, XL330 in current mode)."""
import gc
import sys
import threading
import time

import lcm
import numpy as np
import pytest

from drivers.core.config import channels_for
from drivers.core.robot import load_robot
from drivers.run_config import load_config
from drivers.serial.servo_driver import ServoDriver
from drivers.serial.servo_plant import build_bus
from messages.codec import CommandEncoder, StatusDecoder

CONFIG = "configs/servo/dxl_arm.yaml"
KOCH = "configs/servo/koch.yaml"


class Chain:
    def __init__(self, tmp_path, config=CONFIG):
        # Timeouts generous for a loaded 2-core machine: a stall must not turn the torque off.
        self.cfg = load_config(config, {"servo_bus": {"port": str(tmp_path / "bus"), "read_timeout": 0.2,
                                                      "command_timeout": 2.0, "link_timeout": 3.0}})
        self.robot = load_robot(self.cfg.robot)
        self.bus = build_bus(self.cfg)
        self.thread = threading.Thread(target=self.bus.serve, daemon=True)
        self.thread.start()
        self.lc = lcm.LCM("memq://")
        self.channels = channels_for(self.cfg)
        self.driver = ServoDriver(self.cfg.servo_bus, self.robot.joint_names, "panda",
                                  self.channels, self.lc)
        n = self.robot.n
        self.status = StatusDecoder("panda", n)
        self.commands = CommandEncoder("panda", n, fields=("torque",), channel=self.channels.command)
        self.kernels = self.robot.plant.kernels()
        self.tau, self.g = np.zeros(n), np.zeros(n)
        self.gravity_comp, self.q_target, self.kp, self.kd = True, None, 1.0, 0.03
        self.commanding = True                   # False: no loop yet, the statuses go unanswered
        self.lc.subscribe(self.channels.status, self._on_status)

    def _on_status(self, channel, data):
        assert self.status.decode(data)
        if not self.commanding:
            return
        q, v = self.status.position_measured, self.status.velocity_estimated
        self.kernels.gravity(q, self.g)
        self.tau[:] = -self.g if self.gravity_comp else 0.0
        if self.q_target is not None:
            self.tau += self.kp * (self.q_target - q)
        if self.gravity_comp:
            self.tau -= self.kd * v                  # damping: the current quanta (4.8 mN m) drift an undamped arm
        self.commands.encode(0, torque=self.tau)
        self.commands.publish(self.lc)

    def spin_until_torque(self, limit: float = 10.0) -> None:
        """Until the driver runs the commands (it holds the arm from its connect to the first)."""
        end = time.monotonic() + limit
        while not (self.driver.torque_on and self.driver.commands_received) and time.monotonic() < end:
            self.driver.spin(0.05)
        assert self.driver.torque_on and not self.driver.holding, self.driver.summary()

    def close(self):
        assert self.driver.torque_offs == 0, "the torque went off during the run (a timeout)"
        self.driver.shutdown()
        self.bus.stop()


@pytest.fixture
def chain(tmp_path, request):
    """The simulated bus, the driver and the law share this process (and pytest's heap): the collector
    is frozen and off meanwhile, as the real-time loop runs (loop.gc: off), so that a full collection of
    a long suite's heap does not stall the servos' thread under a held goal current."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    gc.collect()
    gc.freeze()
    gc.disable()
    c = Chain(tmp_path, getattr(request, "param", CONFIG))
    try:
        yield c
        c.close()
    finally:
        gc.unfreeze()
        gc.enable()
        sys.setswitchinterval(interval)


def test_gravity_compensation_holds_and_impedance_moves(chain):
    chain.spin_until_torque()
    chain.driver.spin(0.1)
    q_hold = chain.status.position_measured.copy()
    chain.driver.spin(1.0)
    assert chain.driver.full_reads > 100
    assert chain.status.position_measured == pytest.approx(q_hold, abs=0.06)        # held (falls 0.3 without)
    assert chain.status.torque_measured[1] == pytest.approx(-chain.g[1], rel=0.1)  # the shoulder carries it
    target = np.array([0.5, 0.1, 0.4])
    chain.q_target = target
    chain.driver.spin(2.5)
    assert chain.status.position_measured == pytest.approx(target, abs=0.06)


@pytest.mark.parametrize("chain", [CONFIG, KOCH], indirect=True)
def test_the_driver_holds_the_arm_until_a_loop_commands_it(chain):
    """No loop yet (its statuses unanswered for 2 s, as while `hil run` starts on a loaded machine): the
    driver holds the arm where it found it, torque on in position mode (unpowered it falls > 1 rad in 2 s);
    the loop's first command then hands each servo to its joint's mode."""
    chain.commanding = False
    end = time.monotonic() + 10.0
    while not chain.driver.connected and time.monotonic() < end:
        chain.driver.cycle()
        time.sleep(0.001)
    q_connect = chain.bus.plant.physics.q.copy()
    chain.driver.spin(1.0)
    q_1 = chain.status.position_measured.copy()
    chain.driver.spin(1.0)
    assert chain.driver.statuses_published > 100 and chain.driver.holding
    assert chain.status.position_measured == pytest.approx(q_1, abs=0.02)           # at rest: held
    # within the servos' own position loops' sag τ_g / K (0.3 rad at the Koch's XL330 elbow, P 400)
    assert chain.status.position_measured == pytest.approx(q_connect, abs=0.35)
    chain.commanding = True
    chain.driver.spin(0.5)
    assert not chain.driver.holding and chain.driver.commands_received > 50
    modes = [s.model.modes[c] for s, c in zip(chain.bus.servos, chain.driver.controls)]
    assert [s.get("operating_mode") for s in chain.bus.servos] == modes        # each in its joint's mode


def test_without_compensation_the_arm_falls(chain):
    chain.gravity_comp = False
    chain.spin_until_torque()
    q_start = chain.status.position_measured[1]
    chain.driver.spin(0.8)
    assert abs(chain.status.position_measured[1] - q_start) > 0.3                  # the shoulder drops


@pytest.mark.parametrize("chain", [KOCH], indirect=True)
def test_mixed_bus_holds_against_gravity_and_moves(chain):
    """configs/servo/koch.yaml: the XL430 shoulders hold their share of gravity through goal positions,
    the XL330 elbow and wrist through goal currents (the gripper's through its goal position); a joint
    impedance moves every joint."""
    d = chain.driver
    assert d.controls == ["position", "position", "current", "current", "current", "position"]
    chain.kp, chain.kd = np.array(chain.cfg.controller.kp), np.array(chain.cfg.controller.kd)
    chain.spin_until_torque()
    d.spin(0.1)
    q_hold = chain.status.position_measured.copy()
    d.spin(1.0)
    assert d.full_reads > 100
    assert chain.status.position_measured == pytest.approx(q_hold, abs=0.06)
    for k in (1, 2):                                 # shoulder lift (position mode), elbow (current mode)
        assert chain.status.torque_measured[k] == pytest.approx(-chain.g[k], rel=0.15, abs=0.01), k
    target = q_hold + np.array([0.3, 0.2, -0.2, 0.2, 0.3, 0.0])
    chain.q_target = target
    d.spin(2.5)
    assert chain.status.position_measured == pytest.approx(target, abs=0.06)
