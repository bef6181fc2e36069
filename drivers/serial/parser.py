"""Resynchronising stream parser: bytes in, checked and decoded messages out, link counters kept."""
import time
from collections import deque
from dataclasses import dataclass

from .codec import FrameDecoder, read_header
from .errors import CrcError, HeaderError, JointCountError, PayloadError, ProtocolError
from .protocol import CRC_SIZE, HEADER_SIZE, MAX_FRAME_SIZE, SYNC
from .rx_buffer import ReceiveBuffer


@dataclass(slots=True)
class LinkStats:
    """Counters of one receive direction since the parser was made (plain ints, never reset).

    bytes_received = bytes of accepted frames + bytes_dropped + StreamParser.buffered.
    """

    bytes_received: int = 0
    frames_ok: int = 0  # frames accepted and decoded
    crc_errors: int = 0
    header_errors: int = 0  # bad version, type or length after a sync pattern
    payload_errors: int = 0  # intact frames (CRC good) with invalid content
    joint_count_errors: int = 0  # intact frames for another joint count
    resyncs: int = 0  # times the parser lost framing and had to hunt for sync
    bytes_dropped: int = 0  # bytes that were not part of an accepted frame
    seq_gaps: int = 0  # accepted frames whose seq did not follow the previous one
    frames_missed: int = 0  # seq numbers skipped by forward gaps (u16 wraparound aware)
    last_frame_ns: int = 0  # clock reading when the last frame was accepted

    def age_ns(self, now_ns: int) -> int:
        """How stale the link is: time since the last accepted frame."""
        return now_ns - self.last_frame_ns


class StreamParser(ReceiveBuffer):
    """Finds frames in a byte stream, decodes them into `latest`, counts what went wrong.

    feed() takes reads of any size and chunking. A bad header or CRC drops one byte and
    hunts for the next sync pattern, so the frames after a corrupted one are recovered; an
    intact frame with bad content (e.g. another joint count) is skipped whole. Rejections are
    counted in `stats` and kept in `errors` (the most recent 64) -- feed() does not raise,
    unless `strict`: then it raises the first error of the call after consuming all its bytes.
    `on_message(msg)` is called for each accepted message; `msg` is the container in
    `latest`, valid until the next frame of its type.
    """

    def __init__(
        self,
        joint_count: int,
        on_message=None,
        *,
        strict: bool = False,
        clock=time.monotonic_ns,
        buffer_size: int = 4096,
    ):
        if buffer_size < MAX_FRAME_SIZE:
            raise ValueError(f"buffer_size must be at least {MAX_FRAME_SIZE}, got {buffer_size}")
        self._decoder = FrameDecoder(joint_count)
        self.latest = self._decoder.latest
        self.stats = LinkStats()
        self.errors = deque(maxlen=64)
        self.on_message = on_message
        self.strict = strict
        self._clock = clock
        super().__init__(buffer_size)
        self._last_seq = -1
        self._first_error = None

    def reset(self):
        """Starts over on a new connection: drops the held-back bytes (counted as dropped) and
        forgets the last sequence number, so the sender's restart is no gap. Counters are kept."""
        self._clear()
        self._last_seq = -1

    def feed(self, data) -> int:
        """Consumes `data` (a bytes-like object); returns the number of frames accepted."""
        frames_before = self.stats.frames_ok
        self._fill(data)
        if self.strict and self._first_error is not None:
            error, self._first_error = self._first_error, None
            raise error
        return self.stats.frames_ok - frames_before

    def _scan(self):
        buf, end, stats = self._buffer, self._tail, self.stats
        while True:
            p = self._seek(SYNC)
            if p < 0 or end - p < HEADER_SIZE:
                return
            try:
                msg_type, length, seq = read_header(buf, p)
            except HeaderError as error:
                stats.header_errors += 1
                self._reject(error)
                self._drop(1)
                continue
            size = HEADER_SIZE + length + CRC_SIZE
            if end - p < size:
                return
            try:
                msg = self._decoder.decode_from(self._address + p, msg_type, length, seq)
            except CrcError as error:
                stats.crc_errors += 1
                self._reject(error)
                self._drop(1)
                continue
            except JointCountError as error:
                stats.joint_count_errors += 1
                self._skip_intact(error, size)
                continue
            except PayloadError as error:
                stats.payload_errors += 1
                self._skip_intact(error, size)
                continue
            self._head = p + size
            self._accept(msg)

    def _skip_intact(self, error: ProtocolError, size: int):
        """Skips a rejected frame whose CRC was good: framing is intact, no resync."""
        self._reject(error)
        self._head += size
        self.stats.bytes_dropped += size
        self._hunting = False

    def _reject(self, error: ProtocolError):
        self.errors.append(error)
        if self.strict and self._first_error is None:
            self._first_error = error

    def _accept(self, msg):
        stats = self.stats
        now = self._clock()
        msg.rx_time_ns = now
        stats.last_frame_ns = now
        stats.frames_ok += 1
        self._hunting = False
        if self._last_seq >= 0:
            gap = (msg.seq - self._last_seq - 1) & 0xFFFF
            if gap:
                stats.seq_gaps += 1
                if gap < 0x8000:  # a backward jump (the sender restarted) misses nothing
                    stats.frames_missed += gap
        self._last_seq = msg.seq
        if self.on_message is not None:
            self.on_message(msg)
