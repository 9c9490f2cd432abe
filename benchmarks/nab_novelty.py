"""The novelty detector (Fuzzy ART + anomaly likelihood) against the band alone, on NAB.

Each file is scored once by the default band and once per Fuzzy ART setting (the
product's ``FuzzyArt``); the likelihood settings then run over those raw scores
(the product's ``AnomalyLikelihood``, with the hold of ``NoveltyScorer``), and each
variant's flags are OR-ed with the band's, under the default alert rule and recurrence
hold. ``NOVELTY_GRID`` names the variants; the leave-one-folder-out CV picks among them
and the band alone.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from inferwatch.baseline import (
    AnomalyLikelihood,
    BaselineSettings,
    FuzzyArt,
    NoveltyScorer,
    NoveltySettings,
    SeasonalBaseline,
    alert_windows,
    score_series,
)
from inferwatch.baseline._band import band_excess as band_excess_of

FloatArray = npt.NDArray[np.float64]
BAND = "band alone (default)"
# (rho, likelihood, use_band): the ART vigilance, the likelihood threshold, whether the
# band's excess also feeds the raw score
ART_RHOS = (0.85, 0.9)
LIKELIHOODS = (0.999, 0.9999, 0.99999)
USE_BAND = (True, False)


def variant(rho: float, lik: float, use_band: bool) -> str:
    """A variant's label."""
    return f"band|nov rho{rho:g} L{lik:g}{' +band' if use_band else ''}"


def band_excess(values: FloatArray, expected: FloatArray, lower: FloatArray,
                upper: FloatArray) -> FloatArray:
    """|value - expected| over the band's half-width on that side (NaN without a band)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        half = np.where(values >= expected, upper - expected, expected - lower)
        return np.abs(values - expected) / np.maximum(half, 1e-12)


def likelihood_flags(raw: FloatArray, cfg: NoveltySettings) -> npt.NDArray[np.bool_]:
    """The flags ``NoveltyScorer`` gives for these raw scores (likelihood, then the hold)."""
    lik = AnomalyLikelihood(cfg.short, cfg.long, cfg.likelihood, cfg.min_points)
    out = np.zeros(raw.size, dtype=bool)
    left = 0
    for i, r in enumerate(raw.tolist()):
        if math.isnan(r):
            continue
        if lik.step(r):
            left = cfg.hold
        if left > 0:
            left -= 1
            out[i] = True
    return out


def novelty_file(args: tuple[str, FloatArray, FloatArray, BaselineSettings]) -> dict[str, list[int]]:
    """One file's alert onsets for the band alone and every variant."""
    from nab_table import released_by

    _, t, v, cfg = args
    scored = score_series(t, v, SeasonalBaseline(cfg.seasonal), cfg.direction)
    excess = np.nan_to_num(band_excess(v, scored.expected, scored.lower, scored.upper), nan=0.0)
    variants = {BAND: scored.anomalous}
    for rho in ART_RHOS:
        nc = dataclasses.replace(cfg.novelty, rho=rho)
        art = FuzzyArt(nc.window, nc.levels, nc.rho, nc.categories)
        novelty = np.array([art.step(float(x)) if math.isfinite(x) else math.nan for x in v])
        for lik, use_band in ((a, b) for a in LIKELIHOODS for b in USE_BAND):
            raw = np.maximum(novelty, np.clip(excess - 1.0, 0.0, 1.0)) if use_band else novelty
            flags = likelihood_flags(raw, dataclasses.replace(nc, likelihood=lik))
            variants[variant(rho, lik, use_band)] = scored.anomalous | flags
    out: dict[str, list[int]] = {}
    for label, flags in variants.items():
        released = released_by(t, v, scored.expected, flags, cfg, cfg.recurrence)
        ws = alert_windows(flags, v, scored.expected, debounce=cfg.debounce,
                           merge_gap=cfg.merge_gap, released=released)
        out[label] = [w.start for w in ws]
    return out


def novelty_rows(corpus: Any, cfg: BaselineSettings, jobs: int = 1) -> dict[str, dict[str, list[int]]]:
    """Every variant's onsets: label -> rows per file."""
    from nab_table import _map

    work = [(n, corpus.times[n], corpus.values[n], cfg) for n in corpus.names]
    out: dict[str, dict[str, list[int]]] = {}
    for n, per in zip(corpus.names, _map(novelty_file, work, jobs), strict=True):
        for k, rows in per.items():
            out.setdefault(k, {})[n] = rows
    return out


def novelty_cost(times: FloatArray, values: FloatArray, cfg: BaselineSettings) -> tuple[float, float, int]:
    """Process CPU per point (µs) of the band alone and of band + novelty, and novelty bytes."""
    b = SeasonalBaseline(cfg.seasonal)
    t0 = time.process_time()
    for t, x in zip(times.tolist(), values.tolist(), strict=True):
        b.predict(t)
        b.learn(t, x)
    band_us = (time.process_time() - t0) / len(times) * 1e6
    b, nov = SeasonalBaseline(cfg.seasonal), NoveltyScorer(cfg.novelty)
    t0 = time.process_time()
    for t, x in zip(times.tolist(), values.tolist(), strict=True):
        band = b.predict(t)
        b.learn(t, x)
        nov.step(x, 0.0 if band is None else band_excess_of(band, x))
    both_us = (time.process_time() - t0) / len(times) * 1e6
    return band_us, both_us, nov.state_bytes()
