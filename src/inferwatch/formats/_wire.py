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

Version 2 (what the agent sends; version 1 stays accepted) carries the same
samples in fewer bytes::

    {"v": 2, "b": "<spool id>:<first seq>-<last seq>", "hb": 300, "t0": 1700000000000, "tu": 15000,
     "a": {"backlog": 12, "dropped": {"bytes": 3}},
     "defs": {"7": {"__name__": "temp_celsius", "sensor": "a"}},
     "s": [[7, [0, 1, 20], [41.5, 46, 46]]]}

* a series dictionary: ``s`` names each series by its spool's id; ``defs``
  gives the labels of the ids the receiver may not have yet (the agent sends
  them until a batch using them is acknowledged, and all of a batch's on a
  resend). The receiver keeps them per device and spool; a batch naming an id
  it has no labels for is refused with 409 ``unknown_series`` and the agent
  resends it, same id, with every definition (after a server lost its state);
* times: ``t0`` (ms) and a unit ``tu`` (ms, the batch's greatest common step),
  each series' times as steps of ``tu`` from ``t0``, then from its previous;
* the device comes from the token (``device`` may be given; it must match);
  agent stats ``a`` only when not zero; integral values without ``.0``.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.formats._wire3 import MAGIC, WIRE_VERSION_COLUMNS, decode_columns
from inferwatch.formats._wire3 import wire_labels as _labels
from inferwatch.model import (
    STALE_NAN,
    Labels,
    Sample,
    gunzip_bounded,
    is_stale_nan,
    loads_json,
)

__all__ = ["WIRE_VERSION", "WIRE_VERSION_COMPACT", "AgentStats", "Batch", "UnknownSeries", "decode_batch",
           "encode_batch", "encode_compact"]

WIRE_VERSION = 1
WIRE_VERSION_COMPACT = 2
_SPECIAL = {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf, "stale": STALE_NAN}


@dataclass(frozen=True)
class AgentStats:
    """What the agent tells the server about itself in every batch."""

    backlog: int = 0
    dropped: Mapping[str, int] = field(default_factory=dict)  # reason -> total since the spool was made
    version: str = ""  # the agent's inferwatch version
    labels: Mapping[str, str] = field(default_factory=dict)  # the device's own labels (site, ...)
    sent_at: float = 0.0  # the agent's clock when it sent the batch (the server's clock offset)
    errors: int = 0  # uploads that failed since the agent started
    last_error: str = ""  # the last one's reason (no secrets: the uploader's outcome line)
    config_hash: str = ""  # the configuration the agent applied
    config_error: str = ""  # why it refused the last one the server sent (it keeps config_hash)

    def to_json(self) -> dict[str, Any]:
        """The ``a`` object of a batch: only what is set (an older server reads backlog and dropped)."""
        out: dict[str, Any] = {"backlog": self.backlog, "dropped": dict(self.dropped)}
        extra = {"v": self.version, "l": dict(self.labels), "now": self.sent_at, "err": self.errors,
                 "le": self.last_error, "ch": self.config_hash, "ce": self.config_error}
        out.update({k: v for k, v in extra.items() if v})
        return out


@dataclass(frozen=True)
class Batch:
    """One upload: samples in spool order, with the device, the batch id and the heartbeat."""

    device: str
    batch_id: str
    samples: tuple[Sample, ...]
    heartbeat_s: float
    agent: AgentStats = field(default_factory=AgentStats)
    defs: Mapping[int, Labels] = field(default_factory=dict)  # version 2: the definitions it carried
    version: int = WIRE_VERSION
    kinds: Mapping[int, str] = field(default_factory=dict)  # version 3: "c" (counter) / "g" of the defs
    series_ids: tuple[int, ...] = ()  # version 3: the series id of each sample
    step: float = 0.0  # version 3: the device's collection step (seconds; 0: unknown, no filling in)
    heartbeat_max: float = 0.0  # version 3: the longest gap the deadband leaves (heartbeat back-off)


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
        "agent": batch.agent.to_json(),
        "series": _columns(batch.samples),
    }
    raw = json.dumps(body, separators=(",", ":"), allow_nan=False).encode()
    return gzip.compress(raw, compresslevel=level, mtime=0)


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
    return _float(raw, where)


_MAX_MS = 2**53  # beyond this a millisecond count is no time (and int / 1000.0 may overflow)


def _float(raw: int | float, where: str) -> float:
    try:
        return float(raw)
    except OverflowError:  # a JSON integer of hundreds of digits
        raise InputError(f"{where}: {str(raw)[:20]}... is too large") from None


def _seconds(ms: int, where: str) -> float:
    if abs(ms) > _MAX_MS:
        raise InputError(f"{where}: {str(ms)[:20]} milliseconds is no time")
    return ms / 1000.0


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
        out.append(Sample(labels, _seconds(ms, f"{where}.t[{i}]"), _decode_value(v, f"{where}.v[{i}]")))


