"""Who commands the simulated robot: one commander at a time, as FRI and libfranka's FCI serve one
client, a second refused (docs/sim.md, One commander).

    watch = CommanderWatch.open(url, channel, timeout_ns)   # None unless url is udpm://
    watch.accept(data, now_ns)      the command's sender may command now; else refused, `refused` counts
    watch.poll()                    reads what waits (once a step, so its socket never overflows)
    watch.close()

LCM hands a subscriber the message's bytes, not who sent it. Each LCM instance publishes from a UDP
socket of its own, so a second socket joined to the same multicast group and port (as LCM's own, with
SO_REUSEADDR: every socket on the port gets a copy) sees each command with its sender's address
(host, port): one per process. A command is told by its bytes. The first sender commands; another
sender's command is refused while the commander's newest came within `timeout_ns` (the simulator's
command_timeout), and takes over after that (a loop restarted). A command whose copy is not found
(the watch's socket overflowed) is accepted: the watch never refuses what it cannot attribute.
"""
from __future__ import annotations

import socket
import struct
from urllib.parse import urlsplit

SHORT_MAGIC = b"LC02"                # LCM's header of a message sent in one datagram: magic, seqno, channel\0
KEPT = 256                           # commands' senders kept, newest last, waiting for LCM to hand them over


class CommanderWatch:
    """The senders of the commands on one channel of a udpm:// LCM (see the module doc)."""

    def __init__(self, sock: socket.socket, channel: str, timeout_ns: int):
        self.sock = sock
        self.header = channel.encode() + b"\0"
        self.timeout_ns = timeout_ns
        self.senders: dict[bytes, tuple] = {}
        self.commander: tuple | None = None
        self.last_ns = 0
        self.refused = 0
        self.refused_from: list[tuple] = []     # the senders refused, in the order first seen
        self.told = 0                           # of them, said (refusal)

    @classmethod
    def open(cls, url: str, channel: str, timeout_ns: int) -> "CommanderWatch | None":
        """A watch on `channel` of the LCM at `url`, or None for another provider than udpm (memq://: one
        process) or a socket that cannot be opened."""
        parts = urlsplit(url)
        if parts.scheme != "udpm" or not parts.hostname:
            return None
        group, port = parts.hostname, parts.port or 7667
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("", port))
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                            struct.pack("4s4s", socket.inet_aton(group), socket.inet_aton("0.0.0.0")))
            sock.setblocking(False)
        except OSError:
            sock.close()
            return None
        return cls(sock, channel, timeout_ns)

    def poll(self) -> None:
        """Reads every datagram waiting; keeps the sender of each one-datagram message on the channel."""
        header, start = self.header, 8
        while True:
            try:
                data, sender = self.sock.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                return
            if data[:4] == SHORT_MAGIC and data[start:start + len(header)] == header:
                payload = data[start + len(header):]
                self.senders.pop(payload, None)
                self.senders[payload] = sender
                if len(self.senders) > KEPT:
                    del self.senders[next(iter(self.senders))]

    def sender(self, data: bytes) -> tuple | None:
        """The sender (host, port) of the command `data`, or None if its copy is not found."""
        sender = self.senders.pop(data, None)
        if sender is None:
            self.poll()
            sender = self.senders.pop(data, None)
        return sender

    def accept(self, data: bytes, now_ns: int) -> bool:
        """Whether the command `data`, handled at now_ns, comes from the commander (or may take over);
        a second commander's is refused (counted in `refused`, its sender in `refused_from`)."""
        sender = self.sender(data)
        if sender is None:
            return True
        if sender != self.commander and self.commander is not None and now_ns - self.last_ns <= self.timeout_ns:
            self.refused += 1
            if sender not in self.refused_from:
                self.refused_from.append(sender)
            return False
        self.commander, self.last_ns = sender, now_ns
        return True

    def refusal(self, channel: str) -> str | None:
        """What `hil sim` says of a second commander, once per sender refused, else None."""
        if len(self.refused_from) <= self.told:
            return None
        self.told = len(self.refused_from)
        return (f"hil sim: second commander: commands on {channel} from {address(self.refused_from[-1])} while "
                f"{address(self.commander)} commands: refused (two loops on one robot: give each session its own "
                f"port, lcm.url: \"udpm://239.255.76.67:PORT?ttl=0\", docs/sim.md)")

    def close(self) -> None:
        self.sock.close()


def address(sender: tuple) -> str:
    return f"{sender[0]}:{sender[1]}"
