"""NAB's own scoring of inferwatch's baselines beside the public scoreboard (bench_nab's table).

Each method's alert onsets (an alert's first sample, as the product notifies) are scored
with NAB's rules (``inferwatch.baseline.NabFile``), per folder and in total, under the
standard and reward_low_FP_rate profiles, with alert counts. The scoreboard's detectors
are scored from their own detections (``anchors.json``, standard profile); their
reward_low_FP_rate figure is the published one on these files (their detections at that
profile's threshold are not in anchors.json).
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from inferwatch.baseline import (
    PROFILES,
    Band,
    Baseline,
    BaselineSettings,
    NabFile,
    NabTally,
    SeasonalBaseline,
    SeasonalSettings,
    alert_windows,
    parse_timestamp,
    read_csv_series,
    recurrence_gate,
    score_series,
)

FloatArray = npt.NDArray[np.float64]
FOLDERS = ("realKnownCause", "realAWSCloudwatch", "artificialWithAnomaly", "artificialNoAnomaly")


@dataclass
class Corpus:
    """The NAB files: series, scorers and the anchors' detections."""

    names: list[str]
    times: dict[str, FloatArray] = field(default_factory=dict)
    values: dict[str, FloatArray] = field(default_factory=dict)
    files: dict[str, NabFile] = field(default_factory=dict)
    anchors: dict[str, dict[str, object]] = field(default_factory=dict)

    @classmethod
    def load(cls, nab: Path, names: Sequence[str]) -> Corpus:
        labels = json.loads((nab / "windows.json").read_text())
        c = cls(list(names))
        for n in names:
            s = read_csv_series(nab / n)
            c.times[n], c.values[n] = s.times, s.values
            c.files[n] = NabFile.from_times(s.times, [(parse_timestamp(a), parse_timestamp(b))
                                                      for a, b in labels[n]])
        c.anchors = json.loads((nab / "anchors.json").read_text())["detectors"]
        return c


def onsets(times: FloatArray, values: FloatArray, baseline: Baseline, cfg: BaselineSettings,
           recurrence: int | None = None) -> list[int]:
    """Row indices where the default alert rule's alerts start (recurrence hold included)."""
    scored = score_series(times, values, baseline, cfg.direction, recurrence_gate(cfg, recurrence))
    ws = alert_windows(scored.anomalous, values, scored.expected, debounce=cfg.debounce,
                       merge_gap=cfg.merge_gap, released=scored.released)
    return [w.start for w in ws]


Rows = dict[str, list[int]]  # file -> detection rows


def folder_tallies(corpus: Corpus, rows: Mapping[str, Sequence[int]]) -> dict[str, NabTally]:
    """Per folder and ``TOTAL``: the summed NAB tallies of one method's detections."""
    out = {f: NabTally() for f in (*FOLDERS, "TOTAL")}
    for n in corpus.names:
        t = corpus.files[n].score(rows.get(n, []))
        out[n.split("/")[0]].add(t)
        out["TOTAL"].add(t)
    return out


def anchor_rows(corpus: Corpus, key: str) -> Rows:
    """The scoreboard detector ``key``'s flagged rows (standard profile's threshold)."""
    dets: dict[str, list[str]] = corpus.anchors[key]["detections_standard"]  # type: ignore[assignment]
    out: Rows = {}
    for n in corpus.names:
        t = corpus.times[n]
        out[n] = [int(np.flatnonzero(t == parse_timestamp(s))[0]) for s in dets.get(n, [])]
    return out


def cell(t: NabTally, profile_index: int) -> str:
    """``score (alerts)``; a folder without windows shows its raw score (0: no false alert)."""
    p = PROFILES[profile_index]
    score = t.normalised(p) if t.windows else t.raw(p)
    mark = "" if t.windows else "r"
    return f"{score:6.1f}{mark:1} ({t.alerts:>4})"


