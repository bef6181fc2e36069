"""The simulated motor board (`hil serial-device CONFIG`): the serial protocol on a pseudo-terminal,
in front of the simulated plant.

    board = SimulatedBoard(plant, sim_config, serial_config.device, "/tmp/hil-serial/iiwa")
    board.path                      # the pty the host opens (the link path points at it)
    board.run(duration)             # paced to the wall clock; or board.tick() one control period

The board keeps the master end of an os.openpty() pair and points a symlink (`link`) at the slave,
as udev's /dev/serial/by-id links do for a USB board: the host opens the link path, and after an
unplug (the pty and the link disappear) and replug (a new pty, the link re-pointed) the same path
reaches the board again.

Firmware model, once per control period h (1 / state_rate): apply the newest valid COMMAND (TORQUE
[Nm]; CURRENT [A] times the torque constant; DAMPING −d_eff∘v with d_eff = (m/h)(1 − exp(−d h/m)), m
the joint's inertia at the initial pose: the damping a current loop much faster than h achieves over
one period, ≈ d for d ≪ m/h and stable for any d; DISABLE: power stage off, the brakes hold the
joints), clipped to the model's effort limits (SATURATED); when no valid COMMAND came
within its watchdog, the board's safe command (COMMAND_TIMEOUT, one FAULT_REPORT); step the plant
(drivers.sim.physics.Physics, as many steps of sim.time_step as fit in the period); send JOINT_STATE
(q, v, the applied torque or current), HEARTBEAT at 10 Hz and on state changes, and CONFIG on
request. Bad COMMANDs (another joint count, non-finite values, an unknown or unsupported mode) keep
the previous command and are answered with FAULT_REPORT BAD_COMMAND. Board time is the plant's
simulated time. In lockstep mode each COMMAND runs one period at once and is answered by its
JOINT_STATE (no watchdog: time only moves with commands). serial.device.faults injects silence,
unplugging, latched board faults and damaged frames (docs/serial_protocol.md, section 10).
"""
from __future__ import annotations

import os
import select
import sys
import threading
import time
import tty
from pathlib import Path

import numpy as np

from drivers.core import _control
from drivers.core.schema import ConfigError
from drivers.core.signals import stop_on_signals
from drivers.sim._physics import gather, scatter
from drivers.sim.config import SimConfig, per_joint
from drivers.sim.physics import Physics, joint_inertias
from drivers.sim.robot import SimulatedRobot

from .codec import FrameEncoder
from .config import CORRUPTIONS, DeviceConfig
from .messages import Config, FaultReport, Heartbeat, JointState
from .parser import StreamParser
from .protocol import NO_JOINT, CommandMode, EffortKind, FaultCode, JointKind, MsgType, NodeState, StatusFlag

HEARTBEAT_PERIOD_NS = 100_000_000
POWERED = (CommandMode.TORQUE, CommandMode.CURRENT, CommandMode.DAMPING)


class PtyLink:
    """The board's end of a pseudo-terminal and the symlink `link` to the host's end."""

    def __init__(self, link: str | Path, key: str = "serial.device.link"):
        self.link = Path(link)
        if self.link.exists() and not self.link.is_symlink():
            raise ConfigError(key, f"{self.link} exists and is not a symlink; the simulated board only "
                                   f"replaces its own links")
        self.fd = self._slave = -1
        self.path = ""

    @property
    def plugged(self) -> bool:
        return self.fd >= 0

    def plug(self) -> str:
        """A new pty pair, the link pointed at its slave (atomically); returns the slave's path.

        The board keeps the slave open too, so that the master never sees a hang-up while no host
        is connected; what the host does not read is dropped when the pty buffer is full."""
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)
        os.set_blocking(master, False)
        self.fd, self._slave, self.path = master, slave, os.ttyname(slave)
        self.link.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.link.with_name(f".{self.link.name}.{os.getpid()}")
        tmp.unlink(missing_ok=True)
        os.symlink(self.path, tmp)
        os.replace(tmp, self.link)
        return self.path

    def unplug(self) -> None:
        """Removes the link and closes the pty: the host's reads and writes fail."""
        if not self.plugged:
            return
        if self.link.is_symlink() and os.readlink(self.link) == self.path:
            self.link.unlink()
        os.close(self.fd)
        os.close(self._slave)
        self.fd = self._slave = -1

    def wait_readable(self, timeout_s: float) -> bool:
        if not self.plugged:
            time.sleep(timeout_s)
            return False
        return bool(select.select((self.fd,), (), (), timeout_s)[0])

    def write(self, data) -> int:
        """Writes what fits into the pty now (never blocks); returns the bytes written."""
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0


