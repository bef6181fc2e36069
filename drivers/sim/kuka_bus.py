"""kuka_driver --num_robots N in front of a station's iiwas: one status of 7·N joints, one command of 7·N.

From drake-iiwa-driver's kuka_driver.cc, the specification: one KukaLCMClient serves every robot's FRI
session. Its lcmt_iiwa_status has num_joints 7·N, robot i's joints at [7i, 7i + 7) of every array, and
is published on --lcm_status_channel whenever any robot's FRI session stepped; its utime is robot 0's
FRI time on the host's clock (the TimeSyncFilter is fed by robot 0 only), −1 before it synchronised.
It reads one lcmt_iiwa_command on --lcm_command_channel and copies robot i's 7 positions (and torques,
when num_torques is not 0) from offset 7i, asserting num_joints >= 7·N (and num_torques >= 7·N): a
shorter command is undefined behaviour in a release build, so the model stops the driver, as for one
robot. The start-command guard is the process's, and any robot's unsafe state (external torque) or a
command within the guard throws and ends the process: every arm stops at once.

Each arm keeps its own copy of the single-robot model (drivers.sim.real_drivers.KukaDriver: its FRI
session, firmware law, velocity filter and checks); KukaDriverBus joins their statuses into the one
message and splits the one command, and takes the whole process down when one of them ends.
"""
from __future__ import annotations

import numpy as np

from messages.codec import StatusDecoder, StatusEncoder
from messages.drake import lcmt_iiwa_command

from .real_drivers import ABORT_STATUS

JOINTS = 7


class _ArmPort:
    """The LCM an arm's driver model publishes on: each status goes into the bus's arrays at once."""

    def __init__(self, bus: "KukaDriverBus", index: int):
        self.bus, self.index = bus, index

    def publish(self, channel: str, data) -> None:
        self.bus.status_from(self.index, data)

    def subscribe(self, channel: str, handler):
        return None

    def unsubscribe(self, subscription) -> None:
        pass


class KukaDriverBus:
    """One kuka_driver process for `robots` (drivers.sim.robot.SimulatedRobot, each made with
    `port(i)` as its LCM and sim.driver kuka_driver): the combined status on `status_channel` of `lc`,
    the combined command from `command_channel`. flush() after each step publishes the status when an
    arm's came."""

    def __init__(self, lc, status_channel: str, command_channel: str, count: int):
        self.lc, self.status_channel, self.command_channel = lc, status_channel, command_channel
        self.robots: list = []
        self.count = n = count
        self.arm_status = StatusDecoder("iiwa", JOINTS)
        self.encoder = StatusEncoder("iiwa", JOINTS * n, status_channel)
        names = ("position_measured", "velocity_estimated", "position_commanded", "position_ipo",
                 "torque_measured", "torque_commanded", "torque_external")
        self.arrays = {name: np.zeros(JOINTS * n) for name in names}
        self.utime = -1
        self.stepped = False
        self.statuses_published = 0
        self.commands_received = self.commands_rejected = 0
        self.subscription = lc.subscribe(command_channel, self.on_command) if lc is not None else None

    def port(self, index: int) -> _ArmPort:
        return _ArmPort(self, index)

    # --- statuses in, one status out ----------------------------------------------------------------
    def status_from(self, index: int, data) -> None:
        """Robot `index`'s 7-joint status (UpdateRobotState): into its slice; robot 0's sets the utime."""
        s = self.arm_status
        if not s.decode(bytes(data)):
            return
        lo = JOINTS * index
        for name, array in self.arrays.items():
            array[lo:lo + JOINTS] = getattr(s, name)
        if index == 0:
            self.utime = s.utime
        self.stepped = True

    def flush(self) -> None:
        """After a step of every robot: the process ends when one robot's model did; else
        PublishStateUpdate when a robot stepped."""
        i = next((i for i, r in enumerate(self.robots) if r.exited is not None), None)
        if i is not None:
            ended = self.robots[i].exited
            if ended.message == "Robot0 is in an unsafe state.":     # (each model is its own robot 0)
                ended.message = f"Robot{i} is in an unsafe state."
            for r in self.robots:
                if r.exited is None:
                    r.abort(ended.status, ended.message)
            return
        if not self.stepped or self.lc is None:
            return
        self.stepped = False
        a = self.arrays
        ipo = a["position_ipo"]
        finite = bool(np.isfinite(ipo).all())
        self.encoder.encode(self.utime, position_measured=a["position_measured"],
                            velocity_estimated=a["velocity_estimated"], position_commanded=a["position_commanded"],
                            position_ipo=ipo if finite else None, torque_measured=a["torque_measured"],
                            torque_commanded=a["torque_commanded"], torque_external=a["torque_external"])
        if finite:
            self.encoder.publish(self.lc)
        else:                               # NaN ipo outside COMMANDING, as each robot's slice has it
            data = bytearray(self.encoder.tobytes())
            start = 20 + 3 * 8 * JOINTS * self.count
            data[start:start + 8 * JOINTS * self.count] = ipo.astype(">f8").tobytes()
            self.lc.publish(self.status_channel, bytes(data))
        self.statuses_published += 1

    # --- one command in, a command per robot ---------------------------------------------------------
    def on_command(self, channel: str, data: bytes) -> None:
        """HandleCommandMessage, then each robot's command() reading its 7 joints at offset 7i."""
        try:
            msg = lcmt_iiwa_command.decode(data)
        except Exception:                    # LCM drops what does not decode as lcmt_iiwa_command
            self.commands_rejected += 1
            return
        need = JOINTS * self.count
        torque_only = self.robots[0].config.kuka_driver.torque_only
        short = (not torque_only and msg.num_joints < need) or 0 < msg.num_torques < need
        first = self.robots[0]
        if first.driver.command_started and short:
            first.abort(ABORT_STATUS, f"a command of {msg.num_joints} positions and {msg.num_torques} torques for "
                                      f"--num_robots {self.count}: kuka_driver copies {need} out of it unchecked "
                                      "(undefined behaviour on the arms; the simulated driver stops)")
            self.flush()
            return
        self.commands_received += 1
        for i, robot in enumerate(self.robots):
            arm = lcmt_iiwa_command()
            arm.utime = msg.utime
            lo = JOINTS * i
            if msg.num_joints >= need:
                arm.num_joints, arm.joint_position = JOINTS, list(msg.joint_position[lo:lo + JOINTS])
            if msg.num_torques >= need:
                arm.num_torques, arm.joint_torque = JOINTS, list(msg.joint_torque[lo:lo + JOINTS])
            robot._on_command(robot.channels.command, arm.encode())
        self.flush()                         # a command within the guard ended the process

    def summary(self) -> dict:
        return {"num_robots": self.count, "status_channel": self.status_channel,
                "command_channel": self.command_channel, "statuses_published": self.statuses_published,
                "commands_received": self.commands_received, "commands_rejected": self.commands_rejected}

    def close(self) -> None:
        if self.subscription is not None:
            self.lc.unsubscribe(self.subscription)
            self.subscription = None