def print_table(corpus: Corpus, methods: Mapping[str, Rows],
                published_low_fp: Mapping[str, float] | None = None) -> None:
    """Both profiles' tables: one row per method, a column per folder and the total."""
    tallies = {m: folder_tallies(corpus, rows) for m, rows in methods.items()}
    cols = [f for f in (*FOLDERS, "TOTAL") if any(n.startswith(f) for n in corpus.names) or f == "TOTAL"]
    for i, p in enumerate(PROFILES):
        print(f"\nNAB score, {p.name} profile (tp {p.tp:g}, fn {p.fn:g}, fp {p.fp:g}); "
              "normalised 0-100, (alerts scored: onsets after the "
              "probationary period); 'r': raw score of a folder without windows")
        print(f"{'method':<34}" + "".join(f"| {c[:21]:<22}" for c in cols))
        for m, t in tallies.items():
            row = f"{m:<34}" + "".join(f"| {cell(t[c], i):<22}" for c in cols)
            if i == 1 and published_low_fp and m in published_low_fp:
                row += f"  (published at its own threshold: {published_low_fp[m]:.2f})"
            print(row)


def run_method(corpus: Corpus, make: Callable[[], Baseline], cfg: BaselineSettings,
               recurrence: int | None = None) -> Rows:
    """Alert onsets of a fresh baseline per file."""
    return {n: onsets(corpus.times[n], corpus.values[n], make(), cfg, recurrence) for n in corpus.names}


def released_by(times: FloatArray, values: FloatArray, expected: FloatArray,
                anomalous: npt.NDArray[np.bool_], cfg: BaselineSettings, count: int,
                ) -> npt.NDArray[np.bool_]:
    """The recurrence gate's marks for hold ``count`` (0: every anomalous point released)."""
    gate = recurrence_gate(cfg, count)
    if gate is None:
        return anomalous.copy()
    out = anomalous.copy()
    for i in range(len(values)):
        out[i] = gate.step(float(times[i]), float(values[i]), float(expected[i]), bool(anomalous[i]))
    return out


# The grid --cv searches: baseline settings (each scored once per file), and the alert
# rule's settings applied to those scores (recurrence hold, merge gap); one set for all files.
# "point band" is the default before 2026-12-03 (no window means, a 12-sample level).
GRID_BASELINES: dict[str, dict[str, object]] = {
    "point band": {"windows": (), "level_points": 12},
    "default": {},
    "band5": {"band": 5.0},
    "wband3.5": {"window_band": 3.5},
    "wtail1.1": {"window_tail_factor": 1.1},
    "wmin864": {"window_min_points": 864},
    "warm1d": {"min_history": 86400.0},
    "pts288": {"min_history": 0.0, "min_points": 288},
    "pts288 w288": {"min_history": 0.0, "min_points": 288, "window_min_points": 288},
    "pts150": {"min_history": 0.0, "min_points": 150},
    "pts288 wmin864": {"min_history": 0.0, "min_points": 288, "window_min_points": 864},
}
# The small candidate set ``make bench BENCH=nab`` cross-validates on every run (the full
# grid is ``--cv``): the default, the earlier default, the longer window warm-up (the one
# setting the folds disagreed on, 2026-12-03) and the warm-up counted in points (issue 35:
# judgeable after 288 samples whatever the cadence, no 2-day wait), each under the grid's
# recurrence holds and merge gaps.
CV_CANDIDATES = ("default", "point band", "wmin864", "pts288", "pts288 w288")
GRID_RECURRENCE = (2, 0)
GRID_MERGE = (36, 144)


def _grid_file(args: tuple[str, FloatArray, FloatArray, SeasonalSettings, BaselineSettings],
               ) -> dict[str, list[int]]:
    """One file's onsets for every (recurrence, merge gap) of the grid under one baseline setting."""
    _, t, v, seasonal, cfg = args
    scored = score_series(t, v, SeasonalBaseline(seasonal), cfg.direction)
    out: dict[str, list[int]] = {}
    for rec in GRID_RECURRENCE:
        released = released_by(t, v, scored.expected, scored.anomalous, cfg, rec)
        for gap in GRID_MERGE:
            ws = alert_windows(scored.anomalous, v, scored.expected, debounce=cfg.debounce,
                               merge_gap=gap, released=released)
            out[f"rec{rec} gap{gap}"] = [w.start for w in ws]
    return out


