"""`hil export LOG --mcap`: every event of a real run log (status, command, telemetry, safety events,
run info, contact results) read back with the mcap package's reader, against lcm-gen's own decode."""
from __future__ import annotations

import json
from pathlib import Path

import lcm
import pytest

from hil.cli import main
from messages.registry import type_for_fingerprint

mcap_reader = pytest.importorskip("mcap.reader")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run_log(tmp_path_factory):
    from hil.regress import run_scenario
    logs = tmp_path_factory.mktemp("logs")
    r = run_scenario(REPO / "configs/scenarios/ground_contact.yaml", logs=str(logs))
    assert r["error"] is None and r["passed"], r.get("traceback")
    return Path(r["log"])


def plain(value):
    """An lcm-gen message as plain data (independent of hil.mcap_export.to_json)."""
    if hasattr(value, "__slots__"):
        return {k: plain(getattr(value, k)) for k in value.__slots__}
    if isinstance(value, bytes):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def test_every_message_reads_back(run_log, tmp_path, capsys):
    out = tmp_path / "run.mcap"
    assert main(["export", str(run_log), "--mcap", str(out), "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)["messages"]
    events = list(lcm.EventLog(str(run_log), "r"))
    with open(out, "rb") as f:
        reader = mcap_reader.make_reader(f)
        messages = list(reader.iter_messages(log_time_order=False))
        summary = reader.get_summary()
    assert len(messages) == len(events) and summary.statistics.message_count == len(events)
    assert {"IIWA_STATUS", "IIWA_COMMAND", "HIL_TELEMETRY", "HIL_SAFETY", "HIL_RUN_INFO",
            "CONTACT_RESULTS"} <= set(counts)
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (pip install jsonschema)")
    validators = {}                                      # schema id -> the validator its "$schema" names
    for event, (schema, channel, message) in zip(events, messages):
        if schema.id not in validators:
            document = json.loads(schema.data)
            validators[schema.id] = jsonschema.validators.validator_for(document)(document)
        validators[schema.id].validate(json.loads(message.data))   # what Foxglove and PlotJuggler rely on
        t = type_for_fingerprint(event.data)
        assert channel.topic == event.channel and channel.message_encoding == "json"
        assert schema.encoding == "jsonschema" and schema.name.endswith(t.__name__)
        assert message.log_time == event.timestamp * 1000 == message.publish_time
        assert json.loads(message.data) == plain(t.decode(event.data))
        props = json.loads(schema.data)["properties"]
        assert list(props) == list(t.__slots__)
    contact = [json.loads(m.data) for s, c, m in messages if c.topic == "CONTACT_RESULTS"]
    assert any(c["num_point_pair_contacts"] > 0 for c in contact)
    pair = next(c for c in contact if c["num_point_pair_contacts"])["point_pair_contact_info"][0]
    schema = next(json.loads(s.data) for s, c, m in messages if c.topic == "CONTACT_RESULTS")
    item = schema["properties"]["point_pair_contact_info"]["items"]
    assert item["type"] == "object" and set(item["properties"]) == set(pair)
    assert schema["properties"]["point_pair_contact_info"]["items"]["properties"]["contact_force"] == \
        {"type": "array", "items": {"type": ["number", "null"]}}


def test_bad_logs_exit_2(tmp_path, capsys):
    junk = tmp_path / "junk.lcmlog"
    junk.write_bytes(b"not a log at all")
    assert main(["export", str(junk), "--mcap", str(tmp_path / "a.mcap")]) == 2
    assert "not an LCM log" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "missing.lcmlog"), "--mcap", str(tmp_path / "a.mcap")]) == 2
    assert "no such log file" in capsys.readouterr().err
    unknown = tmp_path / "unknown.lcmlog"
    log = lcm.EventLog(str(unknown), "w", overwrite=True)
    log.write_event(1000, "SOMETHING", b"\x01" * 16)
    log.close()
    assert main(["export", str(unknown), "--mcap", str(tmp_path / "u.mcap")]) == 2
    assert "no message of a known LCM type" in capsys.readouterr().err
    assert not (tmp_path / "u.mcap").exists() and not (tmp_path / "a.mcap").exists()


def test_corrupt_events_are_skipped_and_counted(run_log, tmp_path, capsys):
    events = list(lcm.EventLog(str(run_log), "r"))[:20]
    mixed = tmp_path / "mixed.lcmlog"
    log = lcm.EventLog(str(mixed), "w", overwrite=True)
    for e in events:
        log.write_event(e.timestamp, e.channel, e.data)
    log.write_event(events[-1].timestamp + 1, "IIWA_STATUS", events[-1].data[:12])    # truncated
    log.close()
    assert main(["export", str(mixed), "--mcap", str(tmp_path / "m.mcap"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["messages"]
    assert result["skipped"] == {"TruncatedError": 1}
    assert sum(v for k, v in result.items() if k != "skipped") == 20
