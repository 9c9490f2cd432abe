"""Warm-up on a short hourly series: judgeable after its warm-up, the seasonal part later."""

from __future__ import annotations

import numpy as np

from inferwatch.baseline import BaselineSettings, SeasonalBaseline, score_series

HOUR = 3600.0


def test_a_short_hourly_series_is_judged_after_its_warm_up_and_flags_a_spike() -> None:
    # rule: the point band exists once min_points samples and min_history are seen (48
    # hourly samples = 2 days), its warm-up shows that progress, and a spike after it is
    # flagged while the clean days before are not
    cfg = BaselineSettings()
    rng = np.random.default_rng(3)
    t = np.arange(300) * HOUR  # 12.5 days, hourly
    v = 50 + 10 * np.sin(2 * np.pi * t / 86400) + rng.normal(0, 0.5, t.size)
    v[200] += 40
    b = SeasonalBaseline(cfg.seasonal)
    for i in range(47):
        b.learn(float(t[i]), float(v[i]))
    w = b.warmup()
    assert not b.learned and w["points"] == 47 and w["min_points"] == 48
    scored = score_series(t, v, SeasonalBaseline(cfg.seasonal), cfg.direction)
    judged = np.flatnonzero(np.isfinite(scored.expected))
    assert judged.size and 47 <= judged[0] <= 49  # judged from about the 49th sample on
    assert scored.anomalous[200]
    assert not scored.anomalous[judged[0]:195].any()
