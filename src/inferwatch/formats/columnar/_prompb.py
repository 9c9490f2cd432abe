"""Remote-write 1.0's ``WriteRequest``, read from its bytes straight into columns.

Wire format (prometheus/prompb): a ``WriteRequest`` is repeated ``TimeSeries``
(field 1; metadata, field 3, is skipped); a ``TimeSeries`` is repeated
``Label`` (field 1: name 1, value 2) then repeated ``Sample`` (field 2: value
1 as a double, timestamp 2 as an int64 varint of milliseconds; proto3 leaves
out a value of 0); exemplars (3) and native histograms (4) are skipped.

A sender repeats its series in every request, byte for byte, so the bytes of
a series' labels are the key of its :class:`~inferwatch.model.Labels`: a
known series costs one dict lookup, and the same ``Labels`` object comes back
(the store then finds its id by identity). One Python walk notes where each
sample's value and timestamp lie; numpy decodes them all at once. An encoding
valid but not the usual one (a label after a sample, a sample's fields in
another order or with a field added, a sample at time 0) is read again by a
general, slower walk over the fields.

>>> from inferwatch.edge import encode_write_request, snappy_decompress
>>> from inferwatch.model import Labels, Sample
>>> raw = snappy_decompress(encode_write_request([Sample(Labels.of("up", job="a"), 1.5, 1.0)]))
>>> cols = WriteRequestReader().read(raw)
>>> [str(x) for x in cols.labels], cols.t.tolist(), cols.v.tolist()
(['up{job="a"}'], [1.5], [1.0])
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from inferwatch._exceptions import LimitExceeded
from inferwatch.model import Labels

__all__ = ["Columns", "WriteRequestReader"]

_LEN1 = 0x0A  # field 1, length-delimited: a TimeSeries in a WriteRequest, a Label in a TimeSeries
_LEN2 = 0x12  # field 2, length-delimited: a Sample in a TimeSeries
_DOUBLE1 = 0x09  # field 1, 64-bit: Sample.value
_VARINT2 = 0x10  # field 2, varint: Sample.timestamp
_R8 = np.arange(8)
_R10 = np.arange(10)
_SHIFTS = (7 * _R10).astype(np.uint64)
_PAD = bytes(10)  # so that gathering 8 or 10 bytes at any sample never reads past the end


class _Unusual(Exception):
    """Valid protobuf, perhaps, but not the encoding the fast walk expects."""


@dataclass(frozen=True)
class Columns:
    """The samples of a request: label sets (shared objects), times in seconds, values."""

    labels: list[Labels]
    t: np.ndarray
    v: np.ndarray


def _varint(raw: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while shift < 64:
        b = raw[pos]  # IndexError past the end: the caller refuses the body
        n |= (b & 0x7F) << shift
        pos += 1
        if not b & 0x80:
            return n, pos
        shift += 7
    raise ValueError("protobuf: varint longer than 10 bytes")


def _skip(raw: bytes, pos: int, end: int) -> int:
    """The position after the field at ``pos``."""
    key, pos = _varint(raw, pos)
    return _after(raw, pos, key & 7, end)


def _after(raw: bytes, pos: int, wire: int, end: int) -> int:
    """The position after a field's value at ``pos`` (any wire type but groups)."""
    if wire == 0:
        pos = _varint(raw, pos)[1]
    elif wire == 1 or wire == 5:
        pos += 8 if wire == 1 else 4
    elif wire == 2:
        size, pos = _varint(raw, pos)
        pos += size
    else:
        raise ValueError(f"protobuf: unsupported wire type {wire}")
    if pos > end:
        raise ValueError("protobuf: a field runs past its message")
    return pos


def _usual_label(raw: bytes, pos: int, stop: int, end: int) -> tuple[str, str] | None:
    """The pair of the ``Label`` field at ``pos`` in the usual encoding (``0A n <name> 12 m <value>``,
    lengths under 128), else ``None``."""
    if stop > end or stop - pos < 6 or raw[pos + 2] != _LEN1:
        return None
    at = pos + 4 + raw[pos + 3]
    if at + 1 < stop and raw[at] == _LEN2 and at + 2 + raw[at + 1] == stop and raw[at + 1] < 0x80:
        return raw[pos + 4:at].decode(), raw[at + 2:stop].decode()
    return None


def _label_any(raw: bytes, pos: int, pairs: list[tuple[str, str]]) -> int:
    """Read the ``Label`` field at ``pos`` in any encoding into ``pairs``; return the position after it."""
    size, start = _varint(raw, pos + 1)
    stop = start + size
    if stop > len(raw):
        raise ValueError("protobuf: a Label runs past its end")
    kv = {n: raw[a:b] for n, w, a, b in _fields(raw, start, stop) if w == 2}
    pairs.append((kv.get(1, b"").decode(), kv.get(2, b"").decode()))
    return stop


