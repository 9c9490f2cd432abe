"""What comes into the store: scrape, remote-write in, OTLP metrics and traces, edge ingest."""

from inferwatch.formats import ExpositionParser, ParsedScrape
from inferwatch.formats import snappy_encode as snappy_compress
from inferwatch.server.ingest._edge_ingest import DeviceStatus, EdgeIngest, ingest_routes
from inferwatch.server.ingest._ingest_checks import MIN_TIME
from inferwatch.server.ingest._new_series_gc import NewSeriesGc
from inferwatch.server.ingest._otlp_delta import DeltaState
from inferwatch.server.ingest._otlp_genai_spans import GenAiSpans
from inferwatch.server.ingest._otlp_metrics import OtlpMetricsReceiver, otlp_metrics_routes
from inferwatch.server.ingest._remote_write_in import RemoteWriteReceiver, remote_write_routes
from inferwatch.server.ingest._scrape import ScrapeLoop
from inferwatch.server.ingest._scrape_limits import MAX_AHEAD_S
from inferwatch.server.ingest._scrape_target import REPORT_METRICS, TargetHealth
from inferwatch.server.ingest.discovery import Discovery, SourceStatus
from inferwatch.server.ingest.probe import Prober

__all__ = [
    "MAX_AHEAD_S",
    "MIN_TIME",
    "REPORT_METRICS",
    "DeltaState",
    "DeviceStatus",
    "Discovery",
    "EdgeIngest",
    "ExpositionParser",
    "GenAiSpans",
    "NewSeriesGc",
    "OtlpMetricsReceiver",
    "ParsedScrape",
    "Prober",
    "RemoteWriteReceiver",
    "ScrapeLoop",
    "SourceStatus",
    "TargetHealth",
    "ingest_routes",
    "otlp_metrics_routes",
    "remote_write_routes",
    "snappy_compress",
]
