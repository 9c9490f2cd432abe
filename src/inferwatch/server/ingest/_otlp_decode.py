"""Decoding OTLP/HTTP metric bodies (protobuf and JSON) into plain records; ``OtlpError`` when malformed.

Both encodings land in the same small model (``ResourceMetrics`` → ``Metric``
→ ``Point``), so the translation to Prometheus series (``_otlp_translate``)
never sees protobuf. Protobuf needs ``opentelemetry-proto`` (the ``tracing``
extra); JSON follows the OTLP JSON mapping (lowerCamelCase keys, 64-bit
integers as strings or numbers, enums as integers) and needs nothing.

A body that is not an ``ExportMetricsServiceRequest`` at all (bad protobuf,
wrong JSON types) raises ``OtlpError`` (answered 400); what is wrong with one
data point only (a bucket count that does not add up, an exponential
histogram) is left to the translation, which rejects that point alone.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inferwatch.tracing import OtlpError, json_list, json_object

__all__ = ["MAX_POINTS", "Metric", "OtlpError", "Point", "ResourceMetrics", "TooManyPoints",
           "decode_metrics_json", "decode_metrics_protobuf"]

GAUGE, SUM, HISTOGRAM, EXP_HISTOGRAM, SUMMARY, EMPTY = (
    "gauge", "sum", "histogram", "exponential_histogram", "summary", "empty")
_FLAG_NO_RECORDED_VALUE = 1
_TEMPORALITY = {"AGGREGATION_TEMPORALITY_UNSPECIFIED": 0, "AGGREGATION_TEMPORALITY_DELTA": 1,
                "AGGREGATION_TEMPORALITY_CUMULATIVE": 2}
_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
# Data points in one request: bounds the translation's work and memory (a 32 MiB body of tiny
# points would otherwise be ~1.5 M of them). The Collector's batch processor sends 8,192.
MAX_POINTS = 200_000


class TooManyPoints(OtlpError):
    """More than ``MAX_POINTS`` data points in one request (answered 413)."""


def _check_count(count: int) -> None:
    if count > MAX_POINTS:
        raise TooManyPoints(f"{count} data points in one request, over the limit of {MAX_POINTS}: "
                            "export in smaller batches")


@dataclass(frozen=True, slots=True)
class Point:
    """One data point; the fields a kind does not use keep their defaults."""

    attributes: Mapping[str, str]
    start_ns: int
    time_ns: int
    stale: bool = False  # the NO_RECORDED_VALUE flag: written as a staleness marker
    value: float = 0.0  # gauge and sum
    count: int = 0  # histogram and summary
    sum: float | None = None
    bounds: tuple[float, ...] = ()
    buckets: tuple[int, ...] = ()
    quantiles: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Metric:
    """One OTLP metric: its kind (``gauge``, ``sum`` …), temporality, monotonicity and points."""

    name: str
    unit: str
    kind: str
    points: list[Point]
    temporality: int = 0  # 1 delta, 2 cumulative, 0 unspecified (gauges, summaries)
    monotonic: bool = False


@dataclass(frozen=True, slots=True)
class ResourceMetrics:
    """The metrics of one resource (a service instance), with its attributes as strings."""

    resource: Mapping[str, str]
    metrics: list[Metric] = field(default_factory=list)


def decode_metrics_protobuf(body: bytes) -> list[ResourceMetrics]:
    """The contents of a protobuf ``ExportMetricsServiceRequest``."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    req = ExportMetricsServiceRequest()
    try:
        req.ParseFromString(body)
    except Exception as exc:  # protobuf's DecodeError (and its C variant), translated at the boundary
        raise OtlpError(f"not an OTLP protobuf ExportMetricsServiceRequest: {exc}") from None
    _check_count(sum(len(getattr(m, kind).data_points) for rm in req.resource_metrics
                     for sm in rm.scope_metrics for m in sm.metrics if (kind := m.WhichOneof("data"))))
    return [ResourceMetrics(_pb_attributes(rm.resource.attributes),
                            [_pb_metric(m) for sm in rm.scope_metrics for m in sm.metrics])
            for rm in req.resource_metrics]