def grid_rows(corpus: Corpus, cfg: BaselineSettings, jobs: int = 1,
              baselines: Sequence[str] | None = None) -> dict[str, Rows]:
    """Every grid setting's alert onsets: ``"<baseline> rec<N> gap<G>"`` -> rows per file.

    ``baselines`` limits the baseline settings to those named (default: all of
    ``GRID_BASELINES``). Files are scored in ``jobs`` processes (each file's score is
    independent and causal).
    """
    out: dict[str, Rows] = {}
    for bname in baselines or GRID_BASELINES:
        update = GRID_BASELINES[bname]
        seasonal = dataclasses.replace(cfg.seasonal, **update)
        work = [(n, corpus.times[n], corpus.values[n], seasonal, cfg) for n in corpus.names]
        for n, per in zip(corpus.names, _map(_grid_file, work, jobs), strict=True):
            for k, rows in per.items():
                out.setdefault(f"{bname} {k}", {})[n] = rows
        print(f"  scored {bname}", flush=True)
    return out


def _map(fn: Callable[[Any], Any], work: list[Any], jobs: int) -> list[Any]:
    if jobs <= 1:
        return [fn(w) for w in work]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return pool.map(fn, work, chunksize=1)


def cross_validate(corpus: Corpus, grid: Mapping[str, Rows]) -> list[tuple[str, str, NabTally]]:
    """Leave one folder out: pick the best setting on the other three (standard profile).

    Prints the grid and the held-out scores; returns ``(held-out folder, chosen setting,
    its tally on that folder)`` for each folder.
    """
    tallies = {k: folder_tallies(corpus, rows) for k, rows in grid.items()}
    std, low = PROFILES
    print(f"\n{'setting':<28}" + "".join(f"| {f[:21]:<22}" for f in (*FOLDERS, "TOTAL"))
          + "| TOTAL low_FP")
    for k, t in tallies.items():
        print(f"{k:<28}" + "".join(f"| {cell(t[f], 0):<22}" for f in (*FOLDERS, "TOTAL"))
              + f"| {cell(t['TOTAL'], 1)}")
    print("\nleave one folder out (chosen on the other three by their summed raw standard score):")
    held: list[tuple[str, str, NabTally]] = []
    for f in FOLDERS:
        def train(k: str, f: str = f) -> float:
            return sum(tallies[k][g].raw(std) for g in FOLDERS if g != f)
        best = max(tallies, key=train)
        t = tallies[best][f]
        held.append((f, best, t))
        score = f"{t.normalised(std):.1f} / {t.normalised(low):.1f}" if t.windows else \
            f"raw {t.raw(std):.2f} / {t.raw(low):.2f}"
        print(f"  held out {f:<22} chosen: {best:<24} held-out score (standard / low_FP): {score}"
              f"  alerts {t.alerts}")
    total = NabTally()
    for _, _, t in held:
        total.add(t)
    worst = min((t.normalised(std), t.normalised(low), f) for f, _, t in held if t.windows)
    quiet = next((t.alerts for f, _, t in held if f == "artificialNoAnomaly"), None)
    print(f"  held-out folders pooled (standard / low_FP): {total.normalised(std):.1f} / "
          f"{total.normalised(low):.1f}; worst held-out folder: {worst[2]} {worst[0]:.1f} / "
          f"{worst[1]:.1f}; alerts on artificialNoAnomaly held out: {quiet}")
    return held


def _onsets_file(args: tuple[str, FloatArray, FloatArray, SeasonalSettings, BaselineSettings, int | None],
                 ) -> list[int]:
    _, t, v, seasonal, cfg, rec = args
    return onsets(t, v, SeasonalBaseline(seasonal), cfg, rec)


def run_seasonal(corpus: Corpus, seasonal: SeasonalSettings, cfg: BaselineSettings,
                 recurrence: int | None = None, jobs: int = 1) -> Rows:
    """:func:`run_method` for a seasonal setting, the files scored in ``jobs`` processes."""
    work = [(n, corpus.times[n], corpus.values[n], seasonal, cfg, recurrence) for n in corpus.names]
    return dict(zip(corpus.names, _map(_onsets_file, work, jobs), strict=True))


# --- ideas measured on top of the default's band (--ideas): each causal, O(1) per point ------


