"""The store's one check on new series (``server.limits``), the same in both stores, and its P1 rule."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.rules import Evaluator, default_rule_pack
from inferwatch.store import LimitExceeded, MemoryStore, SeriesLimits, SQLiteStore, Store

T0 = 1_700_000_000.0


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    st: MemoryStore | SQLiteStore = (MemoryStore() if request.param == "memory"
                                     else SQLiteStore(tmp_path / "t.db"))
    st.limits = SeriesLimits(max_series=10, max_series_per_metric=4)
    yield st
    st.close()


@pytest.mark.parametrize(("labels", "reason"), [
    (Labels({"__name__": "m", **{f"l{i}": "x" for i in range(30)}}), "label_limit"),
    (Labels.of("m", a="v" * 2049), "label_value_length_limit"),
    (Labels({"__name__": "m", "n" * 1025: "x"}), "label_name_length_limit"),
])
def test_a_series_over_a_label_limit_is_refused_whole(store: Store, labels: Labels, reason: str) -> None:
    ok = Sample(Labels.of("ok"), T0, 1.0)
    with pytest.raises(LimitExceeded, match=f"^{reason} exceeded") as exc:
        store.append([ok, Sample(labels, T0, 1.0)])
    assert exc.value.reason == reason
    assert store.series([]) == []  # nothing of the batch: not even the fine series
    assert store.stats.discarded == {reason: 2}  # type: ignore[attr-defined]


def test_the_series_limits_count_what_is_stored(store: Store) -> None:
    at_limit = Labels({"__name__": "m", **{f"l{i}": "x" for i in range(29)}})  # 30 labels: allowed
    store.append([Sample(at_limit, T0, 1.0)] + [Sample(Labels.of("m", i=str(i)), T0, 1.0) for i in range(3)])
    with pytest.raises(LimitExceeded, match=r"max_series_per_metric limit exceeded \(metric: m, 4 series"):
        store.append([Sample(Labels.of("m", i="new"), T0, 1.0)])
    store.append([Sample(Labels.of("m", i="0"), T0 + 1, 2.0)])  # a known series is never refused
    store.append([Sample(Labels.of(f"x{i}"), T0, 1.0) for i in range(6)])
    with pytest.raises(LimitExceeded, match="max_series limit exceeded: 10 series stored, 1 new"):
        store.append([Sample(Labels.of("y"), T0, 1.0)])
    assert store.series_count() == 10  # type: ignore[attr-defined]


def test_the_series_limit_rule_pages_p1_near_the_limit() -> None:
    (rule,) = [r for r in default_rule_pack() if r.name == "SeriesLimitNear"]
    assert rule.tier.value == "P1"
    store = MemoryStore()
    clock = SimulatedClock(T0)
    ev = Evaluator([rule], store, clock=clock)
    for step in range(12):  # 850 of 1,000 series for 6 minutes
        t = T0 + 30 * step
        store.append([Sample(Labels.of("inferwatch_storage_series"), t, 850.0),
                      Sample(Labels.of("inferwatch_storage_series_limit"), t, 1000.0)])
        firing = ev.evaluate(t)
    assert [a.name for a in firing] == ["SeriesLimitNear"]
