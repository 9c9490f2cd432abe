"""What the deadband would save on a recorded series: ``inferwatch edge simulate``.

The series goes through the real :class:`Deadband` and the real encoder
(:func:`encode_compact`, version 2, gzip: series labels in the first batch,
ids after). The naive upload sends every point with the same batching (one
batch per ``batch_interval`` of sample time, at most ``batch_size`` samples)
and the same compression. The error of a point is
``|true - reconstructed|``, reconstructed as the server does it (the last
sent value holds); the relative error divides by ``max(|reconstructed|,
floor)``, so it is at most the deadband when the agent is right. A point repeating
its predecessor's timestamp is not measured (NAB has a few; no time-series store keeps
two values at one instant, and the deadband drops the second).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.edge._deadband import Deadband, DeadbandSettings
from inferwatch.edge._wire import Batch, encode_compact
from inferwatch.model import Labels, Sample

__all__ = ["SimulationResult", "read_series_csv", "simulate", "simulate_device"]

_LABELS = Labels.of("edge_simulated_value", device="simulated")


@dataclass(frozen=True)
class SimulationResult:
    """The numbers ``edge simulate`` prints."""

    points: int
    sent: int
    bytes_naive: int
    bytes_sent: int
    reduction: float
    max_rel_error: float
    max_abs_error: float

    def to_json(self) -> dict[str, Any]:
        """A plain dict, in the documented key order."""
        return asdict(self)


def _parse_time(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


def read_series_csv(path: Path, *, timestamp_col: str = "timestamp",
                    value_col: str = "value") -> list[tuple[float, float]]:
    """``(t, v)`` points of a CSV file; :class:`InputError` names the file, line and column."""
    try:
        with path.open(newline="") as f:
            rows = csv.DictReader(f)
            for col in (timestamp_col, value_col):
                if col not in (rows.fieldnames or ()):
                    have = ", ".join(rows.fieldnames or ())
                    raise InputError(f"{path}: no column {col!r} (columns: {have})")
            out = [_row(path, rows.line_num, r, timestamp_col, value_col) for r in rows]
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text CSV file") from None
    if not out:
        raise InputError(f"{path}: no data rows")
    return out


def _row(path: Path, line: int, row: dict[str, str], tcol: str, vcol: str) -> tuple[float, float]:
    try:
        t = _parse_time(row[tcol] or "")
    except ValueError:
        raise InputError(f"{path}:{line}: column {tcol!r}: {row[tcol]!r} is not a timestamp") from None
    try:
        v = float(row[vcol] or "")
    except ValueError:
        raise InputError(f"{path}:{line}: column {vcol!r}: {row[vcol]!r} is not a number") from None
    return t, v


def _batches(samples: Sequence[Sample], interval: float, size: int) -> Iterable[Sequence[Sample]]:
    group: list[Sample] = []
    window = None
    for s in samples:
        w = math.floor(s.t / interval)
        if group and (w != window or len(group) >= size):
            yield group
            group = []
        group.append(s)
        window = w
    if group:
        yield group


def _wire_bytes(samples: Sequence[Sample], interval: float, size: int, heartbeat: float) -> int:
    ids: dict[Labels, int] = {}
    total = seq = 0
    for b in _batches(samples, interval, size):
        fresh = {}
        for s in b:
            if s.labels not in ids:
                ids[s.labels] = len(ids) + 1
                fresh[ids[s.labels]] = s.labels
        batch = Batch("", f"5f3a9c0d12e4:{seq + 1}-{seq + len(b)}", tuple(b), heartbeat)
        total += len(encode_compact(batch, [ids[s.labels] for s in b], fresh))
        seq += len(b)
    return total


def simulate(points: Sequence[tuple[float, float]], settings: DeadbandSettings, *,
             batch_interval: float = 60.0, batch_size: int = 1000) -> SimulationResult:
    """Replay ``points`` through the deadband and the encoder; see the module docstring."""
    return simulate_device({"value": points}, settings, batch_interval=batch_interval, batch_size=batch_size)


def simulate_device(series: Mapping[str, Sequence[tuple[float, float]]], settings: DeadbandSettings, *,
                    batch_interval: float = 60.0, batch_size: int = 1000) -> SimulationResult:
    """Like :func:`simulate` for one device with several series (named by the keys), batched together."""
    naive = sorted((Sample(_LABELS.with_(series=name) if len(series) > 1 else _LABELS, t, v)
                    for name, points in series.items() for t, v in points), key=lambda s: s.t)
    db = Deadband(settings)
    sent: list[Sample] = []
    max_rel = max_abs = 0.0
    held: dict[Labels, float] = {}
    last_t: dict[Labels, float] = {}
    for s in naive:
        out = db.offer(s)
        sent.extend(out)
        if out:
            held[s.labels] = out[-1].v
        repeat = last_t.get(s.labels) == s.t
        last_t[s.labels] = s.t
        if repeat:  # a second value at the same instant: no store holds it, so nothing to reconstruct
            continue
        err = abs(s.v - held[s.labels])
        if math.isfinite(err):
            max_abs = max(max_abs, err)
            max_rel = max(max_rel, err / max(abs(held[s.labels]), settings.floor))
    b0 = _wire_bytes(naive, batch_interval, batch_size, settings.heartbeat)
    b1 = _wire_bytes(sent, batch_interval, batch_size, settings.heartbeat)
    return SimulationResult(len(naive), len(sent), b0, b1, 1.0 - b1 / b0 if b0 else 0.0, max_rel, max_abs)