def _pb_metric(m: Any) -> Metric:
    kind = m.WhichOneof("data") or EMPTY
    if kind == GAUGE:
        return Metric(m.name, m.unit, kind, [_pb_number(p) for p in m.gauge.data_points])
    if kind == SUM:
        return Metric(m.name, m.unit, kind, [_pb_number(p) for p in m.sum.data_points],
                      m.sum.aggregation_temporality, m.sum.is_monotonic)
    if kind == HISTOGRAM:
        return Metric(m.name, m.unit, kind, [_pb_histogram(p) for p in m.histogram.data_points],
                      m.histogram.aggregation_temporality)
    if kind == SUMMARY:
        return Metric(m.name, m.unit, kind, [_pb_summary(p) for p in m.summary.data_points])
    if kind == EXP_HISTOGRAM:
        data = m.exponential_histogram
        return Metric(m.name, m.unit, kind, [_pb_base(p) for p in data.data_points],
                      data.aggregation_temporality)
    return Metric(m.name, m.unit, EMPTY, [])


def _pb_base(p: Any, **extra: Any) -> Point:
    return Point(_pb_attributes(p.attributes), p.start_time_unix_nano, p.time_unix_nano,
                 bool(p.flags & _FLAG_NO_RECORDED_VALUE), **extra)


def _pb_number(p: Any) -> Point:
    which = p.WhichOneof("value")
    return _pb_base(p, value=float(getattr(p, which)) if which else 0.0)


def _pb_histogram(p: Any) -> Point:
    return _pb_base(p, count=p.count, sum=p.sum if p.HasField("sum") else None,
                    bounds=tuple(p.explicit_bounds), buckets=tuple(p.bucket_counts))


def _pb_summary(p: Any) -> Point:
    return _pb_base(p, count=p.count, sum=p.sum,
                    quantiles=tuple((q.quantile, q.value) for q in p.quantile_values))


def _pb_attributes(attrs: Any) -> dict[str, str]:
    return {a.key: _pb_value(a.value) for a in attrs}


def _pb_value(v: Any) -> str:
    which = v.WhichOneof("value")
    if which is None:
        return ""
    if which in ("array_value", "kvlist_value"):
        return json.dumps(_pb_plain(v), separators=(",", ":"))
    return _text(getattr(v, which))


def _pb_plain(v: Any, depth: int = 0) -> Any:
    """An AnyValue as plain JSON (arrays and kvlists nested at most 16 deep)."""
    which = v.WhichOneof("value")
    if which == "array_value" and depth < 16:
        return [_pb_plain(x, depth + 1) for x in v.array_value.values]
    if which == "kvlist_value" and depth < 16:
        return {kv.key: _pb_plain(kv.value, depth + 1) for kv in v.kvlist_value.values}
    if which in (None, "array_value", "kvlist_value"):
        return None
    raw = getattr(v, which)
    return _text(raw) if isinstance(raw, bytes) else raw


def decode_metrics_json(doc: Any) -> list[ResourceMetrics]:
    """The contents of a JSON ``ExportMetricsServiceRequest`` (already parsed)."""
    try:
        out, points = [], 0
        for rm in json_list(json_object(doc), "resourceMetrics"):
            rm = json_object(rm)
            metrics = []
            for sm in json_list(rm, "scopeMetrics"):
                for m in json_list(json_object(sm), "metrics"):
                    metrics.append(_json_metric(json_object(m)))
                    points += len(metrics[-1].points)
                    _check_count(points)
            out.append(ResourceMetrics(_json_attributes(json_object(rm.get("resource", {}))), metrics))
        return out
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        raise OtlpError(f"not an OTLP JSON ExportMetricsServiceRequest: {exc}") from None