def decode_batch(body: bytes, *, max_bytes: int, max_samples: int,
                 known: Callable[[str, int], Labels | None] | None = None) -> Batch:
    """Parse and validate an ingest body; :class:`InputError` names what is wrong and where.

    ``known(spool, id)`` gives the labels a version-2 batch's series id was defined with
    earlier (``None``: unknown); an id neither defined in the body nor known raises
    :class:`UnknownSeries`.
    """
    raw = gunzip_bounded(body, max_bytes)
    if raw.startswith(MAGIC):
        return _columns3(raw, max_samples, known or (lambda spool, sid: None))
    doc = loads_json(raw)  # every string checked as text: nothing stored that a read cannot serve
    if not isinstance(doc, dict):
        raise InputError("body: expected a JSON object")
    if doc.get("v") == WIRE_VERSION_COMPACT and "version" not in doc:
        return _compact(doc, max_samples, known or (lambda spool, sid: None))
    if doc.get("version") != WIRE_VERSION:
        got = doc.get("version", doc.get("v"))
        raise InputError(f"body.version: expected {WIRE_VERSION} (or \"v\": {WIRE_VERSION_COMPACT}), "
                         f"got {got!r:.20}")
    device = _need(doc, "device", str, "body")
    batch_id = _need(doc, "batch", str, "body")
    if not 0 < len(batch_id) <= 200:
        raise InputError("body.batch: expected 1 to 200 characters")
    heartbeat = _float(_need(doc, "heartbeat_s", (int, float), "body"), "body.heartbeat_s")
    if not (math.isfinite(heartbeat) and heartbeat > 0):
        raise InputError(f"body.heartbeat_s: expected a positive number, got {heartbeat}")
    samples: list[Sample] = []
    for i, raw in enumerate(_need(doc, "series", list, "body")):
        _series(raw, f"body.series[{i}]", samples, max_samples)
    return Batch(device, batch_id, tuple(samples), heartbeat, _stats(doc.get("agent")))


def _columns3(raw: bytes, max_samples: int, known: Callable[[str, int], Labels | None]) -> Batch:
    header, defs, pairs, missing = decode_columns(raw, max_samples, known)
    if missing:
        raise UnknownSeries(missing)
    batch_id = _need(header, "b", str, "body.header")
    if not 0 < len(batch_id) <= 200:
        raise InputError("body.header.b: expected 1 to 200 characters")
    numbers = {}
    for key in ("hb", "hm", "st"):
        got = _float(_need(header, key, (int, float), "body.header"), f"body.header.{key}")
        if not (math.isfinite(got) and (got > 0 or (key == "st" and got == 0))):
            raise InputError(f"body.header.{key}: expected a positive number, got {got}")
        numbers[key] = got
    device = header.get("device", "")
    if not isinstance(device, str):
        raise InputError("body.header.device: expected a string")
    return Batch(device, batch_id, tuple(s for _, s in pairs), numbers["hb"], _stats(header.get("a")),
                 {i: ls for i, (ls, _) in defs.items()}, WIRE_VERSION_COLUMNS,
                 {i: k for i, (_, k) in defs.items()}, tuple(i for i, _ in pairs), numbers["st"],
                 max(numbers["hm"], numbers["hb"]))


def _stats(agent: Any) -> AgentStats:
    """The agent's statistics; what does not read is left out (they are shown, never acted on)."""
    if not isinstance(agent, dict):
        return AgentStats()
    dropped = agent.get("dropped") or {}
    got = agent.get("l")
    labels: dict[Any, Any] = got if isinstance(got, dict) else {}
    return AgentStats(
        backlog=_count(agent.get("backlog")),
        dropped={str(k): v for k, v in dropped.items() if isinstance(v, int) and not isinstance(v, bool)}
        if isinstance(dropped, dict) else {},
        version=_text(agent.get("v"), 64),
        labels={str(k)[:64]: _text(v, 128) for k, v in list(labels.items())[:16] if isinstance(v, str)},
        sent_at=float(agent["now"]) if isinstance(agent.get("now"), int | float)
        and not isinstance(agent.get("now"), bool) and math.isfinite(agent["now"]) else 0.0,
        errors=_count(agent.get("err")),
        last_error=_text(agent.get("le"), 200),
        config_hash=_text(agent.get("ch"), 80),
        config_error=_text(agent.get("ce"), 200),
    )


def _count(x: Any) -> int:
    return x if isinstance(x, int) and not isinstance(x, bool) and x >= 0 else 0


def _text(x: Any, most: int) -> str:
    return x[:most] if isinstance(x, str) else ""


# ---- version 2: the compact format --------------------------------------------------------------


class UnknownSeries(InputError):
    """A version-2 batch names series ids the receiver has no labels for (it lost them: resend defs)."""

    def __init__(self, ids: Iterable[int]) -> None:
        self.ids = sorted(set(ids))
        shown = ", ".join(map(str, self.ids[:10])) + (" ..." if len(self.ids) > 10 else "")
        super().__init__(f"body.s: unknown series ids {shown} (resend the batch with their defs)")


