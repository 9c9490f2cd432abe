"""Dynamic baselines on NAB: NAB's own score beside the public scoreboard (and the older tally).

    python benchmarks/bench_nab.py [--files SUBSTR] [--no-prophet] [--recurrence N] [--jobs N]  # + --cost
    python benchmarks/bench_nab.py --no-cv       # the in-sample table only
    python benchmarks/bench_nab.py --cv          # the settings grid, cross-validated by folder
    python benchmarks/bench_nab.py --ideas       # detectors tried on top of the default's band
    python benchmarks/bench_nab.py --cost        # CPU per point and state per series
    python benchmarks/bench_nab.py --novelty     # the novelty detector's variants, in-sample and CV
    python benchmarks/bench_nab.py --hindsight [--split all|tune|holdout]   # the older table

By default it prints NAB's score (``benchmarks/nab_table.py``: probationary period, scaled
sigmoid, profiles standard and reward_low_FP_rate, normalised) per folder and in total for
inferwatch's default, the opt-in variants, Prophet where installed and the detectors of
NAB's public scoreboard (their own detections, ``anchors.json``), with alert counts,
then the leave-one-folder-out cross-validation over a small candidate set
(``nab_table.CV_CANDIDATES``): per held-out folder, under both profiles, pooled, the
worst folder and the alerts on artificialNoAnomaly, the estimate for data never tuned on.
``--cv`` scores a grid of settings once and picks, for each folder, the setting best on
the other three (standard profile), then scores the held-out folder with it. ``--ideas``
does the same with detectors tried on top of the default's band (an anomaly likelihood,
CUSUM, two detectors agreeing; ``nab_table.py``). ``--jobs`` scores files in parallel.

``--hindsight`` prints the earlier yardstick, described below.

Methods, all with the same alert rule (``debounce`` and ``merge_gap`` from
``BaselineSettings``'s defaults; (a) and (a') may also choose the merge gap). (c), (c-)
and (d) also have the recurrence hold of ``threshold: dynamic`` rules (``baseline.recurrence``,
2: an excursion within the 2nd most extreme of the series' earlier ones on that side in the
last 2 weeks does not alert; ``--recurrence 0`` turns it off); static rules have no such hold.

(a) static   the best single static threshold per file, chosen with hindsight:
             every value quantile (0.5 % steps), above and below; the one with
             the most ``detected - false`` wins, ties to fewer false alerts
             ("no alert" is a candidate, so a file it cannot win stays silent).
             It may also pick the merge gap per file: 12 or the default.
(a') static-max  the same candidates, the one that detects the most windows wins,
             ties to fewer false alerts: the upper bound on what one static rule
             per file can DETECT, and the false alerts that costs.
(b) 3sigma   rolling mean ± 3 standard deviations of the previous day (288 samples).
(c) seasonal inferwatch's default baseline (``SeasonalBaseline`` with defaults: window-mean
             bands ``windows: [6, 24]`` and ``level_points: 144`` since 2026-12-03, and the
             long-memory range).
(c-) point   the default before 2026-12-03: the point band alone (``windows: []``,
             ``level_points: 12``), long-memory range included.
(d) prophet  ``ProphetBaseline`` when installed, refit every 2 days (``--prophet-refit``) on
             the trailing week: about 0.5 s a fit, so daily refits would take ~10 minutes.

A labelled window is detected when an alert starts inside it; an alert starting
outside every window is false. Besides (a) and (a'), the hindsight static thresholds are
also picked at costs of a false alert between theirs (0.055 is NAB's standard profile) and
printed as one line: the best a per-file static rule does at each trade-off. A second
total applies NAB's own convention (alerts starting in the first 15 % of a file are not
scored), with (a) and (a') re-chosen under it. The defaults were chosen on the ``tune``
half (even positions in sorted file order); ``holdout`` is the other half.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

import _results
from inferwatch.baseline import (
    PROFILES,
    Baseline,
    BaselineSettings,
    NabTally,
    SeasonalBaseline,
    alert_windows,
    prophet_available,
    read_csv_series,
    recurrence_gate,
    score_series,
)
from inferwatch.model import parse_duration

sys.path.insert(0, str(Path(__file__).resolve().parent))  # nab_table beside this file

ROOT = Path(__file__).resolve().parents[1]
NAB = Path(os.environ.get("SHARED_DATA_DIR") or ROOT.parent / "shared" / "data") / "nab"
CFG = BaselineSettings()
PROPHET_REFIT = 2 * 86400.0
RECURRENCE: int | None = None  # --recurrence N overrides baseline.recurrence (0: off)
# merge gaps the hindsight static thresholds may also choose from, per file: the default
# before the NAB re-tune (12) besides the current one, so a change of the default alert
# rule cannot weaken the yardstick (a longer gap can make a static alert start early).
STATIC_GAPS = (12,)
# NAB's scorer leaves the first 15 % of every file unscored (the detectors' learning period);
# a second total applies that convention to every method, (a) and (a') re-chosen under it.
PROBATION = 0.15
FloatArray = npt.NDArray[np.float64]
Detector = Callable[[FloatArray, FloatArray, list[tuple[float, float]]], list[int]]


@dataclass
class Tally:
    """Windows detected and missed, false alerts, for one method on one or more files."""

    detected: int = 0
    missed: int = 0
    false: int = 0

    def add(self, other: Tally) -> None:
        self.detected += other.detected
        self.missed += other.missed
        self.false += other.false

    def cell(self) -> str:
        return f"{self.detected:>3} {self.missed:>3} {self.false:>4}"


def tally(starts: list[float], windows: list[tuple[float, float]], since: float = -np.inf) -> Tally:
    """Score alert start times against labelled windows (alerts starting before ``since`` ignored)."""
    starts = [s for s in starts if s >= since]
    hit = [any(lo <= s <= hi for s in starts) for lo, hi in windows]
    false = sum(not any(lo <= s <= hi for lo, hi in windows) for s in starts)
    return Tally(sum(hit), len(hit) - sum(hit), false)


def _starts(times: FloatArray, flags: npt.NDArray[np.bool_], values: FloatArray,
            expected: FloatArray | None = None, merge_gap: int | None = None,
            released: npt.NDArray[np.bool_] | None = None) -> list[float]:
    gap = CFG.merge_gap if merge_gap is None else merge_gap
    ws = alert_windows(flags, values, expected, debounce=CFG.debounce, merge_gap=gap,
                       released=released)
    return [float(times[w.start]) for w in ws]


def static_candidates(times: FloatArray, values: FloatArray) -> list[list[float]]:
    """Every hindsight static threshold's alert starts on one file (see the module docstring).

    Every value quantile (0.5 % steps), above and below, with each merge gap; plus
    "no alert" (a threshold beyond every value). Scored by :func:`tally`, once per convention.
    """
    finite = values[np.isfinite(values)]
    out: list[list[float]] = [[]]
    candidates = np.unique(np.quantile(finite, np.linspace(0, 1, 201)))
    for gap, thr in itertools.product(sorted({*STATIC_GAPS, CFG.merge_gap}), candidates):
        for flags in (values > thr, values < thr):
            if flags.any():
                out.append(_starts(times, flags, values, merge_gap=gap))
    return out


def static_pick(candidates: list[Tally], cost: float) -> Tally:
    """The candidate with the most ``detected - cost * false``, ties to fewer false alerts.

    ``cost`` 1 is (a); a tiny cost is (a'), the most windows detected.
    """
    return max(candidates, key=lambda t: (t.detected - cost * t.false, -t.false))


# (a) and (a'); between them, the costs of a false alert in detections at which the
# hindsight curve is printed (0.055: NAB's standard profile, a false positive 0.11 against
# +1 for a detection and -1 for a miss)
COST_A, COST_MAX = 1.0, 1e-6
CURVE_COSTS = (0.055, 0.11, 0.22, 0.5)


def rolling_3sigma(times: FloatArray, values: FloatArray, window: int = 288) -> list[float]:
    """(b): flags outside mean ± 3 std of the previous ``window`` samples."""
    v = np.nan_to_num(values)
    c1, c2 = np.concatenate(([0.0], np.cumsum(v))), np.concatenate(([0.0], np.cumsum(v * v)))
    idx = np.arange(len(v))
    lo = np.maximum(idx - window, 0)
    n = (idx - lo).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (c1[idx] - c1[lo]) / n
        std = np.sqrt(np.maximum((c2[idx] - c2[lo]) / n - mean * mean, 0.0))
        flags = (n >= window // 4) & (np.abs(v - mean) > 3 * std)
    return _starts(times, flags, values, mean)


def _dynamic(times: FloatArray, values: FloatArray, baseline: Baseline) -> list[float]:
    """Alert starts of a baseline under the default alert rule, recurrence hold included."""
    scored = score_series(times, values, baseline, CFG.direction, recurrence_gate(CFG, RECURRENCE))
    return _starts(times, scored.anomalous, values, scored.expected, released=scored.released)


def seasonal(times: FloatArray, values: FloatArray) -> list[float]:
    """(c): inferwatch's default baseline."""
    return _dynamic(times, values, SeasonalBaseline(CFG.seasonal))


POINT_BAND = dataclasses.replace(CFG.seasonal, windows=(), level_points=12)


def seasonal_point(times: FloatArray, values: FloatArray) -> list[float]:
    """(c-): the point band alone, the default before 2026-12-03."""
    return _dynamic(times, values, SeasonalBaseline(POINT_BAND))


def prophet(times: FloatArray, values: FloatArray) -> list[float]:
    """(d): Prophet behind the same interface."""
    from inferwatch.baseline import ProphetBaseline

    cfg = dataclasses.replace(CFG.prophet, refit_every=PROPHET_REFIT)
    return _dynamic(times, values, ProphetBaseline(cfg))


def load(split: str, files: str) -> list[tuple[str, list[tuple[float, float]]]]:
    from inferwatch.baseline import parse_timestamp

    labels = json.loads((NAB / "windows.json").read_text())
    names = sorted(labels)
    if split != "all":
        names = names[0 if split == "tune" else 1 :: 2]
    return [(n, [(parse_timestamp(a), parse_timestamp(b)) for a, b in labels[n]])
            for n in names if files in n]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("all", "tune", "holdout"), default="all")
    ap.add_argument("--files", default="", help="only files whose path contains this")
    ap.add_argument("--no-prophet", action="store_true", help="skip (d) even when installed")
    ap.add_argument("--prophet-refit", default="2d", help="time between Prophet refits (2d)")
    ap.add_argument("--recurrence", type=int, metavar="N",
                    help=f"recurrence hold for (c), (c-), (d) (default {CFG.recurrence}; 0: off)")
    ap.add_argument("--hindsight", action="store_true",
                    help="the older table: windows detected and false alerts against hindsight statics")
    ap.add_argument("--cv", action="store_true", help="the settings grid, cross-validated by folder")
    ap.add_argument("--ideas", action="store_true",
                    help="detectors tried on top of the default's band, cross-validated by folder")
    ap.add_argument("--novelty", action="store_true",
                    help="only the novelty detector's variants, in-sample and cross-validated")
    ap.add_argument("--no-cv", action="store_true",
                    help="skip the leave-one-folder-out cross-validation after the NAB table")
    ap.add_argument("--cost", action="store_true",
                    help="CPU per point and state size: the default against the point band")
    ap.add_argument("--jobs", type=int, default=1, metavar="N",
                    help="score files in N processes (NAB score, --cv, --ideas; default 1)")
    args = ap.parse_args(argv)
    global PROPHET_REFIT, RECURRENCE
    PROPHET_REFIT = parse_duration(args.prophet_refit)
    RECURRENCE = args.recurrence
    if not NAB.is_dir():
        print(f"NAB data not found at {NAB}", file=sys.stderr)
        return 2
    if args.cost:
        return cost_main()
    if not args.hindsight:
        code = nab_main(args)
        if code == 0 and not (args.cv or args.ideas or args.novelty):
            print()
            return cost_main()  # the table's CPU row, so one plain run writes every row of the area
        return code
    methods: dict[str, Callable[[FloatArray, FloatArray], list[float]]] = {
        "3sigma": rolling_3sigma, "seasonal": seasonal, "seasonal-point": seasonal_point}
    if prophet_available() and not args.no_prophet:
        methods["prophet"] = prophet
    names = ["static", "static-max", *methods]
    totals = {m: Tally() for m in names}
    seconds = dict.fromkeys(names, 0.0)
    print(f"{'':<58}" + "".join(f"| {m:<15}" for m in names))
    print(f"{'file':<58}" + "".join(f"| {'det mis fal':<15}" for m in names))
    probation = {m: Tally() for m in names}  # NAB's own convention, reported beside
    curve = {c: Tally() for c in CURVE_COSTS}
    for name, windows in load(args.split, args.files):
        s = read_csv_series(NAB / name)
        since = float(s.times[int(PROBATION * len(s.times))]) if len(s.times) else -np.inf
        row: dict[str, Tally] = {}
        t0 = time.perf_counter()
        starts = static_candidates(s.times, s.values)
        cands = [tally(st, windows) for st in starts]
        row["static"], row["static-max"] = static_pick(cands, COST_A), static_pick(cands, COST_MAX)
        for c in CURVE_COSTS:
            curve[c].add(static_pick(cands, c))
        p_cands = [tally(st, windows, since) for st in starts]
        seconds["static"] += time.perf_counter() - t0  # every criterion and convention in one pass
        probation["static"].add(static_pick(p_cands, COST_A))
        probation["static-max"].add(static_pick(p_cands, COST_MAX))
        for m, fn in methods.items():
            t0 = time.perf_counter()
            starts = fn(s.times, s.values)
            seconds[m] += time.perf_counter() - t0
            row[m] = tally(starts, windows)
            probation[m].add(tally(starts, windows, since))
        for m in names:
            totals[m].add(row[m])
        print(f"{name:<58}" + "".join(f"| {row[m].cell():<15}" for m in names), flush=True)
    print(f"{'TOTAL (' + args.split + ')':<58}" + "".join(f"| {totals[m].cell():<15}" for m in names))
    secs = {m: f"{seconds[m]:.1f}" for m in names} | {"static-max": "(in static)"}
    print(f"{'seconds':<58}" + "".join(f"| {secs[m]:<15}" for m in names))
    points = [("(a') ~0", totals["static-max"]), *((f"{c:g}", curve[c]) for c in CURVE_COSTS),
              ("(a) 1", totals["static"])]
    print("hindsight static thresholds by the cost of a false alert, in detections "
          "(detected/false): " + ", ".join(f"{k}: {t.detected}/{t.false}" for k, t in points))
    _verdicts(totals, methods)
    label = f"TOTAL, first {PROBATION:.0%} of each file not scored"
    print(f"\n{label:<58}" + "".join(f"| {probation[m].cell():<15}" for m in names))
    print("(NAB's probationary period; (a) and (a') re-chosen under that scoring)")
    _verdicts(probation, methods)
    return 0


