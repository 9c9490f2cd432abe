"""Range queries: inferwatch's PromQL engine vs Prometheus 2.42 on the same samples, in one run.

    python benchmarks/bench_query.py [--series 10000] [--hours 6] [--step 15] [--rounds 3] [--stepwise]

Two metrics of ``--series`` series each, one sample every 15 s for ``--hours``:
a latency histogram (``bench_latency_seconds_bucket``: services x instances x
10 buckets) and a request counter (``bench_requests_total``: services x
instances); one series in a hundred has a counter reset halfway. The same
samples go into a real Prometheus 2.42 (an OpenMetrics file, ``promtool tsdb
create-blocks-from openmetrics``, then ``prometheus`` on that data directory,
the compliance harness's helpers) and into an in-memory store that inferwatch's
engine reads. Timed, median of ``--rounds`` (after one warm-up each):

1. ``histogram_quantile(0.99, sum by (service, le) (rate(bench_latency_seconds_bucket[5m])))``
2. ``topk(10, rate(bench_requests_total[5m]))``

as ``query_range`` over the whole span at ``--step``: inferwatch's
``Engine.range`` in process (parse, load, evaluate, shape the result) and
Prometheus's ``/api/v1/query_range`` over loopback (its JSON for these small
results is a few KiB). Also printed: each query's peak Python memory during
the query (tracemalloc) against the bytes of the samples it reads (16 per
sample), and with ``--stepwise`` the step-by-step evaluator's time (slow: use
a small size).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.promql.compliance import compare, free_port, wait_ready

import _results
from inferwatch.model import Labels, Matcher, MatchOp
from inferwatch.promql import Engine
from inferwatch.store import Series

T0 = 1_700_000_000
BUCKETS = ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "+Inf"]
QUERIES = {
    "p99 histogram_quantile": "histogram_quantile(0.99, sum by (service, le) "
                              "(rate(bench_latency_seconds_bucket[5m])))",
    "topk(10, rate)": "topk(10, rate(bench_requests_total[5m]))",
}
ROWS = {
    "p99 histogram_quantile": "Range query `histogram_quantile(0.99, …rate…)`, {series} series a metric, "
                              "{hours} h at {step} s steps",
    "topk(10, rate)": "Range query `topk(10, rate(…))`, same data",
}
"""Each query's row in RESULTS.md (written only when both engines gave the same answer)."""


class ArrayStore:
    """A read-only store over prebuilt arrays (filling a real store sample by sample takes minutes here)."""

    def __init__(self, series: list[Series]) -> None:
        self._series = sorted(series, key=lambda s: s.labels.items_tuple)
        self._by_name: dict[str, list[Series]] = {}
        for s in self._series:
            self._by_name.setdefault(s.labels.name, []).append(s)

    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        name = next((m.value for m in matchers if m.name == "__name__" and m.op is MatchOp.EQ), None)
        out = []
        cuts: dict[int, tuple[int, int]] = {}  # the series share their time arrays: cut each once
        for s in self._series if name is None else self._by_name.get(name, []):
            if all(m.matches(s.labels.get(m.name, "")) for m in matchers):
                a, b = cuts.get(id(s.t)) or cuts.setdefault(id(s.t), (
                    int(np.searchsorted(s.t, start, "left")), int(np.searchsorted(s.t, end, "right"))))
                if b > a:
                    out.append(Series(s.labels, s.t[a:b], s.v[a:b]))
        return out

    def series(self, matchers: Sequence[Matcher]) -> list[Labels]:
        return [s.labels for s in self.select(matchers, -1e18, 1e18)]

    def label_values(self, name: str) -> list[str]:
        return sorted({s.labels[name] for s in self._series if name in s.labels})


