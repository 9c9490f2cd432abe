"""Bit-for-bit fingerprint of the default dynamic detector on the NAB files (issue 35, memory).

    python benchmarks/baseline_digest.py [--files SUBSTRING] [--state]

For each file of ``../shared/data/nab`` prints one SHA-256 over the default
``SeasonalBaseline``'s expected value, band, anomalous and released flags (the
default recurrence hold included): every decision ``make bench BENCH=nab``'s
default detector makes. Run it under the old and the new code (PYTHONPATH) and
diff the output: identical lines mean identical detections. ``--state`` also
saves and restores the baseline through JSON at the middle of each file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from inferwatch.baseline import (
    BaselineSettings,
    SeasonalBaseline,
    read_csv_series,
    recurrence_gate,
    score_series,
)

NAB = Path(__file__).resolve().parents[2] / "shared" / "data" / "nab"


def digest(path: Path, *, state: bool = False) -> str:
    """SHA-256 of every decision the default detector makes on one NAB file."""
    cfg = BaselineSettings()
    series = read_csv_series(path)
    times, values = series.times, series.values
    baseline = SeasonalBaseline(cfg.seasonal)
    gate = recurrence_gate(cfg, None)
    if state:
        half = len(times) // 2
        first = score_series(times[:half], values[:half], baseline, cfg.direction, gate)
        baseline = SeasonalBaseline.from_state(json.loads(json.dumps(baseline.to_state())))
        second = score_series(times[half:], values[half:], baseline, cfg.direction, gate)
        parts = [np.concatenate([getattr(first, k), getattr(second, k)])
                 for k in ("expected", "lower", "upper", "anomalous", "released")]
    else:
        scored = score_series(times, values, baseline, cfg.direction, gate)
        parts = [getattr(scored, k) for k in ("expected", "lower", "upper", "anomalous", "released")]
    h = hashlib.sha256()
    for p in parts:
        h.update(np.ascontiguousarray(p).tobytes())
    return h.hexdigest()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", default="", help="only files whose name contains this")
    ap.add_argument("--state", action="store_true", help="save and restore at each file's middle")
    args = ap.parse_args(argv)
    names = sorted(json.loads((NAB / "windows.json").read_text()))
    for name in names:
        if args.files in name:
            print(name, digest(NAB / name, state=args.state), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
