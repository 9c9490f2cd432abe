"""The novelty detector (Fuzzy ART), the anomaly likelihood over its scores, and their wiring."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from inferwatch.baseline import (
    AnomalyLikelihood,
    BaselineSettings,
    FuzzyArt,
    NoveltyScorer,
    NoveltySettings,
    SeasonalBaseline,
    SeriesBands,
    score_series,
)
from inferwatch.config import DynamicThreshold

HOUR = 3600.0


def _hourly(n: int, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n) * HOUR
    return 50 + 10 * np.sin(2 * np.pi * t / 86400) + rng.normal(0, 0.3, n)


def test_fuzzy_art_knows_a_repeated_cycle_and_scores_a_new_shape() -> None:
    # rule: a pattern seen before scores 0 (it resonates); a shape never seen scores > 0
    art = FuzzyArt(window=8, levels=10, rho=0.9, categories=32)
    cycle = [0.0, 1.0, 2.0, 3.0, 2.0, 1.0]
    scores = [art.step(cycle[i % 6]) for i in range(300)]
    assert max(scores[100:]) == 0.0
    new = [art.step(x) for x in (3.0, 0.0, 3.0, 0.0, 3.0, 0.0)]
    assert max(new) > 0.1


def test_fuzzy_art_memory_is_bounded_and_its_state_continues_exactly() -> None:
    # rule: at most `categories` patterns, whatever the input; to_state/from_state resumes
    # with the same scores (the state survives a restart)
    rng = np.random.default_rng(1)
    art = FuzzyArt(window=8, levels=10, rho=0.95, categories=16)
    for x in rng.normal(size=2000):
        art.step(float(x))
    assert art.n == 16 and art.state_bytes() < 4096
    copy = FuzzyArt.from_state(json.loads(json.dumps(art.to_state())))
    tail = rng.normal(size=200).tolist()
    assert [art.step(x) for x in tail] == [copy.step(x) for x in tail]
    assert not math.isnan(art.step(math.nan))  # NaN is skipped, scored 0
    with pytest.raises(ValueError, match="fuzzy ART"):
        FuzzyArt.from_state({"window": 8})


def test_likelihood_flags_only_after_its_warm_up_and_only_unusual_averages() -> None:
    # rule: nothing before min_points; a run of high raw scores against a quiet history flags
    lik = AnomalyLikelihood(short=5, long=500, likelihood=0.9999, min_points=100)
    assert not any(lik.step(0.9) for _ in range(50))  # high at once, but in the warm-up
    lik = AnomalyLikelihood(short=5, long=500, likelihood=0.9999, min_points=100)
    rng = np.random.default_rng(2)
    assert not any(lik.step(float(x)) for x in rng.uniform(0, 0.05, 400))
    assert any(lik.step(0.8) for _ in range(5))


def test_the_scorer_judges_a_short_hourly_series_after_its_warm_up_in_points() -> None:
    # rule: NoveltyScorer flags a new pattern on an hourly series of 400 points (16 days:
    # the seasonal band's 2-day warm-up is not what gates it), none before min_points
    cfg = NoveltySettings(enabled=True, min_points=150)
    v = _hourly(400)
    v[300:306] = [60.0, 40.0, 60.0, 40.0, 60.0, 40.0]  # oscillation inside the usual range
    scorer = NoveltyScorer(cfg)
    flags = [scorer.step(float(x)) for x in v]
    assert not any(flags[:300])
    assert any(flags[300:310])
    saved = NoveltyScorer.from_state(json.loads(json.dumps(scorer.to_state())), cfg)
    assert saved.learned and saved.likelihood.seen == scorer.likelihood.seen == 400
    with pytest.raises(ValueError, match="another shape"):
        NoveltyScorer.from_state(scorer.to_state(), NoveltySettings(window=4))


def test_series_bands_with_novelty_fire_on_the_watched_side_and_keep_state() -> None:
    # rule: with baseline.novelty.enabled the provider's band excludes a novel value on the
    # rule's side (so the evaluator's band comparison fires), before the 2-day band exists
    # too; the state (novelty included) is exported and restored; off by default
    cfg = BaselineSettings(novelty=NoveltySettings(enabled=True, min_points=150))
    v = _hourly(400)
    v[300:306] = [60.0, 40.0, 60.0, 40.0, 60.0, 40.0]
    bands = SeriesBands(cfg, DynamicThreshold(min_history=30 * 86400.0, direction="both"))
    fired = []
    for i, x in enumerate(v):
        b = bands.band("s", i * HOUR, float(x))
        fired.append(b is not None and not b[0] <= x <= b[1])
    assert not any(fired[:300]) and any(fired[300:310])
    warm = bands.warmup()["s"]
    assert warm["novelty_points"] == 400 and warm["novelty_min_points"] == 150
    state = json.loads(json.dumps(bands.export_state()))
    again = SeriesBands(cfg, DynamicThreshold(min_history=30 * 86400.0, direction="both"))
    again.restore_state(state)
    assert again.warmup()["s"]["novelty_points"] == 400
    per_rule = DynamicThreshold(min_history=30 * 86400.0, direction="both", novelty=True)
    restored = SeriesBands(BaselineSettings(novelty=NoveltySettings(min_points=150)), per_rule)
    restored.restore_state(state)  # a rule's own `novelty: true` restores the detector too
    assert restored.novelty_on and restored.warmup()["s"]["novelty_points"] == 400
    off = SeriesBands(BaselineSettings(), DynamicThreshold(min_history=30 * 86400.0))
    assert all(off.band("s", i * HOUR, float(x)) is None for i, x in enumerate(v))


def test_score_series_with_novelty_marks_the_new_pattern_as_baseline_score_does() -> None:
    # rule: `baseline score` with baseline.novelty.enabled ORs the detector's flags (on the
    # watched side) with the band's; without it the same series is scored as before
    v = _hourly(400)
    v[300:306] = [60.0, 40.0, 60.0, 40.0, 60.0, 40.0]
    t = np.arange(400) * HOUR
    cfg = BaselineSettings(novelty=NoveltySettings(enabled=True, min_points=150))
    slow = dataclasses.replace(cfg.seasonal, min_history=30 * 86400.0)  # no band in 16 days
    plain = score_series(t, v, SeasonalBaseline(slow), "both")
    novel = score_series(t, v, SeasonalBaseline(slow), "both", novelty=NoveltyScorer(cfg.novelty))
    assert not plain.anomalous.any()
    assert novel.anomalous[300:310].any() and not novel.anomalous[:300].any()