class SimulatedBoard:
    """A motor board in front of `plant` (finalized), per `device` (DeviceConfig) and `sim`
    (SimConfig: the plant's integrator, initial state, joints); its pty is linked at `link`."""

    def __init__(self, plant, sim: SimConfig, device: DeviceConfig, link: str | Path, path: str = "serial.device",
                 out=None):
        self.physics = physics = Physics(plant, sim)
        self.cfg, self.out = device, out
        joints = SimulatedRobot.protocol_joints(plant, physics.config, "sim")
        self.joint_names = [j.name() for j in joints]
        n = self.n = len(joints)
        actuator = {a.joint().name(): a for a in (plant.get_joint_actuator(i) for i in plant.GetJointActuatorIndices())}
        self._qi = np.array([j.position_start() for j in joints], dtype=np.intp)
        self._vi = np.array([j.velocity_start() for j in joints], dtype=np.intp)
        self._ai = np.array([actuator[j.name()].input_start() for j in joints], dtype=np.intp)
        self.period_ns = round(1e9 / device.state_rate)
        self.steps_per_period = round(self.period_ns / physics.time_step_ns)
        if self.steps_per_period < 1 or self.steps_per_period * physics.time_step_ns != self.period_ns:
            raise ConfigError(f"{path}.state_rate", f"its period ({self.period_ns / 1e9:g} s) must be a whole "
                                                    f"number of sim.time_step ({physics.time_step_ns / 1e9:g} s)")
        self.current = device.effort == "current"
        self.torque_constant = per_joint(device.torque_constant, n, f"{path}.torque_constant")
        if self.current and not np.all(self.torque_constant > 0):
            raise ConfigError(f"{path}.torque_constant", "must be > 0 for every joint of a current board")
        self.safe_damping = per_joint(device.safe_damping, n, f"{path}.safe_damping")
        inertia = joint_inertias(plant, physics.q)[self._vi]
        h = self.period_ns * 1e-9
        self._h_over_m, self._m_over_h = h / inertia, inertia / h
        self.effort_limit = np.array([actuator[j.name()].effort_limit() for j in joints])
        for i, fault in enumerate(device.faults):
            if fault.joint is not None and fault.joint >= n:
                raise ConfigError(f"{path}.faults[{i}].joint", f"is {fault.joint}; the board has {n} joints")
        self.config = Config(n)
        self.config.effort_kind = EffortKind.CURRENT if self.current else EffortKind.TORQUE
        self.config.firmware_version = device.firmware_version
        self.config.joint_kind[:] = [JointKind.PRISMATIC if j.type_name() == "prismatic" else JointKind.REVOLUTE
                                     for j in joints]
        self.config.position_lower[:] = [j.position_lower_limits()[0] for j in joints]
        self.config.position_upper[:] = [j.position_upper_limits()[0] for j in joints]
        self.config.velocity_limit[:] = [j.velocity_upper_limits()[0] for j in joints]
        self.config.effort_limit[:] = self.effort_limit / self.torque_constant if self.current else self.effort_limit
        self.config.torque_constant[:] = self.torque_constant if self.current else 0.0
        # Preallocated: frames, messages and the per-period arrays.
        self.encoder = FrameEncoder(n)
        self.parser = StreamParser(n, on_message=self._on_message, clock=lambda: self.physics.time_ns)
        self.state, self.heartbeat, self.report = JointState(n), Heartbeat(), FaultReport()
        self.values = np.zeros(n)               # the applied COMMAND's values, in its units
        self._u, self._uj, self._prev = np.zeros(physics.plant.num_actuators()), np.zeros(n), np.zeros(n)
        self._zero, self._gain, self._v_zero = np.zeros(n), np.zeros(n), np.zeros(physics.plant.num_velocities())
        self._q_hold = np.zeros(physics.plant.num_positions())
        self.mode = CommandMode.DISABLE
        self.command_seq = 0
        self._command_ns = 0
        self._watchdog_ns = round(device.command_timeout * 1e9)
        self._timeout_ns = self._watchdog_ns
        self.timed_out = False
        self.node_state = NodeState.READY
        self._heartbeat_due = 0
        self._rejected_seen = 0
        # Faults: windows in board-time ns, per-fault counters, the random source of corruptions.
        self._windows = [(round(f.start * 1e9), None if f.stop is None else round(f.stop * 1e9))
                         for f in device.faults]
        self._active = [False] * len(device.faults)
        self._sent = [0] * len(device.faults)
        self.fault_counts = [0] * len(device.faults)
        self._rng = np.random.default_rng(device.seed)
        self.latched = -1                       # index of the active board_fault, or -1
        self.silent = False
        self._pending = b""                     # the held-back tail of a split frame
        self.frames_sent = self.bytes_dropped = 0
        self.commands_applied = self.bad_commands = self.fault_reports = 0
        self.late_ticks = self.resyncs = 0
        self.link = PtyLink(link, f"{path}.link")
        self.link.plug()

    @property
    def path(self) -> str:
        """The pty the host opens (through the link)."""
        return self.link.path

    # --- receiving ---------------------------------------------------------------------------------
    def poll(self, timeout_s: float = 0.0) -> None:
        """Reads and handles what the host sent, waiting up to timeout_s for it."""
        if not self.link.wait_readable(timeout_s):
            return
        try:
            data = os.read(self.link.fd, 4096)
        except BlockingIOError:
            return
        self.parser.feed(data)
        stats = self.parser.stats
        rejected = stats.payload_errors + stats.joint_count_errors
        if rejected != self._rejected_seen:     # an intact frame the board cannot use
            self._rejected_seen = rejected
            error = self.parser.errors[-1]
            if error.msg_type == MsgType.COMMAND:
                self._bad_command(str(error))

    def _on_message(self, msg) -> None:
        kind = msg.MSG_TYPE
        if kind == MsgType.COMMAND:
            self._on_command(msg)
        elif kind == MsgType.CONFIG_REQUEST:
            self._send(self.encoder.encode(self.config))

    def _on_command(self, cmd) -> None:
        if _control.first_nonfinite(cmd.values) >= 0:
            return self._bad_command(f"COMMAND seq {cmd.seq}: non-finite value")
        if cmd.mode == CommandMode.CURRENT and not self.current:
            return self._bad_command(f"COMMAND seq {cmd.seq}: CURRENT mode on a torque board")
        if cmd.mode == CommandMode.DAMPING and cmd.values.min() < 0:
            return self._bad_command(f"COMMAND seq {cmd.seq}: negative damping gain")
        if self.latched < 0:
            np.copyto(self.values, cmd.values)
            self.mode = cmd.mode
            self.command_seq = cmd.seq
            self.commands_applied += 1
        self._command_ns = self.physics.time_ns
        self._timeout_ns = cmd.watchdog_ms * 1_000_000 or self._watchdog_ns
        self.timed_out = False
        if self.cfg.lockstep:
            self.tick()

    def _bad_command(self, text: str) -> None:
        self.bad_commands += 1
        self._report(FaultCode.BAD_COMMAND, NO_JOINT, text)

    def _report(self, code: int, joint: int, text: str) -> None:
        r = self.report
        r.time_us, r.code, r.joint_index, r.text = self.physics.time_ns // 1000, code, joint, text
        self.fault_reports += 1
        self._send(self.encoder.encode(r))

    # --- one control period ------------------------------------------------------------------------
    def tick(self) -> None:
        """One control period: faults, watchdog, actuation, plant steps, JOINT_STATE, heartbeat."""
        physics = self.physics
        t = physics.time_ns
        if self.cfg.faults:
            self._update_faults(t)
        if self.mode in POWERED and not self.timed_out and not self.cfg.lockstep \
                and t - self._command_ns > self._timeout_ns:
            self.timed_out = True
            self._report(FaultCode.COMMAND_TIMEOUT, NO_JOINT, f"no valid COMMAND for {self._timeout_ns / 1e6:g} ms")
        mode, values = self.mode, self.values
        if self.latched >= 0:
            mode = CommandMode.DISABLE
        elif self.timed_out:
            mode, values = (CommandMode.DAMPING, self.safe_damping) if self.cfg.safe_command == "damping" \
                else (CommandMode.DISABLE, values)
        uj = self._uj
        gather(physics.v, self._vi, 1.0, self.state.v)
        if mode == CommandMode.TORQUE:
            np.copyto(uj, values)
        elif mode == CommandMode.CURRENT:
            np.multiply(values, self.torque_constant, out=uj)
        elif mode == CommandMode.DAMPING:             # d_eff = (m/h)(1 − exp(−d h/m)), see the docstring
            gain = self._gain
            np.multiply(values, self._h_over_m, out=gain)
            np.negative(gain, out=gain)
            np.exp(gain, out=gain)
            np.subtract(1.0, gain, out=gain)
            gain *= self._m_over_h
            _control.damping(self.state.v, gain, self._zero, 0.0, uj)
        else:
            uj.fill(0.0)
        saturated = _control.saturate(uj, self._prev, self.effort_limit, np.inf, uj)
        if mode == CommandMode.DISABLE:       # power stage off, brakes hold the joints
            np.copyto(self._q_hold, physics.q)
            physics.set_state(self._q_hold, self._v_zero, physics.steps + self.steps_per_period)
        else:
            scatter(uj, self._ai, self._u)
            for _ in range(self.steps_per_period):
                physics.step(self._u)
        self._send_state(mode, saturated)
        node = NodeState.FAULT if self.latched >= 0 else (NodeState.ACTIVE if mode in POWERED else NodeState.READY)
        if node != self.node_state or physics.time_ns >= self._heartbeat_due:
            self.node_state = node
            self._heartbeat_due = physics.time_ns + HEARTBEAT_PERIOD_NS
            hb = self.heartbeat
            stats = self.parser.stats
            hb.time_us, hb.node_state = physics.time_ns // 1000, node
            hb.rx_errors = (stats.crc_errors + stats.header_errors + stats.payload_errors
                            + stats.joint_count_errors) & 0xFFFFFFFF
            self._send(self.encoder.encode(hb))

    def _send_state(self, mode: CommandMode, saturated: int) -> None:
        physics, s = self.physics, self.state
        gather(physics.q, self._qi, 1.0, s.q)
        gather(physics.v, self._vi, 1.0, s.v)
        if mode == CommandMode.DISABLE:
            s.effort.fill(0.0)
        elif self.current:
            np.divide(self._uj, self.torque_constant, out=s.effort)
        else:
            np.copyto(s.effort, self._uj)
        status = 0 if mode == CommandMode.DISABLE else StatusFlag.ENABLED
        if mode == CommandMode.DISABLE:
            status |= StatusFlag.BRAKE_ENGAGED
        if self.latched >= 0:
            status |= StatusFlag.FAULT
        if self.timed_out:
            status |= StatusFlag.COMMAND_TIMEOUT
        if saturated:
            status |= StatusFlag.SATURATED
        s.time_us, s.status, s.command_seq, s.mode = physics.time_ns // 1000, status, self.command_seq, mode
        self._send(self.encoder.encode(s))

    # --- the wire and its faults -------------------------------------------------------------------
    def _send(self, frame) -> None:
        """Writes a frame, through the active corruptions; silent or unplugged boards send nothing."""
        if self.silent or not self.link.plugged:
            return
        if self._pending:                       # the tail of the previous frame goes first
            self._write(self._pending)
            self._pending = b""
        for i, fault in enumerate(self.cfg.faults):
            if self._active[i] and fault.type in CORRUPTIONS:
                self._sent[i] += 1
                if (self._sent[i] % fault.every == 0) if fault.every else self._rng.random() < fault.probability:
                    self.fault_counts[i] += 1
                    frame = self._corrupt(fault.type, frame)
        self._write(frame)
        self.frames_sent += 1

    def _write(self, data) -> None:
        written = self.link.write(data)
        self.bytes_dropped += len(data) - written

    def _corrupt(self, kind: str, frame):
        rng, size = self._rng, len(frame)
        if kind == "bit_flip":
            data = bytearray(frame)
            data[int(rng.integers(size))] ^= 1 << int(rng.integers(8))
            return data
        if kind == "drop_byte":
            data = bytearray(frame)
            del data[int(rng.integers(size))]
            return data
        if kind == "truncate":
            return bytes(frame[: int(rng.integers(1, size))])
        if kind == "garbage":
            return b"\xaa" + rng.bytes(int(rng.integers(4, 32))) + bytes(frame)
        cut = int(rng.integers(1, size))        # split: the tail goes out with the next frame
        self._pending = bytes(frame[cut:])
        return bytes(frame[:cut])

    def _update_faults(self, t: int) -> None:
        for i, fault in enumerate(self.cfg.faults):
            start, stop = self._windows[i]
            on = start <= t and (stop is None or t < stop)
            if on == self._active[i]:
                continue
            self._active[i] = on
            if on and fault.type not in CORRUPTIONS:
                self.fault_counts[i] += 1
            if fault.type == "silent":
                self.silent = on
            elif fault.type == "unplug":
                if on:
                    self.link.unplug()
                    self._pending = b""
                else:
                    self.link.plug()
                    self._say(f"device replugged: {self.path} (link {self.link.link})")
            elif fault.type == "board_fault":
                if on:
                    self.latched = i
                    self.mode = CommandMode.DISABLE
                    self._report(fault.fault_code, NO_JOINT if fault.joint is None else fault.joint, fault.text)
                else:
                    self.latched = -1

    # --- running -----------------------------------------------------------------------------------
    def run(self, duration: float | None = None, stop_event: threading.Event | None = None) -> dict:
        """Control periods paced to the wall clock (lockstep: commands as they come) until `duration`
        seconds have passed or stop_event is set; a period later than 100 periods re-phases the
        schedule (counted in `resyncs`). Returns summary()."""
        clock, period, cpu = time.monotonic_ns, self.period_ns, time.process_time()
        start = deadline = clock()
        end = None if duration is None else start + round(duration * 1e9)
        stopped = stop_event.is_set if stop_event is not None else (lambda: False)
        while not stopped():
            now = clock()
            if end is not None and now >= end:
                break
            if self.cfg.lockstep:
                self.poll(0.01)
                continue
            if now < deadline:
                self.poll((deadline - now) * 1e-9)
                continue
            if now - deadline > 100 * period:
                self.resyncs += 1
                deadline = now
            elif now - deadline > period:
                self.late_ticks += 1
            deadline += period
            self.tick()
        summary = self.summary()
        summary.update(wall_time_s=(clock() - start) * 1e-9, cpu_time_s=time.process_time() - cpu)
        return summary

    def close(self) -> None:
        self.link.unplug()

    def _say(self, text: str) -> None:
        if self.out is not None:
            print(text, file=self.out, flush=True)

    def summary(self) -> dict:
        s = self.parser.stats
        return {"board_time_s": self.physics.time_ns * 1e-9, "frames_sent": self.frames_sent,
                "bytes_dropped": self.bytes_dropped, "frames_received": s.frames_ok, "crc_errors": s.crc_errors,
                "commands_applied": self.commands_applied, "bad_commands": self.bad_commands,
                "fault_reports": self.fault_reports, "late_ticks": self.late_ticks, "resyncs": self.resyncs,
                "faults": [{"type": f.type, "start": f.start, "stop": f.stop, "applied": c}
                           for f, c in zip(self.cfg.faults, self.fault_counts)]}


