"""The remote-write columns reader against what was encoded, in every encoding a sender may use."""

from __future__ import annotations

import contextlib
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch.formats.columnar import WriteRequestReader
from inferwatch.model import Labels

Point = tuple[int, float]  # (milliseconds, value)


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(out) + bytes([n])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _sample(ms: int, v: float, style: str) -> bytes:
    value = b"\x09" + struct.pack("<d", v)
    stamp = b"\x10" + _varint(ms)
    if style == "gogo":  # proto3 as Prometheus writes it: a field of 0 is left out
        return (value if v != 0 or math.copysign(1, v) < 0 else b"") + (stamp if ms else b"")
    if style == "reversed":
        return stamp + value
    return value + stamp + b"\x18\x01"  # "extra": a field this reader does not know


def _body(series: list[tuple[list[tuple[str, str]], list[Point]]], style: str) -> bytes:
    out = bytearray(_field(3, b"\x08\x01") if style == "extra" else b"")  # metadata: skipped
    for pairs, points in series:
        ts = b"".join(_field(1, _field(1, k.encode()) + _field(2, v.encode())) for k, v in pairs)
        ts += b"".join(_field(2, _sample(ms, v, style)) for ms, v in points)
        if style == "extra":
            ts += _field(3, b"\x08\x01")  # an exemplar: skipped
        out += _field(1, ts)
    return bytes(out)


_names = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)
_values = st.text(min_size=0, max_size=150)  # past 127 bytes a length takes two bytes
_label_sets = st.dictionaries(_names, _values, min_size=1, max_size=6).map(
    lambda d: [("__name__", "m"), *sorted(d.items())])
_stamps = st.one_of(st.just(0), st.integers(-(2**40), 2**40),
                    st.integers(1_600_000_000_000, 1_800_000_000_000))
_floats = st.one_of(st.just(0.0), st.just(-0.0), st.floats(allow_nan=True))
_points = st.lists(st.tuples(_stamps, _floats), min_size=1, max_size=3)
_requests = st.lists(st.tuples(_label_sets, _points), min_size=0, max_size=8)


def _bits(v: float) -> bytes:
    return struct.pack("<d", v)


@settings(max_examples=150, deadline=None)
@given(_requests, st.sampled_from(["gogo", "reversed", "extra"]))
def test_every_sample_comes_back_with_its_labels_time_and_value_bits(
        series: list[tuple[list[tuple[str, str]], list[Point]]], style: str) -> None:
    body = _body(series, style)
    want = [(Labels(pairs), ms / 1000.0, _bits(v)) for pairs, points in series for ms, v in points]
    reader = WriteRequestReader()
    for _ in range(2):  # the second time every label set is known (another path)
        cols = reader.read(body)
        got = list(zip(cols.labels, cols.t.tolist(), map(_bits, cols.v.tolist()), strict=True))
        assert got == want


def test_a_known_series_comes_back_as_the_same_labels_object() -> None:
    body = _body([([("__name__", "up"), ("job", "a")], [(1_700_000_000_000, 1.0)])], "gogo")
    reader = WriteRequestReader(max_series=10)
    first, again = reader.read(body).labels[0], reader.read(body).labels[0]
    assert first is again and first == Labels.of("up", job="a")


@settings(max_examples=150, deadline=None)
@given(_requests, st.data())
def test_a_damaged_body_is_refused_with_value_or_index_error_only(
        series: list[tuple[list[tuple[str, str]], list[Point]]], data: st.DataObject) -> None:
    body = bytearray(_body(series, "gogo"))
    if body:
        cut = data.draw(st.integers(0, len(body) - 1))
        if data.draw(st.booleans()):
            del body[cut:]
        else:
            body[cut] = data.draw(st.integers(0, 255))
    with contextlib.suppress(ValueError, IndexError):  # the receiver answers 400 to these
        WriteRequestReader().read(bytes(body))


@pytest.mark.parametrize("body", [b"\x0a\x05\x0a\x03\x0a\x01", b"\x0a", b"\x0b\x00", b"\x0a\xff\xff\xff"])
def test_truncated_or_malformed_bodies_raise(body: bytes) -> None:
    with pytest.raises((ValueError, IndexError)):
        WriteRequestReader().read(body)


def test_a_reader_that_forgets_its_caches_still_reads_right() -> None:
    reader = WriteRequestReader(max_series=2)  # forgets every label set and pair past 2
    bodies = [_body([([("__name__", "m"), ("k", str(i)), ("job", "j")], [(1_000 * (i + 1), float(i))])],
                    "gogo") for i in range(5)]
    for _ in range(3):
        for i, body in enumerate(bodies):
            cols = reader.read(body)
            assert cols.labels == [Labels.of("m", k=str(i), job="j")]
            assert cols.t.tolist() == [float(i + 1)] and cols.v.tolist() == [float(i)]


@pytest.mark.parametrize("order", ["sorted", "reversed", "swapped"])
def test_labels_in_any_order_read_as_the_one_sorted_label_set(order: str) -> None:
    pairs = [("__name__", "m"), ("a", "1"), ("b", ""), ("c", "3")]
    sent = {"sorted": pairs, "reversed": pairs[::-1],
            "swapped": [pairs[0], pairs[3], pairs[2], pairs[1]]}[order]
    reader = WriteRequestReader()
    for ms in (1000, 2000):  # the second read finds the label bytes cached
        got = reader.read(_body([(sent, [(ms, 1.0)]), (pairs, [(ms, 2.0)])], "gogo")).labels
        assert [x.items_tuple for x in got] == [(("__name__", "m"), ("a", "1"), ("c", "3"))] * 2
        assert got[0] == got[1] == Labels.of("m", a="1", c="3") and hash(got[0]) == hash(got[1])


def test_a_repeated_label_name_is_refused_whatever_was_cached_before() -> None:
    reader = WriteRequestReader()
    reader.read(_body([([("__name__", "m"), ("a", "1")], [(1000, 1.0)])], "gogo"))  # caches both pairs
    with pytest.raises(ValueError, match="duplicate label name"):
        reader.read(_body([([("__name__", "m"), ("a", "1"), ("a", "2")], [(1000, 1.0)])], "gogo"))
