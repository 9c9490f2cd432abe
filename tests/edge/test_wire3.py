"""Upload format 3: round trips (exact, bit for bit), properties, sizes and errors naming the byte."""

from __future__ import annotations

import gzip
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch import InputError
from inferwatch.edge import (
    Batch,
    UnknownSeries,
    decode_batch,
    decode_columns,
    encode_columns,
    encode_compact,
)
from inferwatch.edge._targets import column_header
from inferwatch.model import STALE_NAN, Labels, MetricKind, Sample, is_stale_nan

T0 = 1_796_000_000.0
A, B = Labels.of("temp_celsius", sensor="a"), Labels.of("req_total", code="200")


def _bits(v: float) -> bytes:
    return struct.pack(">d", v)


def _decode(body: bytes, known: dict[int, Labels] | None = None) -> Batch:
    return decode_batch(body, max_bytes=1 << 24, max_samples=100_000,
                        known=lambda spool, sid: (known or {}).get(sid))


def _body(samples: list[Sample], ids: list[int], defs: dict[int, Labels], **head: object) -> bytes:
    batch = Batch("", "5f3a:1-9", tuple(samples), 300.0)
    header = {**column_header(batch, defs, {"req": MetricKind.COUNTER, "req_total": MetricKind.COUNTER},
                              15.0, 1200.0), **head}
    return encode_columns(header, ids, samples)


def test_round_trip_with_kinds_special_values_and_a_dictionary() -> None:
    samples = [Sample(A, T0, 41.5), Sample(B, T0, 19.0), Sample(A, T0 + 15, math.nan),
               Sample(B, T0 + 15, 44.0), Sample(A, T0 + 30, STALE_NAN), Sample(B, T0 + 30.5, 1529.0),
               Sample(A, T0 + 45, -math.inf), Sample(A, T0 + 60, -0.0), Sample(A, T0 + 75, 1e-300)]
    ids = [7 if s.labels == A else 9 for s in samples]
    got = _decode(_body(samples, ids, {7: A, 9: B}))
    assert (got.version, got.batch_id, got.heartbeat_s, got.step, got.heartbeat_max) == (3, "5f3a:1-9", 300.0,
                                                                                         15.0, 1200.0)
    assert got.kinds == {7: "g", 9: "c"} and dict(got.defs) == {7: A, 9: B}
    assert [(s.labels, s.t) for s in got.samples] == sorted([(s.labels, s.t) for s in samples],
                                                            key=lambda x: (x[0] != A, x[1]))
    by = {(s.labels, s.t): s.v for s in got.samples}
    for s in samples:
        assert _bits(by[(s.labels, s.t)]) == _bits(s.v)  # bit for bit: NaN, the stale marker, -0.0
    assert is_stale_nan(by[(A, T0 + 30)])
    # the next batch names the ids only; the receiver supplies the labels it kept
    again = _decode(_body(samples[:2], [7, 9], {}), known={7: A, 9: B})
    assert [s.labels for s in again.samples] == [A, B] and not again.defs
    with pytest.raises(UnknownSeries) as exc:
        _decode(_body(samples[:2], [7, 9], {}), known={7: A})
    assert exc.value.ids == [9]


values = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**12, 10**12).map(float) | \
    st.decimals(-10**6, 10**6, places=3, allow_nan=False, allow_infinity=False).map(float)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 10**7), values), min_size=1, max_size=120),
       st.booleans(), st.booleans())
def test_any_batch_round_trips_exactly(points: list[tuple[int, int, float]], ordered: bool,
                                       by_instant: bool) -> None:
    # property: whatever the times (ms, any order across series, repeats; or each series' times
    # ascending, the by-instant layout) and values, decode(encode) is the same samples, bit for bit,
    # per series in order, in either layout
    if ordered:
        points = sorted(points, key=lambda p: p[1])
    labels = [Labels.of("s", i=str(i)) for i in range(5)]
    samples, ids = [], []
    for sid, ms, v in points:
        samples.append(Sample(labels[sid], T0 + ms / 1000.0, v))
        ids.append(sid + 1)
    header = {"b": "x:1-2", "hb": 300, "hm": 300, "st": 0,
              "defs": {str(i + 1): {"l": labels[i].to_dict()} for i in set(ids_ - 1 for ids_ in ids)}}
    body = encode_columns(header, ids, samples, by_instant=by_instant)
    got = _decode(body)
    per: dict[int, list[float]] = {}
    for sid, s in zip(ids, samples, strict=True):
        per.setdefault(sid, []).append(round(s.t * 1000))
    ascending = all(ts == sorted(ts) for ts in per.values())  # true whenever `ordered`
    assert ('"ly":1' in _raw(body).decode("latin-1")) == (by_instant and ascending)
    want: dict[Labels, list[tuple[float, bytes]]] = {}
    for s in samples:
        want.setdefault(s.labels, []).append((s.t, _bits(s.v)))
    have: dict[Labels, list[tuple[float, bytes]]] = {}
    for s in got.samples:
        have.setdefault(s.labels, []).append((s.t, _bits(s.v)))
    assert have == want


