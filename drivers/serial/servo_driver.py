"""The servo-bus driver (`hil servo-bus CONFIG`): N Dynamixel or Feetech servos on one serial bus,
made to look to the HIL loop like an iiwa or Panda behind Drake's LCM driver (docs/servo_bus.md).

    driver = ServoDriver(config, joint_names, "iiwa", channels, lc)
    driver.run(duration)          # or driver.cycle() at config.rate from a loop of your own

Each cycle (1 / servo_bus.rate): one SYNC READ of the state block (Dynamixel 126..135: present
current or load, velocity, position; Feetech 56..70: position, velocity, load, voltage,
temperature, status, current) answered by every servo, decoded into joint units (servo_state) and published as
the robot status (after the SYNC WRITE is sent, so that publishing overlaps its wire time); one
SYNC WRITE per goal register of the newest LCM command (servo_goals): torque -> goal current for
the servos in current mode (τ_servo = τ_joint / (d g), i = τ_servo / k_t), goal position for those
in position mode, that the servo's own P gain turns into that torque (goal = present + τ_servo / K,
K the servo's stiffness from its P gain, see servo_sim); each servo's mode is its joint's
(servo_config.ServoBusConfig.joint_control). Until the first command the driver holds the arm: on
connecting it sets every servo up in position mode with goal = present position and turns the torque
on, as real servo drivers do (LeRobot's arms enable torque on connect), so an arm that no loop commands
yet stays where it is; the first command hands the current-mode servos to their mode. Torque is
disabled (one SYNC WRITE of torque_enable 0) when no command came for command_timeout after one did,
when a servo reports a hardware error (Dynamixel ALERT bit, Feetech error bits: latched until
restart), when no full SYNC READ came for link_timeout (then the port is reopened with backoff and
the servos set up again), and on every exit; a cycle whose SYNC READ is incomplete writes nothing
(the servos keep their last goal). Bad bytes are counted in `stats` (bus_stream.BusStats), never raised.
"""
from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import sys
import time

import numpy as np
import serial

from drivers.core.config import open_lcm
from drivers.core.signals import stop_on_signals
from messages.codec import CommandDecoder, StatusEncoder

from . import dynamixel as dxl
from . import feetech as ft
from .servo_config import ServoBusConfig, check_joints
from .servo_goals import ServoGoals
from .servo_models import BUS_WATCHDOG_FIRMWARE, BUS_WATCHDOG_UNIT
from .servo_state import ServoState

log = logging.getLogger(__name__)