def make_series(n: int, hours: float) -> list[Series]:
    """``n`` histogram bucket series and ``n`` counters over ``hours`` at 15 s (seeded)."""
    rng = np.random.default_rng(42)
    times = T0 + 15.0 * np.arange(int(hours * 240) + 1)
    k = len(times)
    services = max(1, n // 200)
    per_service = n // services
    out: list[Series] = []
    for s in range(services):
        for i in range(per_service // len(BUCKETS)):
            rates = np.sort(rng.uniform(0.1, 5.0, len(BUCKETS)))
            for le, r in zip(BUCKETS, rates.tolist(), strict=True):
                v = np.cumsum(rng.poisson(r * 15, k)).astype(np.float64)
                out.append(Series(Labels.of("bench_latency_seconds_bucket", service=f"s{s}",
                                            instance=f"i{i}", le=le), times, v))
        for i in range(per_service):
            v = np.cumsum(rng.exponential(rng.uniform(1, 50) * 15, k))
            if (s * per_service + i) % 100 == 0:
                v[k // 2:] -= v[k // 2 - 1]  # a restart: the counter starts again from 0
            out.append(Series(Labels.of("bench_requests_total", service=f"s{s}", instance=f"i{i}"), times, v))
    return out


def write_openmetrics(path: Path, series: list[Series]) -> None:
    with path.open("w") as f:
        for s in series:
            inner = ",".join(f'{k}="{v}"' for k, v in s.labels.items_tuple if k != "__name__")
            head = f"{s.labels.name}{{{inner}}} "
            points = zip(s.t.tolist(), s.v.tolist(), strict=True)
            f.write("".join(f"{head}{v!r} {t:.0f}\n" for t, v in points))
        f.write("# EOF\n")


def start_prometheus(workdir: Path, series: list[Series]) -> tuple[subprocess.Popen[bytes], str, float]:
    om, tsdb = workdir / "data.om", workdir / "prom"
    t = time.perf_counter()
    write_openmetrics(om, series)
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(om), str(tsdb)],
                   check=True, capture_output=True, timeout=3600)
    om.unlink()
    load_s = time.perf_counter() - t
    (workdir / "prometheus.yml").write_text("global: {scrape_interval: 15s}\n")
    port = free_port()
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={workdir / 'prometheus.yml'}", f"--storage.tsdb.path={tsdb}",
         f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=100y"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(f"http://127.0.0.1:{port}/-/ready", proc, timeout=300)
    return proc, f"http://127.0.0.1:{port}", load_s


def timed(fn: object, rounds: int) -> tuple[float, object]:
    fn()  # type: ignore[operator]
    times, out = [], None
    for _ in range(rounds):
        t = time.perf_counter()
        out = fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=10_000, help="series per metric")
    ap.add_argument("--hours", type=float, default=6.0)
    ap.add_argument("--step", type=float, default=15.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stepwise", action="store_true", help="also time the step-by-step evaluator")
    args = ap.parse_args()
    series = make_series(args.series, args.hours)
    start, end = float(T0), T0 + args.hours * 3600
    steps = int((end - start) // args.step) + 1
    samples = sum(len(s) for s in series)
    print(f"{len(series)} series ({args.series} per metric), {samples:,} samples, {args.hours:g} h, "
          f"query_range step {args.step:g} s = {steps} steps")
    store = ArrayStore(series)
    with tempfile.TemporaryDirectory() as tmp, httpx.Client(timeout=600.0) as client:
        proc, base, load_s = start_prometheus(Path(tmp), series)
        print(f"prometheus: data written and imported with promtool in {load_s:.0f} s")
        try:
            for name, q in QUERIES.items():
                def prom(q: str = q) -> object:
                    form = {"query": q, "start": str(start), "end": str(end), "step": str(args.step)}
                    r = client.post(f"{base}/api/v1/query_range", data=form)
                    body = r.json()
                    assert body["status"] == "success", body
                    return body["data"]["result"]

                def iw(q: str = q) -> object:
                    return Engine(store).range(q, start, end, args.step).series

                p_s, p_out = timed(prom, args.rounds)
                i_s, i_out = timed(iw, args.rounds)
                assert isinstance(p_out, list) and isinstance(i_out, list)
                tracemalloc.start()
                iw()
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                touched = sum(len(s) for s in store.select(_matchers(q), start - 300, end))
                agree = compare({"resultType": "matrix", "result": p_out}, _as_json(i_out)) or "same answer"
                print(f"{name:24s} inferwatch {i_s * 1000:8.0f} ms   prometheus {p_s * 1000:8.0f} ms   "
                      f"ratio {i_s / p_s:5.2f}x   series out {len(i_out)} vs {len(p_out)}   "
                      f"peak {peak / 2**20:.0f} MiB for {touched * 16 / 2**20:.0f} MiB of samples   {agree}")
                if agree == "same answer":
                    _results.record("PromQL queries", ROWS[name].format(
                        series=f"{args.series:,}", hours=f"{args.hours:g}", step=f"{args.step:g}"),
                        f"{i_s * 1000:,.0f} ms", f"Prometheus 2.42: {p_s * 1000:,.0f} ms", f"{i_s / p_s:.2f}")
                if args.stepwise:
                    t = time.perf_counter()
                    Engine(store, stepwise=True).range(q, start, end, args.step)
                    print(f"{'':24s} step by step {time.perf_counter() - t:.1f} s")
        finally:
            proc.terminate()
            proc.wait(30)


def _as_json(series: list[tuple[Labels, list[tuple[float, float]]]]) -> dict[str, object]:
    return {"resultType": "matrix", "result": [
        {"metric": ls.to_dict(), "values": [[t, repr(v)] for t, v in pts]} for ls, pts in series]}


def _matchers(q: str) -> tuple[Matcher, ...]:
    from inferwatch.store import parse_selector

    name = "bench_latency_seconds_bucket" if "latency" in q else "bench_requests_total"
    return tuple(parse_selector(name))


if __name__ == "__main__":
    main()
