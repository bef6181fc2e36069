"""`hil` as real processes, for the tests that run the loop and the simulated driver over UDP
multicast (ttl=0): start one, and end a pair with every process reaped."""
import json
import signal
import subprocess
import sys


def spawn(*args, cwd=None):
    """`python -m hil ARGS` (in `cwd`) with its output captured as text."""
    return subprocess.Popen([sys.executable, "-m", "hil", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd)


def finish(run, sim, timeout: float = 60, stop_sim: bool = False) -> tuple:
    """Waits for `run` (then SIGTERM to `sim` when stop_sim, else it ends by its --duration) and for
    `sim`; kills whatever is left. Checks that the driver survived and `run` sent its exit command;
    returns (run's summary, run's stderr, sim's stdout, sim's stderr)."""
    try:
        run_out, run_err = run.communicate(timeout=timeout)
        if stop_sim:
            sim.send_signal(signal.SIGTERM)
        sim_out, sim_err = sim.communicate(timeout=timeout)
    finally:
        for p in (run, sim):
            if p.poll() is None:
                p.kill()
    assert "the driver ended" not in sim_out and sim.returncode == 0, sim_out + sim_err
    assert run_out.strip(), f"no summary from `hil run` (exit {run.returncode}): {run_err}"
    summary = json.loads(run_out.strip().splitlines()[-1])
    assert summary["status"]["exit_command_sent"], run_err
    return summary, run_err, sim_out, sim_err
