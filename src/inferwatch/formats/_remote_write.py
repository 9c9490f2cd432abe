"""Prometheus remote-write 1.0: ``WriteRequest`` protobuf, hand-encoded, snappy-compressed.

The messages (``prompb/remote.proto`` and ``types.proto`` of Prometheus)::

    message WriteRequest { repeated TimeSeries timeseries = 1; reserved 2;
                           repeated MetricMetadata metadata = 3; }
    message TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; ... }
    message Label        { string name = 1; string value = 2; }
    message Sample       { double value = 1; int64 timestamp = 2; }   // milliseconds

A request is POSTed with ``Content-Encoding: snappy``, ``Content-Type:
application/x-protobuf`` and ``X-Prometheus-Remote-Write-Version: 0.1.0``;
labels are sorted by name and each series' samples by time. No protobuf
library is needed for these four messages, so the edge agent stays light and
the server can reuse both directions (:func:`decode_write_request` skips the
fields it does not know, as protobuf requires).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable

from inferwatch.formats import _snappy_pure as _snappy
from inferwatch.formats._varint import varint
from inferwatch.model import Labels, Sample

__all__ = ["REMOTE_WRITE_HEADERS", "decode_write_request", "encode_write_request"]

REMOTE_WRITE_HEADERS = {
    "Content-Encoding": "snappy",
    "Content-Type": "application/x-protobuf",
    "X-Prometheus-Remote-Write-Version": "0.1.0",
}


def _field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _series(labels: Labels, samples: list[Sample]) -> bytes:
    out = bytearray()
    for name, value in labels.items_tuple:
        out += _field(1, _field(1, name.encode()) + _field(2, value.encode()))
    for s in samples:
        out += _field(2, b"\x09" + struct.pack("<d", s.v) + b"\x10" + varint(round(s.t * 1000)))
    return bytes(out)


def encode_write_request(samples: Iterable[Sample], *, extra: Labels | None = None,
                         compress: Callable[[bytes], bytes] | None = None) -> bytes:
    """The snappy-compressed ``WriteRequest`` of ``samples`` (``extra`` labels added to each series).

    ``compress`` is a snappy block compressor to use instead of this package's pure-Python one
    (the server passes a native one; the edge agent keeps its dependencies minimal).
    """
    grouped: dict[Labels, list[Sample]] = {}
    for s in samples:
        grouped.setdefault(s.labels, []).append(s)
    body = bytearray()
    for labels, group in grouped.items():
        full = Labels({**labels.to_dict(), **extra.to_dict()}) if extra else labels
        body += _field(1, _series(full, sorted(group, key=lambda s: s.t)))
    return (compress or _snappy.compress)(bytes(body))


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("protobuf: truncated varint")
        b = buf[pos]
        n |= (b & 0x7F) << shift
        pos += 1
        if not b & 0x80:
            return n, pos
        shift += 7


def _fields(buf: bytes) -> Iterable[tuple[int, int, bytes | int]]:
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
            yield number, wire, value
        elif wire == 1 or wire == 5:
            width = 8 if wire == 1 else 4
            if pos + width > len(buf):
                raise ValueError("protobuf: truncated fixed field")
            yield number, wire, buf[pos:pos + width]
            pos += width
        elif wire == 2:
            n, pos = _read_varint(buf, pos)
            if pos + n > len(buf):
                raise ValueError("protobuf: truncated length-delimited field")
            yield number, wire, buf[pos:pos + n]
            pos += n
        else:
            raise ValueError(f"protobuf: unsupported wire type {wire}")


def _decode_series(buf: bytes) -> list[Sample]:
    pairs: list[tuple[str, str]] = []
    points: list[tuple[float, float]] = []
    for number, _wire, payload in _fields(buf):
        if number == 1 and isinstance(payload, bytes):
            kv = {n: p for n, _, p in _fields(payload) if isinstance(p, bytes)}
            pairs.append((kv.get(1, b"").decode(), kv.get(2, b"").decode()))
        elif number == 2 and isinstance(payload, bytes):
            value, ms = 0.0, 0
            for n, w, p in _fields(payload):
                if n == 1 and w == 1 and isinstance(p, bytes):
                    value = struct.unpack("<d", p)[0]
                elif n == 2 and w == 0 and isinstance(p, int):
                    ms = p - (1 << 64) if p >= 1 << 63 else p
            points.append((ms / 1000.0, value))
    labels = Labels(pairs)
    return [Sample(labels, t, v) for t, v in points]


def decode_write_request(body: bytes, *, max_bytes: int) -> list[Sample]:
    """The samples of a snappy-compressed ``WriteRequest``; ``ValueError`` when malformed or too big."""
    if _snappy.uncompressed_length(body) > max_bytes:
        raise ValueError(f"remote-write: more than {max_bytes} bytes once decompressed")
    out: list[Sample] = []
    for number, _, payload in _fields(_snappy.decompress(body)):
        if number == 1 and isinstance(payload, bytes):
            out.extend(_decode_series(payload))
    return out
