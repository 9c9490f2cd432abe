"""The server's HTTP APIs: Prometheus 2.42, Alertmanager v2, alerting, on-call, SLOs, OpenAPI."""

from inferwatch.server.api._alerting_api import alerting_routes, resolve_api_token, write_guard
from inferwatch.server.api._exemplar_api import selectors
from inferwatch.server.api._generation_log import GENERATIONS_FILE, GenerationLog, ScoredGeneration
from inferwatch.server.api._generations_api import generation_routes
from inferwatch.server.api._ha_api import ha_routes
from inferwatch.server.api._heartbeats_api import heartbeat_routes
from inferwatch.server.api._oncall_api import load_ack_key, oncall_routes
from inferwatch.server.api._openapi import OPENAPI_PATH, openapi_document
from inferwatch.server.api._otlp_traces import open_trace_store, trace_routes
from inferwatch.server.api._outcomes_api import OutcomesApi, outcome_routes
from inferwatch.server.api._probes_api import probe_routes
from inferwatch.server.api._prom_routes import prometheus_routes
from inferwatch.server.api._query_exec import QueryExecutor
from inferwatch.server.api._query_fork import query_executor
from inferwatch.server.api._slo_api import slo_routes

__all__ = [
    "GENERATIONS_FILE",
    "OPENAPI_PATH",
    "GenerationLog",
    "OutcomesApi",
    "QueryExecutor",
    "ScoredGeneration",
    "alerting_routes",
    "generation_routes",
    "ha_routes",
    "heartbeat_routes",
    "load_ack_key",
    "oncall_routes",
    "open_trace_store",
    "openapi_document",
    "outcome_routes",
    "probe_routes",
    "prometheus_routes",
    "query_executor",
    "resolve_api_token",
    "selectors",
    "slo_routes",
    "trace_routes",
    "write_guard",
]
