"""lcmt_viewer_draw from q with preallocated buffers: the poses X_WB of the links with geometry."""
from __future__ import annotations

import math

import numpy as np

from messages import lcmt_viewer_draw
from messages.channels import DRAKE_VIEWER_DRAW

from .load import SOURCE_NAME, draw_bodies, link_name


class DrawPublisher:
    """Publishes lcmt_viewer_draw for `plant` at q: for each link of draw_bodies(plant), p_WB and
    R_WB as a quaternion [w x y z] with w >= 0, in float32 as DrakeVisualizer sends them.

    The message is encoded once by lcm-gen; publish() rewrites only its timestamp and pose fields
    in place (numpy views of big-endian fields) from the kernel body_positions_quaternions and
    hands lcm one bytes copy. Not thread-safe.
    """

    def __init__(self, plant, lc, channel: str = DRAKE_VIEWER_DRAW, source_name: str = SOURCE_NAME):
        bodies = draw_bodies(plant)
        n = len(bodies)
        self.lc, self.channel = lc, channel
        self._kernels = plant.kernels()
        template = lcmt_viewer_draw()
        template.num_links = n
        template.link_name = [link_name(plant, b, source_name) for b in bodies]
        template.robot_num = [int(b.model_instance()) for b in bodies]
        template.position = [[0.0] * 3 for _ in bodies]
        template.quaternion = [[1.0, 0.0, 0.0, 0.0] for _ in bodies]
        self._buffer = bytearray(template.encode())
        end = len(self._buffer)
        # Layout: fingerprint (8), timestamp int64, ..., position float[n][3], quaternion float[n][4].
        self._timestamp = np.frombuffer(self._buffer, ">i8", 1, 8)
        self._position = np.frombuffer(self._buffer, ">f4", 3 * n, end - 28 * n).reshape(n, 3)
        self._quaternion = np.frombuffer(self._buffer, ">f4", 4 * n, end - 16 * n).reshape(n, 4)
        self._index = np.array([int(b.index()) for b in bodies], dtype=np.intp)
        self._pq_all = np.zeros((plant.num_bodies(), 7))
        self._pq = np.zeros((n, 7))
        self._p, self._wxyz = self._pq[:, :3], self._pq[:, 3:]

    def encode(self, q: np.ndarray, utime: int) -> bool:
        """Write the message for positions q (float64, (nq,)) at `utime` µs (timestamp utime // 1000
        ms). False, leaving the buffer unchanged, if q is not finite; a wrong q raises ValueError."""
        if not math.isfinite(q.dot(q)):
            return False
        self._kernels.body_positions_quaternions(q, self._pq_all)
        self._pq_all.take(self._index, 0, self._pq)
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
