"""The head's closed chunks: every time and value back bit for bit, windows across chunk edges,
truncation inside a chunk, and bytes that say what the head holds."""

from __future__ import annotations

import struct
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch.model import STALE_NAN, Labels, SimulatedClock
from inferwatch.store import MemoryStore, SQLiteStore, parse_selector
from inferwatch.store._chunk import HEADER, RAW, decode, encode, samples_in
from inferwatch.store._head import CHUNK, Head

_ODD = [STALE_NAN, float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 5e-324, 1.7976931348623157e308,
        struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_DEAD_BEEF))[0]]


def _bits(a: np.ndarray) -> list[int]:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64).ravel().tolist()


def _round_trip(t: np.ndarray, v: np.ndarray) -> list[bytes]:
    chunks = encode(t, v)
    assert [samples_in(c) for c in chunks] == [t.shape[1]] * t.shape[0]
    for k, c in enumerate(chunks):
        got_t, got_v = decode([c])
        assert _bits(got_t) == _bits(t[k]) and _bits(got_v) == _bits(v[k])
    return chunks


times = st.lists(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False),
                 min_size=1, max_size=70, unique=True).map(sorted)


@settings(max_examples=150, deadline=None)
@given(times, st.data())
def test_any_times_and_values_come_back_bit_for_bit(ts: list[float], data: st.DataObject) -> None:
    vs = data.draw(st.lists(st.floats() | st.sampled_from(_ODD), min_size=len(ts), max_size=len(ts)))
    _round_trip(np.array([ts]), np.array([vs]))


@pytest.mark.parametrize("n", [1, 2, 3, CHUNK, 120])
def test_scrape_shapes_round_trip_and_cost_what_they_should(n: int) -> None:
    rng = np.random.default_rng(n)
    k = 64
    start = np.round(1.765e9 + rng.random((k, 1)) * 100, 3)
    steady = start + 5.0 * np.arange(n)  # one scrape every 5 s, to the millisecond
    jitter_ms = np.round(steady + rng.random((k, n)) * 0.02, 3)
    jitter_us = steady + rng.random((k, n)) * 0.02
    gaps = start + np.cumsum(rng.choice([1e-6, 1.0, 1e9], (k, n)), axis=1)
    counter = np.cumsum(rng.integers(0, 50, (k, n)), axis=1).astype(float)
    odd = rng.random((k, n))
    odd[:, ::3] = STALE_NAN
    odd[:, 1::4] = np.inf
    for t in (steady, jitter_ms, jitter_us, gaps):
        for v in (rng.random((k, n)), counter, odd, np.ones((k, n))):
            _round_trip(t, v)
    if n == 120:  # a constant step costs no plane; repeated values none; random values raw
        assert len(encode(steady, np.ones((k, n)))[0]) == HEADER
        assert len(encode(steady, rng.random((k, n)))[0]) == HEADER + 8 * n
        assert len(encode(jitter_ms, np.ones((k, n)))[0]) == HEADER + (n - 2)  # one byte a sample
        assert encode(gaps, np.ones((k, n)))[0][3] == RAW or len(encode(gaps, np.ones((k, n)))[0]) > HEADER


def test_a_staleness_marker_keeps_its_payload_inside_a_chunk() -> None:
    t = np.arange(CHUNK, dtype=np.float64)[None, :] * 15.0
    v = np.full((1, CHUNK), 2.0)
    v[0, 7] = STALE_NAN
    v[0, 8] = float("nan")
    [c] = encode(t, v)
    got = decode([c])[1][0]
    assert struct.pack("<d", got[7]) == struct.pack("<d", STALE_NAN)
    assert struct.pack("<d", got[8]) == struct.pack("<d", float("nan"))


def _filled(head: Head, n: int, step: float = 5.0) -> tuple[np.ndarray, np.ndarray]:
    t = 1000.0 + step * np.arange(n)
    v = np.random.default_rng(n).random(n)
    head.push_columns(np.ones(n, dtype=np.int64) * 7, t, v, 0.0)
    head.seal(threading.RLock())
    return t, v


