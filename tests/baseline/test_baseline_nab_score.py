"""NAB's scorer: the scoreboard's own detections on our 35 files give their published scores."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from inferwatch.baseline import (
    PROFILES,
    NabFile,
    NabTally,
    parse_timestamp,
    probationary_length,
    read_csv_series,
)

STANDARD, LOW_FP = PROFILES


@functools.cache
def _corpus(nab: Path) -> tuple[dict[str, NabFile], dict[str, np.ndarray], dict[str, object]]:
    labels = json.loads((nab / "windows.json").read_text())
    files, times = {}, {}
    for name, windows in labels.items():
        s = read_csv_series(nab / name)
        times[name] = s.times
        files[name] = NabFile.from_times(s.times, [(parse_timestamp(a), parse_timestamp(b))
                                                   for a, b in windows])
    return files, times, json.loads((nab / "anchors.json").read_text())["detectors"]


@pytest.fixture
def corpus(shared_data: Path) -> tuple[dict[str, NabFile], dict[str, np.ndarray], dict[str, object]]:
    return _corpus(shared_data / "nab")


@pytest.mark.parametrize("detector", ["ARTime", "numenta", "contextOSE", "knncad", "relativeEntropy",
                                      "twitterADVec", "windowedGaussian"])
def test_the_scoreboards_detections_score_as_published(corpus: tuple, detector: str) -> None:
    # rule: each detector's flagged rows, scored with the standard profile over the 35
    # files, reproduce its published score on these files (to the two decimals given)
    files, times, anchors = corpus
    entry = anchors[detector]
    total = NabTally()
    for name, f in files.items():
        stamps = entry["detections_standard"].get(name, [])
        t = times[name]
        rows = [int(np.flatnonzero(t == parse_timestamp(s))[0]) for s in stamps]
        total.add(f.score(rows))
    assert round(total.normalised(STANDARD), 2) == entry["standard_on_these_files"]


def test_window_scores_follow_the_sigmoid_and_only_the_best_counts() -> None:
    # rule: the earliest detection in a window scores most; a second one adds nothing;
    # a window's left edge is worth 1, its right edge little; a miss costs fn
    f = NabFile(2000, [(1000, 1099)])
    left, late = f.score([1000]), f.score([1099])
    assert left.tp_sum == pytest.approx(1.0) and 0 < late.tp_sum < 0.1
    assert f.score([1000, 1050]).tp_sum == pytest.approx(1.0)
    assert f.score([]).raw(STANDARD) == -1.0 and f.score([]).normalised(STANDARD) == 0.0
    assert f.score([1000]).normalised(STANDARD) == pytest.approx(100.0)


def test_false_positives_weigh_by_distance_and_profile() -> None:
    # rule: before the first window an FP costs fp; just after a window almost nothing,
    # far after it the full fp; reward_low_FP_rate doubles the cost
    f = NabFile(4000, [(1000, 1099)])
    before, near, far = f.score([800]), f.score([1101]), f.score([3000])
    assert before.raw(STANDARD) == pytest.approx(-1.0 - 0.11)
    assert -1.0 - 0.11 < near.raw(STANDARD) < -1.0
    assert far.raw(STANDARD) == pytest.approx(-1.11)
    assert before.raw(LOW_FP) == pytest.approx(-1.0 - 0.22)


def test_probationary_rows_are_not_scored() -> None:
    # rule: the first min(floor(0.15 n), 750) rows are not scored: a detection there is free
    assert probationary_length(4032) == 604 and probationary_length(22695) == 750
    f = NabFile(4032, [(2000, 2100)])
    assert f.score([100]).fp == 0 and f.score([700]).fp == 1
