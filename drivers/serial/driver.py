"""The serial driver (`hil serial CONFIG`): a motor board on a serial link, made to look to the HIL
loop like an iiwa or Panda behind Drake's LCM driver.

    driver = SerialDriver(serial_config, joint_names, joint_kinds, "iiwa", channels, lc)
    driver.run(duration)            # or driver.spin_once() in a loop of your own

One process, one thread, event-driven: select() on the port and the LCM socket (at most
POLL_S between wake-ups), then

- port: read what is there -> StreamParser -> on each JOINT_STATE, publish the robot status
  (utime = the board's time stamp) unless the board reports FAULT or ESTOP;
- LCM: on each command, write one COMMAND frame (TORQUE, or CURRENT = torque / torque constant);
- timers: no fresh command for command_timeout, or a stale link -> the safe command (DISABLE or
  DAMPING) every SAFE_COMMAND_PERIOD; HEARTBEAT every heartbeat_period; lcmt_hil_driver_health at
  health_rate; no JOINT_STATE for stale_timeout -> stale (health says disconnected, the loop's
  commands are replaced by the safe command), for link_timeout -> close the port and reconnect
  with exponential backoff. A connection counts from the board's CONFIG (asked for on opening).

Bad bytes, frames and commands are counted, never raised; what cannot work (a board with another
joint count, effort kind or joint kinds) raises drivers.core.schema.ConfigError naming it.

pyserial opens and configures the port (any URL it accepts) and does the I/O of URL ports; on a
device file (a tty, a pty) the driver reads and writes the port's file descriptor itself, as
pyserial does inside, without the select, the copy and the Timeout object pyserial's read() and
write() add to every call (fd_io=False: pyserial's read() and write() there too, for comparison:
benchmarks/bench_serial.py).
"""
from __future__ import annotations

import logging
import os
import select
import sys
import threading
import time
from collections import deque

import numpy as np
import serial

from drivers.core.config import open_lcm
from drivers.core.schema import ConfigError
from drivers.core.signals import stop_on_signals
from drivers.sim.config import per_joint
from messages.codec import CommandDecoder, StatusEncoder
from messages.hilmsg import lcmt_hil_driver_health

from .codec import FrameEncoder
from .config import SAFE_COMMAND_PERIOD, SerialConfig
from .errors import JointCountError
from .messages import Command, ConfigRequest, Heartbeat
from .parser import StreamParser
from .protocol import CommandMode, EffortKind, JointKind, MsgType, NodeState, StatusFlag, frame_size

log = logging.getLogger(__name__)

POLL_S = 0.001
"""s: the longest the driver sleeps between looks at its timers."""
CONFIG_REQUEST_PERIOD_NS = 100_000_000
RING = 64  # commands remembered by sequence number, for the torque_commanded echo
UNCONTROLLED = StatusFlag.FAULT | StatusFlag.ESTOP
BOARD_FAULT_FLAGS = UNCONTROLLED | StatusFlag.COMMAND_TIMEOUT
PANDA_IDLE, PANDA_MOVE, PANDA_TORQUE = 1, 2, 4


def robot_joint_kinds(plant, joint_names: list[str]) -> list[JointKind]:
    """The protocol's JointKind of each named joint of `plant`."""
    return [JointKind.PRISMATIC if plant.GetJointByName(name).type_name() == "prismatic" else JointKind.REVOLUTE
            for name in joint_names]


