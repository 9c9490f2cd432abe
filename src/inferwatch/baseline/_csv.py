"""Read a ``timestamp,value`` CSV series (NAB's format, or epoch seconds)."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError

__all__ = ["CsvSeries", "parse_timestamp", "read_csv_series"]


@dataclass(frozen=True, slots=True)
class CsvSeries:
    """A series as read, in file order: the timestamp text as in the file, epoch seconds, values.

    Real exports repeat or reorder a few timestamps (NAB has both); rows are
    kept as they are and the baselines skip a point older than the last learned;
    ``unordered`` counts them (a timestamp not after an earlier row's). Values
    and timestamps must be finite and present: a row without them is an error.
    """

    stamps: list[str]
    times: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64]
    unordered: int = 0


def parse_timestamp(text: str) -> float:
    """Epoch seconds from ISO 8601 (naive means UTC) or a number of seconds.

    >>> parse_timestamp("2014-04-01 00:05:00"), parse_timestamp("300")
    (1396310700.0, 300.0)
    """
    s = text.strip()
    try:
        return float(s)
    except ValueError:
        pass
    dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


def read_csv_series(path: str | Path, timestamp_col: str = "timestamp",
                    value_col: str = "value") -> CsvSeries:
    """Read and validate a series; ``InputError`` names the file, line and column."""
    p = Path(path)
    try:
        with p.open(newline="", encoding="utf-8") as fh:
            return _parse(p, csv.DictReader(fh), timestamp_col, value_col)
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not a UTF-8 text file") from exc


def _time(p: Path, line: int, col: str, stamp: str) -> float:
    try:
        t = parse_timestamp(stamp)
    except (ValueError, OverflowError):
        raise InputError(f"{p}:{line}: {col}: not a timestamp: {stamp!r}") from None
    if not math.isfinite(t):
        raise InputError(f"{p}:{line}: {col}: not a finite timestamp: {stamp!r}")
    return t


def _value(p: Path, line: int, col: str, raw: str) -> float:
    if not raw.strip():
        raise InputError(f"{p}:{line}: {col}: missing value")
    try:
        v = float(raw)
    except ValueError:
        raise InputError(f"{p}:{line}: {col}: not a number: {raw!r}") from None
    if not math.isfinite(v):
        raise InputError(f"{p}:{line}: {col}: not a finite number: {raw!r}")
    return v


def _parse(p: Path, reader: csv.DictReader[str], ts_col: str, val_col: str) -> CsvSeries:
    header = reader.fieldnames or []
    for col in (ts_col, val_col):
        if col not in header:
            raise InputError(f"{p}: no column {col!r} (columns: {', '.join(header) or 'none'})")
    stamps: list[str] = []
    times: list[float] = []
    values: list[float] = []
    unordered, latest = 0, -math.inf
    for row in reader:
        line = reader.line_num
        stamp, raw = row.get(ts_col) or "", row.get(val_col) or ""
        t = _time(p, line, ts_col, stamp)
        v = _value(p, line, val_col, raw)
        if times and t <= latest:
            unordered += 1  # kept, and skipped by the baselines (a point older than the last learned)
        latest = max(latest, t)
        stamps.append(stamp)
        times.append(t)
        values.append(v)
    if not stamps:
        raise InputError(f"{p}: no data rows")
    return CsvSeries(stamps, np.asarray(times), np.asarray(values), unordered)
