"""The robot behind the loop, read and written once per tick (after ros2_control's SystemInterface
read() / write()): one protocol's status decoded in place and command encoded and published, with
what the driver in front of the arm demands. The loop knows no protocol and no driver.

    hw = hardware_for(cfg, robot, lc, channels, clock, q_step)   # subscribes: status, command channels
    hw.await_status(tick, wait_s)       lockstep over a link: block for the next status
    hw.read(tick)                       the LCM messages waiting; a status is decoded, timed, re-signed
    hw.q, hw.v, hw.tau_measured, hw.tau_commanded, hw.tau_external      MultibodyPlant's signs
    hw.timing                           StatusTiming: the robot's clock, the status period, counts
    hw.guard_active(now_ns)             the driver's start guard: no command yet
    hw.second_commander()               a command this loop did not send: the fault's text, once
    hw.second_status_stream()           two status streams interleave on the status channel: the text, once
    hw.write(now_ns, tau, q, v, commanding)    the command, robot.command's fields, stamped
    hw.write_exit(now_ns, tau)          the exit command: positions held, velocities 0
    hw.close()                          unsubscribes

Protocols (robot.protocol), a class each: IiwaHardware (lcmt_iiwa_*: the measured and commanded
torques are negated on the wire) and PandaHardware (lcmt_panda_*: the external torque is). Drivers
(robot.driver), a `Driver` policy each, as drivers/sim/real_drivers.py models them: drake_sim (Drake's
simulated drivers) demands nothing; kuka_driver aborts on a command within its 250 ms
--start_command_guard, so the first waits robot.kuka_driver.start_guard; franka_driver drops a command whose
utime is more than --expire_sec from its wall clock, so commands are stamped on it. `auto`: the iiwa's
driver is told from its first status (IiwaHardware.identify), the Panda's is drake_sim. A legged
robot's floating base is hil.floating_base.FloatingBaseHardware, on the same `Hardware` base.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from drivers.core import _control
from drivers.core.clock import StatusClock
from drivers.core.config import RunConfig
from drivers.core.robot import Robot
from messages.codec import CommandDecoder, CommandEncoder, StatusDecoder

log = logging.getLogger(__name__)

COMMAND_FIELDS = {"torque": ("torque",), "position_and_torque": ("position", "torque"),
                  "position": ("position",), "velocity": ("velocity",)}


@dataclass(frozen=True)
class Driver:
    """What the driver in front of the arm demands of the commands."""
    name: str
    start_guard: bool = False       # no command until robot.kuka_driver.start_guard after the first status
    stamp_wall: bool = False        # utime on its wall clock: the status's + the time since it arrived


READ_LIMIT = 64
"""Messages one tick handles at most (Hardware.read): a longer backlog (the statuses queued before the
first tick, after a stall) is read over several ticks; hil.replay delivers a tick no more."""

DRIVERS = {d.name: d for d in (Driver("drake_sim"), Driver("kuka_driver", start_guard=True),
                               Driver("franka_driver", stamp_wall=True))}


@dataclass
class StatusTiming:
    """The newest valid status: when and on which tick it came, and the robot's clock it gives."""
    clock: StatusClock = field(default_factory=StatusClock)   # continuous across utime −1 and clock switches
    robot_ns: int = 0           # the robot's clock at the newest status
    arrived_ns: int = 0         # loop clock when the newest status arrived
    first_ns: int = -1          # loop clock when the first arrived
    last_tick: int = -1         # tick at which the newest arrived (-1: none yet)
    received: int = 0
    rejected: int = 0


class CommandState:
    """What is sent: which fields the robot takes, the position and velocity commands (rate limited,
    or the held position while not commanding), the newest commands sent (to know our own) and their
    count."""

    def __init__(self, fields: tuple, n: int, size: int, q_step):
        self.send_q, self.send_v, self.send_tau = ("position" in fields, "velocity" in fields, "torque" in fields)
        self.q_cmd, self.v_cmd, self.q_hold = np.zeros(n), np.zeros(n), np.zeros(n)
        self.q_lo, self.q_hi = np.zeros(n), np.zeros(n)
        self.q_step = q_step            # position setpoints move at most v_max·T per command
        self.holding = False            # q_hold latched: the position commands hold it
        self.ring = _control.SentRing(size)
        self.sent = 0
        self.exit_sent = False


