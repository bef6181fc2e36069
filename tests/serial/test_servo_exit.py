"""The servo arm is left safe on every exit path of the servo-bus driver. `hil servo-bus` runs as a
process of its own (UDP multicast LCM, as `hil demo` starts it); the simulated servos answer on a
real pty from this process, so their control tables are read here. The servos are torqued on by
the loop's commands, then: SIGTERM, SIGINT, a burst of SIGINTs (an impatient Ctrl-C), SIGHUP (the
terminal closed); the bus dropped and back with the loop gone; the driver stopped while the bus is
away; and, in process, an exception and a Ctrl-C raised inside the driver's loop. Every servo's
torque_enable is 0 afterwards; a stopped `hil servo-bus` exits 0 (docs/servo_bus.md, section 6)."""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import lcm
import numpy as np
import pytest
import yaml

from drivers.core.config import channels_for
from drivers.run_config import load_config
from drivers.serial.servo_bus import SimulatedServoBus
from drivers.serial.servo_config import load_servo_config
from drivers.serial.servo_driver import ServoDriver
from drivers.serial.servo_sim import SimulatedServo
from messages.channels import Channels
from messages.codec import CommandEncoder
from tests.conftest import REPO

CONFIGS = REPO / "configs" / "servo"
# Generous for a loaded 2-core machine: a stall must not look like a lost bus or a silent loop.
BUS = {"read_timeout": 0.1, "link_timeout": 2.0, "command_timeout": 5.0, "rate": 200}


