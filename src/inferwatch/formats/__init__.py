"""One codec per wire format: Prometheus text and OpenMetrics, remote-write, snappy, the edge batch format
and the edge spool's compressed segments.

Used by the server, the edge agent and the SDK alike; it loads nothing beyond the standard library
(cramjam, when installed, only when a snappy block is coded), so the agent keeps its minimal imports.
"""

from inferwatch.formats._exposition import ExpositionParser, ParsedScrape, parse_text
from inferwatch.formats._openmetrics import read_openmetrics
from inferwatch.formats._remote_write import REMOTE_WRITE_HEADERS, decode_write_request, encode_write_request
from inferwatch.formats._segment import decode_segment, encode_segment
from inferwatch.formats._snappy import TooLarge as SnappyTooLarge
from inferwatch.formats._snappy import backend as snappy_backend
from inferwatch.formats._snappy import compress as snappy_encode
from inferwatch.formats._snappy import decompress as snappy_decode
from inferwatch.formats._snappy_pure import compress as snappy_compress
from inferwatch.formats._snappy_pure import decompress as snappy_decompress
from inferwatch.formats._snappy_pure import uncompressed_length as snappy_uncompressed_length
from inferwatch.formats._wire import (
    WIRE_VERSION,
    WIRE_VERSION_COMPACT,
    AgentStats,
    Batch,
    UnknownSeries,
    decode_batch,
    encode_batch,
    encode_compact,
)
from inferwatch.formats._wire3 import WIRE_VERSION_COLUMNS, decode_columns, encode_columns

__all__ = [
    "REMOTE_WRITE_HEADERS",
    "WIRE_VERSION",
    "WIRE_VERSION_COLUMNS",
    "WIRE_VERSION_COMPACT",
    "AgentStats",
    "Batch",
    "ExpositionParser",
    "ParsedScrape",
    "SnappyTooLarge",
    "UnknownSeries",
    "decode_batch",
    "decode_columns",
    "decode_segment",
    "decode_write_request",
    "encode_batch",
    "encode_columns",
    "encode_compact",
    "encode_segment",
    "encode_write_request",
    "parse_text",
    "read_openmetrics",
    "snappy_backend",
    "snappy_compress",
    "snappy_decode",
    "snappy_decompress",
    "snappy_encode",
    "snappy_uncompressed_length",
]