def test_every_window_across_chunk_edges_reads_what_was_written() -> None:
    head = Head()
    t, v = _filled(head, 3 * CHUNK + 5)
    buf = head.buffers[7]
    assert buf.ends is not None and len(buf.ends) == 3 and len(buf.t) == 5
    label = {7: Labels.of("x")}.__getitem__
    lock = threading.RLock()
    edges = [t[0] - 1, t[0], t[CHUNK - 1], t[CHUNK], t[CHUNK] + 2.5, t[2 * CHUNK + 3], t[-5], t[-1],
             t[-1] + 9]
    for a in edges:
        for b in edges:
            want = (t >= a) & (t <= b)
            got_t, got_v = head.window(7, a, b)
            assert got_t.tolist() == t[want].tolist() and got_v.tolist() == v[want].tolist(), (a, b)
            series = head.read([7, 8], a, b, label, lock, latest=True)
            assert [s.t.tolist() for s in series] == ([t[want][-1:].tolist()] if want.any() else [])
            assert head.before(7, b) == ((float(t[t <= b][-1]), float(v[t <= b][-1])) if (t <= b).any()
                                         else (-np.inf, 0.0))


def test_a_window_between_two_samples_inside_a_chunk_is_empty() -> None:
    head = Head()
    _filled(head, 2 * CHUNK, step=10.0)
    label = {7: Labels.of("x")}.__getitem__
    assert head.read([7], 1001.0, 1009.0, label, threading.RLock()) == []
    assert head.read_columns([7], 1001.0, 1009.0, label, threading.RLock())[3].tolist() == []


def test_truncation_inside_a_chunk_keeps_exactly_the_rest_and_counts_bytes() -> None:
    head = Head()
    t, v = _filled(head, 2 * CHUNK + 3)
    samples, size = head.memory()
    assert samples == t.shape[0] and size > 0
    cut = float(t[CHUNK + 4])
    assert head.drop_before(cut) == CHUNK + 4
    got_t, got_v = head.window(7, 0.0, 1e9)
    assert got_t.tolist() == t[CHUNK + 4:].tolist() and got_v.tolist() == v[CHUNK + 4:].tolist()
    assert head.memory()[0] == t.shape[0] - CHUNK - 4
    assert head.drop_before(1e9) == t.shape[0] - CHUNK - 4 and head.buffers == {}


def test_closed_chunks_take_less_than_half_the_raw_bytes() -> None:
    head = Head()
    n, series = 4 * CHUNK, 200
    t = np.tile(1000.0 + 15.0 * np.arange(n), series)
    sids = np.repeat(np.arange(series, dtype=np.int64), n)
    order = np.lexsort((sids, t))  # as scrapes append: every series at one time, then the next
    head.push_columns(sids[order], t[order], np.tile(np.arange(n, dtype=float), series)[order], 0.0)
    head.seal(threading.RLock())
    samples, size = head.memory()
    assert samples == n * series
    assert size / samples < 8  # a counter: a few bytes a sample, against 16 raw and the arrays' room


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path):  # type: ignore[no-untyped-def]
    clock = SimulatedClock(10_000.0)
    st_ = MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "s.sqlite", clock=clock)
    yield st_
    st_.close()