def write_config(tmp_path: Path, name: str, **bus) -> Path:
    """configs/servo/NAME with its bus on a pty link in tmp_path and the keys `bus` (over BUS)."""
    data = yaml.safe_load((CONFIGS / name).read_text())
    if not data["robot"]["model"].startswith("package://"):
        data["robot"]["model"] = str((CONFIGS / data["robot"]["model"]).resolve())
    data["servo_bus"].update(port=str(tmp_path / "bus"), **{**BUS, **bus})
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def wait_until(condition, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


class Arm:
    """The servos of a run config on their simulated bus in this process, `hil servo-bus` on it, and a
    stand-in loop publishing a small torque command at 200 Hz (until stop_commands())."""

    def __init__(self, config: Path, url: str, tau: float = 0.005):
        cfg = load_config(config)
        self.bus_config = cfg.servo_bus
        self.servos = [SimulatedServo(j.servo_model, j.id) for j in self.bus_config.joints]
        for s in self.servos:
            s.set("return_delay_time", 0)
        self.bus = SimulatedServoBus(self.bus_config.protocol, self.servos, self.bus_config.port).start()
        self.output: list[str] = []
        self.process = subprocess.Popen([sys.executable, "-m", "hil", "servo-bus", str(config), "--lcm-url", url],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.lc = lcm.LCM(url)
        channels = channels_for(cfg)
        self.commands = CommandEncoder(cfg.robot.protocol, len(self.servos), fields=("torque",),
                                       channel=channels.command)
        self.tau = np.full(len(self.servos), tau)
        self._quiet = threading.Event()
        self._loop = threading.Thread(target=self._command, daemon=True)
        self._loop.start()

    def _read(self):
        for line in self.process.stdout:
            self.output.append(line)

    def _command(self):
        while not self._quiet.wait(0.005):
            self.commands.encode(0, torque=self.tau)
            self.commands.publish(self.lc)

    def stop_commands(self):
        self._quiet.set()
        self._loop.join(2)

    def torque(self) -> list[int]:
        return [s.get("torque_enable") for s in self.servos]

    def wait_torque(self, value: int, timeout: float = 20.0) -> None:
        assert wait_until(lambda: self.torque() == [value] * len(self.servos), timeout), \
            (self.torque(), self.text())

    def stop(self, *signals, timeout: float = 20.0) -> int:
        """Sends `signals` (1 ms apart) and returns the exit status."""
        for sig in signals:
            self.process.send_signal(sig)
            time.sleep(0.001)
        code = self.process.wait(timeout)
        self._reader.join(5)
        return code

    def text(self) -> str:
        return "".join(self.output)

    def close(self):
        self.stop_commands()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.bus.stop()


@pytest.fixture
def arm(tmp_path, multicast_url):
    arms = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)          # the bus thread answers on time beside the command thread

    def make(name: str = "dxl_arm.yaml", **bus):
        arms.append(Arm(write_config(tmp_path, name, **bus), multicast_url))
        return arms[-1]

    yield make
    for a in arms:
        a.close()
    sys.setswitchinterval(interval)


@pytest.mark.parametrize("name, signals", [
    ("dxl_arm.yaml", (signal.SIGTERM,)), ("dxl_arm.yaml", (signal.SIGINT,)),
    ("dxl_arm.yaml", (signal.SIGINT,) * 5), ("dxl_arm.yaml", (signal.SIGHUP,)), ("so101.yaml", (signal.SIGTERM,))],
    ids=["sigterm", "sigint", "sigint-burst", "sighup", "so101-sigterm"])
def test_a_signal_stops_the_driver_with_torque_off_and_exit_0(arm, name, signals):
    """The commands keep coming to the end (command_timeout 5 s): only the exit can turn torque off."""
    a = arm(name)
    a.wait_torque(1)
    assert a.stop(*signals) == 0, a.text()
    a.wait_torque(0, timeout=2.0)
    assert "Traceback" not in a.text()
    summary = a.text().strip().splitlines()[-1]
    assert summary.startswith("hil servo-bus: cycles ") and "torque_offs 1," in summary, a.text()


def test_a_bus_back_after_a_drop_holds_the_arm_when_the_loop_is_gone(arm):
    """The adapter is pulled while the servos hold torque (they keep it: nothing reaches them), the
    loop stops commanding; when the bus comes back the driver sets the servos up again and holds
    them where they are (position mode, goal = present), as no fresh command asks for more."""
    a = arm(command_timeout=0.2, reconnect={"initial": 0.05, "max": 0.2})
    a.wait_torque(1)
    a.stop_commands()
    a.bus.stop()                                       # the adapter pulled: its thread ends, the pty goes
    time.sleep(0.5)
    assert a.torque() == [1, 1, 1]                     # the servos kept it through the drop
    a.bus.link.plug()
    a.bus.start()
    answered = a.bus.answers
    assert wait_until(lambda: a.bus.answers > answered + 50, 20.0), a.text()      # reconnected and cycling
    time.sleep(0.3)
    assert a.torque() == [1, 1, 1] and a.process.poll() is None
    for s in a.servos:
        assert s.get("operating_mode") == s.model.modes["position"], a.text()
        assert abs(s.get("goal_position") - s.get("present_position")) <= 2
    assert a.stop(signal.SIGTERM) == 0, a.text()


def test_a_driver_stopped_while_the_bus_is_away_still_turns_torque_off(arm):
    """The bus drops and comes back while the driver waits out its reconnect backoff (5 s); stopped
    then, it opens the port once more to turn the torque off before it exits."""
    a = arm(reconnect={"initial": 5.0, "max": 5.0})
    a.wait_torque(1)
    a.bus.stop()
    time.sleep(0.5)
    a.bus.link.plug()
    a.bus.start()
    assert a.torque() == [1, 1, 1]
    assert a.stop(signal.SIGTERM) == 0, a.text()
    a.wait_torque(0, timeout=2.0)


@pytest.fixture
def rig(tmp_path):
    """In process: the servo bus in a thread, a ServoDriver on memq:// LCM in this one."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    made = []

    def make():
        joints = [{"joint": f"j{k}", "id": k + 1, "model": "XM430-W350"} for k in range(3)]
        cfg = load_servo_config({"port": str(tmp_path / "bus"), "protocol": "dynamixel", "joints": joints, **BUS})
        servos = [SimulatedServo(j.servo_model, j.id) for j in cfg.joints]
        bus = SimulatedServoBus("dynamixel", servos, cfg.port).start()
        lc = lcm.LCM("memq://")
        driver = ServoDriver(cfg, [j.joint for j in cfg.joints], "panda",
                             Channels(status="PANDA_STATUS", command="PANDA_COMMAND"), lc)
        made.append((driver, bus))
        return driver, bus, servos, lc

    yield make
    for driver, bus in made:
        driver.shutdown()
        bus.stop()
    sys.setswitchinterval(interval)


@pytest.mark.parametrize("fault", ["exception", "ctrl-c"])
def test_an_exception_in_the_loop_leaves_torque_off(rig, fault):
    """A subscriber on the driver's LCM answers each status with a command (a stand-in loop); once the
    servos hold torque it raises (a bug in code sharing the driver's LCM), or this process gets a
    real SIGINT with Python's default handler (Ctrl-C in an application embedding the driver). The
    exception leaves run() through the loop, and the torque is off."""
    driver, bus, servos, lc = rig()
    commands = CommandEncoder("panda", 3, fields=("torque",), channel="PANDA_COMMAND")

    def on_status(channel, data):
        if all(s.get("torque_enable") for s in servos):
            if fault == "exception":
                raise RuntimeError("a subscriber's bug")
            os.kill(os.getpid(), signal.SIGINT)
        commands.encode(0, torque=np.full(3, 0.005))
        commands.publish(lc)

    lc.subscribe("PANDA_STATUS", on_status)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(RuntimeError if fault == "exception" else KeyboardInterrupt):
            driver.run(20.0)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not driver.connected and driver.torque_offs == 1
    assert wait_until(lambda: [s.get("torque_enable") for s in servos] == [0, 0, 0], 2.0)
