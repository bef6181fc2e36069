"""`hil export LOG --mcap OUT.mcap`: an LCM run log as MCAP, which Foxglove Studio and PlotJuggler open.

Each LCM channel becomes an MCAP channel (topic = the LCM channel name) with message encoding "json"
and a schema of encoding "jsonschema" made from the LCM type (its fields, their types and array
dimensions; nested LCM types become nested objects), named after the type (e.g. drake.lcmt_iiwa_status).
Each event becomes one message: the decoded LCM message as a JSON object, log and publish time the
log's timestamp (µs → ns). Non-finite numbers are written as null (JSON has no NaN). The `mcap`
package writes the file (its Writer: chunked, indexed, with a summary section).
"""
from __future__ import annotations

import importlib
import json
import math
from pathlib import Path

from drivers.core.schema import LogError
from messages import errors
from messages.logs import read_events
from messages.registry import type_for_fingerprint
from messages.validation import decode_message

_JSON = {"int8_t": "integer", "int16_t": "integer", "int32_t": "integer", "int64_t": "integer",
         "byte": "integer", "float": "number", "double": "number", "boolean": "boolean", "string": "string"}


def type_name(message_type) -> str:
    """'drake.lcmt_iiwa_status' for messages.drake.lcmt_iiwa_status.lcmt_iiwa_status."""
    package = message_type.__module__.split(".")
    return f"{package[-2]}.{message_type.__name__}" if len(package) >= 2 else message_type.__name__


def json_schema(message_type) -> dict:
    """The JSON schema (draft 2020-12) of an LCM type's messages as `to_json` writes them."""
    props = {}
    for name, tname, dims in zip(message_type.__slots__, message_type.__typenames__, message_type.__dimensions__):
        if tname in _JSON:
            item = {"type": _JSON[tname]} if _JSON[tname] != "number" else {"type": ["number", "null"]}
        else:
            item = _nested(tname)
        for _ in dims or ():
            item = {"type": "array", "items": item}
        props[name] = item
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": type_name(message_type),
            "type": "object", "properties": props, "required": list(message_type.__slots__)}


def _nested(tname: str) -> dict:
    """The schema of a nested LCM type named by its module path (lcm-gen: 'messages.drake.lcmt_point')."""
    module, _, cls = tname.rpartition(".")
    schema = json_schema(getattr(importlib.import_module(f"{module}.{cls}"), cls))
    schema.pop("$schema")
    return schema


def to_json(value):
    """A decoded LCM message (or field value) as JSON-ready data."""
    if hasattr(value, "__slots__") and hasattr(value, "__typenames__"):
        return {name: to_json(getattr(value, name)) for name in value.__slots__}
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def export_mcap(log: str | Path, out: str | Path) -> dict:
    """Writes `log` to `out`; {channel: messages written} plus "skipped" {reason: count}. LogError
    when the log has no message of a known type."""
    from mcap.writer import Writer
    schemas, channels, counts, skipped = {}, {}, {}, {}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    try:
        with open(tmp, "wb") as f:
            writer = Writer(f)
            writer.start(profile="", library="hilstack")
            for seq, event in enumerate(read_events(str(log))):
                message_type = type_for_fingerprint(event.data)
                if message_type is None:
                    skipped["unknown type"] = skipped.get("unknown type", 0) + 1
                    continue
                try:
                    message = decode_message(message_type, event.data, event.channel, check_values=False)
                except errors.MessageError as e:
                    reason = type(e).__name__
                    skipped[reason] = skipped.get(reason, 0) + 1
                    continue
                name = type_name(message_type)
                if name not in schemas:
                    schemas[name] = writer.register_schema(name, "jsonschema",
                                                           json.dumps(json_schema(message_type)).encode())
                key = (event.channel, name)
                if key not in channels:
                    channels[key] = writer.register_channel(event.channel, "json", schemas[name])
                t = int(event.timestamp) * 1000
                writer.add_message(channels[key], log_time=t, publish_time=t, sequence=seq,
                                   data=json.dumps(to_json(message), separators=(",", ":")).encode())
                counts[event.channel] = counts.get(event.channel, 0) + 1
            writer.finish()
        if not counts:
            raise LogError(f"{log}: no message of a known LCM type to export"
                           + (f" (skipped: {skipped})" if skipped else " (the log is empty)"))
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return {**counts, "skipped": skipped}