def _json_metric(m: Mapping[str, Any]) -> Metric:
    name, unit = _str(m.get("name", "")), _str(m.get("unit", ""))
    for kind, key, read in ((GAUGE, "gauge", _json_number), (SUM, "sum", _json_number),
                            (HISTOGRAM, "histogram", _json_histogram), (SUMMARY, "summary", _json_summary),
                            (EXP_HISTOGRAM, "exponentialHistogram", _json_base)):
        if key in m:
            data = json_object(m[key])
            points = [read(json_object(p)) for p in json_list(data, "dataPoints")]
            return Metric(name, unit, kind, points, _temporality(data.get("aggregationTemporality", 0)),
                          bool(data.get("isMonotonic", False)))
    return Metric(name, unit, EMPTY, [])


def _json_base(p: Mapping[str, Any], **extra: Any) -> Point:
    return Point(_json_attributes(p), _int(p.get("startTimeUnixNano", 0)), _int(p.get("timeUnixNano", 0)),
                 bool(_int(p.get("flags", 0)) & _FLAG_NO_RECORDED_VALUE), **extra)


def _json_number(p: Mapping[str, Any]) -> Point:
    if "asDouble" in p:
        return _json_base(p, value=_float(p["asDouble"]))
    return _json_base(p, value=float(_int(p.get("asInt", 0))))


def _json_histogram(p: Mapping[str, Any]) -> Point:
    return _json_base(p, count=_int(p.get("count", 0)), sum=_float(p["sum"]) if "sum" in p else None,
                      bounds=tuple(_float(b) for b in json_list(p, "explicitBounds")),
                      buckets=tuple(_int(c) for c in json_list(p, "bucketCounts")))


def _json_summary(p: Mapping[str, Any]) -> Point:
    quantiles = tuple((_float(json_object(q).get("quantile", 0)), _float(json_object(q).get("value", 0)))
                      for q in json_list(p, "quantileValues"))
    return _json_base(p, count=_int(p.get("count", 0)), sum=_float(p.get("sum", 0)), quantiles=quantiles)


def _json_attributes(obj: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for a in json_list(obj, "attributes"):
        a = json_object(a)
        value = json_object(a.get("value", {}))
        out[_str(a["key"])] = _json_value(value)
    return out


def _json_value(value: Mapping[str, Any]) -> str:
    if not value:
        return ""
    kind, raw = next(iter(value.items()))
    if kind == "intValue":
        return str(_int(raw))
    if kind == "doubleValue":
        return _text(_float(raw))
    if kind in ("arrayValue", "kvlistValue"):
        return json.dumps(_plain(raw), separators=(",", ":"))
    return _text(raw)


def _plain(x: Any) -> Any:
    """An AnyValue array or kvlist as plain JSON (``{"values": [{"stringValue": "a"}]}`` → ``["a"]``)."""
    if isinstance(x, Mapping):
        if "values" in x and isinstance(x["values"], list):
            if all(isinstance(v, Mapping) and "key" in v for v in x["values"]):
                return {str(v["key"]): _plain(v.get("value", {})) for v in x["values"]}
            return [_plain(v) for v in x["values"]]
        if len(x) == 1:
            kind, raw = next(iter(x.items()))
            return _int(raw) if kind == "intValue" else _plain(raw)
    return x


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, bytes):
        return base64.b64encode(v).decode()
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))  # Go's FormatFloat(v, 'f', -1): 3.0 is "3"
    return str(v)


def _temporality(raw: Any) -> int:
    if isinstance(raw, str) and raw in _TEMPORALITY:
        return _TEMPORALITY[raw]
    return _int(raw)


def _int(raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, (int, str, float)):
        raise TypeError(f"expected an integer, got {type(raw).__name__}")
    if isinstance(raw, float) and not raw.is_integer():
        raise ValueError(f"expected an integer, got {raw!r}")
    value = int(raw)
    if not -(2**63) <= value < 2**64:
        raise ValueError(f"integer out of the 64-bit range: {raw!r:.40}")
    return value


def _float(raw: Any) -> float:
    if isinstance(raw, str) and raw in _FLOATS:
        return _FLOATS[raw]
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise TypeError(f"expected a number, got {type(raw).__name__}")
    return float(raw)


def _str(raw: Any) -> str:
    if not isinstance(raw, str):
        raise TypeError(f"expected a string, got {type(raw).__name__}")
    return raw