class WriteRequestReader:
    """Reads ``WriteRequest`` bytes into :class:`Columns`, remembering label sets by their bytes."""

    def __init__(self, max_series: int = 200_000, label_limit: int = 0) -> None:
        self.max_series = max_series
        self.label_limit = label_limit
        """Most labels a series may have (``server.limits.label_limit``; 0: none): a longer label run
        is counted before it is decoded, and refused (``LimitExceeded``) without decoding it."""
        self._labels: dict[bytes, Labels] = {}
        # one Label field's bytes -> (name, value): label pairs repeat across series (job, instance,
        # the metric name), so a new series mostly reuses decoded, shared strings
        self._pairs: dict[bytes, tuple[str, str]] = {}

    def forget(self) -> None:
        """Forget every label set and pair remembered (after a refused request)."""
        self._labels.clear()
        self._pairs.clear()

    def read(self, raw: bytes) -> Columns:
        """The samples of one request (``ValueError`` or ``IndexError`` when malformed)."""
        if len(self._labels) > self.max_series or len(self._pairs) > self.max_series:
            self._labels.clear()  # forgotten all at once: a sender's series come back
            self._pairs.clear()
        try:
            labels, value_at, time_at, time_end = self._walk(raw)
            buf = np.frombuffer(raw + _PAD, dtype=np.uint8)
            return Columns(labels, _timestamps(buf, time_at, time_end) / 1000.0, _values(buf, value_at))
        except _Unusual:
            return _read_any(raw)

    def _labels_from(self, raw: bytes) -> Labels:
        """The label set encoded by consecutive ``Label`` fields (``ValueError`` when malformed)."""
        pairs: list[tuple[str, str]] = []
        known = self._pairs.get
        pos, end = 0, len(raw)
        while pos < end:
            stop = pos + 2 + raw[pos + 1]
            pair = known(raw[pos:stop]) or self._new_pair(raw, pos, stop, end)
            if pair is not None:
                pairs.append(pair)
                pos = stop
            else:  # a long field, an empty name or value: read in full
                pos = _label_any(raw, pos, pairs)
        return Labels(pairs)

    def _new_labels(self, raw: bytes, pos: int, stop: int) -> Labels | None:
        """The label set encoded by ``raw[pos:stop]`` when it is whole ``Label`` fields in the usual
        encoding, names strictly ascending (as remote-write senders must send them); else ``None``."""
        pairs: list[tuple[str, str]] = []
        append = pairs.append
        known = self._pairs.get
        prev = ""
        while pos < stop:
            # A cached field is whole, in the usual encoding, with a name and a value: bytes that
            # equal one need no other check (a longer length byte or another tag cannot match).
            nxt = pos + 2 + raw[pos + 1]
            pair = known(raw[pos:nxt])
            if pair is None:
                pair = self._new_pair(raw, pos, nxt, stop)
                if pair is None:
                    return None
            if pair[0] <= prev:  # out of order or repeated: the general reader sorts or refuses
                return None
            prev = pair[0]
            append(pair)
            pos = nxt
        return Labels.from_sorted(tuple(pairs)) if pos == stop else None

    def _new_pair(self, raw: bytes, pos: int, nxt: int, stop: int) -> tuple[str, str] | None:
        """The pair of a ``Label`` field not seen before, cached when usual (``None`` otherwise, and
        for an empty name or value, which the general reader handles)."""
        if raw[pos] != _LEN1 or raw[pos + 1] >= 0x80:
            return None
        pair = _usual_label(raw, pos, nxt, stop)
        if pair is None or not pair[0] or not pair[1]:
            return None
        self._pairs[raw[pos:nxt]] = pair
        return pair

    def _walk(self, raw: bytes) -> tuple[list[Labels], list[int], list[int], list[int]]:
        """Per sample: its labels, where its value lies (-1: absent, 0.0), where its timestamp lies."""
        cache = self._labels
        known = cache.get
        labels: list[Labels] = []
        value_at: list[int] = []
        time_at: list[int] = []
        time_end: list[int] = []
        n, pos = len(raw), 0
        while pos < n:
            if raw[pos] != _LEN1:
                pos = _skip(raw, pos, n)
                continue
            size = raw[pos + 1]
            start = pos + 2
            if size >= 0x80:
                size, start = _varint(raw, pos + 1)
            end = start + size
            if end > n:
                raise ValueError("protobuf: a TimeSeries runs past the end")
            # A series with one sample and a 6-byte timestamp, what senders send most: if the bytes
            # before that sample are a label run already seen, they are this series' labels (a
            # cached run is whole Label fields and the next byte is a Sample's tag).
            if size > 18 and raw[end - 7] == _VARINT2:
                if raw[end - 18] == _LEN2 and raw[end - 17] == 16 and raw[end - 16] == _DOUBLE1:
                    stop, at = end - 18, end - 15
                elif raw[end - 9] == _LEN2 and raw[end - 8] == 7:  # a value of 0 is left out
                    stop, at = end - 9, -1
                else:
                    stop = 0
                ls = None
                if stop:
                    key = raw[start:stop]
                    ls = known(key)
                    if ls is None:  # a new series: its labels read in one pass when usual
                        if self.label_limit and stop - start > _LONG_RUN * self.label_limit:
                            _count_labels(raw, start, stop, self.label_limit)
                        ls = self._new_labels(raw, start, stop)
                        if ls is not None:
                            cache[key] = ls
                if ls is not None:
                    labels.append(ls)
                    value_at.append(at)
                    time_at.append(end - 6)
                    time_end.append(end)
                    pos = end
                    continue
            q = start
            while q < end and raw[q] == _LEN1:  # the labels, one contiguous run of fields
                size = raw[q + 1]
                if size < 0x80:
                    q += 2 + size
                else:
                    size, q = _varint(raw, q + 1)
                    q += size
            if q > end:
                raise ValueError("protobuf: a Label runs past its TimeSeries")
            key = raw[start:q]
            ls = known(key)
            if ls is None:
                if self.label_limit and q - start > _LONG_RUN * self.label_limit:
                    _count_labels(raw, start, q, self.label_limit)
                ls = cache[key] = self._labels_from(key)
            while q < end:
                tag = raw[q]
                if tag == _LEN2:
                    size = raw[q + 1]
                    s = q + 2
                    q = s + size
                    if size < 2 or size >= 0x80 or q > end:
                        raise _Unusual
                    first = raw[s]
                    if first == _DOUBLE1 and size > 10 and raw[s + 9] == _VARINT2:
                        value_at.append(s + 1)
                        time_at.append(s + 10)
                    elif first == _VARINT2 and size > 1:
                        value_at.append(-1)
                        time_at.append(s + 1)
                    else:
                        raise _Unusual
                    time_end.append(q)
                    labels.append(ls)
                elif tag == _LEN1:
                    raise _Unusual  # a label after a sample
                else:
                    q = _skip(raw, q, end)
            pos = end
        return labels, value_at, time_at, time_end


