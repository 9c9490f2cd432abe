"""Where a ``WriteRequest``'s series and samples lie, and the samples' times and values as columns.

A sender mostly sends each series with one sample, encoded the usual way:
``<labels> 12 10 09 <value: 8 bytes> 10 <timestamp: 6-byte varint>`` (or
``12 07 10 <timestamp>`` for a value of 0, which proto3 leaves out). Once the
series' bounds are known (one short Python walk over the top-level fields),
:func:`one_sample` checks that shape for all of them at once, and
:func:`timestamps` and :func:`values` decode every sample in a few numpy passes.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from inferwatch.formats.columnar._wire import Unusual, skip, varint

__all__ = ["one_sample", "series_bounds", "stamps6", "timestamps", "values"]

_LEN1 = 0x0A  # field 1, length-delimited: a TimeSeries in a WriteRequest
_LEN2 = 0x12  # field 2, length-delimited: a Sample in a TimeSeries
_DOUBLE1 = 0x09  # field 1, 64-bit: Sample.value
_VARINT2 = 0x10  # field 2, varint: Sample.timestamp
_R8 = np.arange(8)
_R10 = np.arange(10)
_SHIFTS = (7 * _R10).astype(np.uint64)
_MORE6 = np.array([0x80] * 5 + [0], dtype=np.uint8)  # the continuation bits of a 6-byte varint


def series_bounds(raw: bytes) -> tuple[list[int], list[int]]:
    """Where each ``TimeSeries`` starts and ends (the request's other fields are skipped)."""
    starts: list[int] = []
    ends: list[int] = []
    n, pos = len(raw), 0
    while pos < n:
        if raw[pos] != _LEN1:
            pos = skip(raw, pos, n)
            continue
        size = raw[pos + 1]
        start = pos + 2
        if size >= 0x80:
            size, start = varint(raw, pos + 1)
        pos = start + size
        starts.append(start)
        ends.append(pos)
    if pos > n:
        raise ValueError("protobuf: a TimeSeries runs past the end")
    return starts, ends


def one_sample(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Where each series' labels stop and its value lies (-1: left out, 0.0) when every series ends with
    one sample in the usual encoding, else ``None`` (the bytes before that sample are labels only if
    they are whole ``Label`` fields: the caller's to check)."""
    end = np.where(ends - starts > 18, ends, 18)  # a shorter series reads harmless bytes, and is refused
    stamp = (buf[end - 7] == _VARINT2) & (ends - starts > 18)
    full = (buf[end - 18] == _LEN2) & (buf[end - 17] == 16) & (buf[end - 16] == _DOUBLE1)
    zero = (buf[end - 9] == _LEN2) & (buf[end - 8] == 7)
    if not (stamp & (full | zero)).all():
        return None
    return np.where(full, ends - 18, ends - 9), np.where(full, ends - 15, -1)


def values(buf: np.ndarray, value_at: list[int] | np.ndarray) -> np.ndarray:
    """The doubles at ``value_at`` (0.0 where it is -1: a value proto3 left out)."""
    at = np.asarray(value_at, dtype=np.int64)
    present = at >= 0
    v: np.ndarray = buf[np.where(present, at, 0)[:, None] + _R8].view("<f8")[:, 0]
    if not present.all():
        v[~present] = 0.0
    return v


def timestamps(buf: np.ndarray, time_at: list[int] | np.ndarray,
               time_end: list[int] | np.ndarray) -> np.ndarray:
    """Milliseconds as float64, from the varints at ``[time_at, time_end)`` (``Unusual`` if not one)."""
    at = np.asarray(time_at, dtype=np.int64)
    width = np.asarray(time_end, dtype=np.int64) - at
    if at.shape[0] and (width.min() < 1 or width.max() > 10):
        raise Unusual
    raw = buf[at[:, None] + _R10]
    inside = width[:, None] > _R10
    last = (width - 1)[:, None] == _R10
    more = (raw & 0x80) != 0  # a varint's bytes all carry the continuation bit but its last
    if not np.array_equal(more & inside, inside & ~last):
        raise Unusual
    parts = (raw.astype(np.uint64) & np.uint64(0x7F)) << _SHIFTS
    parts[~inside] = 0
    ms: np.ndarray = parts.sum(axis=1, dtype=np.uint64).view(np.int64).astype(np.float64)
    return ms


def stamps6(buf: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Milliseconds as float64 from the 6-byte varints just before ``ends`` (``Unusual`` if one is not)."""
    raw = sliding_window_view(buf, 6)[ends - 6]
    if not np.array_equal(raw & 0x80, np.broadcast_to(_MORE6, raw.shape)):
        raise Unusual
    ms: np.ndarray = ((raw & 0x7F).astype(np.uint64) << _SHIFTS[:6]).sum(axis=1, dtype=np.uint64)
    return ms.astype(np.float64)  # under 2**42: no sign to mind
