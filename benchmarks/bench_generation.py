"""Generation tracking: per-token call cost against prometheus-client, per-response cost.

    python benchmarks/bench_generation.py [--quick]

Side by side in one run:
1. per-token cost: inferwatch's ``Generation.tokens(1)`` against
   prometheus-client's ``Histogram.observe`` (labels resolved once, as a
   server that observes each inter-token gap does), alone and with the
   clock read that an inter-token observation needs;
2. per-response cost: ``track_generation`` enter + exit (the queue append
   and its validation) and the one-shot ``record_generation``, background
   worker parked so only the request thread is timed;
3. quality calls (issue 54): ``record_score`` and ``record_feedback`` joined to
   their generation by id (from 10,000 remembered), and ``g.flag``, worker parked,
   against prometheus-client's ``Histogram.labels(...).observe`` and
   ``Counter.labels(...).inc`` with the same seven labels resolved per call (a
   score's labels are its generation's, known only at the call); ``monitor.judge`` (the
   asynchronous judge's hot path: the sample drawn, a sampled generation queued) at sample
   0.1 and 1.0, its worker parked by its rate limit.
Target (issue 22): a per-token call under 0.5 µs.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.metrics_core import Metric

import _results
from inferwatch.config import SdkConfig
from inferwatch.sdk import JudgeConfig, Monitor

TARGET_NS = 500.0
TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)


def per_call_ns(loop: Callable[[int], None], calls: int, rounds: int,
                between: Callable[[], Any] = lambda: None) -> float:
    """Median over rounds of ns per call; ``loop(n)`` makes n calls (cyclic GC off, as in ``timeit``)."""
    results = []
    for _ in range(rounds):
        gc.disable()
        t0 = time.perf_counter_ns()
        loop(calls)
        results.append((time.perf_counter_ns() - t0) / calls)
        gc.enable()
        between()
    return statistics.median(results)


def empty_loop(n: int) -> None:
    for _ in range(n):
        pass


class _Gate:
    """An aggregator that parks the monitor's worker, so timings are the request thread's alone."""

    kinds = ("gate",)

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        self.entered.set()
        self.release.wait(60)

    def collect(self, now: float) -> Iterable[Metric]:
        return []


def bench_tokens(calls: int, rounds: int) -> list[tuple[str, float]]:
    """ns per token for inferwatch and prometheus-client (the empty loop's cost taken off each)."""
    monitor = Monitor("chat", "llama-3-8b", "v1")
    gen = monitor.track_generation(route="/v1/chat/completions")
    gen.__enter__()
    tokens = gen.tokens

    def iw(n: int) -> None:
        for _ in range(n):
            tokens(1)

    hist = Histogram("tpot_seconds", "t", ("service", "model", "route"), buckets=TPOT_BUCKETS,
                     registry=CollectorRegistry())
    observe = hist.labels("chat", "llama-3-8b", "/v1/chat/completions").observe

    def pc(n: int) -> None:
        for _ in range(n):
            observe(0.021)

    clock = time.perf_counter

    def pc_timed(n: int) -> None:
        last = clock()
        for _ in range(n):
            now = clock()
            observe(now - last)
            last = now

    base = per_call_ns(empty_loop, calls, rounds)
    rows = [("inferwatch Generation.tokens(1)", per_call_ns(iw, calls, rounds) - base),
            ("prometheus-client Histogram.observe", per_call_ns(pc, calls, rounds) - base),
            ("prometheus-client clock + observe", per_call_ns(pc_timed, calls, rounds) - base)]
    gen.__exit__(None, None, None)
    monitor.close()
    return rows


def bench_responses(calls: int, rounds: int) -> list[tuple[str, float]]:
    """ns per response: track_generation enter/exit and record_generation, the worker parked."""
    gate = _Gate()
    monitor = Monitor("chat", "llama-3-8b", "v1", config=SdkConfig(queue_size=4 * calls), aggregators=[gate])
    track, rec = monitor.track_generation, monitor.record_generation

    def hold() -> None:
        gate.release.set()
        monitor.flush(60)
        gate.entered.clear()
        gate.release.clear()
        monitor.observe("gate", None)
        gate.entered.wait(10)

    def tracked(n: int) -> None:
        for _ in range(n):
            with track(route="/v1/chat/completions", input_tokens=12) as g:
                g.tokens(1)

    def one_shot(n: int) -> None:
        for _ in range(n):
            rec("/v1/chat/completions", 200, 0.2, 1.0, 12, 40)

    hold()
    rows = [("track_generation enter+exit (1 token)", per_call_ns(tracked, calls, rounds, hold)),
            ("record_generation", per_call_ns(one_shot, calls, rounds, hold))]
    gate.release.set()
    monitor.close()
    return rows


QUALITY_LABELS = ("service", "model", "version", "route", "prompt_version", "tenant", "name")
SCORE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0)