COST_FILE = "realKnownCause/machine_temperature_system_failure.csv"  # the longest: 22 695 points


def cost_main() -> int:
    """Process CPU per point (predict + learn) in each quarter of the longest file, and the
    state kept, for the default against the point band (the default before 2026-12-03).

    A flat cost across the quarters is the O(1) amortised cost per point; the state stops
    growing once the rings are full.
    """
    s = read_csv_series(NAB / COST_FILE)
    n = len(s.times)
    quarter = n // 4
    rows: dict[str, tuple[list[float], int, int]] = {}
    for name, seasonal in (("default", CFG.seasonal), ("point band", POINT_BAND)):
        b = SeasonalBaseline(seasonal)
        per_quarter = []
        for q in range(4):
            t0 = time.process_time()
            for i in range(q * quarter, (q + 1) * quarter):
                t = float(s.times[i])
                b.predict(t)
                b.learn(t, float(s.values[i]))
            per_quarter.append((time.process_time() - t0) / quarter * 1e6)
        rows[name] = (per_quarter, b.state_size(), len(json.dumps(b.to_state())))
    print(f"{COST_FILE} ({n} points): process CPU per point (predict + learn), each quarter; state")
    for name, (us, floats, saved) in rows.items():
        print(f"  {name:<11} " + " ".join(f"{u:6.0f}" for u in us) + f" us/point; "
              f"{floats} floats in memory, {saved / 1024:.0f} KiB saved as JSON")
    (d_us, d_f, d_b), (p_us, p_f, p_b) = rows["default"], rows["point band"]
    print(f"  ratio default / point band: CPU {sum(d_us) / sum(p_us):.2f}x, "
          f"memory {d_f / p_f:.2f}x, saved {d_b / p_b:.2f}x")
    _results.record(AREA, "CPU per point, longest file, after warm-up", f"{min(d_us):.0f}–{max(d_us):.0f} µs",
                    f"the earlier point-band default: {min(p_us):.0f}–{max(p_us):.0f} µs",
                    f"{sum(d_us) / sum(p_us):.2f}")
    return 0


