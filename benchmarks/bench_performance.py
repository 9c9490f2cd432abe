"""Estimated performance: inferwatch's CBPE and DLE against NannyML's and the truth, on NannyML's datasets.

    python benchmarks/bench_performance.py [--nannyml-python PATH] [--repeats N] [--no-nannyml]

Side by side in one run, on the same chunks of the same data:

1. NannyML 0.13's ``CBPE(...)`` (classifiers) or ``DLE(...)`` (the car-price
   regressor) ``.fit(reference)`` + ``.estimate(analysis)`` in a
   subprocess under NannyML's own interpreter (``benchmarks/performance_nannyml.py``;
   NannyML pins its own pandas and scikit-learn, so never the project's venv).
   The interpreter is ``--nannyml-python`` or ``$INFERWATCH_BENCH_NANNYML_PYTHON``,
   default ``~/.cache/inferwatch-bench/venv-nannyml/bin/python``, created with
   ``pip install nannyml statsmodels`` when missing. That subprocess also writes
   the inputs (Parquet) that inferwatch then reads, so both see the same rows;
2. inferwatch in process: ``estimate_chunks`` (column extraction, calibration,
   every chunk) on those tables, or for the regressor ``estimate_regression_chunks``
   (feature encoding, the loss model's fit, every chunk), with its default
   settings and, on a second line, with ``DLE(tune=True)`` (hyper-parameters by
   cross-validation on the reference);
3. the truth: the realized metric of each chunk from NannyML's analysis targets
   (joined by id), computed by ``inferwatch.quality``'s metrics, which the tests
   check against scikit-learn.

Per dataset and metric: the mean absolute error of each tool's estimate against
the realized value over the analysis chunks, their ratio, and the best time of
``--repeats`` runs; for the regressor also how many chunks' realized values
fall inside each tool's band. Target: inferwatch's error no larger than NannyML's, ≥ 20x
faster. The held-out ``load_us_census_ma_employment_data`` is not used.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _results
from inferwatch.quality import (
    DLE,
    ColumnSpec,
    estimate_chunks,
    estimate_regression_chunks,
    join_targets,
    read_table,
)

HERE = Path(__file__).resolve().parent
DEFAULT_VENV = Path.home() / ".cache" / "inferwatch-bench" / "venv-nannyml"
NANNYML_TIMEOUT_S = 1500
METRICS = ("roc_auc", "accuracy", "f1", "precision", "recall")
REGRESSION_METRICS = ("mae", "rmse")
SEEN: list[tuple[float, list[float]]] = []
"""Per dataset reported: the speed-up over NannyML and the MAE ratios (for the summary row)."""


def nannyml_python(explicit: str | None) -> Path:
    """The interpreter that has NannyML (created in a cache venv when none is given)."""
    chosen = explicit or os.environ.get("INFERWATCH_BENCH_NANNYML_PYTHON")
    if chosen:
        return Path(chosen)
    py = DEFAULT_VENV / "bin" / "python"
    if not py.exists():
        print(f"creating {DEFAULT_VENV} with nannyml (one time)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(DEFAULT_VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "nannyml", "statsmodels"], check=True)
    return py


def run_nannyml(py: Path, out: Path, repeats: int) -> dict:
    """NannyML's estimates and times; it also writes the shared inputs into ``out``."""
    subprocess.run(
        [str(py), str(HERE / "performance_nannyml.py"), str(out), str(repeats)],
        check=True,
        timeout=NANNYML_TIMEOUT_S,
    )
    return json.loads((out / "nannyml.json").read_text())


def inferwatch_side(out: Path, name: str, d: dict, repeats: int) -> tuple[list[dict], list[dict], float]:
    """inferwatch's per-chunk estimates, the realized metrics, and the best time."""
    ref = read_table(out / f"{name}.reference.parquet")
    ana = read_table(out / f"{name}.analysis.parquet")
    tgt = read_table(out / f"{name}.targets.parquet")
    proba = d["proba"]
    spec_text = proba if isinstance(proba, str) else ",".join(f"{k}={v}" for k, v in proba.items())
    spec = ColumnSpec.parse(spec_text, "y_pred", d["y_true"])
    truth = join_targets(ana[d["id"]], tgt[d["id"]], spec.labels(tgt, d["y_true"], "targets"))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        chunks = estimate_chunks(ref, ana, spec, chunk_size=d["chunk"], metrics=METRICS)
        best = min(best, time.perf_counter() - t)
    with_truth = estimate_chunks(ref, ana, spec, chunk_size=d["chunk"], metrics=METRICS, truth=truth)
    return [c.estimate.estimated for c in chunks], [c.realized or {} for c in with_truth], best


def regression_side(
    out: Path, name: str, d: dict, repeats: int, settings: DLE
) -> tuple[list, list[dict], float, object]:
    """inferwatch's DLE per chunk (estimates with bands), the realized metrics, the best time, the fit."""
    ref = read_table(out / f"{name}.reference.parquet")
    ana = read_table(out / f"{name}.analysis.parquet")
    tgt = read_table(out / f"{name}.targets.parquet")
    truth = join_targets(ana[d["id"]], tgt[d["id"]], tgt[d["y_true"]])
    kw = {"features": d["features"], "y_pred": d["y_pred"], "y_true": d["y_true"], "chunk_size": d["chunk"],
          "settings": settings}
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        chunks, fitted = estimate_regression_chunks(ref, ana, **kw)
        best = min(best, time.perf_counter() - t)
    with_truth, _ = estimate_regression_chunks(ref, ana, truth=truth, **kw)
    return [c.estimate for c in chunks], [c.realized or {} for c in with_truth], best, fitted


