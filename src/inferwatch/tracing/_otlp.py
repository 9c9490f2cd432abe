"""Decoding OTLP/HTTP trace bodies (protobuf and JSON) into ``SpanRecord``; ``OtlpError`` when malformed.

Protobuf needs ``opentelemetry-proto`` (the ``tracing`` extra); JSON is read by
hand following the OTLP JSON mapping (hex ids, enum integers, 64-bit integers
as strings or numbers), so a server without the extra still takes JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.tracing._store import SpanEvent, SpanRecord

__all__ = ["OtlpError", "decode_json", "decode_protobuf", "json_list", "json_object"]

_HEX = frozenset("0123456789abcdef")


class OtlpError(InputError):
    """The body is not a valid OTLP trace export request (answered 400)."""


def decode_protobuf(body: bytes) -> list[SpanRecord]:
    """The spans of a protobuf ``ExportTraceServiceRequest``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(body)
    except Exception as exc:  # protobuf's DecodeError (and its C variant), translated at the boundary
        raise OtlpError(f"not an OTLP protobuf ExportTraceServiceRequest: {exc}") from None
    out = []
    for rs in req.resource_spans:
        service = _service({a.key: _pb_value(a.value) for a in rs.resource.attributes})
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append(_record(
                    s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), service, s.name, s.kind,
                    s.start_time_unix_nano, s.end_time_unix_nano, s.status.code,
                    {a.key: _pb_value(a.value) for a in s.attributes},
                    tuple(SpanEvent(e.name, e.time_unix_nano,
                                    {a.key: _pb_value(a.value) for a in e.attributes}) for e in s.events),
                ))
    return out


def decode_json(doc: Any) -> list[SpanRecord]:
    """The spans of a JSON ``ExportTraceServiceRequest`` (already parsed)."""
    try:
        return [span for rs in json_list(json_object(doc), "resourceSpans")
                for span in _resource_spans(json_object(rs))]
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise OtlpError(f"not an OTLP JSON ExportTraceServiceRequest: {exc}") from None


def _resource_spans(rs: Mapping[str, Any]) -> list[SpanRecord]:
    resource = json_object(rs.get("resource", {}))
    service = _service(_json_attributes(resource))
    out = []
    for ss in json_list(rs, "scopeSpans"):
        for s in json_list(json_object(ss), "spans"):
            s = json_object(s)
            out.append(_record(
                str(s["traceId"]).lower(), str(s["spanId"]).lower(), str(s.get("parentSpanId", "")).lower(),
                service, str(s.get("name", "")), int(s.get("kind", 0)), int(s["startTimeUnixNano"]),
                int(s["endTimeUnixNano"]), int(json_object(s.get("status", {})).get("code", 0)),
                _json_attributes(s),
                tuple(SpanEvent(str(e.get("name", "")), int(e.get("timeUnixNano", 0)), _json_attributes(e))
                      for e in map(json_object, json_list(s, "events"))),
            ))
    return out


def _record(trace_id: str, span_id: str, parent: str, service: str, name: str, kind: int, start: int,
            end: int, status: int, attributes: dict[str, Any],
            events: tuple[SpanEvent, ...] = ()) -> SpanRecord:
    if not _is_hex(trace_id, 32) or trace_id == "0" * 32:
        raise OtlpError(f"span {name!r}: trace id must be 32 hex digits, not all zero; got {trace_id!r}")
    if not _is_hex(span_id, 16) or (parent and not _is_hex(parent, 16)):
        raise OtlpError(f"span {name!r}: span ids must be 16 hex digits; got {span_id!r}, {parent!r}")
    if not 0 <= start <= end < 2**63:
        raise OtlpError(f"span {name!r}: times must satisfy 0 <= start <= end; got {start}, {end}")
    return SpanRecord(trace_id, span_id, parent, service, name, kind, start, end, status, attributes, events)


def _is_hex(s: str, n: int) -> bool:
    return len(s) == n and set(s) <= _HEX


def _service(resource: Mapping[str, Any]) -> str:
    return str(resource.get("service.name", "") or "unknown_service")


def _pb_value(v: Any) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":  # gen_ai.response.finish_reasons: a list of its scalars
        return [_pb_value(x) for x in v.array_value.values]
    if which in (None, "kvlist_value", "bytes_value"):
        return None if which is None else str(getattr(v, which))
    return getattr(v, which)


def _json_attributes(obj: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in json_list(obj, "attributes"):
        a = json_object(a)
        out[str(a["key"])] = _json_value(json_object(a.get("value", {})))
    return out


def _json_value(value: Mapping[str, Any]) -> Any:
    """One ``AnyValue`` as sent (``intValue`` stays a string in JSON); an array as the list of its values."""
    if "arrayValue" in value:
        return [_json_value(json_object(x)) for x in json_list(json_object(value["arrayValue"]), "values")]
    return next(iter(value.values()), None) if value else None


def json_object(x: Any) -> Mapping[str, Any]:
    """``x`` as a JSON object, or ``TypeError`` naming what it was (OTLP/JSON decoding)."""
    if not isinstance(x, Mapping):
        raise TypeError(f"expected an object, got {type(x).__name__}")
    return x


def json_list(obj: Mapping[str, Any], key: str) -> list[Any]:
    """``obj[key]`` as a list (absent: empty), or ``TypeError`` naming the key."""
    value = obj.get(key, [])
    if not isinstance(value, list):
        raise TypeError(f"{key!r} must be a list, got {type(value).__name__}")
    return value
