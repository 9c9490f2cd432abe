"""The remote-write reader's batch path (every series one sample, new label runs decoded together)
against the general walk, on random and edge-case requests."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch._exceptions import LimitExceeded
from inferwatch.formats.columnar import WriteRequestReader
from inferwatch.formats.columnar._wire import read_any
from inferwatch.model import FreshLabels, Labels
from inferwatch.store._new_series import NewSeries

MS = 1_700_000_000_000  # a 6-byte varint, as every sender's timestamps now
_Request = list[tuple[list[tuple[str, str]], float]]  # per series: its labels as sent, its value


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(out) + bytes([n])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _label(name: str, value: str) -> bytes:
    # proto3 leaves an empty string out, as Prometheus does
    return _field(1, (_field(1, name.encode()) if name else b"")
                  + (_field(2, value.encode()) if value else b""))


def _sample(ms: int, v: float) -> bytes:
    return _field(2, (b"\x09" + struct.pack("<d", v) if v else b"") + b"\x10" + _varint(ms))


def _series(pairs: list[tuple[str, str]], *samples: bytes, between: bytes = b"") -> bytes:
    return _field(1, b"".join(_label(k, v) for k, v in pairs) + between + b"".join(samples))


def _oracle(body: bytes) -> tuple[list[Labels], list[float], list[float]] | str:
    """What the general walk reads (or the error it raises)."""
    try:
        cols = read_any(body)
    except ValueError as exc:
        return str(exc)
    return cols.labels, cols.t.tolist(), cols.v.tolist()


def _read(reader: WriteRequestReader, body: bytes) -> tuple[list[Labels], list[float], list[float]] | str:
    try:
        cols = reader.read(body)
    except ValueError as exc:
        return str(exc)
    if isinstance(cols.labels, FreshLabels):
        _check_numbered(cols.labels)
    return cols.labels, cols.t.tolist(), cols.v.tolist()


def _check_numbered(fresh: FreshLabels) -> None:
    """A reader's FreshLabels keep their promise: distinct sets, their pairs numbered as the store would."""
    assert len(set(fresh)) == len(fresh)
    assert len(set(fresh.pairs)) == len(fresh.pairs)
    assert fresh.sizes.tolist() == [len(ls) for ls in fresh]
    assert [fresh.pairs[c] for c in fresh.codes.tolist()] == [p for ls in fresh for p in ls.items_tuple]
    plain = NewSeries(list(fresh), 1)
    assert set(plain.pairs) == set(fresh.pairs)


_names = st.sampled_from(["__name__", "a", "b", "code", "instance", "job", "zz", "é", "x" * 130])
_edge_values = ["", "200", "201", "node", "ends in NUL\x00", "v" * 140, "v" * 139 + "w"]
_values = st.one_of(st.sampled_from(_edge_values), st.text(max_size=40))
_pairs = st.lists(st.tuples(_names, _values), max_size=7)
_ordered = _pairs.flatmap(lambda p: st.sampled_from([sorted(p), p, sorted(p, reverse=True)]))
_request = st.lists(st.tuples(_ordered, st.sampled_from([0.0, 1.5, -2.0])), max_size=12)


@settings(max_examples=100, deadline=None)
@given(_request, _request)
def test_one_sample_requests_read_as_the_general_walk_reads_them(first: _Request, second: _Request) -> None:
    # unsorted labels, a repeated name (refused with the general walk's error), empty values (left out),
    # unicode, a NUL at a value's end, fields and runs past 127 and 256 bytes, new and known series mixed
    reader = WriteRequestReader()
    for series in (first, second, first + second, second):
        body = b"".join(_series(pairs, _sample(MS + k, v)) for k, (pairs, v) in enumerate(series))
        assert _read(reader, body) == _oracle(body)


