"""The band provider that rules with ``threshold: dynamic`` get injected."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from inferwatch.baseline import BaselineSettings, SeriesBands, band_provider_factory
from inferwatch.rules import BandProvider
from inferwatch.settings._rules import DynamicThreshold

STEP = 300.0


def _feed(bands: SeriesBands, key: str, values: np.ndarray, start: int = 0) -> list:
    return [bands.band(key, (start + i) * STEP, float(v)) for i, v in enumerate(values)]


def test_factory_builds_a_provider_the_evaluator_accepts() -> None:
    # rule: the factory has the rules package's BandProviderFactory shape
    provider: BandProvider = band_provider_factory(BaselineSettings())("latency_high", DynamicThreshold())
    assert isinstance(provider, SeriesBands)


def test_short_history_gives_no_band_then_a_band() -> None:
    # rule: None until the rule's min_history, then a (low, high) band around the series
    bands = SeriesBands(BaselineSettings(), DynamicThreshold(min_history=3600.0))
    out = _feed(bands, "k", np.full(100, 5.0) + np.random.default_rng(0).normal(0, 0.1, 100))
    assert out[0] is None and out[11] is None  # under an hour of history
    low, high = out[-1]
    assert low < 5.0 < high


def test_series_keys_are_independent_and_the_rule_band_width_applies() -> None:
    # rule: one baseline per key; the rule's `band` sets the width in robust sigmas
    rng = np.random.default_rng(1)
    narrow = SeriesBands(BaselineSettings(), DynamicThreshold(band=2.0, min_history=0))
    wide = SeriesBands(BaselineSettings(), DynamicThreshold(band=20.0, min_history=0))
    for b in (narrow, wide):
        _feed(b, "a", rng.normal(0, 1, 100))
        _feed(b, "b", rng.normal(1000, 1, 100))
    assert len(narrow) == 2
    a_low, a_high = narrow.band("a", 100 * STEP, 0.0)
    b_low, _ = narrow.band("b", 100 * STEP, 1000.0)
    assert a_high < 100 < b_low
    w_low, w_high = wide.band("a", 100 * STEP, 0.0)
    assert w_high - w_low > a_high - a_low


def test_state_round_trip_gives_identical_bands() -> None:
    # rule: export_state / restore_state (through JSON) survives a restart exactly
    rng = np.random.default_rng(2)
    values = rng.normal(10, 1, 400)
    a = SeriesBands(BaselineSettings(), DynamicThreshold(min_history=0))
    _feed(a, "k", values[:300])
    b = SeriesBands(BaselineSettings(), DynamicThreshold(min_history=0))
    b.restore_state(json.loads(json.dumps(a.export_state())))
    assert _feed(a, "k", values[300:], 300) == _feed(b, "k", values[300:], 300)


def test_changed_thresholds_apply_to_restored_series() -> None:
    # rule: a restart with a new band width judges the learned series by it at once: the
    # restored bands are exactly those of a provider that had the new width all along
    rng = np.random.default_rng(3)
    values = rng.normal(10, 1, 400)
    old = SeriesBands(BaselineSettings(), DynamicThreshold(band=6.0, min_history=0))
    _feed(old, "k", values[:300])
    wider = SeriesBands(BaselineSettings(), DynamicThreshold(band=20.0, min_history=0))
    wider.restore_state(json.loads(json.dumps(old.export_state())))
    always = SeriesBands(BaselineSettings(), DynamicThreshold(band=20.0, min_history=0))
    _feed(always, "k", values[:300])
    assert _feed(wider, "k", values[300:], 300) == _feed(always, "k", values[300:], 300)


def test_a_changed_state_shape_is_learned_afresh(caplog: pytest.LogCaptureFixture) -> None:
    # rule: turning window means on (the default since 2026-12-03) changes what is kept: a
    # series saved without them is not forced into the new shape; it relearns (no band until
    # min_history again) and the log says so
    rng = np.random.default_rng(4)
    old = SeriesBands(BaselineSettings(), DynamicThreshold(min_history=3600.0, windows=()))
    _feed(old, "k", rng.normal(10, 1, 300))
    new = SeriesBands(BaselineSettings(), DynamicThreshold(min_history=3600.0))
    with caplog.at_level(logging.INFO, logger="inferwatch.baseline"):
        new.restore_state(json.loads(json.dumps(old.export_state())))
    assert len(new) == 0
    assert "1 series learn afresh" in caplog.text
    assert new.band("k", 300 * STEP, 10.0) is None


def test_unreadable_state_starts_fresh_without_raising() -> None:
    bands = SeriesBands(BaselineSettings(), DynamicThreshold())
    bands.restore_state({"series": {"k": {"method": "seasonal"}}})
    bands.restore_state("garbage")
    assert len(bands) == 0


def test_series_beyond_the_cap_get_no_band_and_are_counted() -> None:
    # rule: memory is bounded by max_series; extra keys fall back to the static threshold
    bands = SeriesBands(BaselineSettings(), DynamicThreshold(), max_series=2)
    for key in "abc":
        bands.band(key, 0.0, 1.0)
    assert len(bands) == 2 and bands.dropped == 1


def test_a_rule_can_turn_window_means_off_for_itself() -> None:
    # rule: the default (window means [6, 24], level 144) catches a sustained 2-sigma shift
    # (3 h) that a rule with `dynamic: {windows: [], level_points: 12}` never flags
    rng = np.random.default_rng(5)
    values = 10.0 + rng.normal(0.0, 0.5, 4 * 288 + 36)
    values[4 * 288:] += 1.0
    plain = SeriesBands(BaselineSettings(), DynamicThreshold(windows=(), level_points=12))
    sustained = SeriesBands(BaselineSettings(), DynamicThreshold())

    def outside(bands: SeriesBands) -> int:
        out = _feed(bands, "k", values)
        return sum(b is not None and not b[0] <= v <= b[1]
                   for b, v in zip(out[4 * 288:], values[4 * 288:], strict=True))

    assert outside(plain) == 0
    assert outside(sustained) >= 6


def test_a_rule_can_turn_the_long_memory_range_off() -> None:
    # rule: `dynamic: {long_range: false}`: a series ramping past its 8-day high (a drift the
    # level follows) is flagged with the range and not without it
    rng = np.random.default_rng(6)
    quiet = 8 * 288
    values = 10.0 + rng.normal(0.0, 0.5, quiet + 72)
    values[quiet:] += np.arange(72) / 12.0  # +1 an hour

    def outside(dynamic: DynamicThreshold) -> int:
        # the point band alone: window means would flag the ramp with or without the range
        dynamic = dynamic.model_copy(update={"windows": (), "level_points": 12})
        out = _feed(SeriesBands(BaselineSettings(), dynamic), "k", values)
        return sum(b is not None and not b[0] <= v <= b[1]
                   for b, v in zip(out[quiet:], values[quiet:], strict=True))

    assert outside(DynamicThreshold()) >= 12
    assert outside(DynamicThreshold(long_range=False)) == 0


def test_rule_window_lengths_are_checked_at_config_time() -> None:
    import pytest

    from inferwatch import ConfigError
    from inferwatch.config import parse_config

    with pytest.raises(ConfigError, match="windows"):
        parse_config("rules: {rules: [{name: X, dimension: service, tier: P1, signal: up, "
                     "threshold: dynamic, dynamic: {windows: [1]}}]}")
