"""What Meldis reads from a `hil` process: run `python -m hil ARGS` while listening on its ttl=0
multicast group, and return the viewer's messages decoded by Drake's own classes when installed."""
import subprocess
import sys
from pathlib import Path

import lcm

REPO = Path(__file__).resolve().parents[2]


def hil_viewer_messages(multicast_url: str, *args) -> tuple:
    """Runs `python -m hil ARGS` from the repository until it exits, handling the load, draw and
    contact messages it publishes on `multicast_url` (and those still queued after it exits); checks
    it exited 0 and returns ({"load": [...], "draw": [...], "contact": [...]}, its stdout)."""
    try:
        from drake import lcmt_contact_results_for_viz, lcmt_viewer_draw, lcmt_viewer_load_robot
    except ImportError:
        from messages import lcmt_contact_results_for_viz, lcmt_viewer_draw, lcmt_viewer_load_robot
    got = {"load": [], "draw": [], "contact": []}
    lc = lcm.LCM(multicast_url)
    lc.subscribe("DRAKE_VIEWER_LOAD_ROBOT", lambda c, d: got["load"].append(lcmt_viewer_load_robot.decode(d)))
    lc.subscribe("DRAKE_VIEWER_DRAW", lambda c, d: got["draw"].append(lcmt_viewer_draw.decode(d)))
    lc.subscribe("CONTACT_RESULTS", lambda c, d: got["contact"].append(lcmt_contact_results_for_viz.decode(d)))
    proc = subprocess.Popen([sys.executable, "-m", "hil", *map(str, args)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None:
            lc.handle_timeout(50)
        while lc.handle_timeout(50):
            pass
    finally:
        if proc.poll() is None:
            proc.kill()
    out = proc.stdout.read()
    assert proc.returncode == 0, out + proc.stderr.read()
    return got, out