def test_new_and_known_series_in_one_request_and_a_new_one_twice() -> None:
    reader = WriteRequestReader()
    known = [("__name__", "up"), ("job", "a")]
    got = reader.read(_series(known, _sample(MS, 1.0))).labels
    new = [("__name__", "up"), ("job", "b")]
    body = b"".join([_series(new, _sample(MS, 1.0)), _series(known, _sample(MS + 1, 2.0)),
                     _series(new, _sample(MS + 2, 3.0))])
    labels = reader.read(body).labels
    assert labels == [Labels.of("up", job="b"), Labels.of("up", job="a"), Labels.of("up", job="b")]
    assert labels[1] is got[0]  # a known series: the object remembered
    assert labels[0] is labels[2]  # a new series twice: one label set
    assert reader.read(body).labels[0] is labels[0]


def test_a_sender_s_first_request_each_series_a_label_or_two_from_the_one_before() -> None:
    body = b"".join(_series([("__name__", "bench_requests_total"), ("code", "200"),
                             ("instance", f"host-{k % 50}"), ("job", "bench"), ("route", f"/r{k // 50}")],
                            _sample(MS, float(k))) for k in range(2000))
    reader = WriteRequestReader()
    assert _read(reader, body) == _oracle(body)
    assert isinstance(WriteRequestReader().read(body).labels, FreshLabels)
    assert not isinstance(reader.read(body).labels, FreshLabels)  # known now
    assert reader.read(body).labels[1999] == Labels.of("bench_requests_total", code="200", instance="host-49",
                                                       job="bench", route="/r39")


def test_a_request_of_more_series_than_one_block() -> None:
    from inferwatch.formats.columnar._label_runs import BLOCK

    body = b"".join(_series([("__name__", "m"), ("k", str(k))], _sample(MS, 1.0)) for k in range(BLOCK + 5))
    reader = WriteRequestReader()
    labels = reader.read(body).labels
    assert labels == _oracle(body)[0]
    assert labels[BLOCK + 4] == Labels.of("m", k=str(BLOCK + 4))
    assert isinstance(labels, FreshLabels)  # numbered across the blocks
    _check_numbered(labels)
    assert reader.read(body).labels[BLOCK] is labels[BLOCK]


def test_more_labels_than_the_batch_split_takes_and_runs_longer_than_a_row() -> None:
    many = [("__name__", "m")] + [(f"l{k:03d}", f"v{k}") for k in range(70)]
    wide = [("__name__", "m"), ("long", "w" * 300)]
    body = _series(many, _sample(MS, 1.0)) + _series(wide, _sample(MS, 2.0))
    reader = WriteRequestReader()
    first = reader.read(body).labels
    assert first == [Labels(many), Labels(wide)]
    assert [a is b for a, b in zip(reader.read(body).labels, first, strict=True)] == [True, True]


def test_series_of_several_samples_and_a_field_before_the_sample_go_the_series_by_series_way() -> None:
    reader = WriteRequestReader()
    pairs = [("__name__", "m"), ("job", "j")]
    several = _series(pairs, _sample(MS, 1.0), _sample(MS + 1000, 2.0))
    assert _read(reader, several) == _oracle(several)
    assert reader.read(several).t.tolist() == [MS / 1000, MS / 1000 + 1]
    other_field = _series(pairs, _sample(MS + 2000, 3.0), between=b"\x28\x01")  # field 5, a varint: skipped
    for _ in range(20):  # past the series-by-series walks, back to the batch path: the same answers
        assert _read(reader, other_field) == _oracle(other_field)
        assert _read(reader, several) == _oracle(several)


def test_a_new_series_over_the_label_limit_is_refused_before_it_is_decoded() -> None:
    reader = WriteRequestReader(label_limit=3)
    body = _series([("__name__", "m")] + [(f"l{k}", "v" * 100) for k in range(5)], _sample(MS, 1.0))
    with pytest.raises(LimitExceeded, match="number of labels: 6, limit: 3"):
        reader.read(body)


def test_a_repeated_name_is_refused_in_a_batch_of_good_series() -> None:
    good = [_series([("__name__", "m"), ("k", str(k))], _sample(MS, 1.0)) for k in range(50)]
    bad = _series([("__name__", "m"), ("k", "1"), ("k", "2")], _sample(MS, 1.0))
    with pytest.raises(ValueError, match="duplicate label name"):
        WriteRequestReader().read(b"".join([*good[:25], bad, *good[25:]]))
