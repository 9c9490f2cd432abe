"""The edge agent: collect on the device, deadband, durable spool, upload (inferwatch ingest or remote-write).

Light by design: importing it loads no numpy, scipy or pydantic.
"""

from inferwatch.edge._agent import Agent, build_sources, build_target
from inferwatch.edge._config import (
    ENV_EDGE_TOKEN,
    AgentConfig,
    SourceConfig,
    SpoolConfig,
    UploadConfig,
    load_agent_config,
    parse_agent_config,
)
from inferwatch.edge._deadband import (
    DEFAULT_BAND,
    DEFAULT_FLOOR,
    DEFAULT_HEARTBEAT_S,
    Deadband,
    DeadbandSettings,
)
from inferwatch.edge._http import HttpClient, Transport, TransportError
from inferwatch.edge._simulate import SimulationResult, read_series_csv, replay, simulate, simulate_device
from inferwatch.edge._sources import CollectorSource, PushSource, ScrapeSource, Source
from inferwatch.edge._spool import DROP_REASONS, Spool, SpoolBatch
from inferwatch.edge._targets import INGEST_PATH, IngestTarget, RemoteWriteTarget, classify
from inferwatch.edge._uploader import Backoff, Outcome, Target, Uploader
from inferwatch.formats import (
    REMOTE_WRITE_HEADERS,
    WIRE_VERSION,
    WIRE_VERSION_COLUMNS,
    WIRE_VERSION_COMPACT,
    AgentStats,
    Batch,
    UnknownSeries,
    decode_batch,
    decode_columns,
    decode_write_request,
    encode_batch,
    encode_columns,
    encode_compact,
    encode_write_request,
    parse_text,
    read_openmetrics,
    snappy_compress,
    snappy_decompress,
    snappy_uncompressed_length,
)

__all__ = [
    "DEFAULT_BAND",
    "DEFAULT_FLOOR",
    "DEFAULT_HEARTBEAT_S",
    "DROP_REASONS",
    "ENV_EDGE_TOKEN",
    "INGEST_PATH",
    "REMOTE_WRITE_HEADERS",
    "WIRE_VERSION",
    "WIRE_VERSION_COLUMNS",
    "WIRE_VERSION_COMPACT",
    "Agent",
    "AgentConfig",
    "AgentStats",
    "Backoff",
    "Batch",
    "CollectorSource",
    "Deadband",
    "DeadbandSettings",
    "HttpClient",
    "IngestTarget",
    "Outcome",
    "PushSource",
    "RemoteWriteTarget",
    "ScrapeSource",
    "SimulationResult",
    "Source",
    "SourceConfig",
    "Spool",
    "SpoolBatch",
    "SpoolConfig",
    "Target",
    "Transport",
    "TransportError",
    "UnknownSeries",
    "UploadConfig",
    "Uploader",
    "build_sources",
    "build_target",
    "classify",
    "decode_batch",
    "decode_columns",
    "decode_write_request",
    "encode_batch",
    "encode_columns",
    "encode_compact",
    "encode_write_request",
    "load_agent_config",
    "parse_agent_config",
    "parse_text",
    "read_openmetrics",
    "read_series_csv",
    "replay",
    "simulate",
    "simulate_device",
    "snappy_compress",
    "snappy_decompress",
    "snappy_uncompressed_length",
]