class _Traced:
    """The default baseline, recording with each band the scale of the model behind it."""

    def __init__(self, seasonal: SeasonalSettings) -> None:
        self.b = SeasonalBaseline(seasonal)
        self.sigma: list[float] = []

    def predict(self, t: float) -> Band | None:
        band = self.b.predict(t)
        self.sigma.append(math.nan if band is None else self.b._candidates[self.b.model].sigma)
        return band

    def learn(self, t: float, value: float) -> None:
        self.b.learn(t, value)

    @property
    def learned(self) -> bool:
        return self.b.learned

    def to_state(self) -> dict[str, Any]:
        return self.b.to_state()


def likelihood_flags(z: FloatArray, short: int = 10, long: int = 2016, threshold: float = 4.26,
                     min_points: int = 576) -> npt.NDArray[np.bool_]:
    """HTM's anomaly likelihood on |z|: the mean of the last ``short`` scores, as a z-score
    against the mean and deviation of the previous ``long`` such means (running sums: O(1)),
    flagged above ``threshold`` (4.26: a tail probability of 1e-5, HTM's alert level)."""
    from collections import deque

    u = np.abs(z)
    flags = np.zeros(u.size, dtype=bool)
    recent: deque[float] = deque(maxlen=short)
    past: deque[float] = deque(maxlen=long)
    s1 = s2 = 0.0
    for i, x in enumerate(u):
        if math.isnan(x):
            continue
        recent.append(float(x))
        if len(recent) < short:
            continue
        m = sum(recent) / short
        if len(past) >= min_points:
            mu = s1 / len(past)
            sd = math.sqrt(max(s2 / len(past) - mu * mu, 1e-12))
            flags[i] = (m - mu) / sd > threshold
        if len(past) == long:
            s1 -= past[0]
            s2 -= past[0] * past[0]
        past.append(m)
        s1 += m
        s2 += m * m
    return flags


def cusum_flags(z: FloatArray, k: float = 2.0, h: float = 60.0) -> npt.NDArray[np.bool_]:
    """Page's two-sided CUSUM on the normalised residuals (slack ``k``, decision level ``h``)."""
    flags = np.zeros(z.size, dtype=bool)
    hi = lo = 0.0
    for i, x in enumerate(z):
        if math.isnan(x):
            continue
        hi, lo = max(0.0, hi + x - k), max(0.0, lo - x - k)
        flags[i] = hi > h or lo > h
    return flags


def novelty_flags(values: FloatArray, levels: int = 6, order: int = 3, recent: int = 12,
                  need: int = 3, warm: int = 576) -> npt.NDArray[np.bool_]:
    """A contextual novelty detector (CAD OSE's idea): each value is binned in ``levels`` bins
    of the range seen so far (beyond it: a bin of its own); a context is the last ``order``
    bins; flagged when ``need`` of the last ``recent`` contexts were never seen before
    (the set of contexts is bounded by (levels + 2) ** order: O(1) per point)."""
    flags = np.zeros(values.size, dtype=bool)
    lo = hi = math.nan
    seen: set[tuple[int, ...]] = set()
    bins: list[int] = []
    new: list[bool] = []
    for i, x in enumerate(values):
        if math.isnan(x):
            continue
        if math.isnan(lo):
            lo = hi = float(x)
        span = hi - lo
        b = levels // 2 if span <= 0 else min(max(math.floor((x - lo) / span * levels), -1), levels)
        bins = [*bins[1 - order:], b] if order > 1 else [b]
        if len(bins) == order:
            ctx = tuple(bins)
            new = [*new[1 - recent:], ctx not in seen]
            seen.add(ctx)
            flags[i] = i >= warm and sum(new) >= need
        lo, hi = min(lo, float(x)), max(hi, float(x))
    return flags


def _ideas_file(args: tuple[str, FloatArray, FloatArray, SeasonalSettings, BaselineSettings],
                ) -> dict[str, list[int]]:
    _, t, v, seasonal, cfg = args
    traced = _Traced(seasonal)
    scored = score_series(t, v, traced, cfg.direction)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.clip((v - scored.expected) / np.maximum(np.asarray(traced.sigma), 1e-12), -10, 10)
    band = scored.anomalous
    variants = {"default (band)": band}
    for thr in (4.26, 6.0):
        lik = likelihood_flags(z, threshold=thr)
        variants[f"likelihood z{thr:g} alone"] = lik
        variants[f"band or likelihood z{thr:g}"] = band | lik
    variants["band and likelihood z2"] = band & likelihood_flags(z, threshold=2.0)  # agree
    nov = novelty_flags(v)
    variants["novelty alone"] = nov
    variants["band or novelty"] = band | nov
    variants["band and novelty"] = band & nov
    for k, h in ((1.0, 30.0), (2.0, 30.0), (2.0, 60.0)):
        variants[f"band or cusum k{k:g} h{h:g}"] = band | cusum_flags(z, k, h)
    out: dict[str, list[int]] = {}
    for label, flags in variants.items():
        released = released_by(t, v, scored.expected, flags, cfg, cfg.recurrence)
        ws = alert_windows(flags, v, scored.expected, debounce=cfg.debounce,
                           merge_gap=cfg.merge_gap, released=released)
        out[label] = [w.start for w in ws]
    return out


