"""The wire codecs: snappy, remote-write protobuf, and the ingest format (with its errors)."""

from __future__ import annotations

import gzip
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch import InputError
from inferwatch.edge import (
    Batch,
    UnknownSeries,
    decode_batch,
    decode_write_request,
    encode_batch,
    encode_compact,
    encode_write_request,
)
from inferwatch.formats._snappy_pure import compress, decompress
from inferwatch.model import STALE_NAN, Labels, Sample, is_stale_nan


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000) | st.text(alphabet="ab{}=,", max_size=3000).map(str.encode))
def test_snappy_round_trip(data: bytes) -> None:
    assert decompress(compress(data)) == data


def test_snappy_compresses_repetition_and_refuses_corruption() -> None:
    data = b'up{job="camera",instance="cam-1"} 1\n' * 200
    packed = compress(data)
    assert len(packed) < len(data) // 10
    with pytest.raises(ValueError):
        decompress(packed[:-3])
    with pytest.raises(ValueError):
        decompress(b"\x05\x02\xff\xff")  # a copy before any output


def test_snappy_decodes_the_reference_encoding() -> None:
    # "Wikipedia" example of the format description: literal then 1-byte-offset copies
    stream = bytes([0x0A, 0x0C]) + b"abcd" + bytes([0x01 | (6 - 4) << 2, 4])  # 'abcd' + copy 6 from 4 back
    assert decompress(b"\x0a" + stream[1:]) == b"abcdabcdab"


def test_remote_write_round_trip_with_special_values() -> None:
    a, b = Labels.of("temp", sensor="x"), Labels.of("up")
    samples = [Sample(a, 1700000000.5, 41.5), Sample(b, 1700000000.0, 1.0),
               Sample(a, 1700000015.0, STALE_NAN), Sample(b, 1600000000.0, -math.inf)]
    body = encode_write_request(samples, extra=Labels({"device": "cam-1"}))
    got = decode_write_request(body, max_bytes=1 << 20)
    assert [(str(s.labels), s.t) for s in got] == [
        ('temp{device="cam-1",sensor="x"}', 1700000000.5), ('temp{device="cam-1",sensor="x"}', 1700000015.0),
        ('up{device="cam-1"}', 1600000000.0), ('up{device="cam-1"}', 1700000000.0)]
    assert got[0].v == 41.5 and is_stale_nan(got[1].v) and got[2].v == -math.inf
    with pytest.raises(ValueError, match="more than 10 bytes"):
        decode_write_request(encode_write_request(samples), max_bytes=10)


def _doc(batch: Batch) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(gzip.decompress(encode_batch(batch)))
    return doc


def test_ingest_format_round_trip() -> None:
    ls = Labels.of("temp", sensor="a")
    samples = (Sample(ls, 1700000000.0, 1.5), Sample(ls, 1700000015.0, math.nan),
               Sample(ls, 1700000030.0, STALE_NAN), Sample(Labels.of("x"), 1700000030.0, math.inf))
    body = encode_batch(Batch("cam-1", "s:1-4", samples, 300.0))
    assert body == encode_batch(Batch("cam-1", "s:1-4", samples, 300.0))  # deterministic: a retry is the same
    assert _doc(Batch("cam-1", "s:1-4", samples, 300.0))["series"][0]["t"] == [1700000000000, 15000, 15000]
    got = decode_batch(body, max_bytes=1 << 20, max_samples=10)
    assert (got.device, got.batch_id, got.heartbeat_s) == ("cam-1", "s:1-4", 300.0)
    assert [(s.labels, s.t) for s in got.samples] == [(s.labels, s.t) for s in samples]
    assert got.samples[0].v == 1.5 and math.isnan(got.samples[1].v) and not is_stale_nan(got.samples[1].v)
    assert is_stale_nan(got.samples[2].v) and got.samples[3].v == math.inf


@pytest.mark.parametrize(("change", "error"), [
    (lambda d: d.pop("device"), "body: missing field 'device'"),
    (lambda d: d.update(version=3), 'body.version: expected 1 (or "v": 2), got 3'),
    (lambda d: d["series"][0].update(t=[1.5]), "body.series[0].t[0]: 1.5 is not an integer of milliseconds"),
    (lambda d: d["series"][0].update(v=[1, 2]), "body.series[0]: 1 timestamps but 2 values"),
    (lambda d: d["series"][0]["labels"].update({"bad-name": "x"}), "body.series[0].labels: 'bad-name'"),
    (lambda d: d.update(heartbeat_s=-1), "body.heartbeat_s: expected a positive number"),
    (lambda d: d.update(series="x"), "body.series: expected list"),
    (lambda d: d.update(heartbeat_s=10**400), "body.heartbeat_s: 10000000000000000000... is too large"),
    (lambda d: d["series"][0].update(v=[10**400]), "body.series[0].v[0]: 100000000000000000"),
    (lambda d: d["series"][0].update(t=[10**400]), "body.series[0].t[0]: 10000000000000000000 milliseconds"),
])
def test_ingest_format_errors_name_the_field(change, error: str) -> None:  # type: ignore[no-untyped-def]
    doc = _doc(Batch("cam-1", "s:1-1", (Sample(Labels.of("x"), 1.0, 1.0),), 300.0))
    change(doc)
    with pytest.raises(InputError) as exc:
        decode_batch(gzip.compress(json.dumps(doc).encode()), max_bytes=1 << 20, max_samples=10)
    assert str(exc.value).startswith(error)