AREA = "Dynamic baselines on NAB"
IN_SAMPLE = ("NAB score on our 35 files, standard / reward_low_FP_rate (in-sample: the default was chosen "
             "on them)")
CV_ROW = "The same, leave-one-folder-out cross-validated, pooled (the figure to expect on new data)"
NOVELTY_CV = ("The same CV with the opt-in novelty detector (Fuzzy ART + anomaly likelihood, 12 variants) "
              "among the candidates: not better, so off by default")


def _pooled(held: list[tuple[str, str, NabTally]]) -> tuple[float, float, int | None]:
    """Held-out folders pooled: (standard, low_FP, alerts on artificialNoAnomaly held out)."""
    total = NabTally()
    for _, _, t in held:
        total.add(t)
    quiet = next((t.alerts for f, _, t in held if f == "artificialNoAnomaly"), None)
    return total.normalised(PROFILES[0]), total.normalised(PROFILES[1]), quiet


def _record_in_sample(corpus: object, methods: dict[str, dict[str, list[int]]]) -> None:
    """The in-sample rows: the default against the scoreboard's two best on the same files."""
    from nab_table import folder_tallies

    def both(t: NabTally) -> tuple[float, float]:
        return t.normalised(PROFILES[0]), t.normalised(PROFILES[1])

    tallies = {m: folder_tallies(corpus, rows) for m, rows in methods.items()}  # type: ignore[arg-type]
    board = [(m.removeprefix("NAB board: "), t) for m, t in tallies.items() if m.startswith("NAB board")]
    board = sorted(board, key=lambda mt: -both(mt[1]["TOTAL"])[0])[:2]
    if not board:
        return
    (std, low) = both(tallies["inferwatch default"]["TOTAL"])
    (best_std, best_low) = both(board[0][1]["TOTAL"])
    peers = ", ".join(f"{m} {both(t['TOTAL'])[0]:.1f} / {both(t['TOTAL'])[1]:.1f}" for m, t in board)
    _results.record(AREA, IN_SAMPLE, f"{std:.1f} / {low:.1f}",
                    "scoreboard's best on the same files: " + peers,
                    f"{std / best_std:.2f} / {low / best_low:.2f} (vs {board[0][0]})")
    quiet = "artificialNoAnomaly"
    _results.record(AREA, f"Alerts on `{quiet}` (want 0)", str(tallies["inferwatch default"][quiet].alerts),
                    ", ".join(f"{m} {t[quiet].alerts}" for m, t in board), None)

