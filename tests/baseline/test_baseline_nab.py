"""A fast smoke test on three NAB files (the full evaluation is benchmarks/bench_nab.py)."""

from __future__ import annotations

import json
from pathlib import Path

from inferwatch.baseline import (
    BaselineConfig,
    SeasonalBaseline,
    alert_windows,
    parse_timestamp,
    read_csv_series,
    score_series,
)


def _alert_starts(path: Path, cfg: BaselineConfig | None = None) -> list[float]:
    cfg = cfg or BaselineConfig()
    s = read_csv_series(path)
    scored = score_series(s.times, s.values, SeasonalBaseline(cfg.seasonal), cfg.direction)
    ws = alert_windows(scored.anomalous, s.values, scored.expected, debounce=cfg.debounce,
                       merge_gap=cfg.merge_gap)
    return [float(s.times[w.start]) for w in ws]


def test_jump_is_detected_inside_its_window_and_nowhere_else(shared_data: Path) -> None:
    # rule: a labelled level jump on a daily pattern: every alert starts inside the window
    nab = shared_data / "nab"
    name = "artificialWithAnomaly/art_daily_jumpsup.csv"
    (lo, hi), = [(parse_timestamp(a), parse_timestamp(b))
                 for a, b in json.loads((nab / "windows.json").read_text())[name]]
    starts = _alert_starts(nab / name)
    assert starts and all(lo <= t <= hi for t in starts)


def test_series_without_anomaly_raises_no_alert(shared_data: Path) -> None:
    # rule: a noisy daily pattern with no labelled anomaly: no false alert at all
    assert _alert_starts(shared_data / "nab" / "artificialNoAnomaly/art_daily_small_noise.csv") == []


def test_long_memory_range_finds_the_slow_failure_the_band_learns(shared_data: Path) -> None:
    # rule: NAB ambient temperature (hourly, 11 months): both labelled failures stay inside
    # the band, which has learned the days before them, but pass the past 4 weeks' low or
    # high by the range's margin: detected with the long-memory range, not without
    nab = shared_data / "nab"
    name = "realKnownCause/ambient_temperature_system_failure.csv"
    windows = [(parse_timestamp(a), parse_timestamp(b))
               for a, b in json.loads((nab / "windows.json").read_text())[name]]

    def detected(cfg: BaselineConfig) -> int:
        starts = _alert_starts(nab / name, cfg)
        return sum(any(lo <= t <= hi for t in starts) for lo, hi in windows)

    assert detected(BaselineConfig(seasonal={"range_horizon": 0})) == 0
    assert detected(BaselineConfig()) == 2
