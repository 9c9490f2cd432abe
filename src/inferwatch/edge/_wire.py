"""The inferwatch ingest format: one batch of an edge device's samples as gzip'ed JSON.

::

    POST /api/v1/edge/ingest
    Authorization: Bearer <the device's token>
    Content-Encoding: gzip
    Content-Type: application/json

    {"version": 1, "device": "cam-1", "batch": "<spool id>:<first seq>-<last seq>",
     "heartbeat_s": 300.0,
     "agent": {"backlog": 12, "dropped": {"age": 0, "bytes": 0, "disk_full": 0}},
     "series": [{"labels": {"__name__": "temp_celsius", "sensor": "a"},
                 "t": [1700000000000, 15000, 300000], "v": [41.5, 46.0, 46.0]}]}

``t`` holds milliseconds: the first absolute, each next one the difference
to the previous (regular steps compress to almost nothing). ``v`` holds
numbers, or the strings ``"NaN"``, ``"+Inf"``, ``"-Inf"`` and ``"stale"``
(Prometheus's staleness marker). The server reconstructs each series as
*last value holds* until the next sample; no sample for ``2 * heartbeat_s``
means the series is stale. ``batch`` is idempotent: the server stores a
batch id once, so a retried batch is never stored twice.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.model import (
    STALE_NAN,
    Labels,
    Sample,
    is_stale_nan,
    is_valid_label_name,
    is_valid_metric_name,
)

__all__ = ["WIRE_VERSION", "AgentStats", "Batch", "decode_batch", "encode_batch"]

WIRE_VERSION = 1
_SPECIAL = {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf, "stale": STALE_NAN}


@dataclass(frozen=True)
class AgentStats:
    """What the agent tells the server about itself in every batch."""

    backlog: int = 0
    dropped: Mapping[str, int] = field(default_factory=dict)  # reason -> total since the spool was made


@dataclass(frozen=True)
class Batch:
    """One upload: samples in spool order, with the device, the batch id and the heartbeat."""

    device: str
    batch_id: str
    samples: tuple[Sample, ...]
    heartbeat_s: float
    agent: AgentStats = field(default_factory=AgentStats)


def _value(v: float) -> float | str:
    if math.isfinite(v):
        return v
    if is_stale_nan(v):
        return "stale"
    return "NaN" if math.isnan(v) else ("+Inf" if v > 0 else "-Inf")


def _columns(samples: Iterable[Sample]) -> list[dict[str, Any]]:
    by_series: dict[Labels, dict[str, Any]] = {}
    last: dict[Labels, int] = {}
    for s in samples:
        col = by_series.setdefault(s.labels, {"labels": s.labels.to_dict(), "t": [], "v": []})
        ms = round(s.t * 1000)
        col["t"].append(ms - last.get(s.labels, 0))
        last[s.labels] = ms
        col["v"].append(_value(s.v))
    return list(by_series.values())


def encode_batch(batch: Batch, *, level: int = 6) -> bytes:
    """The gzip'ed JSON body of ``batch`` (deterministic: the same batch gives the same bytes)."""
    body = {
        "version": WIRE_VERSION, "device": batch.device, "batch": batch.batch_id,
        "heartbeat_s": batch.heartbeat_s,
        "agent": {"backlog": batch.agent.backlog, "dropped": dict(batch.agent.dropped)},
        "series": _columns(batch.samples),
    }
    raw = json.dumps(body, separators=(",", ":"), allow_nan=False).encode()
    return gzip.compress(raw, compresslevel=level, mtime=0)


def _gunzip(body: bytes, limit: int) -> bytes:
    d = zlib.decompressobj(wbits=31)
    try:
        out = d.decompress(body, limit + 1)
    except zlib.error as exc:
        raise InputError(f"body: not gzip data ({exc})") from None
    if len(out) > limit:
        raise InputError(f"body: more than {limit} bytes once decompressed")
    if not d.eof:
        raise InputError("body: truncated gzip data")
    return out


def _need(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise InputError(f"{where}: missing field {key!r}")
    got = obj[key]
    if not isinstance(got, kind) or (isinstance(got, bool) and kind is not bool):
        raise InputError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, got {got!r:.60}")
    return got


def _decode_value(raw: Any, where: str) -> float:
    if isinstance(raw, str):
        if raw not in _SPECIAL:
            raise InputError(f"{where}: {raw!r:.40} is not a number")
        return _SPECIAL[raw]
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise InputError(f"{where}: {raw!r:.40} is not a number")
    return float(raw)


def _labels(raw: Any, where: str) -> Labels:
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise InputError(f"{where}: expected an object of string label values")
    if not is_valid_metric_name(raw.get("__name__", "")):
        raise InputError(f"{where}.__name__: {raw.get('__name__')!r:.80} is not a valid metric name")
    for name in raw:
        if not is_valid_label_name(name) and name != "__name__":
            raise InputError(f"{where}: {name!r:.80} is not a valid label name")
    return Labels(raw)


def _series(raw: Any, where: str, out: list[Sample], max_samples: int) -> None:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected an object")
    labels = _labels(raw.get("labels"), f"{where}.labels")
    ts, vs = _need(raw, "t", list, where), _need(raw, "v", list, where)
    if len(ts) != len(vs):
        raise InputError(f"{where}: {len(ts)} timestamps but {len(vs)} values")
    if len(out) + len(ts) > max_samples:
        raise InputError(f"body: more than {max_samples} samples in one batch")
    ms = 0
    for i, (dt, v) in enumerate(zip(ts, vs, strict=True)):
        if isinstance(dt, bool) or not isinstance(dt, int):
            raise InputError(f"{where}.t[{i}]: {dt!r:.40} is not an integer of milliseconds")
        ms += dt
        out.append(Sample(labels, ms / 1000.0, _decode_value(v, f"{where}.v[{i}]")))


def decode_batch(body: bytes, *, max_bytes: int, max_samples: int) -> Batch:
    """Parse and validate an ingest body; :class:`InputError` names what is wrong and where."""
    try:
        doc = json.loads(_gunzip(body, max_bytes))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"body: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise InputError("body: expected a JSON object")
    if doc.get("version") != WIRE_VERSION:
        raise InputError(f"body.version: expected {WIRE_VERSION}, got {doc.get('version')!r:.20}")
    device = _need(doc, "device", str, "body")
    batch_id = _need(doc, "batch", str, "body")
    if not 0 < len(batch_id) <= 200:
        raise InputError("body.batch: expected 1 to 200 characters")
    heartbeat = float(_need(doc, "heartbeat_s", (int, float), "body"))
    if not (math.isfinite(heartbeat) and heartbeat > 0):
        raise InputError(f"body.heartbeat_s: expected a positive number, got {heartbeat}")
    samples: list[Sample] = []
    for i, raw in enumerate(_need(doc, "series", list, "body")):
        _series(raw, f"body.series[{i}]", samples, max_samples)
    agent = doc.get("agent") or {}
    dropped = agent.get("dropped") or {} if isinstance(agent, dict) else {}
    stats = AgentStats(
        backlog=int(agent.get("backlog", 0)) if isinstance(agent.get("backlog", 0), int) else 0,
        dropped={str(k): v for k, v in dropped.items() if isinstance(v, int) and not isinstance(v, bool)}
        if isinstance(dropped, dict) else {},
    )
    return Batch(device, batch_id, tuple(samples), heartbeat, stats)