class ServoDriver:
    """The driver of `config` (ServoBusConfig) for a robot whose actuated joints are `joint_names`
    (protocol order); protocol "iiwa" or "panda"; channels: messages.channels.Channels."""

    def __init__(self, config: ServoBusConfig, joint_names: list[str], protocol: str, channels, lc,
                 clock=time.monotonic_ns):
        check_joints(config, joint_names)
        self.cfg, self.lc, self.channels, self.clock, self.protocol = config, lc, channels, clock, protocol
        by_name = {j.joint: j for j in config.joints}
        self.joints = joints = [by_name[name] for name in joint_names]
        self.models = models = [j.servo_model for j in joints]
        n = self.n = len(joints)
        self.ids = [j.id for j in joints]
        self.dynamixel = config.protocol == "dynamixel"
        self.controls = [config.joint_control(j) for j in joints]     # "current" or "position" per joint
        self.sign = np.array(-1.0 if protocol == "iiwa" else 1.0)   # 0-d arrays: a Python scalar in a ufunc
                                                                     # call is converted (allocated) per call
        mod = dxl if self.dynamixel else ft
        self.parser = mod.PacketParser(self._on_status, status=True)
        self.stats = self.parser.stats
        self.writer = mod.PacketWriter()
        self.state = st = ServoState(joints, self.ids, self.dynamixel)
        self.fast = config.fast_read
        self._sync_read = bytes(self.writer.sync_read(st.start, st.width, self.ids, fast=True) if self.fast
                                else self.writer.sync_read(st.start, st.width, self.ids))
        # Dynamixel SYNC READ answers are taken in one compiled pass per read (dynamixel.PacketParser.taker).
        self._taker = (None if not self.dynamixel or self.fast else
                       self.parser.make_taker(st.slot, st.rows, st.errors, st.received.view(np.uint8), self._taken))
        self.kp = [j.kp if j.kp is not None else m.reg("position_p_gain").default for j, m in zip(joints, models)]
        self.kd = [j.kd if j.kd is not None else m.reg("position_d_gain").default for j, m in zip(joints, models)]
        self.goals = ServoGoals(joints, self.controls, self.ids, self.kp, self.dynamixel)
        self.torque_packet = (dxl.SyncWritePacket(64, "u1", self.ids) if self.dynamixel
                              else ft.SyncWritePacket(40, "u1", self.ids))
        # The first command's hand-over: the current-mode servos (Dynamixel), held in position mode until
        # then, go torque off, to current mode and torque on again, with their goals in between.
        cur = [k for k, c in enumerate(self.controls) if c == "current"]
        self._hand_over = None
        if cur:
            ids = [self.ids[k] for k in cur]
            off, mode, on = (dxl.SyncWritePacket(models[k].reg(r).address, "u1", ids)
                             for k, r in zip(cur[:1] * 3, ("torque_enable", "operating_mode", "torque_enable")))
            off.values[:], on.values[:] = 0, 1
            mode.values[:] = [models[k].modes["current"] for k in cur]
            self._hand_over = (off.seal(), mode.seal()), on.seal()
        self.holding = False                   # connected, the arm held in position mode until a command
        # Dynamixel Bus Watchdog [s] (wall-clock runs; lockstep buses count simulated time) and its SYNC WRITE
        self._watchdog_s = 0.0 if config.lockstep else config.bus_watchdog_units * BUS_WATCHDOG_UNIT
        self._watchdog = (dxl.SyncWritePacket(models[0].reg("bus_watchdog").address, "i1", self.ids)
                          if self._watchdog_s else None)
        self._last_tx = 0.0                    # monotonic time of the last write to the bus
        self._tau_cmd, self._u = np.zeros(n), np.zeros(n)
        self._commands = CommandDecoder(protocol, n, channels.command)
        self._status = StatusEncoder(protocol, n, channels.status)
        self._cmd_ns = -(1 << 62)
        self._cmd_timeout_ns = round(config.command_timeout * 1e9)
        self._read_timeout = config.read_timeout
        self._link_ns = round(config.link_timeout * 1e9)
        self._period_ns = round(1e9 / config.rate)
        self.fd = -1
        self.port = None
        self._expect, self._answer = 0, None   # SYNC READ answers still missing; -1: a setup transaction
        self._answer_id = self._answer_size = -1   # the servo a setup transaction asks, its answer's size
        self._read_sent = 0.0                  # monotonic time of a SYNC READ already on the wire (prefetch), or 0
        self._late = False                     # a SYNC READ timed out: its answers may still come
        self.torque_on = False
        self.fault = ""                    # latched hardware fault, torque stays off
        self.cycles = self.full_reads = self.statuses_published = self.commands_received = 0
        self.commands_rejected = self.reconnects = self.links_lost = self.torque_offs = self.watchdog_rearms = 0
        self._down = False                 # the link was lost since the last successful connect()
        self.cycle_ns = []                 # CPU time per cycle (process time), when timing is on
        self._last_full_ns = clock()
        self._reconnect_at, self._backoff = 0, config.reconnect.initial
        self._sub = lc.subscribe(channels.command, self._on_command)

    # --- connection --------------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self.fd >= 0

    def connect(self) -> bool:
        """Opens the port and sets the servos up: torque off, ping (model check), position mode,
        gains, Bus Watchdog (Dynamixel), goal = present position, torque on: the arm is held where it
        is until the first command. Returns False (and schedules a retry) when the bus does not answer."""
        try:
            self.port = serial.Serial(self.cfg.port, self.cfg.baudrate, timeout=0, write_timeout=0.1)
            self.fd = self.port.fileno()
        except (serial.SerialException, OSError, ValueError) as e:
            return self._retry(f"cannot open {self.cfg.port}: {e}")
        self.port.reset_input_buffer()          # stale answers (e.g. to a SYNC READ sent before a restart)
        self.parser.reset()
        try:
            self._write(self._torque(0))
            levels = []
            for k, (i, m) in enumerate(zip(self.ids, self.models)):
                answer = self._transact(self.writer.ping(i), i, 3 if self.dynamixel else 0)   # model, firmware
                if answer is None:
                    return self._retry(f"servo ID {i} ({self.joints[k].joint}) does not answer PING")
                if self.dynamixel:
                    number = answer[1] | answer[2] << 8 if len(answer) == 4 else None    # model, firmware
                else:
                    data = self._transact(self.writer.read(i, 3, 2), i, 2)
                    number = None if data is None or len(data) < 3 else data[1] | data[2] << 8
                if number != m.model_number:
                    return self._retry(f"servo ID {i} is model number {number}, config says {m.name} "
                                       f"({m.model_number})")
                level = self._status_level(i, m)
                levels.append(level)
                writes = [("operating_mode", m.modes["position"]), ("position_p_gain", self.kp[k]),
                          ("position_d_gain", self.kd[k])]
                watchdog = self.cfg.bus_watchdog_units
                if self.dynamixel and answer[3] >= BUS_WATCHDOG_FIRMWARE:    # 0 clears a trip (-1), then arm
                    writes += [("bus_watchdog", 0)] + [("bus_watchdog", watchdog)] * (watchdog > 0)
                elif watchdog:
                    return self._retry(f"servo ID {i}: firmware v{answer[3]} has no Bus Watchdog (v"
                                       f"{BUS_WATCHDOG_FIRMWARE}+); update it or set servo_bus.bus_watchdog: 0")
                for name, value in writes:
                    problem = self._setup_write(i, m, name, value, level)
                    if problem:
                        return self._retry(f"servo ID {i}: writing {name} = {value} failed{problem}")
            for i, m, level in zip(self.ids, self.models, levels):   # hold: goal = present, then torque on
                reg = m.reg("present_position")
                data = self._transact(self.writer.read(i, reg.address, reg.size), i, reg.size)
                if data is None or len(data) != reg.size + 1:
                    return self._retry(f"servo ID {i} does not answer a READ of present_position")
                goal = int.from_bytes(data[1:], "little")      # the same encoding and size as goal_position
                problem = self._setup_write(i, m, "goal_position", goal, level)
                if problem:
                    return self._retry(f"servo ID {i}: writing goal_position = present {goal} failed{problem}")
            self._write(self._torque(1))
            self.holding = True
        except OSError as e:
            return self._retry(f"bus lost during setup: {e}")
        self._last_full_ns = self.clock()
        self._backoff = self.cfg.reconnect.initial
        log.info("servo bus %s up: %d servos, control %s", self.cfg.port, self.n, self.goals.describe())
        return True

    def _status_level(self, i: int, m) -> int:
        """Servo i's status return level; a Dynamixel at 0 (it answers PING only) is raised to 1, as
        the driver's SYNC READ needs answers (a RAM register: back to 0 at the next power-on)."""
        reg = m.reg("status_return_level")
        data = self._transact(self.writer.read(i, reg.address, 1), i, 1)
        if data is not None and len(data) == 2:
            return data[1]
        if not self.dynamixel:
            return 1                               # Feetech answers READ at every level: an odd reply
        self._write(self.writer.write(i, reg.address, b"\x01"))     # unanswered at level 0
        data = self._transact(self.writer.read(i, reg.address, 1), i, 1)
        log.info("servo ID %d: status return level 0 raised to 1 for SYNC READ", i)
        return 1 if data is not None else 0

    def _setup_write(self, i: int, m, name: str, value: int, level: int) -> str:
        """Writes a register of servo i during setup: "" when done, else why not. Where the status
        return level leaves writes unanswered (Dynamixel < 2, Feetech 0) it reads the value back."""
        reg = m.reg(name)
        data = value.to_bytes(reg.size, "little")
        if level >= (2 if self.dynamixel else 1):
            answer = self._transact(self.writer.write(i, reg.address, data), i)
            if answer is None:
                return " (no answer)"
            return f" ({dxl.describe_error(answer[0])})" if self.dynamixel and answer[0] & 0x7F else ""
        self._write(self.writer.write(i, reg.address, data))
        back = self._transact(self.writer.read(i, reg.address, reg.size), i, reg.size)
        if back is None:
            return " (no answer to the read-back)"
        return "" if back[1:] == data else f" (reads back {int.from_bytes(back[1:], 'little')})"

    def _retry(self, reason: str) -> bool:
        log.warning("servo bus: %s; retrying in %.2f s", reason, self._backoff)
        self.close()
        self._reconnect_at = self.clock() + round(self._backoff * 1e9)
        self._backoff = min(2 * self._backoff, self.cfg.reconnect.max)
        return False

    def close(self) -> None:
        if self.port is not None:
            try:
                self.port.close()
            except (serial.SerialException, OSError):
                pass
        self.port, self.fd, self.torque_on, self.holding, self._read_sent = None, -1, False, False, 0.0

    def _write(self, *packets) -> None:
        """Writes `packets` in order, all in one write(2) (writev) when the port takes them at once;
        OSError when the port takes nothing for read_timeout (at least 50 ms)."""
        self._last_tx = time.monotonic()
        try:
            done = os.writev(self.fd, packets) if len(packets) > 1 else os.write(self.fd, packets[0])
        except BlockingIOError:
            done = 0
        deadline = None
        for packet in packets:
            if done >= len(packet):
                done -= len(packet)
                continue
            view, done = memoryview(packet)[done:], 0
            while view:
                try:
                    view = view[os.write(self.fd, view):]
                except BlockingIOError:
                    deadline = deadline or time.monotonic() + max(0.05, self._read_timeout)
                    if not select.select((), (self.fd,), (), 0.01)[1] and time.monotonic() > deadline:
                        raise OSError("the port takes no bytes") from None

    def _transact(self, packet, servo_id: int, size: int = 0):
        """One PING, READ or WRITE to servo `servo_id` and its status packet of `size` parameter
        bytes: (error, params...) as bytes, or None. Status packets of another ID or size (late
        answers to an earlier try, e.g. of a bus that wakes up) are counted and passed over."""
        self.parser.taker = None
        self._answer = None
        self._expect, self._answer_id, self._answer_size = -1, servo_id, size
        self._write(packet)
        deadline = time.monotonic() + max(0.05, self._read_timeout)
        while self._answer is None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select((self.fd,), (), (), left)[0]:
                return None
            self.parser.read_from(self.fd)
        return self._answer

    # --- one cycle ---------------------------------------------------------------------------------
    def _on_status(self, servo_id: int, error: int, buf, start: int, stop: int) -> None:
        if self._expect < 0:                               # a setup transaction
            if servo_id != self._answer_id:
                self.stats.unexpected_ids += 1
            elif stop - start != self._answer_size:
                self.stats.length_errors += 1
            elif self._answer is None:
                self._answer = bytes((error,)) + bytes(buf[start:stop])
            return
        if self.fast and servo_id == dxl.BROADCAST_ID:
            return self._on_fast(buf, start - 1, stop)
        k = self.state.slots[servo_id]
        if k < 0:
            self.stats.unexpected_ids += 1
        elif stop - start != self.state.width:
            self.stats.length_errors += 1
        elif self._expect == 0:                            # an answer no read waits for (_drop_late)
            self.stats.late += 1
        elif self.state.store(k, self.parser._address + start, error):
            self._expect -= 1

    def _taken(self, new: int) -> None:
        self._expect -= new

    def _on_fast(self, buf, p: int, stop: int) -> None:
        """A FAST SYNC READ answer, buf[p:stop]: per servo error, ID, data, CRC (the last CRC, the
        packet's, already checked and cut off)."""
        stride = self.state.width + 4
        if stop - p != self.n * stride - 2:
            self.stats.length_errors += 1
            return
        if self._expect == 0:                              # no read waits for it (_drop_late)
            self.stats.late += 1
            return
        at = self.parser._address
        for q in range(p, stop, stride):
            k = self.state.slots[buf[q + 1]]
            if k < 0:
                self.stats.unexpected_ids += 1
            elif self.state.store(k, at + q + 2, buf[q]):
                self._expect -= 1

    def _torque(self, on: int):
        """The SYNC WRITE of torque_enable for every servo; torque_offs counts on -> off changes."""
        if self.torque_on and not on:
            self.torque_offs += 1
        self.holding = self.holding and bool(on)
        self.torque_packet.values[:] = on
        self.torque_on = bool(on)
        return self.torque_packet.seal()

    def cycle(self, prefetch: bool = False) -> bool:
        """One SYNC READ (state published when complete) and the goal SYNC WRITEs (one per goal
        register); False when not connected. prefetch: the next cycle follows at once (the bus is the
        bottleneck), so the next SYNC READ is sent right behind the SYNC WRITEs, in the same write(2),
        and its answers travel while this cycle publishes."""
        now = self.clock()
        if not self.connected:
            if now >= self._reconnect_at and self.connect():
                self.reconnects += self._down      # after a loss only, not the first connect
                self._down = False
            return False
        self.cycles += 1
        try:
            self._keep_watchdog()
            full = self._read_state()
        except OSError as e:
            self._lost(f"bus I/O error: {e}")
            return False
        if full:
            self.full_reads += 1
            self._last_full_ns = now
            self._check_faults()
        elif now - self._last_full_ns > self._link_ns:
            self._lost(f"no complete SYNC READ for {self.cfg.link_timeout:g} s")
            return False
        try:
            goals = self._command(now, full)
            if prefetch and full:          # the SYNC WRITEs and the next SYNC READ in one write (after
                                           # a timeout, late answers may follow: the next cycle drops them)
                self._send_read(*goals)
            elif goals:
                self._write(*goals)
        except OSError as e:
            self._lost(f"bus I/O error: {e}")
            return False
        if full:                           # while the SYNC WRITE is on the wire
            # lockstep: the bus's simulated clock (one period per cycle), so that runs repeat exactly
            self._publish(self.full_reads * self._period_ns if self.cfg.lockstep else now)
        return True

    def _keep_watchdog(self) -> None:
        """Before a SYNC READ: when the bus heard nothing for longer than the Bus Watchdog with the
        torque on (this process stalled, or waited for a quiet line), the servos may have stopped
        (watchdog -1, goal writes refused): 0 clears that, then it is armed again."""
        if not self._watchdog_s or not self.torque_on or time.monotonic() - self._last_tx <= self._watchdog_s:
            return
        self.watchdog_rearms += 1
        log.warning("servo bus: no instruction for %.0f ms, beyond bus_watchdog %.0f ms: the servos may have "
                    "stopped; clearing and re-arming their Bus Watchdog", 1e3 * (time.monotonic() - self._last_tx),
                    1e3 * self._watchdog_s)
        for units in (0, self.cfg.bus_watchdog_units):
            self._watchdog.values[:] = units
            self._write(self._watchdog.seal())

    def _send_read(self, *before) -> None:
        """The SYNC READ, behind `before` (the goal SYNC WRITEs) in the same write(2)."""
        self._write(*before, self._sync_read)
        self._read_sent = self._last_tx

    def _read_state(self) -> bool:
        if not self._read_sent:
            self._drop_late()
            self._keep_watchdog()          # a wait for a quiet line may have outlasted the watchdog
            self._send_read()
        self.state.received.fill(False)
        self._expect = self.n
        self.parser.taker = self._taker
        deadline, self._read_sent = self._read_sent + self._read_timeout, 0.0
        fd = self.fd
        while self._expect > 0:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select((fd,), (), (), left)[0]:
                self.stats.timeouts += self._expect
                self.parser.reset()
                self._late = True
                return False
            if self.parser.read_from(fd) == 0:         # into the parser's buffer: no bytes object
                raise OSError("the port hung up")
        return True

    def _drop_late(self) -> None:
        """Drops what came in since the last read (answers that arrived after their read had timed
        out, counted as `late`; noise), so that no answer passes for the next read's and the state
        is never a cycle old. After a timed-out read (`_late`) its answers may still be on the wire:
        it waits for a quiet line (read_timeout without a byte). In the steady state one read(2)
        that finds nothing (a tty opened with timeout 0 has VMIN = VTIME = 0: its read returns 0
        bytes, not EAGAIN, when empty)."""
        self._expect, self.parser.taker = 0, None
        while True:
            if self.parser.read_from(self.fd) > 0:
                continue
            if not self._late or not select.select((self.fd,), (), (), self._read_timeout)[0]:
                break
            if self.parser.read_from(self.fd) == 0:
                raise OSError("the port hung up")
        self._late = False
        self.parser.reset()

    def _check_faults(self) -> None:
        if self.fault:
            return
        k = self.state.faulty()
        if k >= 0:
            self.fault = (f"servo ID {self.ids[k]} ({self.joints[k].joint}) reports a hardware error "
                          f"(error byte 0x{self.state.errors[k]:02x})")
            log.error("%s: torque off", self.fault)
            self._write(self._torque(0))

    def _publish(self, now: int) -> None:
        st = self.state
        st.decode()
        q, v = st.q, st.v
        np.multiply(st.tau, self.sign, out=self._u)
        ok = self._status.encode(now // 1000, position_measured=q, velocity_estimated=v, position_commanded=q,
                                 torque_measured=self._u, torque_commanded=self._tau_cmd) \
            if self.protocol == "iiwa" else \
            self._status.encode(now // 1000, position_measured=q, velocity_estimated=v, position_commanded=q,
                                torque_measured=self._u, torque_commanded=self._tau_cmd,
                                control_command_success_rate=1.0, robot_mode=2 if self.torque_on else 1,
                                robot_utime=now // 1000, control_mode=4)
        if ok is not None:
            self._status.publish(self.lc)
            self.statuses_published += 1

    def _on_command(self, channel: str, data: bytes) -> None:
        d = self._commands
        if not d.decode(data) or not d.has_torque:
            self.commands_rejected += 1
            return
        self.commands_received += 1
        self._cmd_ns = self.clock()
        np.multiply(d.torque, self.sign, out=self._tau_cmd)   # echoed as torque_commanded, with Drake's status sign
        self.goals.command(d.torque)                         # the goal currents, ready for the next cycle

    def _command(self, now: int, full: bool) -> tuple:
        """Writes what the newest command asks but the SYNC WRITEs of goals, which it returns."""
        fresh = now - self._cmd_ns <= self._cmd_timeout_ns or (self.cfg.lockstep and self.commands_received > 0)
        if not full and not self.fault:      # no fresh state: keep the last goals (link_timeout ends it)
            return ()
        if self.holding and not self.fault:
            if not fresh:
                return ()                                # no command yet: the servos hold the arm
            self.holding = False                         # the first: each servo to its joint's mode
            self.goals.track(self.state.pos)
            if self._hand_over is None:
                return self.goals.packets()
            release, engage = self._hand_over
            return (*release, *self.goals.packets(), engage)
        if not fresh or self.fault:
            if self.torque_on or not fresh and self.cycles % 50 == 0:
                self._write(self._torque(0))             # and repeated now and then while idle
            return ()
        if not self.torque_on:                           # position mode holds where it is, then enable
            self.goals.hold(self.state.pos)
            self._write(*self.goals.packets())
            self._write(self._torque(1))
            return ()
        self.goals.track(self.state.pos)                      # goal position = present + τ / K in ticks
        return self.goals.packets()

    def _lost(self, reason: str) -> None:
        log.warning("servo bus lost: %s; reconnecting", reason)
        self.links_lost += 1
        self._down = True
        try:
            if self.connected:
                self._write(self._torque(0))
        except OSError:
            pass
        self._retry(reason)

    # --- running -----------------------------------------------------------------------------------
    def run(self, duration: float | None = None, stop=None) -> dict:
        """spin() until duration, stop() or an exception; torque off on every exit. Returns the summary."""
        try:
            self.spin(duration, stop)
        finally:
            self.shutdown()
        return self.summary()

    def spin(self, duration: float | None = None, stop=None) -> None:
        """Cycles at config.rate, handling LCM in between, for `duration` s or until stop() holds
        (lockstep: one cycle per LCM command, and one when connected, for the first status)."""
        if self.cfg.lockstep:
            return self._spin_lockstep(duration, stop)
        lc_fd = self.lc.fileno()
        end = None if duration is None else self.clock() + round(duration * 1e9)
        due, behind = self.clock(), False
        while (end is None or self.clock() < end) and not (stop and stop()):
            while True:
                left = (due - self.clock()) / 1e9
                if select.select((lc_fd,), (), (), max(left, 0.0))[0]:
                    self.lc.handle_timeout(0)
                if left <= 0:
                    break
            t0 = time.process_time_ns()
            self.cycle(prefetch=behind)
            if len(self.cycle_ns) < 100_000:
                self.cycle_ns.append(time.process_time_ns() - t0)
            due += self._period_ns
            behind = self.clock() >= due            # rate beyond the bus: the next SYNC READ goes out now
            if self.clock() - due > 10 * self._period_ns:     # fell behind (a stall): no burst to catch up
                due = self.clock()

    def _spin_lockstep(self, duration, stop) -> None:
        lc_fd = self.lc.fileno()
        end = None if duration is None else self.clock() + round(duration * 1e9)
        while (end is None or self.clock() < end) and not (stop and stop()):
            if not self.connected:
                if self.cycle():
                    continue
                if self.connected:
                    self.cycle()                    # the first status, no command yet
                else:
                    time.sleep(0.01)
                continue
            before = self.commands_received
            if select.select((lc_fd,), (), (), 0.05)[0]:
                self.lc.handle_timeout(0)
            if self.commands_received != before:
                self.cycle()

    def shutdown(self) -> None:
        """Torque off (twice, in case a byte is lost) and close the port. When the port is closed or fails
        (the bus was lost) after cycles, it is opened once more: servos keep torque through a dropped adapter."""
        if not self._torque_off() and self.cycles:
            self.close()
            with contextlib.suppress(serial.SerialException, OSError, ValueError):
                self.port = serial.Serial(self.cfg.port, self.cfg.baudrate, timeout=0, write_timeout=0.1)
                self.fd = self.port.fileno()
            if not self._torque_off():
                log.warning("servo bus: %s cannot be reached to turn the torque off", self.cfg.port)
        self.close()

    def _torque_off(self) -> bool:
        """Writes torque off twice: False when not connected or the port fails."""
        with contextlib.suppress(OSError):
            for _ in range(2 * self.connected):
                self._write(self._torque(0))
            return self.connected
        return False

    def summary(self) -> dict:
        s = self.stats
        return {"cycles": self.cycles, "full_reads": self.full_reads, "statuses": self.statuses_published,
                "commands": self.commands_received, "commands_rejected": self.commands_rejected,
                "links_lost": self.links_lost, "reconnects": self.reconnects, "torque_offs": self.torque_offs,
                "watchdog_rearms": self.watchdog_rearms, "fault": self.fault,
                "crc_errors": s.crc_errors, "header_errors": s.header_errors, "timeouts": s.timeouts,
                "unexpected_ids": s.unexpected_ids, "length_errors": s.length_errors, "late": s.late,
                "bytes_dropped": s.bytes_dropped}


def run_from_config(cfg, duration: float | None = None, out=sys.stdout) -> int:
    """`hil servo-bus CONFIG`: the driver of a run config's `servo_bus` section until duration, SIGINT,
    SIGTERM or SIGHUP (torque off, exit 0)."""
    from drivers.core.config import channels_for
    from drivers.core.robot import load_robot
    from drivers.run_config import required
    config = required(cfg, "servo_bus")
    robot = load_robot(cfg.robot)
    channels = channels_for(cfg)
    driver = ServoDriver(config, robot.joint_names, cfg.robot.protocol, channels, open_lcm(cfg.lcm.url))
    print(f"servo driver ready: {config.port} at {config.baudrate} baud, {driver.n} {config.protocol} servos, "
          f"control {driver.goals.describe()} at {config.rate:g} Hz; status {channels.status}, "
          f"command {channels.command}", file=out, flush=True)
    # SIGHUP: the terminal closed. SIGINT too: a KeyboardInterrupt could land inside shutdown()'s torque
    # off. Ignored after: torque off, a late one must not make the exit a kill (SIG_DFL as Python finalizes).
    with stop_on_signals((signal.SIGTERM, signal.SIGINT, signal.SIGHUP), restore=False) as stop:
        summary = driver.run(duration, stop=stop.is_set)
    print("hil servo-bus: " + ", ".join(f"{k} {v}" for k, v in summary.items()), file=out, flush=True)
    return 0