class SerialDriver:
    """The driver of one board on `config.port` for a robot with these joints (protocol order).

    protocol: "iiwa" or "panda" (the LCM types); channels: messages.channels.Channels (status,
    command, driver_health); lc: an lcm.LCM. Status signs follow Drake's hardware drivers (as
    drivers/sim does): iiwa torque_measured and torque_commanded are the negated joint torques.
    fd_io: on a device file, read and write its file descriptor directly (False: through pyserial's
    Serial.read() and write(), as for URL ports).
    """

    def __init__(self, config: SerialConfig, joint_names: list[str], joint_kinds: list[JointKind], protocol: str,
                 channels, lc, path: str = "serial", clock=time.monotonic_ns, fd_io: bool = True):
        n = self.n = len(joint_names)
        if config.joint_count is not None and config.joint_count != n:
            raise ConfigError(f"{path}.joint_count", f"is {config.joint_count}, but the robot model has {n} "
                                                     f"actuated joints")
        self.cfg, self.path, self.lc, self.channels, self.clock = config, path, lc, channels, clock
        self.protocol, self.joint_names, self.joint_kinds = protocol, joint_names, list(joint_kinds)
        self.fd_io = fd_io
        self.safe_damping = per_joint(config.safe_damping, n, f"{path}.safe_damping")
        self.safe_mode = CommandMode.DAMPING if config.safe_command == "damping" else CommandMode.DISABLE
        self.sign = -1.0 if protocol == "iiwa" else 1.0
        self.encoder = FrameEncoder(n)
        self.parser = StreamParser(n, on_message=self._on_frame, clock=clock)
        self.command, self.heartbeat, self.request = Command(n), Heartbeat(), ConfigRequest()
        self.command.watchdog_ms = round(config.board_watchdog * 1000)
        self._commands = CommandDecoder(protocol, n, channels.command)
        self._status = StatusEncoder(protocol, n, channels.status)
        self.effort_kind = EffortKind.TORQUE
        self._command_mode = CommandMode.TORQUE
        self._to_torque = np.full(n, self.sign)   # JOINT_STATE effort -> status torque (sign, torque constant)
        self._to_value = np.ones(n)               # joint torque -> COMMAND value
        self._tau_measured, self._tau_commanded, self._zero = np.zeros(n), np.zeros(n), np.zeros(n)
        ring = np.zeros((RING, n))
        self._ring_rows, self._ring_seq = tuple(ring), np.full(RING, -1)
        self._write_timeout = 10 * frame_size(MsgType.COMMAND, n) / config.baudrate   # one frame's wire time
        ns = lambda seconds: round(seconds * 1e9)  # noqa: E731
        self._command_timeout_ns, self._stale_ns = ns(config.command_timeout), ns(config.stale_timeout)
        self._link_timeout_ns, self._config_timeout_ns = ns(config.link_timeout), ns(config.config_timeout)
        self._heartbeat_ns, self._health_ns = ns(config.heartbeat_period), ns(1.0 / config.health_rate)
        self._safe_ns, self._backoff_initial_ns = ns(SAFE_COMMAND_PERIOD), ns(config.reconnect.initial)
        self._backoff_max_ns = ns(config.reconnect.max)
        # Link state.
        self.port = None
        self.ready = self.stale = self._device = False
        self._port_fd, self._fds = -1, (lc.fileno(),)
        now = clock()
        self._reconnect_at, self._backoff_ns = now, self._backoff_initial_ns
        self._handshake_end = self._request_due = self._safe_due = self._heartbeat_due = self._health_due = now
        self.last_state_ns = now
        self._command_ns = now - self._command_timeout_ns - 1   # no command yet
        self._jc_errors_seen = 0
        self.connections = self.reconnects = 0
        self.board_node_state, self.board_rx_errors = NodeState.BOOTING, 0
        self.board_fault_code, self.board_fault_text = 0, ""
        self.board_faults = deque(maxlen=100)    # (host utime, text) of every FAULT_REPORT
        self.link_events = deque(maxlen=100)     # (host utime, text) of every connect and disconnect
        self.frames_tx = self.tx_incomplete = 0
        self.statuses_published = self.statuses_withheld = self.statuses_rejected = 0
        self.commands_received = self.commands_forwarded = self.commands_rejected = self.safe_commands = 0
        self.unexpected_frames = 0
        self.health = lcmt_hil_driver_health()
        self.health.driver_name = f"serial:{config.port}"
        self._health_rx = self._health_tx = 0
        self._health_last_ns = now
        self._subscription = lc.subscribe(channels.command, self._on_command)

    # --- the link ----------------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        """The board answered (CONFIG) and its JOINT_STATE is fresh."""
        return self.ready and not self.stale

    def _event(self, text: str, warn: bool = True) -> None:
        self.link_events.append((time.time_ns() // 1000, text))
        (log.warning if warn else log.info)("%s", text)

    def _connect(self, now: int) -> None:
        try:
            port = serial.serial_for_url(self.cfg.port, baudrate=self.cfg.baudrate, timeout=0,
                                         write_timeout=self._write_timeout)
            port.reset_input_buffer()
        except (serial.SerialException, OSError, ValueError) as e:
            self._lost(now, f"cannot open {self.cfg.port}: {e}")
            return
        self.port = port
        try:
            self._port_fd = port.fileno()
            self._fds = (self.lc.fileno(), self._port_fd)
        except (AttributeError, OSError):      # e.g. loop://: polled every POLL_S
            self._port_fd, self._fds = -1, (self.lc.fileno(),)
        self._device = self.fd_io and isinstance(port, serial.Serial)   # a device file (not a URL handler)
        self.parser.reset()
        self.ready = self.stale = False
        self._handshake_end, self._request_due = now + self._config_timeout_ns, now

    def _lost(self, now: int, reason: str) -> None:
        """Closes the port (if open) and schedules the next attempt, backing off exponentially."""
        if self.port is not None:
            try:
                self.port.close()
            except (serial.SerialException, OSError):
                pass
        was_up = self.port is not None and self.ready
        self.port, self.ready, self.stale = None, False, False
        self._port_fd, self._fds = -1, (self.lc.fileno(),)
        self._reconnect_at = now + self._backoff_ns
        self._event(f"serial link {'lost' if was_up else 'down'}: {reason}; retrying in "
                    f"{self._backoff_ns / 1e9:g} s", warn=was_up or self._backoff_ns == self._backoff_initial_ns)
        self._backoff_ns = min(2 * self._backoff_ns, self._backoff_max_ns)
        self._publish_health(now)

    def _up(self, now: int) -> None:
        config = self.parser.latest.config
        self.ready, self.stale = True, False
        if self.connections:
            self.reconnects += 1
        self.connections += 1
        self._backoff_ns = self._backoff_initial_ns
        self.last_state_ns = now
        self._safe_due = self._heartbeat_due = now
        self._event(f"serial link up on {self.cfg.port}: {self.n} joints, effort {config.effort_kind.name}, "
                    f"firmware {config.firmware_version}", warn=False)
        self._publish_health(now)

    # --- receiving ---------------------------------------------------------------------------------
    def _read(self, now: int) -> None:
        try:
            if self._device:
                data = os.read(self._port_fd, 4096)
                if not data:                   # readable and empty: hung up, or a pty's spurious wake-up
                    self.port.in_waiting  # noqa: B018 (TIOCINQ fails when the device is gone)
            else:
                data = self.port.read(4096)
        except BlockingIOError:
            return
        except (serial.SerialException, OSError) as e:
            self._lost(now, f"read failed: {e}")
            return
        if data:
            self.parser.feed(data)
            if self.parser.stats.joint_count_errors != self._jc_errors_seen:
                self._check_joint_count()

    def _check_joint_count(self) -> None:
        self._jc_errors_seen = self.parser.stats.joint_count_errors
        for error in reversed(self.parser.errors):
            if isinstance(error, JointCountError) and error.msg_type in (MsgType.JOINT_STATE, MsgType.CONFIG):
                raise ConfigError(f"{self.path}.joint_count",
                                  f"the board on {self.cfg.port} sends {error.got} joints ({error.msg_type.name} "
                                  f"seq {error.seq}), but the robot has {self.n}")

    def _on_frame(self, msg) -> None:
        kind = msg.MSG_TYPE
        if kind == MsgType.JOINT_STATE:
            self._on_state(msg)
        elif kind == MsgType.HEARTBEAT:
            self.board_node_state, self.board_rx_errors = msg.node_state, msg.rx_errors
        elif kind == MsgType.FAULT_REPORT:
            self._on_fault(msg)
        elif kind == MsgType.CONFIG:
            if not self.ready and self.port is not None:
                self._on_config(msg)
        else:                                  # COMMAND or CONFIG_REQUEST: our own frames echoed back
            self.unexpected_frames += 1

    def _on_config(self, config) -> None:
        """Checks the board's CONFIG against the robot and sets the effort conversions."""
        where = f"the board on {self.cfg.port}"
        if self.cfg.effort != "auto" and config.effort_kind.name.lower() != self.cfg.effort:
            raise ConfigError(f"{self.path}.effort", f"is {self.cfg.effort}, but {where} reports "
                                                     f"{config.effort_kind.name} effort")
        for i, (name, kind) in enumerate(zip(self.joint_names, self.joint_kinds)):
            if config.joint_kind[i] != kind:
                raise ConfigError("robot.model", f"{where} has a {JointKind(config.joint_kind[i]).name} joint {i}; "
                                                 f"the model's {name} is {JointKind(kind).name}")
        self.effort_kind = config.effort_kind
        if config.effort_kind == EffortKind.CURRENT:
            k = config.torque_constant
            if not np.all(k > 0):
                raise ConfigError(f"{self.path}.effort", f"{where} reports CURRENT effort without a torque constant "
                                                         f"for joint {int(np.argmin(k > 0))}")
            np.multiply(k, self.sign, out=self._to_torque)
            np.divide(1.0, k, out=self._to_value)
            self._command_mode = CommandMode.CURRENT
        else:
            self._to_torque.fill(self.sign)
            self._to_value.fill(1.0)
            self._command_mode = CommandMode.TORQUE
        self._up(config.rx_time_ns)

    def _on_state(self, s) -> None:
        if not self.ready:
            return
        self.last_state_ns = s.rx_time_ns
        if self.stale:
            self.stale = False
            self._event("serial link fresh again", warn=False)
            self._publish_health(s.rx_time_ns)
        flags = s.status
        if flags & UNCONTROLLED:              # the board does not apply commands: no status
            self.statuses_withheld += 1
            return
        if self.board_fault_code and not flags & BOARD_FAULT_FLAGS:
            self.board_fault_code, self.board_fault_text = 0, ""
        np.multiply(s.effort, self._to_torque, out=self._tau_measured)
        i = s.command_seq % RING
        if self._ring_seq[i] == s.command_seq:
            np.multiply(self._ring_rows[i], self.sign, out=self._tau_commanded)
        else:
            self._tau_commanded.fill(0.0)
        q, v = s.q, s.v
        if self.protocol == "iiwa":
            ok = self._status.encode(s.time_us, position_measured=q, velocity_estimated=v, position_commanded=q,
                                     torque_measured=self._tau_measured, torque_commanded=self._tau_commanded)
        else:
            ok = self._status.encode(s.time_us, position_measured=q, velocity_estimated=v, position_commanded=q,
                                     torque_measured=self._tau_measured, torque_commanded=self._tau_commanded,
                                     control_command_success_rate=1.0 if self._fresh(s.rx_time_ns) else 0.0,
                                     robot_mode=PANDA_MOVE if flags & StatusFlag.ENABLED else PANDA_IDLE,
                                     robot_utime=s.time_us, control_mode=PANDA_TORQUE)
        if ok is None:                         # e.g. a non-finite value from the board
            self.statuses_rejected += 1
            if self.statuses_rejected <= 10:
                log.warning("JOINT_STATE seq %d not published: %s", s.seq, self._status.last_error)
            return
        self._status.publish(self.lc)
        self.statuses_published += 1

    def _on_fault(self, report) -> None:
        self.board_fault_code, self.board_fault_text = int(report.code), str(report)
        self.board_faults.append((time.time_ns() // 1000, self.board_fault_text))
        log.warning("board fault: %s", self.board_fault_text)
        self._publish_health(report.rx_time_ns)

    # --- commands ----------------------------------------------------------------------------------
    def _fresh(self, now: int) -> bool:
        return now - self._command_ns <= self._command_timeout_ns

    def _on_command(self, channel: str, data: bytes) -> None:
        d = self._commands
        if not d.decode(data) or not d.has_torque:
            self.commands_rejected += 1
            if self.commands_rejected <= 10:
                log.warning("rejected command on %s: %s", channel,
                            d.last_error if d.has_torque else "it carries no torque (the board takes torque)")
            return
        now = self.clock()
        self.commands_received += 1
        self._command_ns = now
        if self.connected:
            self._send_command(self._command_mode, d.torque, now)
            self.commands_forwarded += 1
            self._safe_due = now + self._command_timeout_ns

    def _send_command(self, mode: CommandMode, torque, now: int) -> None:
        """One COMMAND frame: the joint torque `torque` in the board's units, or the safe command."""
        c = self.command
        c.time_us, c.mode = now // 1000, mode
        if mode == CommandMode.DAMPING:
            np.copyto(c.values, self.safe_damping)
        else:
            np.multiply(torque, self._to_value, out=c.values)
        seq = self.encoder.seq
        np.copyto(self._ring_rows[seq % RING], torque)
        self._ring_seq[seq % RING] = seq
        self._write(self.encoder.encode(c), now)

    def _write(self, frame, now: int) -> None:
        try:
            written = os.write(self._port_fd, frame) if self._device else self.port.write(frame)
        except (BlockingIOError, serial.SerialTimeoutException):   # the link takes no more now
            written = 0
        except (serial.SerialException, OSError) as e:
            self._lost(now, f"write failed: {e}")
            return
        if written == len(frame):
            self.frames_tx += 1
        else:
            self.tx_incomplete += 1

    # --- timers ------------------------------------------------------------------------------------
    def _service(self, now: int) -> None:
        if self.port is None:
            if now >= self._reconnect_at:
                self._connect(now)
        elif not self.ready:
            if now >= self._handshake_end:
                self._lost(now, f"no CONFIG from the board within {self.cfg.config_timeout:g} s")
            elif now >= self._request_due:
                self._request_due = now + CONFIG_REQUEST_PERIOD_NS
                self._write(self.encoder.encode(self.request), now)
        else:
            age = now - self.last_state_ns
            if age > self._link_timeout_ns:
                self._lost(now, f"no JOINT_STATE for {age / 1e9:.3f} s")
            else:
                if age > self._stale_ns and not self.stale:
                    self.stale = True
                    self._safe_due = now
                    self._event(f"serial link stale: no JOINT_STATE for {age / 1e6:.1f} ms")
                    self._publish_health(now)
                if now >= self._safe_due and self.port is not None:
                    self._safe_due = now + self._safe_ns
                    self._send_command(self.safe_mode, self._zero, now)
                    self.safe_commands += 1
                if now >= self._heartbeat_due and self.port is not None:
                    self._heartbeat_due = now + self._heartbeat_ns
                    self._send_heartbeat(now)
        if now >= self._health_due:
            self._publish_health(now)

    def _send_heartbeat(self, now: int) -> None:
        hb, s = self.heartbeat, self.parser.stats
        hb.time_us = now // 1000
        hb.rx_errors = (s.crc_errors + s.header_errors + s.payload_errors + s.joint_count_errors) & 0xFFFFFFFF
        hb.node_state = NodeState.ACTIVE if self.connected and self._fresh(now) else NodeState.READY
        self._write(self.encoder.encode(hb), now)

    def _publish_health(self, now: int) -> None:
        h, s = self.health, self.parser.stats
        dt = max(now - self._health_last_ns, 1) * 1e-9
        h.utime = time.time_ns() // 1000
        h.connected, h.reconnects = self.connected, self.reconnects
        h.frames_rx, h.frames_tx = s.frames_ok, self.frames_tx
        h.rx_rate_hz, h.tx_rate_hz = (s.frames_ok - self._health_rx) / dt, (self.frames_tx - self._health_tx) / dt
        h.crc_errors, h.resyncs, h.sequence_gaps, h.dropped_bytes = s.crc_errors, s.resyncs, s.frames_missed, \
            s.bytes_dropped
        h.staleness_us = (now - self.last_state_ns) // 1000
        h.board_fault_code, h.board_fault_text = self.board_fault_code, self.board_fault_text
        self.lc.publish(self.channels.driver_health, h.encode())
        self._health_rx, self._health_tx, self._health_last_ns = s.frames_ok, self.frames_tx, now
        self._health_due = now + self._health_ns

    # --- running -----------------------------------------------------------------------------------
    def spin_once(self, timeout_s: float = POLL_S) -> None:
        """Waits up to timeout_s for bytes or LCM messages, then handles them and the timers."""
        readable = select.select(self._fds, (), (), timeout_s)[0]
        if self.port is not None and (self._port_fd < 0 or self._port_fd in readable):
            self._read(self.clock())
        if self._fds[0] in readable:
            while self.lc.handle_timeout(0) > 0:
                pass
        self._service(self.clock())

    def run(self, duration: float | None = None, stop_event: threading.Event | None = None) -> dict:
        """spin_once until `duration` s, stop_event, or SIGINT/SIGTERM (in the main thread); returns
        summary(). A board that cannot be this robot's raises ConfigError (after publishing health
        with the reason in board_fault_text)."""
        start, cpu = self.clock(), time.process_time()
        end = None if duration is None else start + round(duration * 1e9)
        with stop_on_signals() as signalled:
            try:
                while not signalled.is_set() and not (stop_event is not None and stop_event.is_set()) \
                        and (end is None or self.clock() < end):
                    self.spin_once()
            except ConfigError as e:
                self.close()
                self.board_fault_code, self.board_fault_text = 0, str(e)
                self._event(f"serial driver stopped: {e}")
                self._publish_health(self.clock())
                raise
            finally:
                self.close()
        summary = self.summary()
        summary.update(wall_time_s=(self.clock() - start) * 1e-9, cpu_time_s=time.process_time() - cpu)
        return summary

    def close(self) -> None:
        """Closes the port and leaves the command channel; the driver is done."""
        if self.port is not None:
            self.port.close()
            self.port, self.ready = None, False
            self._port_fd, self._fds = -1, (self.lc.fileno(),)
        if self._subscription is not None:
            self.lc.unsubscribe(self._subscription)
            self._subscription = None

    def summary(self) -> dict:
        s = self.parser.stats
        return {"port": self.cfg.port, "connections": self.connections, "reconnects": self.reconnects,
                "frames_rx": s.frames_ok, "frames_tx": self.frames_tx, "tx_incomplete": self.tx_incomplete,
                "crc_errors": s.crc_errors, "header_errors": s.header_errors, "payload_errors": s.payload_errors,
                "resyncs": s.resyncs, "sequence_gaps": s.seq_gaps, "frames_missed": s.frames_missed,
                "bytes_dropped": s.bytes_dropped, "board_rx_errors": self.board_rx_errors,
                "statuses_published": self.statuses_published, "statuses_withheld": self.statuses_withheld,
                "statuses_rejected": self.statuses_rejected, "commands_received": self.commands_received,
                "commands_forwarded": self.commands_forwarded, "commands_rejected": self.commands_rejected,
                "safe_commands": self.safe_commands, "unexpected_frames": self.unexpected_frames,
                "board_faults": [text for _, text in self.board_faults],
                "link_events": [text for _, text in self.link_events]}


def format_summary(s: dict) -> str:
    lines = [f"serial driver on {s['port']}: {s['wall_time_s']:.3f} s, CPU {s['cpu_time_s']:.3f} s; connections "
             f"{s['connections']} (reconnects {s['reconnects']})",
             f"  frames rx {s['frames_rx']} tx {s['frames_tx']} (incomplete {s['tx_incomplete']}); CRC errors "
             f"{s['crc_errors']}, header {s['header_errors']}, payload {s['payload_errors']}, resyncs {s['resyncs']}, "
             f"frames missed {s['frames_missed']}, bytes dropped {s['bytes_dropped']}; board rejected "
             f"{s['board_rx_errors']}",
             f"  status published {s['statuses_published']}, withheld {s['statuses_withheld']}, rejected "
             f"{s['statuses_rejected']}; commands received {s['commands_received']}, forwarded "
             f"{s['commands_forwarded']}, rejected {s['commands_rejected']}; safe commands {s['safe_commands']}"]
    lines += [f"  board fault: {text}" for text in s["board_faults"]]
    return "\n".join(lines)


def run_from_config(cfg, duration: float | None = None, out=sys.stdout, fd_io: bool = True) -> int:
    """`hil serial CONFIG`: the driver of a run config (drivers.core.config.RunConfig with a `serial` section)
    until `duration` s, SIGINT or SIGTERM; prints a start line and a summary, returns 0. A board that
    does not match the robot raises ConfigError. fd_io: as SerialDriver's."""

    from drivers.core.config import channels_for
    from drivers.core.robot import load_robot
    from drivers.run_config import required
    config = required(cfg, "serial")
    robot = load_robot(cfg.robot)
    channels = channels_for(cfg)
    driver = SerialDriver(config, robot.joint_names, robot_joint_kinds(robot.plant, robot.joint_names),
                          cfg.robot.protocol, channels, open_lcm(cfg.lcm.url), fd_io=fd_io)
    print(f"hil serial: {config.port} at {config.baudrate} baud, {driver.n} joints ({cfg.robot.protocol}); status "
          f"{channels.status}, command {channels.command}, health {channels.driver_health}, LCM {cfg.lcm.url}"
          + ("" if fd_io else "; I/O through pyserial's read()/write()"),
          file=out, flush=True)
    summary = driver.run(duration)
    print(format_summary(summary), file=out, flush=True)
    return 0
