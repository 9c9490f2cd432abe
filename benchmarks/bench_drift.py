"""Drift: inferwatch against Evidently's data-drift preset, 100 numeric features x 100,000 rows.

    python benchmarks/bench_drift.py [--evidently-venv DIR] [--rows N] [--features N] [--no-evidently]

Side by side in one run, on the same data (reference normal, current with 10
of the features shifted):

1. inferwatch, in process: ``DriftDetector().fit(ref).score(cur)`` with all
   four statistics (PSI, KS with p-value, JS, Wasserstein), and with PSI alone;
2. ``inferwatch drift --format json`` end to end on Parquet files (process
   start, reading, scoring, writing);
3. Evidently 0.7.23's ``Report([DataDriftPreset()]).run(cur, ref)`` timed in a
   subprocess of a separate venv (Evidently pins pandas<3, so never the
   project's). The venv is ``--evidently-venv`` (default
   ``~/.cache/inferwatch-bench/venv-evidently``), created with
   ``evidently==0.7.23 "pandas<3"`` when missing. The subprocess also computes
   Evidently's PSI on its own bins for 5 features, and we compare ours on the
   same bins;
4. streaming ingest: ``DriftAggregator.consume`` of 1,000-row numpy batches,
   feature values per second, and the memory per monitored feature.

Bounded: Evidently gets at most 900 s; everything else takes seconds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

import _results
from inferwatch.quality import DriftAggregator, DriftDetector, bin_counts, build_profile, psi_from_counts

DEFAULT_VENV = Path.home() / ".cache" / "inferwatch-bench" / "venv-evidently"
EVIDENTLY_TIMEOUT_S = 900

_EVIDENTLY_SCRIPT = textwrap.dedent("""
    import json, sys, time
    import numpy as np, pandas as pd
    from evidently import Report
    from evidently.presets import DataDriftPreset
    from evidently.legacy.calculations.stattests.psi import _psi
    from evidently.legacy.core import ColumnType
    ref = pd.read_parquet(sys.argv[1]); cur = pd.read_parquet(sys.argv[2])
    t = time.perf_counter()
    Report([DataDriftPreset()]).run(current_data=cur, reference_data=ref)
    preset = time.perf_counter() - t
    psis = {}
    for name in list(ref.columns)[:5]:
        edges = np.histogram_bin_edges(np.r_[ref[name].values, cur[name].values], bins="sturges")
        eps = []
        for s in (ref[name].values, cur[name].values):  # Evidently's zero-fill rule, per sample
            frac = np.histogram(s, edges)[0] / s.size
            low = frac[frac > 0].min()
            eps.append(float(low / 10**6 if low <= 0.0001 else 0.0001))
        psis[name] = {"psi": float(_psi(ref[name], cur[name], ColumnType.Numerical, 0.1)[0]),
                      "edges": edges.tolist(), "epsilon": eps}
    print(json.dumps({"preset_s": preset, "psi": psis}))
