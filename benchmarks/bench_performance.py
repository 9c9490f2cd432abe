"""Estimated performance: inferwatch's CBPE against NannyML's, both against the truth, on NannyML's datasets.

    python benchmarks/bench_performance.py [--nannyml-python PATH] [--repeats N] [--no-nannyml]

Side by side in one run, on the same chunks of the same data:

1. NannyML 0.13's ``CBPE(...).fit(reference)`` + ``.estimate(analysis)`` in a
   subprocess under NannyML's own interpreter (``benchmarks/performance_nannyml.py``;
   NannyML pins its own pandas and scikit-learn, so never the project's venv).
   The interpreter is ``--nannyml-python`` or ``$INFERWATCH_BENCH_NANNYML_PYTHON``,
   default ``~/.cache/inferwatch-bench/venv-nannyml/bin/python``, created with
   ``pip install nannyml statsmodels`` when missing. That subprocess also writes
   the inputs (Parquet) that inferwatch then reads, so both see the same rows;
2. inferwatch in process: ``estimate_chunks`` (column extraction, calibration,
   every chunk) on those tables;
3. the truth: the realized metric of each chunk from NannyML's analysis targets
   (joined by id), computed by ``inferwatch.quality``'s metrics, which the tests
   check against scikit-learn.

Per dataset and metric: the mean absolute error of each tool's estimate against
the realized value over the analysis chunks, their ratio, and the best time of
``--repeats`` runs. Target: inferwatch's error no larger than NannyML's, ≥ 20x
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

from inferwatch.quality import ColumnSpec, estimate_chunks, join_targets, read_table

HERE = Path(__file__).resolve().parent
DEFAULT_VENV = Path.home() / ".cache" / "inferwatch-bench" / "venv-nannyml"
NANNYML_TIMEOUT_S = 1500
METRICS = ("roc_auc", "accuracy", "f1", "precision", "recall")


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
    for m in METRICS:
        a, b = mae(theirs, real, m), mae(ours, real, m)
        ok &= b <= a * 1.0000001
        print(f"  {m:<10} {a:>12.4f} {b:>15.4f} {b / a if a else float('nan'):>7.3f}")
    speed = nml["seconds"] / ours_s
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
            ours, real, secs = inferwatch_side(out, name, d, args.repeats)
            met.append(report(name, d, ours, real, secs))
    print(f"\ntargets met on {sum(met)} of {len(met)} datasets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
