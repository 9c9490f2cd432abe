"""Remote-write 1.0's ``WriteRequest``, read from its bytes straight into columns.

Wire format (prometheus/prompb): a ``WriteRequest`` is repeated ``TimeSeries``
(field 1; metadata, field 3, is skipped); a ``TimeSeries`` is repeated
``Label`` (field 1: name 1, value 2) then repeated ``Sample`` (field 2: value
1 as a double, timestamp 2 as an int64 varint of milliseconds; proto3 leaves
out a value of 0); exemplars (3) and native histograms (4) are skipped.

A sender repeats its series in every request, byte for byte, so the bytes of
a series' labels are the key of its :class:`~inferwatch.model.Labels`: a
known series costs one dict lookup, and the same ``Labels`` object comes back
(the store then finds its id by identity). When every series carries one
sample in the usual encoding (what senders send most), a short Python walk
finds where the series lie and numpy does the rest: it cuts every label run
into a key, checks the samples' shape and decodes their times and values; the
runs not in the cache are decoded together (:mod:`._label_runs`). Other
requests take a walk that notes where each sample lies, series by series. An
encoding valid but not the usual one (a label after a sample, a sample's
fields in another order or with a field added, a sample at time 0) is read
again by a general, slower walk over the fields.

>>> from inferwatch.edge import encode_write_request, snappy_decompress
>>> from inferwatch.model import Labels, Sample
>>> raw = snappy_decompress(encode_write_request([Sample(Labels.of("up", job="a"), 1.5, 1.0)]))
>>> cols = WriteRequestReader().read(raw)
>>> [str(x) for x in cols.labels], cols.t.tolist(), cols.v.tolist()
(['up{job="a"}'], [1.5], [1.0])
"""

from __future__ import annotations

import contextlib
from itertools import repeat
from operator import is_

import numpy as np

from inferwatch._exceptions import LimitExceeded
from inferwatch.formats.columnar._label_runs import decode_runs, padded, row_bytes
from inferwatch.formats.columnar._samples import one_sample, series_bounds, stamps6, timestamps, values
from inferwatch.formats.columnar._wire import Columns, Unusual, fields, read_any, skip, varint
from inferwatch.model import FreshLabels, Labels

__all__ = ["Columns", "WriteRequestReader"]

_LEN1 = 0x0A  # field 1, length-delimited: a TimeSeries in a WriteRequest, a Label in a TimeSeries
_LEN2 = 0x12  # field 2, length-delimited: a Sample in a TimeSeries
_DOUBLE1 = 0x09  # field 1, 64-bit: Sample.value
_VARINT2 = 0x10  # field 2, varint: Sample.timestamp
_LONG_RUN = 64  # bytes a label: a run longer than this per allowed label is counted before it is read
_WALKS = 16  # requests read by the series-by-series walk after one that was not all one-sample series