_LONG_RUN = 64  # bytes a label: a run longer than this per allowed label is counted before it is read


def _count_labels(raw: bytes, pos: int, stop: int, limit: int) -> None:
    """Raise ``LimitExceeded`` if the run of ``Label`` fields in ``raw[pos:stop]`` holds over ``limit``
    of them (the fields are skipped by their lengths, not decoded: a million take a fraction of a second)."""
    n = 0
    while pos < stop:
        size, start = (raw[pos + 1], pos + 2) if raw[pos + 1] < 0x80 else _varint(raw, pos + 1)
        pos = start + size
        n += 1
    if n > limit:
        raise LimitExceeded("label_limit", (
            f"label_limit exceeded (number of labels: {n}, limit: {limit}; the series was not decoded)"))


def _values(buf: np.ndarray, value_at: list[int]) -> np.ndarray:
    at = np.array(value_at, dtype=np.int64)
    present = at >= 0
    v: np.ndarray = buf[np.where(present, at, 0)[:, None] + _R8].view("<f8")[:, 0]
    if not present.all():
        v[~present] = 0.0
    return v


def _timestamps(buf: np.ndarray, time_at: list[int], time_end: list[int]) -> np.ndarray:
    """Milliseconds as float64, from the varints at ``[time_at, time_end)`` (``_Unusual`` if not one)."""
    at = np.array(time_at, dtype=np.int64)
    width = np.array(time_end, dtype=np.int64) - at
    if at.shape[0] and (width.min() < 1 or width.max() > 10):
        raise _Unusual
    raw = buf[at[:, None] + _R10]
    inside = width[:, None] > _R10
    last = (width - 1)[:, None] == _R10
    more = (raw & 0x80) != 0  # a varint's bytes all carry the continuation bit but its last
    if not np.array_equal(more & inside, inside & ~last):
        raise _Unusual
    parts = (raw.astype(np.uint64) & np.uint64(0x7F)) << _SHIFTS
    parts[~inside] = 0
    ms: np.ndarray = parts.sum(axis=1, dtype=np.uint64).view(np.int64).astype(np.float64)
    return ms


def _fields(raw: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """``(number, wire type, start, end)`` of each field in ``raw[pos:end]`` (a varint's own bytes)."""
    while pos < end:
        key, pos = _varint(raw, pos)
        wire = key & 7
        start = _varint(raw, pos)[1] if wire == 2 else pos
        pos = _after(raw, pos, wire, end)
        yield key >> 3, wire, start, pos


def _read_any(raw: bytes) -> Columns:
    """The general walk: any field order, absent fields as zero (slower; for unusual senders)."""
    labels: list[Labels] = []
    ts: list[float] = []
    vs: list[float] = []
    for number, wire, start, end in _fields(raw, 0, len(raw)):
        if number != 1 or wire != 2:
            continue
        pairs: list[tuple[str, str]] = []
        points: list[tuple[float, float]] = []
        for n, w, a, b in _fields(raw, start, end):
            if n == 1 and w == 2:
                kv = {k: raw[c:d] for k, x, c, d in _fields(raw, a, b) if x == 2}
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
    for n, w, a, _ in _fields(raw, start, end):
        if n == 1 and w == 1:
            value = struct.unpack_from("<d", raw, a)[0]
        elif n == 2 and w == 0:
            ms = _varint(raw, a)[0]
            ms = ms - (1 << 64) if ms >= 1 << 63 else ms
    return ms / 1000.0, value
