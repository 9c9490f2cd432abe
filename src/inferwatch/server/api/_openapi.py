"""The server's OpenAPI 3.0 document, served at ``/api/openapi.json`` (the fuzzer reads it too).

Written by hand, one entry per route, so it says what the handlers accept
(Prometheus's and Alertmanager's shapes) rather than what a framework infers.
Modules that add routes add their paths with :func:`openapi_document`'s
``extra_paths``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["OPENAPI_PATH", "PATHS", "openapi_document"]

OPENAPI_PATH = "/api/openapi.json"

_ERROR = {"type": "object", "properties": {
    "status": {"type": "string", "enum": ["error"]}, "errorType": {"type": "string"},
    "error": {"type": "string"}}}
_SUCCESS = {"type": "object", "properties": {
    "status": {"type": "string", "enum": ["success"]}, "data": {}}}
_TIME = {"type": "string", "description": "Unix seconds (float)", "example": "1700000000"}
_BEARER: list[dict[str, list[str]]] = [{"bearer": []}]


def _q(name: str, schema: Mapping[str, Any], required: bool = False, description: str = "") -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "schema": dict(schema),
            "description": description}


def _answers(*codes: int, text: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for code in codes:
        media = "text/plain" if text and code < 400 else "application/json"
        schema = {"type": "string"} if media == "text/plain" else (_SUCCESS if code < 400 else _ERROR)
        out[str(code)] = {"description": str(code), "content": {media: {"schema": schema}}}
    return out


def _get(summary: str, params: list[dict[str, Any]] | None = None, *codes: int) -> dict[str, Any]:
    return {"summary": summary, "parameters": params or [], "responses": _answers(*(codes or (200, 400)))}


_QUERY = [_q("query", {"type": "string"}, True, "PromQL"), _q("time", _TIME)]
_RANGE = [_q("query", {"type": "string"}, True, "PromQL"), _q("start", _TIME, True), _q("end", _TIME, True),
          _q("step", {"type": "string", "example": "15s"}, True, "seconds or a duration")]
_MATCHER = {"type": "object", "required": ["name", "value"], "properties": {
    "name": {"type": "string"}, "value": {"type": "string"}, "isRegex": {"type": "boolean"},
    "isEqual": {"type": "boolean"}}}
_SILENCE = {"type": "object", "required": ["matchers", "startsAt", "endsAt"], "properties": {
    "id": {"type": "string"}, "matchers": {"type": "array", "items": _MATCHER},
    "startsAt": {"type": "string", "format": "date-time"},
    "endsAt": {"type": "string", "format": "date-time"}, "createdBy": {"type": "string"},
    "comment": {"type": "string"}}}
_ACK = {"type": "object", "properties": {
    "group_id": {"type": "string"}, "matchers": {"type": "array", "items": {"type": "string"}},
    "by": {"type": "string"}, "comment": {"type": "string"}, "expires": {"type": "string"}}}
_LINK = [_q(name, {"type": "string"}) for name in ("group", "episode", "expires", "sig")]
_WEBHOOK_ALERT = {"type": "object", "properties": {
    "status": {"type": "string", "enum": ["firing", "resolved"]},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    "startsAt": {"type": "string", "format": "date-time"},
    "endsAt": {"type": "string", "format": "date-time"}, "fingerprint": {"type": "string"}}}
_WEBHOOK = {"type": "object", "required": ["alerts"], "properties": {
    "version": {"type": "string"}, "status": {"type": "string"}, "receiver": {"type": "string"},
    "alerts": {"type": "array", "items": _WEBHOOK_ALERT}}}
_ATTRS = {"type": "array", "items": {"type": "object", "required": ["key"], "properties": {
    "key": {"type": "string"}, "value": {"type": "object", "properties": {
        "stringValue": {"type": "string"}, "intValue": {"type": "string"}, "doubleValue": {"type": "number"},
        "boolValue": {"type": "boolean"}}}}}}
_OTLP_POINT = {"type": "object", "properties": {
    "attributes": _ATTRS, "startTimeUnixNano": {"type": "string"}, "timeUnixNano": {"type": "string"},
    "asDouble": {"type": "number"}, "asInt": {"type": "string"}, "count": {"type": "string"},
    "sum": {"type": "number"}, "explicitBounds": {"type": "array", "items": {"type": "number"}},
    "bucketCounts": {"type": "array", "items": {"type": "string"}}, "flags": {"type": "integer"}}}
_OTLP_DATA = {"type": "object", "properties": {
    "dataPoints": {"type": "array", "items": _OTLP_POINT}, "aggregationTemporality": {"type": "integer"},
    "isMonotonic": {"type": "boolean"}}}
_OTLP_METRICS = {"type": "object", "properties": {"resourceMetrics": {"type": "array", "items": {
    "type": "object", "properties": {
        "resource": {"type": "object", "properties": {"attributes": _ATTRS}},
        "scopeMetrics": {"type": "array", "items": {"type": "object", "properties": {"metrics": {
            "type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "unit": {"type": "string"},
                "gauge": _OTLP_DATA, "sum": _OTLP_DATA,
                "histogram": _OTLP_DATA, "summary": _OTLP_DATA, "exponentialHistogram": _OTLP_DATA}}}}}}}}}}}


_BOOL = {"type": "boolean", "default": True}
_FILTER = _q("filter", {"type": "array", "items": {"type": "string"}}, False,
             'a matcher, e.g. alertname="Up"')
_ALERT_QUERY = [_q("active", _BOOL), _q("silenced", _BOOL), _q("inhibited", _BOOL), _FILTER,
                _q("receiver", {"type": "string"}, False, "a regex matching receivers")]
_LABELSET = {"type": "object", "additionalProperties": {"type": "string"}}
_POSTABLE_ALERTS = {"type": "array", "items": {"type": "object", "required": ["labels"], "properties": {
    "labels": _LABELSET, "annotations": _LABELSET, "startsAt": {"type": "string", "format": "date-time"},
    "endsAt": {"type": "string", "format": "date-time"}, "generatorURL": {"type": "string"}}}}
_OUTCOMES = {"type": "object", "required": ["outcomes"], "properties": {"outcomes": {
    "type": "array", "items": {"type": "object", "required": ["request_id", "label"], "properties": {
        "request_id": {"type": "string", "minLength": 1}, "model": {"type": "string"},
        "label": {"oneOf": [{"type": "integer"}, {"type": "number"}, {"type": "string"},
                            {"type": "boolean"}]},
        "time": {"type": "number", "description": "Unix seconds: when the label was known"}},
        "additionalProperties": False}}}}
_OUTCOME_PAGE = [_q("after", {"type": "integer", "minimum": 0}, False, "the cursor: outcomes after it"),
                 _q("limit", {"type": "integer", "minimum": 1}, False, "most outcomes (1000)"),
                 _q("model", {"type": "string"}, False, "only this model's (and those without one)")]
_SILENCE_ID = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]


def _post(summary: str, schema: Mapping[str, Any], *codes: int) -> dict[str, Any]:
    return {"summary": summary, "security": _BEARER,
            "requestBody": {"required": True, "content": {"application/json": {"schema": dict(schema)}}},
            "responses": _answers(*codes)}


def _otlp_post() -> dict[str, Any]:
    op = _post("OTLP/HTTP metrics (ExportMetricsServiceRequest, JSON or protobuf, optionally gzip)",
               _OTLP_METRICS, 200, 400, 401, 413, 415, 503)
    binary = {"schema": {"type": "string", "format": "binary"}}
    op["requestBody"]["content"]["application/x-protobuf"] = binary
    op["responses"]["200"]["content"] = {"application/json": {"schema": {"type": "object", "properties": {
        "partialSuccess": {"type": "object", "properties": {"rejectedDataPoints": {"type": "string"},
                                                             "errorMessage": {"type": "string"}}}}}}}
    return op


PATHS: dict[str, dict[str, Any]] = {
    "/-/healthy": {"get": {"summary": "liveness", "responses": _answers(200, text=True)}},
    "/-/ready": {"get": {"summary": "readiness", "responses": _answers(200, 503, text=True)}},
    "/-/reload": {"post": {"summary": "reload the config", "security": _BEARER,
                           "responses": _answers(200, 400, 401)}},
    "/metrics": {"get": {"summary": "the server's own metrics", "responses": _answers(200, text=True)}},
    "/api/v1/query": {"get": _get("instant query", _QUERY, 200, 400, 422, 503)},
    "/api/v1/query_range": {"get": _get("range query", _RANGE, 200, 400, 422, 503)},
    "/api/v1/query_exemplars": {"get": _get("exemplars of the series a query selects", [
        _q("query", {"type": "string"}, True, "a PromQL expression"), _q("start", _TIME), _q("end", _TIME)],
        200, 400)},
    "/api/v1/series": {"get": _get("series matching selectors", [
        _q("match[]", {"type": "string"}, True, "a series selector")], 200, 400, 503)},
    "/api/v1/label/{name}/values": {"get": {**_get("values of a label", None, 200, 400), "parameters": [
        {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]}},
    "/api/v1/targets": {"get": _get("scrape targets and their health", None, 200)},
    "/api/v1/rules": {"get": _get("alert rules and their alerts", None, 200)},
    "/api/v1/slos": {"get": _get("SLOs: objective, SLI, budget left, burn rate per window, alerts",
                                 [_q("time", _TIME)], 200, 400)},
    "/api/v1/generations/worst": {"get": _get("the lowest-scored recent generations (score exemplars)", [
        _q("score", {"type": "string"}), _q("since", {"type": "string"}, False, "a duration or Unix time"),
        _q("limit", {"type": "integer", "minimum": 1, "maximum": 1000}), _q("route", {"type": "string"}),
        _q("service", {"type": "string"}), _q("model", {"type": "string"})], 200, 400)},
    "/api/v1/alerts": {"get": _get("active alerts", None, 200)},
    "/api/v1/notifications": {"get": _get("recent notifications", None, 200)},
    # on call: acknowledgements (token), the one-click link (its signature is the credential), reads
    "/api/v1/alerts/ack": {"post": _post("acknowledge groups (stops their escalation)", _ACK, 200, 400, 401)},
    "/api/v1/alerts/unack": {"post": _post("end acknowledgements", _ACK, 200, 400, 401)},
    "/api/v1/alerts/ack/link": {"get": _get("the incident page a signed link opens (changes nothing)",
                                            _LINK, 200, 403)},
    "/api/v1/alerts/oncall-groups": {"get": _get("groups with acknowledgement and escalation", None, 200)},
    "/api/v1/alerts/history": {"get": _get("the alert history", [
        _q("match[]", {"type": "string"}), _q("kind", {"type": "string"}), _q("group", {"type": "string"}),
        _q("limit", {"type": "integer"}), _q("start", _TIME), _q("end", _TIME)], 200, 400)},
    "/api/v1/alerts/stats": {"get": _get("MTTA and MTTR", [_q("start", _TIME), _q("end", _TIME)], 200, 400)},
    "/api/v1/oncall": {"get": _get("who is on call", [_q("time", _TIME)], 200, 400)},
    "/api/v1/actions": {"get": _get("action outcomes", None, 200)},
    "/api/v1/audit": {"get": {**_get("writes and who made them (admin)", None, 200, 401, 403),
                              "security": _BEARER}},
    "/api/v1/alertmanager": {"post": _post("an Alertmanager webhook (version 4)", _WEBHOOK,
                                           200, 400, 401, 413)},
    "/api/v2/silences": {"get": _get("silences", [_FILTER], 200, 400),
                         "post": _post("create or update a silence", _SILENCE, 200, 400, 401, 404, 413)},
    "/api/v2/silence/{id}": {"get": {**_get("one silence", None, 200, 404), "parameters": _SILENCE_ID},
                             "delete": {"summary": "expire a silence", "security": _BEARER,
                                        "parameters": _SILENCE_ID,
                                        "responses": _answers(200, 400, 401, 404)}},
    # Alertmanager 0.25's API v2 (amtool, Grafana's Alertmanager data source)
    "/api/v2/status": {"get": _get("Alertmanager status", None, 200)},
    "/api/v2/receivers": {"get": _get("receivers", None, 200)},
    "/api/v2/alerts": {"get": _get("alerts", [*_ALERT_QUERY, _q("unprocessed", _BOOL)], 200, 400),
                       "post": _post("alerts in, as Alertmanager takes them", _POSTABLE_ALERTS,
                                     200, 400, 401, 413)},
    "/api/v2/alerts/groups": {"get": _get("alert groups", _ALERT_QUERY, 200, 400)},
    "/api/v1/write": {"post": {  # the body is binary: no JSON schema to fuzz with
        "summary": "Prometheus remote-write 1.0 (snappy-compressed protobuf WriteRequest)",
        "security": _BEARER,
        "responses": {"204": {"description": "stored"}, **_answers(400, 401, 413, 503)}}},
    "/api/v1/edge/ingest": {"post": {  # a gzip'd JSON batch from the edge agent: binary to a fuzzer
        "summary": "an edge agent's upload (format version 1 or 2, gzip)", "security": _BEARER,
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": {"type": "string", "format": "binary"}}}},
        "responses": _answers(200, 400, 401, 403, 409, 413, 503)}},
    "/api/v1/outcomes": {
        "post": _post("delayed labels (outcomes) in, optionally gzip", _OUTCOMES,
                      200, 400, 401, 413, 415, 503),
        "get": _get("outcomes after a cursor, for the SDK's label poller", _OUTCOME_PAGE, 200, 400, 503)},
    "/api/v1/edge/devices": {"get": _get("edge devices: last contact, backlog, drops", None, 200)},
    "/api/v1/edge/fleet": {"get": _get("the fleet: a row per device, sorted, filtered and paged", None, 200)},
    "/api/v1/edge/config": {"get": _get("an agent's configuration (ETag)", None, 200, 304, 401)},
    # the dead man's switch: a heartbeat in (any body, or Alertmanager's webhook carrying a Watchdog)
    "/api/v1/heartbeats/{name}": {"post": {
        **_post("a heartbeat from NAME (heartbeats: in the config)", _WEBHOOK, 200, 400, 401, 404, 413),
        "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]}},
    "/api/v1/heartbeats": {"get": _get("heartbeats expected: received, last received, missing", None, 200)},
    "/v1/metrics": {"post": _otlp_post()},
    "/api/v1/otlp/v1/metrics": {"post": _otlp_post()},
    "/v1/traces": {"post": {  # OTLP/HTTP traces: JSON or protobuf, optionally gzip; a write (token)
        "summary": "OTLP/HTTP traces (ExportTraceServiceRequest, JSON or protobuf, optionally gzip)",
        "security": _BEARER,
        "requestBody": {"required": True, "content": {
            "application/json": {"schema": {"type": "object"}},
            "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}}}},
        "responses": _answers(200, 400, 401, 413, 415)}},
    OPENAPI_PATH: {"get": {"summary": "this document", "responses": _answers(200)}},
}


def openapi_document(extra_paths: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The document: :data:`PATHS` plus ``extra_paths`` (routes other modules add).

    >>> doc = openapi_document()
    >>> doc["openapi"], "/api/v1/query" in doc["paths"]
    ('3.0.3', True)
    """
    from inferwatch import __version__

    return {
        "openapi": "3.0.3",
        "info": {"title": "inferwatch server", "version": __version__,
                 "description": "Prometheus-shaped query API, Alertmanager-shaped silences and webhook."},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "paths": {**PATHS, **(extra_paths or {})},
    }