def nab_main(args: argparse.Namespace) -> int:
    """NAB's score per folder and in total, both profiles, beside the scoreboard."""
    from nab_table import (
        CV_CANDIDATES,
        GRID_MERGE,
        GRID_RECURRENCE,
        Corpus,
        anchor_rows,
        cross_validate,
        grid_rows,
        idea_rows,
        print_table,
        run_method,
        run_seasonal,
    )

    corpus = Corpus.load(NAB, [n for n, _ in load("all", args.files)])
    if args.novelty:
        novelty_main(corpus, args.jobs)
        return 0
    if args.cv or args.ideas:
        rows = grid_rows(corpus, CFG, args.jobs) if args.cv else idea_rows(corpus, CFG, args.jobs)
        cross_validate(corpus, rows)
        return 0
    methods: dict[str, dict[str, list[int]]] = {}
    variants: dict[str, tuple[object, int | None]] = {
        "inferwatch default": (CFG.seasonal, RECURRENCE),
        "inferwatch default, no hold": (CFG.seasonal, 0),
        "inferwatch point band (old dflt)": (POINT_BAND, RECURRENCE),
    }
    if prophet_available() and not args.no_prophet:
        from inferwatch.baseline import ProphetBaseline

        pcfg = dataclasses.replace(CFG.prophet, refit_every=PROPHET_REFIT)
        variants["prophet"] = (lambda: ProphetBaseline(pcfg), RECURRENCE)
    for name, (make, rec) in variants.items():
        t0 = time.perf_counter()
        if callable(make):
            methods[name] = run_method(corpus, make, CFG, rec)
        else:
            methods[name] = run_seasonal(corpus, make, CFG, rec, args.jobs)  # type: ignore[arg-type]
        print(f"  {name}: {time.perf_counter() - t0:.1f} s", flush=True)
    published: dict[str, float] = {}
    for key, entry in corpus.anchors.items():
        label = f"NAB board: {entry['name']}"
        methods[label] = anchor_rows(corpus, key)
        published[label] = float(entry["reward_low_FP_on_these_files"])  # type: ignore[arg-type]
    print_table(corpus, methods, published)
    _record_in_sample(corpus, methods)
    if not args.no_cv:
        # the in-sample table flatters settings chosen on these files; the held-out folds
        # are the estimate for data never tuned on (issue 35)
        print(f"\nleave-one-folder-out cross-validation over the candidates {list(CV_CANDIDATES)}"
              f" x recurrence {list(GRID_RECURRENCE)} x merge gap {list(GRID_MERGE)}:", flush=True)
        grid = grid_rows(corpus, CFG, args.jobs, CV_CANDIDATES)
        std, low, _ = _pooled(cross_validate(corpus, grid))
        _results.record(AREA, CV_ROW, f"{std:.1f} / {low:.1f}",
                        "(the scoreboard publishes no held-out figure)", None)
        novelty_main(corpus, args.jobs, grid, (std, low))
    return 0