@dataclass
class ForeignCommands:
    """A second commander: valid commands on our command channel that this loop did not send."""
    seen: int = 0
    reported: int = 0


class Hardware:
    """What every protocol shares: the status subscription and its timing, the command channel
    watched for a second commander, reading and awaiting statuses, the driver's start guard. A
    subclass decodes (`_decode(data)`: for a valid status the robot's steady clock in µs where the
    protocol carries one, else −1; None for an invalid one, with `last_error`), keeps the commands it
    sent in `sent` (a _control.SentRing: its own, looped back, are not another commander's), checks
    a command (`_valid_command(data)`), and writes.

    Its arrays, refreshed in place on each valid status: q, v (the plant's positions and velocities),
    q_joints, v_joints (the actuated joints' part of them: what the safety checks and the trajectory
    tracks), tau_measured, tau_commanded, tau_external (the actuated joints, MultibodyPlant's signs);
    `contact` (hil.controller_api.ContactState) where the protocol reports contact, else None."""

    protocol = ""
    sends_setpoints = False         # the command carries positions or velocities (the law's command.q / .v)
    drive_damping = False           # the safe command is the drives' own damping, not a torque
    has_tau_external = True
    contact = None

    def __init__(self, cfg: RunConfig, lc, channels, clock):
        self.lc, self.clock, self.channels, self.url = lc, clock, channels, cfg.lcm.url
        self.start_timeout = cfg.loop.start_timeout
        self.timing = StatusTiming()
        self.guard_ns = 0
        self.foreign = ForeignCommands()
        self.streams_told = False
        self.tick = 0                   # the tick statuses are stamped with (read, await_status)
        self._subscriptions = [lc.subscribe(channels.status, self._on_status),
                               lc.subscribe(channels.command, self._on_command)]

    def close(self) -> None:
        """Stops listening on the status and command channels."""
        for subscription in self._subscriptions:
            self.lc.unsubscribe(subscription)
        self._subscriptions = []

    # --- read -----------------------------------------------------------------------------------
    def _on_status(self, channel: str, data: bytes) -> None:
        timing = self.timing
        steady_us = self._decode(data)
        if steady_us is not None:
            timing.last_tick = self.tick
            timing.received += 1
            timing.arrived_ns = now = self.clock.now_ns()
            timing.robot_ns = timing.clock.update(self.status.utime, now, steady_us)
            if timing.first_ns < 0:
                timing.first_ns = now
                self._first_status()
        else:
            timing.rejected += 1
            if timing.rejected <= 10 or timing.rejected % 1000 == 0:
                log.warning("rejected status #%d on %s: %s", timing.rejected, channel, self.last_error)

    def _first_status(self) -> None:
        """Called once, on the first valid status."""

    def _on_command(self, channel: str, data: bytes) -> None:
        if self.sent.seen(data):
            return                          # our own, looped back
        if self._valid_command(data):       # a garbled message commands nothing: the driver drops it
            self.foreign.seen += 1

    def read(self, tick: int, limit: int = READ_LIMIT) -> None:
        """Handles the LCM messages already waiting (at most `limit`), without blocking: a status is
        decoded into q, v and the torques, timed and stamped with `tick`; a command not ours is
        counted. The other subscribers on the same LCM (e-stop, a streamed plan) handle theirs
        meanwhile."""
        self.tick = tick
        handled = 0
        while handled < limit and self.lc.handle_timeout(0) > 0:
            handled += 1

    def await_status(self, tick: int, wait_s: float) -> None:
        """Lockstep over a link (the plant steps in another process, once per command): blocks until a
        status newer than the last arrives, or wait_s passes (then the tick runs with a stale one); for
        the first status, up to loop.start_timeout (the driver may still be starting)."""
        self.tick = tick
        timing = self.timing
        wait = wait_s if timing.received else max(wait_s, self.start_timeout)
        seen, end = timing.received, time.monotonic() + wait
        while timing.received == seen:
            left = end - time.monotonic()
            if left <= 0:
                return
            self.lc.handle_timeout(max(1, int(left * 1e3)))

    def guard_active(self, now_ns: int) -> bool:
        """Whether the driver's start guard holds the commands back: a status has come, less than
        guard_ns ago."""
        return self.guard_ns > 0 and self.timing.last_tick >= 0 and now_ns - self.timing.first_ns < self.guard_ns

    def second_commander(self) -> str | None:
        """The fault's text when commands this loop did not send came on the command channel since the
        last call, else None."""
        foreign = self.foreign
        if foreign.seen <= foreign.reported:
            return None
        foreign.reported = foreign.seen
        return (f"second commander: a command on {self.channels.command} that this loop did not send "
                f"(another controller is running on {self.url})")

    def second_status_stream(self) -> str | None:
        """The fault's text, once, when the robot's clock went back and forth (StatusClock.interleaved:
        two robots or simulators publish on our status channel), else None."""
        clock = self.timing.clock
        if not clock.interleaved or self.streams_told:
            return None
        self.streams_told = True
        return (f"two status streams on {self.channels.status}: the robot's clock went back twice within "
                f"{clock.INTERLEAVED} statuses (utime {clock.back_utime} after {clock.back_from}): two robots or "
                f"simulators publish on {self.url}; give each session its own port (lcm.url: "
                f"\"udpm://239.255.76.67:PORT?ttl=0\", docs/hil.md)")

    @property
    def exit_pending(self) -> bool:
        """Whether the exit command is still due: a status came, and it has not gone out."""
        return self.timing.last_tick >= 0 and not self.commands.exit_sent

    def release_hold(self) -> None:
        """The loop commands again (safety RUNNING)."""

    def summary(self) -> dict:
        """What the protocol adds to the run's summary."""
        return {}