def idea_rows(corpus: Corpus, cfg: BaselineSettings, jobs: int = 1) -> dict[str, Rows]:
    """Each idea's alert onsets (the default alert rule and hold) -> rows per file."""
    work = [(n, corpus.times[n], corpus.values[n], cfg.seasonal, cfg) for n in corpus.names]
    out: dict[str, Rows] = {}
    for n, per in zip(corpus.names, _map(_ideas_file, work, jobs), strict=True):
        for k, rows in per.items():
            out.setdefault(k, {})[n] = rows
    return out


def art_flags(values: FloatArray, window: int = 8, levels: int = 10, rho_low: float = 0.6,
              rho_high: float = 0.85, max_categories: int = 256, warm: int = 300,
              hold: int = 3, mask: int = 150) -> npt.NDArray[np.bool_]:
    """An ARTime-style novelty detector (Fuzzy ART with dual vigilance), written for this
    bench from the published description. Each point's input is the last ``window`` values,
    normalised by the range seen so far (estimated online: the running min and max, no
    advance knowledge of the file), quantised to ``levels`` levels, with their one-level
    Haar coefficients (pair means and half differences), complement coded. A category
    resonates when its match reaches ``rho_high`` (fast learning: its weights become the
    fuzzy AND); a match between ``rho_low`` and ``rho_high`` makes a new category in a
    known cluster; below ``rho_low`` everywhere the input is novel: flagged for ``hold``
    points, after ``warm`` points and outside ``mask`` points after the last flag. At most
    ``max_categories`` categories (the least used is replaced): O(categories) per point."""
    from collections import deque

    flags = np.zeros(values.size, dtype=bool)
    lo = hi = math.nan
    recent: deque[float] = deque(maxlen=window)
    dim = 2 * (window + window)  # values + Haar (window/2 means + window/2 diffs), complemented
    w = np.zeros((0, dim))
    uses = np.zeros(0)
    last_flag = -10**9
    left = 0
    seen = 0
    for i, x in enumerate(values):
        if math.isnan(x):
            continue
        x = float(x)
        if math.isnan(lo):
            lo = hi = x
        lo, hi = min(lo, x), max(hi, x)
        recent.append(x)
        seen += 1
        if left > 0:
            flags[i] = True
            left -= 1
        if len(recent) < window:
            continue
        span = hi - lo
        v = np.array(recent)
        u = np.full(window, 0.5) if span <= 0 else (v - lo) / span
        u = np.round(u * levels) / levels
        pairs = u.reshape(-1, 2)
        haar = np.concatenate((pairs.mean(axis=1), (pairs[:, 0] - pairs[:, 1]) / 2 + 0.5))
        a = np.concatenate((u, haar))
        inp = np.concatenate((a, 1.0 - a))
        norm = float(inp.sum())
        if len(w):
            inter = np.minimum(w, inp)
            isum = inter.sum(axis=1)
            match = isum / norm
            choice = isum / (1e-3 + w.sum(axis=1))
            order = np.argsort(-choice)
            j = next((int(k) for k in order if match[k] >= rho_high), -1)
            if j >= 0:
                w[j] = inter[j]
                uses[j] += 1
                continue
            novel = float(match.max()) < rho_low
        else:
            novel = False
        if novel and seen > warm and i - last_flag > mask:
            flags[i] = True
            left = hold - 1
            last_flag = i
        if len(w) >= max_categories:
            k = int(np.argmin(uses))
            w[k], uses[k] = inp, 1
        else:
            w = np.vstack((w, inp))
            uses = np.append(uses, 1)
    return flags
