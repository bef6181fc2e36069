"""The receive buffer shared by the stream parsers (parser.StreamParser for the board's frames,
bus_stream.PacketStream for the servo buses): a preallocated byte buffer that feed() fills (or
read_from() reads a file descriptor into) and a subclass's `_scan()` walks, with the hunting
bookkeeping. Nothing is allocated per read."""
from ctypes import addressof, c_char, memmove

from ._servo_wire import read_into


class ReceiveBuffer:
    """`stats` (set by the subclass) counts bytes_received, bytes_dropped and resyncs; `_head` is
    the first unparsed byte, `_tail` the end of the buffered bytes."""

    def __init__(self, buffer_size: int):
        self._buffer = bytearray(buffer_size)
        self._view = memoryview(self._buffer)
        self._address = addressof(c_char.from_buffer(self._buffer))  # the export pins the buffer
        self._head = 0
        self._tail = 0
        self._hunting = False

    @property
    def buffered(self) -> int:
        """Bytes held back: the start of a frame or packet whose rest has not arrived yet."""
        return self._tail - self._head

    def _clear(self) -> None:
        """Drops the held-back bytes (counted as dropped)."""
        self.stats.bytes_dropped += self._tail - self._head
        self._head = self._tail = 0
        self._hunting = False

    def _fill(self, data) -> None:
        """Appends `data` (bytes-like, any size) to the buffer a piece at a time, scanning after each."""
        size = len(data)
        self.stats.bytes_received += size
        done = 0
        while done < size:
            self._make_room()
            count = min(len(self._buffer) - self._tail, size - done)
            if count == size:                 # a whole read: copied without a temporary
                self._buffer[self._tail:self._tail + count] = data
            else:
                self._view[self._tail:self._tail + count] = memoryview(data)[done:done + count]
            self._tail += count
            done += count
            self._scan()

    def read_from(self, fd: int) -> int:
        """Reads what the non-blocking `fd` holds straight into the buffer's free end (read(2), no
        bytes object made) and scans it; returns the bytes read, 0 at end of file (or, on a tty
        with VMIN = VTIME = 0, when there were none), -1 when there were none (EAGAIN)."""
        self._make_room()
        n = read_into(fd, self._address + self._tail, len(self._buffer) - self._tail)
        if n > 0:
            self._tail += n
            self.stats.bytes_received += n
            self._scan()
        return n

    def _make_room(self) -> None:
        """Frees the buffer's end: empty, it starts over at 0; used up, the held-back bytes move to
        the front (a full buffer without a packet first drops its oldest byte)."""
        if self._head == self._tail:
            self._head = self._tail = 0
        elif self._tail == len(self._buffer):
            if self._head == 0:
                self._drop(1)
            kept = self._tail - self._head
            memmove(self._address, self._address + self._head, kept)
            self._head, self._tail = 0, kept

    def _scan(self) -> None:
        raise NotImplementedError

    def _seek(self, sync: bytes) -> int:
        """The position of the next `sync` pattern from the head, the bytes before it dropped; -1
        when there is none, all dropped but a trailing start of the pattern (its rest may come next)."""
        p, end, buf = self._head, self._tail, self._buffer
        start = buf.find(sync, p, end)
        if start >= 0:
            if start > p:
                self._drop(start - p)
            return start
        if end == p:
            return -1
        keep = len(sync) - 1 if end - p >= len(sync) else end - p
        while keep:                           # the longest tail that begins the pattern
            i = 0
            while i < keep and buf[end - keep + i] == sync[i]:
                i += 1
            if i == keep:
                break
            keep -= 1
        self._drop(end - p - keep)
        return -1

    def _drop(self, count: int) -> None:
        """Discards `count` bytes at the head while hunting for a header."""
        if count:
            self._head += count
            self.stats.bytes_dropped += count
            if not self._hunting:
                self._hunting = True
                self.stats.resyncs += 1
