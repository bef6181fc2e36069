"""LCM log files: record, read, and turn into numpy arrays.

The files are lcm.EventLog's format, the one lcm-logger writes and
lcm-logplayer plays, so either side can be the LCM tools.

    with LogRecorder("run.lcmlog", channels={"IIWA_STATUS", "IIWA_COMMAND"}) as recorder:
        recorder.subscribe(lc)                    # record what lc receives, or
        recorder.write("IIWA_COMMAND", utime, data)
    for event in read_events("run.lcmlog"): ...  # lcm.Event: channel, timestamp, data
    arrays = log_to_arrays("run.lcmlog")          # {channel: {field: ndarray}}
"""
import struct
import time

import lcm
import numpy as np

from messages import errors
from messages.registry import type_for_fingerprint
from messages.validation import decode_message

_DTYPES = {"int8_t": np.int8, "int16_t": np.int16, "int32_t": np.int32, "int64_t": np.int64,
           "float": np.float64, "double": np.float64, "boolean": np.bool_, "byte": np.uint8}


class LogRecorder:
    """Writes LCM events to a log file, keeping only `channels` (all when None).

    `clock()` gives the timestamps of subscribed events in microseconds (default: the wall clock,
    as lcm-logger stamps them; a simulation passes its own time)."""

    def __init__(self, path, channels=None, overwrite=False, clock=None):
        self.channels = None if channels is None else frozenset(channels)
        self.clock = clock or (lambda: time.time_ns() // 1000)
        self.count = 0
        self._log = lcm.EventLog(str(path), "w", overwrite=overwrite)
        self._subscriptions = []

    def write(self, channel, utime, data):
        """Append one event (utime in microseconds); False if `channel` is filtered out."""
        if self.channels is not None and channel not in self.channels:
            return False
        self._log.write_event(int(utime), channel, data if type(data) is bytes else bytes(data))
        self.count += 1
        return True

    def subscribe(self, lc):
        """Record the recorder's channels as `lc` receives them (pump lc.handle*() as usual).

        Events are stamped with clock() at receipt.
        """
        patterns = [".*"] if self.channels is None else [_literal(name) for name in sorted(self.channels)]
        for pattern in patterns:
            self._subscriptions.append((lc, lc.subscribe(pattern, self._receive)))

    def _receive(self, channel, data):
        self.write(channel, self.clock(), data)

    def close(self):
        """Unsubscribe and close the file."""
        for lc, subscription in self._subscriptions:
            lc.unsubscribe(subscription)
        self._subscriptions.clear()
        self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def _literal(channel):
    """`channel` as an LCM subscription regex matching exactly it."""
    return "".join(f"\\{c}" if not (c.isalnum() or c == "_") else c for c in channel)


LOG_SYNC_WORD = b"\xed\xa1\xda\x01"     # every event of an LCM log starts with it (big-endian 0xEDA1DA01)


def check_log(path) -> None:
    """ValueError unless the file starts with an LCM event (lcm.EventLog reads anything else as empty)."""
    with open(path, "rb") as f:
        head = f.read(4)
    if head != LOG_SYNC_WORD:
        raise ValueError(f"{path}: not an LCM log (" + ("the file is empty" if not head else
                         f"it starts with {head.hex()}, not the LCM event sync word {LOG_SYNC_WORD.hex()}") + ")")


_EVENT_HEADER = struct.Struct(">4sqqii")    # sync word, event number, timestamp µs, channel length, data length
MAX_CHANNEL_LENGTH = 255                  # bytes of a channel name in a log event (lcm allows 63)


def read_events(path, channels=None, corrupt=None):
    """The log's lcm.Event objects (channel, timestamp in µs, data), optionally only `channels`.

    The reader is ours, not lcm.EventLog's, which prints to the process's stderr and then either
    skips a corrupt event silently or stops at it, losing the rest of the log, and raises
    UnicodeDecodeError for a channel name that is not UTF-8. Here a file that is not an LCM log
    (check_log) raises ValueError, and so does a corrupt event (no sync word where an event starts,
    a channel length outside 1..255, a channel name that is not UTF-8, a length that runs past the
    end while more events follow), naming the file and the event's byte offset; unless `corrupt` is
    a list: then each corrupt stretch is appended to it as (byte offset, what is wrong) and reading
    goes on at the next sync word. A log cut short inside its last event (the recorder was killed)
    ends at its last whole event.
    """
    check_log(path)
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        offset = 0
        while offset < size:
            f.seek(offset)
            event, problem, end = _read_event(f, offset, size)
            if problem is not None:
                if corrupt is None:
                    raise ValueError(f"{path}: the event at byte {offset} is corrupt: {problem}")
                corrupt.append((offset, problem))
                offset = _next_sync(f, offset + 1, size)
                continue
            if event is None:               # the cut-short tail
                return
            if channels is None or event.channel in channels:
                yield event
            offset = end


def _read_event(f, offset: int, size: int):
    """(event, None, end) for a whole event at `offset`; (None, what is wrong, 0) for a corrupt one;
    (None, None, 0) for a cut-short tail."""
    header = f.read(_EVENT_HEADER.size)
    if len(header) < _EVENT_HEADER.size:
        return None, _tail(f, offset, size), 0
    sync, number, utime, channel_length, data_length = _EVENT_HEADER.unpack(header)
    if sync != LOG_SYNC_WORD:
        return None, f"no event sync word ({sync.hex()})", 0
    if not 0 < channel_length <= MAX_CHANNEL_LENGTH or data_length < 0:
        return None, f"channel length {channel_length}, data length {data_length}", 0
    end = offset + _EVENT_HEADER.size + channel_length + data_length
    if end > size:
        return None, _tail(f, offset, size), 0
    body = f.read(channel_length + data_length)
    try:
        channel = body[:channel_length].decode("utf-8")
    except UnicodeDecodeError:
        return None, f"a channel name that is not UTF-8 ({body[:channel_length][:40]!r})", 0
    return lcm.Event(number, utime, channel, body[channel_length:]), None, end


def _tail(f, offset: int, size: int) -> str | None:
    """An event that runs past the end of the file is a cut-short tail (None), unless another event
    starts after it: then its length is corrupt, and the rest of the log would be lost."""
    if _next_sync(f, offset + 1, size) < size:
        return "its length runs past the end of the file, yet more events follow"
    return None


def _next_sync(f, start: int, size: int, chunk: int = 1 << 20) -> int:
    """The offset of the next event sync word at or after `start`, or `size` if there is none."""
    pos = start
    while pos < size:
        f.seek(pos)
        block = f.read(chunk + len(LOG_SYNC_WORD) - 1)
        i = block.find(LOG_SYNC_WORD)
        if i >= 0:
            return pos + i
        pos += chunk
    return size


def log_to_arrays(path, channels=None, on_error="raise"):
    """{channel: {field: ndarray}} for the log's channels whose type this package knows.

    The type of a channel is found by fingerprint. Each channel gets
    "log_utime" (the log's timestamps) and one array per numeric field of the
    message, N rows long: scalars have shape (N,), arrays (N, length...) when
    every message has the same length, else an object array of per-message
    arrays. float and double become float64; strings and nested types are
    left out. Values are not rejected (a NaN in the log shows as NaN), but a
    corrupt event (bad size, or a different type than the channel's first)
    raises its MessageError, or is skipped with on_error="skip". Channels of
    unknown types are left out.
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    rows = {}
    for event in read_events(path, channels):
        if event.channel in rows:
            message_type = rows[event.channel][0]
        else:
            message_type = type_for_fingerprint(event.data)
            if message_type is None:
                continue
        try:
            message = decode_message(message_type, event.data, event.channel, check_values=False)
        except errors.MessageError:
            if on_error == "raise":
                raise
            continue
        rows.setdefault(event.channel, (message_type, [], []))
        rows[event.channel][1].append(event.timestamp)
        rows[event.channel][2].append(message)
    return {channel: _columns(message_type, timestamps, messages)
            for channel, (message_type, timestamps, messages) in rows.items()}


def _columns(message_type, timestamps, messages):
    columns = {"log_utime": np.array(timestamps, dtype=np.int64)}
    for name, type_name in zip(message_type.__slots__, message_type.__typenames__):
        dtype = _DTYPES.get(type_name)
        if dtype is None:
            continue
        values = [getattr(message, name) for message in messages]
        try:
            columns[name] = np.array(values, dtype=dtype)
        except ValueError:  # ragged: the lengths vary between messages
            column = columns[name] = np.empty(len(values), dtype=object)
            for i, value in enumerate(values):
                column[i] = np.array(value, dtype=dtype)
    return columns