def bench_quality(calls: int, rounds: int) -> list[tuple[str, float]]:
    """ns per quality call: inferwatch's three (worker parked) and prometheus-client's two."""
    gate = _Gate()
    monitor = Monitor("chat", "llama-3-8b", "v1", config=SdkConfig(queue_size=4 * calls), aggregators=[gate])
    ids = [f"gen-{i}" for i in range(10_000)]
    for i, gid in enumerate(ids):  # remembered, as served generations are
        with monitor.track_generation(route="/v1/chat/completions", tenant=f"t{i % 8}", prompt_version="p7",
                                      generation_id=gid):
            pass
    monitor.flush(60)
    score, feedback = monitor.record_score, monitor.record_feedback
    gen = monitor.track_generation(route="/v1/chat/completions", tenant="acme", prompt_version="p7")

    def hold() -> None:
        gate.release.set()
        monitor.flush(60)
        gate.entered.clear()
        gate.release.clear()
        monitor.observe("gate", None)
        gate.entered.wait(10)

    def scores(n: int) -> None:
        for i in range(n):
            score("judge", 0.82, generation_id=ids[i % 10_000])

    def thumbs(n: int) -> None:
        for i in range(n):
            feedback(positive=False, generation_id=ids[i % 10_000])

    def flags(n: int) -> None:
        for _ in range(n):
            gen.flag("guardrail", detail="pii")

    registry = CollectorRegistry()
    hist = Histogram("score", "s", QUALITY_LABELS, buckets=SCORE_BUCKETS, registry=registry)
    counter = Counter("feedback", "f", (*QUALITY_LABELS[:-1], "sentiment"), registry=registry)
    tenants = [f"t{i % 8}" for i in range(10_000)]

    def pc_scores(n: int) -> None:
        for i in range(n):
            hist.labels("chat", "llama-3-8b", "v1", "/v1/chat/completions", "p7", tenants[i % 10_000],
                        "judge").observe(0.82)

    def pc_thumbs(n: int) -> None:
        for i in range(n):
            counter.labels("chat", "llama-3-8b", "v1", "/v1/chat/completions", "p7", tenants[i % 10_000],
                           "negative").inc()

    def judged(n: int) -> None:
        for i in range(n):
            judge("What is PSI?", "Population stability index ...", generation_id=ids[i % 10_000])

    hold()
    rows = [("record_score (joined by id)", per_call_ns(scores, calls, rounds, hold)),
            ("record_feedback (joined by id)", per_call_ns(thumbs, calls, rounds, hold)),
            ("g.flag", per_call_ns(flags, calls, rounds, hold))]
    for sample in (0.1, 1.0):  # the judge's worker parked by its rate limit after one call (no server)
        monitor.judge_worker = None
        monitor.set_judge(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="judge", sample=sample,
                                      queue_size=4 * calls * rounds, rate_per_s=1e-6, retries=0))
        judge = monitor.judge
        rows.append((f"monitor.judge (sample {sample:g})", per_call_ns(judged, calls, rounds, hold)))
        monitor.judge_worker.close(0.1)
    gate.release.set()
    monitor.close()
    rows += [("prometheus-client labels(...).observe", per_call_ns(pc_scores, calls, rounds)),
             ("prometheus-client labels(...).inc", per_call_ns(pc_thumbs, calls, rounds))]
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = parser.parse_args(argv)
    token_calls, rounds = (50_000, 5) if args.quick else (200_000, 15)
    print(f"1. per-token cost ({rounds} rounds x {token_calls:,} calls, median, empty loop subtracted)")
    rows = bench_tokens(token_calls, rounds)
    ours = rows[0][1]
    print(f"   {'':40} {'ns/token':>9} {'x inferwatch':>13}")
    for name, ns in rows:
        print(f"   {name:40} {ns:9.1f} {ns / ours:13.1f}")
    ok = ours < TARGET_NS
    print(f"   target: < {TARGET_NS:.0f} ns per token -> {ours:.1f} ns {'OK' if ok else 'MISSED'}; "
          f"prometheus-client observe is {rows[1][1] / ours:.1f}x ours")
    _results.record("SDK overhead", "Per-token cost of a streamed answer", f"{ours:,.1f} ns",
                    f"prometheus-client `Histogram.observe` per token: {rows[1][1]:,.1f} ns",
                    f"{ours / rows[1][1]:.3f}")
    response_calls = 2_000 if args.quick else 10_000
    print(f"\n2. per-response cost ({rounds} rounds x {response_calls:,} responses, median, worker parked)")
    for name, ns in bench_responses(response_calls, rounds):
        print(f"   {name:40} {ns:9.1f} ns")
    print(f"\n3. quality calls ({rounds} rounds x {response_calls:,} calls, median, worker parked)")
    q = dict(bench_quality(response_calls, rounds))
    for name, ns in q.items():
        print(f"   {name:40} {ns:9.1f} ns")
    sc, fb, fl = q["record_score (joined by id)"], q["record_feedback (joined by id)"], q["g.flag"]
    observe, inc = q["prometheus-client labels(...).observe"], q["prometheus-client labels(...).inc"]
    _results.record("SDK overhead", "Quality calls: record_score, record_feedback (joined by id), g.flag",
                    f"{sc:,.0f} ns; {fb:,.0f} ns; {fl:,.0f} ns",
                    f"prometheus-client `labels(...).observe` {observe:,.0f} ns, "
                    f"`labels(...).inc` {inc:,.0f} ns",
                    f"{sc / observe:.2f}; {fb / inc:.2f}; {fl / inc:.2f}")
    j1, j10 = q["monitor.judge (sample 1)"], q["monitor.judge (sample 0.1)"]
    _results.record("SDK overhead", "Asynchronous judge's hot path: monitor.judge at sample 0.1; 1.0",
                    f"{j10:,.0f} ns; {j1:,.0f} ns",
                    f"prometheus-client `labels(...).observe` {observe:,.0f} ns",
                    f"{j10 / observe:.2f}; {j1 / observe:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
