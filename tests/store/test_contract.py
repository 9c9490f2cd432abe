"""The store contract, checked on every implementation (append rules, select, retention)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from inferwatch import InputError
from inferwatch.model import STALE_NAN, Labels, Matcher, MatchOp, Sample, SimulatedClock
from inferwatch.store import MemoryStore, Store, parse_selector, stale_mask

UP_A = Labels.of("up", job="a", instance="x:1")
UP_B = Labels.of("up", job="b", instance="x:2")
REQ = Labels.of("req_total", job="a", code="503")


def _memory(_: Path) -> Store:
    return MemoryStore()


FACTORIES: list[Callable[[Path], Store]] = [_memory]
try:
    from inferwatch.store import SQLiteStore

    def _sqlite(tmp: Path) -> Store:
        return SQLiteStore(tmp / "tsdb.sqlite", clock=SimulatedClock(1000.0))

    FACTORIES.append(_sqlite)
except ImportError:  # pragma: no cover - while the SQLite store is being written
    pass


@pytest.fixture(params=FACTORIES, ids=lambda f: f.__name__.strip("_"))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    st = request.param(tmp_path)
    yield st
    st.close()


def _values(store: Store, labels: Labels, start: float = 0, end: float = 1e12) -> list[tuple[float, float]]:
    sel = [Matcher(k, MatchOp.EQ, v) for k, v in labels.items()]
    out = store.select(sel, start, end)
    assert len(out) <= 1
    return list(zip(out[0].t.tolist(), out[0].v.tolist(), strict=True)) if out else []


def test_implements_protocol(store: Store) -> None:
    assert isinstance(store, Store)


# (rule, batch of (t, v) for one series, expected stored (t, v))
APPEND_CASES = [
    ("ascending samples are kept", [(1, 1), (2, 2), (3, 3)], [(1, 1), (2, 2), (3, 3)]),
    ("older than the newest is dropped (out of order)", [(5, 1), (4, 2), (6, 3)], [(5, 1), (6, 3)]),
    ("same time, same value is a no-op", [(5, 1), (5, 1), (6, 2)], [(5, 1), (6, 2)]),
    ("same time, other value is dropped (duplicate)", [(5, 1), (5, 9)], [(5, 1)]),
    ("infinite values are values", [(1, math.inf), (2, -math.inf)], [(1, math.inf), (2, -math.inf)]),
]


@pytest.mark.parametrize(("rule", "batch", "want"), APPEND_CASES, ids=[c[0] for c in APPEND_CASES])
def test_append_rules(store: Store, rule: str, batch: list[tuple[float, float]], want: list) -> None:
    store.append(Sample(UP_A, float(t), float(v)) for t, v in batch)
    assert _values(store, UP_A) == want, rule


def test_out_of_order_across_batches_and_counted(store: Store) -> None:
    store.append([Sample(UP_A, 10.0, 1.0)])
    store.append([Sample(UP_A, 9.0, 1.0), Sample(UP_A, 10.0, 2.0), Sample(UP_A, 11.0, 3.0)])
    assert _values(store, UP_A) == [(10, 1), (11, 3)]
    stats = store.stats  # type: ignore[attr-defined]
    assert (stats.appended, stats.out_of_order, stats.duplicate) == (2, 1, 1)


def test_stale_marker_is_kept_distinct_from_nan(store: Store) -> None:
    store.append([Sample(UP_A, 1.0, math.nan), Sample(UP_A, 2.0, STALE_NAN), Sample(UP_A, 3.0, 1.0)])
    (s,) = store.select(parse_selector("up"), 0, 10)
    assert stale_mask(s.v).tolist() == [False, True, False]
    assert math.isnan(s.v[0]) and s.v[2] == 1.0


def test_repeated_stale_marker_is_a_noop_but_nan_after_stale_is_duplicate(store: Store) -> None:
    store.append([Sample(UP_A, 2.0, STALE_NAN), Sample(UP_A, 2.0, STALE_NAN), Sample(UP_A, 2.0, math.nan)])
    assert len(store.select(parse_selector("up"), 0, 10)[0]) == 1
    assert store.stats.duplicate == 1  # type: ignore[attr-defined]


BAD_BATCHES = [
    ("non-finite time", Sample(UP_A, math.nan, 1.0)),
    ("infinite time", Sample(UP_A, math.inf, 1.0)),
    ("invalid metric name", Sample(Labels.of("1up", job="a"), 1.0, 1.0)),
    ("missing metric name", Sample(Labels({"job": "a"}), 1.0, 1.0)),
    ("invalid label name", Sample(Labels({"__name__": "up", "a-b": "x"}), 1.0, 1.0)),
    ("reserved label name", Sample(Labels({"__name__": "up", "__x": "x"}), 1.0, 1.0)),
    ("reserved label name sorting before the metric name",
     Sample(Labels({"__name__": "up", "__a": "x"}), 1.0, 1.0)),
    ("invalid label name among known ones",
     Sample(Labels({"__name__": "up", "job": "a", "x.y": "z"}), 1.0, 1.0)),
]


@pytest.mark.parametrize(("rule", "bad"), BAD_BATCHES, ids=[c[0] for c in BAD_BATCHES])
def test_bad_input_refuses_the_whole_batch(store: Store, rule: str, bad: Sample) -> None:
    store.append([Sample(UP_A, 1.0, 1.0)])
    with pytest.raises(InputError):
        store.append([Sample(UP_A, 2.0, 2.0), bad])
    assert _values(store, UP_A) == [(1, 1)], rule
    assert [str(x) for x in store.series([])] == [str(UP_A)]


def test_new_series_checked_as_a_batch_accept_every_valid_name(store: Store) -> None:
    # names that sort before __name__ (upper case, one underscore) and a metric never seen before
    ok = [Labels({"__name__": "up", "Zone": "eu", "_shard": "1"}), Labels.of("fresh_metric:rate5m", job="a")]
    store.append([Sample(UP_A, 1.0, 1.0)] + [Sample(ls, 1.0, 2.0) for ls in ok])
    assert set(store.series([])) == {UP_A, *ok}


def test_a_new_series_twice_in_one_batch_among_other_new_ones(store: Store) -> None:
    a, b, c = (Labels.of("m", k=k) for k in "abc")
    store.append([Sample(a, 1.0, 1.0), Sample(b, 1.0, 2.0), Sample(a, 2.0, 3.0), Sample(c, 1.0, 4.0)])
    store.append([Sample(Labels.of("m", k="b"), 2.0, 5.0), Sample(Labels.of("m", k="d"), 2.0, 6.0)])
    got = {s.labels["k"]: list(zip(s.t.tolist(), s.v.tolist(), strict=True))
           for s in store.select(parse_selector("m"), 0, 10)}
    assert got == {"a": [(1, 1), (2, 3)], "b": [(1, 2), (2, 5)], "c": [(1, 4)], "d": [(2, 6)]}


def _fill(store: Store) -> None:
    store.append(
        [Sample(UP_A, float(t), 1.0) for t in range(0, 100, 10)]
        + [Sample(UP_B, float(t), 0.0) for t in range(50, 100, 10)]
        + [Sample(REQ, float(t), float(t)) for t in range(0, 100, 10)]
    )


def test_select_closed_interval_and_sorted(store: Store) -> None:
    _fill(store)
    got = store.select(parse_selector("up"), 50, 70)
    assert [s.labels for s in got] == [UP_A, UP_B]
    assert got[0].t.tolist() == [50, 60, 70]
    assert got[0].t.dtype == np.float64 and got[0].v.dtype == np.float64


def test_select_drops_series_without_samples_in_range(store: Store) -> None:
    _fill(store)
    assert [s.labels for s in store.select(parse_selector("up"), 0, 40)] == [UP_A]


# (rule, selector, expected series)
MATCH_CASES = [
    ("name equality", "up", {UP_A, UP_B}),
    ("label equality", 'up{job="b"}', {UP_B}),
    ("inequality", 'up{job!="b"}', {UP_A}),
    ("regex is anchored", '{job=~"a|b", __name__=~"u."}', {UP_A, UP_B}),
    ("negative regex", '{__name__=~".+", code!~"5.."}', {UP_A, UP_B}),
    ("absent label equals the empty string", '{__name__=~".+", code=""}', {UP_A, UP_B}),
    ("regex matching empty includes series without the label", '{job="a", code=~"5..|"}', {UP_A, REQ}),
    ("no match", 'up{job="zzz"}', set()),
]


@pytest.mark.parametrize(("rule", "sel", "want"), MATCH_CASES, ids=[c[0] for c in MATCH_CASES])
def test_matchers(store: Store, rule: str, sel: str, want: set[Labels]) -> None:
    _fill(store)
    assert {s.labels for s in store.select(parse_selector(sel), 0, 100)} == want, rule
    assert set(store.series(parse_selector(sel))) == want, rule


def test_label_values(store: Store) -> None:
    _fill(store)
    assert store.label_values("job") == ["a", "b"]
    assert store.label_values("__name__") == ["req_total", "up"]
    assert store.label_values("nope") == []


def test_delete_before_removes_old_samples_and_empty_series(store: Store) -> None:
    _fill(store)
    store.append([Sample(Labels.of("old"), 5.0, 1.0)])
    deleted = store.delete_before(50.0)
    assert deleted == 5 + 5 + 1
    assert _values(store, UP_A)[0] == (50, 1)
    assert Labels.of("old") not in store.series([])
    # the order rule still holds after deletion
    store.append([Sample(UP_A, 40.0, 1.0)])
    assert _values(store, UP_A)[0] == (50, 1)


def test_returned_arrays_are_not_changed_by_later_appends(store: Store) -> None:
    store.append([Sample(UP_A, float(t), 1.0) for t in range(8)])
    (before,) = store.select(parse_selector("up"), 0, 100)
    store.append([Sample(UP_A, float(t), 2.0) for t in range(8, 100)])
    assert before.t.tolist() == [float(t) for t in range(8)]
    assert set(before.v.tolist()) == {1.0}