def test_ingest_format_limits() -> None:
    samples = tuple(Sample(Labels.of("x"), float(i), 1.0) for i in range(11))
    with pytest.raises(InputError, match="more than 10 samples"):
        decode_batch(encode_batch(Batch("d", "b", samples, 300.0)), max_bytes=1 << 20, max_samples=10)
    with pytest.raises(InputError, match="more than 100 bytes once decompressed"):
        decode_batch(encode_batch(Batch("d", "b", samples, 300.0)), max_bytes=100, max_samples=100)


def _compact_doc(batch: Batch, ids: list[int], defs: dict[int, Labels]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(gzip.decompress(encode_compact(batch, ids, defs)))
    return doc


def test_compact_format_round_trip_with_a_series_dictionary() -> None:
    a, b = Labels.of("temp", sensor="a"), Labels.of("up")
    samples = (Sample(a, 1700000000.0, 41.5), Sample(b, 1700000000.0, 1.0), Sample(a, 1700000015.0, 46.0),
               Sample(a, 1700000300.0, STALE_NAN))
    batch = Batch("", "sp:1-4", samples, 300.0)
    body = encode_compact(batch, [3, 4, 3, 3], {3: a, 4: b})
    assert body == encode_compact(batch, [3, 4, 3, 3], {3: a, 4: b})  # deterministic: a retry is the same
    doc = _compact_doc(batch, [3, 4, 3, 3], {3: a, 4: b})
    assert (doc["t0"], doc["tu"], doc["s"]) == (1700000000000, 15000, [[3, [0, 1, 19], [41.5, 46, "stale"]],
                                                                      [4, [0], [1]]])
    got = decode_batch(body, max_bytes=1 << 20, max_samples=10)
    assert (got.version, got.batch_id, got.heartbeat_s, dict(got.defs)) == (2, "sp:1-4", 300.0, {3: a, 4: b})
    assert sorted((str(s.labels), s.t) for s in got.samples) == sorted((str(s.labels), s.t) for s in samples)
    # without definitions the receiver needs what it was told before, or it names the ids it lacks
    bare = encode_compact(batch, [3, 4, 3, 3], {})
    assert len(bare) < len(body)
    with pytest.raises(UnknownSeries) as exc:
        decode_batch(bare, max_bytes=1 << 20, max_samples=10,
                     known=lambda spool, sid: a if sid == 3 else None)
    assert exc.value.ids == [4] and "unknown series ids 4" in str(exc.value)
    known = {("sp", 3): a, ("sp", 4): b}
    again = decode_batch(bare, max_bytes=1 << 20, max_samples=10, known=lambda sp, sid: known.get((sp, sid)))
    assert [(s.labels, s.t) for s in again.samples] == [(s.labels, s.t) for s in got.samples]


def test_compact_format_is_smaller_than_version_1() -> None:
    ls = [Labels.of("temp_celsius", sensor=f"s{i}", camera="front") for i in range(20)]
    samples = tuple(Sample(ls[i], 1700000000.0 + 15 * k, 40.0 + (i * k) % 7 / 10) for k in range(4)
                    for i in range(20))
    v1 = encode_batch(Batch("cam-1", "sp:1-80", samples, 300.0))
    ids = [1 + ls.index(s.labels) for s in samples]
    first = encode_compact(Batch("", "sp:1-80", samples, 300.0), ids, dict(enumerate(ls, 1)))
    later = encode_compact(Batch("", "sp:81-160", samples, 300.0), ids, {})
    assert len(later) < 0.7 * len(v1) and len(later) < len(first)  # labels once, not in every batch


@pytest.mark.parametrize(("change", "error"), [
    (lambda d: d.pop("b"), "body: missing field 'b'"),
    (lambda d: d.update(tu=0), "body.tu: expected an integer >= 1, got 0"),
    (lambda d: d["s"][0].__setitem__(1, [0.5]), "body.s[0][1][0]: expected an integer >= 0, got 0.5"),
    (lambda d: d["s"][0].__setitem__(2, [1, 2]), "body.s[0]: expected as many times as values"),
    (lambda d: d["s"].append([1]), "body.s[1]: expected [series id, times, values]"),
    (lambda d: d["defs"].update({"x": {}}), "body.defs: 'x' is not a series id"),
    (lambda d: d["defs"]["1"].update({"bad-name": "x"}), "body.defs.1: 'bad-name'"),
    (lambda d: d["s"][0][2].__setitem__(0, "big"), "body.s[0][2][0]: 'big' is not a number"),
    (lambda d: d.update(hb=10**400), "body.hb: 10000000000000000000... is too large"),
    (lambda d: d.update(t0=10**400), "body.s[0][1][0]: 10000000000000000000 milliseconds is no time"),
])
def test_compact_format_errors_name_the_field(change, error: str) -> None:  # type: ignore[no-untyped-def]
    one = Batch("", "s:1-1", (Sample(Labels.of("x"), 1.0, 1.0),), 300.0)
    doc = _compact_doc(one, [1], {1: Labels.of("x")})
    change(doc)
    with pytest.raises(InputError) as exc:
        decode_batch(gzip.compress(json.dumps(doc).encode()), max_bytes=1 << 20, max_samples=10)
    assert str(exc.value).startswith(error)


def test_an_integer_too_long_for_python_is_a_400_not_a_500() -> None:
    body = gzip.compress(b'{"version": 1, "heartbeat_s": ' + b"9" * 5000 + b"}")
    with pytest.raises(InputError, match="body: not JSON"):
        decode_batch(body, max_bytes=1 << 20, max_samples=10)
