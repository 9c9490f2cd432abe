"""Issue 46: small reads keep their decoded chunks; what they read is what a bulk read reads, bit for bit."""

from __future__ import annotations

import threading

import numpy as np

from inferwatch.model import STALE_NAN, Labels
from inferwatch.store._chunk import encode
from inferwatch.store._head import CHUNK, Head
from inferwatch.store._head_read import SMALL_READ, ChunkMemo


def _bits(a: np.ndarray) -> list[int]:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64).tolist()


def test_a_small_read_answers_as_a_bulk_read_and_again_from_the_memo() -> None:
    # rule: a panel's read (few chunks: the memo) and the same series in a wide read (bulk) agree bit for
    # bit, the first time and every time after
    head = Head()
    series, n = 40, 3 * CHUNK + 5  # 40 x 3 closed chunks: over SMALL_READ together, under it 3 at a time
    t = 1000.0 + 5.0 * np.arange(n)
    rng = np.random.default_rng(7)
    planed = np.floor(rng.random((series, n)) * 9)  # planed values beside raw ones: chunk sizes differ
    vals = np.where(rng.random((series, n)) < 0.5, planed, rng.random((series, n)))
    vals[3, 10] = STALE_NAN  # a marker's payload survives the memo too
    ids = np.arange(1, series + 1, dtype=np.int64)
    for k in range(n):
        head.push_columns(ids, np.full(series, t[k]), vals[:, k], 0.0)
        head.seal(threading.RLock())
    label = {int(s): Labels.of("x", id=str(s)) for s in ids}.__getitem__
    assert series * 3 > SMALL_READ
    wide = {s.labels["id"]: s for s in head.read(ids.tolist(), 0.0, 1e9, label, threading.RLock())}
    for _ in range(2):  # decoded, then kept
        for part in (ids[:1], ids[1:4], ids[4:9]):
            for s in head.read(part.tolist(), t[7], t[-2], label, threading.RLock()):
                k = (t >= t[7]) & (t <= t[-2])
                row = int(s.labels["id"]) - 1
                assert _bits(s.v) == _bits(vals[row][k]) and s.t.tolist() == t[k].tolist()
                w = wide[s.labels["id"]]
                assert _bits(w.v[(w.t >= t[7]) & (w.t <= t[-2])]) == _bits(s.v)


def test_the_memo_keeps_at_most_its_size_and_counts_hits() -> None:
    chunks = encode(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
                    np.array([[1.0, 1.5], [2.0, 2.0], [0.0, 9.0]]))
    memo = ChunkMemo(size=2)
    ts, vs = memo.decoded(chunks)
    assert [t.tolist() for t in ts] == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] and vs[2].tolist() == [0.0, 9.0]
    assert memo.hits == 0
    ts, _ = memo.decoded(chunks[1:])  # the two newest are kept
    assert memo.hits == 2 and [t.tolist() for t in ts] == [[3.0, 4.0], [5.0, 6.0]]
    memo.decoded(chunks[:1])  # the oldest was dropped: decoded again
    assert memo.hits == 2
