"""Dump the series ``inferwatch serve`` stored over a window as gzip JSON, for a replay in tests.

``{"start", "end", "series": [{"labels": {...}, "t": [...], "v": [...]}]}``; timestamps in ms
precision, values as stored. Only the series the GPU playbook reads are kept (the rest is noise).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
from pathlib import Path

from inferwatch.model import METRIC_NAME_LABEL, Matcher, MatchOp
from inferwatch.store import TSDB_FILE, SQLiteStore

KEEP = ("DCGM_.*|inferwatch_gpu_.*|inferwatch_requests_total|inferwatch_process_.*|inferwatch_python_gc_.*"
        "|node_cpu_seconds_total|up")


def main() -> int:
    """Write the dump; prints the number of series and samples."""
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", required=True)
    p.add_argument("--workload-log", required=True, help="the workload's JSON lines (phases ±5 s)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    events = [json.loads(line) for line in Path(args.workload_log).read_text().splitlines() if line.strip()]
    phases = [e for e in events if e.get("event") in ("phase", "phase_end")]
    args.start = min(e["start"] for e in phases) - 5
    args.end = max(e["t"] for e in phases) + 5
    store = SQLiteStore(Path(args.data_dir) / TSDB_FILE)
    try:
        got = store.select([Matcher(METRIC_NAME_LABEL, MatchOp.RE, KEEP)], args.start, args.end)
    finally:
        store.close()
    series = [
        {"labels": dict(s.labels), "t": [round(float(t), 3) for t in s.t],
         "v": [None if math.isnan(v) else float(v) for v in s.v]}
        for s in got
    ]
    body = json.dumps({"start": args.start, "end": args.end, "series": series}, separators=(",", ":"))
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        f.write(body)
    print(f"dump_series: {len(series)} series, {sum(len(s['t']) for s in series)} samples -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