def test_a_steady_device_costs_a_fraction_of_version_2() -> None:
    # 200 series x 20 rounds at 15 s: counters of whole events, gauges with two decimals
    labels = [Labels.of("x_total" if i % 2 else "g", i=str(i)) for i in range(200)]
    samples = [Sample(ls, T0 + 15 * k, float(k * (i + 3)) if i % 2 else round(20 + 0.01 * ((i * k) % 7), 2))
               for k in range(20) for i, ls in enumerate(labels)]
    ids = [int(s.labels["i"]) + 1 for s in samples]
    batch = Batch("", "5f3a:1-4000", tuple(samples), 300.0)
    v2 = encode_compact(batch, ids, {})
    v3 = encode_columns({"b": "5f3a:1-4000", "hb": 300, "hm": 300, "st": 15}, ids, samples)
    assert len(v3) < 0.6 * len(v2), (len(v3), len(v2))


def _raw(body: bytes) -> bytes:
    return gzip.decompress(body)


@pytest.mark.parametrize(("mangle", "error"), [
    (lambda raw: raw[:-3], "truncated"),
    (lambda raw: raw + b"\x00", "bytes after the last column"),
    (lambda raw: raw[:4] + b"\x05{bad}" + raw[4 + 1 + raw[4]:], "body.header: not JSON"),
])
def test_damaged_bodies_are_400s_naming_where(mangle, error: str) -> None:  # type: ignore[no-untyped-def]
    body = _body([Sample(A, T0, 1.5), Sample(A, T0 + 15, 2.5)], [1, 1], {1: A})
    bad = gzip.compress(mangle(_raw(body)))
    with pytest.raises(InputError) as exc:
        _decode(bad)
    assert error in str(exc.value), str(exc.value)


def test_the_by_instant_layout_is_smaller_on_a_sparse_batch_and_the_old_one_still_reads() -> None:
    # a deadband's batch: 300 series, each read at one or two of four instants
    import random

    rng = random.Random(5)
    labels = [Labels.of("g", i=str(i)) for i in range(300)]
    samples = [Sample(ls, T0 + 15 * k, float(rng.randint(1, 99) * 1000)) for k in range(4)
               for ls in labels if rng.random() < 0.15]
    ids = [int(s.labels["i"]) + 1 for s in samples]
    known = {i + 1: ls for i, ls in enumerate(labels)}  # the dictionary went in an earlier batch
    head = {"b": "x:1-9", "hb": 300, "hm": 300, "st": 15}
    new, old = (encode_columns(head, ids, samples, by_instant=b) for b in (True, False))
    assert '"ly":1' in _raw(new).decode("latin-1") and '"ly"' not in _raw(old).decode("latin-1")
    assert _decode(new, known).samples == _decode(old, known).samples  # an older agent's: read the same
    assert len(new) < 0.95 * len(old), (len(new), len(old))
    # a stepped clock (a series' times going back) keeps the by-series layout: its order is kept
    back = [Sample(A, T0 + 30, 1.0), Sample(A, T0, 2.0)]
    body = encode_columns({"b": "x:1-2", "hb": 300, "hm": 300, "st": 15}, [1, 1], back)
    assert '"ly"' not in _raw(body).decode("latin-1")
    assert [(s.t, s.v) for s in _decode(body, known={1: A}).samples] == [(T0 + 30, 1.0), (T0, 2.0)]


def test_header_fields_are_checked() -> None:
    body = encode_columns({"b": "x:1-1", "hb": 300, "hm": 300, "st": 15, "ly": 2}, [1], [Sample(A, T0, 1.0)],
                          by_instant=False)
    with pytest.raises(InputError, match=r"body.header.ly: expected 0 or 1 \(the layout\), got 2"):
        _decode(body)
    body = _body([Sample(A, T0, 1.5)], [1], {1: A}, hb=-1)
    with pytest.raises(InputError, match=r"body.header.hb: expected a positive number"):
        _decode(body)
    body = encode_columns({"b": "x:1-1", "hb": 300, "hm": 300, "st": 15, "defs": {"1": {"l": A.to_dict(),
                                                                                      "k": "z"}}},
                          [1], [Sample(A, T0, 1.0)])
    with pytest.raises(InputError, match=r'body.header.defs.1.k: expected "g" or "c"'):
        _decode(body)
    with pytest.raises(InputError, match="more than 1 samples"):
        decode_batch(_body([Sample(A, T0, 1.5), Sample(A, T0 + 15, 2.5)], [1, 1], {1: A}), max_bytes=1 << 20,
                     max_samples=1)


def test_decode_columns_is_public_for_tools() -> None:
    raw = _raw(_body([Sample(A, T0, 1.5)], [1], {1: A}))
    header, defs, pairs, missing = decode_columns(raw, 10, lambda spool, sid: None)
    assert header["b"] == "5f3a:1-9" and defs == {1: (A, "g")} and pairs[0][1].v == 1.5 and not missing


def test_rounded_gauges_go_as_small_integers() -> None:
    # values the deadband rounded within the band: multiples of 10**5 cost a byte or two each
    vals = [12300000.0, 12400000.0, 12300000.0, 9800000.0, 123400000000.0]
    samples = [Sample(A, T0 + 15 * i, v) for i, v in enumerate(vals)]
    raw = _raw(_body(samples, [1] * len(vals), {1: A}))
    _, _, pairs, _ = decode_columns(raw, 10, lambda spool, sid: None)
    assert [s.v for _, s in pairs] == vals
    # mode 16 + 5, then zigzag varints of 123, +1, -1, -25, ...: two bytes, then one each
    assert bytes([16 + 5, 246, 1, 2, 1, 49]) in raw
