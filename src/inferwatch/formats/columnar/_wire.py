"""Protobuf wire primitives for the remote-write reader, and its general walk over any encoding.

:func:`read_any` reads a ``WriteRequest`` whatever the order of its fields
(absent fields as zero): the slow way, for the senders whose encoding the
reader's fast walks do not expect.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from inferwatch.model import Labels

__all__ = ["Columns", "Unusual", "after", "fields", "read_any", "skip", "varint"]


class Unusual(Exception):
    """Valid protobuf, perhaps, but not the encoding the fast walk expects."""


@dataclass(frozen=True)
class Columns:
    """The samples of a request: label sets (shared objects), times in seconds, values."""

    labels: list[Labels]
    t: np.ndarray
    v: np.ndarray


def varint(raw: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    n = shift = 0
    while shift < 64:
        b = raw[pos]  # IndexError past the end: the caller refuses the body
        n |= (b & 0x7F) << shift
        pos += 1
        if not b & 0x80:
            return n, pos
        shift += 7
    raise ValueError("protobuf: varint longer than 10 bytes")


def skip(raw: bytes, pos: int, end: int) -> int:
    """The position after the field at ``pos``."""
    key, pos = varint(raw, pos)
    return after(raw, pos, key & 7, end)


def after(raw: bytes, pos: int, wire: int, end: int) -> int:
    """The position after a field's value at ``pos`` (any wire type but groups)."""
    if wire == 0:
        pos = varint(raw, pos)[1]
    elif wire == 1 or wire == 5:
        pos += 8 if wire == 1 else 4
    elif wire == 2:
        size, pos = varint(raw, pos)
        pos += size
    else:
        raise ValueError(f"protobuf: unsupported wire type {wire}")
    if pos > end:
        raise ValueError("protobuf: a field runs past its message")
    return pos


def fields(raw: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """``(number, wire type, start, end)`` of each field in ``raw[pos:end]`` (a varint's own bytes)."""
    while pos < end:
        key, pos = varint(raw, pos)
        wire = key & 7
        start = varint(raw, pos)[1] if wire == 2 else pos
        pos = after(raw, pos, wire, end)
        yield key >> 3, wire, start, pos


def read_any(raw: bytes) -> Columns:
    """The general walk: any field order, absent fields as zero (slower; for unusual senders)."""
    labels: list[Labels] = []
    ts: list[float] = []
    vs: list[float] = []
    for number, wire, start, end in fields(raw, 0, len(raw)):
        if number != 1 or wire != 2:
            continue
        pairs: list[tuple[str, str]] = []
        points: list[tuple[float, float]] = []
        for n, w, a, b in fields(raw, start, end):
            if n == 1 and w == 2:
                kv = {k: raw[c:d] for k, x, c, d in fields(raw, a, b) if x == 2}
                pairs.append((kv.get(1, b"").decode(), kv.get(2, b"").decode()))
            elif n == 2 and w == 2:
                points.append(_point(raw, a, b))
        ls = Labels(pairs)
        for t, v in points:
            labels.append(ls)
            ts.append(t)
            vs.append(v)
    return Columns(labels, np.array(ts, dtype=np.float64), np.array(vs, dtype=np.float64))


def _point(raw: bytes, start: int, end: int) -> tuple[float, float]:
    """``(seconds, value)`` of one ``Sample`` message."""
    value, ms = 0.0, 0
    for n, w, a, _ in fields(raw, start, end):
        if n == 1 and w == 1:
            value = struct.unpack_from("<d", raw, a)[0]
        elif n == 2 and w == 0:
            ms = varint(raw, a)[0]
            ms = ms - (1 << 64) if ms >= 1 << 63 else ms
    return ms / 1000.0, value
