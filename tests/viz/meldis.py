"""Drake's Meldis for the tests: `meldis(lcm_url)` runs `python -m pydrake.visualization.meldis` in a subprocess
(LCM on the given URL, Meshcat on a free localhost port) and `meshcat_scene(port)` reads its Meshcat's scene back
from the /download page (MessagePack commands, decoded here)."""
import base64
import contextlib
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np
import pytest


def unpack_msgpack(data: bytes, i: int = 0):
    """(value, next index) of the MessagePack value at data[i]: the subset Meshcat's commands use."""
    t = data[i]
    i += 1
    if t <= 0x7F or t >= 0xE0:
        return (t if t <= 0x7F else t - 0x100), i
    if 0x80 <= t <= 0x9F or t in (0xDC, 0xDD, 0xDE, 0xDF):
        if t <= 0x9F:
            n = t & 0x0F
        else:
            size = 2 if t in (0xDC, 0xDE) else 4
            n, i = int.from_bytes(data[i:i + size], "big"), i + size
        is_map = t <= 0x8F or t in (0xDE, 0xDF)
        items = []
        for _ in range(2 * n if is_map else n):
            value, i = unpack_msgpack(data, i)
            items.append(value)
        return (dict(zip(items[::2], items[1::2])) if is_map else items), i
    if 0xA0 <= t <= 0xBF or t in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6):
        if t <= 0xBF:
            n = t & 0x1F
        else:
            size = {0xD9: 1, 0xDA: 2, 0xDB: 4, 0xC4: 1, 0xC5: 2, 0xC6: 4}[t]
            n, i = int.from_bytes(data[i:i + size], "big"), i + size
        raw = bytes(data[i:i + n])
        return (raw.decode() if t <= 0xDB and t not in (0xC4, 0xC5, 0xC6) else raw), i + n
    if t in (0xC0, 0xC2, 0xC3):
        return {0xC0: None, 0xC2: False, 0xC3: True}[t], i
    formats = {0xCA: ">f", 0xCB: ">d", 0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q",
               0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}
    if t in formats:
        return struct.unpack_from(formats[t], data, i)[0], i + struct.calcsize(formats[t])
    if 0xD4 <= t <= 0xD8 or t in (0xC7, 0xC8, 0xC9):   # ext: typed arrays
        if t >= 0xD4:
            n = 1 << (t - 0xD4)
        else:
            size = {0xC7: 1, 0xC8: 2, 0xC9: 4}[t]
            n, i = int.from_bytes(data[i:i + size], "big"), i + size
        return ("ext", data[i], bytes(data[i + 1:i + 1 + n])), i + 1 + n
    raise ValueError(f"MessagePack type byte 0x{t:02x} at {i - 1} is not supported")


def meshcat_scene(port: int) -> dict:
    """{(command type, path): command} of the scene Meshcat at `port` serves on /download."""
    html = urllib.request.urlopen(f"http://localhost:{port}/download", timeout=10).read().decode()
    scene = {}
    for chunk in re.findall(r"data:application/octet-binary;base64,([A-Za-z0-9+/=]+)", html):
        command, _ = unpack_msgpack(base64.b64decode(chunk))
        scene[command["type"], command.get("path")] = command
    return scene


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def meldis(lcm_url: str):
    """`python -m pydrake.visualization.meldis` listening on lcm_url, Meshcat on a free localhost port;
    yields the port. Always stopped."""
    port = free_tcp_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pydrake.visualization.meldis", "--host", "localhost", "--port", str(port),
         "--idle-timeout", "0"],
        env=dict(os.environ, LCM_DEFAULT_URL=lcm_url), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, ready = [], threading.Event()

    def read():
        for line in process.stdout:
            lines.append(line)
            if "Meshcat listening" in line:
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not ready.wait(90) or process.poll() is not None:
            pytest.fail("Meldis did not start:\n" + "".join(lines))
        yield port
        assert process.poll() is None, "Meldis exited:\n" + "".join(lines)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(5)


def scene_with(port: int, expected, step, timeout: float = 90, period: float = 1.0, ready=None) -> dict:
    """Calls step() until Meldis's scene (read every `period` s) holds every (command type, path) of
    `expected` and, if given, ready(scene) is true, or `timeout` s have passed; returns the last scene read."""
    deadline, scene, next_read = time.monotonic() + timeout, {}, 0.0
    while time.monotonic() < deadline:
        step()
        now = time.monotonic()
        if now > next_read:
            scene, next_read = meshcat_scene(port), now + period
            if all(key in scene for key in expected) and (ready is None or ready(scene)):
                break
    return scene


def transform(scene: dict, path: str):
    """X_WP, the 4×4 pose of Meshcat's object at `path` (three.js matrices are column-major)."""
    return np.array(scene["set_transform", path]["matrix"]).reshape(4, 4).T
