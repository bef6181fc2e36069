"""LCM log files: record, read, and turn into numpy arrays.

The files are lcm.EventLog's format, the one lcm-logger writes and
lcm-logplayer plays, so either side can be the LCM tools.

    with LogRecorder("run.lcmlog", channels={"IIWA_STATUS", "IIWA_COMMAND"}) as recorder:
        recorder.subscribe(lc)                    # record what lc receives, or
        recorder.write("IIWA_COMMAND", utime, data)
    for event in read_events("run.lcmlog"): ...  # lcm.Event: channel, timestamp, data
    arrays = log_to_arrays("run.lcmlog")          # {channel: {field: ndarray}}
"""
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


def read_events(path, channels=None):
    """The log's lcm.Event objects (channel, timestamp in µs, data), optionally only `channels`;
    ValueError for a file that is not an LCM log (check_log) or an event whose channel name is not
    UTF-8 (lcm.EventLog cannot give it as a str), naming the file and the event's byte offset."""
    check_log(path)
    log = lcm.EventLog(str(path), "r")
    try:
        while True:
            offset = log.tell()
            try:
                event = log.read_next_event()
            except UnicodeDecodeError as e:
                raise ValueError(f"{path}: the event at byte {offset} has a channel name that is not UTF-8 "
                                 f"({bytes(e.object[:40])!r}): the log is corrupt") from None
            if event is None:
                return
            if channels is None or event.channel in channels:
                yield event
    finally:
        log.close()


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
