"""Issue 46: series scraped together (one target: the same times, bit for bit) are read as one row of
times and a matrix of values (``read_shared``), the closed chunks' times decoded once; everything else
is refused (``None``) and read as before. Differential against ``read_block``, the general read."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch.model import STALE_NAN, Labels
from inferwatch.store._head import CHUNK, READ_CHUNK, Head
from inferwatch.store._head_read import read_block, read_shared


def _head(times: np.ndarray, values: np.ndarray) -> Head:
    """A head with ``values.shape[0]`` series appended scrape by scrape at ``times``, chunks sealed."""
    head = Head()
    m = values.shape[0]
    for k, t in enumerate(times.tolist()):
        head.push_columns(np.arange(m, dtype=np.int64), np.full(m, t), values[:, k], 0.0)
        head.seal(threading.RLock())
    return head


def _bits(a: np.ndarray) -> list[int]:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64).ravel().tolist()


def _same_as_general(head: Head, ids: list[int], start: float, end: float) -> bool:
    """Whether ``read_shared`` answered, and then what ``read_block`` answers, bit for bit."""
    bufs = list(map(head.buffers.get, ids))
    got = read_shared(bufs, start, end)
    want = read_block(bufs, start, end, False)
    if got is None:
        return False
    row, matrix = got.row, got.matrix()
    assert matrix.shape == (len(ids), len(row))
    if len(row) > 2:  # any columns, in any order, are the matrix's: only their chunks decoded
        cols = np.random.default_rng(len(row)).integers(0, len(row), 7)
        assert _bits(got.take(cols)) == _bits(matrix[:, cols])
    if not len(row):
        assert want[0] == []
        return True
    assert want[0] == list(range(len(ids))) and want[3] == [len(row)] * len(ids)
    assert _bits(np.tile(row, len(ids))) == _bits(want[1]) and _bits(matrix) == _bits(want[2])
    return True


_VALUES = {
    "random": lambda rng, m, n: rng.random((m, n)),  # stored raw
    "counter": lambda rng, m, n: np.cumsum(rng.integers(0, 9, (m, n)), axis=1).astype(float),  # few planes
    "odd": lambda rng, m, n: rng.choice([1.0, STALE_NAN, np.nan, np.inf, -0.0], (m, n)),
}


@pytest.mark.parametrize("kind", list(_VALUES))
@pytest.mark.parametrize("n", [5, CHUNK, 3 * CHUNK + 7])
def test_series_scraped_together_read_as_one_row(kind: str, n: int) -> None:
    # rule: every window (inside a chunk, across chunk edges, the open part only, before and after
    # everything) gives read_block's samples, as one row of times and a (series, samples) matrix
    rng = np.random.default_rng(n)
    t = np.round(1.765e9 + 5.0 * np.arange(n) + rng.random(n) * 0.03, 3)  # a scrape's jitter, whole ms
    head = _head(t, _VALUES[kind](rng, 40, n))
    edges = [t[0] - 1, t[0], t[min(CHUNK, n - 1)], t[n // 2] + 0.0005, t[-3], t[-1], t[-1] + 1]
    always = kind != "counter" or n < CHUNK  # a counter's chunks differ in shape by series: maybe refused
    for a in edges:
        for b in edges:
            assert _same_as_general(head, list(range(40)), a, b) or not always, (kind, n, a, b)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3 * CHUNK), st.integers(1, 12), st.data())
def test_any_window_of_any_shared_block(n: int, m: int, data: st.DataObject) -> None:
    # rule: as above, for any sample count, series count and window
    t = np.cumsum(data.draw(st.lists(st.sampled_from([0.001, 1.0, 5.0, 5.013, 3600.0]), min_size=n,
                                     max_size=n))) + 1e9
    values = np.random.default_rng(n * 13 + m).random((m, n))
    head = _head(t, values)
    a, b = sorted(data.draw(st.lists(st.floats(t[0] - 10, t[-1] + 10), min_size=2, max_size=2)))
    assert _same_as_general(head, list(range(m)), a, b)


def test_series_not_scraped_together_are_refused() -> None:
    # rule: a block whose series differ in any time (open or closed), chunk layout or presence is read by
    # read_block: read_shared says None rather than answer for it
    rng = np.random.default_rng(7)
    n = 2 * CHUNK + 3
    t = 1e9 + 5.0 * np.arange(n)
    head = _head(t, rng.random((4, n)))
    late = Head()  # one series a millisecond off inside a closed chunk, bounds and open times the same
    t2 = t.copy()
    t2[CHUNK + 5] += 0.001
    for sid, times in ((0, t), (1, t2)):
        late.push_columns(np.full(n, sid, dtype=np.int64), times, rng.random(n), 0.0)
    late.seal(threading.RLock())
    assert not _same_as_general(late, [0, 1], t[0], t[-1])
    assert read_block(list(map(late.buffers.get, [0, 1])), t[0], t[-1], False)[3] == [n, n]
    mixed = Head()  # one series with a chunk of another shape (a counter's planes beside raw values)
    mixed.push_columns(np.zeros(n, dtype=np.int64), t, rng.random(n), 0.0)
    mixed.push_columns(np.ones(n, dtype=np.int64), t, np.arange(n, dtype=float), 0.0)
    mixed.seal(threading.RLock())
    assert not _same_as_general(mixed, [0, 1], t[0], t[-1])
    assert read_shared([head.buffers[0], None], t[0], t[-1]) is None
    assert read_shared([], t[0], t[-1]) is None
    short = _head(t[:-1], rng.random((1, n - 1)))  # one sample fewer
    assert read_shared([head.buffers[0], short.buffers[0]], t[0], t[-1]) is None


def test_head_reads_hand_the_shared_row_only_when_every_block_shares_it() -> None:
    # rule: read_span is read_columns (labels, times, values, counts), and it is SharedColumns (one row of
    # times, values taken where asked) when every series read has exactly those times
    rng = np.random.default_rng(3)
    n = 2 * CHUNK + 3
    t = 1e9 + 5.0 * np.arange(n)
    head = _head(t, rng.random((5, n)))
    head.push_columns(np.full(n, 9, dtype=np.int64), t + 1.0, rng.random(n), 0.0)  # another target
    head.seal(threading.RLock())
    label = {i: Labels.of("x", i=str(i)) for i in (*range(5), 9)}.__getitem__
    lock = threading.RLock()
    for ids, shared in (([0, 1, 2, 3, 4], True), ([0, 1, 9], False), ([9], True)):
        for a, b in ((t[3], t[-2]), (t[0], t[-1] + 2)):
            want = head.read_columns(ids, a, b, label, lock)
            got = head.read_span(ids, a, b, label, lock)
            assert got.labels == want[0] and _bits(got.t) == _bits(want[1]) and _bits(got.v) == _bits(want[2])
            assert got.lens.tolist() == want[3].tolist() and got.samples == len(want[1])
            assert (got.row is not None) == shared, ids
            if shared:
                cols = np.array([0, 2, 1])
                assert _bits(got.take(cols)) == _bits(got.v.reshape(len(ids), -1)[:, cols])


def test_a_read_of_several_blocks_is_shared_only_when_all_are() -> None:
    # rule: a span read a READ_CHUNK of series at a time is SharedColumns when every block shares the one
    # row (the values taken across blocks, in order); one block of another target makes it the general read
    rng = np.random.default_rng(11)
    n, m = CHUNK + 9, READ_CHUNK + 3
    t = 1e9 + 5.0 * np.arange(n)
    head = _head(t, rng.random((m, n)))
    head.push_columns(np.full(n, m, dtype=np.int64), t + 1.0, rng.random(n), 0.0)  # another target, last
    head.seal(threading.RLock())
    names = {i: Labels.of("x", i=str(i)) for i in range(m + 1)}.__getitem__
    lock = threading.RLock()
    for ids, shared in ((list(range(m)), True), (list(range(m + 1)), False)):
        want = head.read_columns(ids, t[4], t[-1], names, lock)
        got = head.read_span(ids, t[4], t[-1], names, lock)
        assert (got.row is not None) == shared and got.labels == want[0]
        assert _bits(got.t) == _bits(want[1]) and _bits(got.v) == _bits(want[2])
        if shared:
            cols = np.array([n - 5, 0, 3])
            assert _bits(got.take(cols)) == _bits(want[2].reshape(m, -1)[:, cols])