""")


def make_data(rows: int, features: int, seed: int = 7) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    ref = {f"f{i:03d}": rng.normal(0.0, 1.0, rows) for i in range(features)}
    cur = {f"f{i:03d}": rng.normal(0.5 if i % 10 == 0 else 0.0, 1.0, rows) for i in range(features)}
    return ref, cur


def best_of(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def write_parquet(table: dict[str, np.ndarray], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(table), path)


def evidently_python(venv: Path) -> Path | None:
    py = venv / "bin" / "python"
    if py.exists():
        return py
    print(f"creating {venv} with evidently==0.7.23 (once) ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "evidently==0.7.23", "pandas<3"],
                       check=True, timeout=900)
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"could not install Evidently: {exc}", flush=True)
        return None
    return py


def run_evidently(py: Path, ref: Path, cur: Path) -> dict[str, object] | None:
    try:
        out = subprocess.run([str(py), "-c", _EVIDENTLY_SCRIPT, str(ref), str(cur)], capture_output=True,
                             text=True, timeout=EVIDENTLY_TIMEOUT_S, check=True)
    except subprocess.TimeoutExpired:
        print(f"Evidently did not finish in {EVIDENTLY_TIMEOUT_S} s", flush=True)
        return None
    except subprocess.CalledProcessError as exc:
        print(f"Evidently failed: {exc.stderr[-2000:]}", flush=True)
        return None
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def ingest_rate(ref: dict[str, np.ndarray], features: int) -> tuple[float, float, float]:
    profile = build_profile(ref)
    agg = DriftAggregator(profile, service="bench", window=3600.0)
    rng = np.random.default_rng(1)
    batch = rng.normal(size=(1000, features))
    payloads = [(batch, None, None)]
    n = 200
    t = time.perf_counter()
    for i in range(n):
        agg.consume("prediction", payloads, now=float(i))
    elapsed = time.perf_counter() - t
    names = profile.names[:10]
    small = DriftAggregator(build_profile({k: ref[k] for k in names}), service="bench", window=3600.0)
    rows = [({k: float(v) for k, v in zip(names, r, strict=False)}, None, None) for r in batch]
    t = time.perf_counter()
    for i in range(20):
        small.consume("prediction", rows, now=float(i))
    row_rate = 20 * len(rows) * len(names) / (time.perf_counter() - t)
    cuts_bytes = sum(f.cuts.nbytes + f.counts.nbytes for f in profile.features)  # type: ignore[union-attr]
    per_feature = (agg.window_bytes + cuts_bytes) / features
    return n * batch.size / elapsed, row_rate, per_feature


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--evidently-venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument("--no-evidently", action="store_true")
    args = ap.parse_args()
    ref, cur = make_data(args.rows, args.features)
    print(f"data: {args.features} numeric features x {args.rows} rows, reference and current", flush=True)

    all4 = best_of(lambda: DriftDetector().fit(ref).score(cur))
    all4_jobs2 = best_of(lambda: DriftDetector().fit(ref).score(cur, jobs=2), repeat=2)
    psi_only = best_of(lambda: DriftDetector(statistics=frozenset({"psi"})).fit(ref).score(cur))
    rate, row_rate, per_feature = ingest_rate(ref, args.features)

    evid: dict[str, object] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        rp, cp = Path(tmp) / "ref.parquet", Path(tmp) / "cur.parquet"
        write_parquet(ref, rp)
        write_parquet(cur, cp)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "inferwatch", "drift", "-r", str(rp), "--current", str(cp),
                        "--format", "json", "-o", str(Path(tmp) / "out.json")], check=True, timeout=600,
                       capture_output=True)
        cli = time.perf_counter() - t
        if not args.no_evidently:
            py = evidently_python(args.evidently_venv)
            evid = run_evidently(py, rp, cp) if py else None

    print("\n| what | seconds | Evidently preset / this |")
    print("|---|---:|---:|")
    preset = float(evid["preset_s"]) if evid else None  # type: ignore[arg-type]
    for label, secs in (("inferwatch, PSI+KS+JS+Wasserstein (in process)", all4),
                        ("inferwatch, all four, scoring on 2 threads (`--jobs 2`)", all4_jobs2),
                        ("inferwatch, PSI alone (in process)", psi_only),
                        ("`inferwatch drift --format json` end to end (Parquet)", cli)):
        ratio = f"{preset / secs:.1f}x" if preset else "n/a"
        print(f"| {label} | {secs:.3f} | {ratio} |")
    if preset:
        print(f"| Evidently 0.7.23 DataDriftPreset (measured here) | {preset:.1f} | 1.0x |")
        worst = 0.0
        for name, v in evid["psi"].items():  # type: ignore[union-attr]
            cuts = np.array(v["edges"])[1:-1]
            ours = psi_from_counts(bin_counts(ref[name], cuts), bin_counts(cur[name], cuts),
                                   epsilon=tuple(v["epsilon"]))
            worst = max(worst, abs(ours - v["psi"]) / max(abs(v["psi"]), 1e-12))
        print(f"\nPSI on Evidently's bins (sturges, equal width over both) and its per-sample "
              f"epsilon, 5 features: max relative difference {worst:.2e}")
    else:
        print("| Evidently 0.7.23 DataDriftPreset | 65 (issue's figure, NOT measured here) | - |")
    print(f"\nstreaming ingest: {rate / 1e6:.2f} M feature values/s (1,000-row numpy batches, one thread)")
    print(f"streaming ingest: {row_rate / 1e6:.2f} M feature values/s (one dict of 10 features per "
          "prediction, the per-request case)")
    print(f"memory per monitored numeric feature: {per_feature:.0f} B (10 bins: cuts, reference and "
          "window counts)")
    area, shape = "Model quality and estimated performance", f"{args.features} features × {args.rows:,} rows"
    peer = f"Evidently 0.7.23 `DataDriftPreset`: {preset:.1f} s" if preset else None
    _results.record(area, f"Drift of {shape}, PSI + KS + JS + Wasserstein", f"{all4:.3f} s", peer,
                    f"{all4 / preset:.3f} ({preset / all4:.0f}x faster)" if preset else None)
    _results.record(area, "The same, PSI alone", f"{psi_only:.3f} s",
                    f"Evidently 0.7.23: {preset:.1f} s" if preset else None,
                    f"{psi_only / preset:.4f} ({preset / psi_only:.0f}x)" if preset else None)
    _results.record(area, "Streaming drift ingest, 1,000-row batches", f"{rate / 1e6:.2f} M values/s",
                    "–", None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