def _time_unit(times_ms: Iterable[int]) -> int:
    unit = 0
    for t in times_ms:
        unit = math.gcd(unit, t)
    return unit or 1


def _number(v: float) -> float | int | str:
    if math.isfinite(v) and v.is_integer() and abs(v) < 2**53:
        return int(v)  # "41" instead of "41.0"
    return _value(v)


def encode_compact(batch: Batch, ids: Sequence[int], labels: Mapping[int, Labels], *,
                   level: int = 6) -> bytes:
    """The gzip'ed JSON body of ``batch`` in version 2 (see the module docstring).

    ``ids[i]`` is the spool's series id of ``batch.samples[i]``; ``labels`` holds the
    definitions to send (the ids the receiver may not know yet; all of them on a resend).
    """
    if len(ids) != len(batch.samples):
        raise ValueError(f"{len(ids)} series ids for {len(batch.samples)} samples")
    times = [round(s.t * 1000) for s in batch.samples]
    t0 = min(times, default=0)
    unit = _time_unit(t - t0 for t in times)
    cols: dict[int, tuple[list[int], list[float | int | str]]] = {}
    last: dict[int, int] = {}
    for sid, ms, s in zip(ids, times, batch.samples, strict=True):
        dts, vs = cols.setdefault(sid, ([], []))
        dts.append((ms - last.get(sid, t0)) // unit)
        vs.append(_number(s.v))
        last[sid] = ms
    body: dict[str, Any] = {"v": WIRE_VERSION_COMPACT, "b": batch.batch_id, "hb": _number(batch.heartbeat_s),
                            "t0": t0, "tu": unit}
    if batch.agent != AgentStats():
        body["a"] = batch.agent.to_json()
    defs = {str(i): labels[i].to_dict() for i in sorted(set(ids)) if i in labels}
    if defs:
        body["defs"] = defs
    body["s"] = [[sid, dts, vs] for sid, (dts, vs) in cols.items()]
    raw = json.dumps(body, separators=(",", ":"), allow_nan=False).encode()
    return gzip.compress(raw, compresslevel=level, mtime=0)


def _int(raw: Any, where: str, *, low: int = 0) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < low:
        raise InputError(f"{where}: expected an integer >= {low}, got {raw!r:.40}")
    return raw


def _compact(doc: Mapping[str, Any], max_samples: int,
             known: Callable[[str, int], Labels | None]) -> Batch:
    batch_id = _need(doc, "b", str, "body")
    if not 0 < len(batch_id) <= 200:
        raise InputError("body.b: expected 1 to 200 characters")
    spool = batch_id.partition(":")[0]
    heartbeat = _float(_need(doc, "hb", (int, float), "body"), "body.hb")
    if not (math.isfinite(heartbeat) and heartbeat > 0):
        raise InputError(f"body.hb: expected a positive number, got {heartbeat}")
    t0, unit = _int(doc.get("t0"), "body.t0"), _int(doc.get("tu"), "body.tu", low=1)
    raw_defs = doc.get("defs") or {}
    if not isinstance(raw_defs, dict):
        raise InputError("body.defs: expected an object of series id -> labels")
    defs: dict[int, Labels] = {}
    for key, raw in raw_defs.items():
        if not key.isdigit():
            raise InputError(f"body.defs: {key!r:.40} is not a series id")
        defs[int(key)] = _labels(raw, f"body.defs.{key}")
    out: list[tuple[int, Sample]] = []
    missing: set[int] = set()
    series = _need(doc, "s", list, "body")
    for i, col in enumerate(series):
        where = f"body.s[{i}]"
        if not isinstance(col, list) or len(col) != 3:
            raise InputError(f"{where}: expected [series id, times, values]")
        sid = _int(col[0], f"{where}[0]")
        ts, vs = col[1], col[2]
        if not isinstance(ts, list) or not isinstance(vs, list) or len(ts) != len(vs):
            raise InputError(f"{where}: expected as many times as values")
        if len(out) + len(ts) > max_samples:
            raise InputError(f"body: more than {max_samples} samples in one batch")
        labels = defs.get(sid) or known(spool, sid)
        if labels is None:
            missing.add(sid)
            continue
        ms = t0
        for k, (dt, v) in enumerate(zip(ts, vs, strict=True)):
            ms += _int(dt, f"{where}[1][{k}]") * unit
            t = _seconds(ms, f"{where}[1][{k}]")
            out.append((sid, Sample(labels, t, _decode_value(v, f"{where}[2][{k}]"))))
    if missing:
        raise UnknownSeries(missing)
    device = doc.get("device", "")
    if not isinstance(device, str):
        raise InputError("body.device: expected a string")
    return Batch(device, batch_id, tuple(s for _, s in out), heartbeat, _stats(doc.get("a")), defs,
                 WIRE_VERSION_COMPACT)

