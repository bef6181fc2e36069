"""The loop against a driver chain in processes of their own, in lockstep: the simulated serial board
(`hil serial-device`) behind the serial driver (`hil serial`), or simulated Dynamixel / Feetech
servos (`hil servo-bus-device`) behind the servo-bus driver (`hil servo-bus`), on a private pty and a
private UDP multicast group (ttl=0). The device steps its plant once per command and the loop waits
for each status (STATUS_WAIT_S), so a run is as deterministic as one against the in-process simulator.
`hil regress` runs the serial and servo scenarios here, and the pytest fixtures a config with a
`serial` or `servo_bus` section.

    summary, loop = run_chain(cfg, "servo", duration=2.0, controller=MyLaw, on_tick=record)
"""
from __future__ import annotations

import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lcm

from drivers.core.config import RunConfig, dump_config
from messages.channels import private_lcm_url

STATUS_WAIT_S = 0.5          # the loop waits this long for each status (the device steps on each command)

# Each link: the config section whose port is made private, the device and the driver commands, and the
# line the device prints when ready.
CHAINS = {"serial": ("serial", "serial-device", "device ready:", "serial"),
          "servo": ("servo_bus", "servo-bus-device", "servo device ready:", "servo-bus")}


def link_of(cfg: RunConfig) -> str | None:
    """The chain a run config names: "serial" (a serial section), "servo" (a servo_bus section) or None."""
    return "serial" if cfg.serial is not None else "servo" if cfg.servo_bus is not None else None


def run_chain(cfg: RunConfig, link: str, duration: float, *, controller=None, on_tick=None,
              check_alloc: bool = False) -> tuple[dict, object]:
    """Runs the loop on `cfg` against the `link` chain for `duration` s of the robot's clock; returns
    (summary, loop) with the devices' last lines in summary[link]. `controller` and `check_alloc` as
    hil.loop.ControlLoop's. RuntimeError (with the process's output) when a process ends early."""
    from .hardware import robot_for
    from .lifecycle import Mode
    from .loop import ControlLoop
    from .running import load
    section, device, ready, driver = CHAINS[link]
    with tempfile.TemporaryDirectory(prefix="hil-chain-") as tmp:
        url = private_lcm_url()
        cfg = load(cfg, {"lcm": {"url": url}, section: {"port": f"{tmp}/board"}})
        config_file = Path(tmp) / "chain.yaml"
        config_file.write_text(dump_config(cfg))
        limit = str(duration * 20 + 60)                  # wall seconds: the processes end themselves
        procs = {}
        try:
            # The loop subscribes before the driver starts, so that it cannot miss the first status.
            loop = ControlLoop(cfg, robot_for(cfg), lcm.LCM(url), Mode.LOCKSTEP, status_wait_s=STATUS_WAIT_S,
                               controller=controller, check_alloc=check_alloc).configure()
            procs["device"] = _spawn(device, config_file, limit)
            _wait_line(procs["device"], ready, 30.0)
            procs["driver"] = _spawn(driver, config_file, limit)
            summary = loop.run(duration, on_tick=on_tick,
                               stop=lambda: any(p.poll() is not None for p in procs.values()))
            ended = [name for name, p in procs.items() if p.poll() is not None]
        finally:
            outputs = {name: _stop(p) for name, p in procs.items()}
            if "loop" in locals():
                loop.close()
        if ended:
            raise RuntimeError(f"the {link} {ended[0]} process ended during the run; its output ends: "
                               f"...{outputs[ended[0]][-2000:]}")
        summary[link] = {name: out.strip().splitlines()[-3:] for name, out in outputs.items()}
        return summary, loop


def _spawn(command: str, config: Path, duration: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hil", command, str(config), "--duration", duration],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait_line(p: subprocess.Popen, prefix: str, timeout: float) -> None:
    end, seen = time.monotonic() + timeout, []
    while time.monotonic() < end and select.select([p.stdout], [], [], end - time.monotonic())[0]:
        line = p.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(prefix):
            return
    raise RuntimeError(f"`{' '.join(p.args[2:])}` did not print '{prefix}' within {timeout:g} s: {''.join(seen)}")


def _stop(p: subprocess.Popen) -> str:
    if p.poll() is None:
        p.terminate()
    try:
        return p.communicate(timeout=10)[0] or ""
    except subprocess.TimeoutExpired:
        p.kill()
        return p.communicate()[0] or ""