class _NotOneSample(Exception):
    """The bytes before a series' last sample are not its labels: it has more samples, or other fields."""


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
        self._walks = 0  # requests left to read series by series (a sender of several samples a series)
        self.decoded = 0
        """Label sets decoded so far (each new to this reader: the long-lived objects a request made)."""

    def forget(self) -> None:
        """Forget every label set and pair remembered (after a refused request)."""
        self._labels.clear()
        self._pairs.clear()

    def read(self, raw: bytes) -> Columns:
        """The samples of one request (``ValueError`` or ``IndexError`` when malformed)."""
        if len(self._labels) > self.max_series or len(self._pairs) > self.max_series:
            self._labels.clear()  # forgotten all at once: a sender's series come back
            self._pairs.clear()
        buf = padded(raw)
        try:
            if self._walks <= 0:
                try:
                    return self._read_one_sample(raw, buf)
                except _NotOneSample:
                    self._walks = _WALKS
            self._walks -= 1
            labels, value_at, time_at, time_end, new_at, new_runs = self._walk(raw)
            if new_runs:
                self._resolve(labels, new_at, new_runs)
            return Columns(labels, timestamps(buf, time_at, time_end) / 1000.0, values(buf, value_at))
        except Unusual:
            return read_any(raw)

    def _read_one_sample(self, raw: bytes, buf: np.ndarray) -> Columns:
        """A request of one-sample series, the series' label runs cut and looked up all at once."""
        bounds = series_bounds(raw)
        starts, ends = np.array(bounds[0], dtype=np.int64), np.array(bounds[1], dtype=np.int64)
        shape = one_sample(buf, starts, ends)
        if shape is None:
            raise _NotOneSample
        stops, value_at = shape
        keys = row_bytes(raw, buf, starts, stops)
        labels = list(map(self._labels.get, keys))
        new = np.flatnonzero(np.fromiter(map(is_, labels, repeat(None)), dtype=bool, count=len(labels)))
        if new.shape[0]:  # (not ``None in labels``: that calls Labels.__eq__ on every one)
            labels = self._resolve_runs(raw, buf, labels, keys, starts, stops, new)
        return Columns(labels, stamps6(buf, ends) / 1000.0, values(buf, value_at))  # type: ignore[arg-type]

    def _resolve_runs(self, raw: bytes, buf: np.ndarray, labels: list[Labels | None], keys: list[bytes],
                      starts: np.ndarray, stops: np.ndarray, new: np.ndarray) -> list[Labels | None]:
        """``labels`` with the label runs not in the cache (``None``, at ``new``) decoded as one batch (a run
        twice in the request is decoded twice, and the cache keeps one of the two label sets for both).
        A request of new series only, each once, comes back as :class:`FreshLabels`, its pairs numbered."""
        if self.label_limit:
            for k in new[stops[new] - starts[new] > _LONG_RUN * self.label_limit].tolist():
                _count_labels(raw, int(starts[k]), int(stops[k]), self.label_limit)
        decoded, other, numbered = decode_runs(raw, buf, starts[new], stops[new], self._pairs)
        self.decoded += len(decoded)
        runs = keys if new.shape[0] == len(keys) else list(map(keys.__getitem__, new.tolist()))
        for k in other:
            decoded[k] = self._labels_from(_whole_labels(runs[k], _NotOneSample))
        cache = self._labels
        size = len(cache)
        cache.update(zip(runs, decoded, strict=True))
        if new.shape[0] == len(labels):  # every series new: a sender's first request
            if not other and len(cache) == size + len(runs):  # each once: the usual encoding is canonical
                return FreshLabels(decoded, *numbered)  # type: ignore[return-value]  # (no None in it)
            labels[:] = map(cache.__getitem__, keys)
        else:
            for k in new.tolist():
                labels[k] = cache[keys[k]]
        return labels

    def _resolve(self, labels: list[Labels], at: list[int], runs: list[bytes]) -> None:
        """Put the label sets of the series new to this reader in their places ``at`` (``None`` there):
        the distinct label ``runs`` decoded as one batch, any unusual one by the general reader."""
        cache = self._labels
        distinct = list(dict.fromkeys(runs))
        blob = b"".join(distinct)
        ends = np.cumsum(np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct)))
        starts = np.concatenate([np.zeros(1, dtype=np.int64), ends[:-1]])
        decoded, other, _ = decode_runs(blob, padded(blob), starts, ends, self._pairs)
        self.decoded += len(decoded)
        for k in other:
            decoded[k] = self._labels_from(_whole_labels(distinct[k], Unusual))
        cache.update(zip(distinct, decoded, strict=True))
        for k, run in zip(at, runs, strict=True):
            labels[k] = cache[run]

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

    def _walk(self, raw: bytes
              ) -> tuple[list[Labels], list[int], list[int], list[int], list[int], list[bytes]]:
        """Per sample: its labels, where its value lies (-1: absent, 0.0), where its timestamp lies; the
        samples whose labels are new (``None`` in the first list) and their label runs."""
        known = self._labels.get
        new_at: list[int] = []  # where a series new to this reader has its labels left as None
        new_runs: list[bytes] = []  # and its label run (decoded with the others by ``_resolve``)
        labels: list[Labels] = []
        value_at: list[int] = []
        time_at: list[int] = []
        time_end: list[int] = []
        n, pos = len(raw), 0
        while pos < n:
            if raw[pos] != _LEN1:
                pos = skip(raw, pos, n)
                continue
            size = raw[pos + 1]
            start = pos + 2
            if size >= 0x80:
                size, start = varint(raw, pos + 1)
            end = start + size
            if end > n:
                raise ValueError("protobuf: a TimeSeries runs past the end")
            # A series with one sample and a 6-byte timestamp: if the bytes before that sample are a
            # label run already seen, they are this series' labels (a cached run is whole Label fields
            # and the next byte is a Sample's tag). A new one is read below, its labels field by field.
            if size > 18 and raw[end - 7] == _VARINT2:
                if raw[end - 18] == _LEN2 and raw[end - 17] == 16 and raw[end - 16] == _DOUBLE1:
                    ls, at = known(raw[start:end - 18]), end - 15
                elif raw[end - 9] == _LEN2 and raw[end - 8] == 7:  # a value of 0 is left out
                    ls, at = known(raw[start:end - 9]), -1
                else:
                    ls = None
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
                    size, q = varint(raw, q + 1)
                    q += size
            if q > end:
                raise ValueError("protobuf: a Label runs past its TimeSeries")
            key = raw[start:q]
            ls = known(key)
            if ls is None and self.label_limit and q - start > _LONG_RUN * self.label_limit:
                _count_labels(raw, start, q, self.label_limit)
            while q < end:
                tag = raw[q]
                if tag == _LEN2:
                    size = raw[q + 1]
                    s = q + 2
                    q = s + size
                    if size < 2 or size >= 0x80 or q > end:
                        raise Unusual
                    first = raw[s]
                    if first == _DOUBLE1 and size > 10 and raw[s + 9] == _VARINT2:
                        value_at.append(s + 1)
                        time_at.append(s + 10)
                    elif first == _VARINT2 and size > 1:
                        value_at.append(-1)
                        time_at.append(s + 1)
                    else:
                        raise Unusual
                    time_end.append(q)
                    if ls is None:
                        new_at.append(len(labels))
                        new_runs.append(key)
                    labels.append(ls)  # type: ignore[arg-type]  # None until _resolve
                elif tag == _LEN1:
                    raise Unusual  # a label after a sample
                else:
                    q = skip(raw, q, end)
            pos = end
        return labels, value_at, time_at, time_end, new_at, new_runs


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
    size, start = varint(raw, pos + 1)
    stop = start + size
    if stop > len(raw):
        raise ValueError("protobuf: a Label runs past its end")
    kv = {n: raw[a:b] for n, w, a, b in fields(raw, start, stop) if w == 2}
    pairs.append((kv.get(1, b"").decode(), kv.get(2, b"").decode()))
    return stop


def _whole_labels(run: bytes, otherwise: type[Exception]) -> bytes:
    """``run`` if it is whole ``Label`` fields, else raise ``otherwise``."""
    q, end = 0, len(run)
    with contextlib.suppress(IndexError, ValueError):
        while q < end and run[q] == _LEN1:
            size, q = varint(run, q + 1)
            q += size
    if q != end:
        raise otherwise
    return run


def _count_labels(raw: bytes, pos: int, stop: int, limit: int) -> None:
    """Raise ``LimitExceeded`` if the run of ``Label`` fields in ``raw[pos:stop]`` holds over ``limit``
    of them (the fields are skipped by their lengths, not decoded: a million take a fraction of a second)."""
    n = 0
    while pos < stop:
        size, start = (raw[pos + 1], pos + 2) if raw[pos + 1] < 0x80 else varint(raw, pos + 1)
        pos = start + size
        n += 1
    if n > limit:
        raise LimitExceeded("label_limit", (
            f"label_limit exceeded (number of labels: {n}, limit: {limit}; the series was not decoded)"))