def report_regression(name: str, nml: dict, out: Path, repeats: int) -> bool:
    """The regressor's table: NannyML DLE against inferwatch DLE (default, then tuned on the reference)."""
    default = regression_side(out, name, nml, repeats, DLE(metrics=REGRESSION_METRICS))
    tuned = regression_side(out, name, nml, 1, DLE(metrics=REGRESSION_METRICS, tune=True))
    theirs, real = nml["chunks"], default[1]
    print(f"\n{name} (regression, DLE): {len(real)} chunks of {nml['chunk']} rows")
    print(f"  {'metric':<6} {'MAE nannyml':>12} {'MAE inferwatch':>15} {'ratio':>7} {'tuned':>8} "
          f"{'in band nannyml':>16} {'inferwatch':>11}")
    ok = len(theirs) == len(default[0])
    ratios = []
    for m in REGRESSION_METRICS:
        a = mae(theirs, real, m)
        b = mae([e.estimated for e in default[0]], real, m)
        ratios.append(b / a)
        c = mae([e.estimated for e in tuned[0]], real, m)
        ok &= b <= a * 1.0000001
        nml_in = sum(lo <= r[m] <= hi for (lo, hi), r in zip((x[m] for x in nml["bands"]), real, strict=True))
        our_in = sum(e.lower[m] <= r[m] <= e.upper[m] for e, r in zip(default[0], real, strict=True))
        print(f"  {m:<6} {a:>12.2f} {b:>15.2f} {b / a:>7.3f} {c:>8.2f} {nml_in:>13}/{len(real)} "
              f"{our_in:>8}/{len(real)}")
    speed = nml["seconds"] / default[2]
    SEEN.append((speed, ratios))
    ok &= speed >= 20
    print(f"  time: nannyml {nml['seconds'] * 1000:.0f} ms, inferwatch {default[2] * 1000:.1f} ms, "
          f"{speed:.1f}x faster; tuned {tuned[2] * 1000:.0f} ms (fit with cross-validation)")
    fitted = default[3]
    print(f"  default loss model: {fitted.params.label()}, "
          f"squared error {'c*m(x)^2' if fitted.squared_from_absolute else 'own model'}, "
          f"{', '.join(str(m.n_iter_) for m in fitted.models.values())} trees (early stopping)")
    print("  " + "\n  ".join(tuned[3].cv.lines()))
    return ok


def mae(est: list[dict], real: list[dict], metric: str) -> float:
    """Mean absolute error of the estimates against the realized values, over the chunks."""
    return float(np.mean([abs(e[metric] - r[metric]) for e, r in zip(est, real, strict=True)]))


def report(name: str, nml: dict, ours: list[dict], real: list[dict], ours_s: float) -> bool:
    """Print one dataset's table; True when inferwatch meets the targets on it."""
    theirs = nml["chunks"]
    if len(theirs) != len(ours):
        print(f"{name}: chunk counts differ (nannyml {len(theirs)}, inferwatch {len(ours)})")
        return False
    print(f"\n{name}: {len(ours)} chunks of {nml['chunk']} rows")
    print(f"  {'metric':<10} {'MAE nannyml':>12} {'MAE inferwatch':>15} {'ratio':>7}")
    ok = True
    maes = {}
    for m in METRICS:
        a, b = mae(theirs, real, m), mae(ours, real, m)
        maes[m] = (a, b)
        ok &= b <= a * 1.0000001
        print(f"  {m:<10} {a:>12.4f} {b:>15.4f} {b / a if a else float('nan'):>7.3f}")
    speed = nml["seconds"] / ours_s
    SEEN.append((speed, [b / a for a, b in maes.values() if a]))
    if name == "car_loan" and "roc_auc" in maes:
        a, b = maes["roc_auc"]
        _results.record("Model quality and estimated performance",
                        "Estimated performance (CBPE), synthetic car loan, "
                        f"{len(ours)} chunks of {nml['chunk']:,}",
                        f"{ours_s * 1000:.1f} ms; ROC AUC MAE {b:.4f}",
                        f"NannyML {nml.get('version', '0.13.1')}: {nml['seconds'] * 1000:,.0f} ms; "
                        f"MAE {a:.4f}",
                        f"time {1 / speed:.3f} ({speed:.0f}x); MAE {b / a:.3f}")
    ok &= speed >= 20
    print(
        f"  time: nannyml {nml['seconds'] * 1000:.0f} ms, inferwatch {ours_s * 1000:.1f} ms, "
        f"{speed:.0f}x faster"
    )
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nannyml-python", help="Python interpreter with nannyml installed")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per tool and dataset (best is kept)")
    ap.add_argument("--work", help="directory for the shared inputs (default: a temporary one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.work or tmp)
        out.mkdir(parents=True, exist_ok=True)
        nml = run_nannyml(nannyml_python(args.nannyml_python), out, args.repeats)
        met = []
        for name, d in nml.items():
            if d.get("problem") == "regression":
                met.append(report_regression(name, d, out, args.repeats))
                continue
            ours, real, secs = inferwatch_side(out, name, d, args.repeats)
            met.append(report(name, d, ours, real, secs))
    print(f"\ntargets met on {sum(met)} of {len(met)} datasets")
    if SEEN:
        speeds = [x for x, _ in SEEN]
        ratios = [r for _, rs in SEEN for r in rs]
        _results.record("Model quality and estimated performance",
                        "Estimated performance, every dataset of the run",
                        f"{min(speeds):.0f}–{max(speeds):.0f}x faster", "NannyML",
                        f"MAE ratio {min(ratios):.3f}–{max(ratios):.3f}", note=f"{len(SEEN)} datasets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
