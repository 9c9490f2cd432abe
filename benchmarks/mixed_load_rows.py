"""bench_mixed_load.py's rows of RESULTS.md (``run.py --results``), from both systems' results."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence

import _results

AREA = "Hostile input, faults and load"
Pct = Callable[[Sequence[float], float], float]


def record(results: Mapping[str, Mapping[str, object]], args: argparse.Namespace, pct: Pct,
           dashboard: Sequence[str]) -> None:
    """The rule rounds, the heavy queries and the dashboard's own queries, inferwatch beside Prometheus.

    Recorded only when both ran (``--only`` measures one side: its figures have no row).
    """
    if set(results) != {"inferwatch", "prometheus"}:
        return
    iw, pr = results["inferwatch"], results["prometheus"]
    how = "at the same time" if args.together else "one after the other"
    load = iw["load"]
    assert isinstance(load, tuple)
    note = f"{how}, load average {load[0]:.0f}-{load[1]:.0f}"
    cpu = iw["round_cpu"]
    assert isinstance(cpu, tuple)
    what = (f"Mixed load, {args.series:,} series at {args.interval:g} s, default pack + SLO + an alerting "
            f"rule at 5 s, {args.clients} dashboard clients: rule round p50 / p99, rounds missed")
    ours = (f"{iw['round_p50']:.1f} s / {iw['round_p99']:.1f} s, {iw['missed']:.0f} of {iw['expected']:.0f} "
            f"missed; the round's own CPU p50 {cpu[0]:.2f} s")
    peer = (f"Prometheus 2.42, same run: {pr['round_p50']:.1f} s / {pr['round_p99']:.1f} s, "
            f"{pr['missed']:.0f} missed")
    ratio = f"{_ratio(iw['round_p50'], pr['round_p50'])} / {_ratio(iw['round_p99'], pr['round_p99'])}"
    _results.record(AREA, what, ours, peer, ratio, note=note)

    def lat(r: Mapping[str, object], qs: Sequence[str]) -> tuple[float, float]:
        lats = r["lat"]
        assert isinstance(lats, dict)
        xs = [x for q in qs for x in lats[q]]
        return pct(xs, 0.5), pct(xs, 0.99)

    def pair(qs: Sequence[str]) -> tuple[str, str, str]:
        (a, b), (c, d) = lat(iw, qs), lat(pr, qs)
        return f"{a:.1f} s / {b:.1f} s", f"{c:.1f} s / {d:.1f} s", f"{_ratio(a, c)} / {_ratio(b, d)}"

    lats = iw["lat"]
    assert isinstance(lats, dict)
    every = list(lats)
    (o1, p1, r1), (o2, p2, r2) = pair(["count(load_gauge > 0.5)"]), pair(every)
    _results.record(AREA, "The same: query_range p50 / p99, `count(load_gauge > 0.5)` (10 min at 15 s); "
                    "all queries together", f"{o1}; all {o2}", f"Prometheus 2.42: {p1}; all {p2}",
                    f"{r1}; all {r2}")
    (o1, p1, r1), (o2, p2, r2) = pair(["avg by (shard)"]), pair(["topk(5, load_gauge)"])
    _results.record(AREA, "The same: `avg by (shard)`; `topk(5, …)`", f"{o1}; {o2}",
                    f"Prometheus 2.42: {p1}; {p2}", f"{r1}; {r2}")
    ours, theirs = [lat(iw, [q]) for q in dashboard], [lat(pr, [q]) for q in dashboard]
    ratios = [(a / c, b / d) for (a, b), (c, d) in zip(ours, theirs, strict=True) if c and d]
    _results.record(AREA, "The same: the dashboard's own queries (QPS, P99, 5xx ratio), p50 / p99",
                    _span(ours), f"Prometheus 2.42: {_span(theirs)}", _span(ratios, unit="", digits=2))


def _ratio(a: object, b: object) -> str:
    assert isinstance(a, float) and isinstance(b, float)
    return f"{a / b:.2f}" if b else "–"


def _span(pairs: Sequence[tuple[float, float]], unit: str = " s", digits: int = 2) -> str:
    """``lo-hi / lo-hi`` over the p50s and the p99s."""
    def one(xs: list[float]) -> str:
        return f"{min(xs):.{digits}f}-{max(xs):.{digits}f}{unit}" if xs else "–"
    return f"{one([a for a, _ in pairs])} / {one([b for _, b in pairs])}"
