"""The model, the drifting feature generator, the story and the live statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferwatch.demo import (
    FEATURES,
    FeatureGenerator,
    LiveStats,
    Phase,
    Snapshot,
    Story,
    bucket_quantile,
    train_model,
)


def test_trained_model_beats_chance_on_fresh_data() -> None:
    gen = FeatureGenerator(np.random.default_rng(np.random.SeedSequence().entropy))
    model = train_model(gen)
    x = gen.sample(3000)
    base = gen.labels(x).mean()
    # Better than always guessing the majority class, by a margin.
    assert model.accuracy(x, gen.labels(x)) > max(base, 1 - base) + 0.05


@given(st.floats(min_value=0.0, max_value=1.0))
def test_drift_moves_clicks_up_and_age_down_by_the_documented_amount(drift: float) -> None:
    # At drift d, clicks_7d's mean moves by +2.0 std (= 8.0 * d) and age's by -1.2 std (= -13.2 * d);
    # tolerances are > 5 standard errors of a difference of two 2000-row means.
    ref = FeatureGenerator(np.random.default_rng(1)).sample(2000)
    cur = FeatureGenerator(np.random.default_rng(2), drift=drift).sample(2000)
    i_clicks, i_age = FEATURES.index("clicks_7d"), FEATURES.index("age")
    assert cur[:, i_clicks].mean() - ref[:, i_clicks].mean() == pytest.approx(8.0 * drift, abs=1.0)
    assert cur[:, i_age].mean() - ref[:, i_age].mean() == pytest.approx(-13.2 * drift, abs=2.0)


@given(st.lists(st.floats(min_value=-500, max_value=500), min_size=5, max_size=5))
def test_predictions_are_probabilities_with_confidence_at_least_half(row: list[float]) -> None:
    model = train_model(FeatureGenerator(np.random.default_rng(3)), n=500)
    for cheap in (False, True):
        p = model.predict(np.array(row), cheap=cheap)
        assert 0.0 <= p.score <= 1.0 and 0.5 <= p.confidence <= 1.0


@pytest.mark.parametrize(
    ("phases", "end", "fragment"),
    [
        ([Phase("a", 5.0)], 10.0, "starts with a phase at 0"),              # must start at 0
        ([Phase("a", 0.0), Phase("b", 0.0)], 10.0, "increase strictly"),     # two phases at once
        ([Phase("a", 0.0), Phase("b", 20.0)], 10.0, "must end after"),       # ends before last phase
    ],
)
def test_bad_stories_are_refused(phases: list[Phase], end: float, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        Story.of(phases, end)


def test_phase_at_picks_the_latest_started_phase() -> None:
    story = Story.of([Phase("a", 0.0), Phase("b", 10.0), Phase("c", 20.0)], 30.0)
    assert [story.phase_at(t).name for t in (0, 9.9, 10, 25, 99)] == ["a", "a", "b", "c", "c"]


@pytest.mark.parametrize(
    ("q", "buckets", "want"),
    [
        (0.5, [(0.1, 0.0), (0.2, 10.0), (math.inf, 10.0)], 0.15),   # linear inside the bucket
        (0.99, [(0.1, 100.0), (math.inf, 100.0)], 0.099),          # first bucket: lower edge 0
        (0.99, [(0.1, 0.0), (1.0, 0.0), (math.inf, 5.0)], 1.0),   # in +Inf: highest finite bound
    ],
)
def test_bucket_quantile_follows_histogram_quantile(
    q: float, buckets: list[tuple[float, float]], want: float,
) -> None:
    assert bucket_quantile(q, buckets) == pytest.approx(want)


def test_live_stats_between_two_snapshots() -> None:
    old = Snapshot(10.0, {"200": 100.0}, ((0.1, 90.0), (1.0, 100.0), (math.inf, 100.0)))
    new = Snapshot(12.0, {"200": 180.0, "503": 20.0}, ((0.1, 90.0), (1.0, 200.0), (math.inf, 200.0)))
    s = LiveStats.between(old, new)
    assert (s.requests, s.qps, s.error_ratio, s.unavailable_ratio) == (100.0, 50.0, 0.2, 0.2)
    assert 0.9 < s.p99_s <= 1.0
    empty = LiveStats.between(new, new)
    assert empty.qps == 0 and math.isnan(empty.p99_s) and math.isnan(empty.error_ratio)
