"""The servo-bus stream parsers on damaged streams: every intact packet is recovered, every bad
byte is counted, nothing raises or stalls (noise, truncation, interleaving, CRC errors)."""
import os

import numpy as np
import pytest

from drivers.serial import dynamixel as dxl
from drivers.serial import feetech as ft


def _statuses(proto, rng, count):
    w = proto.PacketWriter()
    packets = []
    for k in range(count):
        data = rng.integers(0, 256, int(rng.integers(0, 12)), dtype=np.uint8).tobytes()
        if k % 5 == 0:
            data = b"\xff\xff\xfd" + data             # needs stuffing (Dynamixel)
        packets.append((1 + k % 6, k % 3, data, bytes(w.status(1 + k % 6, k % 3, data))))
    return packets


@pytest.mark.parametrize("proto", [dxl, ft], ids=["dynamixel", "feetech"])
def test_damaged_stream_recovers_every_intact_packet(proto):
    rng = np.random.default_rng(7)
    packets = _statuses(proto, rng, 300)
    got = []
    parser = proto.PacketParser(lambda i, e, buf, a, b: got.append((i, e, bytes(buf[a:b]))), status=True)
    stream, intact, damaged = bytearray(), [], 0
    for k, (i, e, data, pkt) in enumerate(packets):
        kind = k % 6
        if kind == 1:                                   # CRC / checksum error
            bad = bytearray(pkt)
            bad[-1] ^= 0x5A
            stream += bad
            damaged += 1
        elif kind == 3:                                 # truncated, the next packet follows
            stream += pkt[:max(5, len(pkt) // 2)]
            damaged += 1
        elif kind == 5:                                 # noise before it, kept intact
            stream += rng.integers(0, 256, 7, dtype=np.uint8).tobytes().replace(b"\xff", b"\x11")
            stream += pkt
            intact.append((i, e, data))
        else:
            stream += pkt
            intact.append((i, e, data))
    cuts = np.sort(rng.integers(0, len(stream), 80))
    for chunk in np.split(np.frombuffer(bytes(stream), np.uint8), cuts):
        parser.feed(chunk.tobytes())
    s = parser.stats
    if proto is dxl:
        assert got == intact
    else:   # an 8-bit checksum and a 2-byte header: a damaged packet can hide a few (the driver checks ID and length)
        assert len([p for p in intact if p not in got]) <= len(intact) // 50
        assert len([p for p in got if p not in intact]) <= len(intact) // 50
    assert s.packets_ok == len(got)
    assert s.crc_errors + s.header_errors >= damaged // 2 and s.crc_errors > 0
    assert s.bytes_received == len(stream)
    assert s.bytes_dropped + parser.buffered + sum(len(p[3]) for p in packets if (p[0], p[1], p[2]) in intact) \
        >= len(stream) - 20


def test_dynamixel_device_side_skips_status_and_host_side_skips_echo():
    w = dxl.PacketWriter()
    instructions, statuses = [], []
    device = dxl.PacketParser(lambda *a: instructions.append(a[:2]), status=False)
    host = dxl.PacketParser(lambda *a: statuses.append(a[:2]), status=True)
    stream = bytes(w.read(1, 132, 4)) + bytes(w.status(1, 0, b"\x00\x08\x00\x00")) + bytes(w.ping(2))
    device.feed(stream)
    host.feed(stream)
    assert instructions == [(1, dxl.Instruction.READ), (2, dxl.Instruction.PING)]
    assert statuses == [(1, 0)]
    assert device.stats.skipped == 1 and host.stats.skipped == 2


def test_full_buffer_of_noise_never_stalls():
    got = []
    parser = dxl.PacketParser(lambda *a: got.append(a[0]), status=True, buffer_size=1100)
    parser.feed(b"\xff\xff\xfd\x00\x01\xf0\x03" + b"\x00" * 3000)   # a header claiming 1008 bytes, never sealed
    parser.feed(bytes(dxl.PacketWriter().status(4, 0, b"\x01")))
    assert got == [4]
    assert parser.stats.crc_errors >= 1


def _block_consumer(ids, width):
    """The driver's receiving side of a SYNC READ of `width` bytes from `ids`: rows, error bytes,
    received flags and the count of answers still missing, filled by on_packet (the scanner) or
    by the parser's compiled block pass (slot table, rows, errors, received, on_taken)."""
    slot = np.full(256, -1, np.intp)
    slot[ids] = np.arange(len(ids))
    c = {"rows": np.zeros((len(ids), width), np.uint8), "errors": np.zeros(len(ids), np.uint8),
         "received": np.zeros(len(ids), bool), "missing": [len(ids)], "other": []}

    def on_packet(servo_id, error, buf, start, stop):
        k = slot[servo_id]
        if k < 0 or stop - start != width:
            c["other"].append((servo_id, error, bytes(buf[start:stop])))
            return
        c["rows"][k] = np.frombuffer(bytes(buf[start:stop]), np.uint8)
        c["errors"][k] = error
        if not c["received"][k]:
            c["received"][k] = True
            c["missing"][0] -= 1

    def on_taken(new):
        c["missing"][0] -= new
    c["block"] = (slot, c["rows"], c["errors"], c["received"].view(np.uint8), on_taken)
    return c, on_packet


@pytest.mark.parametrize("seed", range(6))
def test_dynamixel_block_pass_equals_the_scanner(seed):
    """The compiled SYNC READ pass (PacketParser.taker) leaves rows, error bytes, received flags,
    the missing count, the other packets and every counter exactly as the scanner alone does, on
    streams of answers mixed with stuffed data, other lengths, unknown IDs, CRC errors, truncation,
    noise and the host's echo, fed in random chunks."""
    rng = np.random.default_rng(seed)
    ids, width = [3, 1, 7, 2, 9, 4], 10
    w = dxl.PacketWriter()
    stream = bytearray()
    for k in range(400):
        kind = rng.integers(0, 12)
        i = int(rng.choice(ids))
        data = rng.integers(0, 256, width, dtype=np.uint8).tobytes()
        if kind == 0:
            data = data[:4] + b"\xff\xff\xfd" + data[7:]          # stuffed on the wire
        elif kind == 1:
            data = data[:int(rng.integers(0, width))]              # another length
        elif kind == 2:
            i = int(rng.choice([5, 200, 0]))                       # nobody asked this ID
        pkt = bytearray(w.status(i, int(rng.choice([0, 0, 0x80, 7])), data))
        if kind == 3:
            pkt[-2] ^= 0x11                                        # CRC error
        elif kind == 4:
            pkt = pkt[:int(rng.integers(1, len(pkt)))]             # truncated
        elif kind == 5:
            stream += rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8).tobytes()
        elif kind == 6:
            stream += w.sync_read(126, width, ids)                 # the host's own echo
        stream += pkt
    cuts = np.sort(rng.integers(0, len(stream), 60))
    chunks = [c.tobytes() for c in np.split(np.frombuffer(bytes(stream), np.uint8), cuts)]
    results = []
    for use_block in (False, True):
        c, on_packet = _block_consumer(ids, width)
        parser = dxl.PacketParser(on_packet, status=True)
        if use_block:
            parser.taker = parser.make_taker(*c["block"])
        for chunk in chunks:
            parser.feed(chunk)
        results.append((c, parser.stats))
    (a, sa), (b, sb) = results
    assert sa == sb and sb.packets_ok > 200
    assert (a["rows"] == b["rows"]).all() and (a["errors"] == b["errors"]).all()
    assert (a["received"] == b["received"]).all() and a["missing"] == b["missing"]
    assert a["other"] == b["other"] and len(a["other"]) > 20


def test_dynamixel_block_pass_takes_a_whole_answer_in_one_call():
    """Six well-formed answers in one read are taken by one compiled pass: on_packet never runs."""
    ids, width = [1, 2, 3, 4, 5, 6], 10
    c, _ = _block_consumer(ids, width)
    calls = []
    parser = dxl.PacketParser(lambda *a: calls.append(a), status=True)
    parser.taker = parser.make_taker(*c["block"])
    w = dxl.PacketWriter()
    burst = b"".join(bytes(w.status(i, 0, bytes(range(i, i + width)))) for i in ids)
    assert parser.feed(burst) == 6 and not calls and c["missing"] == [0]
    assert c["rows"][5].tolist() == list(range(6, 6 + width)) and parser.buffered == 0


@pytest.mark.parametrize("proto", [dxl, ft], ids=["dynamixel", "feetech"])
def test_read_from_a_descriptor_equals_feeding_the_bytes(proto):
    """ReceiveBuffer.read_from (read(2) straight into the buffer, compacting when its end is used up,
    dropping a byte when it is full of no packet) hands on the same packets and counts the same
    bytes as feed() of what was read, chunk by chunk: noise, stuffed data, packets split anywhere,
    through a pipe into a small buffer that fills up many times."""
    rng = np.random.default_rng(11)
    stream = bytearray()
    for i, e, data, pkt in _statuses(proto, rng, 400):
        stream += pkt
        if rng.integers(0, 4) == 0:
            stream += rng.integers(0, 256, int(rng.integers(1, 40)), dtype=np.uint8).tobytes()
    stream += b"\xff" * 1500                              # a run of header bytes longer than the buffer
    stream += bytes(proto.PacketWriter().status(3, 0, b"\x01\x02"))
    got = {"feed": [], "read_from": []}
    parsers = {k: proto.PacketParser(lambda i, e, buf, a, b, k=k: got[k].append((i, e, bytes(buf[a:b]))),
                                     status=True, buffer_size=1100) for k in got}
    r, w = os.pipe()
    os.set_blocking(r, False)
    try:
        p = 0
        while p < len(stream):
            n = int(rng.integers(1, 700))
            os.write(w, stream[p:p + n])
            parsers["feed"].feed(stream[p:p + n])
            p += n
            while (count := parsers["read_from"].read_from(r)) > 0:
                pass
            assert count == -1                            # a drained pipe: EAGAIN, not end of file
    finally:
        os.close(r)
        os.close(w)
    assert got["read_from"] == got["feed"] and len(got["feed"]) > 390
    assert got["feed"][-1] == (3, 0, b"\x01\x02")
    assert parsers["read_from"].stats == parsers["feed"].stats
