"""Shared pieces of the servo-bus tests: a raw pty pair for capturing what an SDK writes."""
import os
import select
import tty


class PtyPair:
    """A pseudo-terminal: the SDK opens `path`, the test reads and writes `master`."""

    def __init__(self):
        self.master, self._slave = os.openpty()
        tty.setraw(self.master)
        tty.setraw(self._slave)
        self.path = os.ttyname(self._slave)

    def read_all(self, timeout: float = 0.2) -> bytes:
        out = b""
        while select.select((self.master,), (), (), timeout)[0]:
            out += os.read(self.master, 4096)
            timeout = 0.02
        return out

    def close(self):
        os.close(self.master)
        os.close(self._slave)
