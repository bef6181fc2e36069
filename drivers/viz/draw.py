"""lcmt_viewer_draw from q with preallocated buffers: the poses X_WB of the links with geometry."""
from __future__ import annotations

import math

import numpy as np

from messages import lcmt_viewer_draw
from messages.channels import DRAKE_VIEWER_DRAW

from .load import SOURCE_NAME, draw_bodies, link_name


class DrawPublisher:
    """Publishes lcmt_viewer_draw for `plant` at q: for each link of draw_bodies(plant), p_WB and
    R_WB as a quaternion [w x y z] with w >= 0, in float32 as DrakeVisualizer sends them. `plant` may be
    a list of (plant, source name, robot_num offset) (load.scene_parts): one message of all their links.

    The message is encoded once by lcm-gen; publish() rewrites only its timestamp and pose fields
    in place (numpy views of big-endian fields) from the kernel body_positions_quaternions and
    hands lcm one bytes copy. Not thread-safe.
    """

    def __init__(self, plant, lc, channel: str = DRAKE_VIEWER_DRAW, source_name: str = SOURCE_NAME):
        parts = plant if isinstance(plant, list) else [(plant, source_name, 0)]
        links = [(p, b, name, offset) for p, name, offset in parts for b in draw_bodies(p)]
        n = len(links)
        self.lc, self.channel = lc, channel
        template = lcmt_viewer_draw()
        template.num_links = n
        template.link_name = [link_name(p, b, name) for p, b, name, _ in links]
        template.robot_num = [offset + int(b.model_instance()) for _, b, _, offset in links]
        template.position = [[0.0] * 3 for _ in links]
        template.quaternion = [[1.0, 0.0, 0.0, 0.0] for _ in links]
        self._buffer = bytearray(template.encode())
        end = len(self._buffer)
        # Layout: fingerprint (8), timestamp int64, ..., position float[n][3], quaternion float[n][4].
        self._timestamp = np.frombuffer(self._buffer, ">i8", 1, 8)
        self._position = np.frombuffer(self._buffer, ">f4", 3 * n, end - 28 * n).reshape(n, 3)
        self._quaternion = np.frombuffer(self._buffer, ">f4", 4 * n, end - 16 * n).reshape(n, 4)
        self._pq = np.zeros((n, 7))
        self._p, self._wxyz = self._pq[:, :3], self._pq[:, 3:]
        # per part: its kernels, X_WB of all its bodies, which of them are links, and its rows of _pq
        self._parts, start = [], 0
        for p, _, _ in parts:
            index = np.array([int(b.index()) for b in draw_bodies(p)], dtype=np.intp)
            self._parts.append((p.kernels(), np.zeros((p.num_bodies(), 7)), index, self._pq[start:start + len(index)]))
            start += len(index)
        self._kernels, self._pq_all, self._index, _ = self._parts[0]

    def encode(self, q, utime: int) -> bool:
        """Write the message for positions q (float64, (nq,)) at `utime` µs (timestamp utime // 1000
        ms); of several plants (a list of parts), q is a sequence of each part's positions. False,
        leaving the buffer unchanged, if q is not finite; a wrong q raises ValueError."""
        if len(self._parts) == 1:
            if not math.isfinite(q.dot(q)):
                return False
            self._kernels.body_positions_quaternions(q, self._pq_all)
            self._pq_all.take(self._index, 0, self._pq)
        else:
            for q_k in q:
                if not math.isfinite(q_k.dot(q_k)):
                    return False
            for (kernels, pq_all, index, rows), q_k in zip(self._parts, q):
                kernels.body_positions_quaternions(q_k, pq_all)
                pq_all.take(index, 0, rows)
        np.copyto(self._position, self._p)
        np.copyto(self._quaternion, self._wxyz)
        self._timestamp[0] = utime // 1000
        return True

    def publish(self, q: np.ndarray, utime: int) -> bool:
        """encode(q, utime) and send it on `channel`; False if q is not finite (nothing sent)."""
        if not self.encode(q, utime):
            return False
        self.lc.publish(self.channel, bytes(self._buffer))
        return True

    def tobytes(self) -> bytes:
        """A copy of the last encoded message."""
        return bytes(self._buffer)
