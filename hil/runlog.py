"""Recording a run to an LCM log that lcm-logplayer, lcm-spy, `hil report` and `hil replay` read.

The log holds every message on the run's LCM, and on the run-info channel an lcmt_hil_run_info at
the start (the run config, as YAML) and one at the end (the summary, as JSON). In real time the
recorder is lcm-logger, a process of its own on the run's LCM URL, so the log costs the loop
nothing; on memq:// (lockstep) it is in-process, stamps events with the loop's simulated time and
writes the run-info directly.
"""
from __future__ import annotations

import json
import signal
import subprocess
import time
from importlib import metadata
from pathlib import Path

from drivers.core.config import RunConfig, channels_for, dump_config
from messages import lcmt_hil_run_info
from messages.lcm_tools import lcm_tool
from messages.logs import LogRecorder, read_events
from messages.validation import decode_message

HANDSHAKE_S = 5.0           # how long lcm-logger may take to record the first run-info
LOGGER_RECV_BUF = 1 << 23   # bytes: seconds of a robot's traffic, so a stalled moment loses nothing


def logger_url(url: str) -> str:
    """The run's LCM URL with a large socket receive buffer for the logger (the kernel caps it at
    net.core.rmem_max), unless the URL sets one."""
    if "recv_buf_size=" in url or not url.startswith("udpm://"):
        return url
    return f"{url}{'&' if '?' in url else '?'}recv_buf_size={LOGGER_RECV_BUF}"


def version() -> str:
    try:
        return metadata.version("hilstack")
    except metadata.PackageNotFoundError:
        return "unknown"


def run_info(event: int, utime: int, mode: str, cfg: RunConfig, summary: dict | None = None) -> bytes:
    msg = lcmt_hil_run_info()
    msg.utime, msg.event, msg.mode, msg.version = utime, event, mode, version()
    msg.config_yaml = dump_config(cfg)
    msg.summary_json = "" if summary is None else json.dumps(summary)
    return msg.encode()


class RunLog:
    """The log of one run at `path` (overwritten): start(utime) once the loop is set up, finish(utime,
    summary) at the end. `clock_us()` stamps in-process events (lockstep, memq:// URLs)."""

    def __init__(self, path: str | Path, cfg: RunConfig, lc, mode: str, clock_us=None):
        self.path, self.cfg, self.lc, self.mode = Path(path), cfg, lc, mode
        self.channel = channels_for(cfg).run_info
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.recorder = self.logger = None
        if mode == "lockstep" or cfg.lcm.url.startswith("memq://"):
            self.recorder = LogRecorder(self.path, overwrite=True, clock=clock_us)
            self.recorder.subscribe(lc)
        else:
            exe = lcm_tool("lcm-logger")
            if exe is None:
                raise RuntimeError("recording a log needs lcm-logger (it comes with the `lcm` package)")
            self.logger = subprocess.Popen([exe, f"--lcm-url={logger_url(cfg.lcm.url)}", "--force", "--quiet",
                                            "--flush-interval=10", str(self.path)],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def _publish_until_logged(self, data: bytes, event: int, utime: int, channel: str | None = None) -> None:
        """Puts `data` (a run-info `event`) in the log on `channel` (default: the run's run-info channel):
        written directly in-process; else published there until lcm-logger has recorded it."""
        channel = channel or self.channel
        if self.recorder is not None:
            self.recorder.write(channel, utime, data)
            return
        end = time.monotonic() + HANDSHAKE_S
        while time.monotonic() < end:
            if self.logger.poll() is not None:
                raise RuntimeError(f"lcm-logger exited ({self.logger.returncode}): {self.logger.stderr.read().strip()}")
            self.lc.publish(channel, data)
            time.sleep(0.05)
            if self._logged(event, channel):
                return
        raise RuntimeError(f"lcm-logger recorded nothing on {self.cfg.lcm.url} within {HANDSHAKE_S:g} s")

    def _logged(self, event: int, channel: str) -> bool:
        try:
            return any(lcmt_hil_run_info.decode(e.data).event == event for e in read_events(self.path, {channel}))
        except (OSError, ValueError):        # not there yet, or a half-written event at the end
            return False

    def start(self, utime: int, arms: dict | None = None) -> None:
        """The run-info at the start: the run's config; of a station (`arms`, name → RunConfig), each
        arm's on its own run-info channel."""
        for cfg in (arms or {None: self.cfg}).values():
            self._publish_until_logged(run_info(lcmt_hil_run_info.EVENT_START, utime, self.mode, cfg),
                                       lcmt_hil_run_info.EVENT_START, utime, channels_for(cfg).run_info)

    def finish(self, utime: int, summary: dict, arms: dict | None = None) -> None:
        """The run-info at the end, with the summary; of a station, each arm's with its own summary
        (summary["arms"][name])."""
        try:
            for name, cfg in (arms or {None: self.cfg}).items():
                own = summary if name is None else summary["arms"][name]
                self._publish_until_logged(run_info(lcmt_hil_run_info.EVENT_END, utime, self.mode, cfg, own),
                                           lcmt_hil_run_info.EVENT_END, utime, channels_for(cfg).run_info)
        finally:
            self.close()

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None
        if self.logger is not None and self.logger.poll() is None:
            self.logger.send_signal(signal.SIGINT)
            try:
                self.logger.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.logger.kill()
                self.logger.wait()
        self.logger = None


def run_logged(cfg: RunConfig, lc, mode: str, clock_us, ticks, exit_command, summary, arms: dict | None = None) -> dict:
    """The frame every loop runs in: the run's LCM traffic recorded to cfg.telemetry.log when set
    (run-info at the start and, with the summary, at the end; a station's, `arms`, each arm's on its
    run-info channel), ticks() run, exit_command() on every exit path (end, signal, fault, exception),
    and summary() returned (with the log's path)."""
    runlog = RunLog(cfg.telemetry.log, cfg, lc, mode, clock_us=clock_us) if cfg.telemetry.log else None
    try:
        if runlog is not None:
            runlog.start(clock_us(), arms)
        try:
            ticks()
        finally:
            exit_command()
    except BaseException:
        if runlog is not None:
            runlog.close()
        raise
    result = summary()
    if runlog is not None:
        runlog.finish(clock_us(), result, arms)
        result["log"] = cfg.telemetry.log
    return result


def read_run_info(path: str | Path, channel: str | None = None, corrupt: list | None = None) -> tuple:
    """(start, end) lcmt_hil_run_info of the log at `path` (None where absent): the first start
    and the last end on `channel` (default: the first channel carrying the type: a station's log has
    one per arm, the first arm's first). ValueError (a messages.errors.MessageError) for a corrupt
    run-info; `corrupt` as in messages.logs.read_events."""
    from messages.registry import fingerprint
    fp = fingerprint(lcmt_hil_run_info).to_bytes(8, "big")
    start = end = None
    for event in read_events(path, corrupt=corrupt):
        if (channel is None or event.channel == channel) and event.data[:8] == fp:
            msg = decode_message(lcmt_hil_run_info, event.data, event.channel)
            channel = event.channel
            if msg.event == msg.EVENT_START and start is None:
                start = msg
            elif msg.event == msg.EVENT_END:
                end = msg
    return start, end