class ArmHardware(Hardware):
    """One arm over its protocol's LCM status and command (a subclass per robot.protocol)."""

    torque_signs = (1.0, 1.0, 1.0)      # measured, commanded, external: the wire's to MultibodyPlant's

    def __init__(self, cfg: RunConfig, robot: Robot, lc, channels, clock, q_step):
        n = robot.n
        self.status = StatusDecoder(self.protocol, n, channel=channels.status)
        self.q, self.v = self.status.position_measured, self.status.velocity_estimated
        self.q_joints, self.v_joints = self.q, self.v
        self.tau_measured, self.tau_commanded, self.tau_external = np.zeros(n), np.zeros(n), np.zeros(n)
        self.auto = cfg.robot.driver == "auto"          # the driver is told from the first status
        self.driver = DRIVERS["drake_sim" if self.auto else cfg.robot.driver]
        self.start_guard_s = cfg.robot.kuka_driver.start_guard     # behind kuka_driver
        fields = COMMAND_FIELDS[cfg.robot.command]
        self.encoder = CommandEncoder(self.protocol, n, fields=fields, channel=channels.command)
        self.commands = CommandState(fields, n, self.encoder.size, q_step)
        self.sends_setpoints = self.commands.send_q or self.commands.send_v   # the law's command.q / .v
        self._command_decoder = CommandDecoder(self.protocol, n, channels.command)
        self.sent = self.commands.ring
        super().__init__(cfg, lc, channels, clock)
        self.guard_ns = self._guard_ns()

    def identify(self) -> Driver:
        """The driver (robot.driver auto) told from the first status: Drake's simulated one when the
        protocol tells none apart."""
        return DRIVERS["drake_sim"]

    def _guard_ns(self) -> int:
        return round(self.start_guard_s * 1e9) if self.driver.start_guard else 0

    # --- read -----------------------------------------------------------------------------------
    def _decode(self, data: bytes) -> int | None:
        status = self.status
        if not status.decode(data):
            self.last_error = status.last_error
            return None
        sm, sc, se = self.torque_signs
        _control.scale3(status.torque_measured, sm, self.tau_measured, status.torque_commanded, sc,
                        self.tau_commanded, status.torque_external, se, self.tau_external)
        return status.robot_utime           # panda: the robot's steady clock; else 0 (unused)

    def _first_status(self) -> None:
        if self.auto:
            self.driver = self.identify()
            self.guard_ns = self._guard_ns()

    def _valid_command(self, data: bytes) -> bool:
        return self._command_decoder.decode(data)

    # --- write ----------------------------------------------------------------------------------
    def command_utime(self, now_ns: int) -> int:
        """The command's utime: the newest status's (Drake's convention); on franka_driver that plus the
        time since it arrived (the driver compares it with its wall clock); never kuka_driver's −1
        ("no command"): the loop's clock in µs then."""
        utime = self.status.utime
        if utime < 0:
            return max(now_ns // 1000, 0)
        if self.driver.stamp_wall:
            return utime + (now_ns - self.timing.arrived_ns) // 1000
        return utime

    def write(self, now_ns: int, tau, q, v, commanding: bool) -> bool:
        """Encodes and publishes the command: `tau`, and per robot.command the positions (`q` while
        commanding, else the measured q latched when it stopped) and velocities (`v`, else 0), stamped
        on the driver's clock; False if it could not be encoded (not finite). While commanding the
        positions move at most q_step (v_max·T) from the previous command's: a jump of q (the robot's
        clock jumping after a stall, a streamed plan) would otherwise reach the driver's position
        interpolator (Drake's SimIiwaDriver differentiates it over 1 ms) as a velocity spike."""
        c = self.commands
        if self.sends_setpoints:
            if commanding:
                if c.sent:                                 # q_cmd holds the previous command's
                    np.subtract(c.q_cmd, c.q_step, out=c.q_lo)
                    np.add(c.q_cmd, c.q_step, out=c.q_hi)
                    np.clip(q, c.q_lo, c.q_hi, out=c.q_cmd)
                else:
                    np.copyto(c.q_cmd, q)
                if c.send_v:
                    np.copyto(c.v_cmd, v)
            else:
                if not c.holding and _control.first_nonfinite(self.q) < 0:
                    np.copyto(c.q_hold, self.q)
                    c.holding = True
                np.copyto(c.q_cmd, c.q_hold)
                c.v_cmd.fill(0.0)
        view = self.encoder.encode(self.command_utime(now_ns), torque=tau if c.send_tau else None,
                                   position=c.q_cmd if c.send_q else None,
                                   velocity=c.v_cmd if c.send_v else None)
        if view is None:
            return False
        self.encoder.publish(self.lc)
        c.ring.store(view)
        c.sent += 1
        return True

    def release_hold(self) -> None:
        """The loop commands again (safety RUNNING): the next stop latches the position anew."""
        self.commands.holding = False

    def write_exit(self, now_ns: int, tau) -> bool:
        """The exit command, once, as the loop leaves: `tau`, positions the measured q (the arm holds
        where it is), velocities 0. Returns whether it went out."""
        c = self.commands
        if _control.first_nonfinite(self.q) < 0:
            np.copyto(c.q_hold, self.q)
        c.holding = True
        c.exit_sent = self.write(now_ns, tau, None, None, commanding=False)
        return c.exit_sent


class IiwaHardware(ArmHardware):
    """lcmt_iiwa_status / lcmt_iiwa_command: the measured and commanded torques negated on the wire."""

    protocol = "iiwa"
    torque_signs = (-1.0, -1.0, 1.0)

    def identify(self) -> Driver:
        """kuka_driver's first status has utime −1 (its clock not yet synchronised with FRI's) or NaN
        joint_position_ipo (FRI not COMMANDING); Drake's simulated driver's has neither."""
        s = self.status
        kuka = s.utime == -1 or _control.first_nonfinite(s.position_ipo) >= 0
        return DRIVERS["kuka_driver" if kuka else "drake_sim"]


class PandaHardware(ArmHardware):
    """lcmt_panda_status / lcmt_panda_command: the external torque (tau_ext_hat_filtered) negated on
    the wire."""

    protocol = "panda"
    torque_signs = (1.0, 1.0, -1.0)


PROTOCOLS = {"iiwa": IiwaHardware, "panda": PandaHardware}


def robot_for(cfg: RunConfig) -> Robot:
    """The loop's Robot of a run config: robot.model parsed (drivers.core.robot.load_robot), or for
    robot.protocol floating_base the legged preset (hil.floating_base.legged_robot)."""
    if cfg.robot.protocol == "floating_base":
        from .floating_base import legged_robot
        return legged_robot(cfg)
    from drivers.core.robot import load_robot
    return load_robot(cfg.robot)


def hardware_for(cfg: RunConfig, robot: Robot, lc, channels, clock, q_step) -> Hardware:
    """The interface to robot.protocol's robot behind robot.driver, listening on the status and
    command channels; `clock` (the loop's) times the statuses, `q_step` (v_max·T) limits each
    position step of an arm."""
    if robot.protocol == "floating_base":
        from .floating_base import FloatingBaseHardware
        return FloatingBaseHardware(cfg, robot, lc, channels, clock)
    return PROTOCOLS[robot.protocol](cfg, robot, lc, channels, clock, q_step)
