"""The embedded server: scrape loop, store, rule evaluation, HTTP API (``inferwatch serve``)."""

from inferwatch.server._api import create_app
from inferwatch.server._components import (
    ALERT_STATE_FILE,
    Embedding,
    LoggingSink,
    ServerComponents,
    data_dir_of,
    state_dir,
)
from inferwatch.server._dirlock import DataDirLock, DataDirLocked
from inferwatch.server._integrity import Damage, check_data_dir
from inferwatch.server._preflight import config_warnings, preflight
from inferwatch.server._rule_files import baseline_rule_groups, baseline_settings, prometheus_rule_files
from inferwatch.server._runtime import Server
from inferwatch.server._selfmetrics import DeliveryCounts
from inferwatch.server._serve import parse_listen, serve
from inferwatch.server._trace_links import TraceLinks
from inferwatch.server._wiring import ServerParts, api_routes, build, build_components
from inferwatch.server.api import alerting_routes, oncall_routes, slo_routes, trace_routes
from inferwatch.server.ingest import REPORT_METRICS, ExpositionParser, ParsedScrape, ScrapeLoop, TargetHealth
from inferwatch.server.ingest.probe import PHASES, ProbeResult, Rotation, load_golden, run_probe
from inferwatch.server.web import dashboard_routes

__all__ = [
    "ALERT_STATE_FILE",
    "PHASES",
    "REPORT_METRICS",
    "Damage",
    "DataDirLock",
    "DataDirLocked",
    "DeliveryCounts",
    "Embedding",
    "ExpositionParser",
    "LoggingSink",
    "ParsedScrape",
    "ProbeResult",
    "Rotation",
    "ScrapeLoop",
    "Server",
    "ServerComponents",
    "ServerParts",
    "TargetHealth",
    "TraceLinks",
    "alerting_routes",
    "api_routes",
    "baseline_rule_groups",
    "baseline_settings",
    "build",
    "build_components",
    "check_data_dir",
    "config_warnings",
    "create_app",
    "dashboard_routes",
    "data_dir_of",
    "load_golden",
    "oncall_routes",
    "parse_listen",
    "preflight",
    "prometheus_rule_files",
    "run_probe",
    "serve",
    "slo_routes",
    "state_dir",
    "trace_routes",
]