def test_stores_read_chunked_series_as_appended_and_after_a_restart(store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from inferwatch.model import Sample
    ls = Labels.of("g", k="a")
    n = 3 * CHUNK + 7
    t = 9_000.0 + 5.0 * np.arange(n)
    v = np.random.default_rng(3).random(n)
    v[10] = STALE_NAN
    for a in range(0, n, 10):  # a few samples an append, as scrapes come
        store.append([Sample(ls, float(x), float(y)) for x, y in zip(t[a:a + 10], v[a:a + 10], strict=True)])
    sel = parse_selector('g{k="a"}')
    stores = [store]
    if isinstance(store, SQLiteStore):
        store.close()
        stores.append(SQLiteStore(store.path, clock=SimulatedClock(10_000.0)))
    for s in stores[-1:]:
        [got] = s.select(sel, t[3], t[-2])
        assert _bits(got.t) == _bits(t[3:-1]) and _bits(got.v) == _bits(v[3:-1])
        [last] = s.select_latest(sel, t[0], t[CHUNK + 1] + 1)
        assert last.t.tolist() == [t[CHUNK + 1]]
    if len(stores) == 2:
        stores[1].close()


def test_a_block_of_unlike_series_reads_each_as_alone() -> None:
    """Series with different chunk counts, steps, values and times share one block read (the
    general path: no common layout), and each comes back as its own window read."""
    head = Head()
    rng = np.random.default_rng(5)
    want: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for sid in range(1, 13):
        n = int(rng.integers(1, 5 * CHUNK))
        t = np.sort(rng.choice(np.arange(0.0, 4000.0, 0.5), n, replace=False))
        v = rng.random(n) if sid % 3 else np.floor(rng.random(n) * 4)  # raw and planed values
        head.push_columns(np.full(n, sid, dtype=np.int64), t, v, 0.0)
        want[sid] = (t, v)
    head.seal(threading.RLock())
    label = {sid: Labels.of("x", id=str(sid)) for sid in want}.__getitem__
    for start, end in ((0.0, 4000.0), (500.0, 2500.0), (1234.5, 1300.0), (3999.0, 10_000.0)):
        for latest in (False, True):
            got = {s.labels["id"]: s for s in head.read(list(want), start, end, label, threading.RLock(),
                                                        latest=latest)}
            for sid, (t, v) in want.items():
                k = (t >= start) & (t <= end)
                exp_t, exp_v = (t[k][-1:], v[k][-1:]) if latest else (t[k], v[k])
                s = got.get(str(sid))
                assert (s.t.tolist(), s.v.tolist()) == (exp_t.tolist(), exp_v.tolist()) if s is not None \
                    else not k.any()


def test_series_scraped_together_read_as_each_alone() -> None:
    """A target's series (the same times, chunks closed at the same scrapes) take the aligned path;
    every window and the newest sample match each series read alone."""
    head = Head()
    series, n = 5, 2 * CHUNK + 9
    t = 1000.0 + 5.0 * np.arange(n)
    vals = np.random.default_rng(2).random((series, n))
    vals[1] = np.floor(vals[1] * 3)  # planed values beside raw ones: chunk sizes differ, bounds do not
    for k in range(n):
        head.push_columns(np.arange(1, series + 1, dtype=np.int64), np.full(series, t[k]), vals[:, k], 0.0)
        head.seal(threading.RLock())
    label = {sid: Labels.of("x", id=str(sid)) for sid in range(1, series + 1)}.__getitem__
    ids = list(range(1, series + 1))
    windows = ((0.0, 1e9), (t[3], t[CHUNK + 2]), (t[CHUNK], t[-4]), (t[-3], t[-1]), (t[5] + 1, t[5] + 2))
    for start, end in windows:
        for latest in (False, True):
            together = head.read(ids, start, end, label, threading.RLock(), latest=latest)
            alone = [s for sid in range(1, series + 1)
                     for s in head.read([sid], start, end, label, threading.RLock(), latest=latest)]
            assert [(s.labels, s.t.tolist(), s.v.tolist()) for s in together] == \
                [(s.labels, s.t.tolist(), s.v.tolist()) for s in alone]
            k = (t >= start) & (t <= end)
            assert [s.v.tolist() for s in together] == [(v[k][-1:] if latest else v[k]).tolist() for v in vals
                                                        if k.any()]


def test_a_batch_of_known_and_new_series_one_of_them_twice_keeps_each_series_whole() -> None:
    head = Head()
    head.push_columns(np.array([1], dtype=np.int64), np.array([1.0]), np.array([10.0]), 0.0)
    known = head.buffers[1]
    # new series 2 twice and 3 once beside the known 1: one buffer each, the known one kept
    head.push_columns(np.array([2, 1, 2, 3], dtype=np.int64), np.array([1.0, 2.0, 2.0, 1.0]),
                      np.array([20.0, 11.0, 21.0, 30.0]), 0.0)
    assert head.buffers[1] is known and len(head.buffers) == 3
    got = {sid: (list(t), list(v)) for sid, (t, v) in head.windows([1, 2, 3], 0.0, 9.0).items()}
    assert got == {1: ([1.0, 2.0], [10.0, 11.0]), 2: ([1.0, 2.0], [20.0, 21.0]), 3: ([1.0], [30.0])}