def format_summary(s: dict) -> str:
    lines = [f"serial device: {s['board_time_s']:.3f} s of board time in {s['wall_time_s']:.3f} s (CPU "
             f"{s['cpu_time_s']:.3f} s); sent "
             f"{s['frames_sent']} frames ({s['bytes_dropped']} bytes dropped: pty full or unplugged), received "
             f"{s['frames_received']} ({s['crc_errors']} CRC errors); commands applied {s['commands_applied']}, "
             f"bad {s['bad_commands']}; fault reports {s['fault_reports']}; late periods {s['late_ticks']}, "
             f"resyncs {s['resyncs']}"]
    lines += [f"  fault {f['type']} [{f['start']:g}, {'end' if f['stop'] is None else format(f['stop'], 'g')}) s: "
              f"applied {f['applied']}" for f in s["faults"]]
    return "\n".join(lines)


def run_from_config(cfg, duration: float | None = None, port: str | None = None, out=sys.stdout) -> int:
    """`hil serial-device CONFIG`: the simulated board of a run config (drivers.core.config.RunConfig with a
    `serial` section) until `duration` s, SIGINT or SIGTERM. `port` overrides the link path
    (default: serial.device.link, else serial.port). Prints `device ready: <pty> (link <path>)`,
    then a summary; returns 0."""
    from drivers.core.robot import build_plant
    from drivers.run_config import required
    serial_cfg, sim = required(cfg, "serial"), cfg.sim
    if sim.faults:
        raise ConfigError("sim.faults", "the serial board does not inject the simulated robot's LCM faults; "
                                        "use serial.device.faults")
    link = port or serial_cfg.device.link or serial_cfg.port
    if "://" in link:
        raise ConfigError("serial.device.link", f"is required when serial.port is a URL ({serial_cfg.port}): the "
                                                f"simulated board needs a path for its pty's link")
    board = SimulatedBoard(build_plant(cfg.robot, sim.payload, simulated=True), sim, serial_cfg.device, link, out=out)
    with stop_on_signals() as stop:
        try:
            board._say(f"device ready: {board.path} (link {link}), {board.n} joints, "
                       f"{'lockstep' if serial_cfg.device.lockstep else f'{serial_cfg.device.state_rate:g} Hz'}, "
                       f"effort {serial_cfg.device.effort}")
            summary = board.run(duration, stop)
        finally:
            board.close()
    print(format_summary(summary), file=out, flush=True)
    return 0