def novelty_main(corpus: object, jobs: int, grid: dict[str, dict[str, list[int]]] | None = None,
                 without: tuple[float, float] | None = None) -> None:
    """The novelty detector (issue 35): each variant in-sample, then CV against the band alone.

    With ``grid`` (the candidates' rows above), also CV over those candidates and the
    novelty variants together: the old default's CV figure against the new one's.
    """
    from nab_novelty import BAND, novelty_cost, novelty_rows
    from nab_table import cross_validate, print_table

    rows = novelty_rows(corpus, CFG, jobs)
    print("\nnovelty detector (Fuzzy ART + anomaly likelihood, OR-ed with the band), in-sample:")
    print_table(corpus, rows)  # type: ignore[arg-type]
    print(f"\nleave-one-folder-out CV: the band alone only ({BAND}):", flush=True)
    cross_validate(corpus, {BAND: rows[BAND]})  # type: ignore[arg-type]
    print("\nleave-one-folder-out CV: the band alone and every novelty variant:", flush=True)
    cross_validate(corpus, rows)  # type: ignore[arg-type]
    if grid is not None:
        print("\nleave-one-folder-out CV: the candidates above and every novelty variant together:",
              flush=True)
        held = cross_validate(corpus, {**grid, **{k: v for k, v in rows.items() if k != BAND}})  # type: ignore[arg-type]
        if without is not None:
            std, low, quiet = _pooled(held)
            _results.record(AREA, NOVELTY_CV,
                            f"{std:.1f} / {low:.1f} ({quiet} alerts on `artificialNoAnomaly`)",
                            f"without it: {without[0]:.1f} / {without[1]:.1f}",
                            f"{std / without[0]:.2f} / {low / without[1]:.2f}")
    s = read_csv_series(NAB / COST_FILE)
    band_us, both_us, nbytes = novelty_cost(s.times, s.values, CFG)
    print(f"cost on {COST_FILE}: band {band_us:.0f} us/point, band + novelty {both_us:.0f} us/point"
          f" ({both_us / band_us:.2f}x); novelty state {nbytes} bytes per series")
    if grid is not None:
        _results.record(AREA, "CPU per point with the novelty detector on, longest file",
                        f"{both_us:.0f} µs (+{nbytes} B state per series)",
                        f"the band alone, same run: {band_us:.0f} µs", f"{both_us / band_us:.2f}")


def _verdicts(totals: dict[str, Tally], methods: dict[str, Callable[[FloatArray, FloatArray], list[float]]],
              ) -> None:
    for ref in ("static", "static-max"):
        a = totals[ref]
        for m in methods:
            c = totals[m]
            ratio = c.false / a.false if a.false else float("inf")
            met = c.detected >= a.detected and ratio <= 0.5
            print(f"{m} vs {ref}: detected {c.detected}/{a.detected}, false alerts {c.false}/{a.false}"
                  f" (ratio {ratio:.2f}; target: detected >= {ref}, ratio <= 0.50: "
                  f"{'met' if met else 'not met'})")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
